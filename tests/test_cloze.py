"""The generated reading task (lnpaper.data.cloze): every query has one answer, read from its own
passage; passages vary in length, so batches carry padding; the splits are fixed."""

import numpy as np
import pytest

from lnpaper.data import cloze


@pytest.fixture(scope="module")
def test_split():
    return cloze.load("test")


def _sentences(passage, length):
    """The (subject, verb, object) of each sentence of a passage."""
    facts = []
    for sentence in np.split(passage[:length], np.flatnonzero(passage[:length] == cloze.STOP) + 1):
        words = [w for w in sentence if w not in cloze.FILLERS and w != cloze.STOP]
        if words:
            facts.append(tuple(words))
    return facts


def test_each_split_has_its_size_and_lengths_run_from_16_to_48():
    for split, size in cloze.SPLIT_SIZES.items():
        data = cloze.load(split)
        assert len(data.passages) == len(data.queries) == len(data.answers) == size
        assert data.lengths.min() >= 4 * cloze.SENTENCES
        assert data.lengths.max() <= (4 + 2 * cloze.MAX_VERBOSITY) * cloze.SENTENCES
        assert data.passages.shape[1] == data.lengths.max()
        assert 20 < data.lengths.mean() < 28  # about 24: one filler on each side on average


def test_padding_follows_each_passage_and_nothing_else_is_padding(test_split):
    steps = np.arange(test_split.passages.shape[1])
    padded = steps[None, :] >= test_split.lengths[:, None]
    assert (test_split.passages[padded] == cloze.PAD).all()
    assert (test_split.passages[~padded] != cloze.PAD).all()


def test_every_query_has_one_answer_that_its_passage_states(test_split):
    data = test_split
    for passage, length, query, candidates, answer in zip(
        data.passages, data.lengths, data.queries, data.candidates, data.answers, strict=True
    ):
        facts = _sentences(passage, length)
        assert len(facts) == cloze.SENTENCES and all(len(f) == 3 for f in facts)
        assert len({verb for _, verb, _ in facts}) == cloze.SENTENCES  # verbs differ
        assert list(query).count(cloze.PLACEHOLDER) == 1
        filled = tuple(answer + 1 if w == cloze.PLACEHOLDER else w for w in query)
        assert filled in facts  # the query, its blank filled by the answer, is a fact
        matching = [f for f in facts if f[1] == query[1]]
        assert len(matching) == 1  # the verb picks out one sentence: the answer is unique
        entities = {e for s, _, o in facts for e in (s, o)}
        assert entities == set(np.flatnonzero(candidates) + 1)  # all five used, no other
        assert candidates[answer]


def test_entities_carry_no_prior_over_which_one_answers(test_split):
    counts = np.bincount(test_split.answers, minlength=cloze.ENTITY_NAMES)
    expected = len(test_split.answers) / cloze.ENTITY_NAMES
    assert counts.min() > 0.6 * expected and counts.max() < 1.4 * expected


def test_batches_of_64_carry_padding_where_a_per_step_batchnorm_sees_it():
    """The regime the reader's BatchNorm comparison needs: in every batch of 64 training
    passages, at least a third of the steps have at least 30% padded rows."""
    lengths = cloze.load("train").lengths
    for start in range(0, len(lengths) - 63, 64):
        share = cloze.padded_share(lengths[start : start + 64])
        assert share[0] == 0 and share[-1] < 1
        assert (share >= 0.3).mean() >= 1 / 3


def test_splits_are_fixed_and_shared_read_only():
    a, b = cloze.load("val"), cloze.load("val")
    assert a is b
    with pytest.raises(ValueError):
        a.passages[0, 0] = 1
    fresh = cloze.load.__wrapped__("val")
    assert all(
        np.array_equal(getattr(a, field), getattr(fresh, field))
        for field in ("passages", "lengths", "queries", "candidates", "answers")
    )


def test_halved_fillers_give_shorter_passages():
    short = cloze.load("val", fillers="0..v/2")
    assert short.lengths.max() <= (4 + cloze.MAX_VERBOSITY) * cloze.SENTENCES
    assert short.lengths.mean() < cloze.load("val").lengths.mean() - 3


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda: cloze.load("dev"), "split"),
        (lambda: cloze.load("val", fillers="0..2v"), "fillers"),
    ],
)
def test_bad_arguments_are_named(call, named):
    with pytest.raises(ValueError, match=named):
        call()
