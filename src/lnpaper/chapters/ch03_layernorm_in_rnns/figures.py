"""Figures of notebook 03, LayerNorm in recurrent networks (notebook 04 draws the same models at
T = 64 in their colours, `model_color`)."""

import statistics

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from lnpaper.chapters.ch03_layernorm_in_rnns import analysis as ch03_analysis
from lnpaper.chapters.ch03_layernorm_in_rnns import runs as ch03_runs
from lnpaper.chapters.ch03_layernorm_in_rnns import runs_lengths as ch03_runs_lengths
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import (
    best_lr_index,
    dynamics_summary,
    length_summary,
    training_summary,
)
from lnpaper.chapters.ch03_layernorm_in_rnns.runs import mean_tanh_slope
from lnpaper.companion import style
from lnpaper.companion.chapter import figure
from lnpaper.formatting import power_of_ten
from lnpaper.vocabulary import R4_MARGIN

SHADE = {"color": style.REFERENCE, "alpha": 0.12, "lw": 0}  # a span of steps, not a method
GAIN_STYLES = {"1.0": "-", "0.1": "--"}  # the gains' initial value: a second factor


def _shade_handle(label: str) -> Patch:
    return Patch(facecolor=SHADE["color"], alpha=SHADE["alpha"], label=label)


def signed(value: float, digits: int) -> str:
    """+0.002 or −0.12, with a typeset minus sign rather than a hyphen."""
    return f"{value:+.{digits}f}".replace("-", "−")


def _mark_exit(ax, t, values, low, high, color, text, text_at) -> None:
    """Where a curve leaves the axis's range [low, high]: a marker on the edge in the curve's
    colour, and an arrow to it from a label saying where the curve goes. `text_at` places the
    label, in axes fractions, for a curve that leaves below ("v") and above ("^")."""
    leaves = [k for k, v in enumerate(values) if not low <= v <= high]
    if not leaves:
        return
    k = leaves[0]
    edge, marker = (low, "v") if values[k] < low else (high, "^")
    ax.plot([t[k]], [edge], marker, color=color, ms=8, clip_on=False, zorder=5)
    ax.annotate(text, (t[k], edge), xytext=text_at[marker], textcoords="axes fraction", ha="left",
                va="center", color=style.REFERENCE, size=style.MIN_FONT_SIZE,
                arrowprops={"arrowstyle": "->", "color": style.REFERENCE, "lw": 1.0})  # fmt: skip


