"""Experiments of notebook 08, deep stacks: the recorded runs behind claims A2 (Admin), D1
(DeepNorm), X1 (Mix-LN) and L1 (LayerNorm Scaling) (the studies that gather them, and the
summaries, are in `analysis`).

Every model is notebook 06's language model (`TransformerLM`, d_model 64, 2 heads, length 16,
the synthetic language) with one of the block schemes of `ARMS`; every training run trains all
its seeds at once (`train_language_models`), on the same data per seed as `lm_training`, so the
arms are paired by seed.

- `branch_dependence` (A2, no training): Liu et al.'s (2020) dependency of each sublayer on its
  residual branch, Var[f(x)] / Var[x + f(x)], and the change of the stack's output under a random
  perturbation of the weight matrices of fixed relative size, against depth, for Post-LN, Pre-LN
  and Admin (omega from `admin_profile`).
- `deepnorm_study` (D1): Post-LN, DeepNorm and Pre-LN without warmup at a learning rate where
  Post-LN stalls; the model update ||F(x; theta_{t+1}) - F(x; theta_t)|| on a fixed probe batch
  over the first steps, and the final held-out loss; `analysis.deepnorm_halves` (D1b)
  gathers its runs of DeepNorm's halves apart.
- `gradient_profile` (X1): each block's gradient norm at init and after a few steps, Post, Pre
  and Mix-LN.
- `layer_scaling_study` (L1): Pre-LN with and without LayerNorm Scaling's 1 / sqrt(l): the
  stream's variance per block, the angular distance between consecutive blocks' inputs and the
  loss change when one block is skipped, at init and after training;
  `analysis.layer_scaling_long` (L1c) and `curse_control` (L1d, Peri-LN) gather its runs.
"""

import math
import statistics
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from lnpaper.chapters.ch06_transformer.runs import batches
from lnpaper.chapters.ch06_transformer.runs import held_out as held_out_tokens
from lnpaper.companion.record import experiment
from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models import TransformerConfig
from lnpaper.models.transformer import TransformerLM, admin_profile
from lnpaper.train import train_language_models

# arm -> the TransformerLM options of its block scheme
ARMS = {
    "post": {"placement": "post"},
    "pre": {"placement": "pre"},
    "admin": {"placement": "post", "admin": True},
    "deepnorm": {"placement": "post", "deepnorm": True},
    "deepnorm-alpha": {"placement": "post", "deepnorm": True, "deepnorm_parts": "alpha"},
    "deepnorm-beta": {"placement": "post", "deepnorm": True, "deepnorm_parts": "beta"},
    "mix": {"placement": "mix"},
    "layer_scaling": {"placement": "pre", "layer_scaling": True},
    "peri": {"placement": "peri"},  # L1d's control: the stream is never normalized either
}
ARM_NAMES = {
    "post": "Post-LN",
    "pre": "Pre-LN",
    "admin": "Admin",
    "deepnorm": "DeepNorm",
    "deepnorm-alpha": "DeepNorm's alpha only",
    "deepnorm-beta": "DeepNorm's beta only",
    "mix": "Mix-LN",
    "layer_scaling": "LN-Scaling",
    "peri": "Peri-LN",
}
PROBE_SEED = 10_000  # + seed: A2's input batch
PROFILE_SEED = 20_000  # + seed: Admin's profiling batch, not the batch it is measured on


def check_arms(arms, allowed=tuple(ARMS)) -> list:
    arms = list(arms)
    unknown = [a for a in arms if a not in allowed]
    if unknown or not arms:
        raise ValueError(f"arms must be some of {allowed}, got {arms}")
    return arms


def build(arm: str, seed: int, n_layers: int, d_model: int, n_heads: int, length: int,
          vocab_size: int) -> TransformerLM:  # fmt: skip
    """Arm `arm`'s model, its weights drawn from `seed` (as lm_training draws them)."""
    torch.manual_seed(seed)
    config = TransformerConfig(vocab_size, d_model=d_model, n_layers=n_layers, n_heads=n_heads,
                               max_len=length, **ARMS[arm])  # fmt: skip
    return TransformerLM(config)


