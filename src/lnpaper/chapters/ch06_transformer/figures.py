"""Figures of notebook 06, the Transformer."""

import math
import statistics

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lnpaper import vocabulary
from lnpaper.chapters.ch06_transformer import analysis as ch06_analysis
from lnpaper.chapters.ch06_transformer import runs as ch06_runs
from lnpaper.chapters.ch06_transformer.claims import check_t2
from lnpaper.companion import style
from lnpaper.companion.chapter import figure
from lnpaper.companion.verdicts import REPRODUCED

WARMUP, NO_WARMUP = "--", "-"  # warmup is a line style, never a hue


@figure("grad_norm_vs_depth", experiment=ch06_analysis.xiong_setting)
def grad_norm_vs_depth(result) -> Figure:
    """T1: the Frobenius norm of the gradient of the last block's second FFN matrix at
    initialization, against the number of blocks L, for Post-LN and Pre-LN in Xiong et al.'s setting
    (one head, zero query and key matrices, d = 128, Gaussian inputs): mean and sd over 40 seeds.
    Dotted: Pre-LN's value at 6 blocks scaled by the square root of 6/L, the scaling of its bound."""
    fig = style.new_figure(1, 4.2)
    ax = fig.subplots()
    for run in (result.post, result.pre):
        grads = np.array(run["grad_norm"])  # [depth][seed]
        ax.errorbar(run["depths"], grads.mean(1), yerr=grads.std(1, ddof=1), marker="o",
                    capsize=3, color=style.color(run["placement"]))  # fmt: skip
    depths = np.array(result.pre["depths"])
    first = result.pre["mean_grad_norm"][0]
    (scaled,) = ax.plot(depths, first * np.sqrt(depths[0] / depths), ":", color=style.REFERENCE,
                        lw=1.2, label=rf"$\sqrt{{{depths[0]}/L}}$ times Pre-LN at $L = {depths[0]}$")  # fmt: skip
    ax.set_xticks(depths)
    ax.set_xlabel("number of blocks $L$")
    ax.set_ylabel(r"$\|\partial L/\partial W^{(2)}\|_F$ of the last block")
    ax.set_ylim(bottom=0)
    seeds = len(result.post["seeds"])
    ax.set_title(rf"$d = {result.post['d_model']}$, $W^Q = W^K = 0$; mean $\pm$ sd over {seeds} "
                 "seeds")  # fmt: skip
    post, pre = result.post["ratio_last_to_first"], result.pre["ratio_last_to_first"]
    falls = "falls" if pre < 1 else "does not fall"
    post_too = "does too" if (post < 1) == (pre < 1) else "does not"
    style.finding(fig, f"At init, Pre-LN's gradient {falls} with depth (x{pre:.2f}, {depths[0]} to "
                  f"{depths[-1]} blocks);\nPost-LN's {post_too} (x{post:.2f})")  # fmt: skip
    placements = [style.method_handle(style.display(run["placement"]), "o") for run in (result.post,
                  result.pre)]  # fmt: skip
    style.shared_legend(fig, [], extra=[*placements, scaled], ncols=3)
    return fig


