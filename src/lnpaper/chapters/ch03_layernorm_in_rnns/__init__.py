"""Notebook 03, LayerNorm in recurrent networks: R1-R6 and M4b-M4g (`notebooks/03_layernorm_in_rnns.py`).

PARTS is its manifest (`lnpaper.chapters` says what each kind holds).
"""

PARTS = {
    "library": (),
    "runs": ("runs", "runs_lengths", "runs_cnn"),
    "analysis": ("analysis",),
    "claims": ("claims", "claims_batchnorm", "claims_coda"),
    "figures": ("figures",),
}
