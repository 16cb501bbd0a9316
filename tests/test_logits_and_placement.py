"""Notebook 09's Q1, O1 and G1: the sensitivity formula, and checks that reproduce, fail or stay
undecided on results built by hand."""

from types import SimpleNamespace

import pytest
import torch

from lnpaper.chapters.ch09_logits_and_placement.analysis import lr_sensitivity, qk_summary
from lnpaper.chapters.ch09_logits_and_placement.claims import (
    check_g1,
    check_g1b,
    check_g1c,
    check_o1,
    check_o1b,
    check_q1,
    check_q1b,
    check_q1c,
    failed,
)
from lnpaper.chapters.ch09_logits_and_placement.runs import LOGIT_BOUNDS, logit_bound_run, qk_run
from lnpaper.companion import verdicts
from lnpaper.data.synthetic_language import SyntheticLanguage

LRS = (1e-3, 1e-2, 1e-1)


def test_lr_sensitivity_is_wortsman_et_al_s_mean_gap_to_the_best_rate():
    # losses 2.0, 2.5 and a diverged run, init 3.0: capped 2.0, 2.5, 3.0; mean 2.5 minus best 2.0
    assert lr_sensitivity({1e-3: 2.0, 1e-2: 2.5, 1e-1: None}, 3.0) == pytest.approx(0.5)
    # a run worse than at init counts as the loss at init
    assert lr_sensitivity({1e-3: 2.0, 1e-2: 4.0}, 3.0) == pytest.approx(0.5)
    assert lr_sensitivity({1e-3: 2.0, 1e-2: 2.0}, 3.0) == 0.0


def test_attention_entropy_is_ln_of_the_visible_keys_when_uniform_and_0_on_one_key():
    import math

    from lnpaper.chapters.ch09_logits_and_placement.runs import attention_entropy

    uniform = torch.zeros(2, 3, 6, 6)  # query t sees keys 0..t, each weighted alike
    expected = sum(math.log(t + 1) for t in range(6)) / 6
    assert attention_entropy(uniform) == pytest.approx(expected, rel=1e-6)
    one_key = torch.zeros(1, 1, 6, 6)
    one_key[..., 0] = 50.0  # every query on key 0, which every query can see
    assert attention_entropy(one_key) == pytest.approx(0.0, abs=1e-6)
    future = torch.zeros(1, 1, 6, 6)
    # only the last query sees key 5 (and puts all its weight there); the mask hides it from the rest
    future[..., 5] = 50.0
    rest = sum(math.log(t + 1) for t in range(5)) / 6
    assert attention_entropy(future) == pytest.approx(rest, rel=1e-5)


def run(peaks, finals, initial=2.77):
    return {"seeds": list(range(len(finals))), "initial_loss": [initial] * len(finals),
            "final_loss": finals, "max_logit": [[3.0, p] for p in peaks]}  # fmt: skip


def sweep(none_peak, qk_peak, none_loss, qk_loss, n=6):
    """none/qk: the peak logit and final loss at 1e-1 for every seed (a little seed spread)."""

    def arm(peak, loss):
        return {
            1e-3: run([3.0 + 0.1 * i for i in range(n)], [2.5 + 0.01 * i for i in range(n)]),
            1e-2: run([5.0 + 0.1 * i for i in range(n)], [2.4 + 0.01 * i for i in range(n)]),
            1e-1: run(
                [peak * (1 + 0.1 * i) for i in range(n)], [loss + 0.01 * i for i in range(n)]
            ),
        }

    return SimpleNamespace(lrs=list(LRS), runs={"no QK-norm": arm(none_peak, none_loss),
                                                "QK-LayerNorm": arm(qk_peak, qk_loss)})  # fmt: skip


def test_q1_reproduces_fails_and_counts_runs_past_the_limit():
    good = check_q1(sweep(5e4, 12.0, 2.76, 2.45))
    assert good.verdict == verdicts.REPRODUCED
    assert "6 without QK-norm, 6 of them failed" in good.ours
    # QK-norm that did nothing: the same logits and losses in both arms
    assert check_q1(sweep(12.0, 12.0, 2.45, 2.45)).verdict == verdicts.INCONCLUSIVE
    # QK-norm that made things worse on both counts
    assert check_q1(sweep(12.0, 5e4, 2.45, 2.76)).verdict == verdicts.NOT_REPRODUCED


