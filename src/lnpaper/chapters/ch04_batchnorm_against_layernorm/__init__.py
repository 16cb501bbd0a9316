"""Notebook 04, BatchNorm against LayerNorm at eight times the length, and where BatchNorm wins:
M4b-M4e, R3c, R3g, R6, R5 (`notebooks/04_batchnorm_against_layernorm.py`). Its recurrent runs are
chapter 03's experiment at T = 64 (gathered in its `analysis`); its own runs are the CNN coda's.
"""

from lnpaper.chapters.ch04_batchnorm_against_layernorm import (
    claims,
    claims_wide_frame,
    figures,
    runs,
)
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="04_batchnorm_against_layernorm",
    experiments=(runs.cnn_coda,),
    claims=(*claims.CLAIMS, *claims_wide_frame.CLAIMS),
    figures=(
        figures.sequential_digits,
        figures.cnn_coda,
    ),
)
