"""How long a notebook takes to read, part by part: the one counter that each notebook's header, the
README's table and tests/test_prose.py share.

A notebook has two parts, `## The lesson` (from its first cell) and `## The evidence` (from that
heading to its end). A part's time counts what a student reads in it, from the executed notebook:
prose at 200 words a minute (math and link targets left out), 0.75 minutes a figure, and code and
printed lines at 40 a minute. Run it to see every notebook's times and what its lesson must not
hold: `python tests/reading_time.py`.
"""

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PROSE_WORDS_PER_MINUTE = 200
MINUTES_PER_FIGURE = 0.75
LINES_PER_MINUTE = 40  # of code, and of printed output
LESSON = "## The lesson"
EVIDENCE = "## The evidence"
MOST_LESSON_MINUTES = 12
MOST_FIRST_PASS_MINUTES = 90
# What belongs in the evidence, not in a lesson: intervals, and the words of the verdict statistics.
AUDIT_WORDS = re.compile(
    r"\[(?=[^\]\n]*[.+-])[+-]?\d[\d.]*,\s*[+-]?\d[\d.]*\]|\b(?:Holm|borderline|fragile|bands?|seeds?)\b",
    re.I,
)
# The header each notebook's first cell carries, in these words.
HEADER = re.compile(
    r"^\*The lesson takes about (\d+) minutes? to read, the evidence about (\d+) more\.\s+From the "
    r"record it runs in seconds; live, (.+?) on one core\.\*$",
    re.M,
)


def text_of(value) -> str:
    return value if isinstance(value, str) else "".join(value)


def prose_words(markdown: str) -> int:
    """Words of prose: math ($...$, $$...$$) and link targets left out, then every whitespace-
    separated token, a list's dash and a table's bar included."""
    markdown = re.sub(r"\$\$.*?\$\$", "", markdown, flags=re.S)
    markdown = re.sub(r"\$[^$\n]+\$", "", markdown)
    markdown = re.sub(r"\]\([^)]*\)", "]", markdown)
    return len(markdown.split())


@dataclass
class Part:
    words: int = 0
    figures: int = 0
    lines: int = 0  # of code and of printed output
    markdown: str = ""
    printed: str = ""

    @property
    def minutes(self) -> float:
        return (
            self.words / PROSE_WORDS_PER_MINUTE
            + self.figures * MINUTES_PER_FIGURE
            + self.lines / LINES_PER_MINUTE
        )


def count_cell(cell: dict, part: Part) -> None:
    source = text_of(cell.get("source", ""))
    if cell["cell_type"] == "markdown":
        part.words += prose_words(source)
        part.figures += len(re.findall(r"!\[[^\]]*\]\(", source))
        part.markdown += source + "\n"
        return
    if cell["cell_type"] != "code":
        return
    part.lines += sum(1 for line in source.splitlines() if line.strip())
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "image/png" in data or "image/svg+xml" in data:
            part.figures += 1
            continue
        text = text_of(output.get("text", data.get("text/plain", "")))
        part.lines += sum(1 for line in text.splitlines() if line.strip())
        part.printed += text + "\n"


def parts(notebook: Path) -> tuple[Part, Part]:
    """The lesson and the evidence of an executed notebook, counted."""
    cells = json.loads(notebook.read_text())["cells"]
    lesson, evidence = Part(), Part()
    current = lesson
    for cell in cells:
        source = text_of(cell.get("source", "")).lstrip()
        if cell["cell_type"] == "markdown" and source.startswith(EVIDENCE):
            current = evidence
        count_cell(cell, current)
    return lesson, evidence


def minutes(part: Part) -> int:
    """A part's minutes as the header and the README give them: to the nearest minute, at least 1."""
    return max(1, round(part.minutes))


def audit_words(part: Part) -> list[str]:
    """What a lesson holds that belongs in the evidence: intervals and the words of the statistics
    (the first cell's line of `lnpaper.setup()`, which names its seed, aside)."""
    printed = re.sub(r"^lnpaper setup: .*$", "", part.printed, flags=re.M)
    return [m.group(0) for m in AUDIT_WORDS.finditer(part.markdown + printed)]


def report() -> str:
    rows, total = [], 0.0
    for notebook in NOTEBOOKS:
        lesson, evidence = parts(notebook)
        total += lesson.minutes
        found = audit_words(lesson)
        rows.append(
            f"{notebook.stem:34s} lesson {lesson.minutes:5.1f} min ({lesson.words} words, "
            f"{lesson.figures} figures, {lesson.lines} lines)  evidence {evidence.minutes:5.1f} min"
            + (f"  lesson holds {found[:5]}" if found else "")
        )
    rows.append(f"{'the ten lessons':34s} {total:.1f} min (at most {MOST_FIRST_PASS_MINUTES})")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(print(report()))
