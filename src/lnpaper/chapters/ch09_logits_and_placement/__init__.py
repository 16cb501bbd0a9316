"""Notebook 09, bounded attention logits and today's placements: QK-norm, OLMo 2, Gemma; Q1, O1,
G1 (`notebooks/09_logits_and_placement.py`).

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
