"""The check's floating-point work: each record entry's FLOPs, counted once, for the report's rate.

Counting runs an entry under `Counter`, a dispatch mode that applies torch's FLOP formulas
(`torch.utils.flop_counter.flop_registry`) to every op; it costs a multiple of the entry's own
time (Python work on every op), so the check cannot count as it goes; torch's own
`FlopCounterMode` also tracks modules with backward hooks, which `autograd.grad` refuses.
`python -m lnpaper work` counts every entry once, on `reproduce`'s workers
(`lnpaper.count_work`), and writes {key: {"code": fingerprint, "flops": n}}; the reproduction
report divides the counts of the entries whose code is unchanged by its own CPU time. torch counts
matrix products and convolutions (`aten.mm`, `bmm`, `baddbmm`, `addmm`, convolutions and their
backwards, attention kernels), two FLOPs a multiply-add; elementwise work, norms and the optimizer
are not counted. A grouped convolution's backward is counted as if ungrouped (torch's formula
ignores its groups): `_counted` bounds it by its forward.
"""

import collections
import json
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from lnpaper import bench
from lnpaper.bench import MATMUL_SIZE
from lnpaper.companion import record


class Counter(TorchDispatchMode):
    """FLOPs of every op run inside it, by op, as torch's `FlopCounterMode` counts them, without
    its module tracking."""

    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func._overloadpacket
        if packet in flop_registry:
            self.counts[packet] += flop_registry[packet](*args, **kwargs, out_val=out)
        return out

    def total(self) -> int:
        return _counted(self.counts)


def _counted(counts: dict) -> int:
    """FLOPs of one counter's {op: n}. torch counts a convolution's backward over the full channel
    product, ignoring groups (the seed-batched CNN is one grouped convolution per layer), so the
    backward is read as at most twice the forward: a gradient for the input and one for the
    weights, each the forward's size (the first layer has no input gradient, so the bound is
    2% above the CNN's true count)."""
    forward = sum(n for op, n in counts.items() if str(op) == "aten.convolution")
    backward = sum(n for op, n in counts.items() if str(op) == "aten.convolution_backward")
    rest = sum(counts.values()) - forward - backward
    return rest + forward + min(backward, 2 * forward)


def matmul_rate() -> float:
    """GFLOP/s of `bench.matmul_rate`'s float32 product on `record.THREADS` threads."""
    threads = torch.get_num_threads()
    torch.set_num_threads(record.THREADS)
    try:
        return bench.matmul_rate()
    finally:
        torch.set_num_threads(threads)


def report_lines(entries: list[dict], counts_file: Path, cpu_seconds: float, minutes: float,
                 workers: int) -> list[str]:  # fmt: skip
    """The report's lines on the check's work: the counted FLOPs of `entries` whose code matches
    the counts in `counts_file`, over the CPU seconds the check spent on them, against one
    core's matmul rate measured now."""
    if not counts_file.exists():
        return [f"- floating-point work: not counted (no {counts_file}: `python -m lnpaper work`)"]
    counts = json.loads(counts_file.read_text())
    matched = [e for e in entries if counts.get(e["key"], {}).get("code") == e["code"]]
    if not matched:
        return [f"- floating-point work: {counts_file} counts none of these entries' code"]
    flops = sum(counts[e["key"]]["flops"] for e in matched)
    share = sum(e["made"]["seconds"] for e in matched) / sum(e["made"]["seconds"] for e in entries)
    rate = flops / cpu_seconds / 1e9 if cpu_seconds else float("nan")
    matmul = matmul_rate()
    return [
        f"- floating-point work: {flops / 1e12:.1f} TFLOP in matrix products and convolutions, "
        f"counted for {len(matched)} of {len(entries)} entries ({share:.0%} of the record's "
        "seconds; elementwise work, norms and optimizers are not counted)",
        f"- rate: {rate:.1f} GFLOP/s per worker ({flops / 1e9 / (60 * minutes):.1f} for the "
        f"{workers} together over {minutes:.1f} min), against {matmul:.0f} GFLOP/s for a "
        f"{MATMUL_SIZE} x {MATMUL_SIZE} float32 matmul on one core now: {rate / matmul:.0%}",
    ]
