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

Every decision a check makes (`lnpaper.stats`: better, matches, no_worse, most_runs, fewer_events)
is kept with the finding, with its robustness band. A claim is `borderline` when one of its fragile
decisions, put on its other side, would change the claim's verdict: the ledger says so beside the
verdict, with the numbers, and the reproduction check reports such a decision if it moves instead of
failing.
"""

import dataclasses
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from lnpaper import stats, vocabulary

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
# A claim that names one effect, found within the negligible margin of `lnpaper.vocabulary`: the
# effect is there, if at all, too small to count. A claim with other parts that held is partly,
# no better (`NO_BETTER`), instead.
NEGLIGIBLE = "not reproduced (negligible)"
INCONCLUSIVE = "inconclusive"
# A claim whose premise or mechanism does not arise in the miniature (checked by a decision of its
# own, not assumed): its numbers say nothing for or against the source.
NOT_EXERCISED = "inconclusive (not exercised)"
NOT_CHECKABLE = "not checkable at CPU scale"
PENDING = "pending"
VERDICTS = (REPRODUCED, PARTLY, INCONCLUSIVE, NOT_EXERCISED, NOT_REPRODUCED, NEGLIGIBLE,
            NOT_CHECKABLE, PENDING)  # fmt: skip


class Partly(str):
    """The verdict `partly` with its kind: the string PARTLY itself, so `verdict == PARTLY` holds
    whatever the kind, and `kind` says which of PARTLY_KINDS it is."""

    def __new__(cls, kind: str):
        verdict = super().__new__(cls, PARTLY)
        verdict.kind = kind
        return verdict

    def __getnewargs__(self):
        return (self.kind,)


# The three ways a claim is partly reproduced. Every check that finds a claim partly returns one.
# The mechanism the claim names is shown, but the effect it is said to cause is not attributed to it:
MECHANISM_ONLY = Partly("mechanism only")
# Some of the claim's parts held and others did not (`combine`):
SOME_PARTS = Partly("some parts")
# No worse, but the gain the claim names lies within the negligible margin (`no_better`):
NO_BETTER = Partly("no better")
PARTLY_KINDS = tuple(verdict.kind for verdict in (MECHANISM_ONLY, SOME_PARTS, NO_BETTER))


def partly_kind(verdict: str) -> str:
    """The kind of a partly verdict (one of PARTLY_KINDS); "" for any other verdict, and for a
    partly that names none."""
    return getattr(verdict, "kind", "")


def verdict_word(verdict: str) -> str:
    """A verdict as the ledger writes it: 'partly (some parts)' for a partly with its kind."""
    kind = partly_kind(verdict)
    return f"{verdict} ({kind})" if kind else str(verdict)


BA_2016 = "Ba, Kiros, Hinton 2016"

# What a claim's check can show. An identity (an equation, an invariance, an implementation matching
# its formula) can fail only through a bug, so its `reproduced` is not evidence about training; the
# ledger counts identities apart from empirical findings.
IDENTITY, EMPIRICAL = "identity", "empirical"
# Whose claim it is: a source's (a paper, by section), or the companion's own question about one,
# which the ledger counts apart so that its tally of the sources' claims holds only theirs.
SOURCE, OURS = "source", "ours"


# The ledger's grades of "a is better than b" in held-out loss (`vocabulary.better_beyond_negligible`).
BETTER_VERDICTS = {"better": REPRODUCED, "negligible": NEGLIGIBLE, "worse": NOT_REPRODUCED,
                   "undecided": INCONCLUSIVE}  # fmt: skip


def better_verdict(difference: stats.Difference) -> tuple[str, str]:
    """(verdict, words) of a claim that a's held-out loss is lower than b's (difference a - b),
    its grade read through BETTER_VERDICTS."""
    grade, words = vocabulary.better_beyond_negligible(difference)
    return BETTER_VERDICTS[grade], words


def no_better(verdict: str) -> str:
    """A negligible effect (`better_verdict`) in a claim whose other parts held (its "no worse",
    a match it also names): partly, no better. Any other verdict as it is."""
    return NO_BETTER if verdict == NEGLIGIBLE else verdict


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
class Borderline:
    """A fragile decision whose other side changes the claim's verdict."""

    decision: int  # its index among the finding's decisions
    label: str
    alternative: str  # the decision's outcome on the other side of its band
    verdict: str  # the claim's verdict then

    def text(self, decision: stats.Decision) -> str:
        return (
            f"{self.label}: {decision.outcome}, but within machine noise of {self.alternative} "
            f"({decision.margin_text()}); then the verdict would be {verdict_word(self.verdict)}"
        )


