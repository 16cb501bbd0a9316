"""Experiments of notebook 05, the Fisher metric of normalized units (Sec. 5.2): claims I4, I4b, I6.

- `fisher_doubling` (I4): the Fisher information of WeightNorm, BatchNorm and LayerNorm logistic
  units before and after doubling w.
- `fisher_cross_blocks` (I4b): WeightNorm units under one softmax, one row of w doubled; the
  blocks of the Fisher information along it.
- `gain_metric` (I6): the metric along the gain g when the inputs are scaled, the outputs held
  fixed.
- `fisher_closed_forms`: the paper's closed forms of these metrics (Eq. 13-14 and the supplement's
  metrics along g) against the same Fisher information computed by autograd.
"""

from dataclasses import dataclass

import torch

from lnpaper.chapters.ch05_invariances import geometry
from lnpaper.companion.record import experiment
from lnpaper.norms import WeightNormLinear


@dataclass
class FisherResult:
    kinds: list  # which unit, and which weights were doubled
    nominal: dict  # block label -> the factor the argument predicts when w doubles
    ratios: dict  # kind -> block label -> ||F'_block|| / ||F_block|| (Frobenius)
    off_scalar: dict  # kind -> block label -> ||F'_block - ratio F_block|| / ||F'_block||
    length_ratio: dict  # kind -> sqrt(u^T F'_ww u) / sqrt(u^T F_ww u), u a random w direction
    gradient_ratios: dict  # kind -> parameter -> ||grad' || / ||grad||
    logit_change: dict  # kind -> max |z' - z|: did the model's output change?
    radial_curvature: dict  # kind -> w^T F_ww w / (||w||^2 * largest eigenvalue of F_ww)


# The weights doubled, the parameter names of (w, g, b) and, for LN one row, the rows of W used.
FISHER_KINDS = ("weightnorm", "batchnorm", "layernorm, whole W", "layernorm, one row w_1")


def _fisher_unit(kind: str, inputs: int, units: int, generator: torch.Generator):
    if kind == "weightnorm":
        return geometry.weightnorm_logistic_unit(inputs, generator), ("direction", "scale", "bias")
    if kind == "batchnorm":
        return geometry.batchnorm_logistic_unit(inputs, generator), (
            "0.weight",
            "1.weight",
            "1.bias",
        )
    layer = geometry.layernorm_logistic_layer(inputs, units, generator)
    return layer, ("0.weight", "1.weight", "1.bias")


