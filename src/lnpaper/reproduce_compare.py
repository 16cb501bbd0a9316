"""The reproduction check's comparison: each claim evaluated on the record and on the recomputed
record, its verdicts, quantities and decisions set side by side, and what fails the check.

A quantity must lie within the tolerance its kind gives (`lnpaper.companion.verdicts`). A decision
that lands on the other side of its boundary fails the check only when the record does not mark it
fragile (`lnpaper.stats`); a verdict may move only through fragile decisions.
"""

import collections
from dataclasses import dataclass
from pathlib import Path

from lnpaper import book, stats
from lnpaper.companion import record


def _number(value: float) -> str:
    return f"{value:.4g}"


def compare_claims(recorded_dir: Path, fresh_dir: Path, chosen=None) -> tuple[list, list, list]:
    """(quantity rows, verdict rows, decision rows) of every claim (or the `chosen` ones),
    recorded against recomputed, each row with its status by the rules of the module docstring."""
    chosen = chosen or book.claims()

    def evaluate(directory, graded=None):
        # the fresh record grades the decisions the recorded one grades
        with record.using(record.settings_for("strict", directory)):
            return {claim.id: claim.evaluate(not_graded=graded and graded[claim.id].not_graded)
                    for claim in chosen}  # fmt: skip

    before = evaluate(recorded_dir)
    after = evaluate(fresh_dir, before)
    quantities, verdicts, decisions = [], [], []
    for claim in chosen:
        claim_id, old, new = claim.id, before[claim.id], after[claim.id]
        names = ", ".join(run.__name__ for run in claim.experiments)
        moved = {}
        fresh_decisions = _by_label(new)
        for (label, occurrence), index in _by_label(old).items():
            if (label, occurrence) not in fresh_decisions:
                continue  # a decision the fresh finding does not make: its verdict tells
            fresh_index = fresh_decisions[label, occurrence]
            was, now = old.decisions[index], new.decisions[fresh_index]
            graded = index not in old.not_graded
            decisions.append(DecisionRow(claim_id, label, was, now, graded))
            if old.graded_outcome(index) != new.graded_outcome(fresh_index):
                moved[index] = new.graded_outcome(fresh_index)
        if old.verdict == new.verdict:
            status = "same"
        else:  # moved through fragile decisions only: their new outcomes alone give the new verdict
            fragile = all(old.decisions[i].fragile for i in moved)
            with record.using(record.settings_for("strict", recorded_dir)):
                overrides = {**old.ungraded_overrides(), **moved}
                explained = moved and claim.verdict_with(overrides) == new.verdict
            status = "moved (fragile)" if fragile and explained else "CHANGED"
        verdicts.append((claim_id, names, old.verdict, new.verdict, status))
        fresh = {q.label: q for q in new.quantities}
        for quantity in old.quantities:
            now = fresh.get(quantity.label)
            if now is None:
                quantities.append((claim_id, quantity.label, quantity.kind,
                                   _number(quantity.value), "missing", "", "", False))  # fmt: skip
                continue
            tolerance = quantity.tolerance(now)
            ok = abs(now.value - quantity.value) <= tolerance
            # An aggregate whose tolerance is wider than the effect it decides cannot tell that
            # effect from none: reported as too loose.
            loose = quantity.kind == "aggregate" and tolerance > old.decided_effect(quantity)
            quantities.append((claim_id, quantity.label, quantity.kind, _number(quantity.value),
                               _number(now.value), _number(tolerance), "too loose" if loose else "",
                               ok))  # fmt: skip
    return quantities, verdicts, decisions


def _by_label(finding) -> dict[tuple[str, int], int]:
    """Each decision's index by its label (`decision_label`: what it decides) and, for a label
    that repeats, how many decisions before it have that label: recorded and fresh decisions are
    paired by what they decide, not by their place."""
    seen: collections.Counter = collections.Counter()
    places = {}
    for index in range(len(finding.decisions)):
        label = finding.decision_label(index)
        places[label, seen[label]] = index
        seen[label] += 1
    return places


@dataclass(frozen=True)
class DecisionRow:
    claim: str
    label: str
    recorded: stats.Decision
    now: stats.Decision
    graded: bool = True  # False: shown, not graded in the record (`Finding.not_graded`)

    @property
    def changed(self) -> bool:
        return self.recorded.outcome != self.now.outcome

    @property
    def ok(self) -> bool:
        """A decision the record grades may move only if the record marks it fragile; one it
        shows without grading may move freely: no verdict rests on it."""
        return not self.changed or self.recorded.fragile or not self.graded


def interval_text(decision: stats.Decision) -> str:
    if decision.evidence:
        return decision.evidence.split(", band")[0]
    return f"[{decision.low:+.3g}, {decision.high:+.3g}]"


def check_problems(recorded, fresh, quantities, verdicts, decisions) -> list[str]:
    """What fails the check, one line each: an entry not recomputed, a verdict changed through a
    decision the record did not mark fragile, such a decision, a quantity outside its tolerance."""
    problems = [f"{e['experiment']}-{e['key']} was not recomputed"
                for e in recorded if e["key"] not in fresh]  # fmt: skip
    problems += [
        f"{c}: verdict {old!r} recorded, {new!r} now, through a decision that was not fragile"
        for c, _, old, new, status in verdicts
        if status == "CHANGED"
    ]
    problems += [
        f"{row.claim}: {row.label}: {row.recorded.outcome} recorded ({row.recorded.margin_text()}), "
        f"{row.now.outcome} now ({interval_text(row.now)}); the record did not mark it fragile"
        for row in decisions
        if not row.ok
    ]
    problems += [f"{c}: {label} {rec} recorded, {now} now (tolerance {tol})"
                 for c, label, _, rec, now, tol, _, ok in quantities if not ok]  # fmt: skip
    return problems
