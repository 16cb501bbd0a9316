"""The chapters: one package per notebook, in the book's order.

A chapter holds its experiments (`runs*.py`), the claims it checks (`claims*.py`) and its figures
(`figures*.py`). Chapter N imports only chapters before it (`tests/test_layout.py`), and below every
chapter sit the machinery that makes it checkable (`lnpaper.companion`) and the library (norms,
models, data, train, stats).

Importing a chapter's modules fills the registries of `lnpaper.companion.registry`; `load` imports
every chapter's modules of one kind, in notebook order, so the registries list things in the order a
reader meets them.
"""

import importlib

CHAPTERS = (
    "ch01_why_batchnorm_fails",
    "ch02_transpose",
    "ch03_layernorm_in_rnns",
    "ch04_invariances",
    "ch05_transformer",
    "ch06_rmsnorm_placement",
    "ch07_after_2020",
)

# The modules of each kind a chapter has, where it has more than one. Notebook 07's claims are listed
# in the order its sections run: depth first, then attention logits and placements, then the mean.
_SPLIT = {"ch07_after_2020": ("{kind}_depth", "{kind}", "{kind}_mean")}
KINDS = ("runs", "claims", "figures")


def modules(kind: str) -> list[str]:
    """The dotted names of every chapter's modules of `kind` ('runs', 'claims' or 'figures')."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return [
        f"{__name__}.{chapter}.{name.format(kind=kind)}"
        for chapter in CHAPTERS
        for name in _SPLIT.get(chapter, ("{kind}",))
    ]


def load(kind: str) -> None:
    """Import every chapter's modules of `kind`, in notebook order (each registers itself)."""
    for name in modules(kind):
        importlib.import_module(name)


def in_book_order(registry: dict, module_of) -> None:
    """Reorder `registry` in place by the chapter module its items come from (`module_of(item)`), so
    a process that imported a later chapter first still lists them in the order a reader meets them.
    Items from outside the chapters (a test's own experiment) come last, in their order."""
    names = modules("runs") + modules("claims") + modules("figures")
    order = {name: i for i, name in enumerate(names)}
    items = sorted(registry.items(), key=lambda item: order.get(module_of(item[1]), len(names)))
    registry.clear()
    registry.update(items)
