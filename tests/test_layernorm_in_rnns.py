"""Notebook 03's experiments, the small CNN and the checks of R1-R6 with their sub-rows (R3b-R3g,
R4b, R4c, M4b-M4g): they measure what they say, and the checks can fail."""

import dataclasses
import math
import re

import pytest
import torch

from lnpaper import claims
from lnpaper.chapters.ch03_layernorm_in_rnns import claims as nb_claims
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import (
    PER_ORDER,
    RecurrentStudyResult,
    best_lr_index,
    cnn_summary,
    dynamics_summary,
)
from lnpaper.chapters.ch03_layernorm_in_rnns.runs import (
    border_mask,
    cnn_coda,
    framed_images,
    lnlstm_anatomy,
    longer_sequences,
    mean_tanh_slope,
    rnn_dynamics,
    sequence_training,
    units_on,
)
from lnpaper.data import digits
from lnpaper.models.cnn import SeedBatchedCNN, SmallCNN
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
    assert nb_claims.check_r1(result, longer).verdict == claims.REPRODUCED
    for broken in (
        dataclasses.replace(result, per_gate_difference=0.0),  # statistics per gate after all
        dataclasses.replace(result, layernorm_scale_change=1e-3),
        dataclasses.replace(result, layernorm_stored=16),
        dataclasses.replace(result, layernorm_batch_change=1e-4),
    ):
        assert nb_claims.check_r1(broken, longer).verdict == claims.NOT_REPRODUCED
    shorter = longer_result(inside=0.96, beyond=0.80)  # falls apart beyond the training length
    assert nb_claims.check_r1(result, shorter).verdict == claims.NOT_REPRODUCED


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


def test_r2_check_can_reproduce_partly_or_fail():
    result = rnn_dynamics()
    assert nb_claims.check_r2(result).verdict == claims.PARTLY  # scale gone, growth not
    bounded = {net: dict(by_scale) for net, by_scale in result.sensitivity.items()}
    bounded["LN tanh RNN"] = {s: [1.0] * result.steps for s in bounded["LN tanh RNN"]}
    assert nb_claims.check_r2(dataclasses.replace(result, sensitivity=bounded)).verdict == (
        claims.REPRODUCED
    )
    drifting = {net: dict(by_scale) for net, by_scale in result.hidden_rms.items()}
    drifting["LN tanh RNN"][4.0] = [0.9] * result.steps  # the LN RNN's size depends on scale
    assert nb_claims.check_r2(dataclasses.replace(result, hidden_rms=drifting)).verdict == (
        claims.NOT_REPRODUCED
    )


# ---- R3, R3b, R3c, R4, R4b, M4b-M4d --------------------------------------------------------------


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
    for field in ("longer_test_accuracy", "cut_test_loss"):
        assert [len(getattr(result, field)), len(getattr(result, field)[0])] == [2, 2]
    assert result.test_loss[0][0][0] != result.test_loss[0][0][1]  # seeds differ
    assert result.test_loss[0][0][0][0] == result.test_loss[0][1][0][0]  # same init for both rates
    assert result.test_loss[0][0][0][0] != result.test_loss[1][0][0][0]  # the orders differ
    assert result.cut_test_loss[0][0][0] != result.test_loss[0][0][0][-1]  # the cut matters
    with pytest.raises(ValueError, match="BN-LSTM only"):
        sequence_training(cell="lstm", statistics_steps=3)


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


SEEDS = 10  # enough for the paired t intervals to decide
LRS = [3e-3, 1e-2, 3e-2]


