"""Figures of notebook 01, why BatchNorm fails for sequence models."""

from typing import NamedTuple

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from lnpaper.chapters.ch01_why_batchnorm_fails import analysis
from lnpaper.chapters.ch01_why_batchnorm_fails import runs as ch01_runs
from lnpaper.chapters.ch01_why_batchnorm_fails.analysis import m4_summary
from lnpaper.chapters.ch01_why_batchnorm_fails.claims import (
    M5_LAST_EPOCHS,
    M5_PAPER_BN,
    m5_differences,
    m5_late,
)
from lnpaper.companion import style
from lnpaper.companion.chapter import figure

BN_COLOR, LN_COLOR = style.color("BatchNorm"), style.color("LayerNorm")
STUDENT_COLOR, OTHERS_COLOR = style.BLACK, style.GREY  # people, not methods
FONT = style.MIN_FONT_SIZE

# ---- exam_rulers -------------------------------------------------------------------------------


def _ruler(ax, mean: float, sd: float, y: float, color: str, hatch: str | None = None) -> None:
    """A ruler under a number line: its zero at `mean`, one mark per `sd`, from -2 to +2."""
    left, right = mean - 2.4 * sd, mean + 2.4 * sd
    ruler = Rectangle((left, y - 0.24), right - left, 0.26, fc=color, ec=color, alpha=0.35,
                      hatch=hatch)  # fmt: skip
    ax.add_patch(ruler)
    for z in range(-2, 3):
        ax.plot([mean + z * sd] * 2, [y + 0.02, y - 0.08], color=style.BLACK, lw=1)
        mark = f"{z:+d}" if z else "0"
        ax.text(mean + z * sd, y - 0.17, mark, ha="center", va="center", size=FONT)


def _grade_row(ax, y, title, others, score, ruler, ruler_color, hatch=None) -> float:
    """One occasion: a number line of scores, the ruler (mean, sd) used, and the grade it gives,
    which it returns."""
    grade = (score - ruler[0]) / ruler[1]
    ax.plot([20, 100], [y + 0.25, y + 0.25], color=OTHERS_COLOR, lw=1)
    ax.scatter(others, [y + 0.25] * len(others), s=36, color=OTHERS_COLOR, zorder=3)
    ax.scatter([score], [y + 0.25], s=140, marker="*", color=STUDENT_COLOR, zorder=4)
    ax.plot([score, score], [y + 0.25, y - 0.1], ls="--", lw=1.2, color=STUDENT_COLOR, zorder=4)
    _ruler(ax, *ruler, y, ruler_color, hatch)
    ax.text(20, y + 0.5, title, size=FONT, weight="bold")
    ax.text(102, y + 0.25, f"{grade:+.1f}", va="center", size=10, color=STUDENT_COLOR,
            weight="bold")  # fmt: skip
    return grade


