"""Figures of notebook 03, LayerNorm in recurrent networks."""

import numpy as np
from matplotlib.figure import Figure

from lnpaper import experiments
from lnpaper.experiments.layernorm_in_rnns import mean_tanh_slope
from lnpaper.figures.registry import figure

NOTEBOOK = "03_layernorm_in_rnns"
MODEL_COLORS = {"LSTM": "tab:grey", "LN-LSTM": "tab:blue", "BN-LSTM": "tab:orange"}
NORM_COLORS = {"none": "tab:grey", "layernorm": "tab:blue", "batchnorm": "tab:orange"}


def _band(ax, steps, curves, color, label, style="-"):
    """Mean over seeds as a line, min to max as a band."""
    values = np.array(curves, dtype=float)
    ax.plot(steps, values.mean(0), style, color=color, lw=1.6, label=label)
    ax.fill_between(steps, values.min(0), values.max(0), color=color, alpha=0.18, lw=0)


@figure("rnn_dynamics", notebook=NOTEBOOK, experiment=experiments.rnn_dynamics)
def rnn_dynamics(result) -> Figure:
    """A tanh RNN and the LN RNN with the same weights at several scales, free-running after reading
    one digit: the scale of the summed inputs and of the hidden state per step, and how much step t
    still depends on step 0. The LN RNN's four curves of h_t and of the dependence lie on top of
    each other."""
    t = np.arange(1, result.steps + 1)
    fig = Figure(figsize=(13.0, 3.8), layout="constrained")
    summed, hidden, sensitivity = fig.subplots(1, 3)
    palette = ("tab:purple", "tab:green", "tab:orange", "tab:red", "tab:brown", "tab:pink")
    colors = dict(zip(result.scales, palette, strict=False))
    for net, style in (("tanh RNN", "--"), ("LN tanh RNN", "-")):
        for scale in result.scales:
            kwargs = {"color": colors.get(scale, "black"), "lw": 1.4}
            summed.plot(t, result.summed_rms[net][scale], style, **kwargs)
            hidden.plot(t, result.hidden_rms[net][scale], style, **kwargs)
            sensitivity.plot(t, result.sensitivity[net][scale], style, **kwargs)
    summed.set_title("Summed inputs a_t = W_h h_t-1 + W_x x_t")
    summed.set_ylabel("RMS over units")
    summed.set_yscale("log")
    hidden.set_title("Hidden state h_t (LN: four scales, one curve)")
    hidden.set_ylabel("RMS over units")
    hidden.set_ylim(0, 1)
    sensitivity.set_title("Dependence on step 0: ||(dh_t / dx_0) v||")
    sensitivity.set_ylabel("geometric mean over digits")
    sensitivity.set_yscale("log")
    for ax in (summed, hidden, sensitivity):
        ax.set_xlabel("time step t (one digit's rows, then zeros)")
        ax.axvspan(0.5, result.input_steps + 0.5, color="grey", alpha=0.15)
    handles = [
        summed.plot([], [], color=colors[s], lw=1.4, label=f"weights x {s:g}")[0]
        for s in result.scales
    ]
    handles += [
        summed.plot([], [], "--", color="black", lw=1.4, label="tanh RNN")[0],
        summed.plot([], [], "-", color="black", lw=1.4, label="LN tanh RNN")[0],
    ]
    fig.legend(handles=handles, loc="outside right center", fontsize=8)
    return fig


@figure("recurrent_training", notebook=NOTEBOOK, experiment=experiments.recurrent_training)
def recurrent_training(result) -> Figure:
    """Validation NLL during training on the digits read row by row, per learning rate: mean over
    seeds, band from min to max."""
    # the learning rates at which the LN-LSTM ran (the LSTM alone also runs at a higher one)
    rates = sorted({lr for model, lr in result.runs if model == "LN-LSTM"}, reverse=True)
    fig = Figure(figsize=(11.0, 3.8), layout="constrained")
    axes = fig.subplots(1, len(rates), sharey=True)
    for ax, lr in zip(np.atleast_1d(axes), rates, strict=True):
        for (model, run_lr), run in result.runs.items():
            if run_lr != lr:
                continue
            _band(ax, run["eval_steps"], run["val_loss"], MODEL_COLORS[model], model)
        best = min(np.mean(result.runs["LSTM", lr]["val_loss"], axis=0))
        ax.axhline(best, color="black", lw=0.8, ls=":", label="LSTM's best (mean over seeds)")
        seeds = len(next(iter(result.runs.values()))["seeds"])
        ax.set_title(f"Adam, lr {lr:g}, batch 64, {seeds} seeds")
        ax.set_xlabel("training step")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    np.atleast_1d(axes)[0].set_ylabel("validation NLL (nats)")
    return fig


