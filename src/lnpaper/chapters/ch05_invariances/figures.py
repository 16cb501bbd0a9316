"""Figures of notebook 05, invariances and the geometry of Section 5."""

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from lnpaper.chapters.ch05_invariances import runs as ch05_runs
from lnpaper.chapters.ch05_invariances import runs_fisher as ch05_runs_fisher
from lnpaper.chapters.ch05_invariances import runs_geometry as ch05_runs_geometry
from lnpaper.chapters.ch05_invariances.invariance import PAPER_TABLE
from lnpaper.companion import style
from lnpaper.companion.chapter import figure

ROW_SOURCES = {
    "batchnorm": "Table 1",
    "weightnorm": "Table 1",
    "layernorm": "Table 1",
    "rmsnorm": "its paper's Table 1",
    "dyt": "no source: ours only",
}
COLUMN_LABELS = {
    "weight_matrix_rescale": "weight matrix\nre-scaling\n$W \\to \\delta W$",
    "weight_matrix_recenter": "weight matrix\nre-centering\n$W \\to W + \\mathbf{1}c^\\top$",
    "weight_vector_rescale": "weight vector\nre-scaling\n$w_i \\to \\delta w_i$",
    "dataset_rescale": "dataset\nre-scaling\n$X \\to \\delta X$",
    "dataset_recenter": "dataset\nre-centering\n$X \\to X + \\mathbf{1}c^\\top$",
    "case_rescale": "single case\nre-scaling\n$x_n \\to \\delta x_n$",
}
ANGLE_EVERY = 8  # steps between the markers of the measured angle, so the prediction shows
INVARIANT_FILL, CHANGED_FILL = "#4D4D4D", "#F2F2F2"  # neutral: the methods own the hues


@figure("invariance_table", experiment=ch05_runs.invariance_measurements)
def invariance_table(result) -> Figure:
    """Table 1 filled in by measurement (float64, no epsilon): each cell gives the largest change
    of the layer's output over 6 random transformations of its kind, and says Invariant when that
    stays below $10^{-8}$. The source of each row's table is under its name; a dashed frame would
    mark a cell where the measurement disagrees with it."""
    rows, columns = result.rows, result.columns
    fig = style.new_figure(2, 5.4)
    ax = fig.subplots()
    agree = total = 0
    for r, row in enumerate(rows):
        ax.add_patch(Rectangle((-0.09, r + 0.06), 0.05, 0.88, fc=style.color(row), clip_on=False))
        for c, column in enumerate(columns):
            change = result.max_change[row][column]
            invariant = change < result.threshold
            ax.add_patch(Rectangle((c, r), 1, 1, fc=INVARIANT_FILL if invariant else CHANGED_FILL,
                                   ec="white", lw=3))  # fmt: skip
            ink = "white" if invariant else style.BLACK
            word = "Invariant" if invariant else "No"
            ax.text(c + 0.5, r + 0.4, word, ha="center", va="center", size=12, weight="bold",
                    color=ink)  # fmt: skip
            ax.text(c + 0.5, r + 0.72, _number(change), ha="center", va="center", color=ink)
            paper = PAPER_TABLE.get(row, {}).get(column)
            if paper is not None:
                total += 1
                agree += paper == invariant
                if paper != invariant:
                    ax.add_patch(Rectangle((c + 0.04, r + 0.04), 0.92, 0.92, fill=False,
                                           ec=style.BLACK, ls="--", lw=2.5))  # fmt: skip
    ax.set(xlim=(0, len(columns)), ylim=(len(rows), 0))
    ax.set_xticks(np.arange(len(columns)) + 0.5, [COLUMN_LABELS[c] for c in columns])
    ax.xaxis.tick_top()
    row_labels = [f"{style.display(row)}\n({ROW_SOURCES[row]})" for row in rows]
    ax.set_yticks(np.arange(len(rows)) + 0.5, row_labels)
    ax.tick_params(length=0, pad=14)
    ax.tick_params(axis="y", labelsize=10)
    ax.grid(False)
    ax.spines[:].set_visible(False)
    ax.set_xlabel(f"in each cell: the largest change of the output over {result.draws} random "
                  f"transformations (float64); Invariant: below {_number(result.threshold)}")  # fmt: skip
    dyt = sum(result.max_change["dyt"][c] < result.threshold for c in columns)
    kinds = {6: "six"}.get(len(columns), str(len(columns)))
    style.finding(fig, f"Measured, {agree} of {total} cells agree with the sources' tables; DyT, in "
                  f"no table, is invariant to {'none' if dyt == 0 else dyt} of the {kinds}")  # fmt: skip
    return fig


