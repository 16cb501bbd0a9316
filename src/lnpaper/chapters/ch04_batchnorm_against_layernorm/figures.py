"""Figures of notebook 04, BatchNorm against LayerNorm at T = 64, and the CNN coda."""

import statistics

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lnpaper import stats, vocabulary
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import training_summary
from lnpaper.chapters.ch03_layernorm_in_rnns.figures import (
    SEQUENCE_LENGTH,
    drawn_models,
    model_color,
    signed,
)
from lnpaper.chapters.ch04_batchnorm_against_layernorm import analysis as ch04_analysis
from lnpaper.chapters.ch04_batchnorm_against_layernorm import runs as ch04_runs
from lnpaper.companion import style
from lnpaper.companion.chapter import figure


@figure("sequential_digits", experiment=ch04_analysis.sequential_digits)
def sequential_digits(result) -> Figure:
    """The chapter's point at T = 64: what a norm does for the plain LSTM. The digits read pixel
    by pixel (left) and in a fixed permuted order (right), each model at its own best learning
    rate of the grid (chosen on the validation split, per task); Adam, the same seeds and
    minibatches for every model. Each dot is one seed's test NLL averaged over training (every
    evaluation after step 0, as the notebook's table) minus the LSTM's on the same seed; the large
    marker and bar are their mean and 95% t interval. The BN-LSTM with gains from 1.0 and the
    LN-GRU are in the notebook's table, not here. Claims R3c and M4b."""
    drawn_models(result, ("LSTM",), "sequential_digits")  # the baseline every model is against
    models = drawn_models(result, ("LN-LSTM", "BN-LSTM"), "sequential_digits")
    fig = style.new_figure(2, 3.4)
    panels = fig.subplots(1, len(result.orders), sharex=True, sharey=True, squeeze=False)[0]
    seeds = len(result.runs["LSTM"]["seeds"])
    length = SEQUENCE_LENGTH.get(result.form, "?")
    spread = np.linspace(-0.12, 0.12, seeds)  # the seeds' dots side by side, not on top
    found = {model: [] for model in models}  # model -> its difference in each order
    for order, ax in enumerate(panels):
        summary = training_summary(result, order)
        for row, model in enumerate(models):
            diff = stats.paired_difference(summary[model]["curve"], summary["LSTM"]["curve"])
            found[model].append(diff)
            ax.scatter(diff.values, row + spread, s=16, color=model_color(model), alpha=0.45,
                       lw=0)  # fmt: skip
            ax.errorbar(diff.mean, row, xerr=[[diff.mean - diff.low], [diff.high - diff.mean]],
                        fmt="o", ms=8, lw=2.0, capsize=5, color=model_color(model))  # fmt: skip
        style.vertical_mark(ax, 0.0, "plain LSTM")
        ax.set_yticks(range(len(models)), models)
        ax.set_ylim(len(models) - 0.5, -0.6)  # the first model on top
        ax.grid(False, axis="y")
        ax.set_xlabel(f"test NLL minus the LSTM's ({style.NATS_PER_IMAGE})")
        reading = "permuted pixel order" if result.orders[order] else "pixel by pixel"
        ax.set_title(f"{reading}, T = {length}")

    def effect(diffs, what):  # what a model does to the LSTM's test NLL in both orders
        sizes = sorted(abs(d.mean) for d in diffs)
        span = f"by {sizes[0]:.2f}–{sizes[-1]:.2f} nats"
        if all(d.high < 0 for d in diffs):
            return f"lowers {what} {span}"
        if all(d.low > 0 for d in diffs):
            return f"raises {what} {span}"
        if any(d.high < 0 for d in diffs):
            return f"lowers {what} in one order only"
        return f"does not lower {what}"

    said = {"LN-LSTM": "LayerNorm", "BN-LSTM": "BatchNorm"}
    effects, what = [], "the LSTM's test NLL"
    for model in models:
        effects.append(f"{said[model]} {effect(found[model], what)}")
        what = "it"
    style.finding(fig, f"At T = {length}, {'; '.join(effects)}\n(test NLL averaged over training, "
                  "minus the LSTM's on the same seed)")  # fmt: skip
    seed = Line2D([], [], color=style.REFERENCE, alpha=0.6, marker="o", ls="", label="one seed")
    mean = Line2D([], [], color=style.BLACK, marker="o", lw=2.0,
                  label=f"mean and 95% t interval over {seeds} seeds")  # fmt: skip
    style.shared_legend(fig, extra=[seed, mean])
    return fig


