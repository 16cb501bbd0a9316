"""Notebook 06, rMSNorm and where the norm goes: P1-P5 (`notebooks/06_rmsnorm_and_placement.py`).

`runs` holds its experiments, `claims` the claims it checks, `figures` what it draws.
"""
