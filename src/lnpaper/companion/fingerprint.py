"""A fingerprint of an experiment's code, stored in each record entry, so that an entry whose code
changed since it was recorded shows in seconds (`python -m lnpaper stale`), not only in the
reproduction check's recompute of everything.

What it covers: the experiment's function and the lnpaper code it names, followed name by name
(and through a module's attributes, `variants.eps_outside_sqrt`) in each function's own module:
the functions and classes of the chapters and of the library below them (norms, models, data,
training loops, ...), their methods, and the module-level constants those modules define. Each is
taken as its syntax tree without docstrings, and wherever it lives, so that moving code between
modules keeps the fingerprint, while a changed body, default, method, helper or constant changes
it; a reworded docstring, a comment or a reformatting does not. What it does not cover: the
companion (the record that routes a call, its decorator) and the progress bars, which run around
an experiment and never change its result; and code outside lnpaper (torch, numpy), whose versions
each entry records.
"""

import ast
import functools
import hashlib
import inspect
import sys
import textwrap

from lnpaper.source import is_docstring

PACKAGE = "lnpaper."
# Code that runs around an experiment without changing its result: following it would mark every
# entry stale whenever the record's own code changed.
NOT_FOLLOWED = ("lnpaper.companion", "lnpaper.progress")
_ABSENT = object()  # a name a namespace does not hold


def _canonical(node) -> str:
    """A syntax tree as text that every Python from 3.11 on writes alike: ast.dump does not (3.13
    leaves out empty lists and None fields, 3.12 adds type_params), so neither does this."""
    if isinstance(node, ast.AST):
        fields = [
            f"{name}={_canonical(value)}"
            for name, value in ast.iter_fields(node)
            if value is not None and value != []
        ]
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return f"[{', '.join(_canonical(item) for item in node)}]"
    return repr(node)


def _without_docstrings(node: ast.AST) -> ast.AST:
    for item in ast.walk(node):
        body = getattr(item, "body", None)
        if (
            isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
            and body
            and is_docstring(body[0])
        ):
            item.body = body[1:] or [ast.Pass()]
    return node


@functools.cache
def _assignments(module_name: str) -> dict[str, list[str]]:
    """The top-level assignments of a module, as source text, by the names they bind."""
    found: dict[str, list[str]] = {}
    for statement in ast.parse(inspect.getsource(sys.modules[module_name])).body:
        if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for name in {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}:
                found.setdefault(name, []).append(ast.unparse(statement))
    return found


def _followed(module_name: str) -> bool:
    """Whether the fingerprint follows names into the module `module_name`."""
    outside = any(
        module_name == name or module_name.startswith(f"{name}.") for name in NOT_FOLLOWED
    )
    return module_name.startswith(PACKAGE) and not outside


def _names(tree: ast.AST) -> list[str]:
    return sorted({item.id for item in ast.walk(tree) if isinstance(item, ast.Name)})


def _attributes(tree: ast.AST) -> list[tuple[str, str]]:
    """(name, attribute) for every `name.attribute` in the tree: a module's function or constant
    reached through the module (`variants.eps_outside_sqrt`)."""
    return sorted(
        {
            (item.value.id, item.attr)
            for item in ast.walk(tree)
            if isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name)
        }
    )


def _constant_source(name: str, value, modules) -> tuple[list[str], dict] | None:
    """The assignments that define `name` in the followed module that holds `value` under it, and
    that module's namespace (in which their names are read)."""
    for module_name in modules:
        module = sys.modules.get(module_name)
        if module is not None and module.__dict__.get(name, _ABSENT) is value:
            statements = _assignments(module_name).get(name)
            if statements:
                return statements, vars(module)
    return None


@functools.cache
def _code_part(item) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """A function's or class's syntax tree without docstrings, as text, with the names and the
    `name.attribute` pairs it uses: read once per process (a class's source is found by parsing
    its whole module)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(item))).body[0]
    return _canonical(_without_docstrings(tree)), tuple(_names(tree)), tuple(_attributes(tree))


def _parts(fn) -> list[str]:
    """The syntax trees (as text) of `fn` and of the lnpaper code it reaches, in a fixed order."""
    followed = sorted(m for m in sys.modules if _followed(m))
    parts, seen = [], set()
    pending = [(inspect.unwrap(fn), None)]
    while pending:
        item, name = pending.pop()
        if inspect.isfunction(item) or inspect.isclass(item):
            if item in seen:
                continue
            seen.add(item)
            text, names, attributes = _code_part(item)
            scope = (
                item.__globals__ if inspect.isfunction(item) else vars(sys.modules[item.__module__])
            )
        else:  # a constant: its defining statements, read in the namespace of their module
            if (name, id(item)) in seen:
                continue
            seen.add((name, id(item)))
            found = _constant_source(name, item, followed)
            if found is None:
                continue
            statements, scope = found
            tree = ast.parse("\n".join(statements))
            text, names, attributes = _canonical(tree), _names(tree), _attributes(tree)
        parts.append(text)
        reached = [(name, scope.get(name, _ABSENT)) for name in names]
        for name, attribute in attributes:
            module = scope.get(name)
            if inspect.ismodule(module) and _followed(module.__name__):
                reached.append((attribute, getattr(module, attribute, _ABSENT)))
        for name, value in reversed(reached):
            if value is _ABSENT or inspect.ismodule(value) or inspect.isbuiltin(value):
                continue
            target = inspect.unwrap(value) if callable(value) else value
            if inspect.isfunction(target) or inspect.isclass(target):
                if _followed(target.__module__ or ""):
                    pending.append((target, name))
            elif not callable(value):
                pending.append((value, name))
    return parts


def code_fingerprint(fn) -> str:
    """16 hex digits of a hash of `fn`'s code and the lnpaper code it reaches (see above)."""
    return hashlib.sha256("\n".join(_parts(fn)).encode()).hexdigest()[:16]


def stale_entries(entries: list[dict], experiments: dict) -> list[str]:
    """One line per entry whose experiment's code is not the code it was recorded with: changed,
    not fingerprinted, or no longer an experiment. `experiments` maps names to functions."""
    lines = []
    fingerprints = {}
    for entry in entries:
        name, where = entry["experiment"], f"{entry['experiment']}-{entry['key']}"
        if name not in experiments:
            lines.append(f"{where}: no experiment {name!r} in the book")
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
