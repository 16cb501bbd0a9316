"""How numbers are written: significant digits, an arm's median and range, counts per seed."""

import math

import pytest

from lnpaper.formatting import event_counts_text, median_text, significant


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.4, "2.40"),
        (2.314, "2.31"),
        (12345.0, "12300"),
        (999_999.0, "1000000"),
        (9.996, "10.0"),
        (0.00123456, "0.00123"),
        (-0.5, "-0.500"),
        (0.0, "0"),
        (1e-5, "1e-05"),
        (2.5e7, "2.5e+07"),
    ],
)
def test_significant(value, text):
    assert significant(value) == text


def test_median_text():
    assert median_text([2.31, 2.28, 2.40]) == "median 2.31 (2.28-2.40)"
    runs = [2.31, None, 2.28, math.inf, 2.40, 2.35, math.nan, 2.30, 2.33, 2.29]
    assert median_text(runs) == "median 2.31 (2.28-2.40), 3 of 10 diverged"
    assert median_text([None] * 10) == "all 10 diverged"
    assert median_text([-0.52, -0.5, -0.4], digits=2) == "median -0.50 (-0.52 to -0.40)"
    with pytest.raises(ValueError, match="at least one run"):
        median_text([])


def test_event_counts_text_counts_each_seed_once():
    assert (
        event_counts_text([0, 2, 1, 3], [1, 2, 4, 0])
        == "fewer in 2, more in 1, tied in 1 of 4 seeds"
    )
    with pytest.raises(ValueError):
        event_counts_text([0, 1], [0])
