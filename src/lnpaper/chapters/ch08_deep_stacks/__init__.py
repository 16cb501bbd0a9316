"""Notebook 08, deep stacks: Admin, DeepNorm, Mix-LN and LayerNorm Scaling; A2, D1, X1, L1
(`notebooks/08_deep_stacks.py`)."""

from lnpaper.chapters.ch08_deep_stacks import claims, claims_curse, figures, runs
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="08_deep_stacks",
    experiments=(
        runs.branch_dependence,
        runs.deepnorm_study,
        runs.gradient_profile,
        runs.layer_scaling_study,
        runs.warmup_training,
    ),
    claims=(*claims.CLAIMS, *claims_curse.CLAIMS),
    figures=(
        figures.branch_dependence,
        figures.deepnorm_update,
        figures.gradient_profile,
        figures.layer_scaling,
    ),
)
