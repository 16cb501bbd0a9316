"""Demos to play with: a slider in JupyterLab that recomputes a small, exact computation and
redraws its figure.

Each demo is a pure function `update(**params) -> Figure` that takes a second or two at most and
reuses the package's own code (chapter 02's variants, lnpaper.norms, the experiments' bodies);
where the computation takes minutes (notebook 09's training runs), it calls the recorded experiment
itself, so in a notebook it reads the record and a setting the record lacks runs live.
`show(update, name=(choices, default), ...)` (lnpaper.companion.widgets) puts it in a notebook
cell: live controls in JupyterLab, one static figure everywhere else.
tests/test_demos.py calls each `update`.
"""

import functools

import numpy as np
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure
from matplotlib.transforms import blended_transform_factory

from lnpaper import functional
from lnpaper.chapters.ch01_why_batchnorm_fails.runs import first_layer_inputs
from lnpaper.chapters.ch02_transpose import variants
from lnpaper.chapters.ch03_layernorm_in_rnns import runs as ch03_runs
from lnpaper.chapters.ch05_invariances import invariance
from lnpaper.chapters.ch06_transformer import runs as ch06_runs
from lnpaper.chapters.ch09_logits_and_placement import analysis as ch09_analysis
from lnpaper.chapters.ch09_logits_and_placement import runs as ch09_runs
from lnpaper.chapters.ch09_logits_and_placement.figures import QK_COLORS
from lnpaper.companion import style
from lnpaper.companion.widgets import live, show, styled  # noqa: F401 (notebooks call demos.show)
from lnpaper.data import SyntheticLanguage
from lnpaper.norms import BatchNorm, LayerNorm, RMSNorm, center

# ---- notebook 01: one example in batches of every size ------------------------------------------

BATCH_UNITS, BATCH_DRAWS = 12, 20  # image 0's first 12 units, in 20 random batches per size


@functools.cache
def _summed_inputs() -> torch.Tensor:
    """Notebook 01's a = W x: a fresh 64 -> 64 layer over the 1197 training digits."""
    with torch.random.fork_rng():  # first_layer_inputs seeds torch; the notebook's stream is kept
        return first_layer_inputs(64, 0)


def batch_outputs(batch_size: int) -> dict:
    """Image 0's normalized first 12 units in 20 random batches of `batch_size` training images
    that hold it (training mode: each batch's own statistics), BatchNorm's and LayerNorm's, and
    BatchNorm's with the whole training split's statistics (what perfect running averages give).
    Returns {"BatchNorm": [draw][unit], "LayerNorm": [draw][unit], "whole split": [unit]}."""
    a = _summed_inputs()
    generator = torch.Generator().manual_seed(batch_size)
    others = torch.arange(1, len(a))
    batchnorm, layernorm = BatchNorm(64), LayerNorm(64)  # gain 1, bias 0
    outputs = {"BatchNorm": [], "LayerNorm": []}
    with torch.no_grad():
        for _ in range(BATCH_DRAWS):
            mates = others[torch.randperm(len(others), generator=generator)[: batch_size - 1]]
            batch = a[torch.cat([torch.tensor([0]), mates])]  # image 0 first
            # BatchNorm: (a_0i - mu_i) / sigma_i, mu_i and sigma_i over the batch's images
            outputs["BatchNorm"].append(batchnorm(batch)[0, :BATCH_UNITS].numpy())
            # LayerNorm: (a_0i - mu_0) / sigma_0, mu_0 and sigma_0 over image 0's 64 units
            outputs["LayerNorm"].append(layernorm(batch)[0, :BATCH_UNITS].numpy())
    whole = functional.batch_norm(a.numpy(), np.ones(64), np.zeros(64))  # mu_i over all 1197
    return {**{k: np.array(v) for k, v in outputs.items()}, "whole split": whole[0, :BATCH_UNITS]}


