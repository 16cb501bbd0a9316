"""RecurrentBatchNorm (Cooijmans et al. 2016): statistics per time step, gain and bias shared."""

import re

import pytest
import torch
from torch import nn

import lnpaper

F64 = torch.float64


def _randn(*shape, seed, scale=1.0, shift=0.0):
    generator = torch.Generator().manual_seed(seed)
    return shift + scale * torch.randn(*shape, generator=generator, dtype=F64)


def test_init_gain_bias_and_buffers():
    norm = lnpaper.RecurrentBatchNorm(5, max_steps=3)
    assert torch.equal(norm.weight, torch.full((5,), 0.1))  # Cooijmans et al.'s gain init
    assert torch.equal(norm.bias, torch.zeros(5))
    assert norm.running_mean.shape == norm.running_var.shape == (3, 5)
    assert lnpaper.RecurrentBatchNorm(5, 3, bias=False).bias is None
    assert torch.equal(lnpaper.RecurrentBatchNorm(5, 3, gain_init=1.0).weight, torch.ones(5))


def test_training_normalizes_each_step_with_its_own_batch_statistics():
    norm = lnpaper.RecurrentBatchNorm(4, max_steps=3, gain_init=1.0).double()
    for step, (scale, shift) in enumerate([(0.1, 0.0), (3.0, 5.0), (1.0, -2.0)]):
        a = _randn(16, 4, seed=step, scale=scale, shift=shift)
        y = norm(a, step)
        torch.testing.assert_close(y.mean(0), torch.zeros(4, dtype=F64), atol=1e-12, rtol=0)
        expected = (a - a.mean(0)) / torch.sqrt(a.var(0, correction=0) + 1e-5)
        torch.testing.assert_close(y, expected)


def test_step_statistics_are_kept_apart():
    norm = lnpaper.RecurrentBatchNorm(3, max_steps=4, momentum=1.0).double()
    steps = {0: (0.5, -1.0), 2: (4.0, 10.0)}  # scale, shift per step; steps 1 and 3 never run
    batches = {step: _randn(32, 3, seed=step, scale=s, shift=m) for step, (s, m) in steps.items()}
    for step, a in batches.items():
        norm(a, step)
    for step, a in batches.items():  # momentum 1: the running estimates are the last batch's
        torch.testing.assert_close(norm.running_mean[step], a.mean(0))
        torch.testing.assert_close(norm.running_var[step], a.var(0))  # unbiased, as in BatchNorm
    for untouched in (1, 3):
        assert torch.equal(norm.running_mean[untouched], torch.zeros(3, dtype=F64))
        assert torch.equal(norm.running_var[untouched], torch.ones(3, dtype=F64))


def test_eval_uses_the_step_statistics_and_beyond_max_steps_the_last_ones():
    norm = lnpaper.RecurrentBatchNorm(3, max_steps=3, gain_init=1.0).double().eval()
    with torch.no_grad():
        norm.running_mean.copy_(_randn(3, 3, seed=0))
        norm.running_var.copy_(_randn(3, 3, seed=1).exp())
        norm.bias.copy_(_randn(3, seed=2))
    a = _randn(5, 3, seed=3)

    def by_hand(t):
        return (a - norm.running_mean[t]) / torch.sqrt(norm.running_var[t] + 1e-5) + norm.bias

    for step in range(3):
        torch.testing.assert_close(norm(a, step), by_hand(step))
    for step in (3, 4, 100):  # the T_max rule
        assert norm.statistics_step(step) == 2
        torch.testing.assert_close(norm(a, step), by_hand(2))
    assert not torch.allclose(by_hand(1), by_hand(2))  # the rule is visible in the output


def test_eval_does_not_move_the_running_statistics():
    norm = lnpaper.RecurrentBatchNorm(3, max_steps=2)
    norm(_randn(8, 3, seed=0).float(), 0)
    before = norm.running_mean.clone(), norm.running_var.clone()
    norm.eval()
    norm(_randn(8, 3, seed=1).float(), 0)
    norm(_randn(1, 3, seed=2).float(), 5)  # batch of one and a step past max_steps: fine at eval
    assert torch.equal(norm.running_mean, before[0]) and torch.equal(norm.running_var, before[1])


