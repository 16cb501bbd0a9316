"""Notebook 01, why BatchNorm fails for sequence models: M1-M5 (`notebooks/01_why_batchnorm_fails.py`)."""

from lnpaper.chapters.ch01_why_batchnorm_fails import claims, claims_training, demos, figures, runs
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="01_why_batchnorm_fails",
    experiments=(
        runs.batch_dependence,
        runs.batch_of_one,
        runs.train_vs_inference,
        runs.lstm_statistics,
        runs.batch_size_runs,
        runs.online_runs,
        runs.training_curves,
    ),
    claims=(*claims.CLAIMS, *claims_training.CLAIMS),
    figures=(
        figures.exam_rulers,
        figures.batch_dependence,
        figures.train_vs_inference,
        figures.lstm_statistics,
        figures.recurrent_batchnorm,
        figures.batch_size,
    ),
    demos=(demos.batch_size,),
)
