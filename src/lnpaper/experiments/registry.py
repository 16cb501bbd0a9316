"""The experiment registry: a decorator that names an experiment and routes it through the record."""

import functools
import inspect
import typing

from lnpaper import record

EXPERIMENTS: dict[str, typing.Callable] = {}


def experiment(fn):
    """Register `fn` under its name; every call goes through `lnpaper.record.call`.

    Experiments take keyword arguments only and return a dataclass of plain numbers.
    """
    result_type = typing.get_type_hints(fn)["return"]
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def run(**kwargs):
        bound = signature.bind(**kwargs)
        bound.apply_defaults()
        return record.call(fn.__name__, fn, result_type, dict(bound.arguments))

    EXPERIMENTS[fn.__name__] = run
    return run
