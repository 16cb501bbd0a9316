"""`python -m lnpaper bench`: wall-clock cost of the normalizers, of hand-written recurrent cell
loops (notebook 03) and of training runs stepped as one population (the language model vmapped
and fused, the fused LN-LSTM), reported as ratios and as GFLOP/s against a large matrix product.

Speed is measured here and never enforced by a test. Each time is the fastest of several rounds (see
`seconds_per_call`) and is divided by the time of copying the same tensor (`clone`), the floor for an
operation that must read and write every value once. The absolute times depend on the machine; the
ratios travel better.

Notebook 07 (claim P3) prints the same table from the same functions, timed by the recorded
experiment `norm_timing` (medians over rounds, at 1 and 2 threads). It compares LayerNorm and
RMSNorm three ways, every norm with its affine parameters (LayerNorm a gain and a bias, RMSNorm a
gain): as PyTorch ships them (on CPU, `F.layer_norm` is one fused kernel while `F.rms_norm` is
composed of separate ops), and twice on equal footing, both norms written the same way (one
function, RMSNorm being LayerNorm with mu = 0 and no bias): one torch op per step of the formula,
and the fewest passes over memory (one read per statistic, one pass that reads and writes, one for
the affine map).

The allocator is pinned (`pin_allocator`): glibc's default raises its trim threshold only to twice
the largest block it has seen freed, so the composed ops, which hold several full-size temporaries
at once, hand the memory back to the OS after every call and page-fault it in again on the next:
up to 6x slower, and erratic, on the 2-core machines this was measured on. `--no-pin` times
without it.
"""

import functools
import os
import time

import torch
import torch.nn.functional as F

from lnpaper.allocator import pin_allocator
from lnpaper.data import SyntheticLanguage
from lnpaper.models.cnn import SeedBatchedCNN, SmallCNN
from lnpaper.models.fused_transformer import FusedLanguageModels
from lnpaper.models.mlp import MLP, SeedBatchedMLP
from lnpaper.models.recurrent import (
    LayerNormLSTMCell,
    LSTMCell,
    SequenceClassifier,
    unroll,
)
from lnpaper.models.seed_batched_classifier import SeedBatchedClassifier
from lnpaper.models.transformer import TransformerConfig, TransformerLM, next_token_loss
from lnpaper.norms import LayerNorm, RMSNorm
from lnpaper.train import PerRunAdam, StackedModels

SHAPES = ((4096, 1024), (256, 4096))
RECURRENT_SHAPE = (32, 64, 128)  # batch, time steps, hidden units (= inputs)
EPS = 1e-5

# ---- P3's equal footing: both norms written the same way (notebook 07) -------------------------
#
# Each function is LayerNorm with center=True and RMSNorm with center=False: RMSNorm is LayerNorm
# with mu = 0, and nothing else differs. The comments count passes over the n values of a row block
# (R = read, W = write; a clone is R + W).


# Notebook 07 prints composed_norm and fewest_pass_norm: their lines stay within 88 columns.
def composed_norm(
    a: torch.Tensor,
    center: bool,
    gain: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = EPS,
) -> torch.Tensor:
    """One torch op per step of the formula: LayerNorm 5 R + 3 W, RMSNorm 3 R + 2 W;
    the gain g adds R + W to both, LayerNorm's bias b another R + W."""
    if center:
        a = a - a.mean(dim=-1, keepdim=True)  # a - mu                    R, R + W
    mean_square = a.pow(2).mean(dim=-1, keepdim=True)  # sigma^2 or RMS^2  R + W, R
    y = a * torch.rsqrt(mean_square + eps)  # divided by sqrt(. + eps)    R + W
    if gain is not None:
        y = y * gain  # g * .                                             R + W
    if bias is not None:
        y = y + bias  # + b                                               R + W
    return y


def fewest_pass_norm(
    a: torch.Tensor,
    center: bool,
    gain: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = EPS,
) -> torch.Tensor:
    """One read per statistic, then y = s * a + t in one pass: LayerNorm 3 R + W,
    RMSNorm 2 R + W; then g * y + b (LayerNorm) or g * y (RMSNorm) in one more pass,
    R + W.

    For timing only: LayerNorm's sigma^2 = E[a^2] - mu^2 is the one-pass variance that
    fails when the mean dwarfs the spread (notebook 02, F4); a fused kernel such as
    F.layer_norm gets both statistics from one read, accurately.
    """
    n = a.shape[-1]
    mean_square = torch.linalg.vector_norm(a, dim=-1, keepdim=True).square() / n  # R
    # R if center
    mu = a.mean(dim=-1, keepdim=True) if center else torch.zeros_like(mean_square)
    inv_scale = torch.rsqrt(mean_square - mu.square() + eps)  # 1 / sqrt(sigma^2 + eps)
    y = torch.addcmul(-mu * inv_scale, a, inv_scale)  # (a - mu) / scale  R + W
    if gain is None:
        return y if bias is None else y + bias
    if bias is None:
        return y * gain  # g * y                                          R + W
    return torch.addcmul(bias, y, gain)  # g * y + b                      R + W


