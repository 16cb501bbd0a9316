"""Mean and spread over seeds: one definition for every notebook, claim and figure.

"+- sd" in this companion is always the sample standard deviation over seeds (dividing by n - 1),
so a number in notebook 01 and one in notebook 06 mean the same thing.
"""

import math
import statistics


def mean_sd(values) -> tuple[float, float]:
    """Mean and sample standard deviation (n - 1) of one value per seed; sd is 0 for a single seed."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("mean_sd needs at least one value")
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def mean_sd_text(values) -> str:
    """'mean +- sd' over the runs that finished, both to the sd's precision (two significant digits
    of the sd); a single run is shown alone; a run that diverged (None) is counted, not averaged."""
    finite = [v for v in values if v is not None]
    if not finite:
        return f"all {len(values)} diverged"
    mean, sd = mean_sd(finite)
    if len(finite) == 1:
        text = f"{mean:.4g}"
    else:
        decimals = max(0, 1 - math.floor(math.log10(sd))) if sd > 0 else 3
        text = f"{mean:.{decimals}f} +- {sd:.{decimals}f}"
    diverged = len(values) - len(finite)
    return f"{text} ({diverged} diverged)" if diverged else text
