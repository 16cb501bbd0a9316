"""Claims of notebook 06 on Santurkar et al. 2018, how BatchNorm helps optimization: T7 (its
backward pass is a projection, and its benefit a smoother loss landscape rather than stable input
distributions) and T7b (whether its rougher landscape at step 0 is its scale at init). The
Transformer's claims, T1-T6, are in `claims`."""

from lnpaper import formatting, stats
from lnpaper.chapters.ch06_transformer import analysis as ch06_analysis
from lnpaper.chapters.ch06_transformer import runs as ch06_runs
from lnpaper.chapters.ch06_transformer.analysis import smoothness_at_init, smoothness_log_means
from lnpaper.companion.verdicts import (
    INCONCLUSIVE,
    MECHANISM_ONLY,
    NOT_REPRODUCED,
    OURS,
    REPRODUCED,
    Claim,
    Finding,
    aggregate,
    combine,
    exact,
)

# T7 grades every measure Santurkar et al. use: the loss variation along a step, the gradient
# predictiveness (the gradient's change relative to its size) and the effective beta-smoothness
# (its change per unit of distance). Each is compared at matched training loss (the mean log over
# the loss levels: each normalizer as near a minimum as the others) and, apart, at step 0 (the
# same initial loss, before any training).
T7_TESTED = ("loss_range", "grad_change", "beta_smoothness")
T7_POINTS = ("matched loss", "step 0")
T7_WORDS = {
    "loss_range": "loss variation along a step",
    "grad_change": "gradient change",
    "beta_smoothness": "effective beta-smoothness",
}


def smoothness_ratios(smoothness, norm: str, at: str = "matched loss") -> dict:
    """measure -> `norm` minus no norm in the log of the measure, paired by seed: at matched loss
    the mean log over the loss levels (`smoothness_log_means`), at "step 0" the log at
    initialization (`smoothness_at_init`); its exp is a ratio of geometric means."""
    if at not in ("matched loss", "step 0"):
        raise ValueError(f"at must be 'matched loss' or 'step 0', got {at!r}")
    logs = (
        smoothness_log_means(smoothness) if at == "matched loss" else smoothness_at_init(smoothness)
    )
    return {key: stats.paired_difference(logs[key][norm], logs[key]["none"]) for key in logs}


def check_t7(projection, smoothness) -> Finding:
    """BatchNorm's backward pass is the projection (to float64 rounding); BatchNorm's landscape
    against no norm's on every measure, at matched loss and at step 0, paired by seed: each is
    graded, and the verdict follows from all of them."""
    exact_backward = projection.max_diff_formula < 1e-12 and projection.max_sum < 1e-12
    missed = sum(
        value is None
        for norm in ("none", "batchnorm")
        for by_seed in smoothness.loss_range[norm]
        for value in by_seed
    )
    if missed:
        ours = f"{missed} matched-loss points never reached within {smoothness.max_steps} steps"
        return Finding(ours, INCONCLUSIVE)
    ratios = {at: smoothness_ratios(smoothness, "batchnorm", at) for at in T7_POINTS}
    outcomes = {
        (at, key): stats.better(ratios[at][key], "lower") for at in T7_POINTS for key in T7_TESTED
    }
    levels = "/".join(f"{level:g}" for level in smoothness.loss_levels)
    where = {"matched loss": f"at matched loss (probe loss {levels}, geometric mean)",
             "step 0": "at step 0"}  # fmt: skip
    parts = "; ".join(
        f"{where[at]}: "
        + ", ".join(
            f"{T7_WORDS[key]} {formatting.ratio_text(ratios[at][key])} ({outcomes[at, key]})"
            for key in T7_TESTED
        )
        for at in T7_POINTS
    )
    ours = (
        f"backward = (gamma/sigma) x (g - 1<1,g>/N - y_hat<y_hat,g>/N) to "
        f"{projection.max_diff_formula:.1e} (float64); MLP on digits, SGD lr {smoothness.lr:g}, "
        f"{len(smoothness.seeds)} seeds, BatchNorm / no norm, lower is smoother, 95% CI; {parts}; "
        "the input-distribution experiment is not run"
    )
    verdict_now = combine(outcomes.values()) if exact_backward else NOT_REPRODUCED
    if verdict_now == REPRODUCED:
        verdict_now = MECHANISM_ONLY  # the input-distribution half of the claim is not tested
    quantities = (
        exact("BN backward - formula, max |difference|", projection.max_diff_formula, 1e-12),
        *(
            aggregate(f"BN - no norm, log {T7_WORDS[key]}, {at}", ratios[at][key])
            for at in T7_POINTS
            for key in T7_TESTED
        ),
    )
    return Finding(ours, verdict_now, quantities)


