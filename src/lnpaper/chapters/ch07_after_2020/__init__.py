"""Notebook 07, after 2020: depth, attention logits, placements and the mean (`notebooks/07_after_2020.py`).

`runs` holds its experiments, `claims` the claims it checks, `figures` what it draws.
"""
