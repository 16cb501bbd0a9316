"""Every figure, drawn from the record, against the house style (lnpaper.companion.style):
the palette's colour for each method it shows, display names, widths, fonts, one legend kept off
the data, a finding for a title and units on loss axes."""

import functools
import math
import re

import matplotlib
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.text import Text

from lnpaper import book
from lnpaper.companion import style

FIGURES = book.figures()

pytestmark = pytest.mark.slow  # draws every figure

RAW_KEYS = set(style.DISPLAY_NAMES)


@functools.cache
def drawn(name: str):
    fig = FIGURES[name].render()
    FigureCanvasAgg(fig).draw()  # lays the figure out and draws it, as saving it does
    return fig


def legends(fig) -> list:
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]


def handle_color(handle) -> str | None:
    if isinstance(handle, matplotlib.lines.Line2D):
        return to_hex(handle.get_color())
    if hasattr(handle, "get_facecolor"):
        face = handle.get_facecolor()
        return to_hex(face[0] if getattr(face, "ndim", 1) == 2 else face)
    return None


def test_the_default_cycle_shares_no_colour_with_a_method():
    """Lines drawn without a colour are not methods, so the cycle they take their colour from
    holds none of the palette's (nor the reference levels' grey)."""
    cycle = {to_hex(c) for c in style.RC_PARAMS["axes.prop_cycle"].by_key()["color"]}
    methods = {to_hex(c) for c in [*style.METHOD_COLORS.values(), style.REFERENCE]}
    assert not cycle & methods, f"the default cycle uses method colours: {sorted(cycle & methods)}"
    assert cycle == {to_hex(c) for c in style.OTHER_COLORS}


def test_method_of_reads_a_label_from_its_start():
    assert style.method_of("LN-LSTM, gain 0.1") == "LayerNorm"
    assert style.method_of("LSTM") == "no norm"
    assert style.method_of("LSTM's best") is None
    assert style.method_of("RMSNorm") == "RMSNorm"
    assert style.method_of("pRMSNorm (6.25%)") == "pRMSNorm"
    assert style.method_of("BatchNormalization") is None
    assert style.color("layernorm") == style.BLUE
    with pytest.raises(KeyError, match="names no method"):
        style.color("unigram")


@pytest.mark.parametrize("name", list(FIGURES))
def test_each_method_has_its_colour_and_its_display_name(name):
    shown = 0
    for legend in legends(drawn(name)):
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            label = text.get_text()
            assert label not in RAW_KEYS, f"{name}: legend shows the raw key {label!r}"
            method = style.method_of(label)
            colour = handle_color(handle)
            if method is None or colour is None:
                continue
            shown += 1
            expected = style.METHOD_COLORS[method].lower()
            assert colour == expected, f"{name}: {label!r} is {colour}, {method} is {expected}"
    for ax in drawn(name).axes:
        for tick in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
            assert tick.get_text() not in RAW_KEYS, f"{name}: an axis shows {tick.get_text()!r}"


@pytest.mark.parametrize("name", list(FIGURES))
def test_width_fonts_title_and_one_legend(name):
    fig = drawn(name)
    width = fig.get_size_inches()[0]
    assert width in (style.ONE_PANEL, style.TWO_PANELS), f"{name} is {width} in wide"
    small = sorted(
        {(t.get_fontsize(), t.get_text()[:30]) for t in fig.findobj(Text)
         if t.get_visible() and t.get_text().strip() and t.get_fontsize() < style.MIN_FONT_SIZE}
    )  # fmt: skip
    assert not small, f"{name}: text under {style.MIN_FONT_SIZE} pt: {small[:4]}"
    title = fig.get_suptitle()
    assert title, f"{name} has no title stating its finding"
    assert len(legends(fig)) <= 1, f"{name} has {len(legends(fig))} legends: share one"


@pytest.mark.parametrize("name", list(FIGURES))
def test_no_text_runs_off_the_figure(name):
    fig = drawn(name)
    renderer = fig.canvas.get_renderer()
    page = fig.bbox.padded(1.0)  # a pixel of slack for antialiasing
    parts = {f"axes {i} ({ax.get_title()[:30]!r})": ax for i, ax in enumerate(fig.axes)}
    parts |= {f"text {t.get_text()[:30]!r}": t for t in [fig._suptitle, *fig.texts] if t}
    parts |= {f"legend {i}": legend for i, legend in enumerate(legends(fig))}
    outside = []
    for part, artist in parts.items():
        extent = artist.get_tightbbox(renderer)
        if not (page.contains(*extent.min) and page.contains(*extent.max)):
            outside.append(part)
    assert not outside, f"{name}: text beyond the figure's edge: {outside[:4]}"


@pytest.mark.parametrize("name", list(FIGURES))
def test_log_axes_label_between_powers_only_under_three_decades(name):
    """A log axis spanning three decades or more labels powers of the base alone; under three
    (base 10) it labels 2 and 5 (or 3) times a power as well, and at least two of its ticks.
    Labels are asked of the axis's formatters, so a panel that hides a shared axis's labels
    counts too."""
    for ax in drawn(name).axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log":
                continue
            low, high = sorted(axis.get_view_interval())

            def labelled(locs, formatter, low=low, high=high):
                formatter.set_locs(locs)
                return [x for x in locs if low <= x <= high and formatter(x)]

            minor = labelled(axis.get_minorticklocs(), axis.get_minor_formatter())
            major = labelled(axis.get_majorticklocs(), axis.get_major_formatter())
            if math.log10(high / low) >= 3:
                assert not minor, f"{name}: minor ticks labelled on a wide log axis: {minor[:3]}"
                continue
            mantissas = {round(x / 10 ** math.floor(math.log10(x) + 1e-9)) for x in minor}
            assert mantissas <= {2, 3, 5}, f"{name}: intermediate labels at {minor[:4]}"
            assert len(major) + len(minor) >= 2, f"{name}: a log axis with under 2 labels"


