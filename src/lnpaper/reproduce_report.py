"""The reproduction report (`python -m lnpaper reproduce --report`): its answer first, then what the
check does, the run's details, and the tables of verdicts, decisions and quantities, each with the
answer in its first columns so that it shows in the book's column, a long one folded.
"""

import datetime
import os
import subprocess
from pathlib import Path

import torch

from lnpaper import stats
from lnpaper.companion import record
from lnpaper.formatting import table_head, table_row
from lnpaper.reproduce_compare import check_problems, interval_text


def _machine(entries: list[dict]) -> str:
    capabilities = sorted({e["made"]["cpu_capability"] for e in entries})
    dates = sorted({e["made"]["date"] for e in entries})
    models = sorted({e["made"].get("cpu_model") or "CPU model not recorded" for e in entries})
    return (
        f"CPU capability {', '.join(capabilities)} ({'; '.join(models)}), "
        f"made {dates[0]} to {dates[-1]}"
    )


def _commit() -> str:
    """The commit the check ran on, with '+ changes' when the tree differed from it."""
    root = Path(__file__).resolve().parents[2]

    def git(*arguments) -> str:
        command = ["git", "-C", str(root), *arguments]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--", "src")
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"{head} + changes to src/" if dirty else head


# A table longer than this many rows is folded (a <details>, closed, that GitHub and the book both
# show as a line to click), so that the report's answer and its short tables stay in view.
FOLD_ROWS = 15


def fold_long_tables(lines: list[str]) -> list[str]:
    """`lines` with each Markdown table of more than FOLD_ROWS rows inside a closed <details>."""
    folded: list[str] = []
    index = 0
    while index < len(lines):
        is_head = index + 1 < len(lines) and lines[index + 1].startswith("|---")
        if not (lines[index].startswith("| ") and is_head):
            folded.append(lines[index])
            index += 1
            continue
        end = index + 2
        while end < len(lines) and lines[end].startswith("| "):
            end += 1
        table = lines[index:end]
        rows = len(table) - 2
        if rows > FOLD_ROWS:
            table = ['<details class="lnpaper-table">', f"<summary>Show the table: {rows} rows"
                     "</summary>", "", *table, "", "</details>"]  # fmt: skip
        folded += table
        index = end
    return folded


def _boundary(decision: stats.Decision) -> str:
    if not decision.boundaries:
        return "sign test"
    return ", ".join(f"{b:+.3g}" if b else "0" for b in decision.boundaries)


def _named(claim_ids) -> str:
    """' (R4c, M4e)': the claim IDs, each once, in order; '' for none."""
    ids = list(dict.fromkeys(claim_ids))
    return f" ({', '.join(ids)})" if ids else ""


# The sentence that tells a student what "fragile" means, where the report first uses the word.
FRAGILE_IN_WORDS = (
    "A decision (an interval of a difference set against a boundary, such as 0) is *fragile* when "
    "its recorded interval ended so close to the boundary that the tiny numeric differences "
    "between two machines can put it on the other side; such a decision may move without "
    "failing the check, and a verdict may move only through one."
)


