"""Experiments of notebook 06, the Transformer: the recorded runs behind claims T1-T7 (the studies
that gather them, and the summaries, are in `analysis`).

- `grad_norm_vs_depth` (T1, T2): Xiong et al. 2020's setting at initialization.
- `lm_training` (T3-T6): one configuration of the small language model, trained over seeds (it
  also records each block's stream variance and gradient norm, which notebook 07 reads for P5);
  `analysis.normalization_study`, `analysis.tfixup_study` and their kin gather one run per
  configuration. `rezero_training` (T5b) stands beside T-Fixup at its depth.
- `batchnorm_backward_projection`, `loss_smoothness` (T7): Santurkar et al. 2018.
"""

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from lnpaper import functional
from lnpaper.companion.record import experiment
from lnpaper.data import digits
from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models import TransformerConfig
from lnpaper.models.mlp import MLP
from lnpaper.models.transformer import TransformerLM, next_token_loss
from lnpaper.norms import BatchNorm
from lnpaper.spread import mean_sd
from lnpaper.train import epoch_batches, train_language_models

# ---- T1, T2: gradients and residual norms at initialization -----------------------------------


@dataclass
class GradNormResult:
    placement: str
    d_model: int
    depths: list  # number of blocks L
    seeds: list
    grad_norm: list  # [depth][seed]: ||dL/dW^(2)||_F of the last block's FFN
    mean_grad_norm: list  # per depth, mean over seeds
    ratio_last_to_first: float  # mean at the deepest / mean at the shallowest depth
    ratio_standard_error: float  # of that ratio, from the seeds' spread (delta method)
    layers: list  # l for residual_sq_norm (deepest model): see the docstring
    residual_sq_norm: list  # E||x||^2 / d per l, mean over tokens and seeds


@experiment
def grad_norm_vs_depth(
    *,
    placement: str,
    depths=(6, 8, 10, 12, 14),
    seeds=tuple(range(40)),
    d_model: int = 128,
    batch_size: int = 8,
    length: int = 32,
) -> GradNormResult:
    """T1/T2 in Xiong et al.'s setting (2020, Sec. 3.2-3.3) as far as a small LM follows it.

    Single-head attention with W^Q = W^K = 0 (so every token averages the tokens it may see: the
    causal version of their uniform attention), Xavier weights, zero biases, LayerNorm gain 1 and bias
    0, FFN width d (their analysis uses d x d matrices: Lemma 2's 3d/2 depends on it), inputs N(0, I_d)
    (token embeddings N(0, 1), positions 0). The loss is next-token cross-entropy on the synthetic
    language, mean over tokens. `seeds` may be any iterable of ints (a range is fine).

    Residual norms (Lemma 2), for the deepest model: Post-LN, ||x^{post,5}||^2 / d, the residual sum
    x + FFN(x) of block l = 1..L just before its second LayerNorm (Lemma 2: 3/2). Pre-LN, ||x_l||^2 / d
    for the stream after l = 0..L blocks (l = 0: the embedding; Lemma 2: between 1 + l/2 and
    1 + 3l/2; we count l as blocks passed, which is the indexing under which the bounds hold at l=0).
    """
    if placement not in ("post", "pre"):
        raise ValueError(f"placement must be 'post' or 'pre' (Xiong et al.), got {placement!r}")
    seeds = [int(s) for s in seeds]
    depths = [int(d) for d in depths]
    language = SyntheticLanguage()
    grad_norm, residual = [], None
    for depth in depths:
        norms_here, sq_norms = [], []
        for seed in seeds:
            torch.manual_seed(seed)
            model = TransformerLM(
                TransformerConfig(
                    language.vocab_size,
                    d_model=d_model,
                    n_layers=depth,
                    n_heads=1,
                    d_ff=d_model,
                    max_len=length,
                    placement=placement,
                )
            )
            with torch.no_grad():
                for block in model.blocks:
                    for matrix in (block.attn.query, block.attn.key):
                        matrix.weight.zero_()
                        matrix.bias.zero_()
            seen = []
            if placement == "post":
                hooks = [
                    b.ffn_out_norm.register_forward_pre_hook(_record(seen)) for b in model.blocks
                ]
            else:
                hooks = [b.register_forward_pre_hook(_record(seen)) for b in model.blocks]
                hooks.append(model.final_norm.register_forward_pre_hook(_record(seen)))
            tokens = language.sample(batch_size, length + 1, seed=10_000 + seed)
            next_token_loss(model, tokens).backward()
            for hook in hooks:
                hook.remove()
            norms_here.append(model.blocks[-1].ffn.w2.weight.grad.norm().item())
            sq_norms.append([(x.pow(2).sum(-1) / d_model).mean().item() for x in seen])
        grad_norm.append(norms_here)
        residual = np.mean(sq_norms, axis=0).tolist()  # the last (deepest) depth is kept
    (first_mean, first_sd), (last_mean, last_sd) = mean_sd(grad_norm[0]), mean_sd(grad_norm[-1])
    ratio = last_mean / first_mean
    # se(a/b) / (a/b) = sqrt((se_a/a)^2 + (se_b/b)^2), se = sd / sqrt(seeds)
    relative_se = (first_sd / first_mean, last_sd / last_mean)
    ratio_se = ratio * math.hypot(*relative_se) / math.sqrt(len(seeds))
    first_layer = 1 if placement == "post" else 0
    return GradNormResult(
        placement=placement,
        d_model=d_model,
        depths=depths,
        seeds=seeds,
        grad_norm=grad_norm,
        mean_grad_norm=[mean_sd(g)[0] for g in grad_norm],
        ratio_last_to_first=ratio,
        ratio_standard_error=ratio_se,
        layers=list(range(first_layer, first_layer + len(residual))),
        residual_sq_norm=residual,
    )