@figure("exam_rulers")
def exam_rulers() -> Figure:
    """The exam-grading picture: BatchNorm grades a score against the class that sat the exam with
    it (training) or against a stored average ruler (inference); LayerNorm grades each student
    against a ruler made from that student's own scores. Ruler marks are standard deviations from
    the ruler's mean."""
    fig = style.new_figure(2, 5.0)
    left, right = fig.subplots(1, 2)
    ana = 72.0  # Ana's maths score, the same on every occasion
    classes = {"A": [50.0, 58.0, 61.0, 66.0], "B": [78.0, 80.0, 85.0, 91.0]}
    batchnorm_grades, layernorm_grades = [], {}
    for y, (name, mates) in zip((2.0, 1.0), classes.items(), strict=True):
        ruler = (np.mean([*mates, ana]), np.std([*mates, ana]))
        title = f"Training, class {name}: today's class is the ruler"
        batchnorm_grades.append(_grade_row(left, y, title, mates, ana, ruler, BN_COLOR))
    stored = (70.0, 12.0)  # the running average over every class of the term
    title = "Inference: a stored ruler, averaged over past classes"
    batchnorm_grades.append(_grade_row(left, 0.0, title, [], ana, stored, BN_COLOR, "//"))
    left.set_title("BatchNorm: Ana's grade depends on her class", loc="left")

    subjects = {"Ana": [72.0, 65.0, 88.0, 80.0, 90.0], "Ben": [55.0, 40.0, 48.0, 60.0, 52.0]}
    for y, (name, scores) in zip((2.0, 1.0), subjects.items(), strict=True):
        ruler = (np.mean(scores), np.std(scores))
        title = f"{name}'s scores in 5 subjects: {name} is the ruler"
        layernorm_grades[name] = _grade_row(right, y, title, scores[1:], scores[0], ruler, LN_COLOR)
    note = (
        "Each student carries one ruler, made from their own scores:\n"
        "in class A, in class B or at the end of term,\nthe same ruler gives the same grade."
    )
    right.text(20, 0.3, note, size=10, va="center")
    right.set_title("LayerNorm: one ruler per student, always", loc="left")
    for ax in (left, right):
        ax.set(xlim=(18, 110), ylim=(-0.45, 2.75), yticks=[], xticks=[20, 40, 60, 80, 100])
        ax.grid(False)
        ax.spines["left"].set_visible(False)
        ax.set_xlabel("score (for a network: a summed input)")
    grades = ", ".join(f"{grade:+.1f}" for grade in batchnorm_grades)
    style.finding(fig, f"BatchNorm grades Ana's 72 as {grades} by class and occasion; LayerNorm "
                  f"always as {layernorm_grades['Ana']:+.1f}")  # fmt: skip
    extra = [
        Line2D([], [], color=STUDENT_COLOR, marker="*", ms=12, ls="", label="maths score"),
        Line2D([], [], color=OTHERS_COLOR, marker="o", ls="", label="classmates or subjects"),
        Patch(fc=BN_COLOR, alpha=0.35, label="BatchNorm, training: the batch's ruler"),
        Patch(fc=BN_COLOR, alpha=0.35, hatch="//", label="BatchNorm, inference: a stored ruler"),
        Patch(fc=LN_COLOR, alpha=0.35, label="LayerNorm: the example's own ruler"),
    ]
    style.shared_legend(fig, extra=extra, ncols=3)
    return fig


# ---- M1-M3 -------------------------------------------------------------------------------------


def _batch_size_axis(ax, sizes) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(size) for size in sizes])
    ax.set_xlabel("batch size")


@figure("batch_dependence", experiment=ch01_runs.batch_dependence)
def batch_dependence(result) -> Figure:
    """How noisy BatchNorm's statistics are as the batch shrinks, and what that does to the
    output of one fixed example. Left: over 200 random batches of each size, the sd of a unit's
    batch mean (relative to the unit's sd over the training split) and of its batch variance
    (relative to that variance), averaged over the 64 units of a fresh linear layer on the digits.
    Right: the sd of one training image's training-mode BatchNorm output over 200 random sets of
    batch-mates (BatchNorm refuses a batch of 1). LayerNorm's output uses no batch statistics, so
    its sd is exactly 0 at every size (measured: 0 between two batches of 8); a log axis has no 0,
    so it has a strip of its own below the break."""
    sizes = np.array(result.batch_sizes)
    fig = style.new_figure(2, 4.2)
    grid = fig.add_gridspec(2, 2, height_ratios=[9, 1], hspace=0.0)
    statistics_ax = fig.add_subplot(grid[:, 0])
    output_ax = fig.add_subplot(grid[0, 1])
    zero_ax = fig.add_subplot(grid[1, 1], sharex=output_ax)
    positive = sizes >= 2  # the variance of one value is exactly 0: not on a log axis
    variance_spread = np.array(result.variance_spread)
    statistics_ax.plot(sizes, result.mean_spread, "o-", color=style.BLACK,
                       label="batch mean, in population sd")  # fmt: skip
    statistics_ax.plot(sizes[positive], variance_spread[positive], "s--", color=style.BLACK,
                       label="batch variance, in population variance")  # fmt: skip
    statistics_ax.plot(sizes, 1 / np.sqrt(sizes), ":", color=style.REFERENCE,
                       label=r"$1/\sqrt{\mathrm{batch\ size}}$")  # fmt: skip
    if sizes[0] == 1:  # a batch of one, when the sizes start there
        statistics_ax.annotate("batch of 1: the mean is the\nexample, the variance is 0",
                               (1, result.mean_spread[0]), xytext=(1, 0.12), size=FONT,
                               arrowprops={"arrowstyle": "->", "color": style.REFERENCE})  # fmt: skip
    statistics_ax.set_title(f"Per-unit batch statistics ({result.width} units)")
    statistics_ax.set_ylabel("sd over random batches (relative)")

    output_spread = np.array(result.output_spread, dtype=float)
    output_ax.plot(sizes[positive], output_spread[positive], "o-", color=BN_COLOR,
                   label="BatchNorm (training mode)")  # fmt: skip
    if not positive.all():  # training-mode BatchNorm refuses a batch of one
        output_ax.text(
            1, output_spread[positive][0], "refused\nat 1", color=BN_COLOR, size=FONT, va="top"
        )
    output_ax.set(title="One fixed image, random batch-mates", ylabel="sd of its normalized output")
    output_ax.tick_params(axis="x", bottom=False, labelbottom=False)
    output_ax.spines["bottom"].set_visible(False)
    # LayerNorm's exact 0 in a strip below the log axis, not at a made-up value on it
    zero_ax.plot(sizes, np.zeros_like(sizes), "o", color=LN_COLOR, clip_on=False, label="LayerNorm")
    zero_ax.text(sizes[0], 0.6, "LayerNorm: exactly 0 at every batch size", color=LN_COLOR,
                 size=FONT)  # fmt: skip
    zero_ax.set_ylim(-0.5, 1.5)
    zero_ax.set_yticks([0], ["0"])
    zero_ax.grid(False, axis="y")
    for ax in (statistics_ax, output_ax):
        style.log_axis(ax, "y")
    for ax in (statistics_ax, zero_ax):
        _batch_size_axis(ax, sizes)
    _axis_break(output_ax, zero_ax)
    spread = {size: value for size, value in zip(result.batch_sizes, result.output_spread,
                                                 strict=True) if value is not None}  # fmt: skip
    small, big = min(spread), max(spread)
    moved = result.layernorm_difference
    layernorm = "never" if moved == 0 else f"by {moved:.2g}"
    style.finding(fig, f"BatchNorm's output for one image moves by {spread[small]:.2f} sd at batch "
                  f"{small}, {spread[big]:.2f} at {big}; LayerNorm's {layernorm}")  # fmt: skip
    style.shared_legend(fig, ncols=3)
    return fig


