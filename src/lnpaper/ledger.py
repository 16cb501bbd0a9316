"""CLAIMS.md and each notebook's "Claims checked here" table, printed from the claim records, so
the ledger cannot disagree with the notebooks."""

import math
import re
import sys
import textwrap

from lnpaper import chapters, stats
from lnpaper.companion.registry import CLAIMS as REGISTERED
from lnpaper.companion.verdicts import IDENTITY, OURS, VERDICTS
from lnpaper.data import SyntheticLanguage
from lnpaper.vocabulary import DIGITS_CHANCE, NEGLIGIBLE_NATS, SEQUENCE_LENGTH

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


# What the companion found, in three lines: the answer CLAIMS.md and the README open with.
FOUND = (
    "**What the companion found.** The paper's mechanics hold exactly: LayerNorm takes its",
    "statistics from one example, so it needs no batch, computes one function in training and at",
    "inference, and has the invariances of its Table 1. Its training claims hold in direction at CPU",
    "scale where BatchNorm is starved (batch 4, long sequences), and only in part inside recurrent",
    "cells, where LayerNorm speeds training at a shared learning rate but ends no better. In small",
    "Transformers where the norm goes matters more than its formula: Pre-LN trains without warmup,",
    "RMSNorm matches LayerNorm, and a careful initialization or DyT can stand in for it.",
)


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
        if loose := finding.too_loose():
            ours += ". Too few seeds for a rerun to confirm: " + "; ".join(loose)
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


def _section(heading, source, value, ours, test, verdict, notebook, claim, holm=None) -> list[str]:
    """A claim in full, under its own heading; `holm`, the verdict under Holm's correction within
    its set of runs where that differs."""
    fields = [("source", source), ("source's value", value), ("ours", ours), ("test", test)]
    fields += [("verdict", verdict)]
    if holm:
        fields += [("under Holm within its set of runs", f"{holm} ([below](#{MULTIPLICITY}))")]
    if claim.kind == IDENTITY:
        fields += [("kind", "an identity or implementation check: it can fail only through a bug")]
    elif claim.origin == OURS:
        fields += [
            ("kind", "our own question about a source, counted apart from the sources' claims")
        ]
    fields += [("notebook", _notebook_link(notebook, notebook))]
    return ["", f"### {heading}", ""] + [f"- **{name}:** {text}" for name, text in fields if text]


