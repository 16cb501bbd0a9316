"""Notebook 01, why BatchNorm fails for sequence models: M1-M5 (`notebooks/01_why_batchnorm_fails.py`).

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
