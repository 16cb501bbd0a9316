"""Figures of notebook 02, the transpose."""

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import NullFormatter

from lnpaper.chapters.ch02_transpose import runs as ch02_runs
from lnpaper.companion import style
from lnpaper.companion.chapter import figure

EXACT_ZERO = "#D9D9D9"  # light grey, apart from every colour of the colour scale


@figure("transpose_table")
def transpose_table() -> Figure:
    """The summed inputs of one layer for one mini-batch, as a table of N = 6 examples by H = 8
    hidden units (the same random numbers in both panels; darker is larger). BatchNorm takes one
    mean and variance per column (unit i), over the examples of the batch; LayerNorm takes one per
    row (example n), over that example's own units. The framed column and row feed the framed
    statistic."""
    rng = np.random.default_rng(0)
    examples, units = 6, 8
    table = rng.normal(size=(examples, units)) * rng.uniform(0.5, 2.0, size=(examples, 1))
    gap = 0.7  # between the table and the strip of its statistics
    # Both panels span the table and both strips' places, so that their cells are one size.
    right, bottom = units + gap, examples + gap  # LayerNorm's strip of statistics, BatchNorm's
    fig = style.new_figure(2, 4.9)
    bn_ax, ln_ax = fig.subplots(1, 2)
    column, row = 2, 3  # the unit and the example whose statistics are framed
    unit_ticks = [str(i + 1) for i in range(units)]
    example_ticks = [str(n + 1) for n in range(examples)]
    for ax in (bn_ax, ln_ax):
        ax.imshow(table, cmap="Greys", vmin=-6, vmax=12)  # light greys: the eye goes to the frames
        ax.set(xlim=(-0.5, right + 0.5), ylim=(bottom + 0.5, -0.5))
        ax.grid(False)
        ax.tick_params(length=0, labelsize=11)
        ax.spines[["left", "bottom"]].set_visible(False)

    orange = style.color("BatchNorm")
    for i in range(units):
        _cell(bn_ax, (i, bottom), orange, framed=i == column)
    bn_ax.add_patch(_frame((column, 0), 1, examples, orange))
    _arrow(bn_ax, (column, examples - 0.5), (column, bottom - 0.5), orange)
    bn_ax.set_xticks(range(units), unit_ticks)
    bn_ax.set_xlabel("hidden unit $i$", size=11, x=(units / 2) / (right + 1))
    bn_ax.set_yticks([*range(examples), bottom], [*example_ticks, r"$\mu_i,\ \sigma_i$"])
    bn_ax.set_ylabel("example $n$ of the mini-batch", size=11, y=1 - (examples / 2) / (bottom + 1))
    bn_ax.set_title("BatchNorm: one $\\mu_i$, $\\sigma_i$ per unit,\nover the $N$ examples", size=12,
                    x=(units / 2) / (right + 1))  # fmt: skip

    blue = style.color("LayerNorm")
    for n in range(examples):
        _cell(ln_ax, (right, n), blue, framed=n == row)
    ln_ax.add_patch(_frame((0, row), units, 1, blue))
    _arrow(ln_ax, (units - 0.5, row), (right - 0.5, row), blue)
    # The unit numbers go right under the table: BatchNorm's strip leaves this panel's bottom empty.
    ln_ax.set_xticks([])
    for i, text in [*enumerate(unit_ticks), (right, r"$\mu_n,\ \sigma_n$")]:
        ln_ax.text(i, examples - 0.35, text, ha="center", va="top", size=11)
    ln_ax.text(units / 2 - 0.5, examples + 0.2, "hidden unit $i$", ha="center", va="top", size=11)
    ln_ax.set_yticks(range(examples), example_ticks)
    title = "LayerNorm: one $\\mu_n$, $\\sigma_n$ per example,\nover its own $H$ units"
    ln_ax.set_title(title, size=12)
    finding = "BatchNorm's statistics need the whole batch; LayerNorm's need only the example"
    style.finding(fig, finding)
    return fig