FLOOR = "clone (memory floor)"
# (section, name): the table's rows, in order; the first row of every table is the floor.
ROWS = (
    ("as shipped", "F.layer_norm (fused)"),
    ("as shipped", "F.rms_norm (composed)"),
    ("as shipped", "lnpaper.LayerNorm"),
    ("as shipped", "lnpaper.RMSNorm"),
    ("one op per step of the formula", "layer norm, composed"),
    ("one op per step of the formula", "rms norm, composed"),
    ("fewest passes, one read per statistic", "layer norm, fewest passes"),
    ("fewest passes, one read per statistic", "rms norm, fewest passes"),
)
# RMSNorm's time over LayerNorm's, written each way.
PAIRS = {
    "as shipped": ("F.rms_norm (composed)", "F.layer_norm (fused)"),
    "one op per step": ("rms norm, composed", "layer norm, composed"),
    "fewest passes": ("rms norm, fewest passes", "layer norm, fewest passes"),
}


def seconds_per_round(
    functions: dict, rounds: int = 15, warmup: int = 10, block: float = 4e-3
) -> dict:
    """name -> the time of one call in each of `rounds` rounds that visit every function in turn.

    Taking turns exposes every function to the same disturbances. Each round times a block of
    calls lasting about `block` seconds, well above the timer's resolution. The warmup calls also
    let the heap grow to its working size.
    """
    calls = {}
    for name, fn in functions.items():
        for _ in range(warmup):
            fn()
        start = time.perf_counter()
        fn()
        calls[name] = max(1, round(block / max(time.perf_counter() - start, 1e-7)))
    times = {name: [] for name in functions}
    for _ in range(rounds):
        for name, fn in functions.items():
            start = time.perf_counter()
            for _ in range(calls[name]):
                fn()
            times[name].append((time.perf_counter() - start) / calls[name])
    return times


def seconds_per_call(
    functions: dict, rounds: int = 15, warmup: int = 10, block: float = 4e-3
) -> dict:
    """name -> the fastest time of one call over the rounds of `seconds_per_round`: other
    processes on the machine only ever add time, so the fastest round is the best estimate of the
    cost itself (what `python -m lnpaper bench` prints; the claim check uses medians)."""
    return {
        name: min(times)
        for name, times in seconds_per_round(functions, rounds, warmup, block).items()
    }


