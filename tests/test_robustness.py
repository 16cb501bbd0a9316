"""The robustness band (lnpaper.stats): which decisions are fragile, the exact sign test for counts,
the borderline marker of a claim, and how the reproduction check treats a decision that moves."""

import itertools
import json
import math
import threading

import pytest

from lnpaper import reproduce, reproduce_compare, reproduce_report, stats
from lnpaper.companion import record
from lnpaper.companion import verdicts as core
from lnpaper.stats import FAILS, HOLDS, INCONCLUSIVE


def seeds_with_mean(mean: float, spread: float = 1.0, n: int = 10) -> list[float]:
    """n per-seed differences with the given mean and a fixed shape (sd proportional to spread)."""
    shape = [(-1) ** i * (1 + i % 3) for i in range(n)]
    centre = sum(shape) / n
    return [mean + spread * (v - centre) for v in shape]


def decide(values, rule):
    with stats.collect_decisions() as decisions:
        outcome = rule(stats.paired_difference(values, [0.0] * len(values)))
    (decision,) = decisions
    assert decision.outcome == outcome
    return decision


def test_the_band_is_what_a_passing_reproduction_check_lets_an_edge_move():
    difference = stats.paired_difference(seeds_with_mean(1.0), [0.0] * 10)
    assert stats.robustness_band(difference) == pytest.approx(3 * math.sqrt(2) * difference.se)
    assert stats.robustness_band(difference) == pytest.approx(
        stats.reproduction_tolerance(difference, difference)
    )


def test_a_decision_is_marked_fragile_near_its_boundary_and_unmarked_far_from_it():
    far = decide(seeds_with_mean(10.0), lambda d: stats.better(d, "higher"))
    near = decide(seeds_with_mean(2.0), lambda d: stats.better(d, "higher"))
    assert far.outcome == near.outcome == HOLDS
    assert far.low - far.band > 0 and not far.fragile and far.alternatives == ()
    assert 0 < near.low < near.band and near.fragile and near.alternatives == (INCONCLUSIVE,)
    # the same interval against a margin: fragile when the margin lies within the band of an edge
    inside = decide(seeds_with_mean(0.0, 0.01), lambda d: stats.matches(d, 1.0))
    edge = decide(
        seeds_with_mean(0.0, 0.01), lambda d: stats.matches(d, inside.high + 0.5 * inside.band)
    )
    assert inside.outcome == edge.outcome == HOLDS
    assert not inside.fragile and edge.fragile


def test_an_interval_on_its_boundary_can_land_on_either_side():
    straddling = decide(seeds_with_mean(0.0), lambda d: stats.better(d, "lower"))
    assert straddling.outcome == INCONCLUSIVE
    assert straddling.alternatives == (FAILS, HOLDS)


def test_no_worse_is_fragile_only_near_its_margin():
    values = seeds_with_mean(0.0, 0.01)
    robust = decide(values, lambda d: stats.no_worse(d, 1.0, "higher"))
    fragile = decide(values, lambda d: stats.no_worse(d, -min(values) * 0.5 + 0.02, "higher"))
    assert not robust.fragile
    assert fragile.boundaries[0] < 0 and fragile.fragile


def test_one_seed_that_alone_decides_is_named():
    steady = [0.1, 0.12, 0.09, 0.11, 0.1, 0.13, 0.08, 0.1]
    outlier = [*steady[:-1], 3.0]  # one wild seed widens the interval over 0
    assert decide(steady, lambda d: stats.better(d, "higher")).one_seed is None
    widened = decide(outlier, lambda d: stats.better(d, "higher"))
    assert widened.outcome == INCONCLUSIVE and widened.one_seed == 7
    assert widened.without_it == HOLDS


def test_overrides_set_a_decisions_outcome_and_keep_what_the_data_gave():
    difference = stats.paired_difference(seeds_with_mean(10.0), [0.0] * 10)
    with stats.collect_decisions(overrides={1: FAILS}) as decisions:
        first = stats.better(difference, "higher")
        second = stats.better(difference, "higher")
    assert (first, second) == (HOLDS, FAILS)
    assert [d.outcome for d in decisions] == [HOLDS, HOLDS]
    assert stats.better(difference, "higher") == HOLDS  # outside a collector nothing is kept


