"""The normalizers as torch modules, each a formula written out in a few lines.

Every module computes the same function as PyTorch's own (tests/test_norms.py checks parity), but the
arithmetic is visible: the notebooks read these lines next to the equations they implement.

- LayerNorm: Ba, Kiros, Hinton 2016, Sec. 3 (notebook 02)
- RMSNorm and pRMSNorm: Zhang & Sennrich 2019, Sec. 3-4 (notebook 07)
- BatchNorm: Ioffe & Szegedy 2015, Alg. 1-2, the baseline of notebook 01
- RecurrentBatchNorm: Cooijmans et al. 2016, per-time-step statistics (notebook 01, used in 03)
- WeightNormLinear: Salimans & Kingma 2016, the third row of the invariance table (notebook 05)
- DyT: Zhu et al. 2025, a normalizer with no statistics at all (notebook 06)

The normalizers compute half-precision inputs (float16, bfloat16) in float32 and return them in
their own dtype; WeightNormLinear, like nn.Linear, wants input and weights of one dtype.
"""

import functools
import math

import torch
from torch import nn

from lnpaper.arguments import (
    check_choice,
    check_eps,
    check_finite_float,
    check_flag,
    check_floating,
    check_gain_init,
    check_normalized_shape,
    check_partial,
    check_positive_float,
    check_positive_int,
    check_trailing_shape,
    partial_count,
)


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    """float16 and bfloat16 carry 11 and 8 bits of mantissa: too few for a variance."""
    return torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype


def center(x: torch.Tensor, dims: tuple[int, ...]) -> torch.Tensor:
    """a - mu, accurate even when the offset dwarfs the spread.

    In float32 a row with mean 1e4 and std 1e-2 has its mean rounded by about one unit in the last
    place of 1e4 (1e-3), a tenth of the spread, so a - mu is off by a constant. Those differences are
    small and exact (Sterbenz), so subtracting their own mean a second time removes the error; in
    exact arithmetic the second mean is zero and the function (and its gradient) is unchanged.
    """
    centered = x - x.mean(dim=dims, keepdim=True)
    return centered - centered.mean(dim=dims, keepdim=True)


def is_vmapped(x: torch.Tensor) -> bool:
    """Whether `x` is inside torch.func.vmap (many seeds run as one batch), where a value cannot
    steer Python and some fused kernels have no batching rule. torch has no public test for it."""
    return torch._C._functorch.is_batchedtensor(x)


def overflowed(statistic: torch.Tensor, x: torch.Tensor, dims: tuple[int, ...]):
    """Where a row's statistic (a variance, a mean square) is not finite though its input is, or
    None where there is no such row: the usual case, decided by one look at one value per row.

    In float32 a row at 2.5e19 has squares beyond 3.4e38: the variance is inf, 1/sqrt(inf) is 0,
    and the norm would return its bias alone without a word. A row that holds inf or NaN itself
    (a diverging run) is left as it is: its output stays what it always was. Inside
    torch.func.vmap (many seeds trained as one batch), and on the meta device (shapes without
    values: shape inference, initializing a large model before its memory), a value cannot steer
    Python, and the check is skipped.
    """
    if statistic.is_meta or is_vmapped(statistic):
        return None
    if bool(torch.isfinite(statistic).all()):
        return None
    finite_input = torch.isfinite(x)
    for dim in dims:
        finite_input = finite_input.all(dim=dim, keepdim=True)
    rows = finite_input & ~torch.isfinite(statistic)
    return rows if bool(rows.any()) else None


