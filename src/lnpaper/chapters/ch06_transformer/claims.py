"""Claims of notebook 06, the Transformer: T1-T6, with T5b (ReZero) and T5c (T-Fixup against Pre-LN
at its depth). Santurkar et al.'s BatchNorm landscape (T7) is in `claims_smoothness`."""

import dataclasses
import math
import statistics

from lnpaper import formatting, stats, vocabulary
from lnpaper.chapters.ch06_transformer import analysis as ch06_analysis
from lnpaper.chapters.ch06_transformer import runs as ch06_runs
from lnpaper.companion.verdicts import (
    NOT_REPRODUCED,
    Claim,
    Finding,
    Quantity,
    aggregate,
    combine,
    count,
    exact,
    from_outcome,
    mean_over_seeds,
    tested,
    verdict,
)
from lnpaper.spread import mean_sd_text
from lnpaper.vocabulary import NEGLIGIBLE_NATS, outcome_word

# "About constant in depth" is declared before the runs: a per-seed slope of log ||grad|| against
# log L within +-1/4, half the -1/2 that Pre-LN's O(1/sqrt(L)) bound predicts.
T1_SLOPE_MARGIN = 0.25


def depth_slopes(arm: dict) -> list[float]:
    """Per seed, the least-squares slope of log ||dL/dW2|| against log L over the depths."""
    logs = [math.log(d) for d in arm["depths"]]
    centre = statistics.fmean(logs)
    xs = [v - centre for v in logs]
    return [
        sum(x * math.log(by_seed[seed]) for x, by_seed in zip(xs, arm["grad_norm"], strict=True))
        / sum(x * x for x in xs)
        for seed in range(len(arm["seeds"]))
    ]


def check_t1(xiong) -> Finding:
    """Post-LN's gradient flat in depth (slope within the margin), Pre-LN's falling (slope < 0)."""
    post, pre = xiong.post, xiong.pre
    post_slope = mean_over_seeds("Post-LN slope", depth_slopes(post))
    pre_slope = mean_over_seeds("Pre-LN slope", depth_slopes(pre))
    post_flat = stats.matches(post_slope.difference, T1_SLOPE_MARGIN)
    pre_falls = stats.better(pre_slope.difference, "lower")
    ours = (
        f"d={post['d_model']}, {len(post['seeds'])} seeds, L={post['depths'][0]}.."
        f"{post['depths'][-1]}, mean ||dL/dW2||: Post-LN {post['mean_grad_norm'][0]:.3g} .. "
        f"{post['mean_grad_norm'][-1]:.3g}, Pre-LN {pre['mean_grad_norm'][0]:.3g} .. "
        f"{pre['mean_grad_norm'][-1]:.3g}. Slope of log ||grad|| in log L (1/sqrt(L): -0.5): "
        f"Post-LN {tested(post_slope.difference, outcome_word(post_flat, 'flat'))}; Pre-LN "
        f"{tested(pre_slope.difference, outcome_word(pre_falls, 'falls'))}"
    )
    return Finding(ours, combine([post_flat, pre_falls]), (post_slope, pre_slope))


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
    # at initialization, no training: float32 roundoff over a forward pass, 1e-4 relative is ample
    quantities = (exact(f"Pre-LN ||x_{last}||^2 / d", value, 1e-4 * value),)
    return Finding(ours, verdict(post_ok and all(inside)), quantities)


NO_WORSE = f"no worse by {NEGLIGIBLE_NATS:g}"  # a non-inferiority test's word when it holds


def below_level(run: dict, level: str) -> tuple[str, stats.Difference | None, str]:
    """Whether the runs end below the level: final loss minus the level, 95% t CI below 0; the
    outcome, the difference (None if a run diverged) and its text."""
    if stats.count_diverged(run["final_loss"]):
        return stats.FAILS, None, "diverged"
    gap = stats.paired_difference(run["final_loss"], [run["levels"][level]] * len(run["seeds"]))
    outcome = stats.better(gap, "lower")
    return outcome, gap, tested(gap, outcome_word(outcome, "below"))


