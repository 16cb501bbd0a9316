"""Notebook 03, LayerNorm in recurrent networks: R1-R4c, M4f, M4g (`notebooks/03_layernorm_in_rnns.py`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": (),
    "runs": ("runs", "runs_lengths"),
    "analysis": ("analysis",),
    "claims": ("claims", "claims_lengths"),
    "figures": ("figures",),
    "demos": ("demos",),
}
