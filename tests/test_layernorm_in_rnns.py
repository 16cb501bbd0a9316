"""Notebook 03's experiments, the small CNN and the checks of R1-R5, R3b and R4b: they measure
what they say, and the checks can fail."""

import dataclasses
import math
import re

import pytest
import torch

from lnpaper import claims
from lnpaper.claims import layernorm_in_rnns as nb_claims
from lnpaper.experiments import (
    cnn_coda,
    lnlstm_anatomy,
    longer_sequences,
    rnn_dynamics,
    sequence_training,
)
from lnpaper.experiments.layernorm_in_rnns import (
    BASELINE_LR,
    LOWER_LR,
    RecurrentStudyResult,
    border_mask,
    cnn_summary,
    dynamics_summary,
    first_step_at_or_below,
    framed_images,
    mean_tanh_slope,
)
from lnpaper.models.cnn import SmallCNN
from lnpaper.models.recurrent import make_cell


def test_mean_tanh_slope_gives_cooijmans_numbers():
    assert round(mean_tanh_slope(0.1), 3) == 0.990
    assert round(mean_tanh_slope(1.0), 3) == 0.606
    assert mean_tanh_slope(1e-6) == pytest.approx(1.0, abs=1e-9)
    # against a plain Monte Carlo estimate
    z = torch.randn(2_000_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    monte_carlo = (1 - torch.tanh(2.0 * z) ** 2).mean().item()
    assert mean_tanh_slope(2.0) == pytest.approx(monte_carlo, abs=2e-3)


def test_first_step_at_or_below():
    assert first_step_at_or_below([0, 10, 20], [3.0, 1.0, 0.5], 1.0) == 10
    assert first_step_at_or_below([0, 10, 20], [3.0, 1.0, 0.5], 0.1) is None


# ---- R1 ------------------------------------------------------------------------------------------


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


# ---- R3, R3b, R4, R4b ---------------------------------------------------------------------------


def test_sequence_training_records_curves_and_test_numbers():
    result = sequence_training(cell="bn-lstm", hidden=8, steps=20, seeds=(0, 1), eval_every=10)
    assert result.eval_steps == [0, 10, 20]
    assert len(result.val_loss) == 2 and len(result.val_loss[0]) == 3
    assert result.val_loss[0][-1] < result.val_loss[0][0]
    assert all(0 <= a <= 1 for a in result.test_accuracy)
    assert result.val_loss[0] != result.val_loss[1]  # seeds differ


def test_every_cell_starts_from_the_same_weights_for_one_seed():
    cells = []
    for kind in ("lstm", "ln-lstm", "bn-lstm"):
        torch.manual_seed(3)
        cells.append(make_cell(kind, 8, 16, max_steps=8))
    for cell in cells[1:]:
        assert torch.equal(cell.weight_ih, cells[0].weight_ih)
        assert torch.equal(cell.weight_hh, cells[0].weight_hh)


SEEDS = 10  # enough for the paired t intervals to decide


def noise(seed: int, scale: float) -> list[float]:
    """SEEDS fixed draws of N(0, scale^2): the seed-to-seed spread of a synthetic arm."""
    draws = torch.randn(SEEDS, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (scale * draws).tolist()


def noisy(curve, seed: int, scale: float = 0.05) -> list[list[float]]:
    """SEEDS validation curves: `curve` shifted per seed by noise of sd `scale`."""
    return [[value + shift for value in curve] for shift in noise(seed, scale)]


def run(lr, curves, test_accuracy, test_loss):
    steps = [20 * k for k in range(len(curves[0]))]
    return {
        "lr": lr,
        "eval_steps": steps,
        "val_loss": curves,
        "test_accuracy": test_accuracy,
        "test_loss": test_loss,
    }


SLOW = [2.3, 1.0, 0.6, 0.4, 0.3, 0.2, 0.15, 0.12, 0.1]
FAST = [2.3, 0.5, 0.3, 0.2, 0.15, 0.12, 0.1, 0.09, 0.09]
FAST_BUT_STALLS = [2.3, 0.5, 0.3, 0.2, 0.15, 0.13, 0.12, 0.11, 0.11]
GOOD = ([0.98, 0.985, 0.99], [0.05, 0.06, 0.055])


def study(ln, lstm=None, ln_test=GOOD, lstm_test=GOOD, bn=None):
    """LSTM and LN-LSTM at both rates and a BN-LSTM at the baseline's, with the given curves
    (one per seed; the BN-LSTM's default to the LSTM's) and test (accuracy, NLL) per seed."""
    lstm = [SLOW] * len(ln) if lstm is None else lstm
    runs = {}
    for lr in (BASELINE_LR, LOWER_LR):
        runs["LSTM", lr] = run(lr, lstm, *lstm_test)
        runs["LN-LSTM", lr] = run(lr, ln, *ln_test)
    runs["BN-LSTM", BASELINE_LR] = run(BASELINE_LR, lstm if bn is None else bn, *lstm_test)
    return RecurrentStudyResult(runs=runs)


def gains(one, tenth):
    steps = [20 * k for k in range(len(one[0]))]
    return RecurrentStudyResult(
        runs={
            "LN-LSTM, gain 1.0": {"eval_steps": steps, "val_loss": one},
            "LN-LSTM, gain 0.1": {"eval_steps": steps, "val_loss": tenth},
        }
    )


def test_training_summary_finds_the_step_where_the_baseline_best_is_reached():
    summary = nb_claims.training_summary(study([FAST] * 3), BASELINE_LR)
    assert summary["level"] == pytest.approx(0.1)
    assert summary["LSTM"]["reach"] == 160 and summary["LN-LSTM"]["reach"] == 120
    assert summary["LN-LSTM"]["reach_per_seed"] == [120, 120, 120]
    assert summary["LN-LSTM"]["early"] == [pytest.approx(0.4)] * 3  # steps 20 and 40 of 160
    assert summary["early_steps"] == [20, 40] and summary["late_steps"] == [140, 160]
    assert summary["LN-LSTM"]["late"] == [pytest.approx(0.09)] * 3
    assert summary["LSTM"]["late"] == [pytest.approx(0.11)] * 3
    stalled = nb_claims.training_summary(study([FAST_BUT_STALLS] * 3), BASELINE_LR)
    assert stalled["LN-LSTM"]["reach"] is None


GAIN_AHEAD = (noisy([2.3, 0.5, 0.3], 11), noisy([2.3, 1.0, 0.6], 12))  # gain 1.0 lower
GAIN_BEHIND = GAIN_AHEAD[::-1]
GAIN_TIED = (noisy([2.3, 0.5, 0.3], 11), noisy([2.3, 0.5, 0.3], 12))


@pytest.mark.parametrize(
    "ln, lstm, by_gain, verdict",
    [
        (noisy(FAST, 1), noisy(SLOW, 2), GAIN_AHEAD, claims.REPRODUCED),
        (noisy(FAST, 1), noisy(SLOW, 2), GAIN_BEHIND, claims.PARTLY),  # the gain part fails
        # faster early, though it never reaches the baseline's best: speed is the early NLL
        (noisy(FAST_BUT_STALLS, 1), noisy(SLOW, 2), GAIN_AHEAD, claims.REPRODUCED),
        (noisy(SLOW, 1), noisy(FAST, 2), GAIN_BEHIND, claims.NOT_REPRODUCED),  # slower, everywhere
        (noisy(SLOW, 1), noisy(SLOW, 2), GAIN_TIED, claims.INCONCLUSIVE),  # the seeds cannot tell
    ],
)
def test_r3_check(ln, lstm, by_gain, verdict):
    finding = nb_claims.check_r3(study(ln, lstm), gains(*by_gain))
    assert finding.verdict == verdict, finding.ours
    assert len(finding.quantities) == 3  # early NLL at both rates, and the gain


def accuracy_arm(mean: float, seed: int) -> tuple[list[float], list[float]]:
    """SEEDS test accuracies around `mean` (sd 0.5 points) and NLLs."""
    return [mean + d for d in noise(seed, 0.005)], [0.05 + d for d in noise(seed + 100, 0.005)]


LSTM_TEST = accuracy_arm(0.98, 1)


@pytest.mark.parametrize(
    "ln_test, verdict",
    [
        (accuracy_arm(0.98, 2), claims.REPRODUCED),  # the same final quality
        (accuracy_arm(0.99, 2), claims.REPRODUCED),  # better: no worse either
        (accuracy_arm(0.97, 2), claims.INCONCLUSIVE),  # a point lower: the interval spans -1 pp
        (accuracy_arm(0.95, 2), claims.NOT_REPRODUCED),  # three points lower
    ],
)
def test_r4_check(ln_test, verdict):
    finding = nb_claims.check_r4(
        study(noisy(FAST, 1), noisy(SLOW, 2), ln_test=ln_test, lstm_test=LSTM_TEST)
    )
    assert finding.verdict == verdict, finding.ours
    assert f"n = {SEEDS}" in finding.ours


def moved(test, seed: int, accuracy: float = 0.0, nll: float = 0.0):
    """Another arm's test (accuracies, NLLs) per seed, moved by `accuracy` and `nll`, plus per-seed
    noise (sd 0.3 points and 0.003): a model paired with that arm by seed."""
    accuracies, losses = test
    return (
        [a + accuracy + d for a, d in zip(accuracies, noise(seed, 0.003), strict=True)],
        [v + nll + d for v, d in zip(losses, noise(seed + 100, 0.003), strict=True)],
    )


@pytest.mark.parametrize(
    "ln_test, verdict",
    [
        (moved(LSTM_TEST, 2, accuracy=0.01, nll=-0.02), claims.REPRODUCED),  # better on both
        (moved(LSTM_TEST, 2, accuracy=0.01), claims.PARTLY),  # more accurate, the same NLL
        (moved(LSTM_TEST, 2, nll=0.02), claims.NOT_REPRODUCED),  # as accurate, a higher NLL
        (moved(LSTM_TEST, 2), claims.INCONCLUSIVE),  # the same on both: not shown better
    ],
)
def test_r4b_check(ln_test, verdict):
    finding = nb_claims.check_r4b(
        study(noisy(FAST, 1), noisy(SLOW, 2), ln_test=ln_test, lstm_test=LSTM_TEST)
    )
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
def test_r3b_check(ln, bn, verdict):
    finding = nb_claims.check_r3b(study(noisy(ln, 1, 0.01), bn=noisy(bn, 2, 0.01)))
    assert finding.verdict == verdict, finding.ours
    assert "steps 20-40" in finding.ours and "steps 140-160" in finding.ours
    assert len(finding.quantities) == 2  # the early and the late validation NLL


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


# ---- R5 ------------------------------------------------------------------------------------------


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
    assert layer.normalized_shape == (16, 8, 8)  # every unit of the layer
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


@pytest.mark.parametrize(
    "losses, verdict",
    [
        ({"none": 0.10, "batchnorm": 0.03, "layernorm": 0.05}, claims.REPRODUCED),
        ({"none": 0.10, "batchnorm": 0.04, "layernorm": 0.04}, claims.PARTLY),  # BN = LN
        ({"none": 0.03, "batchnorm": 0.05, "layernorm": 0.04}, claims.NOT_REPRODUCED),
        ({"none": 0.04, "batchnorm": 0.04, "layernorm": 0.04}, claims.INCONCLUSIVE),
    ],
)
def test_r5_check(losses, verdict):
    finding = nb_claims.check_r5(cnn_with(losses))
    assert finding.verdict == verdict, finding.ours


def test_dynamics_growth_is_the_per_step_factor():
    result = rnn_dynamics(steps=20, examples=2, scales=(1.0,))
    summary = nb_claims.dynamics_summary(result)
    values = result.sensitivity["tanh RNN"][1.0]
    factor = (values[-1] / values[result.input_steps - 1]) ** (1 / (20 - result.input_steps))
    assert math.isclose(summary["growth"]["tanh RNN"][1.0], factor)
