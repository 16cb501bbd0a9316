"""Notebook 10, "what the norm computes": E1's exactness and drift measures, the batched variant
runs of E2 and Y1 (settings, data budgets, saturation), and the checks' verdicts on made-up
results that should pass, fail or stay undecided."""

import dataclasses
import math

import pytest
import torch

from lnpaper.chapters.ch06_transformer.runs import StudyResult
from lnpaper.chapters.ch10_what_the_norm_computes import analysis as analysis_mean
from lnpaper.chapters.ch10_what_the_norm_computes import claims as nb_claims
from lnpaper.chapters.ch10_what_the_norm_computes import runs as ex
from lnpaper.companion import verdicts
from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models.transformer import TransformerConfig, TransformerLM
from lnpaper.models.zero_mean import zero_mean_rmsnorm

LANGUAGE = SyntheticLanguage()


def small_model(seed=0, **options):
    torch.manual_seed(seed)
    return TransformerLM(
        TransformerConfig(
            LANGUAGE.vocab_size, d_model=16, n_layers=2, n_heads=2, max_len=8, **options
        )
    )


def perturbed(model):
    """Non-trivial gains, biases and a mean in every writer, as training leaves them."""
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=generator, dtype=p.dtype))
    return model


def test_rewrite_is_exact_and_a_plain_swap_is_not():
    model = perturbed(small_model())
    tokens = LANGUAGE.sample(8, 8, seed=3)
    diff, scale = ex._max_logit_diff(model, tokens)
    assert diff < nb_claims.EXACT_BOUND, diff
    assert scale > 1.0
    swapped = zero_mean_rmsnorm(model)  # now undo the centering: RMSNorm on a stream with a mean
    swapped.load_state_dict(
        {**swapped.state_dict(), "token_embedding.weight": model.token_embedding.weight + 0.5}
    )
    with torch.no_grad():
        off = (swapped(tokens) - model(tokens)).abs().max().item()
    assert off > 1e-3, f"an uncentered stream should change RMSNorm's output, moved {off}"


def test_norm_inputs_have_zero_mean_only_after_the_rewrite():
    model = perturbed(small_model()).double()
    tokens = LANGUAGE.sample(8, 8, seed=3)
    assert ex._norm_input_means(model, tokens) > 1e-2
    assert ex._norm_input_means(zero_mean_rmsnorm(model), tokens) < 1e-12


def test_zero_mean_drift_starts_at_roundoff_and_logs_every_comparison(no_store):
    result = ex.zero_mean_drift(seeds=(0, 1), steps=4, compare_every=2, d_model=16, n_layers=2,
                                length=8)  # fmt: skip
    assert result.monitor_steps == [0, 2, 4]
    assert all(len(row) == 3 for row in result.logit_drift + result.loss_drift)
    assert max(result.max_logit_diff_init, result.max_logit_diff_trained) < 1e-10
    assert all(row[0] < 1e-4 for row in result.logit_drift), "float32 rewrite at init"
    assert all(row[-1] > row[0] for row in result.logit_drift), "Adam moves the forms apart"
    assert len(result.final_loss_layernorm) == len(result.final_loss_rmsnorm) == 2


def test_variant_runs_key_settings_and_cycle_the_pool(no_store):
    result = ex.norm_variant_training(norm="dyt", alpha_inits=(0.2, 1.0), budgets=("fresh", "pool"),
                                      seeds=(0, 1), steps=3, pool_size=16, d_model=16,
                                      n_layers=2, length=8, log_every=1)  # fmt: skip
    assert set(result.final_loss) == {f"alpha {a}, {b}" for a in ("0.2", "1") for b in ex.BUDGETS}
    # the pool is the fresh stream's first batch, so at step 0 both budgets see the same batch
    first = {name: [row[0] for row in runs] for name, runs in result.train_loss.items()}
    assert first["alpha 0.2, fresh"] == pytest.approx(first["alpha 0.2, pool"], rel=1e-6)
    assert first["alpha 0.2, fresh"] != pytest.approx(first["alpha 1, fresh"], rel=1e-3)
    slots = 2 * 2 + 1
    assert all(len(row) == slots for rows in result.saturation_final.values() for row in rows)
    low, high = (
        analysis_mean.mean_saturation(dataclasses.asdict(result), f"alpha {a}, fresh", "init")
        for a in ("0.2", "1")
    )
    assert max(low) < min(high), "a larger alpha saturates more values at init"