@figure("gain_init", notebook=NOTEBOOK, experiment=experiments.gain_init_study)
def gain_init(result) -> Figure:
    """The gains' initial value for the LN-LSTM and the BN-LSTM (validation NLL, mean and min-max
    over seeds), and the average slope of tanh on inputs of standard deviation s."""
    fig = Figure(figsize=(12.5, 3.6), layout="constrained")
    ln_ax, bn_ax, slope_ax = fig.subplots(1, 3)
    drawn = {  # gain_init_study's labels -> model, line style
        f"{model}, gain {gain}": (model, style)
        for model in ("LN-LSTM", "BN-LSTM")
        for gain, style in (("1.0", "-"), ("0.1", "--"))
    }
    for name, run in result.runs.items():
        model, style = drawn[name]
        ax = ln_ax if model == "LN-LSTM" else bn_ax
        _band(ax, run["eval_steps"], run["val_loss"], MODEL_COLORS[model], name, style)
    for ax, model in ((ln_ax, "LN-LSTM"), (bn_ax, "BN-LSTM")):
        ax.set_title(f"{model}: gains start at 1.0 or 0.1")
        ax.set_xlabel("training step")
        ax.set_ylabel("validation NLL (nats)")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    scales = np.geomspace(0.01, 10, 61)
    slope_ax.plot(scales, [mean_tanh_slope(s) for s in scales], color="black")
    for s in (0.1, 1.0):
        slope_ax.plot([s], [mean_tanh_slope(s)], "o", color="tab:red")
        slope_ax.annotate(f"s = {s:g}: {mean_tanh_slope(s):.3f}", (s, mean_tanh_slope(s)),
                          xytext=(6, 4), textcoords="offset points", size=8)  # fmt: skip
    slope_ax.set_xscale("log")
    slope_ax.set_xlabel("s, the standard deviation of tanh's input")
    slope_ax.set_ylabel("E[1 - tanh^2(s z)], z ~ N(0, 1)")
    slope_ax.set_title("How much gradient tanh lets through")
    return fig


@figure("longer_sequences", notebook=NOTEBOOK, experiment=experiments.longer_sequences)
def longer_sequences(result) -> Figure:
    """Accuracy per step on test streams twice the training length (mean, min-max over seeds)."""
    steps = np.arange(result.delay, result.test_length)
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    ax = fig.subplots()
    for model, runs in result.accuracy.items():
        label = f"{model} (T_max rule)" if model == "BN-LSTM" else model
        _band(ax, steps, np.array(runs) * 100, MODEL_COLORS[model], label)
    ax.axvline(result.train_length - 0.5, color="black", lw=0.8, ls="--")
    ax.text(result.train_length - 0.3, ax.get_ylim()[0], " longer than any\n training sequence",
            va="bottom", size=8)  # fmt: skip
    ax.set_xlabel("time step t")
    ax.set_ylabel(f"accuracy (%): the digit of step t - {result.delay}")
    ax.set_title(f"Trained on {result.train_length} steps, tested on {result.test_length}")
    ax.legend(fontsize=8, loc="lower left")
    return fig


@figure("cnn_coda", notebook=NOTEBOOK, experiment=experiments.cnn_coda)
def cnn_coda(result) -> Figure:
    """A small CNN on the digits without a norm, with BatchNorm and with LayerNorm, as they are and
    framed by a blank margin; and how often its units are on near the border and inside."""
    fig = Figure(figsize=(13.0, 3.6), layout="constrained")
    axes = fig.subplots(1, len(result.margins) + 1)
    for ax, margin in zip(axes, result.margins, strict=False):
        side = 8 + 2 * margin
        for norm in result.norms:
            _band(ax, result.eval_steps, result.val_loss[margin][norm], NORM_COLORS[norm], norm)
        ax.set_yscale("log")
        ax.set_xlabel("training step")
        ax.set_ylabel("validation NLL (nats)")
        frame = "as they are" if margin == 0 else f"in a blank frame of {margin} pixels"
        ax.set_title(f"{side} x {side}: digits {frame}")
        ax.legend(fontsize=8)
    bars = axes[-1]
    labels, edge, inside = [], [], []
    for margin in result.margins:
        for k, (out, inn) in enumerate(
            zip(result.border_active[margin], result.interior_active[margin], strict=True)
        ):
            labels.append(f"{8 + 2 * margin} px\nconv {k + 1}")
            edge.append(out)
            inside.append(inn)
    position = np.arange(len(labels))
    bars.bar(position - 0.2, edge, 0.4, label="border ring", color="tab:brown")
    bars.bar(position + 0.2, inside, 0.4, label="interior", color="tab:cyan")
    bars.set_xticks(position, labels)
    bars.set_ylim(0, 1.15)
    bars.set_ylabel("share of ReLU units on")
    bars.set_title("No-norm CNN: units on, border vs inside")
    bars.legend(fontsize=8, loc="upper left", ncol=2)
    return fig
