"""Figures of notebook 10, "what the norm computes": E1 and E1c (the redundant mean), E2
(DetachNorm) and Y1 (after DyT)."""

import math
import statistics

import numpy as np
from matplotlib.figure import Figure

from lnpaper import stats, vocabulary
from lnpaper.chapters.ch10_what_the_norm_computes import analysis as ch10_analysis
from lnpaper.chapters.ch10_what_the_norm_computes import runs as ch10_runs
from lnpaper.chapters.ch10_what_the_norm_computes.analysis import DETACH_VARIANTS, Y1_ALPHAS
from lnpaper.chapters.ch10_what_the_norm_computes.claims import TRAJECTORY_BOUND
from lnpaper.companion import style
from lnpaper.companion.chapter import figure
from lnpaper.data.synthetic_language import SyntheticLanguage


@figure("zero_mean_drift", experiment=ch10_runs.zero_mean_drift)
def zero_mean_drift(result) -> Figure:
    """E1: notebook 06's Pre-LN model and its zero-mean RMSNorm rewrite, the same function at init
    (float64: equal to roundoff), trained side by side under Adam in float32. Left: the largest
    |logit difference| on 64 held-out sequences; right: the held-out loss difference, rewrite
    minus LayerNorm; mean over seeds as the line, min to max as the band."""
    fig = style.new_figure(2, 4.5)
    left, right = fig.subplots(1, 2)
    steps = result.monitor_steps
    label = "RMSNorm (zero-mean form) vs LayerNorm"
    style.band(left, steps, np.asarray(result.logit_drift), style.color("rmsnorm"), label=label)
    style.log_axis(left, "y")
    left.set(ylabel="max |logit difference|", title="held-out logits of the two forms")
    style.band(right, steps, result.loss_drift, style.color("rmsnorm"))
    right.axhline(0.0, color=style.REFERENCE, lw=1.0, ls=":")
    right.set_ylabel(f"loss difference ({style.NATS_PER_TOKEN})")
    right.set_title("held-out loss, zero-mean RMSNorm minus LayerNorm")
    for ax in (left, right):
        ax.set_xlabel("training step (Adam, float32)")
    end = statistics.fmean(row[-1] for row in result.logit_drift)
    losses = [row[-1] for row in result.loss_drift]
    sign = "of either sign" if min(losses) < 0 < max(losses) else "of one sign"
    largest = max(abs(x) for row in result.loss_drift for x in row)
    # apart: a thousand times the roundoff between the two forms at init
    drift = "drift apart" if end > 1e3 * result.max_logit_diff_init else "stay together"
    style.finding(fig, f"Equal in exact arithmetic, zero-mean RMSNorm and LayerNorm {drift} under "
                  f"Adam in float32:\nlogits end {end:.2g} apart (mean), yet loss differences stay "
                  f"under {math.ceil(100 * largest) / 100:.2f} nats, {sign}")  # fmt: skip
    style.shared_legend(fig, extra=[style.band_handle(len(result.seeds), "mean over seeds")])
    return fig


@figure("constrained_drift", experiment=ch10_runs.constrained_drift)
def constrained_drift(result) -> Figure:
    """E1c: three rewrites of the Pre-LN model, each trained beside its LayerNorm twin in float64
    (left Adam, right plain SGD): the largest |log-probability difference| on 64 held-out
    sequences, mean over seeds as the line, min to max as the band; the dotted line is the bound
    under which the two count as one model."""
    fig = style.new_figure(2, 4.2)
    panels = fig.subplots(1, 2, sharey=True)
    steps = result.monitor_steps
    arms = list(ch10_runs.CONSTRAINED_ARMS)
    for ax, (optimizer, lr) in zip(panels, result.lrs.items(), strict=True):
        for arm, line in zip(arms, style.LINE_STYLES, strict=False):
            # a zero gap (step 0 can be exact) has no place on a log axis: floor it at 1e-17
            gaps = np.maximum(np.asarray(result.logprob_gap[optimizer][arm]), 1e-17)
            style.band(ax, steps, gaps, style.color("RMSNorm"), label=f"rewrite {arm}", style=line)
        ax.axhline(TRAJECTORY_BOUND, color=style.REFERENCE, lw=1.0, ls=":",
                   label=f"one model below {TRAJECTORY_BOUND:g}")  # fmt: skip
        style.log_axis(ax, "y")
        name = "Adam" if optimizer == "adam" else "SGD"
        ax.set(title=f"{name}, lr {lr:g}, float64", xlabel="training step")
    panels[0].set_ylabel("max |log-prob difference| from the twin")

    def gap(arm):  # the largest gap from the twin over both optimizers, seeds and steps
        return max(max(row) for o in result.lrs for row in result.logprob_gap[o][arm])

    kept, folded = gap(arms[0]), min(gap(arm) for arm in arms[1:])
    stays = "stays" if kept < TRAJECTORY_BOUND else "leaves"
    moves = ("folding the biases into the readers is what moves it away"
             if folded > TRAJECTORY_BOUND
             else f"folded into the readers, it stays within {folded:.0e} too")  # fmt: skip
    style.finding(fig, f"Kept zero-mean with its biases, the rewrite {stays} Pre-LN's model "
                  f"(within {kept:.0e});\n{moves}")  # fmt: skip
    seeds = style.band_handle(len(result.seeds), "mean over seeds")
    style.shared_legend(fig, extra=[seeds], ncols=2)
    return fig


