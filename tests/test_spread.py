import math

import pytest

from lnpaper.spread import mean_sd, mean_sd_text


def test_sd_is_the_sample_standard_deviation():
    mean, sd = mean_sd([1.0, 2.0, 4.0])
    assert mean == pytest.approx(7 / 3)
    assert sd == pytest.approx(
        math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2)
    )
    assert mean_sd([5.0]) == (5.0, 0.0)


def test_empty_input_is_an_error():
    with pytest.raises(ValueError, match="at least one"):
        mean_sd([])


def test_text_counts_diverged_runs_without_averaging_them():
    assert mean_sd_text([1.0, None, 3.0]) == "2.0 +- 1.4 (1 diverged)"
    assert mean_sd_text([390.1234, None, None]) == "390.1 (2 diverged)"
    assert mean_sd_text([None, None]) == "all 2 diverged"


def test_text_rounds_to_the_precision_of_the_spread():
    assert mean_sd_text([2.766, 2.759, 2.754]) == "2.7597 +- 0.0060"
    assert mean_sd_text([203.6, 13.2, 255.4]) == "157 +- 128"
    assert mean_sd_text([1.5, 1.5]) == "1.500 +- 0.000"
