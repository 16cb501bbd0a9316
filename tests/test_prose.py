"""The notebooks' prose: short enough to read in an afternoon, and each notebook says how long it
takes. One counter of words for every check here and for the README's table."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
WORDS_PER_MINUTE = 180
MOST_WORDS = 4000  # per notebook
MOST_WORDS_IN_ALL = 24_000  # an afternoon's reading, about 2 h 15 min at 180 words a minute
HEADER = re.compile(r"^\*About (\d+) minutes to read\. From the record it runs in seconds; live, "
                    r"(.+?) on one core\.\*$", re.M)  # fmt: skip


def markdown_cells(source: str) -> list[str]:
    """The text of each markdown cell of a jupytext py:percent source, without the '# ' prefixes."""
    cells = []
    for cell in re.split(r"^# %%", source, flags=re.M):
        if cell.startswith(" [markdown]"):
            body = cell.split("\n", 1)[1] if "\n" in cell else ""
            cells.append(re.sub(r"^# ?", "", body, flags=re.M))
    return cells


def prose_words(source: str) -> int:
    """Words of prose: math ($...$, $$...$$) and link targets left out, then every
    whitespace-separated token, a list's dash and a table's bar included, so that no stricter
    count of the markdown finds more."""
    words = 0
    for text in markdown_cells(source):
        text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
        text = re.sub(r"\$[^$\n]+\$", "", text)
        text = re.sub(r"\]\([^)]*\)", "]", text)
        words += len(text.split())
    return words


def reading_minutes(words: int) -> int:
    """At 180 words a minute, to the nearest 5 minutes, at least 5."""
    return max(5, 5 * round(words / WORDS_PER_MINUTE / 5))


def test_the_counter_leaves_out_math_code_and_link_targets():
    source = (
        "# %% [markdown]\n# Two words $a + b = c$ and [a link](https://x.org/y z).\n"
        "# - one | two\n# $$\n# \\sigma^2 = E[a]\n# $$\n\n# %%\nprint('code is not prose')\n"
    )
    assert prose_words(source) == 9  # Two, words, and, [a, link]., -, one, |, two
    assert reading_minutes(0) == 5 and reading_minutes(3600) == 20 and reading_minutes(3000) == 15


def test_all_notebooks_together_are_an_afternoons_reading():
    words = sum(prose_words(path.read_text()) for path in NOTEBOOKS)
    assert words <= MOST_WORDS_IN_ALL, f"{words} words of prose in all, over {MOST_WORDS_IN_ALL}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_is_at_most_4000_words_and_says_how_long_it_takes(path):
    source = path.read_text()
    words = prose_words(source)
    assert words <= MOST_WORDS, f"{path.stem}: {words} words of prose, over {MOST_WORDS}"
    header = HEADER.search(markdown_cells(source)[0])
    assert header, f"{path.stem}: its first cell does not say how long it takes to read and run"
    assert int(header.group(1)) == reading_minutes(words), (path.stem, words, header.group(1))


def test_the_readmes_table_gives_each_notebooks_reading_and_live_time():
    rows = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        found = re.match(r"\| \[`(\d\d_\w+)`\]", line)
        if found:
            cells = [cell.strip() for cell in line.strip(" |").split(" | ")]
            rows[found.group(1)] = cells
    assert sorted(rows) == [path.stem for path in NOTEBOOKS]
    for path in NOTEBOOKS:
        source = path.read_text()
        header = HEADER.search(markdown_cells(source)[0])
        read, run = rows[path.stem][2], rows[path.stem][3]
        assert read == f"{reading_minutes(prose_words(source))} min", (path.stem, read)
        assert run.endswith(f"/ {header.group(2)}"), (path.stem, run, header.group(2))


# What a reader reads says what a check is and why, never which review, referee or issue asked for
# it, nor what an earlier version said: that history is in the commit log.
PROCESS_HISTORY = re.compile(
    r"\breview\b|\breviewer|\breferee|\bissue \d|missing check|\b[CD]-[abcd]\d+\b"
    r"|\b(an? )?(earlier|previous|first) version\b|\bused to (say|call|read|be graded)\b",
    re.IGNORECASE,
)
READER_FACING = [
    *NOTEBOOKS,
    *sorted((ROOT / "book").glob("*.md")),
    ROOT / "CLAIMS.md",
    ROOT / "README.md",
    *sorted((ROOT / "src" / "lnpaper").rglob("*.py")),
]


def test_no_process_history_in_what_a_reader_reads():
    found = []
    for path in READER_FACING:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if PROCESS_HISTORY.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_history_pattern_sees_what_it_is_for():
    for text in ("as review B11 asked", "the second review's b9", "issue 23", "missing check 3",
                 "An earlier version of this notebook", "(C-b7)", "D-c3", "the referee"):  # fmt: skip
        assert PROCESS_HISTORY.search(text), text
    for text in ("a preview", "the issue is the mean", "earlier layers", "C-5 and D-7"):
        assert not PROCESS_HISTORY.search(text), text


def test_the_readmes_first_pass_adds_up_its_notebooks_and_the_confusions_page():
    """The first pass is the notebooks the README marks with a dot, then the common confusions."""
    readme = (ROOT / "README.md").read_text()
    marked = re.findall(r"^\| \[`(\d\d_\w+)`\]\([^)]*\) ●", readme, flags=re.M)
    assert marked, "the README marks no notebook for the first pass"
    minutes = sum(reading_minutes(prose_words((ROOT / "notebooks" / f"{m}.py").read_text()))
                  for m in marked)  # fmt: skip
    minutes += reading_minutes(len((ROOT / "book" / "confusions.md").read_text().split()))
    stated = re.search(r"\*\*A first pass, about (\d+) minutes of reading:\*\*", readme)
    assert stated and int(stated.group(1)) == minutes, (stated and stated.group(1), minutes)
