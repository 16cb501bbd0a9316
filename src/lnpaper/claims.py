"""The claims ledger: one record per claim the companion checks, and the writer of CLAIMS.md.

Claim IDs (M1-M5, F1-F4, R1-R5, I1-I4, T1-T7, P1-P5) follow the project's paper-facts sheet, which
holds the sources' exact equations and numbers.

A record says what a source claims and, once a notebook checks it, how: a function from experiment
results to our measured value and a verdict. CLAIMS.md and each notebook's "Claims checked here" table
are printed from these records, so the ledger cannot disagree with the notebooks.
"""

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from lnpaper import experiments

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


# ---- checks of notebook 05 (T1-T7) -------------------------------------------------------------


def _spread(values) -> str:
    """mean +- sd over seeds, or how many runs diverged."""
    finite = [v for v in values if v is not None]
    if not finite:
        return f"all {len(values)} diverged"
    mean = sum(finite) / len(finite)
    sd = (sum((v - mean) ** 2 for v in finite) / len(finite)) ** 0.5
    text = f"{mean:.3g} +- {sd:.2g}"
    return text if len(finite) == len(values) else f"{text} ({len(values) - len(finite)} diverged)"


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
        f"{_spread(post_cold['final_loss'])} without warmup vs {_spread(post_warm['final_loss'])} "
        f"with {post_warm['warmup_steps']} warmup steps; Pre-LN {_spread(pre_cold['final_loss'])} "
        f"vs {_spread(pre_warm['final_loss'])}"
    )
    return Finding(ours, _verdict(post_needs and pre_fine))


def check_t4(study) -> Finding:
    cold = study.runs["no norm (identity), no warmup"]
    warm = study.runs["no norm (identity), warmup"]
    pre = study.runs["Pre-LN, no warmup"]
    unigram = cold["levels"]["unigram"]
    fails = all(v is None or v > unigram for v in cold["final_loss"])
    ours = (
        f"6 layers, identity norms, lr {cold['lr']:g}: {_spread(cold['final_loss'])} without "
        f"warmup (unigram level {unigram:.3g}); {_spread(warm['final_loss'])} with warmup; "
        f"Pre-LN {_spread(pre['final_loss'])}"
    )
    return Finding(ours, _verdict(fails))


def check_t5(study) -> Finding:
    xavier, fixup = study.runs.values()
    bigram = fixup["levels"]["bigram"]
    xavier_fails = all(v is None or v > fixup["levels"]["unigram"] for v in xavier["final_loss"])
    fixup_trains = all(v is not None and v < bigram for v in fixup["final_loss"])
    ours = (
        f"{fixup['n_layers']} layers (not 200), no norm, no warmup, lr {fixup['lr']:g}, "
        f"{len(fixup['seeds'])} seeds: Xavier {_spread(xavier['final_loss'])}; T-Fixup "
        f"{_spread(fixup['final_loss'])} (bigram level {bigram:.3g})"
    )
    return Finding(ours, _verdict(xavier_fails and fixup_trains))


def check_t6(study) -> Finding:
    dyt, layernorm = study.runs["Pre-DyT, no warmup"], study.runs["Pre-LN, no warmup"]
    if None in dyt["final_loss"]:
        return Finding(f"DyT: {_spread(dyt['final_loss'])}", NOT_REPRODUCED)
    dyt_mean = sum(dyt["final_loss"]) / len(dyt["final_loss"])
    ln_mean = sum(layernorm["final_loss"]) / len(layernorm["final_loss"])
    ln_spread = max(layernorm["final_loss"]) - min(layernorm["final_loss"])
    matches = dyt_mean <= ln_mean + max(ln_spread, 0.02)
    trains = max(dyt["final_loss"]) < dyt["levels"]["bigram"]
    ours = (
        f"Pre-LN placement, 6 layers, alpha init 0.5, {dyt['steps'][-1]} steps: DyT "
        f"{_spread(dyt['final_loss'])} vs LayerNorm {_spread(layernorm['final_loss'])}"
    )
    return Finding(ours, REPRODUCED if matches else (PARTLY if trains else NOT_REPRODUCED))


