"""Notebook 04, the invariance table and the geometry of Section 5: I1-I5 (`notebooks/04_invariances.py`).

`runs` holds its experiments, `claims` the claims it checks, `figures` what it draws.
"""
