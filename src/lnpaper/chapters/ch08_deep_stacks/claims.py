"""Claims of notebook 08, deep stacks: A2 (Admin), D1 (DeepNorm) and X1 (Mix-LN); the curse of
depth and LayerNorm Scaling (L1) are in `claims_curse`.

Every part of a verdict is a paired comparison by seed with a 95% t interval (`lnpaper.stats`),
declared here before the runs: its direction, and on which scale (log for sizes that span
decades: variances, gradient norms, output changes; plain for losses, ratios and angles). The
sources' large-scale numbers (1,000 layers, BLEU, 7B perplexities) cannot be reached on a CPU;
where a claim's only checkable part is its mechanism, a mechanism that holds is `partly`.
"""

import math
import statistics

from lnpaper import formatting, stats, vocabulary
from lnpaper.chapters.ch07_rmsnorm_placement.claims import log_difference
from lnpaper.chapters.ch08_deep_stacks import analysis as ch08_analysis
from lnpaper.chapters.ch08_deep_stacks import runs as ch08_runs
from lnpaper.chapters.ch08_deep_stacks.runs import ARM_NAMES
from lnpaper.companion.verdicts import (
    INCONCLUSIVE,
    MECHANISM_ONLY,
    NOT_EXERCISED,
    NOT_REPRODUCED,
    OURS,
    REPRODUCED,
    Claim,
    Finding,
    aggregate,
    combine,
    count,
    tested,
)
from lnpaper.models.transformer import MIX_POST_FRACTION


def log_values(values) -> list[float]:
    return [math.log(v) for v in values]


class Parts:
    """A verdict's parts in the order they are declared: each one's text, outcome and quantities."""

    def __init__(self, quantities=()):
        self.texts, self.outcomes, self.quantities = [], [], list(quantities)

    def paired(self, label, a, b, direction, unit=""):
        """One declared comparison a - b, paired by seed, graded by its direction."""
        difference = stats.paired_difference(a, b)
        outcome = stats.better(difference, direction)
        self.quantities.append(aggregate(label, difference))
        self.add(f"{label} {tested(difference, outcome, unit=unit)}", outcome)

    def add(self, text: str, outcome: str):
        self.texts.append(text)
        self.outcomes.append(outcome)

    def text(self) -> str:
        return "; ".join(self.texts)


def mechanism_only(outcomes) -> str:
    """A claim whose only checkable part is its mechanism: partly (mechanism only) when the
    mechanism holds."""
    verdict = combine(outcomes)
    return MECHANISM_ONLY if verdict == REPRODUCED else verdict


# ---- A2 --------------------------------------------------------------------------------------


