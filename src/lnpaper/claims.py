"""The claims ledger: one record per claim the companion checks, and the writer of CLAIMS.md.

Claim IDs (M1-M5, F1-F4, R1-R5, I1-I4, T1-T7, P1-P5) follow the project's paper-facts sheet, which
holds the sources' exact equations and numbers.

A record says what a source claims and, once a notebook checks it, how: a function from experiment
results to our measured value and a verdict. CLAIMS.md and each notebook's "Claims checked here" table
are printed from these records, so the ledger cannot disagree with the notebooks.
"""

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from lnpaper import experiments
from lnpaper.experiments.invariances import lost_invariances
from lnpaper.experiments.layernorm_in_rnns import (
    BASELINE_LR,
    LOWER_LR,
    first_step_at_or_below,
)
from lnpaper.invariance import PAPER_TABLE
from lnpaper.spread import mean_sd, mean_sd_text

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
NOT_CHECKABLE = "not checkable at CPU scale"
PENDING = "pending"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_CHECKABLE, PENDING)

BA_2016 = "Ba, Kiros, Hinton 2016"


@dataclass(frozen=True)
class Finding:
    ours: str  # our measured value, in words and rounded numbers
    verdict: str  # one of VERDICTS


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    source: str
    paper_value: str
    notebook: str  # the notebook that checks it (or will)
    experiments: tuple[Callable, ...] = ()  # their results are passed to `check`, in order
    check: Callable[..., Finding] | None = None

    def evaluate(self) -> Finding:
        if self.check is None:
            return Finding("", PENDING)
        finding = self.check(*(run() for run in self.experiments))
        if finding.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: unknown verdict {finding.verdict!r}")
        return finding


def _verdict(holds: bool) -> str:
    return REPRODUCED if holds else NOT_REPRODUCED


# ---- checks of notebook 02 (F1-F4) -------------------------------------------------------------


def check_f1(parity) -> Finding:
    same_function = max(parity.max_diff_module, parity.max_diff_numpy) < 1e-12
    # The check must be able to tell the choices apart: the unbiased or eps-outside versions differ.
    choices_visible = min(parity.max_diff_unbiased, parity.max_diff_eps_outside) > 1e-6
    init = parity.init_gain == 1.0 and parity.init_bias == 0.0
    ours = (
        f"lnpaper and numpy reference = nn.LayerNorm to {parity.max_diff_module:.1e} (float64); "
        f"1/(H-1) would change outputs by {parity.max_diff_unbiased:.2g}, eps outside the sqrt by "
        f"{parity.max_diff_eps_outside:.2g}; init g = {parity.init_gain:g}, b = {parity.init_bias:g}"
    )
    return Finding(ours, _verdict(same_function and choices_visible and init))


def check_f2(per_token) -> Finding:
    ours = (
        f"changing one token moves every other token's LayerNorm output by "
        f"{per_token.layernorm_max_other:g} (BatchNorm over B x T: up to "
        f"{per_token.batchnorm_max_other:.2g})"
    )
    return Finding(ours, _verdict(per_token.layernorm_max_other == 0.0))


def check_f3(backward) -> Finding:
    worst = max(backward.max_diff_dx, backward.max_diff_dgain, backward.max_diff_dbias)
    ours = (
        f"closed form = autograd to {worst:.1e} (float64, dx, dg, db); gradcheck "
        f"{'passes' if backward.gradcheck_passed else 'fails'}"
    )
    return Finding(ours, _verdict(worst < 1e-12 and backward.gradcheck_passed))


def check_f4(variants, one_pass) -> Finding:
    annotated = variants.ratios["unbiased std, eps outside (Annotated Transformer)"]
    eps_outside = variants.ratios["eps outside the sqrt"]
    at_100 = one_pass.offsets.index(100.0)
    one_pass_error = one_pass.variance_error["one pass E[a^2] - E[a]^2"][at_100]
    nonpositive = one_pass.nonpositive_fraction[at_100]
    ours = (
        f"H={variants.width}: unbiased std with eps outside gives {annotated[-1]:.4f}x the output at "
        f"std 10, eps outside {eps_outside[0]:.1f}x at std {variants.stds[0]:g}; one-pass variance at "
        f"mean 100, std 0.01 (float32): median error {one_pass_error:.0%}, "
        f"{nonpositive:.0%} of rows <= 0"
    )
    differ = abs(annotated[-1] - 1) > 1e-3 and eps_outside[0] > 2
    fails = one_pass_error > 1.0 and nonpositive > 0
    return Finding(ours, _verdict(differ and fails))


# ---- checks of notebook 04 (I1-I4) -------------------------------------------------------------


def invariance_extremes(result) -> tuple[float, float]:
    """The largest change in any cell measured Invariant and the smallest single-draw change in any
    cell measured No: the gap between them is what makes the threshold unambiguous."""
    largest_invariant = max(
        change
        for row in result.rows
        for column, change in result.max_change[row].items()
        if change < result.threshold
    )
    smallest_no = min(
        result.min_change[row][column]
        for row in result.rows
        for column, change in result.max_change[row].items()
        if change >= result.threshold
    )
    return largest_invariant, smallest_no


def check_i1(result) -> Finding:
    matches = all(table[row] == PAPER_TABLE[row] for table in result.tables for row in PAPER_TABLE)
    same_every_seed = all(table == result.tables[0] for table in result.tables)
    largest_invariant, smallest_no = invariance_extremes(result)
    separated = largest_invariant < result.threshold and smallest_no > 1e4 * result.threshold
    cells = sum(len(PAPER_TABLE[row]) for row in PAPER_TABLE)
    agree = sum(
        result.tables[0][row][column] == PAPER_TABLE[row][column]
        for row in PAPER_TABLE
        for column in PAPER_TABLE[row]
    )
    dyt = sum(result.tables[0]["dyt"].values())
    ours = (
        f"{agree}/{cells} cells of the sources' tables measured alike (float64, "
        f"{result.draws} random draws per cell, seeds {result.seeds[0]}-{result.seeds[-1]} all "
        f"{'the same' if same_every_seed else 'DIFFERENT'}); largest Invariant change "
        f"{largest_invariant:.1e}, smallest No change {smallest_no:.2g}; DyT (no source) invariant "
        f"to {dyt} of 6"
    )
    return Finding(ours, _verdict(matches and same_every_seed and separated))