@pytest.mark.parametrize("name", list(FIGURES))
def test_loss_axes_carry_units(name):
    for ax in drawn(name).axes:
        label = ax.get_ylabel()
        if "loss" in label or "NLL" in label:
            assert "nats" in label, f"{name}: {label!r} has no unit"


STATISTICS = re.compile(r"\b(geometric mean|median|mean)s?\b")


def statistics_named(texts) -> set[str]:
    """The statistics a text names: "mean", "median", "geometric mean" ("geometric means of" too;
    a mean named geometric is not also a plain mean)."""
    return {match.group(1) for text in texts for match in STATISTICS.finditer(text.lower())}


def test_statistics_named_reads_geometric_means_apart():
    assert statistics_named(["medians of 8 seeds"]) == {"median"}
    assert statistics_named(["geometric means of 5 seeds"]) == {"geometric mean"}
    assert statistics_named(["line: mean; band: min to max"]) == {"mean"}
    assert statistics_named(["the meaning of it"]) == set()


@pytest.mark.parametrize("name", list(FIGURES))
def test_a_title_names_the_statistic_the_figure_shows(name):
    """A title that quotes a mean or a median names one that the legend, a panel's title or an
    axis label says is drawn: no medians in the title over lines the legend calls means."""
    fig = drawn(name)
    quoted = statistics_named([fig.get_suptitle()])
    shown = statistics_named(
        [text.get_text() for legend in legends(fig) for text in legend.get_texts()]
        + [label for ax in fig.axes for label in (ax.get_title(), ax.get_xlabel(), ax.get_ylabel())]
    )
    assert quoted <= shown, (
        f"{name}: the title quotes {sorted(quoted - shown)}, the figure shows {sorted(shown)}"
    )


@pytest.mark.parametrize("name", list(FIGURES))
def test_no_row_holds_more_than_two_panels(name):
    """Issue 23: the book shows a figure about 750 px wide, where a row of three panels has ticks
    about 9 px high. Three panels go in two rows, one of them spanning its row (so that no cell is
    left empty)."""
    fig = drawn(name)
    rows = {}
    for ax in fig.axes:
        if ax.get_visible() and ax.get_position().width > 0.1:  # panels, not colour bars
            rows.setdefault(round(ax.get_position().y1, 2), []).append(ax)
    widest = max(len(row) for row in rows.values())
    assert widest <= 2, f"{name}: a row of {widest} panels"


def title_lines(fig) -> float:
    """The suptitle's height as drawn (wrapped, if it wraps), in lines of its own font: the height
    of a text of one line in the same font is one, and each further line adds its line spacing."""
    renderer = fig.canvas.get_renderer()
    title = fig._suptitle
    with title._cm_set(text=title._get_wrapped_text()):
        height = title.get_window_extent(renderer).height
    ruler = Text(text="Ag", fontproperties=title.get_fontproperties())
    ruler.set_figure(fig)
    one = ruler.get_window_extent(renderer).height
    ruler.set_text("Ag\nAg")
    spacing = ruler.get_window_extent(renderer).height - one
    return 1 + (height - one) / spacing


@pytest.mark.parametrize("name", list(FIGURES))
def test_the_title_is_at_most_two_lines(name):
    """A finding a reader takes in at a glance: two lines at most, as drawn. A line the figure
    wraps counts; mathtext (a root, a superscript) may stand up to half a line taller."""
    fig = drawn(name)
    title = fig.get_suptitle()
    assert title, f"{name} has no title"
    assert title.count("\n") <= 1, f"{name}: a title of {title.count(chr(10)) + 1} lines: {title!r}"
    lines = title_lines(fig)
    assert lines <= 2.5, f"{name}: the title stands {lines:.1f} lines high: {title!r}"


def draws_data(ax) -> bool:
    """A visible panel with something plotted on it: a line, a marker, a band, a bar or an image
    (a legend or text alone is not data)."""
    artists = [*ax.lines, *ax.collections, *ax.patches, *ax.images]
    return ax.get_visible() and any(artist.get_visible() for artist in artists)


@pytest.mark.parametrize("name", list(FIGURES))
def test_no_cell_of_a_grid_is_left_empty(name):
    """Panels laid out on a grid fill it: no quarter left blank, removed, hidden or holding only a
    legend. A panel spanning several cells fills them all."""
    filled, grids = set(), {}
    for ax in drawn(name).axes:
        spec = ax.get_subplotspec()
        if spec is None:
            continue
        grid = spec.get_gridspec()
        grids[id(grid)] = grid
        if draws_data(ax):
            filled |= {(id(grid), row, col) for row in spec.rowspan for col in spec.colspan}
    empty = [
        (row, col)
        for key, grid in grids.items()
        for row in range(grid.nrows)
        for col in range(grid.ncols)
        if (key, row, col) not in filled
    ]
    assert not empty, f"{name}: grid cells (row, column) with no panel drawing data: {empty}"
