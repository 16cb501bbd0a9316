"""The experiments and claim checks of notebook 06 (T1-T7), on small runs and made-up studies."""

import math
import statistics

import pytest
import torch

from lnpaper.chapters.ch06_transformer.runs import layer_statistics
from lnpaper.models.transformer import next_token_loss


def test_grad_norm_vs_depth_accepts_a_range_and_records_every_layer(no_store):
    from lnpaper.chapters.ch06_transformer.runs import grad_norm_vs_depth

    post = grad_norm_vs_depth(placement="post", depths=(2, 3), seeds=range(2), d_model=16)
    assert post.seeds == [0, 1] and len(post.grad_norm) == 2 and len(post.grad_norm[0]) == 2
    assert post.layers == [1, 2, 3]  # x^{post,5} of each block of the deepest model
    pre = grad_norm_vs_depth(placement="pre", depths=(2, 3), seeds=range(2), d_model=16)
    assert pre.layers == [0, 1, 2, 3]  # the stream after 0..L blocks
    assert pre.residual_sq_norm[-1] > pre.residual_sq_norm[0]  # Pre-LN's stream grows
    with pytest.raises(ValueError, match="placement"):
        grad_norm_vs_depth(placement="peri", depths=(2,), seeds=(0,), d_model=16)


def test_batchnorm_backward_is_the_projection_formula(no_store):
    from lnpaper.chapters.ch06_transformer.runs import batchnorm_backward_projection

    result = batchnorm_backward_projection(batch=8, features=3)
    assert result.max_diff_formula < 1e-12 and result.max_diff_numpy < 1e-12
    assert result.max_sum < 1e-12
    assert all(v < 1 for v in result.y_hat_sq_norm_over_n)  # eps makes it a near-projection


def test_lm_training_records_each_seed(no_store):
    from lnpaper.chapters.ch06_transformer.runs import lm_training

    result = lm_training(n_layers=1, seeds=(0, 1), steps=4, log_every=2)
    assert result.steps == [2, 4] and len(result.train_loss) == 2
    assert all(v is not None for v in result.final_loss)
    assert result.diverged_at == [None, None]
    assert result.levels["bigram"] > result.floor > result.levels["rate"]


def test_lm_training_trains_each_seed_as_the_one_run_loop_would(no_store):
    """The seeds of lm_training step together as one population; each must follow the one-run loop
    (`lnpaper.train.train`) on its own batches, to float32 roundoff amplified over a few steps."""
    from lnpaper.chapters.ch06_transformer.runs import batches, build_models, held_out, lm_training
    from lnpaper.train import train

    options = {"placement": "post", "n_layers": 2, "lr": 1e-2, "warmup_steps": 3}
    seeds, steps = (0, 3), 8
    result = lm_training(**options, seeds=seeds, steps=steps, log_every=2)
    next_batch = batches(seeds, steps=steps, batch_size=16, length=16)
    scored = held_out(16)
    for index, model in enumerate(build_models(seeds, length=16, n_layers=2, n_heads=2,
                                               placement="post")):  # fmt: skip
        history = train(
            model,
            next_token_loss,
            lambda step, i=index: next_batch(step)[i],
            steps=steps,
            lr=1e-2,
            warmup_steps=3,
            log_every=2,
            evaluate=lambda m: {"loss": next_token_loss(m, scored)},
            eval_every=steps,
        )
        assert result.steps == history.steps
        close = {"rtol": 1e-4, "atol": 1e-6}
        torch.testing.assert_close(result.train_loss[index], history.train_loss, **close)
        torch.testing.assert_close(result.initial_loss[index], history.evals[0]["loss"], **close)
        torch.testing.assert_close(result.final_loss[index], history.evals[-1]["loss"], **close)
        variance, grad_norm = layer_statistics(model, scored[:64])
        torch.testing.assert_close(result.stream_variance_final[index], variance, **close)
        torch.testing.assert_close(result.block_grad_norm_final[index], grad_norm, **close)


