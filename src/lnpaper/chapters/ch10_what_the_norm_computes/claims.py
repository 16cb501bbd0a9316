"""Claims of notebook 10, "what the norm computes": E1 (the redundant mean), E2 (the
norm's backward pass, Xu et al. 2019) and Y1 (after DyT). Their margins were declared
before any of these runs was recorded; "matches", "no worse" and "negligible" use
NEGLIGIBLE_NATS (0.02 nats per token, `lnpaper.vocabulary`), and "better" and "worse"
need the paired 95% interval to clear 0."""

import statistics

from lnpaper import stats, vocabulary
from lnpaper.chapters.ch10_what_the_norm_computes import analysis as ch10_analysis
from lnpaper.chapters.ch10_what_the_norm_computes import runs as ch10_runs
from lnpaper.chapters.ch10_what_the_norm_computes.analysis import (
    DETACH_VARIANTS,
    Y1_ALPHAS,
    drift_at_end,
)
from lnpaper.companion.verdicts import (
    INCONCLUSIVE,
    NEGLIGIBLE_RULE_SET_AFTER,
    NOT_CHECKABLE,
    NOT_EXERCISED,
    NOT_REPRODUCED,
    REPRODUCED,
    Claim,
    Finding,
    aggregate,
    better_verdict,
    combine,
    count,
    exact,
    from_outcome,
    mean_over_seeds,
    no_better,
    tested,
)
from lnpaper.data import SyntheticLanguage
from lnpaper.vocabulary import NEGLIGIBLE_NATS

# E1: the rewrite is exact when its float64 logits lie within this of the original's
# (roundoff of a few hundred float64 operations on logits of size ~10 is ~1e-14).
EXACT_BOUND = 1e-10
# E1c: two float64 models trained side by side are "one model" while their log-probabilities stay
# within this of each other: roundoff (1e-16 relative) grown over 100 steps stays orders below it,
# and a step on another trajectory, lr times an O(1) gradient, moves them by orders more.
TRAJECTORY_BOUND = 1e-6
XU_2019 = "Xu et al., NeurIPS 2019, Understanding and Improving Layer Normalization"
XU_REGIME = (  # E2, E2c and E2d: where the source made the claim, then ours
    "source: full training runs on real data sets of several tasks, where the gain and "
    "bias are blamed for over-fitting; ours: "
)
REGIME_ALPHA = 0.5  # Y1: the regime claim is tested at DyT's default alpha_0


def _diverged(*losses) -> int:
    return sum(stats.count_diverged(values) for values in losses)


def _paired_unless_diverged(losses, reference) -> stats.Difference | None:
    """losses - reference, paired by seed; None if a run of either diverged."""
    return None if _diverged(losses, reference) else stats.paired_difference(losses, reference)


# ---- E1 -----------------------------------------------------------------------------------------


def check_e1(result) -> Finding:
    """Exact in float64 at init and after training; under Adam (float32) the two forms are
    trained side by side: their held-out losses are graded for a match, their drift reported."""
    worst = max(result.max_logit_diff_init, result.max_logit_diff_trained)
    exact_outcome = stats.HOLDS if worst < EXACT_BOUND else stats.FAILS
    logit_gap = drift_at_end(result)[0]
    difference = _paired_unless_diverged(result.final_loss_rmsnorm, result.final_loss_layernorm)
    match = stats.FAILS if difference is None else stats.matches(difference, NEGLIGIBLE_NATS)
    match_text = "a run diverged" if difference is None else tested(
        difference, f"{match} (match within +-{NEGLIGIBLE_NATS:g})", unit="nats"
    )  # fmt: skip
    ours = (
        f"notebook 06's Pre-LN LM (d {result.d_model}, {result.n_layers} blocks), float64, "
        f"{len(result.seeds)} seeds: zero-mean RMSNorm rewrite = original to "
        f"{result.max_logit_diff_init:.1e} at init and {result.max_logit_diff_trained:.1e} after "
        f"training (logits up to {result.logit_scale:.3g}); every norm's input mean / RMS "
        f"{result.max_stream_mean_init:.1e} after the rewrite. Trained side by side, the "
        f"rewrite's writers left free (not the source's zero-mean constraint) (Adam "
        f"{result.lr:g}, float32, {result.steps} steps): max |logit gap| median "
        f"{statistics.median(logit_gap):.3g} (range {min(logit_gap):.3g}-"
        f"{max(logit_gap):.3g}), the rewrite's norm inputs reach mean / RMS "
        f"{statistics.median(result.stream_mean_trained):.2g} (median); held-out loss, rewrite "
        f"minus LayerNorm {match_text}"
    )
    quantities = [exact("float64 max |logit difference|, init and trained", worst, EXACT_BOUND)]
    if difference is not None:
        quantities.append(aggregate("held-out loss, rewrite - LN after training", difference))
    return Finding(ours, combine([exact_outcome, match]), tuple(quantities))


