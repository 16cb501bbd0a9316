"""Notebook 09's experiments on attention logits and today's placements: the recorded runs behind
Q1 (QK-norm), O1 (OLMo 2's reordered norm) and G1 (Gemma's (1 + w) gains under weight decay) (the
studies that gather them, and the summaries, are in `analysis`).

Every run is notebook 06's synthetic language and model family, trained with
`lnpaper.train.population` (all seeds of a configuration as one batch). A seed sets the model's
initial weights and the training sequences, so configurations are compared paired by seed.

- `qk_run` (Q1): one cell of Wortsman et al. 2023's learning-rate sweep, with or without per-head
  QK-LayerNorm, logging the largest layer-0 attention logit |z_ij| and each layer's attention
  entropy over training;
  `analysis.qk_sweep` gathers the sweep.
- `logit_bound_run` (Q1b): at lr 1e-1, the same model with QK-RMSNorm, Henry et al.'s l2
  QK-norm or Gemma 2's soft-cap at 50 in place of QK-LayerNorm; `analysis.logit_bounds` gathers
  every arm.
- O1 (`analysis.reordered_study`) reads notebook 07's `spike_run`: Pre-LN against OLMo 2's
  reordered norm x + Norm(F(x)) at two high learning rates, the global gradient norm logged at
  every step and its spikes counted (`lnpaper.stats.spike_steps`), so the Pre-LN runs at 3e-2 are
  P5's.
- `olmo2_spike_run` (O1b): OLMo 2's package, the reordered norm with a full-span QK-norm, beside
  Pre-LN and the reordered norm alone, all three run again at O1's rates; `analysis.olmo2_study`
  gathers them.
- `gain_decay` (G1): RMSNorm gains stored as g (decay pulls g to 0) or as w in g = 1 + w (decay
  pulls g to 1), trained with AdamW; `gain_decay_excluded` (G1c) the gains left out of the decay.
"""

import math
from dataclasses import dataclass, field

import torch
from torch.nn.utils import parametrize

from lnpaper.chapters.ch06_transformer.runs import batches, build_models, held_out
from lnpaper.chapters.ch07_rmsnorm_placement.runs import SpikeRun, train_for_spikes
from lnpaper.companion.record import experiment
from lnpaper.models.transformer import GEMMA2_ATTN_LOGIT_CAP
from lnpaper.norms import RMSNorm
from lnpaper.train import train_language_models

LOGIT_LIMIT = 1e4  # Wortsman et al.: every run whose largest attention logit passed 1e4 diverged


# ---- Q1: QK-norm and the learning-rate sweep ----------------------------------------------------


@dataclass
class QKRun:
    qk_norm: str | None
    lr: float
    seeds: list
    steps: int
    initial_loss: list  # per seed, held-out, nats per token
    final_loss: list  # per seed, None if the run diverged
    diverged_at: list
    logit_steps: list  # the steps at which the largest layer-0 logit was measured
    max_logit: list  # [seed][k]: max |z_ij| of layer 0 on 32 held-out sequences
    # [layer][seed][k]: the mean entropy (nats) of each query's causal attention, same probe
    attention_entropy: list = field(default_factory=list)


def attention_entropy(logits: torch.Tensor) -> float:
    """The entropy (nats) of each query's attention over the keys it may see (causal), from the
    logits z_ij before the mask (B x heads x T x T), averaged over queries, heads and sequences.
    Uniform attention over the t + 1 visible keys gives ln(t + 1); one key takes it to 0."""
    visible = torch.ones(logits.shape[-2:], dtype=torch.bool).tril()
    log_p = torch.log_softmax(logits.masked_fill(~visible, -math.inf), dim=-1)
    return -(log_p.exp() * log_p.masked_fill(~visible, 0.0)).sum(-1).mean().item()


