"""Claims of notebook 01, why BatchNorm fails: M1-M5."""

import statistics

from lnpaper import stats, vocabulary
from lnpaper.chapters.ch01_why_batchnorm_fails import analysis
from lnpaper.chapters.ch01_why_batchnorm_fails import runs as ch01_runs
from lnpaper.chapters.ch01_why_batchnorm_fails.analysis import m4_summary, m5_cells
from lnpaper.chapters.ch01_why_batchnorm_fails.runs import POPULATION
from lnpaper.companion.verdicts import (
    BA_2016,
    IDENTITY,
    OURS,
    Claim,
    Finding,
    aggregate,
    combine,
    exact,
    tested,
    verdict,
)
from lnpaper.vocabulary import outcome_word


def check_m1(dependence) -> Finding:
    spread = dependence.output_spread
    ours = (
        f"one example in two batches of 8: BatchNorm outputs differ by up to "
        f"{dependence.batchnorm_difference:.2f}, LayerNorm by {dependence.layernorm_difference:g}; "
        f"sd of its BN output over random batch-mates {spread[1]:.2f} at batch 2, "
        f"{spread[-1]:.3f} at batch {dependence.batch_sizes[-1]}"
    )
    holds = (
        dependence.layernorm_difference == 0.0
        and dependence.batchnorm_difference > 0.1
        and spread[1] > 5 * spread[-1]
    )
    quantities = (exact("LayerNorm: change with the batch", dependence.layernorm_difference, 0.0),)
    return Finding(ours, verdict(holds), quantities)


def check_m2(one) -> Finding:
    refused = "more than 1 value per channel" in one.torch_error
    ours = (
        f"BN formula on a batch of one: every output = beta (max |y - beta| "
        f"{one.by_formula_max_abs:g}); nn.BatchNorm1d {'refuses' if refused else 'accepts'} it; "
        f"LN alone: output sd {one.layernorm_alone_std:.3f}, equal to LN in a batch of 64 to "
        f"{one.layernorm_in_batch_difference:g}"
    )
    holds = (
        one.by_formula_max_abs == 0.0
        and refused
        and one.lnpaper_error != "no error"
        and one.layernorm_alone_std > 0.9
        and one.layernorm_in_batch_difference == 0.0
    )
    return Finding(ours, verdict(holds))


def check_m3(modes) -> Finding:
    batchnorm_gap, layernorm_gap = modes.logit_gap["batchnorm"], modes.logit_gap["layernorm"]
    flips = modes.changed_predictions["batchnorm"]
    ours = (
        f"MLP, batch {modes.batch_size}: BN's running mean is {modes.running_error[0]:.2f} sd off "
        f"at step 0, {modes.running_error[-1]:.3f} after {modes.eval_steps[-1]} steps; train vs "
        f"eval logits differ by {min(batchnorm_gap):.2f}-{max(batchnorm_gap):.2f} throughout "
        f"({flips[0]} then {flips[-1]} of {modes.probe_size} predictions); LN: "
        f"{max(layernorm_gap):g} at every step"
    )
    holds = (
        max(layernorm_gap) == 0.0
        and max(modes.changed_predictions["layernorm"]) == 0
        and min(batchnorm_gap) > 0.0
        and modes.running_error[-1] < 0.1 * modes.running_error[0]
    )
    return Finding(ours, verdict(holds))


def check_m4(lstm) -> Finding:
    numbers = m4_summary(lstm)
    rule = numbers["per step, T_max rule"]
    averaged = numbers["averaged over steps"]
    short = numbers[f"per step, T_max = {lstm.short_max_steps}"]
    ours = (
        f"LSTM gate pre-activations on a stationary digit stream: step 0 is "
        f"{numbers['first_step']:.2f} sd from the steady mean (steady level "
        f"{numbers['steady']:.3f}), settled by step {numbers['settled_at']}; |sd - 1| after "
        f"normalizing: per-step statistics {rule['first']:.3f} at step 0, {rule['beyond']:.3f} "
        f"beyond T_max = {lstm.train_length} (T_max rule); averaged over steps "
        f"{averaged['first']:.2f} at step 0; T_max = {lstm.short_max_steps} (inside the "
        f"transient) {short['beyond']:.2f} beyond. BN-LSTM vs LSTM accuracy on the digits read "
        f"pixel by pixel and permuted: M4b (notebook 04)"
    )
    mechanism = (
        numbers["first_step"] > 3 * numbers["steady"]
        and averaged["first"] > 3 * rule["first"]
        and rule["beyond"] < 1.5 * rule["inside"]
        and short["beyond"] > 3 * rule["beyond"]
    )
    # M4 is the mechanism; Cooijmans et al.'s accuracies (sequential and permuted MNIST) are
    # graded in M4b (notebook 04), not here, so that they are not counted twice.
    return Finding(ours, verdict(mechanism))


