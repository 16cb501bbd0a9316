"""A chapter as an object: the values its notebook, the ledger, `figures` and `reproduce` read.

Each chapter package declares one `CHAPTER = Chapter(...)` in its `__init__.py`, listing its recorded
experiments (made by `lnpaper.companion.record.experiment`), its claims, its figures and its slider
demos as values; `lnpaper.book.BOOK` holds the ten in notebook order. Nothing here fills a global
table: `figure` only draws inside the house style and names the figure.

A notebook enters through its own chapter: `CHAPTER.grade("R3")` grades a claim on the record, or
`CHAPTER.grade("R3", study)` on the study the notebook already holds, and `CHAPTER.checked_here()`
prints the table its last cell shows.
"""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib

from lnpaper.companion.style import RC_PARAMS
from lnpaper.companion.verdicts import Claim, Finding, checked_here

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
        styled = matplotlib.rc_context(RC_PARAMS)(draw)  # each call inside a fresh rc_context
        styled.figure_name = name
        styled.experiment = experiment
        return styled

    return styled_figure


# ---- the chapter ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chapter:
    """One notebook's chapter as values: what it records, claims, draws and lets a reader play
    with. It checks itself when made: no claim names another notebook (each is given this one),
    no ID twice, every experiment and figure made by its decorator."""

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
            if claim.notebook not in ("", self.notebook):
                raise ValueError(
                    f"{claim.id} names notebook {claim.notebook!r}, not {self.notebook!r}"
                )
        # a claim is checked in its chapter's notebook: the chapter says which, once
        stamped = tuple(dataclasses.replace(claim, notebook=self.notebook) for claim in self.claims)
        object.__setattr__(self, "claims", stamped)
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