def _cell(ax, center, colour, framed):
    """One statistic of the strip beside the table: tinted, and framed when it is the one shown."""
    x, y = center
    ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fc=colour, alpha=0.35, ec="white", lw=2))
    if framed:
        ax.add_patch(_frame((x, y), 1, 1, colour))


def _frame(start, width, height, colour):
    """A thick frame around the cells from `start` (column, row) on, `width` by `height` cells."""
    x, y = start
    return Rectangle((x - 0.5, y - 0.5), width, height, fill=False, ec=colour, lw=3.5, zorder=3)


def _arrow(ax, start, end, colour):
    arrow = {"arrowstyle": "-|>", "color": colour, "lw": 2}
    ax.annotate("", xy=end, xytext=start, arrowprops=arrow)


@figure("per_token_independence", experiment=ch02_runs.per_token_independence)
def per_token_independence(result) -> Figure:
    """One token's input is changed in a B x T x d tensor (B = 4 sequences, T = 12 tokens,
    d = 32 features): each cell is the largest change of that token's output over its d features,
    on a log colour scale; light grey is a change of exactly 0. LayerNorm normalizes each token
    over its own features; BatchNorm (training mode) takes each feature's statistics over all
    B x T tokens."""
    layernorm = np.array(result.layernorm_change)
    batchnorm = np.array(result.batchnorm_change)
    moved = np.concatenate([layernorm[layernorm > 0], batchnorm[batchnorm > 0]])
    low, high = np.floor(np.log10(moved.min())), np.ceil(np.log10(moved.max()))
    scale = LogNorm(vmin=10**low, vmax=10**high)
    cmap = colormaps["viridis"].with_extremes(bad=EXACT_ZERO)  # viridis starts dark: no clash
    fig = style.new_figure(2, 3.1)
    axes = fig.subplots(1, 2, sharey=True)
    panels = [(layernorm, "LayerNorm"), (batchnorm, "BatchNorm over all B × T tokens")]
    b, t = result.perturbed
    for ax, (change, title) in zip(axes, panels, strict=True):
        image = ax.imshow(np.ma.masked_equal(change, 0.0), cmap=cmap, norm=scale, aspect="auto")
        ax.add_patch(Rectangle((t - 0.5, b - 0.5), 1, 1, fill=False, ec=style.BLACK, lw=2.5))
        ax.set(title=title, xlabel="token position $t$", xticks=range(0, change.shape[1], 2))
        ax.set_yticks(range(change.shape[0]))
        ax.grid(False)
    axes[0].set_ylabel("sequence $b$")
    bar = fig.colorbar(image, ax=axes, label="largest change of\nthe token's output", aspect=15)
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    changed = Patch(fc="none", ec=style.BLACK, lw=2.5, label="the token whose input was changed")
    zero = Patch(fc=EXACT_ZERO, label="exactly 0")
    style.shared_legend(fig, extra=[changed, zero])
    others = "exactly 0" if result.layernorm_max_other == 0 else f"{result.layernorm_max_other:.2g}"
    style.finding(fig, f"One changed token moves the others by {others} under LayerNorm,\nby up to "
                  f"{result.batchnorm_max_other:.2g} under BatchNorm")  # fmt: skip
    return fig


# The variants of notebook 02's table, as formulas. They are not methods of the palette: they take
# the rc colour cycle, with a line style each.
VARIANT_LABELS = {
    "eps outside the sqrt": r"$(a-\mu)\,/\,(\sigma+\epsilon)$, the authors' Torch module",
    "unbiased std, eps outside (Annotated Transformer)":
        r"$(a-\mu)\,/\,(\mathrm{std}_{H-1}+\epsilon)$, the Annotated Transformer",
    "unbiased var, eps inside (x.var())": r"$(a-\mu)\,/\sqrt{\mathrm{var}_{H-1}+\epsilon}$, x.var()",
}  # fmt: skip


