"""Notebook hygiene: each .ipynb is paired with its jupytext source, in sync, and fully executed.

nbval (in `make test`) re-executes the notebooks and compares outputs; these tests catch what it
cannot: a .py edited without regenerating the notebook, or a notebook never run top to bottom.
"""

from pathlib import Path

import jupytext
import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
EXECUTED = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def test_every_notebook_has_a_jupytext_source_and_back():
    assert SOURCES, "no notebooks found"
    assert [p.stem for p in SOURCES] == [p.stem for p in EXECUTED]


def cells(notebook) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source.strip()) for cell in notebook.cells]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_matches_its_py_source(source):
    executed = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    assert cells(jupytext.read(source)) == cells(executed), (
        f"{source.name} and its .ipynb differ: run `make notebooks`"
    )


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: p.stem)
def test_notebook_was_executed_top_to_bottom_without_errors(path):
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    errors = [out for cell in code for out in cell.outputs if out.output_type == "error"]
    assert not errors
    assert notebook.metadata.kernelspec.name == "python3"
    assert not [cell for cell in code if "execution" in cell.metadata], (
        "timestamps: `make notebooks`"
    )


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: p.stem)
def test_first_code_cell_sets_up_plots_and_seeds(path):
    notebook = nbformat.read(path, as_version=4)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code").source
    assert "%matplotlib inline" in first
    assert "lnpaper.setup()" in first
