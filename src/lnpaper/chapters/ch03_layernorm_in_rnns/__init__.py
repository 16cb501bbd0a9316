"""Notebook 03, LayerNorm in recurrent networks: R1-R4e, R7-R8c, M4f, M4g (`notebooks/03_layernorm_in_rnns.py`)."""

from lnpaper.chapters.ch03_layernorm_in_rnns import (
    claims,
    claims_grid,
    claims_handwriting,
    claims_lengths,
    claims_reader,
    demos,
    figures,
    runs,
    runs_draw,
    runs_handwriting,
    runs_lengths,
    runs_reader,
)
from lnpaper.companion.chapter import Chapter

CHAPTER = Chapter(
    notebook="03_layernorm_in_rnns",
    experiments=(
        runs.lnlstm_anatomy,
        runs.rnn_dynamics,
        runs.rnn_dynamics_gain,
        runs.sequence_training,
        runs_lengths.longer_sequences,
        runs_lengths.stationary_statistics,
        runs_reader.reader_training,
        runs_handwriting.handwriting_training,
        runs_draw.draw_training,
    ),
    claims=(
        *claims.CLAIMS,
        *claims_grid.CLAIMS,
        *claims_reader.CLAIMS,
        *claims_handwriting.CLAIMS,
        *claims_lengths.CLAIMS,
    ),
    figures=(
        figures.rnn_dynamics,
        figures.recurrent_training,
        figures.gain_init,
        figures.longer_sequences,
    ),
    demos=(demos.rnn_scale,),
)
