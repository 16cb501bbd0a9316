"""Notebook 02, the transpose: LayerNorm's formulas, F1-F4 (`notebooks/02_the_transpose.py`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": ("variants",),
    "runs": ("runs",),
    "analysis": (),
    "claims": ("claims",),
    "figures": ("figures",),
    "demos": ("demos",),
}