def check_a2(result) -> Finding:
    """At init: Post-LN's sublayers depend on their branches more than Pre-LN's, at the deepest
    depth; Post-LN's output change under the perturbation grows from the shallowest to the
    deepest model, and faster than Pre-LN's; Admin's omega lowers both dependency and change
    against Post-LN at the deepest depth."""
    arms = ("post", "pre", "admin")
    dep = {arm: ch08_analysis.mean_dependence(result, arm) for arm in arms}
    change = {arm: [log_values(v) for v in result.output_change[arm]] for arm in arms}
    deep = result.depths[-1]
    parts = Parts()
    parts.paired(f"dependency Post - Pre, L={deep}", dep["post"][-1], dep["pre"][-1], "higher")
    parts.paired(f"dependency Admin - Post, L={deep}", dep["admin"][-1], dep["post"][-1], "lower")

    def growth(arm):  # log change at the deepest depth - at the shallowest, per seed
        return [b - a for a, b in zip(change[arm][0], change[arm][-1], strict=True)]

    zeros = [0.0] * len(result.seeds)
    depths = f"L={result.depths[0]} to {deep}"
    parts.paired(f"log output change, Post-LN's growth {depths}", growth("post"), zeros, "higher")
    parts.paired("Post's growth - Pre's", growth("post"), growth("pre"), "higher")
    label = f"log output change Admin - Post, L={deep}"
    parts.paired(label, change["admin"][-1], change["post"][-1], "lower")
    exponents = {
        arm: stats.paired_difference(ch08_analysis.growth_exponents(result, arm), zeros)
        for arm in arms
    }
    parts.quantities += [
        aggregate(f"growth exponent of the output change, {arm}", fitted)
        for arm, fitted in exponents.items()
    ]
    on_norm, on_square = reading_exponents(result.depths)
    levels = "; ".join(
        f"{ARM_NAMES[arm]} dependency {statistics.fmean(dep[arm][0]):.2f} -> "
        f"{statistics.fmean(dep[arm][-1]):.2f}, output change "
        f"{statistics.fmean(result.output_change[arm][0]):.4f} -> "
        f"{statistics.fmean(result.output_change[arm][-1]):.4f}"
        for arm in arms
    )
    ours = (
        f"At init, L = {', '.join(map(str, result.depths))} blocks, {len(result.seeds)} seeds, "
        f"each weight matrix moved by {result.perturbation:g} of its norm ({result.draws} random "
        f"directions); means L={result.depths[0]} -> {deep}: {levels}. "
        + parts.text()
        + ". Not graded: the exponent b of change ~ L^b, fitted per seed over L = "
        + ", ".join(map(str, result.depths))
        + ": "
        + "; ".join(
            f"{ARM_NAMES[arm]} {d.mean:.2f} [{d.low:.2f}, {d.high:.2f}]"
            for arm, d in exponents.items()
        )
        + f" (95% t intervals over the {len(result.seeds)} seeds). The source states its rates "
        f"for the change's variance, the norm's square: for the norm they predict b = 0.5 for "
        f"Post-LN and {on_square:.2f} for Pre-LN (log N over these depths), where rates of the norm "
        f"itself would give 1 and {on_norm:.2f}. The grade is the direction at init only, so at "
        "most 'partly', as for D1 and L1"
    )
    return Finding(ours, mechanism_only(parts.outcomes), tuple(parts.quantities))


def reading_exponents(depths) -> tuple[float, float]:
    """The exponent b a change growing as log N shows over `depths` (its log-log slope), and the
    one its square root shows (half of it): what Liu et al.'s O(log N) for Pre-LN would predict for
    the change's norm if it were the norm's rate, and what it predicts as the rate of its variance,
    as the source states it."""
    x = [math.log(depth) for depth in depths]
    slope = ch08_analysis.least_squares_slope(x, [math.log(v) for v in x])
    return slope, slope / 2


# ---- A2b and X1b: Admin and Mix-LN trained --------------------------------------------------


def _paired_finals(result, arm: str, reference: str, values=None) -> tuple[list, list]:
    """Two arms' held-out losses, or their `values` (arm -> [seed]), on the seeds where neither
    diverged."""
    a, b = result.final_loss[arm], result.final_loss[reference]
    both = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
    values = values or result.final_loss
    return [values[arm][i] for i in both], [values[reference][i] for i in both]


def diverged_runs(result) -> tuple[dict, list]:
    """arm -> how many of its runs diverged, and those counts as quantities."""
    n = len(result.seeds)
    diverged = {arm: stats.count_diverged(result.final_loss[arm]) for arm in result.arms}
    return diverged, [count(f"{ARM_NAMES[a]} runs diverged", k, n) for a, k in diverged.items()]


def _lower_loss(parts: Parts, result, arm: str, reference: str, too_few: str):
    """A part claiming `arm` reaches a lower held-out loss than `reference`, paired on the seeds
    where neither diverged (`too_few` says why it is undecided on fewer than two): better beyond
    the negligible margin holds; negligible or worse fails; an interval reaching past the margin
    decides nothing."""
    a, b = _paired_finals(result, arm, reference)
    if len(a) < 2:
        parts.add(too_few, stats.INCONCLUSIVE)
        return
    difference = stats.paired_difference(a, b)
    grade, words = vocabulary.better_beyond_negligible(difference)
    outcome = {"better": stats.HOLDS, "undecided": stats.INCONCLUSIVE}.get(grade, stats.FAILS)
    names = ARM_NAMES[arm], ARM_NAMES[reference]
    parts.add(f"{names[0]} minus {names[1]} {tested(difference, words, unit='nats')}", outcome)
    parts.quantities.append(aggregate(f"held-out loss, {names[0]} - {names[1]}", difference))


def _finals_text(result) -> str:
    return "; ".join(
        f"{ARM_NAMES[a]} {formatting.median_text(result.final_loss[a])}" for a in result.arms
    )