def rescue_overflow(y, statistic, x, dims: tuple[int, ...], eps, standardize, source=None):
    """y, with each finite row whose statistic overflowed computed again from x / s and eps / s^2,
    s = max |source| over `dims` (source is x, or the part of x the statistic reads);
    standardize(x, eps) -> (y, statistic) is the normalizer's formula. The usual case, no such
    row, returns y itself.

    Every normalizer here is unchanged when x and eps become x / s and eps / s^2 (its statistic is
    homogeneous of degree 2 in x), and with s the row's largest value the squares are at most 1. s
    is a constant to the backward pass, which is exact, since the function does not depend on s.
    Rows that did not overflow keep the values computed as written, bit for bit.
    """
    rows = overflowed(statistic, x, dims)
    if rows is None:
        return y
    source = x if source is None else source
    scale = source.detach().abs().amax(dim=dims, keepdim=True)
    scale = torch.where(rows, scale, torch.ones_like(scale))
    y_rescaled, _ = standardize(x / scale, eps / scale.pow(2))
    return torch.where(rows, y_rescaled, y)


def without_overflow(standardize, x: torch.Tensor, dims: tuple[int, ...], eps, source=None):
    """standardize(x, eps) -> (y, statistic), computed as written, then `rescue_overflow`.
    Returns y and the statistic as written."""
    y, statistic = standardize(x, eps)
    return rescue_overflow(y, statistic, x, dims, eps, standardize, source), statistic


