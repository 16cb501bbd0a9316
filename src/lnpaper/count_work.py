"""`python -m lnpaper work`: every record entry computed once under torch's FLOP counter, on
`lnpaper.recompute`'s workers; `lnpaper.companion.work` says what is counted and reads the counts."""

import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from lnpaper import recompute
from lnpaper.companion import work


def _count_entry(name: str, arguments: dict) -> tuple[int | None, float, str]:
    """One entry computed under the counter in a worker: its FLOPs (None if it could not be
    counted), seconds, and why not."""
    start = time.perf_counter()
    try:
        with work.Counter() as counter:
            recompute.task_function(name)(**arguments)
    except Exception as error:  # an op the counter cannot run through: the entry is left out
        return None, time.perf_counter() - start, f"{type(error).__name__}: {error}"
    return counter.total(), time.perf_counter() - start, ""


def count(entries: list[dict], workers: int, scratch: Path, out: Path) -> dict:
    """{key: {"code", "flops"}} for `entries`, computed into `scratch` on `workers` processes and
    written to `out` after each entry, so an interrupted count keeps what it counted. An entry
    the counter cannot run is reported and left out."""
    counts = json.loads(out.read_text()) if out.exists() else {}
    todo = [e for e in entries if counts.get(e["key"], {}).get("code") != e["code"]]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=recompute.worker_init, initargs=(str(scratch),)
    ) as pool:
        futures = {
            pool.submit(_count_entry, e["experiment"], e["arguments"]): e
            for e in sorted(todo, key=lambda e: -e["made"]["seconds"])
        }
        for done, future in enumerate(as_completed(futures), 1):
            entry = futures[future]
            flops, seconds, problem = future.result()
            label = f"work: {done}/{len(todo)} {entry['experiment']}"
            if flops is None:
                print(f"{label}: not counted ({problem})", flush=True)
                continue
            counts[entry["key"]] = {"code": entry["code"], "flops": flops}
            out.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n")
            print(f"{label}: {flops / 1e12:.3f} TFLOP ({seconds:.0f} s counted)", flush=True)
    return counts
