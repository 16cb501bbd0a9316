"""The book: the ten chapters in notebook order (`BOOK`), and what the ledger, `figures`,
`reproduce` and the gallery read from them.

Each chapter declares itself as a value, `CHAPTER` in its package (`lnpaper.companion.chapter`);
this module only lists them. Importing it imports every chapter; a notebook imports only its own.
"""

from lnpaper.chapters import (
    ch01_why_batchnorm_fails,
    ch02_transpose,
    ch03_layernorm_in_rnns,
    ch04_batchnorm_against_layernorm,
    ch05_invariances,
    ch06_transformer,
    ch07_rmsnorm_placement,
    ch08_deep_stacks,
    ch09_logits_and_placement,
    ch10_what_the_norm_computes,
)
from lnpaper.companion.chapter import FigureSpec

BOOK = tuple(
    package.CHAPTER
    for package in (
        ch01_why_batchnorm_fails,
        ch02_transpose,
        ch03_layernorm_in_rnns,
        ch04_batchnorm_against_layernorm,
        ch05_invariances,
        ch06_transformer,
        ch07_rmsnorm_placement,
        ch08_deep_stacks,
        ch09_logits_and_placement,
        ch10_what_the_norm_computes,
    )
)


def _unique(kind: str, pairs) -> dict:
    found = {}
    for name, item in pairs:
        if name in found:
            raise ValueError(f"two chapters list the {kind} {name!r}")
        found[name] = item
    return found


def experiments() -> dict:
    """Every recorded experiment by name, in book order."""
    return _unique("experiment", ((run.__name__, run) for ch in BOOK for run in ch.experiments))


def figures() -> dict[str, FigureSpec]:
    """Every figure by name (its file is figures/<name>.png), in book order."""
    return _unique("figure", ((spec.name, spec) for ch in BOOK for spec in ch.figure_specs()))


def claims() -> list:
    """Every claim, in book order."""
    return list(
        _unique("claim", ((claim.id, claim) for ch in BOOK for claim in ch.claims)).values()
    )


def result_types() -> dict[str, type]:
    """Each experiment's result type, by name: what the record checks an entry's result against."""
    return {name: run.result_type for name, run in experiments().items()}