def _record(store: list):
    def hook(module, inputs):
        store.append(inputs[0].detach())

    return hook


# ---- T3-T6: training the small language model -------------------------------------------------


@dataclass
class LMTrainingResult:
    placement: str
    norm: str
    init: str
    n_layers: int
    lr: float
    warmup_steps: int
    seeds: list
    steps: list  # the steps at which the training loss was logged
    train_loss: list  # [seed][k], mean over each logging window; shorter if the run diverged
    initial_loss: list  # held-out loss at init, per seed
    final_loss: list  # held-out loss after training, per seed (None if it diverged)
    diverged_at: list  # per seed: the step whose loss was not finite, or None
    levels: dict  # the language's loss levels (uniform, unigram, bigram, rate), nats
    floor: float  # the lowest possible held-out loss at this length
    # Per block l = 1..L on 64 held-out sequences (`layer_statistics`), [seed][l-1]; the final
    # ones are None for a seed that diverged. Notebook 07 (P5) reads them.
    stream_variance_init: list
    stream_variance_final: list
    block_grad_norm_init: list
    block_grad_norm_final: list


HELD_OUT_SEED = 999_999  # the held-out sequences every language model is scored on


def build_models(seeds, *, length: int, **options) -> list[TransformerLM]:
    """One model per seed, torch's generator seeded with the seed before each is built."""
    vocab_size = SyntheticLanguage().vocab_size
    models = []
    for seed in seeds:
        torch.manual_seed(seed)
        models.append(TransformerLM(TransformerConfig(vocab_size, max_len=length, **options)))
    return models


def batches(seeds, *, steps: int, batch_size: int, length: int):
    """next_batch(step) -> S x B x T+1: seed s's sequences, fresh every step. Every configuration
    trained with seed s sees the same sequences, so configurations are compared on paired data."""
    language = SyntheticLanguage()
    data = torch.stack([language.sample(steps * batch_size, length + 1, seed=s) for s in seeds])
    return lambda step: data[:, step * batch_size : (step + 1) * batch_size]


def held_out(length: int) -> torch.Tensor:
    return SyntheticLanguage().sample(256, length + 1, seed=HELD_OUT_SEED)