def _logit_run(options: dict, *, lr, seeds, steps, warmup_steps, batch_size, length, logit_every):
    """Train one configuration (`options` of TransformerLM) at `lr`, every seed at once, logging
    the largest layer-0 attention logit |z_ij| and every layer's attention entropy on 32 held-out
    sequences every `logit_every` steps. The body of qk_run and logit_bound_run."""
    seeds = [int(s) for s in seeds]
    models = build_models(seeds, length=length, **options)
    probe = held_out(length)[:32, :-1]
    layers = range(options["n_layers"])

    def largest_logit(step, stacked):
        values = {"max_logit": [], **{f"entropy_{layer}": [] for layer in layers}}
        for i in range(stacked.size):
            model = stacked.model(i, models[0])
            for layer in layers:
                logits = model.attention_logits(probe, layer=layer)
                if layer == 0:
                    values["max_logit"].append(logits.abs().max().item())
                values[f"entropy_{layer}"].append(attention_entropy(logits))
        return values

    runs, _ = train_language_models(
        models,
        batches(seeds, steps=steps, batch_size=batch_size, length=length),
        held_out(length),
        steps=steps,
        lr=lr,
        warmup_steps=warmup_steps,
        monitor=largest_logit,
        monitor_steps=range(0, steps + 1, logit_every),
    )
    return QKRun(
        qk_norm=options.get("qk_norm"),
        lr=lr,
        seeds=seeds,
        steps=steps,
        initial_loss=runs.initial_loss,
        final_loss=runs.final_loss,
        diverged_at=runs.diverged_at,
        logit_steps=list(range(0, steps + 1, logit_every)),
        max_logit=runs.logs["max_logit"],
        attention_entropy=[runs.logs[f"entropy_{layer}"] for layer in layers],
    )


@experiment
def qk_run(
    *,
    qk_norm: str | None = None,
    lr: float = 1e-2,
    seeds=tuple(range(5)),
    steps: int = 120,
    warmup_steps: int = 12,
    n_layers: int = 2,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
    logit_every: int = 20,
) -> QKRun:
    """Q1, one cell of the sweep: a small Pre-LN model (two blocks, as Wortsman et al. find the
    instability in small models) trained with Adam at `lr` after a linear warmup over the first
    10% of the steps, with (`qk_norm="layernorm"`, per head) or without QK-norm."""
    options = dict(d_model=d_model, n_layers=n_layers, n_heads=n_heads, qk_norm=qk_norm)
    return _logit_run(
        options, lr=lr, seeds=seeds, steps=steps, warmup_steps=warmup_steps,
        batch_size=batch_size, length=length, logit_every=logit_every,
    )  # fmt: skip


# Q1b: the other ways today's models bound their attention logits, as options of Q1's model,
# beside Q1's two arms run again with them (so every arm comes from one machine and path).
LOGIT_BOUNDS = {
    "no QK-norm": {},
    "QK-LayerNorm": {"qk_norm": "layernorm"},  # per head: ViT-22B, Wortsman et al.
    "QK-RMSNorm": {"qk_norm": "rmsnorm"},  # per head: Gemma 3, Qwen3
    "QK-l2": {"qk_norm": "l2"},  # Henry et al. 2020: g cos(q, k), g learned
    "soft-cap 50": {"attn_logit_cap": GEMMA2_ATTN_LOGIT_CAP},  # Gemma 2: 50 tanh(z / 50)
}


@experiment
def logit_bound_run(
    *, bound: str, lr: float = 1e-1, seeds=tuple(range(5)), steps: int = 120
) -> QKRun:
    """Q1b, one arm: qk_run's model, data and schedule at `lr`, its attention logits bounded the
    way `bound` (a key of LOGIT_BOUNDS) says. The soft-cap's logged logit is the capped one."""
    if bound not in LOGIT_BOUNDS:
        raise ValueError(f"bound must be one of {tuple(LOGIT_BOUNDS)}, got {bound!r}")
    options = dict(d_model=64, n_layers=2, n_heads=2, **LOGIT_BOUNDS[bound])
    return _logit_run(
        options, lr=lr, seeds=seeds, steps=steps, warmup_steps=steps // 10, batch_size=16,
        length=16, logit_every=20,
    )  # fmt: skip


