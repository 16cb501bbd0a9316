"""CLAIMS.md and each notebook's "Claims checked here" table, printed from the claim records, so
the ledger cannot disagree with the notebooks."""

import re
import sys
import textwrap

from lnpaper import chapters, stats
from lnpaper.companion.registry import CLAIMS as REGISTERED
from lnpaper.companion.verdicts import EMPIRICAL, IDENTITY, VERDICTS

chapters.load("claims")
# In book order, whichever chapter a process imported first: each chapter module's own list, in the
# order of `chapters.modules`.
CLAIMS = [claim for name in chapters.modules("claims") for claim in sys.modules[name].CLAIMS]
if [claim.id for claim in CLAIMS] != sorted(REGISTERED, key=[claim.id for claim in CLAIMS].index):
    raise RuntimeError("a chapter registered a claim that is not in its CLAIMS list")
BY_ID = {claim.id: claim for claim in CLAIMS}

# The fields of a row of rows(), in order.
COLUMNS = ("ID", "claim", "source", "source's value", "ours", "test", "verdict", "notebook")
# The table at the top of CLAIMS.md keeps the short fields, so it fits a page; each ID links to the
# claim's own section, which gives the rest.
TABLE_COLUMNS = ("ID", "claim", "verdict", "notebook")


def verdict_text(finding) -> str:
    """The verdict as the ledger shows it: 'partly', or 'partly (borderline)' when a fragile
    decision could move it (`lnpaper.companion.verdicts.Borderline`)."""
    return f"{finding.verdict} (borderline)" if finding.borderline else finding.verdict


def rows(ids=None) -> list[tuple[str, ...]]:
    """One row of the ledger per claim, evaluated now (experiments come from the record); the
    verdict column carries the borderline marker, and `ours` ends with its numbers."""
    chosen = CLAIMS if ids is None else [BY_ID[i] for i in ids]
    out = []
    for claim in chosen:
        finding = claim.evaluate()
        ours = finding.ours
        if finding.borderline:
            ours += f". Borderline: {finding.borderline_text()}"
        if finding.one_seed_text():
            ours += f". One seed decides: {finding.one_seed_text()}"
        out.append(
            (
                claim.id,
                claim.claim,
                claim.source,
                claim.paper_value,
                ours,
                claim.test,
                verdict_text(finding),
                claim.notebook,
            )
        )
    return out


def multiplicity() -> list[tuple[list[str], int, list[tuple[str, str, str]]]]:
    """Each claim's decisions are 95% tests on their own; claims that read a common experiment, or
    one claim with several parts, test one set of runs several times. Per such family (claims
    joined by any experiment they name, with two or more decisions among them): the experiments,
    the number m of decisions, and for each claim (id, verdict, verdict under Holm): the verdict
    once every decision that Holm's step-down procedure (family-wise error 5% over the m tests,
    `lnpaper.stats.holm`) no longer rejects is set to inconclusive."""
    findings = {claim.id: claim.evaluate() for claim in CLAIMS if claim.check is not None}
    root = {}

    def find(name):
        while root.setdefault(name, name) != name:
            name = root[name]
        return name

    for claim_id in findings:
        names = [run.__name__ for run in BY_ID[claim_id].experiments]
        for name in names[1:]:
            root[find(name)] = find(names[0])
    families = {}
    for claim_id in findings:
        names = [run.__name__ for run in BY_ID[claim_id].experiments]
        if names:
            families.setdefault(find(names[0]), []).append(claim_id)
    out = []
    for ids in families.values():
        tests = [(i, k, d) for i in ids for k, d in enumerate(findings[i].decisions)]
        if len(tests) < 2:  # one claim with several decisions is a family too
            continue
        kept = stats.holm([d.p_value for _, _, d in tests])
        verdicts = []
        for claim_id in ids:
            dropped = {
                k: stats.INCONCLUSIVE
                for (i, k, d), keep in zip(tests, kept, strict=True)
                if i == claim_id and d.p_value is not None and not keep
            }
            after = BY_ID[claim_id].verdict_with(dropped) if dropped else findings[claim_id].verdict
            verdicts.append((claim_id, findings[claim_id].verdict, after))
        experiments = sorted({run.__name__ for i in ids for run in BY_ID[i].experiments})
        out.append((experiments, len(tests), verdicts))
    return out


MULTIPLICITY = "several-tests-on-one-set-of-runs"  # the anchor of multiplicity_section's heading


def multiplicity_section(families) -> list[str]:
    changed = [(i, before, after) for _, _, verdicts in families for i, before, after in verdicts
               if before != after]  # fmt: skip
    lines = [
        "## Several tests on one set of runs",
        "",
        "Each decision above is a 95% test on its own, and each claim's verdict rests on its own",
        "decisions: the ledger does not adjust them. Where several claims read one experiment, or",
        "one claim has several parts, the same runs are tested several times, and some test would",
        "come out significant by chance more often than 5% (with 8 parts at 2.5% a side, about 18%:",
        "`partly` needs only one). So the ledger also applies Holm's step-down procedure within each",
        "such set of runs (claims joined by an experiment they name, a claim alone with its own",
        "parts; family-wise error 5% over the set's m decisions) and shows what it changes: a",
        "decision it no longer rejects counts as inconclusive, and the claim's check is run again.",
        "",
    ]
    if changed:
        moved = ", ".join(f"{i} ({before} -> {after})" for i, before, after in changed)
        lines.append(f"{len(changed)} verdicts change under it: {moved}.")
    else:
        lines.append("No verdict changes under it.")
    lines += ["", "| experiments | m | claims: verdict, under Holm |", "|---|---|---|"]
    for experiments, m, verdicts in families:
        claims = "; ".join(
            f"{i} {before}" + ("" if after == before else f" -> **{after}**")
            for i, before, after in verdicts
        )
        lines.append(f"| {', '.join(experiments)} | {m} | {claims} |")
    return lines


