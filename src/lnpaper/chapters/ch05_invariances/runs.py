"""Experiments of notebook 05, the invariance table and the reparameterization: claims I1 and I2.

- `invariance_measurements` (I1): every cell of Table 1 measured for several seeds, and again with
  the libraries' eps inside the square root; `table_text`, `lost_invariances` and
  `invariance_extremes` are what the notebooks print and the claims check.
- `reparameterization` (I2): which function class WeightNorm, BatchNorm and LayerNorm compute,
  against the plain linear layer, in float64.

The geometry of Section 5 is in `runs_geometry` (I3, I5) and `runs_fisher` (I4, I6).
"""

from dataclasses import dataclass

import torch

from lnpaper.chapters.ch05_invariances import invariance
from lnpaper.companion.record import experiment
from lnpaper.norms import BatchNorm, LayerNorm, WeightNormLinear


@dataclass
class InvarianceResult:
    rows: list
    columns: list
    threshold: float
    draws: int
    max_change: dict  # row -> column -> largest output change over the draws (seed seeds[0])
    min_change: dict  # row -> column -> smallest output change over the draws
    min_input_change: dict  # column -> smallest change of the summed inputs a over the draws
    seeds: list
    tables: list  # one verdict table (row -> column -> invariant?) per seed
    library_eps: float
    max_change_library_eps: dict  # row -> column -> largest change with eps = library_eps


@experiment
def invariance_measurements(
    *, seeds=(0, 1, 2, 3, 4), draws: int = 6, library_eps: float = 1e-5
) -> InvarianceResult:
    """I1: every cell of the invariance table measured, for several seeds, plus the same
    measurement with the libraries' eps inside the square root instead of the paper's none."""
    first = invariance.measure_invariances(seeds[0], draws=draws)
    tables = [invariance.invariance_table(seed) for seed in seeds]
    with_eps = invariance.max_output_changes(seeds[0], draws=draws, eps=library_eps)
    return InvarianceResult(
        rows=list(invariance.ROWS),
        columns=list(invariance.COLUMNS),
        threshold=invariance.THRESHOLD,
        draws=draws,
        max_change={r: {c: max(v) for c, v in cols.items()} for r, cols in first.changes.items()},
        min_change={r: {c: min(v) for c, v in cols.items()} for r, cols in first.changes.items()},
        min_input_change={c: min(v) for c, v in first.input_changes.items()},
        seeds=list(seeds),
        tables=tables,
        library_eps=library_eps,
        max_change_library_eps=with_eps,
    )


# Column headings for printing the measured table (notebooks 05 and 07), in the order of COLUMNS.
SHORT_COLUMNS = ("W -> dW", "W -> W+1c^T", "w_i -> d w_i", "X -> dX", "X -> X+1c^T", "x_n -> d x_n")


def table_text(table: InvarianceResult, rows=None) -> str:
    """The measured Table 1 as text: per cell Inv or No, and the largest output change behind it.
    Printed in two halves, the weights' three columns over the data's, so that each line (53
    characters) fits a notebook's 88-character column; all six side by side would be 95."""
    lines = []
    for half in (slice(0, 3), slice(3, 6)):
        columns = table.columns[half]
        lines.append(f"{'':11s}" + "".join(f"{name:>14s}" for name in SHORT_COLUMNS[half]))
        for row in rows or table.rows:
            cells = [table.max_change[row][c] for c in columns]
            verdicts = [("Inv " if v < table.threshold else "No  ") + f"{v:.1e}" for v in cells]
            lines.append(f"{row:11s}" + "".join(f"{v:>14s}" for v in verdicts))
    return "\n".join(lines)


def lost_invariances(table: InvarianceResult, row: str, reference: str) -> list:
    """The columns where `reference` is invariant and `row` is not (first seed's verdicts)."""
    verdicts = table.tables[0]
    return [c for c in table.columns if verdicts[reference][c] and not verdicts[row][c]]


@dataclass
class ReparameterizationResult:
    draws: int  # random layers, each with fresh parameters and `cases` fresh inputs
    cases: int
    units: int  # H
    weightnorm_vs_linear: float  # max |g_i v_i.x / ||v_i|| + b_i - (x W^T + b)_i|, W = g v / ||v||
    linear_as_weightnorm: float  # max |(x W^T + b) - WN(x)|, WN's v_i = c_i w_i, g_i = ||w_i||
    batchnorm_vs_linear: float  # BN with expected statistics against the linear layer it equals
    layernorm_sum: float  # max |sum_i y_i| over every case, y = (a - mu) / sigma (no affine)
    layernorm_norm: float  # max | ||y||^2 / H - 1 |
    layernorm_norm_library_eps: float  # the same with eps = library_eps inside the square root
    library_eps: float
    linear_sum: float  # median |sum_i z_i| / sqrt(H) over a plain linear layer's outputs z
    linear_norm: float  # median | ||z||^2 / H - 1 |
    linear_nearest: float  # min over z of max(|sum z| / sqrt(H), | ||z||^2 / H - 1 |)


