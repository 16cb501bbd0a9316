"""Notebook 04, the invariance table and the geometry of Section 5: I1-I5 (`notebooks/04_invariances.py`).

Its manifest, in the order data flows: recorded experiments (`runs`), the studies and summaries
computed from them (`analysis`), the claims it checks (`claims`) and what it draws (`figures`).
`lnpaper.chapters.modules` reads it to import the chapter's modules of a kind in this order.
`library`: the code only this chapter teaches, below its runs.
"""

PARTS = {
    "library": ("invariance", "geometry"),
    "runs": ("runs", "runs_geometry", "runs_fisher"),
    "analysis": (),
    "claims": ("claims",),
    "figures": ("figures",),
}
