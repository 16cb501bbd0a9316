"""Claims of notebook 03, LayerNorm in RNNs: R1-R5, with R3b (the attentive reader: LN-LSTM
against BN-LSTM) and R4b (R4 split: equal or better at the end)."""

from lnpaper import experiments, stats
from lnpaper.claims.core import (
    BA_2016,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Claim,
    Finding,
    aggregate,
    combine,
    exact,
    from_outcome,
    tested,
    verdict,
)
from lnpaper.experiments.layernorm_in_rnns import (
    BASELINE_LR,
    LOWER_LR,
    dynamics_summary,
    gain_summary,
    length_summary,
    training_summary,
)


def check_r1(anatomy, longer) -> Finding:
    equations = (
        anatomy.lstm_parity < 1e-12
        and anatomy.by_hand_difference < 1e-12
        and anatomy.per_gate_difference > 1e-2
        and anatomy.stacked_mean < 1e-12
        and anatomy.per_gate_mean > 1e-2
    )
    invariant = anatomy.layernorm_scale_change < 1e-8 < 0.1 < anatomy.lstm_scale_change
    stateless = (
        anatomy.layernorm_batch_change < 1e-12
        and anatomy.layernorm_mode_change == 0.0
        and anatomy.layernorm_stored == 0
        and anatomy.batchnorm_batch_change > 1e-3
    )
    lengths = length_summary(longer)["LN-LSTM"]
    any_length = lengths["beyond"][0] >= lengths["inside"][0] - 0.02
    ours = (
        f"LN-LSTM = Eq. 20-22 written out to {anatomy.by_hand_difference:.0e}, per-gate "
        f"statistics would move h_t by {anatomy.per_gate_difference:.2g}; W_h, W_x x "
        f"{anatomy.scale:g}: h_t moves {anatomy.layernorm_scale_change:.0e} (eps 1e-12), "
        f"{anatomy.layernorm_scale_change_eps:.0e} (eps 1e-5), plain LSTM "
        f"{anatomy.lstm_scale_change:.2f}; stores {anatomy.layernorm_stored} numbers (BN-LSTM "
        f"{anatomy.batchnorm_stored}); batch-mates move h_t by {anatomy.layernorm_batch_change:g} "
        f"(BN-LSTM {anatomy.batchnorm_batch_change:.2f}); trained on {longer.train_length} steps, "
        f"accuracy {100 * lengths['inside'][0]:.1f}% inside, {100 * lengths['beyond'][0]:.1f}% at "
        f"steps {longer.train_length}-{longer.test_length - 1}"
    )
    quantities = (exact("LN-LSTM - Eq. 20-22, float64", anatomy.by_hand_difference, 1e-12),)
    return Finding(ours, verdict(equations and invariant and stateless and any_length), quantities)


def check_r2(dynamics) -> Finding:
    numbers = dynamics_summary(dynamics)
    low, high = dynamics.scales[0], dynamics.scales[-1]
    plain = numbers["plain_summed_last"]
    ln_low, ln_high = numbers["ln_hidden_range"]
    per_scale = numbers["ln_summed_per_scale"]
    growth = numbers["growth"]["LN tanh RNN"]
    plain_growth = numbers["growth"]["tanh RNN"]
    plain_drifts = plain[low] < 1e-6 and plain[high] > 1.0
    ln_steady = ln_high < 1.05 * ln_low and per_scale[1] < 1.05 * per_scale[0]
    ln_bounded = all(g < 1.01 for g in growth.values())
    ours = (
        f"tanh RNN, {dynamics.steps} steps, weights x {low}..{high}: RMS of a_t at the end "
        f"{plain[low]:.0e} .. {plain[high]:.2f}; LN RNN: RMS of h_t {ln_low:.3f}-{ln_high:.3f} at "
        f"every scale and step, a_t / scale {per_scale[0]:.3f}-{per_scale[1]:.3f}; dependence on "
        f"step 0 per free step: x {plain_growth[low]:.3f} .. {plain_growth[high]:.3f} without LN, "
        f"x {min(growth.values()):.3f}-{max(growth.values()):.3f} with it (LN fixes the scale, "
        f"not the growth of perturbations)"
    )
    if plain_drifts and ln_steady:
        return Finding(ours, REPRODUCED if ln_bounded else PARTLY)
    return Finding(ours, NOT_REPRODUCED)


