"""Input checks shared by the numpy references and the torch modules.

Bad input gets a ValueError that names the problem, never a silent NaN: with eps = 0 a constant row
divides 0 by 0, and a shape that broadcasts by accident normalizes the wrong axis without complaint.
"""

import math


def check_eps(eps: float) -> float:
    """eps sits inside the square root (sqrt(var + eps)); it must be a positive, finite number."""
    if isinstance(eps, bool) or not isinstance(eps, int | float):
        raise ValueError(f"eps must be a positive float, got {eps!r} of type {type(eps).__name__}")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(
            f"eps must be positive and finite, got eps={eps!r}: a constant row would give 0/0"
        )
    return float(eps)


def check_positive_int(name: str, value) -> int:
    """A count (features, steps, layers, sequences): an int >= 1, and not a bool."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def check_trailing_shape(shape: tuple[int, ...], normalized_shape: tuple[int, ...]) -> None:
    """The last len(normalized_shape) axes of the input are the ones normalized; they must match."""
    n = len(normalized_shape)
    if len(shape) < n or tuple(shape[len(shape) - n :]) != tuple(normalized_shape):
        raise ValueError(
            f"input of shape {tuple(shape)} does not end in normalized_shape "
            f"{tuple(normalized_shape)}: the trailing axes must match"
        )


def check_normalized_shape(normalized_shape) -> tuple[int, ...]:
    """Accept an int or a sequence of positive ints, as torch.nn.LayerNorm does."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    shape = tuple(normalized_shape)
    if not shape or not all(isinstance(s, int) and s > 0 for s in shape):
        raise ValueError(f"normalized_shape must be positive ints, got {normalized_shape!r}")
    return shape


def check_partial(partial: float | None) -> float | None:
    """pRMSNorm's fraction of units used for the statistic: 0 < p <= 1, or None for all units."""
    if partial is None:
        return None
    if isinstance(partial, bool) or not isinstance(partial, int | float):
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
    if rounding not in PARTIAL_ROUNDINGS:
        raise ValueError(f"rounding must be one of {tuple(PARTIAL_ROUNDINGS)}, got {rounding!r}")
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
    if isinstance(gain_init, bool) or not isinstance(gain_init, int | float):
        raise ValueError(f"gain_init must be a positive float, got {gain_init!r}")
    if not (math.isfinite(gain_init) and gain_init > 0):
        raise ValueError(f"gain_init must be positive and finite, got {gain_init!r}")
    return float(gain_init)


def check_floating(x, who: str) -> None:
    """A tensor of a floating dtype: an integer input would be truncated or refused deep inside."""
    if not x.is_floating_point():
        raise ValueError(f"{who} needs a floating-point input, got dtype {x.dtype}")
