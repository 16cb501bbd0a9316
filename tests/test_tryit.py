"""lnpaper.tryit: the meaning line of each band, the rounding, refused input; and every notebook's Try
it cell, uncommented, compiles and prints through tryit (the cheapest two run live)."""

import ast
import builtins
import math
import re
from pathlib import Path

import jupytext
import pytest

from lnpaper import tryit
from lnpaper.vocabulary import NEGLIGIBLE_NATS

LEVELS = tryit.LM_LEVELS
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def meaning(report: str) -> str:
    return report.splitlines()[-1].split("meaning", 1)[1].strip()


def lm(loss) -> str:
    return meaning(tryit.language_model([loss], [2.0], "the recorded call"))


# ---- the language models' bands ----------------------------------------------------------------


def test_just_below_the_unigram_level_is_at_it_learned_nothing():
    assert lm(LEVELS["unigram"] - 0.99 * NEGLIGIBLE_NATS).startswith("at the unigram level")
    assert "learned nothing" in lm(LEVELS["uniform"] + 0.5)  # above uniform: the same band


def test_between_unigram_and_bigram():
    for loss in (LEVELS["unigram"] - 1.01 * NEGLIGIBLE_NATS, LEVELS["bigram"] + 1e-6):
        assert lm(loss).startswith("between unigram and bigram"), loss


def test_below_bigram_learned_more_than_the_previous_token():
    for loss in (LEVELS["bigram"] - 1e-6, LEVELS["floor"] + 1.01 * tryit.NEAR_FLOOR):
        assert lm(loss).startswith("below the bigram level"), loss


def test_near_the_floor():
    for loss in (LEVELS["floor"] + 0.99 * tryit.NEAR_FLOOR, LEVELS["floor"] - 0.01):
        assert lm(loss).startswith("near the floor"), loss


def test_a_run_that_diverged_makes_the_meaning_diverged():
    for bad in (None, math.nan, math.inf):
        report = tryit.language_model([1.5, bad], [2.0, 2.1], "the recorded call")
        assert meaning(report).startswith("diverged")
        assert "1.5, diverged (mean 1.5 of the 1 of 2 runs that did not diverge)" in report
    assert lm(None).startswith("diverged")


# ---- the digits' bands -------------------------------------------------------------------------


def test_digits_at_chance():
    at = tryit.CHANCE + 0.99 * tryit.AT_CHANCE_POINTS
    assert meaning(tryit.digits([at], [0.95], "c")).startswith("at chance")
    nll = tryit.UNIFORM_NLL - 0.99 * NEGLIGIBLE_NATS
    assert meaning(tryit.digits([nll], [0.1], "c", quantity="nll")).startswith("at the uniform")


def test_digits_above_chance():
    above = tryit.CHANCE + 1.01 * tryit.AT_CHANCE_POINTS
    assert meaning(tryit.digits([above], [0.95], "c")).startswith("above chance")
    nll = tryit.UNIFORM_NLL - 1.01 * NEGLIGIBLE_NATS
    assert meaning(tryit.digits([nll], [0.1], "c", quantity="nll")).startswith("below the uniform")


def test_digits_diverged():
    assert meaning(tryit.digits([math.nan], [0.1], "c", quantity="nll")).startswith("diverged")


# ---- a quantity with no level, against the recorded value --------------------------------------


def compare(yours, recorded, **options) -> str:
    words = dict(quantity="a gap", larger="LARGER", smaller="SMALLER", same="SAME")
    return meaning(tryit.compared(yours, recorded, "c", **words | options))


def test_compared_larger_smaller_and_about_the_same():
    assert compare([1.11], [1.0]) == "larger than recorded: LARGER"  # just past 10%
    assert compare([0.89], [1.0]) == "smaller than recorded: SMALLER"
    assert compare([1.09], [1.0]) == "about the recorded (within 0.1): SAME"


def test_compared_in_nats_is_about_the_same_within_the_negligible_margin():
    assert compare([0.519], [0.5], unit="nats").startswith("about the recorded (within 0.02)")
    assert compare([0.521], [0.5], unit="nats").startswith("larger")
    assert compare([0.499], [0.5], tolerance=0).startswith("smaller")


# ---- what is printed ---------------------------------------------------------------------------


def numbers(text: str) -> list[str]:
    return re.findall(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)


