"""A reader's own run, beside the record: what the numbers of a changed call mean.

Introduced in the notebooks' Try it cells, where a reader uncomments a call the record does not
hold and runs it live. Each function here returns a few printable lines: "yours" (every run and
their mean), "recorded" (the record's value for the call the notebook read, named), the reference
levels where the quantity has them, and one line saying what yours means, chosen from where its
mean falls.

- `language_model`: a held-out loss on the synthetic language of notebooks 06-10, against its
  levels (`SyntheticLanguage.levels`): uniform, unigram, bigram, and the floor at length 16.
- `digits`: a digit classifier's test accuracy or test NLL, against chance (10%, NLL ln 10).
- `compared`: a quantity with no natural level (a gap, a lead, a count), against the recorded
  value alone; the cell says in its own words what larger and smaller mean.

Every number is rounded to 4 significant digits, a difference to 3.
"""

import math
import numbers
import statistics

from lnpaper import vocabulary
from lnpaper.data import SyntheticLanguage

_LM = SyntheticLanguage().levels()
LM_LEVELS = {
    "uniform": _LM.uniform,
    "unigram": _LM.unigram,
    "bigram": _LM.bigram,
    "floor": SyntheticLanguage().entropy_floor(vocabulary.SEQUENCE_LENGTH),
}
# A loss within a tenth of the way from the floor to the bigram level is near the floor.
NEAR_FLOOR = 0.1 * (LM_LEVELS["bigram"] - LM_LEVELS["floor"])
CHANCE = vocabulary.DIGITS_CHANCE  # 10 classes
UNIFORM_NLL = math.log(10)
AT_CHANCE_POINTS = 0.01  # an accuracy within a point of chance is at chance
RELATIVE_TOLERANCE = 0.1  # compared: within 10% of the recorded value is "about the same"


def number(x: float) -> str:
    """x to 4 significant digits."""
    return f"{x:.4g}"


def _values(name: str, values, *, allow_missing: bool) -> list:
    """values as floats (a single number is one run); None, NaN and inf become NaN where a run may
    have diverged, and are refused elsewhere."""
    if values is None or isinstance(values, numbers.Real):
        items = [values]
    elif isinstance(values, str) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be a number or a list of numbers, got {values!r}")
    else:
        items = list(values)
    if not items:
        raise ValueError(f"{name} must hold at least one number, got {values!r}")
    out = []
    for item in items:
        try:
            value = math.nan if item is None else float(item)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numbers, got {item!r} in {values!r}") from None
        if not math.isfinite(value) and not allow_missing:
            raise ValueError(f"{name} must be finite numbers, got {item!r} in {values!r}")
        out.append(value if math.isfinite(value) else math.nan)
    return out


def _runs(values: list, show=number) -> str:
    """'a, b (mean m of n runs)'; a diverged run shows as 'diverged'."""
    shown = ", ".join("diverged" if math.isnan(v) else show(v) for v in values)
    finite = [v for v in values if not math.isnan(v)]
    if len(values) == 1 or not finite:
        return shown
    mean = show(statistics.fmean(finite))
    if len(finite) == len(values):
        return f"{shown} (mean {mean} of {len(values)} runs)"
    return f"{shown} (mean {mean} of the {len(finite)} of {len(values)} runs that did not diverge)"


def _report(title, yours, recorded, call, meaning, *, levels="", show=number, unit="") -> str:
    finite = [v for v in yours if not math.isnan(v)]
    of = f" (mean of {len(recorded)} runs)" if len(recorded) > 1 else ""
    rows = [
        title,
        f"  yours       {_runs(yours, show)}",
        f"  recorded    {show(statistics.fmean(recorded))}{of}: {call}",
    ]
    if finite:
        difference = statistics.fmean(finite) - statistics.fmean(recorded)
        rows.append(f"  difference  {difference:+.3g}{unit} (yours - recorded)")
    if levels:
        rows.append(f"  levels      {levels}")
    rows.append(f"  meaning     {meaning}")
    return "\n".join(rows)


def lm_meaning(loss: float) -> str:
    """What a mean held-out loss on the synthetic language means (NaN: diverged)."""
    if math.isnan(loss):
        return "diverged: a loss left the finite numbers, training blew up"
    if loss >= LM_LEVELS["unigram"] - vocabulary.NEGLIGIBLE_NATS:
        return "at the unigram level: this model learned nothing beyond token frequencies"
    if loss >= LM_LEVELS["bigram"]:
        return "between unigram and bigram: some use of the previous token, not all of it"
    if loss > LM_LEVELS["floor"] + NEAR_FLOOR:
        return "below the bigram level: it learned more than the previous token tells"
    return "near the floor: this model learned almost all of the language's rule"


