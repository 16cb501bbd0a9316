"""Notebook 07: the equal-footing norms of the benchmark, the traffic counter, the P1-P5 experiments
and their claim checks (each shown able to fail)."""

import math
import platform
import re

import pytest
import torch
import torch.nn.functional as F

from lnpaper import bench, stats
from lnpaper.chapters.ch06_transformer.runs import StudyResult, layer_statistics
from lnpaper.chapters.ch07_rmsnorm_placement import claims as nb_claims
from lnpaper.chapters.ch07_rmsnorm_placement.runs import TrafficCounter
from lnpaper.companion import verdicts
from lnpaper.models.transformer import PRMS_FRACTION, TransformerConfig, TransformerLM
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


@pytest.mark.parametrize("norm", [bench.composed_norm, bench.fewest_pass_norm])
def test_equal_footing_norms_apply_the_gain_and_layernorms_bias(norm):
    a = rows()
    gain, bias = (t.double().detach() for t in bench.affine_parameters(40))
    expected = F.layer_norm(a, (40,), gain, bias, eps=bench.EPS)
    torch.testing.assert_close(norm(a, center=True, gain=gain, bias=bias), expected)
    expected = F.rms_norm(a, (40,), gain, eps=bench.EPS)
    torch.testing.assert_close(norm(a, center=False, gain=gain), expected)


def test_every_benchmark_row_computes_its_norm_with_its_affine_parameters():
    a = rows().float()
    ops = bench.candidates(40)
    gain, bias = bench.affine_parameters(40)
    assert gain.requires_grad and bias.requires_grad and (gain - 1).abs().max() > 0.01
    layer_norm = F.layer_norm(a, (40,), gain, bias, eps=bench.EPS)
    rms_norm = F.rms_norm(a, (40,), gain, eps=bench.EPS)
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


@pytest.mark.slow
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
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import memory_traffic

    result = memory_traffic(shape=(32, 64))
    assert set(result.forward) == set(bench.candidates(64))
    assert result.forward[bench.FLOOR] == pytest.approx(2.0)
    assert result.forward_ops["F.layer_norm (fused)"] == ["native_layer_norm"]
    assert result.forward["F.rms_norm (composed)"] > result.forward["F.layer_norm (fused)"]
    assert all(result.forward_backward[k] > result.forward[k] for k in result.forward)


# ---- P1, P4 experiments -----------------------------------------------------------------------------


def test_rmsnorm_equals_layernorm_on_centered_rows_only(no_store):
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import rmsnorm_vs_layernorm

    result = rmsnorm_vs_layernorm(width=16, rows=8, offsets=(0.5, 5.0))
    assert result.max_diff_centered < 1e-12 < 1e-2 < result.max_diff_raw
    assert max(result.layernorm_shift_change) < 1e-12
    assert result.rmsnorm_shift_change[1] > result.rmsnorm_shift_change[0] > 1e-2
    assert result.rmsnorm_output_sd[1] < result.rmsnorm_output_sd[0]  # a big shift drowns the row
    assert result.layernorm_grad_along_ones < 1e-12 < result.rmsnorm_grad_along_ones


def test_prms_estimate_counts_units_like_the_module_and_matches_the_delta_method(no_store):
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import prms_estimate

    result = prms_estimate(widths=(100, 1024), samples=4000)
    assert result.units_used == [6, 64]  # int(6.25), int(64), as the authors' code counts
    assert result.units_used == [RMSNorm(n, partial=PRMS_FRACTION).n_stat for n in (100, 1024)]
    for sd, theory in zip(result.ratio_sd, result.ratio_sd_theory, strict=True):
        assert sd == pytest.approx(theory, rel=0.1)
    assert all(sum(counts) == 4000 for counts in result.histogram_counts)
    assert result.ratio_sd_theory[1] == pytest.approx(math.sqrt((1 / 64 - 1 / 1024) / 2))


# ---- the model: pRMSNorm, and the per-block statistics -------------------------------------------