def check_t3(study) -> Finding:
    """Post-LN without warmup ends higher than with it (paired by seed); Pre-LN without warmup
    reaches what Post-LN reaches with warmup (Xiong et al.'s comparison: no worse by
    NEGLIGIBLE_NATS, paired by seed). Shown, not graded: whether warmup still helps Pre-LN, against
    the margin."""
    runs = study.runs
    post_cold, post_warm = runs["Post-LN, no warmup"], runs["Post-LN, warmup"]
    pre_cold, pre_warm = runs["Pre-LN, no warmup"], runs["Pre-LN, warmup"]
    bigram = post_cold["levels"]["bigram"]
    quantities = []

    def paired(a, b, label):  # a - b, or None when a run diverged (nothing to pair: counted)
        if stats.count_diverged(a["final_loss"] + b["final_loss"]):
            return None
        difference = stats.paired_difference(a["final_loss"], b["final_loss"])
        quantities.append(aggregate(label, difference))
        return difference

    def diverged_text(*arms):
        return f"{stats.count_diverged([v for a in arms for v in a['final_loss']])} run(s) diverged"

    warmup_gain = paired(post_cold, post_warm, "Post-LN loss, no warmup - warmup")
    if warmup_gain is None:
        needs, needs_text = stats.INCONCLUSIVE, diverged_text(post_cold, post_warm)
    else:
        needs = stats.better(warmup_gain, "higher")
        needs_text = tested(warmup_gain, outcome_word(needs, "higher"), unit="nats")
    against = paired(pre_cold, post_warm, "loss, Pre-LN no warmup - Post-LN warmup")
    if against is None:
        trains, trains_text = stats.INCONCLUSIVE, diverged_text(pre_cold, post_warm)
    else:
        trains = stats.no_worse(against, NEGLIGIBLE_NATS, "lower")
        trains_text = tested(against, outcome_word(trains, NO_WORSE), unit="nats")
    pre_gap = paired(pre_cold, pre_warm, "Pre-LN loss, no warmup - warmup")
    gap_text = diverged_text(pre_cold, pre_warm) if pre_gap is None else pre_gap.text()
    ours = (
        f"held-out loss after {post_cold['steps'][-1]} steps, Adam lr {post_cold['lr']:g}, "
        f"{len(post_cold['seeds'])} seeds (bigram level {bigram:.3g}): Post-LN "
        f"{mean_sd_text(post_cold['final_loss'])} without warmup vs "
        f"{mean_sd_text(post_warm['final_loss'])} with {post_warm['warmup_steps']} warmup steps, "
        f"difference {needs_text}; Pre-LN without warmup {mean_sd_text(pre_cold['final_loss'])}, "
        f"minus Post-LN with warmup {trains_text}. Not graded: Pre-LN with warmup "
        f"{mean_sd_text(pre_warm['final_loss'])}, without minus with {gap_text} (against the "
        f"{NEGLIGIBLE_NATS:g}-nat margin)"
    )
    return Finding(ours, combine([needs, trains]), tuple(quantities))


# the outcome of "most runs fail" (stats.most_runs), said of one arm's runs
T4_WORDS = {stats.HOLDS: "most fail", stats.FAILS: "most train", stats.INCONCLUSIVE: "undecided"}


def most_runs_fail(final_loss, levels, label: str) -> tuple[str, str, Quantity]:
    """Whether most of one arm's runs fail (diverge or do not end below the bigram level): 'k of n
    runs fail (rate 95% CI ..: most fail)', the outcome, and the count as a quantity."""
    n, failed = len(final_loss), vocabulary.failed_runs(final_loss, levels)
    low, high = stats.binomial_interval(failed, n)
    outcome = stats.most_runs(failed, n, label)
    text = f"{failed} of {n} runs fail (rate 95% CI {low:.2f}-{high:.2f}: {T4_WORDS[outcome]})"
    return text, outcome, count(label, failed, n)