@dataclass(frozen=True)
class Finding:
    ours: str  # our measured value, in words and rounded numbers
    verdict: str  # one of VERDICTS
    quantities: tuple[Quantity, ...] = ()  # what the verdict rests on, for the reproduction check
    decisions: tuple[stats.Decision, ...] = ()  # every decision the check made, in order
    borderline: tuple[Borderline, ...] = ()  # the fragile decisions that could move the verdict
    at_budget: bool = False  # graded where the miniature cannot match what the mechanism needs
    # the decisions on aggregates a rerun cannot confirm (`too_loose`): shown, not graded (each
    # counts as inconclusive in the verdict), by index
    not_graded: tuple[int, ...] = ()

    @property
    def partly_kind(self) -> str:
        return partly_kind(self.verdict)

    def decision_label(self, index: int) -> str:
        """The label of the aggregate quantity a decision was made on, else its place."""
        decision = self.decisions[index]
        if decision.label:
            return decision.label
        difference = decision.difference
        for quantity in self.quantities:
            if difference is not None and quantity.difference is difference:
                return quantity.label
        return f"decision {index + 1} ({decision.test})"

    def decided_effect(self, quantity: Quantity) -> float:
        """What a quantity decides: its size, or the farthest boundary a decision holds it
        against. A reproduction tolerance wider than this cannot tell the effect from none."""
        boundaries = [abs(b) for d in self.decisions
                      if d.difference is not None and d.difference is quantity.difference
                      for b in d.boundaries]  # fmt: skip
        return max([abs(quantity.value), *boundaries])

    def too_loose(self) -> list[str]:
        """The aggregates a rerun cannot confirm at this n: the reproduction check lets a rerun's
        mean lie 3 standard errors of the two runs' difference away (`stats.reproduction_tolerance`,
        here with the recorded standard error for both), and where that is wider than the
        `decided_effect`, a passing check says nothing about the effect."""
        return [
            quantity.label
            for quantity in self.quantities
            if quantity.kind == "aggregate"
            and quantity.difference is not None
            and stats.reproduction_tolerance(quantity.difference, quantity.difference)
            > self.decided_effect(quantity)
        ]

    def loose_decisions(self) -> tuple[int, ...]:
        """The indices of the decisions made on a `too_loose` aggregate."""
        loose = [q.difference for q in self.quantities if q.label in self.too_loose()]
        return tuple(
            index
            for index, decision in enumerate(self.decisions)
            if any(decision.difference is difference for difference in loose)
        )

    def graded_outcome(self, index: int) -> str:
        """Decision `index`'s outcome as the verdict counts it (`stats.NOT_GRADED` if not graded)."""
        return stats.NOT_GRADED if index in self.not_graded else self.decisions[index].outcome

    def ungraded_overrides(self) -> dict[int, str]:
        """The `Claim.verdict_with` overrides that keep this finding's ungraded decisions out."""
        return {index: stats.NOT_GRADED for index in self.not_graded}

    def borderline_text(self) -> str:
        return "; ".join(b.text(self.decisions[b.decision]) for b in self.borderline)

    def one_seed_text(self) -> str:
        """'test NLL, A - B: holds, inconclusive without the 4th of 10 seeds': the decisions that
        one seed carries, each once."""
        parts = [
            f"{self.decision_label(i)}: {d.outcome}, {d.without_it} without the "
            f"{_ordinal(d.one_seed + 1)} of {len(d.difference.values)} seeds"
            for i, d in enumerate(self.decisions)
            if d.one_seed is not None and i not in self.not_graded
        ]
        return "; ".join(dict.fromkeys(parts))


