"""`python -m lnpaper work`: every record entry computed once under torch's FLOP counter, on
`reproduce`'s workers; `lnpaper.companion.work` says what is counted and reads the counts."""

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from lnpaper import reproduce
from lnpaper.companion import work


def _count_entry(name: str, arguments: dict) -> tuple[int, float]:
    """One entry computed under the counter in a worker: its FLOPs and seconds."""
    from torch.utils.flop_counter import FlopCounterMode

    start = time.perf_counter()
    with FlopCounterMode(display=False) as counter:
        reproduce._function(name)(**arguments)
    return work._counted(counter.get_flop_counts().get("Global", {})), time.perf_counter() - start


def count(entries: list[dict], workers: int, scratch: Path) -> dict:
    """{key: {"code", "flops"}} for `entries`, computed into `scratch` on `workers` processes."""
    out = {}
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=reproduce._worker_init, initargs=(str(scratch),)
    ) as pool:
        futures = {
            pool.submit(_count_entry, e["experiment"], e["arguments"]): e
            for e in sorted(entries, key=lambda e: -e["made"]["seconds"])
        }
        for done, future in enumerate(as_completed(futures), 1):
            entry = futures[future]
            flops, seconds = future.result()
            out[entry["key"]] = {"code": entry["code"], "flops": flops}
            print(f"work: {done}/{len(entries)} {entry['experiment']}: {flops / 1e12:.3f} TFLOP "
                  f"({seconds:.0f} s counted)", flush=True)  # fmt: skip
    return dict(sorted(out.items()))