@experiment
def lm_training(
    *,
    placement: str = "pre",
    norm: str = "layernorm",
    init: str = "default",
    n_layers: int = 6,
    lr: float = 3e-3,
    warmup_steps: int = 0,
    seeds=(0, 1, 2),
    steps: int = 200,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
    log_every: int = 10,
) -> LMTrainingResult:
    """Adam on the synthetic language, fresh sequences every step (`batches`); the model's seed and
    the data's seed are the run's seed. The seeds are trained together as one population
    (`lnpaper.train.train_language_models`), each exactly as it would be alone up to roundoff.
    Loss in nats per token."""
    return _train_language_model(
        dict(placement=placement, norm=norm, init=init, n_layers=n_layers, d_model=d_model,
             n_heads=n_heads),
        lr=lr, warmup_steps=warmup_steps, seeds=seeds, steps=steps, batch_size=batch_size,
        length=length, log_every=log_every,
    )  # fmt: skip


@experiment
def rezero_training(
    *, n_layers: int = 12, lr: float = 3e-3, seeds=tuple(range(6)), steps: int = 200
) -> LMTrainingResult:
    """T5b: ReZero (Bachlechner et al. 2020): no norm, x_{l+1} = x_l + a F(x_l) with a learnable
    scalar a per sublayer starting at 0, so every block is the identity at init; otherwise T5's
    Xavier stack, data and schedule (no warmup). SkipInit (De & Smith 2020) is the same gate."""
    options = dict(placement="none", norm="layernorm", init="default", n_layers=n_layers,
                   d_model=64, n_heads=2, rezero=True)  # fmt: skip
    return _train_language_model(
        options, lr=lr, warmup_steps=0, seeds=seeds, steps=steps, batch_size=16, length=16,
        log_every=10,
    )  # fmt: skip


def _train_language_model(
    options: dict, *, lr, warmup_steps, seeds, steps, batch_size, length, log_every
) -> LMTrainingResult:
    """The body of lm_training and rezero_training: TransformerLM(**options) per seed, trained
    as one population, with the per-block statistics at init and at the end."""
    language = SyntheticLanguage()
    seeds = [int(s) for s in seeds]
    scored = held_out(length)
    probe = scored[:64]  # for the per-block statistics: enough, and cheap
    models = build_models(seeds, length=length, **options)
    at_init = [layer_statistics(model, probe) for model in models]
    runs, stacked = train_language_models(
        models,
        batches(seeds, steps=steps, batch_size=batch_size, length=length),
        scored,
        steps=steps,
        lr=lr,
        warmup_steps=warmup_steps,
        log_every=log_every,
    )
    at_end = [
        (None, None) if diverged is not None else layer_statistics(stacked.model(i, like), probe)
        for i, (diverged, like) in enumerate(zip(runs.diverged_at, models, strict=True))
    ]
    return LMTrainingResult(
        placement=options["placement"],
        norm=options["norm"],
        init=options["init"],
        n_layers=options["n_layers"],
        lr=lr,
        warmup_steps=warmup_steps,
        seeds=seeds,
        steps=runs.steps,
        train_loss=runs.train_loss,
        initial_loss=runs.initial_loss,
        final_loss=runs.final_loss,
        diverged_at=runs.diverged_at,
        levels=vars(language.levels()),
        floor=language.entropy_floor(length + 1),
        stream_variance_init=[variance for variance, _ in at_init],
        stream_variance_final=[variance for variance, _ in at_end],
        block_grad_norm_init=[norms for _, norms in at_init],
        block_grad_norm_final=[norms for _, norms in at_end],
    )