def stack_output(model: TransformerLM, tokens: torch.Tensor, skip: int | None = None):
    """The stack's output F(x) (after the final norm, before the head), B x T x d, and the inputs
    x_0..x_L of the blocks and of the final norm; block `skip` (0-based) is left out if given."""
    x = model.embed(tokens)
    streams = [x]
    for index, block in enumerate(model.blocks):
        if index != skip:
            x = block(x)
        streams.append(x)
    out = x if model.final_norm is None else model.final_norm(x)
    return out, streams


@torch.no_grad()
def sublayer_dependence(model: TransformerLM, tokens: torch.Tensor) -> list[float]:
    """Var[f(x)] / Var[s + f(x)] of every sublayer, in order (attention, FFN, block by block):
    f the residual branch, s what it is added to (x; DeepNorm's alpha x; Admin's x * omega);
    variances over every value of the batch (Liu et al. 2020, Sec. 4's beta_i)."""
    x, ratios = model.embed(tokens), []
    for block in model.blocks:
        sublayers = (
            (block.attn, block.attn_in_norm, block.attn_out_norm, block.attn_omega),
            (block.ffn, block.ffn_in_norm, block.ffn_out_norm, block.ffn_omega),
        )
        for branch, in_norm, out_norm, omega in sublayers:
            if block.placement == "post":  # x <- Norm(s + f(x))
                f, s = branch(x), block._stream(x, omega)
                ratios.append((f.var() / (s + f).var()).item())
                x = out_norm(s + f)
            elif block.placement == "pre":  # x <- x + f(Norm(x) [/ sqrt(l)])
                f = branch(block._scaled(in_norm(x)))
                ratios.append((f.var() / (x + f).var()).item())
                x = x + f
            else:
                raise ValueError(f"sublayer_dependence reads post and pre blocks, not "
                                 f"{block.placement!r}")  # fmt: skip
    return ratios


@torch.no_grad()
def output_changes(model: TransformerLM, tokens: torch.Tensor, size: float, seeds) -> list[float]:
    """||F(x; W + dW) - F(x; W)|| / ||F(x; W)|| for one random dW per seed: every weight matrix W
    of the blocks moved by size * ||W|| in a uniformly random direction, dW = size ||W|| U / ||U||."""
    reference, _ = stack_output(model, tokens)
    matrices = [m.weight for m in model.blocks.modules() if isinstance(m, torch.nn.Linear)]
    saved = [w.clone() for w in matrices]
    changes = []
    for seed in seeds:
        generator = torch.Generator().manual_seed(seed)
        for w, old in zip(matrices, saved, strict=True):
            u = torch.randn(w.shape, generator=generator)
            w.copy_(old + size * old.norm() * u / u.norm())
        moved, _ = stack_output(model, tokens)
        changes.append(((moved - reference).norm() / reference.norm()).item())
    for w, old in zip(matrices, saved, strict=True):
        w.copy_(old)
    return changes


# ---- A2: dependency on the residual branch and the amplification of perturbations ----------


@dataclass
class BranchDependenceResult:
    arms: list
    depths: list  # number of blocks L
    seeds: list
    perturbation: float  # ||dW|| / ||W|| of each weight matrix
    draws: int  # random directions per model
    # arm -> [depth][seed][sublayer]: Var[f] / Var[s + f], 2L sublayers
    dependence: dict
    # arm -> [depth][seed]: mean over the draws of ||F(W + dW) - F(W)|| / ||F(W)||
    output_change: dict


