"""Training: one model (`loop.train`), a population of runs stepped as one batch
(`population.train_population`), and the optimizers both use (`optim`)."""

from lnpaper.train.loop import History, epoch_batches, train
from lnpaper.train.optim import PerRunAdam, make_optimizer, warmup_lr
from lnpaper.train.population import (
    SeedRuns,
    StackedModels,
    train_language_models,
    train_population,
)

__all__ = [
    "History",
    "PerRunAdam",
    "SeedRuns",
    "StackedModels",
    "epoch_batches",
    "make_optimizer",
    "train",
    "train_language_models",
    "train_population",
    "warmup_lr",
]
