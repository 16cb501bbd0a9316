"""The verdict statistics against hand formulas and scipy, and every way a caller can misuse them."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from lnpaper import stats
from lnpaper.stats import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    Difference,
    better,
    count_diverged,
    count_tolerance,
    matches,
    paired_difference,
    reproduction_tolerance,
)

T_975_3 = 3.182446305284263  # t_{0.975, 3}, the 97.5% quantile of Student's t with 3 dof


def interval(low: float, high: float, n: int = 10) -> Difference:
    """A Difference with the given 95% interval, as paired_difference would report it."""
    se = (high - low) / 2 / scipy_stats.t.ppf(0.975, n - 1)
    return Difference(n, (low + high) / 2, se * math.sqrt(n), se, low, high, "paired t, 95%")


def test_interval_is_the_paired_t_interval_by_hand_and_by_scipy():
    a, b = [3.0, 5.0, 7.0, 9.0], [2.0, 3.0, 4.0, 5.0]  # differences 1, 2, 3, 4
    difference = paired_difference(a, b)
    sd = math.sqrt(5 / 3)  # sum (d - 2.5)^2 / (n - 1) = (2.25 + 0.25 + 0.25 + 2.25) / 3
    se = sd / 2  # sd / sqrt(4)
    assert difference.n == 4
    assert difference.mean == pytest.approx(2.5)
    assert difference.sd == pytest.approx(sd)
    assert difference.se == pytest.approx(se)
    assert difference.low == pytest.approx(2.5 - T_975_3 * se)
    assert difference.high == pytest.approx(2.5 + T_975_3 * se)
    scipy_interval = scipy_stats.ttest_rel(a, b).confidence_interval(0.95)
    assert (difference.low, difference.high) == pytest.approx(
        (scipy_interval.low, scipy_interval.high)
    )
    assert difference.method == "paired t, 95%"


def test_pairing_by_seed_decides_what_unpaired_arms_cannot():
    # Seeds vary a lot (10 to 18) but a beats b by 0.1-0.2 on every seed: the arms' ranges overlap,
    # an unpaired interval straddles 0, the paired one does not.
    a = [10.1, 12.2, 14.0, 16.3, 18.1]
    b = [10.0, 12.0, 13.9, 16.1, 18.0]
    assert min(a) < max(b)
    unpaired = scipy_stats.ttest_ind(a, b).confidence_interval(0.95)
    assert unpaired.low < 0 < unpaired.high
    difference = paired_difference(a, b)
    assert difference.low > 0
    assert better(difference, "higher") == HOLDS


@pytest.mark.parametrize(
    ("low", "high", "direction", "verdict"),
    [
        (-0.3, -0.1, "lower", HOLDS),
        (0.1, 0.3, "lower", FAILS),
        (-0.1, 0.3, "lower", INCONCLUSIVE),
        (-0.2, 0.0, "lower", INCONCLUSIVE),  # touching 0 is not strictly on the claimed side
        (0.1, 0.3, "higher", HOLDS),
        (-0.3, -0.1, "higher", FAILS),
        (-0.3, 0.1, "higher", INCONCLUSIVE),
        (0.0, 0.2, "higher", INCONCLUSIVE),
    ],
)
def test_better(low, high, direction, verdict):
    assert better(interval(low, high), direction) == verdict


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [
        (-0.05, 0.05, HOLDS),
        (0.2, 0.3, FAILS),
        (-0.3, -0.2, FAILS),
        (0.05, 0.2, INCONCLUSIVE),  # straddles +margin
        (-0.2, 0.2, INCONCLUSIVE),  # wider than the margin: no evidence of a match
        (-0.1, 0.05, INCONCLUSIVE),  # touches -margin: not strictly inside
    ],
)
def test_matches(low, high, verdict):
    assert matches(interval(low, high), margin=0.1) == verdict


def test_a_margin_tighter_than_the_seeds_can_resolve_decides_nothing():
    difference = interval(-0.02, 0.04)  # mean +0.01
    assert matches(difference, margin=0.05) == HOLDS
    assert matches(difference, margin=0.03) == INCONCLUSIVE
    assert (
        matches(difference, margin=0.005) == INCONCLUSIVE
    )  # tighter than |mean|, still straddling


def test_text_is_signed_fixed_point_with_the_method_and_n():
    difference = Difference(10, 0.012, 0.011, 0.0035, 0.004, 0.020, "paired t, 95%")
    assert difference.text() == "+0.012 [+0.004, +0.020] (n = 10)"
    assert difference.text(digits=4) == "+0.0120 [+0.0040, +0.0200] (n = 10)"
    assert interval(-0.3, -0.1).text(2) == "-0.20 [-0.30, -0.10] (n = 10)"


def test_equal_differences_give_a_zero_width_interval_not_nan():
    difference = paired_difference([1.0, 2.0, 3.0], [0.5, 1.5, 2.5])
    assert (difference.sd, difference.se) == (0.0, 0.0)
    assert difference.low == difference.mean == difference.high == 0.5
    assert better(difference, "higher") == HOLDS


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0], "a has 3 values and b has 2"),
        ([1.0], [2.0], "at least 2 seeds, got 1"),
        ([], [], "at least 2 seeds, got 0"),
        ([1.0, None, 3.0], [1.0, 2.0, 3.0], r"a\[1\] is None.*count_diverged"),
        ([1.0, 2.0, 3.0], [1.0, 2.0, math.nan], r"b\[2\] is nan"),
        ([1.0, 2.0, 3.0], [math.inf, 2.0, 3.0], r"b\[0\] is inf"),
    ],
)
def test_paired_difference_rejects(a, b, message):
    with pytest.raises(ValueError, match=message):
        paired_difference(a, b)


@pytest.mark.parametrize("direction", ["smaller", "Lower", "", None])
def test_better_rejects_an_unknown_direction(direction):
    with pytest.raises(ValueError, match="direction must be 'lower' or 'higher'"):
        better(interval(0.1, 0.2), direction)


@pytest.mark.parametrize("margin", [0.0, -0.1, math.inf, math.nan])
def test_matches_rejects_a_margin_that_is_not_finite_and_positive(margin):
    with pytest.raises(ValueError, match="margin must be a finite number > 0"):
        matches(interval(-0.01, 0.01), margin)


def test_diverged_runs_are_counted():
    values = [2.0, None, math.nan, 1.0, math.inf, -math.inf, 3.0]
    assert count_diverged(values) == 4
    assert count_diverged([1.0, 2.0]) == 0


def test_reproduction_tolerance_is_k_standard_errors_of_the_difference():
    recorded, now = interval(0.0, 0.3), interval(0.1, 0.5)
    expected = 3 * math.sqrt(recorded.se**2 + now.se**2)
    assert reproduction_tolerance(recorded, now) == pytest.approx(expected)
    assert reproduction_tolerance(recorded, now, k=2.0) == pytest.approx(expected * 2 / 3)


def test_count_tolerance():
    # recorded 3, now 5 of 10: p = 8 / 20 = 0.4, tolerance 3 * sqrt(2 * 10 * 0.4 * 0.6)
    assert count_tolerance(3, 5, 10) == pytest.approx(3 * math.sqrt(4.8))
    assert count_tolerance(5, 3, 10) == count_tolerance(3, 5, 10)
    assert count_tolerance(7, 5, 10) == pytest.approx(count_tolerance(3, 5, 10))  # p <-> 1 - p
    assert count_tolerance(0, 0, 10) == 0.0
    assert count_tolerance(10, 10, 10) == 0.0


@pytest.mark.parametrize(
    ("recorded", "now", "n", "message"),
    [
        (-1, 0, 10, "recorded = -1 is not a count of 0..10"),
        (11, 0, 10, "recorded = 11 is not a count of 0..10"),
        (0, 11, 10, "now = 11 is not a count of 0..10"),
        (0, 0, 0, "n must be at least 1"),
    ],
)
def test_count_tolerance_rejects(recorded, now, n, message):
    with pytest.raises(ValueError, match=message):
        count_tolerance(recorded, now, n)


value = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
pairs = st.lists(st.tuples(value, value), min_size=2, max_size=30)


@given(pairs)
def test_interval_contains_the_mean_and_widens_with_the_confidence(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    difference = paired_difference(a, b)
    assert difference.low <= difference.mean <= difference.high
    if difference.sd == 0:
        assert difference.low == difference.mean == difference.high
        return
    # Ours is scipy's 95% interval, inside its 99% one and around its 90% one.
    tolerance = 1e-9 * (1 + max(abs(x - y) for x, y in pairs))
    paired = scipy_stats.ttest_rel(a, b)
    at_90, at_95, at_99 = (paired.confidence_interval(c) for c in (0.90, 0.95, 0.99))
    assert difference.low == pytest.approx(at_95.low, abs=tolerance)
    assert difference.high == pytest.approx(at_95.high, abs=tolerance)
    assert at_99.low - tolerance <= difference.low <= at_90.low + tolerance
    assert at_90.high - tolerance <= difference.high <= at_99.high + tolerance


def _difference(low, high):
    return stats.Difference(n=10, mean=(low + high) / 2, sd=1.0, se=0.3, low=low, high=high,
                            method="paired t, 95%")  # fmt: skip


@pytest.mark.parametrize(
    ("low", "high", "direction", "expected"),
    [
        (-0.05, 0.01, "lower", stats.HOLDS),  # worse end +0.01 inside the margin 0.02
        (-0.05, 0.03, "lower", stats.INCONCLUSIVE),
        (0.03, 0.05, "lower", stats.FAILS),  # worse by more than the margin for sure
        (-0.01, 0.05, "higher", stats.HOLDS),
        (-0.05, 0.01, "higher", stats.INCONCLUSIVE),
        (-0.05, -0.03, "higher", stats.FAILS),
    ],
)
def test_no_worse_looks_at_the_worse_end_only(low, high, direction, expected):
    assert stats.no_worse(_difference(low, high), 0.02, direction) == expected


def test_no_worse_refuses_bad_margins_and_directions():
    with pytest.raises(ValueError, match="margin"):
        stats.no_worse(_difference(0, 1), 0.0, "lower")
    with pytest.raises(ValueError, match="better_direction"):
        stats.no_worse(_difference(0, 1), 0.1, "smaller")


def test_binomial_interval_is_clopper_pearson():
    low, high = stats.binomial_interval(6, 6)
    assert low == pytest.approx(0.025 ** (1 / 6)) and high == 1.0  # the k = n closed form
    low, high = stats.binomial_interval(0, 5)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 5))
    low, high = stats.binomial_interval(3, 10)
    assert 0.06 < low < 0.07 and 0.65 < high < 0.66
    with pytest.raises(ValueError, match="counts"):
        stats.binomial_interval(7, 6)


def test_most_runs_needs_enough_runs():
    assert stats.most_runs(6, 6) == stats.HOLDS  # lower bound 0.54
    assert stats.most_runs(5, 5) == stats.INCONCLUSIVE  # lower bound 0.48: five is too few
    assert stats.most_runs(0, 6) == stats.FAILS
    assert stats.most_runs(3, 6) == stats.INCONCLUSIVE


# ---- spikes (notebook 07, P5) ---------------------------------------------------------------------


def test_a_spike_exceeds_factor_times_the_trailing_median():
    values = [1.0] * 12 + [2.5] + [1.0] * 5 + [1.9]  # 2.5 > 2 * 1; 1.9 is not
    assert stats.spike_steps(values) == [12]
    assert stats.spike_steps(values, factor=1.5) == [12, 18]


def test_the_median_is_of_the_window_before_the_step_only():
    # a steady rise by 10% a step is never a spike; a jump to 3x the window's median is
    rising = [1.1**t for t in range(40)]
    assert stats.spike_steps(rising) == []
    window = rising[20:30]
    jumped = rising[:30] + [3 * sorted(window)[5]]  # above 2x the median of the 10 before
    assert stats.spike_steps(jumped) == [30]


def test_no_step_of_the_first_window_is_a_spike():
    values = [1.0, 100.0, 1.0, 1.0, 1.0, 1.0]
    assert stats.spike_steps(values, window=5) == []
    assert stats.spike_steps(values, window=1) == [1]  # at window 1: previous step alone


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": [1.0, float("nan")]}, r"values\[1\] is nan"),
        ({"values": [1.0, None]}, r"values\[1\] is None"),
        ({"values": [1.0], "factor": 1.0}, "factor must be"),
        ({"values": [1.0], "window": 0}, "window must be"),
        ({"values": [1.0], "window": 2.0}, "window must be"),
    ],
)
def test_spike_steps_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message):
        stats.spike_steps(**kwargs)


def test_jump_ratios_are_each_step_over_the_trailing_median():
    values = [1.0, 2.0, 4.0, 3.0, 8.0]
    assert stats.jump_ratios(values, window=2) == [4.0 / 1.5, 3.0 / 3.0, 8.0 / 3.5]
    with pytest.raises(ValueError, match=r"values\[1\] is 0"):
        stats.jump_ratios([1.0, 0.0])


# ---- p-values and Holm's correction (CLAIMS.md: several tests on one set of runs) -------------


def _decide(test, *args):
    with stats.collect_decisions() as made:
        outcome = test(*args)
    return outcome, made[-1]


@given(
    st.lists(st.floats(-3, 3, allow_nan=False), min_size=3, max_size=12),
    st.sampled_from(["better", "matches", "no_worse"]),
)
def test_a_decision_rejects_exactly_when_its_p_value_is_under_five_percent(values, kind):
    difference = stats.paired_difference(values, [0.0] * len(values))
    if kind == "better":
        outcome, decision = _decide(stats.better, difference, "lower")
    elif kind == "matches":
        outcome, decision = _decide(stats.matches, difference, 0.5)
    else:
        outcome, decision = _decide(stats.no_worse, difference, 0.5, "lower")
    if outcome == stats.INCONCLUSIVE:
        assert decision.p_value is None
    else:
        assert decision.p_value < 0.05 + 1e-9
        for boundary in decision.boundaries:  # at the level p the interval just reaches one
            if difference.se > 0:
                assert decision.p_value >= scipy_stats.ttest_1samp(values, boundary).pvalue - 1e-9


@pytest.mark.parametrize(("k", "n"), [(6, 6), (0, 6), (9, 10), (5, 10), (8, 10)])
def test_count_decisions_carry_the_exact_binomial_p(k, n):
    outcome, decision = _decide(stats.most_runs, k, n)
    exact = scipy_stats.binomtest(k, n, 0.5).pvalue
    if outcome == stats.INCONCLUSIVE:
        assert decision.p_value is None and exact >= 0.05
    else:
        assert decision.p_value == pytest.approx(exact) and decision.p_value < 0.05


def test_holm_steps_down_and_stops_at_the_first_p_over_its_threshold():
    # sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2: stop, 0.04 kept out too
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]
    # None counts in m = 3: 0.01 <= 0.05/3, 0.02 <= 0.05/2
    assert stats.holm([0.01, None, 0.02]) == [True, False, True]
    assert stats.holm([0.02, None, 0.02]) == [False, False, False]  # 0.02 > 0.05/3
    assert stats.holm([0.04]) == [True] and stats.holm([]) == []
    assert stats.holm([0.049, 0.049]) == [False, False]


def test_the_ledger_applies_holm_within_each_set_of_runs():
    from lnpaper import ledger
    from lnpaper.companion.verdicts import verdict_word

    families = ledger.multiplicity(ledger.graded())
    by_claim = {i: (experiments, m, before, after)
                for experiments, m, verdicts in families for i, before, after in verdicts}  # fmt: skip
    assert "recurrent_training" in by_claim["R3"][0] and by_claim["R3"][1] >= 6
    # claims whose checks read a common run are one family, whatever functions they call
    family = {i: n for n, (_, _, verdicts) in enumerate(families) for i, _, _ in verdicts}
    for one, other in (("T6", "T6b"), ("P2", "P2b"), ("P5", "O1"), ("M4b", "M4e"), ("E2", "E2c")):
        assert family[one] == family[other], (one, other)
    for claim_id, (_, _, before, after) in by_claim.items():
        assert before == ledger.BY_ID[claim_id].evaluate().verdict
        if after != before:  # only dropping a decision to inconclusive can move it
            assert after in ("inconclusive", "partly", "not reproduced"), claim_id
    text = "\n".join(ledger.multiplicity_section(families))
    for claim_id, (_, _, before, after) in by_claim.items():
        if after != before:
            moved = f"{verdict_word(before)} -> {verdict_word(after)}"
            assert f"{claim_id} ({moved})" in text


def test_counts_from_numpy_sums_are_counts():
    assert stats.binomial_interval(np.int64(3), np.int32(10)) == stats.binomial_interval(3, 10)
    assert stats.most_runs(np.int64(6), 6) == stats.HOLDS
    assert stats.fewer_events(np.array([0, 1, 0]), [2, 3, 1], np.int64(9)) == stats.fewer_events(
        [0, 1, 0], [2, 3, 1], 9
    )
    for k in (3.0, True, "3", np.float64(3)):
        with pytest.raises(ValueError, match="counts"):
            stats.binomial_interval(k, 10)


def test_saves_time_grades_every_setting_and_is_always_fragile():
    with stats.collect_decisions() as decisions:
        assert stats.saves_time([0.5, 0.8], 1.1) == stats.HOLDS
        assert stats.saves_time([1.2, 2.0], 1.1) == stats.FAILS
        assert (
            stats.saves_time([0.5, 1.0], 1.1) == stats.INCONCLUSIVE
        )  # one setting within the margin
        assert stats.saves_time([0.5, 1.5], 1.1) == stats.INCONCLUSIVE  # saves in one, costs in one
    # a time ratio is the machine's: every outcome stays reachable on another
    assert all(d.fragile and d.outcome not in d.alternatives for d in decisions)
    with pytest.raises(ValueError, match="time ratios"):
        stats.saves_time([0.5, float("nan")], 1.1)