@experiment
def branch_dependence(
    *,
    arms=("post", "pre", "admin"),
    depths=(6, 12, 18, 24, 36),
    seeds=tuple(range(8)),
    perturbation: float = 0.01,
    draws: int = 3,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
) -> BranchDependenceResult:
    """A2 at initialization (no training): per arm, depth and seed, each sublayer's dependency
    ratio and the relative output change under `draws` random perturbations of relative size
    `perturbation`. Admin's omega comes from `admin_profile` on another batch than the one
    measured. The same seed gives every arm the same draw of weights where their shapes agree."""
    arms = check_arms(arms, ("post", "pre", "admin", "deepnorm", "mix"))
    if not (0 < perturbation < 1 and isinstance(draws, int) and draws >= 1):
        raise ValueError(f"need 0 < perturbation < 1 and draws >= 1, got {perturbation}, {draws}")
    language = SyntheticLanguage()
    seeds, depths = [int(s) for s in seeds], [int(d) for d in depths]
    result = BranchDependenceResult(arms, depths, seeds, perturbation, draws,
                                    {a: [] for a in arms}, {a: [] for a in arms})  # fmt: skip
    for arm in arms:
        for depth in depths:
            ratios, changes = [], []
            for seed in seeds:
                model = build(arm, seed, depth, d_model, n_heads, length, language.vocab_size)
                tokens = language.sample(batch_size, length, seed=PROBE_SEED + seed)
                if arm == "admin":
                    admin_profile(model, language.sample(batch_size, length, PROFILE_SEED + seed))
                ratios.append(sublayer_dependence(model, tokens))
                draw_seeds = [1000 * seed + k for k in range(draws)]
                changes.append(
                    statistics.fmean(output_changes(model, tokens, perturbation, draw_seeds))
                )
            result.dependence[arm].append(ratios)
            result.output_change[arm].append(changes)
    return result


# ---- training, shared by D1, X1 and L1 ----------------------------------------------------


def block_grad_norms(stacked, tokens: torch.Tensor, n_layers: int) -> list[list[float]]:
    """[seed][l]: ||dL/dtheta_l|| of block l's parameters for the next-token loss on `tokens`
    (shared by every seed), from the stacked models without touching their .grad."""
    names = list(stacked.params)
    with torch.enable_grad():
        loss = stacked.losses(tokens, shared=True).sum()  # d(sum)/d(seed i's loss) = 1
        grads = torch.autograd.grad(loss, [stacked.params[n] for n in names], allow_unused=True)
    squares = torch.zeros(stacked.size, n_layers)
    for name, grad in zip(names, grads, strict=True):
        if grad is not None and name.startswith("blocks."):
            squares[:, int(name.split(".")[1])] += grad.flatten(1).pow(2).sum(1)
    return squares.sqrt().tolist()


# ---- D1: DeepNorm against Post-LN without warmup -----------------------------------------


@dataclass
class DeepNormResult:
    arms: list
    n_layers: int
    lr: float
    seeds: list
    steps: int
    update_steps: int
    alpha: float  # (2M)^{1/4}
    beta: float  # (8M)^{-1/4}
    # arm -> [seed][t], t = 1..update_steps: RMS over the probe's logits of F(theta_t) - F(theta_{t-1})
    model_update: dict
    initial_loss: dict  # arm -> [seed]
    final_loss: dict  # arm -> [seed], None if diverged
    train_loss: dict  # arm -> [seed][k]
    logged_steps: list
    levels: dict  # the language's loss levels, nats


DEEPNORM_HALVES = ("deepnorm-alpha", "deepnorm-beta")  # D1b: DeepNorm with one half only


@experiment
def deepnorm_study(
    *,
    arms=("post", "deepnorm"),
    n_layers: int = 6,
    lr: float = 3e-3,
    seeds=tuple(range(8)),
    steps: int = 100,
    update_steps: int = 20,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
) -> DeepNormResult:
    """D1: Adam without warmup. Before each of the first `update_steps` steps and after the
    last of them, the logits on a fixed probe batch (64 held-out sequences); the model update of
    step t is the root mean square of their change over step t. The same training gives A2b's
    Admin (omega from `admin_profile`) and X1b's Mix-LN their runs."""
    arms = check_arms(arms, ("post", "deepnorm", "pre", "admin", "mix", *DEEPNORM_HALVES))
    if not 1 <= update_steps <= steps:
        raise ValueError(f"update_steps must lie in 1..steps ({steps}), got {update_steps}")
    language = SyntheticLanguage()
    seeds = [int(s) for s in seeds]
    next_batch = batches(seeds, steps=steps, batch_size=batch_size, length=length)
    held_out = held_out_tokens(length)
    probe = held_out[:64, :-1]
    result = DeepNormResult(arms, n_layers, lr, seeds, steps, update_steps,
                            (2 * n_layers) ** 0.25, (8 * n_layers) ** -0.25,
                            {}, {}, {}, {}, [], vars(language.levels()))  # fmt: skip
    for arm in arms:
        models = [build(arm, s, n_layers, d_model, n_heads, length, language.vocab_size)
                  for s in seeds]  # fmt: skip
        if arm == "admin":  # omega from a batch the run never trains on, as A2 profiles it
            for model, seed in zip(models, seeds, strict=True):
                admin_profile(model, language.sample(batch_size, length, PROFILE_SEED + seed))
        previous = {}

        def monitor(step, stacked, previous=previous):
            logits = stacked.logits(probe, shared=True)
            before, previous["logits"] = previous.get("logits"), logits
            if before is None:
                return {}
            return {"update": (logits - before).pow(2).mean(dim=(1, 2, 3)).sqrt().tolist()}

        runs, _ = train_language_models(
            models, next_batch, held_out, steps=steps, lr=lr, monitor=monitor,
            monitor_steps=range(update_steps + 1),
        )  # fmt: skip
        result.model_update[arm] = runs.logs["update"]
        result.initial_loss[arm] = runs.initial_loss
        result.final_loss[arm] = runs.final_loss
        result.train_loss[arm] = runs.train_loss
        result.logged_steps = runs.steps
    return result


