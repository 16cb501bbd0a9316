"""A chapter as an object: the values its notebook, the ledger, `figures` and `reproduce` read.

Each chapter package declares one `CHAPTER = Chapter(...)` in its `__init__.py`, listing its recorded
experiments, its claims, its figures and its slider demos as values; `lnpaper.book.BOOK` holds the
ten in notebook order. Nothing here fills a global table: `experiment` only routes a call through
the record, and `figure` only draws inside the house style and names the figure.

A notebook enters through its own chapter: `CHAPTER.grade("R3")` grades a claim on the record, or
`CHAPTER.grade("R3", study)` on the study the notebook already holds, and `CHAPTER.checked_here()`
prints the table its last cell shows.
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
from lnpaper.companion.verdicts import Claim, Finding, checked_here

# ---- experiments: every call through the record --------------------------------------------------


def experiment(fn):
    """`fn` with every call going through `lnpaper.companion.record.call`, under `fn`'s name: its
    arguments, defaults bound, are the entry's key.

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


def figure(name: str, *, experiment: Callable | None = None):
    """A figure function drawn inside the house plot style, named `name` (its file is
    figures/<name>.png) and drawing `experiment`'s result (or nothing, for a figure with no
    experiment). Its chapter's `CHAPTER.figures` lists it."""

    def styled_figure(draw):
        @functools.wraps(draw)
        def styled(*args, **kwargs):
            with matplotlib.rc_context(RC_PARAMS):
                return draw(*args, **kwargs)

        styled.figure_name = name
        styled.experiment = experiment
        return styled

    return styled_figure


# ---- the chapter ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chapter:
    notebook: str  # its stem under notebooks/, "03_layernorm_in_rnns"
    experiments: tuple[Callable, ...]  # recorded, made by `experiment`
    claims: tuple[Claim, ...]
    figures: tuple[Callable, ...]  # made by `figure`
    demos: tuple[Callable, ...] = ()  # slider demos, update(**params) -> Figure

    def __post_init__(self):
        ids = [claim.id for claim in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{self.notebook}: a claim ID is listed twice in {ids}")
        for claim in self.claims:
            if claim.notebook != self.notebook:
                raise ValueError(
                    f"{claim.id} names notebook {claim.notebook!r}, not {self.notebook!r}"
                )
        for run in self.experiments:
            if not hasattr(run, "result_type"):
                raise TypeError(f"{self.notebook}: {run.__name__} is not made by `experiment`")
        for draw in self.figures:
            if not hasattr(draw, "figure_name"):
                raise TypeError(f"{self.notebook}: {draw.__name__} is not made by `figure`")

    def figure_specs(self) -> tuple[FigureSpec, ...]:
        return tuple(
            FigureSpec(draw.figure_name, draw, draw.experiment, self.notebook)
            for draw in self.figures
        )

    def claim(self, claim_id: str) -> Claim:
        for claim in self.claims:
            if claim.id == claim_id:
                return claim
        ids = ", ".join(claim.id for claim in self.claims)
        raise KeyError(
            f"{claim_id!r} is not a claim of notebook {self.notebook}; its claims: {ids}"
        )

    def grade(self, claim_id: str, *results) -> Finding:
        """The claim's finding: on the results given (the study a notebook holds, in the order of
        the claim's `experiments`), else on the record."""
        return self.claim(claim_id).evaluate(*results)

    def checked_here(self, ids=None) -> str:
        """The "Claims checked here" list a notebook ends with: its claims, or those of `ids`."""
        chosen = self.claims if ids is None else [self.claim(i) for i in ids]
        return checked_here([(claim, claim.evaluate()) for claim in chosen])
