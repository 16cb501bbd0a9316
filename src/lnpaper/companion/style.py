"""The house style of every figure: one colour per method in every notebook, display names, sizes,
and the few drawing helpers that keep bands, reference levels, log axes and legends alike.

Colours come from Okabe and Ito's palette, chosen to stay apart for the common forms of colour
blindness. A method keeps its colour everywhere (LayerNorm is blue in notebook 01 and in notebook
06); a second factor, such as warmup, batch size, a gain or a learning rate, is a line style or a
marker, never another hue. `tests/test_figure_style.py` renders every figure and checks
this, with the sizes and fonts below, against what was drawn.
"""

import itertools
import math

import numpy as np
from cycler import cycler
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import Formatter, LogFormatterSciNotation, LogLocator

# Okabe & Ito (2008), "Color Universal Design"; grey and brown are added for "none" and WeightNorm.
BLACK, ORANGE, SKY_BLUE, GREEN = "#000000", "#E69F00", "#56B4E9", "#009E73"
BLUE, VERMILLION, PURPLE, YELLOW = "#0072B2", "#D55E00", "#CC79A7", "#F0E442"
GREY, BROWN = "#999999", "#8C5A2B"
GOLD = "#B08800"  # Okabe & Ito's yellow darkened to be read on white: Derf (notebook 10)
# Mix-LN, Post-LN below and Pre-LN above: a violet between their vermillion and blue, darker than
# DyT's reddish purple so the two are told apart (notebook 10)
VIOLET = "#6A3D9A"
REFERENCE = "#555555"  # reference levels and predictions: dark grey, dotted, never a method

METHOD_COLORS = {
    "no norm": GREY,
    "BatchNorm": ORANGE,
    "LayerNorm": BLUE,
    "RMSNorm": GREEN,
    "pRMSNorm": GREEN,  # RMSNorm on a fraction of the units: RMSNorm's hue, its own line style
    "DyT": PURPLE,
    "Derf": GOLD,
    "WeightNorm": BROWN,
    "Post-LN": VERMILLION,
    "Pre-LN": BLUE,  # LayerNorm where the Transformer now puts it
    "Peri-LN": SKY_BLUE,
    "T-Fixup": BLACK,
    "Mix-LN": VIOLET,
}

# What is not a method (units, statistics rules, implementations, widths) is told apart by line
# style and by two neutrals of distinct lightness, disjoint from METHOD_COLORS (and from REFERENCE).
OTHER_COLORS = ("#2B2B2B", "#7A7A7A", "#2B2B2B", "#7A7A7A")

# The names experiments use as keys, and what a reader sees.
DISPLAY_NAMES = {
    "none": "no norm",
    "batchnorm": "BatchNorm",
    "layernorm": "LayerNorm",
    "rmsnorm": "RMSNorm",
    "dyt": "DyT",
    "weightnorm": "WeightNorm",
    "post": "Post-LN",
    "pre": "Pre-LN",
    "peri": "Peri-LN",
}

# Model names that stand for a method: the recurrent models, and the Transformer's variants.
_ALIASES = {
    "LSTM": "no norm",
    "tanh RNN": "no norm",
    "LN-LSTM": "LayerNorm",
    "LN tanh RNN": "LayerNorm",
    "BN-LSTM": "BatchNorm",
    "Pre-DyT": "DyT",
    "Xavier": "no norm",
}
_PREFIXES = sorted([*METHOD_COLORS, *_ALIASES], key=len, reverse=True)

# A second factor, in order of its levels.
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v")
# More levels than LINE_STYLES: dash patterns, for `ls=` (a format string takes only the four)
MORE_DASHES = ((0, (8, 2, 1, 2, 1, 2)), (0, (12, 3)), (0, (1, 4)), (0, (4, 1, 1, 1, 1, 1, 1, 1)))


