"""CLAIMS.md and each notebook's "Claims checked here" table, printed from the claim records, so
the ledger cannot disagree with the notebooks."""

from lnpaper.claims import (
    invariances,
    layernorm_in_rnns,
    rmsnorm_placement,
    transformer,
    transpose,
    why_batchnorm_fails,
)
from lnpaper.claims.core import VERDICTS

CLAIMS = [
    *why_batchnorm_fails.CLAIMS,
    *transpose.CLAIMS,
    *layernorm_in_rnns.CLAIMS,
    *invariances.CLAIMS,
    *transformer.CLAIMS,
    *rmsnorm_placement.CLAIMS,
]
BY_ID = {claim.id: claim for claim in CLAIMS}

COLUMNS = ("ID", "claim", "source", "paper's value", "ours", "test", "verdict", "notebook")
VERDICT_COLUMN = COLUMNS.index("verdict")


def rows(ids=None) -> list[tuple[str, ...]]:
    """One row of the ledger per claim, evaluated now (experiments come from the record)."""
    chosen = CLAIMS if ids is None else [BY_ID[i] for i in ids]
    out = []
    for claim in chosen:
        finding = claim.evaluate()
        out.append(
            (
                claim.id,
                claim.claim,
                claim.source,
                claim.paper_value,
                finding.ours,
                claim.test,
                finding.verdict,
                claim.notebook,
            )
        )
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """The text of CLAIMS.md."""
    table = rows()
    counts = {v: sum(row[VERDICT_COLUMN] == v for row in table) for v in VERDICTS}
    summary = ", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count)
    lines = [
        "# Claims ledger",
        "",
        "Written by `python -m lnpaper figures` (`make figures`) from the claim records in",
        "`src/lnpaper/claims/` and the experiment record in `results/`; `make test` fails if this file",
        "differs from a fresh run. Each row gives the source by paper and section, the source's value,",
        "ours, the test behind the verdict (with its n and, for a claim of equal quality, the margin",
        "declared before the data were seen) and the verdict: `reproduced`, `partly`, `inconclusive`",
        "(the test decided neither way), `not reproduced` or `not checkable at CPU scale`. A claim",
        "that no notebook checks yet says `pending`.",
        "",
        f"{len(table)} claims: {summary}.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in table:
        lines.append("| " + " | ".join(_cell(text) for text in row) + " |")
    return "\n".join(lines) + "\n"


def checked_here(ids) -> str:
    """The "Claims checked here" table at the end of a notebook, as plain text nbval can compare."""
    blocks = []
    for claim_id, claim, source, paper, ours, test, verdict, _ in rows(ids):
        blocks.append(
            f"{claim_id}  [{verdict}]  {claim}\n"
            f"    source: {source}\n    paper:  {paper}\n    ours:   {ours}"
            + (f"\n    test:   {test}" if test else "")
        )
    return "\n\n".join(blocks)
