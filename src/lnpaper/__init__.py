"""lnpaper: a runnable companion to *Layer Normalization* (Ba, Kiros, Hinton 2016).

The notebooks in `notebooks/` tell the story; this package holds what they, the tests and the figures
share: the normalizers as formulas in code (`functional` in numpy, the modules in torch), the
chapters with their experiments, claims and figures (`lnpaper.chapters`, listed in `lnpaper.book`),
and `tryit`, which sets a reader's own run beside the record (the notebooks' Try it cells call it
as `lnpaper.tryit`).

Each name below is imported on first use, so `import lnpaper.stats` loads `stats` and no more.
"""

import importlib

_WHERE = {
    "BatchNorm": "lnpaper.norms",
    "DyT": "lnpaper.norms",
    "LayerNorm": "lnpaper.norms",
    "RMSNorm": "lnpaper.norms",
    "RecurrentBatchNorm": "lnpaper.norms",
    "WeightNormLinear": "lnpaper.norms",
    "setup": "lnpaper.companion.runtime",
}
_MODULES = ("functional", "tryit")

__all__ = [*_WHERE, *_MODULES]


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(f"lnpaper.{name}")
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'lnpaper' has no attribute {name!r}")
