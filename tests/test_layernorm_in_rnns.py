"""Notebook 03's LN-LSTM, tanh RNN and training runs; the checks R1-R4, R3b, R3d-R3f, R4b, R4c,
and notebook 04's R3c and R3g."""

import dataclasses
import math

import pytest
import torch
from layernorm_in_rnns_helpers import (
    FAST,
    LRS,
    SEEDS,
    SLOW,
    SLOW_AND_HIGH,
    SLOW_BUT_LOWER,
    accuracy_arm,
    arm,
    as_grus,
    longer_result,
    noise,
    noisy,
    rows,
    same_best,
    two_orders,
)

from lnpaper.chapters.ch03_layernorm_in_rnns import claims as nb_claims
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import best_lr_index
from lnpaper.chapters.ch03_layernorm_in_rnns.runs import (
    lnlstm_anatomy,
    mean_tanh_slope,
    rnn_dynamics,
    sequence_training,
)
from lnpaper.chapters.ch04_batchnorm_against_layernorm import claims as bn_claims
from lnpaper.companion import verdicts
from lnpaper.data import digits
from lnpaper.models.recurrent import make_cell


def test_mean_tanh_slope_gives_cooijmans_numbers():
    assert round(mean_tanh_slope(0.1), 3) == 0.990
    assert round(mean_tanh_slope(1.0), 3) == 0.606
    assert mean_tanh_slope(1e-6) == pytest.approx(1.0, abs=1e-9)
    # against a plain Monte Carlo estimate
    z = torch.randn(2_000_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    monte_carlo = (1 - torch.tanh(2.0 * z) ** 2).mean().item()
    assert mean_tanh_slope(2.0) == pytest.approx(monte_carlo, abs=2e-3)


def test_r1_anatomy_and_its_check():
    result = lnlstm_anatomy()
    assert result.lstm_parity < 1e-12 and result.by_hand_difference < 1e-12
    assert result.per_gate_difference > 0.1
    # the stacked 4H vector is standardized (up to eps), one gate alone is not
    assert result.stacked_var_error < 1e-2 and result.per_gate_mean > 0.1
    assert result.layernorm_scale_change < 1e-8 < result.layernorm_scale_change_eps
    assert result.layernorm_stored == 0
    # two buffers (mean, variance) x (4H + 4H + H) units x T_max steps
    assert result.batchnorm_stored == 2 * 9 * result.hidden * result.max_steps
    assert "got step 8 in training mode" in result.batchnorm_longer_error
    longer = longer_result(inside=0.96, beyond=0.95)
    assert nb_claims.check_r1(result, longer).verdict == verdicts.REPRODUCED
    for broken in (
        dataclasses.replace(result, per_gate_difference=0.0),  # statistics per gate after all
        dataclasses.replace(result, layernorm_scale_change=1e-3),
        dataclasses.replace(result, layernorm_stored=16),
        dataclasses.replace(result, layernorm_batch_change=1e-4),
    ):
        assert nb_claims.check_r1(broken, longer).verdict == verdicts.NOT_REPRODUCED
    shorter = longer_result(inside=0.96, beyond=0.80)  # falls apart beyond the training length
    assert nb_claims.check_r1(result, shorter).verdict == verdicts.NOT_REPRODUCED


# ---- R2 ------------------------------------------------------------------------------------------


def test_r2_dynamics_measures_what_it_says():
    result = rnn_dynamics(steps=30, examples=4, scales=(0.5, 1.0, 3.0))
    for field in (result.summed_rms, result.hidden_rms, result.sensitivity):
        assert set(field) == {"tanh RNN", "LN tanh RNN"}
        assert all(len(curve) == 30 for by_scale in field.values() for curve in by_scale.values())
    plain, ln = result.summed_rms["tanh RNN"], result.summed_rms["LN tanh RNN"]
    assert plain[0.5][-1] < 1e-3 * plain[0.5][7]  # decays once the input stops
    # the LN RNN's a_t is the same trajectory times the scale, as long as they agree
    assert ln[3.0][5] == pytest.approx(3 * ln[1.0][5], rel=1e-4)
    assert result.layernorm_difference[5] < 1e-4
    # the input's steps are the same for both nets: a_1 = W_x x_0 does not depend on the norm
    assert plain[1.0][0] == pytest.approx(ln[1.0][0], rel=1e-12)


def draws_of(*results, other=None):
    """R2's draws: `results` at g = 1, and `other` (default: the first) at g = 0.5 and 2."""
    other = other or results[0]
    return {0.5: [other], 1.0: list(results), 2.0: [other]}


def test_r2_check_can_reproduce_partly_or_fail():
    result = rnn_dynamics()
    check = nb_claims.check_r2
    assert check(result, draws_of(result)).verdict == verdicts.PARTLY  # scale gone, growth not
    bounded = {net: dict(by_scale) for net, by_scale in result.sensitivity.items()}
    bounded["LN tanh RNN"] = {s: [1.0] * result.steps for s in bounded["LN tanh RNN"]}
    steady = dataclasses.replace(result, sensitivity=bounded)
    assert check(steady, draws_of(steady)).verdict == verdicts.REPRODUCED
    # every draw at g = 1 must hold: one draw whose perturbations grow makes it partly
    assert check(steady, draws_of(steady, result)).verdict == verdicts.PARTLY
    # the other gains are shown, never graded
    finding = check(steady, draws_of(steady, other=result))
    assert finding.verdict == verdicts.REPRODUCED and "g = 0.5: x 1.06" in finding.ours
    drifting = {net: dict(by_scale) for net, by_scale in result.hidden_rms.items()}
    drifting["LN tanh RNN"][4.0] = [0.9] * result.steps  # the LN RNN's size depends on scale
    drifted = dataclasses.replace(result, hidden_rms=drifting)
    assert check(result, draws_of(result, drifted)).verdict == verdicts.NOT_REPRODUCED


# ---- R3, R3b-R3g, R4, R4b, R4c -------------------------------------------------------------------


def test_sequence_training_records_a_curve_per_order_rate_and_seed():
    result = sequence_training(
        cell="bn-lstm", form="pixels", orders=(False, True), hidden=4, steps=4, batch_size=8,
        lrs=(1e-2, 3e-2), seeds=(0, 1), eval_every=2, extra_steps=3, statistics_steps=5,
    )  # fmt: skip
    assert result.eval_steps == [0, 2, 4]
    for field in ("val_loss", "val_accuracy", "test_loss", "test_accuracy"):
        curves = getattr(result, field)
        assert [len(curves), len(curves[0]), len(curves[0][0]), len(curves[0][0][0])] == [
            2,
            2,
            2,
            3,
        ]
    for field in ("longer_test_accuracy", "cut_test_loss", "averaged_test_loss"):
        assert [len(getattr(result, field)), len(getattr(result, field)[0])] == [2, 2]
    assert result.test_loss[0][0][0] != result.test_loss[0][0][1]  # seeds differ
    assert result.test_loss[0][0][0][0] == result.test_loss[0][1][0][0]  # same init for both rates
    assert result.test_loss[0][0][0][0] != result.test_loss[1][0][0][0]  # the orders differ
    assert result.cut_test_loss[0][0][0] != result.test_loss[0][0][0][-1]  # the cut matters
    assert result.averaged_test_loss[0][0][0] != result.test_loss[0][0][0][-1]  # so does averaging
    with pytest.raises(ValueError, match="BN-LSTM only"):
        sequence_training(cell="lstm", statistics_steps=3)
    plain = sequence_training(cell="lstm", hidden=4, steps=2, lrs=(1e-2,), seeds=(0,))
    assert plain.averaged_test_loss == [] and plain.averaged_test_accuracy == []


def test_sequence_training_is_each_seed_trained_alone_with_torch_adam():
    """The batched run of (rate, seed) equals the plain loop: torch's Adam on one model."""
    from lnpaper.models.recurrent import SequenceClassifier
    from lnpaper.train import epoch_batches

    x, y = digits.load("train", form="rows", permuted=True)
    test_x, test_y = digits.load("test", form="rows", permuted=True)
    lrs, seeds = (1e-2, 3e-2), (0, 3)
    for cell in ("lstm", "bn-lstm", "ln-lstm", "ln-gru"):
        batched = sequence_training(cell=cell, orders=(True,), hidden=8, steps=5, batch_size=16,
                                    lrs=lrs, seeds=seeds, eval_every=5)  # fmt: skip
        for i, lr in enumerate(lrs):
            for j, seed in enumerate(seeds):
                torch.manual_seed(seed)
                model = SequenceClassifier(make_cell(cell, 8, 8, max_steps=8), 10)
                optimizer = torch.optim.Adam(model.parameters(), lr=lr)
                batches = epoch_batches(len(x), 16, seed)
                for step in range(5):
                    index = batches(step)
                    loss = torch.nn.functional.cross_entropy(model(x[index]), y[index])
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                with torch.no_grad():
                    alone = torch.nn.functional.cross_entropy(model.eval()(test_x), test_y).item()
                assert batched.test_loss[0][i][j][-1] == pytest.approx(alone, abs=1e-4), cell


def test_per_seed_adam_is_torch_adam_per_model_and_refuses_bad_rates():
    from lnpaper.train import PerRunAdam

    start = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0))
    lrs = [1e-3, 1e-2, 1e-1]
    stacked = torch.nn.Parameter(start.clone())
    ours = PerRunAdam([stacked], lrs)
    alone = [torch.nn.Parameter(start[k].clone()) for k in range(3)]
    theirs = [torch.optim.Adam([p], lr=lr) for p, lr in zip(alone, lrs, strict=True)]
    for step in range(4):
        grads = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(step + 1))
        stacked.grad = grads.clone()
        ours.step()
        for k in range(3):
            alone[k].grad = grads[k].clone()
            theirs[k].step()
    for k in range(3):
        torch.testing.assert_close(stacked[k], alone[k], atol=1e-6, rtol=1e-6)
    with pytest.raises(ValueError, match="positive"):
        PerRunAdam([stacked], [1e-3, 0.0, 1e-2])
    with pytest.raises(ValueError, match="leading axis of 2"):
        PerRunAdam([stacked], [1e-3, 1e-2])