SEEDS = 10  # enough for the t intervals and the Clopper-Pearson interval to decide
# fixed offsets with mean 0 and sd about 1: `around` spreads an arm's seeds over them, rotated by
# `shift`, so that two arms paired by seed do not differ by a constant (a zero-width interval)
OFFSETS = (-1.5, -1.1, -0.7, -0.4, -0.1, 0.1, 0.4, 0.7, 1.1, 1.5)


def around(mean, spread=0.01, shift=0):
    return [mean + spread * OFFSETS[(i + shift) % SEEDS] for i in range(SEEDS)]


def fake_run(finals, n_layers=6):
    finals = list(finals)
    return {
        "placement": "pre", "norm": "layernorm", "init": "default", "n_layers": n_layers,
        "lr": 3e-3, "warmup_steps": 50, "seeds": list(range(len(finals))), "steps": [10, 20],
        "train_loss": [[3.0, 2.0]] * len(finals), "initial_loss": [2.8] * len(finals),
        "final_loss": finals, "diverged_at": [10 if v is None else None for v in finals],
        "levels": {"uniform": 2.77, "unigram": 2.75, "bigram": 2.34, "rate": 0.84},
        "floor": 0.94,
    }  # fmt: skip


def study(**finals):
    """notebook 06's normalization_study, ten seeds, with the final losses given by short names."""
    from lnpaper.chapters.ch06_transformer.runs import StudyResult

    names = {
        "post_cold": "Post-LN, no warmup",
        "post_warm": "Post-LN, warmup",
        "pre_cold": "Pre-LN, no warmup",
        "pre_warm": "Pre-LN, warmup",
        "none_cold": "no norm (identity), no warmup",
        "none_warm": "no norm (identity), warmup",
        "dyt": "Pre-DyT, no warmup",
    }
    default = {
        "post_cold": around(2.76, 0.005), "post_warm": around(2.17, 0.04, 3),
        "pre_cold": around(1.97, 0.01), "pre_warm": around(1.93, 0.02, 5),
        "none_cold": [200.0, None, 13.0, 5.6, None, 60.0, 35.0, 110.0, 21.0, 260.0],
        "none_warm": around(2.45, 0.05, 2), "dyt": around(1.79, 0.01, 4),
    }  # fmt: skip
    default.update(finals)
    return StudyResult(runs={names[k]: fake_run(v) for k, v in default.items()})


def test_t3_warmup_check_reproduces_fails_and_can_be_partly_or_inconclusive():
    from lnpaper.chapters.ch06_transformer.claims import check_t3
    from lnpaper.companion import verdicts

    assert check_t3(study()).verdict == verdicts.REPRODUCED
    # Post-LN trains as well without warmup (the interval straddles 0): only Pre-LN's part holds
    assert check_t3(study(post_cold=around(2.17, 0.04, 7))).verdict == verdicts.PARTLY
    # Pre-LN without warmup stalls far above Post-LN with warmup: only Post-LN's part holds
    assert check_t3(study(pre_cold=around(2.70, 0.01))).verdict == verdicts.PARTLY
    # warmup hurts Post-LN, and Pre-LN stalls: both parts fail
    worse = study(post_cold=around(2.0, 0.01), pre_cold=around(2.70, 0.01))
    assert check_t3(worse).verdict == verdicts.NOT_REPRODUCED
    # neither part decided: no difference from warmup, Pre-LN's loss spread across Post-LN's
    undecided = study(post_cold=around(2.17, 0.04, 7), pre_cold=around(2.17, 0.1, 2))
    assert check_t3(undecided).verdict == verdicts.INCONCLUSIVE
    # a diverged Post-LN run cannot be paired: that part is left undecided, and said so
    diverged = check_t3(study(post_cold=[None, *around(2.76, 0.005)[1:]]))
    assert diverged.verdict == verdicts.PARTLY and "1 run(s) diverged" in diverged.ours
    # a diverged Pre-LN run without warmup is no evidence that Pre-LN trains without it
    pre_diverged = study(pre_cold=[None, *around(1.97, 0.01)[1:]])
    assert check_t3(pre_diverged).verdict == verdicts.PARTLY


