"""Table 1 of Ba, Kiros, Hinton 2016 (Sec. 5.1), computed instead of copied; notebook 05.

One layer sees inputs X (N x D, a row x_n per training case) through weights W (H x D, a row w_i per
hidden unit). Its summed inputs are a = X W^T (N x H), with the bias kept *out* of a: a bias added
before normalization would be shifted and scaled along with a and break the invariances the table
lists. A normalizer turns a into the layer's output y, and a transformation of (X, W) leaves the
method *invariant* when y does not change.

Six transformations, as the table's columns (delta > 0 a scale, gamma a vector, 1 a vector of ones):

    weight_matrix_rescale   W -> delta W              every a_ni scaled by delta
    weight_matrix_recenter  W -> W + 1_H gamma^T      a_ni + x_n . gamma: one shift per case
    weight_vector_rescale   w_i -> delta w_i          one unit's column of a scaled
    dataset_rescale         X -> delta X              every a_ni scaled by delta
    dataset_recenter        X -> X + 1_N gamma^T      a_ni + w_i . gamma: one shift per unit
    case_rescale            x_n -> delta x_n          one case's row of a scaled

Nothing here looks the answer up. Each cell is decided by applying random transformations of its kind
(several draws, positive scales) in float64 and comparing the output before and after: invariant when
the largest change stays below 1e-8. `PAPER_TABLE` holds what the sources print, for comparison only.
"""

from dataclasses import dataclass

import numpy as np
import torch
from torch.func import functional_call

from lnpaper.norms import BatchNorm, DyT, LayerNorm, RMSNorm, WeightNormLinear

ROWS = ("batchnorm", "weightnorm", "layernorm", "rmsnorm", "dyt")
COLUMNS = (
    "weight_matrix_rescale",
    "weight_matrix_recenter",
    "weight_vector_rescale",
    "dataset_rescale",
    "dataset_recenter",
    "case_rescale",
)
THRESHOLD = 1e-8  # largest output change (outputs are of order 1) that still counts as "unchanged"
MIN_INPUT_CHANGE = 1e-2  # a transformation that moves a by less than this tests nothing

# The paper has no epsilon in sigma. The modules refuse eps = 0 (a constant row would give 0/0), so
# the table uses eps = 1e-300: added to any variance above about 1e-284 it rounds away in float64,
# which makes the modules compute the paper's formula bit for bit. With the libraries' eps = 1e-5 the
# scale invariances hold only to about eps / sigma^2 (notebook 05 measures it).
PAPER_EPS = 1e-300

_I, _N = True, False
# What the sources print: Ba et al. 2016, Table 1 (first three rows), and Zhang & Sennrich 2019,
# Table 1 (RMSNorm). DyT (Zhu et al. 2025) is in no source's table. Used to compare, never to decide.
PAPER_TABLE = {
    "batchnorm": dict(zip(COLUMNS, (_I, _N, _I, _I, _I, _N), strict=True)),
    "weightnorm": dict(zip(COLUMNS, (_I, _N, _I, _N, _N, _N), strict=True)),
    "layernorm": dict(zip(COLUMNS, (_I, _I, _N, _I, _N, _I), strict=True)),
    "rmsnorm": dict(zip(COLUMNS, (_I, _N, _N, _I, _N, _I), strict=True)),
}


# ---- the six transformations of (X, W) ----------------------------------------------------------


def weight_matrix_rescale(x, w, delta: float):
    """W -> delta W."""
    return x, delta * w


def weight_matrix_recenter(x, w, gamma):
    """W -> W + 1 gamma^T: the same vector gamma added to every unit's weights."""
    return x, w + gamma[None, :]


def weight_vector_rescale(x, w, unit: int, delta: float):
    """w_i -> delta w_i for one unit i: one row of W, that unit's incoming weights."""
    w = w.clone()
    w[unit] = delta * w[unit]
    return x, w


def dataset_rescale(x, w, delta: float):
    """X -> delta X: every training case scaled by the same factor."""
    return delta * x, w


def dataset_recenter(x, w, gamma):
    """X -> X + 1 gamma^T: the same vector gamma added to every training case."""
    return x + gamma[None, :], w


def case_rescale(x, w, case: int, delta: float):
    """x_n -> delta x_n for one training case n."""
    x = x.clone()
    x[case] = delta * x[case]
    return x, w


def _random_scale(rng: np.random.Generator) -> float:
    """A positive factor exp(u), |u| in [0.5, 1.5]: between 0.22 and 0.61 or between 1.6 and 4.5, far
    enough from 1 that a change it causes is never mistaken for rounding. (A negative factor flips
    the sign of every normalized output: the table's invariances are to positive scales.)"""
    return float(np.exp(rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 1.5)))


def _random_vector(rng: np.random.Generator, size: int) -> torch.Tensor:
    return torch.from_numpy(rng.normal(size=size))


def random_transformation(column: str, x, w, rng: np.random.Generator):
    """One random transformation of kind `column` applied to (x, w)."""
    n, d = x.shape
    h = w.shape[0]
    if column == "weight_matrix_rescale":
        return weight_matrix_rescale(x, w, _random_scale(rng))
    if column == "weight_matrix_recenter":
        return weight_matrix_recenter(x, w, _random_vector(rng, d))
    if column == "weight_vector_rescale":
        return weight_vector_rescale(x, w, int(rng.integers(h)), _random_scale(rng))
    if column == "dataset_rescale":
        return dataset_rescale(x, w, _random_scale(rng))
    if column == "dataset_recenter":
        return dataset_recenter(x, w, _random_vector(rng, d))
    if column == "case_rescale":
        return case_rescale(x, w, int(rng.integers(n)), _random_scale(rng))
    raise ValueError(f"unknown transformation {column!r}; expected one of {COLUMNS}")


