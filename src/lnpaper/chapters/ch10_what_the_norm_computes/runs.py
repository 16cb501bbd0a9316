"""Experiments of notebook 10, "what the norm computes": the recorded runs behind claims E1, E2
and Y1 (the studies that gather them, and the summaries, are in `analysis`).

- `zero_mean_drift` (E1, Jiang et al. 2023): notebook 06's Pre-LN language model rewritten by
  `zero_mean_rmsnorm` (a zero-mean residual stream read by RMSNorm), checked equal in float64 at
  init and after training, then both forms trained side by side under Adam in float32 and their
  held-out logits compared as they drift apart.
- `constrained_drift` (E1c): the rewrite taken apart, in float64 under Adam and SGD:
  writers kept zero-mean with the norms' biases kept, the same with the biases folded into the
  readers, and E1's free rewrite, each trained beside its LayerNorm twin.
- `norm_variant_training` (E2, E2c, E2d, Y1, Y1c): one norm in every slot of the same model
  (Xu et al.'s (2019) LayerNorm-simple and DetachNorm, DyT, Derf, ...), over seeds, initial
  alphas and data budgets (fresh sequences at every step, or a small fixed pool cycled), with the
  fraction of saturated units per norm slot; `analysis` gathers its runs into studies.

Every training run trains all of its seeds (and, where the architecture is shared, all of its
settings) as one vmapped batch (`lnpaper.train.population`); each seed's model is initialized with
`torch.manual_seed(seed)` and sees `SyntheticLanguage().sample(steps * batch, length + 1, seed)`,
as `lm_training` does, so every arm of a comparison is paired by seed.
"""

from dataclasses import dataclass

import torch

from lnpaper.chapters.ch06_transformer.runs import HELD_OUT_SEED
from lnpaper.companion.record import experiment
from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models import TransformerConfig
from lnpaper.models.transformer import POINTWISE, TransformerLM
from lnpaper.models.zero_mean import keep_writers_centered, zero_mean_rmsnorm
from lnpaper.norms import Derf, DyT, LayerNorm, RMSNorm
from lnpaper.train import train_language_models

SATURATION = 2.0  # |alpha x| > 2: tanh(2) = 0.96, erf(2) = 0.995, the flat part of the squashing
BUDGETS = ("fresh", "pool")


def _language_model(language, seed: int, **options) -> TransformerLM:
    torch.manual_seed(seed)
    return TransformerLM(TransformerConfig(language.vocab_size, **options))


def _sequences(language, seeds, n: int, length: int) -> torch.Tensor:
    """S x n x (length + 1): seed s's own sequences, as lm_training draws them."""
    return torch.stack([language.sample(n, length + 1, seed=s) for s in seeds])


# ---- E1: the redundant mean -------------------------------------------------------------------


@dataclass
class ZeroMeanDriftResult:
    seeds: list
    d_model: int
    n_layers: int
    lr: float
    steps: int
    monitor_steps: list  # the steps at which the two forms were compared (0: before training)
    # float64, max over seeds and over every logit of the held-out batch: |zero-mean RMSNorm - LN|
    max_logit_diff_init: float
    max_logit_diff_trained: float  # the same for each seed's LayerNorm model after training
    logit_scale: float  # max |logit| of those models, for a relative reading
    # float64, max over seeds and every norm's input: |mean over the hidden axis| / RMS
    max_stream_mean_init: float
    # per seed, the zero-mean form after training (float32): the same ratio, max over the norms
    stream_mean_trained: list
    # [seed][k] at monitor_steps: max |logit difference| on the probe, and the held-out loss
    # difference, zero-mean RMSNorm minus LayerNorm (float32 training)
    logit_drift: list
    loss_drift: list
    final_loss_layernorm: list  # held-out loss after training, per seed
    final_loss_rmsnorm: list
    initial_loss: list  # held-out loss at init, per seed (the two forms share it)


def _norm_input_means(model: TransformerLM, tokens: torch.Tensor) -> float:
    """max over the model's norms and tokens of |mean_i x_i| / RMS(x) of what each norm reads."""
    ratios = []

    def hook(module, inputs):
        x = inputs[0]
        rms = x.pow(2).mean(-1).sqrt()
        ratios.append((x.mean(-1).abs() / rms).max().item())

    norms = [m for m in model.modules() if isinstance(m, LayerNorm | RMSNorm)]
    handles = [m.register_forward_pre_hook(hook) for m in norms]
    try:
        with torch.no_grad():
            model(tokens)
    finally:
        for handle in handles:
            handle.remove()
    return max(ratios)


def _max_logit_diff(model: TransformerLM, tokens: torch.Tensor) -> tuple[float, float]:
    """(max |logits of the zero-mean RMSNorm form - logits of model|, max |logit|), float64."""
    model = model.double()
    converted = zero_mean_rmsnorm(model)
    with torch.no_grad():
        logits = model(tokens)
        diff = (converted(tokens) - logits).abs().max().item()
    return diff, logits.abs().max().item()