def twice(study_result):
    """T4 reads its 30-seed confirmation and the first six seeds: here one study plays both."""
    return study_result, study_result


def test_t4_no_norm_check_tests_both_warmup_arms():
    from lnpaper.chapters.ch06_transformer.claims import check_t4
    from lnpaper.companion import verdicts

    failing = [200.0, None, 13.0, 5.6, None, 60.0, 35.0, 110.0, 21.0, 260.0]  # 2 diverged
    # every run without warmup fails; with warmup every run ends below the bigram level (2.34)
    partly = check_t4(*twice(study(none_warm=around(2.2))))
    assert partly.verdict == verdicts.PARTLY
    assert "no warmup: 10 of 10 runs fail" in partly.ours and "warmup: 0 of 10" in partly.ours
    # the default study's warmup arm ends near 2.45: below unigram, above bigram, so it fails
    assert check_t4(*twice(study())).verdict == verdicts.REPRODUCED
    # both arms fail: reproduced, and with a diverged run there is no gap to Pre-LN to pair
    both = check_t4(*twice(study(none_warm=failing)))
    assert both.verdict == verdicts.REPRODUCED and "not paired: a run diverged" in both.ours
    assert [q.kind for q in both.quantities] == ["count", "count"]
    # neither arm fails: the model trains with and without warmup
    trains = study(none_cold=around(1.9), none_warm=around(2.2))
    assert check_t4(trains, trains).verdict == verdicts.NOT_REPRODUCED
    # 6 of 10 fail without warmup, the interval (0.26-0.88) contains 1/2; with warmup none fail
    mixed = [None, 13.0, 5.6, 60.0, 2.8, 21.0, *around(2.2)[:4]]
    assert check_t4(*twice(study(none_cold=mixed, none_warm=around(2.2)))).verdict == (
        verdicts.NOT_REPRODUCED
    )
    # the same undecided arm, with a failing warmup arm: one part holds
    assert check_t4(*twice(study(none_cold=mixed, none_warm=failing))).verdict == verdicts.PARTLY
    # both undecided
    assert (
        check_t4(*twice(study(none_cold=mixed, none_warm=mixed))).verdict == verdicts.INCONCLUSIVE
    )
    # ending just below the bigram level trains; at it, the run has not trained
    below = study(none_cold=[2.3399] * SEEDS, none_warm=[2.3399] * SEEDS)
    assert check_t4(below, below).verdict == verdicts.NOT_REPRODUCED
    at_level = study(none_cold=[2.34] * SEEDS, none_warm=[2.34] * SEEDS)
    assert check_t4(at_level, at_level).verdict == verdicts.REPRODUCED


def test_t4_gap_to_pre_ln_pairs_the_warmup_arms_by_seed():
    from lnpaper.chapters.ch06_transformer.claims import check_t4

    # no norm 0.5 nats behind Pre-LN, both with warmup, on average; by a different amount per seed
    finding = check_t4(*twice(study(pre_warm=around(1.95, 0.05), none_warm=around(2.45, 0.05, 1))))
    (gap,) = [q for q in finding.quantities if q.kind == "aggregate"]
    assert gap.label == "no norm - Pre-LN loss, both with warmup"
    assert gap.difference.n == SEEDS and 0.4 < gap.difference.low < gap.value < gap.difference.high
    assert abs(gap.value - 0.5) < 1e-9 and f"{gap.value:+.3f}" in finding.ours
    assert [q.value for q in finding.quantities if q.kind == "count"] == [10, 10]


def tfixup(xavier, fixup):
    from lnpaper.chapters.ch06_transformer.runs import StudyResult

    return StudyResult(
        runs={
            "Xavier, 12 layers, no norm": fake_run(xavier, 12),
            "T-Fixup, 12 layers, no norm": fake_run(fixup, 12),
        }
    )