def test_q1c_is_refuted_by_one_run_past_the_limit_that_trained():
    # every run past 1e4 ended above the bigram level (2.339): the link holds
    failed_all = check_q1c(sweep(5e4, 12.0, 2.70, 2.20))
    assert failed_all.verdict == verdicts.REPRODUCED, failed_all.ours
    assert "6 passed a layer-0 logit of 1e+04, 6 of them failed (0 diverged)" in failed_all.ours
    # the same peaks, but the runs trained to 2.30-2.35: the first four refute it
    trained = check_q1c(sweep(5e4, 12.0, 2.30, 2.20))
    assert trained.verdict == verdicts.NOT_REPRODUCED, trained.ours
    assert "4 trained to below the bigram level" in trained.ours
    assert trained.quantities[0].value == 4
    # no run past the limit: the link is not tested
    assert check_q1c(sweep(12.0, 12.0, 2.20, 2.20)).verdict == verdicts.INCONCLUSIVE


def bounds(final_of_arm, n=6):
    """A LogitBounds at 1e-1: each arm's final losses `final_of_arm[arm] + 0.01 i`."""
    runs = {arm: run([12.0] * n, [final_of_arm[arm] + 0.01 * i for i in range(n)])
            for arm in LOGIT_BOUNDS}  # fmt: skip
    return SimpleNamespace(lr=1e-1, arms=list(LOGIT_BOUNDS), runs=runs)


def test_q1b_grades_every_other_bound_against_no_qk_norm():
    same = {arm: 2.45 for arm in LOGIT_BOUNDS} | {"no QK-norm": 2.70}
    assert check_q1b(bounds(same)).verdict == verdicts.REPRODUCED
    capped_fails = same | {"soft-cap 50": 2.80}  # the cap worse than no bound at all
    finding = check_q1b(bounds(capped_fails))
    assert finding.verdict == verdicts.PARTLY, finding.ours
    assert "soft-cap 50" in finding.ours and "minus QK-LayerNorm" in finding.ours
    # a diverged run counts as its loss at init (2.77), so it cannot help its arm
    diverged = bounds(same)
    diverged.runs["QK-l2"]["final_loss"] = [None] * 6
    assert check_q1b(diverged).verdict == verdicts.PARTLY
    with pytest.raises(ValueError, match="bound must be one of"):
        logit_bound_run(bound="tanh 30")


def test_a_failed_run_diverged_or_did_not_end_below_the_bigram_level():
    levels = SyntheticLanguage().levels()
    assert failed(None) and failed(float("nan")) and failed(levels.bigram)
    assert failed(levels.unigram - 0.01)  # token frequencies are not training
    assert not failed(levels.bigram - 0.01)


def test_qk_summary_takes_the_peak_over_training():
    summary = qk_summary(sweep(5e4, 12.0, 2.76, 2.45))
    assert summary["no QK-norm"]["peak_logit"][1e-1][0] == pytest.approx(5e4)
    assert len(summary["QK-LayerNorm"]["sensitivity"]) == 6


def spikes(counts):
    return [list(range(c)) for c in counts]


def o1_study(pre_counts, reordered_counts):
    def arm(counts, loss):
        return {"spikes": spikes(counts), "final_loss": [loss + 0.01 * i for i in range(6)],
                "seeds": list(range(6)), "steps": 100}  # fmt: skip

    return SimpleNamespace(lrs=[3e-2], runs={"Pre-LN": {3e-2: arm(pre_counts, 2.6)},
                                            "reordered": {3e-2: arm(reordered_counts, 2.4)}})  # fmt: skip


def twice(study):
    """A study as the graded seeds and as the first seeds shown beside them."""
    return study, study


def test_o1_grades_the_spike_counts():
    assert (
        check_o1(*twice(o1_study([3, 4, 2, 5, 3, 4], [0, 1, 0, 0, 1, 0]))).verdict
        == verdicts.REPRODUCED
    )
    assert (
        check_o1(*twice(o1_study([0] * 6, [0] * 6))).verdict == verdicts.INCONCLUSIVE
    )  # nothing to count
    # five spikes against none, one seed each: 2 of the 32 sign flips are as extreme, p = 1/16
    assert check_o1(*twice(o1_study([1, 1, 1, 1, 1, 0], [0] * 6))).verdict == verdicts.INCONCLUSIVE
    assert (
        check_o1(*twice(o1_study([0, 1, 0, 0, 1, 0], [3, 4, 2, 5, 3, 4]))).verdict
        == verdicts.NOT_REPRODUCED
    )