@experiment
def zero_mean_drift(
    *,
    seeds=tuple(range(10)),
    steps: int = 100,
    lr: float = 3e-3,
    d_model: int = 64,
    n_layers: int = 6,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
    compare_every: int = 10,
) -> ZeroMeanDriftResult:
    """E1 on notebook 06's Pre-LN model (d 64, 6 blocks, 2 heads; Adam, no warmup, lm_training's
    data). Exactness: each seed's model in float64 and its `zero_mean_rmsnorm` rewrite give the
    same logits on 256 held-out sequences, at init and after training. Drift: the LayerNorm model
    and its rewrite, both float32 from the same init, trained on the same batches; every
    `compare_every` steps the max |logit difference| on 64 held-out sequences and the held-out
    loss difference."""
    language = SyntheticLanguage()
    held_out = language.sample(256, length + 1, seed=HELD_OUT_SEED)
    probe = held_out[:64, :-1]
    seeds = [int(s) for s in seeds]
    options = dict(d_model=d_model, n_layers=n_layers, n_heads=n_heads, max_len=length)
    layernorm = [_language_model(language, s, **options) for s in seeds]
    init_diffs, scales, init_means = [], [], []
    for model in layernorm:
        diff, scale = _max_logit_diff(model.double(), held_out[:, :-1])
        init_diffs.append(diff)
        scales.append(scale)
        init_means.append(_norm_input_means(zero_mean_rmsnorm(model), held_out[:, :-1]))
        model.float()
    rmsnorm = [zero_mean_rmsnorm(model) for model in layernorm]  # float32, from the same init
    data = _sequences(language, seeds, steps * batch_size, length)
    monitor_steps = list(range(0, steps + 1, compare_every))
    seen = {}

    def monitor(name):
        def log(step, stacked):
            seen.setdefault(name, []).append(stacked.logits(probe, shared=True).clone())
            return {"loss": stacked.losses(held_out, shared=True)}

        return log

    def batch(step):
        return data[:, step * batch_size : (step + 1) * batch_size]

    trained = {}
    for name, models in (("layernorm", layernorm), ("rmsnorm", rmsnorm)):
        trained[name] = train_language_models(
            models, batch, held_out, steps=steps, lr=lr, monitor=monitor(name),
            monitor_steps=monitor_steps,
        )  # fmt: skip
    (ln_runs, ln_stack), (rms_runs, rms_stack) = trained["layernorm"], trained["rmsnorm"]
    logit_drift = [[] for _ in seeds]
    for ln_logits, rms_logits in zip(seen["layernorm"], seen["rmsnorm"], strict=True):
        per_seed = (rms_logits - ln_logits).abs().flatten(1).max(dim=1).values
        for i, value in enumerate(per_seed.tolist()):
            logit_drift[i].append(value)
    loss_drift = [
        [r - n for r, n in zip(rms, ln, strict=True)]
        for rms, ln in zip(rms_runs.logs["loss"], ln_runs.logs["loss"], strict=True)
    ]
    trained_diffs, stream_means = [], []
    for i in range(len(seeds)):
        ln_model = ln_stack.model(i, like=layernorm[i])
        diff, scale = _max_logit_diff(ln_model, held_out[:, :-1])
        trained_diffs.append(diff)
        scales.append(scale)
        stream_means.append(_norm_input_means(rms_stack.model(i, like=rmsnorm[i]), probe))
    return ZeroMeanDriftResult(
        seeds=seeds, d_model=d_model, n_layers=n_layers, lr=lr, steps=steps,
        monitor_steps=monitor_steps, max_logit_diff_init=max(init_diffs),
        max_logit_diff_trained=max(trained_diffs), logit_scale=max(scales),
        max_stream_mean_init=max(init_means), stream_mean_trained=stream_means,
        logit_drift=logit_drift, loss_drift=loss_drift,
        final_loss_layernorm=ln_runs.final_loss, final_loss_rmsnorm=rms_runs.final_loss,
        initial_loss=ln_runs.initial_loss,
    )  # fmt: skip


# E1c: the rewrite taken apart. Each arm trains beside its LayerNorm twin (same float64 init, same
# batches); "kept zero-mean" is the source's constraint, "biases kept" leaves out the bias fold.
CONSTRAINED_ARMS = {
    "kept zero-mean, biases kept": {"keep_zero_mean": True, "fold_biases": False},
    "kept zero-mean, biases folded": {"keep_zero_mean": True, "fold_biases": True},
    "free, biases folded": {"keep_zero_mean": False, "fold_biases": True},  # E1's rewrite
}


