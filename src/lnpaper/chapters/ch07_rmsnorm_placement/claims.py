"""Claims of notebook 07, RMSNorm and placement: P1-P5."""

import math
import statistics

from lnpaper import bench, formatting, stats, vocabulary
from lnpaper.chapters.ch05_invariances import runs as ch05_runs
from lnpaper.chapters.ch05_invariances.invariance import PAPER_TABLE
from lnpaper.chapters.ch05_invariances.runs import lost_invariances
from lnpaper.chapters.ch06_transformer import analysis as ch06_analysis
from lnpaper.chapters.ch06_transformer.claims import at_picked_rates, final_loss_match, relabelled
from lnpaper.chapters.ch07_rmsnorm_placement import analysis
from lnpaper.chapters.ch07_rmsnorm_placement import runs as ch07_runs
from lnpaper.chapters.ch07_rmsnorm_placement.analysis import placement_summary, spike_summary
from lnpaper.companion.verdicts import (
    NOT_REPRODUCED,
    Claim,
    Finding,
    aggregate,
    combine,
    count,
    exact,
    from_outcome,
    verdict,
)
from lnpaper.spread import mean_sd_text


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
    quantities = (
        exact("RMSNorm(a - mu) - LayerNorm(a), float64", comparison.max_diff_centered, 1e-12),
    )
    return Finding(ours, verdict(holds), quantities)


def check_p2(study) -> Finding:
    runs = study.runs
    ln, rms = runs["LayerNorm"], runs["RMSNorm"]
    outcome, text, quantities = final_loss_match(rms, ln)
    ours = (
        f"Pre-norm LM of notebook 06 ({ln['n_layers']} layers, {ln['steps'][-1]} steps, lr "
        f"{ln['lr']:g}), held-out loss: LayerNorm {mean_sd_text(ln['final_loss'])}, RMSNorm "
        f"{mean_sd_text(rms['final_loss'])}; RMSNorm minus LayerNorm {text}"
    )
    return Finding(ours, from_outcome(outcome), relabelled(quantities, "RMS - LN"))


def check_p2b(sweep) -> Finding:
    """P2 with each normalizer at its own best of three rates, picked by training loss as in
    T6b."""
    return at_picked_rates(sweep, "RMSNorm", "LayerNorm", "RMS - LN")


def check_p2c(study) -> Finding:
    """RMSNorm from weights initialized off-center (the claim's `test`): a run that does not train
    fails the claim."""
    ln, rms = study.runs["LayerNorm"], study.runs["RMSNorm"]
    failed = {
        name: vocabulary.failed_runs(run["final_loss"], run["levels"])
        for name, run in study.runs.items()
    }
    outcome, text, quantities = final_loss_match(rms, ln)
    ours = (
        f"P2's model with every weight matrix shifted by {rms['center']:g} at init, "
        f"{len(rms['seeds'])} seeds, held-out loss: LayerNorm {mean_sd_text(ln['final_loss'])}, "
        f"RMSNorm {mean_sd_text(rms['final_loss'])}; runs that do not train: LayerNorm "
        f"{failed['LayerNorm']}, RMSNorm {failed['RMSNorm']}; RMSNorm minus LayerNorm {text}"
    )
    quantities = (
        count("RMSNorm runs that do not train", failed["RMSNorm"], len(rms["seeds"])),
        *relabelled(quantities, "RMS - LN"),
    )
    if failed["RMSNorm"]:
        return Finding(ours, NOT_REPRODUCED, quantities)
    return Finding(ours, from_outcome(outcome), quantities)


# P3's margin, declared before the timings: RMSNorm saves time when its time is below 1 / 1.1 of
# LayerNorm's (median over rounds of the per-round ratio), costs time above 1.1; in between the
# two cannot be told apart on a shared machine whose rounds wander by several percent.
TIME_MARGIN = 1.1
PASSES = {"forward": "forward", "forward_backward": "fwd+bwd"}


def time_ratio(times: dict, rms: str, ln: str, which: str) -> float:
    """Median over rounds of RMSNorm's time / LayerNorm's in the same round (rounds visit every
    version in turn, so a disturbance of the machine hits both sides of a round's ratio)."""
    return statistics.median(
        a / b for a, b in zip(times[rms][which], times[ln][which], strict=True)
    )  # fmt: skip


# P3 grades the formula: both norms written alike, as Zhang and Sennrich compared them in each
# framework. PyTorch's fused F.layer_norm against its composed F.rms_norm is reported beside.
P3_GRADED_WAYS = ("one op per step", "fewest passes")


