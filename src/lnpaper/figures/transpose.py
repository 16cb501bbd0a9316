"""Figures of notebook 02, the transpose."""

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from lnpaper import experiments
from lnpaper.figures.registry import figure

NOTEBOOK = "02_the_transpose"


@figure("transpose_table", notebook=NOTEBOOK)
def transpose_table() -> Figure:
    """The (example x unit) table of summed inputs: BatchNorm takes statistics down a column,
    LayerNorm along a row. The same numbers, one transposed axis."""
    rng = np.random.default_rng(0)
    examples, units = 6, 8
    table = rng.normal(size=(examples, units)) * rng.uniform(0.5, 2.0, size=(examples, 1))
    fig = Figure(figsize=(9.0, 3.9), layout="constrained")
    axes = fig.subplots(1, 2)
    stories = [
        ("BatchNorm: statistics down a column", "mu_i, sigma_i over the batch", "column", 2),
        ("LayerNorm: statistics along a row", "mu_n, sigma_n over its own units", "row", 3),
    ]
    for ax, (title, note, kind, index) in zip(axes, stories, strict=True):
        ax.imshow(table, cmap="RdBu_r", vmin=-3, vmax=3)
        ax.set_title(title)
        ax.set_xlabel("hidden unit i = 1..H")
        ax.set_ylabel("example n in the mini-batch")
        ax.set_xticks(range(units), [str(i + 1) for i in range(units)])
        ax.set_yticks(range(examples), [str(n + 1) for n in range(examples)])
        ax.grid(False)
        if kind == "column":
            box = Rectangle((index - 0.5, -0.5), 1, examples, fill=False, lw=3, ec="black")
            xy, text_xy = (index + 0.5, 1.0), (index + 1.2, 0.6)
        else:
            box = Rectangle((-0.5, index - 0.5), units, 1, fill=False, lw=3, ec="black")
            xy, text_xy = (2.0, index + 0.5), (1.0, index + 1.9)
        ax.add_patch(box)
        ax.annotate(
            note,
            xy=xy,
            xytext=text_xy,
            arrowprops={"arrowstyle": "->"},
            fontsize=9,
            bbox={"boxstyle": "round", "fc": "white", "ec": "black"},
        )
    return fig


@figure("per_token_independence", notebook=NOTEBOOK, experiment=experiments.per_token_independence)
def per_token_independence(result) -> Figure:
    """How much each token's output moves when one token's input is changed (log colour scale;
    black is an exact zero)."""
    layernorm = np.array(result.layernorm_change)
    batchnorm = np.array(result.batchnorm_change)
    scale = LogNorm(vmin=1e-3, vmax=max(layernorm.max(), batchnorm.max()))
    cmap = colormaps["magma"].with_extremes(under="black", bad="black")
    fig = Figure(figsize=(9.0, 2.8), layout="constrained")
    axes = fig.subplots(1, 2)
    panels = [
        (layernorm, f"LayerNorm: others move {result.layernorm_max_other:.2g}"),
        (batchnorm, f"BatchNorm over B x T: others move up to {result.batchnorm_max_other:.2g}"),
    ]
    for ax, (change, title) in zip(axes, panels, strict=True):
        image = ax.imshow(np.ma.masked_equal(change, 0.0), cmap=cmap, norm=scale, aspect="auto")
        b, t = result.perturbed
        ax.add_patch(Rectangle((t - 0.5, b - 0.5), 1, 1, fill=False, ec="cyan", lw=2))
        ax.set_title(title)
        ax.set_xlabel("token position t")
        ax.set_ylabel("sequence b")
        ax.grid(False)
    fig.colorbar(image, ax=axes, label="max |change| of output")
    return fig


@figure("variants_vs_scale", notebook=NOTEBOOK, experiment=experiments.variants_vs_scale)
def variants_vs_scale(result) -> Figure:
    """Each variant's output size relative to torch.nn.LayerNorm's, against the rows' spread."""
    fig = Figure(figsize=(10.0, 3.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    for (name, ratios), style in zip(result.ratios.items(), ("-", "--", ":"), strict=True):
        ratios = np.array(ratios)
        left.plot(result.stds, ratios, style, marker="o", ms=3, label=name)
        right.plot(result.stds, np.abs(ratios - 1), style, marker="o", ms=3, label=name)
    left.axhline(1.0, color="black", lw=0.8)
    left.set_ylabel("|variant output| / |nn.LayerNorm output|")
    left.set_title(f"The same name, different functions (H = {result.width}, eps = 1e-5)")
    right.axhline(1 - np.sqrt(1 - 1 / result.width), color="grey", lw=0.8, ls="--")
    right.text(result.stds[0], 1.3 * (1 - np.sqrt(1 - 1 / result.width)), "1 - sqrt((H-1)/H)")
    right.set_ylabel("|ratio - 1|")
    right.set_title("How far from nn.LayerNorm")
    for ax in (left, right):
        ax.axvline(np.sqrt(1e-5), color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("standard deviation of the row (dotted: sqrt(eps))")
    left.legend(fontsize=8)
    return fig


@figure("one_pass_variance", notebook=NOTEBOOK, experiment=experiments.one_pass_variance)
def one_pass_variance(result) -> Figure:
    """float32 rows with std 0.01 and a growing mean: the variance, then the LayerNorm output."""
    labels = [f"{offset:g}" for offset in result.offsets]
    positions = np.arange(len(labels))
    fig = Figure(figsize=(9.5, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    for name, errors in result.variance_error.items():
        left.plot(positions, errors, marker="o", label=name)
    for x, share in zip(positions, result.nonpositive_fraction, strict=True):
        if share > 0:
            left.annotate(f"{share:.0%} <= 0", (x, 3.0), ha="center", fontsize=8)
    left.axhline(1.0, color="black", lw=0.8)
    left.set_title(f"float32 variance, std {result.std:g}, H = {result.width}")
    left.set_ylabel("median relative error")
    for name, errors in result.layernorm_error.items():
        right.plot(positions, errors, marker="o", label=name)
    right.axhline(1e-3, color="black", lw=0.8, ls="--", label="1e-3, lnpaper's bar")
    right.set_title("float32 LayerNorm output")
    right.set_ylabel("max relative error")
    for ax in (left, right):
        ax.set_yscale("log")
        ax.set_xticks(positions, labels)
        ax.set_xlabel("mean of the row (offset)")
        ax.legend(fontsize=8)
    return fig
