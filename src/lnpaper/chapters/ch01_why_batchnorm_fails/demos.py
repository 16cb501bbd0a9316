"""Notebook 01's slider: one example, image 0, in random batches of every size.

BatchNorm normalizes image 0's summed inputs with statistics of the batch it came in, so its
output moves from batch to batch, less as the batch grows; LayerNorm normalizes over the image's
own units and gives the same output in every batch. `batch_size` draws both, and BatchNorm with
the whole training split's statistics (what perfect running averages give). The notebook puts it
on a slider with `demos.show` (`lnpaper.companion.widgets`); tests/test_demos.py checks it.
"""

import functools

import numpy as np
import torch
from matplotlib.figure import Figure

from lnpaper import functional
from lnpaper.chapters.ch01_why_batchnorm_fails.runs import first_layer_inputs
from lnpaper.companion import style
from lnpaper.companion.widgets import show as show  # the notebook calls demos.show
from lnpaper.companion.widgets import styled
from lnpaper.norms import BatchNorm, LayerNorm

BATCH_UNITS, BATCH_DRAWS = 12, 20  # image 0's first 12 units, in 20 random batches per size


@functools.cache
def _summed_inputs() -> torch.Tensor:
    """Notebook 01's a = W x: a fresh 64 -> 64 layer over the 1197 training digits."""
    with torch.random.fork_rng():  # first_layer_inputs seeds torch; the notebook's stream is kept
        return first_layer_inputs(64, 0)


def batch_outputs(batch_size: int) -> dict:
    """Image 0's normalized first 12 units in 20 random batches of `batch_size` training images
    that hold it (training mode: each batch's own statistics), BatchNorm's and LayerNorm's, and
    BatchNorm's with the whole training split's statistics (what perfect running averages give).
    Returns {"BatchNorm": [draw][unit], "LayerNorm": [draw][unit], "whole split": [unit]}."""
    a = _summed_inputs()
    generator = torch.Generator().manual_seed(batch_size)
    others = torch.arange(1, len(a))
    batchnorm, layernorm = BatchNorm(64), LayerNorm(64)  # gain 1, bias 0
    outputs = {"BatchNorm": [], "LayerNorm": []}
    with torch.no_grad():
        for _ in range(BATCH_DRAWS):
            mates = others[torch.randperm(len(others), generator=generator)[: batch_size - 1]]
            batch = a[torch.cat([torch.tensor([0]), mates])]  # image 0 first
            # BatchNorm: (a_0i - mu_i) / sigma_i, mu_i and sigma_i over the batch's images
            outputs["BatchNorm"].append(batchnorm(batch)[0, :BATCH_UNITS].numpy())
            # LayerNorm: (a_0i - mu_0) / sigma_0, mu_0 and sigma_0 over image 0's 64 units
            outputs["LayerNorm"].append(layernorm(batch)[0, :BATCH_UNITS].numpy())
    whole = functional.batch_norm(a.numpy(), np.ones(64), np.zeros(64))  # mu_i over all 1197
    return {**{k: np.array(v) for k, v in outputs.items()}, "whole split": whole[0, :BATCH_UNITS]}


@styled
def batch_size(batch_size: int = 4) -> Figure:
    """Notebook 01: image 0's BatchNorm and LayerNorm outputs, unit by unit, in 20 random batches
    of one size; the grey ticks are BatchNorm with the whole training split's statistics."""
    outputs = batch_outputs(batch_size)
    fig = style.new_figure(1, 4.0)
    ax = fig.subplots()
    units = np.arange(1, BATCH_UNITS + 1)
    for name, offset in (("BatchNorm", -0.15), ("LayerNorm", 0.15)):
        draws = outputs[name]
        ax.plot(np.broadcast_to(units + offset, draws.shape).ravel(), draws.ravel(), "o", ms=3.5,
                alpha=0.6, color=style.color(name), label=name)  # fmt: skip
    ax.plot(units - 0.15, outputs["whole split"], "_", ms=14, mew=2, color=style.REFERENCE,
            label="the whole split's statistics in BatchNorm")  # fmt: skip
    ax.set(xticks=units, xlim=(0.4, BATCH_UNITS + 0.6), xlabel="unit $i$ of image 0")
    # the y axis fixed, so that a slider moves the dots, not the axis
    ax.set(ylim=(-4.5, 4.5), ylabel="normalized summed input")
    ax.set_title(f"{BATCH_DRAWS} random batches of {batch_size} training images holding image 0")
    style.shared_legend(fig, ncols=3)
    spread = outputs["BatchNorm"].std(0).mean()
    moved = np.ptp(outputs["LayerNorm"], axis=0).max()
    style.finding(fig, f"Batch {batch_size}: BatchNorm's output moves by sd {spread:.2f}, "
                       f"LayerNorm's by {moved:g}")  # fmt: skip
    return fig