def affine_parameters(width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A gain g near 1 and a bias b near 0, both with gradients (a trained norm has both)."""
    generator = torch.Generator().manual_seed(1)
    gain = 1 + 0.1 * torch.randn(width, generator=generator)
    bias = 0.1 * torch.randn(width, generator=generator)
    return gain.requires_grad_(), bias.requires_grad_()


def candidates(width: int) -> dict:
    """name -> function of one (rows, width) tensor, for every row of the table and the floor.
    Every norm has its affine parameters: LayerNorm a gain and a bias, RMSNorm a gain."""
    gain, bias = affine_parameters(width)
    ours_ln, ours_rms = LayerNorm(width), RMSNorm(width)
    with torch.no_grad():
        ours_ln.weight.copy_(gain)
        ours_ln.bias.copy_(bias)
        ours_rms.weight.copy_(gain)
    return {
        FLOOR: lambda x: x.clone(),
        "F.layer_norm (fused)": lambda x: F.layer_norm(x, (width,), gain, bias, eps=EPS),
        "F.rms_norm (composed)": lambda x: F.rms_norm(x, (width,), gain, eps=EPS),
        "lnpaper.LayerNorm": ours_ln,
        "lnpaper.RMSNorm": ours_rms,
        "layer norm, composed": functools.partial(composed_norm, center=True, gain=gain, bias=bias),
        "rms norm, composed": functools.partial(composed_norm, center=False, gain=gain),
        "layer norm, fewest passes": functools.partial(
            fewest_pass_norm, center=True, gain=gain, bias=bias
        ),
        "rms norm, fewest passes": functools.partial(fewest_pass_norm, center=False, gain=gain),
    }


def forward_backward(op, x):
    def run():
        x.grad = None
        op(x).sum().backward()

    return run


def norm_times(shape, rounds: int = 15, warmup: int = 10) -> dict:
    """name -> (forward times, forward + backward times), one per round (`seconds_per_round`)."""
    torch.manual_seed(0)
    x = torch.randn(*shape)
    x_grad = x.clone().requires_grad_()
    ops = candidates(shape[-1])
    with torch.no_grad():
        forward = seconds_per_round(
            {name: lambda op=op: op(x) for name, op in ops.items()}, rounds, warmup
        )
    both = seconds_per_round(
        {name: forward_backward(op, x_grad) for name, op in ops.items()}, rounds, warmup
    )
    return {name: (forward[name], both[name]) for name in ops}


def ratios_to_floor(times: dict, summary=min) -> dict:
    """name -> (forward, forward + backward) time as a multiple of the clone's, each time the
    `summary` (min or statistics.median) of its rounds; the floor's own times in ms under the key
    "floor ms"."""
    floor_fwd, floor_both = (summary(t) for t in times[FLOOR])
    ratios = {
        name: (summary(fwd) / floor_fwd, summary(both) / floor_both)
        for name, (fwd, both) in times.items()
    }
    return {**ratios, "floor ms": (floor_fwd * 1e3, floor_both * 1e3)}


def format_norms(shape, ratios: dict) -> str:
    floor_fwd, floor_both = ratios["floor ms"]
    lines = [  # the clone's times on a line of their own, so that each fits 88 columns
        f"shape {shape} float32: time / time of clone",
        f"(clone: forward {floor_fwd:.2f} ms, fwd+bwd {floor_both:.2f} ms)",
        f"  {'':32s} {'forward':>8s} {'fwd+bwd':>8s}",
        f"  {FLOOR:32s} {1:8.2f} {1:8.2f}",
    ]
    section = None
    for row_section, name in ROWS:
        if row_section != section:
            section = row_section
            lines.append(f"  {section}:")
        fwd, both = ratios[name]
        lines.append(f"    {name:30s} {fwd:8.2f} {both:8.2f}")
    lines.append("  RMSNorm time / LayerNorm time:")
    for label, (rms, ln) in PAIRS.items():
        fwd, both = (ratios[rms][k] / ratios[ln][k] for k in (0, 1))
        lines.append(f"    {label:30s} {fwd:8.2f} {both:8.2f}")
    return "\n".join(lines)


def report(shapes=SHAPES) -> str:
    """Every shape's table, as `python -m lnpaper bench` prints it (without the header)."""
    return "\n\n".join(format_norms(shape, ratios_to_floor(norm_times(shape))) for shape in shapes)


def main(pin: bool = True) -> None:
    allocator = pin_allocator() if pin else "not pinned (--no-pin)"
    if not pin and "MALLOC_MMAP_THRESHOLD_" in os.environ:
        allocator += ", but MALLOC_MMAP_THRESHOLD_ is set in the environment"
    threads = torch.get_num_threads()
    print(f"torch {torch.__version__}, {threads} thread(s), allocator {allocator}", end="\n\n")
    print(report(), end="\n\n")
    print(format_recurrent(time_recurrent()), end="\n\n")
    print(format_populations(time_populations(), matmul_rate()))


def time_recurrent() -> dict:
    """A hand-written cell loop (notebook 03's cells, one Python step per time step) against
    torch.nn.LSTM's fused loop on the same sequences: name -> (forward, forward + backward) time as
    a multiple of nn.LSTM's."""
    torch.manual_seed(0)
    batch, steps, hidden = RECURRENT_SHAPE
    x = torch.randn(batch, steps, hidden)
    x_grad = x.clone().requires_grad_()
    fused = torch.nn.LSTM(hidden, hidden, batch_first=True)
    plain, normalized = LSTMCell(hidden, hidden), LayerNormLSTMCell(hidden, hidden)
    ops = {
        "torch.nn.LSTM": lambda x: fused(x)[0],
        "lnpaper LSTMCell loop": lambda x: unroll(plain, x)[0],
        "lnpaper LN-LSTM loop": lambda x: unroll(normalized, x)[0],
    }
    with torch.no_grad():
        forward = seconds_per_call(
            {name: lambda op=op: op(x) for name, op in ops.items()}, rounds=7
        )
    both = seconds_per_call(
        {name: forward_backward(op, x_grad) for name, op in ops.items()}, rounds=7
    )
    base = "torch.nn.LSTM"
    return {name: (forward[name] / forward[base], both[name] / both[base]) for name in ops}


def format_recurrent(ratios: dict) -> str:
    lines = [
        f"LSTM over (batch, T, H) = {RECURRENT_SHAPE}: time / time of torch.nn.LSTM",
        f"  {'':32s} {'forward':>8s} {'fwd+bwd':>8s}",
    ]
    lines += [f"  {name:32s} {fwd:8.2f} {both:8.2f}" for name, (fwd, both) in ratios.items()]
    return "\n".join(lines)


# ---- populations: S runs stepped as one batch against one run at a time ---------------------------

POPULATION = 10  # runs: notebook 06's ten seeds, or a 3 x 3 learning-rate grid plus one
LM_SHAPE = (16, 16)  # notebook 06's language model: batch, sequence length (6 blocks, d = 64)
LM_OPTIONS = {"n_heads": 2}  # and its two heads, as every experiment builds it
RNN_SHAPE = (64, 8, 64)  # notebook 03's digits read by rows: batch, time steps, hidden units
MLP_SHAPE = (4, (64, 256, 256, 10))  # notebook 01's M5 cell at batch 4: batch, layer sizes
CNN_SHAPE = (64, 12, (8, 16))  # notebook 04's coda at margin 2: batch, image side, channels
MATMUL_SIZE = 1024  # a float32 matrix product large enough to run at the core's full rate


def _flops(step) -> int:
    """Floating-point operations of one call of `step` (forward and backward), as torch counts them
    (matrix products; elementwise ops are not counted)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


def matmul_rate(size: int = MATMUL_SIZE, rounds: int = 7) -> float:
    """GFLOP/s of one size x size float32 matrix product at the current thread count: the rate
    the populations' GFLOP/s are read against."""
    generator = torch.Generator().manual_seed(0)
    a, b = (torch.randn(size, size, generator=generator) for _ in range(2))
    seconds = seconds_per_call({"matmul": lambda: a @ b}, rounds=rounds)["matmul"]
    return 2 * size**3 / seconds / 1e9


def _seeded(runs: int, build) -> list:
    """build() for seeds 0, 1, ..., runs - 1, each called after torch.manual_seed(seed)."""
    models = []
    for seed in range(runs):
        torch.manual_seed(seed)
        models.append(build())
    return models


def _language_models(runs: int):
    """`runs` of notebook 06's language model (seeds 0, 1, ...) and each run's batch, S x B x T+1."""
    batch, length = LM_SHAPE
    language = SyntheticLanguage()
    config = TransformerConfig(language.vocab_size, max_len=length, **LM_OPTIONS)
    models = _seeded(runs, lambda: TransformerLM(config))
    tokens = torch.stack([language.sample(batch, length + 1, seed=s) for s in range(runs)])
    return models, tokens


def _population_steps(runs: int, make_population):
    """A step of one language model trained alone (torch's Adam), and a step of `runs` of them
    as the population `make_population(models)` (torch's Adam on its stacked parameters), on the
    same batches."""
    models, tokens = _language_models(runs)
    alone, alone_opt = models[0], torch.optim.Adam(models[0].parameters(), lr=1e-3)
    stacked = make_population(models)
    stacked_opt = torch.optim.Adam(stacked.params.values(), lr=1e-3)

    def one():
        alone_opt.zero_grad(set_to_none=True)
        next_token_loss(alone, tokens[0]).backward()
        alone_opt.step()

    def population():
        stacked_opt.zero_grad(set_to_none=True)
        stacked.losses(tokens).sum().backward()
        stacked_opt.step()

    return one, population


# One language model alone, and `runs` of them stacked and vmapped (`StackedModels`), or fused
# (`FusedLanguageModels`: stacked weights through batched matrix products).
_lm_steps = functools.partial(_population_steps, make_population=StackedModels)
_fused_lm_steps = functools.partial(_population_steps, make_population=FusedLanguageModels)


def _classifier_steps(runs: int, models: list, population, batch: int, shape: tuple):
    """A step of `models[0]` alone (torch's Adam) on x[0], y[0], and of `population` (the `runs`
    models stacked, one learning rate each) on x, y: `batch` inputs of `shape` and labels of 10
    classes per run. The loss is the sum over runs of each run's mean cross-entropy, so each run
    gets its own gradient."""
    x = torch.randn(runs, batch, *shape, generator=torch.Generator().manual_seed(0))
    y = torch.randint(0, 10, (runs, batch), generator=torch.Generator().manual_seed(1))
    alone, alone_opt = models[0], torch.optim.Adam(models[0].parameters(), lr=1e-3)
    population_opt = PerRunAdam(population.parameters(), [1e-3] * runs)

    def one():
        alone_opt.zero_grad(set_to_none=True)
        F.cross_entropy(alone(x[0]), y[0]).backward()
        alone_opt.step()

    def together():
        population_opt.zero_grad()
        logits = population(x)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum")
        loss.div(y.shape[1]).backward()
        population_opt.step()

    return one, together


def _mlp_steps(runs: int):
    """Notebook 01's LayerNorm MLP at batch 4, alone and as `SeedBatchedMLP` (weights through bmm)."""
    batch, sizes = MLP_SHAPE
    models = _seeded(runs, lambda: MLP(sizes, norm="layernorm"))
    population = SeedBatchedMLP(sizes, norm="layernorm", seeds=range(runs))
    return _classifier_steps(runs, models, population, batch, (sizes[0],))


def _cnn_steps(runs: int):
    """Notebook 04's LayerNorm CNN, alone and as `SeedBatchedCNN` (one grouped convolution)."""
    batch, side, channels = CNN_SHAPE
    models = _seeded(runs, lambda: SmallCNN("layernorm", channels, side=side))
    return _classifier_steps(runs, models, SeedBatchedCNN(models), batch, (1, side, side))


def _rnn_steps(runs: int):
    """Notebook 03's LN-LSTM digit classifier, alone and as `SeedBatchedClassifier` (stacked
    weights through bmm)."""
    batch, length, hidden = RNN_SHAPE
    models = _seeded(runs, lambda: SequenceClassifier(LayerNormLSTMCell(8, hidden), 10))
    return _classifier_steps(runs, models, SeedBatchedClassifier(models), batch, (length, 8))


POPULATIONS = {
    "language model, vmap": _lm_steps,
    "language model, fused": _fused_lm_steps,
    "LN-LSTM classifier": _rnn_steps,
    "LN MLP at batch 4": _mlp_steps,
    "LN CNN": _cnn_steps,
}


def time_populations(runs: int = POPULATION, rounds: int = 5) -> dict:
    """name -> (ms per run-step alone, ms per run-step in a population of `runs`, GFLOP/s alone,
    GFLOP/s in the population): what stepping runs together buys. Both rates count the one-run
    step's matrix-product FLOPs (times `runs` for the population), the work every population does
    whatever its kernels add (vmap's batching rules, the fused attention's written-out products),
    so the two rates of a row, and the rows of one model, compare directly."""
    out = {}
    for name, make in POPULATIONS.items():
        one, population = make(runs)
        flops_one = _flops(one)
        seconds = seconds_per_call({"one": one, "population": population}, rounds=rounds)
        per_run = seconds["population"] / runs
        out[name] = (
            1e3 * seconds["one"],
            1e3 * per_run,
            flops_one / seconds["one"] / 1e9,
            flops_one / per_run / 1e9,
        )
    return out


def format_populations(table: dict, matmul: float, runs: int = POPULATION) -> str:
    """The table, each rate also as a fraction of `matmul` (GFLOP/s of a large float32 matrix
    product on this thread count), and the fused language model's time over the vmapped one's."""
    lines = [
        f"a training step (forward, backward, Adam): one run alone against {runs} runs stepped "
        f"as one population; a {MATMUL_SIZE} x {MATMUL_SIZE} float32 matmul: {matmul:.1f} GFLOP/s",
        f"  {'':22s} {'ms/run-step':>12s} {'in population':>14s} {'ratio':>6s} "
        f"{'GFLOP/s':>8s} {'in population':>14s} {'of matmul':>10s}",
    ]
    for name, (alone, together, rate_alone, rate_together) in table.items():
        lines.append(
            f"  {name:22s} {alone:12.2f} {together:14.2f} {together / alone:6.2f} "
            f"{rate_alone:8.2f} {rate_together:14.2f} {rate_together / matmul:10.0%}"
        )
    vmap, fused = table.get("language model, vmap"), table.get("language model, fused")
    if vmap and fused:
        lines.append(f"  language model, fused / vmap time per run-step: {fused[1] / vmap[1]:.2f}")
    return "\n".join(lines)