def anchor(heading: str) -> str:
    """The anchor of a heading as both GitHub and MyST (myst_heading_anchors) make it: lower case,
    punctuation other than hyphens dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _notebook_link(notebook: str, text: str) -> str:
    # Relative to the repository root, where CLAIMS.md is; book/claims.md, which includes it, has
    # the notebooks beside it too (book/notebooks links to ../notebooks).
    return f"[{text}](notebooks/{notebook}.ipynb)"


def _section(heading, source, value, ours, test, verdict, notebook, kind, holm=None) -> list[str]:
    """A claim in full, under its own heading; `holm`, the verdict under Holm's correction within
    its set of runs where that differs."""
    fields = [("source", source), ("source's value", value), ("ours", ours), ("test", test)]
    fields += [("verdict", verdict)]
    if holm:
        fields += [("under Holm within its set of runs", f"{holm} ([below](#{MULTIPLICITY}))")]
    if kind == IDENTITY:
        fields += [("kind", "an identity or implementation check: it can fail only through a bug")]
    fields += [("notebook", _notebook_link(notebook, notebook))]
    return ["", f"### {heading}", ""] + [f"- **{name}:** {text}" for name, text in fields if text]


def markdown() -> str:
    """The text of CLAIMS.md: the verdict counts, one short row per claim, then each claim in full."""
    table = rows()
    verdicts = [row[COLUMNS.index("verdict")].removesuffix(" (borderline)") for row in table]
    counts = {v: verdicts.count(v) for v in VERDICTS}
    summary = ", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count)
    borderline = sum(row[COLUMNS.index("verdict")].endswith("(borderline)") for row in table)
    kinds = {}
    for row, verdict in zip(table, verdicts, strict=True):
        kinds.setdefault(BY_ID[row[0]].kind, []).append(verdict)

    def counted(found):
        return ", ".join(f"{found.count(v)} {v}" for v in VERDICTS if found.count(v))

    lines = [
        "# Claims ledger",
        "",
        "Written by `python -m lnpaper figures` (`make figures`) from the claim records in",
        "`src/lnpaper/chapters/` and the experiment record in `results/`; `make test` fails if this file",
        "differs from a fresh run. The table gives each claim's verdict: `reproduced`, `partly`,",
        "`inconclusive` (the test decided neither way), `not reproduced` or `not checkable at CPU",
        "scale`; a claim that no notebook checks yet says `pending`. Each ID leads to the claim in full",
        "below: the source by paper and section, the source's value, ours, and the test behind the",
        "verdict, with its n and, for a claim of equal quality, the margin declared before the",
        "recorded runs (for some, after earlier live runs of the same comparison had been read; each",
        "such redesign made its test stricter, and its notebook names it). A verdict marked",
        "`(borderline)` rests on a decision whose interval lies within machine-to-machine noise of",
        "its boundary (the robustness band of `lnpaper.stats`), where the other side would change",
        "the verdict; its section gives both sides' numbers.",
        "",
        f"{len(table)} claims: {summary}; {borderline} of them borderline.",
        "",
        f"Of these, {len(kinds.get(IDENTITY, []))} are identities or implementation checks (an "
        "equation, an invariance, code against its formula), which can fail only through a bug: "
        f"{counted(kinds.get(IDENTITY, []))}. The {len(kinds.get(EMPIRICAL, []))} empirical "
        f"findings: {counted(kinds.get(EMPIRICAL, []))}.",
        "",
        "| " + " | ".join(TABLE_COLUMNS) + " |",
        "|" + "---|" * len(TABLE_COLUMNS),
    ]
    families = multiplicity()
    under_holm = {i: after for _, _, verdicts in families for i, before, after in verdicts
                  if before != after}  # fmt: skip
    sections = []
    for claim_id, claim, source, value, ours, test, verdict, notebook in table:
        heading = f"{claim_id} {claim}"
        number = notebook.split("_")[0]
        cells = (f"[{claim_id}](#{anchor(heading)})", _cell(claim), verdict,
                 _notebook_link(notebook, number))  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
        sections += _section(heading, source, value, ours, test, verdict, notebook,
                             BY_ID[claim_id].kind, under_holm.get(claim_id))  # fmt: skip
    changed = len(under_holm)
    at = next(i for i, line in enumerate(lines) if line.startswith("Of these, "))
    lines[at + 1 : at + 1] = [
        "",
        f"Under Holm's correction within each set of runs, {changed} verdicts would change "
        f"([below](#{MULTIPLICITY})).",
    ]
    return (
        "\n".join(
            [*lines, "", "## Each claim in full", *sections, "", *multiplicity_section(families)]
        )
        + "\n"
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


def _wrapped(label: str, text: str) -> str:
    """'    ours:   ...' wrapped at LINE_WIDTH, its later lines under the first's text."""
    first = f"    {label + ':':8s}"
    return _fill(text, initial_indent=first, subsequent_indent=" " * len(first))


def checked_here(ids) -> str:
    """The "Claims checked here" table at the end of a notebook, as plain text nbval can compare,
    every line at most LINE_WIDTH characters."""
    blocks = []
    for claim_id, claim, source, paper, ours, test, verdict, _ in rows(ids):
        head = _fill(f"{claim_id}  [{verdict}]  {claim}", subsequent_indent="    ")
        fields = [("source", source), ("paper", paper), ("ours", ours)] + (
            [("test", test)] if test else []
        )
        blocks.append("\n".join([head] + [_wrapped(label, text) for label, text in fields]))
    return "\n\n".join(blocks)
