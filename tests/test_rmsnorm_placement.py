"""Notebook 06: the equal-footing norms of the benchmark, the traffic counter, the P1-P5 experiments
and their claim checks (each shown able to fail)."""

import math
import platform

import pytest
import torch
import torch.nn.functional as F

from lnpaper import bench, claims
from lnpaper.claims import rmsnorm_placement as nb_claims
from lnpaper.experiments.rmsnorm_placement import TrafficCounter
from lnpaper.experiments.transformer import StudyResult, layer_statistics
from lnpaper.models.transformer import PRMS_FRACTION, TransformerLM
from lnpaper.norms import RMSNorm


def rows(shape=(6, 40), offset=2.0, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return offset + 3.0 * torch.randn(*shape, generator=generator, dtype=torch.float64)


# ---- the benchmark's norms compute the norms ------------------------------------------------------


@pytest.mark.parametrize("norm", [bench.composed_norm, bench.fewest_pass_norm])
def test_equal_footing_norms_are_layernorm_with_center_and_rmsnorm_without(norm):
    a = rows()
    torch.testing.assert_close(norm(a, center=True), F.layer_norm(a, (40,), eps=bench.EPS))
    torch.testing.assert_close(norm(a, center=False), F.rms_norm(a, (40,), eps=bench.EPS))


def test_every_benchmark_row_computes_its_norm():
    a = rows().float()
    ops = bench.candidates(40)
    layer_norm, rms_norm = F.layer_norm(a, (40,)), F.rms_norm(a, (40,))
    torch.testing.assert_close(ops[bench.FLOOR](a), a)
    for _, name in bench.ROWS:
        expected = layer_norm if "layer" in name.lower() else rms_norm
        torch.testing.assert_close(ops[name](a), expected, atol=1e-4, rtol=1e-4, msg=name)
    for rms, ln in bench.PAIRS.values():
        assert "rms" in rms.lower() and "layer" in ln.lower()


def test_seconds_per_call_reports_the_time_of_one_call():
    calls = []

    def slow():
        calls.append(1)
        torch.randn(10)
        return sum(range(20_000))

    seconds = bench.seconds_per_call({"slow": slow}, rounds=3, warmup=2, block=1e-3)
    assert set(seconds) == {"slow"} and 0 < seconds["slow"] < 1e-1
    assert len(calls) >= 2 + 1 + 3  # warmup, calibration, at least one call per round


def test_the_table_divides_by_the_clone_and_pairs_rmsnorm_with_layernorm():
    ratios = {name: (2.0, 4.0) for _, name in bench.ROWS}
    ratios["rms norm, composed"] = (1.0, 3.0)
    ratios["floor ms"] = (0.5, 1.5)
    text = bench.format_norms((8, 16), ratios)
    assert "clone: forward 0.50 ms, fwd+bwd 1.50 ms" in text
    assert "    one op per step                    0.50     0.75" in text
    assert "    fewest passes                      1.00     1.00" in text


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_pin_allocator_pins_on_glibc():
    assert bench.pin_allocator().startswith("pinned")


def test_bench_no_pin_says_so(monkeypatch, capsys):
    monkeypatch.setattr(bench, "report", lambda shapes=bench.SHAPES: "the table")
    monkeypatch.setattr(bench, "time_recurrent", lambda: {"torch.nn.LSTM": (1.0, 1.0)})
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    bench.main(pin=False)
    out = capsys.readouterr().out
    assert "allocator not pinned (--no-pin)" in out and "\n\nthe table\n\nLSTM over" in out


# ---- memory traffic ---------------------------------------------------------------------------------


def traffic(fn, x):
    with torch.no_grad(), TrafficCounter() as counter:
        fn(x)
    return counter


def test_traffic_counter_counts_reads_and_writes_and_skips_views():
    x = torch.randn(64, 32)
    clone = traffic(lambda t: t.clone(), x)
    assert (clone.read, clone.written) == (x.numel(), x.numel())
    view = traffic(lambda t: t.view(32, 64).transpose(0, 1), x)
    assert (view.read, view.written, view.ops) == (0, 0, [])
    inplace = traffic(lambda t: t.clone().add_(1.0), x)
    assert inplace.ops == ["clone", "add_"] and inplace.written == 2 * x.numel()
    scaled = traffic(lambda t: t * torch.tensor(2.0).expand(64, 32), x)
    assert scaled.read == x.numel() + 1  # a broadcast scalar is read once


def test_composed_norms_move_eight_and_five_values_per_value():
    x = torch.randn(128, 256)
    moved = {
        center: traffic(lambda t, c=center: bench.composed_norm(t, center=c), x)
        for center in (True, False)
    }
    per_value = {c: (m.read + m.written) / x.numel() for c, m in moved.items()}
    assert per_value[True] == pytest.approx(8, abs=0.05)
    assert per_value[False] == pytest.approx(5, abs=0.05)


def test_memory_traffic_experiment(no_store):
    from lnpaper.experiments import memory_traffic

    result = memory_traffic(shape=(32, 64))
    assert set(result.forward) == set(bench.candidates(64))
    assert result.forward[bench.FLOOR] == pytest.approx(2.0)
    assert result.forward_ops["F.layer_norm (fused)"] == ["native_layer_norm"]
    assert result.forward["F.rms_norm (composed)"] > result.forward["F.layer_norm (fused)"]
    assert all(result.forward_backward[k] > result.forward[k] for k in result.forward)


# ---- P1, P4 experiments -----------------------------------------------------------------------------


def test_rmsnorm_equals_layernorm_on_centered_rows_only(no_store):
    from lnpaper.experiments import rmsnorm_vs_layernorm

    result = rmsnorm_vs_layernorm(width=16, rows=8, offsets=(0.5, 5.0))
    assert result.max_diff_centered < 1e-12 < 1e-2 < result.max_diff_raw
    assert max(result.layernorm_shift_change) < 1e-12
    assert result.rmsnorm_shift_change[1] > result.rmsnorm_shift_change[0] > 1e-2
    assert result.rmsnorm_output_sd[1] < result.rmsnorm_output_sd[0]  # a big shift drowns the row
    assert result.layernorm_grad_along_ones < 1e-12 < result.rmsnorm_grad_along_ones


def test_prms_estimate_counts_units_like_the_module_and_matches_the_delta_method(no_store):
    from lnpaper.experiments import prms_estimate

    result = prms_estimate(widths=(100, 1024), samples=4000)
    assert result.units_used == [7, 64]  # ceil(6.25), ceil(64)
    assert result.units_used == [RMSNorm(n, partial=PRMS_FRACTION).n_stat for n in (100, 1024)]
    for sd, theory in zip(result.ratio_sd, result.ratio_sd_theory, strict=True):
        assert sd == pytest.approx(theory, rel=0.1)
    assert all(sum(counts) == 4000 for counts in result.histogram_counts)
    assert result.ratio_sd_theory[1] == pytest.approx(math.sqrt((1 / 64 - 1 / 1024) / 2))


# ---- the model: pRMSNorm, and the per-block statistics -------------------------------------------


def test_prmsnorm_model_uses_the_first_sixteenth_of_the_units():
    torch.manual_seed(0)
    model = TransformerLM(11, d_model=64, n_layers=2, placement="pre", norm="prmsnorm")
    norms = [m for m in model.modules() if isinstance(m, RMSNorm)]
    assert len(norms) == 2 * 2 + 1  # two per block, and the final norm
    assert all(norm.partial == PRMS_FRACTION and norm.n_stat == 4 for norm in norms)


def test_layer_statistics_per_block_and_no_gradient_left_behind():
    torch.manual_seed(0)
    model = TransformerLM(11, d_model=32, n_layers=3, n_heads=4, placement="post")
    variances, grad_norms = layer_statistics(model, torch.randint(0, 11, (4, 9)))
    assert len(variances) == len(grad_norms) == 3
    assert all(abs(v - 1) < 1e-2 for v in variances)  # Post-LN: a norm's output
    assert all(g > 0 for g in grad_norms)
    assert all(p.grad is None for p in model.parameters())


def test_lm_training_records_per_block_statistics(no_store):
    from lnpaper.experiments import lm_training

    result = lm_training(placement="peri", n_layers=2, seeds=(0, 1), steps=3, log_every=1)
    for key in ("stream_variance", "block_grad_norm"):
        for when in ("init", "final"):
            values = getattr(result, f"{key}_{when}")
            assert len(values) == 2 and all(len(v) == 2 for v in values)


# ---- the checks can fail ------------------------------------------------------------------------------


def p1_inputs(**changes):
    from lnpaper.experiments.invariances import InvarianceResult
    from lnpaper.experiments.rmsnorm_placement import RMSvsLNResult
    from lnpaper.invariance import COLUMNS, PAPER_TABLE

    comparison = RMSvsLNResult(
        width=64, eps=1e-5, max_diff_centered=1e-16, max_diff_raw=2.8, offsets=[0.1, 10.0],
        layernorm_shift_change=[1e-15, 2e-15], rmsnorm_shift_change=[0.2, 4.6],
        rmsnorm_output_sd=[1.0, 0.1], layernorm_grad_along_ones=1e-17, rmsnorm_grad_along_ones=0.3,
    )  # fmt: skip
    table = {row: dict(cells) for row, cells in PAPER_TABLE.items()}
    invariances = InvarianceResult(
        rows=list(table), columns=list(COLUMNS), threshold=1e-8, draws=6, max_change={},
        min_change={}, min_input_change={}, seeds=[0], tables=[table], library_eps=1e-5,
        max_change_library_eps={},
    )  # fmt: skip
    for key, value in changes.items():
        setattr(comparison, key, value)
    return comparison, invariances


def test_check_p1_can_fail():
    assert nb_claims.check_p1(*p1_inputs()).verdict == claims.REPRODUCED
    assert nb_claims.check_p1(*p1_inputs(max_diff_centered=1e-3)).verdict == claims.NOT_REPRODUCED
    assert nb_claims.check_p1(*p1_inputs(layernorm_shift_change=[0.1, 0.2])).verdict == (
        claims.NOT_REPRODUCED
    )
    comparison, invariances = p1_inputs()
    invariances.tables[0]["rmsnorm"]["weight_matrix_recenter"] = True  # as if it kept re-centering
    assert nb_claims.check_p1(comparison, invariances).verdict == claims.NOT_REPRODUCED


def run(finals, **per_block):
    blocks = {
        "stream_variance_init": [[1.0, 2.0, 3.0]] * len(finals),
        "stream_variance_final": [[10.0, 20.0, 30.0]] * len(finals),
        "block_grad_norm_init": [[1.0, 1.0, 1.0]] * len(finals),
        "block_grad_norm_final": [[0.3, 0.1, 0.1]] * len(finals),
    }
    blocks.update(per_block)
    return {
        "n_layers": 3, "lr": 3e-3, "seeds": list(range(len(finals))), "steps": [100, 200],
        "final_loss": list(finals), "levels": {"bigram": 2.34, "unigram": 2.75}, **blocks,
    }  # fmt: skip


def norm_study(**finals):
    default = {"LayerNorm": (1.95, 1.99, 1.96), "RMSNorm": (1.96, 1.97, 1.99),
               "pRMSNorm (6.25%)": (1.97, 1.98, 1.99), "DyT": (1.79, 1.80, 1.79)}  # fmt: skip
    default.update(finals)
    return StudyResult(runs={name: run(values) for name, values in default.items()})


def test_check_p2_can_fail():
    assert nb_claims.check_p2(norm_study()).verdict == claims.REPRODUCED
    assert nb_claims.check_p2(norm_study(RMSNorm=(2.2, 2.2, 2.3))).verdict == claims.NOT_REPRODUCED
    assert (
        nb_claims.check_p2(norm_study(LayerNorm=(2.2, 2.2, 2.3))).verdict == claims.NOT_REPRODUCED
    )
    assert nb_claims.check_p2(norm_study(RMSNorm=(None, 1.9, 1.9))).verdict == claims.NOT_REPRODUCED


def test_check_p3_can_fail():
    from lnpaper.experiments.rmsnorm_placement import TrafficResult

    forward = {name: 8.0 if "layer" in name else 5.0 for name in bench.candidates(8)}
    forward["F.layer_norm (fused)"] = 2.0
    ops = {name: ["op"] for name in forward}
    good = TrafficResult([8, 8], forward, dict(forward), ops)
    assert nb_claims.check_p3(good).verdict == claims.PARTLY  # GPU times are never checkable here
    equal = TrafficResult([8, 8], dict.fromkeys(forward, 4.0), dict.fromkeys(forward, 9.0), ops)
    assert nb_claims.check_p3(equal).verdict == claims.NOT_REPRODUCED


def test_check_p4_can_fail():
    from lnpaper.experiments.rmsnorm_placement import PartialRMSResult

    def estimate(sd_at_1024):
        return PartialRMSResult(
            fraction=0.0625, widths=[64, 1024], units_used=[4, 64], samples=100,
            ratio_mean=[0.95, 0.996], ratio_sd=[0.33, sd_at_1024], ratio_mean_theory=[0.94, 0.996],
            ratio_sd_theory=[0.34, 0.086],
            histogram_edges=[0.0, 1.0], histogram_counts=[[100], [100]],
        )  # fmt: skip

    assert nb_claims.check_p4(estimate(0.085), norm_study()).verdict == claims.REPRODUCED
    worse = norm_study(**{"pRMSNorm (6.25%)": (2.1, 2.1, 2.1)})
    assert nb_claims.check_p4(estimate(0.085), worse).verdict == claims.PARTLY
    assert nb_claims.check_p4(estimate(0.2), norm_study()).verdict == claims.NOT_REPRODUCED


def placement(pre_final, peri_final, peri_grad=(0.2, 0.1, 0.1)):
    finals = (2.3, 2.3, 2.3)
    return StudyResult(
        runs={
            "Post-LN": run(finals),
            "Pre-LN": run(finals, stream_variance_final=[pre_final] * 3),
            "Peri-LN": run(
                finals, stream_variance_final=[peri_final] * 3,
                block_grad_norm_final=[list(peri_grad)] * 3,
            ),
        }
    )  # fmt: skip


def test_placement_summary_and_check_p5_can_fail():
    balanced = placement(pre_final=[200.0, 400.0, 800.0], peri_final=[5.0, 7.0, 9.0])
    summary = nb_claims.placement_summary(balanced)
    assert summary["Pre-LN"]["growth_in_training"] == [800 / 3] * 3
    assert summary["Peri-LN"]["growth_over_depth"] == [9 / 5] * 3
    assert summary["Pre-LN"]["grad_spread"] == pytest.approx([3.0] * 3)
    assert nb_claims.check_p5(balanced).verdict == claims.REPRODUCED
    steeper = placement(pre_final=[200.0, 400.0, 800.0], peri_final=[5.0, 20.0, 60.0])
    assert nb_claims.check_p5(steeper).verdict == claims.PARTLY
    reversed_ = placement(pre_final=[5.0, 7.0, 9.0], peri_final=[200.0, 400.0, 800.0],
                          peri_grad=(0.9, 0.1, 0.1))  # fmt: skip
    assert nb_claims.check_p5(reversed_).verdict == claims.NOT_REPRODUCED
    diverged = placement(pre_final=[200.0, 400.0, 800.0], peri_final=[5.0, 7.0, 9.0])
    diverged.runs["Peri-LN"]["stream_variance_final"] = [None, [5.0, 7.0, 9.0], [5.0, 7.0, 9.0]]
    assert nb_claims.check_p5(diverged).verdict == claims.NOT_REPRODUCED
