"""Analysis of notebook 03's runs: the studies that gather recorded runs, and the summaries the
notebook prints and the claims and figures read. Nothing here is recorded: each function reads
`runs`' experiments (through the record) and computes in memory, so the record holds each run once.

- `recurrent_training` (R3, R3b, R4, R4b): LSTM, LN-LSTM and BN-LSTM, their gains at 1.0 and 0.1,
  on the digits read row by row, each model one `sequence_training` run over seeds and one
  learning-rate grid.
- `gru_training` (R3f, R4c): the GRU against the LN-GRU, under the same protocol.
- `late_pick_training` (R4d): both LSTMs, the BN-LSTM and both GRUs on fresh seeds, for the end of
  training graded at the rate that ends best.
- `dynamics_draws` (R2): R2's runs over five draws of the weights and three LN gains.
- the summaries: `training_summary` (each model at its best rate), `best_lr_index` (by the
  validation NLL over the run or over its last quarter),
  `length_summary`, `dynamics_summary`.

Notebook 04 gathers the same experiment at T = 64 (`ch04_batchnorm_against_layernorm.analysis`).
"""

import math
import statistics
from dataclasses import dataclass

from lnpaper import stats
from lnpaper.chapters.ch03_layernorm_in_rnns.runs import (
    LR_GRID,
    RECURRENT_MODELS,
    rnn_dynamics_gain,
    sequence_training,
)
from lnpaper.spread import mean_sd

ROW_MODELS = ("LSTM", "LN-LSTM", "LN-LSTM, gain 0.1", "BN-LSTM", "BN-LSTM, gain 1.0")


@dataclass
class RecurrentStudyResult:
    form: str
    orders: list  # False: reading order, True: permuted; the runs' lists are indexed [order]...
    runs: dict  # label -> SequenceTrainingResult as a plain dict


def recurrent_training(
    *,
    models=ROW_MODELS,
    form: str = "rows",
    orders=(False,),
    hidden: int = 32,
    steps: int = 300,
    batch_size: int = 32,
    lrs=LR_GRID,
    seeds=tuple(range(10)),
    eval_every: int = 25,
    extra_steps: int = 0,
    statistics_steps: int | None = None,
) -> RecurrentStudyResult:
    """R3, R3b, R4, R4b: every model of `models` (labels of RECURRENT_MODELS) with the same
    optimizer, steps, seeds, minibatches and learning-rate grid, so that each can be compared at
    its own best rate; by default on the digits read row by row (T = 8). `statistics_steps`
    applies to the BN-LSTMs only."""
    unknown = [m for m in models if m not in RECURRENT_MODELS]
    if unknown:
        raise ValueError(f"unknown models {unknown}: choose from {sorted(RECURRENT_MODELS)}")
    runs = {}
    for label in models:
        cell, gain_init = RECURRENT_MODELS[label]
        runs[label] = vars(
            sequence_training(
                cell=cell,
                gain_init=gain_init,
                form=form,
                orders=orders,
                hidden=hidden,
                steps=steps,
                batch_size=batch_size,
                lrs=lrs,
                seeds=seeds,
                eval_every=eval_every,
                extra_steps=extra_steps,
                statistics_steps=statistics_steps if cell == "bn-lstm" else None,
            )
        )
    return RecurrentStudyResult(form=form, orders=[bool(o) for o in orders], runs=runs)


GRU_MODELS = ("GRU", "LN-GRU")


def gru_training(*, seeds=tuple(range(10))) -> RecurrentStudyResult:
    """R3f, R4c: the cell of the paper's order-embedding and skip-thought experiments (Sec. 6.1,
    6.3), the GRU against the LN-GRU (supplement Eq. 26-28), under recurrent_training's protocol
    on the digits row by row: the same grid, steps, seeds and minibatches as the LSTMs."""
    return recurrent_training(models=GRU_MODELS, seeds=seeds)


# R4d: the claims about the end of training, each model at the rate whose validation NLL ends
# lowest, on ten seeds the other row-by-row runs do not use.
LATE_PICK_MODELS = ("LSTM", "LN-LSTM", "BN-LSTM", "GRU", "LN-GRU")
LATE_PICK_SEEDS = tuple(range(10, 20))


def late_pick_training(*, seeds=LATE_PICK_SEEDS) -> RecurrentStudyResult:
    """R4d: recurrent_training's protocol for the LSTMs (LN and BN with their papers' gains) and
    the GRUs on `seeds`; the claim picks each model's rate by `validation_late`."""
    return recurrent_training(models=LATE_PICK_MODELS, seeds=seeds)


# ---- summaries the notebook prints and the claims check ----------------------------------


def inside_and_beyond(result) -> dict:
    """The test steps inside the training length (delay to T_max - 1) and beyond it (T_max to the
    end), as slices of the per-step lists, which start at step `delay`."""
    split = result.train_length - result.delay
    return {"inside": slice(0, split), "beyond": slice(split, None)}