def _number(value: float) -> str:
    """A change as a reader takes it in: 4.8 or 0.68 as they are, 1.3e-15 in powers of ten."""
    if 0.1 <= value < 100:
        return f"{value:.2g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    power = f"10^{{{int(exponent)}}}"
    return f"${power}$" if mantissa == "1.0" else f"${mantissa} \\times {power}$"


@figure("sgd_geometry", experiment=ch05_runs_geometry.sgd_geometry)
def sgd_geometry(result) -> Figure:
    r"""An MLP on the 8x8 digits with one hidden layer of 64 units (LayerNorm, then tanh), trained
    with plain SGD (no momentum, no weight decay, batch 64) twice from the same function, with $W_1$
    initialized at two scales. Top left: $\|W_1\|$ relative to its start. Top right: the angle $W_1$ turns
    in each step, measured (a marker every 8th step) on the line of its prediction
    $\arctan(\eta \|g_t\| / \|W_t\|)$; the worst gap is the largest |measured / predicted - 1|
    over all steps. Below: the training loss, mean over 10 steps. The title's factor compares the
    first steps' $\tan\theta$."""
    fig = style.new_figure(3, 6.8)
    norms_ax, angle_ax, loss_ax = style.three_panels(fig)
    blue = style.color("LayerNorm")
    scales, gaps = [], []
    n = len(result.norms)
    for (key, norms), line, marker in zip(result.norms.items(), style.line_styles(n),
                                          style.markers(n), strict=True):  # fmt: skip
        norms = np.array(norms)
        look = {"color": blue, "ls": line, "marker": marker, "markevery": 50, "ms": 5}
        norms_ax.plot(np.arange(len(norms)), norms / norms[0], **look)
        measured = np.array(result.angles[key])
        predicted = np.arctan(result.lr * np.array(result.grad_norms[key]) / norms[:-1])
        steps = np.arange(len(measured))
        angle_ax.plot(steps, predicted, color=style.REFERENCE, lw=0.6, alpha=0.8, zorder=1)
        sampled = steps[::ANGLE_EVERY]
        angle_ax.plot(sampled, measured[sampled], ls="", marker=marker, ms=4, color=blue)
        gaps.append(np.max(np.abs(measured / predicted - 1)))
        loss_ax.plot(result.loss_steps, result.train_loss[key], **{**look, "markevery": 5})
        scales.append(style.style_handle(line, f"$W_1$ initialized at scale {key}", marker))
    norms_ax.set(title="$\\|W_1\\|$ only grows", ylabel="$\\|W_1\\|$ / its initial value")
    angle_ax.set(title=f"angle turned per step (worst gap {_number(max(gaps))})", ylabel="radians")
    style.log_axis(angle_ax, "y")
    loss_ax.set(title="training loss, mean over 10 steps", ylabel=f"loss ({style.NATS_PER_IMAGE})")
    style.log_axis(loss_ax, "y")
    for ax in (norms_ax, angle_ax, loss_ax):
        ax.set_xlabel(f"SGD step ($\\eta = {result.lr:g}$)")
    model = Line2D([], [], color=blue, label="LayerNorm MLP, plain SGD")
    measured = Line2D([], [], color=blue, ls="", marker="o", ms=4,
                      label=f"angle measured, every {ANGLE_EVERY}th step")  # fmt: skip
    prediction = Line2D([], [], color=style.REFERENCE, lw=0.6,
                        label="predicted, $\\arctan(\\eta \\|g_t\\| / \\|W_t\\|)$")  # fmt: skip
    style.shared_legend(fig, extra=[model, *scales, measured, prediction], ncols=3)
    # the smallest scale against the largest (the keys are the scales, in the order of init_scales)
    keys = dict(zip(result.init_scales, result.norms, strict=True))
    small, large = min(keys), max(keys)
    turn = np.tan(result.angles[keys[small]][0]) / np.tan(result.angles[keys[large]][0])
    started = large / small
    style.finding(fig, f"Under SGD $\\|W_1\\|$ only grows; started {started:g}× larger, the same "
                  f"function turns {turn:.1f}× less per step")  # fmt: skip
    return fig


