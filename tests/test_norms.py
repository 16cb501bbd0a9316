"""The torch modules in lnpaper.norms against PyTorch's modules, the numpy references, autograd and
float64 math, plus their errors."""

import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as tF
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

import lnpaper
from lnpaper import functional as lnf

F64 = torch.float64
HALF = [torch.float16, torch.bfloat16]
TOL = {"rtol": 1e-10, "atol": 1e-10}
SETTINGS = settings(max_examples=50)

seeds = st.integers(0, 2**32 - 1)
lead_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)
epsilons = st.sampled_from([1e-5, 1e-3, 0.1])


def _randn(shape, seed, dtype=F64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@st.composite
def values(draw, shape):
    """Normal values offset by up to 1e3 and spread by 1e-3 to 1e3, in float64."""
    offset = draw(st.floats(-1e3, 1e3))
    scale = 10.0 ** draw(st.floats(-3, 3))
    return offset + scale * _randn(shape, draw(seeds))


def _randomized(module, seed):
    """Every parameter set to random, non-default values, so that copying them matters."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype))
    return module


def _run(module, x, dy):
    """Output, input gradient and parameter gradients (by name) of sum(dy * module(x))."""
    module.zero_grad()
    x = x.clone().requires_grad_(True)
    y = module(x)
    y.backward(dy)
    return y.detach(), x.grad, {name: p.grad for name, p in module.named_parameters()}


def _tol(kappa):
    """rtol and atol for float64 results computed from (x - mean) / sqrt(var + eps).

    Centering leaves an error of about ulp(max|x|), which the division magnifies by
    kappa = max|x| / sqrt(var + eps): two correct implementations agree to 1e-10 on ordinary inputs
    but only to ~1e-16 * kappa (times the gradient's own amplification) on offset ones.
    """
    tol = max(1e-10, 1e-13 * kappa)
    return {"rtol": tol, "atol": tol}


def _centering_tol(x, dims, eps):
    var = x.var(dim=dims, correction=0)
    return _tol((x.abs().amax(dim=dims) / (var + eps).sqrt()).max().item())


def _t(a):
    return torch.from_numpy(np.asarray(a))


def _np(t):
    return t.detach().numpy()


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


def _as_rows(t):
    """(N, C) or (N, C, L) -> (N * L, C): one row per value the batch statistic averages over."""
    return _np(t.transpose(1, -1).reshape(-1, t.shape[1]))


def _from_rows(a, like):
    return _t(a).reshape(like.transpose(1, -1).shape).transpose(1, -1)


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


# --- edge numerics: float32 judged against float64 math --------------------------------------


def _relative_error(y, reference):
    """max |y - reference| / max |reference|, with y in float32 and the reference in float64."""
    return ((y.double() - reference).abs().max() / reference.abs().max()).item()


def _offset_rows(shape, seed):
    """float32 values with mean 1e4 and standard deviation 1e-2: the mean is 1e6 spreads away."""
    return (1e4 + 1e-2 * _randn(shape, seed)).float()


def _layer_norm_reference(x, module):
    """The numpy reference in float64 on the very float32 values and parameters the module saw."""
    gain, bias = (_np(p.double()) for p in (module.weight, module.bias))
    return _t(lnf.layer_norm(_np(x.double()), gain, bias, module.eps))


@pytest.mark.parametrize("hidden", [512, 1024])
def test_layer_norm_float32_large_offset_is_within_1e_3_relative(hidden):
    x = _offset_rows((8, hidden), seed=0)
    module = lnpaper.LayerNorm(hidden)
    assert _relative_error(module(x), _layer_norm_reference(x, module)) < 1e-3


# Documents why LayerNorm centers twice: torch's float32 layer_norm loses a 1e-2 spread at 1e4.
@pytest.mark.parametrize("hidden", [512, 1024])
def test_torch_layer_norm_float32_large_offset_is_worse_than_1e_3_relative(hidden):
    x = _offset_rows((8, hidden), seed=0)
    module = lnpaper.LayerNorm(hidden)
    assert _relative_error(tF.layer_norm(x, (hidden,)), _layer_norm_reference(x, module)) > 1e-3


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shape", [(6, 2), (5, 7), (8, 16), (4, 64), (2, 3, 512), (16, 1024)])
def test_layer_norm_float32_error_is_no_worse_than_torch_layer_norm(shape, seed):
    x = _randn(shape, seed, dtype=torch.float32)
    module = _randomized(lnpaper.LayerNorm(shape[-1]), seed)
    reference = _layer_norm_reference(x, module)
    theirs = tF.layer_norm(x, shape[-1:], module.weight, module.bias, module.eps)
    ours_error = (module(x).double() - reference).abs().max().item()
    theirs_error = (theirs.double() - reference).abs().max().item()
    ulp = torch.finfo(torch.float32).eps * reference.abs().max().item()  # at the output scale
    assert ours_error <= theirs_error + ulp


@pytest.mark.parametrize("shape", [(512, 4), (64, 4, 16)])
def test_batch_norm_training_float32_large_offset_is_within_1e_3_relative(shape):
    x = _offset_rows(shape, seed=0)
    module = lnpaper.BatchNorm(4)
    reference = _from_rows(lnf.batch_norm(_as_rows(x.double()), np.ones(4), np.zeros(4)), x)
    assert _relative_error(module(x), reference) < 1e-3


@SETTINGS
@given(
    lead=lead_shapes,
    normalized=st.lists(st.integers(1, 8), min_size=1, max_size=2),
    value=st.floats(-1e4, 1e4),
    dtype=st.sampled_from([torch.float32, F64]),
    seed=seeds,
)
def test_layer_norm_of_constant_row_equals_bias(lead, normalized, value, dtype, seed):
    module = _randomized(lnpaper.LayerNorm(normalized).to(dtype), seed)
    y = module(torch.full((*lead, *normalized), value, dtype=dtype))
    assert torch.equal(y, module.bias.expand_as(y))


@SETTINGS
@given(
    batch=st.integers(2, 8),
    channels=st.integers(1, 6),
    length=st.none() | st.integers(1, 5),
    value=st.floats(-1e4, 1e4),
    dtype=st.sampled_from([torch.float32, F64]),
    seed=seeds,
)
def test_batch_norm_training_of_constant_channels_equals_bias(
    batch, channels, length, value, dtype, seed
):
    shape = (batch, channels) if length is None else (batch, channels, length)
    per_channel = (1, channels) + (1,) * (len(shape) - 2)
    module = _randomized(lnpaper.BatchNorm(channels).to(dtype), seed)
    x = (value * _randn(channels, seed, dtype)).reshape(per_channel).expand(shape)
    y = module(x)
    assert torch.equal(y, module.bias.reshape(per_channel).expand(shape))


@SETTINGS
@given(batch=st.integers(1, 8), channels=st.integers(1, 6), value=st.floats(-1e4, 1e4), seed=seeds)
def test_batch_norm_eval_at_running_mean_with_zero_running_var_equals_bias(
    batch, channels, value, seed
):
    module = _randomized(lnpaper.BatchNorm(channels), seed).eval()
    module.running_mean.fill_(value)
    module.running_var.zero_()  # what training on a constant batch with momentum 1 leaves
    y = module(torch.full((batch, channels), value))
    assert torch.equal(y, module.bias.expand_as(y))


HALF_PRECISION_CASES = {
    "layer_norm": (lambda: lnpaper.LayerNorm((4, 8)), (3, 4, 8)),
    "rms_norm": (lambda: lnpaper.RMSNorm(8, eps=1e-6), (3, 8)),
    "prms_norm": (lambda: lnpaper.RMSNorm(8, eps=1e-6, partial=0.5), (3, 8)),
    "batch_norm_training": (lambda: lnpaper.BatchNorm(4), (3, 4, 5)),
    "batch_norm_eval": (lambda: lnpaper.BatchNorm(4).eval(), (3, 4)),
    "dyt": (lambda: lnpaper.DyT(8), (3, 8)),
}


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("case", HALF_PRECISION_CASES)
def test_half_precision_input_gives_float32_result_rounded_to_its_dtype(case, dtype):
    make, shape = HALF_PRECISION_CASES[case]
    module = _randomized(make(), seed=0)
    x = (3.0 + _randn(shape, seed=1)).to(dtype)
    y = module(x)
    assert y.dtype == dtype
    assert torch.equal(y, module(x.float()).to(dtype))


@pytest.mark.filterwarnings("ignore:Mismatch dtype between input and weight")
@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_rms_norm_default_eps_for_half_input_is_float32s_like_torch(dtype):
    module = lnpaper.RMSNorm(32)
    # A mean square of ~1e-4 is where an eps of ~1e-3 (float16) or ~8e-3 (bfloat16) would show.
    x = (1e-2 * _randn((4, 32), seed=0)).to(dtype)
    assert torch.equal(module(x), module(x.float()).to(dtype))
    torch.testing.assert_close(module(x), torch.nn.RMSNorm(32)(x))


# --- errors ----------------------------------------------------------------------------------

TRAILING_SHAPE_CASES = [
    (lambda: lnpaper.LayerNorm(4), (2, 3), (4,)),
    (lambda: lnpaper.LayerNorm((3, 4)), (2, 4, 3), (3, 4)),
    (lambda: lnpaper.LayerNorm((3, 4)), (4,), (3, 4)),
    (lambda: lnpaper.RMSNorm(4), (2, 3), (4,)),
    (lambda: lnpaper.RMSNorm((3, 4), partial=0.5), (2, 4, 3), (3, 4)),
    (lambda: lnpaper.DyT(4), (2, 3), (4,)),
    (lambda: lnpaper.WeightNormLinear(4, 2), (2, 3), (4,)),
]


@pytest.mark.parametrize("make, shape, normalized", TRAILING_SHAPE_CASES)
def test_trailing_shape_mismatch_raises_naming_both_shapes(make, shape, normalized):
    message = f"input of shape {shape} does not end in normalized_shape {normalized}"
    with pytest.raises(ValueError, match=re.escape(message)):
        make()(torch.zeros(shape))


@pytest.mark.parametrize("eps", [0.0, -1e-5, math.nan, math.inf])
@pytest.mark.parametrize("make", [lnpaper.LayerNorm, lnpaper.RMSNorm, lnpaper.BatchNorm])
def test_eps_not_positive_and_finite_raises(make, eps):
    with pytest.raises(ValueError, match=r"eps must be positive and finite"):
        make(4, eps=eps)


@pytest.mark.parametrize("make", [lnpaper.LayerNorm, lnpaper.RMSNorm, lnpaper.BatchNorm])
def test_non_numeric_eps_raises(make):
    with pytest.raises(ValueError, match=r"eps must be a positive float"):
        make(4, eps="1e-5")


INTEGER_INPUT_CASES = {
    "LayerNorm": lambda: lnpaper.LayerNorm(4),
    "RMSNorm": lambda: lnpaper.RMSNorm(4),
    "BatchNorm": lambda: lnpaper.BatchNorm(4),
    "WeightNormLinear": lambda: lnpaper.WeightNormLinear(4, 2),
    "DyT": lambda: lnpaper.DyT(4),
}


@pytest.mark.parametrize("name", INTEGER_INPUT_CASES)
def test_integer_input_raises(name):
    message = f"{name} needs a floating-point input, got dtype torch.int64"
    with pytest.raises(ValueError, match=re.escape(message)):
        INTEGER_INPUT_CASES[name]()(torch.ones(3, 4, dtype=torch.int64))


@pytest.mark.parametrize("partial", [0, 0.0, -0.1, 1.5, math.nan])
def test_partial_outside_zero_one_raises(partial):
    with pytest.raises(ValueError, match=r"partial must lie in \(0, 1\]"):
        lnpaper.RMSNorm(8, partial=partial)


@pytest.mark.parametrize("partial", ["half", True])
def test_non_numeric_partial_raises(partial):
    with pytest.raises(ValueError, match=r"partial must be a float in \(0, 1\] or None"):
        lnpaper.RMSNorm(8, partial=partial)


@pytest.mark.parametrize("shape", [(1, 3), (1, 3, 1)])
def test_batch_norm_training_with_one_value_per_channel_raises(shape):
    with pytest.raises(ValueError, match=r"needs more than 1 value per channel"):
        lnpaper.BatchNorm(3)(torch.zeros(shape))


def test_batch_norm_eval_with_one_example_matches_torch():
    ours = _randomized(lnpaper.BatchNorm(3).double(), seed=0).eval()
    ours.running_mean.copy_(_randn(3, seed=1))
    ours.running_var.copy_(_randn(3, seed=2).exp())
    theirs = nn.BatchNorm1d(3, dtype=F64).eval()
    theirs.load_state_dict(ours.state_dict(), strict=False)
    x = _randn((1, 3), seed=3)
    torch.testing.assert_close(ours(x), theirs(x), **TOL)


@pytest.mark.parametrize("shape", [(8, 3), (8, 5, 2), (8,), (2, 4, 3, 1)])
def test_batch_norm_wrong_channel_count_or_rank_raises(shape):
    message = f"BatchNorm(4) expects input (N, 4) or (N, 4, L), got shape {shape}"
    with pytest.raises(ValueError, match=re.escape(message)):
        lnpaper.BatchNorm(4)(torch.zeros(shape))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: lnpaper.LayerNorm(0), r"normalized_shape must be positive ints"),
        (lambda: lnpaper.LayerNorm(()), r"normalized_shape must be positive ints"),
        (lambda: lnpaper.RMSNorm((4, -1)), r"normalized_shape must be positive ints"),
        (lambda: lnpaper.DyT((2.0,)), r"normalized_shape must be positive ints"),
        (lambda: lnpaper.BatchNorm(0), r"num_features must be a positive int"),
        (lambda: lnpaper.BatchNorm(True), r"num_features must be a positive int, got True"),
        (lambda: lnpaper.BatchNorm(4, momentum=1.5), r"momentum must lie in \[0, 1\]"),
        (lambda: lnpaper.BatchNorm(4, momentum=-0.1), r"momentum must lie in \[0, 1\]"),
        (lambda: lnpaper.DyT(4, alpha_init=0.0), r"alpha_init must be positive and finite"),
        (lambda: lnpaper.DyT(4, alpha_init=math.inf), r"alpha_init must be positive and finite"),
    ],
)
def test_bad_constructor_argument_raises(make, message):
    with pytest.raises(ValueError, match=message):
        make()
