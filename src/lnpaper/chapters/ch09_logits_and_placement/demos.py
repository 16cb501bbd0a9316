"""Notebook 09's slider: the learning rate, with and without QK-norm (Q1: at a large rate the
attention logits grow far beyond their size at the start unless the queries and keys are
normalized). It calls the recorded `runs.qk_run`, so a setting the record lacks runs live.
tests/test_demos.py checks it."""

import numpy as np
from matplotlib.figure import Figure

from lnpaper.chapters.ch09_logits_and_placement import analysis, runs
from lnpaper.chapters.ch09_logits_and_placement.figures import QK_COLORS
from lnpaper.companion import style
from lnpaper.companion.widgets import show as show  # the notebook calls demos.show
from lnpaper.companion.widgets import styled
from lnpaper.data import SyntheticLanguage


@styled
def qk_learning_rate(lr: float = 1e-1) -> Figure:
    """Notebook 09: Q1's runs at one learning rate of the sweep, read from the record (each is
    5 seeds trained for 120 steps, too long to recompute at every move of a slider): the largest
    layer-0 attention logit as training goes (left) and each seed's held-out loss (right)."""
    arms = {arm: runs.qk_run(qk_norm=qk, lr=lr) for arm, qk in analysis.QK_ARMS.items()}
    language = SyntheticLanguage()
    levels = {"uniform": language.levels().uniform, "bigram": language.levels().bigram,
              "floor": language.entropy_floor(16)}  # fmt: skip
    fig = style.new_figure(2, 4.0)
    logits, losses = fig.subplots(1, 2, width_ratios=[1.6, 1])
    largest, ends = {}, {}
    for k, (arm, run) in enumerate(arms.items()):
        colour = QK_COLORS[arm]  # notebook 09's figure's colours
        for seed, values in enumerate(run.max_logit):
            logits.plot(run.logit_steps[: len(values)], values, color=colour, lw=1.2, alpha=0.8,
                        label=arm if seed == 0 else None)  # fmt: skip
        largest[arm] = max(max(values) for values in run.max_logit)
        finals = [loss for loss in run.final_loss if loss is not None]
        ends[arm] = np.median(finals) if finals else None
        losses.plot(np.full(len(finals), k), finals, "o", ms=5, color=colour)
    logits.set_ylim(1, 1e6)  # fixed, so that the slider moves the lines, not the axis
    style.log_axis(logits, "y")
    logits.set_xlabel("training step")
    logits.set_title("largest layer-0 attention logit $|z_{ij}|$, one line a seed")
    for name in ("uniform", "bigram", "floor"):
        losses.axhline(levels[name], color=style.REFERENCE, lw=0.8, ls=":")
        losses.annotate(name, (1.45, levels[name]), va="bottom", ha="right", fontsize=8)
    losses.set_xticks([0, 1], list(arms))
    losses.set_xlim(-0.5, 1.5)
    losses.set_ylim(0.8, 3.2)
    losses.grid(axis="x", visible=False)
    losses.set_title("held-out loss at step 120, one dot a seed")
    style.shared_legend(fig, [logits], ncols=2)
    peak = {arm: f"{largest[arm]:.3g}" for arm in arms}
    loss = {arm: "diverged" if ends[arm] is None else f"{ends[arm]:.2f}" for arm in arms}
    style.finding(fig, f"lr {lr:g}: the largest logit reaches {peak['no QK-norm']} without "
                       f"QK-norm, {peak['QK-LayerNorm']} with it; median loss {loss['no QK-norm']} "
                       f"and {loss['QK-LayerNorm']}")  # fmt: skip
    return fig
