"""The invariance table (Ba et al. 2016, Table 1): measured cells, the transformations behind them,
and checks that fail when a transformation or a normalizer is broken."""

import dataclasses
import re

import pytest
import torch

from lnpaper import ledger
from lnpaper.chapters.ch05_invariances import claims as nb_claims
from lnpaper.chapters.ch05_invariances import invariance
from lnpaper.chapters.ch05_invariances import runs as ch05_runs
from lnpaper.chapters.ch05_invariances.runs import invariance_measurements, reparameterization
from lnpaper.companion import verdicts
from lnpaper.norms import LayerNorm, WeightNormLinear

# Written out from the sources, independently of invariance.PAPER_TABLE: Ba et al. 2016,
# Table 1, and Zhang & Sennrich 2019, Table 1. I = Invariant, N = No, in the order of COLUMNS.
SOURCES = {
    "batchnorm": "I N I I I N",
    "weightnorm": "I N I N N N",
    "layernorm": "I I N I N I",
    "rmsnorm": "I N N I N I",
}
COLUMNS = (
    "weight_matrix_rescale",
    "weight_matrix_recenter",
    "weight_vector_rescale",
    "dataset_rescale",
    "dataset_recenter",
    "case_rescale",
)


def expected(row: str) -> dict[str, bool]:
    return {c: v == "I" for c, v in zip(COLUMNS, SOURCES[row].split(), strict=True)}


def test_the_table_has_the_rows_and_columns_the_issue_names():
    table = invariance.invariance_table(seed=0)
    assert list(table) == ["batchnorm", "weightnorm", "layernorm", "rmsnorm", "dyt"]
    for row in table.values():
        assert tuple(row) == COLUMNS
        assert all(isinstance(v, bool) for v in row.values())


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 7, 123])
def test_the_sources_rows_are_measured_alike_for_every_seed(seed):
    table = invariance.invariance_table(seed=seed)
    for row in SOURCES:
        assert table[row] == expected(row), row


def test_no_verdict_depends_on_the_seed():
    tables = [invariance.invariance_table(seed) for seed in range(8)]
    assert all(table == tables[0] for table in tables)
    assert not any(tables[0]["dyt"].values())  # DyT: a pointwise tanh of a, invariant to nothing


def test_paper_table_constant_equals_the_sources_and_the_claim_record():
    # PAPER_TABLE is what the I1 and P2 checks compare with; SOURCES above is written out separately.
    assert list(invariance.PAPER_TABLE) == list(SOURCES)
    for row, cells in invariance.PAPER_TABLE.items():
        assert tuple(cells) == COLUMNS, row
        assert cells == expected(row), row
    # I1's record counts the cells it checks: Table 1's 18 (3 rows) and RMSNorm's 6
    [i1] = [claim for claim in ledger.CLAIMS if claim.id == "I1"]
    assert "Ba, Kiros, Hinton 2016, Table 1" in i1.source
    assert "Zhang & Sennrich 2019, Table 1" in i1.source
    counts = re.search(r"(\d+) cells of Table 1 \+ RMSNorm's (\d+)", i1.paper_value).groups()
    paper_cells, rmsnorm_cells = (int(n) for n in counts)
    assert paper_cells == 3 * len(COLUMNS) and rmsnorm_cells == len(COLUMNS)


def test_the_numbers_behind_the_cells_are_far_apart():
    changes = invariance.max_output_changes(seed=0)
    table = invariance.verdicts(changes)
    invariant = [changes[r][c] for r in table for c in COLUMNS if table[r][c]]
    changed = [changes[r][c] for r in table for c in COLUMNS if not table[r][c]]
    assert max(invariant) < 1e-13  # float64 rounding, not approximately invariant
    assert min(changed) > 1e-2


def test_the_libraries_eps_makes_the_scale_invariances_approximate():
    # With eps = 1e-5 inside the sqrt, sigma -> delta sigma no longer cancels exactly: the measurement
    # sees it, which is why the table uses the paper's eps-free formula.
    changes = invariance.max_output_changes(seed=0, eps=1e-5)
    assert 1e-8 < changes["layernorm"]["dataset_rescale"] < 1e-2
    assert 1e-8 < changes["batchnorm"]["weight_vector_rescale"] < 1e-2
    assert changes["layernorm"]["weight_matrix_recenter"] < 1e-13  # centering has no eps in it


def _xw(seed=0):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(5, 4, generator=generator, dtype=torch.float64)
    w = torch.randn(3, 4, generator=generator, dtype=torch.float64)
    return x, w


def test_each_transformation_moves_the_summed_inputs_as_its_name_says():
    x, w = _xw()
    x0, w0 = x.clone(), w.clone()
    a = x @ w.T
    gamma = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)

    x2, w2 = invariance.weight_matrix_rescale(x, w, 2.5)
    torch.testing.assert_close(x2 @ w2.T, 2.5 * a)
    x2, w2 = invariance.weight_matrix_recenter(x, w, gamma)
    shift = x2 @ w2.T - a  # x_n . gamma: the same for every unit of case n
    torch.testing.assert_close(shift, (x @ gamma)[:, None].expand_as(a))
    x2, w2 = invariance.weight_vector_rescale(x, w, unit=1, delta=3.0)
    torch.testing.assert_close(x2 @ w2.T, a * torch.tensor([1.0, 3.0, 1.0], dtype=torch.float64))
    x2, w2 = invariance.dataset_rescale(x, w, 0.4)
    torch.testing.assert_close(x2 @ w2.T, 0.4 * a)
    x2, w2 = invariance.dataset_recenter(x, w, gamma)
    shift = x2 @ w2.T - a  # w_i . gamma: the same for every case of unit i
    torch.testing.assert_close(shift, (w @ gamma)[None, :].expand_as(a))
    x2, w2 = invariance.case_rescale(x, w, case=2, delta=0.3)
    scale = torch.ones(5, 1, dtype=torch.float64)
    scale[2] = 0.3
    torch.testing.assert_close(x2 @ w2.T, scale * a)
    assert torch.equal(x, x0) and torch.equal(w, w0)  # the inputs are never modified in place