def test_t5_tfixup_check_reproduces_fails_and_can_be_partly_or_inconclusive():
    from lnpaper.chapters.ch06_transformer.claims import check_t5
    from lnpaper.companion import verdicts

    xavier_fails = [None] * 8 + [390.0, 12.0]
    assert check_t5(tfixup(xavier_fails, around(1.85))).verdict == verdicts.REPRODUCED
    # T-Fixup diverged once: its part fails, Xavier's holds
    one_diverged = [None, *around(1.85)[1:]]
    assert check_t5(tfixup(xavier_fails, one_diverged)).verdict == verdicts.PARTLY
    # Xavier trains (0 of 10 fail) and T-Fixup stalls above the bigram level: both parts fail
    assert check_t5(tfixup(around(1.9), around(2.6))).verdict == verdicts.NOT_REPRODUCED
    # 5 of 10 Xavier runs fail, T-Fixup's losses straddle the bigram level: nothing decided
    half = [None] * 5 + around(1.9)[:5]
    assert check_t5(tfixup(half, around(2.34, 0.1))).verdict == verdicts.INCONCLUSIVE


def test_t5b_rezero_check_reproduces_fails_and_reports_the_gap_to_tfixup():
    from types import SimpleNamespace

    from lnpaper.chapters.ch06_transformer.claims import check_t5b
    from lnpaper.companion import verdicts

    study = tfixup([None] * 10, around(1.55))
    trains = SimpleNamespace(**fake_run(around(1.85), 12))
    finding = check_t5b(study, trains)
    assert finding.verdict == verdicts.REPRODUCED and "minus T-Fixup" in finding.ours
    stalls = SimpleNamespace(**fake_run(around(2.6), 12))  # above the bigram level (2.34)
    assert check_t5b(study, stalls).verdict == verdicts.NOT_REPRODUCED
    diverges = SimpleNamespace(**fake_run([None, *around(1.85)[1:]], 12))
    assert check_t5b(study, diverges).verdict == verdicts.NOT_REPRODUCED


def test_t5c_grades_tfixup_against_the_pre_ln_of_its_depth():
    from types import SimpleNamespace

    from lnpaper.chapters.ch06_transformer.claims import check_t5c
    from lnpaper.companion import verdicts

    study = tfixup([None] * 10, around(1.55))
    behind = SimpleNamespace(**fake_run(around(2.03, shift=3), 12))
    finding = check_t5c(study, behind)
    assert finding.verdict == verdicts.REPRODUCED, finding.ours
    assert finding.quantities[0].label == "T-Fixup - Pre-LN held-out loss"
    level = SimpleNamespace(**fake_run(around(1.55, shift=3), 12))  # no worse: a match
    assert check_t5c(study, level).verdict == verdicts.REPRODUCED
    close = SimpleNamespace(**fake_run(around(1.535, shift=3), 12))  # its interval crosses +0.02
    assert check_t5c(study, close).verdict == verdicts.INCONCLUSIVE
    ahead = SimpleNamespace(**fake_run(around(1.40, shift=3), 12))
    assert check_t5c(study, ahead).verdict == verdicts.NOT_REPRODUCED
    fixup_diverged = tfixup([None] * 10, [None, *around(1.55)[1:]])
    assert check_t5c(fixup_diverged, behind).verdict == verdicts.NOT_REPRODUCED


