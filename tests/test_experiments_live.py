"""Every experiment the other tests only read from the record, run live at small arguments (a few
steps, two seeds), and its claim's check run on what it returns: a bug in an experiment's code
shows here, in the unit suite, not first in the 20-minute reproduction check."""

import math

import pytest

from lnpaper import ledger
from lnpaper.chapters.ch02_transpose import runs as ch02_runs
from lnpaper.chapters.ch03_layernorm_in_rnns import analysis as ch03_analysis
from lnpaper.chapters.ch03_layernorm_in_rnns import runs as ch03_runs
from lnpaper.chapters.ch04_batchnorm_against_layernorm import analysis as ch04_analysis
from lnpaper.chapters.ch06_transformer import analysis as ch06_analysis
from lnpaper.chapters.ch06_transformer.runs import StudyResult
from lnpaper.chapters.ch07_rmsnorm_placement import analysis as ch07_analysis
from lnpaper.chapters.ch07_rmsnorm_placement import runs as ch07_runs
from lnpaper.chapters.ch08_deep_stacks import analysis as ch08_analysis
from lnpaper.chapters.ch08_deep_stacks import runs as ch08_runs
from lnpaper.chapters.ch09_logits_and_placement import analysis as ch09_analysis
from lnpaper.chapters.ch09_logits_and_placement import runs as ch09_runs
from lnpaper.chapters.ch10_what_the_norm_computes import analysis as ch10_analysis
from lnpaper.companion import record
from lnpaper.companion.verdicts import VERDICTS

pytestmark = pytest.mark.slow  # every experiment run live at small arguments: about a minute


@pytest.fixture(autouse=True)
def live():
    """A live run: computed here, in memory, nothing read from or written to the record."""
    with record.using("off"):
        yield


