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

Counts of rare events per run (gradient spikes) are compared with an exact paired permutation test
on their totals (`fewer_events`), not a t interval over small integers.

The reproduction check compares a recorded aggregate with a recomputed one: two estimates of one
mean difference agree when they lie within 3 standard errors of their difference,
3 * sqrt(se_recorded^2 + se_now^2); two counts of diverged runs likewise, with the binomial
standard error. Every decision carries a robustness band that follows from the same rule: one whose
interval edge lies within the band of its boundary is fragile, since a machine that reproduces every
quantity may still put it on the other side (see "decisions" below).
"""

import contextlib
import contextvars
import math
import numbers
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from scipy.stats import beta as beta_distribution
from scipy.stats import t as student_t

CONFIDENCE = 0.95
HOLDS, FAILS, INCONCLUSIVE = "holds", "fails", "inconclusive"
# A decision shown but not graded (`lnpaper.companion.verdicts.Finding.not_graded`): a claim's check
# reads it as it reads an inconclusive one, and its text says which.
NOT_GRADED = "not graded"


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
    # the per-seed differences a_i - b_i, for the one-seed check of a decision (`one_seed`)
    values: tuple[float, ...] = field(default=(), repr=False, compare=False)

    def text(self, digits: int = 3) -> str:
        """'+0.012 [+0.004, +0.020] (n = 10)': signed, so the direction of the difference reads at a
        glance, with `digits` decimals for the mean and both bounds. The bracket is always the
        paired 95% t interval (`method`), which the vocabulary box defines once for every reader,
        so the text does not repeat it."""
        return f"{self.bracket(digits)} (n = {self.n})"

    def bracket(self, digits: int = 3) -> str:
        """'+0.012 [+0.004, +0.020]': the mean and its interval, for a table that states n once."""
        mean, low, high = (f"{v:+.{digits}f}" for v in (self.mean, self.low, self.high))
        return f"{mean} [{low}, {high}]"


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
    for index, value in enumerate(differences):
        if not math.isfinite(value):
            raise ValueError(
                f"a[{index}] - b[{index}] = {a[index]} - {b[index]} overflows to {value}"
            )
    n = len(differences)
    mean = statistics.fmean(differences)
    try:  # sqrt(sum (d_i - mean)^2 / (n - 1)); 0 if all d_i equal
        sd = statistics.stdev(differences)
    except OverflowError:
        sd = math.inf
    if not (math.isfinite(mean) and math.isfinite(sd)):
        raise ValueError(f"the differences {differences} are too large to average in float64")
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
        values=tuple(differences),
    )


# ---- decisions, and how robust each one is ------------------------------------------------------
#
# A decision is an interval set against a boundary: the paired difference's CI against 0 (better)
# or against +-margin (matches, no_worse), or a rate's interval against 1/2 (most_runs). Another
# machine recomputes every run on another numeric path, and chaotic training turns that into what
# is, for the mean, close to a fresh draw of the seeds: the recomputed CI lies elsewhere.
#
# The robustness band. The reproduction check accepts a recomputed mean difference within
# k * sqrt(se_recorded^2 + se_now^2) of the recorded one (`reproduction_tolerance`, k = 3); with
# se_now = se_recorded that is 3 * sqrt(2) * se. So a machine that reproduces every quantity may
# still move a CI edge by that much, and a decision whose recorded edge lies nearer its boundary
# than this band can land on the other side without anything being wrong: it is *fragile*, and a
# flip of it is evidence of nothing. For counts (most_runs, fewer_events) the band is the binomial
# `count_tolerance` of the count. A decision's `alternatives` are the outcomes it reaches when each
# edge (or count) moves anywhere within its band; it is fragile when there are any. The rule was
# fixed before it was applied to any claim, and the check fails only on a decision that was not
# fragile and changed (`lnpaper.reproduce`).
#
# Every decision made inside `collect_decisions()` is kept, in order, so a claim's check records its
# decisions without naming them twice; `collect_decisions(overrides={i: outcome})` makes decision i
# come out as `outcome`, which tells whether a fragile decision's other side would change the
# claim's verdict.

ROBUSTNESS_K = 3.0  # the reproduction check's k: the band is what a passing check lets an edge move


@dataclass(frozen=True)
class Decision:
    """One decision: what was tested, its interval, the boundaries it was set against, and the
    band (`robustness_band`) within which a recomputation may move the interval's edges."""

    test: str  # e.g. "a - b < 0", "|a - b| < 0.01", "rate > 1/2"
    outcome: str  # HOLDS, FAILS or INCONCLUSIVE
    low: float
    high: float
    boundaries: tuple[float, ...]
    band: float
    alternatives: tuple[str, ...] = ()  # other outcomes reachable within the band
    one_seed: int | None = None  # a seed whose removal alone changes the outcome, if one does
    without_it: str = ""  # the outcome without that seed
    difference: Difference | None = field(default=None, repr=False, compare=False)
    label: str = ""  # what was counted, for decisions on counts (no Difference to name them by)
    evidence: str = ""  # for counts: the numbers in words, instead of an interval
    # the smallest two-sided level at which the test still reaches this outcome (`holm`); None for
    # an inconclusive decision, which rejects nothing
    p_value: float | None = None

    @property
    def fragile(self) -> bool:
        return bool(self.alternatives)

    def margin_text(self) -> str:
        """'CI [+0.004, +0.020], boundary 0, band 0.011': the numbers a reader needs to see why the
        decision is robust or fragile."""
        if self.evidence:
            return self.evidence
        bounds = ", ".join(f"{b:+.3g}" if b else "0" for b in self.boundaries)
        return f"CI [{self.low:+.3g}, {self.high:+.3g}], boundary {bounds}, band {self.band:.2g}"


