"""The pipeline: the book's figures and their drift gate, the claims ledger."""

import dataclasses
import inspect
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from lnpaper import __main__ as cli
from lnpaper import book, ledger
from lnpaper.chapters.ch02_transpose import claims as transpose_claims
from lnpaper.chapters.ch02_transpose.runs import (
    BackwardResult,
    ParityResult,
    one_pass_variance,
    per_token_independence,
    variants_vs_scale,
)
from lnpaper.companion import verdicts
from lnpaper.companion.png import save_png
from lnpaper.companion.verdicts import PARTLY_KINDS, VERDICTS

EXPERIMENTS = book.experiments()
FIGURES = book.figures()

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_every_figure_is_byte_identical_when_drawn_twice(tmp_path):
    for name, spec in FIGURES.items():
        save_png(spec.render(), tmp_path / "a.png")
        save_png(spec.render(), tmp_path / "b.png")
        assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes(), name


@pytest.mark.parametrize("check", [[], ["--check"]])
def test_figures_out_an_existing_file_is_a_one_line_error(tmp_path, capsys, check):
    taken = tmp_path / "taken.png"
    taken.write_bytes(b"a reader's file")
    assert cli.main(["figures", "transpose_table", "--out", str(taken), *check]) == 2
    assert f"--out must be a folder, got {str(taken)!r}, which is a file" in capsys.readouterr().err
    assert taken.read_bytes() == b"a reader's file"
    inside = str(taken / "inside")
    if not check:  # `--check` reads the folder: one that cannot exist holds no figures
        assert cli.main(["figures", "transpose_table", "--out", inside]) == 2
        assert f"--out {inside!r} cannot be made" in capsys.readouterr().err


def test_figures_check_fails_on_missing_changed_and_stale_files(tmp_path, capsys):
    name = "transpose_table"
    args = ["figures", name, "--out", str(tmp_path), "--check"]
    assert cli.main(args) == 1  # missing
    assert cli.main(["figures", name, "--out", str(tmp_path)]) == 0
    assert cli.main(args) == 0
    png = tmp_path / f"{name}.png"
    png.write_bytes(png.read_bytes() + b"\0")  # the same picture in other bytes: accepted
    assert cli.main(args) == 0
    picture = Image.open(png)
    picture.paste((0, 0, 0), (0, 0, 60, 60))  # a black corner: a changed picture
    picture.save(png)
    assert cli.main(args) == 1
    assert f"{name}.png differs" in capsys.readouterr().err
    (tmp_path / "retired_figure.png").write_bytes(b"")
    problems = cli.compare_figures([], tmp_path, every=True)
    assert any("retired_figure.png has no figure function" in p for p in problems)


def test_every_figure_draws_a_registered_experiment_or_a_chapters_analysis_of_them():
    for spec in FIGURES.values():
        run = spec.experiment
        # a study of its chapter's `analysis`
        analysis = run is not None and run.__module__.rsplit(".", 1)[-1] == "analysis"
        assert run is None or run in EXPERIMENTS.values() or analysis, spec.name


def test_claim_ids_are_unique_and_well_formed():
    ids = [claim.id for claim in ledger.CLAIMS]
    assert len(ids) == len(set(ids))
    # a letter and a digit, as in the paper-facts sheet; a lower-case letter after it for a claim
    # split off from that item (R4b: R4's "better at the end")
    assert all(re.fullmatch(r"[A-Z]\d[a-z]?", claim_id) for claim_id in ids)


def test_the_committed_claims_md_lists_every_claim_of_the_book_in_order():
    # CLAIMS.md is written from the chapters (`make figures`); a claim added, dropped or moved
    # without rewriting it shows here by its ID, and every claim names a notebook that exists.
    committed = (ROOT / "CLAIMS.md").read_text()
    ids = [claim.id for claim in ledger.CLAIMS]
    assert re.findall(r"^\| \[([A-Za-z0-9]+)\]\(#", committed, re.MULTILINE) == ids
    assert re.findall(r"^### ([A-Za-z0-9]+) ", committed, re.MULTILINE) == ids
    for claim in ledger.CLAIMS:
        assert (ROOT / "notebooks" / f"{claim.notebook}.ipynb").exists(), claim.id


