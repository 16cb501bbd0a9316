"""The registry of every recorded experiment, in book order, for the command line, the reproduction
check and the ledger: `EXPERIMENTS["lm_training"]`.

A notebook (or a reader at the prompt) calls an experiment from its chapter's `runs` module,
`lnpaper.chapters.ch06_transformer.runs.lm_training(seeds=(0, 1))`; every call goes through the
record (`lnpaper.companion.record`). Importing this module imports every chapter's runs, which
register themselves (`lnpaper.companion.registry.experiment`).
"""

from lnpaper import chapters
from lnpaper.companion.registry import EXPERIMENTS, experiment

chapters.load("runs")
chapters.in_book_order(EXPERIMENTS, lambda run: run.__module__)

__all__ = ["EXPERIMENTS", "experiment"]