@experiment
def fisher_doubling(
    *, cases: int = 512, inputs: int = 6, units: int = 4, seed: int = 0
) -> FisherResult:
    """I4: the Fisher information of normalized logistic units before and after doubling w.

    WeightNorm and BatchNorm (expected statistics over `cases` inputs): one unit, w doubled.
    LayerNorm: `units` logistic units sharing mu and sigma, with the whole W doubled, or one row.
    """
    nominal = {"w-w": 0.25, "w-g": 0.5, "w-b": 0.5, "g-g": 1.0, "g-b": 1.0, "b-b": 1.0}
    ratios, off_scalar, length_ratio, gradient_ratios = {}, {}, {}, {}
    logit_change, radial = {}, {}
    for kind in FISHER_KINDS:
        generator = torch.Generator().manual_seed(seed)
        x = 0.5 + torch.randn(cases, inputs, generator=generator, dtype=torch.float64)
        module, names = _fisher_unit(kind, inputs, units, generator)
        with torch.no_grad():
            p = torch.sigmoid(module(x))
        y = torch.bernoulli(p, generator=generator)  # labels drawn from the model itself
        u = torch.randn(inputs, generator=generator, dtype=torch.float64)  # a w direction
        weight = dict(module.named_parameters())[names[0]]
        row = kind.endswith("one row w_1")

        def measure(module=module, x=x, y=y, names=names):
            fisher, blocks = geometry.logistic_fisher(module, x, names)
            grads = geometry.log_likelihood_gradient(module, x, y, names)
            with torch.no_grad():
                z = module(x)
            return fisher, blocks, grads, z

        fisher0, blocks, grads0, z0 = measure()
        with torch.no_grad():
            if row:
                weight[0] *= 2.0
            else:
                weight *= 2.0
        fisher1, _, grads1, z1 = measure()

        w_slice = blocks[names[0]]
        if row:  # only the doubled row's coordinates: the first `inputs` entries of W
            w_slice = slice(w_slice.start, w_slice.start + inputs)
        labelled = {"w": w_slice, "g": blocks[names[1]], "b": blocks[names[2]]}
        ratios[kind], off_scalar[kind] = {}, {}
        for label in nominal:
            left, right = label.split("-")
            before = fisher0[labelled[left], labelled[right]]
            after = fisher1[labelled[left], labelled[right]]
            ratio = (after.norm() / before.norm()).item()
            ratios[kind][label] = ratio
            off_scalar[kind][label] = ((after - ratio * before).norm() / after.norm()).item()
        if row or weight.ndim == 1 or weight.shape[0] == 1:
            direction = u
        else:  # the same direction u in every unit's weights
            direction = u.repeat(weight.shape[0])
        ww0 = fisher0[labelled["w"], labelled["w"]]
        ww1 = fisher1[labelled["w"], labelled["w"]]
        length_ratio[kind] = ((direction @ ww1 @ direction) / (direction @ ww0 @ direction)).item()
        length_ratio[kind] **= 0.5
        gradient_ratios[kind] = {
            "w": (
                grads1[0].flatten()[: direction.numel()].norm()
                / grads0[0].flatten()[: direction.numel()].norm()
            ).item(),
            "g": (grads1[1].norm() / grads0[1].norm()).item(),
            "b": (grads1[2].norm() / grads0[2].norm()).item(),
        }
        logit_change[kind] = (z1 - z0).abs().max().item()
        w_flat = weight.detach().flatten()[: direction.numel()]
        largest = torch.linalg.eigvalsh(ww1).max()
        radial[kind] = ((w_flat @ ww1 @ w_flat) / (w_flat @ w_flat * largest)).item()
    return FisherResult(
        kinds=list(FISHER_KINDS),
        nominal=nominal,
        ratios=ratios,
        off_scalar=off_scalar,
        length_ratio=length_ratio,
        gradient_ratios=gradient_ratios,
        logit_change=logit_change,
        radial_curvature=radial,
    )


@dataclass
class GainMetricResult:
    kinds: list  # the units: GAIN_KINDS
    scales: list  # delta: the inputs are x -> delta x
    exponent: dict  # kind -> k, the argument's F_gg(delta) = delta^k F_gg(1)
    metric: dict  # kind -> per delta, the g-g block of the Fisher information (nested lists)
    gradient: dict  # kind -> per delta, ||dlog-likelihood/dg||
    # kind -> per delta, max |F_gg(delta) - delta^k F_gg(1)| / max |delta^k F_gg(1)|
    block_error: dict
    logit_change: dict  # kind -> per delta, max |z(delta) - z(1)|: were the outputs held fixed?


GAIN_KINDS = ("weightnorm", "batchnorm", "layernorm")  # LayerNorm: a layer of `units` units


@dataclass
class CrossBlockResult:
    units: int
    inputs: int
    cases: int
    nominal: dict  # block label -> the factor F's block is multiplied by when w_1 doubles
    # block label -> max |F'_block - factor F_block| / max |F'_block|, float64
    deviation: dict
    cross_size: float  # max |F_{w_1 w_j}| (j != 1) / max |F_{w_1 w_1}|, before doubling
    logistic_cross: float  # the same cross block for independent logistic units: exactly 0
    logit_change: float  # max |z' - z|: WeightNorm's output does not move


# the rows and columns of F along w_1 scale by 1/2 (dz/dw_1 does), so its own block by 1/4
CROSS_BLOCKS = {"w_1 with w_1": 0.25, "w_1 with the rest": 0.5, "the rest with the rest": 1.0}


