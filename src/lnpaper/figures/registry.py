"""The figure registry: one function per figure, result -> matplotlib Figure.

A figure function is drawn inside the house plot style, so the notebook that shows it and
`python -m lnpaper figures` that writes it produce the same picture. Figures are built on
`matplotlib.figure.Figure`, not pyplot, so writing fifty of them keeps no global state.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

from lnpaper.figures.style import RC_PARAMS


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


def save_png(fig, path: Path) -> None:
    """PNG with no software or time stamp in its metadata, so a rerun writes the same bytes."""
    fig.savefig(path, format="png", dpi=RC_PARAMS["savefig.dpi"], metadata={"Software": None})