def per_seed_means(runs, steps: slice) -> list:
    return [statistics.fmean(run[steps]) for run in runs]


def length_summary(longer) -> dict:
    """model -> mean +- sd over seeds of the accuracy inside the training length and beyond it."""
    return {
        model: {
            part: mean_sd(per_seed_means(runs, steps))
            for part, steps in inside_and_beyond(longer).items()
        }
        for model, runs in longer.accuracy.items()
    }


def dynamics_summary(dynamics) -> dict:
    """The numbers behind R2, over the free-running steps (after the input)."""
    free = slice(dynamics.input_steps, None)
    scales = dynamics.scales
    plain_summed = dynamics.summed_rms["tanh RNN"]
    ln_hidden = [v for s in scales for v in dynamics.hidden_rms["LN tanh RNN"][s][free]]
    # the LN RNN's summed inputs over the scale: one number for every scale if a_t just scales
    ln_per_scale = [
        statistics.fmean(dynamics.summed_rms["LN tanh RNN"][s][free]) / s for s in scales
    ]

    def growth(net, s):  # mean factor per step of the dependence on step 0, free-running
        values = dynamics.sensitivity[net][s]
        steps = len(values) - dynamics.input_steps
        return (values[-1] / values[dynamics.input_steps - 1]) ** (1 / steps)

    return {
        "plain_summed_last": {s: plain_summed[s][-1] for s in scales},
        "ln_hidden_range": (min(ln_hidden), max(ln_hidden)),
        "ln_summed_per_scale": (min(ln_per_scale), max(ln_per_scale)),
        "growth": {net: {s: growth(net, s) for s in scales} for net in dynamics.sensitivity},
        "same_until": next(
            (t for t, d in enumerate(dynamics.layernorm_difference) if d > 1e-3), dynamics.steps
        ),
    }


# R2 over draws and gains, declared before the runs: its parts are graded on all five draws of the
# weights at the paper's gain (g = 1), and the growth of a perturbation is shown at g = 0.5 and 2,
# not graded, to tell LayerNorm's share of it from the gain's.
DYNAMICS_SEEDS, DYNAMICS_GAINS = tuple(range(5)), (0.5, 1.0, 2.0)


def dynamics_draws() -> dict:
    """gain -> [DynamicsResult per seed of DYNAMICS_SEEDS], one `rnn_dynamics_gain` run each."""
    return {
        gain: [rnn_dynamics_gain(gain=gain, seed=seed) for seed in DYNAMICS_SEEDS]
        for gain in DYNAMICS_GAINS
    }


def _quarters(steps: list) -> tuple[list, list]:
    """Indices of the evaluations in the first quarter of training (step 0 excluded) and in the
    last quarter."""
    early = [k for k, step in enumerate(steps) if 0 < step <= steps[-1] / 4]
    late = [k for k, step in enumerate(steps) if step > 3 * steps[-1] / 4]
    return early, late


def _finite_mean(values) -> float:
    values = list(values)
    return statistics.fmean(values) if all(math.isfinite(v) for v in values) else math.inf


def validation_late(run: dict) -> list:
    """Per learning rate: the validation NLL averaged over the last quarter's evaluations and over
    seeds (how well a rate ends, whatever its start); infinite if any seed's curve is not
    finite."""
    _, late = _quarters(run["eval_steps"])
    return [_finite_mean(curve[j] for curve in per_lr for j in late) for per_lr in run["val_loss"]]


def validation_areas(run: dict) -> list:
    """Per learning rate: the validation NLL averaged over the evaluations after step 0 and over
    seeds (the area under the mean curve: it rewards a fast start and a low end alike); infinite
    if any seed's curve is not finite."""
    return [_finite_mean(v for curve in per_lr for v in curve[1:]) for per_lr in run["val_loss"]]


PICKS = ("run", "late")  # a model's rate: the lowest validation NLL over the run, or at its end


def best_lr_index(run: dict, pick: str = "run") -> int:
    """The learning rate a model is judged at, chosen on the validation split only: the smallest
    `validation_areas` (pick "run": rewards a fast start and a low end alike) or the smallest
    `validation_late` (pick "late": the end alone). A rate at which a seed diverged is never the
    best unless all did."""
    if pick not in PICKS:
        raise ValueError(f"pick must be one of {PICKS}, got {pick!r}")
    scores = validation_areas(run) if pick == "run" else validation_late(run)
    return min(range(len(scores)), key=lambda k: (scores[k], k))


TEST_SETS, MEASURES = ("longer", "cut", "averaged"), ("loss", "accuracy")  # beyond the plain test
# the fields of a SequenceTrainingResult indexed [order] first
PER_ORDER = (
    "val_loss",
    "val_accuracy",
    "test_loss",
    "test_accuracy",
    *(f"{name}_test_{m}" for name in TEST_SETS for m in MEASURES),
)


