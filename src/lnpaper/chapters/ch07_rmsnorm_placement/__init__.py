"""Notebook 07, RMSNorm and where the norm goes: P1-P5 (`notebooks/07_rmsnorm_and_placement.py`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": (),
    "runs": ("runs",),
    "analysis": ("analysis",),
    "claims": ("claims",),
    "figures": ("figures",),
    "demos": ("demos",),
}
