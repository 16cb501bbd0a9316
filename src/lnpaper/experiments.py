"""Every experiment by name: `experiments.lm_training(seeds=(0, 1))`, as the notebooks call them.

Each is defined in its chapter's `runs` module (`lnpaper.chapters.ch05_transformer.runs` for
`lm_training`) and goes through the record (`lnpaper.companion.record`). This module lists the
registry `lnpaper.companion.registry.EXPERIMENTS`; nothing here is kept by hand.
"""

from lnpaper import chapters
from lnpaper.companion.registry import EXPERIMENTS, experiment

chapters.load("runs")
chapters.in_book_order(EXPERIMENTS, lambda run: run.__module__)
globals().update(EXPERIMENTS)

__all__ = ["EXPERIMENTS", "experiment", *EXPERIMENTS]