def check_e1b(result) -> Finding:
    ours = (
        "a GPU wall-time saving; not measured here (CPU times of RMSNorm vs LayerNorm are P3's, "
        "notebook 07)"
    )
    return Finding(ours, NOT_CHECKABLE)


# the arms E1c grades: the source's constraint alone, and with the bias fold its RMSNorm needs
KEPT, FOLDED, FREE = ch10_runs.CONSTRAINED_ARMS


def worst_gaps(result, optimizer: str, arm: str) -> list:
    """Per seed, the max |log-probability difference| from the LayerNorm twin over the run."""
    return [max(row) for row in result.logprob_gap[optimizer][arm]]


def check_e1c(result) -> Finding:
    """One model or two, under each optimizer. Graded: the kept-zero-mean rewrite with
    its biases kept, the source's construction. Folding the biases into the readers (b
    against c + W b) changes the parameterization, which the source does not claim
    trains alike: that arm and the free rewrite are reported."""
    optimizers = list(result.lrs)
    largest = {
        (o, arm): max(worst_gaps(result, o, arm))
        for o in optimizers
        for arm in ch10_runs.CONSTRAINED_ARMS
    }
    stays = {
        arm: all(largest[o, arm] < TRAJECTORY_BOUND for o in optimizers) for arm in (KEPT, FOLDED)
    }
    verdict = REPRODUCED if stays[KEPT] else NOT_REPRODUCED
    runs = "; ".join(
        f"{o} {result.lrs[o]:g}: "
        + ", ".join(f"{arm} {largest[o, arm]:.1e}" for arm in (KEPT, FOLDED, FREE))
        for o in optimizers
    )
    ours = (
        f"E1's model in float64, {len(result.seeds)} seeds, {result.steps} steps, each rewrite "
        f"beside its LayerNorm twin; max |log-probability difference| over the run: {runs}. "
        f"Under {TRAJECTORY_BOUND:g} is one model. Kept zero-mean, the rewrite stays one model "
        f"with the biases kept: {'yes' if stays[KEPT] else 'no'}; with them folded into the "
        f"readers (our own question, not graded): {'yes' if stays[FOLDED] else 'no'}. The "
        "source's own norms carry no affine and fold the whole of it, gain and bias, on both "
        "sides; here the gain is kept and only the bias folded, on the rewrite's side alone, so "
        "the folded arm compares two parameterizations and the full fold is not run"
    )
    quantities = []
    for optimizer in optimizers:
        label = f"max |log-prob gap|, {KEPT}, {optimizer}"
        quantities.append(exact(label, largest[optimizer, KEPT], TRAJECTORY_BOUND))
        for arm in (FOLDED, FREE):
            quantities.append(mean_over_seeds(f"max |log-prob gap| per seed, {arm}, {optimizer}",
                                              worst_gaps(result, optimizer, arm)))  # fmt: skip
    return Finding(ours, verdict, tuple(quantities))


# ---- E2 -----------------------------------------------------------------------------------------


def fresh_losses(study, name: str) -> list:
    """A run's held-out losses per seed on fresh data (E2's only budget)."""
    return study.runs[name]["final_loss"]["fresh"]


def detach_differences(study) -> dict:
    """variant -> its held-out loss minus LayerNorm's, paired by seed (None if a run diverged)."""
    reference = fresh_losses(study, "LayerNorm")
    return {
        name: _paired_unless_diverged(fresh_losses(study, name), reference)
        for name in DETACH_VARIANTS
        if name != "LayerNorm"
    }