def noise(seed: int, scale: float) -> list[float]:
    """SEEDS fixed draws of N(0, scale^2): the seed-to-seed spread of a synthetic arm."""
    draws = torch.randn(SEEDS, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (scale * draws).tolist()


def noisy(curve, seed: int, scale: float = 0.05) -> list[list[float]]:
    """SEEDS test curves: `curve` shifted per seed by noise of sd `scale`."""
    return [[value + shift for value in curve] for shift in noise(seed, scale)]


def arm(curves, final_accuracy=None, best: int = 1, cut=None):
    """A run on the grid LRS whose rate `best` has these test (and validation) curves, the others
    the same curves 0.5 higher; test accuracy per seed from the first evaluation after step 0 on
    (so the last quarter's and the final are the same); a BN-LSTM's cut NLL per seed."""
    accuracy = final_accuracy or [0.98] * len(curves)

    def at(k, values):
        return values if k == best else [[v + 0.5 for v in c] for c in values]

    test_loss = [at(k, curves) for k in range(len(LRS))]
    test_accuracy = [[[0.1] + [a] * (len(c) - 1) for c, a in zip(curves, accuracy, strict=True)]
                     for _ in LRS]  # fmt: skip
    return {
        "lrs": LRS,
        "eval_steps": [20 * k for k in range(len(curves[0]))],
        "val_loss": [test_loss],
        "test_loss": [test_loss],
        "test_accuracy": [test_accuracy],
        "longer_test_loss": [],
        "longer_test_accuracy": [],
        "cut_test_loss": [] if cut is None else [[cut] * len(LRS)],
        "cut_test_accuracy": [] if cut is None else [[accuracy] * len(LRS)],
        "statistics_steps": None if cut is None else 8,
    }


def two_orders(runs_pixel: dict, runs_permuted: dict) -> RecurrentStudyResult:
    """A sequential_digits-like study: each label's run with both orders."""
    runs = {}
    for label, first in runs_pixel.items():
        second = runs_permuted[label]
        runs[label] = dict(first)
        for field in PER_ORDER:
            runs[label][field] = first.get(field, []) + second.get(field, [])
    return RecurrentStudyResult(form="pixels", orders=[False, True], runs=runs)


SLOW = [2.3, 1.0, 0.6, 0.4, 0.3, 0.2, 0.15, 0.12, 0.1]
FAST = [2.3, 0.5, 0.3, 0.2, 0.15, 0.12, 0.1, 0.09, 0.09]


def rows(ln, lstm, gain_one=None, gain_tenth=None, bn=None, ln_accuracy=None, lstm_accuracy=None):
    runs = {
        "LSTM": arm(lstm, lstm_accuracy, best=0),
        "LN-LSTM": arm(ln, ln_accuracy, best=2),
        "LN-LSTM, gain 0.1": arm(gain_tenth or ln),
        "BN-LSTM": arm(bn or lstm),
    }
    if gain_one is not None:
        runs["LN-LSTM"] = arm(gain_one, ln_accuracy, best=2)
    return RecurrentStudyResult(form="rows", orders=[False], runs=runs)


def test_training_summary_judges_each_model_at_its_best_rate_on_validation():
    s = nb_claims.training_summary(rows(noisy(FAST, 1), noisy(SLOW, 2)))
    assert s["LSTM"]["lr"] == LRS[0] and s["LN-LSTM"]["lr"] == LRS[2]
    assert s["early_steps"] == [20, 40] and s["late_steps"] == [140, 160]
    assert s["LN-LSTM"]["early"][0] == pytest.approx(0.4 + noise(1, 0.05)[0])
    diverged = arm(noisy(FAST, 1), best=0)
    diverged["val_loss"][0][0][3][2] = math.nan  # one seed at the best rate diverged
    assert best_lr_index({"val_loss": diverged["val_loss"][0]}) == 1


def same_best(ln, lstm) -> RecurrentStudyResult:
    """LN-LSTM and LSTM best at the same rate, so at every shared rate LN minus LSTM is ln - lstm."""
    runs = {
        "LSTM": arm(lstm),
        "LN-LSTM": arm(ln),
        "LN-LSTM, gain 0.1": arm(ln),
        "BN-LSTM": arm(lstm),
    }
    return RecurrentStudyResult(form="rows", orders=[False], runs=runs)


@pytest.mark.parametrize(
    "study, verdict",
    [
        (same_best(noisy(FAST, 1), noisy(SLOW, 2)), claims.REPRODUCED),  # faster at every rate
        # each best at another rate: at the LSTM's best rate, LN is behind; at the other two ahead
        (rows(noisy(FAST, 1), noisy(SLOW, 2)), claims.PARTLY),
        (same_best(noisy(SLOW, 1), noisy(FAST, 2)), claims.NOT_REPRODUCED),
        (same_best(noisy(SLOW, 1), noisy(SLOW, 2)), claims.INCONCLUSIVE),
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
    assert finding.verdict == claims.REPRODUCED, finding.ours
    assert "LSTM lr 0.003, LN-LSTM lr 0.03" in finding.ours
    assert "at the grid's top edge: LN-LSTM" in finding.ours
    finding = nb_claims.check_r3d(rows(noisy(SLOW, 1), noisy(FAST, 2)))
    assert finding.verdict == claims.NOT_REPRODUCED, finding.ours


SLOW_AND_HIGH = [v + 0.2 for v in SLOW]


@pytest.mark.parametrize(
    "tenth, verdict",
    [
        (noisy(SLOW_AND_HIGH, 3), claims.REPRODUCED),  # gain 0.1 slower and worse at the end
        (noisy(SLOW, 3, 0.05), claims.PARTLY),  # slower, but level at the end
        (noisy(FAST, 3, 0.01), claims.INCONCLUSIVE),  # the seeds cannot tell them apart
    ],
)
def test_r3e_check_grades_the_gain_early_and_late(tenth, verdict):
    finding = nb_claims.check_r3e(rows(noisy(FAST, 1), noisy(SLOW, 2), gain_tenth=tenth))
    assert finding.verdict == verdict, finding.ours
    assert "steps 20-40" in finding.ours and "steps 140-160" in finding.ours


def accuracy_arm(mean: float, seed: int) -> list[float]:
    """SEEDS final test accuracies around `mean` (sd 0.5 points)."""
    return [mean + d for d in noise(seed, 0.005)]


@pytest.mark.parametrize(
    "ln_mean, verdict",
    [(0.98, claims.REPRODUCED), (0.99, claims.REPRODUCED), (0.97, claims.INCONCLUSIVE),
     (0.95, claims.NOT_REPRODUCED)],
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
        (-0.05, 0.99, claims.REPRODUCED),  # better on both
        (0.0, 0.99, claims.PARTLY),  # more accurate, the same NLL
        (0.05, 0.98, claims.NOT_REPRODUCED),  # as accurate, a higher NLL
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


SLOW_BUT_LOWER = [2.3, 1.0, 0.6, 0.4, 0.3, 0.2, 0.1, 0.05, 0.04]  # BN-LSTM-like: late but lower


@pytest.mark.parametrize(
    "ln, bn, verdict",
    [
        (FAST, SLOW, claims.REPRODUCED),  # sooner low, and lower at the end
        (FAST, SLOW_BUT_LOWER, claims.PARTLY),  # sooner low, but the BN-LSTM ends lower
        (SLOW, FAST, claims.NOT_REPRODUCED),  # the BN-LSTM is ahead throughout
        (FAST, FAST, claims.INCONCLUSIVE),  # the seeds cannot tell them apart
    ],
)
def test_r3b_and_r3c_checks(ln, bn, verdict):
    study = rows(noisy(ln, 1, 0.01), noisy(SLOW, 2), bn=noisy(bn, 2, 0.01))
    finding = nb_claims.check_r3b(study)
    assert finding.verdict == verdict, finding.ours
    assert "steps 20-40" in finding.ours and "steps 140-160" in finding.ours
    assert len(finding.quantities) == 2
    pixels = two_orders(study.runs, study.runs)
    finding = nb_claims.check_r3c(pixels)  # the late half alone
    late = {
        claims.REPRODUCED: claims.REPRODUCED,
        claims.PARTLY: claims.NOT_REPRODUCED,
        claims.NOT_REPRODUCED: claims.NOT_REPRODUCED,
        claims.INCONCLUSIVE: claims.INCONCLUSIVE,
    }
    assert finding.verdict == late[verdict], finding.ours
    assert [q.kind for q in finding.quantities].count("aggregate") == 2
    assert "permuted" in finding.ours and "collapsed runs" in finding.ours


def pixel_study(bn_gain: tuple, lstm=(0.98, 0.90), cut_shift=0.3, gain_one=SLOW):
    """Both orders: LSTM and BN-LSTM final accuracies (pixel, permuted means), the BN-LSTM's
    gain over the LSTM per order, its cut NLL shifted by `cut_shift`."""
    orders = []
    for order, (base, gain) in enumerate(zip(lstm, bn_gain, strict=True)):
        lstm_accuracy = accuracy_arm(base, 10 + order)
        bn_accuracy = [a + gain + d for a, d in zip(lstm_accuracy, noise(20 + order, 0.003),
                                                    strict=True)]  # fmt: skip
        bn_curves = noisy(FAST, 30 + order, 0.01)
        cut = [c[-1] + cut_shift + d for c, d in zip(bn_curves, noise(40 + order, 0.01),
                                                      strict=True)]  # fmt: skip
        orders.append({
            "LSTM": arm(noisy(SLOW, 1), lstm_accuracy),
            "BN-LSTM": arm(bn_curves, bn_accuracy, cut=cut),
            "BN-LSTM, gain 1.0": arm(noisy(gain_one, 50 + order, 0.01)),
        })  # fmt: skip
    return two_orders(*orders)


@pytest.mark.parametrize(
    "bn_gain, verdict",
    [
        ((0.001, 0.05), claims.REPRODUCED),  # as good pixel by pixel, far better permuted
        ((0.001, 0.001), claims.PARTLY),  # as good, but no larger gain permuted
        ((-0.05, -0.08), claims.NOT_REPRODUCED),  # worse in both, and less so pixel by pixel
    ],
)
def test_m4b_check(bn_gain, verdict):
    finding = nb_claims.check_m4b(pixel_study(bn_gain))
    assert finding.verdict == verdict, finding.ours
    assert [q.kind for q in finding.quantities].count("aggregate") == 3


def test_m4b_counts_collapsed_runs_apart():
    """A run that ends below twice chance is counted, per model and order, as a quantity of its
    own (the reproduction check compares the count with the binomial rule)."""
    healthy = nb_claims.check_m4b(pixel_study((0.001, 0.05)))
    collapsed = nb_claims.check_m4b(pixel_study((0.001, 0.05), lstm=(0.98, 0.15)))
    counts = {q.label: q.value for q in healthy.quantities if q.kind == "count"}
    assert counts == {
        "pixel by pixel, collapsed LSTM runs": 0.0,
        "pixel by pixel, collapsed BN-LSTM runs": 0.0,
        "permuted, collapsed LSTM runs": 0.0,
        "permuted, collapsed BN-LSTM runs": 0.0,
    }
    counts = {q.label: q.value for q in collapsed.quantities if q.kind == "count"}
    assert counts["permuted, collapsed LSTM runs"] > 0
    assert counts["pixel by pixel, collapsed LSTM runs"] == 0.0


@pytest.mark.parametrize(
    "cut_shift, verdict",
    [(0.3, claims.REPRODUCED), (0.0, claims.INCONCLUSIVE), (-0.3, claims.NOT_REPRODUCED)],
)
def test_m4c_check(cut_shift, verdict):
    finding = nb_claims.check_m4c(pixel_study((0.0, 0.0), cut_shift=cut_shift))
    assert finding.verdict == verdict, finding.ours
    assert "T_max = 8" in finding.ours


@pytest.mark.parametrize(
    "gain_one, verdict",
    [(SLOW, claims.REPRODUCED), ([v - 0.2 for v in FAST], claims.NOT_REPRODUCED)],
)
def test_m4d_check(gain_one, verdict):
    finding = nb_claims.check_m4d(pixel_study((0.0, 0.0), gain_one=gain_one))
    assert finding.verdict == verdict, finding.ours
    assert len(finding.quantities) == 2


# ---- longer than training ------------------------------------------------------------------------


def longer_result(inside: float, beyond: float):
    result = longer_sequences(models=("LN-LSTM",), hidden=8, steps=2, seeds=(0,))
    accuracy = [[inside] * (result.train_length - result.delay) + [beyond] * result.train_length]
    return dataclasses.replace(result, accuracy={"LN-LSTM": accuracy, "BN-LSTM": accuracy})


def test_longer_sequences_reports_every_test_step():
    result = longer_sequences(hidden=8, steps=5, seeds=(0, 1))
    assert set(result.accuracy) == {"LN-LSTM", "BN-LSTM"}
    for runs in result.accuracy.values():
        assert len(runs) == 2 and len(runs[0]) == result.test_length - result.delay
    summary = nb_claims.length_summary(longer_result(inside=0.9, beyond=0.5))
    assert summary["LN-LSTM"]["inside"] == (pytest.approx(0.9), 0.0)
    assert summary["LN-LSTM"]["beyond"] == (pytest.approx(0.5), 0.0)


def test_longer_sequences_trains_each_seed_as_the_one_run_loop_would():
    """Its seeds step together (`SeedBatchedClassifier`); seed s must end where training it alone
    with `lnpaper.train.train` ends, to roundoff: the same test predictions up to a rare tie."""
    from lnpaper.chapters.ch01_why_batchnorm_fails.runs import earlier_digit_loss
    from lnpaper.models.recurrent import SequenceClassifier
    from lnpaper.train import epoch_batches, train

    steps, seeds = 6, (0, 3)
    result = longer_sequences(models=("BN-LSTM",), hidden=8, steps=steps, seeds=seeds)
    x, y = digits.digit_stream("train", count=4096, length=result.train_length, seed=0)
    test_x, test_y = digits.digit_stream("test", count=1024, length=result.test_length, seed=1)
    for index, seed in enumerate(seeds):
        torch.manual_seed(seed)
        cell = make_cell("bn-lstm", digits.PIXELS, 8, max_steps=result.train_length)
        model = SequenceClassifier(cell, digits.CLASSES, every_step=True)
        loss = earlier_digit_loss(x, y, result.delay)
        train(model, loss, epoch_batches(len(x), 64, seed), steps=steps, lr=1e-2, log_every=steps)
        with torch.no_grad():
            predictions = model.eval()(test_x).argmax(-1)
        alone = (predictions[:, result.delay :] == test_y[:, : -result.delay]).float().mean(0)
        assert result.accuracy["BN-LSTM"][index] == pytest.approx(alone.tolist(), abs=2 / 1024)


# ---- R5 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["none", "batchnorm", "layernorm"])
def test_seed_batched_cnn_is_the_per_seed_models_outputs_grads_and_statistics(norm):
    models = []
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        model = SmallCNN(norm, (4, 6), side=12)
        with torch.no_grad():  # gains and biases away from 1 and 0, so a mix-up shows
            for name, p in model.named_parameters():
                if "features.1" in name or "features.4" in name:
                    p.add_(0.3 * torch.randn_like(p))
        models.append(model)
    batched = SeedBatchedCNN(models)
    x, y = torch.randn(3, 5, 1, 12, 12), torch.randint(0, 10, (3, 5))
    logits = batched(x)
    torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum").backward()
    for s, model in enumerate(models):
        alone = model(x[s])
        torch.nn.functional.cross_entropy(alone, y[s], reduction="sum").backward()
        torch.testing.assert_close(logits[s], alone, atol=1e-5, rtol=1e-5)
        for name, p in model.named_parameters():
            torch.testing.assert_close(batched.p(name).grad[s], p.grad, atol=1e-5, rtol=1e-4)
        again = batched.per_seed(s)
        for name, buffer in model.named_buffers():  # BatchNorm's running estimates
            torch.testing.assert_close(again.get_buffer(name), buffer, atol=1e-6, rtol=1e-5)
        with torch.no_grad():  # and in eval mode, on the running estimates
            batched.eval()
            torch.testing.assert_close(batched(x)[s], model.eval()(x[s]), atol=1e-5, rtol=1e-5)
            batched.train()
    with pytest.raises(ValueError, match="one norm and shape"):
        SeedBatchedCNN([models[0], SmallCNN("none" if norm != "none" else "layernorm", (4, 6), 12)])
    with pytest.raises(ValueError, match=r"seeds=3, N, 1, 12, 12"):
        batched(torch.zeros(2, 5, 1, 12, 12))


def test_cnn_coda_trains_each_seed_as_the_one_run_loop_would():
    """Its seeds step together (`SeedBatchedCNN`); each must follow `lnpaper.train.train` alone on
    its own minibatches, to float32 roundoff amplified over a few steps."""
    from lnpaper.chapters.ch01_why_batchnorm_fails.runs import (
        classification_loss,
        nll_and_accuracy,
    )
    from lnpaper.train import epoch_batches, train

    seeds, steps = (0, 2), 6
    result = cnn_coda(norms=("batchnorm",), margins=(1,), channels=(4, 6), steps=steps,
                      seeds=seeds, eval_every=3)  # fmt: skip
    (x, y), (val_x, val_y) = framed_images("train", 1), framed_images("val", 1)
    test_x, test_y = framed_images("test", 1)
    for index, seed in enumerate(seeds):
        torch.manual_seed(seed)
        model = SmallCNN("batchnorm", (4, 6), side=10)
        history = train(
            model, classification_loss(x, y), epoch_batches(len(x), 64, seed), steps=steps,
            lr=3e-3, log_every=steps, evaluate=lambda m: nll_and_accuracy(m, val_x, val_y),
            eval_every=3,
        )  # fmt: skip
        assert result.eval_steps == history.eval_steps
        close = {"rtol": 1e-4, "atol": 1e-6}
        ours = result.val_loss[1]["batchnorm"][index]
        torch.testing.assert_close(ours, history.eval_curve("nll"), **close)
        with torch.no_grad():
            test = nll_and_accuracy(model.eval(), test_x, test_y)
        torch.testing.assert_close(result.test_loss[1]["batchnorm"][index], test["nll"], **close)


def test_small_cnn_shapes_and_normalizers():
    torch.manual_seed(0)
    x = torch.randn(5, 1, 8, 8)
    for norm in ("none", "batchnorm", "layernorm"):
        assert SmallCNN(norm)(x).shape == (5, 10)
    assert SmallCNN("none", side=12)(torch.randn(2, 1, 12, 12)).shape == (2, 10)
    ln = SmallCNN("layernorm")
    torch.testing.assert_close(ln(x)[:1], ln(x[:1]))  # per image: batch-mates never matter
    bn = SmallCNN("batchnorm")
    assert not torch.allclose(bn(x)[:2], bn(x[:2]))
    layer = ln.features[1]
    assert layer.norm.normalized_shape == (16, 8, 8)  # statistics over every unit of the layer
    assert layer.weight.shape == layer.bias.shape == (16, 1, 1)  # a gain and bias per channel
    assert sum(p.numel() for p in layer.parameters()) == 2 * 16  # as many as BatchNorm's
    assert SmallCNN("batchnorm").features[1].norm.num_features == 16  # one statistic per channel
    assert SmallCNN("layernorm").features[0].bias is None
    assert SmallCNN("none").features[0].bias is not None


@pytest.mark.parametrize(
    "kwargs, shape, message",
    [
        ({"norm": "groupnorm"}, None, "norm must be one of"),
        ({"side": 9}, None, "side must be even"),
        ({"channels": (0, 4)}, None, "channels must be a positive int"),
        ({}, (2, 8, 8), "SmallCNN expects images (N, 1, 8, 8), got shape (2, 8, 8)"),
        ({"side": 12}, (2, 1, 8, 8), "SmallCNN expects images (N, 1, 12, 12)"),
    ],
)
def test_small_cnn_refuses_bad_input(kwargs, shape, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        SmallCNN(**kwargs)(torch.zeros(shape))


def test_framed_images_and_border_rings():
    x, y = framed_images("test", 2)
    assert x.shape == (300, 1, 12, 12) and y.shape == (300,)
    assert x[:, :, :2].abs().sum() == 0 and x[:, :, :, -2:].abs().sum() == 0
    assert border_mask(8, 1).sum() == 28 and border_mask(12, 2).sum() == 144 - 64


def test_cnn_coda_runs_every_margin_and_norm():
    result = cnn_coda(steps=6, seeds=(0,), eval_every=3, margins=(0, 2))
    assert result.eval_steps == [0, 3, 6]
    assert set(result.val_loss) == {0, 2}
    assert set(result.test_loss[2]) == {"none", "batchnorm", "layernorm"}
    assert len(result.border_active[0]) == 2  # one share per conv layer
    assert result.border_positions == {0: 28, 2: 80}
    assert result.border_ink[2] == 0.0 < result.interior_ink[2]


def test_per_scale_and_per_margin_results_keep_their_number_keys():
    """The record's JSON round trip (run here in memory) gives back float scales and int margins,
    not their strings."""
    dynamics = rnn_dynamics(steps=10, examples=2, scales=(0.5, 2))
    for field in (dynamics.summed_rms, dynamics.hidden_rms, dynamics.sensitivity):
        for by_scale in field.values():
            assert list(by_scale) == [0.5, 2.0]
            assert all(type(scale) is float for scale in by_scale)
    assert list(dynamics_summary(dynamics)["plain_summed_last"]) == [0.5, 2.0]
    cnn = cnn_coda(steps=2, seeds=(0,), eval_every=2, margins=(0, 1))
    for field in ("val_loss", "test_loss", "border_positions", "border_ink", "border_active"):
        by_margin = getattr(cnn, field)
        assert list(by_margin) == [0, 1] and all(type(m) is int for m in by_margin), field
    assert list(cnn_summary(cnn)) == [0, 1]


def cnn_with(test_loss: dict):
    """A cnn_coda result whose test NLLs are `test_loss[norm]` plus per-seed noise (sd 0.003)."""
    result = cnn_coda(steps=2, seeds=(0,), eval_every=2, margins=(0,))
    per_norm = {
        norm: [v + d for d in noise(seed, 0.003)]
        for seed, (norm, v) in enumerate(test_loss.items())
    }
    return dataclasses.replace(result, seeds=list(range(SEEDS)), test_loss={0: per_norm})


def test_plane_layernorm_is_layernorm_over_the_layer_with_per_channel_affine():
    torch.manual_seed(1)
    layer = SmallCNN("layernorm").features[1]
    with torch.no_grad():
        layer.weight.normal_()
        layer.bias.normal_()
    a = 3 * torch.randn(4, 16, 8, 8) + 2
    mu = a.mean(dim=(1, 2, 3), keepdim=True)
    var = a.var(dim=(1, 2, 3), unbiased=False, keepdim=True)
    expected = layer.weight * (a - mu) / torch.sqrt(var + 1e-5) + layer.bias
    torch.testing.assert_close(layer(a), expected)


def test_units_on_leaves_out_units_that_see_only_blank_pixels():
    border = border_mask(4, 1)
    activations = torch.zeros(3, 1, 4, 4)
    activations[:, :, border] = 0.7  # ReLU(bias) > 0, the same for every image: not counted
    activations[:, 0, 1, 1] = torch.tensor([0.0, 1.0, 2.0])  # inside: on for 2 of 3 images
    activations[:, 0, 0, 0] = torch.tensor([0.0, 0.0, 1.0])  # a border unit that responds
    border_on, inside_on = units_on(activations, border)
    assert border_on == pytest.approx(1 / 3)
    assert inside_on == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "losses, r5, r5b",
    [
        ({"none": 0.10, "batchnorm": 0.03, "layernorm": 0.05}, claims.REPRODUCED, claims.REPRODUCED),
        ({"none": 0.10, "batchnorm": 0.04, "layernorm": 0.04}, claims.REPRODUCED, claims.INCONCLUSIVE),
        ({"none": 0.03, "batchnorm": 0.05, "layernorm": 0.04}, claims.NOT_REPRODUCED, claims.NOT_REPRODUCED),
        ({"none": 0.04, "batchnorm": 0.04, "layernorm": 0.04}, claims.INCONCLUSIVE, claims.INCONCLUSIVE),
    ],
)  # fmt: skip
def test_r5_checks(losses, r5, r5b):
    cnn = cnn_with(losses)
    assert nb_claims.check_r5(cnn).verdict == r5
    assert nb_claims.check_r5b(cnn).verdict == r5b


def test_dynamics_growth_is_the_per_step_factor():
    result = rnn_dynamics(steps=20, examples=2, scales=(1.0,))
    summary = nb_claims.dynamics_summary(result)
    values = result.sensitivity["tanh RNN"][1.0]
    factor = (values[-1] / values[result.input_steps - 1]) ** (1 / (20 - result.input_steps))
    assert math.isclose(summary["growth"]["tanh RNN"][1.0], factor)


def test_an_ending_short_of_the_declared_accuracy_is_inconclusive_at_this_budget():
    """M4b and R3c grade where training ends: with the models below ENDING_ACCURACY over the last
    quarter, their tests are shown but the verdict is inconclusive, whatever the tests say."""
    assert nb_claims.ENDING_ACCURACY == 0.8
    graded = nb_claims.check_m4b(pixel_study((0.001, 0.05)))
    early = nb_claims.check_m4b(pixel_study((0.001, 0.05), lstm=(0.40, 0.30)))
    assert graded.verdict == claims.REPRODUCED and "budget" not in graded.ours
    assert early.verdict == claims.INCONCLUSIVE, early.ours
    assert "inconclusive at this budget" in early.ours and "would give reproduced" in early.ours
    low = two_orders(*[{m: arm(noisy(c, s, 0.01), [0.3] * SEEDS) for m, c, s in
                        (("LN-LSTM", SLOW, 1), ("BN-LSTM", SLOW_BUT_LOWER, 2))}
                       for _ in range(2)])  # fmt: skip
    finding = nb_claims.check_r3c(low)
    assert finding.verdict == claims.INCONCLUSIVE and "would give not reproduced" in finding.ours


def as_grus(study: RecurrentStudyResult) -> RecurrentStudyResult:
    """The same runs, the LSTM's as the GRU's and the LN-LSTM's as the LN-GRU's."""
    runs = {"GRU": study.runs["LSTM"], "LN-GRU": study.runs["LN-LSTM"]}
    return RecurrentStudyResult(form=study.form, orders=study.orders, runs=runs)


def test_r3f_and_r4c_grade_the_grus_as_r3_and_r4b_grade_the_lstms():
    faster = same_best(noisy(FAST, 1), noisy(SLOW, 2))
    assert nb_claims.check_r3f(as_grus(faster)).verdict == claims.REPRODUCED
    slower = as_grus(same_best(noisy(SLOW, 1), noisy(FAST, 2)))
    finding = nb_claims.check_r3f(slower)
    assert finding.verdict == claims.NOT_REPRODUCED, finding.ours
    assert [q.label for q in finding.quantities] == [
        f"lr {lr:g}, early test NLL, LN-GRU - GRU" for lr in LRS
    ]
    lstm = noisy(SLOW, 2, 0.01)
    ln = [[v + (-0.05 if k == len(c) - 1 else 0) for k, v in enumerate(c)] for c in lstm]
    better = rows(ln, lstm, ln_accuracy=[a + d for a, d in zip(accuracy_arm(0.99, 1),
                  noise(5, 0.002), strict=True)], lstm_accuracy=accuracy_arm(0.98, 1))  # fmt: skip
    finding = nb_claims.check_r4c(as_grus(better))
    assert finding.verdict == claims.REPRODUCED, finding.ours
    assert "LN-GRU minus GRU" in finding.ours


def gain_study(ln_tenth, bn_tenth):
    """A gain_pixels-like study, both orders alike: LN and BN at gain 1.0 on SLOW; each cell at
    gain 0.1 on the curve given."""
    runs = {
        "LN-LSTM": arm(noisy(SLOW, 1, 0.01)),
        "LN-LSTM, gain 0.1": arm(noisy(ln_tenth, 2, 0.01)),
        "BN-LSTM": arm(noisy(bn_tenth, 3, 0.01)),
        "BN-LSTM, gain 1.0": arm(noisy(SLOW, 4, 0.01)),
    }
    return two_orders(runs, runs)


BETTER = [v - 0.1 for v in SLOW]


@pytest.mark.parametrize(
    "ln_tenth, bn_tenth, verdict",
    [
        (SLOW, BETTER, claims.REPRODUCED),  # 0.1 helps BN, not LN
        (BETTER, BETTER, claims.INCONCLUSIVE),  # it helps both alike
        (BETTER, SLOW, claims.NOT_REPRODUCED),  # it helps LN only
    ],
)
def test_m4e_asks_whether_gain_01_buys_ln_what_it_buys_bn(ln_tenth, bn_tenth, verdict):
    finding = nb_claims.check_m4e(gain_study(ln_tenth, bn_tenth))
    assert finding.verdict == verdict, finding.ours
    assert "permuted" in finding.ours and len(finding.quantities) == 2


# ---- issue 22's checks: GRUs at T = 64, small batches, Cooijmans et al. on a stationary input -----


def test_r3g_grades_the_grus_at_each_shared_rate_in_both_orders():
    faster = as_grus(same_best(noisy(FAST, 1), noisy(SLOW, 2))).runs
    finding = nb_claims.check_r3g(two_orders(faster, faster))
    assert finding.verdict == claims.REPRODUCED, finding.ours
    assert [q.label for q in finding.quantities] == [
        f"{task}, lr {lr:g}, early test NLL, LN-GRU - GRU"
        for task in ("pixel by pixel", "permuted")
        for lr in LRS
    ]
    slower = as_grus(same_best(noisy(SLOW, 1), noisy(FAST, 2))).runs
    assert nb_claims.check_r3g(two_orders(slower, slower)).verdict == claims.NOT_REPRODUCED
    assert nb_claims.check_r3g(two_orders(faster, slower)).verdict == claims.PARTLY


def small_batch_study(ln, bn, size: int, orders: int) -> RecurrentStudyResult:
    """LSTM, LN-LSTM and BN-LSTM at minibatch `size`, every model best at the same rate."""
    runs = {"LSTM": arm(noisy(SLOW, 3)), "LN-LSTM": arm(ln), "BN-LSTM": arm(bn)}
    for run in runs.values():
        run["batch_size"] = size
    if orders == 1:
        return RecurrentStudyResult(form="pixels", orders=[False], runs=runs)
    return two_orders(runs, runs)


@pytest.mark.parametrize(
    "small, large, verdict",
    [
        # LN ahead at batch 4, level at 16: ahead, and by more
        ((FAST, SLOW), (SLOW, SLOW), claims.REPRODUCED),
        # level at 4, behind at 16: not ahead, but it gained on BN as the batch shrank
        ((SLOW, SLOW), (SLOW, FAST), claims.PARTLY),
        # behind at 4, level at 16
        ((SLOW, FAST), (SLOW, SLOW), claims.NOT_REPRODUCED),
    ],
)
def test_r6_asks_whether_ln_beats_bn_at_small_batches_and_by_more(small, large, verdict):
    (ln_small, bn_small), (ln_large, bn_large) = small, large
    finding = nb_claims.check_r6(
        small_batch_study(noisy(ln_small, 1, 0.01), noisy(bn_small, 2, 0.01), 4, 1),
        small_batch_study(noisy(ln_large, 4, 0.01), noisy(bn_large, 5, 0.01), 16, 2),
    )
    assert finding.verdict == verdict, finding.ours
    labels = [q.label for q in finding.quantities]
    assert labels[:2] == [
        "batch 4, test NLL, LN-LSTM - BN-LSTM",
        "(LN - BN) at batch 4 minus at 16",
    ]
    assert "batch 16" in finding.ours and "collapsed runs" in finding.ours


def stationary_result(per_step, averaged, accuracy_inside=0.97, accuracy_beyond=0.97):
    """A StationaryStatisticsResult, T_max 8, delay 2, streams of 32, SEEDS seeds: per seed the
    test NLL at every step, per-step statistics `per_step`, averaged `averaged` (plus noise)."""
    from lnpaper.chapters.ch03_layernorm_in_rnns.runs import StationaryStatisticsResult

    steps = 30
    return StationaryStatisticsResult(
        train_length=8, test_length=32, delay=2, hidden=8, steps=5, seeds=list(range(SEEDS)),
        loss={"per step": [[per_step + d] * steps for d in noise(1, 0.002)],
              "averaged": [[averaged + d] * steps for d in noise(2, 0.002)]},
        accuracy={name: [[accuracy_inside + d] * 6 + [accuracy_beyond + e] * 24
                         for d, e in zip(noise(3, 0.005), noise(4, 0.005), strict=True)]
                  for name in ("per step", "averaged")},
        drift=[[0.1] + [0.03] * 6 for _ in range(SEEDS)],
    )  # fmt: skip


@pytest.mark.parametrize(
    "averaged, verdict",
    [(0.10, claims.REPRODUCED), (0.09, claims.INCONCLUSIVE), (0.08, claims.NOT_REPRODUCED)],
)
def test_m4f_asks_whether_averaged_statistics_cost_nll_inside_the_training_length(
    averaged, verdict
):
    finding = nb_claims.check_m4f(stationary_result(0.09, averaged))
    assert finding.verdict == verdict, finding.ours
    assert "test steps 2-7" in finding.ours and "0.100 at step 1" in finding.ours


@pytest.mark.parametrize(
    "beyond, verdict",
    [(0.97, claims.REPRODUCED), (0.958, claims.INCONCLUSIVE), (0.90, claims.NOT_REPRODUCED)],
)
def test_m4g_asks_whether_the_t_max_rule_keeps_the_accuracy_beyond_t_max(beyond, verdict):
    finding = nb_claims.check_m4g(stationary_result(0.09, 0.09, accuracy_beyond=beyond))
    assert finding.verdict == verdict, finding.ours
    assert "steps 8-31" in finding.ours


def test_stationary_statistics_per_step_is_longer_sequences_bn_lstm():
    """The same training (`_train_on_streams`) and test streams: with per-step statistics the
    accuracy is longer_sequences' BN-LSTM's, bit for bit; averaged statistics change it."""
    from lnpaper.chapters.ch03_layernorm_in_rnns.runs import stationary_statistics

    arguments = {"hidden": 8, "steps": 4, "seeds": (0, 1), "test_length": 16}
    result = stationary_statistics(**arguments)
    longer = longer_sequences(models=("BN-LSTM",), **arguments)
    assert result.accuracy["per step"] == longer.accuracy["BN-LSTM"]
    assert result.loss["per step"] != result.loss["averaged"]
    assert len(result.drift) == 2 and len(result.drift[0]) == result.train_length - 1
    assert all(v >= 0 for row in result.drift for v in row)


def test_averaging_over_time_leaves_one_set_of_statistics_and_no_drift():
    from lnpaper.chapters.ch03_layernorm_in_rnns.runs import _average_over_time, _statistic_drift
    from lnpaper.models.recurrent import SeedBatchedClassifier, SequenceClassifier

    models = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        models.append(SequenceClassifier(make_cell("bn-lstm", 4, 6, max_steps=5), 10))
    model = SeedBatchedClassifier(models)
    with torch.no_grad():
        for name in ("norm_hh", "norm_ih", "norm_c"):
            model.p(f"cell.{name}.running_mean").normal_()
            model.p(f"cell.{name}.running_var").uniform_(0.5, 2.0)
    before = model.p("cell.norm_hh.running_mean").clone()
    assert min(v for row in _statistic_drift(model) for v in row) > 0
    _average_over_time(model)
    after = model.p("cell.norm_hh.running_mean")
    torch.testing.assert_close(after, before.mean(0, keepdim=True).expand_as(before))
    assert _statistic_drift(model) == [[0.0] * 4, [0.0] * 4]
