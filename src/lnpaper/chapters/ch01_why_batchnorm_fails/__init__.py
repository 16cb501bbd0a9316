"""Notebook 01, why BatchNorm fails for sequence models: M1-M5 (`notebooks/01_why_batchnorm_fails.py`).

Its manifest, in the order data flows: recorded experiments (`runs`), the studies and summaries
computed from them (`analysis`), the claims it checks (`claims`) and what it draws (`figures`).
`lnpaper.chapters.modules` reads it to import the chapter's modules of a kind in this order.
"""

PARTS = {
    "library": (),
    "runs": ("runs",),
    "analysis": ("analysis",),
    "claims": ("claims",),
    "figures": ("figures",),
}
