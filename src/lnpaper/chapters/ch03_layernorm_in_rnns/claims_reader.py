"""Claims of notebook 03 on the attentive reader's miniature (Ba et al. 2016, Sec. 6.2): R7-R7c.

Declared before the runs: every difference is paired by seed (6 seeds), each arm at its own best
rate (`analysis_reader.picked_rate`), in test error points with a 95% t interval against 0. Two
checks come first, because without them the verdicts would say nothing about the paper: the
reader must need its LSTM (a bag of embeddings and the most frequent candidate both end 15 points
or more worse than the LSTM, else the claims are not exercised), and the ends of training are
graded only where training has ended (every arm's mean last-quarter error at most 35% and moving
less than 2 points across the last quarter, else inconclusive at this budget).
"""

import statistics

from lnpaper import stats
from lnpaper.chapters.ch03_layernorm_in_rnns import analysis_reader
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis_reader import (
    TEXT_STATISTICS,
    padded_steps,
    quarter_steps,
    reader_summary,
    run_means,
)
from lnpaper.companion.verdicts import (
    BA_2016,
    NOT_EXERCISED,
    Claim,
    Finding,
    aggregate,
    combine,
    tested,
)
from lnpaper.vocabulary import outcome_word

SOLVED_BY_READING = 15.0  # pp: how much worse the two readers without an LSTM must end
ENDED_ERROR = 35.0  # pp: the ending gate's highest mean last-quarter error
ENDED_CHANGE = 2.0  # pp: and its largest change across the last quarter
GATED_ARMS = ("LSTM", "LN-LSTM", "LN-LSTM, gain 0.1", "BN-LSTM")
LN_AGAINST = (
    ("LN-LSTM", "LSTM", "LN lower", "LN-LSTM - LSTM"),
    ("LN-LSTM", "BN-LSTM", "LN lower", "LN-LSTM - BN-LSTM"),
)
GAINS = (("LN-LSTM", "LN-LSTM, gain 0.1", "1.0 lower", "LN gain 1.0 - 0.1"),)


def exercised(summary: dict) -> tuple[bool, str]:
    """Whether the task needs the LSTM: the bag of embeddings and the most-frequent-candidate rule
    both end at least SOLVED_BY_READING points worse than the LSTM (last-quarter test error)."""
    lstm = statistics.fmean(summary["LSTM"]["last"])
    bag = statistics.fmean(summary["bag of embeddings"]["last"])
    frequent = analysis_reader.most_frequent_error()
    holds = min(bag, frequent) - lstm >= SOLVED_BY_READING
    text = (
        f"test error over the last quarter: LSTM {lstm:.1f}%, a bag of embeddings {bag:.1f}%, the "
        f"passage's most frequent candidate {frequent:.1f}% (both {SOLVED_BY_READING:g} points "
        f"worse or more needed: {'met' if holds else 'not met'})"
    )
    return holds, text


def ended(summary: dict) -> tuple[bool, str]:
    """The ending gate over the graded arms: each arm's mean last-quarter error at most
    ENDED_ERROR, and its change across the last quarter smaller than ENDED_CHANGE."""
    rows = {label: summary[label] for label in GATED_ARMS}
    holds = all(
        statistics.fmean(row["last"]) <= ENDED_ERROR
        and abs(row["last_quarter_change"]) < ENDED_CHANGE
        for row in rows.values()
    )
    text = ", ".join(
        f"{label} {statistics.fmean(row['last']):.1f}% ({row['last_quarter_change']:+.1f} across it)"
        for label, row in rows.items()
    )
    return holds, f"training ended: {'yes' if holds else 'no'} ({text})"


