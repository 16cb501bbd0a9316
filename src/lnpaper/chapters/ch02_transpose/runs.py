"""Experiments of notebook 02, the transpose: claims F1-F4."""

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from lnpaper import functional
from lnpaper.chapters.ch02_transpose import variants
from lnpaper.companion.record import experiment
from lnpaper.norms import BatchNorm, LayerNorm


@dataclass
class ParityResult:
    shapes: list  # input shapes tried; the last axis is normalized
    max_diff_module: float  # |lnpaper.LayerNorm - torch.nn.LayerNorm|, float64
    max_diff_numpy: float  # |lnpaper.functional.layer_norm - torch.nn.LayerNorm|, float64
    max_diff_unbiased: float  # what dividing by H - 1 instead of H would change
    max_diff_eps_outside: float  # what moving eps out of the square root would change
    init_gain: float  # the value every gain starts at (Sec. 6: 1)
    init_bias: float  # the value every bias starts at (Sec. 6: 0)


@experiment
def layernorm_parity(*, shapes=((4, 8), (2, 5, 32), (3, 1024)), seed: int = 0) -> ParityResult:
    """F1: lnpaper's LayerNorm, the numpy reference and torch.nn.LayerNorm are one function. So that
    the check can fail, it also measures how far the unbiased-variance and eps-outside-sqrt versions
    land: far above float64 rounding."""
    generator = torch.Generator().manual_seed(seed)
    module_diff = numpy_diff = unbiased_diff = outside_diff = 0.0
    for shape in shapes:
        h = shape[-1]
        # Row scales span 1e-3..1e2: small spreads expose where eps sits, short rows the 1/(H-1).
        scale = 10 ** (5 * torch.rand(*shape[:-1], 1, generator=generator) - 3)
        x = (scale * torch.randn(*shape, generator=generator)).double()
        gain = 1 + 0.5 * torch.randn(h, generator=generator).double()
        bias = 0.5 * torch.randn(h, generator=generator).double()
        reference = F.layer_norm(x, (h,), gain, bias, eps=1e-5)
        ours = LayerNorm(h).double()
        with torch.no_grad():
            ours.weight.copy_(gain)
            ours.bias.copy_(bias)
            module_diff = max(module_diff, (ours(x) - reference).abs().max().item())
        numpy_out = functional.layer_norm(x.numpy(), gain.numpy(), bias.numpy(), eps=1e-5)
        numpy_diff = max(numpy_diff, np.abs(numpy_out - reference.numpy()).max())
        unbiased = variants.unbiased_var_eps_inside(x) * gain + bias
        outside = variants.eps_outside_sqrt(x) * gain + bias
        unbiased_diff = max(unbiased_diff, (unbiased - reference).abs().max().item())
        outside_diff = max(outside_diff, (outside - reference).abs().max().item())
    fresh = LayerNorm(8)
    return ParityResult(
        shapes=[list(s) for s in shapes],
        max_diff_module=module_diff,
        max_diff_numpy=float(numpy_diff),
        max_diff_unbiased=unbiased_diff,
        max_diff_eps_outside=outside_diff,
        init_gain=float(fresh.weight.unique().item()),
        init_bias=float(fresh.bias.unique().item()),
    )


@dataclass
class PerTokenResult:
    perturbed: list  # [b, t] of the token that was changed
    layernorm_change: list  # [b][t]: max |change| of that token's LayerNorm output
    batchnorm_change: list  # [b][t]: the same for BatchNorm over every (b, t) of a feature
    layernorm_max_other: float  # largest change of any token other than the perturbed one
    batchnorm_max_other: float


