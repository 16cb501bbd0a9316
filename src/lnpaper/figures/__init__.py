"""Figures: one function per figure, a registry, and the writer behind `python -m lnpaper figures`."""

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
    "one_pass_variance",
    "per_token_independence",
    "save_png",
    "transpose_table",
    "variants_vs_scale",
]