def test_prmsnorm_model_uses_the_first_sixteenth_of_the_units():
    torch.manual_seed(0)
    model = TransformerLM(
        TransformerConfig(11, d_model=64, n_layers=2, placement="pre", norm="prmsnorm")
    )
    norms = [m for m in model.modules() if isinstance(m, RMSNorm)]
    assert len(norms) == 2 * 2 + 1  # two per block, and the final norm
    assert all(norm.partial == PRMS_FRACTION and norm.n_stat == 4 for norm in norms)


def test_layer_statistics_per_block_and_no_gradient_left_behind():
    torch.manual_seed(0)
    model = TransformerLM(
        TransformerConfig(11, d_model=32, n_layers=3, n_heads=4, placement="post")
    )
    variances, grad_norms = layer_statistics(model, torch.randint(0, 11, (4, 9)))
    assert len(variances) == len(grad_norms) == 3
    assert all(abs(v - 1) < 1e-2 for v in variances)  # Post-LN: a norm's output
    assert all(g > 0 for g in grad_norms)
    assert all(p.grad is None for p in model.parameters())


def test_lm_training_records_per_block_statistics(no_store):
    from lnpaper.chapters.ch06_transformer.runs import lm_training

    result = lm_training(placement="peri", n_layers=2, seeds=(0, 1), steps=3, log_every=1)
    for key in ("stream_variance", "block_grad_norm"):
        for when in ("init", "final"):
            values = getattr(result, f"{key}_{when}")
            assert len(values) == 2 and all(len(v) == 2 for v in values)


# ---- the checks can fail ------------------------------------------------------------------------------


def p1_inputs(**changes):
    from lnpaper.chapters.ch05_invariances.invariance import COLUMNS, PAPER_TABLE
    from lnpaper.chapters.ch05_invariances.runs import InvarianceResult
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import RMSvsLNResult

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
    assert nb_claims.check_p1(*p1_inputs()).verdict == verdicts.REPRODUCED
    assert nb_claims.check_p1(*p1_inputs(max_diff_centered=1e-3)).verdict == verdicts.NOT_REPRODUCED
    assert nb_claims.check_p1(*p1_inputs(layernorm_shift_change=[0.1, 0.2])).verdict == (
        verdicts.NOT_REPRODUCED
    )
    comparison, invariances = p1_inputs()
    invariances.tables[0]["rmsnorm"]["weight_matrix_recenter"] = True  # as if it kept re-centering
    assert nb_claims.check_p1(comparison, invariances).verdict == verdicts.NOT_REPRODUCED


# Synthetic studies for the comparative checks: ten seeds, so the t intervals can decide. Seed i of
# one arm is the reference arm's seed i plus a shift plus `jitter` times a fixed zero-mean draw.
SEEDS = 10
SEED_NOISE = (-0.8, 0.5, 1.2, -0.3, 0.9, -1.4, 0.2, -0.6, 1.0, -0.7)  # mean 0, sd 0.89
LAYERNORM_LOSSES = (1.967, 1.989, 1.971, 1.958, 1.964, 1.976, 1.975, 1.977, 1.884, 1.956)


def shifted(reference, by, jitter=0.01):
    """Per-seed values `reference + by`, with a seed-to-seed scatter of the difference: the paired
    95% t interval of the difference is by -+ 0.63 * jitter (t_{0.975,9} * 0.89 / sqrt(10))."""
    return tuple(r + by + jitter * z for r, z in zip(reference, SEED_NOISE, strict=True))


def run(finals, **per_block):
    n = len(finals)
    blocks = {
        "stream_variance_init": [[1.0, 2.0, 3.0]] * n,
        "stream_variance_final": [[10.0, 20.0, 30.0]] * n,
        "block_grad_norm_init": [[1.0, 1.0, 1.0]] * n,
        "block_grad_norm_final": [[0.3, 0.1, 0.1]] * n,
    }
    blocks.update(per_block)
    return {
        "n_layers": 3, "lr": 3e-3, "seeds": list(range(n)), "steps": [100, 200],
        "final_loss": list(finals), "levels": {"bigram": 2.34, "unigram": 2.75}, **blocks,
    }  # fmt: skip