@figure("adam_geometry", experiment=ch05_runs_geometry.adam_geometry)
def adam_geometry(result) -> Figure:
    r"""A LayerNorm MLP on the 8x8 digits (64 -> 32 -> LayerNorm -> tanh -> 10, batch 64, float64,
    10 seeds). Left: the angle $W_1$ turns per step, mean over the first steps, against $\|W_1\|$
    at the start, for one function with $W_1$ at five scales; Adam without weight decay and plain
    SGD; the grey lines have slopes -1 and -2. Right: AdamW with decoupled weight decay on $W_1$,
    three $(\eta, \lambda)$, started at $3\times$ scale: the angle per step (mean over seeds),
    and dotted, Kosson et al.'s equilibrium $\sqrt{2\eta\lambda(1-\beta_1)/(1+\beta_1)}$."""
    fig = style.new_figure(2, 4.2)
    scale_ax, adamw_ax = fig.subplots(1, 2)
    blue = style.color("LayerNorm")
    norms = np.array(result.init_norms).mean(1)
    fits = {}
    for name, angles, marker, exponent in (("Adam", result.adam_angles, "o", -1),
                                           ("SGD", result.sgd_angles, "s", -2)):  # fmt: skip
        angles = np.array(angles).mean(1)
        slopes = ch05_runs_geometry.angle_slopes(result, name.lower())
        fits[name] = float(np.mean(slopes))
        lr = result.adam_lr if name == "Adam" else result.sgd_lr
        scale_ax.plot(norms, angles, ls="", marker=marker, ms=7, color=blue,
                      label=f"LayerNorm MLP, {name} ($\\eta = {lr:g}$), slope {fits[name]:.2f}")  # fmt: skip
        reference = angles[0] * (norms / norms[0]) ** exponent
        scale_ax.plot(norms, reference, color=style.REFERENCE, lw=1.0, ls=":", zorder=1)
    style.log_axis(scale_ax, "x", base=2)
    style.log_axis(scale_ax, "y")
    scale_ax.set_xlabel("$\\|W_1\\|$ at the start (same function at every scale)")
    scale_ax.set_ylabel(f"angle per step, radians (first {result.window} steps)")
    scale_ax.set_title("no weight decay: Adam ~ $\\eta/\\|W\\|$, SGD ~ $\\eta/\\|W\\|^2$")
    steps = np.arange(len(result.angle_curve[0])) * result.curve_every
    ratios, marks = [], []
    looks = style.line_styles(len(result.configs))
    for c, ((lr, decay), line) in enumerate(zip(result.configs, looks, strict=True)):
        predicted = ch05_runs_geometry.adamw_predictions(result, c)["angle"]
        adamw_ax.plot(steps, result.angle_curve[c], ls=line, color=blue,
                      label=f"LayerNorm MLP, AdamW $\\eta = {lr:g}$, $\\lambda = {decay:g}$")  # fmt: skip
        ratios.append(float(np.mean(result.equilibrium_angle[c])) / predicted)
        marks.append((predicted, f"predicted, $\\eta\\lambda = {lr * decay:g}$"))
    adamw_ax.axvspan(result.steps - result.tail, result.steps, color=style.GREY, alpha=0.15, lw=0)
    adamw_ax.set_ylim(0, 1.25 * max(m[0] for m in marks))
    style.levels(adamw_ax, sorted(set(marks)))
    adamw_ax.set_xlabel(f"AdamW step (shaded: the last {result.tail}, the equilibrium)")
    adamw_ax.set_ylabel("angle per step, radians")
    side = "below" if max(ratios) < 1 else "above" if min(ratios) > 1 else "about at"
    adamw_ax.set_title(f"AdamW: the angular update settles, {side} the prediction")
    style.shared_legend(fig, ncols=2)
    # like eta/||W|| when the fitted slope is within 0.25 of that law's -1
    like = r"like $\eta/\|W\|$" if abs(fits["Adam"] + 1) < 0.25 else r"not like $\eta/\|W\|$"
    style.finding(fig, f"Adam turns $W$ {like} (slope {fits['Adam']:.2f}; SGD {fits['SGD']:.2f}); "
                  f"AdamW settles at {min(ratios):.2f}-{max(ratios):.2f}x the predicted angle")  # fmt: skip
    return fig


