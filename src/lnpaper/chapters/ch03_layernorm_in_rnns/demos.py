"""Notebook 03's slider: a tanh RNN's weight scale, with and without LayerNorm.

Multiplying a plain tanh RNN's weights by a scale makes its hidden state die out or saturate, and
with it how much h_t still depends on the first input; LayerNorm takes the scale out of every
step and leaves its gain to set the dynamics. `rnn_scale` runs `runs.rnn_dynamics`' own body at
the scale and gain the reader picks. The notebook puts it on a slider with `demos.show`
(`lnpaper.companion.widgets`); tests/test_demos.py checks it.
"""

import functools

import numpy as np
from matplotlib.figure import Figure

from lnpaper.chapters.ch03_layernorm_in_rnns import runs
from lnpaper.companion import style
from lnpaper.companion.widgets import show as show  # the notebook calls demos.show
from lnpaper.companion.widgets import styled

RNN_STEPS = 120  # rnn_dynamics runs 300; 120 keep a redraw near a second and show the same trends


@functools.cache
def rnn_run(scale: float, gain: float):
    """rnn_dynamics' own body (not its record, so any scale and gain work) at one weight scale,
    with the LN RNN's gain set to `gain`: the same seed-0 weights, digits and direction v."""
    return runs._dynamics(64, RNN_STEPS, 8, 32, (scale,), seed=0, gain=gain)


@styled
def rnn_scale(scale: float = 1.0, gain: float = 1.0) -> Figure:
    """Notebook 03: the tanh RNN and the LN RNN with the same weights times `scale`: the size of
    the hidden state (left) and how much h_t still depends on the first input row (right)."""
    run = rnn_run(float(scale), float(gain))
    t = np.arange(1, RNN_STEPS + 1)
    fig = style.new_figure(2, 4.0)
    hidden, dependence = fig.subplots(1, 2)
    labels = {"tanh RNN": "tanh RNN", "LN tanh RNN": f"LN tanh RNN, gain {gain:g}"}
    for net, label in labels.items():
        kwargs = {"color": style.color(net), "lw": 1.8, "label": label}
        hidden.plot(t, run.hidden_rms[net][float(scale)], **kwargs)
        dependence.plot(t, run.sensitivity[net][float(scale)], **kwargs)
    # fixed, so that a control moves the lines, not the axes: every choice stays inside
    hidden.set_ylim(1e-36, 1e1)
    dependence.set_ylim(1e-36, 1e24)
    for ax in (hidden, dependence):
        style.log_axis(ax, "y")
        ax.set_yticks([10.0**k for k in range(-36, 25, 12) if 10.0**k <= ax.get_ylim()[1]])
        ax.set_xlabel("time step $t$")
        ax.axvspan(0.5, run.input_steps + 0.5, color=style.GREY, alpha=0.15, lw=0)
    hidden.set_title("hidden state $h_t$, RMS over units")
    dependence.set_title("dependence on step 0: $\\|(\\partial h_t / \\partial x_0)\\, v\\|$")
    style.shared_legend(fig, ncols=2)
    end = {net: style.power_of_ten(run.sensitivity[net][float(scale)][-1]) for net in labels}
    style.finding(fig, f"Weights × {scale:g}: at step {RNN_STEPS}, step 0 moves $h_t$ by "
                       f"{end['tanh RNN']} without LayerNorm, {end['LN tanh RNN']} with it")  # fmt: skip
    return fig
