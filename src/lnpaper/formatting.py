"""How the companion writes its numbers in claims, notebooks and figures: to a number of
significant digits, the runs of an arm as their median and range, a paired difference in
percentage points or as a ratio, the learning rates models are judged at, a count of events per
seed in words, a power of ten in a figure's text, and a row of a Markdown table. The statistics behind the numbers are
`lnpaper.stats`; the words a verdict uses are `lnpaper.vocabulary`."""

import math
import statistics

from lnpaper import stats


def significant(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant digits, in plain notation between 1e-3 and 1e6 (where
    f"{v:.3g}" would write 12345 as 1.23e+04), keeping trailing zeros so 2.40 says its precision."""
    if not 1e-3 <= abs(value) < 1e6:
        return f"{value:.{digits}g}"
    rounded = float(f"{value:.{digits}g}")  # round first: 9.996 -> 10.0 has one more integer digit
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}"


def median_text(values, digits: int = 3) -> str:
    """'median 2.31 (2.28-2.40), 3 of 10 diverged': the median and range of the runs that finished,
    robust to the few that nearly diverged, with the diverged ones (None, inf or nan) counted
    beside them, as `lnpaper.stats` summarizes an arm that is not averaged."""
    values = list(values)
    if not values:
        raise ValueError("median_text needs at least one run")
    finished = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not finished:
        return f"all {len(values)} diverged"
    median, low, high = (
        significant(v, digits) for v in (statistics.median(finished), min(finished), max(finished))
    )
    between = " to " if min(finished) < 0 else "-"  # "-2.28--2.40" would read as a subtraction
    text = f"median {median} ({low}{between}{high})"
    diverged = len(values) - len(finished)
    return f"{text}, {diverged} of {len(values)} diverged" if diverged else text


def event_counts_text(a, b) -> str:
    """'fewer in 4, more in 1, tied in 1 of 6 seeds': counts of events per run, a against b paired
    by seed, in words."""
    a, b = list(a), list(b)
    wins = sum(x < y for x, y in zip(a, b, strict=True))
    losses = sum(x > y for x, y in zip(a, b, strict=True))
    return f"fewer in {wins}, more in {losses}, tied in {len(a) - wins - losses} of {len(a)} seeds"


def points_text(accuracy: stats.Difference) -> str:
    """A paired difference of accuracies in percentage points, '+1.9 [+1.4, +2.5] pp'."""
    mean, low, high = (f"{100 * v:+.1f}" for v in (accuracy.mean, accuracy.low, accuracy.high))
    return f"{mean} [{low}, {high}] pp"


def ratio_text(difference: stats.Difference) -> str:
    """'0.12x [0.08, 0.17]': a paired difference of logs as the ratio it is, the geometric mean
    ratio with its interval, each to two significant digits."""
    mean, low, high = (
        significant(math.exp(v), 2) for v in (difference.mean, difference.low, difference.high)
    )
    return f"{mean}x [{low}, {high}]"


def rates_text(summary: dict, *models) -> str:
    """'LSTM lr 0.01, LN-LSTM lr 0.03': the learning rate each model is judged at, from a summary
    that holds each model's picked `lr`."""
    return ", ".join(f"{m} lr {summary[m]['lr']:g}" for m in models)


def power_of_ten(value: float) -> str:
    """3.26e-80 -> '$3 \\times 10^{-80}$', 1.04e-7 -> '$10^{-7}$': a positive value in a figure's
    text (mathtext), to one significant digit."""
    exponent = math.floor(math.log10(value))
    mantissa = round(value / 10**exponent)
    if mantissa == 10:
        mantissa, exponent = 1, exponent + 1
    power = f"10^{{{exponent}}}"
    return f"${power}$" if mantissa == 1 else f"${mantissa} \\times {power}$"


def table_row(cells) -> str:
    """A Markdown table's row, a "|" inside a cell escaped."""
    return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"


def table_head(columns) -> list[str]:
    """A Markdown table's heading row and the line under it."""
    return [table_row(columns), "|" + "---|" * len(columns)]