def layer_statistics(model: TransformerLM, tokens: torch.Tensor) -> tuple[list, list]:
    """Two lists over the blocks l = 1..L: the variance of the residual stream each outputs (over
    every value of the batch: tokens and features), and ||dL/dtheta_l||, the gradient norm of its
    parameters for the next-token loss on `tokens`. Leaves no gradient behind. (Post-LN's block
    output is its last norm's output, so its variance is about 1 by construction.)"""
    outputs = []
    hooks = [b.register_forward_hook(lambda m, i, out: outputs.append(out)) for b in model.blocks]
    model.zero_grad(set_to_none=True)
    try:
        next_token_loss(model, tokens).backward()
    finally:
        for hook in hooks:
            hook.remove()
    variances, grad_norms = [], []
    for block, out in zip(model.blocks, outputs, strict=True):
        variances.append(out.detach().var().item())
        grads = [p.grad.flatten() for p in block.parameters() if p.grad is not None]
        grad_norms.append(torch.linalg.vector_norm(torch.cat(grads)).item())
    model.zero_grad(set_to_none=True)
    return variances, grad_norms


@dataclass
class StudyResult:
    runs: dict  # configuration name -> LMTrainingResult as a plain dict


# ---- T7: Santurkar et al. ---------------------------------------------------------------------


@dataclass
class ProjectionResult:
    shape: list  # (N, features)
    max_diff_formula: float  # autograd through lnpaper.BatchNorm vs Santurkar's formula, float64
    max_diff_numpy: float  # lnpaper.functional.batch_norm_backward vs autograd
    max_sum: float  # max over features |<1, dx>|: dx has no component along 1
    max_cos_y_hat: float  # max over features |cos(dx, y_hat)|: tiny, not zero (eps)
    y_hat_sq_norm_over_n: list  # ||y_hat||^2 / N per feature: sigma_B^2 / (sigma_B^2 + eps)
    max_idempotence_error: float  # max ||P P - P|| of P = I - 11^T/N - y y^T/N over features


@experiment
def batchnorm_backward_projection(
    *, batch: int = 32, features: int = 6, eps: float = 1e-5, seed: int = 0
) -> ProjectionResult:
    """Santurkar et al. 2018, Sec. 4.1 (their Theorem 4.1's starting point): for one feature over a
    batch of N, with y_hat = (x - mu_B) / sigma and sigma = sqrt(sigma_B^2 + eps),

        dL/dx = (gamma / sigma) * (g - (1/N) 1 <1, g> - (1/N) y_hat <y_hat, g>),  g = dL/dy.

    Since <1, y_hat> = 0 and ||1||^2 = N, and ||y_hat||^2 = N sigma_B^2 / (sigma_B^2 + eps) (N when
    eps = 0), the bracket is g projected off span{1, y_hat}, exactly so as eps -> 0.
    """
    generator = torch.Generator().manual_seed(seed)
    scale = 10 ** torch.linspace(-1, 1, features, dtype=torch.float64)  # features of different size
    x = scale * torch.randn(batch, features, generator=generator, dtype=torch.float64) + 2.0
    x.requires_grad_()
    g = torch.randn(batch, features, generator=generator, dtype=torch.float64)
    gamma = 1 + 0.5 * torch.randn(features, generator=generator, dtype=torch.float64)
    layer = BatchNorm(features, eps=eps).double()
    with torch.no_grad():
        layer.weight.copy_(gamma)
    layer(x).backward(g)
    autograd = x.grad

    xd = x.detach()
    mu = xd.mean(dim=0)
    sigma = torch.sqrt(xd.var(dim=0, correction=0) + eps)
    y_hat = (xd - mu) / sigma
    n = batch
    projected = g - g.sum(dim=0) / n - y_hat * (y_hat * g).sum(dim=0) / n  # the 1/N made explicit
    formula = gamma / sigma * projected
    dx_numpy, _, _ = functional.batch_norm_backward(g.numpy(), xd.numpy(), gamma.numpy(), eps=eps)
    idempotence = []
    for j in range(features):
        ones = torch.ones(n, 1, dtype=torch.float64)
        y = y_hat[:, j : j + 1]
        p = torch.eye(n, dtype=torch.float64) - ones @ ones.T / n - y @ y.T / n
        idempotence.append((p @ p - p).abs().max().item())
    cos = (formula * y_hat).sum(0) / (formula.norm(dim=0) * y_hat.norm(dim=0))
    return ProjectionResult(
        shape=[batch, features],
        max_diff_formula=(autograd - formula).abs().max().item(),
        max_diff_numpy=float(np.abs(dx_numpy - autograd.numpy()).max()),
        max_sum=formula.sum(dim=0).abs().max().item(),
        max_cos_y_hat=cos.abs().max().item(),
        y_hat_sq_norm_over_n=(y_hat.pow(2).sum(0) / n).tolist(),
        max_idempotence_error=max(idempotence),
    )