def test_collected_decisions_go_to_the_innermost_block_of_their_own_thread():
    difference = stats.paired_difference(seeds_with_mean(10.0), [0.0] * 10)
    with stats.collect_decisions() as outer:
        stats.better(difference, "higher")
        with stats.collect_decisions(overrides={0: FAILS}) as inner:
            assert stats.better(difference, "higher") == FAILS
        stats.better(difference, "higher")  # decision 1 of the outer block: no override
    assert (len(outer), len(inner)) == (2, 1)
    # a thread that checks a claim beside this one, its block open while this thread decides,
    # keeps its own decisions
    seen, opened, decided = {}, threading.Event(), threading.Event()

    def other_thread():
        with stats.collect_decisions() as decisions:
            opened.set()
            decided.wait(timeout=10)
            stats.better(difference, "higher")
        seen["other"] = decisions

    with stats.collect_decisions(overrides={0: FAILS}) as mine:
        worker = threading.Thread(target=other_thread)
        worker.start()
        opened.wait(timeout=10)
        assert stats.better(difference, "higher") == FAILS
        decided.set()
        worker.join()
    assert (len(mine), len(seen["other"])) == (1, 1)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([0, 0, 0, 0, 0, 0], [1, 2, 1, 3, 1, 1], HOLDS),  # all six flips against: p = 2/64
        ([0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 1], INCONCLUSIVE),  # p = 1/2
        ([3, 2, 4, 1, 2, 5], [0, 0, 0, 0, 0, 0], FAILS),
        ([0, 0, 0, 0], [0, 0, 0, 0], INCONCLUSIVE),  # nothing happened: no evidence
        # fewer in 9 of 10 seeds (a sign test holds, p = 0.021), but one seed has 5 more events
        # than its pair: the totals differ by 4 of 14 and the permutation test does not decide
        ([0] * 9 + [5], [1] * 9 + [0], INCONCLUSIVE),
    ],
)
def test_fewer_events_is_an_exact_paired_permutation_test(a, b, expected):
    assert stats.fewer_events(a, b, opportunities=90) == expected
    differences = [x - y for x, y in zip(a, b, strict=True)]
    flips = [sum(s * d for s, d in zip(signs, differences, strict=True))
             for signs in itertools.product((1, -1), repeat=len(differences))]  # fmt: skip
    total = sum(differences)
    p = sum(abs(f) >= abs(total) for f in flips) / len(flips)
    assert stats._sign_flip_p(differences, total) == pytest.approx(p, abs=1e-15)
    assert (expected != INCONCLUSIVE) == (total != 0 and p <= 0.05)


def test_a_permutation_test_is_fragile_when_the_totals_may_move_across_its_boundary():
    with stats.collect_decisions() as decisions:
        stats.fewer_events([0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], opportunities=90)
        stats.fewer_events([0, 0, 0, 0, 0, 0], [1, 2, 1, 3, 1, 1], opportunities=90)
        stats.fewer_events([0] * 30, [9] * 30, opportunities=90)
    nothing, few, many = decisions
    assert not nothing.fragile  # no event in 540 chances: the binomial band is 0 at p = 0
    # 9 events in 540 chances may move by 12 on a recomputation, enough to reach a total of 0
    assert few.band == 12 and INCONCLUSIVE in few.alternatives
    assert not many.fragile and many.outcome == HOLDS  # 270 against 0: far from any boundary


@pytest.mark.parametrize(
    ("a", "b", "opportunities"),
    [([1, 2.0], [0, 1], 9), ([True, 1], [0, 0], 9), ([-1, 0], [0, 0], 9), ([10, 0], [0, 0], 9)],
)
def test_fewer_events_takes_counts_only(a, b, opportunities):
    with pytest.raises(ValueError, match="counts are integers"):
        stats.fewer_events(a, b, opportunities)


@pytest.mark.parametrize("opportunities", [0, -3, 2.5, None])
def test_fewer_events_names_a_bad_opportunities(opportunities):
    with pytest.raises(ValueError, match="opportunities is"):
        stats.fewer_events([0], [1], opportunities)


def test_differences_that_overflow_are_refused_by_name():
    with pytest.raises(ValueError, match="overflows"):
        stats.paired_difference([1e308, 1e308], [-1e308, -1e308])


# ---- a claim's borderline marker, and the reproduction check -----------------------------------


def values_claim(claim_id: str = "Z9") -> core.Claim:
    """A claim whose check reads per-seed differences from `values.json` in the current record
    folder, so that a recorded and a recomputed record can give it different data."""

    def check() -> core.Finding:
        values = json.loads((record.current().directory / "values.json").read_text())
        difference = stats.paired_difference(values, [0.0] * len(values))
        outcome = stats.better(difference, "higher")
        return core.Finding(
            f"{difference.text()}", core.from_outcome(outcome), (core.aggregate("z", difference),)
        )

    return core.Claim(claim_id, "z is above 0", "none", "z > 0", "00_test", check=check)


