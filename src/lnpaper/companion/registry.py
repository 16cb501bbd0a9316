"""The three registries a chapter fills as it is imported: its experiments (`@experiment`), its
claims (`register_claims(...)`) and its figures (`@figure`).

`lnpaper.chapters` imports every chapter in notebook order, so these dicts list everything in the
order a reader meets it; `lnpaper.experiments`, `lnpaper.claims` and `lnpaper.figures` show them by
name.
"""

import functools
import inspect
import numbers
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
        check_arguments(fn.__name__, signature, kwargs)
        bound = signature.bind(**kwargs)
        bound.apply_defaults()
        return record.call(fn.__name__, fn, result_type, dict(bound.arguments))

    run.result_type = result_type
    if fn.__name__ in EXPERIMENTS:
        raise ValueError(f"experiment {fn.__name__!r} is registered twice")
    EXPERIMENTS[fn.__name__] = run
    return run


def check_arguments(name: str, signature: inspect.Signature, kwargs: dict) -> None:
    """Refuse, before anything runs, a keyword the experiment does not take, a value of another
    kind than its default (a word where a number goes, a fraction where a count goes) or a negative
    count, naming the reader's parameter and value."""
    for key, value in kwargs.items():
        if key not in signature.parameters:
            takes = ", ".join(signature.parameters)
            raise TypeError(f"{name}() has no parameter {key!r}; it takes: {takes}")
        problem = _kind_problem(value, signature.parameters[key].default)
        if problem:
            raise TypeError(f"{name}({key}={value!r}): {problem}")


def _kind_problem(value, default) -> str:
    """Why `value` cannot stand where `default` stands, or '' if it can."""
    if default is inspect.Parameter.empty or default is None:
        return ""
    if isinstance(default, bool):
        ok = isinstance(value, bool)
        return "" if ok else f"expected True or False, like the default {default!r}"
    if isinstance(default, numbers.Integral):
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        if ok and default > 0 and value < 0:  # a count (steps, units, a batch): never negative
            return f"a count cannot be negative (the default is {default!r})"
        return "" if ok else f"expected a whole number, like the default {default!r}"
    if isinstance(default, numbers.Real):
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        return "" if ok else f"expected a number, like the default {default!r}"
    if isinstance(default, str):
        return "" if isinstance(value, str) else f"expected a name, like the default {default!r}"
    if isinstance(default, tuple | list):
        ok = isinstance(value, typing.Iterable) and not isinstance(value, str | bytes | dict)
        return "" if ok else f"expected a sequence, like the default {default!r}"
    return ""


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
