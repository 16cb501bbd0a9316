"""The offline book (`make book`, run by `make test` before pytest), checked the way a reader sees it.

Every page is loaded from disk in headless Chromium with the network switched off and every request
that is not a local file refused and recorded. On each page: no TeX is left untypeset, every image
decodes, every local resource the page asks for exists, every link inside the book points at a
file and an anchor that exist, and the page logs no error. The claims table fits the page's column
at two window widths, and no code block or output of a notebook scrolls
sideways in a laptop's window. Without Chromium these tests are skipped with a message; the book's
table of contents is checked in any case.
"""

import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from lnpaper.figures import FIGURES

pytestmark = pytest.mark.slow  # reads the built book (make book) in a browser

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
HTML = BOOK / "_build" / "html"
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# The flags a root user in a container without a network needs (see the issue that added the book).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# TeX that survived typesetting: a backslash command, $$, or $...$ in the visible text.
RAW_TEX = re.compile(r"\\[A-Za-z]+|\\[()[\]]|\$\$|\$[^$\s][^$]*\$")

# A window wide enough for the book's column to reach its full width, 784 px.
FULL_COLUMN = {"width": 1400, "height": 900}
# Window sizes the tables are measured at: a laptop's, then narrower ones, then one that shows the
# full column (the first is the page's size while it loads).
VIEWPORTS = [
    {"width": 1280, "height": 900},
    {"width": 1024, "height": 768},
    {"width": 390, "height": 844},
    FULL_COLUMN,
]
# The longest text a cell of the claims table may hold; the numbers behind a claim go in its section.
LONGEST_CELL = 200

# Runs in the page once it has loaded: waits for MathJax, then reports what the tests look at.
INSPECT_PAGE = """async () => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  const images = await Promise.all([...document.images].map(async (img) => {
    img.loading = "eager";
    const ok = await img.decode().then(() => img.naturalWidth > 0, () => false);
    return {src: img.currentSrc || img.src, ok: ok};
  }));
  const hidden = new Set(["SCRIPT", "STYLE", "PRE", "CODE", "TEXTAREA", "NOSCRIPT", "MJX-CONTAINER"]);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {acceptNode(node) {
    for (let el = node.parentElement; el; el = el.parentElement) {
      if (hidden.has(el.tagName)) { return NodeFilter.FILTER_REJECT; }
    }
    return NodeFilter.FILTER_ACCEPT;
  }});
  const text = [];
  while (walker.nextNode()) { text.push(walker.currentNode.nodeValue); }
  const math = [...document.querySelectorAll(".math")];
  return {
    text: text.join(" "),
    math: math.length,
    untypeset: math.filter((el) => !el.querySelector("mjx-container")).map((el) => el.textContent),
    images: images,
    links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
    ids: [...document.querySelectorAll("[id]")].map((el) => el.id),
  };
}"""

# Each table in the page's text column: how wide it is (all of it, also what a scrolling wrapper
# hides), how much room the column leaves inside its padding, and its longest cell.
MEASURE_TABLES = """() => [...document.querySelectorAll("article table")].map((table) => {
  const column = table.closest("article");
  const style = getComputedStyle(column);
  const cells = [...table.querySelectorAll("th, td")].map((cell) => cell.textContent.trim());
  return {
    width: table.getBoundingClientRect().width,
    room: column.getBoundingClientRect().width - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight) - parseFloat(style.borderLeftWidth)
      - parseFloat(style.borderRightWidth),
    longest_cell: cells.reduce((a, b) => (b.length > a.length ? b : a), ""),
  };
})"""


# Each code block (a pre, in a cell's input or output) and each cell output that is wider than the
# box that shows it, so that the reader would scroll sideways: its first line and both widths.
MEASURE_SCROLLING = """() => [...document.querySelectorAll("article pre, article .cell_output")]
  .filter((block) => block.scrollWidth > block.clientWidth)
  .map((block) => ({
    kind: block.closest(".cell_output") ? "output" : "code",
    first_line: block.textContent.trim().split("\\n")[0],
    width: block.scrollWidth,
    room: block.clientWidth,
  }))"""


def book_pages() -> list[Path]:
    """Every page a reader can reach, less index.html, which only redirects to intro.html."""
    skip = {"_static", "_sources", "_images"}
    return sorted(
        p
        for p in HTML.rglob("*.html")
        if not skip & set(p.relative_to(HTML).parts[:-1]) and p != HTML / "index.html"
    )


def test_toc_lists_every_notebook_in_order():
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    files = [chapter["file"] for part in toc["parts"] for chapter in part["chapters"]]
    assert [f for f in files if f.startswith("notebooks/")] == [f"notebooks/{n}" for n in NOTEBOOKS]


def test_landing_page_names_every_notebook_in_its_reading_order():
    intro = (BOOK / "intro.md").read_text()
    named = re.findall(r"\{doc\}`notebooks/([^`]+)`", intro.split("## Reading order")[1])
    assert named == NOTEBOOKS


