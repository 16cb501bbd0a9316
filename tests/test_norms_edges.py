"""The norms at their edges: float32 against float64 math, half precision, the errors they raise."""

import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as tF
from hypothesis import given
from hypothesis import strategies as st
from norms_helpers import (
    F64,
    HALF,
    SETTINGS,
    TOL,
    _as_rows,
    _from_rows,
    _np,
    _randn,
    _randomized,
    _t,
    lead_shapes,
    seeds,
)
from torch import nn

import lnpaper
from lnpaper import functional as lnf

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
