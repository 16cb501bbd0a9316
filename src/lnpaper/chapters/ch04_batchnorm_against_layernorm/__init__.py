"""Notebook 04, BatchNorm against LayerNorm at eight times the length, and where BatchNorm wins:
M4b-M4e, R3c, R3g, R6, R5 (`notebooks/04_batchnorm_against_layernorm.py`). Its recurrent runs are
chapter 03's experiment at T = 64 (gathered in its `analysis`); its own runs are the CNN coda's.

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