@pytest.mark.parametrize("diverged", [(), (0, 1, 2, 3, 4, 5), (1, 4)])
def test_the_t5_figure_draws_xavier_runs_that_diverge_or_stay_finite(diverged):
    """Whether a Xavier run stops being finite depends on the numeric path: the figure must draw
    every mix (notebook 06 runs live on the recomputed record in make test)."""
    import copy

    import matplotlib.pyplot as plt

    from lnpaper.chapters.ch06_transformer import analysis, figures

    study = copy.deepcopy(analysis.tfixup_study())
    xavier = study.runs["Xavier, 12 layers, no norm"]
    for seed in range(len(xavier["seeds"])):
        stop = 20 + seed if seed in diverged else None
        xavier["diverged_at"][seed] = stop
        if stop is not None:
            xavier["final_loss"][seed] = None
            xavier["train_loss"][seed] = xavier["train_loss"][seed][: stop // 10]
    fig = figures.tfixup_curves(study)
    text = " ".join(t.get_text() for t in fig.findobj(plt.Text))
    if diverged:
        assert f"{len(diverged)} not finite by step {20 + max(diverged)}" in text
    if len(diverged) < len(xavier["seeds"]):
        assert f"{len(xavier['seeds']) - len(diverged)} finite, ending at" in text
    assert "all 6 seeds fail:" in text
    plt.close(fig)


def norm_study(dyt, layernorm=None):
    """notebook 07's rmsnorm_study, which T6 reads: the DyT and LayerNorm runs."""
    from lnpaper.chapters.ch06_transformer.runs import StudyResult

    layernorm = around(1.96, 0.03, 5) if layernorm is None else layernorm
    return StudyResult(runs={"LayerNorm": fake_run(layernorm), "DyT": fake_run(dyt)})


def test_t6_dyt_check_is_non_inferiority_within_the_margin():
    from lnpaper.chapters.ch06_transformer.claims import check_t6
    from lnpaper.companion import verdicts
    from lnpaper.vocabulary import NEGLIGIBLE_NATS

    # better than LayerNorm, or equal within the noise: no worse by the margin
    assert check_t6(norm_study(around(1.79, 0.01))).verdict == verdicts.REPRODUCED
    layernorm = around(1.96, 0.03, 5)
    same = [v + d for v, d in zip(layernorm, around(0.0, 0.005, 1), strict=True)]
    assert check_t6(norm_study(same, layernorm)).verdict == verdicts.REPRODUCED
    # worse by 0.2 nats, the whole interval beyond +NEGLIGIBLE_NATS
    assert check_t6(norm_study(around(2.16, 0.01))).verdict == verdicts.NOT_REPRODUCED
    # worse by about the margin: the interval straddles it
    borderline = norm_study(around(1.96 + NEGLIGIBLE_NATS, 0.03, 2))
    assert check_t6(borderline).verdict == verdicts.INCONCLUSIVE
    # a diverged DyT run is no match
    diverged = check_t6(norm_study([None, *around(1.79)[1:]]))
    assert diverged.verdict == verdicts.NOT_REPRODUCED and "diverged" in diverged.ours


def lr_sweep(finals_by_run, train_by_run):
    """dyt_lr_sweep: "DyT, lr 0.001" -> a run with those held-out losses and last-window training
    loss."""
    from lnpaper.chapters.ch06_transformer.analysis import SWEEP_LRS, SWEEP_NORMS, sweep_name
    from lnpaper.chapters.ch06_transformer.runs import StudyResult

    runs = {}
    for name in SWEEP_NORMS:
        for lr in SWEEP_LRS:
            key = sweep_name(name, lr)
            run = fake_run(finals_by_run[key])
            run["train_loss"] = [[3.0, train_by_run[key]]] * len(run["final_loss"])
            runs[key] = run
    return StudyResult(runs=runs)


def test_t6b_picks_each_rate_by_training_loss_and_grades_the_picks():
    from lnpaper.chapters.ch06_transformer.claims import check_t6b, sweep_choice
    from lnpaper.companion import verdicts

    finals = {"LayerNorm, lr 0.001": around(1.93), "LayerNorm, lr 0.003": around(1.96),
              "LayerNorm, lr 0.01": around(2.28), "DyT, lr 0.001": around(1.91),
              "DyT, lr 0.003": around(1.79), "DyT, lr 0.01": around(2.07)}  # fmt: skip
    train = {key: statistics.fmean(values) for key, values in finals.items()}
    assert sweep_choice(lr_sweep(finals, train), "LayerNorm")[0] == 1e-3
    finding = check_t6b(lr_sweep(finals, train))
    assert finding.verdict == verdicts.REPRODUCED and "LayerNorm at the grid's edge" in finding.ours
    # the pick follows the training loss, not the held-out loss: LayerNorm picked at 3e-3
    assert (
        sweep_choice(lr_sweep(finals, {**train, "LayerNorm, lr 0.003": 1.0}), "LayerNorm")[0]
        == 3e-3
    )
    # DyT best at 1e-2 but worse there than LayerNorm at its pick: not reproduced
    worse = {**finals, "DyT, lr 0.01": around(2.2)}
    assert (
        check_t6b(lr_sweep(worse, {**train, "DyT, lr 0.01": 1.0})).verdict
        == verdicts.NOT_REPRODUCED
    )
    # a diverged seed makes its rate ineligible; diverged everywhere: not reproduced
    gone = {**finals, "DyT, lr 0.003": [None, *around(1.79)[1:]]}
    assert sweep_choice(lr_sweep(gone, train), "DyT")[0] == 1e-3
    all_gone = {**finals, **{f"DyT, lr {lr:g}": [None] * 10 for lr in (1e-3, 3e-3, 1e-2)}}
    finding = check_t6b(lr_sweep(all_gone, train))
    assert finding.verdict == verdicts.NOT_REPRODUCED and "diverged at every rate" in finding.ours


def xiong(post_slope, pre_slope, spread=0.05, post_sq=1.5):
    """grad_norm_vs_depth for both placements, ten seeds, with seed i's gradient norm growing like
    L^(slope + spread * offset_i), so that depth_slopes returns exactly those per-seed slopes."""
    from lnpaper.chapters.ch06_transformer.analysis import XiongResult

    depths = [6, 8, 10, 12, 14]

    def run(placement, slope, shift, layers, sq):
        slopes = around(slope, spread, shift)
        grads = [[(1 + 0.1 * i) * (d / 6) ** s for i, s in enumerate(slopes)] for d in depths]
        means = [sum(g) / len(g) for g in grads]
        return {
            "placement": placement, "d_model": 128, "depths": depths, "seeds": list(range(SEEDS)),
            "grad_norm": grads, "mean_grad_norm": means, "ratio_last_to_first": means[-1] / means[0],
            "ratio_standard_error": 0.05, "layers": layers, "residual_sq_norm": sq,
        }  # fmt: skip

    return XiongResult(
        post=run("post", post_slope, 0, [1, 2], [post_sq, post_sq]),
        pre=run("pre", pre_slope, 3, [0, 1, 2], [1.0, 1.7, 2.5]),
    )


def test_depth_slopes_recover_each_seeds_power_law():
    from lnpaper.chapters.ch06_transformer.claims import depth_slopes

    result = xiong(0.1, -0.5)
    assert depth_slopes(result.post) == pytest.approx(around(0.1, 0.05, 0))
    assert depth_slopes(result.pre) == pytest.approx(around(-0.5, 0.05, 3))


def test_t1_depth_check_reproduces_fails_and_can_be_partly_or_inconclusive():
    from lnpaper.chapters.ch06_transformer.claims import T1_SLOPE_MARGIN, check_t1
    from lnpaper.companion import verdicts

    assert check_t1(xiong(0.0, -0.5)).verdict == verdicts.REPRODUCED
    # Post-LN falls like Pre-LN: outside the margin, only Pre-LN's part holds
    assert check_t1(xiong(-0.5, -0.5)).verdict == verdicts.PARTLY
    # Post-LN's slope near the margin, interval across it (as in the record): partly
    near_edge = check_t1(xiong(T1_SLOPE_MARGIN - 0.1, -0.5, spread=0.3))
    assert near_edge.verdict == verdicts.PARTLY and "inconclusive" in near_edge.ours
    # Post-LN rises steeply, Pre-LN rises too: both parts fail
    assert check_t1(xiong(0.6, 0.3)).verdict == verdicts.NOT_REPRODUCED
    # both wide: neither part decided
    assert check_t1(xiong(0.2, 0.0, spread=0.5)).verdict == verdicts.INCONCLUSIVE


def test_t2_lemma2_check_can_fail():
    from lnpaper.chapters.ch06_transformer.claims import check_t2
    from lnpaper.companion import verdicts

    assert check_t2(xiong(0.0, -0.5)).verdict == verdicts.REPRODUCED
    assert check_t2(xiong(0.0, -0.5, post_sq=1.0)).verdict == verdicts.NOT_REPRODUCED


def seeds_of(curve, spread=(1.0, 1.2, 0.9)) -> list:
    """One curve over the points (step 0, then the loss levels) as three seeds' curves, each
    scaled by its factor."""
    return [[factor * v for v in curve] for factor in spread]


def _smoothness(**changes):
    from lnpaper.chapters.ch06_transformer.runs import SmoothnessResult

    # BatchNorm rougher at step 0, smoother at the two matched losses
    fields = dict(
        norms=["none", "batchnorm"], seeds=[0, 1, 2], lr=0.2, step_multipliers=[1.0],
        loss_levels=[1.0, 0.5], max_steps=100,
        steps={"none": seeds_of([0, 40, 80]), "batchnorm": seeds_of([0, 4, 10])},
        loss_range={"none": seeds_of([0.1, 1.0, 0.8]), "batchnorm": seeds_of([1.6, 0.5, 0.3])},
        grad_change={"none": seeds_of([0.4, 6.0, 5.0]), "batchnorm": seeds_of([1.0, 1.1, 1.0])},
        beta_smoothness={"none": seeds_of([1, 8, 9]), "batchnorm": seeds_of([3, 4, 4])},
        train_loss={"none": seeds_of([2.3, 1.0, 0.5]), "batchnorm": seeds_of([2.3, 0.9, 0.5])},
    )  # fmt: skip
    return SmoothnessResult(**{**fields, **changes})


def test_the_t7_check_grades_every_measure_at_matched_loss_and_at_step_0():
    from lnpaper.chapters.ch06_transformer import claims_smoothness as smoothness_claims
    from lnpaper.chapters.ch06_transformer.runs import ProjectionResult
    from lnpaper.companion import verdicts

    exact = ProjectionResult([32, 6], 1e-14, 1e-14, 1e-14, 2e-4, [0.999] * 6, 2e-4)
    finding = smoothness_claims.check_t7(exact, _smoothness())
    # smoother at matched loss on all three, rougher at step 0 on all three: partly
    assert finding.verdict == verdicts.PARTLY, finding.ours
    assert [q.kind for q in finding.quantities] == ["exact"] + ["aggregate"] * 6
    labels = " ".join(q.label for q in finding.quantities)
    for word in ("loss variation", "gradient change", "beta-smoothness", "matched loss", "step 0"):
        assert word in labels
    wrong = ProjectionResult([32, 6], 1e-3, 1e-14, 1e-14, 2e-4, [0.999] * 6, 2e-4)
    assert smoothness_claims.check_t7(wrong, _smoothness()).verdict == verdicts.NOT_REPRODUCED
    # rougher everywhere, on every measure: not reproduced
    rough = _smoothness(
        loss_range={"none": seeds_of([1, 1, 1]), "batchnorm": seeds_of([2, 2, 2])},
        grad_change={"none": seeds_of([1, 1, 1]), "batchnorm": seeds_of([2, 2, 2])},
        beta_smoothness={"none": seeds_of([1, 1, 1]), "batchnorm": seeds_of([2, 2, 2])},
    )
    assert smoothness_claims.check_t7(exact, rough).verdict == verdicts.NOT_REPRODUCED
    # smoother everywhere: still only partly, the input-distribution half is not run
    smooth = _smoothness(
        loss_range={"none": seeds_of([2, 2, 2]), "batchnorm": seeds_of([1, 1, 1])},
        beta_smoothness={"none": seeds_of([9, 8, 9]), "batchnorm": seeds_of([3, 4, 4])},
        grad_change={"none": seeds_of([2, 6, 5]), "batchnorm": seeds_of([1, 1.1, 1])},
    )
    assert smoothness_claims.check_t7(exact, smooth).verdict == verdicts.PARTLY
    # a level never reached: nothing to pair
    missed = _smoothness(loss_range={"none": [[0.1, 1.0, None]] * 3,
                                     "batchnorm": seeds_of([1.6, 0.5, 0.3])})  # fmt: skip
    assert smoothness_claims.check_t7(exact, missed).verdict == verdicts.INCONCLUSIVE


def test_smoothness_summaries_split_step_0_from_the_matched_points():
    from lnpaper.chapters.ch06_transformer.analysis import smoothness_at_init, smoothness_log_means

    result = _smoothness()
    matched = smoothness_log_means(result)["loss_range"]["none"][0]
    assert matched == pytest.approx((math.log(1.0) + math.log(0.8)) / 2)
    assert smoothness_at_init(result)["loss_range"]["batchnorm"][0] == pytest.approx(math.log(1.6))


def test_loss_smoothness_probes_at_the_first_step_reaching_each_level():
    from lnpaper.chapters.ch06_transformer.runs import loss_smoothness

    result = loss_smoothness(norms=("batchnorm",), loss_levels=(1.5, 0.8), max_steps=60,
                             width=16, seeds=(0,))  # fmt: skip
    steps, losses = result.steps["batchnorm"][0], result.train_loss["batchnorm"][0]
    assert steps[0] == 0 and steps[1] <= steps[2] <= 60
    assert losses[1] <= 1.5 and losses[2] <= 0.8
    with pytest.raises(ValueError, match="decreasing"):
        loss_smoothness(loss_levels=(0.5, 1.0))
    never = loss_smoothness(norms=("none",), loss_levels=(1e-9,), max_steps=3, width=16,
                            seeds=(0,))  # fmt: skip
    assert never.steps["none"][0] == [0, None]


def test_the_unit_variance_init_gives_every_hidden_summed_input_sd_1():
    from lnpaper.chapters.ch06_transformer.runs import unit_variance_init
    from lnpaper.data import digits
    from lnpaper.models.mlp import MLP

    inputs, _ = digits.load("train")
    torch.manual_seed(3)
    model = MLP((64, 32, 16, 10), norm="none")
    unit_variance_init(model, inputs)
    linears = [module for module in model.layers if isinstance(module, torch.nn.Linear)]
    x, sds = inputs, []
    for module in model.layers:
        x = module(x)
        if isinstance(module, torch.nn.Linear):
            sds.append(x.std(dim=0))
    for sd in sds[:-1]:  # the hidden layers, unit by unit
        torch.testing.assert_close(sd, torch.ones_like(sd))
    assert not torch.allclose(sds[-1], torch.ones_like(sds[-1]))  # the logits are left alone
    assert len(linears) == 3


def test_the_t7b_check_grades_the_unit_variance_plain_net_against_the_default_at_step_0():
    from lnpaper.chapters.ch06_transformer import claims_smoothness as smoothness_claims
    from lnpaper.chapters.ch06_transformer.runs import UNIT_VARIANCE_PLAIN
    from lnpaper.companion import verdicts

    def step0(loss_range, grad_change, beta):
        return _smoothness(
            norms=[UNIT_VARIANCE_PLAIN],
            loss_range={UNIT_VARIANCE_PLAIN: seeds_of([loss_range, 1.0, 1.0])},
            grad_change={UNIT_VARIANCE_PLAIN: seeds_of([grad_change, 1.0, 1.0])},
            beta_smoothness={UNIT_VARIANCE_PLAIN: seeds_of([beta, 1.0, 1.0])},
            max_steps=0,
        )

    recorded = _smoothness()  # no norm at step 0: 0.1, 0.4 and 1 (x each seed's factor)
    rough = smoothness_claims.check_t7b(recorded, step0(10.0, 4.0, 10.0))
    assert rough.verdict == verdicts.REPRODUCED, rough.ours
    assert "against BatchNorm" in rough.ours
    some = smoothness_claims.check_t7b(recorded, step0(10.0, 0.1, 0.5))
    assert some.verdict == verdicts.PARTLY
    smoother = smoothness_claims.check_t7b(recorded, step0(0.01, 0.1, 0.5))
    assert smoother.verdict == verdicts.NOT_REPRODUCED
