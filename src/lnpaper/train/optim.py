"""The optimizers every loop uses: one `make_optimizer`, the warmup schedule, and `PerRunAdam`, Adam
with one learning rate per run of a population (a learning-rate grid stepped as one batch)."""

import torch


def warmup_lr(step: int, lr: float, warmup_steps: int) -> float:
    """Linear warmup from lr / warmup_steps to lr over the first `warmup_steps` steps, then constant.

    Step 0 gets lr / warmup_steps, not 0, so no step is wasted."""
    if warmup_steps <= 0:
        return lr
    return lr * min(1.0, (step + 1) / warmup_steps)


def make_optimizer(name: str, params, lr: float, weight_decay: float = 0.0, fused: bool = False):
    """'adam' (torch's Adam; a weight decay is added to the gradient, L2), 'adamw' (decoupled decay:
    w <- w - lr * lambda * w) or 'sgd' (no momentum). `fused`: torch's one-kernel Adam, the same
    elementwise algorithm (notebook 01's seed-batched MLPs use it)."""
    if name == "adam":
        if fused:
            return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=True)
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)
    raise ValueError(f"optimizer must be 'adam', 'adamw' or 'sgd', got {name!r}")


class PerRunAdam:
    """torch.optim.Adam (its defaults: betas 0.9, 0.999, eps 1e-8, no weight decay) on parameters
    with a leading run axis, each run with its own learning rate `lrs` (one per run).

    Adam is elementwise, so run k takes exactly the step it would take alone at lrs[k]; this is
    what lets one batched model try a whole learning-rate grid (tests compare it with torch's)."""

    def __init__(self, params, lrs, betas=(0.9, 0.999), eps: float = 1e-8):
        self.params = [p for p in params if p.requires_grad]
        self.lrs = torch.as_tensor(lrs, dtype=torch.float32)
        if self.lrs.ndim != 1 or not bool((self.lrs > 0).all()):
            raise ValueError(f"lrs must be a 1-d sequence of positive rates, got {lrs!r}")
        for p in self.params:
            if p.shape[0] != len(self.lrs):
                raise ValueError(
                    f"every parameter needs a leading axis of {len(self.lrs)} runs (one per "
                    f"learning rate), got shape {tuple(p.shape)}"
                )
        self.betas, self.eps, self.steps = betas, eps, 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.param_groups = []  # no shared rate to schedule: each run's is in `lrs`

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.steps += 1
        b1, b2 = self.betas
        correction1, correction2 = 1 - b1**self.steps, 1 - b2**self.steps
        for p, m, v in zip(self.params, self.m, self.v, strict=True):
            m.lerp_(p.grad, 1 - b1)  # m = b1 m + (1 - b1) g
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)  # v = b2 v + (1 - b2) g^2
            denom = (v.sqrt() / correction2**0.5).add_(self.eps)  # sqrt(v_hat) + eps
            step = (self.lrs / correction1).view(-1, *[1] * (p.ndim - 1))
            p.sub_(step * m / denom)  # p -= lr m_hat / (sqrt(v_hat) + eps)
