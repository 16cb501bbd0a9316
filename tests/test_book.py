"""The offline book (`make book`, run by `make test` before pytest), checked the way a reader sees it.

Every page is loaded from disk in headless Chromium with the network switched off and every request
that is not a local file refused and recorded. On each page: no TeX is left untypeset, every image
decodes, every local resource the page asks for exists, every link inside the book points at a
file and an anchor that exist, and the page logs no error. A notebook page opens on its lesson with
its evidence folded (book/_js/lnpaper.js): its button shows the evidence, and a link to an anchor
inside the evidence opens it. No page scrolls sideways, on a phone (390 px) or in a wide window;
the claims table fits the page's column at every window width, no table cell breaks a number
across lines, and no code block or output of a notebook scrolls sideways in a laptop's window.
The reproduction report names its machine and commit and folds its long tables. Without Chromium
the browser's tests are skipped with a message; the book's table of contents and the report's
text are checked in any case.
"""

import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from lnpaper import book, reproduce_report

FIGURES = book.figures()

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
# hides), how much room the column leaves inside its padding, whether it scrolls inside its own
# wrapper, and its longest cell.
MEASURE_TABLES = """() => [...document.querySelectorAll("article table")].map((table) => {
  const column = table.closest("article");
  const style = getComputedStyle(column);
  const wrapper = table.parentElement;
  const cells = [...table.querySelectorAll("th, td")].map((cell) => cell.textContent.trim());
  return {
    width: table.getBoundingClientRect().width,
    room: column.getBoundingClientRect().width - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight) - parseFloat(style.borderLeftWidth)
      - parseFloat(style.borderRightWidth),
    scrolls: wrapper.scrollWidth > wrapper.clientWidth + 1,
    longest_cell: cells.reduce((a, b) => (b.length > a.length ? b : a), ""),
  };
})"""

# How far the page itself scrolls sideways (0 when it does not), and each display formula wider
# than its box that does not scroll inside that box (so its end is cut off).
MEASURE_PAGE = """() => {
  const page = document.scrollingElement;
  return {
    overflow: page.scrollWidth - page.clientWidth,
    cut_formulas: [...document.querySelectorAll("mjx-container[display]")]
      .filter((math) => math.scrollWidth > math.clientWidth + 1
        && !["auto", "scroll"].includes(getComputedStyle(math).overflowX))
      .map((math) => math.textContent.slice(0, 60)),
  };
}"""

# Each number in a table cell (1, -0.25, +3.1e-05, 12%, also inside brackets or before a comma)
# that the cell breaks across two lines.
BROKEN_NUMBERS = """() => {
  const number = /^[-+]?(\\d+\\.?\\d*|\\.\\d+)(e[-+]?\\d+)?%?$/;
  const broken = [];
  for (const cell of document.querySelectorAll("article td, article th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      for (const match of node.nodeValue.matchAll(/\\S+/g)) {
        if (!number.test(match[0].replace(/^[[(]+|[\\]),;:]+$/g, ""))) { continue; }
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
        if (lines.size > 1) { broken.push(match[0]); }
      }
    }
  }
  return broken;
}"""

# A notebook page's lesson and evidence as the reader sees them: whether the lesson ("## The
# lesson") shows, how many of the evidence's elements there are and how many show (all but its
# heading and the button that folds it), the button's label, and the anchors inside the evidence
# (all, and its subsections').
EVIDENCE = """() => {
  const section = document.getElementById("the-evidence");
  const lesson = document.getElementById("the-lesson");
  const state = {lesson: !!lesson && lesson.checkVisibility()
    && lesson.getBoundingClientRect().height > 0};
  if (!section || section.tagName !== "SECTION") { return {...state, present: false}; }
  const toggle = section.querySelector(".lnpaper-evidence-toggle");
  const content = [...section.querySelectorAll("p, li, pre, img, table, h3, h4, mjx-container")]
    .filter((el) => !el.closest("h2") && !(toggle && toggle.contains(el)));
  return {
    ...state,
    present: true,
    content: content.length,
    shown: content.filter((el) => el.checkVisibility()).length,
    toggle: toggle ? toggle.textContent.trim() : null,
    ids: [...section.querySelectorAll("[id]")].map((el) => el.id),
    sections: [...section.querySelectorAll("section[id]")].map((el) => el.id),
  };
}"""
# Every folded table of the reproduction report (each inside a <details>), opened.
OPEN_DETAILS = "() => document.querySelectorAll('details').forEach((d) => { d.open = true; })"
EVIDENCE_SHOW = "Show the evidence: graded claims, tables and tests"
EVIDENCE_HIDE = "Hide the evidence"

