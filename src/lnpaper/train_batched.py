"""Many seeds' language models trained at once, as one batch (notebook 07).

At this size a model's step costs mostly per-operation overhead, so S seeds trained one after the
other cost about S times one seed, while S seeds stacked into one set of tensors and run through
`torch.func.vmap` cost little more than one. Seed i's model sees only seed i's data and its own
loss's gradient (the losses are summed, and d(sum)/d(loss_i) = 1), and Adam is elementwise, so one
Adam over the stacked parameters is S independent Adams: the same algorithm as `lnpaper.train.train`
run per seed, up to roundoff (tests/test_train_batched.py).

A seed whose loss stops being finite has diverged: it is recorded and its later numbers are None,
while the other seeds go on (a non-finite value stays in its own seed's slice of every tensor).
"""

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from lnpaper.train import warmup_lr


@dataclass
class SeedRuns:
    steps: list = field(default_factory=list)  # the steps at which train_loss was logged
    train_loss: list = field(default_factory=list)  # [seed][k]: mean over each logging window
    initial_loss: list = field(default_factory=list)  # [seed]: held-out loss at init
    final_loss: list = field(default_factory=list)  # [seed]: after training, None if diverged
    diverged_at: list = field(default_factory=list)  # [seed]: first non-finite step, or None
    logs: dict = field(default_factory=dict)  # name -> [seed][k], what `monitor` returned


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


def make_optimizer(name: str, params, lr: float, weight_decay: float):
    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    if name == "adamw":  # decoupled decay: w <- w - lr * lambda * w
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    raise ValueError(f"optimizer must be 'adam' or 'adamw', got {name!r}")


def train_language_models(
    models: list[nn.Module],
    next_batch: Callable[[int], torch.Tensor],
    held_out: torch.Tensor,
    *,
    steps: int,
    lr: float,
    optimizer: str = "adam",
    weight_decay: float = 0.0,
    warmup_steps: int = 0,
    log_every: int = 10,
    monitor: Callable[[int, StackedModels], dict] | None = None,
    monitor_steps=(),
    log_grad_norm: bool = False,
) -> tuple[SeedRuns, StackedModels]:
    """Train models[i] on next_batch(step)[i] (S x B x T+1 tokens) for `steps` steps, all at once.

    `monitor(step, stacked)` is called before the step numbered `step` for each step in
    `monitor_steps` (`steps` for after the last one) and returns {name: S values}; they are logged
    in `SeedRuns.logs[name][seed]`. With `log_grad_norm`, `logs["grad_norm"][seed]` holds each
    step's global gradient norm, sqrt(sum of every parameter's squared gradient), before the
    optimizer's step. Held-out losses are on `held_out` (B x T+1, shared)."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if optimizer == "adam" and weight_decay:
        raise ValueError("weight_decay needs optimizer 'adamw' (decoupled decay)")
    stacked = StackedModels(models)
    runs = SeedRuns(diverged_at=[None] * stacked.size)
    runs.train_loss = [[] for _ in range(stacked.size)]
    opt = make_optimizer(optimizer, stacked.params.values(), lr, weight_decay)
    monitor_steps = set(monitor_steps)

    def log(step):
        with torch.no_grad():
            values = monitor(step, stacked)
        for name, per_seed in values.items():
            rows = runs.logs.setdefault(name, [[] for _ in range(stacked.size)])
            for i, value in enumerate(per_seed):
                rows[i].append(None if runs.diverged_at[i] is not None else float(value))

    with torch.no_grad():
        runs.initial_loss = stacked.losses(held_out, shared=True).tolist()
    window = []
    for step in range(steps):
        if monitor is not None and step in monitor_steps:
            log(step)
        for group in opt.param_groups:
            group["lr"] = warmup_lr(step, lr, warmup_steps)
        losses = stacked.losses(next_batch(step))
        values = losses.tolist()
        for i, value in enumerate(values):
            if runs.diverged_at[i] is None and not math.isfinite(value):
                runs.diverged_at[i] = step
        if all(d is not None for d in runs.diverged_at):
            break
        opt.zero_grad(set_to_none=True)
        losses.nan_to_num(0.0, 0.0, 0.0).sum().backward()  # a diverged seed adds nothing
        if log_grad_norm:
            squares = sum(p.grad.flatten(1).pow(2).sum(dim=1) for p in stacked.params.values())
            rows = runs.logs.setdefault("grad_norm", [[] for _ in range(stacked.size)])
            for i, norm in enumerate(squares.sqrt().tolist()):
                if runs.diverged_at[i] is None:
                    rows[i].append(norm)
        opt.step()
        window.append(values)
        if len(window) == log_every or step == steps - 1:
            runs.steps.append(step + 1)
            for i in range(stacked.size):
                if runs.diverged_at[i] is None:
                    runs.train_loss[i].append(sum(w[i] for w in window) / len(window))
            window = []
    if monitor is not None and steps in monitor_steps:
        log(steps)
    with torch.no_grad():
        final = stacked.losses(held_out, shared=True).tolist()
    runs.final_loss = [
        None if d is not None or not math.isfinite(v) else v
        for d, v in zip(runs.diverged_at, final, strict=True)
    ]
    return runs, stacked
