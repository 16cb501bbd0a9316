"""A population: S runs of one model, their parameters stacked on a leading axis and stepped as one
batch, with one loop for every multi-run experiment (`train_population`).

Run i sees only its own data and its own loss's gradient (the losses are summed, and
d(sum)/d(loss_i) = 1), and Adam is elementwise, so one Adam over the stacked parameters is S
independent Adams, and `PerRunAdam` gives each run its own learning rate: the same algorithm as
`lnpaper.train.train` run per run, up to roundoff (tests/test_train_batched.py,
tests/test_population.py). What differs between experiments is only the forward:
- a language model of any architecture: `StackedModels`, `torch.func.vmap` over `functional_call`
  (notebooks 06-10, `train_language_models`);
- the same language models hand-fused over stacked weights, `lnpaper.models.fused_transformer`'s
  `FusedLanguageModels`, with `StackedModels`' interface (`stacked_language_models` picks it
  wherever every model's options allow);
- the recurrent cells, the MLP and the CNN: a hand-fused forward over stacked weights (`bmm`,
  grouped convolutions), because at these sizes a step costs mostly per-operation overhead, which
  vmap does not remove (`lnpaper.models.seed_batched_classifier.SeedBatchedClassifier`,
  `lnpaper.models.mlp.SeedBatchedMLP`, `lnpaper.models.cnn.SeedBatchedCNN`).

A run whose loss stops being finite has diverged: it is recorded and its later numbers are None,
while the other runs go on (a non-finite value stays in its own run's slice of every tensor).
"""

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from lnpaper import progress
from lnpaper.models.fused_transformer import FusedLanguageModels, fused_unsupported
from lnpaper.train.optim import make_optimizer, warmup_lr


@dataclass
class SeedRuns:
    steps: list = field(default_factory=list)  # the steps at which train_loss was logged
    train_loss: list = field(default_factory=list)  # [seed][k]: mean over each logging window
    initial_loss: list = field(default_factory=list)  # [seed]: held-out loss at init
    final_loss: list = field(default_factory=list)  # [seed]: after training, None if diverged
    diverged_at: list = field(default_factory=list)  # [seed]: first non-finite step, or None
    logs: dict = field(default_factory=dict)  # name -> [seed][k], what `monitor` returned
    losses: list = field(default_factory=list)  # [step]: the S losses as a tensor (keep_losses)


class StackedModels:
    """S models of one architecture as stacked tensors, and their functional forward."""

    def __init__(self, models: list[nn.Module]):
        if not models:
            raise ValueError("need at least one model")
        self.params, self.buffers = stack_module_state(models)
        self.template = copy.deepcopy(models[0]).to("meta")
        self.size = len(models)

    def forward_one(self, params, buffers, tokens):
        """One seed's logits: the template run on that seed's slice of the weights."""
        return functional_call(self.template, (params, buffers), (tokens,), {"check_ids": False})

    def logits(self, tokens: torch.Tensor, shared: bool = False) -> torch.Tensor:
        """Logits of every seed's model: tokens S x B x T (or B x T for all if `shared`)."""
        batched = vmap(self.forward_one, in_dims=(0, 0, None if shared else 0))
        return batched(self.params, self.buffers, tokens)

    def losses(self, tokens: torch.Tensor, shared: bool = False) -> torch.Tensor:
        """Next-token cross-entropy per seed (nats per token), S values."""

        def loss(params, buffers, batch):
            logits = self.forward_one(params, buffers, batch[:, :-1])
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))

        return vmap(loss, in_dims=(0, 0, None if shared else 0))(self.params, self.buffers, tokens)

    def model(self, index: int, like: nn.Module) -> nn.Module:
        """Seed `index`'s model as an ordinary module (a copy of `like` with its weights)."""
        single = copy.deepcopy(like)
        state = {name: value[index].detach().clone() for name, value in self.params.items()}
        state.update({name: value[index].clone() for name, value in self.buffers.items()})
        single.load_state_dict(state)
        return single


