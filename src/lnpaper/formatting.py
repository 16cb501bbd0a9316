"""How the companion writes its numbers in claims, notebooks and figures: to a number of
significant digits, the runs of an arm as their median and range, a count of events per seed in
words. The statistics behind the numbers are `lnpaper.stats`; the words a verdict uses are
`lnpaper.vocabulary`."""

import math
import statistics


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