def language_model(yours, recorded, call: str, *, quantity: str = "held-out loss") -> str:
    """Your held-out losses (nats per token; None or NaN for a run that diverged) beside the
    recorded ones of `call`, the language's levels, and what your mean means."""
    yours = _values("yours", yours, allow_missing=True)
    recorded = _values("recorded", recorded, allow_missing=False)
    meaning = lm_meaning(statistics.fmean(yours))  # NaN if a run diverged
    levels = ", ".join(f"{name} {number(value)}" for name, value in LM_LEVELS.items())
    title = f"{quantity}, nats per token (lower is better)"
    return _report(title, yours, recorded, call, meaning, levels=levels)


def digits_meaning(value: float, quantity: str = "accuracy") -> str:
    """What a mean test accuracy (`quantity` "accuracy") or test NLL ("nll") on the digits means."""
    if quantity not in ("accuracy", "nll"):
        raise ValueError(f"quantity must be 'accuracy' or 'nll', got {quantity!r}")
    if math.isnan(value):
        return "diverged: a result left the finite numbers, training blew up"
    if quantity == "accuracy" and value <= CHANCE + AT_CHANCE_POINTS:
        return "at chance: this network learned nothing of the digits"
    if quantity == "nll" and value >= UNIFORM_NLL - vocabulary.NEGLIGIBLE_NATS:
        return "at the uniform level: this network learned nothing of the digits"
    if quantity == "nll":
        return "below the uniform level: this network learned to tell the digits apart"
    return "above chance: this network learned to tell the digits apart"


def digits(yours, recorded, call: str, *, quantity: str = "accuracy") -> str:
    """Your test accuracies (fractions, as the experiments return them) or test NLLs beside the
    recorded ones of `call`, chance, and what your mean means."""
    yours = _values("yours", yours, allow_missing=True)
    recorded = _values("recorded", recorded, allow_missing=False)
    meaning = digits_meaning(statistics.fmean(yours), quantity)  # NaN if a run diverged
    if quantity == "accuracy":
        title, unit = "test accuracy (higher is better)", " points"
        levels = f"chance {100 * CHANCE:.4g}%"
        yours, recorded = [100 * v for v in yours], [100 * v for v in recorded]

        def show(v):
            return f"{v:.4g}%"
    else:
        title, unit, show = "test NLL, nats (lower is better)", " nats", number
        levels = f"uniform (chance) ln 10 = {number(UNIFORM_NLL)}"
    return _report(title, yours, recorded, call, meaning, levels=levels, show=show, unit=unit)


def compared(
    yours,
    recorded,
    call: str,
    *,
    quantity: str,
    larger: str,
    smaller: str,
    same: str = "no change from the recorded call",
    unit: str = "",
    zero: str = "",
    tolerance: float | None = None,
) -> str:
    """Your values of a quantity with no natural level beside the recorded ones of `call`; the
    meaning line says whether your mean is larger, smaller or about the same (within `tolerance`:
    by default the negligible 0.02 when `unit` is "nats", else 10% of the recorded mean), and
    then `larger`, `smaller` or `same`, the cell's words for what that means. `zero`, if given,
    says what a value of 0 would mean, printed as the quantity's one level."""
    yours = _values("yours", yours, allow_missing=False)
    recorded = _values("recorded", recorded, allow_missing=False)
    reference = statistics.fmean(recorded)
    if tolerance is None:
        nats = unit.strip() == "nats"
        tolerance = vocabulary.NEGLIGIBLE_NATS if nats else RELATIVE_TOLERANCE * abs(reference)
    elif _values("tolerance", tolerance, allow_missing=False)[0] < 0:
        raise ValueError(f"tolerance must be a number >= 0, got {tolerance!r}")
    difference = statistics.fmean(yours) - reference
    if abs(difference) <= tolerance:
        meaning = f"about the recorded (within {number(tolerance)}): {same}"
    elif difference > 0:
        meaning = f"larger than recorded: {larger}"
    else:
        meaning = f"smaller than recorded: {smaller}"
    unit = f" {unit.strip()}" if unit.strip() else ""
    title = quantity + (f",{unit}" if unit else "")
    levels = f"0 = {zero}" if zero else ""
    return _report(title, yours, recorded, call, meaning, levels=levels, unit=unit)