@experiment
def fisher_cross_blocks(
    *, cases: int = 512, inputs: int = 6, units: int = 4, seed: int = 0
) -> CrossBlockResult:
    """I4b, the other reading of Sec. 5.2's "1/2": `units` WeightNorm units under one softmax, only
    w_1 (unit 1's direction) doubled; the Fisher blocks along w_1 against the paper's factor
    g_i g_j / (sigma_i sigma_j) for F_ij. The same blocks for independent logistic units
    (`logistic_fisher`) are zero, which is why the reading needs a coupled output."""
    generator = torch.Generator().manual_seed(seed)
    x = 0.5 + torch.randn(cases, inputs, generator=generator, dtype=torch.float64)
    layer = WeightNormLinear(inputs, units).double()
    with torch.no_grad():
        layer.direction.copy_(torch.randn(units, inputs, generator=generator, dtype=torch.float64))
        layer.scale.copy_(1.0 + torch.rand(units, generator=generator, dtype=torch.float64))
        layer.bias.copy_(0.3 * torch.randn(units, generator=generator, dtype=torch.float64))
    names = ("direction", "scale", "bias")
    w_1 = torch.zeros(units * inputs + 2 * units, dtype=torch.bool)
    w_1[:inputs] = True  # row 1 of the direction matrix comes first in theta
    fisher, _ = geometry.softmax_fisher(layer, x, names)
    logistic, _ = geometry.logistic_fisher(layer, x, names)
    with torch.no_grad():
        before = layer(x)
        layer.direction[0] *= 2.0
        after = layer(x)
    doubled, _ = geometry.softmax_fisher(layer, x, names)
    parts = {
        "w_1 with w_1": (w_1[:, None] & w_1[None, :]),
        "w_1 with the rest": (w_1[:, None] ^ w_1[None, :]),
        "the rest with the rest": (~w_1[:, None] & ~w_1[None, :]),
    }
    deviation = {
        label: ((doubled[mask] - CROSS_BLOCKS[label] * fisher[mask]).abs().max()
                / doubled[mask].abs().max()).item()
        for label, mask in parts.items()
    }  # fmt: skip
    others = slice(inputs, units * inputs)
    return CrossBlockResult(
        units=units, inputs=inputs, cases=cases, nominal=dict(CROSS_BLOCKS), deviation=deviation,
        cross_size=(fisher[:inputs, others].abs().max() / fisher[:inputs, :inputs].abs().max()).item(),
        logistic_cross=logistic[:inputs, others].abs().max().item(),
        logit_change=(after - before).abs().max().item(),
    )  # fmt: skip