def check_t4(confirmation, study) -> Finding:
    """Most runs fail in each arm, without warmup and with it (Transformer-base is normally trained
    with warmup, so the arm without it alone would test a harsher setting than the source's)."""
    parts, outcomes, quantities = [], [], []
    for name in ch06_analysis.T4_ARMS:
        run, first = confirmation.runs[name], study.runs[name]
        arm = name.removeprefix("no norm (identity), ")
        text, outcome, quantity = most_runs_fail(
            run["final_loss"], run["levels"], f"failed runs, {arm}"
        )
        outcomes.append(outcome)
        quantities.append(quantity)
        parts.append(
            f"{arm}: {text}, held-out loss {formatting.median_text(run['final_loss'])}; "
            f"seeds 0-5: {vocabulary.failed_runs(first['final_loss'], first['levels'])} of "
            f"{len(first['seeds'])}"
        )
    warm, pre_warm = study.runs[ch06_analysis.T4_ARMS[1]], study.runs["Pre-LN, warmup"]
    if stats.count_diverged(warm["final_loss"] + pre_warm["final_loss"]):
        behind_text = "not paired: a run diverged"
    else:
        behind = stats.paired_difference(warm["final_loss"], pre_warm["final_loss"])
        behind_text = behind.text()
        quantities.append(aggregate("no norm - Pre-LN loss, both with warmup", behind))
    ours = (
        f"{warm['n_layers']} layers, identity norms, one lr {warm['lr']:g} (no sweep), a run fails "
        f"if it diverges or does not end below the bigram level {warm['levels']['bigram']:.3g}; "
        f"seeds {ch06_analysis.T4_SEEDS[0]}-{ch06_analysis.T4_SEEDS[-1]}: "
        + "; ".join(parts)
        + f"; seeds 0-5, both with {warm['warmup_steps']} warmup steps, no norm minus Pre-LN in "
        "nats: " + behind_text
    )
    return Finding(ours, combine(outcomes), tuple(quantities))


def check_t5(study) -> Finding:
    """Xavier without a norm: most runs fail; T-Fixup: its loss minus the bigram level below 0."""
    xavier, fixup = study.runs.values()
    n = len(xavier["seeds"])
    failed = vocabulary.failed_runs(xavier["final_loss"], xavier["levels"])
    xavier_fails = stats.most_runs(failed, n, "failed runs, Xavier")
    trains, gap, gap_text = below_level(fixup, "bigram")
    ours = (
        f"{fixup['n_layers']} layers (not 200), no norm, no warmup, lr {fixup['lr']:g}, {n} seeds: "
        f"Xavier {failed} of {n} runs fail ({formatting.median_text(xavier['final_loss'])}); T-Fixup "
        f"{mean_sd_text(fixup['final_loss'])}, minus the bigram level {gap_text}"
    )
    quantities = (count("Xavier failed runs", failed, n),)
    if gap is not None:
        quantities += (aggregate("T-Fixup loss - bigram level", gap),)
    return Finding(ours, combine([xavier_fails, trains]), quantities)


def check_t5b(study, rezero) -> Finding:
    """ReZero trains T5's stack (loss minus the bigram level, CI below 0, T-Fixup's test in T5).
    Shown, not graded: ReZero minus T-Fixup, paired by seed."""
    fixup = study.runs[f"T-Fixup, {rezero.n_layers} layers, no norm"]
    trains, gap, gap_text = below_level(vars(rezero), "bigram")
    ours = (
        f"{rezero.n_layers} layers, no norm, no warmup, lr {rezero.lr:g}, {len(rezero.seeds)} "
        f"seeds: ReZero {mean_sd_text(rezero.final_loss)}, minus the bigram level {gap_text}"
    )
    if gap is not None and not stats.count_diverged(fixup["final_loss"]):
        versus = stats.paired_difference(rezero.final_loss, fixup["final_loss"])
        ours += f"; minus T-Fixup (not graded) {versus.text()}"
    quantities = () if gap is None else (aggregate("ReZero loss - bigram level", gap),)
    return Finding(ours, combine([trains]), quantities)


# "Matches the quality" of a language model: held-out loss no worse by more than the negligible
# difference (`vocabulary.NEGLIGIBLE_NATS`, 0.02 nats per token, about 1% of the learnable gap). The
# claims it serves (DyT "matches or beats", RMSNorm "comparable", pRMSNorm) are claims of no loss,
# so the test is one of non-inferiority: the interval's worse end must stay below +0.02.


