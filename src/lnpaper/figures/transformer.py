"""Figures of notebook 05, the Transformer."""

import numpy as np
from matplotlib.figure import Figure

from lnpaper import experiments
from lnpaper.figures.registry import figure

NOTEBOOK = "05_the_transformer"
COLORS = {"post": "tab:red", "pre": "tab:blue"}


@figure("grad_norm_vs_depth", notebook=NOTEBOOK, experiment=experiments.xiong_setting)
def grad_norm_vs_depth(result) -> Figure:
    """||dL/dW^(2)|| of the last FFN at init against depth, mean and spread (sd) over seeds."""
    fig = Figure(figsize=(6.5, 3.8), layout="constrained")
    ax = fig.subplots()
    for name, run in (("Post-LN", result.post), ("Pre-LN", result.pre)):
        grads = np.array(run["grad_norm"])
        depths = np.array(run["depths"])
        color = COLORS[run["placement"]]
        ax.errorbar(depths, grads.mean(1), yerr=grads.std(1, ddof=1), marker="o", capsize=3,
                    color=color, label=f"{name}: 14/6 ratio {run['ratio_last_to_first']:.2f}")  # fmt: skip
    pre = np.array(result.pre["mean_grad_norm"])
    depths = np.array(result.pre["depths"])
    ax.plot(depths, pre[0] * np.sqrt(depths[0] / depths), "--", color=COLORS["pre"], lw=1,
            label="Pre-LN's first point x sqrt(6 / L)")  # fmt: skip
    ax.set_xticks(depths)
    ax.set_xlabel("number of blocks L")
    ax.set_ylabel("||dL / dW^(2)||_F, last block")
    ax.set_ylim(bottom=0)
    seeds = len(result.post["seeds"])
    ax.set_title(f"Gradient at init (d = {result.post['d_model']}, {seeds} seeds, W^Q = W^K = 0)")
    ax.legend(fontsize=8)
    return fig


