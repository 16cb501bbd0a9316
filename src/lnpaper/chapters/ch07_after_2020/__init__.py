"""Notebook 07, after 2020: depth, attention logits, placements and the mean (`notebooks/07_after_2020.py`).

In code, three parts in the order the notebook runs them: deep stacks (`*_depth`), attention
logits and placements, and what the norm computes (`*_mean`).

Its manifest, in the order data flows: recorded experiments (`runs`), the studies and summaries
computed from them (`analysis`), the claims it checks (`claims`) and what it draws (`figures`).
`lnpaper.chapters.modules` reads it to import the chapter's modules of a kind in this order.
"""

PARTS = {
    "library": (),
    "runs": ("runs_depth", "runs", "runs_mean"),
    "analysis": ("analysis_depth", "analysis", "analysis_mean"),
    "claims": ("claims_depth", "claims", "claims_mean"),
    "figures": ("figures_depth", "figures", "figures_mean"),
}