@figure("cnn_coda", experiment=ch04_runs.cnn_coda)
def cnn_coda(result) -> Figure:
    """A small CNN (two 3 x 3 conv layers of 8 and 16 channels, Adam, lr 0.003, batch 64, 200 steps)
    on the 8 x 8 digits with no norm, BatchNorm or LayerNorm, as they are and framed by a blank
    margin of 2 pixels: validation NLL, mean over seeds, band from min to max. Below: in the trained
    CNN without a norm (first seed), the share of ReLU units that are on in the border ring and
    inside it, after each conv layer, on the test digits."""
    if not 1 <= len(result.margins) <= 2:
        raise ValueError(f"cnn_coda draws one or two margins, got {result.margins}")
    fig = style.new_figure(3, 6.8)
    axes = style.three_panels(fig)
    for ax in axes[1 : len(result.margins)]:
        ax.sharey(axes[0])
        ax.tick_params(which="both", labelleft=False)
    if len(result.margins) == 1:
        axes[1].set_visible(False)
    for ax, margin in zip(axes, result.margins, strict=False):
        side = 8 + 2 * margin
        for norm in result.norms:
            style.band(ax, result.eval_steps, result.val_loss[margin][norm], style.color(norm),
                       style.display(norm))  # fmt: skip
        frame = "as they are" if margin == 0 else f"in a {margin}-pixel frame"
        ax.set(title=f"{side} × {side}: digits {frame}", xlabel="training step")
    axes[0].set_ylabel(f"validation NLL ({style.NATS_PER_IMAGE})")
    style.log_axis(axes[0], "y")
    bars = axes[-1]
    labels, edge, inside = [], [], []
    for margin in result.margins:
        side = 8 + 2 * margin
        convs = range(1, len(result.border_active[margin]) + 1)
        labels += [f"{side} × {side}\nconv {k}" for k in convs]
        edge += result.border_active[margin]
        inside += result.interior_active[margin]
    position = np.arange(len(labels))
    # two places in the image, not methods: the house cycle's two neutrals, which no method uses
    dark, light = style.OTHER_COLORS[:2]
    bars.bar(position - 0.2, edge, 0.4, label="border ring", color=dark)
    bars.bar(position + 0.2, inside, 0.4, label="interior", color=light, hatch="//", ec="white")
    bars.set_xticks(position, labels)
    bars.set(ylim=(0, 1), ylabel="share of responding units on")
    bars.set_title("no norm: responding ReLU units on")
    style.finding(fig, _cnn_finding(result))
    style.shared_legend(fig, extra=[style.band_handle(len(result.seeds), "mean")], ncols=6)
    return fig


def _span(low: float, high: float, form: str, joint: str) -> str:
    """low and high in `form`, joined; one number when they read the same (one margin)."""
    low, high = form.format(low), form.format(high)
    return low if low == high else f"{low}{joint}{high}"


def _cnn_finding(result) -> str:
    """The title of `cnn_coda`, from the final validation NLL of each norm the result holds: by how
    much LayerNorm changes no norm's (means), and where BatchNorm ends against LayerNorm (paired
    by seed; level when every margin's mean difference is within the negligible 0.02 nats)."""
    final = {m: {norm: [run[-1] for run in result.val_loss[m][norm]] for norm in result.norms}
             for m in result.margins}  # fmt: skip
    mean = {m: {norm: statistics.fmean(final[m][norm]) for norm in result.norms}
            for m in result.margins}  # fmt: skip
    said = []
    if {"none", "layernorm"} <= set(result.norms):
        cuts = [1 - mean[m]["layernorm"] / mean[m]["none"] for m in result.margins]
        if min(cuts) > 0:
            said.append(f"LayerNorm cuts a CNN's final validation NLL by "
                        f"{_span(min(cuts), max(cuts), '{:.0%}', '–')} (means)")  # fmt: skip
        else:
            said.append(f"LayerNorm changes a CNN's final validation NLL by "
                        f"{_span(-max(cuts), -min(cuts), '{:+.0%}', ' to ')} (means)")  # fmt: skip
    if {"batchnorm", "layernorm"} <= set(result.norms):
        differences = [
            statistics.fmean(bn - ln for bn, ln in zip(final[m]["batchnorm"],
                                                       final[m]["layernorm"], strict=True))
            for m in result.margins
        ]  # fmt: skip
        if all(abs(d) < vocabulary.NEGLIGIBLE_NATS for d in differences):
            where = "level with"
        elif all(d < 0 for d in differences):
            where = "below"
        elif all(d > 0 for d in differences):
            where = "above"
        else:
            where = "on either side of"
        subject = "it" if said else "LayerNorm"
        bn_minus_ln = ", ".join(signed(d, 3).replace("−0.000", "0.000") for d in differences)
        said.append(f"BatchNorm ends {where} {subject} (BN − LN: {bn_minus_ln})")
    if not said:  # neither comparison: each norm's final NLL
        said.append("final validation NLL (means): " + ", ".join(
            f"{style.display(norm)} {mean[m][norm]:.3f}"
            for m in result.margins for norm in result.norms))  # fmt: skip
    return ";\n".join(said)