def norm_study(**finals):
    """The P2/P4 study: by default RMSNorm and pRMSNorm match LayerNorm to a few thousandths."""
    default = {
        "LayerNorm": LAYERNORM_LOSSES,
        "RMSNorm": shifted(LAYERNORM_LOSSES, -0.002),
        "pRMSNorm (6.25%)": shifted(LAYERNORM_LOSSES, 0.0, jitter=0.005),
        "DyT": shifted(LAYERNORM_LOSSES, -0.17),
    }
    default.update(finals)
    return StudyResult(runs={name: run(values) for name, values in default.items()})


def test_synthetic_intervals_are_as_wide_as_stated():
    difference = stats.paired_difference(shifted(LAYERNORM_LOSSES, 0.05), LAYERNORM_LOSSES)
    assert difference.n == SEEDS
    assert difference.mean == pytest.approx(0.05)
    assert difference.high - difference.mean == pytest.approx(0.63 * 0.01, rel=0.01)


def test_check_p2_can_fail():
    def verdict(rms_losses):
        return nb_claims.check_p2(norm_study(RMSNorm=rms_losses)).verdict

    assert nb_claims.check_p2(norm_study()).verdict == verdicts.REPRODUCED
    # non-inferiority: an RMSNorm clearly better than LayerNorm has lost no quality
    assert verdict(shifted(LAYERNORM_LOSSES, -0.1)) == verdicts.REPRODUCED
    # worse by 0.1 nats: the whole interval lies beyond the 0.02 margin
    assert verdict(shifted(LAYERNORM_LOSSES, 0.1)) == verdicts.NOT_REPRODUCED
    # worse by 0.02 on average: the interval straddles the margin
    assert verdict(shifted(LAYERNORM_LOSSES, 0.02)) == verdicts.INCONCLUSIVE
    # equal on average but scattered by +-0.05 from seed to seed: ten seeds cannot rule out 0.02
    assert verdict(shifted(LAYERNORM_LOSSES, 0.0, jitter=0.05)) == verdicts.INCONCLUSIVE
    diverged = (None, *shifted(LAYERNORM_LOSSES, 0.0)[1:])
    assert verdict(diverged) == verdicts.NOT_REPRODUCED


def test_check_p2_names_the_test_and_its_numbers():
    finding = nb_claims.check_p2(norm_study(RMSNorm=shifted(LAYERNORM_LOSSES, 0.1)))
    assert "+0.100 [+0.094, +0.106] nats (n = 10): fails" in finding.ours
    (quantity,) = finding.quantities
    assert quantity.kind == "aggregate" and quantity.value == pytest.approx(0.1)


def test_check_p4_can_fail():
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import PartialRMSResult

    def estimate(mean_at_1024=0.996, sd_at_1024=0.085):
        return PartialRMSResult(
            fraction=0.0625, widths=[64, 1024], units_used=[4, 64], samples=100,
            ratio_mean=[0.95, mean_at_1024], ratio_sd=[0.33, sd_at_1024],
            ratio_mean_theory=[0.94, 0.996], ratio_sd_theory=[0.34, 0.086],
            histogram_edges=[0.0, 1.0], histogram_counts=[[100], [100]],
        )  # fmt: skip

    rms = norm_study().runs["RMSNorm"]["final_loss"]
    worse = norm_study(**{"pRMSNorm (6.25%)": shifted(rms, 0.08)})
    noisy = norm_study(**{"pRMSNorm (6.25%)": shifted(rms, 0.0, jitter=0.05)})
    assert nb_claims.check_p4(estimate(), norm_study()).verdict == verdicts.REPRODUCED
    assert nb_claims.check_p4(estimate(), worse).verdict == verdicts.PARTLY  # as in the record
    assert nb_claims.check_p4(estimate(), noisy).verdict == verdicts.PARTLY  # LM undecided
    # 100 rows: the sd's standard error is 0.2 / sqrt(198) = 0.014, so 0.2 is 8 of them away
    assert nb_claims.check_p4(estimate(sd_at_1024=0.2), norm_study()).verdict == verdicts.PARTLY
    assert nb_claims.check_p4(estimate(mean_at_1024=0.9), worse).verdict == verdicts.NOT_REPRODUCED
    assert nb_claims.check_p4(estimate(sd_at_1024=0.2), worse).verdict == verdicts.NOT_REPRODUCED