# M5 is graded on test accuracy averaged over the last 3 epochs (12 to 10), a rule chosen after
# the reproduction check on another CPU path (ATEN_CPU_CAPABILITY=default). A single epoch's
# numbers do not survive that check: the last epoch's accuracy (BatchNorm's interval ends on 0:
# -0.3 [-0.7, +0.0] pp at 20 seeds) and the last epoch's NLL (on the other path three LayerNorm
# seeds at batch 4 spike, to 0.08-0.28 nats, and its interval widens past any small margin).
# Averaging the last epochs damps the spikes and the steps of a third of a point that 300 test
# digits allow. "Robust": no worse at batch 4 by more than one point of accuracy (3 of the 300
# digits), the margin declared at the start.
#
# Declared with M5's arms (LayerNorm, three BatchNorms, no norm), before their runs: M5 grades
# LayerNorm alone (no worse by the margin). M5b grades the paper's BatchNorm (unbiased batch
# variance, every layer normalized): lower at batch 4 (interval below 0); the other BatchNorms are
# reported beside it. M5c asks whether that loss is the running averages' fault: the same trained
# nets evaluated with each layer's exact statistics over the training set must still be lower at
# batch 4 than at 128 (interval below 0) for the loss to be the training's, not the inference
# estimate's; the population-minus-running difference at batch 4 (same nets) is reported beside
# it.
M5_MARGIN = 0.01
M5_LAST_EPOCHS = 3
M5_PAPER_BN = "paper's batchnorm"


def late_means(runs, key: str = "accuracy") -> list:
    """Per run, `key` averaged over the last M5_LAST_EPOCHS epochs."""
    return [statistics.fmean(run[key][-M5_LAST_EPOCHS:]) for run in runs]


def m5_late(robustness, name: str, batch: int, key: str = "accuracy") -> list:
    """Per seed, `key` averaged over the last M5_LAST_EPOCHS epochs of `name` at `batch`."""
    return late_means(robustness.curves[name][batch], key)


def m5_differences(robustness, name: str, key: str = "accuracy") -> stats.Difference:
    """Test accuracy (or NLL, or "population accuracy") at the small batch minus at the big one,
    each the mean over the last M5_LAST_EPOCHS epochs, paired by seed."""
    big, small = robustness.batch_sizes
    return stats.paired_difference(
        m5_late(robustness, name, small, key), m5_late(robustness, name, big, key)
    )


def m5_population_gain(robustness, name: str, key: str = "accuracy") -> stats.Difference:
    """At the small batch, the same nets with exact population statistics minus with their
    running averages, over the last epochs, paired by seed."""
    small = robustness.batch_sizes[1]
    return stats.paired_difference(
        m5_late(robustness, name, small, POPULATION + key), m5_late(robustness, name, small, key)
    )


def graded_parts(text: str, parts) -> Finding:
    """A finding of several graded parts, each (text, outcome, quantity): `text` followed by the
    parts' texts joined by '; ', their outcomes combined, their quantities in order."""
    texts, outcomes, quantities = zip(*parts, strict=True)
    return Finding(text + "; ".join(texts), combine(outcomes), quantities)


def in_points(difference: stats.Difference, outcome: str, word: str, digits: int = 2) -> str:
    """`tested` for an accuracy difference in percentage points, the claim's `word` if it holds."""
    return tested(difference, outcome_word(outcome, word), 100, "pp", digits)


