"""Claims of notebook 01 on runs that keep the training loss: M5g, Sec. 6.6's faster training
convergence in the quantity Figure 6 plots, and M5f, M5's batch-size question at equal steps. Both
rest on `analysis.training_convergence`, ten seeds no earlier M5 run used; M5-M5e are in `claims`."""

import statistics

from lnpaper import stats
from lnpaper.chapters.ch01_why_batchnorm_fails import analysis
from lnpaper.chapters.ch01_why_batchnorm_fails.claims import (
    M5_LAST_EPOCHS,
    M5_MARGIN,
    M5_PAPER_BN,
    graded_parts,
    in_points,
    late_means,
    points,
)
from lnpaper.companion.verdicts import BA_2016, OURS, Claim, Finding, aggregate, tested

EARLY = 3  # "faster": the mean over the first quarter of training, evaluations 1-3 of 12


def early_means(study, model: str, arm: str, key: str) -> list:
    """Per seed, `key` averaged over the first EARLY of the arm's twelve evaluations."""
    return [statistics.fmean(run[key][:EARLY]) for run in study.curves[model][arm]]


def _early_difference(study, arm: str, key: str) -> stats.Difference:
    """LayerNorm minus the paper's BatchNorm, `key` over the first quarter, paired by seed."""
    ln, bn = (early_means(study, model, arm, key) for model in ("layernorm", M5_PAPER_BN))
    return stats.paired_difference(ln, bn)


def check_m5g(study) -> Finding:
    """Faster training convergence at each batch size: the training loss over the first quarter,
    LayerNorm minus the paper's BatchNorm, below 0."""

    def at(arm):
        faster = _early_difference(study, arm, "train loss")
        outcome = stats.better(faster, "lower")
        train_nll = _early_difference(study, arm, "train nll")
        accuracy = _early_difference(study, arm, "test accuracy")
        text = (
            f"{arm}: training loss, LN minus the paper's BN {tested(faster, outcome, unit='nats')};"
            f" not graded: training-set NLL {train_nll.bracket()}, test accuracy "
            f"{points(accuracy)} pp"
        )
        return text, outcome, aggregate(f"early training loss, LN - paper's BN, {arm}", faster)

    ours = (
        f"over epochs 1-{EARLY} of {study.epochs['batch 128']}, paired by seed "
        f"({study.seeds[0]}-{study.seeds[-1]}), BatchNorm evaluated with exact training-set "
        "statistics: "
    )
    return graded_parts(ours, [at("batch 128"), at("batch 4")])


def check_m5f(study) -> Finding:
    """M5 at equal steps: LayerNorm's accuracy at batch 4 no worse than at batch 128 trained as
    many steps, by M5's margin; the paper's BatchNorm's lower."""
    steps = study.steps["batch 4"]
    evaluations = len(study.curves["layernorm"]["batch 4"][0]["test accuracy"])

    def graded(model, rule, test):
        small, big = (
            late_means(study.curves[model][arm], "test accuracy")
            for arm in ("batch 4", analysis.EQUAL_STEPS)
        )
        difference = stats.paired_difference(small, big)
        outcome = test(difference)
        text = f"{model} {in_points(difference, outcome, rule)}"
        return text, outcome, aggregate(f"{model} accuracy, batch 4 - 128, equal steps", difference)

    ours = (
        f"{steps:,} Adam steps at both sizes ({study.epochs['batch 4']} epochs at batch 4, about "
        f"{study.epochs[analysis.EQUAL_STEPS]} at 128), "
        f"test accuracy over the last {M5_LAST_EPOCHS} of {evaluations} evaluations, batch 4 minus "
        "128, BatchNorm with exact statistics: "
    )
    ln = graded("layernorm", "no worse by 1 pp", lambda d: stats.no_worse(d, M5_MARGIN, "higher"))
    return graded_parts(
        ours, [ln, graded(M5_PAPER_BN, "lower", lambda d: stats.better(d, "lower"))]
    )


CLAIMS = (
    Claim(
        id="M5g",
        claim="LayerNorm's training converges faster than BatchNorm applied to all layers, at "
        "batch 128 and at batch 4",
        source=f"{BA_2016}, Sec. 6.6 and its Figure 6",
        paper_value="figure only: Figure 6 plots the training NLL (log axis) and the test error "
        "at both batch sizes; the text says LN 'exhibits a faster training convergence'",
        regime="source: MNIST 784-1000-1000-10, Adam, training NLL over 60 epochs (Figure 6); "
        "ours: digits 64-256-256-10, Adam 1e-3, training loss over epochs 1-3 of 12 (27 steps at "
        "batch 128, 897 at 4), 10 seeds",
        experiments=(analysis.training_convergence,),
        check=check_m5g,
        test="the training loss (the minibatches' mean cross-entropy) averaged over epochs 1-3 "
        "of 12, LN minus the paper's BN, paired by seed (10 seeds, 40-49, no earlier M5 run used "
        "them), 95% t CI below 0, at batch 128 and at batch 4; both: reproduced, one: partly; "
        "declared before the run",
    ),
    Claim(
        id="M5f",
        origin=OURS,
        claim="LayerNorm's robustness to the batch size is not batch 4's extra steps: trained as "
        "many steps at batch 128, it is still no worse at batch 4, and BatchNorm still worse",
        source=f"ours, on {BA_2016}, Sec. 6.6",
        paper_value="not in the paper (its batch sizes train the same epochs)",
        experiments=(analysis.training_convergence,),
        check=check_m5f,
        test="3,588 Adam steps at batch 4 (12 epochs) and at batch 128 (about 399 epochs), test "
        "accuracy over the last 3 of 12 evaluations, batch 4 minus 128, paired by seed (10 seeds, "
        "40-49), 95% t CI: LN no worse (CI above -1 pp) and the paper's BN, with exact "
        "statistics, lower (CI below 0); both: reproduced, one: partly; declared before the run",
    ),
)