def padding_text(study) -> str:
    """What padding does here, shown beside the BatchNorm comparisons: how much of each training
    batch is padded (the regime check), and the BN-LSTM against the same BN-LSTM with its
    statistics over the text rows alone, at the BN-LSTM's rate (not graded)."""
    bn, control = study.runs["BN-LSTM"], study.runs[TEXT_STATISTICS]
    padded = padded_steps(bn)
    rate = control["lrs"][0]
    difference = stats.paired_difference(
        run_means(bn, bn["lrs"].index(rate)), run_means(control, 0)
    )
    return (
        f"padding: in every training batch at least "
        f"{padded['lowest']:.2f} of the steps have {100 * analysis_reader.PADDED_ROWS:.0f}% or more "
        f"padded rows (mean {padded['mean']:.2f}; a third needed: "
        f"{'met' if padded['holds'] else 'not met'}); BN-LSTM minus the BN-LSTM whose statistics "
        f"count text rows alone (lr {rate:g}), test error over the run: {difference.text(1)} pp, "
        "not graded"
    )


def _compared(summary, quarter: str, parts, graded: bool, quantities: list):
    """The declared differences `parts` (model, baseline, word, label) in one quarter's test
    error: their outcomes (each below 0, paired by seed) and texts; an ungraded quarter's
    differences are shown and count as undecided."""
    outcomes, texts = [], []
    for model, baseline, word, label in parts:
        difference = stats.paired_difference(summary[model][quarter], summary[baseline][quarter])
        quantities.append(aggregate(f"{quarter}-quarter test error (pp), {label}", difference))
        if graded:
            outcome = stats.better(difference, "lower")
            texts.append(f"{label} {tested(difference, outcome_word(outcome, word), digits=1)}")
        else:
            outcome = stats.INCONCLUSIVE
            texts.append(f"{label} {difference.text(1)}, not graded")
        outcomes.append(outcome)
    return outcomes, texts


def _reader_finding(study, first=(), last=()) -> Finding:
    """The exercise check, then the declared differences `first` over the first quarter and
    `last` over the last quarter, the last graded only where training has ended."""
    summary = reader_summary(study)
    needed, words = exercised(summary)
    words += "; picked rates: " + ", ".join(f"{k} {r['lr']:g}" for k, r in summary.items())
    if not needed:
        return Finding(words, NOT_EXERCISED)
    quantities, outcomes = [], []
    for quarter, parts in (("first", first), ("last", last)):
        if not parts:
            continue
        graded, gate = True, ""
        if quarter == "last":
            graded, gate = ended(summary)
            gate = f"; {gate}"
        moved, texts = _compared(summary, quarter, parts, graded, quantities)
        outcomes += moved
        steps = quarter_steps(study.runs["LSTM"]["eval_steps"], quarter)
        words += f"; test error, steps {steps[0]}-{steps[-1]}: " + "; ".join(texts) + gate
    return Finding(words, combine(outcomes), tuple(quantities))


def _with_padding(finding: Finding, study) -> Finding:
    if finding.verdict == NOT_EXERCISED:
        return finding
    return Finding(f"{finding.ours}; {padding_text(study)}", finding.verdict, finding.quantities)


def check_r7(study) -> Finding:
    """Faster: LN-LSTM's test error below the LSTM's and the BN-LSTM's over the first quarter."""
    return _with_padding(_reader_finding(study, first=LN_AGAINST), study)


def check_r7b(study) -> Finding:
    """Better at the end: the same two differences over the last quarter, under the ending gate."""
    return _with_padding(_reader_finding(study, last=LN_AGAINST), study)


def check_r7c(study) -> Finding:
    """Gains at 1.0 against 0.1: test error lower over the first quarter, and over the last one
    under the ending gate; with what the gains did to the cell's output squashing, E[1 - tanh^2]
    at init (about 0.61 and 0.99 where the two start as intended) and at the end, and the mean
    gain the end reached (at each arm's picked rate)."""
    finding = _reader_finding(study, first=GAINS, last=GAINS)
    if finding.verdict == NOT_EXERCISED:
        return finding
    arms = []
    for gain, label in (("1.0", "LN-LSTM"), ("0.1", "LN-LSTM, gain 0.1")):
        run = study.runs[label]
        k = analysis_reader.picked_rate(run)
        start, end, moved = (
            statistics.fmean(run[field][k])
            for field in ("output_slope_init", "output_slope_final", "cell_gain_final")
        )
        arms.append(
            f"gain {gain}: {start:.2f} at init, {end:.2f} at the end (gain now {moved:.2f})"
        )
    words = f"{finding.ours}; E[1 - tanh^2] of the cell's output squashing, " + "; ".join(arms)
    return Finding(words, finding.verdict, finding.quantities)