def final_loss_match(run: dict, reference: dict) -> tuple[str, str, tuple]:
    """(outcome, text, quantities) of "run's held-out loss is no worse than reference's", paired by
    seed. A diverged run is no match: it is counted, and the outcome is `fails`."""
    diverged = stats.count_diverged(run["final_loss"] + reference["final_loss"])
    if diverged:
        text = f"{diverged} run(s) diverged: {formatting.median_text(run['final_loss'])}"
        return stats.FAILS, text, ()
    difference = stats.paired_difference(run["final_loss"], reference["final_loss"])
    outcome = stats.no_worse(difference, NEGLIGIBLE_NATS, "lower")
    text = tested(difference, outcome_word(outcome, NO_WORSE), unit="nats")
    return outcome, text, (aggregate("held-out loss", difference),)


def relabelled(quantities, prefix: str) -> tuple:
    """`quantities` with `prefix` before each label: what the comparison was."""
    return tuple(dataclasses.replace(q, label=f"{prefix} {q.label}") for q in quantities)


def check_t5c(study, pre) -> Finding:
    """T-Fixup against a normalized model of its own depth: the 12-block Pre-LN at the same rate
    without warmup, paired by seed; T-Fixup's held-out loss no worse by NEGLIGIBLE_NATS."""
    fixup = study.runs[f"T-Fixup, {pre.n_layers} layers, no norm"]
    outcome, text, quantities = final_loss_match(fixup, vars(pre))
    ours = (
        f"{pre.n_layers} layers, no warmup, lr {pre.lr:g}, {len(pre.seeds)} seeds, held-out "
        f"loss: T-Fixup {mean_sd_text(fixup['final_loss'])}, Pre-LN "
        f"{mean_sd_text(pre.final_loss)}; T-Fixup minus Pre-LN {text}"
    )
    return Finding(ours, from_outcome(outcome), relabelled(quantities, "T-Fixup - Pre-LN"))


def check_t6(study) -> Finding:
    dyt, layernorm = study.runs["DyT"], study.runs["LayerNorm"]
    outcome, text, quantities = final_loss_match(dyt, layernorm)
    ours = (
        f"Pre-norm LM, {dyt['n_layers']} layers, alpha init 0.5, {dyt['steps'][-1]} steps, "
        f"held-out loss: DyT {mean_sd_text(dyt['final_loss'])}, LayerNorm "
        f"{mean_sd_text(layernorm['final_loss'])}; DyT minus LayerNorm {text}"
    )
    return Finding(ours, from_outcome(outcome), relabelled(quantities, "DyT - LN"))


def sweep_choice(sweep, name: str) -> tuple[float | None, dict]:
    """(the rate T6b picks for `name`, rate -> its runs' mean last-window training loss). The pick
    is the rate whose runs end with the lowest training loss (mean over seeds of the last logged
    window: fresh sequences, so not the held-out set the comparison is graded on); a rate at which
    any seed diverged is not eligible."""
    scores = {}
    for lr in ch06_analysis.SWEEP_LRS:
        run = sweep.runs[ch06_analysis.sweep_name(name, lr)]
        if stats.count_diverged(run["final_loss"]):
            continue
        scores[lr] = statistics.fmean(row[-1] for row in run["train_loss"])
    return (min(scores, key=scores.get) if scores else None), scores


def picks_table(sweep, names) -> str:
    """Each arm's training and held-out loss at every rate of SWEEP_LRS, and the rate
    `sweep_choice` picks for it (notebook 06's T5d, T6b and T6c)."""
    width = max(map(len, names))
    lines = []
    for name in names:
        pick, scores = sweep_choice(sweep, name)
        for lr in ch06_analysis.SWEEP_LRS:
            run = sweep.runs[ch06_analysis.sweep_name(name, lr)]
            if lr not in scores:
                lines.append(f"{name:{width}s} lr {lr:<6g} a seed diverged")
                continue
            mark = "  <- picked" if lr == pick else ""
            lines.append(
                f"{name:{width}s} lr {lr:<6g} training {scores[lr]:.3f}, "
                f"held-out {statistics.fmean(run['final_loss']):.3f}{mark}"
            )
    return "\n".join(lines)