@figure("rnn_dynamics", experiment=ch03_runs.rnn_dynamics)
def rnn_dynamics(result) -> Figure:
    """A tanh RNN and the LN RNN with the same weights, multiplied by 0.5, 1, 2 and 4, reading one
    digit's 8 rows and then 292 steps of zeros (64 units, float64, 32 test digits): the RMS over
    units of the summed inputs and of the hidden state, mean over digits, and how much step t still
    depends on the first input row (a Jacobian-vector product with a random unit direction v,
    geometric mean over digits). A curve that leaves the plotted range is marked where it leaves,
    with the value it reaches at the last step. The LN RNN's four curves of h_t and of the
    dependence lie on top of each other."""
    t = np.arange(1, result.steps + 1)
    plain = "tanh RNN"
    scale_styles = dict(zip(result.scales, style.line_styles(len(result.scales)), strict=True))
    fig = style.new_figure(3, 7.0)
    summed, hidden, sensitivity = style.three_panels(fig)
    for net in (plain, "LN tanh RNN"):
        for scale in result.scales:
            kwargs = {"color": style.color(net), "ls": scale_styles[scale], "lw": 1.5}
            summed.plot(t, result.summed_rms[net][scale], **kwargs)
            hidden.plot(t, result.hidden_rms[net][scale], **kwargs)
            sensitivity.plot(t, result.sensitivity[net][scale], **kwargs)
    # ranges in which the curves that do not run away stay readable; the others are marked
    ranges = {summed: (1e-2, 1e1), sensitivity: (1e-12, 1e24)}
    label_at = {summed: {"v": (0.22, 0.2)}, sensitivity: {"v": (0.22, 0.12), "^": (0.55, 0.88)}}
    for ax, curves in (
        (summed, result.summed_rms[plain]),
        (sensitivity, result.sensitivity[plain]),
    ):
        low, high = ranges[ax]
        ax.set_ylim(low, high)
        style.log_axis(ax, "y")
        for scale, values in curves.items():
            text = f"× {scale:g} goes on to\n{power_of_ten(values[-1])} at $t = {result.steps}$"
            _mark_exit(ax, t, values, low, high, style.color(plain), text, label_at[ax])
    sensitivity.set_yticks([10.0**k for k in range(-12, 25, 6)])  # 36 powers: label every 6th
    summed.set(title="summed inputs $a_t = W_h h_{t-1} + W_x x_t$", ylabel="RMS over units")
    hidden.set(title="hidden state $h_t$", ylabel="RMS over units", ylim=(0, 1))
    sensitivity.set_title("dependence on step 0: $\\|(\\partial h_t / \\partial x_0)\\, v\\|$")
    sensitivity.set_ylabel("geometric mean over digits")
    for ax in (summed, hidden, sensitivity):
        ax.set_xlabel("time step $t$")
        ax.axvspan(0.5, result.input_steps + 0.5, **SHADE)
    numbers = dynamics_summary(result)
    low, high = numbers["ln_hidden_range"]
    ln_end = statistics.geometric_mean(v[-1] for v in result.sensitivity["LN tanh RNN"].values())
    smallest, largest = result.scales[0], result.scales[-1]
    ends = [result.hidden_rms[plain][scale][-1] for scale in (smallest, largest)]
    summed_end = numbers["plain_summed_last"]  # R2's test: below 1e-6 at the smallest, above 1
    if summed_end[smallest] < 1e-6 and summed_end[largest] > 1.0:
        fate, breaks = "vanishes or saturates", ("; ", ",\n")
    else:  # the scales of this result neither kill nor saturate it: a longer clause, broken after
        fate = f"ends at an RMS of {power_of_ten(min(ends))} to {max(ends):.2g}"
        breaks = (";\n", ", ")
    grows = min(numbers["growth"]["LN tanh RNN"].values()) > 1
    style.finding(
        fig,
        f"Scaled by {smallest:g} to {largest:g}, a tanh RNN's state {fate}{breaks[0]}LayerNorm "
        f"keeps its RMS at {low:.2f}–{high:.2f}{breaks[1]}but the LN RNN's dependence on step 0 "
        f"{'grows' if grows else 'changes'} at every scale, to {power_of_ten(ln_end)} at "
        f"$t = {result.steps}$",
    )
    # column by column: the two nets, the scales, then the steps that read the digit
    extra = [
        *(style.method_handle(net) for net in (plain, "LN tanh RNN")),
        *(style.style_handle(ls, f"weights × {s:g}") for s, ls in scale_styles.items()),
        _shade_handle(f"steps 1–{result.input_steps}: reading a digit's rows"),
    ]
    style.shared_legend(fig, extra=extra, ncols=4)
    return fig


def best_curves(result, model: str, order: int = 0, field: str = "test_loss"):
    """A model's curves [seed][eval step] at its own best learning rate (chosen on validation)."""
    run = dict(result.runs[model])
    run["val_loss"] = run["val_loss"][order]
    return run[field][order][best_lr_index(run)]


SEQUENCE_LENGTH = {"rows": 8, "pixels": 64}  # T of each form of the digits


def model_color(model: str) -> str:
    return style.color("LN-LSTM" if model == "LN-GRU" else model)  # the LN-GRU: LayerNorm's hue


def drawn_models(result, models: tuple, figure_name: str) -> list:
    """Those of `models` that `result` holds, in that order: a reader's study may leave some out.
    A ValueError names what it holds if it holds none of them."""
    present = [model for model in models if model in result.runs]
    if not present:
        raise ValueError(
            f"{figure_name} draws {', '.join(models)}; this result holds {', '.join(result.runs)}"
        )
    return present


def first_run(result) -> dict:
    """The first model's run: the settings every model of a study shares (steps, rates, seeds)."""
    return next(iter(result.runs.values()))


