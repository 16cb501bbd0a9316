"""One small seeded training loop, shared by every notebook that trains something.

The loop owns no randomness: the caller seeds the model's initialization and hands in `next_batch`,
a function of the step number (see `epoch_batches`), so a run is a pure function of its arguments.
It returns a `History` of plain numbers, which is what the experiments store and the figures draw.

A run whose loss stops being finite is not an error: it is a result (Post-LN without warmup, a
Transformer without normalization). It is recorded as `diverged_at` and the loop stops there.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from lnpaper import progress
from lnpaper.train.optim import make_optimizer, warmup_lr


@dataclass
class History:
    steps: list[int] = field(default_factory=list)  # the steps at which train_loss was recorded
    # mean loss over each logging window; the last may be shorter (the run ended or diverged)
    train_loss: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)  # what `evaluate` returned at each eval step
    diverged_at: int | None = None  # first step whose loss was not finite, if any

    def eval_curve(self, key: str) -> list[float]:
        return [e[key] for e in self.evals]


def train(
    model: torch.nn.Module,
    loss_fn: Callable,
    next_batch: Callable[[int], tuple],
    *,
    steps: int,
    lr: float,
    optimizer: str = "adam",
    warmup_steps: int = 0,
    weight_decay: float = 0.0,
    clip_grad_norm: float | None = None,
    log_every: int = 1,
    evaluate: Callable[[torch.nn.Module], dict] | None = None,
    eval_every: int = 0,
) -> History:
    """Train `model` for `steps` steps of `loss_fn(model, next_batch(step))` and return its history.

    `evaluate(model)` runs in eval mode without gradients before the first step and every
    `eval_every` steps after it (and after the last step), and returns a dict of floats.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if log_every < 1:
        raise ValueError(f"log_every must be >= 1, got {log_every}")
    history = History()
    opt = make_optimizer(optimizer, model.parameters(), lr, weight_decay)

    def run_eval(step: int) -> None:
        model.eval()
        with torch.no_grad():
            history.evals.append({k: float(v) for k, v in evaluate(model).items()})
        history.eval_steps.append(step)
        model.train()

    if evaluate is not None:
        run_eval(0)
    model.train()
    window = []
    for step in progress.steps(steps, "training"):
        for group in opt.param_groups:
            group["lr"] = warmup_lr(step, lr, warmup_steps)
        loss = loss_fn(model, next_batch(step))
        if not math.isfinite(loss.item()):
            history.diverged_at = step
            if window:  # the finite steps since the last log: the curve runs up to the divergence
                history.steps.append(step)
                history.train_loss.append(sum(window) / len(window))
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        opt.step()
        window.append(loss.item())
        if len(window) == log_every or step == steps - 1:
            history.steps.append(step + 1)
            history.train_loss.append(sum(window) / len(window))
            window = []
        done = step + 1
        if evaluate is not None and eval_every and (done % eval_every == 0 or done == steps):
            run_eval(done)
    return history


def epoch_batches(n: int, batch_size: int, seed: int) -> Callable[[int], torch.Tensor]:
    """Indices of minibatch `step`: each epoch is a fresh seeded permutation of range(n), cut into
    `n // batch_size` batches (the remainder of an epoch is dropped, so every batch has the same
    size and BatchNorm never sees a batch of one by accident)."""
    if not 1 <= batch_size <= n:
        raise ValueError(f"batch_size must be in 1..{n} (the number of examples), got {batch_size}")
    per_epoch = n // batch_size
    permutations: dict[int, torch.Tensor] = {}

    def indices(step: int) -> torch.Tensor:
        epoch, position = divmod(step, per_epoch)
        if epoch not in permutations:
            permutations.clear()  # steps come in order: only the current epoch is ever needed
            generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
            permutations[epoch] = torch.randperm(n, generator=generator)
        return permutations[epoch][position * batch_size : (position + 1) * batch_size]

    return indices
