"""Analysis of notebook 08's deep-stack runs: the studies that gather recorded runs, and the
summaries the notebook prints and the claims and figures read. Nothing here is recorded: each
function reads `runs`' experiments (through the record) and computes in memory, so the record holds
each run once. Each function's docstring names the claims it serves."""

import math
import statistics

from lnpaper.chapters.ch08_deep_stacks.runs import (
    DEEPNORM_HALVES,
    DeepNormResult,
    LayerScalingResult,
    deepnorm_study,
    layer_scaling_study,
    warmup_training,
)


def deepnorm_halves(
    *, seeds=tuple(range(8)), steps: int = 100, update_steps: int = 20
) -> DeepNormResult:
    """D1b: deepnorm_study's model, rate, data and seeds with DeepNorm's halves apart, alpha only
    and beta only, and a Pre-LN arm; D1's Post-LN and DeepNorm runs are deepnorm_study()'s."""
    return deepnorm_study(
        arms=("pre", *DEEPNORM_HALVES), seeds=seeds, steps=steps, update_steps=update_steps
    )


# A2b and X1b: Admin and Mix-LN trained, each where its source's claim is about, on 12 seeds (8-19)
# no D1 or X1 run used, declared before the runs. Twelve seeds let "most runs" decide at 10 of 12.
TRAINING_SEEDS = tuple(range(8, 20))


def admin_training(*, seeds=TRAINING_SEEDS, n_layers: int = 12, steps: int = 100) -> DeepNormResult:
    """A2b: D1's rate (Adam 3e-3, no warmup) and 100 steps at twice D1's depth: Post-LN, Admin
    and Pre-LN."""
    return deepnorm_study(arms=("post", "admin", "pre"), n_layers=n_layers, seeds=seeds,
                          steps=steps)  # fmt: skip


# A2c: A2b with warmup, as Admin's recipe trains: A2b's arms, depth, rate and steps with 50 steps
# of linear warmup (T3's and T4's), on 12 seeds (20-31) no earlier run used; declared before the
# run. The same test as A2b.
A2C_WARMUP = 50
A2C_SEEDS = tuple(range(20, 32))


def admin_warmup_training(*, seeds=A2C_SEEDS, warmup_steps: int = A2C_WARMUP) -> DeepNormResult:
    """A2c: Post-LN, Admin and Pre-LN at A2b's 12 blocks, Adam 3e-3 and 100 steps, with warmup."""
    return warmup_training(arms=("post", "admin", "pre"), n_layers=12, warmup_steps=warmup_steps,
                           seeds=seeds, steps=100)  # fmt: skip


def mix_training(*, seeds=TRAINING_SEEDS, steps: int = 200) -> DeepNormResult:
    """X1b: X1's 8 blocks and rate (Adam 1e-3, no warmup), trained `steps` steps: Post-LN,
    Pre-LN and Mix-LN."""
    return deepnorm_study(arms=("post", "pre", "mix"), n_layers=8, lr=1e-3, steps=steps,
                          seeds=seeds)  # fmt: skip


# D1c and D1d: D1 and D1b at four times D1's depth, 24 blocks, where DeepNet's scaling is meant to
# matter: D1's rate, steps and seeds, declared before the run.
DEEP_LAYERS = 24


def deepnorm_deep(*, seeds=tuple(range(8)), n_layers: int = DEEP_LAYERS) -> DeepNormResult:
    """D1c, D1d: Post-LN, DeepNorm, each of its halves and Pre-LN at `n_layers` blocks."""
    return deepnorm_study(arms=("post", "deepnorm", *DEEPNORM_HALVES, "pre"), n_layers=n_layers,
                          seeds=seeds)  # fmt: skip


# L1c: the L1 study trained three times as long, in case the scaling needs time to act. It
# multiplies block l's norm outputs by 1/sqrt(l) with no parameter of its own, and the matrices that
# read them can absorb it within tens of Adam steps (entries about 0.1 at init, moved by about lr a
# step). 300 steps is what the budget allows.
L1_LONG_STEPS = 300


def curse_control(*, seeds=tuple(range(6))) -> LayerScalingResult:
    """L1d, L1's control arm: `layer_scaling_study`'s model, data, seeds, rate and steps with
    Peri-LN, whose norms on each sublayer's output keep what a block adds at unit scale while the
    stream, as in Pre-LN, is never normalized."""
    return layer_scaling_study(arms=("peri",), seeds=seeds)


def layer_scaling_long(*, seeds=tuple(range(6))) -> LayerScalingResult:
    """L1c: `layer_scaling_study` (both arms, the same seeds and data) at L1_LONG_STEPS steps."""
    return layer_scaling_study(steps=L1_LONG_STEPS, seeds=seeds)


# ---- summaries the notebook prints and the claims and figures read ----------------------------


def mean_dependence(result, arm: str) -> list[list[float]]:
    """[depth][seed]: the mean over a model's sublayers of Var[f] / Var[s + f]."""
    return [[statistics.fmean(ratios) for ratios in by_seed] for by_seed in result.dependence[arm]]


def growth_exponents(result, arm: str) -> list[float]:
    """[seed]: the exponent b of output change ~ L^b, the least-squares slope of log(change)
    against log(L) over the depths."""
    x = [math.log(depth) for depth in result.depths]
    return [
        least_squares_slope(x, [math.log(v) for v in by_depth])
        for by_depth in zip(*result.output_change[arm], strict=True)
    ]


def least_squares_slope(x, y) -> float:
    """The slope of the least-squares line through the points (x_i, y_i)."""
    mx, my = statistics.fmean(x), statistics.fmean(y)
    return sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sum(
        (a - mx) ** 2 for a in x
    )
