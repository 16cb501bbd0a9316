"""A chapter as a value (`lnpaper.companion.chapter.Chapter`): the door its notebook enters by."""

import dataclasses

import pytest

from lnpaper.chapters import ch03_layernorm_in_rnns as ch03
from lnpaper.chapters.ch03_layernorm_in_rnns import analysis
from lnpaper.companion.chapter import Chapter


def test_grading_the_study_in_hand_gives_the_recorded_finding():
    study = analysis.recurrent_training()
    in_hand, on_record = ch03.CHAPTER.grade("R3", study), ch03.CHAPTER.grade("R3")
    assert in_hand.verdict == on_record.verdict
    assert in_hand.quantities == on_record.quantities


def test_an_unknown_claim_is_named_with_the_chapters_claims():
    with pytest.raises(KeyError, match=r"'T1' is not a claim of notebook 03_layernorm_in_rnns.*R3"):
        ch03.CHAPTER.grade("T1")


def test_a_study_of_the_wrong_arity_is_refused_by_name():
    with pytest.raises(TypeError, match=r"R3 reads 1 results \(recurrent_training\); got 2"):
        ch03.CHAPTER.grade("R3", object(), object())


def test_a_chapter_checks_what_it_lists():
    chapter = ch03.CHAPTER
    with pytest.raises(ValueError, match="listed twice"):
        dataclasses.replace(chapter, claims=chapter.claims + chapter.claims[:1])
    other = dataclasses.replace(chapter.claims[0], notebook="04_batchnorm_against_layernorm")
    with pytest.raises(ValueError, match="names notebook '04_batchnorm_against_layernorm'"):
        dataclasses.replace(chapter, claims=(other,))
    with pytest.raises(TypeError, match="print is not made by `experiment`"):
        Chapter(notebook=chapter.notebook, experiments=(print,), claims=(), figures=())
    with pytest.raises(TypeError, match="print is not made by `figure`"):
        Chapter(notebook=chapter.notebook, experiments=(), claims=(), figures=(print,))


def test_checked_here_lists_the_ids_asked_for_in_order():
    text = ch03.CHAPTER.checked_here(["R3d", "R3"])
    firsts = [line.split()[0] for line in text.splitlines() if line and not line[0].isspace()]
    assert firsts[:2] == ["R3d", "R3"]


def test_a_chapter_gives_its_claims_its_notebook():
    """A claim written without a notebook is checked in its chapter's; a claim naming another
    notebook is refused (above)."""
    chapter = ch03.CHAPTER
    bare = dataclasses.replace(chapter.claims[0], notebook="")
    made = Chapter(notebook=chapter.notebook, experiments=(), claims=(bare,), figures=())
    assert made.claims[0].notebook == chapter.notebook