def p3_table(timing) -> dict:
    """(way, pass) -> {setting: RMSNorm / LayerNorm time ratio}, and its outcome over every
    setting: the same in every shape and thread count, or undecided."""
    table = {}
    for way, (rms, ln) in bench.PAIRS.items():
        for which in PASSES:
            ratios = {setting: time_ratio(times, rms, ln, which)
                      for setting, times in timing.times.items()}  # fmt: skip
            outcome = stats.time_outcome(ratios.values(), TIME_MARGIN)
            table[way, which] = {"ratios": ratios, "outcome": outcome}
    return table


def check_p3(traffic, timing) -> Finding:
    """The mechanism, as the paper's GPU wall times cannot be measured on a CPU: does dropping the
    mean save time when both norms are written alike (graded by TIME_MARGIN in every setting of
    `norm_timing`), and as PyTorch ships them (reported beside)."""
    table = p3_table(timing)
    graded, beside = [], []
    for (way, which), row in table.items():
        low, high = min(row["ratios"].values()), max(row["ratios"].values())
        text = f"{way} {PASSES[which]} {low:.2f}-{high:.2f} ({row['outcome']})"
        (graded if way in P3_GRADED_WAYS else beside).append(text)
    fwd = traffic.forward
    ours = (
        "GPU wall time not measurable here. CPU, RMSNorm's time / LayerNorm's (median of per-round "
        f"ratios, {timing.rounds} rounds; range over {len(timing.times)} settings: shapes "
        f"{', '.join('x'.join(map(str, s)) for s in timing.shapes)}, "
        f"{' and '.join(map(str, timing.threads))} threads), written alike: "
        + "; ".join(graded)
        + ". Beside it, not graded (a fused PyTorch kernel against a composed one, a fact about "
        "the kernels rather than the formula): "
        + "; ".join(beside)
        + f". Values moved per value, forward: written alike {fwd['rms norm, composed']:.0f} vs "
        f"{fwd['layer norm, composed']:.0f} (one op per step); as shipped F.rms_norm "
        f"{fwd['F.rms_norm (composed)']:.0f} vs the fused F.layer_norm's "
        f"{fwd['F.layer_norm (fused)']:.0f}"
    )
    quantities = tuple(
        exact(f"values moved per value, {name}, forward", fwd[name], 1e-9)
        for pair in bench.PAIRS.values() for name in pair
    )  # fmt: skip
    outcomes = [
        stats.saves_time(row["ratios"].values(), TIME_MARGIN, label=f"{way}, {PASSES[which]}")
        for (way, which), row in table.items()
        if way in P3_GRADED_WAYS
    ]
    return Finding(ours, combine(outcomes), quantities)


def check_p4(estimate, study) -> Finding:
    """The estimate's numbers at n = 1024 against the delta method for Gaussian rows (the source
    gives none: a sampling check, within 5 standard errors of the sample mean and sd), and the LM
    with pRMSNorm against RMSNorm."""
    at = estimate.widths.index(1024)
    mean, sd = estimate.ratio_mean[at], estimate.ratio_sd[at]
    theory_mean, theory_sd = estimate.ratio_mean_theory[at], estimate.ratio_sd_theory[at]
    se_mean = sd / math.sqrt(estimate.samples)
    se_sd = sd / math.sqrt(2 * (estimate.samples - 1))
    estimate_holds = (abs(mean - theory_mean) < 5 * se_mean
                      and abs(sd - theory_sd) < 5 * se_sd)  # fmt: skip
    prms, rms = study.runs["pRMSNorm (6.25%)"], study.runs["RMSNorm"]
    outcome, text, quantities = final_loss_match(prms, rms)
    at_64 = estimate.widths.index(64)
    ours = (
        f"Gaussian rows, {estimate.samples} per width: at n = 1024 (k = "
        f"{estimate.units_used[at]}) RMS_k / RMS_n = {mean:.4f} +- {sd:.4f} (delta method "
        f"{estimate.ratio_mean_theory[at]:.4f} +- {estimate.ratio_sd_theory[at]:.4f}); at the LM's "
        f"d = 64 only k = {estimate.units_used[at_64]} units (sd {estimate.ratio_sd[at_64]:.2f}): "
        f"held-out loss {mean_sd_text(prms['final_loss'])} vs RMSNorm "
        f"{mean_sd_text(rms['final_loss'])}, pRMSNorm minus RMSNorm {text}. The model half is "
        f"graded at d = 64 (k = {estimate.units_used[at_64]}), far below the source's widths of "
        "hundreds to thousands of units: what it shows holds at this width only"
    )
    quantities = (
        exact("RMS_k / RMS_n mean at n = 1024", mean, 1e-6),
        *relabelled(quantities, "pRMS - RMS"),
    )
    outcomes = [stats.HOLDS if estimate_holds else stats.FAILS, outcome]
    return Finding(ours, combine(outcomes), quantities)


