"""CLAIMS.md and each notebook's "Claims checked here" table, printed from the claim records, so
the ledger cannot disagree with the notebooks."""

import math
import re

from lnpaper import book, stats
from lnpaper.companion import record
from lnpaper.companion.verdicts import (
    IDENTITY,
    NEGLIGIBLE,
    OURS,
    PARTLY,
    PARTLY_KINDS,
    VERDICTS,
    row,
    verdict_word,
)
from lnpaper.data import SyntheticLanguage
from lnpaper.formatting import table_head, table_row
from lnpaper.vocabulary import DIGITS_CHANCE, NEGLIGIBLE_NATS, SEQUENCE_LENGTH

CLAIMS = book.claims()
BY_ID = {claim.id: claim for claim in CLAIMS}

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
    "Transformers, over runs far shorter than the sources', where the norm goes matters more than",
    "its formula: Pre-LN trains without warmup, RMSNorm matches LayerNorm, and a careful",
    "initialization or DyT can stand in for it.",
)


def graded(ids=None) -> dict[str, tuple]:
    """Each claim (all, or those of `ids`) evaluated once, by ID: its finding and the record
    entries its check read, as (experiment, key) pairs."""
    chosen = CLAIMS if ids is None else [BY_ID[i] for i in ids]
    out = {}
    for claim in chosen:
        with record.reading() as read:
            finding = claim.evaluate()
        out[claim.id] = (finding, frozenset(tuple(call) for call in read))
    return out


def rows(graded: dict) -> list[tuple[str, ...]]:
    """One row of the ledger per claim (`graded`)."""
    return [row(BY_ID[claim_id], finding) for claim_id, (finding, _) in graded.items()]


def multiplicity(graded: dict) -> list[tuple[list[str], int, list[tuple[str, str, str]]]]:
    """Each claim's decisions are 95% tests on their own; claims that read a common record entry,
    or one claim with several parts, test one set of runs several times. Per such family (claims
    joined by any entry their checks read, with two or more decisions among them): the
    experiments and studies its claims name, the number m of decisions, and for each claim (id, verdict,
    verdict under Holm): the verdict once every decision that Holm's step-down procedure
    (family-wise error 5% over the m tests, `lnpaper.stats.holm`) no longer rejects is set to
    inconclusive."""
    graded = {i: found for i, found in graded.items() if BY_ID[i].check is not None}
    root = {}

    def find(item):
        while root.setdefault(item, item) != item:
            item = root[item]
        return item

    for claim_id, (_, read) in graded.items():
        for entry in read:  # a claim and every entry it read are one family
            root[find(entry)] = find(claim_id)
    families = {}
    for claim_id in graded:
        families.setdefault(find(claim_id), []).append(claim_id)
    out = []
    for ids in families.values():
        tests = [
            (i, k, d)
            for i in ids
            for k, d in enumerate(graded[i][0].decisions)
            if k not in graded[i][0].not_graded
        ]
        if len(tests) < 2:  # one claim with several decisions is a family too
            continue
        kept = stats.holm([d.p_value for _, _, d in tests])
        verdicts = []
        for claim_id in ids:
            finding = graded[claim_id][0]
            dropped = {
                k: stats.INCONCLUSIVE
                for (i, k, d), keep in zip(tests, kept, strict=True)
                if i == claim_id and d.p_value is not None and not keep
            }
            dropped = {**finding.ungraded_overrides(), **dropped}
            after = BY_ID[claim_id].verdict_with(dropped) if dropped else finding.verdict
            verdicts.append((claim_id, finding.verdict, after))
        studies = sorted({run.__name__ for i in ids for run in BY_ID[i].experiments})
        out.append((studies, len(tests), verdicts))
    return out


MULTIPLICITY = "several-tests-on-one-set-of-runs"  # the anchor of multiplicity_section's heading