@experiment
def gain_metric(
    *, cases: int = 512, inputs: int = 6, units: int = 4, seed: int = 0, scales=(0.1, 1.0, 10.0)
) -> GainMetricResult:
    """I6 (Sec. 5.2, "learning the magnitude of incoming weights"): the Fisher metric along the
    gain g when the inputs are scaled, x -> delta x, with the model's outputs held fixed.

    WeightNorm's z = g v.x / ||v|| + b is the plain GLM z = w.x + b written in polar coordinates:
    g is ||w||, the magnitude the paper compares. Scaling the inputs by delta changes its outputs
    unless g -> g / delta; with that, dz/dg = v^.x grows by delta and the metric along g by
    delta^2. BatchNorm (expected statistics) and LayerNorm outputs do not move when x does, and
    dz/dg is the normalized summed input, so the metric along g is left as it was: it depends on
    the inputs only through s'(z), the variance of the prediction."""
    if 1.0 not in scales:
        raise ValueError(f"scales must include 1.0, the reference, got {scales}")
    exponent = {kind: 2 if kind == "weightnorm" else 0 for kind in GAIN_KINDS}
    metric, gradient, block_error, logit_change = {}, {}, {}, {}
    for kind in GAIN_KINDS:
        generator = torch.Generator().manual_seed(seed)
        x = 0.5 + torch.randn(cases, inputs, generator=generator, dtype=torch.float64)
        module, names = _fisher_unit(kind, inputs, units, generator)
        with torch.no_grad():
            y = torch.bernoulli(torch.sigmoid(module(x)), generator=generator)
        gain = dict(module.named_parameters())[names[1]]
        start = gain.detach().clone()
        blocks, grads, logits = {}, {}, {}
        for delta in scales:
            with torch.no_grad():  # the plain GLM keeps its outputs only if ||w|| shrinks by delta
                gain.copy_(start / delta if kind == "weightnorm" else start)
                logits[delta] = module(delta * x)
            fisher, where = geometry.logistic_fisher(module, delta * x, names)
            blocks[delta] = fisher[where[names[1]], where[names[1]]]
            grad = geometry.log_likelihood_gradient(module, delta * x, y, names)[1]
            grads[delta] = grad.norm().item()
        predicted = {delta: delta ** exponent[kind] * blocks[1.0] for delta in scales}
        metric[kind] = [blocks[delta].tolist() for delta in scales]
        gradient[kind] = [grads[delta] for delta in scales]
        block_error[kind] = [
            ((blocks[delta] - predicted[delta]).abs().max() / predicted[delta].abs().max()).item()
            for delta in scales
        ]
        logit_change[kind] = [(logits[delta] - logits[1.0]).abs().max().item() for delta in scales]
    return GainMetricResult(
        kinds=list(GAIN_KINDS),
        scales=list(scales),
        exponent=exponent,
        metric=metric,
        gradient=gradient,
        block_error=block_error,
        logit_change=logit_change,
    )


@dataclass
class ClosedFormResult:
    kinds: list  # GAIN_KINDS
    # kind -> max |F_eq13 - F| / max |F| over the entries within one unit's (w_i, g_i, b_i), and
    # between two units' parameters (where Eq. 13 for independent units is zero)
    within_unit: dict
    between_units: dict
    gain_error: dict  # kind -> max |F_gg(equation) - F_gg| / max |F_gg|
    gain_ratio: dict  # kind -> trace F_gg / trace F_gg(equation): 1 if the equation is exact


@experiment
def fisher_closed_forms(
    *, cases: int = 512, inputs: int = 6, units: int = 4, seed: int = 0
) -> ClosedFormResult:
    """Sec. 5.2's Eq. 13-14 and the supplement's metrics along the gain, set against the Fisher
    information computed by autograd (`geometry.logistic_fisher`) for the units of I4 and I6:
    WeightNorm and BatchNorm (one unit), LayerNorm (`units` units sharing mu and sigma)."""
    within, between, gain_error, gain_ratio = {}, {}, {}, {}
    for kind in GAIN_KINDS:
        generator = torch.Generator().manual_seed(seed)
        x = 0.5 + torch.randn(cases, inputs, generator=generator, dtype=torch.float64)
        module, names = _fisher_unit(kind, inputs, units, generator)
        fisher, blocks = geometry.logistic_fisher(module, x, names)
        closed = geometry.paper_fisher(module, x, kind)
        count = fisher.shape[0] // (inputs + 2)  # units in this module: 1, or `units`
        owner = torch.cat(
            [torch.arange(count).repeat_interleave(inputs), *[torch.arange(count)] * 2]
        )
        same = owner[:, None] == owner[None, :]
        scale = fisher.abs().max()
        error = (closed - fisher).abs()
        within[kind] = (error[same].max() / scale).item()
        between[kind] = (error[~same].max() / scale).item() if count > 1 else 0.0
        gains = fisher[blocks[names[1]], blocks[names[1]]]
        metric = geometry.paper_gain_metric(module, x, kind)
        gain_error[kind] = ((metric - gains).abs().max() / gains.abs().max()).item()
        gain_ratio[kind] = (gains.trace() / metric.trace()).item()
    return ClosedFormResult(
        kinds=list(GAIN_KINDS), within_unit=within, between_units=between,
        gain_error=gain_error, gain_ratio=gain_ratio,
    )  # fmt: skip
