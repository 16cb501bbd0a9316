"""The MLP of the batch-size experiment (notebook 01, M5)."""

import re

import pytest
import torch
import torch.nn.functional as F

import lnpaper
from lnpaper.models.mlp import MLP
from lnpaper.train import epoch_batches, train


def kinds(model):
    return [type(layer).__name__ for layer in model.layers]


def test_layernorm_on_hidden_layers_only_as_in_the_paper():
    model = MLP((64, 32, 16, 10), norm="layernorm")
    assert kinds(model) == ["Linear", "LayerNorm", "ReLU", "Linear", "LayerNorm", "ReLU", "Linear"]
    linears = [layer for layer in model.layers if isinstance(layer, torch.nn.Linear)]
    assert [layer.bias is None for layer in linears] == [True, True, False]  # b replaces the bias
    assert model(torch.randn(3, 64)).shape == (3, 10)


def test_batchnorm_can_normalize_the_logits_too():
    model = MLP((64, 32, 10), norm="batchnorm", norm_logits=True)
    assert kinds(model) == ["Linear", "BatchNorm", "ReLU", "Linear", "BatchNorm"]
    assert all(isinstance(m, lnpaper.BatchNorm) for m in model.layers if "Norm" in type(m).__name__)


def test_no_norm_keeps_every_bias():
    model = MLP((8, 4, 2), norm="none")
    assert kinds(model) == ["Linear", "ReLU", "Linear"]
    assert all(layer.bias is not None for layer in model.layers if hasattr(layer, "bias"))


def test_layernorm_output_of_one_example_ignores_its_batch_but_batchnorm_does_not():
    torch.manual_seed(0)
    x = torch.randn(6, 16)
    ln, bn = MLP((16, 8, 3), norm="layernorm"), MLP((16, 8, 3), norm="batchnorm")
    torch.testing.assert_close(ln(x)[:1], ln(x[:1]))
    assert not torch.allclose(bn(x)[:2], bn(x[:2]))


def test_it_learns_the_digits():
    from lnpaper.data import digits

    lnpaper.setup(quiet=True)
    x, y = digits.load("train")
    model = MLP((64, 32, 32, 10), norm="layernorm")
    batches = epoch_batches(len(x), 64, seed=0)
    history = train(
        model,
        lambda model, index: F.cross_entropy(model(x[index]), y[index]),
        batches,
        steps=60,
        lr=3e-3,
        log_every=20,
    )
    test_x, test_y = digits.load("test")
    model.eval()
    accuracy = (model(test_x).argmax(1) == test_y).float().mean()
    assert history.train_loss[-1] < 0.3 * history.train_loss[0]
    assert accuracy > 0.85


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sizes": (64,)}, "sizes must be at least two positive ints"),
        ({"sizes": (64, 0, 10)}, "sizes must be at least two positive ints"),
        ({"norm": "groupnorm"}, "norm must be one of ('batchnorm', 'layernorm', 'none')"),
        ({"norm": "none", "norm_logits": True}, "norm_logits=True needs a normalizer"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        MLP(**kwargs)


def test_wrong_input_shape_raises():
    message = "MLP(64, 32, 10) expects input (N, 64), got shape (3, 8, 8)"
    with pytest.raises(ValueError, match=re.escape(message)):
        MLP((64, 32, 10))(torch.zeros(3, 8, 8))
