"""Notebook 07's slider: a shift and a scale added to one row, RMSNorm against LayerNorm
(LayerNorm ignores both; RMSNorm, dividing by the root mean square only, passes the shift on).
tests/test_demos.py checks it."""

import functools

import numpy as np
import torch
from matplotlib.figure import Figure

from lnpaper.companion import style
from lnpaper.companion.widgets import show as show  # the notebook calls demos.show
from lnpaper.companion.widgets import styled
from lnpaper.norms import LayerNorm, RMSNorm

ROW_UNITS, ROW_SHOWN = 64, 16  # one row of 64 summed inputs; the first 16 units are drawn


@functools.cache
def _row() -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    return torch.randn(ROW_UNITS, generator=generator, dtype=torch.float64)


def row_outputs(shift: float, scale: float) -> dict:
    """LayerNorm and RMSNorm (gain 1, bias 0, the same eps 1e-5, float64) of one row a of 64 Gaussian
    values and of scale * a + shift, the change every unit's summed input gets when the weight
    matrix is multiplied by `scale` and re-centred by `shift` (notebook 05).
    Returns {norm: (output of a, output of the moved row)}."""
    a = _row()
    moved = scale * a + shift
    norms = {"LayerNorm": LayerNorm(ROW_UNITS, eps=1e-5), "RMSNorm": RMSNorm(ROW_UNITS, eps=1e-5)}
    with torch.no_grad():
        return {name: (norm.double()(a).numpy(), norm.double()(moved).numpy())
                for name, norm in norms.items()}  # fmt: skip


@styled
def row_shift(shift: float = 1.0, scale: float = 1.0) -> Figure:
    """Notebook 07: one row's LayerNorm and RMSNorm outputs before (grey ticks) and after (dots)
    every unit's summed input is multiplied by `scale` and shifted by `shift`."""
    outputs = row_outputs(shift, scale)
    units = np.arange(1, ROW_SHOWN + 1)
    fig = style.new_figure(2, 3.8)
    axes = fig.subplots(1, 2, sharey=True)
    moved = {}
    for ax, (name, (before, after)) in zip(axes, outputs.items(), strict=True):
        ax.plot(units, before[:ROW_SHOWN], "_", ms=14, mew=2, color=style.REFERENCE,
                label="output for the row $a$")  # fmt: skip
        ax.plot(units, after[:ROW_SHOWN], "o", ms=5, color=style.color(name),
                label=f"{name} of the moved row")  # fmt: skip
        ax.set_title(name)
        ax.set_xlabel("unit $i$")
        ax.legend(loc="lower left")
        moved[name] = np.abs(after - before).max()
    axes[0].set_ylim(-3.2, 3.2)  # fixed, so that a control moves the dots, not the axis
    axes[0].set_ylabel("normalized output")
    change = {name: f"{m:.0e}" if m < 1e-3 else f"{m:.2f}" for name, m in moved.items()}
    row = "a" if scale == 1 else f"{scale:g}\\,a"
    style.finding(fig, f"$a \\to {row} + {shift:g}$: LayerNorm's output moves by up to "
                       f"{change['LayerNorm']}, RMSNorm's by up to {change['RMSNorm']}")  # fmt: skip
    return fig