def expect(finding: Finding, verdict: str) -> None:
    """Fail unless `finding`'s verdict is `verdict`, or one of its borderline decisions, put on its
    other side, gives `verdict`: a notebook's assertion of a verdict, robust as the reproduction
    check is (DESIGN.md section 5). A finding from `Claim.evaluate` carries its borderline
    decisions; one from a check function called directly does not, and must match exactly."""
    reachable = {finding.verdict} | {b.verdict for b in finding.borderline}
    if verdict not in reachable:
        raise AssertionError(
            f"verdict {finding.verdict}, expected {verdict}; no borderline decision reaches it: "
            f"{finding.ours}"
        )


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    source: str
    paper_value: str
    notebook: str = ""  # the notebook that checks it: its chapter's, set by `Chapter`
    # the recorded experiments or the analyses of them (`chNN.analysis`) it reads, called with their
    # defaults; their results are passed to `check`, in order
    experiments: tuple[Callable, ...] = ()
    check: Callable[..., Finding] | None = None
    test: str = ""  # how the verdict is decided: the test, n, and the margin declared beforehand
    kind: str = EMPIRICAL  # IDENTITY for an exact result that can fail only through a bug
    origin: str = SOURCE  # OURS for the companion's own question
    # the setting the source's claim was made in beside ours, on what its mechanism needs (steps or
    # tokens per parameter, warmup, depth, width, batch, rate): "source: ...; ours: ..."
    regime: str = ""
    # For a claim about training (fails to train, trains stably, converges faster, ends better):
    # what the miniature cannot match that the source's mechanism needs (warmup where the source
    # used it, a clock long enough for the arm the source calls trainable, the quantity it
    # plotted). Set, the verdict holds at this budget only, and the claim counts among our own
    # questions.
    budget: str = ""
    # A rule of the test (a window, a margin, a gate, a pick) fixed after the runs it grades had
    # been seen: which rule, and what runs on fresh seeds say of it, if any. Shown in CLAIMS.md and
    # beside the claim in its notebook's list of the claims checked there.
    after_data: str = ""

    def __post_init__(self):
        if self.budget and (self.origin != SOURCE or self.kind != EMPIRICAL):
            raise ValueError(f"{self.id}: only a source's empirical claim is graded at a budget")

    def evaluate(self, *results, not_graded: tuple[int, ...] | None = None) -> Finding:
        """The check on the experiments' results (those given, else each experiment called with
        its defaults), with the decisions it made, those a rerun cannot confirm not graded
        (`Finding.not_graded`), and, for each fragile graded one, whether its other side would
        change the verdict (the check is run again with that decision's outcome set to the other
        side).

        What is graded is the committed record's: a recomputed record (the reproduction check,
        notebooks run on it) grades the decisions the record grades, as `not_graded` (the record's
        finding's) says, or as the committed record gives when it holds the claim's runs."""
        if self.check is None:
            return Finding("", PENDING)
        results = self._results(results)
        with stats.collect_decisions() as decisions:
            finding = self.check(*results)
        if finding.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: unknown verdict {finding.verdict!r}")
        if finding.verdict == PARTLY and finding.partly_kind not in PARTLY_KINDS:
            raise ValueError(f"{self.id}: partly without its kind (one of {PARTLY_KINDS})")
        for quantity in finding.quantities:
            if not math.isfinite(quantity.value):
                raise ValueError(f"{self.id}: quantity {quantity.label!r} is {quantity.value}")
        finding = dataclasses.replace(finding, decisions=tuple(decisions))
        # A decision a rerun cannot confirm is shown, not graded: the check runs again with each
        # such decision's outcome set to NOT_GRADED (read as inconclusive), until the set is stable.
        if not_graded is None:
            not_graded = self._not_graded_in_the_record()
        for _ in range(3):
            loose = finding.loose_decisions() if not_graded is None else not_graded
            if loose == finding.not_graded:
                break
            with stats.collect_decisions({i: stats.NOT_GRADED for i in loose}) as decisions:
                finding = self.check(*results)
            finding = dataclasses.replace(finding, decisions=tuple(decisions), not_graded=loose)
        else:
            raise RuntimeError(f"{self.id}: its ungraded decisions do not settle")
        ungraded = finding.ungraded_overrides()
        borderline = []
        for index, decision in enumerate(decisions):
            if index in finding.not_graded:
                continue
            for alternative in decision.alternatives:
                moved = self.verdict_with({**ungraded, index: alternative}, *results)
                if moved != finding.verdict:
                    label = finding.decision_label(index)
                    borderline.append(Borderline(index, label, alternative, moved))
                    break
        return dataclasses.replace(
            finding, borderline=tuple(borderline), at_budget=bool(self.budget)
        )

    def _not_graded_in_the_record(self) -> tuple[int, ...] | None:
        """The committed record's ungraded decisions, when this evaluation reads another record of
        the same runs (LNPAPER_RECORD_DIR); None when it reads the committed record, when it reads
        no recorded experiment, or when the committed record lacks the claim's runs."""
        from lnpaper.companion import record  # here: only a claim read on another record needs it

        here = record.current()
        if not self.experiments or here.directory.resolve() == record.REPO_RESULTS.resolve():
            return None
        try:
            with record.using(record.settings_for("strict", record.REPO_RESULTS)):
                return self.evaluate().not_graded
        except record.RecordMissing:
            return None

    def _results(self, given: tuple) -> list:
        if not given:
            return [run() for run in self.experiments]
        if len(given) != len(self.experiments):
            names = ", ".join(run.__name__ for run in self.experiments)
            raise TypeError(
                f"{self.id} reads {len(self.experiments)} results ({names}); got {len(given)}"
            )
        return list(given)

    def verdict_with(self, overrides: dict[int, str], *results) -> str:
        """The verdict with decision i set to overrides[i]: would moving those decisions alone
        explain another verdict?"""
        results = self._results(results)
        with stats.collect_decisions(overrides=overrides):
            return self.check(*results).verdict


