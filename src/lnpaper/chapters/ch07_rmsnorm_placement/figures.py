"""Figures of notebook 07, RMSNorm and where the norm goes."""

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lnpaper import stats, vocabulary
from lnpaper.chapters.ch06_transformer import analysis as ch06_analysis
from lnpaper.chapters.ch06_transformer.figures import language_levels
from lnpaper.chapters.ch07_rmsnorm_placement import analysis
from lnpaper.chapters.ch07_rmsnorm_placement import runs as ch07_runs
from lnpaper.companion import style
from lnpaper.companion.chapter import figure
from lnpaper.formatting import power_of_ten

PRMS = "pRMSNorm (6.25%)"
# RMSNorm dashed over LayerNorm's solid line (the two nearly coincide); pRMSNorm in RMSNorm's green
# with a line style and a marker of its own
LINE_STYLES = {"LayerNorm": "-", "RMSNorm": "--", PRMS: "-.", "DyT": "-"}
MARKERS = {"LayerNorm": "o", "RMSNorm": "o", PRMS: "s", "DyT": "o"}


@figure("rmsnorm_curves", experiment=ch06_analysis.rmsnorm_study)
def rmsnorm_curves(result) -> Figure:
    """P2, P4: notebook 06's 6-layer Pre-LN language model with LayerNorm, RMSNorm, pRMSNorm (the
    RMS of the first 6.25% of the units) or DyT in every norm slot, Adam at 3e-3 without warmup.
    Left: the training loss, mean over seeds and the band from the lowest to the highest seed.
    Right: each seed's held-out loss after training, joined across the norms (a seed fixes the
    initial weights and the data); the bar is the mean."""
    fig = style.new_figure(2, 4.4)
    left, right = fig.subplots(1, 2, width_ratios=(1.6, 1))
    names = list(result.runs)
    for name, run in result.runs.items():
        line = style.band(left, run["steps"], run["train_loss"], style.color(name), name,
                          LINE_STYLES[name])  # fmt: skip
        if name == PRMS:  # the line style alone tells the others apart
            line.set(marker=MARKERS[name], markevery=3, ms=5)
    first = result.runs["LayerNorm"]
    lowest = min(min(np.mean(result.runs[name]["train_loss"], axis=0)) for name in names)
    left.set_ylim(min(1.6, lowest - 0.1), 3.2)  # a reader's run may end lower
    language_levels(left, first["levels"], first["steps"][-1])
    left.set(xlabel="step", ylabel=f"training loss, {style.NATS_PER_TOKEN}")
    left.set_title(f"{first['n_layers']} layers, Pre-norm, Adam lr {first['lr']:g}, no warmup")
    finals = np.array([result.runs[name]["final_loss"] for name in names])  # [norm][seed]
    positions = np.arange(len(names))
    for seed_losses in finals.T:
        right.plot(positions, seed_losses, color=style.GREY, lw=0.8, alpha=0.6, zorder=1)
    for position, name, losses in zip(positions, names, finals, strict=True):
        right.plot([position] * len(losses), losses, MARKERS[name], color=style.color(name))
        right.plot([position - 0.25, position + 0.25], [losses.mean()] * 2, color=style.BLACK,
                   lw=2)  # fmt: skip
    right.set_xticks(positions, [name.replace(" (", "\n(") for name in names])
    right.set_xlim(-0.5, len(names) - 0.5)
    right.set_ylabel(f"held-out loss after training, {style.NATS_PER_TOKEN}")
    seeds = len(first["seeds"])
    right.set_title(f"each of {seeds} seeds, joined; bar: mean")
    gaps = {name: (finals[k] - finals[names.index("LayerNorm")]).mean() for k, name in
            enumerate(names)}  # fmt: skip
    # level: a mean gap within the negligible 0.02 nats (`lnpaper.vocabulary`)
    level = "level with" if abs(gaps["RMSNorm"]) < vocabulary.NEGLIGIBLE_NATS else (
        "above" if gaps["RMSNorm"] > 0 else "below")  # fmt: skip
    style.finding(fig, f"RMSNorm ends {level} LayerNorm (held-out loss {gaps['RMSNorm']:+.3f} "
                  f"nats from it);\npRMSNorm on 6.25% of the units ends {gaps[PRMS]:+.3f} from it, "
                  f"DyT {gaps['DyT']:+.2f} (means over {seeds} seeds)")  # fmt: skip
    style.shared_legend(fig, [left], extra=[style.band_handle(seeds, "mean")], ncols=5)
    return fig


