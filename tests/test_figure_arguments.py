"""Every figure drawn from a result a reader made by changing one argument: a model or a setting
left out, a longer test, other sizes. The figure draws without an error, and its title states the
numbers of the result it draws, not those of the recorded default.

Most results here are the record's default result with one field changed as the experiment would
change it; a few are cheap live calls."""

import copy
import dataclasses
import functools
import re

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from lnpaper import book

FIGURES = book.figures()


@functools.cache
def _recorded(name: str):
    return FIGURES[name].experiment()


def recorded(name: str):
    """The record's default result of figure `name`'s experiment, a copy to change."""
    return copy.deepcopy(_recorded(name))


def drawn(name: str, result=None):
    """Figure `name` drawn from `result` and laid out, as saving it does."""
    spec = FIGURES[name]
    fig = spec.draw() if spec.experiment is None else spec.draw(result)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    if fig._suptitle is not None:  # a title that runs past the figure's edge is cut off
        right = fig._suptitle.get_window_extent(canvas.get_renderer()).x1
        assert right <= fig.bbox.x1 + 2, f"{name}'s title runs {right - fig.bbox.x1:.0f} px past it"
    return fig


def title(fig) -> str:
    """The figure's title, its lines joined by spaces."""
    return " ".join(fig._suptitle.get_text().split())


def texts(fig) -> str:
    """Every text of the figure, the titles of its panels and its legend included, one a line."""
    from matplotlib.text import Text

    return "\n".join(t.get_text() for t in fig.findobj(Text) if t.get_text())


def keep(values: list, indices) -> list:
    return [values[i] for i in indices]


# ---- notebook 01 --------------------------------------------------------------------------------


def test_exam_rulers_title_gives_the_grades_it_draws():
    fig = drawn("exam_rulers")
    scores = np.array([50.0, 58.0, 61.0, 66.0, 72.0])
    grade = (72 - scores.mean()) / scores.std()
    assert f"{grade:+.1f}" in title(fig)


def test_batch_dependence_without_batches_of_1_and_2():
    result = recorded("batch_dependence")
    kept = [i for i, size in enumerate(result.batch_sizes) if size >= 4]
    fields = ("batch_sizes", "mean_spread", "variance_spread", "variance_ratio", "output_spread")
    result = dataclasses.replace(
        result, **{field: keep(getattr(result, field), kept) for field in fields}
    )
    fig = drawn("batch_dependence", result)
    spread = dict(zip(result.batch_sizes, result.output_spread, strict=True))
    assert f"{spread[4]:.2f} sd at batch 4" in title(fig)
    assert "refused" not in texts(fig) and "batch of 1" not in texts(fig)


def test_train_vs_inference_title_reads_a_layernorm_gap():
    result = recorded("train_vs_inference")
    result.logit_gap["layernorm"][3] = 0.004  # a gap the default run does not have
    result.logit_gap["batchnorm"][0] = 0.0
    fig = drawn("train_vs_inference", result)
    assert "never" not in title(fig) and "0.004" in title(fig)
    assert f"at {len(result.eval_steps) - 1} of {len(result.eval_steps)}" in title(fig)


def test_lstm_statistics_with_more_hidden_units():
    result = dataclasses.replace(recorded("lstm_statistics"), hidden=64)
    assert "All 256 gate units" in texts(drawn("lstm_statistics", result))


def test_recurrent_batchnorm_at_another_test_length():
    result = recorded("lstm_statistics")
    result = dataclasses.replace(result, train_length=16)  # 48 steps: 3x, not 4x
    assert "to 3x the training" in title(drawn("recurrent_batchnorm", result))


@pytest.mark.parametrize("models", [("layernorm", "none"), ("batchnorm", "layernorm")])
def test_batch_size_with_some_models(models):
    result = recorded("batch_size")
    for field in ("curves", "final"):
        setattr(result, field, {m: v for m, v in getattr(result, field).items() if m in models})
    text = title(drawn("batch_size", result))
    assert "the paper's" not in text and "LayerNorm's test error" in text
    assert ("torch's BatchNorm's" in text) == ("batchnorm" in models)


# ---- notebook 02 --------------------------------------------------------------------------------


def test_transpose_table_draws():
    assert title(drawn("transpose_table"))