def _early_difference(summary) -> stats.Difference:
    """LN-LSTM minus LSTM, mean validation NLL over the first quarter of training, per seed."""
    return stats.paired_difference(summary["LN-LSTM"]["early"], summary["LSTM"]["early"])


def _outcome_word(outcome: str, word: str) -> str:
    return word if outcome == stats.HOLDS else outcome


def _points(accuracy: stats.Difference) -> str:
    """A difference of accuracies in percentage points, '+1.9 [+1.4, +2.5] pp'."""
    mean, low, high = (f"{100 * v:+.1f}" for v in (accuracy.mean, accuracy.low, accuracy.high))
    return f"{mean} [{low}, {high}] pp"


def check_r3(study, gains) -> Finding:
    """Faster: lower validation NLL early in training, at both learning rates; and the gain
    initialized at 1.0 ahead of 0.1 (the attentive reader's observation)."""
    parts, outcomes, quantities = [], [], []
    for lr in (BASELINE_LR, LOWER_LR):
        s = training_summary(study, lr)
        early = _early_difference(s)
        outcome = stats.better(early, "lower")
        outcomes.append(outcome)
        quantities.append(aggregate(f"early NLL, LN-LSTM - LSTM, lr {lr:g}", early))
        parts.append(
            f"lr {lr:g}: {tested(early, _outcome_word(outcome, 'LN lower'))}; mean curves reach the "
            f"LSTM's best {s['level']:.3f} at step {s['LSTM']['reach']} (LSTM), "
            f"{_steps_text(s['LN-LSTM']['reach'])} (LN-LSTM)"
        )
    by_gain = gain_summary(gains)
    gain = stats.paired_difference(by_gain["LN-LSTM, gain 1.0"], by_gain["LN-LSTM, gain 0.1"])
    gain_outcome = stats.better(gain, "lower")
    outcomes.append(gain_outcome)
    quantities.append(aggregate("mean NLL, LN gain 1.0 - 0.1", gain))
    steps = gains.runs["LN-LSTM, gain 0.1"]["eval_steps"][-1]
    ours = (
        "digits row by row; validation NLL over the first quarter of training, LN-LSTM minus LSTM: "
        + "; ".join(parts)
        + f". LN gain 1.0 minus 0.1, mean NLL over {steps} steps: "
        + tested(gain, _outcome_word(gain_outcome, "1.0 lower"))
    )
    return Finding(ours, combine(outcomes), tuple(quantities))


# "Equal at the end" (R4) is declared before the runs: test accuracy no worse by more than one
# percentage point. Only accuracy got a margin beforehand, so R4 is decided on accuracy alone; the
# superiority tests of R3b and R4b need no margin and use every measure.
R4_MARGIN = 0.01


def _final_differences(study, model: str, baseline: str, lr: float):
    """`model` minus `baseline` after the last step at `lr`, paired by seed: (test accuracy, test
    NLL)."""
    run, base = study.runs[model, lr], study.runs[baseline, lr]
    return (
        stats.paired_difference(run["test_accuracy"], base["test_accuracy"]),
        stats.paired_difference(run["test_loss"], base["test_loss"]),
    )


def check_r4(study) -> Finding:
    """Equal at the end (DRAW, handwriting): at the LSTM's own learning rate, the LN-LSTM's test
    accuracy no worse than the LSTM's by more than R4_MARGIN."""
    s = training_summary(study, BASELINE_LR)
    final, nll = _final_differences(study, "LN-LSTM", "LSTM", BASELINE_LR)
    same = stats.no_worse(final, R4_MARGIN, "higher")

    def cell(model):
        (acc, _), (loss, _) = s[model]["test_accuracy"], s[model]["test_loss"]
        return f"{100 * acc:.1f}% / {loss:.3f}"

    ours = (
        f"lr {BASELINE_LR:g} (the LSTM's best), after {s['steps']} steps, test accuracy / NLL, "
        f"mean of {final.n} seeds: LSTM {cell('LSTM')}, LN-LSTM {cell('LN-LSTM')}, BN-LSTM "
        f"{cell('BN-LSTM')}. LN-LSTM minus LSTM: accuracy "
        f"{tested(final, _outcome_word(same, 'no worse by 1 pp'), 100, 'pp', 1)}; NLL "
        f"{nll.text()}"
    )
    quantities = (aggregate("test accuracy, LN-LSTM - LSTM", final),)
    return Finding(ours, from_outcome(same), quantities)


