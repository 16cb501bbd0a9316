"""Rows whose statistic overflows though the row itself is finite (issue 21, section 2).

In float32 a row at 2.5e19 has squares beyond 3.4e38: the variance is inf, 1 / sqrt(inf) = 0, and
a norm written as (a - mu) / sqrt(sigma^2 + eps) returns its bias alone. The norms redo such rows
from a / max|a| (the same function); every other row, and every row holding inf or NaN itself (a
diverging run, which is counted, not refused), keeps the value the formula gives as written, bit
for bit.
"""

import math
import warnings

import numpy as np
import pytest
import torch
from torch.func import functional_call, stack_module_state, vmap

import lnpaper
from lnpaper import functional
from lnpaper.norms import DetachNorm, RecurrentBatchNorm, center

F64 = torch.float64
SQRT7 = math.sqrt(7)


def spike(scale: float, dtype=torch.float32, rows: int = 3) -> torch.Tensor:
    """Rows of 8 with one value `scale` and seven zeros: LayerNorm gives sqrt(7) and -1/sqrt(7)
    (RMSNorm sqrt(8) and 0) whatever the scale, once eps is negligible."""
    x = torch.zeros(rows, 8, dtype=dtype)
    x[:, 0] = scale
    return x


ROW_NORMS = {
    "LayerNorm": (lambda: lnpaper.LayerNorm(8), [SQRT7, -1 / SQRT7]),
    "RMSNorm": (lambda: lnpaper.RMSNorm(8), [math.sqrt(8), 0.0]),
    "pRMSNorm": (lambda: lnpaper.RMSNorm(8, partial=0.5), [2.0, 0.0]),
    "DetachNorm": (lambda: DetachNorm(8), [SQRT7, -1 / SQRT7]),
}


@pytest.mark.parametrize("scale", [2.5e19, 1e20, 1e30, 3e38])
@pytest.mark.parametrize("name", ROW_NORMS)
def test_float32_row_whose_variance_overflows_is_normalized(name, scale):
    make, (first, rest) = ROW_NORMS[name]
    y = make()(spike(scale))
    expected = torch.tensor([first] + [rest] * 7).expand(3, 8)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scale", [1e200, 1e300, 1.7e308])
@pytest.mark.parametrize("name", ROW_NORMS)
def test_float64_row_whose_variance_overflows_is_normalized(name, scale):
    make, (first, rest) = ROW_NORMS[name]
    y = make().double()(spike(scale, F64))
    expected = torch.tensor([first] + [rest] * 7, dtype=F64).expand(3, 8)
    torch.testing.assert_close(y, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", [2.5e19, 1e30])
def test_batch_norms_over_a_batch_whose_variance_overflows(scale):
    expected = torch.tensor([SQRT7] + [-1 / SQRT7] * 7)[:, None].expand(8, 3)
    y = lnpaper.BatchNorm(3)(spike(scale).T.contiguous())
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)
    y = RecurrentBatchNorm(3, max_steps=2, gain_init=1.0)(spike(scale).T.contiguous(), 0)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)
    x3 = spike(scale).T.contiguous()[:, :, None].expand(8, 3, 2)  # (N, C, L)
    torch.testing.assert_close(lnpaper.BatchNorm(3)(x3), expected[:, :, None].expand(8, 3, 2))


@pytest.mark.parametrize("name", ["LayerNorm", "RMSNorm", "DetachNorm"])
def test_gradient_of_an_overflowing_row_is_the_scaled_gradient_of_the_row(name):
    """d LN(s a) / d a = d LN(a) / d a / s (LN ignores the scale): at s = 1e30 in float32 the
    redone rows carry the gradient of the same function, not 0."""
    torch.manual_seed(0)
    make = ROW_NORMS[name][0]
    a = torch.randn(4, 8, dtype=F64) * 100  # eps = 1e-5 negligible against a variance of 1e4
    upstream = torch.randn(4, 8, dtype=F64)
    small = a.clone().requires_grad_()
    make().double()(small).backward(upstream)
    large = (a.float() * 1e30).requires_grad_()
    make()(large).backward(upstream.float())
    torch.testing.assert_close(large.grad.double() * 1e30, small.grad, rtol=1e-3, atol=0)


def test_only_the_overflowing_row_is_redone_the_others_keep_their_bits():
    torch.manual_seed(0)
    x = torch.randn(5, 8)
    before = lnpaper.LayerNorm(8)(x)
    x[2] = spike(1e30)[0]
    after = lnpaper.LayerNorm(8)(x)
    assert torch.equal(after[[0, 1, 3, 4]], before[[0, 1, 3, 4]])
    assert after[2, 0].item() == pytest.approx(SQRT7, rel=1e-6)


# ---- ordinary inputs and diverging runs: exactly the arithmetic as written -------------------


def layer_norm_as_written(a, eps=1e-5):
    """The formula before the overflow handling: what every recorded result was computed with."""
    centered = center(a, (-1,))
    return centered * torch.rsqrt(centered.pow(2).mean(dim=-1, keepdim=True) + eps)


def rms_norm_as_written(a):
    mean_square = a.pow(2).mean(dim=-1, keepdim=True)
    return a * torch.rsqrt(mean_square + torch.finfo(a.dtype).eps)


def batch_norm_as_written(a, eps=1e-5):
    centered = center(a, (0,))
    return centered * torch.rsqrt(centered.pow(2).mean(dim=0, keepdim=True) + eps)


AS_WRITTEN = {
    "LayerNorm": (lambda: lnpaper.LayerNorm(8, elementwise_affine=False), layer_norm_as_written),
    "RMSNorm": (lambda: lnpaper.RMSNorm(8), rms_norm_as_written),
    "BatchNorm": (lambda: lnpaper.BatchNorm(8), batch_norm_as_written),
}


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())


