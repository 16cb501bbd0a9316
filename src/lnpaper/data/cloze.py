"""A generated reading task with anonymized entities: the companion's stand-in for the CNN corpus
that the attentive reader was trained on (Ba et al. 2016, Sec. 6.2; Hermann et al. 2015). Nothing
is downloaded.

An example is a passage of four short sentences about five entities, a query that repeats one
sentence's fact with one of its two entities blanked out, and the answer: the blanked entity,
chosen among the five (chance is 1 in 5). A sentence is `fillers, subject, verb, object, fillers,
"."`; the four verbs of a passage differ, so the verb and the other entity of a query pick out one
sentence and its answer is unique.

What makes this the paper's setting rather than a fixed-length sequence (Cooijmans et al. 2016,
Sec. 5.4, on recurrent BatchNorm and zero-padding):
- passages differ in length (16 to 48 tokens: each passage draws a verbosity v in 0..4, and each
  side of each sentence draws 0..v filler words), so a batch is padded to its longest passage and
  a per-step BatchNorm over the batch counts padded rows in its statistics;
- the five entities are drawn anew for every passage from 12 anonymous names, as Hermann et al.
  replaced named entities by ids shuffled per document: an entity's id carries no prior, and the
  answer must be read from the passage.

Introduced for the attentive reader's miniature in notebook 03. Token ids: 0 is padding, then the
12 entities, 12 verbs, 24 filler words, the full stop and the placeholder (`VOCABULARY` in all).
"""

import functools
from dataclasses import dataclass

import numpy as np

from lnpaper.arguments import check_choice

PAD = 0
ENTITY_NAMES = 12
ENTITIES = np.arange(1, 1 + ENTITY_NAMES)  # token ids of the anonymous entities
VERBS = np.arange(13, 25)
FILLERS = np.arange(25, 49)
STOP = 49
PLACEHOLDER = 50
VOCABULARY = 51
SENTENCES = 4
PER_PASSAGE = 5  # entities in a passage, and so candidate answers
MAX_VERBOSITY = 4  # a passage's verbosity v is drawn from 0..MAX_VERBOSITY
# How many filler words each side of a sentence draws, given its passage's verbosity v: "0..v",
# or "0..v/2" (rounded down) for shorter passages and an easier task.
FILLER_RULES = ("0..v", "0..v/2")
SPLIT_SIZES = {"train": 6000, "val": 500, "test": 500}
SPLIT_SEEDS = {"train": 0, "val": 1, "test": 2}


@dataclass(frozen=True)
class Cloze:
    """One split. passages (N, longest) int64, padded with PAD after each passage's `lengths`;
    queries (N, 3): subject, verb, object with one entity replaced by PLACEHOLDER; candidates (N,
    ENTITY_NAMES) bool, the passage's five entities; answers (N,) the answer's entity index
    (token id - 1), always a candidate."""

    passages: np.ndarray
    lengths: np.ndarray
    queries: np.ndarray
    candidates: np.ndarray
    answers: np.ndarray


def _subjects_and_objects(rng, entities) -> np.ndarray:
    """(SENTENCES, 2) entities, every one of the passage's five used, no sentence about one
    entity twice: the five in a random order and three more, redrawn until each pair differs."""
    while True:
        slots = np.concatenate([rng.permutation(entities), rng.choice(entities, 3)])
        pairs = rng.permutation(slots).reshape(SENTENCES, 2)
        if (pairs[:, 0] != pairs[:, 1]).all():
            return pairs


def _example(rng, fillers: str):
    entities = rng.choice(ENTITIES, PER_PASSAGE, replace=False)
    verbs = rng.choice(VERBS, SENTENCES, replace=False)
    pairs = _subjects_and_objects(rng, entities)
    verbosity = rng.integers(0, MAX_VERBOSITY + 1)
    most = verbosity if fillers == "0..v" else verbosity // 2
    passage = []
    for (subject, obj), verb in zip(pairs, verbs, strict=True):
        before, after = rng.integers(0, most + 1, size=2)
        passage += [*rng.choice(FILLERS, before), subject, verb, obj, *rng.choice(FILLERS, after)]
        passage.append(STOP)
    asked, blank = rng.integers(SENTENCES), rng.integers(2)  # blank 0: the subject
    query = [pairs[asked, 0], verbs[asked], pairs[asked, 1]]
    answer = query[2 * blank]
    query[2 * blank] = PLACEHOLDER
    return passage, query, entities, answer


@functools.cache
def load(split: str, *, fillers: str = "0..v") -> Cloze:
    """The fixed examples of one split ("train", "val" or "test"), the same on every call and
    machine (numpy's seeded generator). `fillers` (FILLER_RULES) bounds the filler words on each
    side of a fact: "0..v/2" makes passages shorter and the task easier."""
    check_choice("split", split, SPLIT_SIZES)
    check_choice("fillers", fillers, FILLER_RULES)
    rng = np.random.default_rng(SPLIT_SEEDS[split])
    examples = [_example(rng, fillers) for _ in range(SPLIT_SIZES[split])]
    lengths = np.array([len(passage) for passage, *_ in examples])
    passages = np.full((len(examples), lengths.max()), PAD, dtype=np.int64)
    candidates = np.zeros((len(examples), ENTITY_NAMES), dtype=bool)
    for row, (passage, _, entities, _) in enumerate(examples):
        passages[row, : len(passage)] = passage
        candidates[row, entities - 1] = True
    queries = np.array([query for _, query, *_ in examples], dtype=np.int64)
    answers = np.array([answer - 1 for *_, answer in examples], dtype=np.int64)
    for array in (passages, lengths, queries, candidates, answers):
        array.flags.writeable = False  # cached: shared by every caller
    return Cloze(passages, lengths, queries, candidates, answers)


def padded_share(lengths) -> np.ndarray:
    """For a batch's passage lengths, the share of its rows that are padding at each step of the
    batch's longest passage: what a per-step BatchNorm's statistics count that is not text."""
    lengths = np.asarray(lengths)
    steps = np.arange(lengths.max())
    return (lengths[:, None] <= steps[None, :]).mean(axis=0)