@figure("recurrent_training", experiment=ch03_analysis.recurrent_training)
def recurrent_training(result) -> Figure:
    """Left: test NLL during training on the 8 x 8 digits read row by row (8 steps of 8 pixels, one
    prediction and so one NLL per digit), each model at its own best learning rate of the grid
    (chosen on the validation split): Adam, the same seeds and minibatches for every model; mean
    over seeds, band from min to max. Right: the validation score that chose the rate, the mean
    validation NLL over the run, at every rate of the grid. Claim R3d compares the models so,
    each at its own best rate, over the first quarter of training; R3 compares them at each
    shared rate."""
    s = training_summary(result)
    fig = style.new_figure(2, 4.0)
    curve_ax, grid_ax = fig.subplots(1, 2)
    models = drawn_models(result, ("LSTM", "LN-LSTM", "BN-LSTM"), "recurrent_training")
    steps = first_run(result)["eval_steps"]
    for model in models:
        style.band(curve_ax, steps, best_curves(result, model), style.color(model),
                   f"{model} (lr {s[model]['lr']:g})")  # fmt: skip
        grid_ax.plot(result.runs[model]["lrs"], s[model]["val_area"], "o-",
                     color=style.color(model))  # fmt: skip
    curve_ax.axvspan(s["early_steps"][0], s["early_steps"][-1], **SHADE)
    curve_ax.set(xlabel="training step", ylabel=f"test NLL ({style.NATS_PER_IMAGE})")
    curve_ax.set_title("each at its own best learning rate")
    style.log_axis(curve_ax, "y")
    grid_ax.set(xlabel="Adam's learning rate", title="the grid every model ran")
    grid_ax.set_ylabel(f"mean validation NLL ({style.NATS_PER_IMAGE})")
    style.log_axis(grid_ax, "x")
    rates = first_run(result)["lrs"]  # the grid's own rates as the ticks, and no others
    grid_ax.set_xticks(rates, [f"{lr:g}" for lr in rates])
    grid_ax.set_xticks([], minor=True)
    early = {m: statistics.fmean(s[m]["early"]) for m in models}
    if "LSTM" in early and "LN-LSTM" in early:
        compared = (f"LayerNorm's early test NLL {early['LN-LSTM']:.2f} vs the LSTM's "
                    f"{early['LSTM']:.2f}")  # fmt: skip
    else:
        compared = "early test NLL " + ", ".join(f"{m} {v:.2f}" for m, v in early.items())
    form = f"{result.form.capitalize()} (T = {SEQUENCE_LENGTH.get(result.form, '?')})"
    early_steps = f"steps {s['early_steps'][0]}–{s['early_steps'][-1]}"
    style.finding(fig, f"{form}, each at its best rate: {compared} ({early_steps})")
    seeds = len(first_run(result)["seeds"])
    extra = [_shade_handle("first quarter (R3's early NLL)"), style.band_handle(seeds)]
    style.shared_legend(fig, axes=[curve_ax], extra=extra, ncols=3)
    return fig


@figure("gain_init", experiment=ch03_analysis.recurrent_training)
def gain_init(result) -> Figure:
    """The gains' initial value, 1.0 or 0.1, for the LN-LSTM and the BN-LSTM on the digits read row
    by row, each at its own best learning rate of the grid: test NLL, mean over seeds, band from
    min to max. Below: the average slope of tanh on inputs of standard deviation s,
    E[1 - tanh^2(s z)] for z ~ N(0, 1), which is how much gradient a gate passes when its
    normalized input is scaled by a gain s."""
    s = training_summary(result)
    fig = style.new_figure(3, 6.8)
    ln_ax, bn_ax, slope_ax = style.three_panels(fig)
    bn_ax.sharey(ln_ax)
    names = {
        "LN-LSTM": ("LN-LSTM", "LN-LSTM, gain 0.1"),
        "BN-LSTM": ("BN-LSTM, gain 1.0", "BN-LSTM"),
    }
    drawn_models(result, [run for pair in names.values() for run in pair], "gain_init")
    steps = first_run(result)["eval_steps"]
    for (model, (one, tenth)), ax in zip(names.items(), (ln_ax, bn_ax), strict=True):
        for run, ls in ((one, GAIN_STYLES["1.0"]), (tenth, GAIN_STYLES["0.1"])):
            if run in result.runs:  # a reader's study may leave a model out
                style.band(ax, steps, best_curves(result, run), style.color(model), style=ls)
        missing = [run for run in (one, tenth) if run not in result.runs]
        if missing:
            ax.text(0.5, 0.5, f"not in this result:\n{', '.join(missing)}", ha="center",
                    va="center", transform=ax.transAxes, color=style.REFERENCE)  # fmt: skip
        ax.set(title=model, xlabel="training step")
    ln_ax.set_ylabel(f"test NLL ({style.NATS_PER_IMAGE})")
    style.log_axis(ln_ax, "y")
    bn_ax.tick_params(which="both", labelleft=False)
    scales = np.geomspace(0.01, 10, 61)
    slope_ax.plot(scales, [mean_tanh_slope(v) for v in scales], color=style.BLACK)
    for v in (0.1, 1.0):
        slope = mean_tanh_slope(v)
        slope_ax.plot([v], [slope], "o", color=style.BLACK)
        slope_ax.annotate(f"gain {v:.1f}: {slope:.3f}", (v, slope), xytext=(7, 4),
                          textcoords="offset points", size=style.MIN_FONT_SIZE)  # fmt: skip
    style.log_axis(slope_ax, "x")
    slope_ax.set(ylim=(0, 1.08), xlabel="gain $s$ on a normalized input $z$")
    slope_ax.set(ylabel="mean slope $E[1 - \\tanh^2(s z)]$", title="how much gradient tanh passes")
    differences = {  # mean over seeds of the paired difference (one seed is enough for a mean)
        model: statistics.fmean(a - b for a, b in zip(s[one]["curve"], s[tenth]["curve"],
                                                      strict=True))
        for model, (one, tenth) in names.items()
        if one in s and tenth in s
    }  # fmt: skip
    style.finding(
        fig,
        f"Gains started at 1.0 minus 0.1, mean test NLL over {s['steps']} steps: "
        + (", ".join(f"{signed(d, 2)} {model}" for model, d in differences.items())
           or "this result holds no model at both gains"),
    )  # fmt: skip
    seeds = len(first_run(result)["seeds"])
    extra = [
        *(style.method_handle(model) for model in names),
        *(style.style_handle(ls, f"gains start at {gain}") for gain, ls in GAIN_STYLES.items()),
        style.band_handle(seeds),
    ]
    style.shared_legend(fig, extra=extra, ncols=5)
    return fig