def verdict(holds: bool) -> str:
    return REPRODUCED if holds else NOT_REPRODUCED


def from_outcome(outcome: str) -> str:
    """A `stats` outcome (holds, fails, inconclusive) as a verdict."""
    return {stats.HOLDS: REPRODUCED, stats.FAILS: NOT_REPRODUCED}.get(outcome, INCONCLUSIVE)


def combine(outcomes) -> str:
    """One verdict from the `stats` outcomes of a claim's parts: reproduced if every part holds,
    not reproduced if every part fails, partly (some parts) if some hold; with none holding and
    some undecided, inconclusive (or not reproduced, if any part failed)."""
    outcomes = list(outcomes)
    if all(o == stats.HOLDS for o in outcomes):
        return REPRODUCED
    if all(o == stats.FAILS for o in outcomes):
        return NOT_REPRODUCED
    if stats.HOLDS in outcomes:
        return SOME_PARTS
    return NOT_REPRODUCED if stats.FAILS in outcomes else INCONCLUSIVE


def tested(difference: stats.Difference, outcome: str, scale: float = 1.0, unit: str = "",
           digits: int = 3) -> str:  # fmt: skip
    """'+1.2 [+0.4, +2.0] pp (n = 10): holds' with the values times `scale`."""
    mean, low, high = (
        f"{scale * v:+.{digits}f}" for v in (difference.mean, difference.low, difference.high)
    )
    unit = f" {unit}" if unit else ""
    return f"{mean} [{low}, {high}]{unit} (n = {difference.n}): {outcome}"


# ---- a finding as text ---------------------------------------------------------------------------


def verdict_text(finding) -> str:
    """The verdict as the ledger shows it: 'partly (some parts)', 'reproduced (borderline)' when a
    fragile decision could move it (`Borderline`), 'partly (some parts, borderline)' when both,
    and '... at this budget)' for a claim graded where the miniature cannot match what its
    mechanism needs (`Claim.budget`)."""
    word = verdict_word(finding.verdict)
    marks = ["borderline"] * bool(finding.borderline) + ["at this budget"] * finding.at_budget
    if not marks:
        return word
    if word.endswith(")"):
        return f"{word[:-1]}, {', '.join(marks)})"
    return f"{word} ({', '.join(marks)})"


