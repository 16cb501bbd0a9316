"""The ledger's words, defined once: what "trains", "fails", "negligible" and "better" mean here.

Introduced in notebook 01 (the box "How to read a verdict", `BOX`); every later notebook and every
claim grades with these definitions, so a verdict's word means the same in every row of CLAIMS.md.
The statistics behind them (paired intervals, margins, the robustness band) are `lnpaper.stats`.

The synthetic language of notebooks 06-10 has four loss levels a model can reach
(`SyntheticLanguage.levels`, nats per token): uniform 2.77 (knows only the vocabulary), unigram
2.75 (how often each token occurs), bigram 2.34 (the previous token), and the floor 0.94 (the whole
rule: the two previous tokens, at length 16). Between uniform and the floor lie 1.83 nats a model
can learn: the learnable gap.
"""

import math

from lnpaper import stats
from lnpaper.data import SyntheticLanguage

SEQUENCE_LENGTH = 16  # the language models' sequences: the floor is the loss averaged over them

# A language model trains when it ends below the bigram level: it has learned more than the
# previous token tells, so it reads the order of the sequence. Ending between the unigram and the
# bigram level (frequencies, part of the previous token) is not training in this sense.
TRAINS_BELOW = "bigram"

# A difference in held-out loss smaller than this is negligible: about 1% of what a model can
# learn, the learnable gap of the synthetic language (0.02 / 1.83) or of the digits (ln 10 =
# 2.30 nats from chance to a perfect classifier), well under what the language's levels
# separate (bigram - floor = 1.40 nats).
NEGLIGIBLE_NATS = 0.02

# A digit classifier (10 classes) trains when its test accuracy is above chance.
DIGITS_CHANCE = 0.10

# "Equal" test accuracy of two digit classifiers (R4, declared before the runs; M4b and M4g use it
# too): one no worse than the other by more than one percentage point, about 1% of the 90 points
# from chance to a perfect classifier, as NEGLIGIBLE_NATS is of the learnable gap.
R4_MARGIN = 0.01


def trains(loss, levels: dict) -> bool:
    """A language-model run trains: it did not diverge and ends below the bigram level."""
    return loss is not None and math.isfinite(loss) and loss < levels[TRAINS_BELOW]


def failed_runs(losses, levels: dict) -> int:
    """How many runs failed: diverged, or ended at or above the bigram level."""
    return sum(not trains(loss, levels) for loss in losses)


def outcome_word(outcome: str, word: str) -> str:
    """A decision as a claim's text says it: the claim's own `word` ("LN lower") when it holds, else
    the outcome itself (`fails`, `inconclusive`)."""
    return word if outcome == stats.HOLDS else outcome


def better_beyond_negligible(difference: stats.Difference) -> tuple[str, str]:
    """(grade, words) for a held-out loss difference a - b where lower is better:
    `better` when the whole 95% interval lies below -NEGLIGIBLE_NATS; `negligible` when it lies
    below 0 but not beyond the margin, or inside +-NEGLIGIBLE_NATS; `worse` when it lies entirely
    above +NEGLIGIBLE_NATS; `undecided` otherwise. Each comparison is one recorded decision."""
    beyond = stats.no_worse(difference, NEGLIGIBLE_NATS, "lower")
    within = stats.matches(difference, NEGLIGIBLE_NATS)
    if beyond == stats.HOLDS and within == stats.FAILS:
        return "better", f"better by more than the negligible {NEGLIGIBLE_NATS:g}"
    if beyond == stats.HOLDS:
        return "negligible", f"no worse, and any gain within the negligible {NEGLIGIBLE_NATS:g}"
    if beyond == stats.FAILS:
        return "worse", f"worse by more than the negligible {NEGLIGIBLE_NATS:g}"
    if stats.NOT_GRADED in (beyond, within):
        return "undecided", stats.NOT_GRADED
    return "undecided", "undecided: the interval reaches past the margin"


_LEVELS = SyntheticLanguage().levels()
LEARNABLE_GAP = _LEVELS.uniform - SyntheticLanguage().entropy_floor(SEQUENCE_LENGTH)

BOX = f"""How to read a verdict: the words every notebook uses

paired interval  both arms run on the same seeds; per seed the difference a - b;
                 their mean with its 95% Student-t interval over the n seeds,
                 written -0.050 [-0.063, -0.037] (n = 10)
holds / fails    the whole interval lies on the claimed side of the boundary / on
                 the other side; anything else is inconclusive (the seeds do not decide)
no worse         the interval's worse end stays inside the margin
negligible       a held-out loss difference inside +-{NEGLIGIBLE_NATS:g} nats: about 1% of what
                 a model can learn ({LEARNABLE_GAP:.2f} nats of the synthetic language,
                 ln 10 = {math.log(10):.2f} on the digits)
better           better beyond the negligible margin
trains           a language model ends below the bigram level ({_LEVELS.bigram:.2f} nats);
                 a digit classifier's test accuracy is above chance ({DIGITS_CHANCE:.0%})
fails            diverged, or did not train
borderline       an interval edge within the robustness band of its boundary: another
                 CPU may put it on the other side, and the verdict with it
not exercised    the claim's premise or mechanism does not arise in the miniature
                 (checked): inconclusive, whatever the numbers
partly           always with its kind: (mechanism only) the mechanism the claim names
                 is shown, the effect it is said to cause not attributed to it;
                 (some parts) some parts held, others not; (no better) no worse, the
                 gain within the negligible margin, the claim's other parts held
not reproduced   the claim's one effect lies within the negligible margin: too small
  (negligible)   to count for a claim that it matters
Holm             several tests on one set of runs: each corrected for the others"""
