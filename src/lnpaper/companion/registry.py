"""The three registries a chapter fills as it is imported: its experiments (`@experiment`), its
claims (`register_claims(...)`) and its figures (`@figure`).

`lnpaper.chapters` imports every chapter in notebook order, so these dicts list everything in the
order a reader meets it; `lnpaper.experiments`, `lnpaper.claims` and `lnpaper.figures` show them by
name.
"""

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib

from lnpaper.companion import record
from lnpaper.companion.style import RC_PARAMS

# ---- experiments: a name, and every call through the record --------------------------------------

EXPERIMENTS: dict[str, typing.Callable] = {}


def experiment(fn):
    """Register `fn` under its name; every call goes through `lnpaper.companion.record.call`.

    Experiments take keyword arguments only and return a dataclass of plain numbers.
    """
    result_type = typing.get_type_hints(fn)["return"]
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def run(**kwargs):
        bound = signature.bind(**kwargs)
        bound.apply_defaults()
        return record.call(fn.__name__, fn, result_type, dict(bound.arguments))

    run.result_type = result_type
    if fn.__name__ in EXPERIMENTS:
        raise ValueError(f"experiment {fn.__name__!r} is registered twice")
    EXPERIMENTS[fn.__name__] = run
    return run


def result_types() -> dict[str, type]:
    """Each registered experiment's result type, by name: what `record.entries` checks an entry's
    result against."""
    return {name: run.result_type for name, run in EXPERIMENTS.items()}


# ---- claims: the ledger's rows, in the order the chapters are imported ---------------------------

CLAIMS: dict[str, typing.Any] = {}  # id -> lnpaper.companion.verdicts.Claim


def register_claims(*items) -> list:
    """Register a chapter's claims under their IDs; an ID used twice is an error. Returns the list,
    so a chapter keeps `CLAIMS = register_claims(Claim(...), ...)` for its own tests."""
    for item in items:
        if item.id in CLAIMS:
            raise ValueError(f"claim {item.id!r} is registered twice")
        CLAIMS[item.id] = item
    return list(items)


# ---- figures: one function per figure, result -> matplotlib Figure -------------------------------
# A figure function is drawn inside the house plot style, so the notebook that shows it and
# `python -m lnpaper figures` that writes it produce the same picture. Figures are built on
# `matplotlib.figure.Figure`, not pyplot, so writing fifty of them keeps no global state.


@dataclass(frozen=True)
class FigureSpec:
    name: str
    draw: Callable  # (result) -> Figure, or () -> Figure when there is no experiment
    experiment: Callable | None  # the experiment whose result it draws
    notebook: str  # where a reader meets it

    def render(self):
        return self.draw() if self.experiment is None else self.draw(self.experiment())


FIGURES: dict[str, FigureSpec] = {}


def figure(name: str, *, notebook: str, experiment: Callable | None = None):
    """Register a figure function under `name` (its file is figures/<name>.png)."""

    def register(draw):
        @functools.wraps(draw)
        def styled(*args, **kwargs):
            with matplotlib.rc_context(RC_PARAMS):
                return draw(*args, **kwargs)

        if name in FIGURES:
            raise ValueError(f"figure {name!r} is registered twice")
        FIGURES[name] = FigureSpec(name, styled, experiment, notebook)
        return styled

    return register
