"""`python -m lnpaper bench`: wall-clock cost of the normalizers and of hand-written recurrent cell
loops (notebook 03), reported as ratios.

Speed is measured here and never enforced by a test. Each time is the median of several repeats and
is divided by the time of copying the same tensor (`clone`), the floor for an operation that must
read and write every value once. The absolute times depend on the machine; the ratios travel better.

`make bench` pins glibc's allocator (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_): without it,
freed temporaries of the composed ops go back to the OS and come back as fresh pages, which made
them up to 4x slower on the 2-core machines this was measured on.
"""

import os
import statistics
import time

import torch
import torch.nn.functional as F

from lnpaper.models.recurrent import LayerNormLSTMCell, LSTMCell, unroll
from lnpaper.norms import LayerNorm, RMSNorm

SHAPES = ((4096, 1024), (256, 4096))
RECURRENT_SHAPE = (32, 64, 128)  # batch, time steps, hidden units (= inputs)


def median_seconds(fn, repeats: int = 15, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def candidates(width: int) -> dict:
    ours_ln, ours_rms = LayerNorm(width), RMSNorm(width)
    return {
        "clone (memory floor)": lambda x: x.clone(),
        "F.layer_norm (fused)": lambda x: F.layer_norm(x, (width,)),
        "lnpaper.LayerNorm": ours_ln,
        "F.rms_norm": lambda x: F.rms_norm(x, (width,)),
        "lnpaper.RMSNorm": ours_rms,
    }


def forward_backward(op, x):
    def run():
        x.grad = None
        op(x).sum().backward()

    return run


def main() -> None:
    torch.manual_seed(0)
    allocator = os.environ.get("MALLOC_MMAP_THRESHOLD_", "unset")
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
        f"MALLOC_MMAP_THRESHOLD_={allocator}"
    )
    for shape in SHAPES:
        x = torch.randn(*shape)
        x_grad = x.clone().requires_grad_()
        ops = candidates(shape[-1])
        with torch.no_grad():
            forward = {name: median_seconds(lambda op=op, x=x: op(x)) for name, op in ops.items()}
        both = {name: median_seconds(forward_backward(op, x_grad)) for name, op in ops.items()}
        floor_fwd, floor_both = forward["clone (memory floor)"], both["clone (memory floor)"]
        print(
            f"\nshape {shape} float32: time / time of clone (forward clone "
            f"{floor_fwd * 1e3:.2f} ms)"
        )
        print(f"  {'':24s} {'forward':>9s} {'fwd+bwd':>9s}")
        for name in ops:
            print(f"  {name:24s} {forward[name] / floor_fwd:9.2f} {both[name] / floor_both:9.2f}")
    recurrent_bench()


def recurrent_bench() -> None:
    """A hand-written cell loop (notebook 03's cells, one Python step per time step) against
    torch.nn.LSTM's fused loop, on the same sequences: time / time of nn.LSTM."""
    batch, steps, hidden = RECURRENT_SHAPE
    x = torch.randn(batch, steps, hidden)
    fused = torch.nn.LSTM(hidden, hidden, batch_first=True)
    plain, normalized = LSTMCell(hidden, hidden), LayerNormLSTMCell(hidden, hidden)
    ops = {
        "torch.nn.LSTM": lambda x: fused(x)[0],
        "lnpaper LSTMCell loop": lambda x: unroll(plain, x)[0],
        "lnpaper LN-LSTM loop": lambda x: unroll(normalized, x)[0],
    }
    x_grad = x.clone().requires_grad_()
    with torch.no_grad():
        forward = {name: median_seconds(lambda op=op: op(x), repeats=7) for name, op in ops.items()}
    both = {
        name: median_seconds(forward_backward(op, x_grad), repeats=7) for name, op in ops.items()
    }
    floor_fwd, floor_both = forward["torch.nn.LSTM"], both["torch.nn.LSTM"]
    print(
        f"\nLSTM over (batch, T, H) = {RECURRENT_SHAPE}: time / time of torch.nn.LSTM (forward "
        f"{floor_fwd * 1e3:.1f} ms)"
    )
    print(f"  {'':24s} {'forward':>9s} {'fwd+bwd':>9s}")
    for name in ops:
        print(f"  {name:24s} {forward[name] / floor_fwd:9.2f} {both[name] / floor_both:9.2f}")
