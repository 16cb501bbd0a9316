"""Analysis of the attentive reader's miniature (Sec. 6.2): the study that gathers its recorded
arms, and the summary its claims and the notebook read. Nothing here is recorded.

The protocol (fixed before any graded run): each arm trained at Adam 1e-3 and 3e-3 on the same
six seeds and minibatches, its rate picked by the validation NLL averaged over the run, graded on
test error. "Faster" reads the evaluations in the first quarter of training (steps 35-175 of
700), "at the end" those in the last quarter (steps 525-700).
"""

import functools
import statistics
from dataclasses import dataclass

import numpy as np

from lnpaper.chapters.ch03_layernorm_in_rnns.runs_reader import reader_training
from lnpaper.data import cloze
from lnpaper.train.loop import epoch_batches

# label -> the arm's arguments of reader_training; the BatchNorm control is trained at the rate
# BN-LSTM picks, so it is not in this table (`reader_study`).
READER_ARMS = {
    "LSTM": {"cell": "lstm"},
    "LN-LSTM": {"cell": "ln-lstm"},
    "LN-LSTM, gain 0.1": {"cell": "ln-lstm", "gain_init": 0.1},
    "BN-LSTM": {"cell": "bn-lstm"},
    "bag of embeddings": {"cell": "bag"},
}
TEXT_STATISTICS = "BN-LSTM, text statistics"
READER_SEEDS = (0, 1, 2, 3, 4, 5)


@dataclass
class ReaderStudyResult:
    runs: dict  # label -> ReaderTrainingResult as a plain dict


def picked_rate(run: dict) -> int:
    """The index of the rate whose validation NLL, averaged over the run's evaluations and the
    seeds, is lowest."""
    means = [
        statistics.fmean(statistics.fmean(seed) for seed in per_lr) for per_lr in run["val_loss"]
    ]
    return means.index(min(means))


def reader_study(
    *, seeds=READER_SEEDS, steps: int = 700, fillers: str = "0..v"
) -> ReaderStudyResult:
    """Every arm of READER_ARMS on `seeds`, evaluated 20 times over `steps`, then the BN-LSTM
    whose statistics count text rows alone at the rate the BN-LSTM picked: the control for what
    padding does to BatchNorm."""
    common = {"seeds": seeds, "steps": steps, "eval_every": steps // 20, "fillers": fillers}
    runs = {label: vars(reader_training(**arm, **common)) for label, arm in READER_ARMS.items()}
    rate = runs["BN-LSTM"]["lrs"][picked_rate(runs["BN-LSTM"])]
    control = reader_training(cell="bn-lstm", text_statistics=True, lrs=(rate,), **common)
    runs[TEXT_STATISTICS] = vars(control)
    return ReaderStudyResult(runs=runs)


def quarter_steps(eval_steps: list, quarter: str) -> list:
    """The evaluation steps of the first or the last quarter of training (the evaluation at step
    0 is not training)."""
    last = eval_steps[-1]
    if quarter == "first":
        return [step for step in eval_steps if 0 < step <= last / 4]
    return [step for step in eval_steps if step >= 3 * last / 4]


def run_means(run: dict, lr_index: int) -> list[float]:
    """Per seed, the test error (percentage points) averaged over every evaluation after step 0."""
    trained = [k for k, step in enumerate(run["eval_steps"]) if step > 0]
    return [
        100 * statistics.fmean(seed[k] for k in trained) for seed in run["test_error"][lr_index]
    ]


def quarter_means(run: dict, lr_index: int, quarter: str) -> list[float]:
    """Per seed, the test error (percentage points) averaged over the evaluations in the first
    or the last quarter of training."""
    steps = quarter_steps(run["eval_steps"], quarter)
    picked = [run["eval_steps"].index(step) for step in steps]
    return [100 * statistics.fmean(seed[k] for k in picked) for seed in run["test_error"][lr_index]]


@functools.cache
def most_frequent_error(split: str = "test") -> float:
    """The test error (percentage points) of answering with the candidate that the passage names
    most often (the lowest name on a tie): what the task gives away without reading in order."""
    data = cloze.load(split)
    counts = np.stack([np.bincount(row, minlength=cloze.VOCABULARY) for row in data.passages])
    named = np.where(data.candidates, counts[:, cloze.ENTITIES], -1)
    return 100 * float((named.argmax(1) != data.answers).mean())


PADDED_ROWS = 0.3  # the regime check: a step counts as padded where 30% of its rows or more are


def padded_steps(run: dict) -> dict:
    """Whether padding reaches a per-step BatchNorm in `run` (a reader_training result as a
    dict): over every training batch its seeds saw, the share of each batch's steps at which
    PADDED_ROWS or more of its rows are padding; the check holds if that share is at least a
    third in every batch."""
    return _padded_steps(
        tuple(run["seeds"]), run["eval_steps"][-1], run["batch_size"], run["fillers"]
    )


@functools.cache
def _padded_steps(seeds: tuple, steps: int, batch_size: int, fillers: str) -> dict:
    lengths = cloze.load("train", fillers=fillers).lengths
    shares = []
    for seed in seeds:
        batches = epoch_batches(len(lengths), batch_size, seed)
        for step in range(steps):
            padded = cloze.padded_share(lengths[batches(step).numpy()])
            shares.append(float((padded >= PADDED_ROWS).mean()))
    return {"mean": statistics.fmean(shares), "lowest": min(shares), "holds": min(shares) >= 1 / 3}


def reader_summary(study: ReaderStudyResult) -> dict:
    """label -> its picked rate and, at that rate, each seed's first- and last-quarter test error
    (pp) and the change of the mean error over seeds from the last quarter's first evaluation to
    its last (pp): what the ending gate reads."""
    summary = {}
    for label, run in study.runs.items():
        k = picked_rate(run)
        steps = run["eval_steps"]
        last_quarter = [steps.index(step) for step in quarter_steps(steps, "last")]
        start, end = (
            100 * statistics.fmean(seed[i] for seed in run["test_error"][k])
            for i in (last_quarter[0], last_quarter[-1])
        )
        summary[label] = {
            "lr": run["lrs"][k],
            "first": quarter_means(run, k, "first"),
            "last": quarter_means(run, k, "last"),
            "last_quarter_change": end - start,
        }
    return summary