def standardize(x: torch.Tensor, eps, dims: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """((a - mu) / sqrt(sigma^2 + eps), sigma^2) over `dims`, the biased variance: LayerNorm's
    statistics over a row, BatchNorm's over a batch."""
    centered = center(x, dims)  # a - mu
    var = centered.pow(2).mean(dim=dims, keepdim=True)  # sigma^2, biased (1/H)
    return centered * torch.rsqrt(var + eps), var  # (a - mu) / sqrt(sigma^2 + eps)


class LayerNorm(nn.Module):
    """y = g * (a - mu) / sqrt(sigma^2 + eps) + b over the last len(normalized_shape) axes.

    Ba et al. 2016, Sec. 3; introduced in notebook 02. The same function as
    torch.nn.LayerNorm: biased variance, eps inside the square root, gain 1 and bias 0 at init.
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
        super().__init__()
        self.normalized_shape = check_normalized_shape(normalized_shape)
        self.eps = check_eps(eps)
        self.elementwise_affine = check_flag("elementwise_affine", elementwise_affine)
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))  # g
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape))  # b
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        check_floating(a, "LayerNorm")
        check_trailing_shape(a.shape, self.normalized_shape)
        dims = tuple(range(-len(self.normalized_shape), 0))  # a row: the last axes
        x = a.to(_compute_dtype(a))
        centered = center(x, dims)  # a - mu, in two passes (see `center`)
        var = centered.pow(2).mean(dim=dims, keepdim=True)  # sigma^2, biased (1/H)
        y = centered * torch.rsqrt(var + self.eps)  # (a - mu) / sqrt(sigma^2 + eps)
        # a finite row whose squares overflow float32 (values near 1e19): redone from a / max|a|
        y = rescue_overflow(y, var, x, dims, self.eps, functools.partial(standardize, dims=dims))
        if self.elementwise_affine:
            y = y * self.weight + self.bias  # g * . + b
        return y.to(a.dtype)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class RMSNorm(nn.Module):
    """y = g * a / RMS(a), RMS(a) = sqrt((1/n) sum_i a_i^2 + eps); no centering, no bias.

    Zhang & Sennrich 2019; introduced in notebook 07. With partial=None it is the same function
    as torch.nn.RMSNorm (eps=None means the machine epsilon of the dtype computed in). With
    partial=p the statistic comes from the first k units only: pRMSNorm (Zhang & Sennrich,
    p = 0.0625), which still rescales all n units. `rounding` says how p * n becomes k: "truncate"
    (the default) rounds down, as the authors' PyTorch and TensorFlow code do with int(p * n);
    "ceil" rounds up. A p that leaves no unit is a ValueError (`lnpaper.arguments.partial_count`).
    """

    def __init__(
        self,
        normalized_shape,
        eps: float | None = None,
        partial: float | None = None,
        rounding: str = "truncate",
    ):
        super().__init__()
        self.normalized_shape = check_normalized_shape(normalized_shape)
        self.eps = None if eps is None else check_eps(eps)
        self.partial = check_partial(partial)
        self.rounding = check_choice("rounding", rounding, ("truncate", "ceil"))
        self.n_stat = partial_count(math.prod(self.normalized_shape), self.partial, rounding)
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))  # g

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        check_floating(a, "RMSNorm")
        check_trailing_shape(a.shape, self.normalized_shape)
        x = a.to(_compute_dtype(a))
        # eps=None: the machine epsilon of the dtype computed in (float32 for halves), as torch does.
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        flat = x.flatten(start_dim=x.ndim - len(self.normalized_shape))

        def standardize(flat, eps):
            used = flat[..., : self.n_stat]  # all n units, or pRMSNorm's first k
            mean_square = used.pow(2).mean(dim=-1, keepdim=True)  # (1/n) sum_i a_i^2, or over k
            return flat * torch.rsqrt(mean_square + eps), mean_square  # a / RMS(a)

        y, _ = without_overflow(standardize, flat, (-1,), eps, source=flat[..., : self.n_stat])
        y = y.unflatten(-1, self.normalized_shape) * self.weight  # g * .
        return y.to(a.dtype)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, partial={self.partial}, "
            f"rounding={self.rounding!r}"
        )


def _check_momentum(momentum) -> float:
    if (
        isinstance(momentum, bool)
        or not isinstance(momentum, int | float)
        or not 0 <= momentum <= 1
    ):
        raise ValueError(f"momentum must lie in [0, 1], got {momentum!r}")
    return float(momentum)


def _batch_normalize(
    a: torch.Tensor,
    running_mean: torch.Tensor,
    running_var: torch.Tensor,
    *,
    training: bool,
    momentum: float,
    eps: float,
    who: str,
) -> torch.Tensor:
    """(a - mu) / sqrt(sigma^2 + eps) per channel of a (N, C) or (N, C, L) input, before gain and bias.

    Training: mu, sigma^2 are the batch's (biased variance), and the running estimates (C,) move
    toward the batch's mean and *unbiased* variance by `momentum`, in place. Eval: the running
    estimates are used instead. Shared by BatchNorm and RecurrentBatchNorm (notebook 01).
    """
    dims = (0,) if a.ndim == 2 else (0, 2)
    count = a.numel() // a.shape[1]  # values per channel
    if training and count < 2:
        raise ValueError(
            f"{who} in training mode needs more than 1 value per channel, got input shape "
            f"{tuple(a.shape)}: the batch variance of one value is 0 and the output would be "
            f"the bias alone (notebook 01, M2)"
        )
    shape = (1, -1) if a.ndim == 2 else (1, -1, 1)
    x = a.to(_compute_dtype(a))
    if training:
        # (a - mu_B) / sqrt(sigma_B^2 + eps), sigma_B^2 biased; an overflowed sigma_B^2 stays inf in
        # the running estimate, which cannot hold it either
        normalized, var = without_overflow(functools.partial(standardize, dims=dims), x, dims, eps)
        with torch.no_grad():
            mean = x.mean(dim=dims)
            unbiased_var = var.flatten() * count / (count - 1)
            running_mean.lerp_(mean.to(running_mean.dtype), momentum)
            running_var.lerp_(unbiased_var.to(running_var.dtype), momentum)
        return normalized
    centered = x - running_mean.to(x.dtype).reshape(shape)
    var = running_var.to(x.dtype).reshape(shape)
    return centered * torch.rsqrt(var + eps)


class BatchNorm(nn.Module):
    """Per-unit statistics over the batch: the same function as torch.nn.BatchNorm1d.

    Training: y = g * (a - mu_B) / sqrt(sigma_B^2 + eps) + b with the batch's biased variance, and the
    running estimates move toward the batch's mean and *unbiased* variance by `momentum`.
    Eval: the running estimates replace the batch statistics. Two computations for one layer: the
    train/inference mismatch of notebook 01 (Ioffe & Szegedy 2015, Alg. 1-2).
    Input (N, C) or (N, C, L); statistics over N (and L).
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.num_features = check_positive_int("num_features", num_features)
        self.eps = check_eps(eps)
        self.momentum = _check_momentum(momentum)
        self.weight = nn.Parameter(torch.ones(num_features))  # g
        self.bias = nn.Parameter(torch.zeros(num_features))  # b
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        check_floating(a, "BatchNorm")
        if a.ndim not in (2, 3) or a.shape[1] != self.num_features:
            raise ValueError(
                f"BatchNorm({self.num_features}) expects input (N, {self.num_features}) or "
                f"(N, {self.num_features}, L), got shape {tuple(a.shape)}"
            )
        y = _batch_normalize(
            a,
            self.running_mean,
            self.running_var,
            training=self.training,
            momentum=self.momentum,
            eps=self.eps,
            who="BatchNorm",
        )
        shape = (1, -1) if a.ndim == 2 else (1, -1, 1)
        y = y * self.weight.reshape(shape) + self.bias.reshape(shape)  # g * . + b
        return y.to(a.dtype)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class RecurrentBatchNorm(nn.Module):
    """BatchNorm for a recurrent net: statistics per time step, gain and bias shared over time.

    Cooijmans et al. 2016, *Recurrent Batch Normalization*, Sec. 3-4; introduced in notebook 01 (M4),
    used by the BN-LSTM of notebook 03. An LSTM's summed inputs start from h_0 = 0 and pass through a
    transient before their distribution settles, so one set of statistics for all steps would
    mis-normalize the early steps. Hence, at step t of a sequence:

        training:  y_t = g * (a_t - mu_B,t) / sqrt(sigma_B,t^2 + eps) + b   (batch statistics of step t)
                   and the running estimates of step t (only) move toward them by `momentum`
        inference: the running estimates of step min(t, max_steps - 1): past the longest training
                   length T_max = max_steps, reuse the statistics of the last trained step
                   ("the population statistic of time T_max").

    Call it once per step: `forward(a, step)` with `a` of shape (N, num_features) and `step` the
    0-based position in the sequence. Training at step >= max_steps is an error (those statistics
    would never be stored). `gain_init` = 0.1 follows Cooijmans et al. (gains of 1 saturate the
    gates' tanh and sigmoid; 0.01 or lower was unstable for them); `bias=False` drops b, as their
    BN-LSTM does for the two gate terms whose sum already has one bias.
    Buffers: running_mean and running_var of shape (max_steps, num_features).
    """

    def __init__(
        self,
        num_features: int,
        max_steps: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        gain_init: float = 0.1,
        bias: bool = True,
    ):
        super().__init__()
        self.num_features = check_positive_int("num_features", num_features)
        gain_init = check_gain_init(gain_init)
        self.max_steps = check_positive_int("max_steps", max_steps)
        self.eps = check_eps(eps)
        self.momentum = _check_momentum(momentum)
        self.weight = nn.Parameter(torch.full((num_features,), float(gain_init)))  # g, shared
        if check_flag("bias", bias):
            self.bias = nn.Parameter(torch.zeros(num_features))  # b, shared
        else:
            self.register_parameter("bias", None)
        self.register_buffer("running_mean", torch.zeros(max_steps, num_features))
        self.register_buffer("running_var", torch.ones(max_steps, num_features))

    def statistics_step(self, step: int) -> int:
        """Which step's statistics `step` uses at inference: the T_max rule."""
        if isinstance(step, bool) or not isinstance(step, int):
            raise ValueError(f"step must be an int (0-based time step), got {step!r}")
        if step < 0:
            raise ValueError(f"step must be >= 0 (0-based time step), got {step}")
        return min(step, self.max_steps - 1)

    def forward(self, a: torch.Tensor, step: int) -> torch.Tensor:
        check_floating(a, "RecurrentBatchNorm")
        if a.ndim != 2 or a.shape[1] != self.num_features:
            raise ValueError(
                f"RecurrentBatchNorm({self.num_features}) expects one time step of shape "
                f"(N, {self.num_features}), got shape {tuple(a.shape)}"
            )
        t = self.statistics_step(step)
        if self.training and step >= self.max_steps:
            raise ValueError(
                f"RecurrentBatchNorm got step {step} in training mode, but max_steps = "
                f"{self.max_steps}: train on sequences of at most max_steps steps (longer ones "
                f"reuse step {self.max_steps - 1}'s statistics at inference only)"
            )
        y = _batch_normalize(
            a,
            self.running_mean[t],  # views: training updates row t in place
            self.running_var[t],
            training=self.training,
            momentum=self.momentum,
            eps=self.eps,
            who="RecurrentBatchNorm",
        )
        y = y * self.weight  # g * .
        if self.bias is not None:
            y = y + self.bias  # + b
        return y.to(a.dtype)

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, max_steps={self.max_steps}, eps={self.eps}, "
            f"momentum={self.momentum}, bias={self.bias is not None}"
        )


