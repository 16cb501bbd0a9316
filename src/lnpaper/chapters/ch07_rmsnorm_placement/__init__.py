"""Notebook 07, RMSNorm and where the norm goes: P1-P5 (`notebooks/07_rmsnorm_and_placement.py`)."""

from lnpaper.chapters.ch07_rmsnorm_placement import claims, demos, figures, runs
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="07_rmsnorm_and_placement",
    experiments=(
        runs.rmsnorm_vs_layernorm,
        runs.memory_traffic,
        runs.norm_timing,
        runs.prms_estimate,
        runs.spike_run,
        runs.recentred_training,
    ),
    claims=tuple(claims.CLAIMS),
    figures=(
        figures.rmsnorm_curves,
        figures.prms_estimate,
        figures.placement_variance,
        figures.gradient_spikes,
    ),
    demos=(demos.row_shift,),
)