TIMES = {2: "Twice", 3: "Three times", 4: "Four times"}


def _length_finding(result, lengths: dict) -> str:
    """The title of `longer_sequences`: what testing beyond the training length costs each model's
    accuracy, the mean over steps beyond it against the mean inside it (a cost within R4's margin,
    1 point, is none)."""
    ratio = result.test_length / result.train_length
    times = TIMES.get(ratio, f"{ratio:g} times")
    cost = {model: p["inside"][0] - p["beyond"][0] for model, p in lengths.items()}
    if all(c <= R4_MARGIN for c in cost.values()):
        cells = {1: f"the {next(iter(cost))}", 2: "neither cell"}.get(len(cost), "no cell")
        return f"{times} the training length costs {cells} accuracy"
    changes = ", ".join(f"{model} {signed(-100 * c, 1)}" for model, c in cost.items())
    return f"{times} the training length costs accuracy:\nbeyond it, {changes} points"


@figure("longer_sequences", experiment=ch03_runs_lengths.longer_sequences)
def longer_sequences(result) -> Figure:
    """Trained on streams of 8 random digits, tested on 1024 streams of 16: accuracy at each step
    of naming the digit shown 2 steps earlier (64 units, Adam, 200 steps); mean over seeds, band
    from min to max. The BN-LSTM normalizes steps beyond T_max with the statistics of step
    T_max - 1; the LN-LSTM has nothing to extend."""
    steps = np.arange(result.delay, result.test_length)
    fig = style.new_figure(1, 4.0)
    ax = fig.subplots()
    for model, runs in result.accuracy.items():
        label = f"{model} ($T_{{\\max}}$ rule)" if model == "BN-LSTM" else model
        style.band(ax, steps, np.array(runs) * 100, style.color(model), label)
    mark = f"$t \\geq T_{{\\max}} = {result.train_length}$: beyond training"
    style.vertical_mark(ax, result.train_length - 0.5, mark)
    ax.set_xlabel(f"time step $t$ (the task: name the digit of step $t - {result.delay}$)")
    ax.set_ylabel("accuracy (%)")
    lengths = length_summary(result)
    inside = f"{result.delay}–{result.train_length - 1}"
    beyond = f"{result.train_length}–{result.test_length - 1}"
    ax.set_title(f"mean over steps {inside} $\\to$ {beyond}: " + ", ".join(
        f"{model} {100 * p['inside'][0]:.1f} $\\to$ {100 * p['beyond'][0]:.1f}%"
        for model, p in lengths.items()))  # fmt: skip
    style.finding(fig, _length_finding(result, lengths))
    style.shared_legend(fig, extra=[style.band_handle(len(result.seeds))])
    return fig