def test_a_claim_heading_anchor_is_the_one_github_and_myst_give_it():
    # Expected values as github-slugger 2.0 (GitHub's rule) gives them; MyST's default is the same
    # rule, and tests/test_book.py checks every link of the built claims page resolves.
    examples = {
        "I3 grows like lr / ||W||^2": "i3-grows-like-lr--w2",
        "M1 BatchNorm's output; LN": "m1-batchnorms-output-ln",
        "T6 DyT (gamma tanh(alpha x) + beta) can replace": "t6-dyt-gamma-tanhalpha-x--beta-can-replace",
        "M4 per-time-step statistics, T_max reused": "m4-per-time-step-statistics-t_max-reused",
    }
    assert {heading: ledger.anchor(heading) for heading in examples} == examples


def test_claims_md_has_a_short_row_and_a_full_section_per_claim():
    text = ledger.markdown()
    # An escaped | (in a claim) never follows a space, so " | " splits a row into its cells.
    table = [line.strip("| ").split(" | ") for line in text.splitlines() if line.startswith("| [")]
    sections = text.split("\n### ")[1:]
    assert len(table) == len(sections) == len(ledger.CLAIMS)
    verdicts = []
    graded = ledger.graded()
    findings = [finding for finding, _ in graded.values()]
    for cells, section, row in zip(table, sections, ledger.rows(graded), strict=True):
        claim_id, claim, source, value, ours, test, verdict, notebook = row
        heading = section.splitlines()[0]
        assert heading == f"{claim_id} {claim}"
        slug = ledger.anchor(heading)
        assert re.fullmatch(rf"{claim_id.lower()}-[a-z0-9_-]+", slug), slug
        number = notebook.split("_")[0]
        assert cells == [f"[{claim_id}](#{slug})", claim.replace("|", "\\|"), verdict,
                         f"[{number}](notebooks/{notebook}.ipynb)"]  # fmt: skip
        assert max(len(cell) for cell in cells[1:]) <= 200
        for field in (source, value, ours, test, f"**verdict:** {verdict}", f"{notebook}.ipynb"):
            assert field in section, (claim_id, field)
        verdicts.append(verdict)
        if "borderline" in verdict:  # the marker comes with both sides' numbers
            assert "Borderline: " in ours and "within machine noise of" in ours, claim_id
    plain = [finding.verdict for finding in findings]
    assert set(plain) <= set(VERDICTS)
    borderline = sum("borderline" in v for v in verdicts)
    assert borderline == sum(bool(finding.borderline) for finding in findings)
    assert f"\n{borderline} of the {len(verdicts)} verdicts are borderline. " in text
    # partly counted as one verdict above, and split by its kind on a line of its own
    kinds = [finding.partly_kind for finding in findings if finding.verdict == "partly"]
    split = ", ".join(f"{kinds.count(kind)} {kind}" for kind in PARTLY_KINDS)
    assert f"\nThe {plain.count('partly')} partly verdicts by kind: {split}.\n" in text
    # three tallies, apart: the sources' claims, our own questions (with the sources' claims
    # graded at this budget), the identities
    groups = {"The sources' claims": [], "Our own questions": [], "Identities and "
              "implementation checks": []}  # fmt: skip
    for claim, verdict in zip(ledger.CLAIMS, plain, strict=True):
        ours = claim.origin == "ours" or claim.budget
        name = ("Identities and implementation checks" if claim.kind == "identity"
                else "Our own questions" if ours else "The sources' claims")  # fmt: skip
        groups[name].append(verdict)
    at_budget = sum(bool(claim.budget) for claim in ledger.CLAIMS)
    assert f"{at_budget} of them a source's claim graded at this budget" in text
    for name, found in groups.items():
        counted = ", ".join(f"{found.count(v)} {v}" for v in VERDICTS if v in found)
        line = next(line for line in text.splitlines() if line.startswith(f"**{name}: "))
        assert line.startswith(f"**{name}: {len(found)}") and line.endswith(f"{counted}."), line