def line_styles(n: int) -> list:
    """Line styles for `n` levels of a second factor: LINE_STYLES, then MORE_DASHES, then again
    from the start (a reader's sweep can have more levels than the recorded one)."""
    styles = (*LINE_STYLES, *MORE_DASHES)
    return [styles[k % len(styles)] for k in range(n)]


def markers(n: int) -> list:
    """Markers for `n` levels of a second factor, MARKERS in turn."""
    return [MARKERS[k % len(MARKERS)] for k in range(n)]


ONE_PANEL, TWO_PANELS = 6.5, 10.0  # inches; a figure of three or four panels is TWO_PANELS wide
MIN_FONT_SIZE = 9.0  # points, at the figure's own size

RC_PARAMS = {
    "figure.dpi": 100,  # as a notebook shows it: 10 in is 1000 px
    "savefig.dpi": 200,  # figures/, for the README and the book
    "figure.figsize": (ONE_PANEL, 3.8),
    "figure.titlesize": 12,
    "figure.titleweight": "bold",
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "legend.frameon": False,
    "mathtext.fontset": "dejavusans",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.6,
    "image.cmap": "viridis",
    # lines that are not a method (units, widths, schemes) cycle through dark neutrals and line
    # styles, none of them a method's colour
    "axes.prop_cycle": cycler(color=OTHER_COLORS),
}

NATS_PER_TOKEN = "nats per token"
NATS_PER_IMAGE = "nats per image"


def display(key: str) -> str:
    """The reader's name of an experiment's key: "layernorm" -> "LayerNorm"."""
    return DISPLAY_NAMES.get(key, key)


def method_of(label: str) -> str | None:
    """The method a label names, read from its start ("LN-LSTM, gain 0.1" -> "LayerNorm"), or None."""
    for prefix in _PREFIXES:
        if label.startswith(prefix):
            rest = label[len(prefix) :]
            if not rest or rest[0] in " ,:(":
                return _ALIASES.get(prefix, prefix)
    return None


def color(label: str) -> str:
    """The colour of the method a label names; an error for a label that names none."""
    method = method_of(display(label))
    if method is None:
        raise KeyError(f"{label!r} names no method of the palette: {sorted(METHOD_COLORS)}")
    return METHOD_COLORS[method]


def new_figure(panels: int = 1, height: float = 3.8) -> Figure:
    """A figure one panel (6.5 in) or two and more panels (10 in) wide."""
    width = ONE_PANEL if panels == 1 else TWO_PANELS
    return Figure(figsize=(width, height), layout="constrained")


def three_panels(fig: Figure) -> list:
    """Three panels in two rows: two side by side, each as wide as a panel of a two-panel figure
    (a row of three shrinks the ticks to about 9 px in the book's column), and the third across
    the whole second row, so no quarter of the figure is left empty."""
    panels = fig.subplot_mosaic([["first", "second"], ["third", "third"]])
    return [panels["first"], panels["second"], panels["third"]]


def finding(fig: Figure, text: str) -> None:
    """The figure's title: what it shows, as a sentence. Settings go to panel titles or the caption.
    A line wider than the figure (a reader's result can give longer numbers and other words than
    the record's) is broken at a space, never inside a formula."""
    title = fig.suptitle(text, x=0.01, ha="left")
    renderer = RendererAgg(int(fig.bbox.width), int(fig.bbox.height), fig.dpi)
    room = fig.bbox.width * (1 - 0.01) + 2  # from the title's start to the edge, and 2 px slack

    def fits(line: str) -> bool:
        title.set_text(line)
        return title.get_window_extent(renderer).width <= room

    lines = []
    for line in text.split("\n"):
        if fits(line):
            lines.append(line)
            continue
        words = _words(line)
        current = words[0]
        for word in words[1:]:
            if fits(f"{current} {word}"):
                current = f"{current} {word}"
            else:
                lines.append(current)
                current = word
        lines.append(current)
    title.set_text("\n".join(lines))


