"""Figures of notebook 04, invariances and the geometry of Section 5."""

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from lnpaper import experiments
from lnpaper.figures.registry import figure
from lnpaper.invariance import PAPER_TABLE

NOTEBOOK = "04_invariances"

ROW_LABELS = {
    "batchnorm": "BatchNorm\n(Table 1)",
    "weightnorm": "WeightNorm\n(Table 1)",
    "layernorm": "LayerNorm\n(Table 1)",
    "rmsnorm": "RMSNorm\n(its paper's Table 1)",
    "dyt": "DyT\n(no source: ours only)",
}
COLUMN_LABELS = {
    "weight_matrix_rescale": "weight matrix\nre-scaling\nW -> dW",
    "weight_matrix_recenter": "weight matrix\nre-centering\nW -> W + 1c^T",
    "weight_vector_rescale": "weight vector\nre-scaling\nw_i -> d w_i",
    "dataset_rescale": "dataset\nre-scaling\nX -> dX",
    "dataset_recenter": "dataset\nre-centering\nX -> X + 1c^T",
    "case_rescale": "single case\nre-scaling\nx_n -> d x_n",
}


@figure("invariance_table", notebook=NOTEBOOK, experiment=experiments.invariance_measurements)
def invariance_table(result) -> Figure:
    """Table 1 filled in by measurement: each cell is the largest output change over random
    transformations of its kind (float64); Invariant means below the threshold. A red frame would
    mark a cell where the measurement disagrees with the source's table."""
    rows, columns = result.rows, result.columns
    fig = Figure(figsize=(10.5, 5.2), layout="constrained")
    ax = fig.subplots()
    for r, row in enumerate(rows):
        for c, column in enumerate(columns):
            change = result.max_change[row][column]
            invariant = change < result.threshold
            colour = "#a6d96a" if invariant else "#f0f0f0"
            ax.add_patch(Rectangle((c, r), 1, 1, fc=colour, ec="white", lw=2))
            word = "Invariant" if invariant else "No"
            ax.text(c + 0.5, r + 0.4, word, ha="center", va="center", fontsize=11, weight="bold")
            ax.text(
                c + 0.5, r + 0.7, f"max change {change:.1e}", ha="center", va="center", fontsize=8
            )
            paper = PAPER_TABLE.get(row, {}).get(column)
            if paper is not None and paper != invariant:
                ax.add_patch(Rectangle((c, r), 1, 1, fill=False, ec="red", lw=3))
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks(np.arange(len(columns)) + 0.5, [COLUMN_LABELS[c] for c in columns], fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks(np.arange(len(rows)) + 0.5, [ROW_LABELS[r] for r in rows], fontsize=9)
    ax.tick_params(length=0)
    ax.grid(False)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(
        f"largest change of the output over {result.draws} random transformations per cell, float64; "
        f"Invariant: below {result.threshold:g}"
    )
    return fig


@figure("sgd_geometry", notebook=NOTEBOOK, experiment=experiments.sgd_geometry)
def sgd_geometry(result) -> Figure:
    """A layer-normalized MLP trained with plain SGD from the same function at two scales of W1:
    ||W1|| only grows, and the angle W1 turns per step follows atan(lr ||g|| / ||W1||)."""
    fig = Figure(figsize=(11.0, 3.6), layout="constrained")
    norms_ax, angle_ax, loss_ax = fig.subplots(1, 3)
    for (key, norms), colour in zip(result.norms.items(), ("C0", "C1"), strict=False):
        label = f"W1 initialized at scale {key}"
        norms_ax.plot(np.arange(len(norms)), norms, color=colour, label=label)
        angles = np.array(result.angles[key])
        steps = np.arange(len(angles))
        predicted = np.arctan(result.lr * np.array(result.grad_norms[key]) / np.array(norms[:-1]))
        angle_ax.plot(steps, angles, color=colour, lw=0.8, label=f"measured, scale {key}")
        angle_ax.plot(steps, predicted, color="black", lw=0.6, ls=":")
        loss_ax.plot(result.loss_steps, result.train_loss[key], color=colour, label=label)
    angle_ax.plot([], [], color="black", lw=0.6, ls=":", label="atan(lr ||g_t|| / ||W_t||)")
    norms_ax.set_title("||W1|| under SGD only grows")
    norms_ax.set_ylabel("||W1_t||")
    angle_ax.set_title("angle W1 turns per step")
    angle_ax.set_ylabel("radians")
    angle_ax.set_yscale("log")
    loss_ax.set_title("training loss (mean over 10 steps)")
    loss_ax.set_yscale("log")
    for ax in (norms_ax, angle_ax, loss_ax):
        ax.set_xlabel(f"SGD step (lr = {result.lr:g})")
    norms_ax.legend(fontsize=8)
    angle_ax.legend(fontsize=8)
    return fig


@figure("fisher_doubling", notebook=NOTEBOOK, experiment=experiments.fisher_doubling)
def fisher_doubling(result) -> Figure:
    """How each Fisher block, the length element along w and the gradient change when w doubles
    (log2 axis: -2 is a factor 1/4, -1 is 1/2)."""
    labels = [*result.nominal, "length\nsqrt(u^T F_ww u)", "gradient\nw.r.t. w"]
    fig = Figure(figsize=(10.0, 3.8), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(result.kinds)
    for k, kind in enumerate(result.kinds):
        values = [result.ratios[kind][label] for label in result.nominal]
        values += [result.length_ratio[kind], result.gradient_ratios[kind]["w"]]
        positions = np.arange(len(labels)) + (k - (len(result.kinds) - 1) / 2) * width
        ax.bar(positions, np.log2(values), width, label=kind)
    nominal = [*result.nominal.values(), 0.5, 0.5]
    for x, value in enumerate(nominal):
        ax.plot([x - 0.45, x + 0.45], [np.log2(value)] * 2, color="black", lw=1)
    ax.plot([], [], color="black", lw=1, label="scale-invariant argument")
    ax.set_xticks(np.arange(len(labels)), labels)
    ax.set_yticks([-2, -1, 0, 1], ["1/4", "1/2", "1", "2"])
    ax.set_ylim(-2.4, 1.9)
    ax.set_ylabel("after / before (log scale)")
    ax.set_title("Fisher information of normalized logistic units when w is doubled")
    ax.legend(fontsize=8, ncols=3, loc="upper center")
    return fig