@figure("residual_norms_vs_lemma2", notebook=NOTEBOOK, experiment=experiments.xiong_setting)
def residual_norms_vs_lemma2(result) -> Figure:
    """Mean ||x||^2 / d per layer at init in the deepest model, against Xiong et al.'s Lemma 2."""
    fig = Figure(figsize=(9.5, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    post = result.post
    left.plot(post["layers"], post["residual_sq_norm"], "o-", color=COLORS["post"],
              label="measured")  # fmt: skip
    left.axhline(1.5, color="black", ls="--", lw=1, label="Lemma 2: 3/2")
    left.set_ylim(0, 2.5)
    left.set_title("Post-LN: x + FFN(x) before the second LN")
    left.set_xlabel("block l")
    left.set_ylabel("E ||x||^2 / d")
    pre = result.pre
    layers = np.array(pre["layers"])
    right.fill_between(layers, 1 + layers / 2, 1 + 1.5 * layers, color="grey", alpha=0.25,
                       label="Lemma 2: 1 + l/2 .. 1 + 3l/2")  # fmt: skip
    right.plot(layers, pre["residual_sq_norm"], "o-", color=COLORS["pre"], label="measured")
    right.set_title("Pre-LN: the residual stream after l blocks")
    right.set_xlabel("blocks passed l (0 = embedding)")
    right.set_ylabel("E ||x_l||^2 / d")
    for ax in (left, right):
        ax.legend(fontsize=8)
    return fig


def _curves(ax, run, label, color):
    """Mean over seeds (thick) and the min..max band, over the steps every seed reached; a cross
    where a run stopped because its loss was not finite."""
    steps = np.array(run["steps"])
    common = min(len(curve) for curve in run["train_loss"])
    if common:
        losses = np.array([curve[:common] for curve in run["train_loss"]])
        ax.fill_between(steps[:common], losses.min(0), losses.max(0), color=color, alpha=0.2)
        ax.plot(steps[:common], losses.mean(0), color=color, lw=2, label=label)
    for curve, diverged in zip(run["train_loss"], run["diverged_at"], strict=True):
        if len(curve) > common:
            ax.plot(steps[: len(curve)], curve, color=color, lw=0.8)
        if diverged is not None:
            ax.plot([diverged], [curve[-1] if curve else run["initial_loss"][0]], "x",
                    color=color, ms=9, mew=2)  # fmt: skip


def _levels(ax, run):
    levels = run["levels"]
    for value, text in ((levels["unigram"], "unigram"), (levels["bigram"], "bigram"),
                        (run["floor"], "entropy floor")):  # fmt: skip
        ax.axhline(value, color="grey", lw=0.8, ls=":")
        ax.annotate(text, (ax.get_xlim()[1], value), fontsize=7, ha="right", va="bottom",
                    color="dimgrey")  # fmt: skip


def _study_figure(runs, names, colors, title, log=False) -> Figure:
    fig = Figure(figsize=(7.0, 4.0), layout="constrained")
    ax = fig.subplots()
    for name, color in zip(names, colors, strict=True):
        _curves(ax, runs[name], name, color)
    first = runs[names[0]]
    if log:
        ax.set_yscale("log")
    else:
        ax.set_ylim(0.8, 3.3)
    _levels(ax, first)
    seeds = len(first["seeds"])
    ax.set_title(f"{title} ({first['n_layers']} layers, Adam lr {first['lr']:g}, {seeds} seeds)")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (nats / token)")
    ax.legend(fontsize=8, loc="lower left")
    return fig


@figure("warmup_curves", notebook=NOTEBOOK, experiment=experiments.normalization_study)
def warmup_curves(result) -> Figure:
    """T3: Post-LN and Pre-LN with and without linear warmup."""
    names = ["Post-LN, no warmup", "Post-LN, warmup", "Pre-LN, no warmup", "Pre-LN, warmup"]
    colors = ["tab:red", "tab:orange", "tab:blue", "tab:cyan"]
    return _study_figure(result.runs, names, colors, "Warmup")


@figure("without_normalization", notebook=NOTEBOOK, experiment=experiments.normalization_study)
def without_normalization(result) -> Figure:
    """T4, T6: Pre-LN against the same model with identity norms, and with DyT."""
    names = [
        "Pre-LN, no warmup",
        "Pre-DyT, no warmup",
        "no norm (identity), no warmup",
        "no norm (identity), warmup",
    ]
    colors = ["tab:blue", "tab:green", "tab:red", "tab:orange"]
    return _study_figure(result.runs, names, colors, "Removing the norm", log=True)


@figure("tfixup_curves", notebook=NOTEBOOK, experiment=experiments.tfixup_study)
def tfixup_curves(result) -> Figure:
    """T5: no norm, no warmup, a deeper model: Xavier vs T-Fixup initialization."""
    names = list(result.runs)
    return _study_figure(result.runs, names, ["tab:red", "tab:green"], "T-Fixup", log=True)


@figure("loss_smoothness", notebook=NOTEBOOK, experiment=experiments.loss_smoothness)
def loss_smoothness(result) -> Figure:
    """T7: how the loss and its gradient change along a gradient step, during training."""
    fig = Figure(figsize=(11.0, 3.4), layout="constrained")
    axes = fig.subplots(1, 3)
    panels = [
        ("loss_range", "loss variation along the step"),
        ("grad_change", "||g(w - eta g) - g(w)|| / ||g(w)||"),
        ("beta_smoothness", "effective beta-smoothness"),
    ]
    colors = {"none": "tab:red", "batchnorm": "tab:blue", "layernorm": "tab:green"}
    for ax, (key, title) in zip(axes, panels, strict=True):
        for norm in result.norms:
            ax.plot(result.checkpoints, getattr(result, key)[norm], "o-", color=colors[norm],
                    label=norm)  # fmt: skip
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("training step (SGD)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"MLP on digits, lr {result.lr:g}: probing eta = "
                 f"{', '.join(f'{m:g}' for m in result.step_multipliers)} x lr",
                 fontsize=10)  # fmt: skip
    return fig
