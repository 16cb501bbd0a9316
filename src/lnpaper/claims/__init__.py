"""The claims ledger: one record per claim the companion checks (a module per notebook), the
verdicts, and the writer of CLAIMS.md.

Claim IDs (M1-M5, F1-F4, R1-R5 with R3b and R4b, I1-I4, T1-T7, P1-P5) follow the project's paper-facts
sheet, which holds the sources' exact equations and numbers.
"""

from lnpaper.claims.core import (
    INCONCLUSIVE,
    NOT_CHECKABLE,
    NOT_REPRODUCED,
    PARTLY,
    PENDING,
    REPRODUCED,
    VERDICTS,
    Claim,
    Finding,
    Quantity,
)
from lnpaper.claims.ledger import BY_ID, CLAIMS, checked_here, markdown, rows

__all__ = [
    "BY_ID",
    "CLAIMS",
    "INCONCLUSIVE",
    "NOT_CHECKABLE",
    "NOT_REPRODUCED",
    "PARTLY",
    "PENDING",
    "REPRODUCED",
    "VERDICTS",
    "Claim",
    "Finding",
    "Quantity",
    "checked_here",
    "markdown",
    "rows",
]