def placement(pre_final, peri_final, peri_grad=(0.2, 0.1, 0.1), pre_grad=(0.3, 0.1, 0.1),
              jitter=0.05):  # fmt: skip
    """The P5 study: Pre-LN the same on every seed, Peri-LN's last block variance and first block
    gradient scaled by 1 + jitter * SEED_NOISE[i] on seed i, so the paired log ratios scatter."""
    finals = (2.3,) * SEEDS
    scale = [1 + jitter * z for z in SEED_NOISE]
    peri_variance = [[*peri_final[:-1], peri_final[-1] * s] for s in scale]
    return StudyResult(
        runs={
            "Post-LN": run(finals),
            "Pre-LN": run(
                finals, stream_variance_final=[list(pre_final)] * SEEDS,
                block_grad_norm_final=[list(pre_grad)] * SEEDS,
            ),
            "Peri-LN": run(
                finals, stream_variance_final=peri_variance,
                block_grad_norm_final=[[peri_grad[0] * s, *peri_grad[1:]] for s in scale],
            ),
        }
    )  # fmt: skip


def test_placement_summary():
    balanced = placement(pre_final=[200.0, 400.0, 800.0], peri_final=[5.0, 7.0, 9.0])
    summary = nb_claims.placement_summary(balanced)
    assert summary["Pre-LN"]["growth_in_training"] == [800 / 3] * SEEDS
    assert summary["Pre-LN"]["growth_over_depth"] == [800 / 200] * SEEDS
    assert summary["Pre-LN"]["grad_spread"] == pytest.approx([3.0] * SEEDS)
    assert summary["Peri-LN"]["last_variance"][0] == pytest.approx(9 * (1 + 0.05 * SEED_NOISE[0]))
    assert summary["Peri-LN"]["growth_over_depth"][0] == pytest.approx(
        9 * (1 + 0.05 * SEED_NOISE[0]) / 5
    )


def spike_curve(spikes: int, jump: float, seed: int, steps: int = 60) -> list:
    """A gently falling gradient-norm curve with `spikes` steps jumping to `jump` times it."""
    curve = [3.0 * 0.99**t * (1 + 0.01 * math.sin(seed + t)) for t in range(steps)]
    for k in range(spikes):
        curve[15 + 12 * k] *= jump
    return curve


def spike_study(pre_spikes, peri_spikes, pre_jump=5.0, peri_jump=2.5, lrs=(1e-2, 3e-2)):
    """Per lr, Pre-LN with `pre_spikes[i]` spikes on seed i, Peri-LN with `peri_spikes[i]`."""
    runs = {}
    for lr in lrs:
        for name, counts, jump in (("Pre-LN", pre_spikes, pre_jump),
                                   ("Peri-LN", peri_spikes, peri_jump)):  # fmt: skip
            curves = [spike_curve(k, jump if k else 1.0, i) for i, k in enumerate(counts)]
            runs[f"{name}, lr {lr:g}"] = {
                "lr": lr, "seeds": list(range(len(counts))), "steps": 60,
                "grad_norm": curves, "final_loss": [2.3] * len(counts),
                "diverged_at": [None] * len(counts),
                "spikes": [stats.spike_steps(c) for c in curves],
            }  # fmt: skip
    return StudyResult(runs=runs)