class WeightNormLinear(nn.Module):
    """A linear layer with w_i = g_i * v_i / ||v_i|| for each output unit i (Salimans & Kingma 2016).

    The same function as torch.nn.utils.parametrizations.weight_norm(nn.Linear(...), dim=0).
    Initialized like nn.Linear with g_i = ||v_i||, so the first forward pass equals the plain layer.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        in_features = check_positive_int("in_features", in_features)
        out_features = check_positive_int("out_features", out_features)
        linear = nn.Linear(in_features, out_features, bias=check_flag("bias", bias))
        self.in_features, self.out_features = in_features, out_features
        self.direction = nn.Parameter(linear.weight.detach().clone())  # v
        self.scale = nn.Parameter(linear.weight.detach().norm(dim=1))  # g
        self.bias = linear.bias

    @property
    def weight(self) -> torch.Tensor:
        return self.scale[:, None] * self.direction / self.direction.norm(dim=1, keepdim=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_floating(x, "WeightNormLinear")
        check_trailing_shape(x.shape, (self.in_features,))
        return nn.functional.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


def _scalar_text(parameter: torch.Tensor) -> str:
    """A one-value parameter for a module's repr; on the meta device it has no value to show."""
    return "?" if parameter.is_meta else f"{parameter.item():.3g}"