def test_every_check_takes_one_result_per_experiment_its_claim_reads():
    for claim in ledger.CLAIMS:
        if claim.check is None:
            continue
        parameters = inspect.signature(claim.check).parameters.values()
        positional = [p for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
        required = [p for p in positional if p.default is p.empty]
        assert len(required) <= len(claim.experiments) <= len(positional), claim.id


def test_a_claim_check_can_fail():
    good = ParityResult([[2, 8]], 1e-16, 1e-16, 0.3, 1.5, 1.0, 0.0)
    assert transpose_claims.check_f1(good).verdict == verdicts.REPRODUCED
    for broken in (
        dataclasses.replace(good, max_diff_module=1e-3),  # not the same function as torch
        dataclasses.replace(good, max_diff_unbiased=0.0),  # check cannot see the variance choice
        dataclasses.replace(good, init_gain=0.1),
    ):
        assert transpose_claims.check_f1(broken).verdict == verdicts.NOT_REPRODUCED
    backward = BackwardResult([6, 16], 1e-15, 1e-15, 1e-15, False, 1e-15)
    assert transpose_claims.check_f3(backward).verdict == verdicts.NOT_REPRODUCED
    leaky = dataclasses.replace(per_token_independence(), layernorm_max_other=1e-7)
    assert transpose_claims.check_f2(leaky).verdict == verdicts.NOT_REPRODUCED
    one_pass = one_pass_variance()
    at_100 = one_pass.offsets.index(100.0)
    shares = list(one_pass.nonpositive_fraction)
    shares[at_100] = 0.0  # one-pass variance never went <= 0: the float32 failure did not show
    robust = dataclasses.replace(one_pass, nonpositive_fraction=shares)
    assert transpose_claims.check_f4(variants_vs_scale(), robust).verdict == verdicts.NOT_REPRODUCED


def test_the_readme_table_names_every_claim_of_each_notebook():
    by_notebook = {}
    for claim in ledger.CLAIMS:
        by_notebook.setdefault(claim.notebook, []).append(claim.id)
    rows = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        found = re.match(r"\| \[`(\d\d_\w+)`\]", line)
        if found:
            rows[found.group(1)] = line.rstrip(" |").rsplit(" | ", 1)[1].split(", ")
    assert rows == by_notebook


def test_the_claims_printed_in_a_notebook_fit_a_column_and_keep_intervals_whole():
    """Every line of every notebook's "Claims checked here" is at most verdicts.LINE_WIDTH
    characters, and no interval '[a, b]' or 'n = 10' is broken across lines."""
    text = verdicts.checked_here([(claim, claim.evaluate()) for claim in ledger.CLAIMS])
    assert max(len(line) for line in text.splitlines()) <= verdicts.LINE_WIDTH
    assert not re.search(r"\[[^\]\n]*\n|n =\n", text)
    long = "a [-0.106, +0.096] (n = 10) " * 6
    assert all(len(line) <= verdicts.LINE_WIDTH for line in verdicts.wrap(long, "   ").splitlines())


def test_a_claims_evidence_is_each_decision_then_the_verdict():
    """`verdicts.evidence`: one entry per decision the verdict rests on, intervals, counts and
    timings alike, every line within the notebook's width, and the verdict as the ledger gives it."""
    for claim_id in ("T4", "P3", "R4d"):  # counts, timings, paired intervals
        finding = ledger.BY_ID[claim_id].evaluate()
        text = verdicts.evidence(finding)
        lines = text.splitlines()
        assert lines[-1] == f"verdict: {verdicts.verdict_text(finding)}"
        assert max(len(line) for line in lines) <= verdicts.LINE_WIDTH, claim_id
        for index, decision in enumerate(finding.decisions):
            assert finding.decision_label(index) in text and f": {decision.outcome}" in text
        assert sum(not line.startswith("    ") for line in lines) == len(finding.decisions) + 1


# Every notebook's stored code and printed text fit the book's column (issue 23); tests/test_book.py
# measures the same pages in a browser.
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def text_outputs(cell: dict) -> list[str]:
    """What a code cell printed as text: its streams and the plain text of its results (a
    figure's text/plain is its repr, short)."""
    texts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            texts.append("".join(output["text"]))
        elif "text/plain" in output.get("data", {}):
            texts.append("".join(output["data"]["text/plain"]))
        elif output["output_type"] == "error":
            texts.append("\n".join(output["traceback"]))
    return texts


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_code_line_and_printed_line_fits_a_column(name):
    """Issue 23: in the book's 784 px column, 79 of 119 code blocks and 71 of 111 outputs
    scrolled sideways. In the stored notebook every line of code and of printed text is at
    most verdicts.LINE_WIDTH (88) characters, the same in Lab and in the book."""
    notebook = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
    wide = []
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        texts = [("code", "".join(cell["source"]))]
        texts += [("output", output) for output in text_outputs(cell)]
        for kind, text in texts:
            wide += [
                f"cell {number} {kind}, {len(line)} characters: {line}"
                for line in text.splitlines()
                if len(line) > verdicts.LINE_WIDTH
            ]
    assert not wide, "\n".join(wide)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_headings_step_down_one_level_at_a_time(name):
    """The book is built with warnings as errors, and MyST warns when a heading skips a level
    (a `###` straight under the `#` title): caught here in seconds, not in the book build."""
    notebook = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
    level, skips = 0, []
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            heading = re.match(r"(#+) ", line)
            if not heading:
                continue
            new = len(heading.group(1))
            if new > level + 1:
                skips.append(f"cell {number}: level {level} to {new}: {line}")
            level = new
    assert not skips, "\n".join(skips)


def test_a_claims_source_is_a_paper_or_ours_never_a_review():
    """The ledger names a source by paper and section, or says `ours` for the companion's own
    question; the project's process (reviews, issues) is history, kept in commit messages."""
    process = re.compile(r"\breview|\bissue \d|missing check", re.IGNORECASE)
    for claim in ledger.CLAIMS:
        for field in (claim.claim, claim.source, claim.paper_value, claim.test):
            assert not process.search(field), (claim.id, field)
        assert claim.source.startswith("ours") == (claim.origin == "ours"), claim.id


@pytest.mark.slow
def test_writing_claims_md_evaluates_each_claim_once(monkeypatch):
    evaluated = []
    evaluate = verdicts.Claim.evaluate

    def counted(claim, *results):
        evaluated.append(claim.id)
        return evaluate(claim, *results)

    monkeypatch.setattr(verdicts.Claim, "evaluate", counted)
    ledger.markdown()
    assert sorted(evaluated) == sorted(claim.id for claim in ledger.CLAIMS)


def test_a_claim_graded_at_this_budget_says_so_in_its_verdict_and_section():
    text = (ROOT / "CLAIMS.md").read_text()
    found = ledger.graded()
    at_budget = [claim for claim in ledger.CLAIMS if claim.budget]
    assert at_budget, "no claim is graded at this budget"
    for claim in ledger.CLAIMS:
        finding = found[claim.id][0]
        shown = verdicts.verdict_text(finding)
        assert finding.at_budget == bool(claim.budget), claim.id
        assert shown.endswith("at this budget)") == bool(claim.budget), (claim.id, shown)
    for claim in at_budget:
        assert f"- **kind:** graded at this budget ({claim.budget})" in text, claim.id
    with pytest.raises(ValueError, match="only a source's empirical claim"):
        dataclasses.replace(at_budget[0], origin="ours")


def checked_here_lines(notebook: str) -> dict[str, str]:
    """The notebook's printed list of the claims checked there, one unwrapped line per ID."""
    cells = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())["cells"]
    printed = "".join(
        "".join(output.get("text", ""))
        for cell in cells
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
    )
    listed = printed[: printed.index("Sources, numbers and tests: CLAIMS.md")]
    entries = re.split(r"\n(?=\S)", listed.replace("\n    ", " "))
    return {entry.split("  ")[0]: entry for entry in entries if "  [" in entry}