STEADY = spike_study([2, 3, 2, 3, 2, 3], [0, 1, 0, 0, 1, 0])  # Peri-LN: fewer, smaller spikes
SAME = spike_study([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1], pre_jump=3.0, peri_jump=3.0)


def test_spike_summary_counts_each_runs_spikes_and_largest_jump():
    summary = nb_claims.spike_summary(STEADY)
    assert set(summary) == {1e-2, 3e-2}
    assert summary[1e-2]["Pre-LN"]["spikes"] == [2, 3, 2, 3, 2, 3]
    assert summary[1e-2]["Peri-LN"]["spikes"] == [0, 1, 0, 0, 1, 0]
    assert summary[1e-2]["Pre-LN"]["largest_jump"][0] == pytest.approx(5.0, rel=0.05)


def balanced_study():
    return placement(pre_final=[200.0, 400.0, 800.0], peri_final=[5.0, 7.0, 9.0])


def test_check_p5_can_fail():
    pre = [200.0, 400.0, 800.0]  # Pre-LN: variance 800 at the end, 4x over depth, grads 3x apart
    balanced = placement(pre_final=pre, peri_final=[5.0, 7.0, 9.0])
    assert nb_claims.check_p5(balanced, balanced, STEADY, STEADY).verdict == verdicts.REPRODUCED
    # smaller and steadier, with a steeper rise over depth than Pre-LN's: shown, not graded
    steeper = placement(pre_final=pre, peri_final=[5.0, 20.0, 60.0])
    finding = nb_claims.check_p5(steeper, steeper, STEADY, STEADY)
    assert finding.verdict == verdicts.REPRODUCED
    assert re.search(r"variance rise from block 1 to L [0-9.]+x \[", finding.ours)
    assert "(shown, not graded)" in finding.ours
    smaller_only = placement(
        pre_final=pre, peri_final=[100.0, 200.0, 400.0], peri_grad=(0.9, 0.1, 0.1)
    )
    assert nb_claims.check_p5(smaller_only, smaller_only, STEADY, STEADY).verdict == verdicts.PARTLY
    assert (
        nb_claims.check_p5(balanced, balanced, SAME, SAME).verdict == verdicts.PARTLY
    )  # spikes undecided
    # Peri-LN larger, steeper and less even on every measure, and spikier
    reversed_ = placement(pre_final=[5.0, 7.0, 9.0], peri_final=[200.0, 400.0, 800.0],
                          peri_grad=(0.9, 0.1, 0.1))  # fmt: skip
    spikier = spike_study([0, 1, 0, 0, 1, 0], [2, 3, 2, 3, 2, 3], pre_jump=2.5, peri_jump=5.0)
    assert (
        nb_claims.check_p5(reversed_, reversed_, spikier, spikier).verdict
        == verdicts.NOT_REPRODUCED
    )
    # Peri-LN the same as Pre-LN up to seed-to-seed scatter: no measure decides
    same = placement(pre_final=pre, peri_final=pre, peri_grad=(0.3, 0.1, 0.1))
    assert nb_claims.check_p5(same, same, SAME, SAME).verdict == verdicts.INCONCLUSIVE
    # the first seeds are shown, never graded: reversed there, reproduced on the fresh seeds
    finding = nb_claims.check_p5(balanced, reversed_, STEADY, spikier)
    assert (
        finding.verdict == verdicts.REPRODUCED
        and "(on seeds 0-9, not graded: last block" in finding.ours
    )


def test_check_p5_counts_diverged_runs():
    diverged = placement(pre_final=[200.0, 400.0, 800.0], peri_final=[5.0, 7.0, 9.0])
    peri = diverged.runs["Peri-LN"]
    peri["final_loss"][0] = None  # a diverged run has no loss and no final statistics
    peri["stream_variance_final"][0] = peri["block_grad_norm_final"][0] = None
    finding = nb_claims.check_p5(diverged, diverged, STEADY, STEADY)
    assert (
        finding.verdict == verdicts.NOT_REPRODUCED and "1 Pre-LN or Peri-LN run(s)" in finding.ours
    )
    spiky = spike_study([2] * 6, [0] * 6)
    spiky.runs["Pre-LN, lr 0.03"]["final_loss"][2] = None
    assert (
        nb_claims.check_p5(balanced_study(), balanced_study(), spiky, STEADY).verdict
        == verdicts.NOT_REPRODUCED
    )


