"""Notebook 02's slider: LayerNorm's variance in float32, in one pass or in two.

The one-pass variance E[a^2] - E[a]^2 subtracts two large, nearly equal numbers when the row's
mean is large against its spread, and float32 keeps too few digits for the difference; the
two-pass E[(a - mu)^2] does not. `one_pass_variance` draws each row's error with both formulas
(this chapter's `variants`), at a mean and an eps the reader picks. The notebook puts it on a
slider with `demos.show` (`lnpaper.companion.widgets`); tests/test_demos.py checks it.
"""

import functools

import numpy as np
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure

from lnpaper.chapters.ch02_transpose import variants
from lnpaper.companion import style
from lnpaper.companion.widgets import show as show  # the notebook calls demos.show
from lnpaper.companion.widgets import styled
from lnpaper.norms import center

ONE_PASS_STD, ONE_PASS_WIDTH, ONE_PASS_ROWS = 0.01, 1024, 64  # as runs.one_pass_variance
FLOAT32_ROUNDING = 2.0**-24  # float32's unit roundoff: half the spacing of the numbers near 1


@functools.cache
def _noise() -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    return torch.randn(ONE_PASS_ROWS, ONE_PASS_WIDTH, generator=generator, dtype=torch.float64)


def one_pass_errors(offset: float, eps: float) -> dict:
    """The float32 LayerNorm output of 64 rows (mean `offset`, std 0.01, H = 1024) with each
    variance formula, against float64 arithmetic on the same float32 values with the same eps.

    Returns {formula: relative error of each row's output, largest |y - y_64| / largest |y_64|},
    NaN where var + eps <= 0 leaves no output, and "exact size": the float64 output's RMS,
    sqrt(var / (var + eps)) (1 when eps is small against the variance, 1e-4 here)."""
    x32 = (offset + ONE_PASS_STD * _noise()).float()
    reference = F.layer_norm(x32.double(), (ONE_PASS_WIDTH,), eps=eps)
    centered = center(x32, (-1,))  # a - mu, the mean removed twice: only the variance differs
    formulas = {
        "one pass": variants.one_pass_variance(x32),  # E[a^2] - E[a]^2
        "two passes": variants.recentered_variance(x32),  # E[(a - mu)^2], lnpaper.LayerNorm's
    }
    errors = {}
    for name, variance in formulas.items():
        y = centered / torch.sqrt(variance + eps).unsqueeze(-1)  # (a - mu) / sqrt(var + eps)
        error = (y.double() - reference).abs().amax(-1) / reference.abs().amax(-1)
        errors[name] = torch.where(variance + eps > 0, error, torch.nan).numpy()
    errors["exact size"] = reference.pow(2).mean().sqrt().item()
    return errors


def _median_text(error: np.ndarray) -> str:
    """The median row's error, a row without output counted as the worst."""
    median = np.median(np.where(np.isfinite(error), error, np.inf))
    return "no output" if np.isinf(median) else f"{median:.1e}"


@styled
def one_pass_variance(offset: float = 100.0, eps: float = 1e-5) -> Figure:
    """Notebook 02: each row's LayerNorm error with the one-pass and the two-pass variance, rows
    sorted by their error; rows where the one-pass var + eps <= 0 have no output at all."""
    errors = one_pass_errors(offset, eps)
    fig = style.new_figure(1, 4.2)
    ax = fig.subplots()
    rows = np.arange(1, ONE_PASS_ROWS + 1)
    for name, line in (("one pass", "--"), ("two passes", "-")):
        kept = np.sort(errors[name][np.isfinite(errors[name])])
        # a relative error of 0 (the output exact to the last bit) is drawn at the axis' floor
        ax.plot(rows[: len(kept)], np.maximum(kept, 1e-9), line, marker=".",
                color=style.color("LayerNorm"), label=f"LayerNorm, {name}")  # fmt: skip
    ax.axhline(FLOAT32_ROUNDING, color=style.REFERENCE, lw=1.0, ls=":", label="float32 rounding")
    ax.set_xlim(0, ONE_PASS_ROWS + 1)
    # fixed, so that a slider moves the lines, not the axis; errors above 1e6 are not drawn
    ax.set_ylim(1e-9, 1e6)
    style.log_axis(ax, "y")
    ax.set_xlabel(f"row, sorted by its error ({ONE_PASS_ROWS} rows, $H = {ONE_PASS_WIDTH}$)")
    ax.set_ylabel("relative error of the output")
    lost = int(np.sum(~np.isfinite(errors["one pass"])))
    ax.set_title(
        f"mean {offset:g}, eps {eps:g}: one pass has no output in {lost} of {ONE_PASS_ROWS} "
        f"rows; exact RMS {errors['exact size']:.2f}"
    )
    ax.legend(loc="upper left", ncols=3)
    style.finding(
        fig,
        f"Median row error: one pass {_median_text(errors['one pass'])}, "
        f"two passes {_median_text(errors['two passes'])}",
    )
    return fig