def points(difference: stats.Difference) -> str:
    """'+0.12 [-0.05, +0.29]': an accuracy difference in percentage points, two decimals."""
    mean, low, high = (100 * v for v in (difference.mean, difference.low, difference.high))
    return f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]"


def _m5_robust(robustness) -> tuple[stats.Difference, str, str]:
    """LayerNorm's accuracy over the last epochs, batch 4 minus 128, paired by seed: the difference,
    the outcome of "no worse by M5_MARGIN", and its text."""
    ln = m5_differences(robustness, "layernorm")
    robust = stats.no_worse(ln, M5_MARGIN, "higher")
    return ln, robust, in_points(ln, robust, "no worse by 1 pp")


def check_m5(robustness, confirmation) -> Finding:
    """Graded on `confirmation`, fresh seeds run after the statistic was fixed; the first seeds,
    on which it was chosen, are reported beside it."""
    big, small = confirmation.batch_sizes
    ln, robust, text = _m5_robust(confirmation)
    first, _, first_text = _m5_robust(robustness)
    ln_nll = m5_differences(confirmation, "layernorm", "nll")
    cells = m5_cells(confirmation)

    def cell(batch):
        nll, accuracy = (cells["layernorm", batch][key][0] for key in ("nll", "accuracy"))
        return f"{100 * accuracy:.1f}% / {nll:.3f}"

    ours = (
        f"digits 64-{confirmation.sizes[1]}-{confirmation.sizes[2]}-10, {confirmation.epochs} "
        f"epochs, seeds {confirmation.seeds[0]}-{confirmation.seeds[-1]}: LN final test accuracy "
        f"/ NLL, mean over seeds: {cell(big)} at batch {big}, {cell(small)} at {small}. Accuracy "
        f"over the last {M5_LAST_EPOCHS} epochs, batch {small} minus {big}: {text}; NLL, not "
        f"graded: {ln_nll.bracket()}. On seeds "
        f"{robustness.seeds[0]}-{robustness.seeds[-1]}, where the statistic was chosen (not "
        f"graded): {first_text}"
    )
    quantities = (
        aggregate(f"LN accuracy, batch {small} - {big}, fresh seeds", ln),
        aggregate(f"LN accuracy, batch {small} - {big}, first seeds", first),
    )
    return Finding(ours, combine([robust]), quantities)


def check_m5e(confirmation) -> Finding:
    """The comparison Sec. 6.6 draws, declared before its runs: from batch 128 to 4 LayerNorm loses
    less accuracy than BatchNorm. Per seed, LN's change (batch 4 minus 128, accuracy over the last
    epochs) minus the BatchNorm's, 95% t CI above 0: against the paper's BatchNorm (every layer,
    the logits too), and against BatchNorm in LayerNorm's places (the hidden layers only).
    Reproduced if both hold, partly if one does."""
    big, small = confirmation.batch_sizes
    ln = m5_differences(confirmation, "layernorm")

    def against(name, label):
        other = m5_differences(confirmation, name)
        versus = stats.paired_difference(ln.values, other.values)
        outcome = stats.better(versus, "higher")
        text = f"minus {label} ({100 * other.mean:+.2f} pp) "
        text += in_points(versus, outcome, "LN loses less")
        return text, outcome, aggregate(f"LN's batch-size change - {label}'s", versus)

    ours = (
        f"seeds {confirmation.seeds[0]}-{confirmation.seeds[-1]}, accuracy over the last "
        f"{M5_LAST_EPOCHS} epochs, batch {small} minus {big}, paired by seed: LN "
        f"{100 * ln.mean:+.2f} pp; "
    )
    return graded_parts(
        ours, [against(M5_PAPER_BN, "the paper's BN"), against("batchnorm", "BN in LN's places")]
    )