@styled
def batch_size(batch_size: int = 4) -> Figure:
    """Notebook 01: image 0's BatchNorm and LayerNorm outputs, unit by unit, in 20 random batches
    of one size; the grey ticks are BatchNorm with the whole training split's statistics."""
    outputs = batch_outputs(batch_size)
    fig = style.new_figure(1, 4.0)
    ax = fig.subplots()
    units = np.arange(1, BATCH_UNITS + 1)
    for name, offset in (("BatchNorm", -0.15), ("LayerNorm", 0.15)):
        draws = outputs[name]
        ax.plot(np.broadcast_to(units + offset, draws.shape).ravel(), draws.ravel(), "o", ms=3.5,
                alpha=0.6, color=style.color(name), label=name)  # fmt: skip
    ax.plot(units - 0.15, outputs["whole split"], "_", ms=14, mew=2, color=style.REFERENCE,
            label="the whole split's statistics in BatchNorm")  # fmt: skip
    ax.set_xticks(units)
    ax.set_xlim(0.4, BATCH_UNITS + 0.6)
    ax.set_ylim(-4.5, 4.5)  # fixed, so that a slider moves the dots, not the axis
    ax.set_xlabel("unit $i$ of image 0")
    ax.set_ylabel("normalized summed input")
    ax.set_title(f"{BATCH_DRAWS} random batches of {batch_size} training images holding image 0")
    style.shared_legend(fig, ncols=3)
    spread = outputs["BatchNorm"].std(0).mean()
    moved = np.ptp(outputs["LayerNorm"], axis=0).max()
    style.finding(fig, f"Batch {batch_size}: BatchNorm's output moves by sd {spread:.2f}, "
                       f"LayerNorm's by {moved:g}")  # fmt: skip
    return fig


# ---- notebook 02: the one-pass variance in float32 ------------------------------------------------

ONE_PASS_STD, ONE_PASS_WIDTH, ONE_PASS_ROWS = 0.01, 1024, 64  # as ch02's one_pass_variance
FLOAT32_ROUNDING = 2.0**-24  # float32's unit roundoff: half the spacing of the numbers near 1


@functools.cache
def _noise() -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    shape = (ONE_PASS_ROWS, ONE_PASS_WIDTH)
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def one_pass_errors(offset: float, eps: float) -> dict:
    """The float32 LayerNorm output of 64 rows (mean `offset`, std 0.01, H = 1024) with each
    variance formula, against float64 arithmetic on the same float32 values with the same eps.

    Returns {formula: relative error of each row's output, largest |y - y_64| / largest |y_64|},
    NaN where var + eps <= 0 leaves no output, and "exact size": the float64 output's RMS,
    sqrt(var / (var + eps)) (1 when eps is small against the variance, 1e-4 here)."""
    x32 = (offset + ONE_PASS_STD * _noise()).float()
    reference = F.layer_norm(x32.double(), (ONE_PASS_WIDTH,), eps=eps)
    centered = center(x32, (-1,))  # a - mu, the mean removed twice: only the variance differs
    formulas = {
        "one pass": variants.one_pass_variance(x32),  # E[a^2] - E[a]^2
        "two passes": variants.recentered_variance(x32),  # E[(a - mu)^2], lnpaper.LayerNorm's
    }
    errors = {}
    for name, variance in formulas.items():
        y = centered / torch.sqrt(variance + eps).unsqueeze(-1)  # (a - mu) / sqrt(var + eps)
        error = (y.double() - reference).abs().amax(-1) / reference.abs().amax(-1)
        errors[name] = torch.where(variance + eps > 0, error, torch.nan).numpy()
    errors["exact size"] = reference.pow(2).mean().sqrt().item()
    return errors


def _median_text(error: np.ndarray) -> str:
    """The median row's error, a row without output counted as the worst."""
    median = np.median(np.where(np.isfinite(error), error, np.inf))
    return "no output" if np.isinf(median) else f"{median:.1e}"


