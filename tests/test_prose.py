"""The notebooks' prose: each notebook a lesson, then its evidence; the ten lessons a first pass of at
most 90 minutes; each notebook, the README's table and its first pass say how long they take, by
one counter (tests/reading_time.py)."""

import json
import re
from pathlib import Path

import pytest
import reading_time
from reading_time import EVIDENCE, LESSON, MOST_FIRST_PASS_MINUTES, MOST_LESSON_MINUTES

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
MOST_WORDS = 4000  # per notebook, lesson and evidence together
MOST_WORDS_IN_ALL = 24_000  # the whole book


def markdown_cells(source: str) -> list[str]:
    """The text of each markdown cell of a jupytext py:percent source, without the '# ' prefixes."""
    cells = []
    for cell in re.split(r"^# %%", source, flags=re.M):
        if cell.startswith(" [markdown]"):
            body = cell.split("\n", 1)[1] if "\n" in cell else ""
            cells.append(re.sub(r"^# ?", "", body, flags=re.M))
    return cells


def prose_words(source: str) -> int:
    """Words of prose of a py:percent source, by the counter's own rule."""
    return sum(reading_time.prose_words(text) for text in markdown_cells(source))


def parts(path: Path):
    return reading_time.parts(path.with_suffix(".ipynb"))


def test_the_counter_leaves_out_math_code_and_link_targets():
    source = (
        "# %% [markdown]\n# Two words $a + b = c$ and [a link](https://x.org/y z).\n"
        "# - one | two\n# $$\n# \\sigma^2 = E[a]\n# $$\n\n# %%\nprint('code is not prose')\n"
    )
    assert prose_words(source) == 9  # Two, words, and, [a, link]., -, one, |, two


def test_the_counter_counts_prose_figures_and_lines_at_their_rates():
    part = reading_time.Part()
    reading_time.count_cell({"cell_type": "markdown", "source": "word " * 200}, part)
    png = {"output_type": "display_data", "data": {"image/png": "", "text/plain": "<Figure>"}}
    text = {"output_type": "stream", "text": "a\nb\n\n"}
    code = {"cell_type": "code", "source": "x = 1\n\ny = 2\n", "outputs": [png, text]}
    reading_time.count_cell(code, part)
    assert (part.words, part.figures, part.lines) == (200, 1, 4)
    assert part.minutes == pytest.approx(1 + 0.75 + 4 / 40)
    assert reading_time.audit_words(part) == []
    for audit in ("over 10 seeds", "+0.01 [-0.32, +0.35]", "[0.02, 0.16]", "Holm", "borderline"):
        assert reading_time.audit_words(reading_time.Part(markdown=audit)), audit
    assert not reading_time.audit_words(reading_time.Part(printed="shape [4, 8]"))


def test_the_book_is_at_most_24000_words():
    words = sum(prose_words(path.read_text()) for path in NOTEBOOKS)
    assert words <= MOST_WORDS_IN_ALL, f"{words} words of prose in all, over {MOST_WORDS_IN_ALL}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_is_a_lesson_then_its_evidence_folded(path):
    cells = json.loads(path.with_suffix(".ipynb").read_text())["cells"]
    headings = [
        (line, cell.get("metadata", {}))
        for cell in cells
        if cell["cell_type"] == "markdown"
        for line in reading_time.text_of(cell["source"]).splitlines()
        if re.match(r"## ", line)
    ]
    assert [line for line, _ in headings] == [LESSON, EVIDENCE], (
        f"{path.stem}: its level-2 headings are {[line for line, _ in headings]}; the lesson's and "
        "the evidence's sections are level 3, so that folding the evidence folds all of it"
    )
    assert headings[1][1].get("jp-MarkdownHeadingCollapsed") is True, (
        f"{path.stem}: the evidence's heading cell does not open collapsed in JupyterLab"
    )
    # Tools that read a notebook's markdown as one text, its cells joined by spaces, find each
    # heading at the start of a line: its cell opens with a blank line.
    joined = " ".join(
        reading_time.text_of(cell["source"]) for cell in cells if cell["cell_type"] == "markdown"
    )
    for heading in (LESSON, EVIDENCE):
        assert re.search(f"^{heading}$", joined, re.M), f"{path.stem}: {heading} starts no line"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_lesson_is_short_plays_and_leaves_the_statistics_to_the_evidence(path):
    lesson, _ = parts(path)
    assert lesson.minutes <= MOST_LESSON_MINUTES, (
        f"{path.stem}: its lesson takes {lesson.minutes:.1f} min ({lesson.words} words, "
        f"{lesson.figures} figures, {lesson.lines} lines), over {MOST_LESSON_MINUTES}"
    )
    found = reading_time.audit_words(lesson)
    assert not found, f"{path.stem}: its lesson holds the evidence's words {found}"
    source = path.read_text()
    lesson_source = source[source.index(LESSON) : source.index(EVIDENCE)]
    plays = ("demos.show(", "Try it", "exercises.check_")
    assert any(play in lesson_source for play in plays), (
        f"{path.stem}: its lesson has no slider, Try it cell or exercise"
    )


def test_the_ten_lessons_are_a_first_pass_of_at_most_90_minutes():
    minutes = {path.stem: parts(path)[0].minutes for path in NOTEBOOKS}
    total = sum(minutes.values())
    assert total <= MOST_FIRST_PASS_MINUTES, f"the lessons take {total:.1f} min: {minutes}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_is_at_most_4000_words_and_says_how_long_it_takes(path):
    source = path.read_text()
    words = prose_words(source)
    assert words <= MOST_WORDS, f"{path.stem}: {words} words of prose, over {MOST_WORDS}"
    header = reading_time.HEADER.search(markdown_cells(source)[0])
    assert header, f"{path.stem}: its first cell does not say how long it takes to read and run"
    lesson, evidence = parts(path)
    stated = int(header.group(1)), int(header.group(2))
    counted = reading_time.minutes(lesson), reading_time.minutes(evidence)
    assert stated == counted, (
        f"{path.stem}: the header says {stated} minutes, the counter {counted}"
    )


def test_the_readmes_table_gives_each_notebooks_reading_and_live_time():
    rows = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        found = re.match(r"\| \[`(\d\d_\w+)`\]", line)
        if found:
            cells = [cell.strip() for cell in line.strip(" |").split(" | ")]
            rows[found.group(1)] = cells
    assert sorted(rows) == [path.stem for path in NOTEBOOKS]
    for path in NOTEBOOKS:
        header = reading_time.HEADER.search(markdown_cells(path.read_text())[0])
        lesson, evidence = parts(path)
        read, run = rows[path.stem][2], rows[path.stem][3]
        expected = f"{reading_time.minutes(lesson)} + {reading_time.minutes(evidence)} min"
        assert read == expected, (path.stem, read, expected)
        assert run.endswith(f"/ {header.group(3)}"), (path.stem, run, header.group(3))


def test_the_readmes_first_pass_is_the_ten_lessons():
    readme = (ROOT / "README.md").read_text()
    minutes = round(sum(parts(path)[0].minutes for path in NOTEBOOKS))
    stated = re.search(
        r"\*\*The first pass, the ten lessons in order: about (\d+) minutes\.\*\*", readme
    )
    assert stated and int(stated.group(1)) == minutes, (stated and stated.group(1), minutes)


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