def test_every_cell_starts_from_the_same_weights_for_one_seed():
    cells = []
    for kind in ("lstm", "ln-lstm", "bn-lstm"):
        torch.manual_seed(3)
        cells.append(make_cell(kind, 8, 16, max_steps=8))
    for cell in cells[1:]:
        assert torch.equal(cell.weight_ih, cells[0].weight_ih)
        assert torch.equal(cell.weight_hh, cells[0].weight_hh)


def test_training_summary_judges_each_model_at_its_best_rate_on_validation():
    s = nb_claims.training_summary(rows(noisy(FAST, 1), noisy(SLOW, 2)))
    assert s["LSTM"]["lr"] == LRS[0] and s["LN-LSTM"]["lr"] == LRS[2]
    assert s["early_steps"] == [20, 40] and s["late_steps"] == [140, 160]
    assert s["LN-LSTM"]["early"][0] == pytest.approx(0.4 + noise(1, 0.05)[0])
    diverged = arm(noisy(FAST, 1), best=0)
    diverged["val_loss"][0][0][3][2] = math.nan  # one seed at the best rate diverged
    assert best_lr_index({"val_loss": diverged["val_loss"][0]}) == 1


def test_the_late_pick_takes_the_rate_that_ends_best_not_the_one_that_starts_fastest():
    fast_start = [2.3, 0.5, 0.5, 0.5, 0.5]
    low_end = [2.3, 1.5, 1.0, 0.4, 0.3]
    run = {"eval_steps": [0, 100, 200, 300, 400], "val_loss": [[fast_start] * 2, [low_end] * 2]}
    assert best_lr_index(run) == 0  # area over the run: 0.5 against 0.8
    assert best_lr_index(run, "late") == 1  # the last quarter (step 400): 0.5 against 0.3
    with pytest.raises(ValueError, match="pick must be one of"):
        best_lr_index(run, "end")