def markdown() -> str:
    """The text of CLAIMS.md: the verdict counts, one short row per claim, then each claim in full."""
    table = rows()
    verdicts = [row[COLUMNS.index("verdict")].removesuffix(" (borderline)") for row in table]
    borderline = sum(row[COLUMNS.index("verdict")].endswith("(borderline)") for row in table)
    language = SyntheticLanguage()
    levels, floor = language.levels(), language.entropy_floor(SEQUENCE_LENGTH)
    groups = {"source": [], "ours": [], "identity": []}
    for row, verdict in zip(table, verdicts, strict=True):
        claim = BY_ID[row[0]]
        group = "identity" if claim.kind == IDENTITY else claim.origin
        groups[group].append(verdict)

    def counted(found):
        return ", ".join(f"{found.count(v)} {v}" for v in VERDICTS if found.count(v))

    lines = [
        "# Claims ledger",
        "",
        *FOUND,
        "",
        f"**The sources' claims: {len(groups['source'])}.** {counted(groups['source'])}.",
        "",
        f"**Our own questions: {len(groups['ours'])}** (about a source, which does not make them). "
        f"{counted(groups['ours'])}.",
        "",
        f"**Identities and implementation checks: {len(groups['identity'])}** (an equation, an "
        "invariance, code against its formula: they can fail only through a bug). "
        f"{counted(groups['identity'])}.",
        "",
        f"{borderline} of the {len(table)} verdicts are borderline.",
        "",
        "Each ID in the table below leads to the claim in full: the source by paper and section (or",
        "`ours`, a question the companion asks of a source), the source's value, ours, and the test",
        "behind the verdict: its n, its statistic and its margin. The words the verdicts use come first.",
        "",
        "## The words",
        "",
        "- **reproduced**, **partly**, **not reproduced**: the test's decisions held, some held, or",
        "  the evidence went against the claim. **inconclusive**: the test decided neither way.",
        "  **not checkable at CPU scale**: the claim needs what a CPU cannot run. A claim no notebook",
        "  checks yet says `pending`. **inconclusive (not exercised)**: the claim's premise or",
        "  mechanism does not arise in the miniature, checked by a decision of its own: its numbers",
        "  say nothing for or against the source.",
        "- **paired interval**: both arms run on the same seeds; the mean of the per-seed differences",
        "  with its 95% Student-t interval, written -0.050 [-0.063, -0.037] (n = 10) for n seeds. A",
        "  decision **holds** when the whole interval lies on the claimed side of its boundary,",
        "  **fails** when it lies on the other side.",
        "- **trains**: a language model ends below the synthetic language's bigram level "
        f"({levels.bigram:.2f}",
        f"  nats; uniform {levels.uniform:.2f}, unigram {levels.unigram:.2f}, floor {floor:.2f}); "
        "a digit classifier's",
        f"  test accuracy is above chance ({DIGITS_CHANCE:.0%}). **fails**: diverged, or did not "
        "train.",
        f"- **negligible**: a held-out loss difference within +-{NEGLIGIBLE_NATS:g} nats, about "
        f"{NEGLIGIBLE_NATS / (levels.uniform - floor):.0%} of what a model",
        f"  can learn: the {levels.uniform - floor:.2f} nats between the synthetic language's "
        f"uniform level and its floor, or ln 10 = {math.log(10):.2f} on the digits. "
        "**better** means better beyond it;",
        "  **no worse**, that the interval's worse end stays inside it.",
        "- **(borderline)**: the verdict rests on a decision whose interval edge lies within",
        "  machine-to-machine noise of its boundary (the robustness band of `lnpaper.stats`), where",
        "  the other side would change the verdict; its section gives both sides' numbers.",
        "- **too few seeds for a rerun to confirm**: the reproduction check lets a rerun's mean lie",
        "  3 standard errors of the two runs' difference from the recorded one; where that is wider",
        "  than the effect (its size, or the boundary it is decided against), a passing check cannot",
        "  tell the effect from none, and more seeds would be needed to confirm it.",
        "- **Holm's correction**: where several decisions test one set of runs, some would come out",
        "  significant by chance more often than 5%; Holm's step-down procedure keeps the chance of",
        "  any false decision in the set at 5%. The verdicts do not use it; the last section shows",
        f"  which it would change ([below](#{MULTIPLICITY})).",
        "",
        "This file is written by `python -m lnpaper figures` (`make figures`) from the claim records",
        "in `src/lnpaper/chapters/` and the experiment record in `results/`; `make test` fails if it",
        "differs from a fresh run.",
        "",
        "## The claims",
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
                             BY_ID[claim_id], under_holm.get(claim_id))  # fmt: skip
    changed = len(under_holm)
    at = next(i for i, line in enumerate(lines) if line.startswith("**Identities and "))
    lines[at + 1 : at + 1] = [
        "",
        f"Under Holm's correction (defined under the words) within each set of runs, {changed} "
        f"verdicts would change ([below](#{MULTIPLICITY})).",
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
            text = f"{decision.evidence or decision.test}: {decision.outcome}"
            lines.append(_fill(text, initial_indent="    ", subsequent_indent="    "))
    lines.append(f"verdict: {verdict_text(finding)}")
    return "\n".join(lines)


def checked_here(ids) -> str:
    """The "Claims checked here" list at the end of a notebook: each claim's ID, verdict and
    statement, derived from the ledger, as plain text nbval can compare, every line at most
    LINE_WIDTH characters. The source, our numbers and the test behind each verdict are in
    CLAIMS.md, under the same ID: the notebook does not print them twice."""
    lines = [_fill(f"{claim_id}  [{verdict}]  {claim}", subsequent_indent="    ")
             for claim_id, claim, *_, verdict, _ in rows(ids)]  # fmt: skip
    lines += ["", "Sources, numbers and tests: CLAIMS.md, under each ID."]
    return "\n".join(lines)