def log_difference(a, b) -> stats.Difference:
    """log a - log b, paired by seed: how a ratio of positive sizes is graded."""
    return stats.paired_difference([math.log(v) for v in a], [math.log(v) for v in b])


def _log_difference(summary, key: str) -> stats.Difference:
    return log_difference(summary["Peri-LN"][key], summary["Pre-LN"][key])


P5_MEASURES = {
    "last_variance": "last block's stream variance",
    "growth_in_training": "its growth in training",
    "grad_spread": "spread of block gradient norms",
}
# Shown, not graded: the last block's variance over the first block's divides out the growth that
# every block of the stream shares, the very growth the two variance measures above grade.
P5_SHOWN = {"growth_over_depth": "variance rise from block 1 to L"}


def check_p5(study, first_study, spikes, first_spikes) -> Finding:
    """P5's test (its `test` below) on `study`'s and `spikes`' fresh seeds; `first_study` and
    `first_spikes`, the six seeds the measures and tests were chosen on, shown beside them."""
    seeds = len(study.runs["Pre-LN"]["seeds"])
    diverged = sum(stats.count_diverged(study.runs[n]["final_loss"]) for n in ("Pre-LN", "Peri-LN"))
    diverged += sum(stats.count_diverged(run["final_loss"]) for run in spikes.runs.values())
    if diverged:
        return Finding(f"{diverged} Pre-LN or Peri-LN run(s) diverged", NOT_REPRODUCED)
    summary, first_summary = placement_summary(study), placement_summary(first_study)
    parts, first_parts, outcomes, quantities = [], [], [], []
    for key, label in (P5_MEASURES | P5_SHOWN).items():
        difference = _log_difference(summary, key)
        quantities.append(aggregate(f"log {label}, Peri - Pre", difference))
        first_parts.append(f"{label} {formatting.ratio_text(_log_difference(first_summary, key))}")
        if key in P5_SHOWN:
            parts.append(f"{label} {formatting.ratio_text(difference)} (shown, not graded)")
            continue
        outcome = stats.better(difference, "lower")
        outcomes.append(outcome)
        parts.append(f"{label} {formatting.ratio_text(difference)} ({outcome})")
    first = spike_summary(first_spikes)
    first_run = next(iter(spikes.runs.values()))
    chances = first_run["steps"] - stats.SPIKE_WINDOW
    spike_parts = []
    for lr, arms in spike_summary(spikes).items():
        pre, peri = arms["Pre-LN"], arms["Peri-LN"]
        jump = log_difference(peri["largest_jump"], pre["largest_jump"])
        fewer, more = peri["spikes"], pre["spikes"]
        count_outcome = stats.fewer_events(fewer, more, chances, f"spikes at lr {lr:g}")
        jump_outcome = stats.better(jump, "lower")
        outcomes += [count_outcome, jump_outcome]
        n = len(more)
        for name, spike_counts in (("Pre-LN", more), ("Peri-LN", fewer)):
            quantities.append(count(f"{name} spikes, lr {lr:g}", sum(spike_counts), n * chances))
        quantities.append(aggregate(f"log largest gradient jump, Peri - Pre, lr {lr:g}", jump))
        earlier = first[lr]
        spike_parts.append(
            f"lr {lr:g}: spikes {sum(more)} vs {sum(fewer)} over {n} runs each "
            f"(Peri-LN {formatting.event_counts_text(fewer, more)}; permutation "
            f"test p = {stats.events_p(fewer, more):.2g}: {count_outcome}), "
            f"largest jump x{math.exp(jump.mean):.2g} "
            f"[{math.exp(jump.low):.2g}, {math.exp(jump.high):.2g}] ({jump_outcome}); on the first "
            f"{len(earlier['Pre-LN']['spikes'])} seeds (not graded) "
            f"{sum(earlier['Pre-LN']['spikes'])} vs {sum(earlier['Peri-LN']['spikes'])}"
        )
    run = study.runs["Pre-LN"]
    earlier = first_study.runs["Pre-LN"]["seeds"]
    ours = (
        f"{run['n_layers']} blocks, Adam lr {run['lr']:g}, {run['steps'][-1]} steps, seeds "
        f"{run['seeds'][0]}-{run['seeds'][-1]} ({seeds}); Peri-LN over Pre-LN, geometric mean "
        "ratio [95% t CI, paired by seed]: "
        + "; ".join(parts)
        + f" (on seeds {earlier[0]}-{earlier[-1]}, not graded: "
        + "; ".join(first_parts)
        + f"). Global gradient norm at every step of the first {first_run['steps']} (spike: above "
        f"{stats.SPIKE_FACTOR:g}x the median of the {stats.SPIKE_WINDOW} steps before), seeds "
        f"{first_run['seeds'][0]}-{first_run['seeds'][-1]}, Pre-LN vs Peri-LN: "
        + "; ".join(spike_parts)
    )
    return Finding(ours, combine(outcomes), tuple(quantities))


