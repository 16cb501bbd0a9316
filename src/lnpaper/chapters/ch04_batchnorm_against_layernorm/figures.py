"""Figures of notebook 04, BatchNorm against LayerNorm at T = 64, and the CNN coda."""

import statistics

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lnpaper import stats
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import training_summary
from lnpaper.chapters.ch03_layernorm_in_rnns.figures import (
    MODEL_STYLES,
    best_curves,
    model_color,
    signed,
)
from lnpaper.chapters.ch04_batchnorm_against_layernorm import analysis as ch04_analysis
from lnpaper.chapters.ch04_batchnorm_against_layernorm import runs as ch04_runs
from lnpaper.companion import style
from lnpaper.companion.registry import figure

NOTEBOOK = "04_batchnorm_against_layernorm"


@figure("sequential_digits", notebook=NOTEBOOK, experiment=ch04_analysis.sequential_digits)
def sequential_digits(result) -> Figure:
    """The digits read pixel by pixel (T = 64, left) and in a fixed permuted order (right), each
    model at its own best learning rate of the grid (chosen on the validation split, per task);
    Adam, the same seeds and minibatches for every model and both tasks. Top: test NLL during
    training, mean over seeds. Bottom: each seed's test NLL after the last step, a faint line
    joining the same seed's runs across models, and a bar at the mean over seeds. Claims R3c and
    M4b-M4d."""
    fig = style.new_figure(2, 6.4)
    curves, finals = fig.subplots(2, 2, sharey="row", height_ratios=[1, 1.15])
    steps = result.runs["LSTM"]["eval_steps"]
    models = list(result.runs)
    seeds = len(result.runs["LSTM"]["seeds"])
    jitter = np.linspace(-0.12, 0.12, seeds)
    final = {}
    for order in (0, 1):
        s = training_summary(result, order)
        for model in models:
            runs = np.asarray(best_curves(result, model, order), dtype=float)
            curves[order].plot(steps, runs.mean(0), MODEL_STYLES.get(model, "-"),
                                  color=model_color(model), lw=1.3, label=model)  # fmt: skip
        values = np.array([s[m]["final_loss"] for m in models])  # [model][seed]
        final[order] = dict(zip(models, values.mean(1), strict=True))
        ax = finals[order]
        for k in range(seeds):  # one seed's runs, the same minibatches, across the models
            ax.plot(np.arange(len(models)) + jitter[k], values[:, k], color=style.REFERENCE,
                    lw=0.5, alpha=0.3)  # fmt: skip
        for place, model in enumerate(models):
            ax.scatter(place + jitter, values[place], s=16, color=model_color(model),
                       alpha=0.85, lw=0)  # fmt: skip
            ax.plot([place - 0.25, place + 0.25], [values[place].mean()] * 2, color=style.BLACK,
                    lw=2.2)  # fmt: skip
        ax.set_xticks(range(len(models)), [m.replace(", ", ",\n") for m in models])
        ax.grid(False, axis="x")
        name = "pixel by pixel" if order == 0 else "permuted"
        curves[order].set_title(f"{name}, T = 64: mean test NLL during training")
        curves[order].set_xlabel("training step")
        ax.set_title(f"{name}: test NLL after {steps[-1]} steps, per seed")
    curves[0].set_ylabel(f"test NLL ({style.NATS_PER_IMAGE})")
    finals[0].set_ylabel(f"test NLL ({style.NATS_PER_IMAGE})")
    curves[1].tick_params(labelleft=False)
    finals[1].tick_params(labelleft=False)
    three = ("LSTM", "LN-LSTM", "BN-LSTM")

    def against_lstm(model):  # in both orders, or else "in one order"
        signs = {final[order][model] > final[order]["LSTM"] for order in (0, 1)}
        return ("higher" if signs == {True} else "lower") if len(signs) == 1 else "mixed"

    style.finding(
        fig,
        f"T = 64, against the LSTM's final test NLL: LN-LSTM {against_lstm('LN-LSTM')}, "
        f"BN-LSTM {against_lstm('BN-LSTM')} "
        f"(means of {seeds} seeds, nats;\n{' / '.join(three)}: "
        + "; ".join(
            ("pixels " if order == 0 else "permuted ")
            + " / ".join(f"{final[order][m]:.2f}" for m in three)
            for order in (0, 1)
        )
        + ")",
    )
    seed = Line2D([], [], color=style.REFERENCE, alpha=0.6, marker="o", lw=0.6, label="one seed")
    mean = Line2D([], [], color=style.BLACK, lw=2.2, label=f"mean over {seeds} seeds")
    style.shared_legend(fig, axes=[curves[0]], extra=[seed, mean], ncols=4)
    return fig