def stacked_language_models(
    models: list[nn.Module], fused: bool = True
) -> "FusedLanguageModels | StackedModels":
    """S language models as one population: `FusedLanguageModels` (stacked weights through
    batched matrix products, a few large kernels per step) when `fused` and every model's options
    are ones it computes (`fused_unsupported`), else `StackedModels` (vmap, any architecture).
    Both have one interface and give each seed its one-run numbers up to roundoff."""
    if not isinstance(fused, bool):
        raise ValueError(f"fused must be True or False, got {fused!r}")
    if fused and fused_unsupported(models) is None:
        return FusedLanguageModels(models)
    return StackedModels(models)


def train_population(
    size: int,
    params: list[torch.Tensor],
    step_losses: Callable[[int], tuple[torch.Tensor | None, torch.Tensor | None]],
    optimizer,
    *,
    steps: int,
    lr: float | None = None,
    warmup_steps: int = 0,
    log_every: int = 1,
    evaluate: Callable[[int], None] | None = None,
    eval_every: int = 0,
    eval_last: bool = True,
    monitor: Callable[[int], dict] | None = None,
    monitor_steps=(),
    log_grad_norm: bool = False,
    keep_losses: bool = False,
) -> SeedRuns:
    """Step `size` runs together for `steps` steps; the one loop behind every multi-run experiment.

    `step_losses(step)` returns (per_run, total): the S per-run losses of this step's batches, and
    the scalar whose gradient is taken (None: the sum of per_run, a diverged run's loss counted as
    0). A loop that logs nothing per run returns per_run None and gets no divergence check.
    `optimizer` steps the stacked `params` (torch's, `make_optimizer`, or `PerRunAdam`); with `lr`,
    every param group's rate follows `warmup_lr(step, lr, warmup_steps)`.

    Logged, per run: the mean loss over each window of `log_every` steps (`train_loss`, and every
    step's tensor in `SeedRuns.losses` with `keep_losses`), the first non-finite step
    (`diverged_at`), the global gradient norm before each step (`logs["grad_norm"]`, with
    `log_grad_norm`), and `monitor(step)` -> {name: S values} before each step in `monitor_steps`
    (`steps` for after the last one). `evaluate(step)` runs before the first step and after every
    `eval_every` steps (and after the last, with `eval_last`)."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if log_every < 1:
        raise ValueError(f"log_every must be >= 1, got {log_every}")
    runs = SeedRuns(diverged_at=[None] * size)
    runs.train_loss = [[] for _ in range(size)]
    monitor_steps = set(monitor_steps)

    def log(step):
        with torch.no_grad():
            values = monitor(step)
        for name, per_run in values.items():
            rows = runs.logs.setdefault(name, [[] for _ in range(size)])
            for i, value in enumerate(per_run):
                rows[i].append(None if runs.diverged_at[i] is not None else float(value))

    if evaluate is not None:
        evaluate(0)
    window = []
    for step in progress.steps(steps, f"{size} runs"):
        if monitor is not None and step in monitor_steps:
            log(step)
        if lr is not None:
            for group in optimizer.param_groups:
                group["lr"] = warmup_lr(step, lr, warmup_steps)
        per_run, total = step_losses(step)
        if per_run is not None:
            values = per_run.tolist()
            for i, value in enumerate(values):
                if runs.diverged_at[i] is None and not math.isfinite(value):
                    runs.diverged_at[i] = step
            if all(d is not None for d in runs.diverged_at):
                break
        optimizer.zero_grad(set_to_none=True)
        if total is None:
            total = per_run.nan_to_num(0.0, 0.0, 0.0).sum()  # a diverged run adds nothing
        total.backward()
        if log_grad_norm:
            squares = sum(p.grad.flatten(1).pow(2).sum(dim=1) for p in params)
            rows = runs.logs.setdefault("grad_norm", [[] for _ in range(size)])
            for i, norm in enumerate(squares.sqrt().tolist()):
                if runs.diverged_at[i] is None:
                    rows[i].append(norm)
        optimizer.step()
        if per_run is not None:
            if keep_losses:
                runs.losses.append(per_run.detach())
            window.append(values)
            if len(window) == log_every or step == steps - 1:
                runs.steps.append(step + 1)
                for i in range(size):
                    if runs.diverged_at[i] is None:
                        runs.train_loss[i].append(sum(w[i] for w in window) / len(window))
                window = []
        done = step + 1
        if (
            evaluate is not None
            and eval_every
            and (done % eval_every == 0 or (eval_last and done == steps))
        ):
            evaluate(done)
    if monitor is not None and steps in monitor_steps:
        log(steps)
    return runs


def train_language_models(
    models: list[nn.Module],
    next_batch: Callable[[int], torch.Tensor],
    held_out: torch.Tensor,
    *,
    steps: int,
    lr: float,
    optimizer: str = "adam",
    weight_decay: float = 0.0,
    no_decay: Callable[[str], bool] | None = None,
    warmup_steps: int = 0,
    log_every: int = 10,
    monitor: Callable[[int, FusedLanguageModels], dict] | None = None,
    monitor_steps=(),
    log_grad_norm: bool = False,
) -> tuple[SeedRuns, FusedLanguageModels | StackedModels]:
    """Train models[i] on next_batch(step)[i] (S x B x T+1 tokens) for `steps` steps, all at once,
    on next-token cross-entropy (`train_population` over `stacked_language_models`: the fused
    population wherever the models' options allow, else vmap).

    `monitor(step, stacked)` is called before the step numbered `step` for each step in
    `monitor_steps` (`steps` for after the last one) and returns {name: S values}; they are logged
    in `SeedRuns.logs[name][seed]`. With `log_grad_norm`, `logs["grad_norm"][seed]` holds each
    step's global gradient norm, sqrt(sum of every parameter's squared gradient), before the
    optimizer's step. Held-out losses are on `held_out` (B x T+1, shared). `no_decay(name)` true
    leaves that parameter out of the weight decay (AdamW only)."""
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if optimizer not in ("adam", "adamw", "sgd"):
        raise ValueError(f"optimizer must be 'adam', 'adamw' or 'sgd', got {optimizer!r}")
    if optimizer == "adam" and weight_decay:
        raise ValueError("weight_decay needs optimizer 'adamw' (decoupled decay)")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if no_decay is not None and optimizer != "adamw":
        raise ValueError(f"no_decay needs optimizer 'adamw', got {optimizer!r}")
    stacked = stacked_language_models(models)
    params = stacked.params.values()
    if no_decay is not None:
        named = stacked.params.items()
        params = [
            {"params": [p for name, p in named if not no_decay(name)]},
            {"params": [p for name, p in named if no_decay(name)], "weight_decay": 0.0},
        ]
    opt = make_optimizer(optimizer, params, lr, weight_decay)
    with torch.no_grad():
        initial = stacked.losses(held_out, shared=True).tolist()
    runs = train_population(
        stacked.size,
        list(stacked.params.values()),
        lambda step: (stacked.losses(next_batch(step)), None),
        opt,
        steps=steps,
        lr=lr,
        warmup_steps=warmup_steps,
        log_every=log_every,
        monitor=None if monitor is None else (lambda step: monitor(step, stacked)),
        monitor_steps=monitor_steps,
        log_grad_norm=log_grad_norm,
    )
    runs.initial_loss = initial
    with torch.no_grad():
        final = stacked.losses(held_out, shared=True).tolist()
    runs.final_loss = [
        None if d is not None or not math.isfinite(v) else v
        for d, v in zip(runs.diverged_at, final, strict=True)
    ]
    return runs, stacked