# ---- O1: OLMo 2's reordered norm and loss spikes ------------------------------------------------


# O1b: OLMo 2's package, the reordered norm with a QK-norm over the whole query and key
# projections (OLMo 2's span; LayerNorm, like the rest of this model), beside the two arms of O1,
# all three run again together so that they come from one machine and path.
OLMO2_ARMS = {
    "Pre-LN": {"placement": "pre"},
    "reordered": {"placement": "reordered"},
    "reordered + QK-norm": {
        "placement": "reordered",
        "qk_norm": "layernorm",
        "qk_norm_span": "full",
    },
}


@experiment
def olmo2_spike_run(
    *, arm: str, lr: float = 3e-2, seeds=tuple(range(6)), steps: int = 100
) -> SpikeRun:
    """O1b, one arm at one rate: spike_run's model, data and logging with OLMO2_ARMS[arm]."""
    if arm not in OLMO2_ARMS:
        raise ValueError(f"arm must be one of {tuple(OLMO2_ARMS)}, got {arm!r}")
    options = dict(d_model=64, n_layers=6, n_heads=2, **OLMO2_ARMS[arm])
    return train_for_spikes(options, lr=lr, seeds=seeds, steps=steps, batch_size=16, length=16)


# ---- G1: (1 + w) gains under weight decay -------------------------------------------------------


@dataclass
class GainDecayResult:
    lr: float
    weight_decay: float
    seeds: list
    steps: int
    mean_gain: dict  # "g" / "1 + w" -> [seed]: the mean of every RMSNorm gain after training
    final_loss: dict  # "g" / "1 + w" -> [seed]
    init_difference: float  # max |logits(g) - logits(1 + w)| at init, same seed, float64
    # one AdamW step with zero gradients, float64: max |gain after - the decay rule's gain| over
    # both arms, the rule g -> g (1 - lr lambda) for g and 1 + w -> 1 + w (1 - lr lambda) for w
    decay_step_error: float


GAIN_ARMS = {"g": False, "1 + w": True}


def _gemma_options(d_model: int, n_layers: int, n_heads: int) -> dict:
    """G1's Gemma-style model: peri block, RMSNorm, sqrt(d) embedding, soft caps 50 and 30."""
    return dict(
        d_model=d_model, n_layers=n_layers, n_heads=n_heads, placement="peri", norm="rmsnorm",
        scale_embedding=True, attn_logit_cap=50.0, final_logit_cap=30.0,
    )  # fmt: skip


def _mean_gains(stacked, like) -> list:
    """Per seed, the mean of every RMSNorm gain of the trained model."""
    gains = []
    for i in range(stacked.size):
        model = stacked.model(i, like)
        values = [m.weight.detach().flatten() for m in model.modules() if isinstance(m, RMSNorm)]
        gains.append(torch.cat(values).mean().item())
    return gains


@experiment
def gain_decay(
    *,
    lr: float = 3e-3,
    weight_decay: float = 0.5,
    seeds=tuple(range(20)),
    steps: int = 150,
    n_layers: int = 4,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
) -> GainDecayResult:
    """G1: a Gemma-style model (peri block, RMSNorm, sqrt(d) embedding, soft caps) with its norm
    gains stored as g or as w in g = 1 + w, trained with AdamW (decoupled decay lambda on every
    parameter, the gains included; a strong lambda so that 150 steps show the pull)."""
    seeds = [int(s) for s in seeds]
    gemma = _gemma_options(d_model, n_layers, n_heads)
    tokens = held_out(length)[:32, :-1]
    with torch.no_grad():  # the two parameterizations are one function at init
        plain, offset = (build_models(seeds[:1], length=length, gain_offset=o, **gemma)[0].double()
                         for o in GAIN_ARMS.values())  # fmt: skip
        init_difference = (plain(tokens) - offset(tokens)).abs().max().item()
    decay_step_error = max(_decay_step_error(model, lr, weight_decay) for model in (plain, offset))
    mean_gain, final_loss = {}, {}
    for arm, gain_offset in GAIN_ARMS.items():
        models = build_models(seeds, length=length, gain_offset=gain_offset, **gemma)
        runs, stacked = train_language_models(
            models,
            batches(seeds, steps=steps, batch_size=batch_size, length=length),
            held_out(length),
            steps=steps,
            lr=lr,
            optimizer="adamw",
            weight_decay=weight_decay,
        )
        mean_gain[arm], final_loss[arm] = _mean_gains(stacked, models[0]), runs.final_loss
    return GainDecayResult(
        lr=lr,
        weight_decay=weight_decay,
        seeds=seeds,
        steps=steps,
        mean_gain=mean_gain,
        final_loss=final_loss,
        init_difference=init_difference,
        decay_step_error=decay_step_error,
    )