@figure("residual_norms_vs_lemma2", experiment=ch06_analysis.xiong_setting)
def residual_norms_vs_lemma2(result) -> Figure:
    """T2: the mean square of the residual stream per unit at initialization, in the 14-block
    models of `grad_norm_vs_depth` (mean over tokens and 40 seeds), against Xiong et al.'s Lemma 2
    (dotted). Left, Post-LN: the sum x + FFN(x) that enters each block's second LayerNorm (Lemma 2:
    3/2). Right, Pre-LN: the stream after l blocks, l = 0 being the embedding (Lemma 2: between
    1 + l/2 and 1 + 3l/2)."""
    fig = style.new_figure(2, 4.0)
    left, right = fig.subplots(1, 2)
    post, pre = result.post, result.pre
    left.plot(post["layers"], post["residual_sq_norm"], "o-", color=style.color("Post-LN"),
              label="Post-LN")  # fmt: skip
    left.set_ylim(0, 2.5)
    # the measurement lies on the level, so its label goes below the line rather than above it
    left.axhline(1.5, color=style.REFERENCE, lw=1.2, ls=":", zorder=1)
    left.annotate("Lemma 2: 3/2", (1, 1.5), xycoords=left.get_yaxis_transform(), xytext=(-4, -8),
                  textcoords="offset points", ha="right", va="top", color=style.REFERENCE)  # fmt: skip
    left.set_title(r"Post-LN: $x + \mathrm{FFN}(x)$ before the second LayerNorm")
    left.set(xlabel="block $l$", ylabel=r"$\mathbb{E}\,\|x^{\mathrm{post},5}\|^2/d$")
    layers = np.array(pre["layers"])
    lower, upper = 1 + layers / 2, 1 + 1.5 * layers
    right.fill_between(layers, lower, upper, color=style.REFERENCE, alpha=0.08, lw=0)
    for bound, text in ((upper, "$1 + 3l/2$"), (lower, "$1 + l/2$")):
        right.plot(layers, bound, ":", color=style.REFERENCE, lw=1.2)
        right.annotate(text, (layers[-1], bound[-1]), xytext=(4, 0), textcoords="offset points",
                       va="center", color=style.REFERENCE)  # fmt: skip
    right.plot(layers, pre["residual_sq_norm"], "o-", color=style.color("Pre-LN"), label="Pre-LN")
    right.set_xlim(right=layers[-1] + 2.5)  # room for the bounds' labels
    right.set_title("Pre-LN: the residual stream after $l$ blocks")
    right.set(xlabel="blocks passed $l$ (0 = embedding)", ylabel=r"$\mathbb{E}\,\|x_l\|^2/d$")
    low, high = min(post["residual_sq_norm"]), max(post["residual_sq_norm"])
    per_block = (pre["residual_sq_norm"][-1] - pre["residual_sq_norm"][0]) / layers[-1]
    holds = "holds" if check_t2(result).verdict == REPRODUCED else "does not hold"
    style.finding(fig, f"Lemma 2 {holds} at init: Post-LN's sum stays at {low:.2f}-{high:.2f}, and "
                  f"Pre-LN's stream grows {per_block:.2f} per block")  # fmt: skip
    lemma = Line2D([], [], color=style.REFERENCE, ls=":", lw=1.2, label="Lemma 2 (Xiong et al.)")
    style.shared_legend(fig, extra=[lemma], ncols=3)
    return fig


def _curves(ax, run, color, ls):
    """The median over seeds and the min-to-max band, over the steps every seed reached; a seed
    that stopped early (its loss not finite) goes on alone as a thin line, to a cross where it
    stopped."""
    steps = np.array(run["steps"])
    common = min(len(curve) for curve in run["train_loss"])
    if common:
        losses = np.array([curve[:common] for curve in run["train_loss"]])
        ax.fill_between(steps[:common], losses.min(0), losses.max(0), color=color, alpha=0.18, lw=0)
        ax.plot(steps[:common], np.median(losses, 0), ls, color=color, lw=2)
    for curve, diverged in zip(run["train_loss"], run["diverged_at"], strict=True):
        if len(curve) > common:
            ax.plot(steps[: len(curve)], curve, ls, color=color, lw=0.8)
        if diverged is not None:
            ax.plot([diverged], [curve[-1] if curve else run["initial_loss"][0]], "x",
                    color=color, ms=9, mew=2)  # fmt: skip


def language_levels(ax, levels: dict, last_step: int, *marks, room: float = 1.16) -> None:
    """The language's unigram and bigram levels and any other `marks` [(y, text)], labelled to the
    right of the last step, where no curve runs; after the y limits are set. Notebooks 07 and 08
    draw them too."""
    ax.set_xlim(0, last_step * room)
    style.levels(ax, [(levels["unigram"], "unigram"), (levels["bigram"], "bigram"), *marks])


def _study_figure(runs, lines, log=False) -> Figure:
    """Training curves of a study: `lines` is [(run name, method, line style)]."""
    fig = style.new_figure(1, 4.4)
    ax = fig.subplots()
    for name, method, ls in lines:
        _curves(ax, runs[name], style.color(method), ls)
    first = runs[lines[0][0]]
    if log:
        style.log_axis(ax, "y")
        ax.set_ylim(0.8, ax.get_ylim()[1])  # down to the entropy floor; fixed before the levels
    else:
        ax.set_ylim(0.8, 3.3)
    language_levels(ax, first["levels"], first["steps"][-1], (first["floor"], "entropy floor"))
    ax.set_title(f"{first['n_layers']} layers, $d = 64$, Adam lr {first['lr']:g}, "
                 f"{first['steps'][-1]} steps")  # fmt: skip
    ax.set(xlabel="step", ylabel=f"training loss, {style.NATS_PER_TOKEN}")
    return fig


def _median_final(run) -> float:
    """The median over seeds of the held-out loss after training; a diverged run counts as
    infinite."""
    return statistics.median(math.inf if v is None else v for v in run["final_loss"])