REGIME = (
    "source: unidirectional attentive reader on CNN passages cut to 4 sentences, 240 units, "
    "Adam 8e-5, batch 64, curves to about 800k steps, validation error; ours: the same reader at "
    "32 units on generated passages of 16-48 tokens (5 of 12 anonymized entities), Adam 1e-3 and "
    "3e-3, batch 64, 700 steps (about 7.5 epochs), 6 seeds, test error"
)
PICKED = (
    "6 seeds (0-5), each arm at its own best rate of Adam 1e-3 and 3e-3 (validation NLL averaged "
    "over the run), test error in points averaged over the evaluations at steps "
)
EXERCISED = (
    "; graded only if a bag of embeddings and the most frequent candidate both end 15 points or "
    "more worse than the LSTM (else not exercised)"
)
GATE = (
    "; graded only if every arm's mean last-quarter error is at most 35% and moves less than 2 "
    "points across the last quarter (else inconclusive at this budget)"
)

CLAIMS = (
    Claim(
        id="R7",
        claim="the LN-LSTM trains faster than the LSTM and the BN-LSTM (attentive reader)",
        source=f"{BA_2016}, Sec. 6.2 (BN-LSTM of Cooijmans et al. 2016)",
        paper_value="validation error curves (Fig. 2), no numbers; the BN curves are taken from "
        "Cooijmans et al. (their minima: LSTM 50.3%, BN-LSTM 49.5%), so the paper's comparison "
        "is between two papers, unpaired",
        experiments=(analysis_reader.reader_study,),
        check=check_r7,
        regime=REGIME,
        test=PICKED + "35-175 of 700; LN-LSTM - LSTM and LN-LSTM - BN-LSTM (gains 0.1, statistics "
        "over every row of the padded batch), paired by seed, 95% t CI below 0; reproduced if "
        "both hold, partly if one" + EXERCISED + "; declared before the runs",
    ),
    Claim(
        id="R7b",
        budget="700 steps, the first few percent of the paper's curves: graded where training "
        "has ended, else undecided",
        claim="the LN-LSTM converges to a better validation result than the LSTM and the BN-LSTM "
        "(attentive reader)",
        source=f"{BA_2016}, Sec. 6.2 (BN-LSTM of Cooijmans et al. 2016)",
        paper_value="validation error curves (Fig. 2), no numbers",
        experiments=(analysis_reader.reader_study,),
        check=check_r7b,
        regime=REGIME,
        test=PICKED + "525-700 of 700; LN-LSTM - LSTM and LN-LSTM - BN-LSTM, paired by seed, 95% "
        "t CI below 0; reproduced if both hold, partly if one"
        + EXERCISED
        + GATE
        + "; declared before the runs",
    ),
    Claim(
        id="R7c",
        claim="LN gains initialized at 1.0 do better than at 0.1 (attentive reader)",
        source=f"{BA_2016}, Sec. 6.2",
        paper_value="gain 1.0 'significantly better' than 0.1 (validation curves, no numbers)",
        experiments=(analysis_reader.reader_study,),
        check=check_r7c,
        regime=REGIME,
        test=PICKED + "35-175 and 525-700 of 700; LN-LSTM gain 1.0 - 0.1, paired by seed, 95% t "
        "CI below 0 in both quarters (the last under R7b's ending gate); reproduced if both hold"
        + EXERCISED
        + "; declared before the runs",
    ),
)
