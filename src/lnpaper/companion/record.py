"""The record: every experiment's result, committed in `results/`, is what notebooks, figures and
CLAIMS.md read.

Training on a CPU is bitwise repeatable on one machine only: another CPU (AVX2 against AVX-512), or
`ATEN_CPU_CAPABILITY` / `MKL_CBWR`, changes the last bits, and chaotic training amplifies them into
other losses. So results are computed once, by `python -m lnpaper record`, and stored as JSON in
`results/NAME-KEY.json`; every reader then prints exactly the recorded numbers, on any machine.
`python -m lnpaper reproduce` recomputes all of it and compares (`lnpaper.reproduce`).

The key is a hash of the experiment's name and its arguments in a canonical form (sorted keys, exact
floats, tuples and arrays as lists). Each entry also says how it was made: versions, the CPU
capability torch used and the CPU's model name, threads, date and wall seconds; and which
experiments it called in turn, so that a recompute can run those first; and a fingerprint of its
experiment's code (`lnpaper.companion.fingerprint`), so that `python -m lnpaper stale` lists in
seconds the entries whose code changed since they were recorded.

An entry is written whole or not at all: into a temporary file beside it, renamed over the old one
once complete, so an interruption or a full disk leaves the old entry (or the new one), never
neither. An entry is checked when it is read, down to the shape of its result (the fields and
types of the experiment's result dataclass); one that fails is named in a warning and recomputed.
Results are standard JSON: a NaN or an infinity is written as {"__float__": "NaN"} (or
"Infinity", "-Infinity"), and the bare `NaN` of older entries still reads.

Modes (`LNPAPER_RECORD`, or `configure`):
- `on` (default): read the record. A call it lacks (a reader's own argument) is computed here, live,
  in memory, never written, and says so once for all a notebook cell (or a study, or a top-level
  call) computes: what it computes, about how long it will take (the nearest recorded call, or a
  study's default call, scaled by the counts that differ), and at the end how long it took
  (`lnpaper.progress`).
- `strict`: read the record; a call missing from it is an error naming it and its arguments, never
  a silent recompute (`make test`, nbval, `make figures` and the reproduction check's comparison).
- `off`: a live run. Every experiment is computed on this machine, kept in memory for this process,
  and nothing is written. `lnpaper.setup(recompute=True)` does the same from a notebook.
- `fill`: read the record, and compute and write what is missing (`make notebooks`, `record`).
`LNPAPER_RECORD_DIR` moves the record (set but empty counts as unset).
"""

import contextlib
import dataclasses
import datetime
import fcntl
import functools
import hashlib
import importlib.metadata
import inspect
import json
import math
import os
import platform
import re
import stat
import tempfile
import threading
import time
import types
import typing
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from lnpaper import progress
from lnpaper.companion.fingerprint import code_fingerprint

# Every experiment runs on this many threads, and so does a notebook (`lnpaper.setup`): 1 and 2
# threads sum floats in different orders and change the last bits of a training run.
THREADS = 1

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/lnpaper
REPO_RESULTS = PACKAGE_DIR.parents[1] / "results"
MODES = ("on", "strict", "off", "fill")


class RecordMissing(LookupError):
    """An experiment call that the record does not hold, in a mode that may not compute it."""


@dataclasses.dataclass(frozen=True)
class Settings:
    read: bool  # use recorded entries
    # what a call not in the record does: "error", "live" (computed in memory, announced),
    # "compute" (in memory: a live run) or "write"
    missing: str
    directory: Path
    mode: str  # the name a reader sees in the setup line


_override: Settings | None = None
_memory: dict[str, dict] = {}  # key -> entry computed in this process and not written
_calls_stack: list[list] = []  # the experiment calls made by each computation in progress
_live_calls: list[str] = []  # the live computations in progress: only the outermost is announced
_planning = False  # reading a study's default call for its estimate: nothing may be computed
# Keys that fill mode computes again although the record holds them (`python -m lnpaper record`
# redoing entries); each leaves the set once its new entry is written.
_redo: set[str] = set()
_unwritten: list[str] = []  # entries computed in fill mode that could not be written, and why
_writing = threading.RLock()  # held while a temporary file of this process exists