def _fate(run, trained: str = "trains, to {:.2f}") -> str:
    """Where a run's median held-out loss ends: below the bigram level it trains
    (`lnpaper.vocabulary`), else it ends near the nearest of the language's levels, or diverged."""
    final, levels = _median_final(run), run["levels"]
    if not math.isfinite(final):
        return "diverges"
    if vocabulary.trains(final, levels):
        return trained.format(final)
    nearest = min(("uniform", "unigram", "bigram"), key=lambda level: abs(levels[level] - final))
    return f"ends near the {nearest} level ({final:.2f} nats)"


def _study_legend(fig, runs, lines, methods, seeds: int, ncols: int) -> None:
    """The legend of a study's curves: its methods, the two line styles with the warmup's length,
    and what the bands are."""
    warmup = max(runs[name]["warmup_steps"] for name, _, _ in lines)
    extra = [*(style.method_handle(method) for method in methods),
             style.style_handle(NO_WARMUP, "no warmup"),
             style.style_handle(WARMUP, f"linear warmup, {warmup} steps"),
             style.band_handle(seeds, "median")]  # fmt: skip
    style.shared_legend(fig, ncols=ncols, extra=extra)


def _nats(loss: float) -> str:
    """A held-out loss as the title gives it: 2.44 to two decimals, 41 (a loss far above the
    levels, of a model that blew up) whole, inf for a diverged median."""
    return f"{loss:.0f}" if loss >= 10 else f"{loss:.2f}"


@figure("warmup_curves", experiment=ch06_analysis.normalization_study)
def warmup_curves(result) -> Figure:
    """T3: the training loss of Post-LN and Pre-LN with and without linear warmup (the median over
    seeds, and the band from the lowest to the highest seed), against the language's unigram and
    bigram levels and the entropy floor."""
    lines = [
        ("Post-LN, no warmup", "Post-LN", NO_WARMUP),
        ("Post-LN, warmup", "Post-LN", WARMUP),
        ("Pre-LN, no warmup", "Pre-LN", NO_WARMUP),
        ("Pre-LN, warmup", "Pre-LN", WARMUP),
    ]
    runs = result.runs
    fig = _study_figure(runs, lines)
    cold, warm = runs["Post-LN, no warmup"], runs["Post-LN, warmup"]
    pre = [_fate(runs[name]) for name in ("Pre-LN, no warmup", "Pre-LN, warmup")]
    if all(fate.startswith("trains") for fate in pre):
        pre_ln = "trains either way"
    else:
        pre_ln = f"{pre[0]} without warmup and {pre[1]} with it"
    style.finding(fig, f"Without warmup Post-LN {_fate(cold)};\nwith warmup it {_fate(warm)}, and "
                  f"Pre-LN {pre_ln}")  # fmt: skip
    _study_legend(fig, runs, lines, ("Post-LN", "Pre-LN"), len(cold["seeds"]), ncols=2)
    return fig


@figure("without_normalization", experiment=ch06_analysis.normalization_study)
def without_normalization(result) -> Figure:
    """T4, T6: the training loss of the Pre-LN model, of the same model with every norm replaced
    by the identity (with and without linear warmup) and with DyT in every norm slot: the median
    over seeds and the band from the lowest to the highest seed, on a log scale."""
    lines = [
        ("Pre-LN, no warmup", "Pre-LN", NO_WARMUP),
        ("Pre-DyT, no warmup", "Pre-DyT", NO_WARMUP),
        ("no norm (identity), no warmup", "no norm", NO_WARMUP),
        ("no norm (identity), warmup", "no norm", WARMUP),
    ]
    runs = result.runs
    fig = _study_figure(runs, lines, log=True)
    cold, warm = runs["no norm (identity), no warmup"], runs["no norm (identity), warmup"]
    pre, dyt = runs["Pre-LN, no warmup"], runs["Pre-DyT, no warmup"]
    warm_end, normed = _median_final(warm), (_median_final(pre), _median_final(dyt))
    side = ("behind" if warm_end > max(normed) else "ahead of" if warm_end < min(normed)
            else "between")  # fmt: skip
    style.finding(fig, f"Without a norm the loss ends at {_nats(_median_final(cold))} nats "
                  f"(median);\nwith warmup at {_nats(warm_end)}, {side} Pre-LN's "
                  f"{_nats(normed[0])} and DyT's {_nats(normed[1])}")  # fmt: skip
    methods = ("Pre-LN", "Pre-DyT", "no norm (identity)")
    _study_legend(fig, runs, lines, methods, len(cold["seeds"]), ncols=3)
    return fig