def _setting_text(study) -> str:
    run = study.runs["LayerNorm"]
    return (f"Pre-norm LM d 32, 4 blocks, Adam {run['lr']:g}, {run['steps']} steps, fresh data, "
            f"{len(run['seeds'])} seeds")  # fmt: skip


def check_e2(study) -> Finding:
    """LayerNorm-simple against LayerNorm at Adam 3e-3 (`better_verdict`): no worse and better,
    so a negligible gain is partly, no better (`no_better`)."""
    difference = detach_differences(study)["LayerNorm-simple"]
    if difference is None:
        return Finding(f"{_setting_text(study)}: a run diverged", NOT_REPRODUCED)
    verdict, word = better_verdict(difference)
    verdict = no_better(verdict)
    ours = (f"{_setting_text(study)}: held-out loss, LayerNorm-simple minus LayerNorm "
            f"{tested(difference, word, unit='nats')}. The source's reason for 'better', gain "
            "and bias raising the risk of over-fitting, cannot act on fresh data: E2d tests it "
            "on a pool the model over-fits")  # fmt: skip
    return Finding(ours, verdict, (aggregate("held-out loss, simple - LN", difference),))


def check_e2d(study) -> Finding:
    """E2 where its mechanism can act, on a pool LayerNorm over-fits: not exercised unless
    every LayerNorm pool run trains and LayerNorm over-fits. Then graded as E2, but a
    negligible gain is not reproduced: it is the one effect the source names."""
    layernorm = study.runs["LayerNorm"]
    ln_pool, ln_fresh = (layernorm["final_loss"][budget] for budget in ("pool", "fresh"))
    simple_pool, simple_fresh = (
        study.runs["LayerNorm-simple"]["final_loss"][budget] for budget in ("pool", "fresh")
    )
    setting = (f"Pre-norm LM d 32, 4 blocks, Adam {layernorm['lr']:g}, {layernorm['steps']} steps,"
               f" seeds {min(layernorm['seeds'])}-{max(layernorm['seeds'])}; a "
               f"{layernorm['pool_size']}-sequence pool cycled")  # fmt: skip
    if _diverged(ln_pool, ln_fresh, simple_pool, simple_fresh):
        return Finding(f"{setting}: a run diverged", INCONCLUSIVE)
    trained = len(ln_pool) - vocabulary.failed_runs(ln_pool, vars(SyntheticLanguage().levels()))
    overfit = stats.paired_difference(ln_pool, ln_fresh)
    overfits = vocabulary.better_beyond_negligible(overfit)[0] == "worse"  # beyond the margin
    on_pool = stats.paired_difference(simple_pool, ln_pool)
    on_fresh = stats.paired_difference(simple_fresh, ln_fresh)
    simple_gap = stats.paired_difference(simple_pool, simple_fresh)
    verdict, word = better_verdict(on_pool)
    ours = (
        f"{setting}: LayerNorm's held-out loss {statistics.fmean(ln_pool):.3f}"
        f" on the pool, {statistics.fmean(ln_fresh):.3f} on fresh data, "
        f"over-fitting by {overfit.text()}; {trained} of {len(ln_pool)} pool "
        f"runs train. LayerNorm-simple minus LayerNorm on the pool {tested(on_pool, word, unit='nats')}"
        f"; on fresh data {on_fresh.text()}. LayerNorm-simple over-fits by {simple_gap.text()}"
    )  # fmt: skip
    quantities = (aggregate("held-out loss, LN pool - LN fresh", overfit),
                  count("LN pool runs that train", trained, len(ln_pool)),
                  aggregate("held-out loss, simple - LN, pool", on_pool))  # fmt: skip
    if not overfits or trained < len(ln_pool):
        return Finding(ours, NOT_EXERCISED, quantities)
    return Finding(ours, verdict, quantities)


