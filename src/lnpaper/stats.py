"""The verdict statistics: the one place a claim's "holds", "fails" or "inconclusive" is computed.

Protocol. The two arms a and b of a comparison are paired by seed: run i of a and run i of b use
the same data seed and the same init seed, so most seed-to-seed variation cancels in the per-seed
difference a_i - b_i. We report the mean paired difference a - b with a 95% Student-t confidence
interval over the n seeds. Then

- "a is better than b" (lower or higher) holds when the whole interval lies strictly on the claimed
  side of 0, and fails when it lies strictly on the other side;
- "a matches b" holds when the whole interval lies strictly inside (-margin, +margin), where the
  margin is declared in the claim record before the data are seen (a margin picked afterwards
  can make any result a match); it fails when the interval lies entirely outside [-margin, +margin];
- anything else is "inconclusive": the seeds do not decide the claim either way.

A run that diverged (None, inf or nan) has no value to pair: it is counted, and the runs of an arm
are summarized by their median and range, never averaged (one diverged run would make a mean
meaningless).

The reproduction check compares a recorded aggregate with a recomputed one: two estimates of one
mean difference agree when they lie within 3 standard errors of their difference,
3 * sqrt(se_recorded^2 + se_now^2); two counts of diverged runs likewise, with the binomial
standard error.
"""

import math
import statistics
from dataclasses import dataclass

from scipy.stats import beta as beta_distribution
from scipy.stats import t as student_t

CONFIDENCE = 0.95
HOLDS, FAILS, INCONCLUSIVE = "holds", "fails", "inconclusive"


@dataclass(frozen=True)
class Difference:
    """The paired difference a - b over n seeds."""

    n: int
    mean: float
    sd: float  # sample sd (n - 1) of the per-seed differences
    se: float  # sd / sqrt(n)
    low: float  # 95% t interval: mean -+ t_{0.975, n-1} * se
    high: float
    method: str  # "paired t, 95%"

    def text(self, digits: int = 3) -> str:
        """'+0.012 [+0.004, +0.020] (paired t, 95% CI, n = 10)': signed, so the direction of the
        difference reads at a glance, with `digits` decimals for the mean and both bounds."""
        mean, low, high = (f"{v:+.{digits}f}" for v in (self.mean, self.low, self.high))
        return f"{mean} [{low}, {high}] ({self.method} CI, n = {self.n})"


def _is_finite(value) -> bool:
    """A run's value is usable when it exists and did not blow up (None marks a diverged run)."""
    return value is not None and math.isfinite(value)


def paired_difference(a, b) -> Difference:
    """Mean of a_i - b_i with its Student-t interval; a and b hold one value per seed, in one seed
    order. Diverged runs are rejected, not dropped: dropping run i from both arms silently would
    hide that an arm diverged, so the caller counts them with count_diverged instead."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} values and b has {len(b)}; pair them one per seed")
    if len(a) < 2:
        raise ValueError(f"a confidence interval needs at least 2 seeds, got {len(a)}")
    for name, values in (("a", a), ("b", b)):
        for index, value in enumerate(values):
            if not _is_finite(value):
                raise ValueError(
                    f"{name}[{index}] is {value}: a diverged run is counted with count_diverged, "
                    "not compared"
                )
    differences = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    n = len(differences)
    mean = statistics.fmean(differences)
    sd = statistics.stdev(differences)  # sqrt(sum (d_i - mean)^2 / (n - 1)); 0 if all d_i equal
    se = sd / math.sqrt(n)
    half_width = float(student_t.ppf((1 + CONFIDENCE) / 2, n - 1)) * se  # t_{0.975, n-1} * se
    return Difference(
        n=n,
        mean=mean,
        sd=sd,
        se=se,
        low=mean - half_width,
        high=mean + half_width,
        method=f"paired t, {CONFIDENCE:.0%}",
    )


def better(difference: Difference, direction: str) -> str:
    """Verdict on "a is lower (or higher) than b": the interval must clear 0, not just the mean."""
    if direction == "lower":  # claim: a - b < 0
        claimed_side, other_side = difference.high < 0, difference.low > 0
    elif direction == "higher":  # claim: a - b > 0
        claimed_side, other_side = difference.low > 0, difference.high < 0
    else:
        raise ValueError(f"direction must be 'lower' or 'higher', got {direction!r}")
    if claimed_side:
        return HOLDS
    return FAILS if other_side else INCONCLUSIVE


def matches(difference: Difference, margin: float) -> str:
    """Verdict on "a matches b within margin": a wide interval around 0 is no evidence of a match,
    so the whole interval must fit inside the margin; one entirely outside it is a mismatch."""
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a finite number > 0, got {margin}")
    if -margin < difference.low and difference.high < margin:
        return HOLDS
    if difference.low > margin or difference.high < -margin:
        return FAILS
    return INCONCLUSIVE


def no_worse(difference: Difference, margin: float, better_direction: str) -> str:
    """Verdict on "a is no worse than b by more than margin" (non-inferiority), for claims of the
    form "matches or beats" or "does not degrade": the interval's worse end must stay inside the
    margin; an interval entirely beyond it is a loss of quality."""
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a finite number > 0, got {margin}")
    if better_direction == "lower":  # worse means a - b > 0
        worst, best = difference.high, difference.low
    elif better_direction == "higher":  # worse means a - b < 0
        worst, best = -difference.low, -difference.high
    else:
        raise ValueError(f"better_direction must be 'lower' or 'higher', got {better_direction!r}")
    if worst < margin:
        return HOLDS
    return FAILS if best > margin else INCONCLUSIVE


def binomial_interval(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95% interval for the rate of an event seen in k of n runs."""
    if not (isinstance(k, int) and isinstance(n, int) and 0 <= k <= n and n >= 1):
        raise ValueError(f"need counts 0 <= k <= n, n >= 1, got k={k!r}, n={n!r}")
    tail = (1 - CONFIDENCE) / 2
    low = 0.0 if k == 0 else float(beta_distribution.ppf(tail, k, n - k + 1))
    high = 1.0 if k == n else float(beta_distribution.ppf(1 - tail, k + 1, n - k))
    return low, high