def answer_lines(problems, quantities, verdicts, decisions) -> list[str]:
    """The report's first lines after its title: whether the check passed, then how many
    verdicts, quantities and decisions came out the same, and the claims of those that moved."""
    moved_verdicts = [row[0] for row in verdicts if row[-1] == "moved (fragile)"]
    changed_verdicts = [row[0] for row in verdicts if row[-1] == "CHANGED"]
    same = len(verdicts) - len(moved_verdicts) - len(changed_verdicts)
    outside = [row[0] for row in quantities if not row[-1]]
    graded = [row for row in decisions if row.graded]
    moved = [row for row in graded if row.changed]
    robust = [row.claim for row in moved if not row.ok]
    fragile_part = (f", {len(robust)} of them not fragile{_named(robust)}" if robust
                    else ", all of them fragile")  # fmt: skip
    if problems:
        verdict = f"**The check failed**: {len(problems)} problem(s), listed under *What failed*."
    else:
        verdict = ("**The check passed**: every experiment was recomputed on that machine, and "
                   "every quantity lay within its tolerance.")  # fmt: skip
    return [
        verdict,
        "",
        f"- verdicts: {same} of {len(verdicts)} the same; {len(moved_verdicts)} moved through "
        f"fragile decisions{_named(moved_verdicts)}; {len(changed_verdicts)} changed"
        f"{_named(changed_verdicts)}",
        f"- quantities: {len(quantities) - len(outside)} of {len(quantities)} within tolerance"
        + (f"; outside it{_named(outside)}" if outside else ""),
        f"- decisions: {len(moved)} of {len(graded)} graded moved to the other side of their "
        "boundary"
        + (f"{_named(row.claim for row in moved)}{fragile_part}" if moved else "")
        + f"; {len(decisions) - len(graded)} more shown, not graded",
        "",
        FRAGILE_IN_WORDS,
    ]


def report_markdown(recorded, fresh, quantities, verdicts, decisions, identical, minutes,
                    workers, path, work_lines=()) -> str:  # fmt: skip
    """The report: its title naming the commit and the machine, its answer (`answer_lines`), then
    what the check does, this run's details, and the tables, each with its answer columns first and
    the numbers behind them after, a long one folded (`fold_long_tables`)."""
    env = f"MKL_CBWR={os.environ['MKL_CBWR']}" if os.environ.get("MKL_CBWR") else ""
    problems = check_problems(recorded, fresh, quantities, verdicts, decisions)
    loose = [row for row in quantities if row[-2]]
    graded = [row for row in decisions if row.graded]
    graded_loose = [q for q in loose if any((d.claim, d.label) == q[:2] for d in graded)]
    fragile = [row for row in graded if row.recorded.fragile]
    moved = [row for row in decisions if row.changed]
    commit, today = _commit(), datetime.date.today().isoformat()
    model = record.cpu_model() or "CPU model unknown"
    capability = torch.backends.cpu.get_cpu_capability()
    lines = [
        # The book shows the committed report of a writer's run wherever it is read, so the report
        # names its commit and machine rather than saying "this machine".
        f"# Reproduction report: commit {commit} on {model} ({capability})",
        "",
        *answer_lines(problems, quantities, verdicts, decisions),
        "",
    ]
    if problems:
        lines += ["## What failed", "", *[f"- {problem}" for problem in problems], ""]
    lines += [
        "## What the check does",
        "",
        "`python -m lnpaper reproduce` (run by `make test`) recomputes every experiment in",
        "`results/` on the machine it runs on and compares it with the record. Each quantity a",
        "verdict rests on must lie within its tolerance: a roundoff bound for exact quantities, 3",
        "standard errors of the difference for aggregates over seeds, a binomial bound for counts",
        "of runs. Each decision (an interval against its boundary) must come out the same unless",
        "the record marks it fragile: its interval lay within the robustness band of its boundary",
        "(`lnpaper.stats`: 3 sqrt(2) standard errors, what a passing quantity check lets an edge",
        "move), so a machine that reproduces every quantity may still put it on the other side. A",
        "fragile decision that moved is listed, not failed; a verdict may move only through fragile",
        "decisions.",
        "",
        "## This run",
        "",
        f"- code: commit {commit}, {today}",
        f"- record: {len(recorded)} entries, {_machine(recorded)}",
        f"- now: {model}, native {capability}, recomputed on {path}"
        + (f" ({env})" if env else "")
        + f", {workers} worker(s), {minutes:.1f} min",
        f"- {identical} of {len(recorded)} entries came out bit for bit identical",
        *work_lines,
        f"- decisions: {len(graded)} graded, {len(fragile)} of them fragile in the record, and "
        f"{len(decisions) - len(graded)} shown, not graded (on aggregates a rerun cannot confirm "
        f"at their n); {len(moved)} moved ({sum(not row.ok for row in moved)} of them graded and "
        "not fragile)",
        f"- too loose to check: {len(loose)} aggregates whose tolerance is wider than the effect "
        f"they decide (too few seeds, or runs that collapse), {len(graded_loose)} of them graded"
        f"{_named(q[0] for q in graded_loose)}",
        *[
            f"- moved, {'fragile' if row.graded else 'not graded'}: {row.claim}, {row.label}: "
            f"{row.recorded.outcome} -> {row.now.outcome}"
            for row in moved
            if row.ok
        ],
        "",
        *verdict_table(verdicts),
        "",
        *decision_tables(decisions),
        "",
        *quantity_table(quantities),
    ]
    return "\n".join(fold_long_tables(lines)) + "\n"


