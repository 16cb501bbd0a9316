"""Notebook 08, deep stacks: Admin, DeepNorm, Mix-LN and LayerNorm Scaling; A2, D1, X1, L1
(`notebooks/08_deep_stacks.py`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": (),
    "runs": ("runs",),
    "analysis": ("analysis",),
    "claims": ("claims", "claims_curse"),
    "figures": ("figures",),
}
