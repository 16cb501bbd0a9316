"""The ledger's words (`lnpaper.vocabulary`): one definition of trains, fails and negligible."""

import math

import pytest

from lnpaper import stats, vocabulary
from lnpaper.data import SyntheticLanguage

LEVELS = vars(SyntheticLanguage().levels())


def test_a_run_trains_only_below_the_bigram_level():
    bigram = LEVELS["bigram"]
    assert vocabulary.trains(bigram - 1e-6, LEVELS)
    assert not vocabulary.trains(bigram, LEVELS)  # at the level: the previous token only
    assert not vocabulary.trains(LEVELS["unigram"] - 0.1, LEVELS)  # below unigram is not enough
    assert not vocabulary.trains(None, LEVELS) and not vocabulary.trains(math.nan, LEVELS)
    assert vocabulary.failed_runs([1.0, None, 2.5, bigram, 2.0], LEVELS) == 3


def test_the_learnable_gap_and_the_margin_it_scales():
    floor = SyntheticLanguage().entropy_floor(vocabulary.SEQUENCE_LENGTH)
    assert vocabulary.LEARNABLE_GAP == pytest.approx(LEVELS["uniform"] - floor)
    assert 0.005 < vocabulary.NEGLIGIBLE_NATS / vocabulary.LEARNABLE_GAP < 0.02  # about 1%


@pytest.mark.parametrize(
    "per_seed, grade",
    [
        ([-0.05, -0.06, -0.055, -0.052], "better"),
        ([-0.008, -0.009, -0.007, -0.008], "negligible"),  # below 0, but within 0.02
        ([0.001, -0.002, 0.0, 0.001], "negligible"),
        ([0.05, 0.06, 0.055, 0.052], "worse"),
        ([-0.1, 0.1, -0.05, 0.08], "undecided"),
    ],
)
def test_better_counts_only_beyond_the_negligible_margin(per_seed, grade):
    difference = stats.paired_difference(per_seed, [0.0] * len(per_seed))
    assert vocabulary.better_beyond_negligible(difference)[0] == grade


def test_the_box_fits_a_notebook_column_and_states_the_levels():
    assert max(len(line) for line in vocabulary.BOX.splitlines()) <= 88
    assert f"{LEVELS['bigram']:.2f}" in vocabulary.BOX


def test_a_decision_reads_as_the_claims_word_only_when_it_holds():
    assert vocabulary.outcome_word(stats.HOLDS, "LN lower") == "LN lower"
    assert vocabulary.outcome_word(stats.FAILS, "LN lower") == stats.FAILS
    assert vocabulary.outcome_word(stats.INCONCLUSIVE, "LN lower") == stats.INCONCLUSIVE


def test_the_accuracy_margin_is_about_1_percent_of_what_a_digit_classifier_can_learn():
    assert 0.005 < vocabulary.R4_MARGIN / (1 - vocabulary.DIGITS_CHANCE) < 0.02
