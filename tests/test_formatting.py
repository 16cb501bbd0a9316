"""How numbers are written: significant digits, an arm's median and range, differences in points
and as ratios, learning rates, counts per seed and powers of ten."""

import math

import pytest

from lnpaper import stats
from lnpaper.formatting import (
    event_counts_text,
    median_text,
    points_text,
    power_of_ten,
    rates_text,
    ratio_text,
    significant,
)


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


def test_points_text_is_percentage_points_with_a_sign():
    accuracy = stats.paired_difference([0.90, 0.92, 0.91], [0.88, 0.90, 0.90])
    assert points_text(accuracy).endswith(" pp")
    assert points_text(accuracy).startswith("+1.7 [")


def test_ratio_text_is_the_geometric_mean_ratio_with_its_interval():
    halved = stats.paired_difference(
        [math.log(0.5 * k) for k in (1, 2, 4)], [math.log(k) for k in (1, 2, 3.9)]
    )
    mean, bracket = ratio_text(halved).split("x ", 1)
    assert float(mean) == pytest.approx(math.exp(halved.mean), rel=0.01)
    low, high = (float(v) for v in bracket.strip("[]").split(", "))
    assert low < float(mean) < high
    assert (
        ratio_text(stats.paired_difference([math.log(150.0)] * 2, [0.0, 0.0])) == "150x [150, 150]"
    )


def test_rates_text_names_each_models_rate_in_order():
    summary = {"LSTM": {"lr": 0.01}, "LN-LSTM": {"lr": 0.03}}
    assert rates_text(summary, "LN-LSTM", "LSTM") == "LN-LSTM lr 0.03, LSTM lr 0.01"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.26e-80, "$3 \\times 10^{-80}$"),
        (1.04e-7, "$10^{-7}$"),
        (9.7e-3, "$10^{-2}$"),  # rounds up to the next power
        (260.0, "$3 \\times 10^{2}$"),
    ],
)
def test_power_of_ten_keeps_one_significant_digit(value, text):
    assert power_of_ten(value) == text
