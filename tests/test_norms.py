"""The norms against PyTorch's modules, the numpy references, autograd and their own formulas."""

import math
import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from norms_helpers import (
    F64,
    SETTINGS,
    TOL,
    _as_rows,
    _centering_tol,
    _from_rows,
    _np,
    _randn,
    _randomized,
    _run,
    _t,
    _tol,
    epsilons,
    lead_shapes,
    seeds,
    values,
)
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

import lnpaper
from lnpaper import functional as lnf

# --- parity with PyTorch's modules, float64 ---------------------------------------------------


@SETTINGS
@given(
    lead=lead_shapes,
    normalized=st.lists(st.integers(1, 8), min_size=1, max_size=3),
    affine=st.booleans(),
    eps=epsilons,
    seed=seeds,
    data=st.data(),
)
def test_layer_norm_matches_torch_layer_norm(lead, normalized, affine, eps, seed, data):
    x = data.draw(values((*lead, *normalized)))
    dy = _randn(x.shape, seed)
    ours = _randomized(lnpaper.LayerNorm(normalized, eps, affine).double(), seed)
    theirs = nn.LayerNorm(normalized, eps, affine, dtype=F64)
    theirs.load_state_dict(ours.state_dict())
    dims = tuple(range(-len(normalized), 0))
    tol = _centering_tol(x, dims, eps)
    torch.testing.assert_close(_run(ours, x, dy), _run(theirs, x, dy), **tol)


@SETTINGS
@given(
    lead=lead_shapes,
    normalized=st.lists(st.integers(1, 8), min_size=1, max_size=3),
    eps=st.none() | epsilons,
    seed=seeds,
    data=st.data(),
)
def test_rms_norm_matches_torch_rms_norm(lead, normalized, eps, seed, data):
    x = data.draw(values((*lead, *normalized)))
    dy = _randn(x.shape, seed)
    ours = _randomized(lnpaper.RMSNorm(normalized, eps).double(), seed)
    theirs = nn.RMSNorm(normalized, eps, dtype=F64)
    theirs.load_state_dict(ours.state_dict())
    torch.testing.assert_close(_run(ours, x, dy), _run(theirs, x, dy), **TOL)


def _running_stats(module):
    return module.running_mean, module.running_var


@SETTINGS
@given(
    batch=st.integers(2, 8),
    channels=st.integers(1, 6),
    length=st.none() | st.integers(1, 5),
    momentum=st.floats(0.0, 1.0),
    eps=epsilons,
    seed=seeds,
    data=st.data(),
)
def test_batch_norm_matches_torch_batch_norm1d_over_training_steps_then_in_eval(
    batch, channels, length, momentum, eps, seed, data
):
    shape = (batch, channels) if length is None else (batch, channels, length)
    dims = (0,) if length is None else (0, 2)
    dy = _randn(shape, seed)
    ours = _randomized(lnpaper.BatchNorm(channels, eps, momentum).double(), seed)
    theirs = nn.BatchNorm1d(channels, eps, momentum, dtype=F64)
    theirs.load_state_dict(ours.state_dict(), strict=False)  # ours keeps no num_batches_tracked
    for _ in range(3):
        x = data.draw(values(shape))
        tol = _centering_tol(x, dims, eps)
        torch.testing.assert_close(_run(ours, x, dy), _run(theirs, x, dy), **tol)
        torch.testing.assert_close(_running_stats(ours), _running_stats(theirs), **tol)
    ours.eval()
    theirs.eval()
    x = data.draw(values(shape))
    # In eval mode x - running_mean is divided by sqrt(running_var + eps).
    tol = _tol(x.abs().max().item() / math.sqrt(ours.running_var.min().item() + eps))
    torch.testing.assert_close(_run(ours, x, dy), _run(theirs, x, dy), **tol)


WEIGHT_NORM_NAMES = {
    "direction": "parametrizations.weight.original1",  # v
    "scale": "parametrizations.weight.original0",  # g, shape (out, 1) in torch
    "bias": "bias",
}


