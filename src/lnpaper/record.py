"""The record: every experiment's result, committed in `results/`, is what notebooks, figures and
CLAIMS.md read.

Training on a CPU is bitwise repeatable on one machine only: another CPU (AVX2 against AVX-512), or
`ATEN_CPU_CAPABILITY` / `MKL_CBWR`, changes the last bits, and chaotic training amplifies them into
other losses. So results are computed once, by `python -m lnpaper record`, and stored as JSON in
`results/NAME-KEY.json`; every reader then prints exactly the recorded numbers, on any machine.
`python -m lnpaper reproduce` recomputes all of it and compares (`lnpaper.reproduce`).

The key is a hash of the experiment's name and its arguments in a canonical form (sorted keys, exact
floats, tuples and arrays as lists). Each entry also says how it was made: versions, the CPU
capability torch used, threads, date and wall seconds; and which experiments it called in turn, so
that a recompute can run those first.

Modes (`LNPAPER_RECORD`, or `configure`):
- `on` (default): read the record; an experiment missing from it is an error naming it and its
  arguments, never a silent recompute.
- `off`: a live run. Every experiment is computed on this machine, kept in memory for this process,
  and nothing is written. `lnpaper.setup(recompute=True)` does the same from a notebook.
- `fill`: read the record, and compute and write what is missing (`make notebooks`, `record`).
`LNPAPER_RECORD_DIR` moves the record (set but empty counts as unset).
"""

import contextlib
import dataclasses
import datetime
import fcntl
import hashlib
import importlib.metadata
import json
import math
import os
import re
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from lnpaper.runtime import THREADS

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_RESULTS = PACKAGE_DIR.parents[1] / "results"
MODES = ("on", "off", "fill")


class RecordMissing(LookupError):
    """An experiment call that the record does not hold, in a mode that may not compute it."""


@dataclasses.dataclass(frozen=True)
class Settings:
    read: bool  # use recorded entries
    missing: str  # what a call not in the record does: "error", "compute" (in memory) or "write"
    directory: Path
    mode: str  # the name a reader sees in the setup line


_override: Settings | None = None
_memory: dict[str, dict] = {}  # key -> entry computed in this process and not written
_calls_stack: list[list] = []  # the experiment calls made by each computation in progress


def record_dir() -> Path:
    return Path(os.environ.get("LNPAPER_RECORD_DIR") or REPO_RESULTS)


def settings_for(mode: str, directory: Path | None = None) -> Settings:
    if mode not in MODES:
        raise ValueError(f"LNPAPER_RECORD must be one of {', '.join(MODES)}, got {mode!r}")
    read, missing = {"on": (True, "error"), "off": (False, "compute"), "fill": (True, "write")}[
        mode
    ]
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


def to_plain(value):
    """A result as JSON values. A dict with keys other than strings (a margin, a batch size) is
    stored as {"__items__": [[key, value], ...]} so that it comes back with the same keys."""
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: to_plain(v) for k, v in value.items()}
        return {"__items__": [[to_plain(k), to_plain(v)] for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    raise TypeError(f"experiment results hold plain numbers, got {type(value).__name__}")


def from_plain(value):
    if isinstance(value, dict):
        if list(value) == ["__items__"]:
            return {_hashable(from_plain(k)): from_plain(v) for k, v in value["__items__"]}
        return {k: from_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_plain(v) for v in value]
    return value


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def decode(result_type: type, plain: dict):
    return result_type(**{k: from_plain(v) for k, v in plain.items()})


# ---- entries ------------------------------------------------------------------------------------


def entry_path(directory: Path, name: str, arguments: dict) -> Path:
    return directory / f"{name}-{key(name, arguments)}.json"


def read_entry(path: Path) -> dict | None:
    """The entry at `path`; None if there is none. A file that is not a whole entry (truncated,
    garbage, edited by hand) is named in a warning and treated as missing."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        entry = json.loads(text)
        if not isinstance(entry, dict) or path.stem != f"{entry['experiment']}-{entry['key']}":
            raise ValueError("its experiment and key do not match its file name")
        if key(entry["experiment"], entry["arguments"]) != entry["key"]:
            raise ValueError("its arguments do not hash to its key")
        entry["result"]  # noqa: B018 (a KeyError is a broken entry)
    except (ValueError, KeyError, TypeError) as error:
        warnings.warn(f"record entry {path} is broken ({error}); recomputing it", stacklevel=3)
        return None
    return entry


def write_entry(path: Path, entry: dict) -> None:
    """Write then rename, so that a reader never sees half an entry; with the permissions the
    umask gives a new file (tempfile would make it 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(entry, indent=1)
    # One line per innermost list (a curve, a row of numbers): short files, and diffs that read.
    text = re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m[1]) + "]", text)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as tmp:
        tmp.write(text + "\n")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp.name, 0o666 & ~umask)
    os.replace(tmp.name, path)


def entries(directory: Path | None = None) -> list[dict]:
    """Every readable entry of the record, in file-name order."""
    directory = directory or current().directory
    found = (read_entry(path) for path in sorted(directory.glob("*.json")))
    return [entry for entry in found if entry is not None]


def provenance(seconds: float) -> dict:
    return {
        "lnpaper": importlib.metadata.version("lnpaper"),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "ATEN_CPU_CAPABILITY": os.environ.get("ATEN_CPU_CAPABILITY", ""),
        "MKL_CBWR": os.environ.get("MKL_CBWR", ""),
        "threads": THREADS,
        "date": datetime.date.today().isoformat(),
        "seconds": round(seconds, 1),
    }


def compute(name: str, fn, arguments: dict) -> dict:
    """fn(**arguments) on `runtime.THREADS` threads, whatever the caller set (the thread count
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
    plain = json.loads(json.dumps(to_plain(result)))
    return {
        "experiment": name,
        "key": key(name, arguments),
        "arguments": canonical(arguments),
        "made": provenance(time.perf_counter() - start),
        "calls": calls,
        "result": plain,
    }


def describe(name: str, arguments: dict) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in canonical(arguments).items())})"


def call(name: str, fn, result_type: type, arguments: dict):
    """fn(**arguments) through the record, in the current mode (see the module docstring)."""
    settings = current()
    entry_key = key(name, arguments)
    if _calls_stack:
        _calls_stack[-1].append([name, entry_key])
    path = settings.directory / f"{name}-{entry_key}.json"
    entry = _memory.get(entry_key)
    broken = False
    if entry is None and settings.read:
        entry = read_entry(path)
        broken = entry is None and path.exists()
        if entry is None and settings.missing == "error" and not broken:
            raise RecordMissing(
                f"{describe(name, arguments)} is not in the record ({settings.directory}). "
                f"Add it with `python -m lnpaper record {name}` or `make notebooks`, or compute it "
                "here with LNPAPER_RECORD=off (a live run)"
            )
    if entry is None and settings.missing == "write":
        with _lock(path):  # two workers that need one entry compute it once
            # another worker may have written it meanwhile
            entry = None if broken or not path.exists() else read_entry(path)
            if entry is None:
                entry = compute(name, fn, arguments)
                try:
                    write_entry(path, entry)
                except OSError as error:
                    warnings.warn(f"could not record {path} ({error}); using it", stacklevel=2)
                    _memory[entry_key] = entry
    elif entry is None:
        entry = compute(name, fn, arguments)
        _memory[entry_key] = entry
    return decode(result_type, entry["result"])


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` among processes, kept outside the record (which may be read-only)."""
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    lock_path = Path(tempfile.gettempdir()) / f"lnpaper-{digest}.lock"
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