@figure("cnn_coda", notebook=NOTEBOOK, experiment=ch04_runs.cnn_coda)
def cnn_coda(result) -> Figure:
    """A small CNN (two 3 x 3 conv layers of 8 and 16 channels, Adam, lr 0.003, batch 64, 200 steps)
    on the 8 x 8 digits with no norm, BatchNorm or LayerNorm, as they are and framed by a blank
    margin of 2 pixels: validation NLL, mean over seeds, band from min to max. Below: in the trained
    CNN without a norm (first seed), the share of ReLU units that are on in the border ring and
    inside it, after each conv layer, on the test digits."""
    if len(result.margins) != 2:
        raise ValueError(f"cnn_coda draws two margins, got {result.margins}")
    fig = style.new_figure(3, 6.8)
    axes = style.three_panels(fig)
    for ax in axes[1 : len(result.margins)]:
        ax.sharey(axes[0])
        ax.tick_params(which="both", labelleft=False)
    for ax, margin in zip(axes, result.margins, strict=False):
        side = 8 + 2 * margin
        for norm in result.norms:
            style.band(ax, result.eval_steps, result.val_loss[margin][norm], style.color(norm),
                       style.display(norm))  # fmt: skip
        frame = "as they are" if margin == 0 else f"in a {margin}-pixel frame"
        ax.set_title(f"{side} × {side}: digits {frame}")
        ax.set_xlabel("training step")
    axes[0].set_ylabel(f"validation NLL ({style.NATS_PER_IMAGE})")
    style.log_axis(axes[0], "y")
    bars = axes[-1]
    labels, edge, inside = [], [], []
    for margin in result.margins:
        for k, (out, inn) in enumerate(
            zip(result.border_active[margin], result.interior_active[margin], strict=True)
        ):
            labels.append(f"{8 + 2 * margin} × {8 + 2 * margin}\nconv {k + 1}")
            edge.append(out)
            inside.append(inn)
    position = np.arange(len(labels))
    # two places in the image, not methods: the house cycle's two neutrals, which no method uses
    dark, light = style.OTHER_COLORS[:2]
    bars.bar(position - 0.2, edge, 0.4, label="border ring", color=dark)
    bars.bar(position + 0.2, inside, 0.4, label="interior", color=light, hatch="//", ec="white")
    bars.set_xticks(position, labels)
    bars.set_ylim(0, 1)
    bars.set_ylabel("share of responding units on")
    bars.set_title("no norm: responding ReLU units on")
    final = {m: {norm: [run[-1] for run in result.val_loss[m][norm]] for norm in result.norms}
             for m in result.margins}  # fmt: skip
    differences = [
        stats.paired_difference(final[m]["batchnorm"], final[m]["layernorm"]).mean
        for m in result.margins
    ]
    cuts = [
        1 - statistics.fmean(final[m]["layernorm"]) / statistics.fmean(final[m]["none"])
        for m in result.margins
    ]
    style.finding(
        fig,
        f"LayerNorm cuts a CNN's final validation NLL by {min(cuts):.0%}–{max(cuts):.0%} (means);\n"
        "BatchNorm ends level with it (BN − LN: "
        + ", ".join(signed(d, 3).replace("−0.000", "0.000") for d in differences)
        + ")",
    )
    style.shared_legend(fig, extra=[style.band_handle(len(result.seeds), "mean")], ncols=6)
    return fig