def test_per_token_independence_of_a_smaller_tensor():
    from lnpaper.chapters.ch02_transpose import runs

    result = runs.per_token_independence(batch=2, tokens=6, d_model=8)
    text = title(drawn("per_token_independence", result))
    assert f"by up to {result.batchnorm_max_other:.2g} under BatchNorm" in text


def test_variants_vs_scale_on_narrower_rows():
    from lnpaper.chapters.ch02_transpose import runs

    result = runs.variants_vs_scale(width=16, stds=(1e-4, 1e-2, 1.0))
    text = title(drawn("variants_vs_scale", result))
    assert f"{1 - np.sqrt(15 / 16):.1%} off" in text


def test_one_pass_variance_where_no_row_fails():
    from lnpaper.chapters.ch02_transpose import runs

    result = runs.one_pass_variance(offsets=(0.0, 1.0))
    assert not any(result.nonpositive_fraction)
    text = title(drawn("one_pass_variance", result))
    assert "above 0 in every row up to mean 1" in text and "0%" not in text


# ---- notebook 03 --------------------------------------------------------------------------------


def test_rnn_dynamics_at_five_scales_and_at_two_mild_ones():
    result = recorded("rnn_dynamics")
    for field in ("summed_rms", "hidden_rms", "sensitivity"):
        for curves in getattr(result, field).values():
            curves[8.0] = curves[4.0]
    five = dataclasses.replace(result, scales=[0.5, 1.0, 2.0, 4.0, 8.0])
    assert "Scaled by 0.5 to 8, a tanh RNN's state vanishes" in title(drawn("rnn_dynamics", five))
    mild = dataclasses.replace(result, scales=[1.0, 2.0])
    text = title(drawn("rnn_dynamics", mild))
    assert "vanishes" not in text and "ends at an RMS of" in text


def study_without(name: str, *models):
    """The recorded study of figure `name` with `models` left out, as `models=` would leave them."""
    result = recorded(name)
    result.runs = {model: run for model, run in result.runs.items() if model not in models}
    return result


def test_recurrent_training_without_the_bn_lstms():
    result = study_without("recurrent_training", "BN-LSTM", "BN-LSTM, gain 1.0")
    text = title(drawn("recurrent_training", result))
    assert "Rows (T = 8)" in text and "LayerNorm's early test NLL" in text
    result = study_without("recurrent_training", "LSTM")
    text = title(drawn("recurrent_training", result))
    assert "LN-LSTM" in text and "BN-LSTM" in text and "LSTM's" not in text


def test_gain_init_without_the_bn_lstms():
    result = study_without("gain_init", "BN-LSTM", "BN-LSTM, gain 1.0")
    fig = drawn("gain_init", result)
    assert "LN-LSTM" in title(fig) and "BN-LSTM" not in title(fig)
    assert "not in this result" in texts(fig)


def longer(result, test_length: int, drop: float = 0.0):
    """`result` tested to `test_length` steps: the accuracy of its last step repeated, less
    `drop`."""
    accuracy = {
        model: [run + [run[-1] - drop] * (test_length - result.test_length) for run in runs]
        for model, runs in result.accuracy.items()
    }
    return dataclasses.replace(result, test_length=test_length, accuracy=accuracy)


def test_longer_sequences_at_six_times_the_training_length():
    result = recorded("longer_sequences")
    text = title(drawn("longer_sequences", longer(result, 48)))
    assert "Twice" not in text and text.startswith("6 times the training length")
    falls = longer(result, 48, drop=0.2)
    falls.accuracy = {"BN-LSTM": falls.accuracy["BN-LSTM"]}  # models=("BN-LSTM",)
    text = title(drawn("longer_sequences", falls))
    assert "costs accuracy" in text and re.search(r"BN-LSTM −1\d\.\d points", text)


# ---- notebook 04 --------------------------------------------------------------------------------


def test_sequential_digits_without_the_bn_lstm():
    result = study_without("sequential_digits", "BN-LSTM", "BN-LSTM, gain 1.0")
    text = title(drawn("sequential_digits", result))
    assert "At T = 64, LayerNorm" in text and "BatchNorm" not in text
    with pytest.raises(ValueError, match="draws LSTM; this result holds"):
        drawn("sequential_digits", study_without("sequential_digits", "LSTM"))