@figure("prms_estimate", experiment=ch07_runs.prms_estimate)
def prms_estimate(result) -> Figure:
    """P4: pRMSNorm's estimate of the RMS on Gaussian rows of n units, from the first k = floor(p n)
    of them with p = 6.25%. Left: the distribution of the ratio of the estimate to the RMS of all
    n units, over 20,000 rows per width. Right: its standard deviation against k, with the delta
    method's prediction and that of k units alone."""
    fig = style.new_figure(2, 4.2)
    left, right = fig.subplots(1, 2)
    edges = np.array(result.histogram_edges)
    k = np.array(result.units_used)
    n = np.array(result.widths)
    # one method, pRMSNorm, in its colour; the width is a second factor: a line style and a marker
    colour = style.color("pRMSNorm")
    looks = list(zip(style.line_styles(len(n)), style.markers(len(n)), strict=True))
    for width, units, counts, (line, _) in zip(n, k, result.histogram_counts, looks, strict=True):
        density = np.array(counts) / (result.samples * np.diff(edges))
        left.stairs(density, edges, color=colour, ls=line, lw=1.8,
                    label=f"pRMSNorm, $n = {width}$, $k = {units}$")  # fmt: skip
    left.axvline(1.0, color=style.REFERENCE, lw=1.0, ls=":")
    left.set_xlabel(r"$\mathrm{RMS}_k\,/\,\mathrm{RMS}_n$: the first $k$ units against all $n$")
    left.set(ylabel="density", title=rf"$p = {100 * result.fraction:g}\%$, Gaussian rows")
    k_line = np.geomspace(k.min() / 1.5, k.max() * 1.5, 100)
    (alone,) = right.plot(k_line, np.sqrt(1 / (2 * k_line)), ":", color=style.REFERENCE, lw=1.2,
                          label=r"$\sqrt{1/2k}$: $k$ units alone")  # fmt: skip
    (delta,) = right.plot(k, result.ratio_sd_theory, "x", color=style.REFERENCE, ms=10, mew=1.5,
                          label=r"$\sqrt{(1/k - 1/n)/2}$: delta method")  # fmt: skip
    for units, width, sd, (_, marker) in zip(k, n, result.ratio_sd, looks, strict=True):
        right.plot([units], [sd], marker, color=colour, ms=7)
        right.annotate(f"$n = {width}$", (units, sd), textcoords="offset points", xytext=(8, 4))
    style.log_axis(right, "x")
    style.log_axis(right, "y")
    right.set(xlabel=r"units used, $k = \lfloor pn \rfloor$", ylabel="sd of the ratio")
    right.set_title("How far the estimate strays")
    measured = style.style_handle("none", f"measured, {result.samples:,} rows", marker="o")
    style.shared_legend(fig, [left], extra=[measured, delta, alone], ncols=4)
    style.finding(fig, f"From its first $k = pn$ units pRMSNorm's RMS is off by {result.ratio_sd[0]:.0%}"
                  f" (sd) at $n = {n[0]}$, and by {result.ratio_sd[-1]:.1%} at $n = {n[-1]}$")  # fmt: skip
    return fig


def _per_block(ax, run, key, color):
    """Mean over the seeds that finished, and their min-to-max band, per block."""
    values = [v for v in run[key] if v is not None]
    blocks = np.arange(1, len(values[0]) + 1)
    style.band(ax, blocks, values, color).set_marker("o")