def record_dir() -> Path:
    return Path(os.environ.get("LNPAPER_RECORD_DIR") or REPO_RESULTS)


def settings_for(mode: str, directory: Path | None = None) -> Settings:
    if mode not in MODES:
        raise ValueError(f"LNPAPER_RECORD must be one of {', '.join(MODES)}, got {mode!r}")
    read, missing = {
        "on": (True, "live"),
        "strict": (True, "error"),
        "off": (False, "compute"),
        "fill": (True, "write"),
    }[mode]
    return Settings(read, missing, Path(directory) if directory else record_dir(), mode)


def current() -> Settings:
    if _override is not None:
        return _override
    return settings_for(os.environ.get("LNPAPER_RECORD", "on").strip().lower() or "on")


def configure(settings: Settings | str | None) -> None:
    """Set the mode for this process (a Settings, a mode name, or None to go back to the
    environment's). Results kept in memory by a live run are forgotten."""
    global _override
    _override = settings_for(settings) if isinstance(settings, str) else settings
    _memory.clear()


@contextlib.contextmanager
def using(settings: Settings | str) -> Iterator[Settings]:
    """`configure` for the length of a `with` block."""
    before, memory = _override, dict(_memory)
    configure(settings)
    try:
        yield current()
    finally:
        configure(before)
        _memory.update(memory)


# ---- canonical arguments and plain results ------------------------------------------------------