def test_o1b_grades_olmo2s_package_and_shows_the_reordered_norm_alone():
    study = o1_study([3, 4, 2, 5, 3, 4], [2, 2, 2, 2, 2, 2])
    study.runs["reordered + QK-norm"] = o1_study([0] * 6, [0, 1, 0, 0, 1, 0]).runs["reordered"]
    finding = check_o1b(study, study)
    assert finding.verdict == verdicts.REPRODUCED, finding.ours
    assert "12 spikes at lr 0.03" in finding.ours  # the reordered norm alone
    study.runs["reordered + QK-norm"] = study.runs["Pre-LN"]  # the package changes nothing
    assert check_o1b(study, study).verdict == verdicts.INCONCLUSIVE


def gain_result(offset_gains, init_difference=0.0, decay_step_error=0.0, offset_loss=None):
    offset_loss = [2.09 + 0.01 * i for i in range(6)] if offset_loss is None else offset_loss
    return SimpleNamespace(
        lr=3e-3, weight_decay=0.5, steps=150, seeds=list(range(6)), init_difference=init_difference,
        decay_step_error=decay_step_error,
        mean_gain={"g": [0.82 + 0.002 * i for i in range(6)], "1 + w": offset_gains},
        final_loss={"g": [2.1 + 0.01 * i + 0.001 * (i % 2) for i in range(6)], "1 + w": offset_loss},
    )  # fmt: skip


TOWARD_ONE = [1.01 + 0.001 * i for i in range(6)]
FIRST = gain_result(TOWARD_ONE)


def test_g1_is_two_identities_that_fail_only_when_broken():
    assert check_g1(gain_result(TOWARD_ONE)).verdict == verdicts.REPRODUCED
    assert check_g1(gain_result(TOWARD_ONE, init_difference=1e-3)).verdict == verdicts.PARTLY
    assert check_g1(gain_result(TOWARD_ONE, decay_step_error=1.5e-3)).verdict == verdicts.PARTLY
    both = gain_result(TOWARD_ONE, init_difference=1e-3, decay_step_error=1e-3)
    assert check_g1(both).verdict == verdicts.NOT_REPRODUCED


def test_g1b_grades_the_loss_under_decay_not_the_gains():
    """Graded on the fresh seeds; the first ones (G1's) only reported."""
    # 0.01 lower: a clear gap, but inside the negligible 0.02
    assert check_g1b(gain_result(TOWARD_ONE), FIRST).verdict == verdicts.NEGLIGIBLE
    lower = [2.05 + 0.01 * i for i in range(6)]  # 0.05 lower: beyond the negligible margin
    assert (
        check_g1b(gain_result(TOWARD_ONE, offset_loss=lower), FIRST).verdict == verdicts.REPRODUCED
    )
    same = [2.1 + 0.01 * i + 0.002 * (i % 3) for i in range(6)]
    assert (
        check_g1b(gain_result(TOWARD_ONE, offset_loss=same), FIRST).verdict == verdicts.NEGLIGIBLE
    )
    worse = [2.2 + 0.01 * i for i in range(6)]
    assert (
        check_g1b(gain_result(TOWARD_ONE, offset_loss=worse), FIRST).verdict
        == verdicts.NOT_REPRODUCED
    )
    wide = [2.1 + 0.01 * i + 0.06 * (-1) ** i for i in range(6)]
    assert (
        check_g1b(gain_result(TOWARD_ONE, offset_loss=wide), FIRST).verdict == verdicts.INCONCLUSIVE
    )


def test_g1b_is_graded_on_its_fresh_seeds_not_on_g1s():
    lower = [2.05 + 0.01 * i for i in range(6)]
    fresh, first = gain_result(TOWARD_ONE, offset_loss=lower), gain_result(TOWARD_ONE)
    assert check_g1b(fresh, first).verdict == verdicts.REPRODUCED
    assert check_g1b(first, fresh).verdict == verdicts.NEGLIGIBLE
    assert "(G1's runs, not graded)" in check_g1b(fresh, first).ours


def excluded_result(losses, seeds=6):
    return SimpleNamespace(seeds=list(range(seeds)), mean_gain=[1.01] * seeds, final_loss=losses)


