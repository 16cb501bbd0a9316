"""The code fingerprint each record entry stores, and `python -m lnpaper stale`: an edited body, a
helper or constant it uses, changes it; a docstring, a comment or a reformatting does not."""

import ast
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


@pytest.fixture
def load(tmp_path, monkeypatch):
    return lambda text, name: _load(tmp_path, monkeypatch, text, name)


def _load(tmp_path, monkeypatch, text: str, name: str, package: str = "lnpaper.chapters"):
    """`text` as a fresh module of `package` (a new name each time: the fingerprint reads a module
    once; and it follows names into lnpaper's modules only)."""
    name = f"{package}.fingerprint_test_{name}_{next(LOADED)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
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
def test_a_change_to_what_the_experiment_runs_changes_its_fingerprint(load, what):
    old, new = {**EDITS, **HARMLESS}[what]
    assert old in BODY
    before = code_fingerprint(load(BODY, "fp_before").tiny)
    after = code_fingerprint(load(BODY.replace(old, new), "fp_after").tiny)
    assert (before != after) == (what in EDITS), what


def test_stale_lists_an_entry_after_its_experiments_body_is_edited(load):
    original = load(BODY, "fp_recorded").tiny
    entry = record.compute("tiny", original, {"n": 3})
    assert entry["code"] == code_fingerprint(original)
    assert stale_entries([entry], {"tiny": original}) == []
    edited = load(BODY.replace("n: int = 3", "n: int = 5"), "fp_edited").tiny
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


def test_code_moved_to_another_chapter_module_keeps_the_fingerprint(load):
    whole = load(BODY, "whole").tiny
    helpers = load(BODY.split("def tiny")[0], "helpers")
    experiment = (
        BODY.split("def unrelated")[0].split("SCALE = 2.0")[0]
        + "def tiny"
        + BODY.split("def tiny")[1]
    )
    moved = load(f"from {helpers.__name__} import SCALE, helper\n" + experiment, "moved").tiny
    assert code_fingerprint(moved) == code_fingerprint(whole)
    edited_helpers = load(BODY.split("def tiny")[0].replace("SCALE = 2.0", "SCALE = 3.0"), "edited")
    edited = load(f"from {edited_helpers.__name__} import SCALE, helper\n" + experiment, "e").tiny
    assert code_fingerprint(edited) != code_fingerprint(whole)


def test_code_reached_through_a_chapter_modules_attribute_is_covered(load):
    helpers = BODY.split("def unrelated")[0]
    experiment = "def tiny(*, n: int = 3):\n    return [shared.helper(i) for i in range(n)]\n"
    fingerprints = []
    for scale in ("2.0", "3.0"):
        module = load(helpers.replace("SCALE = 2.0", f"SCALE = {scale}"), "shared")
        user = load(f"import {module.__name__} as shared\n\n" + experiment, "user")
        fingerprints.append(code_fingerprint(user.tiny))
    assert fingerprints[0] != fingerprints[1]  # the constant the helper reads changed


@pytest.mark.parametrize(
    ("package", "covered"),
    [
        ("lnpaper.models", True),
        ("lnpaper", True),
        ("lnpaper.companion", False),
        ("elsewhere", False),
    ],
)
def test_library_code_the_experiment_reaches_is_covered_the_companion_not(
    tmp_path, monkeypatch, load, package, covered
):
    """A helper or constant of the library below the chapters changes the fingerprint; the
    companion's code, which routes a call without changing its result, and code outside lnpaper
    do not."""
    helpers = BODY.split("def unrelated")[0]
    experiment = "def tiny(*, n: int = 3):\n    return [helper(i) for i in range(n)]\n"
    fingerprints = []
    for scale in ("2.0", "3.0"):
        text = helpers.replace("SCALE = 2.0", f"SCALE = {scale}")
        library = _load(tmp_path, monkeypatch, text, "library", package)
        user = load(f"from {library.__name__} import helper\n\n" + experiment, "library_user")
        fingerprints.append(code_fingerprint(user.tiny))
    assert (fingerprints[0] != fingerprints[1]) == covered


def test_the_fingerprints_text_is_the_same_on_every_python():
    # ast.dump writes empty lists and None fields on 3.11 and leaves them out on 3.13, and 3.12
    # adds fields; the fingerprint's text leaves them out on every version.
    from lnpaper.companion.fingerprint import _canonical

    tree = ast.parse("def f(x=1, *, y: int | None = None):\n    return x")
    assert _canonical(tree) == (
        "Module(body=[FunctionDef(name='f', args=arguments(args=[arg(arg='x')], "
        "kwonlyargs=[arg(arg='y', annotation=BinOp(left=Name(id='int', ctx=Load()), op=BitOr(), "
        "right=Constant()))], kw_defaults=[Constant()], "
        "defaults=[Constant(value=1)]), body=[Return(value=Name(id='x', ctx=Load()))])])"
    )