def simple_pick(sweep, name: str) -> tuple[float | None, dict]:
    """(E2c's rate for `name`, rate -> mean over seeds of its last 10 steps' training loss, fresh
    sequences): the lowest; a rate with a diverged seed is not eligible (as T6b picks)."""
    scores = {}
    for lr in ch10_analysis.SIMPLE_LRS:
        run = sweep.runs[f"{name}, lr {lr:g}"]
        if stats.count_diverged(run["final_loss"]["fresh"]):
            continue
        scores[lr] = statistics.fmean(row[-1] for row in run["train_loss"]["fresh"])
    return (min(scores, key=scores.get) if scores else None), scores


def check_e2c(sweep) -> Finding:
    """E2 with each norm at its own best of three rates, picked by training loss, graded as E2
    (`no_better`)."""
    picks = {name: simple_pick(sweep, name)[0] for name in ("LayerNorm-simple", "LayerNorm")}

    def mean(name, lr):
        losses = sweep.runs[f"{name}, lr {lr:g}"]["final_loss"]["fresh"]
        return "diverged" if stats.count_diverged(losses) else f"{statistics.fmean(losses):.3f}"

    grid = "; ".join(
        f"{name} " + ", ".join(f"{lr:g} {mean(name, lr)}" for lr in ch10_analysis.SIMPLE_LRS)
        for name in picks
    )
    if None in picks.values():
        return Finding(f"held-out loss by rate: {grid}; an arm diverged at every rate",
                       NOT_REPRODUCED)  # fmt: skip
    simple, layernorm = (
        sweep.runs[f"{name}, lr {picks[name]:g}"]["final_loss"]["fresh"] for name in picks
    )
    difference = stats.paired_difference(simple, layernorm)
    verdict, word = better_verdict(difference)
    ours = (
        f"held-out loss by rate ({len(simple)} seeds, mean): {grid}. Picked by training loss: "
        f"LayerNorm-simple {picks['LayerNorm-simple']:g}, LayerNorm {picks['LayerNorm']:g}; "
        f"LayerNorm-simple minus LayerNorm at the picks {tested(difference, word, unit='nats')}"
    )
    quantities = (aggregate("held-out loss, simple - LN at their picked rates", difference),)
    return Finding(ours, no_better(verdict), quantities)


def check_e2b(study) -> Finding:
    """Detaching both statistics hurts (the source's DetachNorm): the interval above 0. The mean
    alone and the std alone are reported, and which of them costs more."""
    differences = detach_differences(study)
    if any(d is None for d in differences.values()):
        return Finding(f"{_setting_text(study)}: a run diverged", INCONCLUSIVE)
    parts, quantities = [], []
    for name in ("both detached", "mean detached", "std detached"):
        difference = differences[name]
        outcome = stats.better(difference, "higher")
        words = {stats.HOLDS: "hurts", stats.FAILS: "helps", stats.NOT_GRADED: stats.NOT_GRADED}
        word = words.get(outcome, "undecided")
        parts.append(f"{name} {tested(difference, word, unit='nats')}")
        quantities.append(aggregate(f"held-out loss, {name} - LN", difference))
    std_vs_mean = stats.paired_difference(fresh_losses(study, "std detached"),
                                          fresh_losses(study, "mean detached"))  # fmt: skip
    ours = (f"{_setting_text(study)}, held-out loss minus LayerNorm's: " + "; ".join(parts)
            + f"; std detached minus mean detached {std_vs_mean.text()}")  # fmt: skip
    verdict = from_outcome(stats.better(differences["both detached"], "higher"))
    return Finding(ours, verdict, tuple(quantities))


# ---- Y1 -----------------------------------------------------------------------------------------


def regime_differences(study, alpha: float = REGIME_ALPHA) -> dict:
    """(method, budget) -> its held-out loss minus LayerNorm's on the same budget, paired."""
    runs = study.runs
    return {
        (method, budget): _paired_unless_diverged(
            runs[run]["final_loss"][f"alpha {alpha:g}, {budget}"],
            runs["LayerNorm"]["final_loss"][budget],
        )
        for method in ("DyT", "Derf")
        for budget, run in (("fresh", method), ("pool", f"{method}, pool"))
    }


