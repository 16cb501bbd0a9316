"""'partly' names its kind: the mechanism only, some of the claim's parts, or no better; and a
claim whose one effect is negligible is not reproduced (negligible)."""

import pickle

import pytest

from lnpaper import stats
from lnpaper.chapters.ch08_deep_stacks import claims as depth_claims
from lnpaper.companion import verdicts
from lnpaper.companion.verdicts import Claim, Finding


def test_each_kind_is_partly_and_says_which():
    for verdict in (verdicts.MECHANISM_ONLY, verdicts.SOME_PARTS, verdicts.NO_BETTER):
        assert verdict == verdicts.PARTLY and verdict in verdicts.VERDICTS
        assert verdicts.partly_kind(verdict) in verdicts.PARTLY_KINDS
        assert pickle.loads(pickle.dumps(verdict)).kind == verdict.kind
    assert len(set(verdicts.PARTLY_KINDS)) == 3
    assert verdicts.partly_kind(verdicts.PARTLY) == ""  # the bare word names no kind
    assert verdicts.partly_kind(verdicts.REPRODUCED) == ""


def test_the_producers_of_partly_set_its_kind():
    assert verdicts.combine([stats.HOLDS, stats.FAILS]).kind == "some parts"
    assert depth_claims.mechanism_only([stats.HOLDS, stats.HOLDS]).kind == "mechanism only"
    assert depth_claims.mechanism_only([stats.HOLDS, stats.FAILS]).kind == "some parts"
    assert verdicts.no_better(verdicts.NEGLIGIBLE).kind == "no better"
    assert verdicts.no_better(verdicts.REPRODUCED) == verdicts.REPRODUCED


def test_a_negligible_effect_alone_is_not_reproduced():
    negligible = stats.paired_difference([1.0, 1.01, 1.0, 1.005], [1.0, 1.0, 1.0, 1.0])
    assert verdicts.better_verdict(negligible)[0] == verdicts.NEGLIGIBLE
    assert verdicts.no_better(verdicts.better_verdict(negligible)[0]) == verdicts.PARTLY


@pytest.mark.parametrize(
    "verdict, borderline, text",
    [
        (verdicts.SOME_PARTS, False, "partly (some parts)"),
        (verdicts.SOME_PARTS, True, "partly (some parts, borderline)"),
        (verdicts.REPRODUCED, True, "reproduced (borderline)"),
        (verdicts.NEGLIGIBLE, True, "not reproduced (negligible, borderline)"),
        (verdicts.NO_BETTER, False, "partly (no better)"),
    ],
)
def test_the_verdict_text_carries_the_kind(verdict, borderline, text):
    marks = (verdicts.Borderline(0, "a", "holds", verdicts.REPRODUCED),) if borderline else ()
    assert verdicts.verdict_text(Finding("", verdict, borderline=marks)) == text


def test_a_claim_found_partly_without_its_kind_is_refused():
    claim = Claim("Z1", "a claim", "a source", "", "none", check=lambda: Finding("", "partly"))
    with pytest.raises(ValueError, match="partly without its kind"):
        claim.evaluate()


def test_every_partly_finding_on_the_record_names_its_kind():
    from lnpaper import ledger

    found = ledger.graded()
    partly = {i: f.partly_kind for i, (f, _) in found.items() if f.verdict == verdicts.PARTLY}
    assert partly  # the record has partly findings to check
    assert all(kind in verdicts.PARTLY_KINDS for kind in partly.values()), partly