@experiment
def per_token_independence(
    *, batch: int = 4, tokens: int = 12, d_model: int = 32, seed: int = 0
) -> PerTokenResult:
    """F2: in a B x T x d tensor LayerNorm normalizes each (b, t) over its d features alone, so changing
    one token changes no other token's output. BatchNorm over the same tensor mixes all of them."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, tokens, d_model, generator=generator)
    b, t = 1, tokens // 2
    moved = x.clone()
    moved[b, t] += 3 * torch.randn(d_model, generator=generator)
    layernorm = LayerNorm(d_model)
    batchnorm = BatchNorm(d_model)  # training mode: statistics over every token in the batch

    def per_token_change(norm, channels_last: bool):
        if channels_last:
            y0, y1 = norm(x), norm(moved)
        else:  # BatchNorm1d's layout is (N, C, L)
            y0, y1 = (norm(v.transpose(1, 2)).transpose(1, 2) for v in (x, moved))
        return (y1 - y0).abs().amax(dim=-1)

    with torch.no_grad():
        ln_change = per_token_change(layernorm, channels_last=True)
        bn_change = per_token_change(batchnorm, channels_last=False)
    others = torch.ones(batch, tokens, dtype=torch.bool)
    others[b, t] = False
    return PerTokenResult(
        perturbed=[b, t],
        layernorm_change=ln_change.tolist(),
        batchnorm_change=bn_change.tolist(),
        layernorm_max_other=ln_change[others].max().item(),
        batchnorm_max_other=bn_change[others].max().item(),
    )


@dataclass
class BackwardResult:
    shape: list
    max_diff_dx: float  # hand-derived backward (numpy) vs torch autograd, float64
    max_diff_dgain: float
    max_diff_dbias: float
    gradcheck_passed: bool  # torch.autograd.gradcheck on lnpaper.LayerNorm
    max_dx_sum: float  # sum_i dx_i: the gradient has no component along the all-ones vector


@experiment
def backward_parity(*, shape=(6, 16), seed: int = 0) -> BackwardResult:
    """F3: the closed-form backward pass equals autograd."""
    generator = torch.Generator().manual_seed(seed)
    h = shape[-1]
    x = torch.randn(*shape, generator=generator, dtype=torch.float64, requires_grad=True)
    gain = (1 + 0.5 * torch.randn(h, generator=generator, dtype=torch.float64)).requires_grad_()
    bias = (0.5 * torch.randn(h, generator=generator, dtype=torch.float64)).requires_grad_()
    dy = torch.randn(*shape, generator=generator, dtype=torch.float64)
    F.layer_norm(x, (h,), gain, bias, eps=1e-5).backward(dy)
    dx, dgain, dbias = functional.layer_norm_backward(
        dy.numpy(), x.detach().numpy(), gain.detach().numpy(), eps=1e-5
    )
    module = LayerNorm(h).double()
    small = torch.randn(3, h, generator=generator, dtype=torch.float64, requires_grad=True)
    return BackwardResult(
        shape=list(shape),
        max_diff_dx=float(np.abs(dx - x.grad.numpy()).max()),
        max_diff_dgain=float(np.abs(dgain - gain.grad.numpy()).max()),
        max_diff_dbias=float(np.abs(dbias - bias.grad.numpy()).max()),
        gradcheck_passed=bool(torch.autograd.gradcheck(module, (small,))),
        max_dx_sum=float(np.abs(dx.sum(axis=-1)).max()),
    )


@dataclass
class VariantsResult:
    width: int  # H
    stds: list  # the spread of the rows, one value per point
    ratios: dict  # variant name -> [mean over rows of |variant| / |nn.LayerNorm| per std]
    eps: dict  # variant name -> the eps it was run with, its source's
    reference_eps: float  # nn.LayerNorm's


REFERENCE_EPS = 1e-5  # torch.nn.LayerNorm's default
# Each variant with the eps of the code it comes from (see this chapter's variants), so that each curve is
# that code's function: on rows of small spread the size of eps moves the curve, not only its place.
VARIANTS = {
    "eps outside the sqrt": (variants.eps_outside_sqrt, 1e-5),
    "unbiased std, eps outside (Annotated Transformer)": (variants.unbiased_std_eps_outside, 1e-6),
    "unbiased var, eps inside (x.var())": (variants.unbiased_var_eps_inside, 1e-5),
}


@experiment
def variants_vs_scale(
    *,
    width: int = 64,
    stds=tuple(10.0 ** (k / 4) for k in range(-16, 5)),
    rows: int = 256,
    seed: int = 0,
) -> VariantsResult:
    """F4: every variant is c * (a - mu) with its own c, so one number per row says how far it is from
    torch.nn.LayerNorm: the ratio of output norms. It depends on H and on the row's spread."""
    generator = torch.Generator().manual_seed(seed)
    base = torch.randn(rows, width, generator=generator, dtype=torch.float64)
    ratios = {name: [] for name in VARIANTS}
    for std in stds:
        x = std * base
        reference = F.layer_norm(x, (width,), eps=REFERENCE_EPS).norm(dim=-1)
        for name, (variant, eps) in VARIANTS.items():
            ratios[name].append((variant(x, eps=eps).norm(dim=-1) / reference).mean().item())
    return VariantsResult(
        width=width,
        stds=list(stds),
        ratios=ratios,
        eps={name: eps for name, (_, eps) in VARIANTS.items()},
        reference_eps=REFERENCE_EPS,
    )


@dataclass
class OnePassResult:
    std: float
    width: int
    offsets: list  # the row means tried
    variance_error: dict  # method -> [median relative error of the float32 variance per offset]
    nonpositive_fraction: list  # share of rows whose one-pass variance came out <= 0, per offset
    layernorm_error: dict  # implementation -> [max relative error of the float32 output per offset]


@experiment
def one_pass_variance(
    *,
    offsets=(0.0, 1.0, 10.0, 100.0, 1e3, 1e4),
    std: float = 0.01,
    width: int = 1024,
    rows: int = 64,
    seed: int = 0,
) -> OnePassResult:
    """F4 and the numerics of Sec. 3: float32 rows with a large mean and a small spread.

    Every error is judged against float64 math on the same float32 values, so it measures the
    arithmetic, not the rounding of the input.
    """
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(rows, width, generator=generator, dtype=torch.float64)
    variance_methods = {
        "one pass E[a^2] - E[a]^2": variants.one_pass_variance,
        "two pass E[(a - mu)^2]": variants.two_pass_variance,
        "two pass, mean removed twice": variants.recentered_variance,
    }
    variance_error = {name: [] for name in variance_methods}
    layernorm_error = {"torch.nn.functional.layer_norm": [], "lnpaper.LayerNorm": []}
    nonpositive = []
    ours = LayerNorm(width, elementwise_affine=False)
    for offset in offsets:
        x32 = (offset + std * noise).float()
        exact = x32.double()
        true_var = variants.two_pass_variance(exact)
        for name, method in variance_methods.items():
            error = (method(x32).double() - true_var).abs() / true_var
            variance_error[name].append(error.median().item())
        nonpositive.append((variants.one_pass_variance(x32) <= 0).double().mean().item())
        reference = F.layer_norm(exact, (width,), eps=1e-5)
        outputs = {
            "torch.nn.functional.layer_norm": F.layer_norm(x32, (width,), eps=1e-5),
            "lnpaper.LayerNorm": ours(x32).detach(),
        }
        for name, y in outputs.items():
            error = (y.double() - reference).abs().max() / reference.abs().max()
            layernorm_error[name].append(error.item())
    return OnePassResult(
        std=std,
        width=width,
        offsets=list(offsets),
        variance_error=variance_error,
        nonpositive_fraction=nonpositive,
        layernorm_error=layernorm_error,
    )
