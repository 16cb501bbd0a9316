"""Derf and DetachNorm (notebook 10): each computes its formula, and DetachNorm cuts exactly the
gradients it names."""

import pytest
import torch

from lnpaper.norms import Derf, DetachNorm, LayerNorm


def test_derf_computes_gamma_erf_alpha_x_plus_s_plus_beta():
    torch.manual_seed(0)
    derf = Derf(8, alpha_init=0.7, shift_init=0.1).double()
    with torch.no_grad():
        derf.weight.normal_()
        derf.bias.normal_()
    x = 3 * torch.randn(5, 8, dtype=torch.float64)
    expected = derf.weight * torch.erf(derf.alpha * x + derf.shift) + derf.bias
    assert abs(derf.alpha.item() - 0.7) < 1e-7 and abs(derf.shift.item() - 0.1) < 1e-7
    assert torch.allclose(derf(x), expected, rtol=0, atol=1e-15)
    assert derf.alpha.shape == derf.shift.shape == (1,)
    assert torch.autograd.gradcheck(derf, (x.requires_grad_(),))


def test_derf_is_bounded_and_keeps_the_input_dtype():
    derf = Derf(4)
    x = torch.tensor([[1e30, -1e30, 0.0, 1.0]], dtype=torch.bfloat16)
    y = derf(x)
    assert y.dtype == torch.bfloat16
    assert y.float().abs().max() <= 1
    assert torch.isfinite(y.float()).all()


@pytest.mark.parametrize("bad", [{"alpha_init": 0.0}, {"alpha_init": float("nan")},
                                 {"shift_init": float("inf")}])  # fmt: skip
def test_derf_refuses_bad_inits(bad):
    with pytest.raises(ValueError, match="init"):
        Derf(4, **bad)


@pytest.mark.parametrize("detach", [(), ("mean",), ("std",), ("mean", "std")])
def test_detachnorm_forward_is_layernorm(detach):
    torch.manual_seed(1)
    x = torch.randn(6, 16, dtype=torch.float64) * 4 + 100  # a large offset
    layer_norm, detached = LayerNorm(16).double(), DetachNorm(16, detach=detach).double()
    with torch.no_grad():
        for module in (layer_norm, detached):
            module.weight.copy_(torch.linspace(0.5, 2, 16))
            module.bias.copy_(torch.linspace(-1, 1, 16))
    assert torch.allclose(detached(x), layer_norm(x), rtol=0, atol=1e-12)


def input_gradient(module, x, upstream):
    x = x.clone().requires_grad_()
    (module(x) * upstream).sum().backward()
    return x.grad


def test_detachnorm_cuts_exactly_the_named_gradients():
    torch.manual_seed(2)
    x = torch.randn(6, 16, dtype=torch.float64)
    upstream = torch.randn(6, 16, dtype=torch.float64)
    full = input_gradient(DetachNorm(16, detach=()).double(), x, upstream)
    plain = input_gradient(LayerNorm(16).double(), x, upstream)
    assert torch.allclose(full, plain, rtol=0, atol=1e-12)
    # both statistics constant: the gradient is g * upstream / sigma, nothing else
    both = input_gradient(DetachNorm(16).double(), x, upstream)
    sigma = (x.var(dim=-1, unbiased=False, keepdim=True) + 1e-5).sqrt()
    assert torch.allclose(both, upstream / sigma, rtol=0, atol=1e-12)
    # the mean's gradient is the projection off 1: without it the row sums of the gradient are
    # no longer 0 (LayerNorm's input gradient always sums to 0 over the row)
    assert full.sum(dim=-1).abs().max() < 1e-12
    mean_cut = input_gradient(DetachNorm(16, detach=("mean",)).double(), x, upstream)
    assert mean_cut.sum(dim=-1).abs().max() > 1e-3
    std_cut = input_gradient(DetachNorm(16, detach=("std",)).double(), x, upstream)
    assert not torch.allclose(std_cut, full) and not torch.allclose(std_cut, both)


@pytest.mark.parametrize("detach", [("var",), ("mean", "mean"), "mean"])
def test_detachnorm_refuses_unknown_statistics(detach):
    with pytest.raises(ValueError, match="detach"):
        DetachNorm(8, detach=detach)
