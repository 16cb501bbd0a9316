"""Recompute record entries in worker processes, for `python -m lnpaper record`, `reproduce` and
`work`.

Each worker computes in fill mode, each experiment on `record.THREADS` threads, so the record is the
same whatever the number of workers. Interrupted (Ctrl-C, SIGTERM, a failed experiment, a parent
gone), the workers stop at once and remove what they were writing: the record then holds each
entry's old version or its new one.
"""

import contextlib
import importlib
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

from lnpaper import book
from lnpaper.companion import entries, record


def worker_init(directory: str) -> None:
    """A worker computes in fill mode into `directory`. It leaves Ctrl-C to its parent, which stops
    it; it stops at once when told to (SIGTERM) or when its parent is gone, removing a half-written
    entry, so that no worker outlives a `record` that was interrupted or killed."""
    record.configure(record.settings_for("fill", Path(directory)))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: _stop_worker(directory))
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.1)
        _stop_worker(directory)

    threading.Thread(target=watch, daemon=True, name="lnpaper-parent-watch").start()


def _stop_worker(directory: str) -> None:
    entries.stop_writing(Path(directory))  # no entry of this process half written, none started
    os._exit(1)


def _compute(name: str, arguments: dict, redo: frozenset = frozenset()) -> tuple[float, list]:
    """Compute one task (an entry, or an analysis and the runs it reads that the record lacks); the
    keys in `redo` are computed again although the record holds them. Its seconds, and the entries
    it could not write."""
    start = time.perf_counter()
    with record.redoing(redo) as unwritten:
        task_function(name)(**arguments)
    return time.perf_counter() - start, list(unwritten)


def task_function(name: str):
    """The experiment `name`, or for "module:function" an analysis (which records the runs it
    reads when the record lacks them) or an experiment outside the book."""
    if ":" in name:
        module, function = name.split(":")
        return getattr(importlib.import_module(module), function)
    return book.experiments()[name]


def _progress(done: int, total: int, label: str, seconds: float, started: float) -> None:
    width = 30
    filled = width * done // total
    elapsed = time.perf_counter() - started
    print(
        f"[{'#' * filled}{'.' * (width - filled)}] {done:3d}/{total} {elapsed / 60:5.1f} min  "
        f"{label} ({seconds:.1f} s)",
        file=sys.stderr,
        flush=True,
    )


def recompute(
    tasks: list[dict],
    directory: Path,
    workers: int,
    redo: set[str] = frozenset(),
    then: list[dict] = (),
) -> list[str]:
    """Compute `tasks` (an experiment's name or an analysis's "module:function", and arguments)
    into `directory` in fill mode on `workers` processes, the longest first (by their recorded
    seconds; a task never recorded, first); then the tasks of `then`, once every one of `tasks`
    is done (the analyses that read what `tasks` records). The keys in `redo` are computed again
    although the record holds them, each new entry replacing the old one when complete, and each
    once: a task that reaches one already redone reads it. Interrupted, it stops its workers at
    once (see the module docstring). Returns the entries that could not be written."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    pending, later = _longest_first(tasks), _longest_first(then)
    total = len(pending) + len(later)
    done_keys: set[str] = set()
    unwritten: list[str] = []
    started = time.perf_counter()
    # spawn, not fork: a forked torch inherits the parent's thread pools
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=worker_init, initargs=(str(directory),)
    )
    with _sigterm_raises():
        try:
            running = {}
            while pending or running or later:
                if not pending and not running:
                    pending, later = later, []
                for task in pending[: workers - len(running)]:
                    pending.remove(task)
                    left = frozenset(redo) - done_keys
                    future = pool.submit(_compute, task["experiment"], task["arguments"], left)
                    running[future] = task
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    task = running.pop(future)
                    seconds, failed = future.result()
                    unwritten += failed
                    done_keys.add(task["key"])
                    label = task.get("label") or f"{task['experiment']}-{task['key']}"
                    done = total - len(pending) - len(running) - len(later)
                    _progress(done, total, label, seconds, started)
        except BaseException:
            _stop_pool(pool, Path(directory))
            raise
        pool.shutdown()
    return unwritten


def _longest_first(tasks) -> list[dict]:
    return sorted(tasks, key=lambda task: -task.get("made", {}).get("seconds", math.inf))


@contextlib.contextmanager
def _sigterm_raises():
    """SIGTERM raises SystemExit in the main thread, as Ctrl-C raises KeyboardInterrupt, so that
    `recompute` can stop its workers before it goes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _stop_pool(pool: ProcessPoolExecutor, directory: Path) -> None:
    """Stop every worker now (a running experiment is not waited for) and remove what one was
    writing."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()  # the worker removes its partial entry and exits
    deadline = time.monotonic() + 5
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5)
    for process in processes:
        entries.remove_partial(directory, process.pid)
    pool.shutdown(wait=False, cancel_futures=True)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


@contextlib.contextmanager
def workers_on_path(aten: str | None):
    """ATEN_CPU_CAPABILITY=aten (None: as it is) for the workers spawned inside the block: each
    imports torch after it is set, and so computes on that path. This process's environment is
    as it was once the block ends."""
    before = os.environ.get("ATEN_CPU_CAPABILITY")
    if aten is not None:
        os.environ["ATEN_CPU_CAPABILITY"] = aten
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ATEN_CPU_CAPABILITY", None)
        else:
            os.environ["ATEN_CPU_CAPABILITY"] = before