# The experiment's kinds of normalized unit: the method, and what was doubled (a hatch).
FISHER_KINDS = {
    "weightnorm": ("WeightNorm", ""),
    "batchnorm": ("BatchNorm, expected statistics", ""),
    "layernorm, whole W": ("LayerNorm, whole $W$ doubled", ""),
    "layernorm, one row w_1": ("LayerNorm, one row $w_1$ doubled", "///"),
}


@figure("fisher_doubling", experiment=ch05_runs_fisher.fisher_doubling)
def fisher_doubling(result) -> Figure:
    r"""Normalized logistic units (512 inputs, float64) before and after doubling $w$: the factor
    by which each block of the Fisher information changes (left), and the length element
    $\sqrt{u^\top F_{ww} u}$ along a fixed direction $u$ and the gradient's norm (right), on a log
    axis. Dotted: the scale-invariant argument. BatchNorm uses its expected statistics (over all 512
    inputs); LayerNorm is a layer of 4 units sharing $\mu$ and $\sigma$, with the whole $W$ or only
    its first row doubled."""
    fig = style.new_figure(2, 4.0)
    blocks_ax, derived_ax = fig.subplots(1, 2, sharey=True, width_ratios=[len(result.nominal), 2.6])
    blocks = list(result.nominal)
    gradient = {k: g["w"] for k, g in result.gradient_ratios.items()}
    derived = {"length": result.length_ratio, "gradient": gradient}
    width = 0.8 / len(result.kinds)
    for k, kind in enumerate(result.kinds):
        label, hatch = FISHER_KINDS[kind]
        colour = style.color(label)
        offset = (k - (len(result.kinds) - 1) / 2) * width
        look = {"color": colour, "hatch": hatch, "ec": "white", "lw": 0, "label": label}
        values = [result.ratios[kind][block] for block in blocks]
        blocks_ax.bar(np.arange(len(blocks)) + offset, np.log2(values), width, **look)
        values = [derived[name][kind] for name in derived]
        derived_ax.bar(np.arange(len(derived)) + offset, np.log2(values), width,
                       **{**look, "label": None})  # fmt: skip
    argument = {"color": style.REFERENCE, "ls": ":", "lw": 1.6}  # the scale-invariant argument
    for ax, nominal in [(blocks_ax, list(result.nominal.values())), (derived_ax, [0.5, 0.5])]:
        for x, value in enumerate(nominal):
            ax.plot([x - 0.45, x + 0.45], [np.log2(value)] * 2, **argument)
        ax.axhline(0, color=style.BLACK, lw=0.8)
        ax.grid(axis="x", visible=False)
    blocks_ax.set_xticks(
        range(len(blocks)), [f"$F_{{{block.replace('-', '')}}}$" for block in blocks]
    )
    blocks_ax.set_title("blocks of the Fisher information")
    derived_ax.set_xticks(range(2), ["length\n$\\sqrt{u^\\top F_{ww} u}$",
                                     "gradient\n$\\|\\nabla_w \\log p\\|$"])  # fmt: skip
    derived_ax.set_title("along $w$")
    blocks_ax.set_yticks([-2, -1, 0, 1], ["$1/4$", "$1/2$", "$1$", "$2$"])
    blocks_ax.set(ylim=(-2.4, 1.6), ylabel="after / before doubling (log scale)")
    handle = Line2D([], [], **argument, label="scale-invariant argument")
    style.shared_legend(fig, extra=[handle], ncols=3)
    exact = result.kinds[0]
    row = "layernorm, one row w_1"
    style.finding(fig, f"Doubling $w$ scales $F_{{ww}}$ by {result.ratios[exact]['w-w']:.2f} and the "
                  f"length element by {result.length_ratio[exact]:.2f}; one LayerNorm row: "
                  f"{result.ratios[row]['w-w']:.2f} and {result.length_ratio[row]:.2f}")  # fmt: skip
    return fig
