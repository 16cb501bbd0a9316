"""The package's layers, as `src/lnpaper/chapters/__init__.py` states them, checked on every import
statement (function-level ones included):

- chapter N imports only chapters 1..N, never the book and the commands above it;
- the companion (record, chapter, verdicts, style) imports no chapter, and the library (norms,
  models, data, train, stats, ...) neither a chapter nor the companion;
- within the chapters, data flows one way: runs, then analysis, then claims, figures and demos;
- no module imports, at any remove, one that imports it back;
- each chapter's `CHAPTER` lists every experiment, claim and figure its modules define, and no
  module-level table is filled as a module is imported;
- a notebook enters through its own chapter: it imports that chapter and the modules below the
  chapters, nothing else.
"""

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "lnpaper"
NOTEBOOKS = SRC.parent / "notebooks"
CHAPTERS = sorted(
    path.name for path in (PACKAGE / "chapters").iterdir() if path.name.startswith("ch")
)
# The book and the commands at the top: they may import anything, and nothing below may import them.
TOP = {
    "lnpaper",
    "lnpaper.__main__",
    "lnpaper.book",
    "lnpaper.count_work",
    "lnpaper.ledger",
    "lnpaper.recompute",
    "lnpaper.reproduce",
    "lnpaper.reproduce_compare",
    "lnpaper.reproduce_report",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """The lnpaper modules `path` imports (for `from a import b`, `a.b` and, unless b is a module,
    `a`)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            named = [f"{node.module}.{alias.name}" for alias in node.names]
            names.update(named)
            # `from package import module` depends on the module, not on what the package lists
            if not all(_is_module(name) for name in named):
                names.add(node.module)
    return {name for name in names if name == "lnpaper" or name.startswith("lnpaper.")}


def _is_module(name: str) -> bool:
    path = SRC.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def layer(module: str) -> tuple[str, int]:
    """('top', 0), ('chapter', N), ('companion', 0) or ('library', 0)."""
    if module in TOP:
        return "top", 0
    parts = module.split(".")
    if module == "lnpaper.chapters":  # the package's own __init__ imports nothing
        return "library", 0
    if parts[1] == "chapters":
        return "chapter", CHAPTERS.index(parts[2]) + 1
    if parts[1] == "companion":
        return "companion", 0
    return "library", 0


def offences(module: str, targets: set[str]) -> list[str]:
    kind, number = layer(module)
    found = []
    for target in sorted(targets):
        if target == "lnpaper":
            continue
        parts = target.split(".")
        if parts[:2] == ["lnpaper", "chapters"] and len(parts) > 2 and parts[2] not in CHAPTERS:
            continue  # `from lnpaper.chapters.ch05 import runs` also yields ch05.runs: judged as ch05
        target_kind, target_number = layer(
            ".".join(parts[:3]) if parts[1] == "chapters" else target
        )
        if kind == "top":
            continue
        if target_kind == "top":
            found.append(f"{module} imports {target}, a view above every chapter")
        elif target_kind == "chapter" and kind != "chapter":
            found.append(f"{module} ({kind}) imports the chapter module {target}")
        elif target_kind == "chapter" and target_number > number:
            found.append(f"{module} (chapter {number}) imports {target}, a later chapter")
        elif target_kind == "companion" and kind == "library":
            found.append(f"{module} (library) imports the companion module {target}")
        if kind == "chapter" and target_kind == "chapter" and stage(target) > stage(module):
            found.append(f"{module} imports {target}, a later stage of a chapter's pipeline")
    return found


# A chapter's pipeline, in the order data flows: the code only it teaches, its recorded runs, then
# their analysis, then the claims and figures that read it, then the slider demos that may read any
# of them, then the manifest that lists them all. A module's kind is the first word of its name
# (`runs_lengths` holds runs); a name of no kind (`variants`) is code the chapter teaches.
STAGES = {"runs": 1, "analysis": 2, "claims": 3, "figures": 3, "demos": 4}


def stage(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 3 and parts[1] == "chapters":
        return 5  # the manifest, `CHAPTER`, lists every stage
    if len(parts) < 4:
        return 0
    return STAGES.get(parts[3].split("_")[0], 0)


def test_the_layers_import_only_downwards():
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        problems += offences(module_name(path), imported(path))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("module", "target", "problem"),
    [
        (
            "lnpaper.chapters.ch06_transformer.claims",
            "lnpaper.chapters.ch07_rmsnorm_placement.runs",
            "later",
        ),
        ("lnpaper.chapters.ch06_transformer.figures", "lnpaper.book", "a view"),
        (
            "lnpaper.companion.verdicts",
            "lnpaper.chapters.ch01_why_batchnorm_fails.runs",
            "chapter module",
        ),
        ("lnpaper.stats", "lnpaper.companion.record", "library"),
        (
            "lnpaper.chapters.ch03_layernorm_in_rnns.runs",
            "lnpaper.chapters.ch03_layernorm_in_rnns.analysis",
            "later stage",
        ),
        (
            "lnpaper.chapters.ch03_layernorm_in_rnns.analysis",
            "lnpaper.chapters.ch03_layernorm_in_rnns.figures",
            "later stage",
        ),
        (
            "lnpaper.chapters.ch08_deep_stacks.runs",
            "lnpaper.chapters.ch06_transformer.claims",
            "later stage",
        ),
    ],
)
def test_the_rule_catches_each_kind_of_upward_import(module, target, problem):
    found = offences(module, {target})
    assert len(found) == 1 and problem in found[0]


def test_earlier_chapters_and_the_layers_below_are_allowed():
    assert not offences(
        "lnpaper.chapters.ch09_logits_and_placement.runs",
        {
            "lnpaper.chapters.ch06_transformer.runs",
            "lnpaper.chapters.ch08_deep_stacks.runs",
            "lnpaper.companion.chapter",
            "lnpaper.models.transformer",
        },
    )


def _decorated(path: Path, decorator: str) -> list[str]:
    """The functions of `path` under `@decorator` or `@decorator(...)`."""
    found = []
    for node in ast.parse(path.read_text()).body:
        for item in getattr(node, "decorator_list", []):
            target = item.func if isinstance(item, ast.Call) else item
            if isinstance(target, ast.Name) and target.id == decorator:
                found.append(node.name)
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_lists_everything_its_modules_define(chapter):
    package = importlib.import_module(f"lnpaper.chapters.{chapter}")
    manifest = package.CHAPTER
    folder = PACKAGE / "chapters" / chapter
    defined = {
        "experiments": [
            f"{p.stem}.{n}"
            for p in sorted(folder.glob("*.py"))
            for n in _decorated(p, "experiment")
        ],
        "figures": [
            f"{p.stem}.{n}" for p in sorted(folder.glob("*.py")) for n in _decorated(p, "figure")
        ],
    }
    for kind, names in defined.items():
        listed = [f"{f.__module__.rsplit('.', 1)[1]}.{f.__name__}" for f in getattr(manifest, kind)]
        assert sorted(listed) == sorted(names), (chapter, kind)
    claims = [
        c.id
        for p in sorted(folder.glob("claims*.py"))
        for c in importlib.import_module(f"lnpaper.chapters.{chapter}.{p.stem}").CLAIMS
    ]
    assert sorted(c.id for c in manifest.claims) == sorted(claims)
    assert (NOTEBOOKS / f"{manifest.notebook}.py").exists()


def test_the_book_lists_every_chapter_in_notebook_order():
    from lnpaper.book import BOOK

    notebooks = sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]_*.py"))
    assert [chapter.notebook for chapter in BOOK] == notebooks
    assert len(BOOK) == len(CHAPTERS)


def _decorators() -> set[str]:
    """The names used as decorators anywhere in the package."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            for item in getattr(node, "decorator_list", []):
                target = item.func if isinstance(item, ast.Call) else item
                if isinstance(target, ast.Name):
                    names.add(target.id)
    return names


def test_no_module_level_table_is_filled_by_a_decorator():
    # A decorator that writes into a module-level dict or list makes what a module holds depend on
    # what was imported: the chapters list their parts as values instead.
    decorators = _decorators()
    filled = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        tables = {
            target.id
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AnnAssign)
            and isinstance(node.value, ast.Dict | ast.List | ast.Set | ast.Call)
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        for function in tree.body:
            if not isinstance(function, ast.FunctionDef) or function.name not in decorators:
                continue
            for node in ast.walk(function):
                written = None
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                    written = node.value
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    if node.func.attr in ("append", "update", "setdefault", "add", "extend"):
                        written = node.func.value
                if isinstance(written, ast.Name) and written.id in tables:
                    filled.append(f"{path.relative_to(SRC)}: @{function.name} fills {written.id}")
    assert filled == []


def test_the_table_rule_catches_a_registering_decorator(tmp_path, monkeypatch):
    fake = tmp_path / "lnpaper"
    fake.mkdir()
    (fake / "registering.py").write_text(
        "TABLE = {}\n\n\ndef register(fn):\n    TABLE[fn.__name__] = fn\n    return fn\n\n\n"
        "@register\ndef one():\n    pass\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    with pytest.raises(AssertionError, match="@register fills TABLE"):
        test_no_module_level_table_is_filled_by_a_decorator()


def _notebook_imports(path: Path) -> set[str]:
    text = "\n".join(
        line[2:] if line.startswith("# ") else line for line in path.read_text().splitlines()
    )
    names = set()
    for line in text.splitlines():
        found = re.match(r"\s*from (lnpaper[\w.]*) import (.+)", line) or re.match(
            r"\s*import (lnpaper[\w.]*)", line
        )
        if found:
            names.add(found.group(1))
            if found.lastindex == 2 and found.group(1) in ("lnpaper", "lnpaper.chapters"):
                names.update(f"{found.group(1)}.{n.strip()}" for n in found.group(2).split(","))
    return names


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py")), ids=lambda p: p.stem)
def test_a_notebook_imports_its_own_chapter_and_the_library_only(path):
    number = path.stem[:2]
    own = next(chapter for chapter in CHAPTERS if chapter.startswith(f"ch{number}"))
    problems = []
    for name in sorted(_notebook_imports(path)):
        parts = name.split(".")
        if name in TOP - {"lnpaper"}:
            problems.append(f"{name}: above the chapters")
        elif len(parts) > 2 and parts[1] == "chapters" and parts[2] != own:
            problems.append(f"{name}: another chapter")
    assert problems == [], path.name


def _loaded_by(code: str) -> list[str]:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys\n{code}\nprint(sorted(m for m in sys.modules if m.startswith('lnpaper')))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "LNPAPER_RECORD": "strict"},
    )
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def test_a_library_module_loads_no_more_than_it_needs():
    assert len(_loaded_by("import lnpaper.stats")) <= 3