def _axis_break(upper, lower) -> None:
    """The marks of a broken y axis: two short slashes where `upper`'s y axis ends above `lower`."""
    marks = {"marker": [(-1, -0.5), (1, 0.5)], "ms": 10, "ls": "", "color": style.BLACK,
             "mec": style.BLACK, "mew": 1, "clip_on": False}  # fmt: skip
    upper.plot([0], [0], transform=upper.transAxes, **marks)
    lower.plot([0], [1], transform=lower.transAxes, **marks)


@figure("train_vs_inference", experiment=ch01_runs.train_vs_inference)
def train_vs_inference(result) -> Figure:
    """The same 128 test images through the same MLP (64-256-256-10, Adam, batch 32) in training
    mode and in eval mode, every 5 steps while it trains: BatchNorm's two computations disagree;
    LayerNorm's are one. Top left: how far BatchNorm's running mean of the first layer's summed inputs
    is from their true mean over the training split, in units of their sd, averaged over units."""
    steps = result.eval_steps
    fig = style.new_figure(3, 6.4)
    running, gap, flips = style.three_panels(fig)
    running.plot(steps, result.running_error, color=BN_COLOR)
    style.log_axis(running, "y")
    running.set_title("BatchNorm's running mean")
    running.set_ylabel(r"$|\hat\mu - \mu|\,/\,\sigma$, first layer")
    for norm in ("batchnorm", "layernorm"):
        name = style.display(norm)
        gap.plot(steps, result.logit_gap[norm], color=style.color(norm), label=name)
        flips.plot(steps, result.changed_predictions[norm], color=style.color(norm), label=name)
    gap.set(title="Logits, training vs eval mode", ylabel="mean |logit difference|")
    flips.set(title="Predictions that differ", ylabel=f"test images (of {result.probe_size})")
    flips.set_yscale("symlog", linthresh=1)
    flips.set_yticks([0, 1, 10, 100], ["0", "1", "10", "100"])
    flips.set_ylim(-0.3, result.probe_size)
    for ax in (running, gap, flips):
        ax.set_xlabel(f"training step (batch {result.batch_size})")
    gaps, ln_gap = result.logit_gap["batchnorm"], max(result.logit_gap["layernorm"])
    apart = sum(gap > 0 for gap in gaps)
    when = "at every step" if apart == len(gaps) else f"at {apart} of {len(gaps)} evaluations"
    layernorm = "LayerNorm's never do" if ln_gap == 0 else f"LayerNorm's by at most {ln_gap:.2g}"
    style.finding(fig, f"BatchNorm's two modes disagree {when} (logits by {min(gaps):.2f} to "
                  f"{max(gaps):.2f}); {layernorm}")  # fmt: skip
    style.shared_legend(fig)
    return fig


