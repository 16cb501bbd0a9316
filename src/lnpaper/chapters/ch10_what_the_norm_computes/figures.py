"""Figures of notebook 10, "what the norm computes": E1 and E1c (the redundant mean), E2
(DetachNorm) and Y1 (after DyT)."""

import statistics

import numpy as np
from matplotlib.figure import Figure

from lnpaper import stats
from lnpaper.chapters.ch10_what_the_norm_computes import analysis as ch10_analysis
from lnpaper.chapters.ch10_what_the_norm_computes import runs as ch10_runs
from lnpaper.chapters.ch10_what_the_norm_computes.analysis import (
    DETACH_VARIANTS,
    Y1_ALPHAS,
    mean_saturation,
)
from lnpaper.chapters.ch10_what_the_norm_computes.claims import TRAJECTORY_BOUND
from lnpaper.companion import style
from lnpaper.companion.registry import figure
from lnpaper.data.synthetic_language import SyntheticLanguage

NOTEBOOK = "10_what_the_norm_computes"


@figure("zero_mean_drift", notebook=NOTEBOOK, experiment=ch10_runs.zero_mean_drift)
def zero_mean_drift(result) -> Figure:
    """E1: notebook 06's Pre-LN model and its zero-mean RMSNorm rewrite, the same function at init
    (float64: equal to roundoff), trained side by side under Adam in float32. Left: the largest
    |logit difference| on 64 held-out sequences; right: the held-out loss difference, rewrite
    minus LayerNorm; mean over seeds as the line, min to max as the band."""
    fig = style.new_figure(2, 4.5)
    left, right = fig.subplots(1, 2)
    steps = result.monitor_steps
    label = "RMSNorm (zero-mean form) vs LayerNorm"
    drift = np.asarray(result.logit_drift)
    style.band(left, steps, drift, style.color("rmsnorm"), label=label)
    style.log_axis(left, "y")
    left.set_xlabel("training step (Adam, float32)")
    left.set_ylabel("max |logit difference|")
    left.set_title("held-out logits of the two forms")
    style.band(right, steps, result.loss_drift, style.color("rmsnorm"))
    right.axhline(0.0, color=style.REFERENCE, lw=1.0, ls=":")
    right.set_xlabel("training step (Adam, float32)")
    right.set_ylabel(f"loss difference ({style.NATS_PER_TOKEN})")
    right.set_title("held-out loss, zero-mean RMSNorm minus LayerNorm")
    end = statistics.fmean(row[-1] for row in result.logit_drift)
    exactness = max(result.max_logit_diff_init, result.max_logit_diff_trained)
    losses = [row[-1] for row in result.loss_drift]
    style.finding(
        fig,
        f"Zero-mean RMSNorm and LayerNorm agree to {exactness:.0e} in float64 (not plotted).\n"
        f"Trained in float32, Adam moves their logits {end:.2g} apart in {steps[-1]} steps and "
        f"the loss by {statistics.fmean(losses):+.3f} nats\n(means of {len(losses)} seeds; the "
        f"seeds' loss differences run from {min(losses):+.3f} to {max(losses):+.3f})",
    )
    style.shared_legend(fig, extra=[style.band_handle(len(result.seeds), "mean over seeds")])
    return fig


@figure("constrained_drift", notebook=NOTEBOOK, experiment=ch10_runs.constrained_drift)
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
        ax.set_title(f"{name}, lr {lr:g}, float64")
        ax.set_xlabel("training step")
    panels[0].set_ylabel("max |log-prob difference| from the twin")
    kept = max(max(row) for o in result.lrs for row in result.logprob_gap[o][arms[0]])
    style.finding(
        fig,
        f"Kept zero-mean with its biases, the rewrite stays Pre-LN's model (within {kept:.0e});\n"
        "folding the biases into the readers is what moves it away",
    )
    style.shared_legend(
        fig, extra=[style.band_handle(len(result.seeds), "mean over seeds")], ncols=2
    )
    return fig