def test_a_rule_set_after_the_data_is_shown_in_claims_md_and_marked_in_its_notebook():
    # A test whose window, margin, gate or pick was fixed after its runs had been seen says so
    # where the verdict is read: in the claim's section and beside it in its notebook's list.
    after = [claim for claim in ledger.CLAIMS if claim.after_data]
    assert after, "no claim carries a rule set after the data"
    text = (ROOT / "CLAIMS.md").read_text()
    assert text.count("- **set after the data:** ") == len(after)
    assert f" {len(after)} tests have a rule set after the data.\n" in text
    for claim in after:
        assert f"- **set after the data:** {claim.after_data}" in text, claim.id
        assert verdicts.AFTER_DATA_MARK in checked_here_lines(claim.notebook)[claim.id], claim.id
    plain = next(c for c in ledger.CLAIMS if not c.after_data)
    listed = verdicts.checked_here([(plain, verdicts.Finding("", verdicts.REPRODUCED))])
    assert verdicts.AFTER_DATA_MARK not in listed


def test_every_source_claim_states_its_regime_beside_ours():
    # A source's claim is graded in a miniature: its line says the source's setting beside ours on
    # what the mechanism needs, so a reader sees where they differ before reading the verdict.
    missing = [
        claim.id
        for claim in ledger.CLAIMS
        if claim.kind != verdicts.IDENTITY
        and claim.origin == verdicts.SOURCE
        and not re.fullmatch(r"source: [^\n]+; ours: [^\n]+", claim.regime)
    ]
    assert missing == []
    text = (ROOT / "CLAIMS.md").read_text()
    assert text.count("- **regime:** source: ") == sum(bool(c.regime) for c in ledger.CLAIMS)