def at_picked_rates(sweep, name: str, reference: str, short: str) -> Finding:
    """`name` against `reference`, each at the rate `sweep_choice` picks for it: its held-out loss
    no worse than the reference's by NEGLIGIBLE_NATS, paired by seed. `short` labels the quantity,
    e.g. "DyT - LN"."""
    arms = (name, reference)
    picks = {arm: sweep_choice(sweep, arm)[0] for arm in arms}

    def means(arm):
        return ", ".join(
            f"{lr:g} {statistics.fmean(run['final_loss']):.3f}"
            if not stats.count_diverged(run["final_loss"]) else f"{lr:g} diverged"
            for lr in ch06_analysis.SWEEP_LRS
            for run in [sweep.runs[ch06_analysis.sweep_name(arm, lr)]]
        )  # fmt: skip

    grid = "; ".join(f"{arm} {means(arm)}" for arm in arms)
    if None in picks.values():
        return Finding(f"held-out loss by rate: {grid}; an arm diverged at every rate",
                       NOT_REPRODUCED)  # fmt: skip
    run, reference_run = (sweep.runs[ch06_analysis.sweep_name(arm, picks[arm])] for arm in arms)
    outcome, text, quantities = final_loss_match(run, reference_run)
    edges = (min(ch06_analysis.SWEEP_LRS), max(ch06_analysis.SWEEP_LRS))
    at_edge = [arm for arm, lr in picks.items() if lr in edges]
    ours = (
        f"held-out loss by rate ({len(run['seeds'])} seeds, mean): {grid}. Picked by training "
        f"loss: {name} {picks[name]:g}, {reference} {picks[reference]:g}"
        + (f" ({' and '.join(at_edge)} at the grid's edge)" if at_edge else "")
        + f"; {name} minus {reference}, each at its pick, {text}"
    )
    quantities = relabelled(quantities, f"{short} at their picked rates,")
    return Finding(ours, from_outcome(outcome), quantities)


def check_t6b(sweep) -> Finding:
    """T6 with each normalizer at its own best of three rates, picked by training loss."""
    return at_picked_rates(sweep, "DyT", "LayerNorm", "DyT - LN")


def at_long_budget(sweep, name: str, reference: str, short: str, setting: str) -> Finding:
    """`at_picked_rates` on a 600-step sweep (T5d, T6c), its setting named first."""
    finding = at_picked_rates(sweep, name, reference, short)
    return dataclasses.replace(finding, ours=f"{setting}; {finding.ours}")


def check_t5d(sweep) -> Finding:
    """T5c trained three times as long against Pre-LN with warmup, each at its own rate."""
    setting = (
        f"12 layers, {ch06_analysis.LONG_STEPS} steps; T-Fixup without warmup, Pre-LN with "
        f"{ch06_analysis.LONG_WARMUP} warmup steps"
    )
    return at_long_budget(sweep, "T-Fixup", "Pre-LN, warmup", "T-Fixup - Pre-LN", setting)


def check_t6c(sweep) -> Finding:
    """T6 trained three times as long, both norms with warmup, each at its own rate."""
    setting = (
        f"6 layers, {ch06_analysis.LONG_STEPS} steps, both with {ch06_analysis.LONG_WARMUP} "
        "warmup steps"
    )
    return at_long_budget(sweep, "DyT, warmup", "LayerNorm, warmup", "DyT - LN", setting)