def test_spike_run_logs_each_seeds_global_gradient_norm(no_store):
    """Step 0's logged norm is the norm of the gradient of the seed's own unbatched model, as
    lm_training builds it (same init, same first batch)."""
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import spike_run
    from lnpaper.data.synthetic_language import SyntheticLanguage
    from lnpaper.models.transformer import next_token_loss

    result = spike_run(placement="peri", lr=1e-2, seeds=(0, 3), steps=12, n_layers=2)
    assert [len(n) for n in result.grad_norm] == [12, 12] and result.diverged_at == [None, None]
    assert result.spikes == [stats.spike_steps(n) for n in result.grad_norm]
    language = SyntheticLanguage()
    for i, seed in enumerate((0, 3)):
        torch.manual_seed(seed)
        model = TransformerLM(
            TransformerConfig(
                language.vocab_size, d_model=64, n_layers=2, n_heads=2, max_len=16, placement="peri"
            )
        )
        first = language.sample(12 * 16, 17, seed=seed)[:16]
        next_token_loss(model, first).backward()
        norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters())).item()
        assert result.grad_norm[i][0] == pytest.approx(norm, rel=1e-5)
    assert all(v is not None and 1.0 < v < 4.0 for v in result.final_loss)


# ---- P3 from measured times ------------------------------------------------------------------------


def timing(ratios_by_setting, rounds=5):
    """A TimingResult whose per-round RMSNorm / LayerNorm ratios are given per setting and way:
    {setting: {way: (forward ratio, fwd+bwd ratio)}}; LayerNorm takes 1 ms in every round."""
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import TimingResult

    times = {}
    for setting, ways in ratios_by_setting.items():
        entry = {}
        for way, (rms, ln) in bench.PAIRS.items():
            fwd, both = ways[way]
            wobble = [1 + 0.01 * k for k in range(rounds)]
            entry[ln] = {"forward": [1e-3 * w for w in wobble],
                         "forward_backward": [2e-3 * w for w in wobble]}  # fmt: skip
            entry[rms] = {"forward": [1e-3 * w * fwd for w in wobble],
                          "forward_backward": [2e-3 * w * both for w in wobble]}  # fmt: skip
        times[setting] = entry
    return TimingResult(shapes=[[4, 8]], threads=[1, 2], rounds=rounds, machine="test",
                        times=times)  # fmt: skip


def traffic_result():
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import TrafficResult

    names = [name for pair in bench.PAIRS.values() for name in pair]
    return TrafficResult(shape=[4, 8], forward=dict.fromkeys(names, 5.0),
                         forward_backward=dict.fromkeys(names, 9.0), forward_ops={})  # fmt: skip


def test_time_ratio_is_the_median_of_per_round_ratios():
    times = {"a": {"forward": [1.0, 3.0, 10.0]}, "b": {"forward": [2.0, 2.0, 2.0]}}
    assert nb_claims.time_ratio(times, "a", "b", "forward") == 1.5