def check_m5b(robustness) -> Finding:
    big, small = robustness.batch_sizes
    paper = m5_differences(robustness, M5_PAPER_BN)
    degrades = stats.better(paper, "lower")
    others = "; ".join(
        f"{name} {points(m5_differences(robustness, name))}"
        for name in ("batchnorm", "unbiased batchnorm", "none")
    )
    paper_nll = m5_differences(robustness, M5_PAPER_BN, "nll")
    ours = (
        f"accuracy over the last {M5_LAST_EPOCHS} epochs, batch {small} minus {big}, the paper's "
        f"BatchNorm (unbiased batch variance, every layer): "
        f"{in_points(paper, degrades, 'lower')}. Not graded, pp: "
        f"{others}. Its NLL in nats goes the other way, {paper_nll.text()}: normalized logits "
        f"with a gain from 1 stay unconfident in {robustness.steps[big]} steps at batch {big}, a "
        "scale-down artifact"
    )
    like_for_like = m5_differences(robustness, "batchnorm")
    quantities = (
        aggregate(f"paper's BN accuracy, batch {small} - {big}", paper),
        aggregate(f"BN (hidden layers) accuracy, batch {small} - {big}", like_for_like),
    )
    return Finding(ours, combine([degrades]), quantities)


def check_m5c(robustness) -> Finding:
    big, small = robustness.batch_sizes
    exact = m5_differences(robustness, M5_PAPER_BN, POPULATION + "accuracy")
    persists = stats.better(exact, "lower")
    gains = "; ".join(
        f"{name} {points(m5_population_gain(robustness, name))}"
        for name in ("batchnorm", "unbiased batchnorm", M5_PAPER_BN)
    )
    ours = (
        f"the paper's BatchNorm evaluated with exact population statistics (same nets), accuracy "
        f"over the last {M5_LAST_EPOCHS} epochs, batch {small} minus {big}: "
        f"{in_points(exact, persists, 'still lower')}. At batch "
        f"{small}, population minus running statistics, pp: {gains}"
    )
    quantities = (
        aggregate(f"paper's BN, population statistics, batch {small} - {big}", exact),
        aggregate(
            f"paper's BN at batch {small}, population - running",
            m5_population_gain(robustness, M5_PAPER_BN),
        ),
    )
    return Finding(ours, combine([persists]), quantities)


# M5d, declared after M5-M5c, before its numbers were looked at: Sec. 6.6's own sentence, that
# layer normalization converges faster than batch normalization applied to all layers. "Faster":
# a lower test NLL over the first quarter of training (epochs 1-3 of 12), LayerNorm minus the
# paper's BatchNorm, paired by seed, at each batch size; the no-norm baseline of the paper's
# Figure 6 is shown beside it.
M5_EARLY_EPOCHS = 3


def m5_early(robustness, name: str, batch: int, key: str = "nll") -> list:
    """Per seed, `key` averaged over epochs 1..M5_EARLY_EPOCHS (index 0 is before training)."""
    runs = robustness.curves[name][batch]
    return [statistics.fmean(run[key][1 : M5_EARLY_EPOCHS + 1]) for run in runs]


def check_m5d(robustness) -> Finding:
    def at(batch):
        ln = m5_early(robustness, "layernorm", batch)
        faster = stats.paired_difference(ln, m5_early(robustness, M5_PAPER_BN, batch))
        outcome = stats.better(faster, "lower")
        hidden = stats.paired_difference(ln, m5_early(robustness, "batchnorm", batch))
        baseline = stats.paired_difference(ln, m5_early(robustness, "none", batch))
        # the same nets with each BatchNorm layer's exact training-set statistics in place of
        # running averages that have had few updates this early: how much of the gap they are
        exact = {
            name: stats.paired_difference(ln, m5_early(robustness, name, batch, POPULATION + "nll"))
            for name in (M5_PAPER_BN, "batchnorm")
        }
        text = (
            f"batch {batch}: LN minus the paper's BN {tested(faster, outcome, unit='nats')}; not "
            f"graded: LN minus BN on the hidden layers only {hidden.text()}, minus no norm "
            f"{baseline.text()}; with BatchNorm's exact statistics, LN minus the paper's BN "
            f"{exact[M5_PAPER_BN].text()}, minus BN on the hidden layers only "
            f"{exact['batchnorm'].text()}"
        )
        return text, outcome, aggregate(f"early test NLL, LN - paper's BN, batch {batch}", faster)

    epochs = f"epochs 1-{M5_EARLY_EPOCHS} of {robustness.epochs}"
    ours = f"test NLL averaged over {epochs}, paired by seed: "
    return graded_parts(ours, [at(batch) for batch in robustness.batch_sizes])


