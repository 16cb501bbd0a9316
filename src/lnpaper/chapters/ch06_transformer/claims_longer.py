"""Claims of notebook 06 asked again on a longer clock: T4b, training without a norm for three times
T4's steps. T4 itself, and the Transformer's other claims, are in `claims`."""

from lnpaper import formatting, stats, vocabulary
from lnpaper.chapters.ch06_transformer import analysis as ch06_analysis
from lnpaper.chapters.ch06_transformer.claims import NOTEBOOK, T4_WORDS
from lnpaper.companion.verdicts import Claim, Finding, count, from_outcome


def check_t4b(longer) -> Finding:
    """T4's warmup arm on a clock three times as long (`t4_longer`): most runs fail (diverge or do
    not end below the bigram level) reproduces T4; most train refutes it."""
    n = len(longer.seeds)
    failed = vocabulary.failed_runs(longer.final_loss, longer.levels)
    low, high = stats.binomial_interval(failed, n)
    label = f"failed runs, warmup, {ch06_analysis.T4B_STEPS} steps"
    outcome = stats.most_runs(failed, n, label)
    ours = (
        f"{longer.n_layers} layers, identity norms, lr {longer.lr:g} after {longer.warmup_steps} "
        f"warmup steps, {ch06_analysis.T4B_STEPS} steps, seeds {longer.seeds[0]}-"
        f"{longer.seeds[-1]}: {failed} of {n} runs fail (rate 95% CI {low:.2f}-{high:.2f}: "
        f"{T4_WORDS[outcome]}); held-out loss {formatting.median_text(longer.final_loss)}, "
        f"bigram level {longer.levels['bigram']:.3g}"
    )
    return Finding(ours, from_outcome(outcome), (count(label, failed, n),))


CLAIMS = (
    Claim(
        id="T4b",
        budget="600 steps of a 6-block, d-64 model, against Transformer-base's full training",
        claim="without normalization the Transformer fails to train, on a clock three times T4's",
        source="Zhang & Sennrich 2019, Transformer-base on WMT14",
        paper_value="WMT14: LN 26.6, RMSNorm 26.8 BLEU, none: fails",
        notebook=NOTEBOOK,
        experiments=(ch06_analysis.t4_longer,),
        check=check_t4b,
        test="T4's no-norm model (6 blocks, identity norms, Adam lr 3e-3) with its 50 warmup steps, "
        "trained 600 steps on 20 seeds (36-55) no earlier run used; a run fails if it diverges "
        "or does not end below the bigram level; reproduced if most runs fail (the failure "
        "rate's 95% binomial CI above 1/2), not reproduced if most train (CI below 1/2), else "
        "inconclusive; declared before the run",
        regime="source: Transformer-base (6-6 layers, d 512) on WMT14 En-De, full-length training "
        "in the usual recipe with warmup; ours: 6 blocks, d 64, identity norms, Adam lr 3e-3 after "
        "50 warmup steps, 600 steps (0.51 tokens per parameter), 20 seeds (not matched: size and "
        "length)",
    ),
)
