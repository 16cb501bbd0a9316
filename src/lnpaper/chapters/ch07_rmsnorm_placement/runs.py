"""Experiments of notebook 07, RMSNorm and where the norm goes: claims P1-P5 and P2c.

- `rmsnorm_vs_layernorm` (P1): equal on centered rows; what a shared shift does to each.
- `rmsnorm_study` (P2, P4) is in notebook 06's analysis, where T6 reads it too: the Pre-LN language
  model of notebook 06 with LayerNorm, RMSNorm, pRMSNorm and DyT.
- `recentred_training` (P2c): the P2 model with every weight matrix initialized off-center.
- `memory_traffic` (P3): how many values each way of writing the two norms reads and writes, counted
  op by op.
- `norm_timing` (P3): the times of `lnpaper.bench`'s table, every round kept, at 1 and 2 threads;
  a machine's times, stored so the notebook prints what the verdict was decided from.
- `prms_estimate` (P4): how well the first 6.25% of the units estimate the RMS.
- `spike_run` (P5, and O1 in notebook 09): Pre-LN or Peri-LN at one learning rate, the global
  gradient norm logged at every step, its spikes counted (`lnpaper.stats.spike_steps`).

The studies that gather these runs (`placement_study` over `lm_training`, `spike_study` over
`spike_run`) and the summaries are in `analysis`.
"""

import math
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from lnpaper import bench, stats
from lnpaper.chapters.ch06_transformer.runs import (
    batches,
    build_models,
    held_out,
)
from lnpaper.companion.record import experiment
from lnpaper.data import SyntheticLanguage
from lnpaper.models.transformer import PRMS_FRACTION
from lnpaper.norms import LayerNorm, RMSNorm
from lnpaper.spread import mean_sd
from lnpaper.train import train_language_models

# ---- P1: RMSNorm is LayerNorm without the centering ---------------------------------------------


@dataclass
class RMSvsLNResult:
    width: int
    eps: float
    max_diff_centered: float  # max |RMSNorm(a - mu) - LayerNorm(a)|, float64
    max_diff_raw: float  # max |RMSNorm(a) - LayerNorm(a)| on the same rows, not centered
    offsets: list  # c in a -> a + c (the same c for every unit of a row)
    layernorm_shift_change: list  # per offset: max |LN(a + c) - LN(a)|
    rmsnorm_shift_change: list  # per offset: max |RMS(a + c) - RMS(a)|
    rmsnorm_output_sd: list  # per offset: mean over rows of the sd of RMS(a + c) across units
    layernorm_grad_along_ones: float  # max over rows |<1, dL/da>| / ||dL/da||, LayerNorm
    rmsnorm_grad_along_ones: float  # the same for RMSNorm


@experiment
def rmsnorm_vs_layernorm(
    *, width: int = 64, rows: int = 256, offsets=(0.1, 1.0, 10.0), eps: float = 1e-5, seed: int = 0
) -> RMSvsLNResult:
    """P1 (Zhang & Sennrich 2019): with mu = 0, RMS(a)^2 = sigma^2 and the two norms are
    one function. Rows start from Gaussian values with their own offsets (so LayerNorm has a mean
    to remove), float64, gains 1 and LayerNorm's bias 0, the same eps inside both square roots.

    Then the invariance RMSNorm gives up: a shift c shared by all units of a row (what re-centering
    the weight matrix does to the summed inputs, notebook 05) leaves LayerNorm's output unchanged
    and its gradient orthogonal to 1 (the direction of such shifts); RMSNorm's changes.
    """
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(rows, width, generator=generator, dtype=torch.float64)
    a = a + torch.randn(rows, 1, generator=generator, dtype=torch.float64)  # each row its own mean
    centered = a - a.mean(dim=-1, keepdim=True)
    layer_norm = LayerNorm(width, eps=eps).double()
    rms_norm = RMSNorm(width, eps=eps).double()
    with torch.no_grad():
        base_ln, base_rms = layer_norm(centered), rms_norm(centered)
        shifted = [(layer_norm(centered + c), rms_norm(centered + c)) for c in offsets]
        max_diff_raw = (rms_norm(a) - layer_norm(a)).abs().max().item()
        max_diff_centered = (rms_norm(centered) - layer_norm(a)).abs().max().item()
    upstream = torch.randn(rows, width, generator=generator, dtype=torch.float64)

    def grad_along_ones(norm) -> float:
        x = a.clone().requires_grad_()
        (norm(x) * upstream).sum().backward()
        along = x.grad.sum(dim=-1).abs() / (math.sqrt(width) * x.grad.norm(dim=-1))
        return along.max().item()  # |cos| between each row's gradient and 1

    return RMSvsLNResult(
        width=width,
        eps=eps,
        max_diff_centered=max_diff_centered,
        max_diff_raw=max_diff_raw,
        offsets=list(offsets),
        layernorm_shift_change=[(ln - base_ln).abs().max().item() for ln, _ in shifted],
        rmsnorm_shift_change=[(rms - base_rms).abs().max().item() for _, rms in shifted],
        rmsnorm_output_sd=[rms.std(dim=-1).mean().item() for _, rms in shifted],
        layernorm_grad_along_ones=grad_along_ones(layer_norm),
        rmsnorm_grad_along_ones=grad_along_ones(rms_norm),
    )


