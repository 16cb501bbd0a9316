"""lnpaper.source.code: what a notebook prints as the method's code."""

import pytest

from lnpaper import bench, norms
from lnpaper.source import code


def _documented(x):
    """A docstring
    over two lines."""
    return x + 1  # the body


def _bare(x):
    return x - 1


def test_the_docstring_is_left_out_and_the_body_kept():
    assert code(_documented) == "def _documented(x):\n    return x + 1  # the body"
    assert code(_bare) == "def _bare(x):\n    return x - 1"


def test_a_method_is_dedented_and_its_code_unchanged():
    text = code(norms.DyT.forward)
    assert text.startswith("def forward(")
    assert '"""' not in text
    assert "    n = a.shape[-1]\n" in code(bench.fewest_pass_norm)


def test_lines_and_excerpt_read_the_code_as_it_stands():
    from lnpaper.source import excerpt, lines

    assert lines(_documented, "x + 1", "missing") == "return x + 1  # the body"
    assert excerpt(_documented, "A docstring", "return") == '"""A docstring\nover two lines."""'
    assert excerpt(_bare, "return", "never there") == "return x - 1"
    for call in (lambda: lines(_bare, "absent"), lambda: excerpt(_bare, "absent", "x")):
        with pytest.raises(ValueError, match="_bare"):
            call()
