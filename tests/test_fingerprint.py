"""The code fingerprint each record entry stores, and `python -m lnpaper stale`: an edited body, a
helper or constant it uses, changes it; a docstring, a comment or a reformatting does not."""

import importlib.util
import itertools
import sys
import textwrap

import pytest

from lnpaper.__main__ import main
from lnpaper.companion import record
from lnpaper.companion.fingerprint import code_fingerprint, stale_entries

LOADED = itertools.count()
BODY = '''
"""A module of one experiment and what it uses."""
SCALE = 2.0


def helper(x):
    return x * SCALE


def unrelated():
    return 0


def tiny(*, n: int = 3):
    """The experiment."""
    return [helper(i) for i in range(n)]
'''


def load(tmp_path, text: str, name: str):
    """`text` as a fresh module (a new name each time: the fingerprint reads a module once)."""
    name = f"{name}_{next(LOADED)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


EDITS = {
    "the body": (
        "return [helper(i) for i in range(n)]",
        "return [helper(i) + 1 for i in range(n)]",
    ),
    "a default": ("n: int = 3", "n: int = 4"),
    "a helper it calls": ("return x * SCALE", "return x * SCALE * 1"),
    "a constant a helper reads": ("SCALE = 2.0", "SCALE = 3.0"),
}
HARMLESS = {
    "its docstring": ('"""The experiment."""', '"""The experiment, reworded."""'),
    "a comment and spacing": (
        "return [helper(i) for i in range(n)]",
        "return [helper(i)  for i in range(n)]  # why",
    ),
    "a function it does not use": ("return 0", "return 1"),
}


@pytest.mark.parametrize("what", list(EDITS) + list(HARMLESS))
def test_a_change_to_what_the_experiment_runs_changes_its_fingerprint(tmp_path, what):
    old, new = {**EDITS, **HARMLESS}[what]
    assert old in BODY
    before = code_fingerprint(load(tmp_path, BODY, "fp_before").tiny)
    after = code_fingerprint(load(tmp_path, BODY.replace(old, new), "fp_after").tiny)
    assert (before != after) == (what in EDITS), what


def test_stale_lists_an_entry_after_its_experiments_body_is_edited(tmp_path):
    original = load(tmp_path, BODY, "fp_recorded").tiny
    entry = record.compute("tiny", original, {"n": 3})
    assert entry["code"] == code_fingerprint(original)
    assert stale_entries([entry], {"tiny": original}) == []
    edited = load(tmp_path, BODY.replace("n: int = 3", "n: int = 5"), "fp_edited").tiny
    (line,) = stale_entries([entry], {"tiny": edited})
    assert line.startswith(f"tiny-{entry['key']}: tiny's code changed since it was recorded")
    (line,) = stale_entries([{**entry, "code": None}], {"tiny": original})
    assert "without a code fingerprint" in line
    (line,) = stale_entries([entry], {})
    assert "no experiment 'tiny'" in line


def test_stale_on_the_committed_record_lists_nothing(capsys):
    assert main(["stale"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("stale: 0 of ") and "not of the current code" in out


def test_stale_names_an_entry_whose_code_changed(tmp_path, monkeypatch, capsys):
    (source,) = record.REPO_RESULTS.glob("layernorm_parity-*.json")
    copy = tmp_path / source.name
    text = source.read_text()
    start = text.index('"code": "') + len('"code": "')
    copy.write_text(text[:start] + "0000000000000000" + text[start + 16 :])
    monkeypatch.setenv("LNPAPER_RECORD_DIR", str(tmp_path))
    assert main(["stale"]) == 1
    out = capsys.readouterr().out
    assert f"{source.stem}: layernorm_parity's code changed" in out
    assert "stale: 1 of 1 entries" in out