def _words(line: str) -> list[str]:
    """`line` split at its spaces outside $...$: the places a title may break."""
    words, current, math = [], "", False
    for char in line:
        if char == " " and not math:
            words.append(current)
            current = ""
            continue
        math ^= char == "$"
        current += char
    return [*words, current]


def band(ax, x, runs, color: str, label: str | None = None, style: str = "-", lw: float = 1.8):
    """The mean over runs as a line and their min to max as a band; `runs` is [run][x]."""
    values = np.asarray(runs, dtype=float)
    ax.fill_between(x, values.min(0), values.max(0), color=color, alpha=0.18, lw=0)
    return ax.plot(x, values.mean(0), style, color=color, lw=lw, label=label)[0]


def band_handle(n: int, line: str | None = None) -> Patch:
    """A legend entry that says what the bands are, and what the line through them is."""
    band = f"band: min to max over {n} seeds"
    return Patch(facecolor=GREY, alpha=0.35, label=f"line: {line}; {band}" if line else band)


def method_handle(label: str, marker: str | None = None) -> Line2D:
    """A legend entry in the colour of the method `label` names."""
    return Line2D([], [], color=color(label), lw=2.0, marker=marker, label=label)


def style_handle(style: str, label: str, marker: str | None = None) -> Line2D:
    """A black legend entry for a second factor's line style or marker."""
    return Line2D([], [], color=BLACK, ls=style, marker=marker, label=label)


def _tick_text(x: float) -> str:
    """0.05, 2, 500 as plain numbers; smaller and larger ones as mathtext, 2 x 10^-5."""
    if 1e-3 <= x < 1e4:
        return f"{x:g}"
    exponent = math.floor(math.log10(x) + 1e-9)
    mantissa = round(x / 10**exponent)
    power = f"10^{{{exponent}}}"
    number = power if mantissa == 1 else rf"{mantissa}\times{power}"
    return rf"$\mathdefault{{{number}}}$"


def power_of_ten(value: float) -> str:
    """The power of ten nearest `value`, in mathtext: 3e-37 -> '$10^{-37}$' (a slider demo's
    finding, where only the order of size is read)."""
    return f"$10^{{{np.log10(value):.0f}}}$"


class LogLabels(Formatter):
    """Tick labels of a log axis, decided when it is drawn: where the view spans three powers of
    the base or more, powers of the base alone (a minor tick gets no label); where it spans less
    (base 10), also 2 and 5 times a power, or 3 where 2 and 5 would not fit the axis's length, so
    that the values between powers can be read off. Under three decades every label is a plain
    number (0.2, 0.5, 1) between 0.001 and 10^4."""

    INTERMEDIATE = ((2, 5), (3,))  # the mantissas labelled, tried in order until they fit

    def __init__(self, base: float, major: bool):
        self.base, self.major = base, major
        self.powers = LogFormatterSciNotation(base=base)

    def set_axis(self, axis):
        super().set_axis(axis)
        self.powers.set_axis(axis)

    def set_locs(self, locs):
        super().set_locs(locs)
        self.powers.set_locs(locs)

    def _mantissas(self) -> tuple:
        """The intermediate mantissas this axis labels now, () where it spans 3 decades or more."""
        if self.base != 10 or not self._spans_under_three_decades():
            return ()
        low, high = sorted(self.axis.get_view_interval())
        decades = math.log10(high / low)
        box = self.axis.axes.bbox
        horizontal = self.axis.axis_name == "x"
        length = (box.width if horizontal else box.height) / self.axis.figure.dpi * 72  # points
        per_decade = length / max(decades, 1e-9)
        size = MIN_FONT_SIZE * (3.6 if horizontal else 1.6)  # "0.005" wide, or a line high
        for mantissas in self.INTERMEDIATE:
            ticks = sorted({1, *mantissas, 10})
            gap = min(math.log10(b / a) for a, b in itertools.pairwise(ticks))
            if gap * per_decade >= size:
                return mantissas
        return ()

    def __call__(self, x, pos=None):
        if x <= 0:
            return ""
        exponent = math.floor(math.log(x, self.base) + 1e-9)
        mantissa = x / self.base**exponent
        if self.major:
            narrow = self.base == 10 and self._spans_under_three_decades()
            return _tick_text(x) if narrow else self.powers(x, pos)
        whole = round(mantissa)
        return _tick_text(x) if whole in self._mantissas() and abs(mantissa - whole) < 1e-6 else ""

    def _spans_under_three_decades(self) -> bool:
        low, high = sorted(self.axis.get_view_interval())
        return low > 0 and math.log10(high / low) < 3