# ---- X1: the gradient-norm profile of Post-LN, Pre-LN and Mix-LN ------------------------


@dataclass
class GradientProfileResult:
    arms: list
    n_layers: int
    n_post: int  # Mix-LN's Post-LN blocks, floor(L / 4)
    lr: float
    seeds: list
    steps: int
    grad_norm_init: dict  # arm -> [seed][l]: ||dL/dtheta_l|| at init
    grad_norm_trained: dict  # arm -> [seed][l]: after `steps` steps
    final_loss: dict  # arm -> [seed]


@experiment
def gradient_profile(
    *,
    arms=("post", "pre", "mix"),
    n_layers: int = 8,
    lr: float = 1e-3,
    seeds=tuple(range(10)),
    steps: int = 20,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
) -> GradientProfileResult:
    """X1: each block's gradient norm on 64 held-out sequences at init and after `steps` Adam
    steps without warmup (a learning rate at which Post-LN trains)."""
    arms = check_arms(arms, ("post", "pre", "mix"))
    language = SyntheticLanguage()
    seeds = [int(s) for s in seeds]
    next_batch = batches(seeds, steps=steps, batch_size=batch_size, length=length)
    held_out = held_out_tokens(length)
    probe = held_out[:64]
    result = GradientProfileResult(arms, n_layers, n_layers // 4, lr, seeds, steps, {}, {}, {})
    for arm in arms:
        models = [build(arm, s, n_layers, d_model, n_heads, length, language.vocab_size)
                  for s in seeds]  # fmt: skip
        profiles = []

        def monitor(step, stacked, profiles=profiles):
            profiles.append(block_grad_norms(stacked, probe, n_layers))
            return {}

        runs, _ = train_language_models(models, next_batch, held_out, steps=steps, lr=lr,
                                        monitor=monitor, monitor_steps=(0, steps))  # fmt: skip
        result.grad_norm_init[arm], result.grad_norm_trained[arm] = profiles
        result.final_loss[arm] = runs.final_loss
    return result


# ---- L1: LayerNorm Scaling ----------------------------------------------------------------


def angular_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    """arccos(cos(a_t, b_t)) / pi, averaged over the tokens t (the last axis is the feature):
    0 when a block leaves every token's direction unchanged, 1/2 for orthogonal."""
    cos = F.cosine_similarity(a, b, dim=-1).clamp(-1.0, 1.0)
    return (torch.arccos(cos) / math.pi).mean().item()


@torch.no_grad()
def depth_use(model: TransformerLM, tokens: torch.Tensor) -> dict:
    """Per block l = 1..L on `tokens` (B x T+1): the variance of the stream it outputs, the
    angular distance between its input and output, and the held-out loss change when it is
    skipped (loss without block l - full loss)."""
    inputs, targets = tokens[:, :-1], tokens[:, 1:].reshape(-1)

    def loss(skip=None):
        out, streams = stack_output(model, inputs, skip)
        logits = model.head(out)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets).item(), streams

    full, streams = loss()
    return {
        "variance": [x.var().item() for x in streams[1:]],
        "angle": [angular_distance(a, b) for a, b in zip(streams[:-1], streams[1:], strict=True)],
        "skip_loss": [loss(skip)[0] - full for skip in range(model.n_layers)],
    }