def _variance(value: float) -> str:
    """A stream's variance as the title gives it: 41 whole, 1.7 to two digits."""
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


@figure("placement_variance", experiment=analysis.placement_study)
def placement_variance(result) -> Figure:
    """P5: the variance of the residual stream after each block (top) and the norm of each block's
    gradient (bottom), at initialization (left) and after 200 steps of Adam at 1e-2 without warmup
    (right), for Post-LN, Pre-LN and Peri-LN in notebook 06's 6-block, d = 64 model: the mean over
    seeds, and the band from the lowest to the highest seed."""
    fig = style.new_figure(4, 7.0)
    axes = fig.subplots(2, 2, sharey="row")
    first = next(iter(result.runs.values()))
    keys = ("stream_variance_init", "stream_variance_final", "block_grad_norm_init",
            "block_grad_norm_final")  # fmt: skip
    for name, run in result.runs.items():
        for ax, key in zip(axes.flat, keys, strict=True):
            _per_block(ax, run, key, style.color(name))
    titles = ("at initialization", f"after {first['steps'][-1]} steps, Adam lr {first['lr']:g}")
    ylabels = ("variance of the stream after block $l$",
               r"$\|\partial L/\partial \theta_l\|$ of block $l$")  # fmt: skip
    for row, ylabel in enumerate(ylabels):
        style.log_axis(axes[row, 0], "y")
        axes[row, 0].set_ylabel(ylabel)
        for column, title in enumerate(titles):
            axes[row, column].set(title=title, xlabel="block $l$")
    runs = result.runs
    pre, peri = (np.mean(runs[name]["stream_variance_final"], axis=0)[-1] for name in
                 ("Pre-LN", "Peri-LN"))  # fmt: skip
    post_first, post_start = (np.mean(runs["Post-LN"][key], axis=0)[0] for key in
                              ("block_grad_norm_final", "block_grad_norm_init"))  # fmt: skip
    moves = "falls" if post_first < post_start else "rises"
    # notebook 06 trains at 3e-3: above it is a high rate
    rate = "a high learning rate" if first["lr"] > 3e-3 else f"learning rate {first['lr']:g}"
    style.finding(fig, f"After training at {rate} Pre-LN's stream reaches a variance "
                  f"of {_variance(pre)}, Peri-LN's {_variance(peri)};\nPost-LN's cannot grow, but "
                  f"its first block's gradient {moves} to about {power_of_ten(post_first)}")  # fmt: skip
    methods = [Line2D([], [], color=style.color(name), marker="o", label=name) for name in runs]
    style.shared_legend(fig, [], extra=[*methods, style.band_handle(len(first["seeds"]), "mean")])
    return fig


# Pre-LN and Peri-LN share LayerNorm's blue family: a line style, a spike marker and a bar hatch of
# their own keep them apart where the two shades meet
SPIKE_LOOKS = {"Pre-LN": ("-", "x", None), "Peri-LN": ("--", "o", "//")}


def _spike_traces(ax, runs) -> list:
    """Each placement's mean gradient norm over seeds (thick), and for every spike the spiking
    seed's own run-up (thin: the window it is measured against) under a marker. Returns the values
    drawn after the first window, to which the axis is fitted."""
    window = stats.SPIKE_WINDOW
    shown = []
    for arm, run in runs.items():
        colour, (line, marker, _) = style.color(arm), SPIKE_LOOKS[arm]
        finished = min(len(norms) for norms in run["grad_norm"])
        mean = np.mean([norms[:finished] for norms in run["grad_norm"]], axis=0)
        ax.plot(np.arange(finished), mean, line, color=colour, lw=2.2, label=arm)
        shown.extend(mean[window:])
        for norms, spikes in zip(run["grad_norm"], run["spikes"], strict=True):
            for t in spikes:
                run_up = np.arange(t - window, min(t + 2, len(norms)))
                ax.plot(run_up, [norms[i] for i in run_up], line, color=colour, lw=0.9)
                shown.extend(norms[i] for i in run_up)
            ax.plot(spikes, [norms[t] for t in spikes], marker, color=colour, ms=9, mew=2,
                    mfc="none", label=f"{arm} spike")  # fmt: skip
    return shown