@styled
def one_pass_variance(offset: float = 100.0, eps: float = 1e-5) -> Figure:
    """Notebook 02: each row's LayerNorm error with the one-pass and the two-pass variance, rows
    sorted by their error; rows where the one-pass var + eps <= 0 have no output at all."""
    errors = one_pass_errors(offset, eps)
    fig = style.new_figure(1, 4.2)
    ax = fig.subplots()
    rows = np.arange(1, ONE_PASS_ROWS + 1)
    for name, line in (("one pass", "--"), ("two passes", "-")):
        kept = np.sort(errors[name][np.isfinite(errors[name])])
        # a relative error of 0 (the output exact to the last bit) is drawn at the axis' floor
        ax.plot(rows[: len(kept)], np.maximum(kept, 1e-9), line, marker=".",
                color=style.color("LayerNorm"), label=f"LayerNorm, {name}")  # fmt: skip
    ax.axhline(FLOAT32_ROUNDING, color=style.REFERENCE, lw=1.0, ls=":", label="float32 rounding")
    ax.set_xlim(0, ONE_PASS_ROWS + 1)
    # fixed, so that a slider moves the lines, not the axis; errors above 1e6 are not drawn
    ax.set_ylim(1e-9, 1e6)
    style.log_axis(ax, "y")
    ax.set_xlabel(f"row, sorted by its error ({ONE_PASS_ROWS} rows, $H = {ONE_PASS_WIDTH}$)")
    ax.set_ylabel("relative error of the output")
    lost = int(np.sum(~np.isfinite(errors["one pass"])))
    ax.set_title(
        f"mean {offset:g}, eps {eps:g}: one pass has no output in {lost} of {ONE_PASS_ROWS} "
        f"rows; exact RMS {errors['exact size']:.2f}"
    )
    ax.legend(loc="upper left", ncols=3)
    style.finding(
        fig,
        f"Median row error: one pass {_median_text(errors['one pass'])}, "
        f"two passes {_median_text(errors['two passes'])}",
    )
    return fig


# ---- notebook 03: a tanh RNN's weight scale, with and without LayerNorm ---------------------------

RNN_STEPS = 120  # rnn_dynamics runs 300; 120 keep a redraw near a second and show the same trends


@functools.cache
def rnn_run(scale: float, gain: float):
    """rnn_dynamics' own body (not its record, so any scale and gain work) at one weight scale,
    with the LN RNN's gain set to `gain`: the same seed-0 weights, digits and direction v."""
    return ch03_runs._dynamics(64, RNN_STEPS, 8, 32, (scale,), seed=0, gain=gain)


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


# ---- notebook 07: a shift and a scale added to one row: RMSNorm against LayerNorm -----------------

ROW_UNITS, ROW_SHOWN = 64, 16  # one row of 64 summed inputs; the first 16 units are drawn


@functools.cache
def _row() -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    return torch.randn(ROW_UNITS, generator=generator, dtype=torch.float64)


def row_outputs(shift: float, scale: float) -> dict:
    """LayerNorm and RMSNorm (gain 1, bias 0, the same eps 1e-5, float64) of one row a of 64 Gaussian
    values and of scale * a + shift, the change every unit's summed input gets when the weight
    matrix is multiplied by `scale` and re-centred by `shift` (notebook 05).
    Returns {norm: (output of a, output of the moved row)}."""
    a = _row()
    moved = scale * a + shift
    norms = {"LayerNorm": LayerNorm(ROW_UNITS, eps=1e-5), "RMSNorm": RMSNorm(ROW_UNITS, eps=1e-5)}
    with torch.no_grad():
        return {name: (norm.double()(a).numpy(), norm.double()(moved).numpy())
                for name, norm in norms.items()}  # fmt: skip