@pytest.mark.parametrize(
    "study, verdict",
    [
        (same_best(noisy(FAST, 1), noisy(SLOW, 2)), verdicts.REPRODUCED),  # faster at every rate
        # each best at another rate: at the LSTM's best rate, LN is behind; at the other two ahead
        (rows(noisy(FAST, 1), noisy(SLOW, 2)), verdicts.PARTLY),
        (same_best(noisy(SLOW, 1), noisy(FAST, 2)), verdicts.NOT_REPRODUCED),
        (same_best(noisy(SLOW, 1), noisy(SLOW, 2)), verdicts.INCONCLUSIVE),
    ],
)
def test_r3_check_compares_at_each_shared_rate(study, verdict):
    finding = nb_claims.check_r3(study)
    assert finding.verdict == verdict, finding.ours
    assert [q.label for q in finding.quantities] == [
        f"lr {lr:g}, early test NLL, LN-LSTM - LSTM" for lr in LRS
    ]


def test_r3d_check_compares_each_at_its_best_rate():
    finding = nb_claims.check_r3d(rows(noisy(FAST, 1), noisy(SLOW, 2)))
    assert finding.verdict == verdicts.REPRODUCED, finding.ours
    assert "LSTM lr 0.003, LN-LSTM lr 0.03" in finding.ours
    assert "at the grid's top edge: LN-LSTM" in finding.ours
    finding = nb_claims.check_r3d(rows(noisy(SLOW, 1), noisy(FAST, 2)))
    assert finding.verdict == verdicts.NOT_REPRODUCED, finding.ours


