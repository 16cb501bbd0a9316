"""Notebook 02, the transpose: LayerNorm's formulas, F1-F4 (`notebooks/02_the_transpose.py`)."""

from lnpaper.chapters.ch02_transpose import claims, demos, figures, runs
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="02_the_transpose",
    experiments=(
        runs.layernorm_parity,
        runs.per_token_independence,
        runs.backward_parity,
        runs.variants_vs_scale,
        runs.one_pass_variance,
    ),
    claims=tuple(claims.CLAIMS),
    figures=(
        figures.transpose_table,
        figures.per_token_independence,
        figures.variants_vs_scale,
        figures.one_pass_variance,
    ),
    demos=(demos.one_pass_variance,),
)