def multiplicity_section(families) -> list[str]:
    changed = [(i, before, after) for _, _, verdicts in families for i, before, after in verdicts
               if before != after]  # fmt: skip
    lines = [
        "## Several tests on one set of runs",
        "",
        "Each decision above is a 95% test on its own, and each claim's verdict rests on its own",
        "decisions: the ledger does not adjust them. Where several claims read one run, or one",
        "claim has several parts, the same runs are tested several times, and some test would",
        "come out significant by chance more often than 5% (with 8 parts at 2.5% a side, about 18%:",
        "`partly` needs only one). So the ledger also applies Holm's step-down procedure within each",
        "such set of runs (claims joined by any recorded run their checks read, a claim alone with",
        "its own parts; family-wise error 5% over the set's m decisions) and shows what it changes: a",
        "decision it no longer rejects counts as inconclusive, and the claim's check is run again.",
        "",
    ]
    if changed:
        moved = ", ".join(f"{i} ({verdict_word(before)} -> {verdict_word(after)})"
                          for i, before, after in changed)  # fmt: skip
        lines.append(f"{len(changed)} verdicts change under it: {moved}.")
    else:
        lines.append("No verdict changes under it.")
    lines += [
        "",
        *table_head(["experiments", "m", "claims (the verdict under Holm where it changes)"]),
    ]
    for experiments, m, verdicts in families:
        # IDs alone, so a large family's cell stays short: each verdict is in the claims' table
        claims = ", ".join(
            i + ("" if after == before else f" -> **{after}**") for i, before, after in verdicts
        )
        lines.append(table_row([", ".join(experiments), m, claims]))
    return lines


