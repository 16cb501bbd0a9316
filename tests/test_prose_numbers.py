"""Prose that cannot drift from its numbers: every decimal in a notebook's markdown appears in that
notebook's printed outputs, its code, or its claims' lines in CLAIMS.md (at the prose's precision),
or is marked below as a value the prose takes from elsewhere: a source's number, arithmetic the
sentence itself states, or another notebook's output (checked there)."""

import json
import re
from decimal import Decimal

import pytest
from test_prose import NOTEBOOKS, ROOT, markdown_cells

DECIMAL = re.compile(r"(?<![\w.:/-])\d+\.\d+(?![\w.])")
PRINTED = re.compile(r"\d+\.\d+(?:e[+-]?\d+)?")
# Not measurements: arXiv identifiers, section and equation numbers, versions.
NOT_A_VALUE = re.compile(r"arXiv:\d+\.\d+|(Sec\.|Section|Eqs?\.|Table|Fig\.|torch|Python) \d+\.\d+")
ANOTHER_NOTEBOOK = "notebook "  # a mark "notebook 06_the_transformer": printed there

# notebook -> decimal -> where the prose takes it from, when not from this notebook's outputs
MARKED = {
    "01_why_batchnorm_fails": {
        "90.2": "Cooijmans et al. 2017, permuted MNIST test accuracy, LSTM",
        "95.4": "Cooijmans et al. 2017, permuted MNIST test accuracy, BN-LSTM",
    },
    "02_the_transpose": {
        "0.003": "sqrt(1e-5), nn.LayerNorm's eps, as the sentence says",
        "0.8": "1 - sqrt(63/64), the sentence's own arithmetic at H = 64",
        "0.05": "1 - sqrt(1023/1024), the sentence's own arithmetic at H = 1024",
    },
    "03_layernorm_in_rnns": {
        "6.6": "the LN RNN's growth per step printed above (1.066), as a percentage",
    },
    "07_rmsnorm_and_placement": {
        "8.5": "the estimate's sd printed above, 0.0849, as a percentage",
        "2.75": "the synthetic language's unigram level (CLAIMS.md, the words)",
    },
    "10_what_the_norm_computes": {
        "0.995": "erf(2), the sentence's own arithmetic",
        "1.3": "tokens per parameter at step 260: 260 x 256 tokens over the 52,432 parameters",
        "0.17": "notebook 06_the_transformer",
        "0.14": "notebook 06_the_transformer",
    },
}


def prose_decimals(markdown: str) -> list[str]:
    text = re.sub(r"\]\([^)]*\)", "]", markdown)  # link targets are addresses, not values
    return DECIMAL.findall(NOT_A_VALUE.sub("", text))


def printed_texts(stem: str) -> list[str]:
    """A notebook's code and its stored outputs, and its claims' sections of CLAIMS.md."""
    notebook = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())
    texts = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        texts.append("".join(cell["source"]))
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            texts.append("".join(output.get("data", {}).get("text/plain", "")))
    ledger = (ROOT / "CLAIMS.md").read_text().split("\n### ")[1:]
    texts += [section for section in ledger if f"notebooks/{stem}.ipynb" in section]
    return texts


def shown_in(value: str, texts: list[str]) -> bool:
    """`value` is printed as written, or a printed decimal with more digits rounds to it (allowing
    for the printed one's own rounding: +2.015 may stand for 2.0149, which a prose 2.01 rounds)."""
    places = len(value.split(".")[1])
    target, step = Decimal(value), Decimal(1).scaleb(-places)
    for text in texts:
        for token in PRINTED.findall(text):
            printed = Decimal(token)  # 9.3e-01 is 0.93, to two places
            digits = -printed.as_tuple().exponent
            if printed == target and digits == places:
                return True
            if digits > places and abs(printed - target) <= (step + Decimal(1).scaleb(-digits)) / 2:
                return True
    return False


def test_the_matcher_allows_rounding_and_nothing_more():
    texts = ["loss +2.015 [+1.9, +2.484]", "ratio 0.0849"]
    assert shown_in("2.01", texts) and shown_in("2.02", texts) and shown_in("2.48", texts)
    assert shown_in("0.085", texts) and shown_in("1.9", texts)
    assert not shown_in("2.03", texts) and not shown_in("2.6", texts)
    assert shown_in("0.93", ["folded 9.3e-01"]) and not shown_in("0.94", ["9.3e-01"])
    assert not shown_in("0.09", ["0.0849"]) and shown_in("0.08", ["0.0849"])
    assert prose_decimals("Sec. 6.6 and arXiv:2305.14858 give [it](x/1.5.html) 0.25 of 1.5") == [
        "0.25",
        "1.5",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_decimal_in_the_prose_is_printed_or_marked(path):
    texts = printed_texts(path.stem)
    marked = MARKED.get(path.stem, {})
    unshown = [
        value
        for cell in markdown_cells(path.read_text())
        for value in prose_decimals(cell)
        if value not in marked and not shown_in(value, texts)
    ]
    assert not unshown, (
        f"{path.stem}: decimals in the prose that no output, code cell or claim line of the "
        f"notebook shows: {unshown}; print them, cut them, or mark where they come from"
    )


@pytest.mark.parametrize("stem", sorted(MARKED))
def test_each_mark_is_used_and_another_notebooks_value_is_printed_there(stem):
    prose = [v for cell in markdown_cells((ROOT / "notebooks" / f"{stem}.py").read_text())
             for v in prose_decimals(cell)]  # fmt: skip
    for value, origin in MARKED[stem].items():
        assert value in prose, f"{stem}: {value} is marked but no longer in the prose"
        if origin.startswith(ANOTHER_NOTEBOOK):
            other = origin.removeprefix(ANOTHER_NOTEBOOK)
            assert shown_in(value, printed_texts(other)), (
                f"{stem}: {value} is not printed in {other}"
            )