def check_a2b(result) -> Finding:
    """Admin trained where plain Post-LN fails: the premise, then the claim's `test`."""
    return _admin_against_post_ln(result, "no warmup")


def check_a2c(result) -> Finding:
    """A2b's test on runs with Admin's recipe's warmup (`admin_warmup_training`)."""
    return _admin_against_post_ln(result, f"{ch08_analysis.A2C_WARMUP} warmup steps")


def _admin_against_post_ln(result, schedule: str) -> Finding:
    n = len(result.seeds)
    post_failed = vocabulary.failed_runs(result.final_loss["post"], result.levels)
    admin_trained = n - vocabulary.failed_runs(result.final_loss["admin"], result.levels)
    premise = stats.most_runs(post_failed, n, "Post-LN runs that fail")
    trains = stats.most_runs(admin_trained, n, "Admin runs that train")
    setting = (f"{result.n_layers} blocks, Adam lr {result.lr:g}, {schedule}, {result.steps} steps, "
               f"seeds {min(result.seeds)}-{max(result.seeds)}")  # fmt: skip
    parts = Parts([count("Post-LN runs that fail", post_failed, n),
                   count("Admin runs that train", admin_trained, n)])  # fmt: skip
    parts.texts.append(
        f"held-out loss {_finals_text(result)} nats; Post-LN fails in "
        f"{post_failed} of {n} runs, Admin trains in {admin_trained} of {n}"
    )
    parts.outcomes.append(trains)
    too_few = "too few seeds where neither diverged to pair Admin with Post-LN"
    _lower_loss(parts, result, "admin", "post", too_few)
    admin_pre, pre = _paired_finals(result, "admin", "pre")
    if len(admin_pre) >= 2:
        parts.texts.append("not graded: Admin minus Pre-LN "
                           f"{stats.paired_difference(admin_pre, pre).text()}")  # fmt: skip
    ours = f"{setting}: " + parts.text()
    if premise != stats.HOLDS:
        return Finding(ours, NOT_EXERCISED, tuple(parts.quantities))
    return Finding(ours, combine(parts.outcomes), tuple(parts.quantities))


def check_x1b(result) -> Finding:
    """Mix-LN's held-out loss below Pre-LN's and below Post-LN's, each beyond the negligible
    margin, paired by seed: both reproduce the claim, one is partly."""
    parts = Parts(diverged_runs(result)[1])
    parts.texts.append(f"held-out loss {_finals_text(result)} nats")
    for reference in ("pre", "post"):
        too_few = f"too few seeds to pair Mix-LN with {ARM_NAMES[reference]}"
        _lower_loss(parts, result, "mix", reference, too_few)
    n_post = int(MIX_POST_FRACTION * result.n_layers)
    ours = (f"{result.n_layers} blocks (Mix-LN: {n_post} Post-LN, then "
            f"Pre-LN), Adam lr {result.lr:g}, no warmup, {result.steps} steps, seeds "
            f"{min(result.seeds)}-{max(result.seeds)}: " + parts.text())  # fmt: skip
    return Finding(ours, combine(parts.outcomes), tuple(parts.quantities))


# ---- D1 --------------------------------------------------------------------------------------


def largest_update(result, arm: str) -> list:
    """[seed]: the largest model update over the first steps, None for a seed that diverged."""
    return [None if None in u else max(u) for u in result.model_update[arm]]


