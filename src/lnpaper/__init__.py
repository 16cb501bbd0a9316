"""lnpaper: a runnable companion to *Layer Normalization* (Ba, Kiros, Hinton 2016).

The notebooks in `notebooks/` tell the story; this package holds what they, the tests and the figures
share: the normalizers as formulas in code (`functional` in numpy, the modules in torch), the
experiments, the figures and the claims ledger.
"""

from lnpaper import functional
from lnpaper.chapters.ch05_invariances.invariance import invariance_table
from lnpaper.companion.runtime import setup
from lnpaper.norms import (
    BatchNorm,
    DyT,
    LayerNorm,
    RecurrentBatchNorm,
    RMSNorm,
    WeightNormLinear,
)

__all__ = [
    "BatchNorm",
    "DyT",
    "LayerNorm",
    "RMSNorm",
    "RecurrentBatchNorm",
    "WeightNormLinear",
    "functional",
    "invariance_table",
    "setup",
]