class _Collector:
    def __init__(self, overrides: dict[int, str]):
        self.decisions: list[Decision] = []
        self.overrides = dict(overrides)


# The innermost open `collect_decisions` block of this thread or task (a context variable, so two
# threads checking claims side by side keep their decisions apart); None outside every block.
_collector: contextvars.ContextVar[_Collector | None] = contextvars.ContextVar(
    "lnpaper_decisions", default=None
)


@contextlib.contextmanager
def collect_decisions(overrides: dict[int, str] | None = None) -> Iterator[list[Decision]]:
    """Keep every decision made inside the block, in order; decision i comes out as overrides[i]
    when given (the recorded Decision keeps the outcome the data gave). Blocks nest: a decision
    goes to the innermost one."""
    collector = _Collector(overrides or {})
    token = _collector.set(collector)
    try:
        yield collector.decisions
    finally:
        _collector.reset(token)


def _decided(decision: Decision) -> str:
    collector = _collector.get()
    if collector is None:
        return decision.outcome
    index = len(collector.decisions)
    collector.decisions.append(decision)
    return collector.overrides.get(index, decision.outcome)


def robustness_band(difference: Difference) -> float:
    """How far a recomputation may move the edges of `difference`'s interval and still pass the
    reproduction check: ROBUSTNESS_K * sqrt(2) * se."""
    return reproduction_tolerance(difference, difference, ROBUSTNESS_K)


def _interval_decision(difference: Difference, test: str, boundaries, rule: Callable) -> str:
    """Decide with rule(low, high), then find the outcomes within the band, and whether one seed
    alone carries the outcome."""
    band = robustness_band(difference)
    low, high = difference.low, difference.high
    outcome = rule(low, high)
    moved = {
        rule(low + s, high + t)
        for s in (-band, 0.0, band)
        for t in (-band, 0.0, band)
        if low + s <= high + t
    }
    one_seed, without_it = _one_seed(difference, outcome, rule)
    p_value = None
    if outcome != INCONCLUSIVE:  # the interval excludes every boundary: the last one it keeps out
        p_value = max(_t_p_value(difference, boundary) for boundary in boundaries)
    decision = Decision(
        test=test,
        outcome=outcome,
        low=low,
        high=high,
        boundaries=tuple(boundaries),
        band=band,
        alternatives=tuple(sorted(moved - {outcome})),
        one_seed=one_seed,
        without_it=without_it,
        difference=difference,
        p_value=p_value,
    )
    return _decided(decision)


def _t_p_value(difference: Difference, boundary: float) -> float:
    """Two-sided p of the t test of mean = boundary: the (1 - p) interval just reaches it."""
    distance = abs(difference.mean - boundary)
    if difference.se == 0:
        return 0.0 if distance > 0 else 1.0
    return float(2 * student_t.sf(distance / difference.se, difference.n - 1))