def check_d1(result) -> Finding:
    """Without warmup at a learning rate where Post-LN stalls: DeepNorm's held-out loss lower
    than Post-LN's, and its largest model update over the first steps smaller (log), paired by
    seed. A diverged run has no value to pair: a DeepNorm divergence fails the claim, and a
    Post-LN one is counted (it cannot make DeepNorm look worse)."""
    n = len(result.seeds)
    diverged, counted = diverged_runs(result)
    parts = Parts(counted)
    deep_final, post_final = _paired_finals(result, "deepnorm", "post")
    if diverged["deepnorm"]:
        parts.add(f"DeepNorm diverged in {diverged['deepnorm']} of {n} runs", stats.FAILS)
    elif len(deep_final) >= 2:
        parts.paired("held-out loss DeepNorm - Post-LN", deep_final, post_final, "lower", "nats")
        updates = {arm: largest_update(result, arm) for arm in ("deepnorm", "post")}
        deep_update, post_update = _paired_finals(result, "deepnorm", "post", updates)
        label = f"log largest model update over steps 1-{result.update_steps}, DeepNorm - Post-LN"
        parts.paired(label, log_values(deep_update), log_values(post_update), "lower")
    else:  # Post-LN diverged where DeepNorm did not
        parts.add(
            f"Post-LN diverged in {diverged['post']} of {n} runs, DeepNorm in none", stats.HOLDS
        )
    ours = (
        f"{result.n_layers} blocks (alpha {result.alpha:.2f}, beta {result.beta:.2f}), Adam lr "
        f"{result.lr:g}, no warmup, {result.steps} steps, {n} seeds; held-out loss "
        f"{_finals_text(result)} nats. "
        + parts.text()
        + ". 1,000 layers and the BLEU gains are not checkable at CPU scale: the mechanism only"
    )
    if diverged["deepnorm"]:
        return Finding(ours, NOT_REPRODUCED, tuple(parts.quantities))
    return Finding(ours, mechanism_only(parts.outcomes), tuple(parts.quantities))


def check_d1b(full, halves) -> Finding:
    """Our question: does each half of DeepNorm alone bound the first updates below Post-LN's?"""
    if list(full.seeds) != list(halves.seeds):
        raise ValueError("D1b pairs its runs with D1's seeds")
    n = len(full.seeds)
    updates = {arm: largest_update(full, arm) for arm in ("post", "deepnorm")}
    updates.update({arm: largest_update(halves, arm) for arm in halves.arms})
    finals = {**{a: full.final_loss[a] for a in ("post", "deepnorm")}, **halves.final_loss}
    diverged = [ARM_NAMES[a] for a in finals if stats.count_diverged(finals[a])]
    if diverged:
        return Finding(f"{', '.join(diverged)} diverged: no update to pair", INCONCLUSIVE)
    parts = Parts()
    for arm in ch08_runs.DEEPNORM_HALVES:
        label = f"log largest model update, steps 1-{full.update_steps}, {ARM_NAMES[arm]} - Post-LN"
        parts.paired(label, log_values(updates[arm]), log_values(updates["post"]), "lower")
    reported = [
        f"{ARM_NAMES[arm]} {log_difference(updates[arm], updates['deepnorm']).text()}"
        for arm in (*ch08_runs.DEEPNORM_HALVES, "pre")
    ]
    medians = "; ".join(f"{ARM_NAMES[a]} {formatting.median_text(finals[a])}" for a in finals)
    ours = (
        f"{full.n_layers} blocks (alpha {full.alpha:.2f}, beta {full.beta:.2f}), Adam lr "
        f"{full.lr:g}, no warmup, {n} seeds: "
        + parts.text()
        + ". Not graded: log largest update minus DeepNorm's: "
        + "; ".join(reported)
        + f"; held-out loss after {full.steps} steps: {medians} nats"
    )
    return Finding(ours, combine(parts.outcomes), tuple(parts.quantities))


def check_d1d(result) -> Finding:
    """D1b at D1c's depth: the halves, Post-LN and DeepNorm come from one run of every arm."""
    return check_d1b(result, result)


# ---- X1 --------------------------------------------------------------------------------------


