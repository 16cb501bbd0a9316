"""The small convolutional net of notebook 03's coda (Ba et al. 2016, Sec. 6, CNN, "preliminary").

The paper reports that on a CNN LayerNorm beats no normalization while BatchNorm beats LayerNorm,
and gives no setup. This one reads the 8 x 8 digits:

    conv 3x3 (1 -> c1, padding 1) -> norm -> ReLU -> conv 3x3 (c1 -> c2, padding 1) -> norm -> ReLU
    -> 2x2 max-pool -> linear (c2 * 4 * 4 -> 10)

`norm` is where the two normalizers differ:
- `batchnorm`: per channel, statistics over the batch and the 64 positions (Ioffe & Szegedy 2015,
  the convolutional form), `lnpaper.BatchNorm` on (N, C, 64);
- `layernorm`: per example, statistics over every unit of the layer, C x 8 x 8 (Ba et al.: "all the
  hidden units in a layer"), with a gain and a bias per channel, as BatchNorm has: 2C parameters
  each. (A gain and bias per unit, 2 C H W of them, would let a per-position bias absorb the
  border effect the paper blames for LayerNorm's loss.)
- `none`: the convolutions keep their biases.
"""

import torch
from torch import nn

from lnpaper.checks import check_positive_int
from lnpaper.data import digits
from lnpaper.norms import BatchNorm, LayerNorm

NORMS = ("none", "batchnorm", "layernorm")


class PlaneBatchNorm(nn.Module):
    """BatchNorm of a conv layer: one mean and variance per channel over (N, H, W)."""

    def __init__(self, channels: int):
        super().__init__()
        self.norm = BatchNorm(channels)

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        return self.norm(a.flatten(2)).view_as(a)  # (N, C, H*W): statistics over N and H*W


class PlaneLayerNorm(nn.Module):
    """LayerNorm of a conv layer: one mean and variance per example over (C, H, W), then a gain and
    a bias per channel, y = g_c (a - mu) / sqrt(sigma^2 + eps) + b_c."""

    def __init__(self, channels: int, side: int):
        super().__init__()
        self.norm = LayerNorm((channels, side, side), elementwise_affine=False)
        self.weight = nn.Parameter(torch.ones(channels, 1, 1))  # g_c
        self.bias = nn.Parameter(torch.zeros(channels, 1, 1))  # b_c

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        return self.norm(a) * self.weight + self.bias


def conv_norm(norm: str, channels: int, side: int) -> nn.Module:
    if norm == "batchnorm":
        return PlaneBatchNorm(channels)
    if norm == "layernorm":
        return PlaneLayerNorm(channels, side)
    return nn.Identity()


class SmallCNN(nn.Module):
    """Images (N, 1, side, side) -> logits (N, 10); introduced in notebook 03 (claim R5). `side` is 8
    for the digits as they are, more for digits framed by a blank margin
    (notebook 03's coda)."""

    def __init__(self, norm: str = "none", channels=(16, 32), side: int = digits.SIDE):
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        if not isinstance(channels, tuple | list) or len(channels) != 2:
            raise ValueError(f"channels must be two positive ints (c1, c2), got {channels!r}")
        c1, c2 = (check_positive_int("channels", c) for c in channels)
        side = check_positive_int("side", side)
        if side % 2:
            raise ValueError(f"side must be even (a 2 x 2 pool follows), got {side}")
        self.norm, self.side = norm, side
        bias = norm == "none"  # a normalizer's own b replaces the conv bias
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1, bias=bias),
            conv_norm(norm, c1, side),
            nn.ReLU(),
            nn.Conv2d(c1, c2, 3, padding=1, bias=bias),
            conv_norm(norm, c2, side),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.readout = nn.Linear(c2 * (side // 2) ** 2, digits.CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or x.shape[1:] != (1, self.side, self.side):
            raise ValueError(
                f"SmallCNN expects images (N, 1, {self.side}, {self.side}), got shape "
                f"{tuple(x.shape)}"
            )
        return self.readout(self.features(x).flatten(1))
