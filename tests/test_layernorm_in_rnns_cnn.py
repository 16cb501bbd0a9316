"""Notebook 04's small CNN and its run, cnn_coda, and the checks of R5 and R5b can fail."""

import dataclasses
import re

import pytest
import torch
from layernorm_in_rnns_helpers import SEEDS, noise

from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import dynamics_summary
from lnpaper.chapters.ch03_layernorm_in_rnns.runs import rnn_dynamics
from lnpaper.chapters.ch04_batchnorm_against_layernorm import claims as coda_claims
from lnpaper.chapters.ch04_batchnorm_against_layernorm.analysis import WIDE_MARGIN, cnn_summary
from lnpaper.chapters.ch04_batchnorm_against_layernorm.claims_wide_frame import check_r5c
from lnpaper.chapters.ch04_batchnorm_against_layernorm.runs import (
    border_mask,
    cnn_coda,
    framed_images,
    units_on,
)
from lnpaper.companion import verdicts
from lnpaper.models.cnn import SeedBatchedCNN, SmallCNN

# float64 states that the population is the same model (bounds far below float32's roundoff);
# float32 runs the kernels the runs use (oneDNN's channels-last convolutions exist only there).
CLOSE = {
    torch.float64: {"logits": (1e-12, 1e-10), "grads": (1e-12, 1e-10), "buffers": (1e-14, 1e-12)},
    torch.float32: {"logits": (1e-5, 1e-5), "grads": (1e-5, 1e-4), "buffers": (1e-6, 1e-5)},
}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("side", [8, 12])  # notebook 04's coda: margins 0 and 2
@pytest.mark.parametrize("norm", ["none", "batchnorm", "layernorm"])
def test_seed_batched_cnn_is_the_per_seed_models_outputs_grads_and_statistics(norm, side, dtype):
    close = {k: {"atol": atol, "rtol": rtol} for k, (atol, rtol) in CLOSE[dtype].items()}
    models = []
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        model = SmallCNN(norm, (8, 16), side=side).to(dtype)  # the coda's channels
        with torch.no_grad():  # gains and biases away from 1 and 0, so a mix-up shows
            for name, p in model.named_parameters():
                if "features.1" in name or "features.4" in name:
                    p.add_(0.3 * torch.randn_like(p))
        models.append(model)
    batched = SeedBatchedCNN(models)
    x, y = torch.randn(3, 5, 1, side, side, dtype=dtype), torch.randint(0, 10, (3, 5))
    # a blank corner, as the coda's framed digits have: the norms see constant regions and, at
    # side 12, 2 x 2 pool windows whose four values tie
    x[..., : side // 2, : side // 2] = 0
    logits = batched(x)
    torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum").backward()
    for s, model in enumerate(models):
        alone = model(x[s])
        torch.nn.functional.cross_entropy(alone, y[s], reduction="sum").backward()
        torch.testing.assert_close(logits[s], alone, **close["logits"])
        for name, p in model.named_parameters():
            torch.testing.assert_close(batched.p(name).grad[s], p.grad, **close["grads"])
        again = batched.per_seed(s)
        for name, buffer in model.named_buffers():  # BatchNorm's running estimates
            torch.testing.assert_close(again.get_buffer(name), buffer, **close["buffers"])
        with torch.no_grad():  # and in eval mode, on the running estimates
            batched.eval()
            torch.testing.assert_close(batched(x)[s], model.eval()(x[s]), **close["logits"])
            batched.train()
    with pytest.raises(ValueError, match="one norm and shape"):
        other = "none" if norm != "none" else "layernorm"
        SeedBatchedCNN([models[0], SmallCNN(other, (8, 16), side)])
    with pytest.raises(ValueError, match=rf"seeds=3, N, 1, {side}, {side}"):
        batched(torch.zeros(2, 5, 1, side, side, dtype=dtype))


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
    # every unit counted: the 11 blank border units are on for every image
    border_on, inside_on = units_on(activations, border, responding_only=False)
    assert border_on == pytest.approx((11 + 1 / 3) / 12)
    assert inside_on == pytest.approx((2 / 3) / 4)


@pytest.mark.parametrize(
    "border_on, bn_minus_ln, expected",
    [
        (0.2, -0.01, verdicts.REPRODUCED),
        (0.2, +0.01, verdicts.NOT_REPRODUCED),
        (0.2, 0.0, verdicts.INCONCLUSIVE),
        (0.45, -0.01, verdicts.NOT_EXERCISED),  # the premise (at most half of 0.8) fails first
    ],
)
def test_r5c_grades_the_premise_first(border_on, bn_minus_ln, expected):
    margin = WIDE_MARGIN
    per_norm = {
        "layernorm": [0.05 + d for d in noise(0, 0.003)],
        "batchnorm": [0.05 + bn_minus_ln + d for d in noise(1, 0.003)],
    }
    cnn = cnn_with({"none": 0.1})
    wide = dataclasses.replace(
        cnn,
        margins=[margin],
        test_loss={margin: per_norm},
        border_active={margin: [0.5, 0.5]},
        interior_active={margin: [0.8, 0.8]},
        border_active_all={margin: [0.5, border_on]},
        interior_active_all={margin: [0.8, 0.8]},
    )
    assert check_r5c(wide).verdict == expected


@pytest.mark.parametrize(
    "losses, r5, r5b",
    [
        ({"none": 0.10, "batchnorm": 0.03, "layernorm": 0.05}, verdicts.REPRODUCED, verdicts.REPRODUCED),
        ({"none": 0.10, "batchnorm": 0.04, "layernorm": 0.04}, verdicts.REPRODUCED, verdicts.INCONCLUSIVE),
        ({"none": 0.03, "batchnorm": 0.05, "layernorm": 0.04}, verdicts.NOT_REPRODUCED, verdicts.NOT_REPRODUCED),
        ({"none": 0.04, "batchnorm": 0.04, "layernorm": 0.04}, verdicts.INCONCLUSIVE, verdicts.INCONCLUSIVE),
    ],
)  # fmt: skip
def test_r5_checks(losses, r5, r5b):
    cnn = cnn_with(losses)
    assert coda_claims.check_r5(cnn).verdict == r5
    assert coda_claims.check_r5b(cnn).verdict == r5b