def eps_text(eps: float) -> str:
    """1e-05 as $\\epsilon = 10^{-5}$; every eps here is a power of ten."""
    return f"$\\epsilon = 10^{{{round(np.log10(eps))}}}$"


@figure("variants_vs_scale", experiment=ch02_runs.variants_vs_scale)
def variants_vs_scale(result) -> Figure:
    r"""Three functions called LayerNorm against torch.nn.LayerNorm, $(a-\mu)/\sqrt{\sigma^2+\epsilon}$
    with $\epsilon = 10^{-5}$, on rows of H = 64 Gaussian values with a given standard deviation (256
    rows per point). Each variant runs with the $\epsilon$ of its source, given in the legend. Left:
    the ratio of the output sizes; right: its distance from 1. The dashed line is nn.LayerNorm's
    $\sqrt{\epsilon}$, below which its output shrinks with the row; the dotted level on the right is
    the unbiased variants' factor $\sqrt{(H-1)/H}$, away from 1.
    """
    fig = style.new_figure(2, 4.2)
    left, right = fig.subplots(1, 2)
    stds = np.array(result.stds)
    for (name, ratios), line in zip(result.ratios.items(), style.LINE_STYLES, strict=False):
        ratios = np.array(ratios)
        label = f"{VARIANT_LABELS[name]}, {eps_text(result.eps[name])}"
        left.plot(stds, ratios, line, marker="o", ms=3.5, label=label)
        right.plot(stds, np.abs(ratios - 1), line, marker="o", ms=3.5)
    left.set_ylabel(r"$\|y_{\mathrm{variant}}\|\ /\ \|y_{\mathrm{nn.LayerNorm}}\|$")
    left.set_title(f"output size relative to nn.LayerNorm, $H = {result.width}$")
    right.set(ylabel=r"$|\,\mathrm{ratio} - 1\,|$", title="distance from nn.LayerNorm")
    for ax in (left, right):
        style.log_axis(ax, "x")
        style.log_axis(ax, "y")
        ax.set_xlabel("standard deviation of the row")
        mark = f"$\\sqrt{{\\epsilon}}$ of nn.LayerNorm, {eps_text(result.reference_eps)}"
        style.vertical_mark(ax, np.sqrt(result.reference_eps), mark)
        ax.set_xlim(right=stds.max() * 10**1.7)  # room for the levels' labels, past the data
    style.levels(left, [(1.0, "nn.LayerNorm")])
    unbiased_gap = 1 - np.sqrt((result.width - 1) / result.width)
    style.levels(right, [(unbiased_gap, r"$1-\sqrt{(H-1)/H}$")])
    style.shared_legend(fig, ncols=1)
    worst = max(max(ratios) for ratios in result.ratios.values())
    style.finding(fig, f"Three LayerNorms in the wild: up to {worst:.0f}× nn.LayerNorm on rows below "
                  f"its $\\sqrt{{\\epsilon}}$, {unbiased_gap:.1%} off on ordinary rows")  # fmt: skip
    return fig


# The variance formulas and the two LayerNorm implementations, as the reader sees them.
VARIANCE_LABELS = {
    "one pass E[a^2] - E[a]^2": r"one pass, $E[a^2]-E[a]^2$",
    "two pass E[(a - mu)^2]": r"two passes, $E[(a-\mu)^2]$",
    "two pass, mean removed twice": "two passes, mean removed twice",
}
ONE_PASS = "one pass E[a^2] - E[a]^2"