@styled
def row_shift(shift: float = 1.0, scale: float = 1.0) -> Figure:
    """Notebook 07: one row's LayerNorm and RMSNorm outputs before (grey ticks) and after (dots)
    every unit's summed input is multiplied by `scale` and shifted by `shift`."""
    outputs = row_outputs(shift, scale)
    units = np.arange(1, ROW_SHOWN + 1)
    fig = style.new_figure(2, 3.8)
    axes = fig.subplots(1, 2, sharey=True)
    moved = {}
    for ax, (name, (before, after)) in zip(axes, outputs.items(), strict=True):
        ax.plot(units, before[:ROW_SHOWN], "_", ms=14, mew=2, color=style.REFERENCE,
                label="output for the row $a$")  # fmt: skip
        ax.plot(units, after[:ROW_SHOWN], "o", ms=5, color=style.color(name),
                label=f"{name} of the moved row")  # fmt: skip
        ax.set_title(name)
        ax.set_xlabel("unit $i$")
        ax.legend(loc="lower left")
        moved[name] = np.abs(after - before).max()
    axes[0].set_ylim(-3.2, 3.2)  # fixed, so that a control moves the dots, not the axis
    axes[0].set_ylabel("normalized output")
    change = {name: f"{m:.0e}" if m < 1e-3 else f"{m:.2f}" for name, m in moved.items()}
    row = "a" if scale == 1 else f"{scale:g}\\,a"
    style.finding(fig, f"$a \\to {row} + {shift:g}$: LayerNorm's output moves by up to "
                       f"{change['LayerNorm']}, RMSNorm's by up to {change['RMSNorm']}")  # fmt: skip
    return fig


# ---- notebook 09: the learning rate, with and without QK-norm --------------------------------------


@styled
def qk_learning_rate(lr: float = 1e-1) -> Figure:
    """Notebook 09: Q1's runs at one learning rate of the sweep, read from the record (each is
    5 seeds trained for 120 steps, too long to recompute at every move of a slider): the largest
    layer-0 attention logit as training goes (left) and each seed's held-out loss (right)."""
    runs = {arm: ch09_runs.qk_run(qk_norm=qk, lr=lr) for arm, qk in ch09_analysis.QK_ARMS.items()}
    language = SyntheticLanguage()
    levels = {"uniform": language.levels().uniform, "bigram": language.levels().bigram,
              "floor": language.entropy_floor(16)}  # fmt: skip
    fig = style.new_figure(2, 4.0)
    logits, losses = fig.subplots(1, 2, width_ratios=[1.6, 1])
    largest, ends = {}, {}
    for k, (arm, run) in enumerate(runs.items()):
        colour = QK_COLORS[arm]  # notebook 09's figure's colours
        for seed, values in enumerate(run.max_logit):
            logits.plot(run.logit_steps[: len(values)], values, color=colour, lw=1.2, alpha=0.8,
                        label=arm if seed == 0 else None)  # fmt: skip
        largest[arm] = max(max(values) for values in run.max_logit)
        finals = [loss for loss in run.final_loss if loss is not None]
        ends[arm] = np.median(finals) if finals else None
        losses.plot(np.full(len(finals), k), finals, "o", ms=5, color=colour)
    logits.set_ylim(1, 1e6)  # fixed, so that the slider moves the lines, not the axis
    style.log_axis(logits, "y")
    logits.set_xlabel("training step")
    logits.set_title("largest layer-0 attention logit $|z_{ij}|$, one line a seed")
    for name in ("uniform", "bigram", "floor"):
        losses.axhline(levels[name], color=style.REFERENCE, lw=0.8, ls=":")
        losses.annotate(name, (1.45, levels[name]), va="bottom", ha="right", fontsize=8)
    losses.set_xticks([0, 1], list(runs))
    losses.set_xlim(-0.5, 1.5)
    losses.set_ylim(0.8, 3.2)
    losses.grid(axis="x", visible=False)
    losses.set_title("held-out loss at step 120, one dot a seed")
    style.shared_legend(fig, [logits], ncols=2)
    peak = {arm: f"{largest[arm]:.3g}" for arm in runs}
    loss = {arm: "diverged" if ends[arm] is None else f"{ends[arm]:.2f}" for arm in runs}
    style.finding(fig, f"lr {lr:g}: the largest logit reaches {peak['no QK-norm']} without "
                       f"QK-norm, {peak['QK-LayerNorm']} with it; median loss {loss['no QK-norm']} "
                       f"and {loss['QK-LayerNorm']}")  # fmt: skip
    return fig


# ---- notebook 06: depth against the gradient at initialization -----------------------------------

