"""Figures: one function per figure, a registry, and the writer behind `python -m lnpaper figures`."""

from lnpaper.figures.after_2020 import qk_norm_sweep
from lnpaper.figures.after_2020_depth import (
    branch_dependence,
    deepnorm_update,
    gradient_profile,
    layer_scaling,
)
from lnpaper.figures.after_2020_mean import after_dyt, detach_norms, zero_mean_drift
from lnpaper.figures.invariances import (
    adam_geometry,
    fisher_doubling,
    invariance_table,
    sgd_geometry,
)
from lnpaper.figures.layernorm_in_rnns import (
    cnn_coda,
    gain_init,
    longer_sequences,
    recurrent_training,
    rnn_dynamics,
    sequential_digits,
)
from lnpaper.figures.registry import FIGURES, FigureSpec, figure, save_png
from lnpaper.figures.rmsnorm_placement import placement_variance, prms_estimate, rmsnorm_curves
from lnpaper.figures.transformer import (
    grad_norm_vs_depth,
    loss_smoothness,
    residual_norms_vs_lemma2,
    tfixup_curves,
    warmup_curves,
    without_normalization,
)
from lnpaper.figures.transpose import (
    one_pass_variance,
    per_token_independence,
    transpose_table,
    variants_vs_scale,
)
from lnpaper.figures.why_batchnorm_fails import (
    batch_dependence,
    batch_size,
    exam_rulers,
    lstm_statistics,
    recurrent_batchnorm,
    train_vs_inference,
)

__all__ = [
    "FIGURES",
    "FigureSpec",
    "after_dyt",
    "detach_norms",
    "zero_mean_drift",
    "branch_dependence",
    "deepnorm_update",
    "gradient_profile",
    "layer_scaling",
    "qk_norm_sweep",
    "batch_dependence",
    "batch_size",
    "cnn_coda",
    "exam_rulers",
    "figure",
    "fisher_doubling",
    "gain_init",
    "grad_norm_vs_depth",
    "invariance_table",
    "longer_sequences",
    "loss_smoothness",
    "lstm_statistics",
    "one_pass_variance",
    "per_token_independence",
    "placement_variance",
    "prms_estimate",
    "recurrent_batchnorm",
    "recurrent_training",
    "residual_norms_vs_lemma2",
    "rmsnorm_curves",
    "rnn_dynamics",
    "save_png",
    "sequential_digits",
    "sgd_geometry",
    "adam_geometry",
    "tfixup_curves",
    "train_vs_inference",
    "transpose_table",
    "variants_vs_scale",
    "warmup_curves",
    "without_normalization",
]