def test_check_p3_grades_measured_times_and_can_fail():
    alike = {"as shipped": (0.6, 0.7), "one op per step": (0.6, 0.7), "fewest passes": (0.8, 0.85)}
    shipped_slow = {**alike, "as shipped": (1.3, 2.5)}
    saves = timing({"s, 1 thread(s)": alike, "s, 2 thread(s)": alike})
    assert nb_claims.check_p3(traffic_result(), saves).verdict == verdicts.REPRODUCED
    # PyTorch's fused LayerNorm beating its composed RMSNorm is reported, not graded
    as_measured = timing({"s, 1 thread(s)": shipped_slow, "s, 2 thread(s)": shipped_slow})
    assert nb_claims.check_p3(traffic_result(), as_measured).verdict == verdicts.REPRODUCED
    one_way_slow = {**alike, "fewest passes": (1.3, 0.85)}
    half = timing({"s, 1 thread(s)": one_way_slow, "s, 2 thread(s)": one_way_slow})
    assert nb_claims.check_p3(traffic_result(), half).verdict == verdicts.PARTLY
    slower = {way: (1.3, 1.4) for way in bench.PAIRS}
    lost = timing({"s, 1 thread(s)": slower, "s, 2 thread(s)": slower})
    assert nb_claims.check_p3(traffic_result(), lost).verdict == verdicts.NOT_REPRODUCED
    # a ratio that saves with one thread and costs with two decides nothing
    level = {way: (1.0, 1.05) for way in bench.PAIRS}
    split = timing({"s, 1 thread(s)": alike, "s, 2 thread(s)": slower})
    for verdict_of in (split, timing({"s, 1 thread(s)": level, "s, 2 thread(s)": level})):
        assert nb_claims.check_p3(traffic_result(), verdict_of).verdict == verdicts.INCONCLUSIVE
    finding = nb_claims.check_p3(traffic_result(), as_measured)
    assert "as shipped fwd+bwd 2.50-2.50 (fails)" in finding.ours and "GPU" in finding.ours
    assert finding.ours.index("not graded") < finding.ours.index("as shipped")


def test_norm_timing_keeps_every_round_per_setting(no_store):
    from lnpaper.chapters.ch07_rmsnorm_placement.runs import norm_timing

    result = norm_timing(shapes=((8, 16),), threads=(1,), rounds=3, warmup=1)
    assert list(result.times) == ["8x16, 1 thread(s)"]
    times = result.times["8x16, 1 thread(s)"]
    assert set(times) == set(bench.candidates(16))
    assert all(len(t["forward"]) == len(t["forward_backward"]) == 3 for t in times.values())
    assert all(v > 0 for t in times.values() for v in t["forward"] + t["forward_backward"])


def test_ratios_to_floor_divide_each_summary_by_the_clones():
    import statistics

    times = {
        bench.FLOOR: ([1.0, 2.0, 9.0], [4.0, 4.0, 4.0]),
        "x": ([3.0, 4.0, 5.0], [8.0, 1.0, 9.0]),
    }
    fastest = bench.ratios_to_floor(times)
    assert fastest["x"] == (3.0, 0.25) and fastest["floor ms"] == (1e3, 4e3)
    middle = bench.ratios_to_floor(times, statistics.median)
    assert middle["x"] == (2.0, 2.0) and middle[bench.FLOOR] == (1.0, 1.0)


def recentred(rms_losses, ln_losses=LAYERNORM_LOSSES):
    return StudyResult(runs={
        "LayerNorm": {**run(ln_losses), "center": 0.2},
        "RMSNorm": {**run(rms_losses), "center": 0.2},
    })  # fmt: skip


def test_check_p2c_needs_every_rmsnorm_run_to_train_and_no_worse_loss():
    def verdict(rms_losses):
        return nb_claims.check_p2c(recentred(rms_losses)).verdict

    assert verdict(shifted(LAYERNORM_LOSSES, -0.002)) == verdicts.REPRODUCED
    assert verdict(shifted(LAYERNORM_LOSSES, 0.1)) == verdicts.NOT_REPRODUCED
    assert verdict(shifted(LAYERNORM_LOSSES, 0.02)) == verdicts.INCONCLUSIVE
    # one RMSNorm run ends above the bigram level (2.34): it did not train, however the rest do
    stalled = (2.5, *shifted(LAYERNORM_LOSSES, -0.3)[1:])
    assert verdict(stalled) == verdicts.NOT_REPRODUCED
    finding = nb_claims.check_p2c(recentred(stalled))
    assert "runs that do not train: LayerNorm 0, RMSNorm 1" in finding.ours
    assert finding.quantities[0].label == "RMSNorm runs that do not train"