def canonical(value):
    """Arguments as JSON values that mean the same thing everywhere: tuples, ranges and arrays
    become lists, numpy scalars plain numbers, floats stay exact (JSON writes their shortest
    round-trip form). Anything else is refused rather than turned into a `repr`."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"argument dicts need string keys, got {list(value)!r}")
        return {k: canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple | range):
        return [canonical(v) for v in value]
    if isinstance(value, np.ndarray):
        return canonical(value.tolist())
    if isinstance(value, np.generic):
        return canonical(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"arguments must be finite numbers, got {value!r}")
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    raise TypeError(
        f"experiment arguments are numbers, strings, lists and dicts, got {type(value).__name__}"
    )


def key(name: str, arguments: dict) -> str:
    spec = {"experiment": name, "arguments": canonical(arguments)}
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# The keys of the two objects that stand for values JSON lacks: a dict with other keys than strings,
# and a non-finite float.
MARKERS = ("__items__", "__float__")


def to_plain(value):
    """A result as JSON values. A dict with keys other than strings (a margin, a batch size), or
    with a key that is one of the MARKERS, is stored as {"__items__": [[key, value], ...]} so that
    it comes back with the same keys."""
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        if all(isinstance(k, str) and k not in MARKERS for k in value):
            return {k: to_plain(v) for k, v in value.items()}
        return {"__items__": [[to_plain(k), to_plain(v)] for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        # bare NaN and Infinity are not JSON: other tools reading results/ refuse them
        return {"__float__": "NaN" if math.isnan(value) else ("Infinity", "-Infinity")[value < 0]}
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    raise TypeError(f"experiment results hold plain numbers, got {type(value).__name__}")


_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def from_plain(value):
    if isinstance(value, dict):
        if list(value) == ["__items__"]:
            return {_hashable(from_plain(k)): from_plain(v) for k, v in value["__items__"]}
        if list(value) == ["__float__"]:
            if value["__float__"] not in _NON_FINITE:
                raise ValueError(f"{value!r} is not a non-finite float")
            return _NON_FINITE[value["__float__"]]
        return {k: from_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_plain(v) for v in value]
    return value


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def decode(result_type: type, plain: dict):
    return result_type(**{k: from_plain(v) for k, v in plain.items()})


def check_result(result_type: type, plain) -> None:
    """Raise ValueError, naming the field, if a recorded result does not have the shape of
    `result_type`: its fields (no more; no fewer but those with defaults) and their types."""
    _check_shape(from_plain(plain), result_type, "result")


def _kind(value) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r:.40}"


def _check_shape(value, annotation, where: str) -> None:
    if dataclasses.is_dataclass(annotation):
        if not isinstance(value, dict):
            raise ValueError(
                f"{where} should be a {annotation.__name__} object, got {_kind(value)}"
            )
        fields = {f.name: f for f in dataclasses.fields(annotation) if f.init}
        extra = sorted(set(value) - set(fields))
        if extra:
            raise ValueError(f"{where} has fields {annotation.__name__} lacks: {', '.join(extra)}")
        missing = [
            name
            for name, f in fields.items()
            if name not in value
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise ValueError(f"{where} lacks the fields {', '.join(missing)}")
        hints = _type_hints(annotation)
        for name, item in value.items():
            _check_shape(item, hints.get(name, typing.Any), f"{where}.{name}")
        return
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        for option in arguments:
            try:
                return _check_shape(value, option, where)
            except ValueError:
                pass
        raise ValueError(f"{where} should be {annotation}, got {_kind(value)}")
    base = origin or annotation
    expected = {
        float: int | float,
        int: int,
        bool: bool,
        str: str,
        type(None): type(None),
        list: list,
        tuple: list,
        dict: dict,
    }.get(base)
    if expected is None:
        return  # a type the record does not check (typing.Any, say)
    if not isinstance(value, expected) or (base in (int, float) and isinstance(value, bool)):
        raise ValueError(f"{where} should be {getattr(base, '__name__', base)}, got {_kind(value)}")
    if base is list and arguments:
        for index, item in enumerate(value):
            _check_shape(item, arguments[0], f"{where}[{index}]")
    if base is dict and len(arguments) == 2:
        for name, item in value.items():
            _check_shape(item, arguments[1], f"{where}[{name!r}]")


_type_hints = functools.cache(typing.get_type_hints)


# ---- entries ------------------------------------------------------------------------------------


def entry_path(directory: Path, name: str, arguments: dict) -> Path:
    return directory / f"{name}-{key(name, arguments)}.json"


def read_entry(path: Path, result_type: type | None = None) -> dict | None:
    """The entry at `path`; None if there is none. A file that is not a whole entry (truncated,
    garbage, edited by hand, a result not of the shape of `result_type`, or with no type given not
    an object) is named in a warning and treated as missing."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:  # a folder, no permission, bytes not UTF-8
        warnings.warn(f"record entry {path} cannot be read ({error}); recomputing it", stacklevel=3)
        return None
    try:
        entry = json.loads(text)
        if not isinstance(entry, dict) or path.stem != f"{entry['experiment']}-{entry['key']}":
            raise ValueError("its experiment and key do not match its file name")
        if not isinstance(entry["arguments"], dict):
            raise ValueError("its arguments are not an object")
        if key(entry["experiment"], entry["arguments"]) != entry["key"]:
            raise ValueError("its arguments do not hash to its key")
        if not isinstance(entry["made"], dict):
            raise ValueError("its 'made' is not an object")
        if not isinstance(entry.get("code"), str | None):
            raise ValueError("its code fingerprint is not a string")
        calls = entry["calls"]
        if not isinstance(calls, list) or not all(
            isinstance(c, list) and len(c) == 2 and all(isinstance(s, str) for s in c)
            for c in calls
        ):
            raise ValueError("its calls are not a list of [experiment, key] pairs")
        if result_type is not None:
            check_result(result_type, entry["result"])
        elif not isinstance(entry["result"], dict):
            raise ValueError("its result is not an object")
    except KeyError as error:
        message = f"record entry {path} is broken (it lacks {error}); recomputing it"
        warnings.warn(message, stacklevel=3)
        return None
    except (ValueError, TypeError) as error:
        warnings.warn(f"record entry {path} is broken ({error}); recomputing it", stacklevel=3)
        return None
    return entry