def test_grading_a_claim_loads_its_chapter_and_the_layers_below_only():
    loaded = _loaded_by(
        "from lnpaper.chapters import ch03_layernorm_in_rnns as ch\nch.CHAPTER.grade('R3')"
    )
    chapters = {name.split(".")[2] for name in loaded if name.startswith("lnpaper.chapters.")}
    assert chapters == {"ch03_layernorm_in_rnns"}
    assert not set(loaded) & (TOP - {"lnpaper"})


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import cycle of `graph` (module -> the modules it imports), once, from its smallest
    module name."""
    found = []

    def walk(path):
        for target in sorted(graph.get(path[-1], ())):
            if target == path[0]:
                found.append(path)
            elif target not in path and target > path[0]:
                walk([*path, target])

    for start in sorted(graph):
        walk([start])
    return found


def test_no_module_imports_one_that_imports_it_back():
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    # `from lnpaper import stats` yields `lnpaper` too: the package's own name is no edge.
    graph = {
        module: {t for t in imported(path) if t in modules and t != "lnpaper" and t != module}
        for module, path in modules.items()
        if module != "lnpaper"
    }
    # function-level imports count: a cycle through one still couples the two modules
    cycles = _cycles(graph)
    assert not cycles, "\n".join(" -> ".join([*c, c[0]]) for c in cycles)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_name_a_module_holds_is_written_in_it():
    # No module fills its namespace at import (`globals().update`): an editor, a type checker and a
    # reader all find `runs.lm_training` where it is defined.
    filled = [
        str(path.relative_to(SRC))
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("globals", "vars", "setattr")
        and (node.func.id != "vars" or not node.args)
        and (node.func.id != "setattr" or _is_module_target(node))
    ]
    assert filled == []


def _is_module_target(node: ast.Call) -> bool:
    """setattr(sys.modules[__name__], ...) writes a module's own names."""
    return bool(node.args) and "__name__" in ast.unparse(node.args[0])


def test_no_source_file_is_over_600_lines():
    # A file past 600 lines mixes more than one thing a reader looks for: split it at its seams.
    long = {
        str(path.relative_to(SRC)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 600
    }
    assert long == {}
