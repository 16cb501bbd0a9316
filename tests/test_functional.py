"""The numpy references in lnpaper.functional against torch's own ops and autograd, in float64."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as tF
from hypothesis import given, settings
from hypothesis import strategies as st

from lnpaper import functional as lnf
from lnpaper.chapters.ch02_transpose import variants

TOL = {"rtol": 1e-10, "atol": 1e-10}
SETTINGS = settings(max_examples=50)

seeds = st.integers(0, 2**32 - 1)
epsilons = st.sampled_from([1e-5, 1e-3, 0.1])


def _sample(draw, shape, param_shape):
    """Normal values with an offset up to 1e3 and a spread from 1e-3 to 1e3; gain, bias and dy."""
    rng = np.random.default_rng(draw(seeds))
    offset = draw(st.floats(-1e3, 1e3))
    scale = 10.0 ** draw(st.floats(-3, 3))
    x = offset + scale * rng.standard_normal(shape)
    gain, bias = rng.standard_normal(param_shape), rng.standard_normal(param_shape)
    return x, gain, bias, rng.standard_normal(shape)


@st.composite
def rows(draw):
    """x with 1-3 leading axes and a last axis of 1..64, with gain, bias and dy to match."""
    lead = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    n = draw(st.integers(1, 64))
    return _sample(draw, (*lead, n), (n,))


@st.composite
def batches(draw):
    """x of shape (N >= 2, *features) with 1-2 feature axes, with gain, bias and dy to match."""
    n = draw(st.integers(2, 16))
    features = tuple(draw(st.lists(st.integers(1, 8), min_size=1, max_size=2)))
    return _sample(draw, (n, *features), features)


def _centering_tol(x, axis, eps):
    """rtol and atol for results computed from (x - mean(x)) / sqrt(var(x) + eps) along `axis`.

    Centering in float64 leaves an error of about ulp(max|x|), which the division magnifies by
    kappa = max|x| / sqrt(var + eps): two correct implementations agree to 1e-10 on ordinary rows
    but only to ~1e-16 * kappa (times the gradient's own amplification) on offset ones.
    """
    kappa = (np.abs(x).max(axis=axis) / np.sqrt(x.var(axis=axis) + eps)).max()
    tol = max(1e-10, 1e-13 * kappa)
    return {"rtol": tol, "atol": tol}


def _t(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def _autograd(fn, dy, *inputs):
    """Gradients of sum(dy * fn(*inputs)) with respect to every input, by torch autograd."""
    leaves = [_t(a).requires_grad_(True) for a in inputs]
    fn(*leaves).backward(_t(dy))
    return tuple(leaf.grad for leaf in leaves)


def _torch_batch_norm(x, gain, bias, eps):
    # torch normalizes each column of (N, C); the reference treats every feature entry as a unit.
    flat = tF.batch_norm(
        x.reshape(x.shape[0], -1),
        None,
        None,
        weight=gain.reshape(-1),
        bias=bias.reshape(-1),
        training=True,
        eps=eps,
    )
    return flat.reshape(x.shape)


@SETTINGS
@given(case=rows(), eps=epsilons)
def test_layer_norm_matches_torch_layer_norm(case, eps):
    x, gain, bias, _ = case
    expected = tF.layer_norm(_t(x), x.shape[-1:], _t(gain), _t(bias), eps)
    got = _t(lnf.layer_norm(x, gain, bias, eps))
    torch.testing.assert_close(got, expected, **_centering_tol(x, -1, eps))


@SETTINGS
@given(case=rows(), eps=epsilons)
def test_rms_norm_matches_torch_rms_norm(case, eps):
    x, gain, _, _ = case
    expected = tF.rms_norm(_t(x), x.shape[-1:], _t(gain), eps)
    torch.testing.assert_close(_t(lnf.rms_norm(x, gain, eps)), expected, **TOL)


@SETTINGS
@given(case=batches(), eps=epsilons)
def test_batch_norm_matches_torch_batch_norm_in_training_mode(case, eps):
    x, gain, bias, _ = case
    expected = _torch_batch_norm(_t(x), _t(gain), _t(bias), eps)
    got = _t(lnf.batch_norm(x, gain, bias, eps))
    torch.testing.assert_close(got, expected, **_centering_tol(x, 0, eps))


@SETTINGS
@given(case=rows(), eps=epsilons)
def test_layer_norm_backward_matches_torch_autograd(case, eps):
    x, gain, bias, dy = case
    expected = _autograd(
        lambda x, g, b: tF.layer_norm(x, x.shape[-1:], g, b, eps), dy, x, gain, bias
    )
    got = tuple(_t(a) for a in lnf.layer_norm_backward(dy, x, gain, eps))
    torch.testing.assert_close(got, expected, **_centering_tol(x, -1, eps))


@SETTINGS
@given(case=rows(), eps=epsilons)
def test_rms_norm_backward_matches_torch_autograd(case, eps):
    x, gain, _, dy = case
    expected = _autograd(lambda x, g: tF.rms_norm(x, x.shape[-1:], g, eps), dy, x, gain)
    got = tuple(_t(a) for a in lnf.rms_norm_backward(dy, x, gain, eps))
    torch.testing.assert_close(got, expected, **TOL)


@SETTINGS
@given(case=batches(), eps=epsilons)
def test_batch_norm_backward_matches_torch_autograd(case, eps):
    x, gain, bias, dy = case
    expected = _autograd(lambda x, g, b: _torch_batch_norm(x, g, b, eps), dy, x, gain, bias)
    got = tuple(_t(a) for a in lnf.batch_norm_backward(dy, x, gain, eps))
    torch.testing.assert_close(got, expected, **_centering_tol(x, 0, eps))


@SETTINGS
@given(
    lead=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    n=st.integers(1, 64),
    value=st.floats(-1e3, 1e3),
    seed=seeds,
)
def test_layer_norm_of_constant_row_equals_bias(lead, n, value, seed):
    bias = np.random.default_rng(seed).standard_normal(n)
    y = lnf.layer_norm(np.full((*lead, n), value), np.ones(n), bias)
    assert np.all(np.isfinite(y))
    # One float64 centering leaves the rounding of the mean, ~ulp(value) / sqrt(eps), behind.
    np.testing.assert_allclose(y, np.broadcast_to(bias, y.shape), rtol=0, atol=1e-9)


@SETTINGS
@given(lead=st.lists(st.integers(1, 4), min_size=1, max_size=3), n=st.integers(1, 64), seed=seeds)
def test_rms_norm_of_zero_row_is_zero(lead, n, seed):
    gain = np.random.default_rng(seed).standard_normal(n)
    y = lnf.rms_norm(np.zeros((*lead, n)), gain)
    np.testing.assert_array_equal(y, np.zeros((*lead, n)))


X = np.random.default_rng(0).standard_normal((3, 4))
ONES, ZEROS = np.ones(4), np.zeros(4)

# Every function under one signature (x, gain, bias, eps); the backward passes get dy = 1.
CALLS = {
    "layer_norm": lambda x, g, b, eps: lnf.layer_norm(x, g, b, eps),
    "layer_norm_backward": lambda x, g, b, eps: lnf.layer_norm_backward(
        np.ones(np.shape(x)), x, g, eps
    ),
    "rms_norm": lambda x, g, b, eps: lnf.rms_norm(x, g, eps),
    "rms_norm_backward": lambda x, g, b, eps: lnf.rms_norm_backward(
        np.ones(np.shape(x)), x, g, eps
    ),
    "batch_norm": lambda x, g, b, eps: lnf.batch_norm(x, g, b, eps),
    "batch_norm_backward": lambda x, g, b, eps: lnf.batch_norm_backward(
        np.ones(np.shape(x)), x, g, eps
    ),
}


def _call(name, x=X, gain=ONES, bias=ZEROS, eps=1e-5):
    return CALLS[name](x, gain, bias, eps)


@pytest.mark.parametrize("name", CALLS)
def test_valid_call_does_not_raise(name):
    # The error tests below change one argument of this call.
    _call(name)


@pytest.mark.parametrize("eps", [0.0, -1e-5, math.nan, math.inf])
@pytest.mark.parametrize("name", CALLS)
def test_eps_not_positive_and_finite_raises(name, eps):
    with pytest.raises(ValueError, match=r"eps must be positive and finite"):
        _call(name, eps=eps)


@pytest.mark.parametrize("name", CALLS)
def test_non_numeric_eps_raises(name):
    with pytest.raises(ValueError, match=r"eps must be a positive float"):
        _call(name, eps="1e-5")


@pytest.mark.parametrize("name", CALLS)
def test_integer_input_raises(name):
    with pytest.raises(ValueError, match=r"x must have a floating dtype, got int"):
        _call(name, x=np.arange(12).reshape(3, 4))


@pytest.mark.parametrize("name", CALLS)
def test_scalar_input_raises(name):
    with pytest.raises(ValueError, match=r"x must have at least one axis, got a scalar"):
        _call(name, x=np.float64(1.0))


@pytest.mark.parametrize("bad", [math.nan, math.inf])
@pytest.mark.parametrize("name", CALLS)
def test_non_finite_input_raises(name, bad):
    x = X.copy()
    x[1, 2] = bad
    with pytest.raises(ValueError, match=r"x contains NaN or infinite values"):
        _call(name, x=x)


# (1,) and (3, 4) would broadcast against x of shape (3, 4) without complaint.
@pytest.mark.parametrize("shape", [(3,), (1,), (3, 4)])
@pytest.mark.parametrize("name", CALLS)
def test_gain_of_wrong_shape_raises(name, shape):
    with pytest.raises(ValueError, match=r"gain has shape .*, expected \(4,\)"):
        _call(name, gain=np.ones(shape))


@pytest.mark.parametrize("shape", [(3,), (1,), (3, 4)])
@pytest.mark.parametrize("name", ["layer_norm", "batch_norm"])
def test_bias_of_wrong_shape_raises(name, shape):
    with pytest.raises(ValueError, match=r"bias has shape .*, expected \(4,\)"):
        _call(name, bias=np.zeros(shape))


@pytest.mark.parametrize(
    "backward", [lnf.layer_norm_backward, lnf.rms_norm_backward, lnf.batch_norm_backward]
)
def test_dy_of_wrong_shape_raises(backward):
    with pytest.raises(ValueError, match=r"dy has shape \(4,\), expected \(3, 4\)"):
        backward(np.ones(4), X, ONES)


@pytest.mark.parametrize("name", ["batch_norm", "batch_norm_backward"])
def test_batch_norm_with_one_example_raises(name):
    with pytest.raises(ValueError, match=r"batch_norm needs at least 2 examples"):
        _call(name, x=X[:1])


@pytest.mark.parametrize("rms", [1e-4, 1e-3, 1e-2, 1.0, 100.0])
def test_rmsnorm_eps_on_the_rms_is_torchs_rmsnorm_times_the_predicted_factor(rms):
    # a / (r + eps) against a / sqrt(r^2 + eps): the ratio is sqrt(r^2 + eps) / (r + eps)
    rows = torch.randn(5, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    a = rms * rows / rows.pow(2).mean(dim=-1, keepdim=True).sqrt()
    ratio = variants.rms_eps_outside_sqrt(a, eps=1e-5) / tF.rms_norm(a, (64,), eps=1e-5)
    expected = math.sqrt(rms**2 + 1e-5) / (rms + 1e-5)
    assert torch.allclose(ratio, torch.full_like(ratio, expected), rtol=1e-12, atol=0)
