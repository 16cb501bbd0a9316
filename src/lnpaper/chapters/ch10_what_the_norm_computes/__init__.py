"""Notebook 10, what the norm computes: the redundant mean, the backward pass, pointwise
replacements; E1, E2, Y1 (`notebooks/10_what_the_norm_computes.py`).
"""

from lnpaper.chapters.ch10_what_the_norm_computes import claims, figures, runs
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="10_what_the_norm_computes",
    experiments=(runs.zero_mean_drift, runs.constrained_drift, runs.norm_variant_training),
    claims=tuple(claims.CLAIMS),
    figures=(
        figures.zero_mean_drift,
        figures.constrained_drift,
        figures.detach_norms,
        figures.after_dyt,
        figures.dyt_data_rich,
    ),
)