def check_i2(result) -> Finding:
    reparameterized = max(result.weightnorm_change, result.batchnorm_expected_change) < 1e-12
    different = min(result.layernorm_change_per_unit) > 1e-2
    ours = (
        f"w_{result.unit + 1} x {result.delta:g}: on new inputs WeightNorm's map moves "
        f"{result.weightnorm_change:.1e}, BatchNorm with expected statistics "
        f"{result.batchnorm_expected_change:.1e} (with the old running statistics "
        f"{result.batchnorm_stale_change:.2g}); LayerNorm's {result.layernorm_change:.2g}, every "
        f"unit at least {min(result.layernorm_change_per_unit):.2g}"
    )
    return Finding(ours, _verdict(reparameterized and different))


def sgd_identity_error(result, key: str) -> float:
    """max over steps of |(||W_t+1||^2 - ||W_t||^2) - lr^2 ||g_t||^2| / (lr^2 ||g_t||^2)."""
    return max(
        abs(increment - (result.lr * grad) ** 2) / (result.lr * grad) ** 2
        for increment, grad in zip(
            result.norm_sq_increments[key], result.grad_norms[key], strict=True
        )
    )


def check_i3(result) -> Finding:
    keys = list(result.norms)
    worst_cosine = max(abs(c) for key in keys for c in result.cosines[key])
    only_grows = all(
        b > a
        for key in keys
        for a, b in zip(result.norms[key][:-1], result.norms[key][1:], strict=True)
    )
    identity = max(sgd_identity_error(result, key) for key in keys)
    halves = abs(result.halving_ratio - 0.5) < 1e-12 and result.halving_deviation < 1e-12
    small, large = keys[0], keys[-1]
    # Both runs start from the same function on the same batch, so their first steps differ only
    # by the scale of W1: tan(angle) = lr ||g|| / ||W|| with ||g|| ~ 1 / ||W||.
    first_tan_ratio = math.tan(result.angles[small][0]) / math.tan(result.angles[large][0])
    norm_ratio_sq = (result.norms[large][0] / result.norms[small][0]) ** 2
    ours = (
        f"|cos(g, W)| <= {worst_cosine:.0e}; ||W1|| {result.norms[small][0]:.3g} -> "
        f"{result.norms[small][-1]:.3g} and {result.norms[large][0]:.3g} -> "
        f"{result.norms[large][-1]:.3g} over {result.steps} SGD steps, never falling; "
        f"||W_t+1||^2 - ||W_t||^2 = lr^2 ||g_t||^2 to {identity:.0e} (relative); gradient at 2W "
        f"x {result.halving_ratio:.4g}; first step's tan(angle) {first_tan_ratio:.4g}x smaller at "
        f"{norm_ratio_sq:.4g}x the ||W||^2; eps = 1e-5 leaves cos {result.cosine_library_eps:.1e}"
    )
    holds = worst_cosine < 1e-12 and only_grows and identity < 1e-6 and halves
    lr_scaling = abs(first_tan_ratio / norm_ratio_sq - 1) < 1e-9
    return Finding(ours, _verdict(holds and lr_scaling))


def check_i4(result) -> Finding:
    normalized = [kind for kind in result.kinds if kind != "layernorm, one row w_1"]
    exact = all(
        abs(result.ratios[kind][label] - factor) < 1e-12 and result.off_scalar[kind][label] < 1e-12
        for kind in normalized
        for label, factor in result.nominal.items()
    )
    halves = all(
        abs(result.length_ratio[kind] - 0.5) < 1e-12
        and abs(result.gradient_ratios[kind]["w"] - 0.5) < 1e-12
        for kind in normalized
    )
    same_output = all(result.logit_change[kind] == 0.0 for kind in normalized)
    row = "layernorm, one row w_1"
    row_breaks = result.logit_change[row] > 1e-2 and abs(result.ratios[row]["w-w"] - 0.25) > 0.05
    ours = (
        f"w doubled (WeightNorm, BatchNorm; LayerNorm: whole W): w-w Fisher block x "
        f"{result.ratios[normalized[0]]['w-w']:.4g} exactly; length element, w-g and w-b blocks and "
        f"gradient x {result.length_ratio[normalized[0]]:.4g}; g-g, b-b x "
        f"{result.ratios[normalized[0]]['g-g']:.4g}. So 1/2 holds for sqrt(u^T F u), not for the "
        f"curvature u^T F u (1/4). LayerNorm, one row doubled: output moves "
        f"{result.logit_change[row]:.2g}, w_1 block x {result.ratios[row]['w-w']:.3g}"
    )
    if not (exact and halves and same_output and row_breaks):
        return Finding(ours, NOT_REPRODUCED)
    return Finding(ours, PARTLY)


# ---- checks of notebook 01 (M1-M5) -------------------------------------------------------------


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
    return Finding(ours, _verdict(holds))


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
    return Finding(ours, _verdict(holds))


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
    return Finding(ours, _verdict(holds))


