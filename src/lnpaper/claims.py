"""The claims ledger: one record per claim the companion checks, the verdicts, and the writer of
CLAIMS.md.

Claim IDs follow the project's paper-facts sheet, which holds the sources' exact equations and
numbers: M1-M5, F1-F4, R1-R5, I1-I5, T1-T7, P1-P5, A2, D1, X1, L1 (notebook 08), Q1, O1, G1 (09), E1,
E2, Y1. A letter after the number (R3b, M5b, E1b) splits off a part of the same item that gets its
own verdict. Each claim is defined in its chapter's `claims` module (`lnpaper.chapters`); the
verdict words and `Claim` are in `lnpaper.companion.verdicts`, the ledger in
`lnpaper.ledger`.
"""

from lnpaper.companion.verdicts import (
    INCONCLUSIVE,
    NOT_CHECKABLE,
    NOT_EXERCISED,
    NOT_REPRODUCED,
    PARTLY,
    PENDING,
    REPRODUCED,
    VERDICTS,
    Claim,
    Finding,
    Quantity,
    expect,
)
from lnpaper.ledger import BY_ID, CLAIMS, checked_here, evidence, markdown, rows, wrap

__all__ = [
    "BY_ID",
    "CLAIMS",
    "INCONCLUSIVE",
    "NOT_CHECKABLE",
    "NOT_EXERCISED",
    "NOT_REPRODUCED",
    "PARTLY",
    "PENDING",
    "REPRODUCED",
    "VERDICTS",
    "Claim",
    "Finding",
    "Quantity",
    "checked_here",
    "evidence",
    "markdown",
    "rows",
    "expect",
    "wrap",
]