def evaluated(directory, claim):
    with record.using(record.settings_for("on", directory)):
        return claim.evaluate()


def write_values(directory, values):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "values.json").write_text(json.dumps(values))


def test_a_fragile_decision_that_would_move_the_verdict_makes_it_borderline(tmp_path):
    write_values(tmp_path / "far", seeds_with_mean(10.0))
    write_values(tmp_path / "near", seeds_with_mean(3.5))  # 5.2 standard errors: fragile, graded
    far, near = (
        evaluated(tmp_path / "far", values_claim()),
        evaluated(tmp_path / "near", values_claim()),
    )
    assert far.verdict == near.verdict == core.REPRODUCED
    assert far.borderline == ()
    (borderline,) = near.borderline
    assert (borderline.label, borderline.alternative, borderline.verdict) == (
        "z",
        INCONCLUSIVE,
        core.INCONCLUSIVE,
    )
    assert "within machine noise of inconclusive" in near.borderline_text()


def test_the_check_lists_a_moved_fragile_decision_and_fails_on_a_robust_one(tmp_path):
    recorded, fragile_now, robust_now = (tmp_path / n for n in ("recorded", "fragile", "robust"))
    write_values(recorded, seeds_with_mean(3.5))  # holds, within the band of 0
    write_values(fragile_now, seeds_with_mean(1.5))  # inconclusive now
    claim = values_claim()
    _, verdicts, decisions = reproduce_compare.compare_claims(recorded, fragile_now, [claim])
    assert verdicts[0][2:] == (core.REPRODUCED, core.INCONCLUSIVE, "moved (fragile)")
    assert decisions[0].changed and decisions[0].ok

    write_values(recorded, seeds_with_mean(10.0))  # far from 0: not fragile
    write_values(robust_now, seeds_with_mean(0.5))
    _, verdicts, decisions = reproduce_compare.compare_claims(recorded, robust_now, [claim])
    assert verdicts[0][-1] == "CHANGED"
    assert decisions[0].changed and not decisions[0].ok


@pytest.mark.parametrize(
    ("recorded", "native", "asked", "aten"),
    [
        ({"AVX2"}, "AVX512", None, None),  # another CPU: its own kernels are another path
        ({"AVX512"}, "AVX512", None, "avx2"),
        ({"AVX2"}, "AVX2", None, "default"),
        ({"AVX2", "AVX512"}, "AVX512", None, "default"),
        ({"AVX2"}, "AVX2", "avx2", None),  # the caller's choice is kept
    ],
)
def test_the_check_picks_the_fastest_path_other_than_the_records(recorded, native, asked, aten):
    chosen, path = reproduce.choose_path(recorded, native, asked)
    assert chosen == aten
    assert path


# ---- the report: its answer first, and its answer columns first ---------------------------------

# The report's table columns that answer the question (what is decided, as recorded and now, and
# whether it came out the same) and those that give the numbers behind the answer.
ANSWER_COLUMNS = {"claim", "decision", "quantity", "recorded", "now", "status", "within tolerance",
                  "notes"}  # fmt: skip
DETAIL_COLUMNS = {"experiments", "test", "boundary", "band", "interval recorded", "interval now",
                  "tolerance", "rule"}  # fmt: skip


def report_of(tmp_path, recorded_mean: float, now_mean: float) -> list[str]:
    """The report's lines for `values_claim`, recorded at one mean of its differences and
    recomputed at another."""
    recorded, now = tmp_path / "recorded", tmp_path / "now"
    write_values(recorded, seeds_with_mean(recorded_mean))
    write_values(now, seeds_with_mean(now_mean))
    quantities, verdicts, decisions = reproduce_compare.compare_claims(
        recorded, now, [values_claim()]
    )
    made = {"cpu_capability": "DEFAULT", "date": "2026-12-01", "cpu_model": "a CPU", "seconds": 1}
    entry = {"experiment": "values", "key": "k", "made": made}
    text = reproduce_report.report_markdown([entry], {"k": entry}, quantities, verdicts, decisions,
                                     identical=0, minutes=1.0, workers=1, path="native AVX2")  # fmt: skip
    return text.splitlines()