def cnn_with(result, norms, margins):
    """`result` as `cnn_coda(norms=norms, margins=margins)` would hold it."""
    per_margin = ("val_loss", "val_accuracy", "test_loss", "test_accuracy")
    changes = {
        field: {m: {n: getattr(result, field)[m][n] for n in norms} for m in margins}
        for field in per_margin
    }
    for field in ("border_positions", "border_ink", "interior_ink", "border_active",
                  "interior_active"):  # fmt: skip
        changes[field] = {m: getattr(result, field)[m] for m in margins}
    return dataclasses.replace(result, norms=list(norms), margins=list(margins), **changes)


def test_cnn_coda_without_batchnorm_and_with_one_margin():
    result = recorded("cnn_coda")
    text = title(drawn("cnn_coda", cnn_with(result, ("none", "layernorm"), (0, 2))))
    assert "LayerNorm cuts" in text and "BatchNorm" not in text
    fig = drawn("cnn_coda", cnn_with(result, ("none", "batchnorm", "layernorm"), (2,)))
    assert "BN − LN" in title(fig) and "8 × 8" not in texts(fig)


def test_cnn_coda_says_where_batchnorm_ends():
    result = recorded("cnn_coda")
    for runs in result.val_loss.values():  # BatchNorm's runs end 0.05 nats higher
        runs["batchnorm"] = [run[:-1] + [run[-1] + 0.05] for run in runs["batchnorm"]]
    text = title(drawn("cnn_coda", result))
    assert "BatchNorm ends above it" in text and "level" not in text


# ---- notebook 05 --------------------------------------------------------------------------------


def test_invariance_table_of_fewer_draws():
    from lnpaper.chapters.ch05_invariances import runs

    result = runs.invariance_measurements(seeds=(0,), draws=2)
    fig = drawn("invariance_table", result)
    assert "over 2 random transformations" in texts(fig) and "of the six" in title(fig)


def test_sgd_geometry_at_three_scales():
    from lnpaper.chapters.ch05_invariances import runs_geometry

    result = runs_geometry.sgd_geometry(init_scales=(1.0, 2.0, 4.0), steps=20)
    fig = drawn("sgd_geometry", result)
    assert "started 4× larger" in title(fig)
    assert "$W_1$ initialized at scale 2" in texts(fig)


def test_adam_geometry_with_a_fourth_and_fifth_config_above_the_prediction():
    result = recorded("adam_geometry")
    fields = ("configs", "equilibrium_angle", "equilibrium_norm", "approach_steps", "final_loss",
              "angle_curve", "norm_curve")  # fmt: skip
    for field in fields:
        values = getattr(result, field)
        values += [values[-1], values[-1]]
    result.configs[3:] = [[0.01, 0.1], [0.03, 0.1]]
    result.equilibrium_angle = [[10 * a for a in seeds] for seeds in result.equilibrium_angle]
    fig = drawn("adam_geometry", result)
    assert "settles, above the prediction" in texts(fig)
    assert r"$\eta = 0.03$, $\lambda = 0.1$" in texts(fig)


def test_fisher_doubling_title_reads_its_ratios():
    result = recorded("fisher_doubling")
    result.ratios[result.kinds[0]]["w-w"] = 0.3
    assert "scales $F_{ww}$ by 0.30" in title(drawn("fisher_doubling", result))


# ---- notebook 06 --------------------------------------------------------------------------------


def test_grad_norm_vs_depth_when_both_gradients_fall():
    result = recorded("grad_norm_vs_depth")
    result.post["ratio_last_to_first"] = 0.8
    text = title(drawn("grad_norm_vs_depth", result))
    assert "Post-LN's does too (x0.80)" in text


def test_residual_norms_vs_lemma2_where_the_lemma_fails():
    result = recorded("residual_norms_vs_lemma2")
    result.post["residual_sq_norm"] = [2 * v for v in result.post["residual_sq_norm"]]
    assert "Lemma 2 does not hold at init" in title(drawn("residual_norms_vs_lemma2", result))


def ending_at(run: dict, loss: float) -> dict:
    return {**run, "final_loss": [loss] * len(run["final_loss"])}


