"""Notebook 01, why BatchNorm fails for sequence models: M1-M5 (`notebooks/01_why_batchnorm_fails.py`).

`runs` holds its experiments, `claims` the claims it checks, `figures` what it draws.
"""
