"""LayerNorm as it is written in the wild: the variants that are *not* the same function.

Each is the formula a well-known codebase or tutorial uses, kept here so notebook 02 can measure how far
it sits from torch.nn.LayerNorm (biased variance, eps = 1e-5 inside the square root): claim F4. A
variant's default eps is the one its source uses: on rows of small spread, how large eps is matters
as much as where it sits. Notebook 07 does the same for RMSNorm's eps. All take a torch tensor and
normalize over the last axis, without gain or bias.
"""

import torch

from lnpaper.norms import center


def eps_outside_sqrt(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """(a - mu) / (sigma + eps), biased sigma: the authors' Lua/Torch module (ryankiros/layer-norm,
    torch_modules/LayerNormalization.lua) puts eps, 1e-5 by default, on the std."""
    centered = x - x.mean(dim=-1, keepdim=True)
    sigma = centered.pow(2).mean(dim=-1, keepdim=True).sqrt()
    return centered / (sigma + eps)


def unbiased_std_eps_outside(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """(a - mu) / (std + eps) with the unbiased std (1/(H-1)): the Annotated Transformer's LayerNorm,
    whose eps is 1e-6.

    `x.std()` in PyTorch is unbiased by default, which is how this variant usually arises.
    """
    return (x - x.mean(dim=-1, keepdim=True)) / (x.std(dim=-1, keepdim=True) + eps)


def unbiased_var_eps_inside(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """(a - mu) / sqrt(var_unbiased + eps): eps in the right place, `x.var()`'s default divisor. Not
    one codebase but a slip anyone can make, so eps is nn.LayerNorm's 1e-5."""
    centered = x - x.mean(dim=-1, keepdim=True)
    return centered / torch.sqrt(x.var(dim=-1, keepdim=True) + eps)


def rms_eps_outside_sqrt(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """a / (RMS(a) + eps): RMSNorm with eps on the RMS, as some codebases wrote it (the RMSNorm
    authors' PyTorch code, bzhangGo/rmsnorm, and GPT-NeoX until 2025); torch.nn.RMSNorm and
    Llama's code put it inside the sqrt."""
    return x / (x.pow(2).mean(dim=-1, keepdim=True).sqrt() + eps)


def one_pass_variance(x: torch.Tensor) -> torch.Tensor:
    """E[a^2] - E[a]^2: one sweep over the data, and a difference of two nearly equal numbers."""
    return x.pow(2).mean(dim=-1) - x.mean(dim=-1).pow(2)


def two_pass_variance(x: torch.Tensor) -> torch.Tensor:
    """E[(a - E[a])^2]: a second sweep, but the squares are of small numbers."""
    return (x - x.mean(dim=-1, keepdim=True)).pow(2).mean(dim=-1)


def recentered_variance(x: torch.Tensor) -> torch.Tensor:
    """Two passes with the mean removed twice, as lnpaper.LayerNorm does (see `norms.center`)."""
    return center(x, (-1,)).pow(2).mean(dim=-1)
