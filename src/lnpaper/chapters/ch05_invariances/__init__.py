"""Notebook 05, the invariance table and the geometry of Section 5: I1-I6 (`notebooks/05_invariances.py`)."""

from lnpaper.chapters.ch05_invariances import (
    claims,
    demos,
    figures,
    runs,
    runs_fisher,
    runs_geometry,
)
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="05_invariances",
    experiments=(
        runs.invariance_measurements,
        runs.reparameterization,
        runs_geometry.sgd_geometry,
        runs_geometry.adam_geometry,
        runs_geometry.adam_update_geometry,
        runs_fisher.fisher_doubling,
        runs_fisher.fisher_cross_blocks,
        runs_fisher.gain_metric,
        runs_fisher.fisher_closed_forms,
    ),
    claims=tuple(claims.CLAIMS),
    figures=(
        figures.invariance_table,
        figures.sgd_geometry,
        figures.adam_geometry,
        figures.fisher_doubling,
    ),
    demos=(demos.table_1,),
)
