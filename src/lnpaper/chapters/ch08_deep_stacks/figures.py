"""Figures of notebook 08, deep stacks: A2 (Admin), D1 (DeepNorm), X1 (Mix-LN), L1 (LayerNorm
Scaling).

The schemes that change a Post-LN or Pre-LN stack keep its colour with a line style of their own
(Admin and DeepNorm are Post-LN's vermillion, dashed; LayerNorm Scaling Pre-LN's blue, dashed);
Mix-LN, half of each, has a violet of its own and is dash-dotted.
"""

import statistics

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from lnpaper import vocabulary
from lnpaper.chapters.ch06_transformer.figures import language_levels
from lnpaper.chapters.ch08_deep_stacks import runs as ch08_runs
from lnpaper.chapters.ch08_deep_stacks.analysis import growth_exponents, mean_dependence
from lnpaper.chapters.ch08_deep_stacks.runs import ARM_NAMES
from lnpaper.companion import style
from lnpaper.companion.chapter import figure

LOOKS = {  # arm -> (colour, line style, marker)
    "post": (style.METHOD_COLORS["Post-LN"], "-", "o"),
    "pre": (style.METHOD_COLORS["Pre-LN"], "-", "o"),
    "admin": (style.METHOD_COLORS["Post-LN"], "--", "s"),
    "deepnorm": (style.METHOD_COLORS["Post-LN"], "--", "s"),
    "mix": (style.METHOD_COLORS["Mix-LN"], "-.", "^"),
    "layer_scaling": (style.METHOD_COLORS["Pre-LN"], "--", "s"),
    # the arms a reader may add to a study: DeepNorm's halves, and Peri-LN (L1d's control)
    "deepnorm-alpha": (style.METHOD_COLORS["Post-LN"], ":", "D"),
    "deepnorm-beta": (style.METHOD_COLORS["Post-LN"], "-.", "v"),
    "peri": (style.METHOD_COLORS["Peri-LN"], "-", "o"),
}


def _line(ax, x, runs, arm, label=None, marker=True):
    color, line_style, mark = LOOKS[arm]
    line = style.band(ax, x, runs, color, label or ARM_NAMES[arm], line_style)
    if marker:
        line.set(marker=mark, ms=4)
    return line


def _each(values: dict, spec: str, prefix: str = "") -> str:
    """'Post-LN 0.52, Pre-LN 0.31': each arm's value as `spec` formats it, after `prefix`."""
    return ", ".join(f"{ARM_NAMES[arm]} {prefix}{value:{spec}}" for arm, value in values.items())


@figure("branch_dependence", experiment=ch08_runs.branch_dependence)
def branch_dependence(result) -> Figure:
    """A2 at initialization. Left: each model's mean over its sublayers of Var[f] / Var[s + f],
    the dependency on the residual branch, against the number of blocks. Right: the relative
    change of the stack's output when every weight matrix moves by 1% of its norm in a random
    direction. Lines: mean over seeds; bands: min to max."""
    fig = style.new_figure(2, 4.2)
    left, right = fig.subplots(1, 2)
    # Admin lies on Pre-LN: a wide line under Admin's thin dashes shows both
    widths = {"pre": {"lw": 5, "ms": 8, "zorder": 2}, "admin": {"lw": 1.5, "zorder": 3}}
    for arm in result.arms:
        dep = np.array(mean_dependence(result, arm)).T  # [seed][depth]
        change = np.array(result.output_change[arm]).T  # [seed][depth]
        lines = [_line(left, result.depths, dep, arm), _line(right, result.depths, change, arm)]
        for line in lines:
            line.set(**widths.get(arm, {}))
    for ax in (left, right):
        ax.set(xlabel="blocks L", xticks=result.depths)
    left.set_ylabel(r"mean $\mathrm{Var}[f] \,/\, \mathrm{Var}[s + f]$ over sublayers")
    left.set(ylim=(0, None), title="dependency on the residual branch, at init")
    right.set_ylabel(r"$\|F(W + \Delta W) - F(W)\| \,/\, \|F(W)\|$")
    right.set_title(rf"output change, $\|\Delta W\| = {result.perturbation:g}\, \|W\|$")
    fitted = ", ".join(f"{ARM_NAMES[arm]} {statistics.fmean(growth_exponents(result, arm)):.2f}"
                       for arm in result.arms)  # fmt: skip
    right.text(0.03, 0.97, f"exponent b of change ~ $L^b$ (mean of per-seed fits):\n{fitted}",
               transform=right.transAxes, va="top", color=style.REFERENCE)  # fmt: skip
    growth = {arm: statistics.fmean(result.output_change[arm][-1])
              / statistics.fmean(result.output_change[arm][0]) for arm in result.arms}  # fmt: skip
    deep = {arm: statistics.fmean(mean_dependence(result, arm)[-1]) for arm in result.arms}
    first, last = result.depths[0], result.depths[-1]
    others = [arm for arm in result.arms if arm != "post"]
    if "post" in deep and others and deep["post"] == max(deep.values()):
        text = (
            f"Post-LN leans on its branches (mean dependency {deep['post']:.2f} at $L = {last}$"
            + "".join(f", {ARM_NAMES[arm]} {deep[arm]:.2f}" for arm in others)
            + f");\nits output change {'grows' if growth['post'] > 1 else 'changes'} "
            f"×{growth['post']:.2f} from $L = {first}$ to {last}"
            + "".join(f", {ARM_NAMES[arm]}'s ×{growth[arm]:.2f}" for arm in others)
            + " (means)"
        )
    else:  # no Post-LN to lean most on its branches: the numbers alone
        text = (
            f"Mean dependency on the branches at $L = {last}$: {_each(deep, '.2f')};\noutput "
            f"change from $L = {first}$ to {last}: {_each(growth, '.2f', '×')} (means)"
        )
    style.finding(fig, text)
    style.shared_legend(fig, [left], extra=[style.band_handle(len(result.seeds), "mean")])
    return fig


