"""Experiments of notebook 05, the geometry of Section 5 under the optimizers: claims I3, I5 and I5b.

- `sgd_geometry` (I3): a layer-normalized MLP on the digits under plain SGD from the same function
  at several scales of W1; the norm, the gradient and the angle of W1 at every step.
- `adam_geometry` (I5): the same MLP (smaller), many models stacked and trained as one, under Adam
  and SGD without weight decay and under AdamW with decoupled weight decay; `angle_slopes`,
  `adamw_predictions` and `adamw_ratios` set it against the rotational equilibrium.
- `adam_update_geometry` (I5b): the AdamW runs again, reading Adam's step against what the
  equilibrium assumes of it.
"""

import copy
import math
from dataclasses import dataclass

import torch
from torch import nn

from lnpaper.chapters.ch05_invariances import geometry, invariance
from lnpaper.companion.record import experiment
from lnpaper.data import digits
from lnpaper.norms import LayerNorm
from lnpaper.train import epoch_batches, train


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
    one function: the angle per step over the first `window` steps. (b) AdamW with decoupled weight
    decay on W1 only (W1 <- W1 - lr lambda W1 beside Adam's step), W1 started at `adamw_init_scale`:
    the angle per step and ||W1|| once they settle, and how fast ||W1|| gets there."""
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
    # v_hat): the momentum's own radial term, before the per-coordinate division (to split the
    # radial term between the momentum and the division)
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
    """I5b: adam_geometry's AdamW runs again (the same models, data and settings), reading at every
    step of the last `tail` what the rotational equilibrium assumes about Adam's step
    d_t = W_{t+1} - (1 - lr lambda) W_t: that it is orthogonal to W_t (cos(d_t, W_t), and what it
    adds to ||W||^2 besides ||d_t||^2), of squared size lr^2 C, and uncorrelated from step to step
    (cos(d_t, d_{t-k})); and, to tell the two causes of a radial part apart, the momentum's own
    cosine with W_t (before Adam's per-coordinate division) and the gradient's."""
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