def test_the_report_opens_with_its_answer_before_it_explains_the_check(tmp_path):
    lines = report_of(tmp_path, recorded_mean=3.5, now_mean=1.5)  # a fragile decision moves
    explained = lines.index("## What the check does")
    assert lines[0].startswith("# Reproduction report")
    assert lines[2].startswith("**The check passed**: ")
    answer = lines[3:explained]
    assert (
        "- verdicts: 0 of 1 the same; 1 moved through fragile decisions (Z9); 0 changed" in answer
    )
    assert "- quantities: 1 of 1 within tolerance" in answer
    assert (
        "- decisions: 1 of 1 graded moved to the other side of their boundary (Z9), all of them "
        "fragile; 0 more shown, not graded" in answer
    )
    assert (
        reproduce_report.FRAGILE_IN_WORDS in answer
    )  # the word explained where the answer uses it
    assert explained < lines.index("## This run") < lines.index("## Verdicts")


def test_a_failed_check_says_so_first_and_names_what_failed(tmp_path):
    lines = report_of(tmp_path, recorded_mean=10.0, now_mean=0.5)  # a robust decision moves
    assert lines[2].startswith("**The check failed**: ")
    assert any(line.endswith("; 1 changed (Z9)") for line in lines[3:6])
    failed = lines.index("## What failed")
    assert failed < lines.index("## What the check does")
    assert lines[failed + 2].startswith("- Z9: verdict 'reproduced' recorded")


def test_every_table_of_the_report_puts_its_answer_columns_first(tmp_path):
    lines = report_of(tmp_path, recorded_mean=3.5, now_mean=1.5)
    headers = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line, below in zip(lines, lines[1:], strict=False)
        if below.startswith("|---")
    ]
    assert len(headers) == 4  # verdicts, decisions, the numbers behind them, quantities
    for columns in headers:
        assert set(columns) <= ANSWER_COLUMNS | DETAIL_COLUMNS, columns
        kinds = ["answer" if column in ANSWER_COLUMNS else "detail" for column in columns]
        assert kinds == sorted(kinds), f"a detail column comes before an answer column: {columns}"
    verdicts, decisions, _, quantities = headers
    assert verdicts[:4] == ["claim", "recorded", "now", "status"]
    assert decisions[:5] == ["claim", "decision", "recorded", "now", "status"]
    assert quantities[:3] == ["claim", "quantity", "within tolerance"]


def test_a_finding_names_the_aggregates_too_few_seeds_leave_unconfirmed():
    """A rerun may move a mean by 3 sqrt(2) standard errors and pass: where that exceeds both the
    mean and the boundary it is decided against, the ledger says a rerun cannot confirm it."""
    wide = stats.paired_difference([0.1, -0.05, 0.12, -0.02], [0.0] * 4)  # mean 0.04, se 0.04
    tight = stats.paired_difference([0.50, 0.51, 0.49, 0.50], [0.0] * 4)  # mean 0.5, se 0.004
    with stats.collect_decisions() as decisions:
        stats.no_worse(wide, 0.02, "lower")
        stats.better(tight, "higher")
    quantities = (core.aggregate("wide", wide), core.aggregate("tight", tight))
    finding = core.Finding("ours", core.PARTLY, quantities, tuple(decisions))
    assert finding.too_loose() == ["wide"]
    # the same spread decided against a boundary farther out than its tolerance is confirmable
    with stats.collect_decisions() as decisions:
        stats.no_worse(wide, 1.0, "lower")
    far = core.Finding("ours", core.PARTLY, quantities[:1], tuple(decisions))
    assert far.too_loose() == []


def test_a_decision_a_rerun_cannot_confirm_is_shown_not_graded(tmp_path):
    """At 3 standard errors the interval clears 0, but a rerun that passes the check may lie
    4.2 standard errors away: the decision is shown, counts as inconclusive, takes no part in the
    borderline marks, and may move in a rerun without failing the check."""
    write_values(tmp_path / "recorded", seeds_with_mean(2.0))
    write_values(tmp_path / "now", seeds_with_mean(0.3))
    finding = evaluated(tmp_path / "recorded", values_claim())
    (decision,) = finding.decisions
    assert decision.outcome == stats.HOLDS and decision.low > 0
    assert finding.not_graded == (0,) and finding.verdict == core.INCONCLUSIVE
    assert finding.borderline == () and finding.graded_outcome(0) == stats.NOT_GRADED
    assert "not graded: a rerun cannot confirm it at this n" in core.evidence(finding)
    ours = core.row(values_claim(), finding)[4]
    assert ours.endswith("Shown, not graded (too few seeds for a rerun to confirm): z")
    _, verdicts, decisions = reproduce_compare.compare_claims(
        tmp_path / "recorded", tmp_path / "now", [values_claim()]
    )
    assert verdicts[0][-1] == "same" and decisions[0].changed and decisions[0].ok