@figure("deepnorm_update", experiment=ch08_runs.deepnorm_study)
def deepnorm_update(result) -> Figure:
    """D1, without warmup. Left: the model update of each of the first steps, the root mean
    square change of the logits on a fixed probe batch. Right: the training loss. Lines: mean
    over seeds; bands: min to max."""
    fig = style.new_figure(2, 4.2)
    left, right = fig.subplots(1, 2)
    steps = list(range(1, result.update_steps + 1))
    for arm in result.arms:
        updates = [u for u in result.model_update[arm] if None not in u]
        _line(left, steps, updates, arm, marker=False)
        curves = [c for c in result.train_loss[arm] if len(c) == len(result.logged_steps)]
        _line(right, result.logged_steps, curves, arm, marker=False)
    style.log_axis(left)
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.set(xlabel="step $t$", ylabel=r"RMS of $z_t - z_{t-1}$, logits $z$ (nats)")
    left.set_title("model update on a fixed probe batch")
    right.set(xlabel="step", ylabel=f"training loss, {style.NATS_PER_TOKEN}")
    right.set_title(f"{result.n_layers} blocks, Adam lr {result.lr:g}, no warmup")
    language_levels(right, result.levels, result.steps, room=1.18)
    peak = {arm: max(np.mean([u for u in result.model_update[arm] if None not in u], axis=0))
            for arm in result.arms}  # fmt: skip
    final = {arm: statistics.fmean(v for v in result.final_loss[arm] if v is not None)
             for arm in result.arms}  # fmt: skip
    seeds = f"(means of {len(result.seeds)} seeds)"
    if {"post", "deepnorm"} <= set(result.arms):
        smaller = "smaller" if peak["deepnorm"] < peak["post"] else "no smaller"
        trained = [vocabulary.trains(final[arm], result.levels) for arm in ("deepnorm", "post")]
        if trained == [True, False]:
            where = "trains where Post-LN stalls: held-out loss"
        else:
            where = "ends at a held-out loss of"
        text = (
            rf"DeepNorm ($\alpha$ = {result.alpha:.2f}, $\beta$ = {result.beta:.2f}) keeps the "
            f"first updates {smaller} (largest {peak['deepnorm']:.2g} vs {peak['post']:.2g})\nand "
            f"{where} {final['deepnorm']:.2f} vs {final['post']:.2f} nats {seeds}"
        )
    else:  # the arms a reader chose: each one's numbers
        text = (
            f"Largest update of the first steps: {_each(peak, '.2g')};\nheld-out loss: "
            f"{_each(final, '.2f')} nats {seeds}"
        )
    style.finding(fig, text)
    style.shared_legend(fig, [left], extra=[style.band_handle(len(result.seeds), "mean")])
    return fig