# Each table's columns: the answer first (what is decided, as recorded and now, and whether it
# came out the same), so that it shows in the book's 784 px column; the numbers behind it after.
VERDICT_COLUMNS = ("claim", "recorded", "now", "status", "experiments")
DECISION_COLUMNS = ("claim", "decision", "recorded", "now", "status", "notes")
DECISION_NUMBER_COLUMNS = ("claim", "decision", "test", "boundary", "band", "interval recorded",
                           "interval now")  # fmt: skip
QUANTITY_COLUMNS = ("claim", "quantity", "within tolerance", "recorded", "now", "tolerance",
                    "rule")  # fmt: skip


def verdict_table(verdicts) -> list[str]:
    lines = ["## Verdicts", "", "Each claim's verdict as recorded and now.", ""]
    lines += table_head(VERDICT_COLUMNS)
    for claim_id, names, old, new, status in verdicts:
        lines.append(table_row([claim_id, old, new, status if status == "same" else f"**{status}**",
                                 names]))  # fmt: skip
    return lines


def decision_tables(decisions) -> list[str]:
    """Two tables: each decision's outcome as recorded and now, then the numbers behind it."""
    lines = [
        "## Decisions",
        "",
        "Each decision's outcome as recorded and now; `fragile` as above, `one seed` when dropping",
        "a single seed alone changes the recorded outcome.",
        "",
        *table_head(DECISION_COLUMNS),
    ]
    for row in decisions:
        was = row.recorded
        status = ("same" if not row.changed else "**CHANGED**" if not row.ok
                  else "moved (fragile)" if row.graded else "moved (not graded)")  # fmt: skip
        notes = ["yes"] if was.fragile else []
        notes += [] if row.graded else ["not graded"]
        notes += ["one seed"] if was.one_seed is not None else []
        lines.append(table_row([row.claim, row.label, was.outcome, row.now.outcome,
                                 status, ", ".join(notes)]))  # fmt: skip
    lines += [
        "",
        "## The numbers behind each decision",
        "",
        "Each decision's test, the boundary it is set against, its robustness band, and its",
        "interval as recorded and now.",
        "",
        *table_head(DECISION_NUMBER_COLUMNS),
    ]
    for row in decisions:
        was = row.recorded
        lines.append(table_row([row.claim, row.label, was.test, _boundary(was), f"{was.band:.2g}",
                                 interval_text(was), interval_text(row.now)]))  # fmt: skip
    return lines


def quantity_table(quantities) -> list[str]:
    lines = [
        "## Quantities",
        "",
        "Each quantity a verdict rests on, as recorded and now, against its tolerance and the",
        "rule that gives it; `too loose` when that tolerance is wider than the effect it decides.",
        "",
        *table_head(QUANTITY_COLUMNS),
    ]
    for claim_id, label, kind, recorded, now, tolerance, note, ok in quantities:
        rule = f"{kind}, {note}" if note else kind  # one column, not two: the table fits 784 px
        lines.append(table_row([claim_id, label, "yes" if ok else "**NO**", recorded, now,
                                 tolerance, rule]))  # fmt: skip
    return lines