def test_g1c_grades_a_match_with_one_plus_w_and_the_gain_over_g_as_g1b_does():
    first = gain_result(TOWARD_ONE)  # 1 + w: 2.09 + 0.01 i, g about 0.01 higher
    first_excluded = excluded_result(first.final_loss["1 + w"])

    def g1c(result, losses):
        return check_g1c(result, excluded_result(losses), first, first_excluded)

    offset = first.final_loss["1 + w"]
    near = [v + 0.0005 * (i % 2) for i, v in enumerate(offset)]
    assert g1c(first, near).verdict == verdicts.PARTLY  # matches 1 + w; both gain negligibly on g
    lower = [2.05 + 0.01 * i for i in range(6)]  # 1 + w 0.05 below g: beyond the margin
    far = gain_result(TOWARD_ONE, offset_loss=lower)
    assert g1c(far, [v + 0.0005 * (i % 2) for i, v in enumerate(lower)]).verdict == (
        verdicts.REPRODUCED
    )
    as_g = [v + 0.0003 * (i % 2) for i, v in enumerate(far.final_loss["g"])]
    assert g1c(far, as_g).verdict == verdicts.NOT_REPRODUCED  # 0.05 from 1 + w: no match
    finding = g1c(first, near)
    assert "(G1's runs, not graded)" in finding.ours
    with pytest.raises(ValueError, match="seeds"):
        check_g1c(first, excluded_result(near[:5], seeds=5), first, first_excluded)


def test_no_decay_leaves_the_named_parameters_out_of_adamw_decay():
    """One AdamW step with a decay that spares final_norm.weight moves it exactly as a step
    without any decay does, and every other gain differently."""
    from lnpaper.chapters.ch06_transformer.runs import build_models
    from lnpaper.train import train_language_models

    gemma = {"n_layers": 1, "placement": "peri", "norm": "rmsnorm", "n_heads": 2, "d_model": 16}
    tokens = SyntheticLanguage().sample(4, 9, seed=3)

    def one_step(**options):
        models = build_models([0], length=8, gain_offset=False, **gemma)
        _, stacked = train_language_models(models, lambda step: tokens[None], tokens, steps=1,
                                           lr=1e-2, optimizer="adamw", **options)  # fmt: skip
        return stacked.params

    spared = one_step(weight_decay=0.5, no_decay=lambda name: name == "final_norm.weight")
    undecayed = one_step(weight_decay=0.0)
    assert torch.equal(spared["final_norm.weight"], undecayed["final_norm.weight"])
    other = "blocks.0.attn_in_norm.weight"
    assert not torch.equal(spared[other], undecayed[other])
    with pytest.raises(ValueError, match="adamw"):
        models = build_models([0], length=8, gain_offset=False, **gemma)
        train_language_models(models, lambda step: tokens[None], tokens, steps=1, lr=1e-3,
                              no_decay=lambda name: True)  # fmt: skip


def test_the_decay_identity_tells_the_two_parameterizations_apart():
    """One AdamW step with zero gradients follows g -> g (1 - lr lambda) for stored g and
    1 + w (1 - lr lambda) for stored w, to float64 roundoff; the other rule is off by lr lambda."""
    from lnpaper.chapters.ch06_transformer.runs import build_models
    from lnpaper.chapters.ch09_logits_and_placement.runs import _decay_step_error

    gemma = {"n_layers": 2, "placement": "peri", "norm": "rmsnorm", "n_heads": 2}
    for offset in (False, True):
        model = build_models([0], length=16, gain_offset=offset, **gemma)[0].double()
        assert _decay_step_error(model, 3e-3, 0.5) < 1e-12
    model = build_models([0], length=16, gain_offset=True, **gemma)[0].double()
    g = model.final_norm.weight.detach().clone()  # 1 at init: w = 0, which decay leaves at 0
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.5)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    optimizer.step()
    torch.testing.assert_close(model.final_norm.weight.detach(), g)  # not g (1 - lr lambda)
    assert (g * (1 - 3e-3 * 0.5) - g).abs().max() > 1e-3


def test_a_qk_run_logs_the_layer_0_logit_and_refuses_nothing_it_should_accept():
    result = qk_run(qk_norm="layernorm", lr=1e-2, seeds=(0, 1), steps=4, warmup_steps=1,
                    logit_every=2)  # fmt: skip
    assert result.logit_steps == [0, 2, 4]
    assert all(len(row) == 3 and all(v > 0 for v in row) for row in result.max_logit)
    assert all(v is not None for v in result.final_loss)
