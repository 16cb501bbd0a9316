"""Synthetic results for notebook 03's check tests: seeded studies whose curves are known."""

import dataclasses

import torch

from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import PER_ORDER, RecurrentStudyResult
from lnpaper.chapters.ch03_layernorm_in_rnns.runs_lengths import longer_sequences

SEEDS = 10  # enough for the paired t intervals to decide
LRS = [3e-3, 1e-2, 3e-2]


def noise(seed: int, scale: float) -> list[float]:
    """SEEDS fixed draws of N(0, scale^2): the seed-to-seed spread of a synthetic arm."""
    draws = torch.randn(SEEDS, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (scale * draws).tolist()


def noisy(curve, seed: int, scale: float = 0.05) -> list[list[float]]:
    """SEEDS test curves: `curve` shifted per seed by noise of sd `scale`."""
    return [[value + shift for value in curve] for shift in noise(seed, scale)]


def arm(curves, final_accuracy=None, best: int = 1, cut=None):
    """A run on the grid LRS whose rate `best` has these test (and validation) curves, the others
    the same curves 0.5 higher; test accuracy per seed from the first evaluation after step 0 on
    (so the last quarter's and the final are the same); a BN-LSTM's cut NLL per seed."""
    accuracy = final_accuracy or [0.98] * len(curves)

    def at(k, values):
        return values if k == best else [[v + 0.5 for v in c] for c in values]

    test_loss = [at(k, curves) for k in range(len(LRS))]
    test_accuracy = [[[0.1] + [a] * (len(c) - 1) for c, a in zip(curves, accuracy, strict=True)]
                     for _ in LRS]  # fmt: skip
    return {
        "lrs": LRS,
        "eval_steps": [20 * k for k in range(len(curves[0]))],
        "val_loss": [test_loss],
        "test_loss": [test_loss],
        "test_accuracy": [test_accuracy],
        "longer_test_loss": [],
        "longer_test_accuracy": [],
        "cut_test_loss": [] if cut is None else [[cut] * len(LRS)],
        "cut_test_accuracy": [] if cut is None else [[accuracy] * len(LRS)],
        "statistics_steps": None if cut is None else 8,
    }


def two_orders(runs_pixel: dict, runs_permuted: dict) -> RecurrentStudyResult:
    """A sequential_digits-like study: each label's run with both orders."""
    runs = {}
    for label, first in runs_pixel.items():
        second = runs_permuted[label]
        runs[label] = dict(first)
        for field in PER_ORDER:
            runs[label][field] = first.get(field, []) + second.get(field, [])
    return RecurrentStudyResult(form="pixels", orders=[False, True], runs=runs)


SLOW = [2.3, 1.0, 0.6, 0.4, 0.3, 0.2, 0.15, 0.12, 0.1]
FAST = [2.3, 0.5, 0.3, 0.2, 0.15, 0.12, 0.1, 0.09, 0.09]


def rows(ln, lstm, gain_one=None, gain_tenth=None, bn=None, ln_accuracy=None, lstm_accuracy=None):
    runs = {
        "LSTM": arm(lstm, lstm_accuracy, best=0),
        "LN-LSTM": arm(ln, ln_accuracy, best=2),
        "LN-LSTM, gain 0.1": arm(gain_tenth or ln),
        "BN-LSTM": arm(bn or lstm),
    }
    if gain_one is not None:
        runs["LN-LSTM"] = arm(gain_one, ln_accuracy, best=2)
    return RecurrentStudyResult(form="rows", orders=[False], runs=runs)


def same_best(ln, lstm) -> RecurrentStudyResult:
    """LN-LSTM and LSTM best at the same rate, so at every shared rate LN minus LSTM is ln - lstm."""
    runs = {
        "LSTM": arm(lstm),
        "LN-LSTM": arm(ln),
        "LN-LSTM, gain 0.1": arm(ln),
        "BN-LSTM": arm(lstm),
    }
    return RecurrentStudyResult(form="rows", orders=[False], runs=runs)


SLOW_AND_HIGH = [v + 0.2 for v in SLOW]


def accuracy_arm(mean: float, seed: int) -> list[float]:
    """SEEDS final test accuracies around `mean` (sd 0.5 points)."""
    return [mean + d for d in noise(seed, 0.005)]


SLOW_BUT_LOWER = [2.3, 1.0, 0.6, 0.4, 0.3, 0.2, 0.1, 0.05, 0.04]  # BN-LSTM-like: late but lower


def pixel_study(bn_gain: tuple, lstm=(0.98, 0.90), cut_shift=0.3, gain_one=SLOW):
    """Both orders: LSTM and BN-LSTM final accuracies (pixel, permuted means), the BN-LSTM's
    gain over the LSTM per order, its cut NLL shifted by `cut_shift`."""
    orders = []
    for order, (base, gain) in enumerate(zip(lstm, bn_gain, strict=True)):
        lstm_accuracy = accuracy_arm(base, 10 + order)
        bn_accuracy = [a + gain + d for a, d in zip(lstm_accuracy, noise(20 + order, 0.003),
                                                    strict=True)]  # fmt: skip
        bn_curves = noisy(FAST, 30 + order, 0.01)
        cut = [c[-1] + cut_shift + d for c, d in zip(bn_curves, noise(40 + order, 0.01),
                                                      strict=True)]  # fmt: skip
        orders.append({
            "LSTM": arm(noisy(SLOW, 1), lstm_accuracy),
            "BN-LSTM": arm(bn_curves, bn_accuracy, cut=cut),
            "BN-LSTM, gain 1.0": arm(noisy(gain_one, 50 + order, 0.01)),
        })  # fmt: skip
    return two_orders(*orders)


def as_grus(study: RecurrentStudyResult) -> RecurrentStudyResult:
    """The same runs, the LSTM's as the GRU's and the LN-LSTM's as the LN-GRU's."""
    runs = {"GRU": study.runs["LSTM"], "LN-GRU": study.runs["LN-LSTM"]}
    return RecurrentStudyResult(form=study.form, orders=study.orders, runs=runs)


BETTER = [v - 0.1 for v in SLOW]


def longer_result(inside: float, beyond: float):
    result = longer_sequences(models=("LN-LSTM",), hidden=8, steps=2, seeds=(0,))
    accuracy = [[inside] * (result.train_length - result.delay) + [beyond] * result.train_length]
    return dataclasses.replace(result, accuracy={"LN-LSTM": accuracy, "BN-LSTM": accuracy})
