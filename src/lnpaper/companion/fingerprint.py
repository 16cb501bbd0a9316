"""A fingerprint of an experiment's code, stored in each record entry, so that an entry whose code
changed since it was recorded shows in seconds (`python -m lnpaper stale`), not only in the
reproduction check's recompute of everything.

What it covers: the experiment's function and every function, class and constant of its own module
that the function names, and that those name in turn, each as its syntax tree without docstrings.
So a changed body, default, helper or constant in the chapter's module changes it; a reworded
docstring, a comment or a reformatting does not. What it does not cover: code in other modules (the
library's norms, models and training loops, another chapter's helpers). Those are checked by their
unit tests and, for their effect on results, by the reproduction check.
"""

import ast
import functools
import hashlib
import inspect
import sys
import textwrap


def _without_docstrings(node: ast.AST) -> ast.AST:
    for item in ast.walk(node):
        body = getattr(item, "body", None)
        if (
            isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            item.body = body[1:] or [ast.Pass()]
    return node


@functools.cache
def _module_definitions(module_name: str) -> dict[str, list[ast.stmt]]:
    """The top-level statements of a module by the names they define."""
    source = inspect.getsource(sys.modules[module_name])
    found: dict[str, list[ast.stmt]] = {}
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [statement.name]
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            continue
        for name in names:
            found.setdefault(name, []).append(statement)
    return found


def _names(node: ast.AST) -> set[str]:
    return {item.id for item in ast.walk(node) if isinstance(item, ast.Name)}


def code_fingerprint(fn) -> str:
    """16 hex digits of a hash of `fn`'s code and what it names in its own module (see above)."""
    fn = inspect.unwrap(fn)
    own = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    definitions = _module_definitions(fn.__module__)
    seen, pending, parts = {fn.__name__}, sorted(_names(own)), [own]
    while pending:
        name = pending.pop()
        if name in seen or name not in definitions:
            continue
        seen.add(name)
        for statement in definitions[name]:
            parts.append(statement)
            pending.extend(sorted(_names(statement) - seen))
    text = "\n".join(ast.dump(_without_docstrings(_copy(part))) for part in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _copy(node: ast.AST) -> ast.AST:
    """A fresh tree (the cached module's trees are shared; stripping docstrings edits in place)."""
    return ast.parse(ast.unparse(node)).body[0]


def stale_entries(entries: list[dict], experiments: dict) -> list[str]:
    """One line per entry whose experiment's code is not the code it was recorded with: changed,
    not fingerprinted, or no longer an experiment. `experiments` maps names to functions."""
    lines = []
    fingerprints = {}
    for entry in entries:
        name, where = entry["experiment"], f"{entry['experiment']}-{entry['key']}"
        if name not in experiments:
            lines.append(f"{where}: no experiment {name!r} is registered")
            continue
        if name not in fingerprints:
            fingerprints[name] = code_fingerprint(experiments[name])
        recorded = entry.get("code")
        if recorded is None:
            lines.append(f"{where}: recorded without a code fingerprint")
        elif recorded != fingerprints[name]:
            lines.append(
                f"{where}: {name}'s code changed since it was recorded "
                f"(fingerprint {recorded}, now {fingerprints[name]})"
            )
    return lines