def finite_numbers(value) -> list[float]:
    """Every number in a result, nested in dicts, lists and dataclass dicts."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in finite_numbers(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in finite_numbers(v)]
    if hasattr(value, "__dataclass_fields__"):
        return finite_numbers(vars(value))
    return []


def check(claim_id: str, *results) -> None:
    claim = ledger.BY_ID[claim_id]
    assert len(results) == len(claim.experiments), f"{claim_id} reads {claim.experiments}"
    finding = claim.check(*results)
    assert finding.verdict in VERDICTS and finding.ours, claim_id


TWO = (0, 1)


def test_rnn_dynamics_at_another_gain():
    result = ch03_runs.rnn_dynamics_gain(gain=2.0, seed=1)
    check("R2", result, {1.0: [result], 2.0: [result]})


def test_layernorm_parity_and_backward_parity():
    parity = ch02_runs.layernorm_parity(shapes=((2, 8), (3, 16)))
    backward = ch02_runs.backward_parity(shape=(3, 8))
    check("F1", parity)
    check("F3", backward)


def test_xiong_setting():
    result = ch06_analysis.xiong_setting(seeds=TWO, d_model=16)
    assert result.post and result.pre


def test_normalization_study_and_its_claims():
    study = ch06_analysis.normalization_study(seeds=TWO, steps=4, warmup_steps=2)
    assert len(study.runs) >= 6
    check("T3", study)
    confirmation = ch06_analysis.t4_confirmation(steps=4, warmup_steps=2)
    assert [len(run["seeds"]) for run in confirmation.runs.values()] == [30, 30]
    check("T4", confirmation, study)


def test_tfixup_study():
    study = ch06_analysis.tfixup_study(n_layers=2, seeds=TWO, steps=3)
    assert study.runs
    check("T5e", ch06_analysis.deep_tfixup_study(n_layers=3, seeds=TWO, steps=3))


def test_rmsnorm_and_placement_studies():
    rms = ch06_analysis.rmsnorm_study(seeds=TWO, steps=3)
    placement = ch07_analysis.placement_study(seeds=TWO, steps=3)
    assert rms.runs and placement.runs
    check("P2", rms)
    recentred = StudyResult(runs={
        name: vars(ch07_runs.recentred_training(norm=norm, seeds=TWO, steps=3))
        for name, norm in (("LayerNorm", "layernorm"), ("RMSNorm", "rmsnorm"))
    })  # fmt: skip
    check("P2c", recentred)


def test_dyt_lr_sweep_and_the_rate_below_it():
    sweep = ch06_analysis.dyt_lr_sweep(seeds=TWO, steps=3)
    below = ch06_analysis.layernorm_below_sweep(seeds=TWO, steps=3)
    rms_sweep = ch06_analysis.rmsnorm_lr_sweep(seeds=TWO, steps=3)
    assert len(sweep.runs) == len(rms_sweep.runs) == 6 and below.lr == 3e-4
    check("T6b", sweep)
    check("P2b", rms_sweep)


def test_long_sweeps():
    fixup = ch06_analysis.long_tfixup_sweep(n_layers=2, seeds=TWO, steps=3, warmup_steps=2)
    dyt = ch06_analysis.long_dyt_sweep(seeds=TWO, steps=3, warmup_steps=2)
    assert len(fixup.runs) == len(dyt.runs) == 6
    check("T5d", fixup)
    check("T6c", dyt)


def test_qk_sweep_and_reordered_study():
    sweep = ch09_analysis.qk_sweep(lrs=(1e-2, 1e-1), seeds=TWO, steps=3)
    reordered = ch09_analysis.reordered_study(lrs=(3e-2, 1e-1), seeds=TWO, steps=12)
    assert set(sweep.runs) and set(reordered.runs) == {"Pre-LN", "reordered"}
    check("Q1", sweep)
    check("O1", reordered, reordered)


def test_gain_decay():
    result = ch09_runs.gain_decay(seeds=TWO, steps=3, n_layers=2)
    assert all(math.isfinite(v) for v in finite_numbers(result.mean_gain))
    check("G1", result)
    check("G1b", result, result)
    excluded = ch09_runs.gain_decay_excluded(seeds=TWO, steps=3, n_layers=2)
    assert len(excluded.excluded) == 2 * 4 + 1  # four norms per peri block, and the final one
    check("G1c", result, excluded, result, excluded)


def test_deepnorm_halves():
    full = ch08_runs.deepnorm_study(seeds=TWO, steps=3, update_steps=2)
    halves = ch08_analysis.deepnorm_halves(seeds=TWO, steps=3, update_steps=2)
    assert set(halves.model_update) == {"pre", "deepnorm-alpha", "deepnorm-beta"}
    check("D1b", full, halves)
    deep = ch08_analysis.deepnorm_deep(seeds=TWO, n_layers=4)
    check("D1c", deep)
    check("D1d", deep)


def test_admin_and_mix_ln_trained():
    admin = ch08_analysis.admin_training(seeds=TWO, n_layers=4, steps=20)
    assert set(admin.final_loss) == {"post", "admin", "pre"}
    check("A2b", admin)
    mix = ch08_analysis.mix_training(seeds=TWO, steps=20)  # 20 steps: D1's update log
    assert set(mix.final_loss) == {"post", "pre", "mix"}
    check("X1b", mix)


def test_branch_dependence():
    result = ch08_runs.branch_dependence(depths=(2, 4), seeds=TWO, draws=1, d_model=16)
    check("A2", result)


def test_after_dyt_study():
    study = ch10_analysis.after_dyt_study(seeds=TWO, steps=3)
    assert study.runs
    check("Y1", study)
    simple = ch10_analysis.simple_lr_sweep(seeds=TWO, steps=3)
    assert len(simple.runs) == 6
    check("E2c", simple)
    rich = ch10_analysis.dyt_data_rich(seeds=TWO, steps=3)
    assert set(rich.runs) == {"LayerNorm", "DyT"}
    check("Y1c", rich)
    overfit = ch10_analysis.overfit_study(seeds=TWO, steps=3, pool_size=32)
    assert set(overfit.runs) == {"LayerNorm", "LayerNorm-simple"}
    check("E2d", overfit)


def test_recurrent_training_and_sequential_digits():
    # 8 steps evaluated at each: enough evaluations for the first and last quarters
    rows = ch03_analysis.recurrent_training(hidden=8, steps=8, seeds=TWO, eval_every=1,
                                          lrs=(1e-2,))  # fmt: skip
    pixels = ch04_analysis.sequential_digits(
        models=(*ch04_analysis.PIXEL_MODELS, ch04_analysis.RAW_INPUT), hidden=4, steps=8,
        seeds=TWO, eval_every=1, lrs=(1e-2,),
    )  # fmt: skip
    assert rows.runs and pixels.runs
    for claim_id in ("R3", "R3d", "R3e", "R4", "R4b"):
        check(claim_id, rows)
    late_pick = ch03_analysis.recurrent_training(
        models=ch03_analysis.LATE_PICK_MODELS, hidden=8, steps=8, seeds=TWO, eval_every=1,
        lrs=(1e-2, 3e-2),
    )  # fmt: skip
    check("R4d", late_pick)
    for claim_id in ("M4b", "M4c", "M4d", "M4h", "R3c", "R3h"):
        check(claim_id, pixels)
