"""Notebook 06, the Transformer: T1-T7 (`notebooks/06_the_transformer.py`)."""

from lnpaper.chapters.ch06_transformer import (
    claims,
    claims_longer,
    claims_smoothness,
    demos,
    figures,
    runs,
)
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="06_the_transformer",
    experiments=(
        runs.grad_norm_vs_depth,
        runs.lm_training,
        runs.rezero_training,
        runs.batchnorm_backward_projection,
        runs.loss_smoothness,
    ),
    claims=(*claims.CLAIMS, *claims_longer.CLAIMS, *claims_smoothness.CLAIMS),
    figures=(
        figures.grad_norm_vs_depth,
        figures.residual_norms_vs_lemma2,
        figures.warmup_curves,
        figures.without_normalization,
        figures.tfixup_curves,
        figures.loss_smoothness,
    ),
    demos=(demos.depth_gradient,),
)
