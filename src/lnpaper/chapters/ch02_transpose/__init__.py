"""Notebook 02, the transpose: LayerNorm's formulas, F1-F4 (`notebooks/02_the_transpose.py`).

Its manifest, in the order data flows: recorded experiments (`runs`), the studies and summaries
computed from them (`analysis`), the claims it checks (`claims`) and what it draws (`figures`).
`lnpaper.chapters.modules` reads it to import the chapter's modules of a kind in this order.
`library`: the code only this chapter teaches, below its runs.
"""

PARTS = {
    "library": ("variants",),
    "runs": ("runs",),
    "analysis": (),
    "claims": ("claims",),
    "figures": ("figures",),
}