class DyT(nn.Module):
    """Dynamic Tanh: y = gamma * tanh(alpha * x) + beta, alpha one learnable scalar (shape (1,)).

    Zhu, Chen, He, LeCun, Liu 2025 (alpha_init 0.5 by default); introduced in notebook 06. No statistic
    of any kind: each value is squashed on its own.
    """

    def __init__(self, normalized_shape, alpha_init: float = 0.5):
        super().__init__()
        self.normalized_shape = check_normalized_shape(normalized_shape)
        alpha_init = check_positive_float("alpha_init", alpha_init)
        # Shape (1,), not (): the authors' DynamicTanh holds alpha so, and a state_dict loads
        # across only when the shapes agree.
        self.alpha = nn.Parameter(torch.full((1,), float(alpha_init)))
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))  # gamma
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))  # beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_floating(x, "DyT")
        check_trailing_shape(x.shape, self.normalized_shape)
        y = torch.tanh(self.alpha * x.to(_compute_dtype(x)))  # tanh(alpha x)
        return (y * self.weight + self.bias).to(x.dtype)  # gamma * . + beta

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, alpha={_scalar_text(self.alpha)}"


class Derf(nn.Module):
    """Dynamic erf: y = gamma * erf(alpha * x + s) + beta, alpha and s learnable scalars.

    Chen, Lu, Zhu, Sun, Liu 2025 ("Stronger Normalization-Free Transformers"); alpha_init 0.5 and
    s_init 0 as in their code; introduced in notebook 10. DyT with erf for tanh and a learnable
    shift inside. alpha and s are held with shape (1,), as DyT's alpha is: our reading of the
    formula's scalars.
    """

    def __init__(self, normalized_shape, alpha_init: float = 0.5, shift_init: float = 0.0):
        super().__init__()
        self.normalized_shape = check_normalized_shape(normalized_shape)
        alpha_init = check_positive_float("alpha_init", alpha_init)
        shift_init = check_finite_float("shift_init", shift_init)
        self.alpha = nn.Parameter(torch.full((1,), float(alpha_init)))
        self.shift = nn.Parameter(torch.full((1,), float(shift_init)))  # s
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))  # gamma
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))  # beta

    # Notebook 10 prints this method: its lines stay within 88 columns.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_floating(x, "Derf")
        check_trailing_shape(x.shape, self.normalized_shape)
        # erf(alpha x + s)
        y = torch.erf(self.alpha * x.to(_compute_dtype(x)) + self.shift)
        return (y * self.weight + self.bias).to(x.dtype)  # gamma * . + beta

    def extra_repr(self) -> str:
        alpha, shift = _scalar_text(self.alpha), _scalar_text(self.shift)
        return f"{self.normalized_shape}, alpha={alpha}, s={shift}"


