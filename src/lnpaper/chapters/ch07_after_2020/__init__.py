"""Notebook 07, after 2020: depth, attention logits, placements and the mean (`notebooks/07_after_2020.py`).

In code, three parts in the order the notebook runs them: deep stacks (`*_depth`), attention
logits and placements, and what the norm computes (`*_mean`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": (),
    "runs": ("runs_depth", "runs", "runs_mean"),
    "analysis": ("analysis_depth", "analysis", "analysis_mean"),
    "claims": ("claims_depth", "claims", "claims_mean"),
    "figures": ("figures_depth", "figures", "figures_mean"),
}
