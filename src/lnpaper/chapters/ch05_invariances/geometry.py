"""The geometry of Section 5 of Ba, Kiros, Hinton 2016, measured; notebook 05.

Two pieces:

- **Fisher information of normalized generalized linear units** (Sec. 5.2). A logistic unit
  p(y = 1 | x) = s(z), s the sigmoid, has Fisher information F = E_x[s'(z) dz/dtheta dz/dtheta^T]
  (the expectation over y given x is exact for a Bernoulli output). `logistic_fisher` computes it
  for any module whose outputs are logits, with dz/dtheta from autograd, averaging over a finite
  set of inputs that plays the data distribution. The units: `weightnorm_logistic_unit`,
  `batchnorm_logistic_unit` (statistics over that whole set: the paper's expected statistics) and
  `layernorm_logistic_layer` (H logistic units sharing one LayerNorm). `softmax_fisher` does the
  same for K units under one softmax, whose outputs are coupled.
- **Weight geometry under SGD** (the "implicit early stopping" of Sec. 5.2; the derivation below is
  Salimans & Kingma 2016, Sec. 2.1, for weight normalization, and van Laarhoven 2017 for any
  scale-invariant weight). If a layer's output does not change when its weight matrix W is scaled,
  then d/d(delta) L(delta W) = 0 at delta = 1, i.e. <grad, W> = 0; plain SGD then only grows ||W||,
  and the angle W turns per step shrinks like lr / ||W||^2. `WeightGeometry` records these
  quantities at every step of a training run.
"""

import math

import torch
from torch import nn
from torch.func import functional_call

from lnpaper.chapters.ch05_invariances.invariance import (
    PAPER_EPS,  # the paper's eps-free sigma, computed in float64
)
from lnpaper.norms import BatchNorm, LayerNorm, WeightNormLinear

# ---- Fisher information of logistic units -------------------------------------------------------


def _flat_logits(module: nn.Module, x: torch.Tensor, names: tuple[str, ...]):
    """(theta, logits(theta), name -> slice): the parameters `names` of `module` flattened into
    one vector, and module(x) as a function of it."""
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"x must be (cases, inputs) with at least 2 cases, got {tuple(x.shape)}")
    params = dict(module.named_parameters())
    unknown = [name for name in names if name not in params]
    if unknown:
        raise ValueError(f"unknown parameters {unknown}; the module has {list(params)}")
    shapes = [params[name].shape for name in names]
    sizes = [params[name].numel() for name in names]
    theta = torch.cat([params[name].detach().reshape(-1) for name in names])

    def logits(flat: torch.Tensor) -> torch.Tensor:
        pieces = torch.split(flat, sizes)
        values = {n: p.reshape(s) for n, p, s in zip(names, pieces, shapes, strict=True)}
        return functional_call(module, values, (x,))

    offsets = [0, *torch.tensor(sizes).cumsum(0).tolist()]
    blocks = {n: slice(offsets[k], offsets[k + 1]) for k, n in enumerate(names)}
    return theta, logits, blocks


def logistic_fisher(module: nn.Module, x: torch.Tensor, names: tuple[str, ...]):
    """Fisher information of the logistic outputs of `module(x)` with respect to the parameters
    `names`, in that order, flattened into one vector theta:

        F = (1/N) sum_n sum_k s'(z_nk) dz_nk/dtheta dz_nk/dtheta^T,   s'(z) = s(z) (1 - s(z))

    with N = x.shape[0] cases and k over the module's outputs (independent Bernoulli units).
    Returns F (P x P) and a dict name -> slice of theta, to cut F into blocks.
    """
    theta, outputs, blocks = _flat_logits(module, x, names)

    def logits(flat: torch.Tensor) -> torch.Tensor:
        return outputs(flat).reshape(-1)

    jacobian = torch.autograd.functional.jacobian(logits, theta)  # dz/dtheta, (N*K) x P
    with torch.no_grad():
        p = torch.sigmoid(logits(theta))
        fisher = jacobian.T @ ((p * (1 - p))[:, None] * jacobian) / x.shape[0]
    return fisher, blocks


def softmax_fisher(module: nn.Module, x: torch.Tensor, names: tuple[str, ...]):
    """Fisher information of a categorical output p = softmax(module(x)), K classes, with respect
    to the parameters `names` flattened into theta (notebook 05, I4b):

        F = (1/N) sum_n J_n^T (diag(p_n) - p_n p_n^T) J_n,   J_n = dz_n/dtheta (K x P)

    Unlike independent logistic units, the outputs are coupled through Cov(y_i, y_j) = -p_i p_j,
    so one unit's weights have nonzero blocks with another's. Returns F and name -> slice."""
    theta, logits, blocks = _flat_logits(module, x, names)
    with torch.no_grad():
        p = torch.softmax(logits(theta), dim=-1)  # N x K
    jacobian = torch.autograd.functional.jacobian(logits, theta)  # N x K x P
    covariance = torch.diag_embed(p) - p[:, :, None] * p[:, None, :]  # N x K x K
    with torch.no_grad():
        fisher = torch.einsum("nkp,nkl,nlq->pq", jacobian, covariance, jacobian) / x.shape[0]
    return fisher, blocks


