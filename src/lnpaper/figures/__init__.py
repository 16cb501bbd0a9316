"""Figures: one function per figure, a registry, and the writer behind `python -m lnpaper figures`."""

from lnpaper.figures.invariances import fisher_doubling, invariance_table, sgd_geometry
from lnpaper.figures.registry import FIGURES, FigureSpec, figure, save_png
from lnpaper.figures.transpose import (
    one_pass_variance,
    per_token_independence,
    transpose_table,
    variants_vs_scale,
)

__all__ = [
    "FIGURES",
    "FigureSpec",
    "figure",
    "fisher_doubling",
    "invariance_table",
    "one_pass_variance",
    "per_token_independence",
    "save_png",
    "sgd_geometry",
    "transpose_table",
    "variants_vs_scale",
]