def check_r4b(study) -> Finding:
    """Better at the end (order embeddings, skip-thoughts, attentive reader): at the LSTM's own
    learning rate, the LN-LSTM's test accuracy higher and its test NLL lower. On order embeddings
    the paper's LN model is better on every measure it reports, so here both parts must hold."""
    accuracy, nll = _final_differences(study, "LN-LSTM", "LSTM", BASELINE_LR)
    outcomes = [stats.better(accuracy, "higher"), stats.better(nll, "lower")]
    low_accuracy, low_nll = _final_differences(study, "LN-LSTM", "LSTM", LOWER_LR)
    ours = (
        f"lr {BASELINE_LR:g} (the LSTM's best), after the last step, LN-LSTM minus LSTM: test "
        f"accuracy {tested(accuracy, _outcome_word(outcomes[0], 'higher'), 100, 'pp', 1)}; test "
        f"NLL {tested(nll, _outcome_word(outcomes[1], 'lower'))}. At lr {LOWER_LR:g}, too low for "
        f"the LSTM to finish (not tested): accuracy {_points(low_accuracy)}, NLL "
        f"{low_nll.text()}"
    )
    quantities = (
        aggregate("test accuracy, LN-LSTM - LSTM", accuracy),
        aggregate("test NLL, LN-LSTM - LSTM", nll),
    )
    return Finding(ours, combine(outcomes), quantities)


def check_r3b(study) -> Finding:
    """The attentive reader's LN-LSTM against the BN-LSTM (Cooijmans et al.'s, gains 0.1), at the
    one learning rate both ran at: validation NLL lower over the first quarter of training
    (faster) and over the last quarter (a better validation result at the end)."""
    s = training_summary(study, BASELINE_LR)
    early = stats.paired_difference(s["LN-LSTM"]["early"], s["BN-LSTM"]["early"])
    late = stats.paired_difference(s["LN-LSTM"]["late"], s["BN-LSTM"]["late"])
    outcomes = [stats.better(early, "lower"), stats.better(late, "lower")]
    accuracy, nll = _final_differences(study, "LN-LSTM", "BN-LSTM", BASELINE_LR)
    early_steps, late_steps = s["early_steps"], s["late_steps"]
    ours = (
        f"lr {BASELINE_LR:g}, mean validation NLL, LN-LSTM minus BN-LSTM: steps "
        f"{early_steps[0]}-{early_steps[-1]} {tested(early, _outcome_word(outcomes[0], 'LN lower'))}"
        f"; steps {late_steps[0]}-{late_steps[-1]} "
        f"{tested(late, _outcome_word(outcomes[1], 'LN lower'))}. After the last step (not "
        f"tested): test accuracy {_points(accuracy)}, test NLL {nll.text()}"
    )
    quantities = (
        aggregate("early val NLL, LN-LSTM - BN-LSTM", early),
        aggregate("late val NLL, LN-LSTM - BN-LSTM", late),
    )
    return Finding(ours, combine(outcomes), quantities)


def check_r5(cnn) -> Finding:
    """LN below no norm, and BN below LN, in test NLL, at each frame (margin) size."""
    parts, outcomes, quantities = [], [], []
    for margin in cnn.test_loss:
        loss = cnn.test_loss[margin]
        side = 8 + 2 * margin
        ln_none = stats.paired_difference(loss["layernorm"], loss["none"])
        bn_ln = stats.paired_difference(loss["batchnorm"], loss["layernorm"])
        results = [stats.better(ln_none, "lower"), stats.better(bn_ln, "lower")]
        outcomes += results
        quantities += [
            aggregate(f"{side}x{side} test NLL, LN - none", ln_none),
            aggregate(f"{side}x{side} test NLL, BN - LN", bn_ln),
        ]
        parts.append(
            f"{side}x{side}: LN - none {tested(ln_none, _outcome_word(results[0], 'lower'))}, BN - "
            f"LN {tested(bn_ln, _outcome_word(results[1], 'lower'))}; units on at the border "
            f"{cnn.border_active[margin][-1]:.2f} vs {cnn.interior_active[margin][-1]:.2f} inside "
            "(conv 2, no norm)"
        )
    ours = f"test NLL after {cnn.steps} steps: " + "; ".join(parts)
    return Finding(ours, combine(outcomes), tuple(quantities))


def _steps_text(reach) -> str:
    return "never" if reach is None else f"step {reach}"


NOTEBOOK = "03_layernorm_in_rnns"