def check_y1(study) -> Finding:
    """The regime claim at alpha_0 = 0.5, both halves: DyT better on the pool, worse on
    fresh data. Where no pool run trains (below the bigram level), "better" there would
    compare how overconfidently each memorized: not exercised."""
    differences = regime_differences(study)
    pool, fresh = differences["DyT", "pool"], differences["DyT", "fresh"]
    if pool is None or fresh is None:
        return Finding("a run diverged", INCONCLUSIVE)
    pool_outcome, fresh_outcome = stats.better(pool, "lower"), stats.better(fresh, "higher")
    run = study.runs["LayerNorm"]
    pool_losses = (
        run["final_loss"]["pool"]
        + study.runs["DyT, pool"]["final_loss"][f"alpha {REGIME_ALPHA:g}, pool"]
    )
    levels = vars(SyntheticLanguage().levels())
    trained = len(pool_losses) - vocabulary.failed_runs(pool_losses, levels)
    alphas = []
    for method in ("DyT", "Derf"):
        for a in Y1_ALPHAS:
            d = stats.paired_difference(study.runs[method]["final_loss"][f"alpha {a:g}, fresh"],
                                        run["final_loss"]["fresh"])  # fmt: skip
            alphas.append(f"{method} {a:g}: {d.mean:+.3f}")
    ours = (
        f"Pre-norm LM d 32, 4 blocks, {run['steps']} steps, {len(run['seeds'])} seeds, alpha_0 "
        f"{REGIME_ALPHA:g}; DyT minus LayerNorm, {run['pool_size']}-sequence pool cycled "
        f"{tested(pool, 'better' if pool_outcome == stats.HOLDS else pool_outcome, unit='nats')};"
        f" fresh data {tested(fresh, 'worse' if fresh_outcome == stats.HOLDS else fresh_outcome, unit='nats')}."
        f" Fresh data, minus LayerNorm by alpha_0: " + ", ".join(alphas) + ". On the pool "
        f"{trained} of {len(pool_losses)} runs (LayerNorm and DyT) train: held-out loss "
        f"{min(pool_losses):.2f}-{max(pool_losses):.2f}, against the uniform level "
        f"{levels['uniform']:.2f}"
    )  # fmt: skip
    quantities = (aggregate("held-out loss, DyT - LN, pool", pool),
                  aggregate("held-out loss, DyT - LN, fresh", fresh),
                  count("pool runs that train", trained, len(pool_losses)))  # fmt: skip
    if trained == 0:
        return Finding(ours, NOT_EXERCISED, quantities)
    return Finding(ours, combine([pool_outcome, fresh_outcome]), quantities)


def check_y1c(study) -> Finding:
    """Y1's "worse with more data" at T/P near 2: DyT minus LayerNorm on fresh data, paired by seed;
    the interval above 0 reproduces it, below 0 refutes it."""
    dyt = study.runs["DyT"]["final_loss"][f"alpha {REGIME_ALPHA:g}, fresh"]
    layernorm = study.runs["LayerNorm"]["final_loss"]["fresh"]
    run = study.runs["LayerNorm"]
    budget = ch10_analysis.tokens_per_parameter(run["steps"])
    setting = (f"Pre-norm LM d 32, 4 blocks, fresh data, {run['steps']} steps (T/P "
               f"{budget:.2f}), {len(run['seeds'])} seeds, alpha_0 {REGIME_ALPHA:g}")  # fmt: skip
    if _diverged(dyt, layernorm):
        return Finding(f"{setting}: a run diverged", INCONCLUSIVE)
    difference = stats.paired_difference(dyt, layernorm)
    outcome = stats.better(difference, "higher")
    word = {stats.HOLDS: "worse", stats.FAILS: "better"}.get(outcome, outcome)
    ours = (
        f"{setting}: held-out loss DyT {statistics.fmean(dyt):.3f}, LayerNorm "
        f"{statistics.fmean(layernorm):.3f}; DyT minus LayerNorm "
        f"{tested(difference, word, unit='nats')}"
    )
    quantities = (aggregate("held-out loss, DyT - LN, fresh, T/P near 2", difference),)
    return Finding(ours, from_outcome(outcome), quantities)