def profile_measures(profile: list, n_layers: int) -> dict:
    """From one seed's per-block gradient norms: the spread (sd over blocks of log norm, the
    uniformity measure: 0 for a flat profile) and the tilt (mean log norm of the last quarter of
    the blocks - of the first quarter: < 0 when deep blocks get the smaller gradients)."""
    logs = log_values(profile)
    quarter = max(1, n_layers // 4)
    return {
        "spread": statistics.stdev(logs),
        "tilt": statistics.fmean(logs[-quarter:]) - statistics.fmean(logs[:quarter]),
    }


def profile_summary(result) -> dict:
    """(when, arm) -> {'spread': [seed], 'tilt': [seed]}, when 'init' or 'trained'."""
    out = {}
    for when, profiles in (("init", result.grad_norm_init), ("trained", result.grad_norm_trained)):
        for arm, by_seed in profiles.items():
            measures = [profile_measures(p, result.n_layers) for p in by_seed]
            out[when, arm] = {k: [m[k] for m in measures] for k in ("spread", "tilt")}
    return out


def check_x1(result) -> Finding:
    """At init and after the steps: Pre-LN tilts down (deep blocks smaller), Post-LN up (early
    blocks smaller), and Mix-LN's spread is below both, paired by seed."""
    summary = profile_summary(result)
    zeros = [0.0] * len(result.seeds)
    parts = Parts()
    for when in ("init", "trained"):
        at = "at init" if when == "init" else f"after {result.steps} steps"
        parts.paired(f"Pre-LN tilt {at}", summary[when, "pre"]["tilt"], zeros, "lower")
        parts.paired(f"Post-LN tilt {at}", summary[when, "post"]["tilt"], zeros, "higher")
        for other in ("pre", "post"):
            mix, against = summary[when, "mix"]["spread"], summary[when, other]["spread"]
            parts.paired(f"spread Mix - {ARM_NAMES[other]} {at}", mix, against, "lower")
    ours = (
        f"{result.n_layers} blocks (Mix-LN: {result.n_post} Post-LN, then Pre-LN), {len(result.seeds)}"
        f" seeds, Adam lr {result.lr:g}. Per seed, over the blocks' log gradient norms: tilt = last"
        " quarter's mean - first quarter's; spread = their sd. " + parts.text()
    )
    return Finding(ours, combine(parts.outcomes), tuple(parts.quantities))


CLAIMS = (
    Claim(
        id="A2",
        claim="Post-LN depends on its residual branches more than Pre-LN, which amplifies small "
        "parameter changes into output changes that grow with depth; Admin's omega removes it",
        source="Liu et al. 2020, Understanding the Difficulty of Training Transformers "
        "(arXiv:2004.08249), Sec. 4-5",
        paper_value="Post-LN output change O(N) in depth, Pre-LN and Admin O(log N); gradient "
        "vanishing argued not to be the root cause (an argument, not graded here)",
        experiments=(ch08_runs.branch_dependence,),
        check=check_a2,
        test="at init, 8 seeds, paired t 95%: mean Var[f]/Var[s+f] Post - Pre > 0 and Admin - "
        "Post < 0 at L = 36; log relative output change under a 1% perturbation of every weight "
        "matrix: Post's growth L = 6 to 36 > 0 and above Pre's, Admin - Post < 0 at L = 36; not "
        "graded: the exponent b of change ~ L^b, least squares per seed over L = 6-36",
        regime="source: Post-LN and Pre-LN encoder-decoders (Sec. 4-5; its recipes train 6 to 18 "
        "layers a side on WMT'14 En-De), rates stated for the variance of the output change; "
        "ours: at init, decoder-only LM d 64, 6 to 36 blocks, 8 seeds, the relative norm of the "
        "change under a 1% move of every weight matrix",
    ),
    Claim(
        id="A2b",
        budget="no warmup, against the source's 8,000 warmup updates",
        claim="Admin's omega lets a deep Post-LN train where plain Post-LN fails (here without "
        "warmup)",
        source="Liu et al. 2020, Understanding the Difficulty of Training Transformers "
        "(arXiv:2004.08249), Sec. 5 and abstract",
        paper_value="Admin stabilizes the early stage of training: more stable, faster to "
        "converge, better in the end (abstract; BLEU on WMT'14 not checkable here). The source "
        "trains with warmup; this test uses D1's no-warmup setting, where Post-LN fails here",
        experiments=(ch08_analysis.admin_training,),
        check=check_a2b,
        test="12 blocks (twice D1's depth), D1's Adam lr 3e-3 without warmup, 100 steps, 12 seeds "
        "(8-19) no earlier run used. Premise: most Post-LN runs fail (do not end below the "
        "bigram level; rate's 95% CI above 1/2), else inconclusive (not exercised). Most Admin "
        f"runs train (rate's CI above 1/2), and Admin's held-out loss is below Post-LN's by more "
        f"than the negligible {vocabulary.NEGLIGIBLE_NATS:g} nats (paired by seed, 95% t CI); "
        "reproduced if both, partly if one. Admin minus Pre-LN reported, not graded; declared "
        "before the run",
        regime="source: WMT'14 En-De, 6/12/18 layers a side, RAdam lr 1e-3 after 8,000 warmup "
        "updates, 100 epochs (at most 500,000 updates) of 4 GPUs x 8,192 tokens "
        "(Transformer-Clinic recipe), BLEU; ours: 12 blocks d 64, Adam 3e-3, no warmup, 100 steps "
        "of 256 tokens (T/P 0.04), 12 seeds, held-out loss (no warmup; not matched)",
    ),
    Claim(
        id="A2c",
        claim="Admin's omega lets a deep Post-LN train where plain Post-LN fails, with warmup as in "
        "its recipe",
        source="Liu et al. 2020, Understanding the Difficulty of Training Transformers "
        "(arXiv:2004.08249), Sec. 5 and abstract",
        paper_value="Admin stabilizes the early stage of training: more stable, faster to "
        "converge, better in the end (abstract; BLEU on WMT'14 not checkable here)",
        experiments=(ch08_analysis.admin_warmup_training,),
        check=check_a2c,
        test="A2b's test, arms, 12 blocks, Adam lr 3e-3 and 100 steps, with 50 steps of linear "
        "warmup, on 12 seeds (20-31) no earlier run used: most Post-LN runs fail (the premise, "
        "else inconclusive (not exercised)); most Admin runs train, and Admin's held-out loss is "
        f"below Post-LN's by more than {vocabulary.NEGLIGIBLE_NATS:g} nats (paired by seed, 95% t "
        "CI); reproduced if both, partly if one; declared before the run",
        regime="source: as A2b's, RAdam lr 1e-3 after 8,000 warmup updates; ours: 12 blocks d 64, "
        "Adam 3e-3 after 50 warmup steps, 100 steps of 256 tokens (T/P 0.04), 12 seeds, "
        "held-out loss (warmup in kind; the run far shorter)",
    ),
    Claim(
        id="D1",
        budget="no warmup and 100 steps, against a recipe with 4,000 warmup updates",
        claim="DeepNorm bounds the model update and trains Post-LN stably (here without warmup)",
        source="Wang et al. 2022, DeepNet (arXiv:2203.00555)",
        paper_value="1,000 layers; a 200-layer 3.2B model beats a 48-layer 12B one by 5 BLEU",
        experiments=(ch08_runs.deepnorm_study,),
        check=check_d1,
        test="6 blocks, Adam lr 3e-3 without warmup (where notebook 06's Post-LN stalls), 100 steps, 8 seeds, "
        "paired t 95%: held-out loss DeepNorm - Post-LN < 0; log largest RMS logit change over "
        "the first 20 steps DeepNorm - Post-LN < 0; holding both is 'partly' (mechanism only)",
        regime="source: Post-LN and DeepNorm translation models up to 1,000 layers, trained with "
        "warmup (4,000 updates in torchscale's translation recipe), BLEU; ours: 6 blocks d 64 "
        "(alpha 1.86, beta 0.38), Adam 3e-3, no warmup, 100 steps of 256 tokens (T/P 0.08), 8 "
        "seeds (no warmup, 6 blocks; not matched)",
    ),
    Claim(
        id="D1b",
        origin=OURS,
        claim="Either half of DeepNorm alone, the up-weighted residual (alpha) or the "
        "down-scaled init (beta), bounds the first model updates below Post-LN's",
        source="ours: DeepNet derives alpha and beta together (Wang et al. 2022, "
        "arXiv:2203.00555); which half does the bounding is our question",
        paper_value="none: no source runs the halves apart",
        experiments=(ch08_runs.deepnorm_study, ch08_analysis.deepnorm_halves),
        check=check_d1b,
        test="D1's model, rate, data and 8 seeds; log largest RMS logit change over the first "
        "20 steps, each half minus Post-LN, paired by seed, 95% t CI below 0; reproduced if "
        "both halves bound it, partly if one does; each half against full DeepNorm and a "
        "Pre-LN arm reported, not graded; declared before the run",
    ),
    Claim(
        id="D1c",
        budget="no warmup and 100 steps, against a recipe with 4,000 warmup updates",
        claim="At 24 blocks too, DeepNorm bounds the model update and trains Post-LN stably "
        "(here without warmup)",
        source="Wang et al. 2022, DeepNet (arXiv:2203.00555)",
        paper_value="DeepNorm's scaling grows with depth (alpha = (2N)^(1/4), beta = (8N)^(-1/4)); "
        "1,000 layers trained",
        experiments=(ch08_analysis.deepnorm_deep,),
        check=check_d1,
        test="D1's test at 24 blocks (alpha 2.63, beta 0.27): Adam lr 3e-3 without warmup, 100 "
        "steps, 8 seeds, paired t 95%: held-out loss DeepNorm - Post-LN < 0; log largest RMS "
        "logit change over the first 20 steps DeepNorm - Post-LN < 0; holding both is 'partly' "
        "(mechanism only); declared before the run",
        regime="source: Post-LN and DeepNorm translation models up to 1,000 layers, trained with "
        "warmup (4,000 updates in torchscale's translation recipe), BLEU; ours: 24 blocks d 64 "
        "(alpha 2.63, beta 0.27), Adam 3e-3, no warmup, 100 steps of 256 tokens (T/P 0.02), 8 "
        "seeds (no warmup; not matched)",
    ),
    Claim(
        id="D1d",
        origin=OURS,
        claim="At 24 blocks too, either half of DeepNorm alone bounds the first model updates "
        "below Post-LN's",
        source="ours: DeepNet derives alpha and beta together (Wang et al. 2022, "
        "arXiv:2203.00555); which half does the bounding deeper is our question",
        paper_value="none: no source runs the halves apart",
        experiments=(ch08_analysis.deepnorm_deep,),
        check=check_d1d,
        test="D1b's test on D1c's runs (24 blocks, 8 seeds): log largest RMS logit change over "
        "the first 20 steps, each half minus Post-LN, paired by seed, 95% t CI below 0; "
        "reproduced if both halves bound it, partly if one does; declared before the run",
    ),
    Claim(
        id="X1",
        claim="Pre-LN shrinks the gradients of deep layers, Post-LN those of early layers; "
        "Mix-LN's are more uniform",
        source="Li, Yin, Liu 2025, Mix-LN (ICLR 2025, arXiv:2412.13795)",
        paper_value="gradient-norm profiles of LLaMA-scale models; perplexity gains from 70M to 7B (v2 abstract)",
        experiments=(ch08_runs.gradient_profile,),
        check=check_x1,
        test="8 blocks, 10 seeds, at init and after 20 Adam steps (lr 1e-3), paired t 95%: "
        "tilt (last quarter's mean log block gradient norm - first quarter's) < 0 for Pre-LN and "
        "> 0 for Post-LN; spread (sd of the log norms over blocks) Mix - Pre < 0 and Mix - Post < 0",
        regime="source: LLaMA models 70M to 7B (250M in the authors' script: C4, 40,000 Adam steps "
        "(lr 1e-3) of 512 x 256 tokens after 4,000 warmup), per-layer gradient norms; ours: 8 "
        "blocks d 64, at init and after 20 Adam steps at 1e-3, no warmup (T/P 0.01), 10 seeds (20 "
        "steps against a pretraining run; not matched)",
    ),
    Claim(
        id="X1b",
        budget="200 steps without warmup, against 40,000 steps after 4,000 of warmup",
        claim="Mix-LN reaches a lower loss than both Pre-LN and Post-LN",
        source="Li, Yin, Liu 2025, Mix-LN (ICLR 2025, arXiv:2412.13795), abstract",
        paper_value="Mix-LN outperforms Pre-LN and Post-LN in pre-training perplexity, 70M to 7B "
        "parameters",
        experiments=(ch08_analysis.mix_training,),
        check=check_x1b,
        test="X1's 8 blocks (2 Post-LN, then Pre-LN) and Adam lr 1e-3 without warmup, 200 steps, "
        "12 seeds (8-19) no earlier run used; held-out loss, Mix-LN minus Pre-LN and minus "
        "Post-LN, paired by seed, 95% t CI: each holds below "
        f"-{vocabulary.NEGLIGIBLE_NATS:g} nats and fails inside the negligible margin or above "
        "it; reproduced if both hold, partly if one; declared before the run",
        regime="source: LLaMA 70M to 7B pretrained on C4, perplexity (250M: 40,000 Adam steps (lr "
        "1e-3) of 512 x 256 tokens, about 5.2B tokens, 4,000 warmup, authors' script); ours: 8 "
        "blocks d 64, Adam 1e-3, no warmup, 200 steps of 256 tokens (T/P 0.13), 12 seeds, held-out "
        "loss (far shorter, no warmup; not matched)",
    ),
)