@dataclass
class ConstrainedDriftResult:
    seeds: list
    steps: int
    lrs: dict  # optimizer -> learning rate
    monitor_steps: list
    # optimizer -> arm -> [seed][k]: max |log-probability difference| from the LayerNorm twin on
    # the probe, float64, at monitor_steps (log-probabilities, not logits: a shift of every logit
    # by one constant is not a change of the model)
    logprob_gap: dict
    # optimizer -> arm or "LayerNorm" -> [seed]: held-out loss after training
    final_loss: dict
    # optimizer -> arm -> [seed]: after training, max over the norms of |mean| / RMS of their input
    stream_mean: dict


@experiment
def constrained_drift(
    *,
    seeds=tuple(range(4)),
    steps: int = 100,
    adam_lr: float = 3e-3,
    sgd_lr: float = 0.3,
    d_model: int = 64,
    n_layers: int = 6,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
    compare_every: int = 10,
) -> ConstrainedDriftResult:
    """E1c: `zero_mean_drift`'s model and data, in float64 throughout, each rewrite of
    CONSTRAINED_ARMS trained beside the LayerNorm model it came from, under Adam and under plain
    SGD; every `compare_every` steps the max |log-probability difference| on 64 held-out sequences,
    and after training the held-out losses and how far each stream is from zero-mean."""
    language = SyntheticLanguage()
    held_out = language.sample(256, length + 1, seed=HELD_OUT_SEED)
    probe = held_out[:64, :-1]
    seeds = [int(s) for s in seeds]
    options = dict(d_model=d_model, n_layers=n_layers, n_heads=n_heads, max_len=length)
    data = _sequences(language, seeds, steps * batch_size, length)
    monitor_steps = list(range(0, steps + 1, compare_every))
    lrs = {"adam": adam_lr, "sgd": sgd_lr}

    def batch(step):
        return data[:, step * batch_size : (step + 1) * batch_size]

    logprob_gap, final_loss, stream_mean = {}, {}, {}
    for optimizer, lr in lrs.items():
        twins = [_language_model(language, s, **options).double() for s in seeds]
        arms = {"LayerNorm": twins}
        for arm, how in CONSTRAINED_ARMS.items():
            rewrites = [zero_mean_rmsnorm(m, fold_biases=how["fold_biases"]) for m in twins]
            arms[arm] = keep_writers_centered(rewrites) if how["keep_zero_mean"] else rewrites
        seen, trained = {}, {}
        for arm, models in arms.items():

            def log(step, stacked, arm=arm, seen=seen):
                logits = stacked.logits(probe, shared=True)
                seen.setdefault(arm, []).append(logits.log_softmax(dim=-1))
                return {}

            trained[arm] = train_language_models(
                models, batch, held_out, steps=steps, lr=lr, optimizer=optimizer, monitor=log,
                monitor_steps=monitor_steps,
            )  # fmt: skip
        logprob_gap[optimizer], stream_mean[optimizer] = {}, {}
        final_loss[optimizer] = {arm: runs.final_loss for arm, (runs, _) in trained.items()}
        for arm in CONSTRAINED_ARMS:
            gaps = [[] for _ in seeds]
            for twin, rewrite in zip(seen["LayerNorm"], seen[arm], strict=True):
                per_seed = (rewrite - twin).abs().flatten(1).max(dim=1).values
                for i, value in enumerate(per_seed.tolist()):
                    gaps[i].append(value)
            logprob_gap[optimizer][arm] = gaps
            stacked = trained[arm][1]
            stream_mean[optimizer][arm] = [
                _norm_input_means(stacked.model(i, like=model), probe)
                for i, model in enumerate(arms[arm])
            ]
    return ConstrainedDriftResult(
        seeds=seeds, steps=steps, lrs=lrs, monitor_steps=monitor_steps, logprob_gap=logprob_gap,
        final_loss=final_loss, stream_mean=stream_mean,
    )  # fmt: skip


# ---- E2 and Y1: one architecture per run, its settings and seeds trained as one batch ----------


@dataclass
class VariantRunResult:
    norm: str
    learned_embed_scale: bool
    seeds: list
    steps: int
    lr: float
    pool_size: int
    # keyed by setting: "fresh" / "pool", or "alpha 0.5, fresh" for the pointwise norms
    final_loss: dict  # setting -> [seed], held-out loss after training (None if diverged)
    initial_loss: dict  # setting -> [seed]
    train_loss: dict  # setting -> [seed][k], mean over each window of `log_every` steps
    log_steps: list
    diverged_at: dict  # setting -> [seed]
    # pointwise norms only: setting -> [seed][slot], the fraction of |alpha x + s| > SATURATION
    # over the probe's values, per norm slot (block 1 attention, block 1 FFN, ..., final), at init
    # and after training
    saturation_init: dict
    saturation_final: dict
    alpha_final: dict  # setting -> [seed][slot], each slot's alpha after training