def m4_summary(lstm) -> dict:
    """The numbers behind M4: the transient against the steady state, and each inference scheme's
    scale error in the transient, inside the training length and beyond it."""
    t_max, steady = lstm.train_length, lstm.steady_from
    transient = lstm.transient["a_t"]

    def mean(values):
        return sum(values) / len(values)

    summary = {
        "first_step": transient[0],
        "steady": mean(transient[steady:]),
        # the first step whose distance is within twice the steady level
        "settled_at": next(t for t, d in enumerate(transient) if d < 2 * mean(transient[steady:])),
    }
    for name, scale in lstm.scale.items():
        summary[name] = {
            "first": scale[0],
            "inside": mean(scale[t_max // 2 : t_max]),
            "beyond": mean(scale[t_max:]),
        }
    return summary


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
        f"transient) {short['beyond']:.2f} beyond. BN-LSTM vs LSTM accuracy: R4 (notebook 03); "
        f"the permuted task is not run"
    )
    mechanism = (
        numbers["first_step"] > 3 * numbers["steady"]
        and averaged["first"] > 3 * rule["first"]
        and rule["beyond"] < 1.5 * rule["inside"]
        and short["beyond"] > 3 * rule["beyond"]
    )
    # The statistics reproduce. The paper's accuracies are for sequential and permuted MNIST;
    # notebook 03 trains a BN-LSTM on the digits read row by row (R4), not on a permuted task.
    return Finding(ours, PARTLY if mechanism else NOT_REPRODUCED)


def m5_cells(robustness) -> dict:
    """(model, batch size) -> mean and sd over seeds of the final test NLL and accuracy."""
    cells = {}
    for name, by_batch in robustness.final.items():
        for batch, runs in by_batch.items():
            cells[name, int(batch)] = {key: mean_sd(values) for key, values in runs.items()}
    return cells


def check_m5(robustness) -> Finding:
    cells = m5_cells(robustness)
    big, small = robustness.batch_sizes
    ln_big, ln_small = cells["layernorm", big], cells["layernorm", small]
    bn_big, bn_small = cells["batchnorm", big], cells["batchnorm", small]
    # LN robust: at the small batch no worse than at the big one beyond the seeds' spread.
    ln_robust = (
        ln_small["nll"][0] <= ln_big["nll"][0] + max(ln_small["nll"][1], ln_big["nll"][1])
        and ln_small["accuracy"][0] >= ln_big["accuracy"][0] - 0.01
    )
    # BN degrades: worse NLL by more than both spreads together, and lower accuracy.
    bn_degrades = (
        bn_small["nll"][0] > bn_big["nll"][0] + bn_small["nll"][1] + bn_big["nll"][1]
        and bn_small["accuracy"][0] < bn_big["accuracy"][0]
    )

    def cell(values):
        (nll, nll_sd), (accuracy, accuracy_sd) = values["nll"], values["accuracy"]
        return f"{nll:.3f}+-{nll_sd:.3f} / {100 * accuracy:.1f}+-{100 * accuracy_sd:.1f}%"

    ours = (
        f"digits 64-{robustness.sizes[1]}-{robustness.sizes[2]}-10, {robustness.epochs} epochs, "
        f"{len(robustness.seeds)} seeds, test NLL / accuracy (mean+-sd): LN {cell(ln_big)} at "
        f"batch {big}, {cell(ln_small)} at {small}; BN {cell(bn_big)} at {big}, "
        f"{cell(bn_small)} at {small}"
    )
    if ln_robust and bn_degrades:
        return Finding(ours, REPRODUCED)
    return Finding(ours, PARTLY if ln_robust or bn_degrades else NOT_REPRODUCED)


# ---- checks of notebook 05 (T1-T7) -------------------------------------------------------------


def check_t1(xiong) -> Finding:
    """Post-LN: the 14-to-6 ratio within two standard errors of 1; Pre-LN: below 1 by more than two."""
    post, pre = xiong.post, xiong.pre
    post_flat = abs(post["ratio_last_to_first"] - 1) <= 2 * post["ratio_standard_error"]
    pre_falls = pre["ratio_last_to_first"] + 2 * pre["ratio_standard_error"] < 1
    depth_ratio = (pre["depths"][0] / pre["depths"][-1]) ** 0.5
    ours = (
        f"d={post['d_model']}, {len(post['seeds'])} seeds, L={post['depths'][0]}..{post['depths'][-1]}: "
        f"Post-LN {post['mean_grad_norm'][0]:.3g} .. {post['mean_grad_norm'][-1]:.3g}, ratio "
        f"{post['ratio_last_to_first']:.2f} +- {post['ratio_standard_error']:.2f}; Pre-LN "
        f"{pre['mean_grad_norm'][0]:.3g} .. {pre['mean_grad_norm'][-1]:.3g}, ratio "
        f"{pre['ratio_last_to_first']:.2f} +- {pre['ratio_standard_error']:.2f} "
        f"(sqrt({pre['depths'][0]}/{pre['depths'][-1]}) = {depth_ratio:.2f})"
    )
    if post_flat and pre_falls:
        return Finding(ours, REPRODUCED)
    return Finding(ours, PARTLY if post_flat or pre_falls else NOT_REPRODUCED)


def check_t2(xiong) -> Finding:
    """Lemma 2 holds for l > 0 (l = 0 is the input itself, E||x_0||^2 = d)."""
    post, pre = xiong.post, xiong.pre
    post_ok = all(abs(v - 1.5) < 0.15 for v in post["residual_sq_norm"])
    inside = [
        1 + layer / 2 <= v <= 1 + 1.5 * layer
        for layer, v in zip(pre["layers"], pre["residual_sq_norm"], strict=True)
        if layer > 0
    ]
    last, value = pre["layers"][-1], pre["residual_sq_norm"][-1]
    ours = (
        f"Post-LN ||x^(post,5)||^2/d = {min(post['residual_sq_norm']):.3g} .. "
        f"{max(post['residual_sq_norm']):.3g} over blocks (3/2); Pre-LN ||x_l||^2/d inside the "
        f"bounds at {sum(inside)}/{len(inside)} depths l = 1..{last}, e.g. l={last}: {value:.3g} in "
        f"[{1 + last / 2:g}, {1 + 1.5 * last:g}]"
    )
    return Finding(ours, _verdict(post_ok and all(inside)))


def check_t3(study) -> Finding:
    runs = study.runs
    post_cold, post_warm = runs["Post-LN, no warmup"], runs["Post-LN, warmup"]
    pre_cold, pre_warm = runs["Pre-LN, no warmup"], runs["Pre-LN, warmup"]
    bigram = post_cold["levels"]["bigram"]

    def finals(run):
        return [v if v is not None else float("inf") for v in run["final_loss"]]

    # Post-LN needs warmup: without it every seed ends above the bigram level, with it every seed
    # below; Pre-LN without warmup is within 0.1 nats of Pre-LN with warmup.
    post_needs = min(finals(post_cold)) > bigram > max(finals(post_warm))
    pre_mean = [sum(finals(run)) / len(run["final_loss"]) for run in (pre_cold, pre_warm)]
    pre_fine = max(finals(pre_cold)) < bigram and abs(pre_mean[0] - pre_mean[1]) < 0.1
    ours = (
        f"held-out loss after {post_cold['steps'][-1]} steps, Adam lr {post_cold['lr']:g}, "
        f"{len(post_cold['seeds'])} seeds (bigram level {bigram:.3g}): Post-LN "
        f"{mean_sd_text(post_cold['final_loss'])} without warmup vs {mean_sd_text(post_warm['final_loss'])} "
        f"with {post_warm['warmup_steps']} warmup steps; Pre-LN {mean_sd_text(pre_cold['final_loss'])} "
        f"vs {mean_sd_text(pre_warm['final_loss'])}"
    )
    return Finding(ours, _verdict(post_needs and pre_fine))


def check_t4(study) -> Finding:
    cold = study.runs["no norm (identity), no warmup"]
    warm = study.runs["no norm (identity), warmup"]
    pre = study.runs["Pre-LN, no warmup"]
    unigram = cold["levels"]["unigram"]
    fails = all(v is None or v > unigram for v in cold["final_loss"])
    ours = (
        f"6 layers, identity norms, lr {cold['lr']:g}: {mean_sd_text(cold['final_loss'])} without "
        f"warmup (unigram level {unigram:.3g}); {mean_sd_text(warm['final_loss'])} with warmup; "
        f"Pre-LN {mean_sd_text(pre['final_loss'])}"
    )
    return Finding(ours, _verdict(fails))


def check_t5(study) -> Finding:
    xavier, fixup = study.runs.values()
    bigram = fixup["levels"]["bigram"]
    xavier_fails = all(v is None or v > fixup["levels"]["unigram"] for v in xavier["final_loss"])
    fixup_trains = all(v is not None and v < bigram for v in fixup["final_loss"])
    ours = (
        f"{fixup['n_layers']} layers (not 200), no norm, no warmup, lr {fixup['lr']:g}, "
        f"{len(fixup['seeds'])} seeds: Xavier {mean_sd_text(xavier['final_loss'])}; T-Fixup "
        f"{mean_sd_text(fixup['final_loss'])} (bigram level {bigram:.3g})"
    )
    return Finding(ours, _verdict(xavier_fails and fixup_trains))


def check_t6(study) -> Finding:
    dyt, layernorm = study.runs["Pre-DyT, no warmup"], study.runs["Pre-LN, no warmup"]
    if None in dyt["final_loss"]:
        return Finding(f"DyT: {mean_sd_text(dyt['final_loss'])}", NOT_REPRODUCED)
    matches = comparable(dyt, layernorm)
    trains = max(dyt["final_loss"]) < dyt["levels"]["bigram"]
    ours = (
        f"Pre-LN placement, 6 layers, alpha init 0.5, {dyt['steps'][-1]} steps: DyT "
        f"{mean_sd_text(dyt['final_loss'])} vs LayerNorm {mean_sd_text(layernorm['final_loss'])}"
    )
    return Finding(ours, REPRODUCED if matches else (PARTLY if trains else NOT_REPRODUCED))


def smoothness_medians(smoothness) -> dict:
    """measure -> normalizer -> median over the checkpoints after step 0 (training proper)."""
    measures = ("loss_range", "grad_change", "beta_smoothness")
    return {
        key: {
            norm: statistics.median(values[1:]) for norm, values in getattr(smoothness, key).items()
        }
        for key in measures
    }


def check_t7(projection, smoothness) -> Finding:
    exact = projection.max_diff_formula < 1e-12 and projection.max_sum < 1e-12
    medians = smoothness_medians(smoothness)
    bn = {k: medians[k]["batchnorm"] for k in ("loss_range", "grad_change")}
    no = {k: medians[k]["none"] for k in ("loss_range", "grad_change")}
    smoother = all(bn[k] < no[k] for k in bn)
    ours = (
        f"backward = (gamma/sigma) x (g - 1<1,g>/N - y_hat<y_hat,g>/N) to "
        f"{projection.max_diff_formula:.1e} (float64); MLP on digits, SGD lr {smoothness.lr:g}, "
        f"median over training: loss variation along a step {bn['loss_range']:.2g} (BN) vs "
        f"{no['loss_range']:.2g} (none), gradient change {bn['grad_change']:.2g} vs "
        f"{no['grad_change']:.2g}; the input-distribution experiment is not run"
    )
    return Finding(ours, PARTLY if exact and smoother else NOT_REPRODUCED)


# ---- checks of notebook 03 (R1-R5) -------------------------------------------------------------


def length_summary(longer) -> dict:
    """model -> mean +- sd over seeds of the accuracy inside the training length (steps delay to
    T_max - 1) and beyond it (T_max to the end)."""
    inside = slice(0, longer.train_length - longer.delay)  # accuracy lists start at step `delay`
    beyond = slice(longer.train_length - longer.delay, None)
    return {
        model: {
            part: mean_sd([statistics.fmean(run[steps]) for run in runs])
            for part, steps in (("inside", inside), ("beyond", beyond))
        }
        for model, runs in longer.accuracy.items()
    }


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
    return Finding(ours, _verdict(equations and invariant and stateless and any_length))


def dynamics_summary(dynamics) -> dict:
    """The numbers behind R2, over the free-running steps (after the input)."""
    free = slice(dynamics.input_steps, None)
    scales = [str(s) for s in dynamics.scales]
    plain_summed = dynamics.summed_rms["tanh RNN"]
    ln_hidden = [v for s in scales for v in dynamics.hidden_rms["LN tanh RNN"][s][free]]
    # the LN RNN's summed inputs over the scale: one number for every scale if a_t just scales
    ln_per_scale = [
        statistics.fmean(dynamics.summed_rms["LN tanh RNN"][s][free]) / float(s) for s in scales
    ]

    def growth(net, s):  # mean factor per step of the dependence on step 0, free-running
        values = dynamics.sensitivity[net][s]
        steps = len(values) - dynamics.input_steps
        return (values[-1] / values[dynamics.input_steps - 1]) ** (1 / steps)

    return {
        "plain_summed_last": {s: plain_summed[s][-1] for s in scales},
        "ln_hidden_range": (min(ln_hidden), max(ln_hidden)),
        "ln_summed_per_scale": (min(ln_per_scale), max(ln_per_scale)),
        "growth": {net: {s: growth(net, s) for s in scales} for net in dynamics.sensitivity},
        "same_until": next(
            (t for t, d in enumerate(dynamics.layernorm_difference) if d > 1e-3), dynamics.steps
        ),
    }


def check_r2(dynamics) -> Finding:
    numbers = dynamics_summary(dynamics)
    low, high = str(dynamics.scales[0]), str(dynamics.scales[-1])
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


def training_summary(study, lr: float) -> dict:
    """The numbers behind R3 and R4 at one learning rate, against the LSTM at that rate.

    "level" is the LSTM's best validation NLL (minimum of its curve averaged over seeds), "reach"
    the first evaluation at which a model's averaged curve gets there (None: never), and
    "reach_per_seed" the same per seed against that seed's LSTM. "early" is each seed's mean
    validation NLL over the first quarter of training (step 0 excluded): how fast it starts.
    """
    runs = {name.split(",")[0]: run for name, run in study.runs.items() if run["lr"] == lr}
    baseline = runs["LSTM"]
    steps = baseline["eval_steps"]
    level = min(statistics.fmean(col) for col in zip(*baseline["val_loss"], strict=True))
    quarter = [k for k, step in enumerate(steps) if 0 < step <= steps[-1] / 4]
    summary = {"level": level, "steps": steps[-1]}
    for model, run in runs.items():
        mean_curve = [statistics.fmean(col) for col in zip(*run["val_loss"], strict=True)]
        summary[model] = {
            "reach": first_step_at_or_below(steps, mean_curve, level),
            "reach_per_seed": [
                first_step_at_or_below(steps, curve, min(base))
                for curve, base in zip(run["val_loss"], baseline["val_loss"], strict=True)
            ],
            "early": [statistics.fmean(curve[k] for k in quarter) for curve in run["val_loss"]],
            "test_accuracy": mean_sd(run["test_accuracy"]),
            "test_loss": mean_sd(run["test_loss"]),
        }
    return summary


def gain_summary(gains) -> dict:
    """run -> per seed, the mean validation NLL over the evaluations after step 0."""
    return {
        name: [statistics.fmean(curve[1:]) for curve in run["val_loss"]]
        for name, run in gains.runs.items()
    }


def _steps_text(reach) -> str:
    return "never" if reach is None else f"step {reach}"


def check_r3(study, gains) -> Finding:
    rates = (LOWER_LR, BASELINE_LR)
    summaries = {lr: training_summary(study, lr) for lr in rates}

    def starts_faster(s):
        pairs = zip(s["LN-LSTM"]["early"], s["LSTM"]["early"], strict=True)
        return all(ln < lstm for ln, lstm in pairs)

    def reaches_sooner(s):
        ln, lstm = s["LN-LSTM"]["reach"], s["LSTM"]["reach"]
        return ln is not None and ln < lstm

    by_gain = gain_summary(gains)
    pairs = zip(by_gain["LN-LSTM, gain 1.0"], by_gain["LN-LSTM, gain 0.1"], strict=True)
    gain_one_better = all(one < tenth for one, tenth in pairs)
    parts = []
    for lr, s in summaries.items():
        parts.append(
            f"lr {lr:g}: LSTM's best {s['level']:.3f} at step {s['LSTM']['reach']}, LN-LSTM "
            f"{_steps_text(s['LN-LSTM']['reach'])} (BN-LSTM "
            f"{_steps_text(s['BN-LSTM']['reach']) if 'BN-LSTM' in s else 'not run'})"
        )
    ours = (
        "digits row by row, 3 seeds, mean curves: "
        + "; ".join(parts)
        + "; first quarter of training: LN below LSTM in every seed at "
        + ", ".join(f"{lr:g} {'yes' if starts_faster(s) else 'no'}" for lr, s in summaries.items())
        + f"; LN gain 1.0 vs 0.1, mean NLL over {gains.runs['LN-LSTM, gain 0.1']['eval_steps'][-1]}"
        f" steps: {mean_sd_text(by_gain['LN-LSTM, gain 1.0'])} vs "
        f"{mean_sd_text(by_gain['LN-LSTM, gain 0.1'])}"
    )
    early = all(starts_faster(s) for s in summaries.values())
    sooner = all(reaches_sooner(s) for s in summaries.values())
    if early and sooner and gain_one_better:
        return Finding(ours, REPRODUCED)
    return Finding(ours, PARTLY if early else NOT_REPRODUCED)


def _tie(a, b) -> bool:
    """Two (mean, sd) pairs within the sum of their spreads of each other."""
    return abs(a[0] - b[0]) <= a[1] + b[1]


def check_r4(study) -> Finding:
    s = training_summary(study, BASELINE_LR)
    ln, lstm = s["LN-LSTM"], s["LSTM"]
    same_quality = _tie(ln["test_accuracy"], lstm["test_accuracy"]) and _tie(
        ln["test_loss"], lstm["test_loss"]
    )
    starts_faster = all(a < b for a, b in zip(ln["early"], lstm["early"], strict=True))

    def cell(run):
        (acc, acc_sd), (nll, nll_sd) = run["test_accuracy"], run["test_loss"]
        return f"{100 * acc:.1f} +- {100 * acc_sd:.1f}% / {nll:.3f} +- {nll_sd:.3f}"

    ours = (
        f"lr {BASELINE_LR:g} (the LSTM's best), after {s['steps']} steps, test accuracy"
        f" / NLL: LSTM {cell(lstm)}, LN-LSTM {cell(ln)}, BN-LSTM {cell(s['BN-LSTM'])}; LN ahead in "
        f"the first quarter in {sum(a < b for a, b in zip(ln['early'], lstm['early'], strict=True))}"
        f" of {len(ln['early'])} seeds"
    )
    if same_quality and starts_faster:
        return Finding(ours, REPRODUCED)
    return Finding(ours, PARTLY if same_quality or starts_faster else NOT_REPRODUCED)


def cnn_summary(cnn) -> dict:
    """margin -> norm -> mean +- sd over seeds of the test NLL and accuracy after training."""
    return {
        int(margin): {
            norm: {
                "test_loss": mean_sd(cnn.test_loss[margin][norm]),
                "test_accuracy": mean_sd(cnn.test_accuracy[margin][norm]),
            }
            for norm in cnn.norms
        }
        for margin in cnn.test_loss
    }


def _clearly_below(a, b) -> bool:
    """(mean, sd) a below b by more than both spreads together."""
    return a[0] + a[1] < b[0] - b[1]


def check_r5(cnn) -> Finding:
    summary = cnn_summary(cnn)
    ln_beats_none = all(
        _clearly_below(by_norm["layernorm"]["test_loss"], by_norm["none"]["test_loss"])
        for by_norm in summary.values()
    )
    bn_beats_ln = all(
        _clearly_below(by_norm["batchnorm"]["test_loss"], by_norm["layernorm"]["test_loss"])
        for by_norm in summary.values()
    )
    parts = []
    for margin in summary:
        side = 8 + 2 * margin
        nll = ", ".join(
            f"{norm} {mean_sd_text(cnn.test_loss[str(margin)][norm])}" for norm in cnn.norms
        )
        key = str(margin)
        parts.append(
            f"{side}x{side}: {nll}; units on at the border {cnn.border_active[key][-1]:.2f} vs "
            f"{cnn.interior_active[key][-1]:.2f} inside (conv 2)"
        )
    ours = f"test NLL after {cnn.steps} steps, {len(cnn.seeds)} seeds: " + "; ".join(parts)
    if ln_beats_none and bn_beats_ln:
        return Finding(ours, REPRODUCED)
    return Finding(ours, PARTLY if ln_beats_none else NOT_REPRODUCED)


# ---- checks of notebook 06 (P1-P5) -------------------------------------------------------------


def check_p1(comparison, invariances) -> Finding:
    """Equal on centered rows; the measured invariance row is the source's, and differs from
    LayerNorm's only in weight-matrix re-centering."""
    paper_row = all(table["rmsnorm"] == PAPER_TABLE["rmsnorm"] for table in invariances.tables)
    lost = lost_invariances(invariances, "rmsnorm", reference="layernorm")
    gained = lost_invariances(invariances, "layernorm", reference="rmsnorm")
    equal = comparison.max_diff_centered < 1e-12 and comparison.max_diff_raw > 1e-2
    shift = max(comparison.layernorm_shift_change) < 1e-12 < min(comparison.rmsnorm_shift_change)
    ours = (
        f"float64, d={comparison.width}: RMSNorm(a - mu) = LayerNorm(a) to "
        f"{comparison.max_diff_centered:.1e} (uncentered rows: {comparison.max_diff_raw:.2g} apart); "
        f"measured invariance row {'=' if paper_row else '!='} Zhang & Sennrich's Table 1, loses "
        f"{', '.join(lost) or 'nothing'} against LayerNorm; a shift c = {comparison.offsets[-1]:g} "
        f"shared by a row's units moves LayerNorm's output by "
        f"{comparison.layernorm_shift_change[-1]:.1e}, RMSNorm's by "
        f"{comparison.rmsnorm_shift_change[-1]:.2g}"
    )
    holds = equal and paper_row and lost == ["weight_matrix_recenter"] and not gained and shift
    return Finding(ours, _verdict(holds))


def comparable(run, reference) -> bool:
    """Mean final loss no worse than the reference's by more than the reference seeds' range (or
    0.02 nats): the criterion of T6, for 'matches quality'."""
    if None in run["final_loss"] or None in reference["final_loss"]:
        return False
    spread = max(reference["final_loss"]) - min(reference["final_loss"])
    gap = mean_sd(run["final_loss"])[0] - mean_sd(reference["final_loss"])[0]
    return gap <= max(spread, 0.02)


def check_p2(study) -> Finding:
    runs = study.runs
    ln, rms = runs["LayerNorm"], runs["RMSNorm"]
    ours = (
        f"Pre-norm LM of notebook 05 ({ln['n_layers']} layers, {ln['steps'][-1]} steps, lr "
        f"{ln['lr']:g}, {len(ln['seeds'])} seeds), held-out loss: LayerNorm "
        f"{mean_sd_text(ln['final_loss'])}, RMSNorm {mean_sd_text(rms['final_loss'])} (DyT "
        f"{mean_sd_text(runs['DyT']['final_loss'])})"
    )
    return Finding(ours, _verdict(comparable(rms, ln) and comparable(ln, rms)))


def check_p3(traffic) -> Finding:
    """Timings vary from run to run and cannot be stored; what is stored and checked is the memory
    traffic each way of writing the norms implies. The times: `python -m lnpaper bench`."""
    fwd, both = traffic.forward, traffic.forward_backward
    composed = fwd["rms norm, composed"] / fwd["layer norm, composed"]
    fewest = fwd["rms norm, fewest passes"] / fwd["layer norm, fewest passes"]
    shipped = fwd["F.rms_norm (composed)"] / fwd["F.layer_norm (fused)"]
    shipped_both = both["F.rms_norm (composed)"] / both["F.layer_norm (fused)"]
    ours = (
        f"GPU times not measurable here. CPU, values moved per value (reads + writes, forward): "
        f"written the same way RMSNorm moves {composed:.2f}x LayerNorm's (one op per step: "
        f"{fwd['rms norm, composed']:.0f} vs {fwd['layer norm, composed']:.0f}), {fewest:.2f}x "
        f"(fewest passes); as shipped in torch 2.13, F.rms_norm is "
        f"{len(traffic.forward_ops['F.rms_norm (composed)'])} ops moving {shipped:.1f}x the fused "
        f"F.layer_norm's ({shipped_both:.1f}x with backward); times: `python -m lnpaper bench`"
    )
    saves_written_alike = composed < 1 and fewest < 1
    return Finding(ours, PARTLY if saves_written_alike else NOT_REPRODUCED)


def check_p4(estimate, study) -> Finding:
    at = estimate.widths.index(1024)
    mean, sd = estimate.ratio_mean[at], estimate.ratio_sd[at]
    estimate_holds = abs(mean - 0.997) < 0.005 and abs(sd - 0.085) < 0.005
    prms, rms = study.runs["pRMSNorm (6.25%)"], study.runs["RMSNorm"]
    at_64 = estimate.widths.index(64)
    ours = (
        f"Gaussian rows, {estimate.samples} per width: at n = 1024 (k = "
        f"{estimate.units_used[at]}) RMS_k / RMS_n = {mean:.4f} +- {sd:.4f} (delta method "
        f"{estimate.ratio_mean_theory[at]:.4f} +- {estimate.ratio_sd_theory[at]:.4f}); at the LM's "
        f"d = 64 only k = {estimate.units_used[at_64]} units (sd {estimate.ratio_sd[at_64]:.2f}): held-out loss "
        f"{mean_sd_text(prms['final_loss'])} vs RMSNorm {mean_sd_text(rms['final_loss'])}"
    )
    if estimate_holds and comparable(prms, rms):
        return Finding(ours, REPRODUCED)
    return Finding(ours, PARTLY if estimate_holds else NOT_REPRODUCED)


def placement_summary(study) -> dict:
    """Per placement, per seed: the last block's stream variance after training, its growth over
    training (after / at init), its growth over depth after training (last block / first), and
    the spread of the blocks' gradient norms after training (largest / smallest)."""
    summary = {}
    for name, run in study.runs.items():
        rows = zip(run["stream_variance_init"], run["stream_variance_final"],
                   run["block_grad_norm_final"], strict=True)  # fmt: skip
        finished = [(init, final, grad) for init, final, grad in rows if final is not None]
        summary[name] = {
            "last_variance": [final[-1] for _, final, _ in finished],
            "growth_in_training": [final[-1] / init[-1] for init, final, _ in finished],
            "growth_over_depth": [final[-1] / final[0] for _, final, _ in finished],
            "grad_spread": [max(grad) / min(grad) for _, _, grad in finished],
        }
    return summary


def check_p5(study) -> Finding:
    """Peri-LN against Pre-LN after training at a high learning rate, seed by seed: a smaller
    stream, less growth in training, more even gradients; and, for 'balanced' across depth too,
    no steeper rise from the first block to the last."""
    summary = placement_summary(study)
    pre, peri = summary["Pre-LN"], summary["Peri-LN"]
    seeds = len(study.runs["Pre-LN"]["seeds"])
    if min(len(pre["last_variance"]), len(peri["last_variance"])) < seeds:
        return Finding("a Pre-LN or Peri-LN run diverged", NOT_REPRODUCED)

    def below(key):
        return all(a < b for a, b in zip(peri[key], pre[key], strict=True))

    def span(values):  # three significant digits, without exponents
        low, high = min(values), max(values)
        return "-".join(f"{v:.0f}" if v >= 100 else f"{v:.3g}" for v in (low, high))

    run = study.runs["Pre-LN"]
    ours = (
        f"{run['n_layers']} blocks, Adam lr {run['lr']:g}, {run['steps'][-1]} steps, {seeds} seeds, "
        f"Peri-LN vs Pre-LN: last block's stream variance {span(peri['last_variance'])} vs "
        f"{span(pre['last_variance'])}, grown {span(peri['growth_in_training'])}x vs "
        f"{span(pre['growth_in_training'])}x in training; block gradient norms spread "
        f"{span(peri['grad_spread'])}x vs {span(pre['grad_spread'])}x; but from block 1 to "
        f"{run['n_layers']} the variance rises {span(peri['growth_over_depth'])}x vs "
        f"{span(pre['growth_over_depth'])}x"
    )
    smaller = below("last_variance") and below("growth_in_training")
    steadier = below("grad_spread")
    if smaller and steadier and below("growth_over_depth"):
        return Finding(ours, REPRODUCED)
    return Finding(ours, PARTLY if smaller or steadier else NOT_REPRODUCED)


# ---- the ledger --------------------------------------------------------------------------------

N01, N02, N03 = "01_why_batchnorm_fails", "02_the_transpose", "03_layernorm_in_rnns"
N04, N05, N06 = "04_invariances", "05_the_transformer", "06_rmsnorm_and_placement"

CLAIMS = [
    Claim(
        "M1",
        "BatchNorm's output for one example depends on its batch-mates; LayerNorm's does not",
        f"{BA_2016}, Sec. 1-2",
        "argument, no number",
        N01,
        (experiments.batch_dependence,),
        check_m1,
    ),
    Claim(
        "M2",
        "training-mode BatchNorm on a batch of one outputs beta alone; LN is well defined",
        f"{BA_2016}, Sec. 1",
        "argument, no number",
        N01,
        (experiments.batch_of_one,),
        check_m2,
    ),
    Claim(
        "M3",
        "BatchNorm computes different functions in training and inference; LayerNorm one",
        f"{BA_2016}, Sec. 1-2",
        "argument, no number",
        N01,
        (experiments.train_vs_inference,),
        check_m3,
    ),
    Claim(
        "M4",
        "LSTM activations show a transient then a steady state: per-time-step statistics, "
        "T_max reused beyond training length",
        "Cooijmans et al. 2016",
        "seq. MNIST LSTM 98.9 / BN-LSTM 99.0; permuted 90.2 / 95.4",
        N01,
        (experiments.lstm_statistics,),
        check_m4,
    ),
    Claim(
        "M5",
        "LayerNorm is robust to batch size; BatchNorm degrades at batch 4",
        f"{BA_2016}, Sec. 6.7",
        "figure only (MNIST 784-1000-1000-10, batch 128 vs 4)",
        N01,
        (experiments.batch_size_robustness,),
        check_m5,
    ),
    Claim(
        "F1",
        "mu and sigma over the H units of one example, biased variance; gain 1, bias 0 at "
        "init; eps inside the sqrt in practice",
        f"{BA_2016}, Sec. 3; init Sec. 6",
        "no eps in the paper; eps = 1e-5 inside the sqrt in code",
        N02,
        (experiments.layernorm_parity,),
        check_f1,
    ),
    Claim(
        "F2",
        "in B x T x d, each (b, t) is normalized over its d features alone",
        f"{BA_2016}, Sec. 3, applied per token as in the Transformer",
        "no mixing across tokens or examples",
        N02,
        (experiments.per_token_independence,),
        check_f2,
    ),
    Claim(
        "F3",
        "LayerNorm's backward pass has a closed form equal to autograd",
        "derivation (notebook 02)",
        "projection off 1 and x_hat, scaled by g / sigma",
        N02,
        (experiments.backward_parity,),
        check_f3,
    ),
    Claim(
        "F4",
        "variants in the wild are different functions; one-pass variance fails at large offsets",
        "the Annotated Transformer; the authors' Lua/Torch code",
        "unbiased std + eps outside; float32 mean 100, std 0.01 gives variance <= 0",
        N02,
        (experiments.variants_vs_scale, experiments.one_pass_variance),
        check_f4,
    ),
    Claim(
        "R1",
        "LN-LSTM: separate LNs on W_h h and W_x x over the stacked 4H vector, LN on c_t "
        "inside the output tanh; no state over time",
        f"{BA_2016}, supplement Eq. 20-22",
        "equations",
        N03,
        (experiments.lnlstm_anatomy, experiments.longer_sequences),
        check_r1,
    ),
    Claim(
        "R2",
        "LN makes the recurrent layer invariant to rescaling its summed inputs, which "
        "stabilizes the hidden-to-hidden dynamics",
        f"{BA_2016}, Sec. 3.1",
        "argument, no number",
        N03,
        (experiments.rnn_dynamics,),
        check_r2,
    ),
    Claim(
        "R3",
        "LN speeds up recurrent models (order embeddings, skip-thoughts, DRAW, handwriting)",
        f"{BA_2016}, Sec. 6",
        "OE+LN best model in 60% of iterations; DRAW 82.36 vs 82.09 nats; attentive reader: "
        "LN gain init 1.0 significantly better than 0.1",
        N03,
        (experiments.recurrent_training, experiments.gain_init_study),
        check_r3,
    ),
    Claim(
        "R4",
        "the gain is speed, not final quality",
        f"{BA_2016}, Sec. 6",
        "DRAW: almost twice as fast, same final NLL",
        N03,
        (experiments.recurrent_training,),
        check_r4,
    ),
    Claim(
        "R5",
        "on a CNN, LN beats no normalization but BatchNorm beats LN",
        f"{BA_2016}, Sec. 6 (CNN, preliminary)",
        "no setup or numbers given",
        N03,
        (experiments.cnn_coda,),
        check_r5,
    ),
    Claim(
        "I1",
        "Table 1: invariances of BatchNorm, WeightNorm and LayerNorm under six transformations "
        "(and RMSNorm's row from its own paper)",
        f"{BA_2016}, Table 1; Zhang & Sennrich 2019, Table 1",
        "the 18 cells of Table 1 + RMSNorm's 6 (Invariant / No)",
        N04,
        (experiments.invariance_measurements,),
        check_i1,
    ),
    Claim(
        "I2",
        "WeightNorm and BatchNorm with expected statistics reparameterize; LN is a "
        "different function",
        f"{BA_2016}, Sec. 4-5",
        "argument, no number",
        N04,
        (experiments.reparameterization,),
        check_i2,
    ),
    Claim(
        "I3",
        "implicit learning-rate decay: gradient orthogonal to W, ||W|| grows under SGD, "
        "angular step shrinks like lr / ||W||^2",
        f"{BA_2016}, Sec. 5",
        "argument, no number",
        N04,
        (experiments.sgd_geometry,),
        check_i3,
    ),
    Claim(
        "I4",
        "doubling w_i changes the curvature along w_i by a factor of 1/2",
        f"{BA_2016}, Sec. 5",
        '1/2 ("because the sigma_i will also be twice as large")',
        N04,
        (experiments.fisher_doubling,),
        check_i4,
    ),
    Claim(
        "T1",
        "gradient of the last FFN W^(2) at init: Post-LN about constant in depth, Pre-LN "
        "falls like 1/sqrt(L)",
        "Xiong et al. 2020, Theorem 1 and experiments",
        "Post-LN ~1.6 for 6-14 layers; Pre-LN decreasing",
        N05,
        (experiments.xiong_setting,),
        check_t1,
    ),
    Claim(
        "T2",
        "residual-stream norms: Post-LN 3d/2; Pre-LN between (1 + l/2)d and (1 + 3l/2)d",
        "Xiong et al. 2020, Lemma 2",
        "3d/2; (1 + l/2)d .. (1 + 3l/2)d",
        N05,
        (experiments.xiong_setting,),
        check_t2,
    ),
    Claim(
        "T3",
        "Post-LN needs learning-rate warmup with Adam; Pre-LN trains without it",
        "Xiong et al. 2020, IWSLT14 experiments",
        "IWSLT14 De-En: BLEU 8.45 without warmup vs ~34 with",
        N05,
        (experiments.normalization_study,),
        check_t3,
    ),
    Claim(
        "T4",
        "without normalization the Transformer fails to train",
        "Zhang & Sennrich 2019, Transformer-base on WMT14",
        "WMT14: LN 26.6, RMSNorm 26.8 BLEU, none: fails",
        N05,
        (experiments.normalization_study,),
        check_t4,
    ),
    Claim(
        "T5",
        "T-Fixup initialization trains deep Transformers without LayerNorm or warmup",
        "Huang et al. 2020",
        "up to 200 layers",
        N05,
        (experiments.tfixup_study,),
        check_t5,
    ),
    Claim(
        "T6",
        "DyT (gamma tanh(alpha x) + beta) can replace every norm layer",
        "Zhu et al. 2025",
        "matches or beats normalized models at their scales",
        N05,
        (experiments.normalization_study,),
        check_t6,
    ),
    Claim(
        "T7",
        "BatchNorm's benefit is a smoother loss landscape, not stable input distributions",
        "Santurkar et al. 2018",
        "BN backward = (gamma / sigma) x projection off span{1, y_hat}",
        N05,
        (
            experiments.batchnorm_backward_projection,
            experiments.loss_smoothness,
        ),
        check_t7,
    ),
    Claim(
        "P1",
        "RMSNorm drops re-centering; it equals LayerNorm when the mean is zero",
        "Zhang & Sennrich 2019, the method and its Table 1",
        "exact equality for zero-mean inputs; re-centering invariance hypothesized dispensable",
        N06,
        (experiments.rmsnorm_vs_layernorm, experiments.invariance_measurements),
        check_p1,
    ),
    Claim(
        "P2",
        "RMSNorm matches LayerNorm's quality",
        "Zhang & Sennrich 2019",
        "WMT14 newstest2014: 26.8 vs 26.6 BLEU",
        N06,
        (experiments.rmsnorm_study,),
        check_p2,
    ),
    Claim(
        "P3",
        "RMSNorm saves time",
        "Zhang & Sennrich 2019",
        "7%-64% (64% is pRMSNorm; RMSNorm 6.9%-40.8%), GPU wall time",
        N06,
        (experiments.memory_traffic,),
        check_p3,
    ),
    Claim(
        "P4",
        "pRMSNorm estimates the RMS from the first 6.25% of units",
        "Zhang & Sennrich 2019 (pRMSNorm)",
        "p = 6.25%; reference measurement at n = 1024: RMS_k / RMS_n = 0.997 +- 0.085 (Gaussian)",
        N06,
        (experiments.prms_estimate, experiments.rmsnorm_study),
        check_p4,
    ),
    Claim(
        "P5",
        "Peri-LN gives more balanced variance growth and steadier gradients than Pre-LN",
        "Kim et al. 2025",
        "measured up to 3.2B parameters",
        N06,
        (experiments.placement_study,),
        check_p5,
    ),
]
BY_ID = {claim.id: claim for claim in CLAIMS}

COLUMNS = ("ID", "claim", "source", "paper's value", "ours", "verdict", "notebook")


def rows(ids=None) -> list[tuple[str, ...]]:
    """One row of the ledger per claim, evaluated now (experiments come from the result store)."""
    chosen = CLAIMS if ids is None else [BY_ID[i] for i in ids]
    out = []
    for claim in chosen:
        finding = claim.evaluate()
        out.append(
            (
                claim.id,
                claim.claim,
                claim.source,
                claim.paper_value,
                finding.ours,
                finding.verdict,
                claim.notebook,
            )
        )
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """The text of CLAIMS.md."""
    table = rows()
    counts = {verdict: sum(row[5] == verdict for row in table) for verdict in VERDICTS}
    summary = ", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count)
    lines = [
        "# Claims ledger",
        "",
        "Written by `python -m lnpaper figures` (`make figures`) from the claim records in",
        "`src/lnpaper/claims.py`; `make test` fails if this file differs from a fresh run. Each row",
        "gives the source by paper and section, the source's value, ours and a verdict: `reproduced`,",
        "`partly`, `not reproduced` or `not checkable at CPU scale`. A claim that no notebook checks",
        "yet says `pending`.",
        "",
        f"{len(table)} claims: {summary}.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in table:
        lines.append("| " + " | ".join(_cell(text) for text in row) + " |")
    return "\n".join(lines) + "\n"


def checked_here(ids) -> str:
    """The "Claims checked here" table at the end of a notebook, as plain text nbval can compare."""
    blocks = []
    for claim_id, claim, source, paper, ours, verdict, _ in rows(ids):
        blocks.append(
            f"{claim_id}  [{verdict}]  {claim}\n"
            f"    source: {source}\n    paper:  {paper}\n    ours:   {ours}"
        )
    return "\n\n".join(blocks)