@pytest.mark.parametrize(
    "tenth, verdict",
    [
        (noisy(SLOW_AND_HIGH, 3), verdicts.REPRODUCED),  # gain 0.1 slower and worse at the end
        (noisy(SLOW, 3, 0.05), verdicts.PARTLY),  # slower, but level at the end
        (noisy(FAST, 3, 0.01), verdicts.INCONCLUSIVE),  # the seeds cannot tell them apart
    ],
)
def test_r3e_check_grades_the_gain_early_and_late(tenth, verdict):
    finding = nb_claims.check_r3e(rows(noisy(FAST, 1), noisy(SLOW, 2), gain_tenth=tenth))
    assert finding.verdict == verdict, finding.ours
    assert "steps 20-40" in finding.ours and "steps 140-160" in finding.ours


@pytest.mark.parametrize(
    "ln_mean, verdict",
    [(0.98, verdicts.REPRODUCED), (0.99, verdicts.REPRODUCED), (0.97, verdicts.INCONCLUSIVE),
     (0.95, verdicts.NOT_REPRODUCED)],
)  # fmt: skip
def test_r4_check(ln_mean, verdict):
    study = rows(noisy(FAST, 1), noisy(SLOW, 2), ln_accuracy=accuracy_arm(ln_mean, 2),
                 lstm_accuracy=accuracy_arm(0.98, 1))  # fmt: skip
    finding = nb_claims.check_r4(study)
    assert finding.verdict == verdict, finding.ours
    assert f"n = {SEEDS}" in finding.ours


@pytest.mark.parametrize(
    "ln_shift, ln_mean, verdict",
    [
        (-0.05, 0.99, verdicts.REPRODUCED),  # better on both
        (0.0, 0.99, verdicts.PARTLY),  # more accurate, the same NLL
        (0.05, 0.98, verdicts.NOT_REPRODUCED),  # as accurate, a higher NLL
    ],
)
def test_r4b_check(ln_shift, ln_mean, verdict):
    lstm = noisy(SLOW, 2, 0.01)
    ln = [[v + (ln_shift if k == len(c) - 1 else 0) for k, v in enumerate(c)] for c in lstm]
    study = rows(ln, lstm, ln_accuracy=[a + d for a, d in zip(accuracy_arm(ln_mean, 1),
                 noise(5, 0.002), strict=True)], lstm_accuracy=accuracy_arm(0.98, 1))  # fmt: skip
    finding = nb_claims.check_r4b(study)
    assert finding.verdict == verdict, finding.ours
    assert [q.label for q in finding.quantities] == [
        "test accuracy, LN-LSTM - LSTM",
        "test NLL, LN-LSTM - LSTM",
    ]