@dataclass
class LayerScalingResult:
    arms: list
    n_layers: int
    lr: float
    seeds: list
    steps: int
    # arm -> [seed][l], l = 1..L, at init and after training
    variance_init: dict
    variance_trained: dict
    angle_init: dict
    angle_trained: dict
    skip_loss_init: dict
    skip_loss_trained: dict
    final_loss: dict  # arm -> [seed], None if diverged
    train_loss: dict  # arm -> [seed][k]
    logged_steps: list


@experiment
def layer_scaling_study(
    *,
    arms=("pre", "layer_scaling"),
    n_layers: int = 8,
    lr: float = 3e-3,
    seeds=tuple(range(6)),
    steps: int = 100,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
) -> LayerScalingResult:
    """L1: Pre-LN with and without 1 / sqrt(l) on every block's input norms, Adam without warmup;
    `depth_use` on the 256 held-out sequences at init and after training."""
    arms = check_arms(arms, ("pre", "layer_scaling", "peri"))
    language = SyntheticLanguage()
    seeds = [int(s) for s in seeds]
    next_batch = batches(seeds, steps=steps, batch_size=batch_size, length=length)
    held_out = held_out_tokens(length)
    keys = ("variance", "angle", "skip_loss")
    out = {f"{k}_{when}": {} for k in keys for when in ("init", "trained")}
    final, train_loss, logged = {}, {}, []
    for arm in arms:
        models = [build(arm, s, n_layers, d_model, n_heads, length, language.vocab_size)
                  for s in seeds]  # fmt: skip
        before = [depth_use(m, held_out) for m in models]
        runs, stacked = train_language_models(models, next_batch, held_out, steps=steps, lr=lr)
        after = [
            None if runs.final_loss[i] is None else depth_use(stacked.model(i, models[0]), held_out)
            for i in range(len(seeds))
        ]
        for k in keys:
            out[f"{k}_init"][arm] = [b[k] for b in before]
            out[f"{k}_trained"][arm] = [None if a is None else a[k] for a in after]
        final[arm], train_loss[arm], logged = runs.final_loss, runs.train_loss, runs.steps
    return LayerScalingResult(arms, n_layers, lr, seeds, steps, **out, final_loss=final,
                              train_loss=train_loss, logged_steps=logged)  # fmt: skip


# ---- A2c: Admin with warmup, as its recipe trains it ------------------------------------


@experiment
def warmup_training(
    *,
    arms=("post", "admin", "pre"),
    n_layers: int = 12,
    lr: float = 3e-3,
    warmup_steps: int = 50,
    seeds=tuple(range(20, 32)),
    steps: int = 100,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
) -> DeepNormResult:
    """A2c: `deepnorm_study`'s models, data and omega profiling, trained with `warmup_steps` steps
    of linear warmup to `lr` (Admin's recipe warms up for 8,000 updates). No update probe:
    `model_update` stays empty and `update_steps` is 0."""
    arms = check_arms(arms, ("post", "admin", "pre"))
    if not 0 <= warmup_steps < steps:
        raise ValueError(f"warmup_steps must lie in 0..steps - 1 ({steps - 1}), got {warmup_steps}")
    language = SyntheticLanguage()
    seeds = [int(s) for s in seeds]
    next_batch = batches(seeds, steps=steps, batch_size=batch_size, length=length)
    held_out = held_out_tokens(length)
    result = DeepNormResult(arms, n_layers, lr, seeds, steps, 0,
                            (2 * n_layers) ** 0.25, (8 * n_layers) ** -0.25,
                            {}, {}, {}, {}, [], vars(language.levels()))  # fmt: skip
    for arm in arms:
        models = [build(arm, s, n_layers, d_model, n_heads, length, language.vocab_size)
                  for s in seeds]  # fmt: skip
        if arm == "admin":
            for model, seed in zip(models, seeds, strict=True):
                admin_profile(model, language.sample(batch_size, length, PROFILE_SEED + seed))
        runs, _ = train_language_models(
            models, next_batch, held_out, steps=steps, lr=lr, warmup_steps=warmup_steps
        )
        result.initial_loss[arm] = runs.initial_loss
        result.final_loss[arm] = runs.final_loss
        result.train_loss[arm] = runs.train_loss
        result.logged_steps = runs.steps
    return result
