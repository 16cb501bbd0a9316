"""Notebook 05, the Transformer: T1-T7 (`notebooks/05_the_transformer.py`).

`runs` holds its experiments, `claims` the claims it checks, `figures` what it draws.
"""