@figure("one_pass_variance", experiment=ch02_runs.one_pass_variance)
def one_pass_variance(result) -> Figure:
    """float32 rows of H = 1024 values with standard deviation 0.01 and a growing mean (64 rows
    per offset), each judged against float64 arithmetic on the same float32 values. Top left: the
    median relative error of the variance; the one-pass line stops where that formula's variance
    comes out zero or negative, and bottom left gives the share of rows where it does. Right: the
    largest relative error of the LayerNorm output, PyTorch's fused kernel against lnpaper's."""
    fig = style.new_figure(2, 4.6)
    panels = fig.subplot_mosaic(
        [["variance", "output"], ["nonpositive", "output"]], height_ratios=[2.4, 1]
    )
    variance, nonpositive, output = (panels[k] for k in ("variance", "nonpositive", "output"))
    variance.sharex(nonpositive)
    positions = np.arange(len(result.offsets))
    shares = np.array(result.nonpositive_fraction)
    for (name, errors), ls in zip(result.variance_error.items(), style.LINE_STYLES, strict=False):
        errors = np.array(errors)
        # Where a row's variance is <= 0 there is no variance to compare: its relative error
        # reads 1 or more whatever happened, so those offsets are left out, not drawn as recovery.
        kept = shares == 0 if name == ONE_PASS else np.ones(len(errors), dtype=bool)
        line = variance.plot(positions[kept], errors[kept], ls, marker="o",
                             label=VARIANCE_LABELS[name])  # fmt: skip
        if name == ONE_PASS:
            one_pass_colour = line[0].get_color()
    variance.set_title(f"float32 variance, std {result.std:g}, $H = {result.width}$")
    variance.set_ylabel("median relative error")
    style.log_axis(variance, "y")
    variance.tick_params(labelbottom=False)
    failed = positions[shares > 0]
    if len(failed):
        variance.axvspan(failed[0] - 0.5, failed[-1] + 0.5, color=style.GREY, alpha=0.15, lw=0)
        share_range = f"{shares[failed].min():.0%} to {shares[failed].max():.0%}"
        variance.text(
            failed.mean(), 0.93, f"one pass: variance $\\leq 0$\nin {share_range} of rows (below)",
            transform=variance.get_xaxis_transform(), ha="center", va="top",
        )  # fmt: skip

    bars = nonpositive.bar(positions, 100 * shares, width=0.6, color=one_pass_colour)
    nonpositive.bar_label(bars, labels=[f"{share:.0%}" for share in shares], padding=2)
    nonpositive.set(ylim=(0, 130), ylabel="rows where\none pass $\\leq 0$")
    nonpositive.set_yticks([0, 100], ["0%", "100%"])
    nonpositive.grid(False)

    blue = style.color("LayerNorm")
    for (name, errors), line in zip(
        result.layernorm_error.items(), style.LINE_STYLES, strict=False
    ):
        output.plot(positions, errors, line, marker="o", color=blue)
        # labelled on the line: the legend below is the variance formulas'
        # at the second offset, running right; with few offsets, at the last, running left
        at, dx, ha = (1, 8, "left") if len(positions) > 2 else (-1, -8, "right")
        output.annotate(name, (positions[at], errors[at]), xytext=(dx, 8),
                        textcoords="offset points", color=blue, ha=ha, va="bottom")  # fmt: skip
    output.set(title="float32 LayerNorm output", ylabel="largest relative error")
    style.log_axis(output, "y")
    output.set_xlim(-0.4, positions[-1] + 0.9)  # the bar's label sits past the last offset
    style.levels(output, [(1e-3, "lnpaper's bar")])

    labels = [f"$10^{{{np.log10(offset):.0f}}}$" if offset >= 100 else f"{offset:g}"
              for offset in result.offsets]  # fmt: skip
    for ax in (nonpositive, output):
        ax.set_xticks(positions, labels)
        ax.set_xlabel("mean of the row")
    style.shared_legend(fig, ncols=3)
    twice = max(result.variance_error["two pass, mean removed twice"])
    if len(failed):
        first = failed[0]
        one_pass = (f"$\\leq 0$ in {shares[first]:.0%} of rows at mean "
                    f"{result.offsets[first]:g}")  # fmt: skip
    else:
        one_pass = f"above 0 in every row up to mean {max(result.offsets):g}"
    style.finding(fig, f"float32 one-pass variance: {one_pass}; centering twice stays within "
                  f"$10^{{{np.ceil(np.log10(twice)):.0f}}}$")  # fmt: skip
    return fig
