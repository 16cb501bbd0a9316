"""The fully connected classifier of the batch-size experiment (Ba et al. 2016, Sec. 6.6).

The paper trains a 784-1000-1000-10 network on permutation-invariant MNIST with BatchNorm or with
LayerNorm; notebook 01 (claim M5) trains a narrower one on the 8 x 8 digits. Each hidden layer is

    a = W h_prev            (summed inputs; no bias here, the normalizer's own b replaces it)
    h = relu(norm(a))       (norm = g * (a - mu) / sigma + b, then the nonlinearity, as in Sec. 3)

and the output layer gives the logits, normalized or not (`norm_logits`): the paper does not apply
LayerNorm to the last layer, while its BatchNorm baseline normalizes every layer.
"""

import torch
from torch import nn

from lnpaper.arguments import check_flag, check_int, check_positive_int
from lnpaper.norms import BatchNorm, LayerNorm, center


class UnbiasedBatchNorm(BatchNorm):
    """BatchNorm that normalizes with the batch's *unbiased* variance in training too.

    Ba et al. 2016, Sec. 6.6 (notebook 01, M5): their BatchNorm baseline used the unbiased
    variance at batch 4. torch's convention (and `lnpaper.BatchNorm`) trains on the biased one,
    s^2 (N - 1) / N, while the running estimate, used at inference, tracks the unbiased one: at
    batch 4 a unit's inference output is sqrt(3/4) = 0.87 of its training-time scale, a built-in
    gap of 1.15x. Here training divides by the same quantity inference estimates:

        y = g * (a - mu_B) / sqrt(s_B^2 + eps) + b,   s_B^2 = sum_n (a_n - mu_B)^2 / (N - 1)

    and the running estimates move exactly as BatchNorm's. Eval mode is BatchNorm's. Input (N, C).
    """

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return super().forward(a)
        if a.ndim != 2 or a.shape[1] != self.num_features:
            raise ValueError(
                f"UnbiasedBatchNorm({self.num_features}) expects input (N, {self.num_features}), "
                f"got shape {tuple(a.shape)}"
            )
        if len(a) < 2:
            raise ValueError(
                f"UnbiasedBatchNorm in training mode needs more than 1 value per channel, got "
                f"input shape {tuple(a.shape)}: the unbiased variance of one value is undefined"
            )
        centered = center(a, (0,))  # a - mu_B
        var = centered.pow(2).sum(0) / (len(a) - 1)  # s_B^2, unbiased
        with torch.no_grad():
            self.running_mean.lerp_(a.mean(0), self.momentum)
            self.running_var.lerp_(var, self.momentum)
        return centered * torch.rsqrt(var + self.eps) * self.weight + self.bias


NORMS = {
    "batchnorm": BatchNorm,
    "unbiased batchnorm": UnbiasedBatchNorm,
    "layernorm": LayerNorm,
    "none": None,
}