def weightnorm_logistic_unit(inputs: int, generator: torch.Generator) -> nn.Module:
    """z = g v.x / ||v|| + b (Salimans & Kingma 2016): parameters direction (v), scale (g), bias."""
    unit = WeightNormLinear(inputs, 1).double()
    with torch.no_grad():
        unit.direction.copy_(torch.randn(1, inputs, generator=generator, dtype=torch.float64))
        unit.scale.fill_(1.5)
        unit.bias.fill_(0.3)
    return unit


class _Squeeze(nn.Module):
    def forward(self, a: torch.Tensor) -> torch.Tensor:
        return a.squeeze(-1)


def batchnorm_logistic_unit(inputs: int, generator: torch.Generator) -> nn.Module:
    """z = g (w.x - mu) / sigma + b, mu and sigma of w.x over every case given: the paper's
    expected statistics, with the finite set of cases as the distribution. Parameters 0.weight (w),
    1.weight (g), 1.bias (b)."""
    linear = nn.Linear(inputs, 1, bias=False).double()  # the bias stays out of a
    norm = BatchNorm(1, eps=PAPER_EPS).double().train()
    with torch.no_grad():
        linear.weight.copy_(torch.randn(1, inputs, generator=generator, dtype=torch.float64))
        norm.weight.fill_(1.5)
        norm.bias.fill_(0.3)
    return nn.Sequential(linear, norm, _Squeeze())


def layernorm_logistic_layer(inputs: int, units: int, generator: torch.Generator) -> nn.Module:
    """z = g * (a - mu) / sigma + b, a = W x: H logistic units sharing one mu and one sigma per case.
    Parameters 0.weight (W, H x D), 1.weight (g), 1.bias (b)."""
    linear = nn.Linear(inputs, units, bias=False).double()
    norm = LayerNorm(units, eps=PAPER_EPS).double()
    with torch.no_grad():
        linear.weight.copy_(torch.randn(units, inputs, generator=generator, dtype=torch.float64))
        norm.weight.copy_(1 + 0.5 * torch.rand(units, generator=generator, dtype=torch.float64))
        norm.bias.copy_(0.3 * torch.randn(units, generator=generator, dtype=torch.float64))
    return nn.Sequential(linear, norm)


def _unit_parameters(module: nn.Module, kind: str):
    """(W, g, b) of one of the units above, detached: W is H x D, one row per unit."""
    if kind not in ("weightnorm", "batchnorm", "layernorm"):
        raise ValueError(f"kind must be weightnorm, batchnorm or layernorm, got {kind!r}")
    if kind == "weightnorm":
        parts = module.direction, module.scale, module.bias
    else:
        parts = module[0].weight, module[1].weight, module[1].bias
    return tuple(part.detach() for part in parts)


def paper_fisher(module: nn.Module, x: torch.Tensor, kind: str) -> torch.Tensor:
    """Sec. 5.2's closed form of the Fisher information of a normalized GLM (Eq. 13 with chi_i of
    Eq. 14), for independent logistic units, in `logistic_fisher`'s parameter order (W row by row,
    then g, then b). Unit i's logit z_i = g_i (a_i - mu_i) / sigma_i + b_i, a_i = w_i.x, moves with
    its own parameters only:

        dz_i/dw_i = (g_i / sigma_i) chi_i,   chi_i = x - dmu_i/dw_i - (a_i - mu_i)/sigma_i dsigma_i/dw_i

    and, the outputs being independent Bernoulli units (Cov[y_i, y_j | x] = 0 for i != j), the
    blocks between two units are zero. `kind` is "weightnorm" (mu_i = 0, sigma_i = ||w_i||),
    "batchnorm" (mu_i, sigma_i of a_i over every case in x: the expected statistics) or
    "layernorm" (mu, sigma over the H units of each case: shared, so each depends on every row of
    W, which the closed form leaves out)."""
    weight, gain, bias = _unit_parameters(module, kind)
    cases, units = x.shape[0], weight.shape[0]
    summed = x @ weight.T  # a, cases x H
    if kind == "weightnorm":
        mean = torch.zeros_like(summed)
        scale = weight.norm(dim=1).expand_as(summed)
        d_mean = torch.zeros_like(weight)[None]
        d_scale = (weight / weight.norm(dim=1, keepdim=True))[None]
    elif kind == "batchnorm":
        mean = summed.mean(0, keepdim=True).expand_as(summed)
        scale = (summed.var(0, unbiased=False, keepdim=True) + PAPER_EPS).sqrt().expand_as(summed)
        centered = x - x.mean(0)
        d_mean = x.mean(0).expand_as(weight)[None]
        d_scale = (weight @ (centered.T @ centered) / cases / scale[:1].T)[None]
    else:  # layernorm
        mean = summed.mean(1, keepdim=True).expand_as(summed)
        scale = (summed.var(1, unbiased=False, keepdim=True) + PAPER_EPS).sqrt().expand_as(summed)
        d_mean = x[:, None, :] / units
        d_scale = ((summed - mean) / (units * scale))[..., None] * x[:, None, :]
    normalized = (summed - mean) / scale
    chi = x[:, None, :] - d_mean - normalized[..., None] * d_scale  # cases x H x D
    slope = torch.sigmoid(gain * normalized + bias)
    slope = slope * (1 - slope)  # s'(z)
    rows = torch.arange(units)
    jacobian = torch.zeros(cases, units, units, weight.shape[1], dtype=x.dtype)
    jacobian[:, rows, rows] = (gain / scale)[..., None] * chi  # dz_i/dw_i in row i of W
    jacobian = torch.cat(
        [jacobian.flatten(2), torch.diag_embed(normalized), torch.ones(cases, units).diag_embed()],
        2,
    )
    return torch.einsum("nip,ni,niq->pq", jacobian, slope, jacobian) / cases