# ---- the normalizers, applied to a = X W^T ------------------------------------------------------


def normalized_layers(inputs: int, units: int, generator: torch.Generator, eps: float = PAPER_EPS):
    """Each row's layer as a function (X, W) -> y, with random gains and biases (fixed per call, so
    no accidental symmetry of g = 1, b = 0 hides a change), in float64.

    BatchNorm is in training mode: its statistics come from the N cases of X, as the paper's table
    assumes. WeightNorm reads W as its direction parameters v (w_i = g_i v_i / ||v_i||), with fixed
    g_i: its output is the summed input itself, computed from the normalized weights.
    """

    def gains(size):
        return 0.5 + torch.rand(size, generator=generator, dtype=torch.float64)  # in [0.5, 1.5)

    def biases(size):
        return 0.5 * torch.randn(size, generator=generator, dtype=torch.float64)

    batchnorm = BatchNorm(units, eps=eps).double().train()
    layernorm = LayerNorm(units, eps=eps).double()
    rmsnorm = RMSNorm(units, eps=eps).double()
    dyt = DyT(units).double()
    weightnorm = WeightNormLinear(inputs, units, bias=False).double()
    with torch.no_grad():
        for norm in (batchnorm, layernorm, dyt):
            norm.weight.copy_(gains(units))
            norm.bias.copy_(biases(units))
        rmsnorm.weight.copy_(gains(units))
        weightnorm.scale.copy_(gains(units))

    def summed_then(norm):
        return lambda x, w: norm(x @ w.T)  # a = X W^T, no bias inside

    return {
        "batchnorm": summed_then(batchnorm),
        "weightnorm": lambda x, w: functional_call(weightnorm, {"direction": w}, (x,)),
        "layernorm": summed_then(layernorm),
        "rmsnorm": summed_then(rmsnorm),
        "dyt": summed_then(dyt),
    }


@dataclass
class InvarianceChanges:
    changes: dict  # row -> column -> [max |y' - y| for each draw]
    input_changes: dict  # column -> [max |a' - a| for each draw]: the transformation did something
    draws: int


def measure_invariances(
    seed: int = 0,
    *,
    draws: int = 6,
    cases: int = 16,
    inputs: int = 10,
    units: int = 8,
    eps: float = PAPER_EPS,
) -> InvarianceChanges:
    """For every (row, column), the largest output change under `draws` random transformations.

    Each draw takes fresh X (N x D) and W (H x D), so a verdict never rests on one lucky matrix.
    Raises if a transformation leaves the summed inputs a nearly unchanged: a transformation that
    does nothing would make every method look invariant.
    """
    if cases < 2:
        raise ValueError(f"cases must be >= 2 (BatchNorm takes statistics over them), got {cases}")
    generator = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    layers = normalized_layers(inputs, units, generator, eps=eps)
    changes = {row: {column: [] for column in COLUMNS} for row in ROWS}
    input_changes = {column: [] for column in COLUMNS}
    with torch.no_grad():
        for _ in range(draws):
            x = torch.randn(cases, inputs, generator=generator, dtype=torch.float64)
            w = torch.randn(units, inputs, generator=generator, dtype=torch.float64) / inputs**0.5
            for column in COLUMNS:
                x2, w2 = random_transformation(column, x, w, rng)
                moved = (x2 @ w2.T - x @ w.T).abs().max().item()
                if not moved > MIN_INPUT_CHANGE:
                    raise RuntimeError(
                        f"{column} moved the summed inputs by only {moved:.2g}: the transformation "
                        f"did (almost) nothing, so it cannot test any invariance"
                    )
                input_changes[column].append(moved)
                for row, layer in layers.items():
                    changes[row][column].append((layer(x2, w2) - layer(x, w)).abs().max().item())
    return InvarianceChanges(changes=changes, input_changes=input_changes, draws=draws)


def max_output_changes(seed: int = 0, **kwargs) -> dict[str, dict[str, float]]:
    """The number behind each cell: the largest output change over every draw."""
    measured = measure_invariances(seed, **kwargs)
    return {
        row: {column: max(per_draw) for column, per_draw in columns.items()}
        for row, columns in measured.changes.items()
    }


def verdicts(changes: dict[str, dict[str, float]]) -> dict[str, dict[str, bool]]:
    """Invariant (True) when the largest output change stays below THRESHOLD."""
    return {
        row: {column: change < THRESHOLD for column, change in columns.items()}
        for row, columns in changes.items()
    }


def invariance_table(seed: int = 0) -> dict[str, dict[str, bool]]:
    """Table 1 of Ba et al. 2016 plus RMSNorm and DyT, each cell measured: True means Invariant.

    Rows: batchnorm, weightnorm, layernorm, rmsnorm, dyt. Columns: weight_matrix_rescale,
    weight_matrix_recenter, weight_vector_rescale, dataset_rescale, dataset_recenter, case_rescale.
    """
    return verdicts(max_output_changes(seed))
