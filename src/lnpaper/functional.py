"""Numpy references for the normalizers, with backward passes derived by hand.

These are the formulas of the papers written as plainly as numpy allows, in float64, with no state.
The torch modules in `lnpaper.norms` are tested against them, and notebook 02 (`02_the_transpose`)
derives the backward pass that `layer_norm_backward` implements.

Notation (Ba, Kiros, Hinton 2016, Sec. 3): `a` are the summed inputs of one example, H of them;
LayerNorm computes statistics along an example's own units (the last axis here), BatchNorm along the
batch (axis 0). `g` (gain) and `b` (bias) act after normalization.
"""

import numpy as np

from lnpaper.arguments import check_eps


def _as_float64(name: str, x) -> np.ndarray:
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"{name} must have a floating dtype, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"{name} must have at least one axis, got a scalar")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return x.astype(np.float64)


def _check_param(name: str, p, shape: tuple[int, ...]) -> np.ndarray:
    p = _as_float64(name, p)
    if p.shape != shape:
        raise ValueError(f"{name} has shape {p.shape}, expected {shape}")
    return p


def _overflow_scale(statistic: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray | None:
    """Where a statistic overflowed, the row's max |a| (1 elsewhere), or None where none did.

    A row at 1e200 has squares beyond float64's 1.8e308: sigma^2 is inf, 1 / sqrt(inf) is 0, and
    the output would be the bias alone. The inputs are finite (`_as_float64`), so any non-finite
    statistic is an overflow. The statistics are homogeneous of degree 2 in a, so a row computed
    from a / s with eps / s^2 is the same function, with squares at most 1.
    """
    if np.isfinite(statistic).all():
        return None
    return np.where(np.isfinite(statistic), 1.0, np.abs(x).max(axis=axis, keepdims=True))


def _standardize(x: np.ndarray, axis: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """x_hat = (x - mu) / sqrt(sigma^2 + eps) along `axis`, with the biased variance."""
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is redone below
        mu = x.mean(axis=axis, keepdims=True)  # mu = (1/H) sum_i a_i
        centered = x - mu
        var = (centered**2).mean(axis=axis, keepdims=True)  # sigma^2 = (1/H) sum_i (a_i - mu)^2
    scale = _overflow_scale(var, x, axis)
    if scale is not None:  # the same function on a / s; rows with s = 1 come out unchanged
        x_hat, inv_std = _standardize(x / scale, axis, eps / scale / scale)
        return x_hat, inv_std / scale
    inv_std = 1.0 / np.sqrt(var + eps)  # eps inside the sqrt, as torch and the authors' Theano do
    return centered * inv_std, inv_std


def _project_out(dx_hat, x_hat, inv_std, axis, center: bool):
    """Backward of x_hat = (x - mu) * inv_std: remove the parts of the upstream gradient along the
    directions the normalization cannot move, then scale.

        dx = inv_std * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat))

    mean(dx_hat) is the component along the all-ones vector (shifting every a_i changes nothing);
    x_hat * mean(dx_hat * x_hat) is the component along x_hat itself (scaling a changes nothing).
    RMSNorm does not center, so it keeps the first component.
    """
    along_self = x_hat * (dx_hat * x_hat).mean(axis=axis, keepdims=True)
    along_ones = dx_hat.mean(axis=axis, keepdims=True) if center else 0.0
    return inv_std * (dx_hat - along_ones - along_self)


def layer_norm(x, gain, bias, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm over the last axis: y = g * (a - mu) / sqrt(sigma^2 + eps) + b.

    Ba et al. 2016, Sec. 3 (the paper has no eps; torch and the authors' Theano code add it inside
    the sqrt, their Torch module outside it: notebook 02 compares the places).
    """
    eps = check_eps(eps)
    x = _as_float64("x", x)
    gain = _check_param("gain", gain, x.shape[-1:])
    bias = _check_param("bias", bias, x.shape[-1:])
    x_hat, _ = _standardize(x, axis=-1, eps=eps)
    return gain * x_hat + bias


def layer_norm_backward(dy, x, gain, eps: float = 1e-5):
    """Gradients of `layer_norm` with respect to x, gain and bias, given dL/dy.

    dgain and dbias sum over every axis but the last (each example and token shares g and b).
    """
    eps = check_eps(eps)
    x = _as_float64("x", x)
    dy = _check_param("dy", dy, x.shape)
    gain = _check_param("gain", gain, x.shape[-1:])
    x_hat, inv_std = _standardize(x, axis=-1, eps=eps)
    leading = tuple(range(x.ndim - 1))
    dx = _project_out(dy * gain, x_hat, inv_std, axis=-1, center=True)
    return dx, (dy * x_hat).sum(axis=leading), dy.sum(axis=leading)


def _rms_scale(x: np.ndarray, eps: float) -> np.ndarray:
    """1 / RMS(a) with RMS(a) = sqrt((1/n) sum_i a_i^2 + eps): Zhang & Sennrich 2019's RMS has no
    eps; torch.nn.RMSNorm puts it inside the sqrt, as here."""
    with np.errstate(over="ignore"):  # an overflow is redone below
        mean_square = (x**2).mean(axis=-1, keepdims=True)
    scale = _overflow_scale(mean_square, x, -1)
    if scale is not None:  # the same function on a / s (see _overflow_scale)
        return _rms_scale(x / scale, eps / scale / scale) / scale
    return 1.0 / np.sqrt(mean_square + eps)


def rms_norm(x, gain, eps: float = 1e-5) -> np.ndarray:
    """RMSNorm over the last axis: y = g * a / RMS(a). No re-centering and no bias (notebook 07)."""
    eps = check_eps(eps)
    x = _as_float64("x", x)
    gain = _check_param("gain", gain, x.shape[-1:])
    return gain * x * _rms_scale(x, eps)


def rms_norm_backward(dy, x, gain, eps: float = 1e-5):
    """Gradients of `rms_norm` with respect to x and gain, given dL/dy."""
    eps = check_eps(eps)
    x = _as_float64("x", x)
    dy = _check_param("dy", dy, x.shape)
    gain = _check_param("gain", gain, x.shape[-1:])
    inv_rms = _rms_scale(x, eps)
    x_hat = x * inv_rms
    leading = tuple(range(x.ndim - 1))
    dx = _project_out(dy * gain, x_hat, inv_rms, axis=-1, center=False)
    return dx, (dy * x_hat).sum(axis=leading)


def _check_batch(x: np.ndarray) -> None:
    if x.shape[0] < 2:
        raise ValueError(
            f"batch_norm needs at least 2 examples to take statistics over axis 0, got input of "
            f"shape {x.shape}: with one example the variance is 0 and every output equals the bias"
        )


def batch_norm(x, gain, bias, eps: float = 1e-5) -> np.ndarray:
    """Training-mode BatchNorm: statistics of each unit over the batch (axis 0), biased variance.

    Ioffe & Szegedy 2015, Alg. 1; the column-wise twin of `layer_norm` (notebook 02).
    """
    eps = check_eps(eps)
    x = _as_float64("x", x)
    _check_batch(x)
    gain = _check_param("gain", gain, x.shape[1:])
    bias = _check_param("bias", bias, x.shape[1:])
    x_hat, _ = _standardize(x, axis=0, eps=eps)
    return gain * x_hat + bias


def batch_norm_backward(dy, x, gain, eps: float = 1e-5):
    """Gradients of training-mode `batch_norm`: the same projection as LayerNorm's, along axis 0."""
    eps = check_eps(eps)
    x = _as_float64("x", x)
    _check_batch(x)
    dy = _check_param("dy", dy, x.shape)
    gain = _check_param("gain", gain, x.shape[1:])
    x_hat, inv_std = _standardize(x, axis=0, eps=eps)
    dx = _project_out(dy * gain, x_hat, inv_std, axis=0, center=True)
    return dx, (dy * x_hat).sum(axis=0), dy.sum(axis=0)
