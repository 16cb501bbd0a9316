"""The method's code on a notebook's page: a function's source as the package runs it, so the page
cannot drift from the code, without its docstring (the notebook's own text explains it)."""

import ast
import inspect
import textwrap


def is_docstring(statement: ast.stmt) -> bool:
    """Whether `statement`, the first of a body, is that body's docstring."""
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def code(function) -> str:
    """`function`'s source, dedented, with its docstring left out."""
    source = textwrap.dedent(inspect.getsource(function))
    body = ast.parse(source).body[0].body
    first = body[0]
    if not is_docstring(first) or len(body) == 1:
        return source.rstrip("\n")
    lines = source.splitlines()
    del lines[first.lineno - 1 : first.end_lineno]
    return "\n".join(lines)


def lines(function, *needles: str) -> str:
    """The lines of `function`'s source that hold one of `needles`, stripped: the line of a formula
    inside a longer function."""
    found = [line.strip() for line in inspect.getsource(function).splitlines()
             if any(needle in line for needle in needles)]  # fmt: skip
    if not found:
        raise ValueError(f"no line of {function.__qualname__} holds any of {needles}")
    return "\n".join(found)


def excerpt(function, start: str, stop: str) -> str:
    """`function`'s source from the first line holding `start` up to, not including, the next line
    holding `stop`, dedented: one branch of a longer function."""
    source = inspect.getsource(function).splitlines()
    first = next((k for k, line in enumerate(source) if start in line), None)
    if first is None:
        raise ValueError(f"no line of {function.__qualname__} holds {start!r}")
    last = next((k for k in range(first + 1, len(source)) if stop in source[k]), len(source))
    return textwrap.dedent("\n".join(source[first:last])).rstrip("\n")
