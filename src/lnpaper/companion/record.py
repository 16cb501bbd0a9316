"""The record: every experiment's result, committed in `results/`, is what notebooks, figures and
CLAIMS.md read.

Training on a CPU is bitwise repeatable on one machine only: another CPU (AVX2 against AVX-512), or
`ATEN_CPU_CAPABILITY` / `MKL_CBWR`, changes the last bits, and chaotic training amplifies them into
other losses. So results are computed once, by `python -m lnpaper record`, and stored as JSON in
`results/NAME-KEY.json`; every reader then prints exactly the recorded numbers, on any machine.
`python -m lnpaper reproduce` recomputes all of it and compares (`lnpaper.reproduce`).

The record holds leaf runs: one entry per experiment call, keyed by a hash of the experiment's name
and its arguments in a canonical form (sorted keys, exact floats, tuples and arrays as lists), so
moving code never invalidates an entry. Each entry also says how it was made: versions, the CPU
capability torch used and the CPU's model name, threads, date and wall seconds; and a fingerprint
of its experiment's code (`lnpaper.companion.fingerprint`), so that `python -m lnpaper stale` lists
in seconds the entries whose code changed since they were recorded.

An entry is checked when it is read, down to the shape of its result (the fields and types of the
experiment's result dataclass); one that fails is named in a warning and recomputed. In one process
each entry's file is read and decoded once, whoever reads it; a file that changes is read again
(`lnpaper.companion.entries`, which also writes entries whole and locks them).

Modes (`LNPAPER_RECORD`, or `configure`):
- `on` (default): read the record. A call it lacks (a reader's own argument) is computed here, live,
  in memory, never written, and says so once for all a notebook cell (or a study, or a top-level
  call) computes: what it computes, about how long it will take (the nearest recorded call, or a
  study's default call, scaled by the counts that differ: `lnpaper.companion.live`), and at the end
  how long it took (`lnpaper.progress`).
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
import functools
import hashlib
import importlib.metadata
import inspect
import json
import os
import platform
import time
import typing
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from lnpaper import progress
from lnpaper.allocator import pin_allocator
from lnpaper.arguments import check_arguments
from lnpaper.companion import entries as files
from lnpaper.companion import live
from lnpaper.companion.entries import canonical, describe
from lnpaper.companion.fingerprint import code_fingerprint

# Every experiment runs on this many threads, and so does a notebook (`lnpaper.setup`): 1 and 2
# threads sum floats in different orders and change the last bits of a training run.
THREADS = 1

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/lnpaper
REPO_RESULTS = PACKAGE_DIR.parents[1] / "results"
MODES = ("on", "strict", "off", "fill")
# What a call the record lacks does in each mode: "error", "live" (computed in memory, announced),
# "compute" (in memory, quietly: a live run) or "write".
MISSING = {"on": "live", "strict": "error", "off": "compute", "fill": "write"}


class RecordMissing(LookupError):
    """An experiment call that the record does not hold, in a mode that may not compute it."""


_memory: dict[str, dict] = {}  # key -> entry computed in this process and not written
_readings: list[list] = []  # the calls made inside each `reading` block open now
_live_calls: list[str] = []  # the live computations in progress: only the outermost is announced
_planning = False  # reading a study's default call for its estimate: nothing may be computed
# Keys that fill mode computes again although the record holds them (`python -m lnpaper record`
# redoing entries); each leaves the set once its new entry is written.
_redo: set[str] = set()
_unwritten: list[str] = []  # entries computed in fill mode that could not be written, and why


def key(name: str, arguments: dict) -> str:
    spec = {"experiment": name, "arguments": canonical(arguments)}
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class Record:
    """The record in `directory`, read in `mode` (one of MODES, see above). `missing` sets what a
    call the record lacks does, if not the mode's own (tests compute such calls quietly, "compute",
    while reading the record). Every Record of this process reads through one cache of decoded
    files (`entries.DECODED`), so an entry read by a notebook cell, a claim and the ledger is read
    from disk once."""

    directory: Path
    mode: str = "on"  # the name a reader sees in the setup line
    missing: str = ""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"LNPAPER_RECORD must be one of {', '.join(MODES)}, got {self.mode!r}")
        missing = self.missing or MISSING[self.mode]
        if missing not in MISSING.values():
            choices = ", ".join(sorted(set(MISSING.values())))
            raise ValueError(f"missing must be one of {choices}, got {missing!r}")
        object.__setattr__(self, "directory", Path(self.directory))
        object.__setattr__(self, "missing", missing)

    @property
    def read(self) -> bool:
        """Whether recorded entries are used (not in a live run)."""
        return self.mode != "off"

    def path(self, name: str, entry_key: str) -> Path:
        return self.directory / f"{name}-{entry_key}.json"

    def entry(self, path: Path, result_type: type | None = None) -> dict | None:
        """The entry at `path`; None if there is none. A file that is not a whole entry (truncated,
        garbage, edited by hand, a result not of the shape of `result_type`, or with no type given
        not an object) is named in a warning and treated as missing. Its nested values are shared
        with every reader of this process: read them, never change them."""
        try:
            signature, entry = files.DECODED.load(path)
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:  # a folder, no permission, not UTF-8
            return _unusable(path, f"cannot be read ({error})")
        except ValueError as error:
            return _unusable(path, f"is broken ({error})")
        checked = (Path(path).absolute(), signature, result_type)
        if checked in files.DECODED.checked:
            return entry
        try:
            _check_entry(Path(path), entry, result_type)
        except KeyError as error:
            return _unusable(path, f"is broken (it lacks {error})")
        except (ValueError, TypeError) as error:
            return _unusable(path, f"is broken ({error})")
        files.DECODED.checked.add(checked)
        return entry

    def entries(self, result_types: dict | None = None) -> list[dict]:
        """Every readable entry, in file-name order. `result_types` maps experiment names to their
        result types: an entry whose result does not have its type's shape is named and left out;
        one of a name it lacks needs only a result object."""
        result_types = result_types or {}
        found = (
            self.entry(path, result_types.get(path.stem.rsplit("-", 1)[0]))
            for path in sorted(self.directory.glob("*.json"))
        )
        return [dict(entry) for entry in found if entry is not None]

    def call(self, name: str, fn, result_type: type, arguments: dict):
        """fn(**arguments) through this record, in its mode (see the module docstring)."""
        entry_key = key(name, arguments)
        if _readings:
            _readings[-1].append([name, entry_key])
        path = self.path(name, entry_key)
        entry = _memory.get(entry_key)
        redo = self.missing == "write" and entry_key in _redo
        broken = False
        if entry is None and self.read and not redo:
            entry = self.entry(path, result_type)
            broken = entry is None and path.exists()
            if entry is None and self.missing == "error" and not broken:
                raise RecordMissing(missing_message(name, fn, arguments, self.directory))
        if entry is None and self.missing == "write":
            entry = self._write(name, fn, result_type, arguments, redo or broken)
        elif entry is None:
            entry = self._live(name, fn, arguments, announce=not broken)  # a broken one is named
            _memory[entry_key] = entry
        return files.decode(result_type, entry["result"])

    def _write(self, name: str, fn, result_type: type, arguments: dict, fresh: bool) -> dict:
        """Compute the entry and write it (fill mode), unless another process wrote it meanwhile.
        With `fresh`, computed whatever the file holds (an entry redone, or a broken one)."""
        entry_key = key(name, arguments)
        path = self.path(name, entry_key)
        with files.entry_lock(path):  # two workers that need one entry compute it once
            # another worker may have written it meanwhile
            entry = None if fresh or not path.exists() else self.entry(path, result_type)
            if entry is None:
                check_path(self.directory)
                entry = compute(name, fn, arguments)
                try:
                    files.write_entry(path, entry)  # the old entry stays if this fails
                except OSError as error:
                    warnings.warn(f"could not record {path} ({error}); using it", stacklevel=4)
                    _memory[entry_key] = entry
                    _unwritten.append(f"{path} ({error})")
                _redo.discard(entry_key)
        return entry

    def _live(self, name: str, fn, arguments: dict, announce: bool) -> dict:
        """Compute a call the record lacks, here, in memory: the first of a session says what it
        computes and about how long it will take (in mode `on`), and shows the training's steps."""
        if _planning:  # a study's default call, read to plan its estimate, computes nothing
            raise RecordMissing(f"{describe(name, arguments)} is not in the record")
        top = not _live_calls  # a call inside a live call is part of that one's session
        study = live.calling_study() if top else None
        estimate = plan = notice = None
        if top:
            guess = live.nearest_estimate(name, arguments, self.directory)
            estimate = guess[0] if guess else None
            if study is not None:
                plan = live.study_estimate(
                    study, functools.partial(_default_seconds, directory=self.directory)
                )
        if top and self.missing == "live" and announce:
            notice = (
                live.study_message(*plan) if plan is not None
                else live.live_message(name, arguments, self.directory, guess)
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
        return entry


def _unusable(path: Path, why: str) -> None:
    """Warn, in the reader's code, that the entry at `path` is treated as missing, and why."""
    warnings.warn(f"record entry {path} {why}; recomputing it", stacklevel=5)


def _check_entry(path: Path, entry, result_type: type | None) -> None:
    """Raise KeyError, ValueError or TypeError, saying what is wrong, if `entry` is not a whole
    entry for the file at `path`. Fields it does not name are read past (`calls`, the experiment
    calls an entry made, which the record of leaf runs does not keep)."""
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
    if result_type is not None:
        files.check_result(result_type, entry["result"])
    elif not isinstance(entry["result"], dict):
        raise ValueError("its result is not an object")


# ---- the record of this process -----------------------------------------------------------------

_override: Record | None = None


def record_dir() -> Path:
    return Path(os.environ.get("LNPAPER_RECORD_DIR") or REPO_RESULTS)


def settings_for(mode: str, directory: Path | None = None) -> Record:
    """The record in `directory` (the environment's if None) in `mode`."""
    return Record(Path(directory) if directory else record_dir(), mode)


def current() -> Record:
    if _override is not None:
        return _override
    return settings_for(os.environ.get("LNPAPER_RECORD", "on").strip().lower() or "on")


def configure(settings: Record | str | None) -> None:
    """Set the record of this process (a Record, a mode name, or None to go back to the
    environment's). Results kept in memory by a live run are forgotten."""
    global _override
    _override = settings_for(settings) if isinstance(settings, str) else settings
    _memory.clear()


@contextlib.contextmanager
def using(settings: Record | str) -> Iterator[Record]:
    """`configure` for the length of a `with` block."""
    before, memory = _override, dict(_memory)
    configure(settings)
    try:
        yield current()
    finally:
        configure(before)
        _memory.update(memory)


def call(name: str, fn, result_type: type, arguments: dict):
    """fn(**arguments) through the current record (`current`), in its mode."""
    return current().call(name, fn, result_type, arguments)


def entries(directory: Path | None = None, result_types: dict | None = None) -> list[dict]:
    """`Record.entries` of the record in `directory` (the current one's if None)."""
    return Record(directory or current().directory).entries(result_types)


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
    _readings.append([])
    try:
        yield _readings[-1]
    finally:
        _readings.pop()


@functools.cache
def _default_seconds(function, directory: Path) -> float | None:
    """The seconds the experiments of `function()`, a study's default call, took to record: the
    study run on the record alone (every call read, none computed). None if one is missing."""
    global _planning
    before = _planning
    _planning = True
    try:
        with using(settings_for("strict", directory)) as record, reading() as calls:
            function()
        return sum(
            float(record.entry(record.path(name, entry_key))["made"]["seconds"])
            for name, entry_key in calls
        )
    except Exception:  # a call the record lacks, or anything the study did not expect
        return None
    finally:
        _planning = before


# ---- computing an entry -------------------------------------------------------------------------


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
    changes the last bits), with glibc's allocator pinned (`lnpaper.allocator`: faster, the same
    arithmetic), as a new entry."""
    pin_allocator()
    before = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    start = time.perf_counter()
    try:
        result = fn(**arguments)
    finally:
        torch.set_num_threads(before)
    # The JSON round trip: a fresh result and a recorded one print exactly the same.
    plain = json.loads(json.dumps(files.to_plain(result), allow_nan=False))
    return {
        "experiment": name,
        "key": key(name, arguments),
        "arguments": canonical(arguments),
        "code": code_of(fn),
        "made": provenance(time.perf_counter() - start),
        "result": plain,
    }


def code_of(fn) -> str | None:
    """The fingerprint of `fn`'s code (`fingerprint.code_fingerprint`); None for a function whose
    source Python cannot find (one typed at an interactive prompt)."""
    try:
        return code_fingerprint(fn)
    except (OSError, TypeError):
        return None


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


# ---- an experiment: every call through the record ----------------------------------------------


def experiment(fn):
    """`fn` with every call going through `call`, under `fn`'s name: its arguments, defaults
    bound, are the entry's key. It fills no table: a chapter lists its experiments in `CHAPTER`.

    Experiments take keyword arguments only and return a dataclass of plain numbers.
    """
    result_type = typing.get_type_hints(fn)["return"]
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def run(**kwargs):
        check_arguments(fn.__name__, signature, kwargs)
        bound = signature.bind(**kwargs)
        bound.apply_defaults()
        return call(fn.__name__, fn, result_type, dict(bound.arguments))

    run.result_type = result_type
    return run