# The element an address's anchor names, once the page has scrolled to it (a smooth scroll settles
# within 120 frames): found, shown, and in the window.
LINK_TARGET = """async (id) => {
  const target = document.getElementById(id);
  if (!target) { return {found: false, shown: false, in_view: false}; }
  let top = NaN;
  for (let frame = 0; frame < 120; frame++) {
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const now = target.getBoundingClientRect().top;
    if (now === top) { break; }
    top = now;
  }
  const shown = target.checkVisibility() && target.getBoundingClientRect().height > 0;
  return {found: true, shown: shown, in_view: top >= 0 && top < innerHeight};
}"""

# A click on the page's own contents (the secondary sidebar) link to an anchor; the link may be
# in a collapsed part of the contents, so it is clicked from the script, as a reader's click would.
CLICK_CONTENTS_LINK = """(id) => {
  const link = [...document.querySelectorAll(".bd-sidebar-secondary a[href]")]
    .find((a) => a.getAttribute("href") === "#" + id);
  if (link) { link.click(); }
}"""

# Each table of the page as it loads: its rows, and whether a closed <details> folds it.
FOLDED_TABLES = """() => [...document.querySelectorAll("article table")].map((table) => ({
  rows: table.tBodies.length ? table.tBodies[0].rows.length : 0,
  folded: !!table.closest("details:not([open])"),
}))"""


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
    sources = [*(ROOT / "notebooks").glob("*.ipynb"), ROOT / "CLAIMS.md", *BOOK.glob("*.*"),
               *BOOK.glob("_css/*"), *BOOK.glob("_js/*")]  # fmt: skip
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
            evidence = {"at_load": page.evaluate(EVIDENCE)}
            folded_tables = page.evaluate(FOLDED_TABLES)
            # Then everything a reader can unfold is opened and measured: the evidence, through
            # its button as a reader would, and the report's folded tables.
            toggle = page.locator(".lnpaper-evidence-toggle")
            if toggle.count():
                toggle.first.click()
                evidence["opened"] = page.evaluate(EVIDENCE)
            page.evaluate(OPEN_DETAILS)
            scrolling = page.evaluate(MEASURE_SCROLLING)  # at VIEWPORTS[0], a laptop's window
            tables, layout, broken_numbers = {}, {}, {}
            for viewport in VIEWPORTS:
                page.set_viewport_size(viewport)
                tables[viewport["width"]] = page.evaluate(MEASURE_TABLES)
                layout[viewport["width"]] = page.evaluate(MEASURE_PAGE)
                broken_numbers[viewport["width"]] = page.evaluate(BROKEN_NUMBERS)
            page.close()
            report[path] = {**seen, "tables": tables, "scrolling": scrolling, "outside": outside,
                            "missing": missing, "errors": errors, "evidence": evidence,
                            "layout": layout, "broken_numbers": broken_numbers,
                            "folded_tables": folded_tables, "opened_by_link": {}}  # fmt: skip
        # Anchors inside a notebook's evidence, reached with the evidence folded: an address
        # loaded afresh (another page's link, a bookmark), or the page's own contents clicked.
        # Chromium opens an element hidden "until-found" by itself when an address names
        # something inside it; a browser that cannot (Safari) relies on the book's script, tried
        # here in a context that hides Chromium's support from it.
        without = browser.new_context(offline=True, viewport=VIEWPORTS[0])
        without.add_init_script("delete HTMLElement.prototype.onbeforematch;")
        browsers = {"": context, " (no until-found)": without}
        for path, fragment, how, which in sorted(links_into_evidence(report)):
            page = browsers[which].new_page()
            if how == "address":
                page.goto(f"{path.as_uri()}#{fragment}", wait_until="load")
            else:
                page.goto(path.as_uri(), wait_until="load")
                page.evaluate(CLICK_CONTENTS_LINK, fragment)
            report[path]["opened_by_link"][f"{how} #{fragment}{which}"] = page.evaluate(
                LINK_TARGET, fragment
            )
            page.close()
        browser.close()
    return report