DETACH_MARKERS = dict(zip(DETACH_VARIANTS, style.MARKERS, strict=False))


@figure("detach_norms", experiment=ch10_analysis.detach_study)
def detach_norms(result) -> Figure:
    """E2: held-out loss of each variant minus LayerNorm's, paired by seed: the mean and its 95% t
    interval (d 32, 4 blocks, Adam 3e-3, fresh data)."""
    fig = style.new_figure(1, 3.6)
    ax = fig.subplots()
    reference = result.runs["LayerNorm"]["final_loss"]["fresh"]
    names = [name for name in DETACH_VARIANTS if name != "LayerNorm"]
    differences = {
        name: stats.paired_difference(result.runs[name]["final_loss"]["fresh"], reference)
        for name in names
    }
    for row, (name, diff) in enumerate(differences.items()):
        ax.errorbar(diff.mean, row, xerr=[[diff.mean - diff.low], [diff.high - diff.mean]],
                    fmt=DETACH_MARKERS[name], color=style.color("layernorm"), capsize=4)  # fmt: skip
    ax.axvline(0.0, color=style.REFERENCE, lw=1.0, ls=":")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel(f"held-out loss minus LayerNorm's ({style.NATS_PER_TOKEN})")
    worst = max(differences, key=lambda n: differences[n].mean)
    simple = differences["LayerNorm-simple"]
    style.finding(
        fig,
        f"Against LayerNorm: simple {simple.mean:+.3f} nats, {worst} {differences[worst].mean:+.3f}",
    )
    label = f"LayerNorm variants: mean and 95% t interval, paired over {len(reference)} seeds"
    style.shared_legend(fig, extra=[style.method_handle(label, marker="o")])
    return fig


@figure("after_dyt", experiment=ch10_analysis.after_dyt_study)
def after_dyt(result) -> Figure:
    """Y1. Left, the main point: on fresh data, DyT's and Derf's held-out loss minus LayerNorm's,
    paired by seed, mean and 95% t interval, at each initial alpha. Right: the 64-sequence pool
    reused for 150 steps (alpha_0 = 0.5), each norm's held-out loss per seed and its mean, against
    the loss of a uniform guess: the pool's gap between the norms is a gap between models that all
    do worse than knowing nothing."""
    fig = style.new_figure(2, 4.2)
    fresh_ax, pool_ax = fig.subplots(1, 2, width_ratios=(1.3, 1))
    runs = result.runs
    ln = runs["LayerNorm"]["final_loss"]
    methods = ("DyT", "Derf")
    offsets = {"DyT": -0.08, "Derf": 0.08}  # side by side at each alpha_0, not on top
    largest = 0.0  # the largest |mean difference| on fresh data, for the title
    for method in methods:
        fresh = [runs[method]["final_loss"][f"alpha {a:g}, fresh"] for a in Y1_ALPHAS]
        diffs = [stats.paired_difference(losses, ln["fresh"]) for losses in fresh]
        places = [k + offsets[method] for k in range(len(Y1_ALPHAS))]
        means = [d.mean for d in diffs]
        errors = [[d.mean - d.low for d in diffs], [d.high - d.mean for d in diffs]]
        fresh_ax.errorbar(places, means, yerr=errors, fmt="o-", color=style.color(method),
                          lw=1.0, capsize=3)  # fmt: skip
        largest = max(largest, *(abs(m) for m in means))
    fresh_ax.set_xticks(range(len(Y1_ALPHAS)), [f"{a:g}" for a in Y1_ALPHAS])
    fresh_ax.set_xlim(-0.4, len(Y1_ALPHAS) - 0.6)
    fresh_ax.set(xlabel=r"initial $\alpha$ of DyT and Derf ($\alpha_0$)",
                 ylabel=f"held-out loss minus LayerNorm's\n({style.NATS_PER_TOKEN})",
                 title="fresh sequences at every step: mean and 95% t interval")  # fmt: skip
    # 0, LayerNorm's level, in the middle; ticks every 0.05 nats so "a few hundredths" reads off
    top = 0.05 * math.ceil(max(abs(v) for v in fresh_ax.get_ylim()) / 0.05)
    fresh_ax.set_ylim(-top, top)
    fresh_ax.set_yticks(np.arange(-top, top + 0.01, 0.05))
    style.levels(fresh_ax, [(0.0, "LayerNorm")], at=0.01)
    # Right: absolute losses, since the point is where they sit, not how far apart they are.
    pool = {"LayerNorm": ln["pool"],
            **{m: runs[f"{m}, pool"]["final_loss"]["alpha 0.5, pool"] for m in methods}}  # fmt: skip
    for place, (name, losses) in enumerate(pool.items()):
        spread = np.linspace(-0.15, 0.15, len(losses))
        pool_ax.scatter(place + spread, losses, s=18, color=style.color(name), lw=0)
        pool_ax.plot([place - 0.25, place + 0.25], [statistics.fmean(losses)] * 2,
                     color=style.color(name), lw=2.2)  # fmt: skip
    pool_ax.set_xticks(range(len(pool)), list(pool))
    pool_ax.grid(False, axis="x")
    uniform = SyntheticLanguage().levels().uniform
    fresh_level = statistics.fmean(ln["fresh"])
    pool_ax.set_ylim(fresh_level - 0.3, max(max(v) for v in pool.values()) + 0.2)
    pool_ax.set(ylabel=f"held-out loss ({style.NATS_PER_TOKEN})",
                title=r"64-sequence pool, reused, $\alpha_0$ = 0.5: seeds, mean")  # fmt: skip
    style.levels(pool_ax, [(uniform, f"uniform guessing, {uniform:.2f}"),
                           (fresh_level, f"LayerNorm on fresh data, {fresh_level:.2f}")])  # fmt: skip
    lead = statistics.fmean(statistics.fmean(pool["LayerNorm"]) - statistics.fmean(pool[m])
                            for m in methods)  # fmt: skip
    lowest = min(min(v) for v in pool.values())
    where = ("every run there is worse than uniform guessing" if lowest > uniform
             else f"runs there end as low as {lowest:.2f} nats")  # fmt: skip
    leads = f"lead by {lead:.2f} nats, but" if lead >= 0 else f"trail by {-lead:.2f} nats, and"
    style.finding(fig, f"On fresh data DyT and Derf end within {math.ceil(100 * largest) / 100:.2f} "
                  r"nats of LayerNorm at every initial $\alpha$;"
                  f"\non a small reused pool they {leads} {where}")  # fmt: skip
    names = ("LayerNorm", *methods)
    style.shared_legend(fig, extra=[style.method_handle(m, marker="o") for m in names])
    return fig