class MLP(nn.Module):
    """sizes = (inputs, hidden..., classes); norm in NORMS; returns logits (N, classes).

    Introduced in notebook 01. With a normalizer a linear layer has no bias of its own: for
    BatchNorm it would be subtracted again with the mean, and the paper writes a = W x with the
    bias b acting after normalization. Without one (norm="none", or an un-normalized output layer)
    the linear layers keep their bias.
    """

    def __init__(self, sizes=(64, 128, 128, 10), norm: str = "layernorm", norm_logits=False):
        super().__init__()
        if not isinstance(sizes, tuple | list) or len(sizes) < 2:
            raise ValueError(f"sizes must be at least two positive ints, got {sizes!r}")
        try:
            sizes = tuple(check_positive_int("sizes", s) for s in sizes)
        except ValueError:
            raise ValueError(f"sizes must be at least two positive ints, got {sizes!r}") from None
        if not isinstance(norm, str) or norm not in NORMS:
            raise ValueError(f"norm must be one of {tuple(NORMS)}, got {norm!r}")
        check_flag("norm_logits", norm_logits)
        if norm_logits and norm == "none":
            raise ValueError("norm_logits=True needs a normalizer, got norm='none'")
        self.sizes, self.norm, self.norm_logits = sizes, norm, norm_logits
        make_norm = NORMS[norm]
        layers = []
        for k, (width_in, width_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            is_output = k == len(sizes) - 2
            normalized = make_norm is not None and (not is_output or self.norm_logits)
            layers.append(nn.Linear(width_in, width_out, bias=not normalized))
            if normalized:
                layers.append(make_norm(width_out))
            if not is_output:
                layers.append(nn.ReLU())
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        if x.ndim != 2 or x.shape[1] != self.sizes[0]:
            raise ValueError(
                f"MLP{self.sizes} expects input (N, {self.sizes[0]}), got shape {tuple(x.shape)}"
            )
        return self.layers(x)

    def extra_repr(self) -> str:
        return f"sizes={self.sizes}, norm={self.norm!r}, norm_logits={self.norm_logits}"


# ---- The paper's BatchNorm, and many seeds as one model (M5) --------------------------------


class SeedBatchedMLP(nn.Module):
    """One `MLP` per seed, trained side by side as a single model: the same function, faster.

    A run at batch 4 spends its time on per-step overhead (about 40 small kernels for a forward,
    backward and Adam step of a few hundred numbers each), not on arithmetic. Stacking S seeds'
    weights into (S, in, out) tensors makes each step S times the work for nearly the same
    overhead. Nothing mixes across seeds:

        h_s = a_s W_s (+ b_s)       torch.bmm over the seed axis: seed s's batch meets its weights
        BatchNorm: mu, var over seed s's own batch (dim 1), running estimates per seed (S, H)
        LayerNorm: over each row's units, as ever

    Seed s's weights are exactly `MLP(sizes, norm, norm_logits)` built after torch.manual_seed(s),
    so it starts where the per-seed model starts. Train on the sum over seeds of each seed's mean
    loss: its gradient with respect to seed s's weights is seed s's own gradient, and Adam acts
    elementwise, so one Adam over the stacked weights is S independent Adams.

    Input (S, N, inputs) -> logits (S, N, classes). In eval mode BatchNorm uses the running
    estimates, or per-layer `statistics` [(mean, var) each (S, H)] such as
    `population_statistics` returns.
    """

    def __init__(self, sizes, norm: str = "layernorm", seeds=(0,), norm_logits=False):
        super().__init__()
        seeds = tuple(check_int("seed", seed) for seed in seeds)
        if not seeds:
            raise ValueError("seeds must hold at least one seed, got ()")
        nets = []
        for seed in seeds:
            torch.manual_seed(seed)
            nets.append(MLP(sizes, norm=norm, norm_logits=norm_logits))
        self.sizes, self.norm, self.seeds = nets[0].sizes, norm, seeds
        self.kinds = []  # per layer of the MLP: "linear", "layernorm", "batchnorm", "relu"
        self.unbiased = norm == "unbiased batchnorm"
        for k, layers in enumerate(zip(*(net.layers for net in nets), strict=True)):
            first = layers[0]
            if isinstance(first, nn.Linear):
                self.kinds.append("linear")
                weight = torch.stack([layer.weight.detach().T for layer in layers])
                self.register_parameter(f"weight{k}", nn.Parameter(weight))  # (S, in, out)
                if first.bias is not None:
                    bias = torch.stack([layer.bias.detach()[None] for layer in layers])
                    self.register_parameter(f"bias{k}", nn.Parameter(bias))  # (S, 1, out)
            elif isinstance(first, nn.ReLU):
                self.kinds.append("relu")
            elif isinstance(first, BatchNorm | LayerNorm):
                self.kinds.append("batchnorm" if isinstance(first, BatchNorm) else "layernorm")
                for name in ("weight", "bias"):  # g and b, (S, 1, H)
                    value = torch.stack([getattr(layer, name).detach()[None] for layer in layers])
                    self.register_parameter(f"{name}{k}", nn.Parameter(value))
                if isinstance(first, LayerNorm):
                    self.ln_eps = first.eps
                if isinstance(first, BatchNorm):
                    self.eps, self.momentum = first.eps, first.momentum
                    for name in ("running_mean", "running_var"):
                        value = torch.stack([getattr(layer, name) for layer in layers])
                        self.register_buffer(f"{name}{k}", value.clone())  # (S, H)
            else:  # a layer MLP has gained: computed here, or refused, never guessed
                raise ValueError(
                    f"SeedBatchedMLP computes Linear, ReLU, BatchNorm and LayerNorm layers; "
                    f"layer {k} of MLP is a {type(first).__name__}"
                )

    def _batchnorm(self, k, a, statistics):
        """(a - mu) / sqrt(var + eps) for BatchNorm layer k, per seed over its own batch (dim 1)."""
        if not self.training:
            if statistics is None:
                mean, var = getattr(self, f"running_mean{k}"), getattr(self, f"running_var{k}")
            else:
                mean, var = statistics.pop(0)
            return (a - mean[:, None]) * torch.rsqrt(var[:, None] + self.eps)
        count = a.shape[1]
        if count < 2:
            raise ValueError(f"BatchNorm in training mode needs batches of 2 or more, got {count}")
        centered = center(a, (1,))  # a - mu_B
        square_sum = centered.pow(2).sum(1, keepdim=True)
        var = square_sum / (count - 1 if self.unbiased else count)  # s_B^2 or sigma_B^2
        with torch.no_grad():  # running estimates: toward the mean and the unbiased variance
            getattr(self, f"running_mean{k}").lerp_(a.mean(1), self.momentum)
            getattr(self, f"running_var{k}").lerp_(square_sum[:, 0] / (count - 1), self.momentum)
        return centered * torch.rsqrt(var + self.eps)

    def forward(self, x, statistics=None):
        return self._forward(x, statistics, collect=None)

    def _forward(self, x, statistics, collect):
        if x.ndim != 3 or x.shape[0] != len(self.seeds) or x.shape[2] != self.sizes[0]:
            raise ValueError(
                f"SeedBatchedMLP of {len(self.seeds)} seeds expects input "
                f"({len(self.seeds)}, N, {self.sizes[0]}), got shape {tuple(x.shape)}"
            )
        statistics = None if statistics is None else list(statistics)
        h = x
        for k, kind in enumerate(self.kinds):
            if kind == "linear":
                bias, weight = getattr(self, f"bias{k}", None), getattr(self, f"weight{k}")
                h = torch.bmm(h, weight) if bias is None else torch.baddbmm(bias, h, weight)
            elif kind == "relu":
                h = torch.relu(h)
            else:
                if kind == "layernorm":  # over each row's units: lnpaper.LayerNorm
                    centered = center(h, (-1,))  # a - mu
                    h = centered * torch.rsqrt(centered.pow(2).mean(-1, keepdim=True) + self.ln_eps)
                else:
                    if collect is not None:  # this layer's exact statistics over x
                        collect.append((h.mean(1), h.var(1, correction=0)))
                        statistics = [collect[-1]]
                    h = self._batchnorm(k, h, statistics)
                h = h * getattr(self, f"weight{k}") + getattr(self, f"bias{k}")  # g * . + b
        return h

    @torch.no_grad()
    def population_statistics(self, x) -> list:
        """Each BatchNorm layer's exact mean and (biased) variance over `x` (S, N, inputs), layer
        after layer: layer k's statistics are those of its inputs when every earlier BatchNorm
        layer normalizes with its own exact statistics. No training, no running averages."""
        was_training = self.training
        self.eval()
        collected = []
        self._forward(x, None, collect=collected)
        self.train(was_training)
        return collected

    def extra_repr(self) -> str:
        return f"sizes={self.sizes}, norm={self.norm!r}, seeds={len(self.seeds)}"