@figure("gradient_spikes", experiment=analysis.spike_confirmation)
def gradient_spikes(result) -> Figure:
    """P5: the global gradient norm of Pre-LN and Peri-LN at every step of Adam without warmup, at
    each learning rate of the study (`spike_confirmation`'s 30 seeds). Left, one panel per rate:
    the mean over seeds (thick), and on every spike (a step above 2x the median of the 10 before
    it, `lnpaper.stats.spike_steps`) a marker over the spiking seed's own 10 steps before (thin).
    The first 10 steps, which have no window to spike against, are left out. Right: the spikes
    counted, per placement and rate."""
    by_lr = analysis.spike_summary(result)
    rates = sorted(by_lr)
    fig = style.new_figure(2, 5.6)
    axes = fig.subplot_mosaic([[lr, "counts"] for lr in rates], width_ratios=[2, 1])
    traces = [axes[lr] for lr in rates]
    shown = []
    for lr, ax in zip(rates, traces, strict=True):
        runs = {name.split(",")[0]: run for name, run in result.runs.items() if run["lr"] == lr}
        shown += _spike_traces(ax, runs)
        ax.set_title(f"Adam lr {lr:g}, no warmup")
        ax.set_ylabel(r"gradient norm $\|\partial L/\partial\theta\|$")
    steps = next(iter(result.runs.values()))["steps"]
    window = stats.SPIKE_WINDOW
    for ax in traces:  # one scale for both rates
        ax.set_xlim(window - 1, steps + 1)
        ax.set_ylim(min(shown) / 1.15, max(shown) * 1.25)
        style.log_axis(ax, "y")
    traces[-1].set_xlabel(f"training step (from step {window}, the first a spike can be)")

    counted = {arm: [sum(by_lr[lr][arm]["spikes"]) for lr in rates] for arm in SPIKE_LOOKS}
    counts, width = axes["counts"], 0.38
    for k, (arm, per_rate) in enumerate(counted.items()):
        positions = np.arange(len(rates)) + (k - 0.5) * width
        bars = counts.bar(positions, per_rate, width, color=style.color(arm), ec="white",
                          hatch=SPIKE_LOOKS[arm][2])  # fmt: skip
        counts.bar_label(bars, padding=2)
    seeds = len(by_lr[rates[0]]["Pre-LN"]["spikes"])
    counts.set_xticks(range(len(rates)), [f"lr {lr:g}" for lr in rates])
    counts.set(ylabel=f"spikes in {seeds} runs of {steps} steps", title="Spikes counted")
    counts.set_ylim(0, max(max(per_rate) for per_rate in counted.values()) + 1.5)
    counts.grid(axis="x", visible=False)

    total = {arm: sum(per_rate) for arm, per_rate in counted.items()}
    at_highest = sum(per_rate[-1] for per_rate in counted.values())
    runs_made = seeds * len(rates) * len(counted)
    # rare: fewer spikes than runs, under one a run
    frequency = "stay rare" if sum(total.values()) < runs_made else "are common"
    style.finding(fig, f"Spikes {frequency} without warmup: Pre-LN's gradient norm spikes "
                  f"{total['Pre-LN']} times in {seeds * len(rates)} runs, Peri-LN's "
                  f"{total['Peri-LN']};\n{at_highest} of the {sum(total.values())} come at the "
                  f"higher learning rate, {rates[-1]:g}")  # fmt: skip
    seed_lines = style.style_handle(
        "-", f"thick: mean over {seeds} seeds; thin: a spiking seed's {window} steps before"
    )
    style.shared_legend(fig, traces, extra=[seed_lines], ncols=3)
    return fig