def _binomial_tail_p(k: int, n: int) -> float:
    """Two-sided exact p of k of n against a rate of 1/2, twice the smaller tail (at most 1): the
    level at which the Clopper-Pearson interval and the sign test just reach 1/2."""
    upper = sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n  # P(X >= k)
    lower = sum(math.comb(n, j) for j in range(0, k + 1)) / 2**n  # P(X <= k)
    return min(1.0, 2 * min(upper, lower))


def holm(p_values, level: float = 1 - CONFIDENCE) -> list[bool]:
    """Holm's step-down procedure (Holm 1979): which of m tests still reject with the family-wise
    error held at `level`. The i-th smallest p (i = 1..m) must lie at or below level / (m - i + 1),
    and the first that does not stops it. None marks a test that rejected nothing in the first
    place; it still counts in m."""
    p_values = list(p_values)
    m = len(p_values)
    order = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    rejected = [False] * m
    for rank, (p, index) in enumerate(order):
        if p > level / (m - rank):
            break
        rejected[index] = True
    return rejected


def _one_seed(difference: Difference, outcome: str, rule: Callable) -> tuple[int | None, str]:
    """The first seed whose removal alone changes the outcome (a CI over the other n - 1), and the
    outcome without it: an interval that one seed decides says so. Needs per-seed values, n >= 4."""
    values = difference.values
    if len(values) < 4:
        return None, ""
    t = float(student_t.ppf((1 + CONFIDENCE) / 2, len(values) - 2))
    for index in range(len(values)):
        rest = values[:index] + values[index + 1 :]
        mean, se = statistics.fmean(rest), statistics.stdev(rest) / math.sqrt(len(rest))
        without = rule(mean - t * se, mean + t * se)
        if without != outcome:
            return index, without
    return None, ""


def _better_rule(direction: str) -> Callable:
    if direction == "lower":  # claim: a - b < 0
        return lambda low, high: HOLDS if high < 0 else FAILS if low > 0 else INCONCLUSIVE
    if direction == "higher":  # claim: a - b > 0
        return lambda low, high: HOLDS if low > 0 else FAILS if high < 0 else INCONCLUSIVE
    raise ValueError(f"direction must be 'lower' or 'higher', got {direction!r}")


def better(difference: Difference, direction: str) -> str:
    """Verdict on "a is lower (or higher) than b": the interval must clear 0, not just the mean."""
    rule = _better_rule(direction)
    test = "a - b < 0" if direction == "lower" else "a - b > 0"
    return _interval_decision(difference, test, (0.0,), rule)


def expect(outcome: str, test: Callable[..., str], *args, **kwargs) -> None:
    """Make one decision, `test(*args, **kwargs)` (e.g. `better(difference, "lower")`), and fail
    unless it comes out `outcome` or is fragile with `outcome` within its band: a notebook's own
    assertion, by the rule the reproduction check applies to the record (DESIGN.md section 5), so a
    notebook run live on another CPU's numbers reaches its end."""
    with collect_decisions() as made:
        got = test(*args, **kwargs)
    if not made:
        raise ValueError(f"{getattr(test, '__name__', test)!r} made no decision")
    decision = made[-1]
    if got != outcome and outcome not in decision.alternatives:
        raise AssertionError(
            f"{decision.label or decision.test}: {got}, expected {outcome} and not within the "
            f"band of it ({decision.margin_text()})"
        )


def _check_margin(margin) -> None:
    if isinstance(margin, bool) or not isinstance(margin, int | float):
        raise TypeError(f"margin must be a number, got {margin!r}")
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a finite number > 0, got {margin}")


def matches(difference: Difference, margin: float) -> str:
    """Verdict on "a matches b within margin": a wide interval around 0 is no evidence of a match,
    so the whole interval must fit inside the margin; one entirely outside it is a mismatch."""
    _check_margin(margin)

    def rule(low, high):
        if -margin < low and high < margin:
            return HOLDS
        return FAILS if low > margin or high < -margin else INCONCLUSIVE

    return _interval_decision(difference, f"|a - b| < {margin:g}", (-margin, margin), rule)