def test_a_transformation_that_does_nothing_is_refused(monkeypatch):
    draw = invariance.random_transformation

    def broken(column, x, w, rng):
        if column == "weight_vector_rescale":
            return x, w  # forgot to scale
        return draw(column, x, w, rng)

    monkeypatch.setattr(invariance, "random_transformation", broken)
    with pytest.raises(RuntimeError, match="weight_vector_rescale moved the summed inputs"):
        invariance.invariance_table(seed=0)


class UncenteredLayerNorm(LayerNorm):
    """A LayerNorm that forgot to subtract the mean."""

    def forward(self, a):
        return a / a.pow(2).mean(-1, keepdim=True).sqrt() * self.weight + self.bias


def test_a_broken_normalizer_changes_its_row(monkeypatch):
    monkeypatch.setattr(invariance, "LayerNorm", UncenteredLayerNorm)
    table = invariance.invariance_table(seed=0)
    assert table["layernorm"]["weight_matrix_recenter"] is False
    assert table["layernorm"] != expected("layernorm")


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="cases must be >= 2"):
        invariance.measure_invariances(0, cases=1)
    x, w = _xw()
    with pytest.raises(ValueError, match="unknown transformation"):
        invariance.random_transformation("transpose", x, w, None)


def test_the_i1_check_can_fail():
    result = invariance_measurements()
    assert nb_claims.check_i1(result).verdict == verdicts.REPRODUCED
    flipped = [{row: dict(cols) for row, cols in table.items()} for table in result.tables]
    flipped[2]["weightnorm"]["dataset_rescale"] = True  # one seed disagrees with the paper
    assert nb_claims.check_i1(dataclasses.replace(result, tables=flipped)).verdict == (
        verdicts.NOT_REPRODUCED
    )
    blurred = {row: dict(cols) for row, cols in result.min_change.items()}
    blurred["dyt"]["case_rescale"] = 1e-7  # a "No" too close to the threshold to be trusted
    assert nb_claims.check_i1(dataclasses.replace(result, min_change=blurred)).verdict == (
        verdicts.NOT_REPRODUCED
    )


def test_the_i2_check_can_fail():
    result = reparameterization()
    assert nb_claims.check_i2(result).verdict == verdicts.REPRODUCED
    broken = {
        "weightnorm_vs_linear": 1e-6,  # WeightNorm no longer the linear layer it names
        "batchnorm_vs_linear": 1e-6,
        "layernorm_sum": 1e-3,  # LayerNorm's outputs off the hyperplane
        "layernorm_norm": 1e-3,  # ... or off the sphere
        "linear_nearest": 1e-6,  # a linear output on LayerNorm's set
    }
    for field, value in broken.items():
        changed = dataclasses.replace(result, **{field: value})
        assert nb_claims.check_i2(changed).verdict == verdicts.NOT_REPRODUCED, field


class SquashedWeightNorm(WeightNormLinear):
    """A WeightNorm layer with a tanh after it: not a reparameterization of a linear layer."""

    def forward(self, x):
        return torch.tanh(super().forward(x))


def test_a_layer_that_is_not_linear_fails_the_weightnorm_equality(monkeypatch, no_store):
    monkeypatch.setattr(ch05_runs, "WeightNormLinear", SquashedWeightNorm)
    result = reparameterization()
    assert result.linear_as_weightnorm > 1e-2
    assert nb_claims.check_i2(result).verdict == verdicts.NOT_REPRODUCED


class UncenteredNorm(LayerNorm):
    """A LayerNorm without its mean, i.e. RMSNorm: on the sphere, off the hyperplane."""

    def forward(self, a):
        return a / a.pow(2).mean(-1, keepdim=True).sqrt()


def test_each_of_layernorms_constraints_is_measured_on_its_own(monkeypatch, no_store):
    monkeypatch.setattr(ch05_runs, "LayerNorm", UncenteredNorm)
    result = reparameterization()
    assert result.layernorm_sum > 1e-2  # the sum constraint catches the missing mean
    assert result.layernorm_norm < 1e-13  # the norm constraint alone would not
    assert nb_claims.check_i2(result).verdict == verdicts.NOT_REPRODUCED


def test_reparameterization_numbers():
    result = reparameterization()
    identities = (
        result.weightnorm_vs_linear,
        result.linear_as_weightnorm,
        result.batchnorm_vs_linear,
        result.layernorm_sum,
        result.layernorm_norm,
    )
    assert max(identities) < 1e-13
    assert min(identities) > 0.0  # roundoff, not the same computation twice
    assert result.linear_sum > 0.3 and result.linear_norm > 0.1  # typical outputs miss by O(1)
    assert result.linear_nearest > 1e-3
    # eps inside the sqrt shortens ||y||^2 to H sigma^2 / (sigma^2 + eps): visible, and small
    assert 1e-7 < result.layernorm_norm_library_eps < 1e-2