def significant(number: str) -> int:
    mantissa = number.lstrip("+-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


def test_every_printed_number_has_at_most_four_significant_digits():
    reports = [
        tryit.language_model([2.123456789, 2.3456789], [2.1666666, 2.14999], "c"),
        tryit.digits([0.9612345, 0.95], [0.95666666] * 20, "c"),
        tryit.digits([0.0312345], [0.0400001], "c", quantity="nll"),
        tryit.compared(0.33130621, 0.41731106, "c", quantity="q", larger="l", smaller="s"),
        tryit.compared([1.234567e-7], [1e-7], "c", quantity="q", larger="l", smaller="s"),
    ]
    for report in reports:
        assert all(significant(n) <= 4 for n in numbers(report)), report
    assert "2.123, 2.346 (mean 2.235 of 2 runs)" in reports[0]
    assert "recorded    2.158 (mean of 2 runs): c" in reports[0]
    assert "difference  +0.0762 (yours - recorded)" in reports[0]
    assert "levels      uniform 2.773, unigram 2.748, bigram 2.339, floor 0.9422" in reports[0]
    assert "96.12%, 95% (mean 95.56% of 2 runs)" in reports[1]
    assert "difference  -0.105 points" in reports[1]
    assert "levels      chance 10%" in reports[1]
    assert "yours       0.3313\n" in reports[3]


def test_a_report_is_title_yours_recorded_difference_levels_meaning():
    report = tryit.compared(
        [1, 2], [1], "runs.x()", quantity="q", larger="l", smaller="s", zero="z"
    )
    rows = [line.split()[0] for line in report.splitlines()]
    assert rows == ["q", "yours", "recorded", "difference", "levels", "meaning"]
    assert "levels      0 = z" in report


# ---- refused input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name", "value"),
    [
        (lambda: tryit.language_model([], [2.0], "c"), "yours", "[]"),
        (lambda: tryit.language_model([2.0], [], "c"), "recorded", "[]"),
        (lambda: tryit.language_model([2.0], [2.0, math.nan], "c"), "recorded", "nan"),
        (lambda: tryit.digits([0.5], [None], "c"), "recorded", "None"),
        (lambda: tryit.digits([0.5], [0.5], "c", quantity="loss"), "quantity", "'loss'"),
        (lambda: tryit.digits(["high"], [0.5], "c"), "yours", "'high'"),
        (lambda: tryit.compared([math.nan], [1.0], "c", quantity="q", larger="l", smaller="s"),
         "yours", "nan"),
        (lambda: tryit.compared("1.5", [1.0], "c", quantity="q", larger="l", smaller="s"),
         "yours", "'1.5'"),
        (lambda: tryit.compared([1.0], [1.0], "c", quantity="q", larger="l", smaller="s",
                                tolerance=-0.1), "tolerance", "-0.1"),
        (lambda: tryit.digits_meaning(0.5, "loss"), "quantity", "'loss'"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_naming_the_parameter_and_value(call, name, value):
    with pytest.raises(ValueError, match=re.escape(name)) as refused:
        call()
    assert value in str(refused.value)


# ---- the notebooks' Try it cells ---------------------------------------------------------------

# The cheapest two live calls run for real (a few seconds each); the others compile, print through
# tryit, and find every name they use bound earlier in their notebook.
RUN_LIVE = {"03_layernorm_in_rnns", "07_rmsnorm_and_placement"}
TRY_IT = [
    "01_why_batchnorm_fails",
    "03_layernorm_in_rnns",
    "04_batchnorm_against_layernorm",
    "06_the_transformer",
    "07_rmsnorm_and_placement",
    "08_deep_stacks",
    "10_what_the_norm_computes",
]


def code_cells(stem: str) -> list[str]:
    """The notebook's code cells, IPython magics left out."""
    notebook = jupytext.read(NOTEBOOKS / f"{stem}.py")
    return [
        "\n".join(line for line in cell.source.splitlines() if not line.startswith(("%", "!")))
        for cell in notebook.cells
        if cell.cell_type == "code"
    ]


def is_commented_out(source: str) -> bool:
    lines = [line for line in source.splitlines() if line.strip()]
    return bool(lines) and all(line.lstrip().startswith("#") for line in lines)


def uncommented(source: str) -> str:
    """A Try it cell as a reader runs it: its prose lines (up to the one that says "Uncomment")
    dropped, then one "# " taken off every line."""
    lines = source.splitlines()
    prose = [k for k, line in enumerate(lines) if "Uncomment" in line]
    code = lines[prose[0] + 1 :] if prose else lines
    return "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in code)


def scope(node: ast.AST):
    """The nodes of `node`'s own scope: a function inside it is yielded, its body not entered."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        item = stack.pop()
        yield item
        if not isinstance(item, ast.FunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(item))


def binds(node: ast.AST) -> set[str]:
    """Names bound in `node`'s own scope: assigned, imported or defined there."""
    names = set()
    for item in scope(node):
        if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
            names.add(item.id)
        elif isinstance(item, ast.alias):
            names.add((item.asname or item.name).split(".")[0])
        elif isinstance(item, ast.FunctionDef | ast.ClassDef):
            names.add(item.name)
    return names


def bound(statement: ast.stmt) -> set[str]:
    """Names a top-level statement binds (a def its own name, not its parameters or locals)."""
    if isinstance(statement, ast.FunctionDef | ast.ClassDef):
        return {statement.name}
    return binds(statement)


def free(node: ast.AST) -> set[str]:
    """Names a module, function or lambda reads and binds nowhere in it, builtins aside."""
    reads, nested, own = set(), set(), binds(node)
    for item in scope(node):
        if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Load):
            reads.add(item.id)
        elif isinstance(item, ast.FunctionDef | ast.Lambda):
            nested |= free(item)
    if isinstance(node, ast.FunctionDef | ast.Lambda):
        own |= {arg.arg for arg in ast.walk(node.args) if isinstance(arg, ast.arg)}
    return (reads | nested) - own - set(dir(builtins))


def prerequisites(before: list[str], names: set[str]) -> list[ast.stmt]:
    """The top-level statements of the cells `before` that bind `names`, the last binding of each
    before the Try it cell, and what those need in turn, in notebook order."""
    statements = [statement for source in before for statement in ast.parse(source).body]
    chosen, wanted = set(), set(names)
    while wanted:
        name = wanted.pop()
        binders = [k for k, statement in enumerate(statements) if name in bound(statement)]
        assert binders, f"the Try it cell uses {name!r}, which nothing before it binds"
        if binders[-1] not in chosen:
            chosen.add(binders[-1])
            wanted |= free(ast.Module([statements[binders[-1]]], []))
    return [statements[k] for k in sorted(chosen)]


@pytest.mark.slow
@pytest.mark.parametrize("stem", TRY_IT)
def test_each_try_it_cell_uncommented_prints_through_tryit(stem, capsys):
    cells = code_cells(stem)
    found = [k for k, source in enumerate(cells) if is_commented_out(source)]
    assert len(found) == 1, f"{stem}: {len(found)} commented-out cells, one Try it expected"
    code = uncommented(cells[found[0]])
    tree = ast.parse(code)
    compile(tree, f"{stem} Try it", "exec")
    calls = [
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and ast.unparse(node.func.value) == "lnpaper.tryit"
    ]
    assert calls and set(calls) <= {"language_model", "digits", "compared"}, calls
    needed = prerequisites(cells[: found[0]], free(tree))
    if stem not in RUN_LIVE:
        return
    namespace = {}
    exec(compile(ast.Module(needed, type_ignores=[]), f"{stem} setup", "exec"), namespace)
    exec(compile(tree, f"{stem} Try it", "exec"), namespace)
    printed = capsys.readouterr().out
    assert printed.count("  meaning     ") == len(calls), printed
    assert "  recorded    " in printed and "  yours       " in printed


def test_a_cells_free_names_leave_out_what_it_binds():
    tree = ast.parse(
        "def f(result):\n    return g(result) + h\nmine = f(study)\nprint([a for a in x])"
    )
    assert free(tree) == {"g", "h", "study", "x"}


def test_the_readmes_example_prints_through_tryit(capsys):
    readme = (NOTEBOOKS.parent / "README.md").read_text()
    examples = [
        block for block in re.findall(r"```python\n(.*?)```", readme, re.S) if "tryit" in block
    ]
    assert len(examples) == 1, "the README's example of a live call prints through tryit"
    exec(compile(examples[0], "README example", "exec"), {})
    printed = capsys.readouterr().out
    for row in ("  yours       ", "  recorded    ", "  levels      0 = ", "  meaning     "):
        assert row in printed, printed


def test_the_notebooks_with_a_try_it_cell_are_the_seven():
    sources = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
    found = [p.stem for p in sources if any(map(is_commented_out, code_cells(p.stem)))]
    assert found == TRY_IT
