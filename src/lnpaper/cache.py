"""Run each experiment once per source version, whoever asks for it first.

`make test` executes the notebooks and then `python -m lnpaper figures --check`; both need the same
experiment results. A result is stored as JSON under a key made of the experiment's name, its
arguments, a hash of every source file of the package and the torch and numpy versions, so any change
to the code that computed it makes a new key. Every call returns the JSON round trip of the result,
so a fresh run and a cached one print exactly the same numbers.

Set LNPAPER_CACHE=off to recompute everything; LNPAPER_CACHE_DIR to move the store.
"""

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import torch

from lnpaper.runtime import THREADS

PACKAGE_DIR = Path(__file__).resolve().parent


@functools.cache
def source_hash() -> str:
    """sha256 over the package's own .py files, in a fixed order."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_dir() -> Path:
    if "LNPAPER_CACHE_DIR" in os.environ:
        return Path(os.environ["LNPAPER_CACHE_DIR"])
    repo = PACKAGE_DIR.parents[1]
    if (repo / "pyproject.toml").exists():  # an editable install inside the checkout
        return repo / ".cache" / "experiments"
    return Path.home() / ".cache" / "lnpaper" / "experiments"


def cache_enabled() -> bool:
    return os.environ.get("LNPAPER_CACHE", "on").lower() not in ("off", "0", "no")


def _key(name: str, kwargs: dict) -> str:
    spec = json.dumps(
        {
            "experiment": name,
            "kwargs": kwargs,
            "source": source_hash(),
            "torch": torch.__version__,
            "numpy": np.__version__,
        },
        sort_keys=True,
        default=repr,
    )
    return hashlib.sha256(spec.encode()).hexdigest()[:20]


def _to_plain(value):
    """Dataclasses, tuples and numpy scalars as JSON-ready dicts, lists and floats."""
    if dataclasses.is_dataclass(value):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    raise TypeError(f"experiment results hold plain numbers, got {type(value).__name__}")


def round_trip(result_type: type, result):
    """The result as it comes back from JSON: lists for tuples, plain floats for numpy scalars."""
    plain = json.loads(json.dumps(_to_plain(result)))
    return result_type(**plain)


def run_with_fixed_threads(fn, kwargs: dict):
    """fn(**kwargs) on `runtime.THREADS` threads, whatever the caller set: the thread count changes
    the last bits of a result, and a stored result must not depend on who computed it first."""
    before = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    try:
        return fn(**kwargs)
    finally:
        torch.set_num_threads(before)


def cached_call(name: str, fn, result_type: type, kwargs: dict):
    """fn(**kwargs) through the store; the result is always the JSON round trip."""
    if not cache_enabled():
        return round_trip(result_type, run_with_fixed_threads(fn, kwargs))
    path = cache_dir() / f"{name}-{_key(name, kwargs)}.json"
    if path.exists():
        return result_type(**json.loads(path.read_text()))
    result = round_trip(result_type, run_with_fixed_threads(fn, kwargs))
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename: two pytest workers may finish the same experiment at once.
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as tmp:
        json.dump(_to_plain(result), tmp)
    os.replace(tmp.name, path)
    return result