@figure("dyt_data_rich", experiment=ch10_analysis.dyt_data_rich)
def dyt_data_rich(result) -> Figure:
    """Y1c: training loss (mean of each 10 steps) of LayerNorm and DyT (alpha_0 0.5) on fresh data
    for 400 steps, mean over seeds as the line, min to max as the band; the top axis counts
    predicted tokens per parameter. The dotted line is where Y1's fresh arm stops (150 steps)."""
    fig = style.new_figure(1, 4.2)
    ax = fig.subplots()
    runs = {"LayerNorm": result.runs["LayerNorm"]["train_loss"]["fresh"],
            "DyT": result.runs["DyT"]["train_loss"]["alpha 0.5, fresh"]}  # fmt: skip
    steps = result.runs["LayerNorm"]["log_steps"]
    for name, curves in runs.items():
        style.band(ax, steps, curves, style.color(name), label=name)
    if steps[-1] > 150:  # where Y1's fresh arm stops, inside a longer run
        ax.axvline(150, color=style.REFERENCE, lw=1.0, ls=":", label="Y1 stops (150 steps)")
    ax.set_xlabel("training step (Adam 3e-3, fresh sequences)")
    ax.set_ylabel(f"training loss ({style.NATS_PER_TOKEN})")
    per_step = ch10_analysis.tokens_per_parameter(1)
    top = ax.secondary_xaxis("top", functions=(lambda k: k * per_step, lambda t: t / per_step))
    top.set_xlabel("tokens per parameter")
    pairs = zip(runs["DyT"], runs["LayerNorm"], strict=True)
    gap = statistics.fmean(d[-1] - n[-1] for d, n in pairs)  # the last 10 steps, per seed
    at = f"at T/P {ch10_analysis.tokens_per_parameter(steps[-1]):.2f}"
    if gap > vocabulary.NEGLIGIBLE_NATS:
        text = f"LayerNorm pulls away late: DyT ends {gap:.2f} nats behind {at}"
    elif gap < -vocabulary.NEGLIGIBLE_NATS:
        text = f"DyT pulls ahead: it ends {-gap:.2f} nats below LayerNorm {at}"
    else:  # within the negligible 0.02 nats
        text = f"DyT ends level with LayerNorm ({gap:+.3f} nats) {at}"
    style.finding(fig, text)
    seeds = len(result.runs["DyT"]["seeds"])
    style.shared_legend(fig, extra=[style.band_handle(seeds, "mean over seeds")], ncols=2)
    return fig
