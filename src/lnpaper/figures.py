"""Every figure by name: `figures.batch_size(result)` draws it, `FIGURES` lists them for
`python -m lnpaper figures`.

Each is defined in its chapter's `figures` module; this module lists the registry
`lnpaper.companion.registry.FIGURES`, by the names of the functions that draw them.
"""

from lnpaper import chapters
from lnpaper.companion.png import save_png
from lnpaper.companion.registry import FIGURES, FigureSpec, figure

chapters.load("figures")
chapters.in_book_order(FIGURES, lambda spec: spec.draw.__module__)
DRAW = {spec.draw.__name__: spec.draw for spec in FIGURES.values()}
globals().update(DRAW)

__all__ = ["FIGURES", "FigureSpec", "figure", "save_png", *DRAW]
