"""Experiments of notebook 04, invariances and the geometry of Section 5: claims I1-I6."""

import copy
import math
from dataclasses import dataclass

import torch
from torch import nn

from lnpaper.chapters.ch04_invariances import geometry, invariance
from lnpaper.companion.registry import experiment
from lnpaper.data import digits
from lnpaper.norms import BatchNorm, LayerNorm, WeightNormLinear
from lnpaper.train import epoch_batches, train


@dataclass
class InvarianceResult:
    rows: list
    columns: list
    threshold: float
    draws: int
    max_change: dict  # row -> column -> largest output change over the draws (seed seeds[0])
    min_change: dict  # row -> column -> smallest output change over the draws
    min_input_change: dict  # column -> smallest change of the summed inputs a over the draws
    seeds: list
    tables: list  # one verdict table (row -> column -> invariant?) per seed
    library_eps: float
    max_change_library_eps: dict  # row -> column -> largest change with eps = library_eps


@experiment
def invariance_measurements(
    *, seeds=(0, 1, 2, 3, 4), draws: int = 6, library_eps: float = 1e-5
) -> InvarianceResult:
    """I1: every cell of the invariance table measured, for several seeds, plus the same
    measurement with the libraries' eps inside the square root instead of the paper's none."""
    first = invariance.measure_invariances(seeds[0], draws=draws)
    tables = [invariance.invariance_table(seed) for seed in seeds]
    with_eps = invariance.max_output_changes(seeds[0], draws=draws, eps=library_eps)
    return InvarianceResult(
        rows=list(invariance.ROWS),
        columns=list(invariance.COLUMNS),
        threshold=invariance.THRESHOLD,
        draws=draws,
        max_change={r: {c: max(v) for c, v in cols.items()} for r, cols in first.changes.items()},
        min_change={r: {c: min(v) for c, v in cols.items()} for r, cols in first.changes.items()},
        min_input_change={c: min(v) for c, v in first.input_changes.items()},
        seeds=list(seeds),
        tables=tables,
        library_eps=library_eps,
        max_change_library_eps=with_eps,
    )


# Column headings for printing the measured table (notebooks 04 and 06), in the order of COLUMNS.
SHORT_COLUMNS = ("W -> dW", "W -> W+1c^T", "w_i -> d w_i", "X -> dX", "X -> X+1c^T", "x_n -> d x_n")


def table_text(table: InvarianceResult, rows=None) -> str:
    """The measured Table 1 as text: per cell Inv or No, and the largest output change behind it.
    Printed in two halves, the weights' three columns over the data's, so that each line (53
    characters) fits a notebook's 88-character column (issue 23); all six side by side were 95."""
    lines = []
    for half in (slice(0, 3), slice(3, 6)):
        columns = table.columns[half]
        lines.append(f"{'':11s}" + "".join(f"{name:>14s}" for name in SHORT_COLUMNS[half]))
        for row in rows or table.rows:
            cells = [table.max_change[row][c] for c in columns]
            verdicts = [("Inv " if v < table.threshold else "No  ") + f"{v:.1e}" for v in cells]
            lines.append(f"{row:11s}" + "".join(f"{v:>14s}" for v in verdicts))
    return "\n".join(lines)


def lost_invariances(table: InvarianceResult, row: str, reference: str) -> list:
    """The columns where `reference` is invariant and `row` is not (first seed's verdicts)."""
    verdicts = table.tables[0]
    return [c for c in table.columns if verdicts[reference][c] and not verdicts[row][c]]


@dataclass
class ReparameterizationResult:
    draws: int  # random layers, each with fresh parameters and `cases` fresh inputs
    cases: int
    units: int  # H
    weightnorm_vs_linear: float  # max |g_i v_i.x / ||v_i|| + b_i - (x W^T + b)_i|, W = g v / ||v||
    linear_as_weightnorm: float  # max |(x W^T + b) - WN(x)|, WN's v_i = c_i w_i, g_i = ||w_i||
    batchnorm_vs_linear: float  # BN with expected statistics against the linear layer it equals
    layernorm_sum: float  # max |sum_i y_i| over every case, y = (a - mu) / sigma (no affine)
    layernorm_norm: float  # max | ||y||^2 / H - 1 |
    layernorm_norm_library_eps: float  # the same with eps = library_eps inside the square root
    library_eps: float
    linear_sum: float  # median |sum_i z_i| / sqrt(H) over a plain linear layer's outputs z
    linear_norm: float  # median | ||z||^2 / H - 1 |
    linear_nearest: float  # min over z of max(|sum z| / sqrt(H), | ||z||^2 / H - 1 |)