def most_runs(k: int, n: int) -> str:
    """Verdict on "most runs do it" (fail, diverge) from k of n: the rate's 95% interval must lie
    above 1/2; one entirely below 1/2 says most runs do not."""
    low, high = binomial_interval(k, n)
    if low > 0.5:
        return HOLDS
    return FAILS if high < 0.5 else INCONCLUSIVE


def count_diverged(values) -> int:
    """Number of runs that diverged: None, or a value that is inf or nan."""
    return sum(not _is_finite(value) for value in values)


def finite(values) -> list[float]:
    """The runs that finished, in their seed order."""
    return [float(value) for value in values if _is_finite(value)]


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
    robust to the few that nearly diverged, with the diverged ones counted beside them."""
    values = list(values)
    if not values:
        raise ValueError("median_text needs at least one run")
    finished = finite(values)
    if not finished:
        return f"all {len(values)} diverged"
    median, low, high = (
        significant(v, digits) for v in (statistics.median(finished), min(finished), max(finished))
    )
    between = " to " if min(finished) < 0 else "-"  # "-2.28--2.40" would read as a subtraction
    text = f"median {median} ({low}{between}{high})"
    diverged = len(values) - len(finished)
    return f"{text}, {diverged} of {len(values)} diverged" if diverged else text


def reproduction_tolerance(recorded: Difference, now: Difference, k: float = 3.0) -> float:
    """How far two independent estimates of one mean difference may lie apart:
    k * se(recorded.mean - now.mean) = k * sqrt(se_recorded^2 + se_now^2)."""
    return k * math.hypot(recorded.se, now.se)


def count_tolerance(recorded: int, now: int, n: int, k: float = 3.0) -> float:
    """How far two counts of events among n runs of one process may lie apart: each count is
    Binomial(n, p), so their difference has variance 2 n p (1 - p), with p pooled from both counts.
    At p = 0 or 1 the tolerance is 0: every run behaved alike both times, so the counts must agree."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    for name, count in (("recorded", recorded), ("now", now)):
        if not 0 <= count <= n:
            raise ValueError(f"{name} = {count} is not a count of 0..{n} runs")
    p = (recorded + now) / (2 * n)
    return k * math.sqrt(2 * n * p * (1 - p))  # k * sqrt(2 n p (1 - p))


# A spike in a training curve (notebook 06, P5), declared once, before any run was looked at: step t
# is a spike when its value exceeds SPIKE_FACTOR times the median of the SPIKE_WINDOW values before
# it. The median of a trailing window follows a curve that drifts (gradient norms fall and rise over
# training) but not one step that jumps; the first SPIKE_WINDOW steps have no window and are never
# spikes.
SPIKE_FACTOR, SPIKE_WINDOW = 2.0, 10


def jump_ratios(values, window: int = SPIKE_WINDOW) -> list[float]:
    """values[t] / median(values[t - window : t]) for t = window, window + 1, ...: how far each step
    jumps above the recent level of its curve (the statistic a spike is a large value of)."""
    values = list(values)
    if not (isinstance(window, int) and not isinstance(window, bool) and window >= 1):
        raise ValueError(f"window must be an int >= 1, got {window!r}")
    for index, value in enumerate(values):
        if not _is_finite(value):
            raise ValueError(
                f"values[{index}] is {value}: pass the steps before a divergence, and count the "
                "divergence with count_diverged"
            )
        if value <= 0:
            raise ValueError(f"values[{index}] is {value}: a norm or size must be > 0")
    return [
        values[t] / statistics.median(values[t - window : t]) for t in range(window, len(values))
    ]


def spike_steps(values, factor: float = SPIKE_FACTOR, window: int = SPIKE_WINDOW) -> list[int]:
    """The steps t >= window with values[t] > factor * median(values[t - window : t])."""
    if not (isinstance(factor, int | float) and math.isfinite(factor) and factor > 1):
        raise ValueError(f"factor must be a finite number > 1, got {factor!r}")
    ratios = jump_ratios(values, window)
    return [window + i for i, ratio in enumerate(ratios) if ratio > factor]


def count_spikes(values, factor: float = SPIKE_FACTOR, window: int = SPIKE_WINDOW) -> int:
    """How many steps of one run are spikes (see spike_steps)."""
    return len(spike_steps(values, factor, window))