def anchor(heading: str) -> str:
    """The anchor of a heading as both GitHub and MyST (myst_heading_anchors) make it: lower case,
    punctuation other than hyphens dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _notebook_link(notebook: str, text: str) -> str:
    # Relative to the repository root, where CLAIMS.md is; book/claims.md, which includes it, has
    # the notebooks beside it too (book/notebooks links to ../notebooks).
    return f"[{text}](notebooks/{notebook}.ipynb)"


def _section(heading, source, value, ours, test, verdict, notebook, claim, holm=None) -> list[str]:
    """A claim in full, under its own heading; `holm`, the verdict under Holm's correction within
    its set of runs where that differs."""
    kind = ""
    if claim.kind == IDENTITY:
        kind = "an identity or implementation check: it can fail only through a bug"
    elif claim.origin == OURS:
        kind = "our own question about a source, counted apart from the sources' claims"
    elif claim.budget:
        kind = f"graded at this budget ({claim.budget}), counted among our own questions"
    fields = [("source", source), ("source's value", value), ("regime", claim.regime)]
    fields += [("ours", ours), ("test", test), ("set after the data", claim.after_data)]
    fields += [("verdict", verdict)]
    if holm:
        fields += [("under Holm within its set of runs", f"{holm} ([below](#{MULTIPLICITY}))")]
    fields += [("kind", kind), ("notebook", _notebook_link(notebook, notebook))]
    return ["", f"### {heading}", ""] + [f"- **{name}:** {text}" for name, text in fields if text]


def markdown() -> str:
    """The text of CLAIMS.md: the verdict counts, one short row per claim, then each claim in full.
    Each claim is evaluated once."""
    found = graded()
    table = rows(found)
    findings = [finding for finding, _ in found.values()]
    borderline = sum(bool(finding.borderline) for finding in findings)
    kinds = [finding.partly_kind for finding in findings if finding.verdict == PARTLY]
    language = SyntheticLanguage()
    levels, floor = language.levels(), language.entropy_floor(SEQUENCE_LENGTH)
    groups = {"source": [], "ours": [], "identity": []}
    budget = sum(bool(BY_ID[claim_id].budget) for claim_id in found)
    for claim_id, (finding, _) in found.items():
        claim = BY_ID[claim_id]
        group = "identity" if claim.kind == IDENTITY else OURS if claim.budget else claim.origin
        groups[group].append(finding.verdict)

    def counted(found):
        return ", ".join(f"{found.count(v)} {v}" for v in VERDICTS if found.count(v))

    lines = [
        "# Claims ledger",
        "",
        *FOUND,
        "",
        f"**The sources' claims: {len(groups['source'])}.** {counted(groups['source'])}.",
        "",
        f"**Our own questions: {len(groups['ours'])}** (about a source, which does not make them; "
        f"{budget} of them a source's claim graded at this budget). {counted(groups['ours'])}.",
        "",
        f"**Identities and implementation checks: {len(groups['identity'])}** (an equation, an "
        "invariance, code against its formula: they can fail only through a bug). "
        f"{counted(groups['identity'])}.",
        "",
        f"The {len(kinds)} partly verdicts by kind: "
        + ", ".join(f"{kinds.count(kind)} {kind}" for kind in PARTLY_KINDS)
        + ".",
        "",
        f"{borderline} of the {len(table)} verdicts are borderline. "
        f"{sum(bool(BY_ID[i].after_data) for i in found)} tests have a rule set after the data.",
        "",
        "Each ID in the table below leads to the claim in full: the source by paper and section (or",
        "`ours`, a question the companion asks of a source), the source's value, ours, and the test",
        "behind the verdict: its n, its statistic and its margin. The words the verdicts use come first.",
        "",
        "## The words",
        "",
        "- **reproduced**, **partly**, **not reproduced**: the test's decisions held, some held, or",
        "  the evidence went against the claim. **inconclusive**: the test decided neither way.",
        "- **partly** always names its kind. **(mechanism only)**: the mechanism the claim names is",
        "  shown, but the effect it is said to cause is not attributed to it. **(some parts)**: some",
        "  of the claim's parts held and others did not. **(no better)**: no worse, but the gain the",
        "  claim names lies within the negligible margin (defined below), while its other parts held.",
        f"- **{NEGLIGIBLE}**: the claim names one effect, and the test puts it within the",
        "  negligible margin: there, if at all, too small to count for a claim that it matters.",
        "  **not checkable at CPU scale**: the claim needs what a CPU cannot run. A claim no notebook",
        "  checks yet says `pending`. **inconclusive (not exercised)**: the claim's premise or",
        "  mechanism does not arise in the miniature, checked by a decision of its own: its numbers",
        "  say nothing for or against the source.",
        "- **(at this budget)**: a claim about training (fails to train, trains stably, converges",
        "  faster, ends better) graded where the miniature cannot match what the source's mechanism",
        "  needs: warmup where the source used it, a run long enough for the arm the source calls",
        "  trainable, the quantity the source plotted. The verdict holds for these runs only, and",
        "  the claim counts among our own questions; its section says what is not matched.",
        "- **set after the data**: a rule of the test (a window, a margin, a gate, a pick) fixed",
        "  after the runs it grades had been seen. The claim's section says which, and whether runs",
        "  on fresh seeds, declared before they ran, confirm it; its notebook marks the claim.",
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
        "- **shown, not graded (too few seeds for a rerun to confirm)**: the reproduction check",
        "  lets a rerun's mean lie 3 standard errors of the two runs' difference from the recorded",
        "  one; where that is wider than the effect (its size, or the boundary it is decided",
        "  against), a passing check cannot tell the effect from none. Such a decision is shown",
        "  with its interval and marked **not graded**; the verdict counts it as inconclusive, and",
        "  more seeds would be needed to grade it.",
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
        *table_head(TABLE_COLUMNS),
    ]
    families = multiplicity(found)
    under_holm = {i: after for _, _, verdicts in families for i, before, after in verdicts
                  if before != after}  # fmt: skip
    sections = []
    for claim_id, claim, source, value, ours, test, verdict, notebook in table:
        heading = f"{claim_id} {claim}"
        number = notebook.split("_")[0]
        link = f"[{claim_id}](#{anchor(heading)})"
        lines.append(table_row([link, claim, verdict, _notebook_link(notebook, number)]))
        sections += _section(heading, source, value, ours, test, verdict, notebook,
                             BY_ID[claim_id], under_holm.get(claim_id))  # fmt: skip
    changed = len(under_holm)
    at = next(i for i, line in enumerate(lines) if line.startswith("**Identities and "))
    lines[at + 1 : at + 1] = [
        "",
        f"Under Holm's correction (defined under the words) within each set of runs, {changed} "
        f"verdict{'s' * (changed != 1)} would change ([below](#{MULTIPLICITY})).",
    ]
    lines += ["", "## Each claim in full", *sections, "", *multiplicity_section(families)]
    return "\n".join(lines) + "\n"