def test_saturation_counts_values_beyond_two():
    model = small_model(norm="dyt", alpha_init=1.0)
    tokens = LANGUAGE.sample(4, 8, seed=5)
    fractions, alphas = ex._saturation(model, tokens)
    assert alphas == [1.0] * 5
    x = model.embed(tokens)  # the first slot reads the embedding: N(0, 1) values
    expected = (x.abs() > 2).double().mean().item()
    assert fractions[0] == pytest.approx(expected)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="needs alpha_inits"):
        ex.norm_variant_training.__wrapped__(norm="dyt")
    with pytest.raises(ValueError, match="no alpha"):
        ex.norm_variant_training.__wrapped__(norm="layernorm", alpha_inits=(0.5,))
    with pytest.raises(ValueError, match="budgets"):
        ex.norm_variant_training.__wrapped__(budgets=("lots",))
    with pytest.raises(ValueError, match="pool_size"):
        ex.norm_variant_training.__wrapped__(pool_size=20)


# ---- the checks, on made-up results --------------------------------------------------------


def losses(base, shift, n=10):
    return [base + 0.01 * math.sin(i) + shift + 0.001 * (i % 3) for i in range(n)]


def variant_run(final_loss: dict, steps=150, seeds=10, pool_size=64):
    return {"final_loss": final_loss, "lr": 3e-3, "steps": steps, "seeds": list(range(seeds)),
            "pool_size": pool_size}  # fmt: skip


def detach_study(simple, both, mean=0.05, std=0.1):
    runs = {"LayerNorm": variant_run({"fresh": losses(2.0, 0.0)})}
    for name, shift in (("LayerNorm-simple", simple), ("both detached", both),
                        ("mean detached", mean), ("std detached", std)):  # fmt: skip
        runs[name] = variant_run({"fresh": losses(2.0, shift)})
    return StudyResult(runs=runs)


@pytest.mark.parametrize(
    "simple, expected",
    [
        (-0.05, verdicts.REPRODUCED),  # better by more than the 0.02-nat margin
        (-0.005, verdicts.PARTLY),  # below 0, but by a negligible amount: no worse, not better
        (0.002, verdicts.PARTLY),
        (0.2, verdicts.NOT_REPRODUCED),
    ],
)
def test_e2_grades_better_no_worse_and_worse(simple, expected):
    finding = nb_claims.check_e2(detach_study(simple, 0.1))
    assert finding.verdict == expected
    if expected == verdicts.PARTLY:  # its "no worse" held, its "better" is negligible
        assert finding.partly_kind == verdicts.NO_BETTER.kind


def overfit_study(simple_shift, pool=2.1, fresh=1.85):
    """E2d's study: LayerNorm at `pool` on the pool and `fresh` on fresh data; LayerNorm-simple
    `simple_shift` from it on the pool, level with it on fresh data."""
    runs = {}
    for name, shift in (("LayerNorm", 0.0), ("LayerNorm-simple", simple_shift)):
        runs[name] = variant_run({"fresh": losses(fresh, 0.0), "pool": losses(pool, shift)},
                                 steps=300, pool_size=512)  # fmt: skip
        runs[name]["seeds"] = list(range(10, 20))
    return StudyResult(runs=runs)


@pytest.mark.parametrize(
    "study, expected",
    [
        (overfit_study(-0.05), verdicts.REPRODUCED),
        (overfit_study(-0.005), verdicts.NEGLIGIBLE),  # its one effect, negligible
        (overfit_study(0.1), verdicts.NOT_REPRODUCED),
        # the premise: LayerNorm does not over-fit the pool (pool within 0.01 of fresh)
        (overfit_study(-0.05, pool=1.86), verdicts.NOT_EXERCISED),
        # ... or its pool runs do not train (above the bigram level)
        (overfit_study(-0.05, pool=2.5), verdicts.NOT_EXERCISED),
    ],
)
def test_e2d_grades_only_where_layernorm_trains_and_over_fits(study, expected):
    finding = nb_claims.check_e2d(study)
    assert finding.verdict == expected
    assert "seeds 10-19" in finding.ours


def test_e2b_needs_detaching_both_to_hurt():
    assert nb_claims.check_e2b(detach_study(0.0, 0.1)).verdict == verdicts.REPRODUCED
    assert nb_claims.check_e2b(detach_study(0.0, -0.1)).verdict == verdicts.NOT_REPRODUCED


