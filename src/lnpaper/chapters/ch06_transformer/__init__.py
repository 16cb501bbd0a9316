"""Notebook 06, the Transformer: T1-T7 (`notebooks/06_the_transformer.py`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": (),
    "runs": ("runs",),
    "analysis": ("analysis",),
    "claims": ("claims", "claims_smoothness"),
    "figures": ("figures",),
}