def write_entry(path: Path, entry: dict) -> None:
    """Write a temporary file beside `path`, then rename it over `path` once it is complete: a
    reader never sees half an entry, and an interruption or a failed write (a full disk) leaves
    the old entry and no temporary file. With the permissions the umask gives a new file
    (tempfile would make it 0600). The temporary file's name holds this process's id, so that
    `remove_partial` can clear what a killed process left."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(entry, indent=1, allow_nan=False)
    # One line per innermost list (a curve, a row of numbers): short files, and diffs that read.
    text = re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m[1]) + "]", text)
    umask = os.umask(0)
    os.umask(umask)
    with _writing:
        handle, tmp = tempfile.mkstemp(
            dir=path.parent, prefix=f"{path.name}.{os.getpid()}.", suffix=".tmp"
        )
        try:
            with os.fdopen(handle, "w") as out:
                out.write(text + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


@contextlib.contextmanager
def redoing(keys) -> Iterator[list[str]]:
    """For the length of a `with` block, fill mode computes the entries of `keys` again although the
    record holds them (`python -m lnpaper record` redoing entries), each once. Yields the list of
    entries that could not be written, and why, filled as the block runs."""
    _redo.clear()
    _redo.update(keys)
    _unwritten.clear()
    try:
        yield _unwritten
    finally:
        _redo.clear()


@contextlib.contextmanager
def reading() -> Iterator[list]:
    """The experiment calls made inside a `with` block, as [name, key] pairs in order: the runs
    an analysis reads."""
    _calls_stack.append([])
    try:
        yield _calls_stack[-1]
    finally:
        _calls_stack.pop()


def stop_writing(directory: Path, timeout: float = 5.0) -> None:
    """Let this process write no more entries, and delete what it left half written in
    `directory`: for a worker told to stop. Waits up to `timeout` seconds for a write in progress
    to end; the lock is never released, so no write starts after it."""
    _writing.acquire(timeout=timeout)
    remove_partial(directory, os.getpid())


def remove_partial(directory: Path, pid: int) -> None:
    """Delete the temporary files that process `pid` left in `directory` (it was killed while
    writing an entry)."""
    for tmp in Path(directory).glob(f"*.json.{pid}.*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()


def entries(directory: Path | None = None, result_types: dict | None = None) -> list[dict]:
    """Every readable entry of the record, in file-name order. `result_types` maps experiment
    names to their result types (`lnpaper.book.result_types()`): an entry whose result does not have
    its type's shape is named and left out; one of a name it lacks needs only a result object."""
    directory = directory or current().directory
    result_types = result_types or {}
    found = (
        read_entry(path, result_types.get(path.stem.rsplit("-", 1)[0]))
        for path in sorted(directory.glob("*.json"))
    )
    return [entry for entry in found if entry is not None]


def cpu_model() -> str:
    """The CPU's model name: /proc/cpuinfo's "model name", else `platform.processor()`, else ""."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    return platform.processor() or ""


# The committed record is made on ATEN's portable kernels (ATEN_CPU_CAPABILITY=default), the one
# numeric path no reader's CPU takes by itself: an AVX2, AVX-512 or ARM machine then checks it on its
# own native kernels, the fastest, and still on another path than the record's. A record made on a
# native path would leave that CPU's check only the portable kernels, two to three times slower.
RECORD_PATH = "DEFAULT"


def check_path(directory: Path) -> None:
    """Refuse to add an entry to the committed record (results/) computed on another numeric path
    than RECORD_PATH: a record on two paths mixes two kinds of bits, and one made on a native path
    leaves that CPU's check only the slowest kernels. `python -m lnpaper record` sets the path for
    its workers. Other folders (the check's own, a copy a test records into) take any path."""
    if directory.resolve() != REPO_RESULTS.resolve():
        return
    here = torch.backends.cpu.get_cpu_capability()
    if here != RECORD_PATH:
        raise RuntimeError(
            f"the record in {directory} is made on ATEN's portable kernels ({RECORD_PATH}) and "
            f"this process computes on {here}: set ATEN_CPU_CAPABILITY=default to add to it, "
            "as `python -m lnpaper record` does for its workers"
        )


def provenance(seconds: float) -> dict:
    return {
        "lnpaper": importlib.metadata.version("lnpaper"),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_model": cpu_model(),
        "ATEN_CPU_CAPABILITY": os.environ.get("ATEN_CPU_CAPABILITY", ""),
        "MKL_CBWR": os.environ.get("MKL_CBWR", ""),
        "threads": THREADS,
        "date": datetime.date.today().isoformat(),
        "seconds": round(seconds, 1),
    }


def compute(name: str, fn, arguments: dict) -> dict:
    """fn(**arguments) on `THREADS` threads, whatever the caller set (the thread count
    changes the last bits), as a new entry that lists the experiment calls it made."""
    before = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    _calls_stack.append([])
    start = time.perf_counter()
    try:
        result = fn(**arguments)
    finally:
        calls = _calls_stack.pop()
        torch.set_num_threads(before)
    # The JSON round trip: a fresh result and a recorded one print exactly the same.
    plain = json.loads(json.dumps(to_plain(result), allow_nan=False))
    return {
        "experiment": name,
        "key": key(name, arguments),
        "arguments": canonical(arguments),
        "code": code_of(fn),
        "made": provenance(time.perf_counter() - start),
        "calls": calls,
        "result": plain,
    }


def code_of(fn) -> str | None:
    """The fingerprint of `fn`'s code (`fingerprint.code_fingerprint`); None for a function whose
    source Python cannot find (one typed at an interactive prompt)."""
    try:
        return code_fingerprint(fn)
    except (OSError, TypeError):
        return None


def describe(name: str, arguments: dict) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in canonical(arguments).items())})"


