"""Figures of notebook 06, RMSNorm and where the norm goes."""

import numpy as np
from matplotlib.figure import Figure

from lnpaper import experiments
from lnpaper.figures.registry import figure

NOTEBOOK = "06_rmsnorm_and_placement"
NORM_COLORS = {
    "LayerNorm": "tab:blue",
    "RMSNorm": "tab:green",
    "pRMSNorm (6.25%)": "tab:olive",
    "DyT": "tab:purple",
}
PLACEMENT_COLORS = {"Post-LN": "tab:red", "Pre-LN": "tab:blue", "Peri-LN": "tab:green"}


@figure("rmsnorm_curves", notebook=NOTEBOOK, experiment=experiments.rmsnorm_study)
def rmsnorm_curves(result) -> Figure:
    """P2, P4: the Pre-LN model with each normalizer in every norm slot: training loss (mean over
    seeds, min..max band) and the held-out loss of each seed, joined across norms."""
    fig = Figure(figsize=(10.0, 3.9), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(1.6, 1))
    styles = {"LayerNorm": "-", "RMSNorm": "--", "pRMSNorm (6.25%)": "-", "DyT": "-"}
    for name, run in result.runs.items():
        steps = np.array(run["steps"])
        losses = np.array(run["train_loss"])
        color = NORM_COLORS[name]
        left.fill_between(steps, losses.min(0), losses.max(0), color=color, alpha=0.15)
        left.plot(steps, losses.mean(0), styles[name], color=color, lw=2, label=name)
    first = result.runs["LayerNorm"]
    for value, text in ((first["levels"]["unigram"], "unigram"),
                        (first["levels"]["bigram"], "bigram")):  # fmt: skip
        left.axhline(value, color="grey", lw=0.8, ls=":")
        left.annotate(
            text, (steps[-1], value), fontsize=7, ha="right", va="bottom", color="dimgrey"
        )
    left.set_ylim(1.6, 3.2)
    left.set_xlabel("step")
    left.set_ylabel("training loss (nats / token)")
    left.set_title(f"{first['n_layers']} layers, Pre-norm, Adam lr {first['lr']:g}, no warmup")
    left.legend(fontsize=8)
    names = list(result.runs)
    finals = np.array([result.runs[name]["final_loss"] for name in names])  # [norm][seed]
    positions = np.arange(len(names))
    for seed_losses in finals.T:
        right.plot(positions, seed_losses, color="grey", lw=0.8, alpha=0.7)
    for position, name, losses in zip(positions, names, finals, strict=True):
        right.plot([position] * len(losses), losses, "o", color=NORM_COLORS[name])
        right.plot([position - 0.2, position + 0.2], [losses.mean()] * 2, color="black", lw=1.5)
    right.set_xticks(positions, [n.replace(" (", "\n(") for n in names], fontsize=8)
    right.set_ylabel("held-out loss after training")
    right.set_title(f"each seed ({len(first['seeds'])}), joined; bar = mean")
    return fig


@figure("prms_estimate", notebook=NOTEBOOK, experiment=experiments.prms_estimate)
def prms_estimate(result) -> Figure:
    """P4: the distribution of RMS_k / RMS_n on Gaussian rows, and its sd against k."""
    fig = Figure(figsize=(10.0, 3.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    edges = np.array(result.histogram_edges)
    colors = ["tab:red", "tab:orange", "tab:green", "tab:blue"]
    for n, k, counts, color in zip(
        result.widths, result.units_used, result.histogram_counts, colors, strict=True
    ):
        density = np.array(counts) / (result.samples * np.diff(edges))
        left.stairs(density, edges, color=color, lw=1.5, label=f"n = {n}: first k = {k} units")
    left.axvline(1.0, color="black", lw=0.8, ls=":")
    left.set_xlabel("RMS of the first k units / RMS of all n")
    left.set_ylabel("density")
    left.set_title(f"pRMSNorm's estimate, p = {result.fraction:g}, Gaussian rows")
    left.legend(fontsize=8)
    k = np.array(result.units_used)
    n = np.array(result.widths)
    k_line = np.geomspace(k.min() / 1.5, k.max() * 1.5, 100)
    right.plot(k_line, np.sqrt(1 / (2 * k_line)), "--", color="grey", lw=1,
               label="sqrt(1 / 2k): k units alone")  # fmt: skip
    right.plot(k, result.ratio_sd_theory, "x", color="black", ms=8,
               label="sqrt((1/k - 1/n) / 2): delta method")  # fmt: skip
    right.plot(k, result.ratio_sd, "o", color="tab:blue", label=f"measured, {result.samples} rows")
    for kk, nn, sd in zip(k, n, result.ratio_sd, strict=True):
        right.annotate(f"n={nn}", (kk, sd), textcoords="offset points", xytext=(6, 4), fontsize=7)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("units used k = ceil(p n)")
    right.set_ylabel("sd of the ratio")
    right.set_title("How far the estimate strays")
    right.legend(fontsize=8)
    return fig


def _per_block(ax, run, key, label, color):
    """Mean over the seeds that finished, and their min..max band, per block."""
    values = np.array([v for v in run[key] if v is not None])
    blocks = np.arange(1, values.shape[1] + 1)
    ax.fill_between(blocks, values.min(0), values.max(0), color=color, alpha=0.2)
    ax.plot(blocks, values.mean(0), "o-", color=color, label=label)


@figure("placement_variance", notebook=NOTEBOOK, experiment=experiments.placement_study)
def placement_variance(result) -> Figure:
    """P5: the residual stream's variance and each block's gradient norm, per block, at init and
    after training at a high learning rate, for Post-LN, Pre-LN and Peri-LN."""
    fig = Figure(figsize=(10.0, 6.4), layout="constrained")
    axes = fig.subplots(2, 2)
    first = next(iter(result.runs.values()))
    steps = first["steps"][-1]
    for name, run in result.runs.items():
        color = PLACEMENT_COLORS[name]
        _per_block(axes[0, 0], run, "stream_variance_init", name, color)
        _per_block(axes[0, 1], run, "stream_variance_final", name, color)
        _per_block(axes[1, 0], run, "block_grad_norm_init", name, color)
        _per_block(axes[1, 1], run, "block_grad_norm_final", name, color)
    titles = (("at init", f"after {steps} steps, Adam lr {first['lr']:g}, no warmup"),) * 2
    for row, (ylabel, (before, after)) in enumerate(
        zip(("variance of the stream after block l", "||dL / dtheta_l|| of block l"), titles,
            strict=True)
    ):  # fmt: skip
        for column, when in enumerate((before, after)):
            ax = axes[row, column]
            ax.set_yscale("log")
            ax.set_xlabel("block l")
            ax.set_ylabel(ylabel)
            ax.set_title(when, fontsize=10)
            ax.legend(fontsize=8)
    seeds = len(first["seeds"])
    fig.suptitle(f"Where the norm goes ({first['n_layers']} blocks, d = 64, {seeds} seeds: mean "
                 "and min..max)")  # fmt: skip
    return fig
