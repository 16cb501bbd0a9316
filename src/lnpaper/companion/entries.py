"""A record entry as a file: arguments and results as standard JSON, a result checked against the
shape of its experiment's result type, entries decoded once per process, written whole or not at
all, and locked while one is computed.

Results are standard JSON: a NaN or an infinity is written as {"__float__": "NaN"} (or
"Infinity", "-Infinity"), and the bare `NaN` of older entries still reads. A dict whose keys are not
strings comes back with the same keys.

Decoding: every reader in one process (a notebook cell, a claim, CLAIMS.md) reads an entry's file
and parses its JSON once (`DecodedFiles`); a file that changed since is read again.

Writing: into a temporary file beside the entry, renamed over the old one once complete, so an
interruption or a full disk leaves the old entry (or the new one), never neither. While one process
computes an entry it holds that entry's lock (`entry_lock`), so two workers that need one entry
compute it once.
"""

import contextlib
import dataclasses
import fcntl
import functools
import hashlib
import json
import math
import os
import re
import stat
import tempfile
import threading
import time
import types
import typing
from collections.abc import Iterator
from pathlib import Path

import numpy as np

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


def describe(name: str, arguments: dict) -> str:
    """A call as a reader would type it: `name(a=1, b=[0, 1])`."""
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in canonical(arguments).items())})"


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


# The JSON value a result field of each Python type reads back as: a float may have been written as
# an int, a tuple as a list.
_JSON_TYPES = {kind: kind for kind in (int, bool, str, type(None), list, dict)}
_JSON_TYPES |= {float: int | float, tuple: list}


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
    expected = _JSON_TYPES.get(base)
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


# ---- decoding each file once per process ----------------------------------------------------------

# A file rewritten twice within its file system's timestamp granularity (coarse ticks on Linux, 2 s
# on FAT) can keep its modification time, and in place its size and inode: a file modified this
# recently is read again at every read, never served from the cache (what git does with its "racy"
# index entries).
RACY_SECONDS = 2.0


def _signature(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_mtime_ns, info.st_size, info.st_ino


class DecodedFiles:
    """The JSON of each entry file read in this process, kept with its file's modification time,
    size and inode: a file unchanged since it was read is not read again, a changed one is, and one
    this process writes (`write_entry`) is forgotten. `reads` counts the files read from disk."""

    def __init__(self) -> None:
        self._decoded: dict[Path, tuple[tuple[int, int, int], object]] = {}
        self._lock = threading.Lock()
        self.reads = 0
        # (path, signature, what it was checked against) of the entries a reader has checked, so
        # that an unchanged entry's shape is checked once too
        self.checked: set[tuple] = set()

    def load(self, path: Path) -> tuple[tuple[int, int, int], object]:
        """(the file's signature, its JSON) for `path`. Raises FileNotFoundError for no file,
        OSError or UnicodeDecodeError for one that cannot be read, ValueError for one that is not
        JSON: none of them is kept."""
        path = Path(path).absolute()
        signature = _signature(path.stat())
        with self._lock:
            kept = self._decoded.get(path)
        if kept is not None and kept[0] == signature:
            return kept
        text = path.read_text(encoding="utf-8")
        info = path.stat()  # the file as read: a write between the two stats is read again later
        with self._lock:
            self.reads += 1
        value = json.loads(text)
        if _signature(info) == signature and time.time() - info.st_mtime > RACY_SECONDS:
            with self._lock:
                self._decoded[path] = (signature, value)
        return signature, value

    def forget(self, path: Path) -> None:
        with self._lock:
            self._decoded.pop(Path(path).absolute(), None)


DECODED = DecodedFiles()  # the one cache of this process, shared by every record read in it


# ---- writing whole entries ----------------------------------------------------------------------

_writing = threading.RLock()  # held while a temporary file of this process exists


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
            DECODED.forget(path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


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


# ---- locks ---------------------------------------------------------------------------------------


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
