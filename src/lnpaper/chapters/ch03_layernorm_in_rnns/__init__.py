"""Notebook 03, layerNorm in recurrent networks: R1-R5 and M4b-M4d (`notebooks/03_layernorm_in_rnns.py`).

`runs` holds its experiments, `claims` the claims it checks, `figures` what it draws.
"""