CLAIMS = (
    Claim(
        id="P1",
        claim="RMSNorm drops re-centering; it equals LayerNorm when the mean is zero",
        source="Zhang & Sennrich 2019, the method and its Table 1",
        paper_value="exact equality for zero-mean inputs; re-centering invariance hypothesized dispensable",
        experiments=(ch07_runs.rmsnorm_vs_layernorm, ch05_runs.invariance_measurements),
        check=check_p1,
        regime="source: an identity of the two formulas (equal when the mean is zero) and Table 1's "
        "invariance row, no training; ours: float64, 256 rows of d 64, offsets 0.1 to 10, eps "
        "1e-5 inside both square roots, and notebook 05's invariance measurements",
    ),
    Claim(
        id="P2",
        claim="RMSNorm matches LayerNorm's quality (is no worse)",
        source="Zhang & Sennrich 2019",
        paper_value="WMT14 newstest2014: 26.8 vs 26.6 BLEU",
        experiments=(ch06_analysis.rmsnorm_study,),
        check=check_p2,
        regime="source: Transformer-base on WMT14 En-De, full-length training with warmup, BLEU "
        "on newstest2014/2017; ours: 6-block Pre-LN LM, d 64, Adam lr 3e-3, no warmup, 200 steps "
        "of 16 x 16 tokens (0.17 tokens per parameter), 10 seeds, held-out loss (training "
        "length and warmup not matched)",
        test="held-out loss, RMSNorm minus LayerNorm, paired by seed, 95% t CI below +0.02 nats "
        "(no worse; margin declared beforehand)",
    ),
    Claim(
        id="P2b",
        claim="RMSNorm matches LayerNorm's quality, each model at its own best learning rate",
        source="Zhang & Sennrich 2019",
        paper_value="WMT14 newstest2014: 26.8 vs 26.6 BLEU (their models tuned apart)",
        experiments=(ch06_analysis.rmsnorm_lr_sweep,),
        check=check_p2b,
        regime="source: Transformer-base on WMT14 En-De, full-length training with warmup, BLEU; "
        "ours: 6-block Pre-LN LM, d 64, no warmup, 200 steps (0.17 tokens per parameter), lr 1e-3/3e-3/1e-2 "
        "picked by training loss, 10 seeds, held-out loss (training length and warmup not "
        "matched)",
        test="P2's models, data and 10 seeds at lr 1e-3, 3e-3 and 1e-2; each normalizer's rate "
        "picked by training loss as in T6b; held-out loss, RMSNorm minus LayerNorm at their "
        "picks, paired by seed, 95% t CI below +0.02 nats; declared before the run",
    ),
    Claim(
        id="P2c",
        budget="200 steps without warmup against RNNSearch's whole training: too short to tell a "
        "stall from a slow start",
        claim="RMSNorm is no less stable than LayerNorm when the weights are initialized "
        "off-center, where re-centering could matter",
        source="Zhang & Sennrich 2019, the authors' code repository (bzhangGo/rmsnorm), README",
        paper_value="RNNSearch with weights initialized at a center of about 0.2: LayerNorm's and "
        "RMSNorm's SacreBLEU curves on newstest2013 alike; removing re-centering 'does not hurt "
        "its stability'",
        experiments=(analysis.recentred_study,),
        check=check_p2c,
        regime="source: RNNSearch (GRU encoder-decoder, Nematus) with weights initialized at a "
        "center of about 0.2, SacreBLEU on newstest2013 over training (README); ours: P2's "
        "6-block Transformer, every Linear weight shifted by 0.2, Adam lr 3e-3, no warmup, "
        "200 steps, 10 seeds (architecture and length not matched)",
        test="P2's model, data, lr and 10 seeds (0-9), every Linear weight matrix shifted by 0.2 "
        "after its initialization, LayerNorm and RMSNorm: every RMSNorm run trains (no divergence, "
        "ends below the bigram level), and RMSNorm minus LayerNorm held-out loss, paired by seed, "
        "95% t CI below +0.02 nats (no worse); declared before the run",
    ),
    Claim(
        id="P3",
        after_data="grading only the ways that write both norms alike (one op per step, fewest passes) "
        "was decided after the timings had been seen; the others are shown beside them",
        claim="RMSNorm saves time, when both norms are written alike",
        source="Zhang & Sennrich 2019",
        paper_value="running time 7%-64% lower 'on different models' (its abstract); GPU wall "
        "times, per-model table not read here",
        experiments=(ch07_runs.memory_traffic, ch07_runs.norm_timing),
        check=check_p3,
        regime="source: GPU wall time of whole models' training (machine translation, reading "
        "comprehension, caption retrieval and CIFAR-10, in Theano, TensorFlow and PyTorch, as the "
        "authors' README lists them); ours: the norm alone on CPU, shapes 4096 x 1024 and 256 x "
        "4096, 1 and 2 threads, 11 rounds (not matched: CPU, and the norm rather than a step)",
        test="measured CPU times, every norm with its affine parameters: per way of writing both "
        "norms alike (one op per step, fewest passes) and pass (forward, fwd+bwd), the median "
        "over 11 rounds of RMSNorm's time / LayerNorm's in the same round; saves below 1/1.1, "
        "costs above 1.1 (margin declared beforehand), in every shape (2) and thread count (1, 2), "
        "else undecided; reproduced if all four save. PyTorch's fused LayerNorm against its "
        "composed RMSNorm is reported beside, not graded: it times kernels, not the formula. The "
        "times are measured again by every check; the GPU times are not checkable on a CPU",
    ),
    Claim(
        id="P4",
        claim="pRMSNorm estimates the RMS from the first 6.25% of units",
        source="Zhang & Sennrich 2019 (pRMSNorm)",
        paper_value="p = 6.25%; no number for how well the first units estimate the RMS",
        experiments=(ch07_runs.prms_estimate, ch06_analysis.rmsnorm_study),
        check=check_p4,
        regime="source: pRMSNorm with p = 6.25% inside the paper's models (Transformer-base: d 512), "
        "no number for the estimate; ours: Gaussian rows, 20,000 per width, n = 64 to 4096 (k "
        "= 64 at 1024), and the LM at d 64 where k = 4 units, 200 steps, 10 seeds (at d 64 "
        "the estimate rests on 4 units; not matched)",
        test="estimate at n = 1024, Gaussian rows: mean and sd within 5 standard errors of the "
        "delta method's; held-out loss at the language model's d = 64 (k = 4 units), pRMSNorm "
        "minus RMSNorm, paired by seed, 95% t CI below +0.02 nats",
    ),
    Claim(
        id="P5",
        budget="a rate above this model's best and a tiny fraction of the source's training",
        claim="Peri-LN gives more balanced variance growth and steadier gradients than Pre-LN",
        source="Kim et al. 2025",
        paper_value="measured up to 3.2B parameters",
        experiments=(
            analysis.placement_confirmation,
            analysis.placement_study,
            analysis.spike_confirmation,
            analysis.spike_study,
        ),  # fmt: skip
        check=check_p5,
        regime="source: LMs of 400M, 1.5B and 3.2B parameters pretrained on 30B DCLM tokens; ours: 6 "
        "blocks, d 64, Adam lr 1e-2 (spikes also 3e-2), no warmup, 200 steps (0.17 tokens per "
        "parameter; spikes in the first 100), 30 seeds (not matched: a rate above this "
        "model's best, a tiny fraction of the training)",
        test="log of each measure (the last block's stream variance, its growth in training, the "
        "spread of block gradient norms; the rise from block 1 to L shown, not graded), Peri-LN "
        "minus Pre-LN, paired by seed, 95% t CI below 0; at lr 1e-2 and 3e-2, spikes (a step "
        "above 2x the median of the 10 before it), Peri-LN fewer by an exact permutation test on "
        "the totals, two-sided at 95%, and the log largest jump, Peri-LN minus Pre-LN, 95% t CI "
        "below 0; all on 30 fresh seeds (6-35, declared before their runs; seeds 0-5, on which "
        "the measures were chosen, shown, not graded)",
    ),
)