@SETTINGS
@given(
    lead=lead_shapes,
    fan_in=st.integers(1, 16),
    fan_out=st.integers(1, 16),
    bias=st.booleans(),
    seed=seeds,
    data=st.data(),
)
def test_weight_norm_linear_matches_torch_weight_norm(lead, fan_in, fan_out, bias, seed, data):
    x = data.draw(values((*lead, fan_in)))
    dy = _randn((*lead, fan_out), seed)
    ours = _randomized(lnpaper.WeightNormLinear(fan_in, fan_out, bias).double(), seed)
    theirs = weight_norm(nn.Linear(fan_in, fan_out, bias, dtype=F64), dim=0)
    theirs_shape = {
        name: theirs.get_parameter(WEIGHT_NORM_NAMES[name]).shape for name in ours.state_dict()
    }
    theirs.load_state_dict(
        {
            WEIGHT_NORM_NAMES[name]: p.reshape(theirs_shape[name])
            for name, p in ours.state_dict().items()
        }
    )
    y, dx, grads = _run(theirs, x, dy)
    renamed = {
        name: grads[WEIGHT_NORM_NAMES[name]].reshape(p.shape) for name, p in ours.named_parameters()
    }
    torch.testing.assert_close(_run(ours, x, dy), (y, dx, renamed), **TOL)


# --- parity with the numpy references in lnpaper.functional ---------------------------------------


@SETTINGS
@given(lead=lead_shapes, n=st.integers(1, 64), eps=epsilons, seed=seeds, data=st.data())
def test_layer_norm_matches_numpy_reference(lead, n, eps, seed, data):
    x = data.draw(values((*lead, n)))
    dy = _randn(x.shape, seed)
    module = _randomized(lnpaper.LayerNorm(n, eps).double(), seed)
    gain, bias = _np(module.weight), _np(module.bias)
    dx, dgain, dbias = lnf.layer_norm_backward(_np(dy), _np(x), gain, eps)
    expected = (
        _t(lnf.layer_norm(_np(x), gain, bias, eps)),
        _t(dx),
        {"weight": _t(dgain), "bias": _t(dbias)},
    )
    torch.testing.assert_close(_run(module, x, dy), expected, **_centering_tol(x, (-1,), eps))


@SETTINGS
@given(lead=lead_shapes, n=st.integers(1, 64), eps=epsilons, seed=seeds, data=st.data())
def test_rms_norm_matches_numpy_reference(lead, n, eps, seed, data):
    x = data.draw(values((*lead, n)))
    dy = _randn(x.shape, seed)
    module = _randomized(lnpaper.RMSNorm(n, eps).double(), seed)
    gain = _np(module.weight)
    dx, dgain = lnf.rms_norm_backward(_np(dy), _np(x), gain, eps)
    expected = (_t(lnf.rms_norm(_np(x), gain, eps)), _t(dx), {"weight": _t(dgain)})
    torch.testing.assert_close(_run(module, x, dy), expected, **TOL)


@SETTINGS
@given(
    batch=st.integers(2, 8),
    channels=st.integers(1, 6),
    length=st.none() | st.integers(1, 5),
    eps=epsilons,
    seed=seeds,
    data=st.data(),
)
def test_batch_norm_in_training_mode_matches_numpy_reference(
    batch, channels, length, eps, seed, data
):
    shape = (batch, channels) if length is None else (batch, channels, length)
    x = data.draw(values(shape))
    dy = _randn(shape, seed)
    module = _randomized(lnpaper.BatchNorm(channels, eps).double(), seed)
    gain, bias = _np(module.weight), _np(module.bias)
    dx, dgain, dbias = lnf.batch_norm_backward(_as_rows(dy), _as_rows(x), gain, eps)
    expected = (
        _from_rows(lnf.batch_norm(_as_rows(x), gain, bias, eps), x),
        _from_rows(dx, x),
        {"weight": _t(dgain), "bias": _t(dbias)},
    )
    dims = (0,) if length is None else (0, 2)
    torch.testing.assert_close(_run(module, x, dy), expected, **_centering_tol(x, dims, eps))