@dataclass
class SmoothnessResult:
    norms: list
    seeds: list
    lr: float
    step_multipliers: list  # the steps eta along -g tried, as multiples of lr
    loss_levels: list  # training-loss levels on the probe batch at which the landscape is probed
    max_steps: int  # a level not reached by then has None at its point
    # each norm -> [seed][point]; point 0 is step 0 (the initialization), point k the first step
    # whose loss on the probe batch is at or below loss_levels[k - 1]:
    steps: dict  # the training step of each point
    loss_range: dict  # max - min of the loss along the step
    grad_change: dict  # max_eta ||g(w - eta g) - g(w)|| / ||g(w)||
    beta_smoothness: dict  # max_eta ||g(w - eta g) - g(w)|| / ||eta g||
    train_loss: dict  # loss on the probe batch at the point


SMOOTHNESS_MEASURES = ("loss_range", "grad_change", "beta_smoothness")
# A plain net whose hidden summed inputs start at unit variance, the scale BatchNorm gives them at
# init (gamma = 1), without BatchNorm's centring and projection: the control for step 0.
UNIT_VARIANCE_PLAIN = "none, unit-variance init"


def unit_variance_init(model: MLP, inputs: torch.Tensor) -> None:
    """Divide each hidden unit's weights and bias, layer by layer, by the standard deviation of
    its summed input over `inputs`, so that every hidden summed input has sd 1 at init."""
    hidden = [layer for layer in model.layers if isinstance(layer, torch.nn.Linear)][:-1]
    h = inputs
    with torch.no_grad():
        for module in model.layers:
            if any(module is layer for layer in hidden):
                sigma = module(h).std(dim=0)
                module.weight.div_(sigma[:, None])
                module.bias.div_(sigma)
            h = module(h)


@experiment
def loss_smoothness(
    *,
    norms=("none", "batchnorm", "layernorm"),
    lr: float = 0.2,
    step_multipliers=(0.5, 1.0, 2.0, 4.0),
    loss_levels=(1.0, 0.5, 0.2, 0.1),
    max_steps: int = 800,
    width: int = 128,
    batch_size: int = 64,
    seeds=tuple(range(10)),
) -> SmoothnessResult:
    """Santurkar et al. 2018, Sec. 3.1 and Fig. 4, at digits scale: train an MLP with plain SGD, and
    at matched training loss walk along the gradient direction from the current weights, measuring
    on one batch (i) the range of the loss (its variation), (ii) how far the gradient moves
    relative to its own size ("gradient predictiveness"), (iii) that change per unit of distance
    moved ("effective beta-smoothness"). The points: step 0, then the first step at which the loss
    on the probe batch reaches each of `loss_levels`, so that every normalizer is compared as near
    a minimum as the others, not after as many steps (BatchNorm gets there far sooner). A seed sets
    the initial weights, the data order and the probe batch, the same for every normalizer, so
    the normalizers are compared paired by seed. `norms` takes the MLP's normalizers and
    UNIT_VARIANCE_PLAIN, the plain net started at unit-variance summed inputs (T7b).
    """
    if list(loss_levels) != sorted(loss_levels, reverse=True) or min(loss_levels) <= 0:
        raise ValueError(f"loss_levels must be positive and decreasing, got {loss_levels}")
    out = SmoothnessResult(
        norms=list(norms),
        seeds=[int(s) for s in seeds],
        lr=lr,
        step_multipliers=list(step_multipliers),
        loss_levels=list(loss_levels),
        max_steps=max_steps,
        steps={},
        loss_range={},
        grad_change={},
        beta_smoothness={},
        train_loss={},
    )
    for norm in norms:
        runs = [
            _probe_landscape(
                norm, seed, lr, step_multipliers, loss_levels, max_steps, width, batch_size
            )  # fmt: skip
            for seed in out.seeds
        ]
        for key in ("steps", *SMOOTHNESS_MEASURES, "train_loss"):
            getattr(out, key)[norm] = [run[key] for run in runs]
    return out