DEPTH_SEEDS, DEPTH_BATCH = 3, 4  # T1 uses 40 seeds of 8 sequences; fewer keep a redraw < 0.5 s


@functools.cache
def depth_run(placement: str, depth: int):
    """grad_norm_vs_depth's own body (chapter 05) (not its recorded result, so any depth works) for
    one depth: Xiong et al.'s setting at initialization, 3 seeds of 4 sequences of 32 tokens."""
    run = ch06_runs.grad_norm_vs_depth.__wrapped__  # the computation, without the record
    with torch.random.fork_rng():  # it seeds torch per seed; the notebook's own stream is kept
        return run(placement=placement, depths=(depth,), seeds=range(DEPTH_SEEDS),
                   batch_size=DEPTH_BATCH)  # fmt: skip


@styled
def depth_gradient(depth: int = 12) -> Figure:
    """Notebook 06: at initialization, for one depth L, the residual stream block by block (left)
    and the gradient of the last block's W^(2) (right), Post-LN against Pre-LN."""
    runs = {name: depth_run(key, depth) for key, name in (("post", "Post-LN"), ("pre", "Pre-LN"))}
    fig = style.new_figure(2, 4.0)
    stream, gradient = fig.subplots(1, 2, width_ratios=[1.6, 1])
    for name, run in runs.items():
        stream.plot(run.layers, run.residual_sq_norm, marker="o", ms=3, color=style.color(name),
                    label=name)  # fmt: skip
    layers = np.arange(depth + 1)
    # Lemma 2 for Pre-LN: (1 + l/2) d <= E||x_l||^2 <= (1 + 3l/2) d
    stream.fill_between(layers, 1 + layers / 2, 1 + 1.5 * layers, color=style.GREY, alpha=0.2,
                        lw=0, label="Lemma 2's band for Pre-LN")  # fmt: skip
    stream.set_xlim(0, 24.5)
    stream.set_ylim(0, 38)  # fixed for every depth: the stream is seen to grow with L
    stream.set_xlabel("block l (Post-LN: x + FFN(x) in block l; Pre-LN: after l blocks)")
    stream.set_ylabel(r"$E\,\|x\|^2 / d$")
    stream.set_title(f"the residual stream, $L = {depth}$")
    stream.legend(loc="upper left")

    means = {}
    for k, (name, run) in enumerate(runs.items()):
        norms = np.array(run.grad_norm[0])
        means[name] = norms.mean()
        gradient.bar(k, means[name], width=0.6, color=style.color(name), alpha=0.5)
        gradient.plot(np.full(len(norms), k), norms, "o", color=style.color(name), ms=4, label=name)
    gradient.set_xticks([0, 1], list(runs))
    top = max(max(max(run.grad_norm[0]) for run in runs.values()) * 1.1, 7)
    gradient.set_ylim(0, top)  # 7 for every depth unless a seed goes higher
    gradient.grid(axis="x", visible=False)
    gradient.set_ylabel(r"$\|\partial L / \partial W^{(2)}\|_F$, last block")
    gradient.set_title(f"bar: mean of {DEPTH_SEEDS} seeds (dots)")
    ratio = means["Post-LN"] / means["Pre-LN"]
    style.finding(fig, f"At $L = {depth}$ Post-LN's last $W^{{(2)}}$ gets {ratio:.1f} times "
                       "Pre-LN's gradient")  # fmt: skip
    return fig


# ---- notebook 05: a transformation of Table 1, and what it changes -------------------------------

TRANSFORMATIONS = {  # the control's words -> Table 1's column
    "W rescaled": "weight_matrix_rescale",
    "W recentred": "weight_matrix_recenter",
    "w_1 rescaled": "weight_vector_rescale",
    "X rescaled": "dataset_rescale",
    "X recentred": "dataset_recenter",
    "x_1 rescaled": "case_rescale",
}
FLOOR = 1e-18  # an output change of exactly 0 is drawn here