@figure("tfixup_curves", experiment=ch06_analysis.tfixup_study)
def tfixup_curves(result) -> Figure:
    """T5: a deeper model with no norm and no warmup, Xavier initialization against T-Fixup's.
    T-Fixup's training loss: the median over seeds and the band from the lowest to the highest
    seed. Xavier's runs leave the scale from their first logged step. A run whose loss stops being
    finite gets a marker at the top edge at that step; one that stays finite (on another CPU the
    same run may do either) is counted in the annotation with its final held-out loss."""
    xavier, fixup = result.runs.values()
    fig = style.new_figure(1, 4.4)
    ax = fig.subplots()
    _curves(ax, fixup, style.color("T-Fixup"), "-")
    top = 4.0
    ax.set_ylim(0.8, top)
    language_levels(ax, fixup["levels"], fixup["steps"][-1], (fixup["floor"], "entropy floor"))
    xavier_color = style.color("Xavier")
    # Xavier's runs either stop being finite (a marker at the top edge at that step) or end finite
    # far above the plot; which one depends on the last bits of the numeric path (notebook 06)
    stops = [step for step in xavier["diverged_at"] if step is not None]
    ends = [v for v in xavier["final_loss"] if v is not None]
    fates = []
    if stops:  # an empty marker line would still claim a bounding box at the origin
        ax.plot(stops, [top] * len(stops), "^", color=xavier_color, ms=9, clip_on=False, zorder=3)
        fates.append(f"{len(stops)} not finite by step {max(stops)}")
    logged = [v for curve in xavier["train_loss"] for v in curve]
    if ends:
        fates.append(f"{len(ends)} finite, ending at {min(ends):,.0f} to {max(ends):,.0f}")
    where = max(stops) if stops else xavier["steps"][0]
    ax.annotate(f"Xavier: losses of {min(logged):,.0f} to {max(logged):,.0f} nats per token;\n"
                + "; ".join(fates), (where, top), xytext=(10, -6), textcoords="offset points",
                va="top", color=style.REFERENCE)  # fmt: skip
    seeds = len(fixup["seeds"])
    ax.set_title(f"{fixup['n_layers']} layers, no norm, no warmup, Adam lr {fixup['lr']:g}, "
                 f"{seeds} seeds", pad=12)  # fmt: skip
    ax.set(xlabel="step", ylabel=f"training loss, {style.NATS_PER_TOKEN}")
    unigram = xavier["levels"]["unigram"]
    stuck = [v for v in ends if v > unigram]
    failed = len(stops) + len(stuck)
    xavier_text = f"all {seeds}" if failed == seeds else f"{failed} of {seeds}"
    how = ([f"{len(stops)} diverge"] if stops else []) + (
        [f"{len(stuck)} end at {min(stuck):,.0f} nats or more"] if stuck else []
    )
    layers = f"{fixup['n_layers']} layers without a norm or warmup"
    fixup_fate = _fate(fixup, f"trains {layers}, to {{:.2f}} nats")
    if not fixup_fate.startswith("trains"):
        fixup_fate = f"{fixup_fate} with {layers}"
    xavier_fate = (f"{xavier_text} seeds fail: " + ", ".join(how) if failed
                   else f"none of {seeds} seeds fails")  # fmt: skip
    style.finding(fig, f"T-Fixup {fixup_fate};\nwith Xavier init {xavier_fate}")
    extra = [style.method_handle("T-Fixup"), style.band_handle(seeds, "median")]
    if stops:
        extra.append(Line2D([], [], color=xavier_color, ls="none", marker="^", ms=9,
                            label="Xavier: not finite from this step"))  # fmt: skip
    style.shared_legend(fig, ncols=len(extra), extra=extra)
    return fig


SMOOTHNESS_PANELS = {
    "loss_range": ("Loss variation along a step",
                   r"range of $L(w - \eta g)$ over $\eta$, " + style.NATS_PER_IMAGE),
    "grad_change": ("Gradient change along a step",
                    r"$\mathrm{max}_\eta\, \|g(w - \eta g) - g(w)\| \,/\, \|g(w)\|$"),
    "beta_smoothness": (r"Effective $\beta$-smoothness",
                        r"$\mathrm{max}_\eta\, \|g(w - \eta g) - g(w)\| \,/\, \|\eta g(w)\|$"),
}  # fmt: skip