@pytest.mark.parametrize("training", [True, False])
def test_one_step_is_batchnorm(training):
    """With max_steps = 1 and gain 1 the module is lnpaper.BatchNorm (and so nn.BatchNorm1d)."""
    recurrent = lnpaper.RecurrentBatchNorm(6, max_steps=1, gain_init=1.0, momentum=0.3).double()
    plain = lnpaper.BatchNorm(6, momentum=0.3).double()
    with torch.no_grad():
        for module in (recurrent, plain):
            module.weight.copy_(_randn(6, seed=10).exp())
            module.bias.copy_(_randn(6, seed=11))
    for seed in range(3):  # a few steps of running statistics, then the mode under test
        a = _randn(12, 6, seed=seed, scale=2.0, shift=1.0)
        torch.testing.assert_close(recurrent(a, 0), plain(a))
    recurrent.train(training)
    plain.train(training)
    a = _randn(7, 6, seed=20)
    torch.testing.assert_close(recurrent(a, 0), plain(a))
    torch.testing.assert_close(recurrent.running_mean[0], plain.running_mean)
    torch.testing.assert_close(recurrent.running_var[0], plain.running_var)
    theirs = nn.BatchNorm1d(6, momentum=0.3, dtype=F64).train(training)
    theirs.load_state_dict(plain.state_dict(), strict=False)
    torch.testing.assert_close(recurrent(a, 0), theirs(a))


def test_gradients_flow_to_the_shared_gain_and_bias_from_every_step():
    norm = lnpaper.RecurrentBatchNorm(3, max_steps=3)
    loss = sum((norm(_randn(4, 3, seed=t).float(), t) * (t + 1)).sum() for t in range(3))
    loss.backward()
    assert norm.weight.grad is not None and norm.weight.grad.abs().sum() > 0
    torch.testing.assert_close(norm.bias.grad, torch.full((3,), 4.0 * (1 + 2 + 3)))


def test_half_precision_is_computed_in_float32():
    norm = lnpaper.RecurrentBatchNorm(8, max_steps=2)
    a = _randn(16, 8, seed=0, scale=1e-3, shift=300.0)
    y = norm(a.to(torch.bfloat16), 1)
    assert y.dtype == torch.bfloat16
    assert torch.isfinite(y.float()).all()
    assert torch.isfinite(norm.running_var).all()


@pytest.mark.parametrize(
    "step, message",
    [
        (-1, "step must be >= 0 (0-based time step), got -1"),
        (1.0, "step must be an int (0-based time step), got 1.0"),
        (True, "step must be an int (0-based time step), got True"),
    ],
)
def test_bad_step_raises(step, message):
    norm = lnpaper.RecurrentBatchNorm(3, max_steps=2)
    for mode in (True, False):
        with pytest.raises(ValueError, match=re.escape(message)):
            norm.train(mode)(torch.zeros(4, 3), step)


def test_training_beyond_max_steps_raises():
    norm = lnpaper.RecurrentBatchNorm(3, max_steps=2)
    with pytest.raises(ValueError, match=r"got step 2 in training mode, but max_steps = 2"):
        norm(torch.randn(4, 3), 2)


def test_training_with_one_value_per_channel_raises():
    with pytest.raises(ValueError, match=r"RecurrentBatchNorm in training mode needs more than 1"):
        lnpaper.RecurrentBatchNorm(3, max_steps=2)(torch.zeros(1, 3), 0)


@pytest.mark.parametrize("shape", [(4,), (4, 2), (4, 3, 5)])
def test_wrong_shape_raises(shape):
    message = f"RecurrentBatchNorm(3) expects one time step of shape (N, 3), got shape {shape}"
    with pytest.raises(ValueError, match=re.escape(message)):
        lnpaper.RecurrentBatchNorm(3, max_steps=2)(torch.zeros(shape), 0)


def test_integer_input_raises():
    with pytest.raises(ValueError, match=r"needs a floating-point input, got dtype torch.int64"):
        lnpaper.RecurrentBatchNorm(3, max_steps=2)(torch.ones(4, 3, dtype=torch.int64), 0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_features": 0}, r"num_features must be a positive int"),
        ({"max_steps": 0}, r"max_steps must be a positive int"),
        ({"max_steps": 2.0}, r"max_steps must be a positive int"),
        ({"eps": 0.0}, r"eps must be positive and finite"),
        ({"momentum": 1.5}, r"momentum must lie in \[0, 1\]"),
        ({"gain_init": 0.0}, r"gain_init must be positive and finite"),
        ({"gain_init": float("nan")}, r"gain_init must be positive and finite"),
        ({"gain_init": "0.1"}, r"gain_init must be a positive float"),
    ],
)
def test_bad_constructor_argument_raises(kwargs, message):
    arguments = {"num_features": 3, "max_steps": 2} | kwargs
    with pytest.raises(ValueError, match=message):
        lnpaper.RecurrentBatchNorm(**arguments)