def _is_default_call(fn, arguments: dict) -> bool:
    try:
        defaults = {
            name: parameter.default
            for name, parameter in inspect.signature(fn).parameters.items()
            if parameter.default is not inspect.Parameter.empty
        }
        return canonical(defaults) == canonical(arguments)
    except (TypeError, ValueError):
        return False


def missing_message(name: str, fn, arguments: dict, directory: Path) -> str:
    """What a reader can do about a call the record lacks: `record NAME` records default calls
    only, so a call with other arguments is told how to run it live or record it."""
    head = f"{describe(name, arguments)} is not in the record ({directory}). "
    live = (
        "compute it here without recording it: with LNPAPER_RECORD unset (or `on`) a call the "
        "record lacks runs live, and LNPAPER_RECORD=off or, in a notebook, "
        "`lnpaper.setup(recompute=True)` computes everything live"
    )
    if _is_default_call(fn, arguments):
        return (
            head + f"Add it with `python -m lnpaper record {name}` or `make notebooks`, or {live}"
        )
    return (
        head + f"These are not {name}'s default arguments, and `python -m lnpaper record {name}` "
        f"adds only its default call: {live}; or compute it and add it to the record with "
        "LNPAPER_RECORD=fill"
    )


def call(name: str, fn, result_type: type, arguments: dict):
    """fn(**arguments) through the record, in the current mode (see the module docstring)."""
    settings = current()
    entry_key = key(name, arguments)
    if _calls_stack:
        _calls_stack[-1].append([name, entry_key])
    path = settings.directory / f"{name}-{entry_key}.json"
    entry = _memory.get(entry_key)
    redo = settings.missing == "write" and entry_key in _redo
    broken = False
    if entry is None and settings.read and not redo:
        entry = read_entry(path, result_type)
        broken = entry is None and path.exists()
        if entry is None and settings.missing == "error" and not broken:
            raise RecordMissing(missing_message(name, fn, arguments, settings.directory))
    if entry is None and settings.missing == "write":
        with entry_lock(path):  # two workers that need one entry compute it once
            # another worker may have written it meanwhile
            fresh = redo or broken or not path.exists()
            entry = None if fresh else read_entry(path, result_type)
            if entry is None:
                check_path(settings.directory)
                entry = compute(name, fn, arguments)
                try:
                    write_entry(path, entry)  # the old entry stays if this fails
                except OSError as error:
                    warnings.warn(f"could not record {path} ({error}); using it", stacklevel=2)
                    _memory[entry_key] = entry
                    _unwritten.append(f"{path} ({error})")
                _redo.discard(entry_key)
    elif entry is None:
        if _planning:  # a study's default call, read to plan its estimate, computes nothing
            raise RecordMissing(f"{describe(name, arguments)} is not in the record")
        top = not _live_calls  # a call inside a live call is part of that one's session
        study = calling_study() if top else None
        estimate = plan = notice = None
        if top:
            guess = nearest_estimate(name, arguments, settings.directory)
            estimate = guess[0] if guess else None
            plan = study_estimate(study, settings.directory) if study is not None else None
        # a broken entry is named already
        if top and settings.missing == "live" and not broken:
            notice = (
                study_message(*plan) if plan is not None
                else live_message(name, arguments, settings.directory, guess)
            )  # fmt: skip
        _live_calls.append(name)
        try:
            # the training loops' steps, as one bar for the cell, the study or the top-level call
            with progress.shown(
                study.f_code.co_name if study else name,
                study,
                estimate=estimate,
                plan=plan[0] if plan is not None else None,
                notice=notice,
            ):
                entry = compute(name, fn, arguments)
                if top:
                    progress.flush_notice()  # a call that finished without a training loop
                    progress.finished(name, entry["made"]["seconds"])
        finally:
            _live_calls.pop()
        _memory[entry_key] = entry
    return decode(result_type, entry["result"])