@dataclass
class GainsExcludedResult:
    lr: float
    weight_decay: float
    seeds: list
    steps: int
    mean_gain: list  # [seed]: the mean of every RMSNorm gain after training
    final_loss: list  # [seed]
    excluded: list  # the names of the parameters left out of the decay


@experiment
def gain_decay_excluded(
    *,
    lr: float = 3e-3,
    weight_decay: float = 0.5,
    seeds=tuple(range(20)),
    steps: int = 150,
    n_layers: int = 4,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
) -> GainsExcludedResult:
    """G1c: gain_decay's model, data, seeds and AdamW, the gains stored as g and left out of the
    decay (every other parameter decayed as in G1): what open training code commonly does instead
    of storing them as 1 + w."""
    seeds = [int(s) for s in seeds]
    gemma = _gemma_options(d_model, n_layers, n_heads)
    models = build_models(seeds, length=length, gain_offset=False, **gemma)
    gains = sorted(
        f"{name}.weight" for name, m in models[0].named_modules() if isinstance(m, RMSNorm)
    )
    if not gains or set(gains) - dict(models[0].named_parameters()).keys():
        raise ValueError(f"the gains to leave out are not all parameters: {gains}")
    runs, stacked = train_language_models(
        models,
        batches(seeds, steps=steps, batch_size=batch_size, length=length),
        held_out(length),
        steps=steps,
        lr=lr,
        optimizer="adamw",
        weight_decay=weight_decay,
        no_decay=set(gains).__contains__,
    )
    return GainsExcludedResult(
        lr=lr, weight_decay=weight_decay, seeds=seeds, steps=steps,
        mean_gain=_mean_gains(stacked, models[0]), final_loss=runs.final_loss, excluded=gains,
    )  # fmt: skip


def _decay_step_error(model, lr: float, weight_decay: float) -> float:
    """One AdamW step on `model` (float64) with every gradient 0: Adam's update is then 0 and only
    the decoupled decay acts, p -> p (1 - lr lambda) on each stored parameter. Returns the largest
    error of the norm gains g against that rule: g (1 - lr lambda) when g is stored, and
    1 + (g - 1)(1 - lr lambda) when w = g - 1 is. The gains are first moved off their init (a
    fixed draw), so that the two rules differ."""
    norms = [m for m in model.modules() if isinstance(m, RMSNorm)]
    offset = parametrize.is_parametrized(norms[0], "weight")
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for norm in norms:
            g = 1 + 0.3 * torch.randn(norm.weight.shape, generator=generator).double()
            if offset:
                norm.parametrizations.weight.original.copy_(g - 1)  # w = g - 1
            else:
                norm.weight.copy_(g)
    before = [norm.weight.detach().clone() for norm in norms]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    optimizer.step()
    keep = 1 - lr * weight_decay
    errors = []
    for norm, g in zip(norms, before, strict=True):
        expected = 1 + (g - 1) * keep if offset else g * keep
        errors.append((norm.weight.detach() - expected).abs().max().item())
    return max(errors)