def _probe_landscape(norm, seed, lr, step_multipliers, loss_levels, max_steps, width,
                     batch_size) -> dict:  # fmt: skip
    """One seed of `loss_smoothness`: measure -> [per point: step 0, then each loss level]."""
    inputs, labels = digits.load("train")
    order = epoch_batches(len(labels), batch_size, seed)
    probe = order(10**6)  # one fixed batch (from a far-away epoch) for every measurement

    def loss_fn(model, index):
        return F.cross_entropy(model(inputs[index]), labels[index])

    etas = [m * lr for m in step_multipliers]
    torch.manual_seed(seed)
    plain_unit_variance = norm == UNIT_VARIANCE_PLAIN
    sizes = (digits.PIXELS, width, width, digits.CLASSES)
    model = MLP(sizes, norm="none" if plain_unit_variance else norm)
    if plain_unit_variance:
        unit_variance_init(model, inputs)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)  # plain SGD: no state
    out = {key: [] for key in ("steps", *SMOOTHNESS_MEASURES, "train_loss")}

    def measure(step: int) -> None:
        loss, grad = _loss_and_grad(model, loss_fn, probe)
        weights = [p.detach().clone() for p in model.parameters()]
        along, change = [loss], []
        for eta in etas:
            with torch.no_grad():
                for p, w, d in zip(model.parameters(), weights, grad, strict=True):
                    p.copy_(w - eta * d)
            loss_eta, grad_eta = _loss_and_grad(model, loss_fn, probe)
            along.append(loss_eta)
            change.append(_norm(g1 - g0 for g1, g0 in zip(grad_eta, grad, strict=True)))
        with torch.no_grad():
            for p, w in zip(model.parameters(), weights, strict=True):
                p.copy_(w)
        g_norm = _norm(grad)
        out["steps"].append(step)
        out["loss_range"].append(max(along) - min(along))
        out["grad_change"].append(max(change) / g_norm)
        out["beta_smoothness"].append(max(c / (eta * g_norm) for c, eta in zip(change, etas, strict=True)))  # fmt: skip
        out["train_loss"].append(loss)

    measure(0)
    levels = list(loss_levels)
    step = 0
    while levels and step < max_steps:
        model.train()
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model, order(step)).backward()
        optimizer.step()
        step += 1
        reached = [level for level in levels if _probe_loss(model, loss_fn, probe) <= level]
        if reached:  # one point stands for every level crossed in this step
            for _ in reached:
                measure(step)
            levels = levels[len(reached) :]
    for _ in levels:  # never reached: no value to pair
        for key in out:
            out[key].append(None)
    return out


def _probe_loss(model, loss_fn, index) -> float:
    """The loss on the probe batch in training mode, leaving BatchNorm's running estimates as
    they were."""
    saved = {k: v.clone() for k, v in model.state_dict().items() if "running" in k}
    model.train()
    with torch.no_grad():
        loss = loss_fn(model, index).item()
    model.load_state_dict({**model.state_dict(), **saved})
    return loss


def _loss_and_grad(model, loss_fn, index):
    """Loss and gradient in training mode (BatchNorm uses the batch's statistics, as it trains),
    without moving BatchNorm's running estimates."""
    saved = {k: v.clone() for k, v in model.state_dict().items() if "running" in k}
    model.train()
    model.zero_grad(set_to_none=True)
    loss = loss_fn(model, index)
    loss.backward()
    grad = [p.grad.detach().clone() for p in model.parameters()]
    model.load_state_dict({**model.state_dict(), **saved})
    return loss.item(), grad


def _norm(tensors) -> float:
    return math.sqrt(sum(t.pow(2).sum().item() for t in tensors))