def after_dyt(pool_shift, fresh_shift, n=6, pool=2.2):
    """Y1's study; `pool` is LayerNorm's held-out loss on the pool (2.2: below the bigram level,
    so the pool runs train)."""
    runs = {"LayerNorm": variant_run({"fresh": losses(2.0, 0, n), "pool": losses(pool, 0, n)},
                                     seeds=n)}  # fmt: skip
    for method in ("DyT", "Derf"):
        runs[method] = variant_run({f"alpha {a:g}, fresh": losses(2.0, fresh_shift, n)
                                    for a in analysis_mean.Y1_ALPHAS}, seeds=n)  # fmt: skip
        runs[f"{method}, pool"] = variant_run({"alpha 0.5, pool": losses(pool, pool_shift, n)},
                                              seeds=n)  # fmt: skip
    return StudyResult(runs=runs)


@pytest.mark.parametrize(
    "pool, fresh, expected",
    [(-0.1, 0.1, verdicts.REPRODUCED), (-0.1, -0.1, verdicts.PARTLY),
     (0.1, -0.1, verdicts.NOT_REPRODUCED)],
)  # fmt: skip
def test_y1_needs_both_regimes(pool, fresh, expected):
    assert nb_claims.check_y1(after_dyt(pool, fresh)).verdict == expected
    assert nb_claims.check_y1b(after_dyt(pool, fresh)).verdict == verdicts.NOT_CHECKABLE


def test_y1s_scarce_regime_is_not_exercised_where_no_pool_run_trains():
    """Models that all end worse than a uniform guess on the pool have memorized it: DyT being
    'better' there says nothing about scarce data, whichever way it points."""
    for pool_shift in (-0.1, 0.1):
        found = nb_claims.check_y1(after_dyt(pool_shift, 0.1, pool=4.5))
        assert found.verdict == verdicts.NOT_EXERCISED, found.ours
        assert "0 of 12 runs" in found.ours


def drift_result(init_diff, rms_shift):
    n = 10
    return ex.ZeroMeanDriftResult(
        seeds=list(range(n)), d_model=64, n_layers=6, lr=3e-3, steps=100,
        monitor_steps=[0, 100], max_logit_diff_init=init_diff, max_logit_diff_trained=init_diff,
        logit_scale=10.0, max_stream_mean_init=1e-16, stream_mean_trained=[0.1] * n,
        logit_drift=[[1e-6, 0.5]] * n, loss_drift=[[0.0, rms_shift]] * n,
        final_loss_layernorm=losses(2.0, 0.0), final_loss_rmsnorm=losses(2.0, rms_shift),
        initial_loss=[2.8] * n,
    )  # fmt: skip


def test_e1_grades_exactness_and_the_trained_match():
    assert nb_claims.check_e1(drift_result(1e-15, 0.001)).verdict == verdicts.REPRODUCED
    assert nb_claims.check_e1(drift_result(1e-6, 0.001)).verdict == verdicts.PARTLY
    assert nb_claims.check_e1(drift_result(1e-6, 0.2)).verdict == verdicts.NOT_REPRODUCED


def constrained_result(kept_gap, folded_gap):
    gaps = {nb_claims.KEPT: kept_gap, nb_claims.FOLDED: folded_gap}
    arms = {arm: [[1e-15, gaps.get(arm, 0.8)]] * 4 for arm in ex.CONSTRAINED_ARMS}
    return ex.ConstrainedDriftResult(
        seeds=[0, 1, 2, 3], steps=100, lrs={"adam": 3e-3, "sgd": 0.3}, monitor_steps=[0, 100],
        logprob_gap={"adam": arms, "sgd": arms},
        final_loss={o: {a: [2.2] * 4 for a in ["LayerNorm", *ex.CONSTRAINED_ARMS]}
                    for o in ("adam", "sgd")},
        stream_mean={o: {a: [1e-16] * 4 for a in ex.CONSTRAINED_ARMS} for o in ("adam", "sgd")},
    )  # fmt: skip


@pytest.mark.parametrize(
    "kept, folded, expected",
    [(1e-13, 1e-12, verdicts.REPRODUCED), (1e-13, 0.5, verdicts.REPRODUCED),  # fold not graded
     (1e-3, 1e-12, verdicts.NOT_REPRODUCED), (1e-3, 0.5, verdicts.NOT_REPRODUCED)],
)  # fmt: skip
def test_e1c_grades_one_model_or_two(kept, folded, expected):
    assert nb_claims.check_e1c(constrained_result(kept, folded)).verdict == expected


