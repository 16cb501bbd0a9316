"""Notebook 03, LayerNorm in recurrent networks: R1-R6 and M4b-M4g (`notebooks/03_layernorm_in_rnns.py`).

Its manifest, in the order data flows: recorded experiments (`runs`), the studies and summaries
computed from them (`analysis`), the claims it checks (`claims`) and what it draws (`figures`).
`lnpaper.chapters.modules` reads it to import the chapter's modules of a kind in this order.
"""

PARTS = {
    "library": (),
    "runs": ("runs", "runs_lengths", "runs_cnn"),
    "analysis": ("analysis",),
    "claims": ("claims", "claims_batchnorm", "claims_coda"),
    "figures": ("figures",),
}
