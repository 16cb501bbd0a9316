"""The README's gallery: a lead figure, then a few of the papers' results in notebook order, each
image a figure of the book followed by its finding and a link to the notebook that draws it."""

import re
from pathlib import Path

from lnpaper import book

FIGURES = book.figures()

ROOT = Path(__file__).resolve().parents[1]
IMAGE = re.compile(r"!\[[^\]]+\]\(figures/([a-z0-9_]+)\.png\)")
NOTEBOOK_LINK = re.compile(r"\]\(notebooks/([0-9]{2}_[a-z0-9_]+)\.ipynb\)")


def gallery() -> list[tuple[str, str]]:
    """(figure name, the text after its image up to the next image), in order."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Gallery\n")[1].split("\n## ")[0]
    pieces = IMAGE.split(section)  # text, name, text, name, text...
    return list(zip(pieces[1::2], pieces[2::2], strict=True))


def test_every_gallery_image_is_a_registered_figure_on_disk():
    for name, _ in gallery():
        assert name in FIGURES, f"the README shows {name}.png, which no figure function draws"
        assert (ROOT / "figures" / f"{name}.png").exists()


def test_the_gallery_leads_with_the_transpose_then_follows_the_notebooks():
    shown = [name for name, _ in gallery()]
    assert shown[0] == "transpose_table"
    assert 4 <= len(shown) - 1 <= 6, f"{len(shown) - 1} figures after the lead"
    notebooks = [FIGURES[name].notebook for name in shown[1:]]
    assert notebooks == sorted(notebooks), f"not in notebook order: {shown[1:]}"


def test_each_figure_has_a_finding_and_a_link_to_its_notebook():
    for name, text in gallery():
        assert "**" in text, f"{name}: no finding under the figure"
        assert NOTEBOOK_LINK.findall(text) == [FIGURES[name].notebook], (
            f"{name}: the text under it should link its notebook {FIGURES[name].notebook}"
        )


def test_the_readme_and_claims_lead_with_the_same_finding():
    """The README and CLAIMS.md open with what the companion found, in the same words."""
    from lnpaper.ledger import FOUND

    found = " ".join(" ".join(FOUND).split())
    for page, lines in (("README.md", 20), ("CLAIMS.md", 12)):
        top = " ".join(" ".join((ROOT / page).read_text().splitlines()[:lines]).split())
        assert found in top, f"{page} does not open with the ledger's finding"
