"""JupyterLab saves a paired notebook to both files; the .py it writes must be the committed one.

Lab's contents manager (jupytext's, installed by `make lab`) reads a pair, checks that its two files
agree, and on save writes the .py from the notebook, with the settings in notebooks/jupytext.toml.
Without them every save stamps jupytext's version into the .py header, and git sees a change.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import jupytext
import pytest
from jupytext.config import load_jupytext_config

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
CONFIG = NOTEBOOKS / "jupytext.toml"


def written_as_py_percent(notebook, tmp_path, config=None) -> bytes:
    written = tmp_path / "written.py"
    jupytext.write(notebook, written, fmt="py:percent", config=config)
    return written.read_bytes()


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_py_read_and_written_with_the_config_is_unchanged(source, tmp_path):
    config = load_jupytext_config(str(source))
    written = written_as_py_percent(jupytext.read(source, config=config), tmp_path, config)
    assert written == source.read_bytes(), f"a save in Lab would change {source.name}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_ipynb_written_as_py_percent_is_its_source(source, tmp_path):
    # Before it opens a pair whose .ipynb is the newer file, as `make notebooks` leaves it, Lab
    # writes both files as text and refuses to open the pair if they differ. It reads the .ipynb on
    # its own then, without the config, so the .ipynb has to carry the metadata filter (jupytext
    # copies it from the config when `make notebooks` syncs the pair).
    notebook_file = source.with_suffix(".ipynb")
    assert written_as_py_percent(jupytext.read(notebook_file), tmp_path) == source.read_bytes(), (
        f"Lab would refuse to open {notebook_file.name}: `jupytext --diff {source.name} "
        f"{notebook_file.name}` shows why"
    )


@pytest.mark.parametrize("opened", [".ipynb", ".py"])
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_saving_in_lab_leaves_the_py_as_committed(source, opened, tmp_path):
    pytest.importorskip("jupyter_server", reason="Lab's contents manager comes with `make lab`")
    notebook_file = source.with_suffix(".ipynb")
    for path in (CONFIG, source, notebook_file):
        shutil.copy(path, tmp_path)
    # As `make notebooks` leaves a pair: the .ipynb written after its source.
    source_time = (tmp_path / source.name).stat().st_mtime
    os.utime(tmp_path / notebook_file.name, (source_time + 60, source_time + 60))

    lab = jupytext.TextFileContentsManager(root_dir=str(tmp_path))
    name = source.stem + opened
    lab.save(lab.get(name), name)
    assert (tmp_path / source.name).read_bytes() == source.read_bytes(), (
        f"saving {name} in Lab changes {source.name}"
    )


def test_make_lab_serves_a_copy_that_git_ignores_and_keeps_a_readers_work(tmp_path):
    """`make lab` opens Lab on lab/, a copy of the pairs: a reader's cells and Lab's autosaves land
    there, and notebooks/ stays as committed."""
    root = NOTEBOOKS.parent
    folder = tmp_path / "lab"
    copy = ["make", "-s", "lab-folder", f"LAB_DIR={folder}"]
    subprocess.run(copy, cwd=root, check=True)
    for path in (CONFIG, *SOURCES, *(source.with_suffix(".ipynb") for source in SOURCES)):
        copied = folder / path.name
        assert copied.read_bytes() == path.read_bytes(), path.name
        assert copied.stat().st_mtime == path.stat().st_mtime, path.name  # the pair's order kept
    for page in (
        "CLAIMS.md",
        "confusions.md",
    ):  # the pages the notebooks point to, linked to the copies
        text = (folder / page).read_text()
        assert "](notebooks/" not in text, f"{page} in lab/ links to notebooks/, not to the copies"
        linked = set(re.findall(r"\]\((\d\d_\w+\.ipynb)", text))
        assert linked and all((folder / name).exists() for name in linked), (page, linked)
    mine = folder / SOURCES[0].with_suffix(".ipynb").name
    mine.write_text("a reader's scratch work")  # newer than the tracked notebook
    subprocess.run(copy, cwd=root, check=True)
    assert mine.read_text() == "a reader's scratch work"
    ignored = subprocess.run(["git", "check-ignore", "-q", f"lab/{mine.name}"], cwd=root)
    assert ignored.returncode == 0, "lab/ is not in .gitignore"
