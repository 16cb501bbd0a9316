"""Claims of notebook 06 asked again over a wider range: T1b, T1's gradients over depths 6 to 24,
and T4b, training without a norm for three times T4's steps. T1, T4 and the Transformer's other
claims are in `claims`."""

from lnpaper import formatting
from lnpaper.chapters.ch06_transformer import analysis as ch06_analysis
from lnpaper.chapters.ch06_transformer.claims import check_t1, most_runs_fail
from lnpaper.companion.verdicts import Claim, Finding, from_outcome


def check_t4b(longer) -> Finding:
    """T4's warmup arm on a clock three times as long (`t4_longer`): most runs fail (diverge or do
    not end below the bigram level) reproduces T4; most train refutes it."""
    label = f"failed runs, warmup, {longer.steps[-1]} steps"
    text, outcome, quantity = most_runs_fail(longer.final_loss, longer.levels, label)
    ours = (
        f"{longer.n_layers} layers, identity norms, lr {longer.lr:g} after {longer.warmup_steps} "
        f"warmup steps, {longer.steps[-1]} steps, seeds {longer.seeds[0]}-{longer.seeds[-1]}: "
        f"{text}; held-out loss {formatting.median_text(longer.final_loss)}, bigram level "
        f"{longer.levels['bigram']:.3g}"
    )
    return Finding(ours, from_outcome(outcome), (quantity,))


CLAIMS = (
    Claim(
        id="T1b",
        claim="T1 over depths 6 to 24: Post-LN's last-FFN gradient at init about constant in "
        "depth, Pre-LN's falling",
        source="Xiong et al. 2020, Theorem 1 and experiments",
        paper_value="Post-LN ~1.6 for 6-14 layers; Pre-LN decreasing",
        experiments=(ch06_analysis.xiong_deeper,),
        check=check_t1,
        test="T1's test on T1's setting at 6, 10, 14, 19 and 24 blocks, on 40 seeds (40-79) no "
        "earlier run used: per-seed slope of log ||grad W2|| against log L, 95% t CI, Post-LN "
        "inside +-0.25, Pre-LN below 0; declared before the run",
        regime="source: encoder-decoder Transformers of 6-6 to 14-14 layers, d 512, at "
        "initialization, 10 seeds; ours: T1's decoder-only d 128 stack at 6-24 blocks, at init, "
        "40 seeds (deeper than the source's range)",
    ),
    Claim(
        id="T4b",
        budget="600 steps of a 6-block, d-64 model, against Transformer-base's full training",
        claim="without normalization the Transformer fails to train, on a clock three times T4's",
        source="Zhang & Sennrich 2019, Transformer-base on WMT14",
        paper_value="WMT14: LN 26.6, RMSNorm 26.8 BLEU, none: fails",
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