# ---- M4 ----------------------------------------------------------------------------------------

TERM_NAMES = {"a_t": "$a_t$", "W_x x_t": "$W_x x_t$", "W_h h_t-1": "$W_h h_{t-1}$"}


def _time_axis(ax, result) -> None:
    """Steps 0..T-1 of the test streams, with the training length T_max marked."""
    style.vertical_mark(ax, result.train_length - 0.5, rf"$T_{{\max}} = {result.train_length}$")
    ax.set_xlabel("time step $t$")


def _steady_span(ax, result) -> None:
    ax.axvspan(result.steady_from - 0.5, result.test_length - 0.5, color=style.GREY, alpha=0.12)
    ax.text(result.steady_from, 0.9, " steady state", transform=ax.get_xaxis_transform(), va="top",
            color=style.REFERENCE, size=FONT)  # fmt: skip


@figure("lstm_statistics", experiment=ch01_runs.lstm_statistics)
def lstm_statistics(result) -> Figure:
    """Batch mean and variance of an LSTM's gate pre-activations $a_t$ at each time step: a
    transient, then a steady state (Cooijmans et al. 2016, Fig. 1 in spirit). 32 hidden units,
    trained on 12-step streams of random digits, measured on 1024 test streams of 48 steps. Top
    row: 8 of the 4H = 128 gate units, in units of their own steady state (steps 24-47).
    Below: the mean over all 128 units of the distance from the steady mean, for $a_t$ and its two
    terms."""
    t = np.arange(result.test_length)
    fig = style.new_figure(3, 6.6)
    means, variances, summary = style.three_panels(fig)
    steady = slice(result.steady_from, None)
    unit_style = {"color": style.BLACK, "lw": 0.9, "alpha": 0.55}
    for mean, var in zip(result.unit_means, result.unit_vars, strict=True):
        mean, var = np.array(mean), np.array(var)
        # In the steady state's own units, so that units of any size share one axis.
        means.plot(t, (mean - mean[steady].mean()) / np.sqrt(var[steady].mean()), **unit_style)
        variances.plot(t, var / var[steady].mean(), **unit_style)
    means.set_title("Batch mean of $a_t$")
    means.set_ylabel(r"$(\mu_t - \mu_{\mathrm{steady}})\,/\,\sigma_{\mathrm{steady}}$")
    variances.set_title("Batch variance of $a_t$")
    variances.set_ylabel(r"$\sigma_t^2\,/\,\sigma_{\mathrm{steady}}^2$")
    # the three terms are not methods: the house cycle's neutrals, and a line style each
    for (term, values), line in zip(result.transient.items(), style.LINE_STYLES, strict=False):
        summary.plot(t, values, line, label=TERM_NAMES[term])
    style.log_axis(summary, "y")
    summary.set_title(f"All {4 * result.hidden} gate units")
    summary.set_ylabel(r"mean of $|\mu_t - \mu_{\mathrm{steady}}|\,/\,\sigma_{\mathrm{steady}}$")
    for ax in (means, variances, summary):
        _steady_span(ax, result)
        _time_axis(ax, result)
    numbers = m4_summary(result)
    style.finding(fig, f"An LSTM's gate statistics start {numbers['first_step']:.2f} sd from their "
                  f"steady state and settle by step {numbers['settled_at']}")  # fmt: skip
    unit_line = Line2D([], [], **unit_style, label=f"one gate unit ({len(result.units)} drawn)")
    style.shared_legend(fig, extra=[unit_line], ncols=4)
    return fig