def test_warmup_curves_when_pre_ln_fails_without_warmup():
    result = recorded("warmup_curves")
    result.runs["Pre-LN, no warmup"] = ending_at(result.runs["Pre-LN, no warmup"], 2.70)
    result.runs["Post-LN, no warmup"] = ending_at(result.runs["Post-LN, no warmup"], 2.0)
    text = title(drawn("warmup_curves", result))
    assert "Without warmup Post-LN trains, to 2.00" in text
    assert "Pre-LN ends near the unigram level (2.70 nats) without warmup" in text


def test_without_normalization_when_warmup_beats_the_norms():
    result = recorded("without_normalization")
    result.runs["no norm (identity), warmup"] = ending_at(
        result.runs["no norm (identity), warmup"], 1.5
    )
    text = title(drawn("without_normalization", result))
    assert "with warmup at 1.50, ahead of Pre-LN's" in text


def test_tfixup_curves_when_every_xavier_run_trains():
    result = recorded("tfixup_curves")
    xavier = next(iter(result.runs))
    result.runs[xavier] = ending_at(result.runs[xavier], 2.0)
    text = title(drawn("tfixup_curves", result))
    assert "none of 6 seeds fails" in text and "fail:" not in text


def test_loss_smoothness_without_batchnorm():
    result = recorded("loss_smoothness")
    norms = ["none", "layernorm"]
    fields = ("steps", "loss_range", "grad_change", "beta_smoothness", "train_loss")
    result = dataclasses.replace(
        result, norms=norms, **{f: {n: getattr(result, f)[n] for n in norms} for f in fields}
    )
    text = title(drawn("loss_smoothness", result))
    assert "BatchNorm" not in text and not text.rstrip().endswith(",")


# ---- notebook 07 --------------------------------------------------------------------------------


def test_rmsnorm_curves_when_rmsnorm_ends_above_layernorm():
    result = recorded("rmsnorm_curves")
    run = result.runs["RMSNorm"]
    run["final_loss"] = [v + 0.1 for v in run["final_loss"]]
    text = title(drawn("rmsnorm_curves", result))
    assert "RMSNorm ends above LayerNorm" in text and "level" not in text


def test_prms_estimate_at_five_widths():
    from lnpaper.chapters.ch07_rmsnorm_placement import runs

    result = runs.prms_estimate(widths=(32, 64, 128, 256, 512), samples=500)
    fig = drawn("prms_estimate", result)
    assert "at $n = 32$" in title(fig) and "at $n = 512$" in title(fig)
    assert "$n = 512$, $k = 32$" in texts(fig)


def test_placement_variance_at_a_low_rate():
    result = recorded("placement_variance")
    for run in result.runs.values():
        run["lr"] = 1e-3
        run["stream_variance_final"] = [
            [v / 100 for v in seed] for seed in run["stream_variance_final"]
        ]
    text = title(drawn("placement_variance", result))
    assert "at learning rate 0.001 " in text and "high" not in text
    assert "Pre-LN's stream reaches a variance of 7.6" in text


def test_gradient_spikes_when_they_are_common():
    result = recorded("gradient_spikes")
    for run in result.runs.values():
        run["spikes"] = [[20, 40] for _ in run["spikes"]]
    assert "Spikes are common" in title(drawn("gradient_spikes", result))


# ---- notebook 08 --------------------------------------------------------------------------------


def with_arms(result, arms, fields):
    """`result` as its study called with `arms=arms` would hold it (each arm's runs unchanged)."""
    changes = {field: {arm: getattr(result, field)[arm] for arm in arms} for field in fields}
    return dataclasses.replace(result, arms=list(arms), **changes)


def test_branch_dependence_without_admin_and_without_post_ln():
    result = recorded("branch_dependence")
    fields = ("dependence", "output_change")
    text = title(drawn("branch_dependence", with_arms(result, ("post", "pre"), fields)))
    assert "Post-LN leans on its branches" in text and "Admin" not in text
    text = title(drawn("branch_dependence", with_arms(result, ("pre", "admin"), fields)))
    assert "Post-LN" not in text and "Admin" in text


def test_deepnorm_update_when_post_ln_trains_too_and_with_one_arm():
    result = recorded("deepnorm_update")
    result.final_loss["post"] = [2.0] * len(result.seeds)
    text = title(drawn("deepnorm_update", result))
    assert "stalls" not in text and "ends at a held-out loss of" in text
    fields = ("model_update", "initial_loss", "final_loss", "train_loss")
    text = title(drawn("deepnorm_update", with_arms(result, ("deepnorm",), fields)))
    assert "DeepNorm" in text and "Post-LN" not in text