@experiment
def reparameterization(
    *,
    draws: int = 20,
    cases: int = 64,
    inputs: int = 10,
    units: int = 8,
    population: int = 512,
    library_eps: float = 1e-5,
    seed: int = 0,
) -> ReparameterizationResult:
    """I2: which function class each layer computes, in float64 over random parameters and inputs.

    A reparameterization writes the same set of maps with other parameters: WeightNorm's map is
    the plain linear layer with W = g v / ||v||, and every linear layer is a WeightNorm layer;
    BatchNorm with the expected statistics of a data distribution (here `population` draws) is the
    linear layer with w_i g_i / sigma_i and bias b_i - g_i mu_i / sigma_i. LayerNorm's output
    before its affine lies on {sum y = 0, ||y||^2 = H}, which a plain linear layer's does not."""
    generator = torch.Generator().manual_seed(seed)

    def normal(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    def positive_factors(rows):  # one per row, between e^-2 and e^2
        return torch.exp(4 * torch.rand(rows, 1, generator=generator, dtype=torch.float64) - 2)

    weightnorm = WeightNormLinear(inputs, units).double()
    batchnorm = BatchNorm(units, eps=invariance.PAPER_EPS).double().eval()
    layernorm = LayerNorm(units, eps=invariance.PAPER_EPS, elementwise_affine=False).double()
    layernorm_library = LayerNorm(units, eps=library_eps, elementwise_affine=False).double()
    gaps = {"weightnorm": [], "as_weightnorm": [], "batchnorm": []}
    normalized, normalized_library, linear = [], [], []
    with torch.no_grad():
        for _ in range(draws):
            x = normal(cases, inputs)
            # WeightNorm as the paper writes it, g_i v_i.x / ||v_i|| + b_i, with random g (either
            # sign), v of random lengths and b; against the linear layer with W = g v / ||v||
            v = normal(units, inputs) * positive_factors(units)
            g, b = normal(units), 0.5 * normal(units)
            lengths = torch.linalg.vector_norm(v, dim=1)
            weightnorm_map = g * (x @ v.T) / lengths + b
            w = g[:, None] * v / lengths[:, None]
            gaps["weightnorm"].append((weightnorm_map - (x @ w.T + b)).abs().max().item())

            # a plain linear layer, written as WeightNorm: v_i = c_i w_i for random c_i > 0
            w, b = normal(units, inputs) / inputs**0.5, 0.5 * normal(units)
            z = x @ w.T + b
            weightnorm.direction.copy_(w * positive_factors(units))
            weightnorm.scale.copy_(torch.linalg.vector_norm(w, dim=1))
            weightnorm.bias.copy_(b)
            gaps["as_weightnorm"].append((z - weightnorm(x)).abs().max().item())
            linear.append(z)

            # BatchNorm with expected statistics: mu_i = E[w_i.x], sigma_i^2 = Var[w_i.x] over p(x)
            population_a = normal(population, inputs) @ w.T
            mu, var = population_a.mean(dim=0), population_a.var(dim=0, correction=0)
            batchnorm.running_mean.copy_(mu)
            batchnorm.running_var.copy_(var)
            batchnorm.weight.copy_(positive_factors(units).squeeze(1))
            batchnorm.bias.copy_(0.5 * normal(units))
            scale = batchnorm.weight / var.sqrt()
            as_linear = x @ (scale[:, None] * w).T + (batchnorm.bias - scale * mu)
            gaps["batchnorm"].append((batchnorm(x @ w.T) - as_linear).abs().max().item())

            a = x @ (normal(units, inputs) / inputs**0.5).T
            normalized.append(layernorm(a))
            normalized_library.append(layernorm_library(a))
    y, y_library, z = (torch.cat(outputs) for outputs in (normalized, normalized_library, linear))

    def sum_error(outputs):
        return outputs.sum(dim=1).abs()

    def norm_error(outputs):
        return (outputs.pow(2).sum(dim=1) / units - 1).abs()

    linear_sum, linear_norm = sum_error(z) / units**0.5, norm_error(z)
    return ReparameterizationResult(
        draws=draws,
        cases=cases,
        units=units,
        weightnorm_vs_linear=max(gaps["weightnorm"]),
        linear_as_weightnorm=max(gaps["as_weightnorm"]),
        batchnorm_vs_linear=max(gaps["batchnorm"]),
        layernorm_sum=sum_error(y).max().item(),
        layernorm_norm=norm_error(y).max().item(),
        layernorm_norm_library_eps=norm_error(y_library).max().item(),
        library_eps=library_eps,
        linear_sum=linear_sum.median().item(),
        linear_norm=linear_norm.median().item(),
        linear_nearest=torch.maximum(linear_sum, linear_norm).min().item(),
    )


# ---- summaries the notebook prints and the claims check ----------------------------------


def invariance_extremes(result) -> tuple[float, float]:
    """The largest change in any cell measured Invariant and the smallest single-draw change in any
    cell measured No: the gap between them is what makes the threshold unambiguous."""
    largest_invariant = max(
        change
        for row in result.rows
        for column, change in result.max_change[row].items()
        if change < result.threshold
    )
    smallest_no = min(
        result.min_change[row][column]
        for row in result.rows
        for column, change in result.max_change[row].items()
        if change >= result.threshold
    )
    return largest_invariant, smallest_no
