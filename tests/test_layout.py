"""The package's layers, as `src/lnpaper/chapters/__init__.py` states them, checked on every import
statement (function-level ones included):

- chapter N imports only chapters 1..N, never the registries and commands above it;
- the companion (record, registries, verdicts, style) imports no chapter, and the library (norms,
  models, data, train, stats, ...) neither a chapter nor the companion;
- within the chapters, data flows one way: runs, then analysis, then claims and figures;
- and no module imports, at any remove, one that imports it back.
"""

import ast
from pathlib import Path

import pytest

from lnpaper import chapters

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "lnpaper"
# The registries and commands at the top: they may import anything, and nothing below may import them.
TOP = {
    "lnpaper",
    "lnpaper.__main__",
    "lnpaper.chapters",
    "lnpaper.claims",
    "lnpaper.count_work",
    "lnpaper.demos",  # notebooks' sliders: experiments' bodies redrawn live (issue 23)
    "lnpaper.experiments",
    "lnpaper.figures",
    "lnpaper.ledger",
    "lnpaper.recompute",
    "lnpaper.registered",
    "lnpaper.reproduce",
    "lnpaper.reproduce_compare",
    "lnpaper.reproduce_report",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """The lnpaper modules `path` imports (for `from a import b`, both `a` and `a.b`, since b may be
    a submodule)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name == "lnpaper" or name.startswith("lnpaper.")}


def layer(module: str) -> tuple[str, int]:
    """('top', 0), ('chapter', N), ('companion', 0) or ('library', 0)."""
    if module in TOP:
        return "top", 0
    parts = module.split(".")
    if parts[1] == "chapters":
        return "chapter", chapters.CHAPTERS.index(parts[2]) + 1
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
        if (
            parts[:2] == ["lnpaper", "chapters"]
            and len(parts) > 2
            and parts[2] not in chapters.CHAPTERS
        ):
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
# their analysis, then the claims and figures that read it; each module's kind is its chapter's
# manifest's (`PARTS`).
STAGES = {"library": 0, "runs": 1, "analysis": 2, "claims": 3, "figures": 3}


def stage(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 4:
        return 0
    manifest = chapters.parts(parts[2])
    kind = next((kind for kind, names in manifest.items() if parts[3] in names), None)
    if kind is None:  # a name the manifest lacks (the tests' own examples): read from its prefix
        kind = parts[3].split("_")[0]
    return STAGES.get(kind, 0)


def test_each_chapters_manifest_lists_exactly_its_modules():
    for chapter in chapters.CHAPTERS:
        listed = sorted(name for names in chapters.parts(chapter).values() for name in names)
        on_disk = sorted(
            path.stem
            for path in (PACKAGE / "chapters" / chapter).glob("*.py")
            if path.stem != "__init__"
        )
        assert listed == on_disk, chapter
        assert set(chapters.parts(chapter)) == set(chapters.KINDS), chapter


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
        ("lnpaper.chapters.ch06_transformer.figures", "lnpaper.experiments", "a view"),
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
            "lnpaper.companion.registry",
            "lnpaper.models.transformer",
        },
    )


def test_every_chapter_package_is_listed_in_book_order():
    on_disk = sorted(
        path.name for path in (PACKAGE / "chapters").iterdir() if path.name.startswith("ch")
    )
    assert list(chapters.CHAPTERS) == on_disk
    assert all(
        (PACKAGE / "chapters" / chapter / "runs.py").exists() for chapter in chapters.CHAPTERS
    )


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
