"""Notebook 02, the transpose: LayerNorm's formulas, F1-F4 (`notebooks/02_the_transpose.py`).

`runs` holds its experiments, `claims` the claims it checks, `figures` what it draws.
"""
