"""Argument validation shared by the numpy references and the torch modules.

Bad input gets a ValueError that names the problem, never a silent NaN: with eps = 0 a constant row
divides 0 by 0, and a shape that broadcasts by accident normalizes the wrong axis without complaint.
Each check is written once here and called by every public constructor at its boundary (never per
forward pass): the message names the argument and the value, and nothing is coerced. `True` is not
a count and `8.0` is not a size; numpy's integers (`np.int64(8)`) are ints and are accepted as
Python ints, since an index array's element is the natural way to write a size.
"""

import inspect
import math
import numbers
import typing


def check_eps(eps: float) -> float:
    """eps sits inside the square root (sqrt(var + eps)); it must be a positive, finite number."""
    if not _is_real(eps):
        raise ValueError(f"eps must be a positive float, got {eps!r} of type {type(eps).__name__}")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(
            f"eps must be positive and finite, got eps={eps!r}: a constant row would give 0/0"
        )
    return float(eps)


def _is_int(value) -> bool:
    """A Python or numpy integer, not a bool (numpy's bool is no numbers.Integral anyway)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value, minimum: int | None = None) -> int:
    """An int (Python or numpy, not a bool) >= `minimum`, returned as a Python int."""
    if not _is_int(value):
        raise ValueError(f"{name} must be an int, got {value!r} of type {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_positive_int(name: str, value) -> int:
    """A count (features, steps, layers, sequences): an int >= 1, and not a bool."""
    if not _is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def check_flag(name: str, value) -> bool:
    """A switch: True or False, not 1, 0 or None, which would be read as one silently."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def check_choice(name: str, value, choices) -> str:
    """One of a fixed set of names."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_finite_float(name: str, value) -> float:
    """A finite real number (not a bool), returned as a float."""
    if not _is_real(value) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_positive_float(name: str, value) -> float:
    """A finite real number > 0 (not a bool: True would be read as 1), returned as a float."""
    if not _is_real(value):
        raise ValueError(f"{name} must be a positive float, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return float(value)


def check_trailing_shape(shape: tuple[int, ...], normalized_shape: tuple[int, ...]) -> None:
    """The last len(normalized_shape) axes of the input are the ones normalized; they must match."""
    n = len(normalized_shape)
    if len(shape) < n or tuple(shape[len(shape) - n :]) != tuple(normalized_shape):
        raise ValueError(
            f"input of shape {tuple(shape)} does not end in normalized_shape "
            f"{tuple(normalized_shape)}: the trailing axes must match"
        )


def check_normalized_shape(normalized_shape) -> tuple[int, ...]:
    """Accept an int or a non-empty tuple or list of positive ints, as torch.nn.LayerNorm does
    (torch.Size is a tuple); a bool, a float or a string is refused, also as an element."""
    if _is_int(normalized_shape):
        normalized_shape = (normalized_shape,)
    if not isinstance(normalized_shape, tuple | list) or not normalized_shape:
        raise ValueError(
            f"normalized_shape must be positive ints (one int, or a non-empty tuple or list), "
            f"got {normalized_shape!r}"
        )
    if not all(_is_int(s) and s > 0 for s in normalized_shape):
        raise ValueError(f"normalized_shape must be positive ints, got {normalized_shape!r}")
    return tuple(int(s) for s in normalized_shape)


def check_partial(partial: float | None) -> float | None:
    """pRMSNorm's fraction of units used for the statistic: 0 < p <= 1, or None for all units."""
    if partial is None:
        return None
    if not _is_real(partial):
        raise ValueError(f"partial must be a float in (0, 1] or None, got {partial!r}")
    if not (0 < partial <= 1):
        raise ValueError(f"partial must lie in (0, 1], got partial={partial!r}")
    return float(partial)


# how pRMSNorm turns p * n into a count of units
PARTIAL_ROUNDINGS = {"truncate": math.floor, "ceil": math.ceil}


def partial_count(n: int, partial: float | None, rounding: str = "truncate") -> int:
    """How many leading units pRMSNorm averages over: p * n rounded down or up.

    "truncate" rounds down, as the int(p * n) of Zhang & Sennrich's PyTorch and TensorFlow code
    does; "ceil" rounds up. The two differ whenever p * n is not whole: at n = 33, p = 0.0625 (p * n =
    2.0625) truncation uses 2 units and ceil 3. A count of 0 is refused (the authors' code divides
    by zero there).

    p * n is rounded to 9 decimals first, so that a p written in decimal counts as written: in
    binary, 0.28 * 25 is 7.000000000000001 (ceil would give 8) and 0.29 * 100 is 28.999999999999996
    (truncation would give 28). At such points, and only there, "truncate" is one unit above the
    authors' int(p * n).
    """
    check_choice("rounding", rounding, PARTIAL_ROUNDINGS)
    if partial is None:
        return n
    count = PARTIAL_ROUNDINGS[rounding](round(partial * n, 9))
    if count == 0:
        raise ValueError(
            f"pRMSNorm would average over no unit: partial={partial!r} of n={n} units is "
            f"{partial * n:.9g}, which rounding={rounding!r} makes 0"
        )
    return count


def check_gain_init(gain_init) -> float:
    """A normalizer's initial gain: a positive finite number (bools refused)."""
    return check_positive_float("gain_init", gain_init)


def check_floating(x, who: str) -> None:
    """A tensor of a floating dtype: an integer input would be truncated or refused deep inside."""
    if not x.is_floating_point():
        raise ValueError(f"{who} needs a floating-point input, got dtype {x.dtype}")


def check_arguments(name: str, signature: inspect.Signature, kwargs: dict) -> None:
    """Refuse, before anything runs, a keyword the experiment does not take, a value of another
    kind than its default (a word where a number goes, a fraction where a count goes) or a negative
    count, naming the reader's parameter and value."""
    for key, value in kwargs.items():
        if key not in signature.parameters:
            takes = ", ".join(signature.parameters)
            raise TypeError(f"{name}() has no parameter {key!r}; it takes: {takes}")
        problem = _kind_problem(value, signature.parameters[key].default)
        if problem:
            raise TypeError(f"{name}({key}={value!r}): {problem}")


def _kind_problem(value, default) -> str:
    """Why `value` cannot stand where `default` stands, or '' if it can."""
    if default is inspect.Parameter.empty or default is None:
        return ""
    if isinstance(default, bool):
        ok = isinstance(value, bool)
        return "" if ok else f"expected True or False, like the default {default!r}"
    if isinstance(default, numbers.Integral):
        ok = _is_int(value)
        if ok and default > 0 and value < 0:  # a count (steps, units, a batch): never negative
            return f"a count cannot be negative (the default is {default!r})"
        return "" if ok else f"expected a whole number, like the default {default!r}"
    if isinstance(default, numbers.Real):
        ok = _is_real(value)
        return "" if ok else f"expected a number, like the default {default!r}"
    if isinstance(default, str):
        return "" if isinstance(value, str) else f"expected a name, like the default {default!r}"
    if isinstance(default, tuple | list):
        ok = isinstance(value, typing.Iterable) and not isinstance(value, str | bytes | dict)
        return "" if ok else f"expected a sequence, like the default {default!r}"
    return ""