def log_axis(ax, which: str = "y", base: float = 10) -> None:
    """A log axis labelled as LogLabels says: powers of the base, and where the view spans under
    three decades the values between them too. Its limits are widened to two powers of the base
    when the data span less than that and, in base 10, fewer than two of 1, 2 and 5 times a power,
    so that at least two ticks carry a label."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log", base=base)
    axis.set_major_locator(LogLocator(base=base, numticks=12))
    axis.set_minor_locator(LogLocator(base=base, subs="auto", numticks=12))
    axis.set_major_formatter(LogLabels(base, major=True))
    axis.set_minor_formatter(LogLabels(base, major=False))
    get, put = (ax.get_ylim, ax.set_ylim) if which == "y" else (ax.get_xlim, ax.set_xlim)
    low, high = get()
    first, last = math.floor(math.log(low, base)), math.ceil(math.log(high, base))
    mantissas = (1, 2, 5) if base == 10 else (1,)
    labelled = [m * base**k for k in range(first, last + 1) for m in mantissas]
    if sum(low <= v <= high for v in labelled) < 2:
        lo = base ** math.floor(math.log(low, base))
        put(lo, max(high, lo * base))


def levels(ax, marks, *, min_gap: float = 0.07, at: float = 0.995) -> None:
    """Reference levels as dotted grey lines, each labelled on its line at `at` (a fraction of the
    axes' width: the label ends there, or starts there if `at` is in the left half, so a label
    can be moved off the data); labels closer than `min_gap` of the axes' height are pushed apart
    upwards. `marks` is [(y, text)]; call after the limits are set."""
    for value, _ in marks:
        ax.axhline(value, color=REFERENCE, lw=1.0, ls=":", zorder=1)
    ax.get_ylim()  # the limits as the lines leave them, before a label is placed by them
    to_axes = ax.transScale + ax.transLimits
    placed = []
    for value, text in sorted(marks):
        y = to_axes.transform((0.5, value))[1]
        y = max(y, placed[-1][0] + min_gap) if placed else y
        placed.append((y, text))
    for y, text in placed:
        ax.text(at, y, text, transform=ax.transAxes, ha="right" if at > 0.5 else "left",
                va="center", color=REFERENCE, size=MIN_FONT_SIZE,
                bbox={"fc": "white", "ec": "none", "pad": 1.0})  # fmt: skip


def vertical_mark(ax, x: float, text: str) -> None:
    """A labelled vertical reference, such as the training length T_max."""
    ax.axvline(x, color=REFERENCE, lw=1.0, ls="--", zorder=1)
    ax.text(x, 0.99, f" {text}", transform=ax.get_xaxis_transform(), va="top", ha="left",
            color=REFERENCE, size=MIN_FONT_SIZE)  # fmt: skip


def shared_legend(
    fig: Figure, axes=None, extra=(), ncols: int | None = None, loc="outside lower center"
):
    """One legend for the whole figure, outside the axes: every labelled artist of `axes` (all of
    the figure's by default) once, then `extra` handles."""
    found = {}
    for ax in fig.axes if axes is None else np.ravel(axes):
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            found.setdefault(label, handle)
    handles = [*found.values(), *extra]
    labels = [*found, *(handle.get_label() for handle in extra)]
    ncols = ncols or min(len(handles), 4)
    return fig.legend(handles, labels, loc=loc, ncols=ncols)
