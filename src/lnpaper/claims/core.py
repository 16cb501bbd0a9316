"""What a claim record is, what a check returns, and the verdicts.

A record says what a source claims and, once a notebook checks it, how: a function from experiment
results to our measured value, a verdict, and the quantities the verdict rests on. The reproduction
check (`python -m lnpaper reproduce`) recomputes every experiment and compares those quantities and
the verdicts with the record's, each quantity by the rule its kind names:

- `exact`: an identity or an analytic value; recorded and recomputed lie within a roundoff bound;
- `aggregate`: a mean (or a paired mean difference) over seeds; within 3 standard errors of the
  difference of the two estimates (`stats.reproduction_tolerance`);
- `count`: how many of n runs did something (diverged, ended above a level); within the binomial
  bound of `stats.count_tolerance`.
Per-seed values of chaotic training are compared only through such aggregates.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

from lnpaper import stats

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_CHECKABLE = "not checkable at CPU scale"
PENDING = "pending"
VERDICTS = (REPRODUCED, PARTLY, INCONCLUSIVE, NOT_REPRODUCED, NOT_CHECKABLE, PENDING)

BA_2016 = "Ba, Kiros, Hinton 2016"


@dataclass(frozen=True)
class Quantity:
    label: str
    value: float
    kind: str  # "exact", "aggregate" or "count"
    bound: float = 0.0  # exact: how far a recomputed value may lie from the recorded one
    difference: stats.Difference | None = None  # aggregate: the estimate and its standard error
    n: int = 0  # count: out of n runs

    def tolerance(self, other: "Quantity") -> float:
        if self.kind == "exact":
            return self.bound
        if self.kind == "aggregate":
            return stats.reproduction_tolerance(self.difference, other.difference)
        return stats.count_tolerance(int(self.value), int(other.value), self.n)


def exact(label: str, value: float, bound: float) -> Quantity:
    return Quantity(label, float(value), "exact", bound=bound)


def aggregate(label: str, difference: stats.Difference) -> Quantity:
    return Quantity(label, difference.mean, "aggregate", difference=difference)


def mean_over_seeds(label: str, values) -> Quantity:
    """One arm's mean over seeds, as the difference from 0 (same standard error)."""
    values = list(values)
    return aggregate(label, stats.paired_difference(values, [0.0] * len(values)))


def count(label: str, k: int, n: int) -> Quantity:
    return Quantity(label, float(k), "count", n=n)


@dataclass(frozen=True)
class Finding:
    ours: str  # our measured value, in words and rounded numbers
    verdict: str  # one of VERDICTS
    quantities: tuple[Quantity, ...] = ()  # what the verdict rests on, for the reproduction check


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    source: str
    paper_value: str
    notebook: str  # the notebook that checks it (or will)
    experiments: tuple[Callable, ...] = ()  # their results are passed to `check`, in order
    check: Callable[..., Finding] | None = None
    test: str = ""  # how the verdict is decided: the test, n, and the margin declared beforehand

    def evaluate(self) -> Finding:
        if self.check is None:
            return Finding("", PENDING)
        finding = self.check(*(run() for run in self.experiments))
        if finding.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: unknown verdict {finding.verdict!r}")
        for quantity in finding.quantities:
            if not math.isfinite(quantity.value):
                raise ValueError(f"{self.id}: quantity {quantity.label!r} is {quantity.value}")
        return finding


def verdict(holds: bool) -> str:
    return REPRODUCED if holds else NOT_REPRODUCED


def from_outcome(outcome: str) -> str:
    """A `stats` outcome (holds, fails, inconclusive) as a verdict."""
    return {stats.HOLDS: REPRODUCED, stats.FAILS: NOT_REPRODUCED}.get(outcome, INCONCLUSIVE)


def combine(outcomes) -> str:
    """One verdict from the `stats` outcomes of a claim's parts: reproduced if every part holds,
    not reproduced if every part fails, partly if some hold; with none holding and some
    undecided, inconclusive (or not reproduced, if any part failed)."""
    outcomes = list(outcomes)
    if all(o == stats.HOLDS for o in outcomes):
        return REPRODUCED
    if all(o == stats.FAILS for o in outcomes):
        return NOT_REPRODUCED
    if stats.HOLDS in outcomes:
        return PARTLY
    return NOT_REPRODUCED if stats.FAILS in outcomes else INCONCLUSIVE


def tested(difference: stats.Difference, outcome: str, scale: float = 1.0, unit: str = "",
           digits: int = 3) -> str:  # fmt: skip
    """'+1.2 [+0.4, +2.0] pp (paired t, 95% CI, n = 10): holds' with the values times `scale`."""
    mean, low, high = (
        f"{scale * v:+.{digits}f}" for v in (difference.mean, difference.low, difference.high)
    )
    unit = f" {unit}" if unit else ""
    return f"{mean} [{low}, {high}]{unit} ({difference.method} CI, n = {difference.n}): {outcome}"