@pytest.mark.slow
def test_constrained_drift_keeps_one_model_only_when_kept_zero_mean_and_unfolded(no_store):
    result = ex.constrained_drift(seeds=(0, 1), steps=6, compare_every=3, d_model=16,
                                  n_layers=2, length=8)  # fmt: skip
    assert result.monitor_steps == [0, 3, 6]
    for optimizer in ("adam", "sgd"):
        gaps = result.logprob_gap[optimizer]
        assert all(len(row) == 3 for rows in gaps.values() for row in rows)
        assert all(row[0] < 1e-12 for rows in gaps.values() for row in rows), "same at init"
        assert max(max(row) for row in gaps["kept zero-mean, biases kept"]) < 1e-10
        for arm in ("kept zero-mean, biases folded", "free, biases folded"):
            assert min(row[-1] for row in gaps[arm]) > 1e-4, f"{arm} stayed on the trajectory"
        kept_means = result.stream_mean[optimizer]["kept zero-mean, biases folded"]
        assert max(kept_means) < 1e-12
        assert min(result.stream_mean[optimizer]["free, biases folded"]) > 1e-6
        assert result.final_loss[optimizer]["kept zero-mean, biases kept"] == pytest.approx(
            result.final_loss[optimizer]["LayerNorm"], abs=1e-10
        )


def data_rich(dyt, layernorm):
    def run(setting, finals):
        return {"seeds": list(range(len(finals))), "steps": 400,
                "final_loss": {setting: finals}}  # fmt: skip

    return StudyResult(runs={"LayerNorm": run("fresh", layernorm),
                             "DyT": run("alpha 0.5, fresh", dyt)})  # fmt: skip


@pytest.mark.parametrize(
    "shift, expected",
    [(0.15, verdicts.REPRODUCED), (-0.15, verdicts.NOT_REPRODUCED), (0.0, verdicts.INCONCLUSIVE)],
)
def test_y1c_grades_dyt_behind_at_the_rich_budget(shift, expected):
    layernorm = losses(1.5, 0.0)
    finding = nb_claims.check_y1c(data_rich(losses(1.5, shift), layernorm))
    assert finding.verdict == expected and "T/P 1.95" in finding.ours
    diverged = nb_claims.check_y1c(data_rich([None, *losses(1.6, 0.0)[1:]], layernorm))
    assert diverged.verdict == verdicts.INCONCLUSIVE


def test_tokens_per_parameter_counts_the_model():
    assert analysis_mean.tokens_per_parameter(150) == pytest.approx(150 * 256 / 52_432)


def simple_sweep(simple_by_rate, layernorm_by_rate, train=None):
    """simple_lr_sweep: "LayerNorm-simple, lr 0.001" -> a run with those held-out losses; the last
    window's training loss equals the held-out mean unless `train` sets it."""
    train = train or {}
    runs = {}
    for name, by_rate in (("LayerNorm-simple", simple_by_rate), ("LayerNorm", layernorm_by_rate)):
        for lr, finals in zip(analysis_mean.SIMPLE_LRS, by_rate, strict=True):
            key = f"{name}, lr {lr:g}"
            last = train.get(key, sum(f for f in finals if f is not None) / len(finals))
            runs[key] = {"final_loss": {"fresh": finals},
                         "train_loss": {"fresh": [[3.0, last]] * len(finals)}}  # fmt: skip
    return StudyResult(runs=runs)


def test_e2c_picks_by_training_loss_and_grades_as_e2():
    layernorm = [losses(2.2, 0.0), losses(2.1, 0.0), losses(2.15, 0.0)]
    level = [losses(2.2, 0.0), losses(2.1, -0.003), losses(2.15, 0.0)]
    assert nb_claims.simple_pick(simple_sweep(level, layernorm), "LayerNorm")[0] == 3e-3
    assert nb_claims.check_e2c(simple_sweep(level, layernorm)).verdict == verdicts.PARTLY
    better = [losses(2.2, 0.0), losses(2.05, 0.0), losses(2.15, 0.0)]
    assert nb_claims.check_e2c(simple_sweep(better, layernorm)).verdict == verdicts.REPRODUCED
    # LayerNorm-simple's training loss picks 1e-2, where its held-out loss is worse
    worse = simple_sweep(level, layernorm, train={"LayerNorm-simple, lr 0.01": 1.0})
    assert nb_claims.simple_pick(worse, "LayerNorm-simple")[0] == 1e-2
    assert nb_claims.check_e2c(worse).verdict == verdicts.NOT_REPRODUCED
    gone = [[None] * 10] * 3
    assert nb_claims.check_e2c(simple_sweep(gone, layernorm)).verdict == verdicts.NOT_REPRODUCED


def test_claim_ids_have_a_paper_facts_base():
    from lnpaper.chapters.ch10_what_the_norm_computes import CHAPTER

    for claim in CHAPTER.claims:
        assert claim.id[:2] in {"E1", "E2", "Y1"}
        assert claim.notebook == "10_what_the_norm_computes"