# --- gradcheck, float64 ------------------------------------------------------------------------

GRADCHECK_CASES = {
    "layer_norm": (lambda: lnpaper.LayerNorm((3, 4)), (2, 3, 4)),
    "layer_norm_without_affine": (lambda: lnpaper.LayerNorm(5, elementwise_affine=False), (3, 5)),
    "rms_norm": (lambda: lnpaper.RMSNorm(5), (3, 5)),
    "prms_norm": (lambda: lnpaper.RMSNorm(8, eps=1e-6, partial=0.25), (3, 8)),
    "batch_norm_training_2d": (lambda: lnpaper.BatchNorm(3), (4, 3)),
    "batch_norm_training_3d": (lambda: lnpaper.BatchNorm(3), (2, 3, 4)),
    "batch_norm_eval": (lambda: lnpaper.BatchNorm(3).eval(), (4, 3)),
    "weight_norm_linear": (lambda: lnpaper.WeightNormLinear(4, 3), (2, 4)),
    "dyt": (lambda: lnpaper.DyT(4), (2, 4)),
}


@pytest.mark.parametrize("case", GRADCHECK_CASES)
def test_gradcheck_input_and_parameters(case):
    make, shape = GRADCHECK_CASES[case]
    module = _randomized(make().double(), seed=0)
    names = [name for name, _ in module.named_parameters()]
    params = [p.detach().clone().requires_grad_(True) for p in module.parameters()]

    def f(x, *params):
        return torch.func.functional_call(module, dict(zip(names, params, strict=True)), (x,))

    x = _randn(shape, seed=1).requires_grad_(True)
    assert torch.autograd.gradcheck(f, (x, *params))


# --- pRMSNorm --------------------------------------------------------------------------------

ROUNDINGS = ("truncate", "ceil")


def _fraction_for(n, k, rounding):
    """A p whose p * n rounds to k: half a unit above k (truncate; p = 1 at k = n) or below (ceil)."""
    return (k - 0.5) / n if rounding == "ceil" else min(1.0, (k + 0.5) / n)


@st.composite
def partial_cases(draw):
    """(n, k, p, rounding) with p * n rounded by `rounding` equal to k."""
    n = draw(st.integers(1, 64))
    k = draw(st.integers(1, n))
    rounding = draw(st.sampled_from(ROUNDINGS))
    return n, k, _fraction_for(n, k, rounding), rounding


@SETTINGS
@given(case=partial_cases(), lead=lead_shapes, seed=seeds)
def test_prms_norm_scales_by_rms_of_first_k_units(case, lead, seed):
    n, k, p, rounding = case
    x = _randn((*lead, n), seed)
    module = _randomized(lnpaper.RMSNorm(n, eps=1e-6, partial=p, rounding=rounding).double(), seed)
    rms = (x[..., :k].pow(2).mean(dim=-1, keepdim=True) + 1e-6).sqrt()
    assert module.n_stat == k
    torch.testing.assert_close(module(x), module.weight * x / rms, **TOL)


# int(p * n) is what Zhang & Sennrich's PyTorch and TensorFlow code compute
@pytest.mark.parametrize("rounding, count", [("truncate", int), ("ceil", math.ceil)])
@pytest.mark.parametrize("n", [16, 17, 31, 33, 50, 64, 100, 1000])
def test_prms_norm_equals_the_formula_with_its_rounding(rounding, count, n):
    p = 0.0625  # exact in binary, so p * n is exact too
    x = _randn((3, n), seed=n)
    module = _randomized(lnpaper.RMSNorm(n, eps=1e-6, partial=p, rounding=rounding).double(), n)
    k = count(p * n)
    expected = module.weight * x / (x[:, :k].pow(2).mean(dim=-1, keepdim=True) + 1e-6).sqrt()
    torch.testing.assert_close(module(x), expected, **TOL)