# M2b, declared before its run: M5's LayerNorm MLP trained at batch 1, the same 12 epochs, rate
# and 20 seeds, graded like M5: accuracy over the last M5_LAST_EPOCHS epochs, batch 1 minus the
# same seed at batch 128, no lower by more than M5_MARGIN. Reported, not graded: batch 1 minus
# batch 4, and the NLL.
def check_m2b(online) -> Finding:
    """The paper's sentence as it stands: LayerNorm "can be used in the pure online regime with
    batch size 1". It trains there, in the ledger's sense (`lnpaper.vocabulary`): the LN MLP's
    accuracy over the last epochs, minus chance, 95% t CI above 0."""
    runs = online.curves["layernorm"]
    accuracy = late_means(runs)
    above = stats.paired_difference(accuracy, [vocabulary.DIGITS_CHANCE] * len(accuracy))
    outcome = stats.better(above, "higher")
    ours = (
        f"LN MLP at batch 1, {online.steps} Adam steps, {len(runs)} seeds: accuracy over the last "
        f"{M5_LAST_EPOCHS} epochs {100 * statistics.fmean(accuracy):.2f}% "
        f"({100 * min(accuracy):.1f}-{100 * max(accuracy):.1f}); minus chance "
        f"({vocabulary.DIGITS_CHANCE:.0%}) {tested(above, outcome, 100, 'pp', 1)}"
    )
    return Finding(ours, combine([outcome]), (aggregate("LN accuracy at batch 1 - chance", above),))


def check_m2c(robustness, online) -> Finding:
    """Our question beyond the paper's sentence: LayerNorm at batch 1 no worse than at batch 128,
    by M5's margin, paired by seed."""
    big, small = robustness.batch_sizes
    if any(len(runs) != len(robustness.seeds) for runs in online.curves.values()):
        raise ValueError("the batch-1 runs must pair with M5's seeds")

    one = late_means(online.curves["layernorm"])
    versus_big = stats.paired_difference(one, m5_late(robustness, "layernorm", big))
    robust = stats.no_worse(versus_big, M5_MARGIN, "higher")
    versus_small = stats.paired_difference(one, m5_late(robustness, "layernorm", small))
    nll = stats.paired_difference(
        late_means(online.curves["layernorm"], "nll"), m5_late(robustness, "layernorm", big, "nll")
    )
    ours = (
        f"LN MLP at batch 1, {online.steps} Adam steps ({robustness.epochs} "
        f"epochs): accuracy over the last {M5_LAST_EPOCHS} epochs {100 * statistics.fmean(one):.2f}%"
        f"; batch 1 minus {big}: "
        f"{in_points(versus_big, robust, 'no worse by 1 pp')}. Not "
        f"graded: minus batch {small} {points(versus_small)} pp; NLL minus batch {big} {nll.text()}"
    )
    if "none" in online.curves:
        plain = stats.paired_difference(
            late_means(online.curves["none"]), m5_late(robustness, "none", big)
        )
        ours += f"; no normalizer, batch 1 minus {big}: {points(plain)} pp"
    quantities = (aggregate(f"LN accuracy, batch 1 - {big}", versus_big),)
    return Finding(ours, combine([robust]), quantities)


# What M5b and M5c's tests fixed after their runs had been seen (`Claim.after_data`).
LAST_EPOCHS_SET_AFTER = (
    f"the window (test accuracy over the last {M5_LAST_EPOCHS} of 12 epochs) was fixed after these "
    "runs (seeds 0-19) had been seen; M5 grades the same window on fresh seeds (20-39)"
)

