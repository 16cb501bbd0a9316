"""lnpaper: a runnable companion to *Layer Normalization* (Ba, Kiros, Hinton 2016).

The notebooks in `notebooks/` tell the story; this package holds what they, the tests and the figures
share: the normalizers as formulas in code (`functional` in numpy, the modules in torch), the
experiments, the figures and the claims ledger; and `tryit`, which sets a reader's own run beside
the record (the notebooks' Try it cells call it as `lnpaper.tryit`).
"""

import importlib

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
    "tryit",
]


def __getattr__(name: str):
    """`lnpaper.tryit`, imported on first use: `import lnpaper` stays as quick as without it."""
    if name == "tryit":
        return importlib.import_module("lnpaper.tryit")
    raise AttributeError(f"module 'lnpaper' has no attribute {name!r}")