@experiment
def reparameterization(
    *,
    draws: int = 20,
    cases: int = 64,
    inputs: int = 10,
    units: int = 8,
    population: int = 512,
    library_eps: float = 1e-5,
    seed: int = 0,
) -> ReparameterizationResult:
    """I2: which function class each layer computes, in float64 over random parameters and inputs.

    A reparameterization writes the same set of maps with other parameters: WeightNorm's map is
    the plain linear layer with W = g v / ||v||, and every linear layer is a WeightNorm layer;
    BatchNorm with the expected statistics of a data distribution (here `population` draws) is the
    linear layer with w_i g_i / sigma_i and bias b_i - g_i mu_i / sigma_i. LayerNorm's output
    before its affine lies on {sum y = 0, ||y||^2 = H}, which a plain linear layer's does not."""
    generator = torch.Generator().manual_seed(seed)

    def normal(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    def positive_factors(rows):  # one per row, between e^-2 and e^2
        return torch.exp(4 * torch.rand(rows, 1, generator=generator, dtype=torch.float64) - 2)

    weightnorm = WeightNormLinear(inputs, units).double()
    batchnorm = BatchNorm(units, eps=invariance.PAPER_EPS).double().eval()
    layernorm = LayerNorm(units, eps=invariance.PAPER_EPS, elementwise_affine=False).double()
    layernorm_library = LayerNorm(units, eps=library_eps, elementwise_affine=False).double()
    gaps = {"weightnorm": [], "as_weightnorm": [], "batchnorm": []}
    normalized, normalized_library, linear = [], [], []
    with torch.no_grad():
        for _ in range(draws):
            x = normal(cases, inputs)
            # WeightNorm as the paper writes it, g_i v_i.x / ||v_i|| + b_i, with random g (either
            # sign), v of random lengths and b; against the linear layer with W = g v / ||v||
            v = normal(units, inputs) * positive_factors(units)
            g, b = normal(units), 0.5 * normal(units)
            lengths = torch.linalg.vector_norm(v, dim=1)
            weightnorm_map = g * (x @ v.T) / lengths + b
            w = g[:, None] * v / lengths[:, None]
            gaps["weightnorm"].append((weightnorm_map - (x @ w.T + b)).abs().max().item())

            # a plain linear layer, written as WeightNorm: v_i = c_i w_i for random c_i > 0
            w, b = normal(units, inputs) / inputs**0.5, 0.5 * normal(units)
            z = x @ w.T + b
            weightnorm.direction.copy_(w * positive_factors(units))
            weightnorm.scale.copy_(torch.linalg.vector_norm(w, dim=1))
            weightnorm.bias.copy_(b)
            gaps["as_weightnorm"].append((z - weightnorm(x)).abs().max().item())
            linear.append(z)

            # BatchNorm with expected statistics: mu_i = E[w_i.x], sigma_i^2 = Var[w_i.x] over p(x)
            population_a = normal(population, inputs) @ w.T
            mu, var = population_a.mean(dim=0), population_a.var(dim=0, correction=0)
            batchnorm.running_mean.copy_(mu)
            batchnorm.running_var.copy_(var)
            batchnorm.weight.copy_(positive_factors(units).squeeze(1))
            batchnorm.bias.copy_(0.5 * normal(units))
            scale = batchnorm.weight / var.sqrt()
            as_linear = x @ (scale[:, None] * w).T + (batchnorm.bias - scale * mu)
            gaps["batchnorm"].append((batchnorm(x @ w.T) - as_linear).abs().max().item())

            a = x @ (normal(units, inputs) / inputs**0.5).T
            normalized.append(layernorm(a))
            normalized_library.append(layernorm_library(a))
    y, y_library, z = (torch.cat(outputs) for outputs in (normalized, normalized_library, linear))

    def sum_error(outputs):
        return outputs.sum(dim=1).abs()

    def norm_error(outputs):
        return (outputs.pow(2).sum(dim=1) / units - 1).abs()

    linear_sum, linear_norm = sum_error(z) / units**0.5, norm_error(z)
    return ReparameterizationResult(
        draws=draws,
        cases=cases,
        units=units,
        weightnorm_vs_linear=max(gaps["weightnorm"]),
        linear_as_weightnorm=max(gaps["as_weightnorm"]),
        batchnorm_vs_linear=max(gaps["batchnorm"]),
        layernorm_sum=sum_error(y).max().item(),
        layernorm_norm=norm_error(y).max().item(),
        layernorm_norm_library_eps=norm_error(y_library).max().item(),
        library_eps=library_eps,
        linear_sum=linear_sum.median().item(),
        linear_norm=linear_norm.median().item(),
        linear_nearest=torch.maximum(linear_sum, linear_norm).min().item(),
    )


def layernorm_mlp(hidden: int, init_scale: float, seed: int, eps: float) -> nn.Sequential:
    """64 -> hidden (no bias: it would sit inside a) -> LayerNorm -> tanh -> 10, float64, with
    ||W1|| about init_scale * sqrt(hidden). The rest of the initialization does not depend on
    init_scale, and LayerNorm removes it from the output: every init_scale is the same function."""
    generator = torch.Generator().manual_seed(seed)
    model = nn.Sequential(
        nn.Linear(64, hidden, bias=False),
        LayerNorm(hidden, eps=eps),
        nn.Tanh(),
        nn.Linear(hidden, 10),
    ).double()
    with torch.no_grad():
        w1 = torch.randn(hidden, 64, generator=generator, dtype=torch.float64) / 8.0
        model[0].weight.copy_(init_scale * w1)
        model[3].weight.copy_(torch.randn(10, hidden, generator=generator, dtype=torch.float64))
        model[3].weight.mul_(hidden**-0.5)
        model[3].bias.zero_()
    return model


@dataclass
class SGDGeometryResult:
    lr: float
    init_scales: list
    steps: int
    norms: dict  # init scale -> ||W1_t||, t = 0..steps
    grad_norms: dict  # -> ||g_t||
    cosines: dict  # -> cos(g_t, W1_t)
    angles: dict  # -> angle(W1_t, W1_{t+1}) in radians
    norm_sq_increments: dict  # -> measured ||W1_{t+1}||^2 - ||W1_t||^2
    loss_steps: list
    train_loss: dict  # -> mean training loss per logging window
    halving_ratio: float  # ||grad at 2 W1|| / ||grad at W1||, one batch, at init
    halving_deviation: float  # ||2 grad(2 W1) - grad(W1)|| / ||grad(W1)||
    cosine_library_eps: float  # cos(g, W1) at init with eps = 1e-5 inside the sqrt


def _first_layer_grad(model, x, y) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    nn.functional.cross_entropy(model(x), y).backward()
    return model[0].weight.grad.clone()


@experiment
def sgd_geometry(
    *,
    init_scales=(1.0, 3.0),
    steps: int = 400,
    lr: float = 0.5,
    hidden: int = 64,
    batch: int = 64,
    seed: int = 0,
) -> SGDGeometryResult:
    """I3: a layer-normalized MLP on the digits, trained with plain SGD (no momentum, no weight
    decay) from the same function at several scales of W1; the geometry of W1 at every step."""
    images, labels = digits.load("train")
    images = images.double()  # k / 16 pixel values: exact in float32 and float64 alike
    batches = epoch_batches(len(labels), batch, seed)

    def loss_fn(model, indices):
        return nn.functional.cross_entropy(model(images[indices]), labels[indices])

    per_scale = {key: {} for key in ("norms", "grads", "cosines", "angles", "increments", "loss")}
    loss_steps = []
    for scale in init_scales:
        model = layernorm_mlp(hidden, scale, seed, invariance.PAPER_EPS)
        recorder = geometry.WeightGeometry(model[0].weight)
        history = train(model, loss_fn, batches, steps=steps, lr=lr, optimizer="sgd", log_every=10)
        recorder.close()
        key = f"{scale:g}"
        per_scale["norms"][key] = recorder.norms
        per_scale["grads"][key] = recorder.grad_norms
        per_scale["cosines"][key] = recorder.cosines
        per_scale["angles"][key] = recorder.angles
        per_scale["increments"][key] = recorder.norm_sq_increments
        per_scale["loss"][key] = history.train_loss
        loss_steps = history.steps

    x, y = images[batches(0)], labels[batches(0)]
    model = layernorm_mlp(hidden, init_scales[0], seed, invariance.PAPER_EPS)
    grad = _first_layer_grad(model, x, y)
    doubled = copy.deepcopy(model)
    with torch.no_grad():
        doubled[0].weight.mul_(2.0)
    grad_doubled = _first_layer_grad(doubled, x, y)
    library = layernorm_mlp(hidden, init_scales[0], seed, eps=1e-5)
    return SGDGeometryResult(
        lr=lr,
        init_scales=list(init_scales),
        steps=steps,
        norms=per_scale["norms"],
        grad_norms=per_scale["grads"],
        cosines=per_scale["cosines"],
        angles=per_scale["angles"],
        norm_sq_increments=per_scale["increments"],
        loss_steps=loss_steps,
        train_loss=per_scale["loss"],
        halving_ratio=(grad_doubled.norm() / grad.norm()).item(),
        halving_deviation=((2 * grad_doubled - grad).norm() / grad.norm()).item(),
        cosine_library_eps=geometry.cosine(
            _first_layer_grad(library, x, y), library[0].weight.detach()
        ),
    )


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
    """I4b, the other reading of Sec. 5.2's "1/2" (review A, missing check 11): `units` WeightNorm
    units under one softmax, only w_1 (unit 1's direction) doubled; the Fisher blocks along w_1
    against the paper's factor g_i g_j / (sigma_i sigma_j) for F_ij. The same blocks for
    independent logistic units (`logistic_fisher`) are zero, which is why the reading needs a
    coupled output."""
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


# ---- summaries the notebook prints and the claims check ----------------------------------


def invariance_extremes(result) -> tuple[float, float]:
    """The largest change in any cell measured Invariant and the smallest single-draw change in any
    cell measured No: the gap between them is what makes the threshold unambiguous."""
    largest_invariant = max(
        change
        for row in result.rows
        for column, change in result.max_change[row].items()
        if change < result.threshold
    )
    smallest_no = min(
        result.min_change[row][column]
        for row in result.rows
        for column, change in result.max_change[row].items()
        if change >= result.threshold
    )
    return largest_invariant, smallest_no


# ---- I5: Adam and AdamW on a scale-invariant layer --------------------------------------------


def _batched_layernorm_mlps(scales: torch.Tensor, hidden: int, seeds) -> list[torch.Tensor]:
    """One 64 -> hidden -> LayerNorm (no eps, no affine) -> tanh -> 10 MLP per (scale, seed), all
    stacked on a leading axis: [W1 (M, hidden, 64), W2 (M, 10, hidden), b2 (M, 1, 10)], float64.
    Model m = (i, j) has scale scales[i] and seed seeds[j]; the same seed draws the same weights
    at every scale, so a row of models is one function with W1 at several scales."""
    first, second = [], []
    for seed in seeds:
        generator = torch.Generator().manual_seed(int(seed))
        first.append(torch.randn(hidden, 64, generator=generator, dtype=torch.float64) / 8.0)
        second.append(torch.randn(10, hidden, generator=generator, dtype=torch.float64))
    w1 = (scales[:, None, None, None] * torch.stack(first)).flatten(0, 1)
    w2 = torch.stack(second).repeat(len(scales), 1, 1) * hidden**-0.5
    return [w1, w2, torch.zeros(len(w1), 1, 10, dtype=torch.float64)]


def _batched_losses(params, images, labels, indices) -> torch.Tensor:
    """The mean cross-entropy of each stacked model on its own batch images[indices[m]]."""
    w1, w2, b2 = params
    a = torch.bmm(images[indices], w1.transpose(1, 2))
    a = a - a.mean(-1, keepdim=True)  # LayerNorm over the hidden units: scaling W1 changes nothing
    y = a / a.pow(2).mean(-1, keepdim=True).sqrt()
    logits = torch.bmm(torch.tanh(y), w2.transpose(1, 2)) + b2
    losses = nn.functional.cross_entropy(
        logits.flatten(0, 1), labels[indices].flatten(), reduction="none"
    )
    return losses.view(indices.shape).mean(1)


def _flat_angle(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """Per model, the angle between its W1 before and after a step (Kahan's form, as `angle`)."""
    u = before.flatten(1) / before.flatten(1).norm(dim=1, keepdim=True)
    v = after.flatten(1) / after.flatten(1).norm(dim=1, keepdim=True)
    return 2 * torch.atan2((u - v).norm(dim=1), (u + v).norm(dim=1))


def _run_batched(params, groups, optimizer, images, labels, orders, steps):
    """Train the stacked models `steps` steps (each model's loss only moves its own weights, and
    Adam is per element, so one optimizer over the stack is M independent optimizers); return
    per step and model ||W1_t|| (t = 0..steps), the angle W1 turns, and the loss."""
    for p in params:
        p.requires_grad_()
    opt = optimizer(groups)
    w1 = params[0]
    norms, angles, losses = [w1.detach().flatten(1).norm(dim=1)], [], []
    for step in range(steps):
        indices = torch.stack([order(step) for order in orders])
        loss = _batched_losses(params, images, labels, indices)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        before = w1.detach().clone()
        opt.step()
        angles.append(_flat_angle(before, w1.detach()))
        norms.append(w1.detach().flatten(1).norm(dim=1))
        losses.append(loss.detach())
    return torch.stack(norms), torch.stack(angles), torch.stack(losses)


@dataclass
class AdamGeometryResult:
    seeds: list
    hidden: int
    elements: int  # C, the number of entries of W1: the scale-invariant group
    batch: int
    betas: list  # Adam's (beta1, beta2), torch's defaults
    # (a) no weight decay, W1 started at several scales; [scale][seed]:
    init_scales: list
    window: int  # steps over which the angle per step is averaged
    adam_lr: float
    sgd_lr: float
    init_norms: list  # [scale][seed] ||W1_0||
    adam_angles: list  # [scale][seed] mean angle per step over the window
    sgd_angles: list
    # (b) AdamW, several (lr, lambda), W1 started at one scale; [config][seed] unless a curve:
    configs: list  # [(lr, lambda)]
    adamw_init_scale: float
    steps: int
    tail: int  # the last `tail` steps give the equilibrium values
    equilibrium_angle: list  # mean angle per step over the tail
    equilibrium_norm: list  # mean ||W1|| over the tail
    approach_steps: list  # first step with | ||W1||^2 - equilibrium^2 | below 1/e of its start
    final_loss: list  # mean training loss over the tail
    curve_every: int
    angle_curve: list  # [config][t / curve_every]: mean over seeds of the angle per step
    norm_curve: list  # [config][t / curve_every]: mean over seeds of ||W1_t||


@experiment
def adam_geometry(
    *,
    init_scales=(0.5, 1.0, 2.0, 4.0, 8.0),
    window: int = 20,
    adam_lr: float = 1e-3,
    sgd_lr: float = 0.05,
    configs=((1e-2, 0.5), (5e-3, 1.0), (2e-2, 0.5)),
    adamw_init_scale: float = 3.0,
    steps: int = 800,
    tail: int = 200,
    hidden: int = 32,
    batch: int = 64,
    seeds=tuple(range(10)),
    curve_every: int = 4,
) -> AdamGeometryResult:
    """I5: the layer-normalized MLP of I3 (smaller), one model per (setting, seed) stacked and
    trained together. (a) Adam and plain SGD without weight decay, W1 started at several scales of
    one function: the angle per step over the first `window` steps. (b) AdamW with decoupled
    weight decay on W1 only (W1 <- W1 - lr lambda W1 beside Adam's step), W1 started at
    `adamw_init_scale`: the angle per step and ||W1|| once they settle, and how fast ||W1|| gets
    there."""
    if not 0 < tail < steps:
        raise ValueError(f"tail must lie between 0 and steps = {steps}, got {tail}")
    if window < 1 or len(init_scales) < 2:
        raise ValueError(
            f"need window >= 1 and two or more init_scales, got {window}, {init_scales}"
        )
    images, labels = digits.load("train")
    images = images.double()
    seeds = [int(s) for s in seeds]
    n_seeds = len(seeds)
    betas = (0.9, 0.999)

    def orders(copies: int):
        return [epoch_batches(len(labels), batch, seed) for seed in seeds] * copies

    scales = torch.tensor(init_scales, dtype=torch.float64)
    per_scale = {}
    for name, lr in (("adam", adam_lr), ("sgd", sgd_lr)):
        params = _batched_layernorm_mlps(scales, hidden, seeds)
        if name == "adam":
            optimizer = lambda groups, lr=lr: torch.optim.Adam(groups, lr=lr, betas=betas)  # noqa: E731
        else:
            optimizer = lambda groups, lr=lr: torch.optim.SGD(groups, lr=lr)  # noqa: E731
        norms, angles, _ = _run_batched(params, params, optimizer, images, labels,
                                        orders(len(scales)), window)  # fmt: skip
        per_scale[name] = angles.mean(0).view(len(scales), n_seeds).tolist()
        per_scale["norms"] = norms[0].view(len(scales), n_seeds).tolist()

    # (b): one stack per (lr, lambda), each its own parameter group, trained as one.
    stacks, groups = _adamw_stacks(configs, adamw_init_scale, hidden, seeds)
    norms, angles, losses = _run_stacks(stacks, groups, betas, images, labels,
                                        orders(len(configs)), steps)  # fmt: skip
    k = len(configs)
    norms = norms.view(steps + 1, k, n_seeds)
    angles = angles.view(steps, k, n_seeds)
    losses = losses.view(steps, k, n_seeds)
    settled_norm = norms[-tail:].mean(0)
    gap = (norms.pow(2) - settled_norm.pow(2)).abs()
    below = gap < gap[0] * math.exp(-1)
    approach = below.double().argmax(0).double()  # the first step below 1/e of the starting gap
    approach[~below.any(0)] = float("nan")
    return AdamGeometryResult(
        seeds=seeds,
        hidden=hidden,
        elements=hidden * 64,
        batch=batch,
        betas=list(betas),
        init_scales=list(init_scales),
        window=window,
        adam_lr=adam_lr,
        sgd_lr=sgd_lr,
        init_norms=per_scale["norms"],
        adam_angles=per_scale["adam"],
        sgd_angles=per_scale["sgd"],
        configs=[list(c) for c in configs],
        adamw_init_scale=adamw_init_scale,
        steps=steps,
        tail=tail,
        equilibrium_angle=angles[-tail:].mean(0).tolist(),
        equilibrium_norm=settled_norm.tolist(),
        approach_steps=approach.tolist(),
        final_loss=losses[-tail:].mean(0).tolist(),
        curve_every=curve_every,
        angle_curve=angles[::curve_every].mean(2).T.tolist(),
        norm_curve=norms[::curve_every].mean(2).T.tolist(),
    )


def _adamw_stacks(configs, init_scale: float, hidden: int, seeds):
    """One stack of `_batched_layernorm_mlps` per AdamW (lr, lambda) of `configs`, W1 at
    `init_scale`, and their parameter groups: each stack its own, weight decay on W1 only."""
    stacks = [
        _batched_layernorm_mlps(torch.tensor([init_scale], dtype=torch.float64), hidden, seeds)
        for _ in configs
    ]
    groups = []
    for (lr, decay), stack in zip(configs, stacks, strict=True):
        for k, p in enumerate(stack):
            p.requires_grad_()
            groups.append({"params": [p], "lr": lr, "weight_decay": decay if k == 0 else 0.0})
    return stacks, groups


def _run_stacks(stacks, groups, betas, images, labels, orders, steps, observe=None):
    """`_run_batched` for several stacks with their own parameter groups: their W1 side by side.
    `observe(step, before, after, optimizer)`, if given, is called after every step (W1 of every
    stack, concatenated, before and after the step); it only reads."""
    opt = torch.optim.AdamW(groups, betas=betas, foreach=True)
    first = [stack[0] for stack in stacks]
    norms, angles, losses = [torch.cat([w.detach() for w in first]).flatten(1).norm(dim=1)], [], []
    for step in range(steps):
        indices = torch.stack([order(step) for order in orders])
        params = [torch.cat([stack[k] for stack in stacks]) for k in range(3)]
        loss = _batched_losses(params, images, labels, indices)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        before = torch.cat([w.detach() for w in first])
        opt.step()
        after = torch.cat([w.detach() for w in first])
        if observe is not None:
            observe(step, before, after, opt)
        angles.append(_flat_angle(before, after))
        norms.append(after.flatten(1).norm(dim=1))
        losses.append(loss.detach())
    return torch.stack(norms), torch.stack(angles), torch.stack(losses)


@dataclass
class AdamUpdateResult:
    seeds: list
    configs: list  # [(lr, lambda)], adam_geometry's
    betas: list  # Adam's (beta1, beta2), adam_geometry's
    elements: int  # C
    steps: int
    tail: int
    lags: list  # k for the autocorrelation of the updates
    # [config][seed], each a mean over the tail's steps:
    gradient_cos: list  # cos(g_t, W_t): 0 for a scale-invariant W (I3)
    momentum_cos: list  # cos(-m_t, W_t): the radial part of the momentum alone
    update_cos: list  # cos(d_t, W_t), d_t = Adam's step without the decay
    radial: list  # 2 <W_t, d_t> / ||d_t||^2: what the step adds to ||W||^2, in units of ||d_t||^2
    # the same for the step Adam would take with one divisor for all of W (sqrt of the mean of
    # v_hat): the momentum's own radial term, before the per-coordinate division (added after the
    # first run, to split the radial term between the momentum and the division)
    momentum_radial: list
    update_size: list  # ||d_t||^2 / (lr^2 C): 1 in the equilibrium's derivation
    norm: list  # ||W_t||
    autocorrelation: list  # [config][seed][lag]: cos(d_t, d_{t-k})


def _cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per model (leading axis), the cosine between a and b flattened."""
    a, b = a.flatten(1), b.flatten(1)
    return (a * b).sum(1) / (a.norm(dim=1) * b.norm(dim=1))


@experiment
def adam_update_geometry(
    *,
    configs=((1e-2, 0.5), (5e-3, 1.0), (2e-2, 0.5)),
    init_scale: float = 3.0,
    steps: int = 800,
    tail: int = 200,
    hidden: int = 32,
    batch: int = 64,
    seeds=tuple(range(10)),
    lags=(1, 2, 5, 10),
) -> AdamUpdateResult:
    """I5b (issue 22, review B11 and missing check 12): adam_geometry's AdamW runs again (the same
    models, data and settings), reading at every step of the last `tail` what the rotational
    equilibrium assumes about Adam's step d_t = W_{t+1} - (1 - lr lambda) W_t: that it is
    orthogonal to W_t (cos(d_t, W_t), and what it adds to ||W||^2 besides ||d_t||^2), of squared
    size lr^2 C, and uncorrelated from step to step (cos(d_t, d_{t-k})); and, to tell the two
    causes of a radial part apart, the momentum's own cosine with W_t (before Adam's
    per-coordinate division) and the gradient's."""
    lags = [int(k) for k in lags]
    if not lags or min(lags) < 1 or not 0 < tail <= steps - max(lags):
        raise ValueError(
            f"need lags >= 1 and 0 < tail <= steps - max(lags), got lags {lags}, tail {tail}, "
            f"steps {steps}"
        )
    images, labels = digits.load("train")
    images = images.double()
    seeds = [int(s) for s in seeds]
    stacks, groups = _adamw_stacks(configs, init_scale, hidden, seeds)
    orders = [epoch_batches(len(labels), batch, seed) for seed in seeds] * len(configs)
    betas = (0.9, 0.999)
    rates = torch.tensor([lr for lr, _ in configs], dtype=torch.float64)
    decays = torch.tensor([decay for _, decay in configs], dtype=torch.float64)
    shrink = (1 - rates * decays).repeat_interleave(len(seeds))[:, None, None]
    lr_per_model = rates.repeat_interleave(len(seeds))
    elements = hidden * 64
    first = [stack[0] for stack in stacks]
    start = steps - tail - max(lags)  # keep enough past steps for the longest lag
    past, sums = [], {}

    def add(name, value):
        sums[name] = sums.get(name, 0) + value

    def observe(step, before, after, optimizer):
        if step < start:
            return
        update = after - shrink * before
        past.append(update)
        del past[: -max(lags) - 1]
        if step < steps - tail:
            return
        gradient = torch.cat([w.grad for w in first])
        momentum = torch.cat([optimizer.state[w]["exp_avg"] for w in first])
        t = float(optimizer.state[first[0]]["step"])
        second = torch.cat([optimizer.state[w]["exp_avg_sq"] for w in first]) / (1 - betas[1] ** t)
        uniform = (
            -lr_per_model[:, None, None]
            * (momentum / (1 - betas[0] ** t))
            / (second.flatten(1).mean(1).sqrt()[:, None, None] + 1e-8)
        )  # Adam's step with one divisor per model
        add("gradient_cos", _cosine(gradient, before))
        add("momentum_cos", _cosine(-momentum, before))
        add("update_cos", _cosine(update, before))
        add("radial", 2 * (update * before).flatten(1).sum(1) / update.flatten(1).pow(2).sum(1))
        add(
            "momentum_radial",
            2 * (uniform * before).flatten(1).sum(1) / uniform.flatten(1).pow(2).sum(1),
        )
        add("update_size", update.flatten(1).pow(2).sum(1) / (lr_per_model**2 * elements))
        add("norm", before.flatten(1).norm(dim=1))
        add("autocorrelation", torch.stack([_cosine(update, past[-1 - k]) for k in lags], 1))

    _run_stacks(stacks, groups, betas, images, labels, orders, steps, observe=observe)

    def per_config(total):  # (models, ...) summed over the tail -> [config][seed]...
        return (total / tail).view(len(configs), len(seeds), *total.shape[1:]).tolist()

    return AdamUpdateResult(
        seeds=seeds,
        configs=[list(c) for c in configs],
        betas=list(betas),
        elements=elements,
        steps=steps,
        tail=tail,
        lags=lags,
        **{name: per_config(total) for name, total in sums.items()},
    )