# ---- P3: memory traffic, counted -----------------------------------------------------------------


class TrafficCounter(TorchDispatchMode):
    """Counts, for every aten op that runs (forward and backward), the values it reads and writes.

    A view moves nothing and is skipped; an input is counted at most at the size of its storage, so a
    broadcast scalar counts once, not once per use. A memory-bound op costs about its traffic."""

    def __init__(self):
        super().__init__()
        self.ops, self.read, self.written = [], 0, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        returns = func._schema.returns
        if returns and returns[0].alias_info is not None and not returns[0].alias_info.is_write:
            return out  # a view: same memory, nothing moved
        self.ops.append(func.overloadpacket.__name__)
        for t in tree_leaves((args, kwargs)):
            if isinstance(t, torch.Tensor):
                self.read += min(t.numel(), t.untyped_storage().nbytes() // t.element_size())
        self.written += sum(t.numel() for t in tree_leaves(out) if isinstance(t, torch.Tensor))
        return out


@dataclass
class TrafficResult:
    shape: list
    forward: dict  # name -> values read + written per input value, forward only
    forward_backward: dict  # name -> the same for forward, .sum() and backward
    forward_ops: dict  # name -> the aten ops the forward pass runs, in order


@experiment
def memory_traffic(*, shape=(256, 1024)) -> TrafficResult:
    """P3: for every row of `lnpaper.bench`'s table, (values read + values written) / numel, counted
    by `TrafficCounter` over one call. A clone is 2 (read once, write once). Counts, unlike times,
    are the same on every machine and run: the stored, checked side of the speed comparison."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    numel = x.numel()
    forward, both, ops = {}, {}, {}
    for name, op in bench.candidates(shape[-1]).items():
        with torch.no_grad(), TrafficCounter() as counter:
            op(x)
        forward[name] = (counter.read + counter.written) / numel
        ops[name] = counter.ops
        x_grad = x.clone().requires_grad_()
        with TrafficCounter() as counter:
            op(x_grad).sum().backward()
        both[name] = (counter.read + counter.written) / numel
    return TrafficResult(shape=list(shape), forward=forward, forward_backward=both, forward_ops=ops)


@dataclass
class TimingResult:
    shapes: list
    threads: list
    rounds: int
    machine: str  # torch version, CPU capability, allocator pin
    times: dict  # "4096x1024, 1 thread(s)" -> name -> {"forward": [s per call, one per round],
    #              "forward_backward": [...]}


def timing_setting(shape, threads: int) -> str:
    return f"{shape[0]}x{shape[1]}, {threads} thread(s)"


@experiment
def norm_timing(
    *, shapes=bench.SHAPES, threads=(1, 2), rounds: int = 11, warmup: int = 3
) -> TimingResult:
    """P3: every version of `lnpaper.bench`'s table, forward and forward + backward, timed in
    `rounds` rounds that visit every version in turn (`bench.seconds_per_round`), on each shape
    with 1 and with 2 threads, the allocator pinned (`bench.pin_allocator`). Wall-clock times:
    another run, let alone another machine, gives other numbers; the claim grades medians of
    per-round ratios with a margin, and calls a comparison undecided where settings disagree."""
    allocator = bench.pin_allocator()
    before = torch.get_num_threads()
    times = {}
    try:
        for count in threads:
            torch.set_num_threads(int(count))
            for shape in shapes:
                measured = bench.norm_times(tuple(shape), rounds, warmup)
                times[timing_setting(shape, count)] = {
                    name: {"forward": fwd, "forward_backward": both}
                    for name, (fwd, both) in measured.items()
                }
    finally:
        torch.set_num_threads(before)
    machine = f"torch {torch.__version__}, {torch.backends.cpu.get_cpu_capability()}, {allocator}"
    return TimingResult(
        shapes=[list(s) for s in shapes], threads=[int(t) for t in threads], rounds=rounds,
        machine=machine, times=times,
    )  # fmt: skip


# ---- P4: how good is the partial estimate? ------------------------------------------------------


@dataclass
class PartialRMSResult:
    fraction: float
    widths: list  # n
    units_used: list  # k = floor(p n), as pRMSNorm counts them by default (p n is whole here)
    samples: int
    ratio_mean: list  # per width: mean of RMS_k(a) / RMS_n(a) over Gaussian rows
    ratio_sd: list  # per width: its sample sd
    ratio_mean_theory: list  # 1 - (1/k - 1/n) / 4, the second-order (delta-method) mean
    ratio_sd_theory: list  # sqrt((1/k - 1/n) / 2), the first-order sd
    histogram_edges: list  # shared bin edges for the ratio
    histogram_counts: list  # per width: counts in each bin


@experiment
def prms_estimate(
    *,
    widths=(64, 256, 1024, 4096),
    fraction: float = PRMS_FRACTION,
    samples: int = 20_000,
    seed: int = 0,
) -> PartialRMSResult:
    """P4: pRMSNorm (Zhang & Sennrich 2019) divides by the RMS of the first k = floor(p n)
    units instead of all n (at the default widths p n is whole, so rounding up gives the same k).
    For rows of independent N(0, 1) values, u = RMS_k^2 and v = RMS_n^2 have Var u = 2/k,
    Var v = Cov(u, v) = 2/n (the k units are part of the n), so the delta method gives
    RMS_k / RMS_n = sqrt(u / v) a mean of about 1 - (1/k - 1/n)/4 and an sd of sqrt((1/k - 1/n)/2)."""
    generator = torch.Generator().manual_seed(seed)
    edges = torch.linspace(0.0, 2.5, 51, dtype=torch.float64)
    result = PartialRMSResult(
        fraction=fraction, widths=list(widths), units_used=[], samples=samples, ratio_mean=[],
        ratio_sd=[], ratio_mean_theory=[], ratio_sd_theory=[],
        histogram_edges=edges.tolist(), histogram_counts=[],
    )  # fmt: skip
    for n in widths:
        k = RMSNorm(n, partial=fraction).n_stat  # the count the module itself uses
        ratios = []
        for _ in range(0, samples, 1000):  # 1000 rows at a time keeps the memory small
            a = torch.randn(1000, n, generator=generator, dtype=torch.float64)
            rms_k = a[:, :k].pow(2).mean(dim=-1).sqrt()  # pRMSNorm's statistic
            rms_n = a.pow(2).mean(dim=-1).sqrt()  # RMSNorm's
            ratios.append(rms_k / rms_n)
        ratio = torch.cat(ratios)[:samples]
        mean, sd = mean_sd(ratio.tolist())
        result.units_used.append(k)
        result.ratio_mean.append(mean)
        result.ratio_sd.append(sd)
        result.ratio_mean_theory.append(1 - (1 / k - 1 / n) / 4)
        result.ratio_sd_theory.append(math.sqrt((1 / k - 1 / n) / 2))
        counts = torch.histogram(ratio.clamp(0, 2.5 - 1e-12), bins=edges).hist
        result.histogram_counts.append([int(c) for c in counts.tolist()])
    return result


# ---- P5: where the norm goes ----------------------------------------------------------------------


@dataclass
class SpikeRun:
    placement: str
    lr: float
    seeds: list
    steps: int
    grad_norm: list  # [seed][step]: the global gradient norm before each step
    spikes: list  # [seed]: the steps that are spikes (lnpaper.stats.spike_steps)
    train_loss: list  # [seed][k], every 10 steps
    final_loss: list
    diverged_at: list


@experiment
def spike_run(
    *,
    placement: str = "pre",
    lr: float = 1e-2,
    seeds=tuple(range(6)),
    steps: int = 100,
    n_layers: int = 6,
    d_model: int = 64,
    n_heads: int = 2,
    batch_size: int = 16,
    length: int = 16,
) -> SpikeRun:
    """P5 and O1: notebook 06's six-block LayerNorm model with the norm where `placement` puts it
    (Pre-LN, Peri-LN, OLMo 2's reordered), Adam at `lr` without warmup, every seed's model trained
    at once (`lnpaper.train.population`; each seed's initial weights and sequences are `lm_training`'s);
    logged at every step, each seed's global gradient norm sqrt(sum over its parameters of the
    squared gradient), and its spikes (`lnpaper.stats.spike_steps`)."""
    options = dict(d_model=d_model, n_layers=n_layers, n_heads=n_heads, placement=placement)
    return train_for_spikes(options, lr=lr, seeds=seeds, steps=steps, batch_size=batch_size,
                            length=length)  # fmt: skip


def train_for_spikes(options: dict, *, lr, seeds, steps, batch_size, length) -> SpikeRun:
    """spike_run's body for any TransformerLM `options` (notebook 09's OLMo 2 arms use it too)."""
    seeds = [int(s) for s in seeds]
    runs, _ = train_language_models(
        build_models(seeds, length=length, **options),
        batches(seeds, steps=steps, batch_size=batch_size, length=length),
        held_out(length),
        steps=steps,
        lr=lr,
        log_grad_norm=True,
    )
    norms = runs.logs["grad_norm"]
    return SpikeRun(
        placement=options["placement"],
        lr=lr,
        seeds=seeds,
        steps=steps,
        grad_norm=norms,
        spikes=[stats.spike_steps(row) for row in norms],
        train_loss=runs.train_loss,
        final_loss=runs.final_loss,
        diverged_at=runs.diverged_at,
    )


# ---- P2c: RMSNorm and LayerNorm from weights initialized off-center ------------------------------


@dataclass
class RecentredRun:
    norm: str
    center: float  # added to every entry of every Linear weight matrix after its initialization
    lr: float
    seeds: list
    steps: int
    initial_loss: list  # held-out, per seed
    final_loss: list  # held-out, per seed; None if the run diverged
    diverged_at: list
    train_loss: list  # [seed][k], every 10 steps
    levels: dict  # the language's loss levels (uniform, unigram, bigram, rate), nats


@experiment
def recentred_training(
    *, norm: str = "layernorm", center: float = 0.2, lr: float = 3e-3, seeds=tuple(range(10)),
    steps: int = 200,
) -> RecentredRun:  # fmt: skip
    """P2c: P2's model (notebook 06's six-block Pre-LN language model, d = 64, Adam at `lr`, no
    warmup, the same seeds and sequences as `lm_training`) with `norm` in every slot and every
    Linear weight matrix (attention, feed-forward, head) shifted by `center` after its usual
    initialization, as Zhang & Sennrich shift theirs to 0.2 in their repository's stress test.
    Each such shift adds one number to every unit a matrix writes, the change LayerNorm removes
    and RMSNorm does not."""
    seeds = [int(s) for s in seeds]
    models = build_models(seeds, length=16, placement="pre", norm=norm, n_layers=6, d_model=64,
                          n_heads=2)  # fmt: skip
    with torch.no_grad():
        for model in models:
            for module in model.modules():
                if isinstance(module, torch.nn.Linear):
                    module.weight.add_(center)
    runs, _ = train_language_models(
        models, batches(seeds, steps=steps, batch_size=16, length=16), held_out(16),
        steps=steps, lr=lr, log_every=10,
    )  # fmt: skip
    return RecentredRun(
        norm=norm, center=center, lr=lr, seeds=seeds, steps=steps,
        initial_loss=runs.initial_loss, final_loss=runs.final_loss,
        diverged_at=runs.diverged_at, train_loss=runs.train_loss,
        levels=vars(SyntheticLanguage().levels()),
    )  # fmt: skip