@pytest.fixture(scope="module")
def pages() -> dict:
    """Load every page of the built book in Chromium, offline, and report what each one showed."""
    if shutil.which("chromium") is None:
        pytest.skip(
            "chromium is not installed (Debian: apt-get install chromium): book not checked"
        )
    index = HTML / "index.html"
    if not index.exists():
        pytest.fail("book/_build/html is missing: run `make book` (`make test` runs it first)")
    sources = [*(ROOT / "notebooks").glob("*.ipynb"), ROOT / "CLAIMS.md", *BOOK.glob("*.*")]
    stale = [str(p.relative_to(ROOT)) for p in sources if p.stat().st_mtime > index.stat().st_mtime]
    assert not stale, f"the book is older than {stale}: run `make book`"

    from playwright.sync_api import sync_playwright

    report = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=CHROMIUM_FLAGS
        )
        context = browser.new_context(offline=True, viewport=VIEWPORTS[0])
        for path in book_pages():
            page = context.new_page()
            outside, missing, errors = [], [], []

            def local_only(route, outside=outside):
                if route.request.url.startswith("file:"):
                    route.continue_()
                else:
                    outside.append(route.request.url)
                    route.abort()

            def note_missing(request, missing=missing):
                if request.url.startswith("file:"):
                    missing.append(request.url)

            def note_console_error(message, errors=errors):
                if message.type == "error":
                    errors.append(message.text)

            page.route("**/*", local_only)
            page.on("requestfailed", note_missing)
            page.on("console", note_console_error)
            page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
            page.goto(path.as_uri(), wait_until="load")
            seen = page.evaluate(INSPECT_PAGE)
            scrolling = page.evaluate(MEASURE_SCROLLING)  # at VIEWPORTS[0], a laptop's window
            tables = {}
            for viewport in VIEWPORTS:
                page.set_viewport_size(viewport)
                tables[viewport["width"]] = page.evaluate(MEASURE_TABLES)
            page.close()
            report[path] = {**seen, "tables": tables, "scrolling": scrolling, "outside": outside,
                            "missing": missing, "errors": errors}  # fmt: skip
        browser.close()
    return report


def test_the_book_has_its_pages(pages):
    names = {str(p.relative_to(HTML)) for p in pages}
    expected = {"intro.html", "claims.html", "confusions.html", "_generated/gallery.html",
                "_generated/reproduction.html"}  # fmt: skip
    assert expected | {f"notebooks/{n}.html" for n in NOTEBOOKS} <= names


def test_no_page_reaches_outside_the_machine(pages):
    for path, seen in pages.items():
        assert not seen["outside"], f"{path.name} asked the network for {seen['outside']}"


def test_every_local_resource_exists(pages):
    for path, seen in pages.items():
        assert not seen["missing"], f"{path.name} could not load {seen['missing']}"


def test_no_page_logs_an_error(pages):
    for path, seen in pages.items():
        assert not seen["errors"], f"{path.name} logged errors: {seen['errors']}"


def test_the_claims_table_fits_the_page_column_and_its_cells_are_short(pages):
    claims_page = pages[HTML / "claims.html"]
    for width, tables in claims_page["tables"].items():
        assert tables, "the claims page shows no table"
        for table in tables:
            assert table["width"] <= table["room"], (
                f"at a {width} px window the claims table is {table['width']} px wide "
                f"in a {table['room']} px column"
            )
            assert len(table["longest_cell"]) <= LONGEST_CELL, (
                f"a claims table cell holds {len(table['longest_cell'])} characters: "
                f"{table['longest_cell'][:80]}..."
            )


def test_the_reproduction_reports_tables_fit_the_full_column(pages):
    """Each table of the reproduction report gives its answer first (claim, what is decided,
    recorded and now, same or moved) and the numbers behind it after; in the full 784 px column
    the whole of every table is in view, with no scrolling sideways."""
    tables = pages[HTML / "_generated" / "reproduction.html"]["tables"][FULL_COLUMN["width"]]
    assert tables, "the reproduction report shows no table"
    for table in tables:
        assert table["width"] <= table["room"], (
            f"a table of the reproduction report is {table['width']} px wide in a "
            f"{table['room']} px column"
        )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_code_block_or_output_scrolls_sideways_in_a_laptops_window(pages, name):
    """Issue 23: in the book's 784 px column, 79 of 119 code blocks and 71 of 111 outputs
    scrolled sideways. Their lines are now at most 88 characters, and book/_css/lnpaper.css sets
    the cells' text so that 88 characters fit (at VIEWPORTS[0] the column is 752 px)."""
    scrolling = pages[HTML / "notebooks" / f"{name}.html"]["scrolling"]
    assert not scrolling, "\n".join(
        f"{block['kind']} {block['width']} px wide in {block['room']} px: {block['first_line']}"
        for block in scrolling
    )


def test_every_formula_is_typeset_and_no_tex_is_left(pages):
    with_math = [p.name for p, seen in pages.items() if seen["math"]]
    assert {f"{n}.html" for n in NOTEBOOKS} <= set(with_math), "a notebook page shows no formula"
    for path, seen in pages.items():
        assert not seen["untypeset"], f"{path.name}: formulas left as TeX: {seen['untypeset'][:3]}"
        leftover = RAW_TEX.findall(seen["text"])
        assert not leftover, f"{path.name}: raw TeX in the text: {leftover[:5]}"


def test_every_image_loads(pages):
    for path, seen in pages.items():
        broken = [img["src"] for img in seen["images"] if not img["ok"]]
        assert not broken, f"{path.name}: images that did not load: {broken}"


def test_the_gallery_shows_every_figure(pages):
    gallery = pages[HTML / "_generated" / "gallery.html"]
    shown = {Path(unquote(urlsplit(img["src"]).path)).stem for img in gallery["images"]}
    assert set(FIGURES) <= shown, f"missing from the gallery: {set(FIGURES) - shown}"


def test_every_internal_link_resolves(pages):
    ids = {path: set(seen["ids"]) for path, seen in pages.items()}
    for path, seen in pages.items():
        for href in seen["links"]:
            url = urlsplit(href)
            if url.scheme != "file":
                continue  # links out of the book are for readers with a network
            target = Path(unquote(url.path))
            assert target.exists(), f"{path.name} links to a missing file: {href}"
            if url.fragment and target.suffix == ".html":
                assert url.fragment in ids.get(target, set()), (
                    f"{path.name} links to a missing anchor: {href}"
                )