def check_y1b(study) -> Finding:
    """Derf's README numbers are GPT-2 and ViT-B scale: not checkable; reported at this scale."""
    differences = regime_differences(study)
    parts = [
        f"Derf minus LayerNorm, {budget}: "
        + ("a run diverged" if differences["Derf", budget] is None
           else differences["Derf", budget].text())
        for budget in ("fresh", "pool")
    ]  # fmt: skip
    return Finding("GPT-2 / ViT-B numbers out of reach; at alpha_0 0.5 here: " + "; ".join(parts),
                   NOT_CHECKABLE)  # fmt: skip


CLAIMS = (
    Claim(
        id="E1",
        claim="In a Pre-LN Transformer the mean is redundant: with a zero-mean main branch, "
        "LayerNorm can be replaced by RMSNorm and the outputs are unchanged",
        source="Jiang et al., NeurIPS 2023, arXiv:2305.14858 (Pre-RMSNorm and Pre-CRMSNorm)",
        paper_value="outputs equal (their example asserts allclose in float64); equivalent "
        "'in both training and inference' for a rewrite kept zero-mean (abstract)",
        experiments=(ch10_runs.zero_mean_drift,),
        check=check_e1,
        test=f"float64 max |logit difference| below {EXACT_BOUND:g} at init and after training "
        "(10 seeds); trained side by side under Adam, held-out loss, rewrite minus LayerNorm, "
        f"paired by seed, 95% t CI inside +-{NEGLIGIBLE_NATS:g} nats (margin declared beforehand); the "
        "drift of the logits is reported, not graded",
        regime="source: an identity for any Pre-LN Transformer, checked in float64 in its code; in "
        "training, a rewrite kept zero-mean; ours: d 64, 6 blocks, 10 seeds, float64 at init "
        "and after 100 Adam 3e-3 steps; the side-by-side training in float32 with the writers "
        "left free (not the source's constraint)",
    ),
    Claim(
        id="E1c",
        after_data="leaving the fold arm out of the grade was decided after the data",
        claim="Kept zero-mean, the rewrite is equivalent to Pre-LN in training too: trained side "
        "by side from the same weights on the same batches, the two stay one model",
        source="Jiang et al., NeurIPS 2023, arXiv:2305.14858 (abstract: equivalent 'in both "
        "training and inference')",
        paper_value="equivalent in training, for a rewrite whose main branch is kept zero-mean",
        experiments=(ch10_runs.constrained_drift,),
        check=check_e1c,
        test="float64, 4 seeds, 100 steps, Adam 3e-3 and plain SGD 0.3, each rewrite beside its "
        "LayerNorm twin (same init, same batches): one model while the max |log-probability "
        f"difference| on 64 held-out sequences, at every 10th step, stays below "
        f"{TRAJECTORY_BOUND:g}. Graded on the rewrite kept zero-mean (writers computed from "
        "centered weights) with the norms' biases kept: reproduced if it stays one model under "
        "both optimizers, not reproduced if it does not. Reported beside it, not graded: the "
        "rewrite with the biases folded into the readers (a change of parameterization the "
        "source does not make; left out of the grade: set after the data) and E1's free "
        "rewrite; the rest declared before the run",
        regime="source: a rewrite whose main branch stays zero-mean and whose norms carry no affine "
        "(all of it folded); ours: d 64, 6 blocks, float64, 4 seeds, 100 steps of Adam 3e-3 and "
        "SGD 0.3, writers kept centered, the gain kept and only the bias folded (the full fold "
        "not run)",
    ),
    Claim(
        id="E1b",
        claim="Replacing Pre-LN by the zero-mean RMSNorm form saves time",
        source="Jiang et al., NeurIPS 2023, arXiv:2305.14858",
        paper_value="1%-10% training and inference time (GPU)",
        experiments=(ch10_runs.zero_mean_drift,),
        check=check_e1b,
        test="not checkable on a CPU",
        regime="source: GPU training and inference time, Pre-LN against its RMSNorm rewrite; ours: no "
        "timing, CPU only (not matched)",
    ),
    Claim(
        id="E2",
        after_data="the rule for 'better' (beyond the negligible 0.02 nats) came after the first look "
        "at these runs",
        budget="fresh data, where the over-fitting the source blames cannot act",
        claim="LayerNorm without gain and bias (LayerNorm-simple) is no worse, indeed better, than "
        "LayerNorm",
        source=XU_2019,
        paper_value="LayerNorm-simple beats LayerNorm on 4 of their datasets",
        experiments=(ch10_analysis.detach_study,),
        check=check_e2,
        test="held-out loss, LayerNorm-simple minus LayerNorm, paired by seed (10), 95% t CI: "
        f"below -{NEGLIGIBLE_NATS:g} better (reproduced); below +{NEGLIGIBLE_NATS:g} no worse (partly: a gain "
        f"inside +-{NEGLIGIBLE_NATS:g} is negligible, the margin P2, T6 and E1 use); margin declared "
        "beforehand, the rule for 'better' after the first look",
        regime=f"{XU_REGIME}d 32, 4 blocks (52,432 parameters), Adam 3e-3, no warmup, "
        "150 steps of fresh data (T/P 0.73, no token seen twice), 10 seeds "
        "(over-fitting cannot act; not matched)",
    ),
    Claim(
        id="E2c",
        budget="fresh data, where the over-fitting the source blames cannot act",
        claim="LayerNorm-simple is no worse, indeed better, than LayerNorm, each at its own best "
        "learning rate",
        source=XU_2019,
        paper_value="LayerNorm-simple beats LayerNorm on 4 of their datasets",
        experiments=(ch10_analysis.simple_lr_sweep,),
        check=check_e2c,
        test="E2's model, data and 10 seeds at Adam 1e-3, 3e-3 and 1e-2; each norm's rate "
        "picked by its training loss over the last 10 steps (fresh sequences; a rate with a "
        "diverged seed is not eligible); held-out loss, LayerNorm-simple minus LayerNorm at the "
        "picks, graded as E2; declared before the run",
        regime=f"{XU_REGIME}E2's model, Adam at 1e-3, 3e-3 and 1e-2 (each norm at its "
        "pick), no warmup, 150 steps of fresh data (T/P 0.73), 10 seeds (over-fitting "
        "cannot act; not matched)",
    ),
    Claim(
        id="E2d",
        after_data=NEGLIGIBLE_RULE_SET_AFTER,
        claim="Where over-fitting can act, LayerNorm-simple is better than LayerNorm: the gain "
        "and bias add to the risk of over-fitting",
        source=f"{XU_2019} (abstract: the bias and gain 'increase the risk of over-fitting')",
        paper_value="LayerNorm-simple beats LayerNorm on 4 of their datasets; the gain and bias "
        "blamed on over-fitting",
        experiments=(ch10_analysis.overfit_study,),
        check=check_e2d,
        test="E2's model at Adam 3e-3 for 300 steps on a 512-sequence pool cycled (about 9 "
        "passes) and on fresh data, 10 seeds (10-19) no earlier run used. Premise: every "
        "LayerNorm pool run trains and LayerNorm over-fits (held-out loss, pool minus fresh, "
        f"paired by seed, 95% t CI above +{NEGLIGIBLE_NATS:g} nats), else inconclusive (not "
        "exercised). Held-out loss on the pool, LayerNorm-simple minus LayerNorm, paired by seed, "
        "graded as E2 but for a gain inside +-0.02, which, the one effect it names, is not "
        "reproduced (negligible). Pool and steps chosen on three pilot seeds of LayerNorm alone; declared "
        "before the graded run",
        regime=f"{XU_REGIME}d 32, 4 blocks, Adam 3e-3, no warmup, 300 steps on a "
        "512-sequence pool (8,192 tokens, about 9 passes) and on fresh data, seeds "
        "10-19",
    ),
    Claim(
        id="E2b",
        claim="The gradients through the mean and variance matter: detaching them (DetachNorm) "
        "hurts",
        source=XU_2019,
        paper_value="DetachNorm worse than LayerNorm",
        experiments=(ch10_analysis.detach_study,),
        check=check_e2b,
        test="held-out loss, mean and std detached minus LayerNorm, paired by seed (10), 95% t CI "
        "above 0; the mean alone and the std alone reported",
        regime="source: DetachNorm against LayerNorm in full training runs on real data sets; ours: d "
        "32, 4 blocks, Adam 3e-3, no warmup, 150 steps of fresh data (T/P 0.73), 10 seeds",
    ),
    Claim(
        id="Y1",
        budget="alpha_0 0.5 without warmup, against the source's 2.0 after 2,000 warmup steps",
        claim="DyT is regime-dependent: better than LayerNorm when data is scarce, worse with "
        "more data",
        source="arXiv:2604.23434 (its abstract and its authors' code; a single-author preprint), "
        "on Zhu et al. 2025's DyT",
        paper_value="DyT better at tokens per parameter near 0.016, worse at 1.84; ours: about "
        "52k parameters, T/P 0.02 on the pool (1,024 distinct tokens), 0.73 on fresh data",
        experiments=(ch10_analysis.after_dyt_study,),
        check=check_y1,
        test=f"alpha_0 {REGIME_ALPHA:g}, held-out loss, DyT minus LayerNorm, paired by seed (6), "
        "95% t CI: below 0 on a 64-sequence pool cycled, above 0 on fresh data; both halves for "
        "reproduced, one for partly. First the premise: where no pool run of either norm trains "
        "(ends below the bigram level), the scarce regime is not exercised and the verdict is "
        "inconclusive (not exercised)",
        regime="source: 64M parameters (12 blocks, d 512) on 1M tokens (T/P about 0.016, about 160 "
        "passes) against 118M tokens (T/P 1.84); its code: AdamW 3e-4, 2,000 warmup steps of "
        "5,000, alpha_0 2.0, 3 seeds; ours: 52,432 parameters, Adam 3e-3, no warmup, 150 steps, "
        "alpha_0 0.5 (not matched), 6 seeds: a 64-sequence pool (1,024 tokens, T/P 0.02, about 37 "
        "passes) and fresh data (T/P 0.73; the rich cell not matched, Y1c runs it)",
    ),
    Claim(
        id="Y1c",
        budget="alpha_0 0.5 without warmup, against the source's 2.0 after 2,000 warmup steps",
        claim="With more data DyT falls behind LayerNorm: at tokens per parameter near the "
        "source's rich cell",
        source="arXiv:2604.23434 (its abstract and its authors' code; a single-author preprint)",
        paper_value="DyT 18.8% worse at T/P 1.84 (64M parameters, 118M tokens)",
        experiments=(ch10_analysis.dyt_data_rich,),
        check=check_y1c,
        test=f"Y1's model, fresh data for 400 steps (T/P 1.95), alpha_0 {REGIME_ALPHA:g}, 10 "
        "seeds; held-out loss, DyT minus LayerNorm, paired by seed, 95% t CI above 0 "
        "reproduces, below 0 refutes, otherwise inconclusive; declared before the run",
        regime="source: 64M parameters on 118M tokens (T/P 1.84, about 1.4 passes); its code: AdamW "
        "3e-4, 2,000 warmup steps of 5,000, alpha_0 2.0, 3 seeds; ours: 52,432 parameters, fresh "
        "data, 400 steps of 256 tokens (T/P 1.95), Adam 3e-3, no warmup, alpha_0 0.5, 10 seeds "
        "(not matched: warmup and alpha_0)",
    ),
    Claim(
        id="Y1b",
        claim="Derf (erf in place of tanh, with a learnable shift) matches or beats LayerNorm and "
        "DyT",
        source="arXiv:2512.10938 (Derf), its README",
        paper_value="GPT-2 validation loss LN 2.94, DyT 2.97, Derf 2.94; ViT-B 82.3 / 82.5 / 82.8",
        experiments=(ch10_analysis.after_dyt_study,),
        check=check_y1b,
        test="not checkable at CPU scale; Derf minus LayerNorm reported at alpha_0 0.5",
        regime="source: GPT-2 validation loss and ImageNet ViT-B accuracy after full training (its "
        "README); ours: Derf at alpha0 0.5 on Y1's d 32, 4-block model, 150 steps, 6 seeds, "
        "reported only (scale not matched)",
    ),
)