def _saturation(model: TransformerLM, tokens: torch.Tensor) -> tuple[list, list]:
    """Per pointwise-norm slot: the fraction of its inputs' values with |alpha x + s| > 2 (s = 0
    for DyT), and its alpha."""
    fractions, alphas = [], []

    def hook(module, inputs):
        argument = module.alpha * inputs[0]
        if isinstance(module, Derf):
            argument = argument + module.shift  # erf(alpha x + s)
        fractions.append((argument.abs() > SATURATION).double().mean().item())
        alphas.append(module.alpha.item())

    slots = [m for m in model.modules() if isinstance(m, DyT | Derf)]
    handles = [m.register_forward_pre_hook(hook) for m in slots]
    try:
        with torch.no_grad():
            model(tokens)
    finally:
        for handle in handles:
            handle.remove()
    return fractions, alphas


@experiment
def norm_variant_training(
    *,
    norm: str = "layernorm",
    alpha_inits=(),
    budgets=("fresh",),
    learned_embed_scale: bool = False,
    seeds=tuple(range(10)),
    steps: int = 150,
    lr: float = 3e-3,
    pool_size: int = 64,
    d_model: int = 32,
    n_layers: int = 4,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
    log_every: int = 10,
) -> VariantRunResult:
    """Pre-norm language model with `norm` in every slot, Adam without warmup, trained for every
    seed, every alpha init in `alpha_inits` (pointwise norms: dyt, derf; empty for the others) and
    every data budget at once. Budget "fresh": seed s's batch at step k is sequences
    k B .. (k + 1) B - 1 of its own stream (lm_training's data); "pool": the same seed's first
    `pool_size` sequences, cycled (batch k is pool[(k B mod P) ..], P a multiple of B). A smaller
    model than notebook 06's (d 32, 4 blocks) keeps the grid within the record's budget."""
    if norm in POINTWISE and not alpha_inits:
        raise ValueError(f"norm {norm!r} needs alpha_inits (its alpha's initial values)")
    if norm not in POINTWISE and alpha_inits:
        raise ValueError(f"alpha_inits are for {POINTWISE}; norm {norm!r} has no alpha")
    unknown = set(budgets) - set(BUDGETS)
    if unknown or not budgets:
        raise ValueError(f"budgets must name some of {BUDGETS}, got {budgets!r}")
    if pool_size % batch_size or pool_size <= 0:
        raise ValueError(f"pool_size must be a positive multiple of batch_size, got {pool_size}")
    language = SyntheticLanguage()
    held_out = language.sample(256, length + 1, seed=HELD_OUT_SEED)
    probe = held_out[:64, :-1]
    seeds = [int(s) for s in seeds]
    options = dict(d_model=d_model, n_layers=n_layers, n_heads=n_heads, max_len=length, norm=norm,
                   learned_embed_scale=learned_embed_scale)  # fmt: skip
    alphas = [float(a) for a in alpha_inits] or [None]
    settings, models, streams = [], [], []
    data = _sequences(language, seeds, steps * batch_size, length)
    for alpha in alphas:
        for budget in budgets:
            name = budget if alpha is None else f"alpha {alpha:g}, {budget}"
            settings.append(name)
            extra = {} if alpha is None else {"alpha_init": alpha}
            models += [_language_model(language, s, **options, **extra) for s in seeds]
            streams.append(data if budget == "fresh" else data[:, :pool_size])
    pointwise = norm in POINTWISE
    at_init = [_saturation(m, probe) for m in models] if pointwise else []

    def batch(step):
        start = step * batch_size
        rows = [
            stream[:, (start % stream.shape[1]) : (start % stream.shape[1]) + batch_size]
            for stream in streams
        ]
        return torch.cat(rows)

    runs, stacked = train_language_models(
        models, batch, held_out, steps=steps, lr=lr, log_every=log_every
    )
    n = len(seeds)

    def by_setting(values):
        return {name: list(values[j * n : (j + 1) * n]) for j, name in enumerate(settings)}

    at_end = [_saturation(stacked.model(i, like=m), probe) for i, m in enumerate(models)]
    at_end = at_end if pointwise else []
    return VariantRunResult(
        norm=norm, learned_embed_scale=learned_embed_scale, seeds=seeds, steps=steps, lr=lr,
        pool_size=pool_size, final_loss=by_setting(runs.final_loss),
        initial_loss=by_setting(runs.initial_loss), train_loss=by_setting(runs.train_loss),
        log_steps=runs.steps, diverged_at=by_setting(runs.diverged_at),
        saturation_init=by_setting([f for f, _ in at_init]) if pointwise else {},
        saturation_final=by_setting([f for f, _ in at_end]) if pointwise else {},
        alpha_final=by_setting([a for _, a in at_end]) if pointwise else {},
    )  # fmt: skip
