"""Notebook 09, bounded attention logits and today's placements: QK-norm, OLMo 2, Gemma; Q1, O1,
G1 (`notebooks/09_logits_and_placement.py`)."""

from lnpaper.chapters.ch09_logits_and_placement import claims, demos, figures, runs
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="09_logits_and_placement",
    experiments=(
        runs.qk_run,
        runs.logit_bound_run,
        runs.olmo2_spike_run,
        runs.gain_decay,
        runs.gain_decay_excluded,
    ),
    claims=tuple(claims.CLAIMS),
    figures=(figures.qk_norm_sweep,),
    demos=(demos.qk_learning_rate,),
)