def no_worse(difference: Difference, margin: float, better_direction: str) -> str:
    """Verdict on "a is no worse than b by more than margin" (non-inferiority), for claims of the
    form "matches or beats" or "does not degrade": the interval's worse end must stay inside the
    margin; an interval entirely beyond it is a loss of quality."""
    _check_margin(margin)
    if better_direction not in ("lower", "higher"):
        raise ValueError(f"better_direction must be 'lower' or 'higher', got {better_direction!r}")
    # a - b < margin is a - b - margin < 0: `better`'s rule, against the margin instead of 0
    boundary = margin if better_direction == "lower" else -margin
    rule = _better_rule(better_direction)
    test = f"a - b < {margin:g}" if better_direction == "lower" else f"a - b > -{margin:g}"
    return _interval_decision(
        difference, test, (boundary,), lambda low, high: rule(low - boundary, high - boundary)
    )


def _whole(value) -> int | None:
    """A count as a Python int (numpy's integers included, since counts come from numpy sums);
    None if it is not a whole number (a bool, a float, a string)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def binomial_interval(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95% interval for the rate of an event seen in k of n runs."""
    count, total = _whole(k), _whole(n)
    if count is None or total is None or not 0 <= count <= total or total < 1:
        raise ValueError(f"need counts 0 <= k <= n, n >= 1, got k={k!r}, n={n!r}")
    k, n = count, total
    tail = (1 - CONFIDENCE) / 2
    low = 0.0 if k == 0 else float(beta_distribution.ppf(tail, k, n - k + 1))
    high = 1.0 if k == n else float(beta_distribution.ppf(1 - tail, k + 1, n - k))
    return low, high


def _most_runs_rule(k: int, n: int) -> str:
    low, high = binomial_interval(k, n)
    if low > 0.5:
        return HOLDS
    return FAILS if high < 0.5 else INCONCLUSIVE


def _count_band(k: int, n: int) -> int:
    """How many runs a recomputed count of k of n may move and still pass the check."""
    return math.floor(count_tolerance(k, k, n, ROBUSTNESS_K))


def most_runs(k: int, n: int, label: str = "") -> str:
    """Verdict on "most runs do it" (fail, diverge) from k of n: the rate's 95% interval must lie
    above 1/2; one entirely below 1/2 says most runs do not."""
    outcome = _most_runs_rule(k, n)
    band = _count_band(k, n)
    moved = {_most_runs_rule(j, n) for j in range(max(0, k - band), min(n, k + band) + 1)}
    low, high = binomial_interval(k, n)
    decision = Decision(
        test=f"rate > 1/2 ({k} of {n})",
        outcome=outcome,
        low=low,
        high=high,
        boundaries=(0.5,),
        band=band / n,
        alternatives=tuple(sorted(moved - {outcome})),
        label=label,
        evidence=f"{k} of {n} runs, rate CI [{low:.2f}, {high:.2f}] against 1/2, band +-{band} runs",
        p_value=None if outcome == INCONCLUSIVE else _binomial_tail_p(k, n),
    )
    return _decided(decision)


def time_outcome(ratios, margin: float) -> str:
    """ "a takes less time than b" from time ratios a / b, one per setting: holds when every ratio
    lies below 1 / margin, fails when every one lies above margin, else inconclusive."""
    outcomes = {HOLDS if r < 1 / margin else FAILS if r > margin else INCONCLUSIVE for r in ratios}
    return outcomes.pop() if len(outcomes) == 1 else INCONCLUSIVE


def saves_time(ratios, margin: float, label: str = "") -> str:
    """`time_outcome` as a recorded decision, the ratios one per setting (a shape, a thread
    count). A time ratio belongs to the machine it was measured on,
    its kernels and its load, not to a sample of seeds: no band bounds how far another machine may
    move it, so the decision is always fragile, and the reproduction check lists its moves rather
    than failing on them."""
    ratios = [float(r) for r in ratios]
    if not ratios or not all(math.isfinite(r) and r > 0 for r in ratios):
        raise ValueError(f"time ratios must be positive numbers, got {ratios!r}")
    outcome = time_outcome(ratios, margin)
    decision = Decision(
        test=f"time ratio < 1/{margin:g} in every setting",
        outcome=outcome,
        low=min(ratios),
        high=max(ratios),
        boundaries=(1 / margin, margin),
        band=math.inf,
        alternatives=tuple(o for o in (HOLDS, INCONCLUSIVE, FAILS) if o != outcome),
        label=label,
        evidence=f"time ratios {min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} settings, "
        f"against {1 / margin:.3g} and {margin:g}; measured on one machine",
    )
    return _decided(decision)