@pytest.mark.parametrize("dtype", [torch.float32, F64])
@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e3, 1e15])
@pytest.mark.parametrize("name", AS_WRITTEN)
def test_ordinary_inputs_give_the_bits_of_the_formula_as_written(name, scale, dtype):
    make, as_written = AS_WRITTEN[name]
    generator = torch.Generator().manual_seed(int(math.log10(scale)) + 7)
    x = (torch.randn(16, 8, generator=generator, dtype=dtype) * scale).requires_grad_()
    reference = x.detach().clone().requires_grad_()
    y, expected = make().to(dtype)(x), as_written(reference)
    assert same_bits(y, expected)
    upstream = torch.randn(16, 8, generator=generator, dtype=dtype)
    y.backward(upstream)
    expected.backward(upstream)
    assert same_bits(x.grad, reference.grad)


@pytest.mark.parametrize("name", AS_WRITTEN)
def test_a_diverging_run_inf_and_nan_inputs_behave_exactly_as_before(name):
    """Divergence is counted, not refused: a row holding inf or NaN gets what it always got."""
    make, as_written = AS_WRITTEN[name]
    x = torch.randn(16, 8, generator=torch.Generator().manual_seed(3))
    x[1, 2], x[4, 0], x[7] = math.inf, math.nan, -math.inf
    assert same_bits(make()(x), as_written(x))


def test_ordinary_inputs_match_torch_layer_norm():
    x = torch.randn(32, 64, generator=torch.Generator().manual_seed(5)) * 1e4
    ours = lnpaper.LayerNorm(64)(x)
    torch.testing.assert_close(ours, torch.nn.functional.layer_norm(x, (64,)))


def test_under_vmap_the_norm_computes_as_written():
    """Many seeds trained as one batch: a value cannot steer Python inside vmap, so the check
    steps aside and the computation is the plain formula."""
    models = [lnpaper.LayerNorm(8) for _ in range(3)]
    params, buffers = stack_module_state(models)
    x = torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(2))

    def one(p, b, xs):
        return functional_call(models[0], (p, b), (xs,))

    y = vmap(one)(params, buffers, x)
    assert torch.equal(y, torch.stack([m(xs) for m, xs in zip(models, x, strict=True)]))


# ---- the numpy references ----------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e155, 1e200, 1.7e308])
def test_numpy_references_normalize_a_row_whose_variance_overflows_without_a_warning(scale):
    x = np.zeros((2, 8))
    x[0, 0] = scale
    x[1] = np.arange(8.0)
    gain, bias = np.ones(8), np.zeros(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ln = functional.layer_norm(x, gain, bias)
        rms = functional.rms_norm(x, gain)
        bn = functional.batch_norm(x[:1].T.copy(), gain[:1], bias[:1])
        dx, dgain, _ = functional.layer_norm_backward(np.ones_like(x) * np.arange(8), x, gain)
    np.testing.assert_allclose(ln[0], [SQRT7] + [-1 / SQRT7] * 7, rtol=1e-12)
    np.testing.assert_allclose(rms[0], [math.sqrt(8)] + [0.0] * 7, rtol=1e-12)
    np.testing.assert_allclose(bn[:, 0], [SQRT7] + [-1 / SQRT7] * 7, rtol=1e-12)
    assert np.all(np.isfinite(dx)) and np.all(np.isfinite(dgain))
    # the ordinary row is untouched by the other row's overflow
    ordinary = functional.layer_norm(x[1:], gain, bias)
    assert np.array_equal(ln[1:], ordinary)


def test_numpy_backward_of_an_overflowing_row_is_the_scaled_backward():
    rng = np.random.default_rng(0)
    a, dy, gain = rng.standard_normal((3, 8)) * 100, rng.standard_normal((3, 8)), np.ones(8)
    small = functional.layer_norm_backward(dy, a, gain)[0]
    large = functional.layer_norm_backward(dy, a * 1e300, gain)[0]
    np.testing.assert_allclose(large * 1e300, small, rtol=1e-6)
    small = functional.rms_norm_backward(dy, a, gain)[0]
    large = functional.rms_norm_backward(dy, a * 1e300, gain)[0]
    np.testing.assert_allclose(large * 1e300, small, rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: lnpaper.norms.LayerNorm(8),
        lambda: lnpaper.norms.RMSNorm(8),
        lambda: lnpaper.norms.RMSNorm(8, partial=0.5),
        lambda: lnpaper.norms.BatchNorm(8),
        lambda: lnpaper.norms.DyT(8),
        lambda: lnpaper.norms.Derf(8),
        lambda: lnpaper.norms.WeightNormLinear(8, 4),
        lambda: DetachNorm(8, detach=("mean", "std")),
    ],
    ids=["LayerNorm", "RMSNorm", "pRMSNorm", "BatchNorm", "DyT", "Derf", "WeightNorm", "Detach"],
)
def test_every_normalizer_runs_on_the_meta_device(make):
    """Shapes without values (shape inference, a large model initialized before its memory): the
    overflow guard has no value to look at, and stays out of the way."""
    with torch.device("meta"):
        module = make()
        y = module(torch.empty(4, 8))
    assert y.is_meta and y.shape[0] == 4
    repr(module)  # a repr shows no value it does not have


def test_is_vmapped_tells_a_tensor_inside_vmap():
    seen = []

    def look(x):
        seen.append(lnpaper.norms.is_vmapped(x))
        return x

    vmap(look)(torch.ones(3, 2))
    assert seen == [True] and not lnpaper.norms.is_vmapped(torch.ones(3, 2))