def links_into_evidence(report: dict) -> set[tuple[Path, str, str, str]]:
    """(page, anchor, how, browser) for each anchor inside a notebook's evidence that another page
    of the book links to, reached by its address; and for each notebook with an evidence, its
    "Claims checked here" (or its evidence's first subsection) by address and by a click on the
    page's contents, in Chromium and in Chromium without "until-found" ("" and " (no
    until-found)", the keys of the fixture's browsers)."""
    inside, chosen = {}, set()
    for path, seen in report.items():
        inside[path] = set(seen["evidence"]["at_load"].get("ids", []))
        sections = seen["evidence"]["at_load"].get("sections", [])
        if sections:
            own = "claims-checked-here" if "claims-checked-here" in sections else sections[0]
            for how in ("address", "click"):
                chosen |= {(path, own, how, ""), (path, own, how, " (no until-found)")}
    for source, seen in report.items():
        for href in seen["links"]:
            url = urlsplit(href)
            target, fragment = Path(unquote(url.path)), unquote(url.fragment)
            if url.scheme == "file" and target != source and fragment in inside.get(target, ()):
                chosen.add((target, fragment, "address", ""))
    return chosen


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
    the whole of every table (unfolded) is in view, with no scrolling sideways."""
    tables = pages[HTML / "_generated" / "reproduction.html"]["tables"][FULL_COLUMN["width"]]
    assert tables, "the reproduction report shows no table"
    for table in tables:
        assert table["width"] <= table["room"] and not table["scrolls"], (
            f"a table of the reproduction report is {table['width']} px wide in a "
            f"{table['room']} px column{' and scrolls in its box' if table['scrolls'] else ''}"
        )


def test_the_reproduction_reports_long_tables_are_folded_when_it_loads(pages):
    tables = pages[HTML / "_generated" / "reproduction.html"]["folded_tables"]
    assert tables, "the reproduction report shows no table"
    for table in tables:
        if table["rows"] > reproduce_report.FOLD_ROWS:
            assert table["folded"], f"a table of {table['rows']} rows is not folded"


# The report the book shows (`make book` copies a fresh one from `make reproduce`, else the
# committed one) and the committed one.
REPORTS = {"shown": BOOK / "_generated" / "reproduction.md",
           "committed": BOOK / "reproduction_report.md"}  # fmt: skip
TITLE = re.compile(r"# Reproduction report: commit \S+( \+ changes to src/)? on .+ \([A-Z0-9_]+\)")


@pytest.mark.parametrize("which", sorted(REPORTS))
def test_the_reproduction_report_names_its_machine_and_commit_and_folds_long_tables(which):
    """Read in the book on any machine, the report names the machine and commit it came from
    (never "this machine"), and each table longer than FOLD_ROWS is inside a <details>."""
    path = REPORTS[which]
    if not path.exists():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: run `make book`")
    lines = path.read_text().splitlines()
    assert TITLE.fullmatch(lines[0]), f"the report's title names no machine or commit: {lines[0]}"
    assert "this machine" not in path.read_text()
    depth, rows = 0, 0  # <details> open around this line; rows of the table outside any
    for line in [*lines, ""]:
        depth += line.startswith("<details") - line.startswith("</details>")
        if line.startswith("|") and depth == 0:
            rows += 1
        else:
            assert rows - 2 <= reproduce_report.FOLD_ROWS, (
                f"a table of {rows - 2} rows is not folded"
            )
            rows = 0


@pytest.mark.parametrize("width", [390, FULL_COLUMN["width"]])
def test_no_page_scrolls_sideways(pages, width):
    """At a phone's 390 px and in a wide window, the page itself never scrolls sideways (a wide
    table or code block scrolls inside its own box), and no display formula is cut off."""
    for path, seen in pages.items():
        layout = seen["layout"][width]
        assert layout["overflow"] <= 1, (
            f"{path.relative_to(HTML)} scrolls {layout['overflow']} px sideways at {width} px"
        )
        assert not layout["cut_formulas"], (
            f"{path.relative_to(HTML)}: formulas cut off at {width} px: {layout['cut_formulas']}"
        )


def test_no_table_cell_breaks_a_number(pages):
    for path, seen in pages.items():
        for width, broken in seen["broken_numbers"].items():
            assert not broken, (
                f"{path.relative_to(HTML)} at {width} px: numbers broken across lines: {broken[:5]}"
            )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_notebook_opens_on_its_lesson_and_its_button_shows_the_evidence(pages, name):
    """Notebook pages open with '## The lesson' in view and '## The evidence' folded; the button
    under the evidence's heading shows it (book/_js/lnpaper.js). A notebook not yet split into
    the two fails here."""
    evidence = pages[HTML / "notebooks" / f"{name}.html"]["evidence"]
    at_load = evidence["at_load"]
    assert at_load["present"], f"{name} has no section '## The evidence': nothing is folded"
    assert at_load["lesson"], f"{name}: the lesson ('## The lesson') is not shown"
    assert at_load["content"], f"{name}: the evidence is empty"
    assert at_load["shown"] == 0, (
        f"{name}: {at_load['shown']} of the evidence's {at_load['content']} elements show at load"
    )
    assert at_load["toggle"] == EVIDENCE_SHOW
    opened = evidence["opened"]
    assert opened["toggle"] == EVIDENCE_HIDE
    assert opened["shown"] == opened["content"], (
        f"{name}: {opened['shown']} of the evidence's {opened['content']} elements show once opened"
    )
    assert opened["lesson"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_link_into_the_evidence_opens_it(pages, name):
    """An address naming an anchor inside the evidence (another page's link, a reader's bookmark)
    and a click on the page's contents open the evidence and bring the anchor into view."""
    opened = pages[HTML / "notebooks" / f"{name}.html"]["opened_by_link"]
    assert opened, f"{name}: no anchor inside an evidence to link to (no '## The evidence')"
    for link, target in opened.items():
        assert target["found"] and target["shown"] and target["in_view"], f"{name} {link}: {target}"


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