def _sign_flip_p(differences: list[int], total: int) -> float:
    """Two-sided exact p of a paired permutation test: under no difference each seed's a_i - b_i is
    as likely to carry either sign, so the 2^n sign flips of `differences` give the null
    distribution of their sum; p is the share of flips whose |sum| reaches |total|. The sums are
    integers, so the distribution is counted exactly, one seed at a time."""
    ways = {0: 1}
    for d in differences:
        flipped: dict[int, int] = {}
        for s, c in ways.items():
            flipped[s + d] = flipped.get(s + d, 0) + c
            flipped[s - d] = flipped.get(s - d, 0) + c
        ways = flipped
    return sum(c for s, c in ways.items() if abs(s) >= abs(total)) / 2 ** len(differences)


def events_p(a, b) -> float:
    """`fewer_events`' two-sided exact p for counts a and b paired by seed, for the text."""
    differences = [int(x) - int(y) for x, y in zip(a, b, strict=True)]
    return _sign_flip_p(differences, sum(differences))


def _permutation_rule(differences: list[int], total: int) -> tuple[str, float]:
    """Holds when a's total is below b's at two-sided 5%, fails when above; the outcome and p."""
    p = _sign_flip_p(differences, total)
    if total == 0 or p > 1 - CONFIDENCE:
        return INCONCLUSIVE, p
    return (HOLDS if total < 0 else FAILS), p


def _moved_events(differences: list[int], shift: int) -> list[int]:
    """The per-seed differences after `shift` events more (or fewer) in a than in b, one at a time,
    each where a recomputation most often puts one: in a seed where the arms were tied (an extra
    spike in a run pair that had none), else in the seed whose difference is smallest."""
    moved, step = list(differences), 1 if shift > 0 else -1
    for _ in range(abs(shift)):
        i = min(range(len(moved)), key=lambda j: abs(moved[j]))
        moved[i] += step
    return moved


def fewer_events(a, b, opportunities: int, label: str = "") -> str:
    """Verdict on "a has fewer events than b" from counts per run paired by seed (spikes per run),
    each run having `opportunities` steps at which an event could occur: an exact paired
    permutation test on the total, sum(a) - sum(b), at two-sided 5% (`_sign_flip_p`). Unlike a
    sign test, which keeps only whether each seed has fewer or more, a seed with five extra spikes
    weighs five times one with one. The band: each total is a count among n x opportunities
    chances, so it may move by `count_tolerance` on a recomputation; outcomes reached when that
    many events are added or removed (`_moved_events`) make the decision fragile."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} counts and b has {len(b)}; pair them one per seed")
    if _whole(opportunities) is None or opportunities < 1:
        raise ValueError(f"opportunities is {opportunities!r}: the steps a run could have an event")
    for name, values in (("a", a), ("b", b)):
        for index, value in enumerate(values):
            if _whole(value) is None or not 0 <= value <= opportunities:
                raise ValueError(
                    f"{name}[{index}] is {value!r}: counts are integers from 0 to opportunities "
                    f"({opportunities})"
                )
    n = len(a)
    differences = [int(x) - int(y) for x, y in zip(a, b, strict=True)]
    total = sum(differences)
    outcome, p = _permutation_rule(differences, total)
    chances = n * opportunities
    band = _count_band(sum(a), chances) + _count_band(sum(b), chances)
    moved = {_permutation_rule(shifted, sum(shifted))[0]
             for shifted in (_moved_events(differences, s) for s in range(-band, band + 1))}  # fmt: skip
    decision = Decision(
        test=f"paired permutation test, sum(a) - sum(b) = {total:+d} over {n} seeds",
        outcome=outcome,
        low=float(total),
        high=float(total),
        boundaries=(0.0,),
        band=float(band),
        alternatives=tuple(sorted(moved - {outcome})),
        label=label,
        evidence=f"{sum(a)} events against {sum(b)} over {n} seeds, two-sided exact p = {p:.2g}, "
        f"band +-{band} events",
        p_value=None if outcome == INCONCLUSIVE else p,
    )
    return _decided(decision)


def count_diverged(values) -> int:
    """Number of runs that diverged: None, or a value that is inf or nan."""
    return sum(not _is_finite(value) for value in values)


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


# A spike in a training curve (notebook 07, P5), declared once, before any run was looked at: step t
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