def calling_study() -> types.FrameType | None:
    """The frame of the outermost chapter function running now (a study such as `detach_study`, a
    claim's check, a figure's drawing), None if there is none (a reader called the experiment
    directly). Its live experiment calls share one progress bar, which closes when it returns.
    Module code and generators do not count: neither returns once, when it is done."""
    study = None
    frame = inspect.currentframe()
    while frame is not None:
        in_chapter = frame.f_globals.get("__name__", "").startswith("lnpaper.chapters.")
        if in_chapter and frame.f_code.co_name != "<module>" and not _suspends(frame.f_code):
            study = frame
        frame = frame.f_back
    return study


def _suspends(code: types.CodeType) -> bool:
    return bool(
        code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR)
    )


def _size(value) -> float | None:
    """How much work an argument asks for, relative to another value of it: a count's value, a
    sequence's length (seeds, rates, scales); None for anything else (a rate, a word, a flag)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return float(value)
    if isinstance(value, list | tuple | range) and len(value) > 0:
        return float(len(value))
    return None


# Counts that do not size the work: which seed or example, a delay, an interval between logs or
# evaluations (`*_every`), a warmup inside the steps, a number of heads over a fixed width, and the
# length of the test sequences (`test_length`, `extra_steps`: a forward pass after training, small
# against the training steps).
NOT_WORK = frozenset(
    {"seed", "example", "delay", "tail", "window", "lags", "margins", "warmup", "warmup_steps",
     "n_heads", "threads", "pool_size", "test_length", "extra_steps"}
)  # fmt: skip


# Sizes within one training step. At this companion's sizes a step's time is mostly the overhead
# of many small operations, so it grows far slower than its arithmetic: an LSTM step with a 16 times
# larger batch and 4 times the units took about 10 times as long per run, not 64 (sequence_training
# pixel by pixel, batch 4 and 16 units against 64 and 64).
WITHIN_A_STEP = frozenset(
    {"batch", "batch_size", "hidden", "width", "d_model", "units", "features", "channels"}
)


def _sizes_work(name: str) -> bool:
    return name not in NOT_WORK and not name.endswith("_every")


# A call that trains for `epochs` passes over a fixed training set, a batch of `batch_size` (or of
# each of `batch_sizes`) at a time, takes epochs x examples / batch steps: with the epochs fixed, a
# smaller batch means more steps, each a little cheaper. The training set is the same for the
# reader's call and the recorded one, so its size cancels from their ratio.
EPOCH_ARGUMENTS = frozenset({"epochs", "batch_size", "batch_sizes"})


def epoch_work(arguments: dict) -> float | None:
    """The work of an epoch-based call, up to the size of its training set: for each batch size b,
    its steps per example, epochs / b, times the square root of b (a size within one step,
    `WITHIN_A_STEP`). None if the arguments name no epochs or no batch size."""
    epochs = arguments.get("epochs")
    batches = arguments.get("batch_sizes", [arguments.get("batch_size")])
    if not isinstance(epochs, int) or not isinstance(batches, list | tuple) or not batches:
        return None
    if not all(isinstance(b, int) and b > 0 for b in batches):
        return None
    return sum(epochs / math.sqrt(b) for b in batches)


def scaled_estimate(seconds: float, arguments: dict, recorded: dict) -> float:
    """A recorded call's seconds times, for each count or sequence that differs, the reader's size
    over the recorded call's: work taken to grow in proportion to steps, seeds, epochs, sweeps and
    the like, and with the square root of a size within one step (`WITHIN_A_STEP`). For an
    epoch-based call the epochs and batch sizes count through the steps they make (`epoch_work`).
    A guide only: rates, words and the counts in `NOT_WORK` are not scaled."""
    estimate, counted = seconds, frozenset()
    mine, theirs = epoch_work(arguments), epoch_work(recorded)
    if mine and theirs:
        estimate *= mine / theirs
        counted = EPOCH_ARGUMENTS
    for name, value in arguments.items():
        mine, theirs = _size(value), _size(recorded.get(name))
        if mine is not None and theirs is not None and _sizes_work(name) and name not in counted:
            ratio = mine / theirs
            estimate *= math.sqrt(ratio) if name in WITHIN_A_STEP else ratio
    return estimate


def recorded_calls(name: str, directory: Path) -> list[tuple[dict, float]]:
    """Every recorded call of experiment `name`: its arguments and the seconds it took to make."""
    calls = []
    for path in sorted(directory.glob(f"{name}-*.json")):
        try:
            entry = json.loads(path.read_text())
            if entry["experiment"] == name:
                calls.append((entry["arguments"], float(entry["made"]["seconds"])))
        except (OSError, ValueError, KeyError, TypeError):  # a broken entry is named elsewhere
            continue
    return calls


def _distance(arguments: dict, recorded: dict) -> tuple[int, float, float]:
    """How unlike a recorded call is to the reader's: first the arguments other than counts (a
    model, a data form, a rate) that differ; then how far apart the sizes within one step are (a
    batch, a width: their time is scaled by a rule of thumb, the steps' by counting); then how far
    the counts scale the work."""
    words = sum(
        canonical(value) != recorded.get(name)
        for name, value in arguments.items()
        if _sizes_work(name) and (_size(value) is None or _size(recorded.get(name)) is None)
    )
    step_sizes = sum(
        abs(math.log(_size(value) / _size(recorded[name])))
        for name, value in arguments.items()
        if name in WITHIN_A_STEP and _size(value) and _size(recorded.get(name))
    )
    return words, step_sizes, abs(math.log(scaled_estimate(1.0, arguments, recorded)))


def nearest_estimate(
    name: str, arguments: dict, directory: Path
) -> tuple[float, dict, float] | None:
    """A guess at the seconds a call of `name` takes: the recorded call that shares the most of its
    non-count arguments (and, among those, needs the least scaling), its seconds scaled by the
    counts that differ (`scaled_estimate`). With that call's arguments and recorded seconds; None
    if the record holds no call of `name`."""
    calls = recorded_calls(name, directory)
    if not calls:
        return None
    nearest, seconds = min(calls, key=lambda call: _distance(arguments, call[0]))
    return scaled_estimate(seconds, arguments, nearest), nearest, seconds


LIVE = "here, live, in memory (nothing is written; LNPAPER_RECORD=strict makes this an error)"


def live_message(name: str, arguments: dict, directory: Path, guess=...) -> str:
    """What a reader's own call is about to do, and a guess at how long: the recorded seconds of
    the nearest recorded call, scaled by the counts that differ (`nearest_estimate`, or `guess`
    if given; recorded on the portable kernels, on one core: a guide, not a promise)."""
    text = f"{describe(name, arguments)} is not in the record: computing it {LIVE}"
    if guess is ...:
        guess = nearest_estimate(name, arguments, directory)
    if guess is not None:
        estimate, nearest, seconds = guess
        unlike = [k for k, v in nearest.items() if canonical(arguments.get(k)) != v]
        text += (
            f"; about {estimate:.0f} s on one core: the recorded call nearest yours (it differs "
            f"in {', '.join(unlike) or 'nothing'}) took {seconds:.1f} s, scaled here by the "
            "counts that differ"
        )
    return text


# The folder of the record's locks, one for every user of this machine: world-writable and not
# sticky, so that a lock file another user made can be opened and removed (in a sticky folder such
# as /tmp itself, Linux's protected_regular refuses to open another user's file for creation, and
# only its owner may remove it).
LOCK_FOLDER = Path(tempfile.gettempdir()) / "lnpaper-locks"


def _lock_folder() -> Path | None:
    """LOCK_FOLDER, made if it is not there; None if it cannot be used (not a folder, or another
    user made it without write access for this one)."""
    try:
        LOCK_FOLDER.mkdir(exist_ok=True)
        info = LOCK_FOLDER.lstat()
        if not stat.S_ISDIR(info.st_mode):  # a symlink or a file in its place
            return None
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != 0o777:
            LOCK_FOLDER.chmod(0o777)  # mkdir's mode passes through the umask
    except OSError:
        return None
    return LOCK_FOLDER if os.access(LOCK_FOLDER, os.W_OK | os.X_OK) else None


def lock_file(path: Path) -> Path | None:
    """The file whose lock `call` holds while it computes the entry at `path` (None: no lock)."""
    folder = _lock_folder()
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    return None if folder is None else folder / f"{digest}.lock"


def _acquire(lock_path: Path) -> int | None:
    """An open descriptor of `lock_path` holding its exclusive lock, or None if the file cannot be
    opened. The holder removes the file when it is done, so a waiter that wakes on a removed file
    (or one replaced since) tries again on the file now at the path."""
    while True:
        try:
            fd = os.open(lock_path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError:
            return None
        try:
            with contextlib.suppress(OSError):  # readable by every user, whatever the umask
                os.fchmod(fd, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                current_file = os.stat(lock_path, follow_symlinks=False).st_ino
            except FileNotFoundError:
                current_file = None
        except BaseException:
            os.close(fd)
            raise
        if current_file == os.fstat(fd).st_ino:
            return fd
        os.close(fd)


@contextlib.contextmanager
def entry_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on the entry at `path` among processes and users, kept outside the record
    (which may be read-only), its file removed when released. Where no lock can be had, the block
    runs unlocked: two processes may then compute one entry twice, and each write is still whole."""
    lock_path = lock_file(path)
    fd = None if lock_path is None else _acquire(lock_path)
    try:
        yield
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(lock_path)  # before the release: a waiter then finds the file gone
            os.close(fd)  # releases the lock


# ---- a study's estimate -------------------------------------------------------------------------


def study_estimate(study: types.FrameType, directory: Path) -> tuple[float, str, float] | None:
    """A guess at the seconds a running study (`calling_study`) takes in all with the reader's
    arguments: the seconds its default call's experiments took to record, scaled by the counts
    that differ between the reader's arguments and the defaults (`scaled_estimate`). With the
    study's call as the reader made it, and the recorded seconds. None if the study is not a
    chapter function whose every parameter has a default, or its default call is not all in the
    record."""
    function = study.f_globals.get(study.f_code.co_name)
    if getattr(function, "__code__", None) is not study.f_code:
        return None
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    if not parameters or any(p.default is inspect.Parameter.empty for p in parameters.values()):
        return None
    arguments = {name: study.f_locals[name] for name in parameters if name in study.f_locals}
    defaults = {name: p.default for name, p in parameters.items()}
    try:
        arguments, defaults = canonical(arguments), canonical(defaults)
    except (TypeError, ValueError):
        return None
    seconds = _default_seconds(function, directory)
    if seconds is None:
        return None
    estimate = scaled_estimate(seconds, arguments, defaults)
    return estimate, describe(function.__name__, arguments), seconds


@functools.cache
def _default_seconds(function, directory: Path) -> float | None:
    """The seconds the experiments of `function()`, a study's default call, took to record: the
    study run on the record alone (every call read, none computed). None if one is missing."""
    global _planning
    before = _planning
    _planning = True
    try:
        with using(settings_for("strict", directory)), reading() as calls:
            function()
        return sum(
            float(json.loads((directory / f"{name}-{key}.json").read_text())["made"]["seconds"])
            for name, key in calls
        )
    except Exception:  # a call the record lacks, or anything the study did not expect
        return None
    finally:
        _planning = before


def study_message(estimate: float, call: str, seconds: float) -> str:
    """What a reader's own call of a study is about to do, and a guess at how long in all
    (`study_estimate`)."""
    return (
        f"{call} needs experiment calls the record does not hold: computing them {LIVE}; about "
        f"{estimate:.0f} s on one core: its default call's experiments took {seconds:.1f} s to "
        "record, scaled here by the counts that differ"
    )