def training_summary(study, order: int = 0, lr_index: int | None = None, pick: str = "run") -> dict:
    """The numbers behind R3-R4b, and notebook 04's M4b-M4d, for one pixel order of
    `study` (index into study.orders), each model at its own best learning rate (`best_lr_index`
    by `pick`, validation only), or every model at the grid's rate `lr_index` (the paper's
    protocol: the same settings for every model). What is compared is measured on the test split,
    per seed: "early" the mean test NLL over the first quarter of training (step 0 excluded), how
    fast a model starts; "late" and "late_accuracy" the same over the last quarter, which is what
    "at the end" means in every claim (less noisy than the last evaluation alone); "curve" over
    every evaluation after step 0; "final_*" after the last step; "longer_*" on test sequences
    with blank steps appended; "cut_*" (BN-LSTM) with the statistics cut to a shorter T_max."""
    summary = {}
    for model, full in study.runs.items():
        run = dict(full)
        for name in PER_ORDER:
            run[name] = full[name][order] if full.get(name) else []
        k = best_lr_index(run, pick) if lr_index is None else lr_index
        early, late = _quarters(run["eval_steps"])
        curves = run["test_loss"][k]

        def at_best(name, run=run, k=k):
            return run[name][k] if run[name] else None

        summary[model] = {
            "lr": run["lrs"][k],
            "val_area": validation_areas(run),
            "val_late": validation_late(run),
            "early": [statistics.fmean(c[j] for j in early) for c in curves],
            "late": [statistics.fmean(c[j] for j in late) for c in curves],
            "late_accuracy": [
                statistics.fmean(c[j] for j in late) for c in run["test_accuracy"][k]
            ],
            "curve": [statistics.fmean(c[1:]) for c in curves],
            "final_loss": [c[-1] for c in curves],
            "final_accuracy": [c[-1] for c in run["test_accuracy"][k]],
            **{f"{name}_{m}": at_best(f"{name}_test_{m}") for name in TEST_SETS for m in MEASURES},
        }
    steps = next(iter(study.runs.values()))["eval_steps"]
    early, late = _quarters(steps)
    summary["steps"] = steps[-1]
    summary["early_steps"] = [steps[j] for j in early]
    summary["late_steps"] = [steps[j] for j in late]
    return summary


def best_rate_difference(s: dict, model: str, baseline: str, measure: str) -> stats.Difference:
    """`model` minus `baseline` in `training_summary`'s `s`, each at its own best learning rate,
    paired by seed."""
    return stats.paired_difference(s[model][measure], s[baseline][measure])


# ---- R4e: the grid's top edge ------------------------------------------------------------------

# The own-best comparisons on the digits row by row pick each model's rate from LR_GRID. These are
# the models whose pick is the grid's top (3e-2): by the whole run (R3d, R3b, R4, R4b, R4c, seeds
# 0-9) and by the last quarter (R4d, seeds 10-19). Each is run again one step past the grid, on
# the same seeds; the list was fixed before those runs.
BEYOND_GRID = 1e-1
EDGE_MODELS = (
    ("LSTM", "run", tuple(range(10))),
    ("BN-LSTM", "run", tuple(range(10))),
    ("GRU", "run", tuple(range(10))),
    ("LN-GRU", "run", tuple(range(10))),
    ("LSTM", "late", LATE_PICK_SEEDS),
)


def seed_scores(run: dict, pick: str) -> list:
    """Per learning rate, per seed: the validation NLL the pick rule `pick` ranks rates by
    (`best_lr_index`), for one seed: over every evaluation after step 0 ("run") or over the last
    quarter ("late"); infinite if the seed's curve is not finite."""
    if pick not in PICKS:
        raise ValueError(f"pick must be one of {PICKS}, got {pick!r}")
    _, late = _quarters(run["eval_steps"])
    steps = range(1, len(run["eval_steps"])) if pick == "run" else late
    return [[_finite_mean(curve[j] for j in steps) for curve in per_lr]
            for per_lr in run["val_loss"][0]]  # fmt: skip


def beyond_the_grid() -> dict:
    """(model, pick) -> the per-seed scores of `seed_scores` at the grid's top rate ("edge") and at
    BEYOND_GRID ("beyond"), for each of EDGE_MODELS."""
    out = {}
    for model, pick, seeds in EDGE_MODELS:
        grid = recurrent_training(models=(model,), seeds=seeds).runs[model]
        beyond = recurrent_training(models=(model,), seeds=seeds, lrs=(BEYOND_GRID,)).runs[model]
        out[model, pick] = {
            "seeds": list(seeds),
            "edge": seed_scores(grid, pick)[-1],
            "beyond": seed_scores(beyond, pick)[0],
        }
    return out
