"""Notebook 06's slider: a Transformer's depth against its gradient at initialization (Xiong et
al.: Post-LN's does not shrink with depth L, Pre-LN's shrinks like 1/sqrt(L), because Pre-LN's
residual stream grows with every block). tests/test_demos.py checks it."""

import functools

import numpy as np
import torch
from matplotlib.figure import Figure

from lnpaper.chapters.ch06_transformer import runs as ch06_runs
from lnpaper.companion import style
from lnpaper.companion.widgets import show as show  # the notebook calls demos.show
from lnpaper.companion.widgets import styled

DEPTH_SEEDS, DEPTH_BATCH = 3, 4  # T1 uses 40 seeds of 8 sequences; fewer keep a redraw < 0.5 s


@functools.cache
def depth_run(placement: str, depth: int):
    """grad_norm_vs_depth's own body (not its recorded result, so any depth works) for one
    depth: Xiong et al.'s setting at initialization, 3 seeds of 4 sequences of 32 tokens."""
    run = ch06_runs.grad_norm_vs_depth.__wrapped__  # the computation, without the record
    with torch.random.fork_rng():  # it seeds torch per seed; the notebook's own stream is kept
        return run(placement=placement, depths=(depth,), seeds=range(DEPTH_SEEDS),
                   batch_size=DEPTH_BATCH)  # fmt: skip


@styled
def depth_gradient(depth: int = 12) -> Figure:
    """Notebook 06: at initialization, for one depth L, the residual stream block by block (left)
    and the gradient of the last block's W^(2) (right), Post-LN against Pre-LN."""
    runs = {name: depth_run(key, depth) for key, name in (("post", "Post-LN"), ("pre", "Pre-LN"))}
    fig = style.new_figure(2, 4.0)
    stream, gradient = fig.subplots(1, 2, width_ratios=[1.6, 1])
    for name, run in runs.items():
        stream.plot(run.layers, run.residual_sq_norm, marker="o", ms=3, color=style.color(name),
                    label=name)  # fmt: skip
    layers = np.arange(depth + 1)
    # Lemma 2 for Pre-LN: (1 + l/2) d <= E||x_l||^2 <= (1 + 3l/2) d
    stream.fill_between(layers, 1 + layers / 2, 1 + 1.5 * layers, color=style.GREY, alpha=0.2,
                        lw=0, label="Lemma 2's band for Pre-LN")  # fmt: skip
    stream.set_xlim(0, 24.5)
    stream.set_ylim(0, 38)  # fixed for every depth: the stream is seen to grow with L
    stream.set_xlabel("block l (Post-LN: x + FFN(x) in block l; Pre-LN: after l blocks)")
    stream.set_ylabel(r"$E\,\|x\|^2 / d$")
    stream.set_title(f"the residual stream, $L = {depth}$")
    stream.legend(loc="upper left")

    means = {}
    for k, (name, run) in enumerate(runs.items()):
        norms = np.array(run.grad_norm[0])
        means[name] = norms.mean()
        gradient.bar(k, means[name], width=0.6, color=style.color(name), alpha=0.5)
        gradient.plot(np.full(len(norms), k), norms, "o", color=style.color(name), ms=4, label=name)
    gradient.set_xticks([0, 1], list(runs))
    top = max(max(max(run.grad_norm[0]) for run in runs.values()) * 1.1, 7)
    gradient.set_ylim(0, top)  # 7 for every depth unless a seed goes higher
    gradient.grid(axis="x", visible=False)
    gradient.set_ylabel(r"$\|\partial L / \partial W^{(2)}\|_F$, last block")
    gradient.set_title(f"bar: mean of {DEPTH_SEEDS} seeds (dots)")
    ratio = means["Post-LN"] / means["Pre-LN"]
    style.finding(fig, f"At $L = {depth}$ Post-LN's last $W^{{(2)}}$ gets {ratio:.1f} times "
                       "Pre-LN's gradient")  # fmt: skip
    return fig