def test_prms_norm_truncates_by_default_as_the_authors_code_does():
    assert lnpaper.RMSNorm(33, partial=0.0625).rounding == "truncate"
    assert lnpaper.RMSNorm(33, partial=0.0625).n_stat == 2
    assert lnpaper.RMSNorm(33, partial=0.0625, rounding="ceil").n_stat == 3


@st.composite
def partial_cases_with_a_later_unit(draw):
    """(n, k, p, rounding, j) as in partial_cases, with k < n and a unit j >= k the statistic skips."""
    n = draw(st.integers(2, 64))
    k = draw(st.integers(1, n - 1))
    rounding = draw(st.sampled_from(ROUNDINGS))
    return n, k, _fraction_for(n, k, rounding), rounding, draw(st.integers(k, n - 1))


@SETTINGS
@given(case=partial_cases_with_a_later_unit(), seed=seeds)
def test_prms_norm_later_unit_changes_only_its_own_output(case, seed):
    n, _, p, rounding, later = case
    module = lnpaper.RMSNorm(n, partial=p, rounding=rounding).double()
    x = _randn((n,), seed)
    changed = x.clone()
    changed[later] += 1.0
    y, y_changed = module(x), module(changed)
    others = torch.arange(n) != later
    assert torch.equal(y_changed[others], y[others])
    assert y_changed[later] != y[later]


def _grow(x, unit):
    """x with |x[..., unit]| made larger, so that any mean square including it grows."""
    grown = x.clone()
    grown[..., unit] = 2 * x[..., unit].abs() + 1
    return grown


@SETTINGS
@given(case=partial_cases(), seed=seeds)
def test_prms_norm_last_used_unit_changes_every_output(case, seed):
    n, k, p, rounding = case
    module = lnpaper.RMSNorm(n, partial=p, rounding=rounding).double()
    x = _randn((n,), seed)
    others = torch.arange(n) != k - 1
    assert torch.all(module(_grow(x, k - 1))[others] != module(x)[others])


@SETTINGS
@given(lead=lead_shapes, normalized=st.lists(st.integers(1, 8), min_size=1, max_size=2), seed=seeds)
def test_prms_norm_with_partial_one_equals_rms_norm(lead, normalized, seed):
    x = _randn((*lead, *normalized), seed)
    full = _randomized(lnpaper.RMSNorm(normalized).double(), seed)
    partial = _randomized(lnpaper.RMSNorm(normalized, partial=1.0).double(), seed)
    torch.testing.assert_close(partial(x), full(x), rtol=0, atol=0)


def test_prms_norm_at_1024_units_with_p_one_sixteenth_uses_64_units():
    module = lnpaper.RMSNorm(1024, partial=0.0625).double()
    x = _randn((2, 1024), seed=0)
    y = module(x)
    expected = x / (x[:, :64].pow(2).mean(dim=-1, keepdim=True) + torch.finfo(F64).eps).sqrt()
    torch.testing.assert_close(y, expected, **TOL)
    assert torch.equal(module(_grow(x, 64))[:, :64], y[:, :64])
    assert torch.all(module(_grow(x, 63))[:, :63] != y[:, :63])


def test_prms_norm_unit_count_is_not_moved_by_binary_rounding_of_p():
    # In binary, 0.28 * 25 is 7.000000000000001 and 0.29 * 100 is 28.999999999999996.
    assert lnpaper.RMSNorm(25, partial=0.28, rounding="ceil").n_stat == 7
    assert lnpaper.RMSNorm(25, partial=0.2801, rounding="ceil").n_stat == 8
    assert lnpaper.RMSNorm(100, partial=0.29).n_stat == 29
    assert lnpaper.RMSNorm(100, partial=0.2899).n_stat == 28