def check_t7(projection, smoothness) -> Finding:
    exact = projection.max_diff_formula < 1e-12 and projection.max_sum < 1e-12

    def late_median(values):  # after the first checkpoint (step 0)
        return statistics.median(values[1:])

    bn = {
        k: late_median(getattr(smoothness, k)["batchnorm"]) for k in ("loss_range", "grad_change")
    }
    no = {k: late_median(getattr(smoothness, k)["none"]) for k in ("loss_range", "grad_change")}
    smoother = all(bn[k] < no[k] for k in bn)
    ours = (
        f"backward = (gamma/sigma) x (g - 1<1,g>/N - y_hat<y_hat,g>/N) to "
        f"{projection.max_diff_formula:.1e} (float64); MLP on digits, SGD lr {smoothness.lr:g}, "
        f"median over training: loss variation along a step {bn['loss_range']:.2g} (BN) vs "
        f"{no['loss_range']:.2g} (none), gradient change {bn['grad_change']:.2g} vs "
        f"{no['grad_change']:.2g}; the input-distribution experiment is not run"
    )
    return Finding(ours, PARTLY if exact and smoother else NOT_REPRODUCED)


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
    ),
    Claim(
        "M2",
        "training-mode BatchNorm on a batch of one outputs beta alone; LN is well defined",
        f"{BA_2016}, Sec. 1",
        "argument, no number",
        N01,
    ),
    Claim(
        "M3",
        "BatchNorm computes different functions in training and inference; LayerNorm one",
        f"{BA_2016}, Sec. 1-2",
        "argument, no number",
        N01,
    ),
    Claim(
        "M4",
        "LSTM activations show a transient then a steady state: per-time-step statistics, "
        "T_max reused beyond training length",
        "Cooijmans et al. 2016",
        "seq. MNIST LSTM 98.9 / BN-LSTM 99.0; permuted 90.2 / 95.4",
        N01,
    ),
    Claim(
        "M5",
        "LayerNorm is robust to batch size; BatchNorm degrades at batch 4",
        f"{BA_2016}, Sec. 6.7",
        "figure only (MNIST 784-1000-1000-10, batch 128 vs 4)",
        N01,
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
    ),
    Claim(
        "R2",
        "LN makes the recurrent layer invariant to rescaling its summed inputs, which "
        "stabilizes the hidden-to-hidden dynamics",
        f"{BA_2016}, Sec. 3.1",
        "argument, no number",
        N03,
    ),
    Claim(
        "R3",
        "LN speeds up recurrent models (order embeddings, skip-thoughts, DRAW, handwriting)",
        f"{BA_2016}, Sec. 6",
        "OE+LN best model in 60% of iterations; DRAW 82.36 vs 82.09 nats",
        N03,
    ),
    Claim(
        "R4",
        "the gain is speed, not final quality",
        f"{BA_2016}, Sec. 6",
        "DRAW: almost twice as fast, same final NLL",
        N03,
    ),
    Claim(
        "R5",
        "on a CNN, LN beats no normalization but BatchNorm beats LN",
        f"{BA_2016}, Sec. 6 (CNN, preliminary)",
        "no setup or numbers given",
        N03,
    ),
    Claim(
        "I1",
        "Table 1: invariances of BatchNorm, WeightNorm and LayerNorm",
        f"{BA_2016}, Table 1",
        "the 18 cells of Table 1 (RMSNorm: its paper's Table 1)",
        N04,
    ),
    Claim(
        "I2",
        "WeightNorm and BatchNorm with expected statistics reparameterize; LN is a "
        "different function",
        f"{BA_2016}, Sec. 4-5",
        "argument, no number",
        N04,
    ),
    Claim(
        "I3",
        "implicit learning-rate decay: gradient orthogonal to W, ||W|| grows under SGD",
        f"{BA_2016}, Sec. 5",
        "argument, no number",
        N04,
    ),
    Claim(
        "I4",
        "doubling w_i changes the curvature along w_i by a factor of 1/2",
        f"{BA_2016}, Sec. 5",
        "1/2 (raw w-w Fisher block changes by 1/4)",
        N04,
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
        "Zhang & Sennrich 2019",
        "exact equality for zero-mean inputs",
        N06,
    ),
    Claim(
        "P2",
        "RMSNorm matches LayerNorm's quality",
        "Zhang & Sennrich 2019",
        "WMT14 newstest2014: 26.8 vs 26.6 BLEU",
        N06,
    ),
    Claim(
        "P3",
        "RMSNorm saves time",
        "Zhang & Sennrich 2019",
        "7%-64% (64% is pRMSNorm; RMSNorm 6.9%-40.8%), GPU wall time",
        N06,
    ),
    Claim(
        "P4",
        "pRMSNorm estimates the RMS from the first 6.25% of units",
        "Zhang & Sennrich 2019 (pRMSNorm)",
        "p = 6.25%",
        N06,
    ),
    Claim(
        "P5",
        "Peri-LN gives more balanced variance growth and steadier gradients than Pre-LN",
        "Kim et al. 2025",
        "measured up to 3.2B parameters",
        N06,
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