CLAIMS = (
    Claim(
        id="T1",
        after_data="the slope margin (0.25) was fixed with these runs, after an earlier run of the same "
        "study had been seen; T1b grades it on fresh seeds (40-79) at five depths",
        claim="gradient of the last FFN W^(2) at init: Post-LN about constant in depth, Pre-LN "
        "falls like 1/sqrt(L)",
        source="Xiong et al. 2020, Theorem 1 and experiments",
        paper_value="Post-LN ~1.6 for 6-14 layers; Pre-LN decreasing",
        experiments=(ch06_analysis.xiong_setting,),
        check=check_t1,
        regime="source: encoder-decoder Transformers of 6-6 to 14-14 layers, d 512 (the IWSLT14 "
        "model), gradient of the FFN's W^(2) at initialization, 10 seeds; ours: decoder-only, "
        "d 128, d_ff 128, one head, W^Q = W^K = 0, 6-14 blocks, at init, batch 8 x 32 tokens, "
        "40 seeds",
        test="per-seed slope of log ||grad W2|| against log L, 95% t CI: Post-LN inside +-0.25 "
        "(declared beforehand: half the -0.5 of 1/sqrt(L)), Pre-LN below 0",
    ),
    Claim(
        id="T2",
        claim="residual-stream norms: Post-LN 3d/2; Pre-LN between (1 + l/2)d and (1 + 3l/2)d",
        source="Xiong et al. 2020, Lemma 2",
        paper_value="3d/2; (1 + l/2)d .. (1 + 3l/2)d",
        experiments=(ch06_analysis.xiong_setting,),
        check=check_t2,
        regime="source: Lemma 2 at initialization (Xavier weights, LN gain 1 bias 0, Gaussian "
        "inputs, W^Q = W^K = 0, d x d FFN), no training; ours: the same assumptions at init, "
        "d 128, one head, up to 14 blocks, batch 8 x 32 tokens, 40 seeds",
    ),
    Claim(
        id="T3",
        after_data="the 0.02-nat margin for Pre-LN without warmup against Post-LN with it was applied "
        "after these runs had been seen (it is the book's one negligible margin)",
        claim="Post-LN needs learning-rate warmup with Adam; Pre-LN trains without it",
        source="Xiong et al. 2020, IWSLT14 experiments",
        paper_value="IWSLT14 De-En: BLEU 8.45 without warmup vs ~34 with",
        experiments=(ch06_analysis.normalization_study,),
        check=check_t3,
        regime="source: IWSLT14 De-En, 6-6 encoder-decoder (d 512), Adam lr 5e-4 and 1e-3, 4,000 "
        "(and 500) warmup updates, full-length training, BLEU; ours: 6 blocks, d 64, Adam lr "
        "3e-3, 50 warmup steps, 200 steps (0.17 tokens per parameter), 6 seeds, held-out loss "
        "(training length not matched)",
        test="Post-LN: loss without minus with warmup, paired by seed, 95% t CI above 0; Pre-LN "
        "without warmup minus Post-LN with warmup (the source's comparison), paired by seed, 95% t "
        f"CI below +{NEGLIGIBLE_NATS:g} (no worse; margin declared for P2, T6, E1)",
    ),
    Claim(
        id="T4",
        budget="200 steps against full-length training with warmup: too short to tell a model "
        "that cannot train from one that trains slowly",
        claim="without normalization the Transformer fails to train",
        source="Zhang & Sennrich 2019, Transformer-base on WMT14",
        paper_value="WMT14: LN 26.6, RMSNorm 26.8 BLEU, none: fails",
        experiments=(ch06_analysis.t4_confirmation, ch06_analysis.normalization_study),
        check=check_t4,
        regime="source: Transformer-base (6-6 layers, d 512) on WMT14 En-De, full-length training in "
        "the usual recipe with warmup; ours: 6 blocks, d 64, identity norms, Adam lr 3e-3, "
        "200 steps (0.17 tokens per parameter), with 50 warmup steps and without, 30 seeds "
        "(the run is far shorter; not matched)",
        test="in each arm, without warmup and with it, on 30 seeds (6-35) declared before their "
        "runs: runs that fail (diverge, or do not end below the bigram level), Clopper-Pearson "
        "95% CI of the rate above 1/2; reproduced if both arms fail, partly if one does. Shown, "
        "not tested: seeds 0-5, and there no norm minus Pre-LN, both with warmup, paired by "
        "seed. One learning rate: no learning-rate sweep was run",
    ),
    Claim(
        id="T5",
        claim="T-Fixup initialization trains deep Transformers without LayerNorm or warmup",
        source="Huang et al. 2020",
        paper_value="up to 200 layers",
        experiments=(ch06_analysis.tfixup_study,),
        check=check_t5,
        regime="source: IWSLT14 De-En, 512-1024-4 encoder-decoder, no LN, no warmup, Adam lr 5e-4, "
        "4,000-token batches, 300 epochs of about 1,100 updates; depths up to 200 layers; "
        "ours: 12 blocks, d 64, Adam lr 3e-3, no warmup, 200 steps (0.09 tokens per "
        "parameter), 6 seeds (depth and length not matched)",
        test="Xavier: failed runs' rate, Clopper-Pearson 95% CI above 1/2; T-Fixup: loss minus the "
        "bigram level, 95% t CI below 0",
    ),
    Claim(
        id="T5e",
        claim="T-Fixup initialization trains deep Transformers without LayerNorm or warmup, at "
        "twice T5's depth",
        source="Huang et al. 2020",
        paper_value="up to 200 layers",
        experiments=(ch06_analysis.deep_tfixup_study,),
        check=check_t5,
        regime="source: IWSLT14 De-En, 512-1024-4 encoder-decoder, no LN, no warmup, Adam lr 5e-4, "
        "300 epochs of about 1,100 updates; depths up to 200 layers; ours: 24 blocks, d 64, "
        "Adam lr 3e-3, no warmup, 200 steps (0.04 tokens per parameter), 6 seeds (depth and "
        "length not matched)",
        test="T5's test at 24 blocks, declared before the runs: T5's data, lr 3e-3, 200 steps and "
        "seeds 0-5; Xavier: failed runs' rate, Clopper-Pearson 95% CI above 1/2; T-Fixup: loss "
        "minus the bigram level, 95% t CI below 0",
    ),
    Claim(
        id="T5b",
        claim="ReZero (SkipInit's gate): a zero-initialized scalar on each residual branch trains "
        "the same deep stack without LayerNorm or warmup",
        source="Bachlechner et al. 2020 (ReZero); De & Smith 2020 (SkipInit, for ResNets)",
        paper_value="no number used here: both train deep residual networks with no norm",
        experiments=(ch06_analysis.tfixup_study, ch06_runs.rezero_training),
        check=check_t5b,
        regime="source: ReZero trains Transformers of over a hundred layers on character-level "
        "language modelling, SkipInit deep ResNets, without a norm (training setting not "
        "given here); ours: T5's 12 blocks, d 64, a zero-initialized gate per branch, Adam lr "
        "3e-3, no warmup, 200 steps, 6 seeds (depth not matched)",
        test="T5's 12-block stack, data, lr and 6 seeds, Xavier init, every branch times a "
        "learnable a = 0 at init: loss minus the bigram level, 95% t CI below 0 (T-Fixup's "
        "test in T5)",
    ),
    Claim(
        id="T5c",
        claim="T-Fixup without a norm matches a normalized Transformer of the same depth",
        source="Huang et al. 2020 (T-Fixup: no LayerNorm, no warmup, matching or beating the "
        "normalized models)",
        paper_value="no number used here (their results are translation BLEU)",
        experiments=(ch06_analysis.tfixup_study, ch06_analysis.deep_preln),
        check=check_t5c,
        regime="source: T-Fixup (no LN, no warmup, Adam lr 5e-4, 300 epochs on IWSLT14) against "
        "normalized models trained with warmup, BLEU; ours: 12 blocks, d 64, both without "
        "warmup at lr 3e-3, 200 steps (0.09 tokens per parameter), 6 seeds, held-out loss "
        "(warmup for the normalized model and length not matched)",
        test="T5's 12-block stack, data, lr 3e-3, no warmup and 6 seeds: held-out loss, T-Fixup "
        f"minus Pre-LN, paired by seed, 95% t CI below +{NEGLIGIBLE_NATS:g} (non-inferiority, "
        "the negligible difference); declared before the Pre-LN run",
    ),
    Claim(
        id="T5d",
        claim="T-Fixup without a norm matches a normalized Transformer of the same depth, trained "
        "longer, each at its own best learning rate",
        source="Huang et al. 2020 (T-Fixup: no LayerNorm, no warmup, matching or beating the "
        "normalized models, which train with warmup)",
        paper_value="no number used here (their results are translation BLEU)",
        experiments=(ch06_analysis.long_tfixup_sweep,),
        check=check_t5d,
        regime="source: T-Fixup (no LN, no warmup, 300 epochs on IWSLT14) against normalized models "
        "trained with warmup, BLEU; ours: 12 blocks, 600 steps (0.26 tokens per parameter), "
        "T-Fixup without warmup, Pre-LN with 50 warmup steps, lr picked from 1e-3/3e-3/1e-2, "
        "seeds 50-59, held-out loss (length not matched)",
        test="T5's 12-block stack and data, 600 steps, 10 seeds (50-59) declared before their "
        "runs; T-Fixup without warmup, Pre-LN with 50 warmup steps, each at lr 1e-3, 3e-3 and "
        "1e-2 and at its rate picked by training loss as in T6b; held-out loss, T-Fixup minus "
        f"Pre-LN at their picks, paired by seed, 95% t CI below +{NEGLIGIBLE_NATS:g} "
        "(non-inferiority, the negligible difference)",
    ),
    Claim(
        id="T6",
        budget="no warmup and 0.17 tokens per parameter, against each recipe's warmup and long "
        "pretraining",
        claim="DyT (gamma tanh(alpha x) + beta) can replace every norm layer",
        source="Zhu et al. 2025",
        paper_value="matches or beats normalized models at their scales",
        experiments=(ch06_analysis.rmsnorm_study,),
        check=check_t6,
        regime="source: ViT/ConvNeXt on ImageNet, LLaMA 7B-70B and others, each on its normalized "
        "model's recipe (AdamW, warmup, long pretraining); ours: 6 blocks, d 64, alpha 0.5, "
        "Adam lr 3e-3, no warmup, 200 steps (0.17 tokens per parameter), 10 seeds (not "
        "matched: no warmup, far fewer tokens per parameter)",
        test="held-out loss, DyT minus LayerNorm, paired by seed, 95% t CI below +0.02 nats (no "
        "worse; margin declared beforehand)",
    ),
    Claim(
        id="T6b",
        budget="no warmup and 0.17 tokens per parameter, against each recipe's warmup and long "
        "pretraining",
        claim="DyT can replace every norm layer, each model at its own best learning rate",
        source="Zhu et al. 2025",
        paper_value="matches or beats normalized models at their scales (their recipes tune "
        "the rate per model)",
        experiments=(ch06_analysis.dyt_lr_sweep,),
        check=check_t6b,
        regime="source: ViT/ConvNeXt on ImageNet, LLaMA 7B-70B and others, on their recipes (AdamW, "
        "warmup, long pretraining); ours: 6 blocks, d 64, no warmup, 200 steps (0.17 tokens "
        "per parameter), lr 1e-3/3e-3/1e-2 picked by training loss, 10 seeds (not matched: no "
        "warmup, far fewer tokens per parameter)",
        test="T6's models, data and 10 seeds at lr 1e-3, 3e-3 and 1e-2; each normalizer's rate "
        "picked by its runs' training loss (mean over seeds of the last 10 steps, fresh "
        "sequences; a rate with a diverged seed is not eligible); held-out loss, DyT minus "
        "LayerNorm at their picks, paired by seed, 95% t CI below +0.02 nats (T6's margin); "
        "declared before the run",
    ),
    Claim(
        id="T6c",
        budget="0.51 tokens per parameter, against each recipe's long pretraining",
        claim="DyT can replace every norm layer, trained longer, with warmup, each at its own "
        "best learning rate",
        source="Zhu et al. 2025",
        paper_value="matches or beats normalized models at their scales (one recipe, with "
        "warmup, for both)",
        experiments=(ch06_analysis.long_dyt_sweep,),
        check=check_t6c,
        regime="source: ViT/ConvNeXt on ImageNet, LLaMA 7B-70B and others, on their recipes (AdamW, "
        "warmup, long pretraining); ours: 6 blocks, d 64, 600 steps (0.51 tokens per "
        "parameter), both with 50 warmup steps, lr 1e-3/3e-3/1e-2 picked by training loss, "
        "seeds 50-59 (far fewer tokens per parameter; not matched)",
        test="T6's 6-layer models and data, 600 steps, both with 50 warmup steps, 10 seeds "
        "(50-59) declared before their runs; each at lr 1e-3, 3e-3 and 1e-2 and at its rate "
        "picked by training loss as in T6b; held-out loss, DyT minus LayerNorm at their picks, "
        f"paired by seed, 95% t CI below +{NEGLIGIBLE_NATS:g} nats (T6's margin)",
    ),
)