DETACHABLE = ("mean", "std")


class DetachNorm(nn.Module):
    """LayerNorm whose mean, standard deviation or both are constants to the backward pass.

    Xu et al. 2019 ("Understanding and Improving Layer Normalization", Sec. 3); introduced in
    notebook 10. The forward pass is LayerNorm's, y = g * (a - mu) / sqrt(sigma^2 + eps) + b, with
    the same eps; `detach` names the statistics whose gradients are cut (mu.detach(),
    sigma.detach()), which is how they test whether the backward pass through the statistics,
    not the forward re-centering and re-scaling, is what helps. detach=() is plain LayerNorm;
    elementwise_affine=False gives their "LayerNorm-simple" (no gain, no bias).
    """

    def __init__(
        self,
        normalized_shape,
        detach=DETACHABLE,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
    ):
        super().__init__()
        self.normalized_shape = check_normalized_shape(normalized_shape)
        self.eps = check_eps(eps)
        if isinstance(detach, str) or not isinstance(detach, tuple | list):
            raise ValueError(f"detach must be a tuple out of {DETACHABLE}, got {detach!r}")
        self.detach = tuple(detach)
        unknown = set(self.detach) - set(DETACHABLE)
        if unknown or len(set(self.detach)) != len(self.detach):
            raise ValueError(
                f"detach must name distinct statistics out of {DETACHABLE}, got {detach!r}"
            )
        self.elementwise_affine = check_flag("elementwise_affine", elementwise_affine)
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))  # g
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape))  # b
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    # Notebook 10 prints this method: its lines stay within 88 columns.
    def forward(self, a: torch.Tensor) -> torch.Tensor:
        check_floating(a, "DetachNorm")
        check_trailing_shape(a.shape, self.normalized_shape)
        dims = tuple(range(-len(self.normalized_shape), 0))
        x = a.to(_compute_dtype(a))

        def standardize(x, eps):
            mu = x.mean(dim=dims, keepdim=True)
            if "mean" in self.detach:
                mu = mu.detach()
            centered = x - mu
            # sigma from the centered values: with only the mean detached, sigma's
            # gradient still reaches x through `centered`
            var = centered.pow(2).mean(dim=dims, keepdim=True)
            std = (var + eps).sqrt()
            if "std" in self.detach:
                std = std.detach()
            return centered / std, var

        # a sigma^2 that overflowed: see without_overflow
        y, _ = without_overflow(standardize, x, dims, self.eps)
        if self.elementwise_affine:
            y = y * self.weight + self.bias
        return y.to(a.dtype)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, detach={self.detach}, eps={self.eps}"