@pytest.mark.parametrize(
    "ln, bn, verdict",
    [
        (FAST, SLOW, verdicts.REPRODUCED),  # sooner low, and lower at the end
        (FAST, SLOW_BUT_LOWER, verdicts.PARTLY),  # sooner low, but the BN-LSTM ends lower
        (SLOW, FAST, verdicts.NOT_REPRODUCED),  # the BN-LSTM is ahead throughout
        (FAST, FAST, verdicts.INCONCLUSIVE),  # the seeds cannot tell them apart
    ],
)
def test_r3b_and_r3c_checks(ln, bn, verdict):
    study = rows(noisy(ln, 1, 0.01), noisy(SLOW, 2), bn=noisy(bn, 2, 0.01))
    finding = nb_claims.check_r3b(study)
    assert finding.verdict == verdict, finding.ours
    assert "steps 20-40" in finding.ours and "steps 140-160" in finding.ours
    assert len(finding.quantities) == 2
    pixels = two_orders(study.runs, study.runs)
    finding = bn_claims.check_r3c(pixels)  # the late half alone
    late = {
        verdicts.REPRODUCED: verdicts.REPRODUCED,
        verdicts.PARTLY: verdicts.NOT_REPRODUCED,
        verdicts.NOT_REPRODUCED: verdicts.NOT_REPRODUCED,
        verdicts.INCONCLUSIVE: verdicts.INCONCLUSIVE,
    }
    assert finding.verdict == late[verdict], finding.ours
    assert [q.kind for q in finding.quantities].count("aggregate") == 2
    assert "permuted" in finding.ours and "collapsed runs" in finding.ours


def test_dynamics_growth_is_the_per_step_factor():
    result = rnn_dynamics(steps=20, examples=2, scales=(1.0,))
    summary = nb_claims.dynamics_summary(result)
    values = result.sensitivity["tanh RNN"][1.0]
    factor = (values[-1] / values[result.input_steps - 1]) ** (1 / (20 - result.input_steps))
    assert math.isclose(summary["growth"]["tanh RNN"][1.0], factor)


def test_r3f_and_r4c_grade_the_grus_as_r3_and_r4b_grade_the_lstms():
    faster = same_best(noisy(FAST, 1), noisy(SLOW, 2))
    assert nb_claims.check_r3f(as_grus(faster)).verdict == verdicts.REPRODUCED
    slower = as_grus(same_best(noisy(SLOW, 1), noisy(FAST, 2)))
    finding = nb_claims.check_r3f(slower)
    assert finding.verdict == verdicts.NOT_REPRODUCED, finding.ours
    assert [q.label for q in finding.quantities] == [
        f"lr {lr:g}, early test NLL, LN-GRU - GRU" for lr in LRS
    ]
    lstm = noisy(SLOW, 2, 0.01)
    ln = [[v + (-0.05 if k == len(c) - 1 else 0) for k, v in enumerate(c)] for c in lstm]
    better = rows(ln, lstm, ln_accuracy=[a + d for a, d in zip(accuracy_arm(0.99, 1),
                  noise(5, 0.002), strict=True)], lstm_accuracy=accuracy_arm(0.98, 1))  # fmt: skip
    finding = nb_claims.check_r4c(as_grus(better))
    assert finding.verdict == verdicts.REPRODUCED, finding.ours
    assert "LN-GRU minus GRU" in finding.ours


def test_r3g_grades_the_grus_at_each_shared_rate_in_both_orders():
    faster = as_grus(same_best(noisy(FAST, 1), noisy(SLOW, 2))).runs
    finding = bn_claims.check_r3g(two_orders(faster, faster))
    assert finding.verdict == verdicts.REPRODUCED, finding.ours
    assert [q.label for q in finding.quantities] == [
        f"{task}, lr {lr:g}, early test NLL, LN-GRU - GRU"
        for task in ("pixel by pixel", "permuted")
        for lr in LRS
    ]
    slower = as_grus(same_best(noisy(SLOW, 1), noisy(FAST, 2))).runs
    assert bn_claims.check_r3g(two_orders(slower, slower)).verdict == verdicts.NOT_REPRODUCED
    assert bn_claims.check_r3g(two_orders(faster, slower)).verdict == verdicts.PARTLY
