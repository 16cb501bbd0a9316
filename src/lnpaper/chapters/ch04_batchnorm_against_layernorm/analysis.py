"""Analysis of notebook 04's runs: chapter 03's recurrent experiment gathered at T = 64, and the
summaries the notebook prints and the claims and figures read. Nothing here is recorded.

- `sequential_digits` (R3c, M4b-M4d): LSTM, LN-LSTM, BN-LSTM (gains 0.1 and 1.0) and LN-GRU on
  the digits read pixel by pixel (T = 64) and permuted; a shorter T_max for the BN-LSTM, and test
  sequences longer than training.
- `gru_pixels` (R3g): the GRU against the LN-GRU at T = 64.
- `gain_pixels` (M4e): the LN-LSTM's gains from 0.1 at T = 64.
- `input_control_pixels` (R3h): the LN-LSTM beside the same cell without LN on its input term.
- `small_batch_pixels` (R6): the T = 64 models at minibatches of 4.
- `wide_frame` (R5c): the CNN coda with a 4-pixel frame, on fresh seeds.
- `cnn_summary` (R5, R5b): the CNN coda's test NLL and accuracy.
"""

from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import (
    GRU_MODELS,
    RecurrentStudyResult,
    recurrent_training,
)
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import (
    training_summary as training_summary,  # notebook 03's summary, which notebook 04 prints too
)
from lnpaper.chapters.ch03_layernorm_in_rnns.runs import LR_GRID
from lnpaper.chapters.ch04_batchnorm_against_layernorm.runs import CNNResult, cnn_coda
from lnpaper.spread import mean_sd

PIXEL_MODELS = ("LSTM", "LN-LSTM", "BN-LSTM", "BN-LSTM, gain 1.0", "LN-GRU")
PIXEL_STEPS = 150  # short curves, 16 units, batches of 16: T = 64 costs 8x T = 8 per step
TRANSIENT_CUT = 8  # a T_max inside the transient of the pixel-by-pixel BN-LSTM
BLANK_STEPS = 16  # blank pixels appended to the longer test sequences


def sequential_digits(
    *,
    models=PIXEL_MODELS,
    hidden: int = 16,
    steps: int = PIXEL_STEPS,
    batch_size: int = 16,
    lrs=LR_GRID,
    seeds=tuple(range(8)),
    eval_every: int = 30,
) -> RecurrentStudyResult:
    """The digits read pixel by pixel (T = 64, sequential MNIST at 8 x 8)
    and in a fixed permuted order, side by side in one batched model per cell; LSTM, LN-LSTM,
    BN-LSTM with gains 0.1 and 1.0, LN-GRU, on the same learning-rate grid. Besides the curves:
    the test with BLANK_STEPS blank pixels appended (longer than training), and the BN-LSTMs with
    their statistics cut at TRANSIENT_CUT steps and averaged over the 64 steps."""
    return recurrent_training(
        models=models,
        form="pixels",
        orders=(False, True),
        hidden=hidden,
        steps=steps,
        batch_size=batch_size,
        lrs=lrs,
        seeds=seeds,
        eval_every=eval_every,
        extra_steps=BLANK_STEPS,
        statistics_steps=TRANSIENT_CUT,
    )


GAIN_PIXEL_MODELS = ("LN-LSTM", "LN-LSTM, gain 0.1", "BN-LSTM", "BN-LSTM, gain 1.0")


def gain_pixels(*, seeds=tuple(range(8))) -> RecurrentStudyResult:
    """M4e: both cells' gains at 1.0 and at 0.1 on sequential_digits' T = 64 task, the BN-LSTMs'
    and the LN-LSTM's runs the very ones of sequential_digits (the same record entries), the
    LN-LSTM with gains 0.1 beside them."""
    return sequential_digits(models=GAIN_PIXEL_MODELS, seeds=seeds)


def gru_pixels(*, seeds=tuple(range(8))) -> RecurrentStudyResult:
    """R3g: the GRU against the LN-GRU at T = 64, on sequential_digits' protocol; the LN-GRU's runs
    are sequential_digits' own (the same record entries)."""
    return sequential_digits(models=GRU_MODELS, seeds=seeds)


RAW_INPUT = "LN-LSTM, raw input"
INPUT_CONTROL_MODELS = ("LN-LSTM", RAW_INPUT, "BN-LSTM")


def input_control_pixels(*, seeds=tuple(range(8))) -> RecurrentStudyResult:
    """R3h: sequential_digits' T = 64 task with a control beside the LN-LSTM, the same cell with
    its one-pixel input term left unnormalized (`RawInputLayerNormLSTMCell`); the LN-LSTM's and
    the BN-LSTM's runs are sequential_digits' own (the same record entries)."""
    return sequential_digits(models=INPUT_CONTROL_MODELS, seeds=seeds)


SMALL_BATCH = 4  # examples per minibatch in small_batch_pixels, against sequential_digits' 16
SMALL_BATCH_MODELS = ("LSTM", "LN-LSTM", "BN-LSTM")


def small_batch_pixels(*, seeds=tuple(range(8))) -> RecurrentStudyResult:
    """R6: the paper's conclusion, "recurrent neural networks benefit the most ... especially for
    long sequences and small mini-batches" (Sec. 7), at T = 64: sequential_digits' models and
    protocol (the same steps, grid, seeds and initial weights) at minibatches of SMALL_BATCH
    instead of 16, in reading order only. Equal steps, not equal epochs: each model makes as many
    updates as at batch 16, from noisier gradients and, for the BN-LSTM, noisier statistics."""
    return recurrent_training(
        models=SMALL_BATCH_MODELS,
        form="pixels",
        orders=(False,),
        hidden=16,
        steps=PIXEL_STEPS,
        batch_size=SMALL_BATCH,
        lrs=LR_GRID,
        seeds=seeds,
        eval_every=30,
    )


# R5c, declared before its run: the CNN coda's frame widened to 4 pixels (16 x 16 images), on ten
# seeds the coda did not use, everything else as the coda.
WIDE_MARGIN = 4
WIDE_SEEDS = tuple(range(10, 20))


def wide_frame() -> CNNResult:
    """R5c: `cnn_coda` with a WIDE_MARGIN-pixel blank frame on WIDE_SEEDS."""
    return cnn_coda(margins=(WIDE_MARGIN,), seeds=WIDE_SEEDS)


def cnn_summary(cnn) -> dict:
    """margin -> norm -> mean +- sd over seeds of the test NLL and accuracy after training."""
    return {
        margin: {
            norm: {
                "test_loss": mean_sd(cnn.test_loss[margin][norm]),
                "test_accuracy": mean_sd(cnn.test_accuracy[margin][norm]),
            }
            for norm in cnn.norms
        }
        for margin in cnn.test_loss
    }