def angle_slopes(result, optimizer: str) -> list[float]:
    """I5 (a): per seed, the least-squares slope of log(angle per step) on log ||W1_0|| over the
    init scales; -1 if the angle goes like lr / ||W|| (Adam), -2 like lr / ||W||^2 (SGD)."""
    angles = {"adam": result.adam_angles, "sgd": result.sgd_angles}[optimizer]
    slopes = []
    for j in range(len(result.seeds)):
        x = [math.log(row[j]) for row in result.init_norms]
        y = [math.log(row[j]) for row in angles]
        mx, my = sum(x) / len(x), sum(y) / len(y)
        sxx = sum((a - mx) ** 2 for a in x)
        slopes.append(sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sxx)
    return slopes


def adamw_predictions(result, config: int) -> dict:
    """I5 (b), the rotational equilibrium of Kosson et al. 2024 for AdamW's (lr, lambda) number
    `config`, C = result.elements:

        angle per step  sqrt(2 lr lambda (1 - beta1) / (1 + beta1))
        ||W||           sqrt(lr C / (2 lambda))
        approach        1 / (2 lr lambda) steps (the time constant of ||W||^2)
    """
    lr, decay = result.configs[config]
    beta1 = result.betas[0]
    return {
        "angle": math.sqrt(2 * lr * decay * (1 - beta1) / (1 + beta1)),
        "norm": math.sqrt(lr * result.elements / (2 * decay)),
        "approach": 1 / (2 * lr * decay),
    }


def adamw_ratios(result, config: int) -> dict:
    """Per seed, measured / predicted for the angle, the norm and the approach time."""
    predicted = adamw_predictions(result, config)
    measured = {
        "angle": result.equilibrium_angle[config],
        "norm": result.equilibrium_norm[config],
        "approach": result.approach_steps[config],
    }
    return {key: [v / predicted[key] for v in measured[key]] for key in predicted}