@figure("loss_smoothness", experiment=ch06_runs.loss_smoothness)
def loss_smoothness(result) -> Figure:
    """T7, after Santurkar et al.'s Fig. 4: notebook 01's MLP on digits with no norm, BatchNorm or
    LayerNorm before each ReLU, trained with plain SGD; at step 0 and at the first step at which
    the loss on one fixed batch reaches 1, 0.5, 0.2 and 0.1, steps of 0.5 to 4 times the learning
    rate along the gradient g from the weights w, on that batch, measure how far the loss and the
    gradient move (large: a rough landscape). Plotted against training progress, so that each
    normalizer is compared at the same loss, as near a minimum as the others, and apart at step 0.
    The loss variation, which the title quotes, is the large panel. Lines: the geometric mean over
    seeds; bands: the lowest to the highest seed. The title's ratios are of geometric means over
    the matched-loss points (step 0 apart), over the seeds."""
    fig = style.new_figure(3, 7.0)
    axes = fig.subplot_mosaic([["loss_range", "grad_change"], ["loss_range", "beta_smoothness"]],
                              width_ratios=[1.25, 1], sharex=True)  # fmt: skip
    seeds = len(result.seeds)
    progress = np.arange(1 + len(result.loss_levels))  # step 0, then each loss level reached
    for key, (title, ylabel) in SMOOTHNESS_PANELS.items():
        ax = axes[key]
        offsets = np.linspace(-0.12, 0.12, len(result.norms)) if len(result.norms) > 1 else [0.0]
        for offset, norm in zip(offsets, result.norms, strict=True):
            values = np.array(getattr(result, key)[norm], dtype=float)  # [seed][point]
            colour = style.color(norm)
            centre = np.exp(np.log(values).mean(0))
            # step 0 stands apart, unjoined and side by side: not a matched loss but a fresh
            # initialization
            ax.plot([offset], centre[:1], "o", color=colour, ms=5)
            ax.vlines([offset], values[:, 0].min(), values[:, 0].max(), color=colour, lw=5,
                      alpha=0.25)  # fmt: skip
            levels = slice(1, None)
            ax.fill_between(progress[levels], values[:, levels].min(0), values[:, levels].max(0),
                            color=colour, alpha=0.18, lw=0)  # fmt: skip
            ax.plot(progress[levels], centre[levels], "o-", color=colour, lw=2.2, ms=5,
                    label=style.display(norm))  # fmt: skip
        style.log_axis(ax, "y")
        ax.set(title=title, ylabel=ylabel)
        style.vertical_mark(ax, 0.5, "matched loss")
        ax.set_xticks(progress, ["step 0", *(f"{level:g}" for level in result.loss_levels)])
        ax.tick_params(labelbottom=True)
    for key in ("loss_range", "beta_smoothness"):
        axes[key].set_xlabel(f"training progress: loss reached, {style.NATS_PER_IMAGE}")
    logs = ch06_analysis.smoothness_log_means(result)
    # geometric means over the matched-loss points: `logs` holds the logs
    matched = {key: {norm: math.exp(statistics.fmean(logs[key][norm])) for norm in result.norms}
               for key in SMOOTHNESS_PANELS}  # fmt: skip
    smoothest = [min(by_norm, key=by_norm.get) for by_norm in matched.values()]
    roughest = [max(by_norm, key=by_norm.get) for by_norm in matched.values()]
    smooth_norm = max(result.norms, key=smoothest.count)
    rough_norm = max(result.norms, key=roughest.count)

    def how_many(count: int) -> str:
        return "all 3" if count == len(SMOOTHNESS_PANELS) else f"{count} of 3"

    def over(norm: str) -> str:
        ratio = matched["loss_range"][norm] / matched["loss_range"][smooth_norm]
        return f"{ratio:.1f}×"

    others = [norm for norm in result.norms if norm not in (smooth_norm, rough_norm)]
    style.finding(fig, f"At matched loss {style.display(smooth_norm)} is the smoothest on "
                  f"{how_many(smoothest.count(smooth_norm))} measures, {style.display(rough_norm)} "
                  f"the roughest on {how_many(roughest.count(rough_norm))}:\nalong a step "
                  f"{style.display(rough_norm)}'s loss varies {over(rough_norm)} as much as "
                  f"{style.display(smooth_norm)}'s"
                  + "".join(f", {style.display(norm)}'s {over(norm)}" for norm in others))  # fmt: skip
    style.shared_legend(fig, [axes["loss_range"]], ncols=4,
                        extra=[style.band_handle(seeds, "geometric mean")])  # fmt: skip
    return fig