def table_changes(transformation: str, size: float, eps: float) -> dict:
    """Each normalizer's largest output change, max |y' - y|, under one transformation of
    notebook 05's hand-made cell (16 cases, 10 inputs, 8 units, float64, seed 0). `size` is the
    factor delta of a re-scaling (of W, of unit 1's w_1, of X, of case 1's x_1) or the length
    scale of c for a re-centering, c = size * z with z ~ N(0, I) fixed."""
    generator = torch.Generator().manual_seed(0)
    layers = invariance.normalized_layers(inputs=10, units=8, generator=generator, eps=eps)
    x = torch.randn(16, 10, generator=generator, dtype=torch.float64)
    w = torch.randn(8, 10, generator=generator, dtype=torch.float64) / 10**0.5
    c = size * torch.randn(10, generator=generator, dtype=torch.float64)
    column = TRANSFORMATIONS[transformation]
    move = getattr(invariance, column)  # invariance.weight_matrix_rescale and its five siblings
    if column.endswith("recenter"):
        x2, w2 = move(x, w, c)  # W + 1 c^T, or X + 1 c^T
    elif column in ("weight_vector_rescale", "case_rescale"):
        x2, w2 = move(x, w, 0, size)  # unit 1's weights, or case 1's input, times delta
    else:
        x2, w2 = move(x, w, size)  # delta W, or delta X
    with torch.no_grad():
        return {row: (layer(x2, w2) - layer(x, w)).abs().max().item()
                for row, layer in layers.items()}  # fmt: skip


@styled
def table_1(transformation: str = "W recentred", size: float = 2.0, eps: float = 1e-300) -> Figure:
    """Notebook 05: one transformation of Table 1 applied to one layer, and each normalizer's
    largest output change on a log axis; below 1e-8 the cell reads Invariant."""
    changes = table_changes(transformation, size, eps)
    column = TRANSFORMATIONS[transformation]
    fig = style.new_figure(1, 3.8)
    ax = fig.subplots()
    rows = list(changes)  # invariance.ROWS: batchnorm, weightnorm, layernorm, rmsnorm, dyt
    positions = np.arange(len(rows))[::-1]  # the table's row order, top to bottom
    values = [max(changes[row], FLOOR) for row in rows]
    ax.barh(positions, values, color=[style.color(row) for row in rows], height=0.6)
    # Each row's verdict to the right of the axes, in a margin kept for it: a figure text, which
    # the constrained layout leaves out (so the axes keep one width whatever the words) and a
    # tight crop keeps. The paper's verdict only where it says otherwise.
    fig.get_layout_engine().set(rect=(0, 0, 0.78, 1))
    beside = blended_transform_factory(fig.transFigure, ax.transData)  # x: figure, y: row
    for position, row in zip(positions, rows, strict=True):
        verdict = "Invariant" if changes[row] < invariance.THRESHOLD else "No"
        paper = invariance.PAPER_TABLE.get(row)  # DyT is in no source's table
        if paper is not None and ("Invariant" if paper[column] else "No") != verdict:
            verdict += f"; paper: {'Invariant' if paper[column] else 'No'}"
        fig.text(0.8, position, verdict, transform=beside, va="center", ha="left", size=9)
    ax.set_yticks(positions, [style.display(row) for row in rows])
    ax.set_xlim(FLOOR / 3, 1e2)
    style.log_axis(ax, "x")
    ax.axvline(invariance.THRESHOLD, color=style.REFERENCE, lw=1.0, ls=":")
    ax.set_xlabel("largest output change, max $|y' - y|$ (0 drawn at $10^{-18}$);\n"
                  "Invariant left of the dotted $10^{-8}$")  # fmt: skip
    ax.grid(axis="y", visible=False)
    what = "delta" if column.endswith("rescale") else "c's scale"
    ax.set_title(f"{transformation}, {what} {size:g}, eps {eps:g}", loc="left")
    kept = [style.display(row) for row in rows if changes[row] < invariance.THRESHOLD]
    style.finding(fig, f"{transformation}: " + (f"{', '.join(kept)} unchanged" if kept else
                                                  "every normalizer's output changes"))  # fmt: skip
    return fig