@figure("recurrent_batchnorm", experiment=ch01_runs.lstm_statistics)
def recurrent_batchnorm(result) -> Figure:
    r"""How well each choice of inference statistics normalizes the LSTM's gate pre-activations
    $a_t$ on test streams 4x longer than any seen in training: statistics per step with steps
    beyond $T_{\max}$ reusing step $T_{\max} - 1$ (Cooijmans et al.'s rule), statistics pooled
    over all steps, and per-step statistics from sequences cut inside the transient. Each is
    estimated on training-length sequences; 0 and 0 is perfect."""
    t = np.arange(result.test_length)
    fig = style.new_figure(2, 3.8)
    offset, scale = fig.subplots(1, 2, sharey=True)  # both in sd units of the normalized a_t
    for (name, values), line in zip(result.offset.items(), style.LINE_STYLES, strict=False):
        offset.plot(t, values, line, label=name.replace("T_max", r"$T_{\max}$"))
        scale.plot(t, result.scale[name], line)
    offset.set_title("Mean of the normalized $a_t$ (want 0)")
    offset.set_ylabel("|batch mean|, mean over units")
    scale.set_title("Spread of the normalized $a_t$ (want 1)")
    scale.set_ylabel("|batch sd $-$ 1|, mean over units")
    style.log_axis(offset, "y")
    offset.set_ylim(top=1.0)  # room for the label of T_max above the lines
    for ax in (offset, scale):
        _time_axis(ax, result)
    numbers = m4_summary(result)
    rule, pooled = numbers["per step, T_max rule"], numbers["averaged over steps"]
    longer = result.test_length // result.train_length
    style.finding(fig, f"Per-step statistics keep |sd $-$ 1| at {rule['beyond']:.2f} to {longer}x "
                  f"the training length; averaged ones are {pooled['first']:.2f} off at step 0")  # fmt: skip
    style.shared_legend(fig, ncols=3)
    return fig


# ---- M5 ----------------------------------------------------------------------------------------


class Arm(NamedTuple):
    label: str  # the reader's name of the arm (its start names the method, for the colour)
    subject: str  # the arm as the subject of the title's sentence
    marker: str


M5_ARMS = {
    "layernorm": Arm("LayerNorm", "LayerNorm's", "o"),
    "batchnorm": Arm("BatchNorm, torch's", "torch's BatchNorm's", "o"),
    "unbiased batchnorm": Arm("BatchNorm, unbiased", "the unbiased BatchNorm's", "D"),
    "paper's batchnorm": Arm("BatchNorm, the paper's", "the paper's BatchNorm's", "s"),
    "none": Arm("no norm", "the MLP without a norm's", "o"),
}


def _paired_dots(ax, x, before, after, color, marker) -> None:
    """Each seed a dot at both batch sizes, its two results joined by a faint line; the mean of
    each column a bar. Seeds are spread a little sideways so that equal values stay apart."""
    n = len(before)
    jitter = np.linspace(-0.09, 0.09, n)
    for a, b, dx in zip(before, after, jitter, strict=True):
        ax.plot([x + dx, x + 1 + dx], [a, b], color=color, lw=0.6, alpha=0.35)
    for column, values in ((x, before), (x + 1, after)):
        ax.scatter(column + jitter, values, s=16, color=color, marker=marker, alpha=0.8, lw=0)
        ax.plot([column - 0.2, column + 0.2], [values.mean()] * 2, color=style.BLACK, lw=2.2)


def _m5_panel(ax, result, key: str, models) -> dict:
    """Test error of M5 per model (key "accuracy", or "population accuracy" for BatchNorm with
    exact statistics): each seed at both batch sizes, and under the pair the paired difference
    m5_differences grades. Returns model -> mean difference of the error, in points."""
    big, small = result.batch_sizes
    changes = {}
    for place, name in enumerate(models):
        x = 2.6 * place
        # per seed, test error over the last M5_LAST_EPOCHS epochs: what m5_differences pairs
        before, after = (100 - 100 * np.array(m5_late(result, name, b, key)) for b in (big, small))
        label = M5_ARMS[name].label
        color = style.color(label)
        _paired_dots(ax, x, before, after, color, M5_ARMS[name].marker)
        difference = m5_differences(result, name, key)
        changes[name] = -100 * difference.mean
        low, high = sorted((-100 * difference.low, -100 * difference.high))
        interval = f"{changes[name]:+.2f}\n[{low:+.2f}, {high:+.2f}]"
        x_data_y_axes = ax.get_xaxis_transform()  # under the pair, and above its group
        ax.text(x + 0.5, -0.1, interval, transform=x_data_y_axes, ha="center", va="top", size=FONT)
        ax.text(x + 0.5, 1.0, label.replace(", ", ",\n"), color=color,
                transform=x_data_y_axes, ha="center", va="bottom", size=FONT)  # fmt: skip
    ticks = [2.6 * place + offset for place in range(len(models)) for offset in (0, 1)]
    ax.set_xticks(ticks, [str(batch) for _ in models for batch in (big, small)])
    ax.set_xlim(-0.5, 2.6 * (len(models) - 1) + 1.5)
    ax.set_ylim(bottom=0)
    ax.grid(False, axis="x")
    ax.set_xlabel(f"batch size; below: {small} minus {big}, mean [95% CI]", labelpad=34)
    return changes