def test_gradient_profile_without_mix_ln():
    result = recorded("gradient_profile")
    fields = ("grad_norm_init", "grad_norm_trained", "final_loss")
    text = title(drawn("gradient_profile", with_arms(result, ("post", "pre"), fields)))
    assert "Mix-LN" not in text and "Post-LN" in text and "Pre-LN" in text


def test_layer_scaling_with_peri_ln_alone():
    result = recorded("layer_scaling")
    fields = ("variance_init", "variance_trained", "angle_init", "angle_trained",
              "skip_loss_init", "skip_loss_trained", "final_loss", "train_loss")  # fmt: skip
    result = with_arms(result, ("pre",), fields)
    for field in fields:  # Peri-LN's runs, as the Pre-LN ones with another name
        getattr(result, field)["peri"] = getattr(result, field).pop("pre")
    result.arms = ["peri"]
    text = title(drawn("layer_scaling", result))
    assert "Peri-LN" in text and "LN-Scaling" not in text


# ---- notebook 09 --------------------------------------------------------------------------------


def test_qk_norm_sweep_over_low_rates_only():
    result = recorded("qk_norm_sweep")
    lrs = [1e-3, 3e-3, 3e-2]  # without 0.1, and logits that stay below the mark
    result = dataclasses.replace(
        result,
        lrs=lrs,
        runs={arm: {lr: runs[lr] for lr in lrs} for arm, runs in result.runs.items()},
    )
    fig = drawn("qk_norm_sweep", result)
    assert "at lr 0.03;" in title(fig)
    logit_ax = fig.axes[1]
    assert logit_ax.get_ylim()[1] >= 1e5  # the mark's label has room under the panel's title


# ---- notebook 10 --------------------------------------------------------------------------------


def test_zero_mean_drift_when_the_forms_stay_together():
    result = recorded("zero_mean_drift")
    result.logit_drift = [[1e-14 * (1 + k) for k in range(len(row))] for row in result.logit_drift]
    assert "stay together" in title(drawn("zero_mean_drift", result))


def test_constrained_drift_when_folding_moves_nothing():
    result = recorded("constrained_drift")
    for by_arm in result.logprob_gap.values():
        for arm, rows in by_arm.items():
            by_arm[arm] = [[min(v, 1e-9) for v in row] for row in rows]
    text = title(drawn("constrained_drift", result))
    assert "stays within 1e-09 too" in text and "moves it away" not in text


def test_detach_norms_title_reads_its_differences():
    result = recorded("detach_norms")
    run = result.runs["LayerNorm-simple"]
    run["final_loss"]["fresh"] = [v + 0.5 for v in result.runs["LayerNorm"]["final_loss"]["fresh"]]
    assert "simple +0.500 nats" in title(drawn("detach_norms", result))


def test_after_dyt_when_the_pool_runs_trail_layernorm():
    result = recorded("after_dyt")
    for name in ("DyT, pool", "Derf, pool"):
        losses = result.runs[name]["final_loss"]["alpha 0.5, pool"]
        result.runs[name]["final_loss"]["alpha 0.5, pool"] = [v + 5 for v in losses]
    text = title(drawn("after_dyt", result))
    assert "they trail by" in text and "lead" not in text


def test_dyt_data_rich_over_fewer_steps_where_they_end_level():
    result = recorded("dyt_data_rich")
    for name, key in (("LayerNorm", "fresh"), ("DyT", "alpha 0.5, fresh")):
        run = result.runs[name]
        run["log_steps"] = run["log_steps"][:10]  # 100 steps
        run["train_loss"][key] = [curve[:10] for curve in run["train_loss"][key]]
    layernorm = result.runs["LayerNorm"]["train_loss"]["fresh"]
    result.runs["DyT"]["train_loss"]["alpha 0.5, fresh"] = copy.deepcopy(layernorm)
    fig = drawn("dyt_data_rich", result)
    assert "DyT ends level with LayerNorm (+0.000 nats)" in title(fig)
    assert "Y1 stops" not in texts(fig)
