"""The small convolutional net of notebook 04's coda (Ba et al. 2016, Sec. 6.7, CNN, "preliminary").

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
import torch.nn.functional as F
from torch import nn

from lnpaper.arguments import check_positive_int
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
    """Images (N, 1, side, side) -> logits (N, 10); introduced in notebook 04 (claim R5). `side` is 8
    for the digits as they are, more for digits framed by a blank margin
    (notebook 04's coda)."""

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


# SmallCNN's layers for each norm, the ones SeedBatchedCNN's forward computes in this order
NORM_LAYERS = {"none": nn.Identity, "batchnorm": PlaneBatchNorm, "layernorm": PlaneLayerNorm}
# SmallCNN's arguments, each honoured by SeedBatchedCNN: norm and side read, channels from shapes
MODEL_ARGUMENTS = ("norm", "channels", "side")


def seed_batched_unsupported(model: SmallCNN) -> str | None:
    """Why SeedBatchedCNN's forward would not compute `model`'s layers, or None."""
    norm = NORM_LAYERS.get(model.norm)
    if norm is None:
        return f"SeedBatchedCNN computes the norms {tuple(NORM_LAYERS)}, not {model.norm!r}"
    expected = [nn.Conv2d, norm, nn.ReLU, nn.Conv2d, norm, nn.ReLU, nn.MaxPool2d]
    layers = [type(layer) for layer in model.features]
    if layers != expected:
        names = [kind.__name__ for kind in layers]
        return f"SeedBatchedCNN computes SmallCNN's seven feature layers, got {names}"
    return None


class SeedBatchedCNN(nn.Module):
    """S `SmallCNN`s of one norm and shape, one per seed, run as one model (notebook 04's coda).

    Made from the per-seed models, so every seed starts from its own weights. The seeds' channels
    sit side by side: seed s owns channels [s c, (s + 1) c) of every layer, and each convolution is
    one grouped convolution with groups = S, so no channel reads another seed's. The norms then
    act per seed as `SmallCNN`'s do: BatchNorm per channel over (N, H, W), one F.batch_norm over
    the S c channels (running estimates per seed and channel); LayerNorm per example over seed s's
    (c, H, W) block, then its g_c and b_c, which is F.group_norm with one group per seed. Input
    (S, N, 1, side, side): each seed reads its own images. Output (S, N, 10). `per_seed(s)` gives
    seed s back as a `SmallCNN` (a copy).

    The activations are (N, S c, H, W) tensors stored channels-last, (N, H, W, S c) in memory: at
    these sizes torch's max-pool runs some 15x faster on that layout than on the default one, and
    oneDNN's grouped convolution its forward some 3x (its backward about as fast); the norms and
    ReLU keep the layout.
    """

    def __init__(self, models: list[SmallCNN]):
        super().__init__()
        if not models:
            raise ValueError("SeedBatchedCNN needs at least one model (one per seed)")
        reason = seed_batched_unsupported(models[0])
        if reason is not None:
            raise ValueError(reason)
        shapes = {(m.norm, m.side, tuple(m.state_dict()["readout.weight"].shape)) for m in models}
        if len(shapes) != 1:
            raise ValueError(f"SeedBatchedCNN stacks models of one norm and shape, got {shapes}")
        self._template = (models[0],)  # a tuple: not a submodule, its parameters not ours
        self.seeds, self.norm, self.side = len(models), models[0].norm, models[0].side
        states = [m.state_dict() for m in models]
        for name, _ in models[0].named_parameters():
            stacked = torch.stack([s[name] for s in states]).clone()
            self.register_parameter(name.replace(".", "__"), nn.Parameter(stacked))
        for name, _ in models[0].named_buffers():  # BatchNorm's (C,) estimates as (S * C,)
            self.register_buffer(name.replace(".", "__"), torch.cat([s[name] for s in states]))
        first_norm = models[0].features[1]
        self.eps = first_norm.norm.eps if self.norm != "none" else None
        self.momentum = first_norm.norm.momentum if self.norm == "batchnorm" else None

    def p(self, name: str) -> torch.Tensor:
        """A parameter or buffer by its per-seed name, e.g. p("features.0.weight")."""
        return getattr(self, name.replace(".", "__"))

    def per_seed(self, s: int) -> SmallCNN:
        """Seed s as an ordinary SmallCNN (a copy)."""
        import copy

        model = copy.deepcopy(self._template[0])
        state = {name: self.p(name)[s].detach() for name, _ in model.named_parameters()}
        for name, buffer in model.named_buffers():
            state[name] = self.p(name).view(self.seeds, -1)[s].view_as(buffer)
        model.load_state_dict(state)
        return model.train(self.training)

    def _conv(self, a: torch.Tensor, layer: int) -> torch.Tensor:
        weight = self.p(f"features.{layer}.weight")  # (S, c_out, c_in, 3, 3)
        bias = getattr(self, f"features__{layer}__bias", None)
        return F.conv2d(
            a,
            weight.flatten(0, 1),
            None if bias is None else bias.flatten(),
            padding=1,
            groups=self.seeds,
        )

    def _norm(self, a: torch.Tensor, layer: int) -> torch.Tensor:
        """a (N, S c, H, W): the layer's norm, for each seed on its own c channels."""
        if self.norm == "batchnorm":  # statistics over N, H and W, per channel
            name = f"features.{layer}.norm"
            return F.batch_norm(
                a,
                self.p(name + ".running_mean"),
                self.p(name + ".running_var"),
                weight=self.p(name + ".weight").flatten(),
                bias=self.p(name + ".bias").flatten(),
                training=self.training,
                momentum=self.momentum,
                eps=self.eps,
            )
        if self.norm == "layernorm":  # per example and seed over (c, H, W), then g_c, b_c
            gain, bias = self.p(f"features.{layer}.weight"), self.p(f"features.{layer}.bias")
            return F.group_norm(a, self.seeds, gain.flatten(), bias.flatten(), eps=self.eps)
        return a

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 5 or x.shape[0] != self.seeds or x.shape[2:] != (1, self.side, self.side):
            raise ValueError(
                f"SeedBatchedCNN expects images (seeds={self.seeds}, N, 1, {self.side}, "
                f"{self.side}), got shape {tuple(x.shape)}"
            )
        # (N, S, H, W), seed s's image is channel s
        a = x.squeeze(2).transpose(0, 1).contiguous(memory_format=torch.channels_last)
        a = F.relu(self._norm(self._conv(a, 0), 1))
        a = self._norm(self._conv(a, 3), 4)
        # ReLU after the pool: max and ReLU commute, and the gradient reaches the same unit (the
        # window's first maximum, if positive), but ReLU then runs on a quarter of the units
        a = F.relu(F.max_pool2d(a, 2))  # (N, S c2, side / 2, side / 2)
        features = a.unflatten(1, (self.seeds, -1)).transpose(0, 1).flatten(2)  # (S, N, c2 h w)
        weight, bias = self.p("readout.weight"), self.p("readout.bias")
        return torch.baddbmm(bias[:, None], features, weight.transpose(1, 2))
