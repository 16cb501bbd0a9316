"""The registry of every figure, in book order, for `python -m lnpaper figures`: `FIGURES[name]`.

A notebook draws a figure with its chapter's `figures` module,
`lnpaper.chapters.ch01_why_batchnorm_fails.figures.batch_size(result)`. Importing this module
imports every chapter's figures, which register themselves (`lnpaper.companion.registry.figure`).
"""

from lnpaper import chapters
from lnpaper.companion.png import save_png
from lnpaper.companion.registry import FIGURES, FigureSpec, figure

chapters.load("figures")
chapters.in_book_order(FIGURES, lambda spec: spec.draw.__module__)

__all__ = ["FIGURES", "FigureSpec", "figure", "save_png"]