DETACH_MARKERS = dict(zip(DETACH_VARIANTS, style.MARKERS, strict=False))


@figure("detach_norms", notebook=NOTEBOOK, experiment=ch10_analysis.detach_study)
def detach_norms(result) -> Figure:
    """E2: held-out loss of each variant minus LayerNorm's, paired by seed: the mean and its 95% t
    interval (d 32, 4 blocks, Adam 3e-3, fresh data)."""
    fig = style.new_figure(1, 3.6)
    ax = fig.subplots()
    reference = result.runs["LayerNorm"]["final_loss"]["fresh"]
    names = [name for name in DETACH_VARIANTS if name != "LayerNorm"]
    differences = {}
    for row, name in enumerate(names):
        diff = stats.paired_difference(result.runs[name]["final_loss"]["fresh"], reference)
        differences[name] = diff
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
        f"Against LayerNorm: simple {simple.mean:+.3f} nats, {worst} "
        f"{differences[worst].mean:+.3f}",
    )
    n = len(reference)
    label = f"LayerNorm variants: mean and 95% t interval, paired over {n} seeds"
    style.shared_legend(fig, extra=[style.method_handle(label, marker="o")])
    return fig


BUDGET_STYLES = {"fresh": "-", "pool": "--"}


@figure("after_dyt", notebook=NOTEBOOK, experiment=ch10_analysis.after_dyt_study)
def after_dyt(result) -> Figure:
    """Y1. Left: held-out loss minus LayerNorm's on the same data budget, paired by seed, mean and
    95% t interval, against DyT's and Derf's initial alpha (fresh data at every alpha; the
    64-sequence pool and DyT's embedding scalar at 0.5). Right: the fraction of saturated values,
    |alpha x + s| > 2, per norm slot after training (fresh data), mean over seeds."""
    fig = style.new_figure(2, 4.2)
    left, right = fig.subplots(1, 2)
    runs = result.runs
    ln = runs["LayerNorm"]["final_loss"]
    # Left: categories, not a numeric alpha axis: the sweep over alpha_0 (fresh data), then the
    # two arms at alpha_0 = 0.5; DyT just left of each place, Derf just right.
    places = {**{f"alpha {a:g}, fresh": k for k, a in enumerate(Y1_ALPHAS)},
              "pool": len(Y1_ALPHAS) + 0.5, "embedding scalar": len(Y1_ALPHAS) + 1.5}  # fmt: skip
    offsets = {"DyT": -0.12, "Derf": 0.12}

    def point(x, values, budget, method):
        diff = stats.paired_difference(values, ln[budget])
        left.errorbar(x, diff.mean, yerr=[[diff.mean - diff.low], [diff.high - diff.mean]],
                      fmt="o", color=style.color(method), capsize=3)  # fmt: skip
        return diff

    found = {}
    for method in ("DyT", "Derf"):
        shift = offsets[method]
        fresh = [point(k + shift, runs[method]["final_loss"][f"alpha {a:g}, fresh"], "fresh", method)
                 for k, a in enumerate(Y1_ALPHAS)]  # fmt: skip
        left.plot([k + shift for k in range(len(Y1_ALPHAS))], [d.mean for d in fresh],
                  BUDGET_STYLES["fresh"], color=style.color(method), lw=1.0)  # fmt: skip
        found[method, "fresh"] = fresh[Y1_ALPHAS.index(0.5)]
        found[method, "pool"] = point(
            places["pool"] + shift, runs[f"{method}, pool"]["final_loss"]["alpha 0.5, pool"],
            "pool", method,
        )  # fmt: skip
        point(places["embedding scalar"] + shift,
              runs[f"{method}, embedding scalar"]["final_loss"]["alpha 0.5, fresh"], "fresh",
              method)  # fmt: skip
    left.axhline(0.0, color=style.REFERENCE, lw=1.0, ls=":")
    left.axvline(len(Y1_ALPHAS) - 0.25, color=style.REFERENCE, lw=0.8)
    left.set_xticks(
        list(places.values()),
        [*(rf"$\alpha_0$ = {a:g}" for a in Y1_ALPHAS), "64-sequence\npool", "embedding\nscalar"],
    )
    left.set_xlabel(r"fresh data at each $\alpha_0$ | two more arms, $\alpha_0$ = 0.5")
    left.set_ylabel(f"loss minus LayerNorm's ({style.NATS_PER_TOKEN}),\nmean and 95% t interval")
    left.set_title("held-out loss against LayerNorm, same data budget")
    slots = len(mean_saturation(runs["DyT"], "alpha 0.5, fresh"))
    for a, ls in zip(Y1_ALPHAS, style.LINE_STYLES, strict=False):
        highest = 0.0  # where the pair of lines ends
        for method in ("DyT", "Derf"):
            fractions = mean_saturation(runs[method], f"alpha {a:g}, fresh")
            right.plot(range(1, slots + 1), fractions, ls, color=style.color(method),
                       marker="o", ms=3)  # fmt: skip
            highest = max(highest, fractions[-1])
        # line style is alpha_0 here: each pair of lines named at its end, not in a legend
        right.text(slots + 0.2, highest, rf"$\alpha_0$ = {a:g}", va="center",
                   color=style.REFERENCE)  # fmt: skip
    right.set_xlim(0.5, slots + 1.6)
    right.set_xticks(range(1, slots + 1), [*(f"{b}{s}" for b in range(1, slots // 2 + 1)
                                            for s in "af"), "final"])  # fmt: skip
    right.set_xlabel("norm slot (block, a = attention input, f = FFN input)")
    right.set_ylabel(r"fraction with $|\alpha x + s| > 2$")
    right.set_title("saturated values after training, fresh data")
    pool = [statistics.fmean(ln["pool"]),
            *(statistics.fmean(runs[f"{m}, pool"]["final_loss"]["alpha 0.5, pool"])
              for m in ("DyT", "Derf"))]  # fmt: skip
    uniform = SyntheticLanguage().levels().uniform
    style.finding(
        fig,
        f"DyT minus LayerNorm: {found['DyT', 'pool'].mean:+.3f} nats on a small pool, "
        f"{found['DyT', 'fresh'].mean:+.3f} on fresh data; Derf {found['Derf', 'pool'].mean:+.3f}"
        f" / {found['Derf', 'fresh'].mean:+.3f} (means);\nbut on the pool every norm ends at "
        f"{min(pool):.1f}–{max(pool):.1f} nats, worse than uniform guessing ({uniform:.2f})",
    )
    methods = [style.method_handle(m, marker="o") for m in ("DyT", "Derf")]
    style.shared_legend(fig, axes=[left], extra=methods)
    return fig


@figure("dyt_data_rich", notebook=NOTEBOOK, experiment=ch10_analysis.dyt_data_rich)
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
    ax.axvline(150, color=style.REFERENCE, lw=1.0, ls=":", label="Y1 stops (150 steps)")
    ax.set_xlabel("training step (Adam 3e-3, fresh sequences)")
    ax.set_ylabel(f"training loss ({style.NATS_PER_TOKEN})")
    per_step = ch10_analysis.tokens_per_parameter(1)
    top = ax.secondary_xaxis("top", functions=(lambda k: k * per_step, lambda t: t / per_step))
    top.set_xlabel("tokens per parameter")
    pairs = zip(runs["DyT"], runs["LayerNorm"], strict=True)
    gap = statistics.fmean(d[-1] - n[-1] for d, n in pairs)  # the last 10 steps, per seed
    style.finding(
        fig,
        f"LayerNorm pulls away late: DyT ends {gap:.2f} nats behind at T/P "
        f"{ch10_analysis.tokens_per_parameter(steps[-1]):.2f}",
    )
    seeds = len(result.runs["DyT"]["seeds"])
    style.shared_legend(fig, extra=[style.band_handle(seeds, "mean over seeds")], ncols=2)
    return fig
