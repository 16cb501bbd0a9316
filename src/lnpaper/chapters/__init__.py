"""The chapters: one package per notebook, in the book's order.

A chapter lists its modules in a manifest (`PARTS` in its `__init__.py`): its recorded experiments
(`runs`), the studies computed from them (`analysis`), the claims it checks (`claims`), its figures
(`figures`), its notebook's sliders (`demos`), and any code only it teaches (`library`). Chapter N
imports only chapters before it (`tests/test_layout.py`), and below every chapter sit the machinery
that makes it checkable (`lnpaper.companion`) and the library (norms, models, data, train, stats).

Importing a chapter's modules fills the registries of `lnpaper.companion.registry`; `load` imports
every chapter's modules of one kind, in notebook order, so the registries list things in the order a
reader meets them.
"""

import importlib

CHAPTERS = (
    "ch01_why_batchnorm_fails",
    "ch02_transpose",
    "ch03_layernorm_in_rnns",
    "ch04_batchnorm_against_layernorm",
    "ch05_invariances",
    "ch06_transformer",
    "ch07_rmsnorm_placement",
    "ch08_deep_stacks",
    "ch09_logits_and_placement",
    "ch10_what_the_norm_computes",
)

KINDS = ("library", "runs", "analysis", "claims", "figures", "demos")


def parts(chapter: str) -> dict[str, tuple[str, ...]]:
    """A chapter's manifest: the names of its modules of each kind, in the order data flows
    (`PARTS` in its `__init__.py`)."""
    return importlib.import_module(f"{__name__}.{chapter}").PARTS


def modules(kind: str) -> list[str]:
    """The dotted names of every chapter's modules of `kind` (one of KINDS), in book order."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return [f"{__name__}.{chapter}.{name}" for chapter in CHAPTERS for name in parts(chapter)[kind]]


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
