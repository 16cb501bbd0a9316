"""Figures of notebook 01, why BatchNorm fails for sequence models."""

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from lnpaper import experiments
from lnpaper.figures.registry import figure

NOTEBOOK = "01_why_batchnorm_fails"
BN_COLOR, LN_COLOR, STUDENT_COLOR = "tab:orange", "tab:blue", "tab:red"


def _ruler(ax, mean: float, sd: float, y: float, color: str, label: str) -> None:
    """A ruler under a number line: its zero at `mean`, one mark per `sd`, from -2 to +2."""
    left, right = mean - 2.4 * sd, mean + 2.4 * sd
    ax.add_patch(Rectangle((left, y - 0.22), right - left, 0.24, fc=color, ec="black", alpha=0.35))
    for z in range(-2, 3):
        ax.plot([mean + z * sd] * 2, [y + 0.02, y - 0.1], color="black", lw=1)
        ax.text(mean + z * sd, y - 0.19, f"{z:+d}" if z else "0", ha="center", va="center", size=7)
    ax.text(right + 1.5, y - 0.1, label, va="center", size=8, style="italic")


def _grade_row(ax, y, title, others, score, ruler, ruler_color, ruler_label, grade, student):
    """One occasion: a number line of scores, the ruler used, and the grade it gives."""
    ax.plot([20, 100], [y + 0.25, y + 0.25], color="grey", lw=1)
    ax.scatter(others, [y + 0.25] * len(others), s=36, color="grey", zorder=3)
    ax.scatter([score], [y + 0.25], s=140, marker="*", color=student, zorder=4)
    ax.plot([score, score], [y + 0.25, y - 0.22], ls="--", lw=1.2, color=student, zorder=4)
    _ruler(ax, *ruler, y, ruler_color, ruler_label)
    ax.text(20, y + 0.5, title, size=9, weight="bold")
    ax.text(101, y + 0.25, grade, va="center", size=9, color=student, weight="bold")


