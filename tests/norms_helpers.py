"""What test_norms and test_norms_edges share: random float64 inputs, strategies, tolerances."""

import numpy as np
import torch
from hypothesis import settings
from hypothesis import strategies as st

F64 = torch.float64
HALF = [torch.float16, torch.bfloat16]
TOL = {"rtol": 1e-10, "atol": 1e-10}
SETTINGS = settings(max_examples=50)

seeds = st.integers(0, 2**32 - 1)
lead_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)
epsilons = st.sampled_from([1e-5, 1e-3, 0.1])


def _randn(shape, seed, dtype=F64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@st.composite
def values(draw, shape):
    """Normal values offset by up to 1e3 and spread by 1e-3 to 1e3, in float64."""
    offset = draw(st.floats(-1e3, 1e3))
    scale = 10.0 ** draw(st.floats(-3, 3))
    return offset + scale * _randn(shape, draw(seeds))


def _randomized(module, seed):
    """Every parameter set to random, non-default values, so that copying them matters."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype))
    return module


def _run(module, x, dy):
    """Output, input gradient and parameter gradients (by name) of sum(dy * module(x))."""
    module.zero_grad()
    x = x.clone().requires_grad_(True)
    y = module(x)
    y.backward(dy)
    return y.detach(), x.grad, {name: p.grad for name, p in module.named_parameters()}


def _tol(kappa):
    """rtol and atol for float64 results computed from (x - mean) / sqrt(var + eps).

    Centering leaves an error of about ulp(max|x|), which the division magnifies by
    kappa = max|x| / sqrt(var + eps): two correct implementations agree to 1e-10 on ordinary inputs
    but only to ~1e-16 * kappa (times the gradient's own amplification) on offset ones.
    """
    tol = max(1e-10, 1e-13 * kappa)
    return {"rtol": tol, "atol": tol}


def _centering_tol(x, dims, eps):
    var = x.var(dim=dims, correction=0)
    return _tol((x.abs().amax(dim=dims) / (var + eps).sqrt()).max().item())


def _t(a):
    return torch.from_numpy(np.asarray(a))


def _np(t):
    return t.detach().numpy()


def _as_rows(t):
    """(N, C) or (N, C, L) -> (N * L, C): one row per value the batch statistic averages over."""
    return _np(t.transpose(1, -1).reshape(-1, t.shape[1]))


def _from_rows(a, like):
    return _t(a).reshape(like.transpose(1, -1).shape).transpose(1, -1)