CLAIMS = [
    Claim(
        id="R1",
        claim="LN-LSTM: separate LNs on W_h h and W_x x over the stacked 4H vector, LN on c_t "
        "inside the output tanh; no state over time",
        source=f"{BA_2016}, supplement Eq. 20-22",
        paper_value="equations",
        notebook=NOTEBOOK,
        experiments=(experiments.lnlstm_anatomy, experiments.longer_sequences),
        check=check_r1,
    ),
    Claim(
        id="R2",
        claim="LN makes the recurrent layer invariant to rescaling its summed inputs, which "
        "stabilizes the hidden-to-hidden dynamics",
        source=f"{BA_2016}, Sec. 3.1",
        paper_value="argument, no number",
        notebook=NOTEBOOK,
        experiments=(experiments.rnn_dynamics,),
        check=check_r2,
    ),
    Claim(
        id="R3",
        claim="LN speeds up recurrent models (order embeddings, skip-thoughts, DRAW, handwriting)",
        source=f"{BA_2016}, Sec. 6",
        paper_value="OE+LN best model in 60% of iterations; DRAW 82.36 vs 82.09 nats; attentive reader: "
        "LN gain init 1.0 significantly better than 0.1",
        notebook=NOTEBOOK,
        experiments=(experiments.recurrent_training, experiments.gain_init_study),
        check=check_r3,
        test="paired by seed, 95% t CI of LN-LSTM minus LSTM: early validation NLL (first quarter of "
        "training) lower at both learning rates; gain 1.0 minus 0.1 lower",
    ),
    Claim(
        id="R3b",
        claim="the LN-LSTM trains faster than the BN-LSTM and converges to a better validation "
        "result (attentive reader)",
        source=f"{BA_2016}, Sec. 6.2 (attentive reader, BN-LSTM of Cooijmans et al. 2016)",
        paper_value="validation curves only, no numbers",
        notebook=NOTEBOOK,
        experiments=(experiments.recurrent_training,),
        check=check_r3b,
        test="validation NLL, LN-LSTM minus BN-LSTM (gains 0.1) at lr 1e-2, paired by seed, 95% t "
        "CI below 0: mean over the first quarter of training (faster) and over the last quarter "
        "(better at the end); reproduced if both hold",
    ),
    Claim(
        id="R4",
        claim="faster (R3), and as good as the baseline at the end (DRAW, handwriting)",
        source=f"{BA_2016}, Sec. 6 (DRAW, handwriting)",
        paper_value="DRAW after 200 epochs: 82.36 (baseline) vs 82.09 nats (LN), lower is better, "
        "almost twice as fast; handwriting: comparable log likelihood, much faster",
        notebook=NOTEBOOK,
        experiments=(experiments.recurrent_training,),
        check=check_r4,
        test="test accuracy after the last step, LN-LSTM minus LSTM at lr 1e-2 (the LSTM's best), "
        "paired by seed, 95% t CI above -1 pp (non-inferiority; margin R4_MARGIN declared before "
        "the runs)",
    ),
    Claim(
        id="R4b",
        claim="faster (R3), and better than the baseline at the end (order embeddings, skip-thoughts, "
        "attentive reader)",
        source=f"{BA_2016}, Sec. 6 (order embeddings, skip-thoughts), Sec. 6.2 (attentive reader)",
        paper_value="order embeddings: caption R@1 46.6 -> 48.5, image R@1 37.8 -> 38.9, better at "
        "every R@K and mean rank; skip-thoughts: better on SICK, MR, CR, SUBJ, MPQA, e.g. MR 77.3 "
        "-> 79.5; attentive reader: validation curves only, no numbers",
        notebook=NOTEBOOK,
        experiments=(experiments.recurrent_training,),
        check=check_r4b,
        test="after the last step, LN-LSTM minus LSTM at lr 1e-2 (the LSTM's best), paired by "
        "seed, 95% t CI: test accuracy above 0 and test NLL below 0 (superiority, no margin); "
        "reproduced if both hold",
    ),
    Claim(
        id="R5",
        claim="on a CNN, LN beats no normalization but BatchNorm beats LN",
        source=f"{BA_2016}, Sec. 6 (CNN, preliminary)",
        paper_value="no setup or numbers given",
        notebook=NOTEBOOK,
        experiments=(experiments.cnn_coda,),
        check=check_r5,
        test="test NLL paired by seed, 95% t CI below 0: LN - none and BN - LN, at both image sizes",
    ),
]