def paper_gain_metric(module: nn.Module, x: torch.Tensor, kind: str) -> torch.Tensor:
    """The supplement's metric along the gains g (the equations after "Learning the magnitude of
    incoming weights"), E[Cov[y | x] * c c^T] with c_i = 1 under BatchNorm, (a_i - mu) / sigma
    under LayerNorm and a_i / ||w_i|| under WeightNorm; H x H, for independent logistic units."""
    weight, gain, bias = _unit_parameters(module, kind)
    summed = x @ weight.T
    if kind == "weightnorm":
        factor = summed / weight.norm(dim=1)
        logit = gain * factor + bias
    else:
        axis = 0 if kind == "batchnorm" else 1
        mean = summed.mean(axis, keepdim=True)
        normalized = (summed - mean) / (
            summed.var(axis, unbiased=False, keepdim=True) + PAPER_EPS
        ).sqrt()
        factor = torch.ones_like(summed) if kind == "batchnorm" else normalized
        logit = gain * normalized + bias
    slope = torch.sigmoid(logit) * (1 - torch.sigmoid(logit))
    return torch.diag((slope * factor**2).mean(0))


def log_likelihood_gradient(module: nn.Module, x, y, names: tuple[str, ...]) -> list[torch.Tensor]:
    """d/dtheta of the mean Bernoulli log-likelihood of labels y (same shape as the logits)."""
    params = dict(module.named_parameters())
    module.zero_grad(set_to_none=True)
    logits = module(x)
    loss = -nn.functional.binary_cross_entropy_with_logits(logits, y)
    return list(torch.autograd.grad(loss, [params[name] for name in names]))


# ---- weight geometry under SGD ------------------------------------------------------------------


def cosine(u: torch.Tensor, v: torch.Tensor) -> float:
    return (u.flatten() @ v.flatten() / (u.norm() * v.norm())).item()


def angle(u: torch.Tensor, v: torch.Tensor) -> float:
    """The angle between u and v in radians, 2 atan2(|u^ - v^|, |u^ + v^|) with u^ = u / |u|:
    accurate at tiny angles, where arccos of a cosine near 1 loses half the digits (Kahan)."""
    u_hat, v_hat = u / u.norm(), v / v.norm()
    return 2 * math.atan2((u_hat - v_hat).norm().item(), (u_hat + v_hat).norm().item())


class WeightGeometry:
    """Records one weight matrix W at every optimizer step of a training run.

    A hook fires once W's gradient of step t is complete, before the optimizer moves W, so it sees
    W_t and g_t together; the next firing (or `close()`) sees W_{t+1}. Recorded per step t:
    ||W_t||, ||g_t||, cos(g_t, W_t), the angle between W_t and W_{t+1}, and the measured
    ||W_{t+1}||^2 - ||W_t||^2. Works with `lnpaper.train.train` unchanged; gradient clipping would
    change g_t after the hook and is not used with it.
    """

    def __init__(self, weight: nn.Parameter):
        self.weight = weight
        self.norms: list[float] = []  # ||W_t||, t = 0..T (the last after close())
        self.grad_norms: list[float] = []  # ||g_t||, t = 0..T-1
        self.cosines: list[float] = []  # cos(g_t, W_t)
        self.angles: list[float] = []  # angle(W_t, W_{t+1}) in radians
        self.norm_sq_increments: list[float] = []  # ||W_{t+1}||^2 - ||W_t||^2
        self._previous: torch.Tensor | None = None
        self._handle = weight.register_post_accumulate_grad_hook(self._record)

    def _advance(self, current: torch.Tensor) -> None:
        if self._previous is not None:
            self.angles.append(angle(self._previous, current))
            increment = (current.pow(2).sum() - self._previous.pow(2).sum()).item()
            self.norm_sq_increments.append(increment)
        self.norms.append(current.norm().item())
        self._previous = current.clone()

    def _record(self, weight: torch.Tensor) -> None:
        with torch.no_grad():
            self._advance(weight.detach())
            self.grad_norms.append(weight.grad.norm().item())
            self.cosines.append(cosine(weight.grad, weight.detach()))

    def close(self) -> None:
        """Stop recording; take W after the last step."""
        self._handle.remove()
        with torch.no_grad():
            self._advance(self.weight.detach())
        self._previous = None
