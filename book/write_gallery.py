"""Write the book's gallery page from the book's chapters: every figure, under the notebook that draws it.

Run by `make book` (python book/write_gallery.py OUT.md). The page is generated, not kept in git, so
it cannot fall behind `python -m lnpaper figures`. A caption is the first paragraph of the figure
function's docstring.
"""

import json
import sys
from pathlib import Path

from lnpaper import book

FIGURES = book.figures()

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def notebook_title(notebook: str) -> str:
    """The text of the notebook's first heading, as its page shows it."""
    cells = json.loads((NOTEBOOKS / f"{notebook}.ipynb").read_text())["cells"]
    first_markdown = next(c for c in cells if c["cell_type"] == "markdown")
    return "".join(first_markdown["source"]).splitlines()[0].lstrip("# ").strip()


def caption(doc: str | None) -> str:
    first_paragraph = (doc or "").strip().split("\n\n")[0]
    return " ".join(first_paragraph.split())


def gallery_markdown() -> str:
    by_notebook: dict[str, list] = {}
    for spec in FIGURES.values():
        by_notebook.setdefault(spec.notebook, []).append(spec)
    lines = [
        "# Figure gallery",
        "",
        "Every figure in `figures/`, under the notebook that introduces it. `make figures` draws them",
        "all again from the experiments; the notebooks show the same pictures next to the code.",
    ]
    for notebook in sorted(by_notebook):
        lines += ["", f"## [{notebook_title(notebook)}](../notebooks/{notebook}.ipynb)", ""]
        for spec in by_notebook[notebook]:
            text = caption(spec.draw.__doc__)
            lines += [
                f"![{text}](../figures/{spec.name}.png)",
                "",
                f"**`{spec.name}`**: {text}",
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(gallery_markdown())