def _moves(change: float) -> str:
    """'rises 0.12' or 'falls 0.12': a change of the test error, in points."""
    return f"{'rises' if change > 0 else 'falls'} {abs(change):.2f}"


def _batch_size_finding(running: dict, exact: dict, big: int, small: int) -> str:
    """The title of `batch_size`: how the test error of LayerNorm and of one BatchNorm (the paper's
    if the result holds it) moves from batch `big` to `small`, as trained and with exact
    statistics, for the models the result holds."""
    batchnorm = M5_PAPER_BN if M5_PAPER_BN in exact else next(iter(exact), None)
    said = []
    if "layernorm" in running or batchnorm is None:  # with neither, the first model it holds
        name = "layernorm" if "layernorm" in running else next(iter(running))
        said.append(f"{M5_ARMS[name].subject} test error {_moves(running[name])} points")
    if batchnorm is not None:
        said.append(f"{M5_ARMS[batchnorm].subject} {_moves(running[batchnorm])}")
    text = f"From batch {big} to {small}, " + ", ".join(said)
    if batchnorm is not None:
        subject = "BatchNorm's" if batchnorm == M5_PAPER_BN else M5_ARMS[batchnorm].subject
        text += f";\nwith exact statistics at inference, {subject} still {_moves(exact[batchnorm])}"
    return text


@figure("batch_size", experiment=analysis.batch_size_robustness)
def batch_size(result) -> Figure:
    """The paper's Fig. 6 at digits scale: an MLP (64-256-256-10, Adam, learning rate 1e-3, 12
    epochs) with LayerNorm, one of three BatchNorms, or no normalizer, trained at batch 128 and at
    batch 4. Each dot is one seed's test error, averaged over the last 3 epochs; a faint line
    joins the same seed's two runs, and a bar marks the mean over the seeds. Under each pair: the
    mean paired difference, batch 4 minus 128, with its 95% t interval (the tests of M5, M5b and
    M5c). Left, as trained: BatchNorm at inference uses its running averages. Right, the same
    BatchNorm nets evaluated again with each layer's exact statistics over the training set.
    BatchNorm, torch's: biased batch variance in training, unbiased running estimate at
    inference; unbiased: the unbiased batch variance in training too; the paper's: unbiased, and
    the logits normalized as well. Test NLL is in the notebook's table."""
    big, small = result.batch_sizes
    fig = style.new_figure(2, 4.6)
    running_ax, exact_ax = fig.subplots(1, 2, width_ratios=[5, 3.2])
    models = [name for name in M5_ARMS if name in result.curves]
    batchnorms = [name for name in models if "population accuracy" in result.final[name][big]]
    running = _m5_panel(running_ax, result, "accuracy", models)
    exact = _m5_panel(exact_ax, result, "population accuracy", batchnorms)
    late = f"mean of the last {M5_LAST_EPOCHS} epochs"
    running_ax.set_ylabel(f"test error (%), {late}")
    running_ax.set_title("as trained (BatchNorm infers with its running averages)", pad=34)
    exact_ax.set_title("the same nets, exact training-set statistics", pad=34)
    exact_ax.sharey(running_ax)
    if not batchnorms:  # a result without a BatchNorm has nothing to evaluate again
        exact_ax.text(0.5, 0.5, "no BatchNorm in this result", transform=exact_ax.transAxes,
                      ha="center", va="center", color=style.REFERENCE)  # fmt: skip
        exact_ax.set_xticks([])
    style.finding(fig, _batch_size_finding(running, exact, big, small))
    n = len(result.seeds)
    seed = Line2D([], [], color=style.BLACK, alpha=0.5, marker="o", lw=0.6, label="one seed")
    mean = Line2D([], [], color=style.BLACK, lw=2.2, label=f"mean over {n} seeds")
    style.shared_legend(fig, extra=[seed, mean])
    return fig