@figure("gradient_profile", experiment=ch08_runs.gradient_profile)
def gradient_profile(result) -> Figure:
    """X1: each block's gradient norm ||dL/dtheta_l|| on 64 held-out sequences, at init (left)
    and after the first Adam steps (right). Lines: geometric mean over seeds; bands: min to max."""
    fig = style.new_figure(2, 4.2)
    panels = fig.subplots(1, 2, sharey=True)
    blocks = list(range(1, result.n_layers + 1))
    when = (("grad_norm_init", "at init"),
            ("grad_norm_trained", f"after {result.steps} steps, Adam lr {result.lr:g}"))  # fmt: skip
    for ax, (key, title) in zip(panels, when, strict=True):
        for arm in result.arms:
            runs = np.array(getattr(result, key)[arm])
            _line(ax, blocks, runs, arm).set_ydata(np.exp(np.log(runs).mean(0)))
        ax.axvline(result.n_post + 0.5, color=style.REFERENCE, lw=1.0, ls=":")
        ax.set(xlabel="block l", title=title)
    every = [v for key, _ in when for runs in getattr(result, key).values() for p in runs
             for v in p]  # fmt: skip
    panels[0].set_ylim(min(every) / 1.5, max(every) * 1.5)
    style.log_axis(panels[0])
    panels[0].set_ylabel(r"$\|\partial L / \partial \theta_l\|$")
    panels[0].text(result.n_post + 0.6, 0.02, f"Mix-LN: Post-LN up to block {result.n_post}",
                   transform=panels[0].get_xaxis_transform(), color=style.REFERENCE,
                   size=style.MIN_FONT_SIZE)  # fmt: skip

    def ratio(arm):  # geometric mean over seeds of max / min over blocks, after training
        return statistics.geometric_mean(max(p) / min(p) for p in result.grad_norm_trained[arm])

    def profile(arm):  # the trained gradient of the first and the last block, geometric means
        runs = np.array(result.grad_norm_trained[arm])
        return np.exp(np.log(runs).mean(0))[[0, -1]]

    ratios = (f"max/min over blocks after {result.steps} steps: "
              + ", ".join(f"{ARM_NAMES[arm]} {ratio(arm):.1f}" for arm in result.arms)
              + f"; {len(result.seeds)} seeds")  # fmt: skip
    story = False
    if {"post", "pre", "mix"} <= set(result.arms):
        (post_first, post_last), (pre_first, pre_last) = profile("post"), profile("pre")
        story = (pre_last < pre_first and post_first < post_last
                 and ratio("mix") < ratio("post") and ratio("mix") > ratio("pre"))  # fmt: skip
    if story:
        text = ("Pre-LN's deep blocks and Post-LN's early ones get the smaller gradients; Mix-LN "
                f"evens out Post-LN's,\nnot Pre-LN's ({ratios})")  # fmt: skip
    else:  # the numbers alone
        text = f"Block gradients, {ratios}"
    style.finding(fig, text)
    style.shared_legend(fig, [panels[0]],
                        extra=[style.band_handle(len(result.seeds), "geometric mean")])  # fmt: skip
    return fig


@figure("layer_scaling", experiment=ch08_runs.layer_scaling_study)
def layer_scaling(result) -> Figure:
    """L1, after training (thin dotted: at init, mean over seeds): per block l, the variance of the
    stream it outputs, the angular distance between its input and output, and the rise of the
    held-out loss when it alone is skipped. Lines: mean over seeds; bands: min to max."""
    fig = style.new_figure(3, 7.0)
    panels = style.three_panels(fig)
    blocks = list(range(1, result.n_layers + 1))
    measures = (  # key, y label, title
        ("variance", "Var of the stream after block l", "stream variance"),
        ("angle", "angular distance, input to output", "how far a block turns its input"),
        ("skip_loss", f"loss rise when skipped, {style.NATS_PER_TOKEN}",
         "what a block is worth (held-out)"),
    )  # fmt: skip
    for ax, (key, label, title) in zip(panels, measures, strict=True):
        for arm in result.arms:
            _line(ax, blocks, getattr(result, f"{key}_trained")[arm], arm)
            init = np.array(getattr(result, f"{key}_init")[arm]).mean(0)
            colour, _, mark = LOOKS[arm]  # the arm's marker, hollow: the two init lines apart
            ax.plot(blocks, init, ":", color=colour, lw=1.0, marker=mark, ms=5, mfc="white")
        ax.set(xlabel="block l", ylabel=label, title=title)
    style.log_axis(panels[0])
    last = {arm: statistics.fmean(v[-1] for v in result.variance_trained[arm])
            for arm in result.arms}  # fmt: skip
    half = result.n_layers // 2
    worth = {arm: statistics.fmean(statistics.fmean(v[half:])
                                   for v in result.skip_loss_trained[arm])
             for arm in result.arms}  # fmt: skip
    panels[2].text(0.98, 0.95, f"blocks {half + 1}-{result.n_layers}, mean:\n{_each(worth, '.3f')}",
                   transform=panels[2].transAxes, ha="right", va="top",
                   color=style.REFERENCE)  # fmt: skip
    seeds = f"(mean of {len(result.seeds)} seeds)"
    if {"pre", "layer_scaling"} <= set(result.arms):
        text = (
            rf"After {result.steps} steps, $1/\sqrt{{l}}$ on Pre-LN's norms: last stream's variance "
            rf"{last['pre']:.3g} $\to$ {last['layer_scaling']:.3g};"
            "\n"
            rf"the deeper half's blocks worth {worth['pre']:.3f} $\to$ "
            f"{worth['layer_scaling']:.3f} nats each when skipped {seeds}"
        )
    else:  # the arms a reader chose: each one's numbers
        text = (
            f"After {result.steps} steps, last stream's variance: {_each(last, '.3g')};\nthe "
            f"deeper half's blocks worth, when skipped: {_each(worth, '.3f')} nats each {seeds}"
        )
    style.finding(fig, text)
    init_handle = Line2D([], [], color=style.REFERENCE, ls=":", lw=1.0, marker="o", ms=5,
                         mfc="white", label="at init (mean; hollow markers)")  # fmt: skip
    style.shared_legend(fig, [panels[0]],
                        extra=[init_handle, style.band_handle(len(result.seeds), "mean")])  # fmt: skip
    return fig
