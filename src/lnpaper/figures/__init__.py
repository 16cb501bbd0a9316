"""Figures: one function per figure, a registry, and the writer behind `python -m lnpaper figures`."""

from lnpaper.figures.registry import FIGURES, FigureSpec, figure, save_png
from lnpaper.figures.transformer import (
    grad_norm_vs_depth,
    loss_smoothness,
    residual_norms_vs_lemma2,
    tfixup_curves,
    warmup_curves,
    without_normalization,
)
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
    "grad_norm_vs_depth",
    "loss_smoothness",
    "one_pass_variance",
    "per_token_independence",
    "residual_norms_vs_lemma2",
    "save_png",
    "tfixup_curves",
    "transpose_table",
    "variants_vs_scale",
    "warmup_curves",
    "without_normalization",
]