@pytest.mark.parametrize("n, partial", [(15, 0.0625), (1, 0.5), (3, 0.3)])
def test_prms_norm_that_would_use_no_unit_raises(n, partial):
    message = (
        f"pRMSNorm would average over no unit: partial={partial!r} of n={n} units is "
        f"{partial * n:.9g}, which rounding='truncate' makes 0"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        lnpaper.RMSNorm(n, partial=partial)
    assert lnpaper.RMSNorm(n, partial=partial, rounding="ceil").n_stat == 1


@pytest.mark.parametrize("partial", [None, 0.5])
def test_unknown_rounding_raises(partial):
    message = "rounding must be one of ('truncate', 'ceil'), got 'round'"
    with pytest.raises(ValueError, match=re.escape(message)):
        lnpaper.RMSNorm(8, partial=partial, rounding="round")


# --- DyT -------------------------------------------------------------------------------------


@SETTINGS
@given(lead=lead_shapes, n=st.integers(1, 64), seed=seeds, data=st.data())
def test_dyt_equals_gamma_tanh_alpha_x_plus_beta(lead, n, seed, data):
    x = data.draw(values((*lead, n)))
    module = _randomized(lnpaper.DyT(n).double(), seed)
    expected = module.weight * torch.tanh(module.alpha * x) + module.bias
    torch.testing.assert_close(module(x), expected, **TOL)


@SETTINGS
@given(alpha_init=st.floats(2**-10, 2**10, width=32), n=st.integers(1, 16), seed=seeds)
def test_dyt_starts_at_alpha_init_with_unit_gain_and_zero_bias(alpha_init, n, seed):
    module = lnpaper.DyT(n, alpha_init=alpha_init)
    x = _randn((3, n), seed, dtype=torch.float32)
    assert module.alpha.item() == alpha_init
    torch.testing.assert_close(module(x), torch.tanh(alpha_init * x))


def test_dyt_alpha_init_defaults_to_one_half():
    assert lnpaper.DyT(4).alpha.item() == 0.5


class ReferenceShapedDyT(nn.Module):
    """DyT with the parameters named and shaped as in Zhu et al.'s DynamicTanh: alpha of shape (1,),
    weight and bias of the normalized shape; written here from the formula."""

    def __init__(self, n: int):
        super().__init__()
        self.alpha = nn.Parameter(torch.full((1,), 0.5))
        self.weight = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        return self.weight * torch.tanh(self.alpha * x) + self.bias


def test_dyt_state_dict_loads_into_the_reference_shape_and_back():
    ours = _randomized(lnpaper.DyT(6).double(), seed=0)
    reference = ReferenceShapedDyT(6).double()
    reference.load_state_dict(ours.state_dict())  # strict: same names, same shapes
    x = _randn((3, 6), seed=1)
    torch.testing.assert_close(reference(x), ours(x), rtol=0, atol=0)
    back = lnpaper.DyT(6).double()
    back.load_state_dict(_randomized(reference, seed=2).state_dict())
    torch.testing.assert_close(back(x), reference(x), rtol=0, atol=0)


# --- WeightNormLinear ------------------------------------------------------------------------


@SETTINGS
@given(fan_in=st.integers(1, 16), fan_out=st.integers(1, 16), bias=st.booleans(), seed=seeds)
def test_weight_norm_linear_starts_equal_to_linear_with_same_weight(fan_in, fan_out, bias, seed):
    torch.manual_seed(seed)
    ours = lnpaper.WeightNormLinear(fan_in, fan_out, bias)
    torch.manual_seed(seed)
    plain = nn.Linear(fan_in, fan_out, bias)  # draws the same weight and bias as ours did
    x = _randn((5, fan_in), seed, dtype=torch.float32)
    torch.testing.assert_close(ours(x), plain(x))


@SETTINGS
@given(
    lead=lead_shapes,
    fan_in=st.integers(1, 16),
    fan_out=st.integers(1, 16),
    factor=st.floats(1e-3, 1e3),
    seed=seeds,
)
def test_weight_norm_linear_output_ignores_positive_scaling_of_direction(
    lead, fan_in, fan_out, factor, seed
):
    module = _randomized(lnpaper.WeightNormLinear(fan_in, fan_out).double(), seed)
    x = _randn((*lead, fan_in), seed)
    y = module(x)
    with torch.no_grad():
        module.direction.mul_(factor)
    torch.testing.assert_close(module(x), y, **TOL)
