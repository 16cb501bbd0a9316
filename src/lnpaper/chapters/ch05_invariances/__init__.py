"""Notebook 05, the invariance table and the geometry of Section 5: I1-I6 (`notebooks/05_invariances.py`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": ("invariance", "geometry"),
    "runs": ("runs", "runs_geometry", "runs_fisher"),
    "analysis": (),
    "claims": ("claims",),
    "figures": ("figures",),
    "demos": ("demos",),
}
