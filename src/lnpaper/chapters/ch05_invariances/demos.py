"""Notebook 05's slider: one transformation of Table 1, and what it changes.

Table 1 of the paper says which normalizer's output survives which transformation of the weights
or the data. `table_1` applies one of them, at a size the reader picks, to one small layer and
draws each normalizer's largest output change (this chapter's `invariance` computes both the layer
and the transformation); with eps on the page the exact invariances become approximate. The
notebook puts it on a slider with `demos.show` (`lnpaper.companion.widgets`); tests/test_demos.py
checks it.
"""

import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.transforms import blended_transform_factory

from lnpaper.chapters.ch05_invariances import invariance
from lnpaper.companion import style
from lnpaper.companion.widgets import show as show  # the notebook calls demos.show
from lnpaper.companion.widgets import styled

TRANSFORMATIONS = {  # the control's words -> Table 1's column
    "W rescaled": "weight_matrix_rescale",
    "W recentred": "weight_matrix_recenter",
    "w_1 rescaled": "weight_vector_rescale",
    "X rescaled": "dataset_rescale",
    "X recentred": "dataset_recenter",
    "x_1 rescaled": "case_rescale",
}
FLOOR = 1e-18  # an output change of exactly 0 is drawn here


def table_changes(transformation: str, size: float, eps: float) -> dict:
    """Each normalizer's largest output change, max |y' - y|, under one transformation of
    notebook 05's hand-made cell (16 cases, 10 inputs, 8 units, float64, seed 0). `size` is the
    factor delta of a re-scaling (of W, of unit 1's w_1, of X, of case 1's x_1) or the length
    scale of c for a re-centering, c = size * z with z ~ N(0, I) fixed."""
    generator = torch.Generator().manual_seed(0)
    layers = invariance.normalized_layers(inputs=10, units=8, generator=generator, eps=eps)
    x = torch.randn(16, 10, generator=generator, dtype=torch.float64)
    w = torch.randn(8, 10, generator=generator, dtype=torch.float64) / 10**0.5
    c = size * torch.randn(10, generator=generator, dtype=torch.float64)
    column = TRANSFORMATIONS[transformation]
    move = getattr(invariance, column)  # invariance.weight_matrix_rescale and its five siblings
    if column.endswith("recenter"):
        x2, w2 = move(x, w, c)  # W + 1 c^T, or X + 1 c^T
    elif column in ("weight_vector_rescale", "case_rescale"):
        x2, w2 = move(x, w, 0, size)  # unit 1's weights, or case 1's input, times delta
    else:
        x2, w2 = move(x, w, size)  # delta W, or delta X
    with torch.no_grad():
        return {row: (layer(x2, w2) - layer(x, w)).abs().max().item()
                for row, layer in layers.items()}  # fmt: skip


@styled
def table_1(transformation: str = "W recentred", size: float = 2.0, eps: float = 1e-300) -> Figure:
    """Notebook 05: one transformation of Table 1 applied to one layer, and each normalizer's
    largest output change on a log axis; below 1e-8 the cell reads Invariant."""
    changes = table_changes(transformation, size, eps)
    column = TRANSFORMATIONS[transformation]
    fig = style.new_figure(1, 3.8)
    ax = fig.subplots()
    rows = list(changes)  # invariance.ROWS: batchnorm, weightnorm, layernorm, rmsnorm, dyt
    positions = np.arange(len(rows))[::-1]  # the table's row order, top to bottom
    values = [max(changes[row], FLOOR) for row in rows]
    ax.barh(positions, values, color=[style.color(row) for row in rows], height=0.6)
    # Each row's verdict to the right of the axes, in a margin kept for it: a figure text, which
    # the constrained layout leaves out (so the axes keep one width whatever the words) and a
    # tight crop keeps. The paper's verdict only where it says otherwise.
    fig.get_layout_engine().set(rect=(0, 0, 0.78, 1))
    beside = blended_transform_factory(fig.transFigure, ax.transData)  # x: figure, y: row
    for position, row in zip(positions, rows, strict=True):
        verdict = "Invariant" if changes[row] < invariance.THRESHOLD else "No"
        paper = invariance.PAPER_TABLE.get(row)  # DyT is in no source's table
        if paper is not None and ("Invariant" if paper[column] else "No") != verdict:
            verdict += f"; paper: {'Invariant' if paper[column] else 'No'}"
        fig.text(0.8, position, verdict, transform=beside, va="center", ha="left", size=9)
    ax.set_yticks(positions, [style.display(row) for row in rows])
    ax.set_xlim(FLOOR / 3, 1e2)
    style.log_axis(ax, "x")
    ax.axvline(invariance.THRESHOLD, color=style.REFERENCE, lw=1.0, ls=":")
    ax.set_xlabel("largest output change, max $|y' - y|$ (0 drawn at $10^{-18}$);\n"
                  "Invariant left of the dotted $10^{-8}$")  # fmt: skip
    ax.grid(axis="y", visible=False)
    what = "delta" if column.endswith("rescale") else "c's scale"
    ax.set_title(f"{transformation}, {what} {size:g}, eps {eps:g}", loc="left")
    kept = [style.display(row) for row in rows if changes[row] < invariance.THRESHOLD]
    style.finding(fig, f"{transformation}: " + (f"{', '.join(kept)} unchanged" if kept else
                                                  "every normalizer's output changes"))  # fmt: skip
    return fig