# Beside a claim whose test has a rule fixed after its runs were seen (`Claim.after_data`).
AFTER_DATA_MARK = "a rule set after the data"
# The `after_data` of claims graded before `NEGLIGIBLE` became a verdict of its own.
NEGLIGIBLE_RULE_SET_AFTER = (
    "the rule that a gain within the negligible margin is not reproduced (negligible), not "
    "partly, was set for every claim after these runs had been seen"
)

# Printed lines fit a book column and a Lab cell without scrolling or breaking mid-number.
LINE_WIDTH = 88


def _fill(text: str, **options) -> str:
    """textwrap.fill at LINE_WIDTH that never breaks an interval '[-0.1, +0.2]' or 'n = 10'."""
    keep = re.sub(r"\[[^\]]*\]|n = \d+", lambda m: m.group(0).replace(" ", "\xa0"), text)
    return textwrap.fill(keep, LINE_WIDTH, break_on_hyphens=False, **options).replace("\xa0", " ")


def wrap(text: str, indent: str = "") -> str:
    """A claim's text as printed in a notebook: lines of at most LINE_WIDTH, each after `indent`."""
    return _fill(text, initial_indent=indent, subsequent_indent=indent)


def _interval(mean: float, low: float, high: float) -> str:
    """'+0.392 [+0.278, +0.505]': three decimals, more when the interval is narrower than 0.01."""
    width = high - low
    decimals = 3
    if math.isfinite(width) and width > 0:
        decimals = min(6, max(3, -math.floor(math.log10(width))))
    return f"{mean:+.{decimals}f} [{low:+.{decimals}f}, {high:+.{decimals}f}]"


def evidence(finding) -> str:
    """A claim's evidence as a notebook prints it: each decision its verdict rests on (what was
    compared, the estimate and its 95% interval or the counts, the test, the outcome), then the
    verdict. What is shown but not graded, and the words around the numbers, are in CLAIMS.md
    under the claim's ID (`wrap(finding.ours)` prints them all). A verdict that rests on no
    decision (an exact identity, a premise not met) is printed with its words."""
    if not finding.decisions:
        return f"{wrap(finding.ours)}\nverdict: {verdict_text(finding)}"
    lines = []
    for index, decision in enumerate(finding.decisions):
        lines.append(_fill(finding.decision_label(index)))
        if decision.difference is not None:
            estimate = _interval(decision.difference.mean, decision.low, decision.high)
            lines.append(f"    {estimate}  {decision.test}: {decision.outcome}")
        else:
            lines.append(wrap(f"{decision.evidence or decision.test}: {decision.outcome}", "    "))
        if index in finding.not_graded:
            lines.append("    not graded: a rerun cannot confirm it at this n")
    lines.append(f"verdict: {verdict_text(finding)}")
    return "\n".join(lines)


def row(claim, finding) -> tuple[str, ...]:
    """A claim's row of the ledger (ID, claim, source, source's value, ours, test, verdict,
    notebook): the verdict carries the borderline marker, and `ours` ends with what could move it."""
    ours = finding.ours
    if finding.borderline:
        ours += f". Borderline: {finding.borderline_text()}"
    if finding.one_seed_text():
        ours += f". One seed decides: {finding.one_seed_text()}"
    if loose := finding.too_loose():
        ours += ". Shown, not graded (too few seeds for a rerun to confirm): " + "; ".join(loose)
    return (claim.id, claim.claim, claim.source, claim.paper_value, ours, claim.test,
            verdict_text(finding), claim.notebook)  # fmt: skip


def checked_here(graded) -> str:
    """The "Claims checked here" list at the end of a notebook, from (claim, finding) pairs: each
    claim's ID, verdict and statement, as plain text nbval can compare, every line at most
    LINE_WIDTH characters. The source, our numbers and the test behind each verdict are in
    CLAIMS.md, under the same ID: the notebook does not print them twice."""
    lines = [_fill(f"{claim.id}  [{verdict_text(finding)}]  {claim.claim}"
                   + (f" ({AFTER_DATA_MARK})" if claim.after_data else ""), subsequent_indent="    ")
             for claim, finding in graded]  # fmt: skip
    lines += ["", "Sources, numbers and tests: CLAIMS.md, under each ID."]
    return "\n".join(lines)
