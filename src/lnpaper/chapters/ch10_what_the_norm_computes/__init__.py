"""Notebook 10, what the norm computes: the redundant mean, the backward pass, pointwise
replacements; E1, E2, Y1 (`notebooks/10_what_the_norm_computes.py`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": (),
    "runs": ("runs",),
    "analysis": ("analysis",),
    "claims": ("claims",),
    "figures": ("figures",),
    "demos": (),
}