@figure("exam_rulers", notebook=NOTEBOOK)
def exam_rulers() -> Figure:
    """The exam-grading picture: BatchNorm grades a score against the class that sat the exam with
    it (training) or against a stored average ruler (inference); LayerNorm grades each student
    against a ruler made from that student's own scores."""
    fig = Figure(figsize=(12.0, 5.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    ana = 72.0  # Ana's maths score, the same on every occasion
    classes = [
        ("A", [50.0, 58.0, 61.0, 66.0]),
        ("B", [78.0, 80.0, 85.0, 91.0]),
    ]
    y = 2.0
    for name, mates in classes:
        title = f"Training, class {name}: ruler from today's class (grey: classmates)"
        scores = np.array([*mates, ana])
        mean, sd = scores.mean(), scores.std()
        grade = f"Ana: {(ana - mean) / sd:+.1f}"
        _grade_row(
            left,
            y,
            title,
            mates,
            ana,
            (mean, sd),
            BN_COLOR,
            "ruler 1, re-measured",
            grade,
            STUDENT_COLOR,
        )
        y -= 1.0
    stored = (70.0, 12.0)  # the running average over every class of the term
    grade = f"Ana: {(ana - stored[0]) / stored[1]:+.1f}"
    title = "Inference: a stored ruler, the average of past classes"
    _grade_row(
        left, y, title, [], ana, stored, "lightgrey", "ruler 2, stored", grade, STUDENT_COLOR
    )
    left.set_title("BatchNorm: two rulers, and the class decides Ana's grade", loc="left")

    subjects = {"Ana": [72.0, 65.0, 88.0, 80.0, 90.0], "Ben": [55.0, 40.0, 48.0, 60.0, 52.0]}
    y = 2.0
    for name, scores in subjects.items():
        mean, sd = np.mean(scores), np.std(scores)
        grade = f"{name}: {(scores[0] - mean) / sd:+.1f}"
        title = f"{name}'s scores in 5 subjects (star: maths, grey: the others)"
        color = STUDENT_COLOR if name == "Ana" else "tab:purple"
        ruler = (mean, sd)
        _grade_row(
            right, y, title, scores[1:], scores[0], ruler, LN_COLOR, "own ruler", grade, color
        )
        y -= 1.0
    right.text(
        20,
        y + 0.5,
        "Each student carries one ruler, made from their own scores.\n"
        "Class A, class B or the end of term: the same ruler, the same grade.",
        size=9,
        va="center",
    )
    right.set_title("LayerNorm: one ruler per student, in training and inference", loc="left")
    for ax in (left, right):
        ax.set_xlim(18, 118)
        ax.set_ylim(-0.45, 2.75)
        ax.set_yticks([])
        ax.set_xticks([20, 40, 60, 80, 100])
        ax.set_xlabel("score (a summed input); ruler marks: standard deviations from its mean")
        ax.grid(False)
        ax.spines["left"].set_visible(False)
    return fig


@figure("batch_dependence", notebook=NOTEBOOK, experiment=experiments.batch_dependence)
def batch_dependence(result) -> Figure:
    """How noisy BatchNorm's statistics are as the batch shrinks, and what that does to the
    output of one fixed example; LayerNorm's output for it never moves."""
    sizes = np.array(result.batch_sizes)
    fig = Figure(figsize=(10.0, 3.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.plot(sizes, result.mean_spread, "o-", label="batch mean: sd / population sd")
    positive = sizes >= 2  # the variance of one value is exactly 0: not on a log axis
    left.plot(
        sizes[positive],
        np.array(result.variance_spread)[positive],
        "s-",
        label="batch variance: sd / population variance",
    )
    left.plot(sizes, 1 / np.sqrt(sizes), ":", color="grey", label="1 / sqrt(batch size)")
    left.annotate(
        "batch of 1: mean = the example,\nvariance = 0",
        (1, result.mean_spread[0]),
        xytext=(4, 1.1),
        size=8,
        arrowprops={"arrowstyle": "->"},
    )
    left.set_title(f"Per-unit batch statistics ({result.width} units, digits)")
    left.set_ylim(0.04, 2.5)
    left.set_ylabel("spread over random batches")
    right.plot(
        sizes[positive],
        np.array(result.output_spread, dtype=float)[positive],
        "o-",
        color=BN_COLOR,
        label="BatchNorm (training mode)",
    )
    right.axhline(1e-3, color=LN_COLOR, lw=2, label="LayerNorm: exactly 0 (drawn at the floor)")
    right.set_title("One fixed example, many different batch-mates")
    right.set_ylabel("sd of its normalized output")
    right.set_ylim(8e-4, 1.5)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes, [str(s) for s in sizes])
        ax.set_xlabel("batch size")
    left.legend(fontsize=8, loc="lower left")
    right.legend(fontsize=8, loc="upper right")
    return fig


@figure("train_vs_inference", notebook=NOTEBOOK, experiment=experiments.train_vs_inference)
def train_vs_inference(result) -> Figure:
    """The same test images through the same MLP in training mode and in eval mode, while it
    trains: BatchNorm's two computations disagree; LayerNorm's are one."""
    steps = result.eval_steps
    fig = Figure(figsize=(12.0, 3.5), layout="constrained")
    running, gap, flips = fig.subplots(1, 3)
    running.plot(steps, result.running_error, color=BN_COLOR)
    running.set_yscale("log")
    running.set_title("BatchNorm's running mean catching up")
    running.set_ylabel("|running mean - true mean| / sd\n(first layer, mean over units)")
    for norm, color in (("batchnorm", BN_COLOR), ("layernorm", LN_COLOR)):
        gap.plot(steps, result.logit_gap[norm], color=color, label=norm)
        flips.plot(steps, result.changed_predictions[norm], color=color, label=norm)
    gap.set_title("Training mode vs eval mode: logits")
    gap.set_ylabel("mean |logit difference|")
    flips.set_title(f"Predictions that differ (of {result.probe_size} test images)")
    flips.set_ylabel("images")
    flips.set_yscale("symlog", linthresh=1)
    for ax in (running, gap, flips):
        ax.set_xlabel(f"training step (batch {result.batch_size})")
    gap.legend()
    return fig


def _steps_axis(ax, result) -> None:
    ax.axvline(result.train_length - 0.5, color="black", lw=0.8, ls="--")
    ax.text(result.train_length, ax.get_ylim()[1], " T_max", va="top", size=8)
    ax.set_xlabel("time step t")


@figure("lstm_statistics", notebook=NOTEBOOK, experiment=experiments.lstm_statistics)
def lstm_statistics(result) -> Figure:
    """Batch mean and variance of an LSTM's gate pre-activations at each time step: a transient,
    then a steady state (Cooijmans et al. 2016, Fig. 1 in spirit)."""
    t = np.arange(result.test_length)
    fig = Figure(figsize=(12.0, 3.6), layout="constrained")
    means, variances, summary = fig.subplots(1, 3)
    gate_names = "ifgo"
    steady = slice(result.steady_from, None)
    for unit, mean, var in zip(result.units, result.unit_means, result.unit_vars, strict=True):
        mean, var = np.array(mean), np.array(var)
        label = f"{gate_names[unit // result.hidden]}{unit % result.hidden}"
        # In the steady state's own units, so that units of any size share one axis.
        means.plot(
            t, (mean - mean[steady].mean()) / np.sqrt(var[steady].mean()), lw=1.2, label=label
        )
        variances.plot(t, var / var[steady].mean(), lw=1.2)
    means.set_title("Batch mean of a_t, 8 gate units")
    means.set_ylabel("(mu_t - mu_steady) / sd_steady")
    variances.set_title("Batch variance of a_t, same units")
    variances.set_ylabel("var_t / var_steady")
    means.legend(fontsize=7, ncol=4, title="gate and unit", title_fontsize=7, loc="lower right")
    for term, values in result.transient.items():
        summary.plot(t, values, label=term)
    summary.set_yscale("log")
    summary.set_title("All 4H units: distance from the steady state")
    summary.set_ylabel("mean over units of |mu_t - mu_steady| / sd")
    summary.legend(fontsize=8, loc="center right")
    for ax in (means, variances, summary):
        ax.axvspan(result.steady_from, result.test_length - 1, color="grey", alpha=0.12)
        _steps_axis(ax, result)
        ax.text(result.steady_from, ax.get_ylim()[1], " steady state", va="top", size=8)
    return fig


@figure("recurrent_batchnorm", notebook=NOTEBOOK, experiment=experiments.lstm_statistics)
def recurrent_batchnorm(result) -> Figure:
    """How well each choice of inference statistics normalizes the gate pre-activations of
    sequences 4x longer than any seen in training (0 and 0 is perfect)."""
    t = np.arange(result.test_length)
    fig = Figure(figsize=(10.0, 3.6), layout="constrained")
    offset, scale = fig.subplots(1, 2)
    styles = ["-", "--", ":"]
    for (name, values), style in zip(result.offset.items(), styles, strict=True):
        offset.plot(t, values, style, lw=1.6, label=name)
        scale.plot(t, result.scale[name], style, lw=1.6, label=name)
    offset.set_title("Mean of the normalized a_t (want 0)")
    offset.set_ylabel("mean over units |batch mean|")
    scale.set_title("Spread of the normalized a_t (want 1)")
    scale.set_ylabel("mean over units |batch sd - 1|")
    for ax in (offset, scale):
        ax.set_yscale("log")
        _steps_axis(ax, result)
    scale.legend(fontsize=8)
    return fig


@figure("batch_size", notebook=NOTEBOOK, experiment=experiments.batch_size_robustness)
def batch_size(result) -> Figure:
    """Test NLL and test error per epoch at batch 128 and batch 4 (mean over seeds, band: min to
    max), the paper's Fig. 6 at digits scale."""
    epochs = np.arange(result.epochs + 1)
    fig = Figure(figsize=(10.0, 3.8), layout="constrained")
    nll_ax, error_ax = fig.subplots(1, 2)
    colors = {"layernorm": LN_COLOR, "batchnorm": BN_COLOR, "batchnorm incl. logits": "tab:brown"}
    for name, by_batch in result.curves.items():
        for batch, style in zip(result.batch_sizes, ("-", "--"), strict=False):
            runs = by_batch[batch]
            for ax, key, scale in ((nll_ax, "nll", 1.0), (error_ax, "accuracy", 100.0)):
                values = np.array([run[key] for run in runs])
                if key == "accuracy":
                    values = 1 - values
                values = scale * values
                label = f"{name}, batch {batch}"
                ax.plot(epochs, values.mean(0), style, color=colors[name], label=label)
                ax.fill_between(
                    epochs, values.min(0), values.max(0), color=colors[name], alpha=0.15
                )
    nll_ax.set_ylabel("test NLL (nats)")
    error_ax.set_ylabel("test error (%)")
    nll_ax.set_title(f"Test NLL, {len(result.seeds)} seeds")
    error_ax.set_title("Test error")
    for ax in (nll_ax, error_ax):
        ax.set_yscale("log")
        ax.set_xlabel(f"epoch ({result.train_examples} training images)")
    nll_ax.legend(fontsize=8)
    return fig