def check_t7b(smoothness, unit_variance) -> Finding:
    """At step 0, the plain net started at unit-variance summed inputs against the default plain
    net (rougher: the log of each measure higher, paired by seed), and, shown, against BatchNorm."""
    logs = smoothness_at_init(smoothness)
    scaled = smoothness_at_init(unit_variance)
    plain = ch06_runs.UNIT_VARIANCE_PLAIN
    outcomes, parts, quantities = [], [], []
    for key in T7_TESTED:
        rougher = stats.paired_difference(scaled[key][plain], logs[key]["none"])
        outcome = stats.better(rougher, "higher")
        outcomes.append(outcome)
        to_bn = stats.paired_difference(scaled[key][plain], logs[key]["batchnorm"])
        parts.append(
            f"{T7_WORDS[key]} {formatting.ratio_text(rougher)} ({outcome}; against BatchNorm "
            f"{formatting.ratio_text(to_bn)})"
        )
        quantities.append(aggregate(f"unit-variance plain - plain, log {T7_WORDS[key]}", rougher))
    ours = (
        f"step 0, {len(unit_variance.seeds)} seeds, the plain net started at unit-variance summed "
        "inputs / the default plain net, higher is rougher, 95% CI: " + "; ".join(parts)
    )
    return Finding(ours, combine(outcomes), tuple(quantities))


CLAIMS = (
    Claim(
        id="T7",
        claim="BatchNorm's benefit is a smoother loss landscape, not stable input distributions",
        source="Santurkar et al. 2018",
        paper_value="BN backward = (gamma / sigma) x projection off span{1, y_hat}",
        experiments=(
            ch06_runs.batchnorm_backward_projection,
            ch06_runs.loss_smoothness,
        ),
        check=check_t7,
        regime="source: VGG on CIFAR-10 with and without BatchNorm, the landscape probed along the "
        "gradient during training (Sec. 3.1, Fig. 4); ours: an MLP 64-128-128-10 on 8 x 8 "
        "digits, SGD lr 0.2, batch 64, up to 800 steps, steps of 0.5-4 x lr, 10 seeds "
        "(architecture and data not matched)",
        test="backward formula within 1e-12 in float64; each of the loss variation along a step, "
        "the gradient change (predictiveness) and the effective beta-smoothness, per seed as the "
        "mean log over the first steps whose probe loss reaches 1, 0.5, 0.2, 0.1 (matched loss) "
        "and, apart, as the log at step 0: BatchNorm minus no norm, paired by seed, 95% t CI below "
        "0 (smoother); partly if some of the six hold (and at most partly: the "
        "input-distribution half is not run)",
    ),
    Claim(
        id="T7b",
        origin=OURS,
        claim="BatchNorm's rougher landscape at step 0 is its scale at init: a plain net started "
        "at BatchNorm's unit-variance summed inputs is rougher there too",
        source="ours, on Santurkar et al. 2018, Theorem 4.1",
        paper_value="the bound on BatchNorm's gradient carries (gamma / sigma)^2, with gamma = 1 at "
        "init",
        experiments=(ch06_runs.loss_smoothness, ch06_analysis.step0_unit_variance),
        check=check_t7b,
        test="at step 0, each of T7's three measures (loss variation along a step, gradient change, "
        "effective beta-smoothness), log of the plain net whose hidden units' weights and biases "
        "are divided by the sd of their summed inputs over the training digits, minus log of the "
        "default plain net, paired by seed (T7's 10), 95% t CI above 0 (rougher); reproduced if "
        "all three hold, partly if some; declared before the run",
    ),
)