CLAIMS = (
    Claim(
        id="M1",
        kind=IDENTITY,
        claim="BatchNorm's output for one example depends on its batch-mates; LayerNorm's does not",
        source=f"{BA_2016}, Sec. 1-2",
        paper_value="argument, no number",
        experiments=(ch01_runs.batch_dependence,),
        check=check_m1,
    ),
    Claim(
        id="M2",
        kind=IDENTITY,
        claim="training-mode BatchNorm on a batch of one outputs beta alone; LN is well defined",
        source=f"{BA_2016}, Sec. 1",
        paper_value="argument, no number",
        experiments=(ch01_runs.batch_of_one,),
        check=check_m2,
    ),
    Claim(
        id="M2b",
        after_data="the test (accuracy above chance) was written after these runs had been seen",
        claim="LayerNorm can be used in the pure online regime: one example per step, it trains",
        source=f"{BA_2016}, Sec. 3",
        paper_value='argument, no number: LN "can be used in the pure online regime with batch '
        'size 1"',
        regime="source: a sentence of Sec. 3 (LN works with batch size 1), no experiment or "
        "setting given; ours: M5's LN MLP 64-256-256-10 on 1,197 8x8 digits, Adam lr 1e-3, batch "
        "1 for 12 epochs (14,364 steps), 20 seeds, test accuracy over the last 3 epochs",
        experiments=(analysis.online_learning,),
        check=check_m2b,
        test=f"M5's LN MLP at batch 1, 20 seeds: accuracy over the last {M5_LAST_EPOCHS} epochs "
        "minus chance (10%), 95% t CI above 0 (it trains, in the ledger's sense)",
    ),
    Claim(
        id="M2c",
        origin=OURS,
        claim="LayerNorm at batch 1 is no worse than at batch 128",
        source=f"ours, on {BA_2016}, Sec. 3 (the paper claims only that LN can be used there)",
        paper_value="none: the paper compares no batch-1 run",
        experiments=(analysis.batch_size_robustness, analysis.online_learning),
        check=check_m2c,
        test=f"M5's LN MLP at batch 1 (same {M5_LAST_EPOCHS}-epoch accuracy, 20 seeds, "
        f"paired with batch 128): 95% t CI of batch 1 minus 128 above -{100 * M5_MARGIN:g} pp, "
        "M5's margin, declared before the run",
    ),
    Claim(
        id="M3",
        kind=IDENTITY,
        claim="BatchNorm computes different functions in training and inference; LayerNorm one",
        source=f"{BA_2016}, Sec. 1-2",
        paper_value="argument, no number",
        experiments=(ch01_runs.train_vs_inference,),
        check=check_m3,
    ),
    Claim(
        id="M4",
        claim="LSTM activations show a transient then a steady state: per-time-step statistics, "
        "T_max reused beyond training length",
        source="Cooijmans et al. 2016, Sec. 3",
        paper_value="argument: statistics per time step, through a transient to a stationary "
        "distribution; beyond T_max the statistics of T_max (their accuracies are M4b's)",
        regime="source: a BN-LSTM's population statistics on character-level Penn Treebank "
        "(Figure 5; 1000 units, segments of 100, batch 64, Adam 2e-3); ours: gate pre-activations "
        "of a plain 32-unit LSTM on a stationary stream of 8x8 digits, 300 Adam steps (lr 1e-2, "
        "batch 32) at T = 12, tested to step 48",
        experiments=(ch01_runs.lstm_statistics,),
        check=check_m4,
    ),
    Claim(
        id="M5",
        claim="LayerNorm is robust to the batch size: no worse at batch 4 than at 128",
        source=f"{BA_2016}, Sec. 6.6",
        paper_value="figure only (MNIST 784-1000-1000-10, batch 128 vs 4)",
        regime="source: MNIST 784-1000-1000-10, 55,000 training images, Adam (rate not stated), "
        "batch 128 and 4, Figure 6's axis to 60 epochs, test error; ours: 8x8 digits "
        "64-256-256-10, 1,197 images, Adam 1e-3, 12 epochs at both sizes (108 and 3,588 steps), "
        "20 seeds, test accuracy over the last 3 epochs",
        experiments=(analysis.batch_size_robustness, analysis.batch_size_confirmation),
        check=check_m5,
        test="LN test accuracy over the last 3 epochs, batch 4 minus 128, paired by seed, 95% t "
        "CI: no worse (CI above -1 pp), graded on 20 fresh seeds (20-39) run after this "
        "statistic was fixed on seeds 0-19, which are reported beside it",
    ),
    Claim(
        id="M5e",
        claim="LayerNorm is robust to the batch size where BatchNorm is not: from batch 128 to 4 "
        "it loses less accuracy than BatchNorm",
        source=f"{BA_2016}, Sec. 6.6",
        paper_value="figure only (MNIST 784-1000-1000-10, batch 128 vs 4)",
        regime="source: Sec. 6.6's MNIST 784-1000-1000-10, 55,000 images, Adam, batch 128 and 4, "
        "to 60 epochs, BN on every layer (unbiased variance at batch 4), test error; ours: "
        "64-256-256-10 on 1,197 digits, Adam 1e-3, 12 epochs (108 and 3,588 steps), seeds 20-39, "
        "accuracy over the last 3 epochs",
        experiments=(analysis.batch_size_confirmation,),
        check=check_m5e,
        test="20 fresh seeds (20-39), declared before their runs: per seed, LN's accuracy over "
        "the last 3 epochs at batch 4 minus 128, minus the same for a BatchNorm, 95% t CI above "
        "0; against the paper's BatchNorm (every layer) and BatchNorm in LN's places; "
        "reproduced if both hold, partly if one does",
    ),
    Claim(
        id="M5b",
        after_data=LAST_EPOCHS_SET_AFTER,
        claim="BatchNorm (the paper's: every layer normalized; the unbiased batch variance it uses "
        "at batch 4, here at both sizes) degrades at batch 4",
        source=f"{BA_2016}, Sec. 6.6",
        paper_value="figure only (MNIST 784-1000-1000-10, batch 128 vs 4)",
        regime="source: Sec. 6.6's 784-1000-1000-10 on 55,000 images, Adam, to 60 epochs, BN on "
        "every layer with the unbiased variance at batch 4, test error; ours: 64-256-256-10 on "
        "1,197 digits, Adam 1e-3, 12 epochs (108 steps at batch 128, 3,588 at 4), 20 seeds, "
        "accuracy over the last 3 epochs",
        experiments=(analysis.batch_size_robustness,),
        check=check_m5b,
        test="the paper's BN, test accuracy over the last 3 epochs, batch 4 minus 128, paired by "
        "seed, 95% t CI: lower (CI below 0)",
    ),
    Claim(
        id="M5c",
        after_data=LAST_EPOCHS_SET_AFTER,
        origin=OURS,
        claim="BatchNorm's loss at batch 4 is not its running averages: it stays with exact "
        "population statistics",
        source=f"ours, on {BA_2016}, Sec. 6.6",
        paper_value="not in the paper",
        experiments=(analysis.batch_size_robustness,),
        check=check_m5c,
        test="the paper's BN evaluated with exact training-set statistics, test accuracy over the "
        "last 3 epochs, batch 4 minus 128, paired by seed, 95% t CI: lower (CI below 0)",
    ),
    Claim(
        id="M5d",
        after_data="the window (epochs 1-3 of 12) was chosen after these runs (seeds 0-19) were "
        "recorded; M5g grades the same window, on the training loss, on fresh seeds (40-49)",
        budget="test NLL through BatchNorm's running averages early in training, against the "
        "training NLL the source plots",
        claim="LayerNorm converges faster than BatchNorm applied to all layers, at batch 128 and "
        "at batch 4",
        source=f"{BA_2016}, Sec. 6.6 and its Figure 6",
        paper_value="figure only: Figure 6 plots the training NLL (log axis) and the test error "
        "at both batch sizes; the text says LN 'exhibits a faster training convergence'",
        regime="source: training NLL (log axis) and test error over 60 epochs (Figure 6); ours: "
        "test NLL over epochs 1-3 of 12 (27 steps at batch 128), BN on running averages (momentum "
        "0.1) still 39% their start values after epoch 1 (not matched: a test quantity and BN's "
        "warming estimates, not training NLL)",
        experiments=(analysis.batch_size_robustness,),
        check=check_m5d,
        test="test NLL averaged over epochs 1-3 of 12, LN minus the paper's BN, paired by seed "
        "(20), 95% t CI below 0, at batch 128 and at batch 4; both: reproduced, one: partly",
    ),
)
