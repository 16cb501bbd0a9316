"""One function per experiment, grouped by the notebook that runs it, each returning a dataclass of
plain numbers and knowing nothing of plotting.

Every experiment goes through the record in `lnpaper.record`, so the notebook that shows it and
`python -m lnpaper figures` that draws it pay for it once.
"""

from lnpaper.experiments.after_2020 import (
    gain_decay,
    qk_run,
    qk_sweep,
    reordered_study,
)
from lnpaper.experiments.after_2020_depth import (
    branch_dependence,
    deepnorm_study,
    gradient_profile,
    layer_scaling_study,
)
from lnpaper.experiments.after_2020_mean import (
    after_dyt_study,
    detach_study,
    norm_variant_training,
    zero_mean_drift,
)
from lnpaper.experiments.invariances import (
    adam_geometry,
    fisher_doubling,
    invariance_measurements,
    reparameterization,
    sgd_geometry,
)
from lnpaper.experiments.layernorm_in_rnns import (
    cnn_coda,
    lnlstm_anatomy,
    longer_sequences,
    recurrent_training,
    rnn_dynamics,
    sequence_training,
    sequential_digits,
)
from lnpaper.experiments.registry import EXPERIMENTS, experiment
from lnpaper.experiments.rmsnorm_placement import (
    memory_traffic,
    placement_study,
    prms_estimate,
    rmsnorm_study,
    rmsnorm_vs_layernorm,
    spike_run,
)
from lnpaper.experiments.transformer import (
    batchnorm_backward_projection,
    grad_norm_vs_depth,
    lm_training,
    loss_smoothness,
    normalization_study,
    tfixup_study,
    xiong_setting,
)
from lnpaper.experiments.transpose import (
    backward_parity,
    layernorm_parity,
    one_pass_variance,
    per_token_independence,
    variants_vs_scale,
)
from lnpaper.experiments.why_batchnorm_fails import (
    batch_dependence,
    batch_of_one,
    batch_size_robustness,
    batch_size_runs,
    lstm_statistics,
    train_vs_inference,
)

__all__ = [
    "after_dyt_study",
    "detach_study",
    "norm_variant_training",
    "zero_mean_drift",
    "branch_dependence",
    "deepnorm_study",
    "gradient_profile",
    "layer_scaling_study",
    "EXPERIMENTS",
    "gain_decay",
    "qk_run",
    "qk_sweep",
    "reordered_study",
    "spike_run",
    "backward_parity",
    "batch_dependence",
    "batch_of_one",
    "batch_size_robustness",
    "batch_size_runs",
    "batchnorm_backward_projection",
    "cnn_coda",
    "experiment",
    "fisher_doubling",
    "grad_norm_vs_depth",
    "invariance_measurements",
    "layernorm_parity",
    "lm_training",
    "lnlstm_anatomy",
    "longer_sequences",
    "loss_smoothness",
    "lstm_statistics",
    "memory_traffic",
    "normalization_study",
    "one_pass_variance",
    "per_token_independence",
    "placement_study",
    "prms_estimate",
    "recurrent_training",
    "reparameterization",
    "rmsnorm_study",
    "rmsnorm_vs_layernorm",
    "rnn_dynamics",
    "sequence_training",
    "sequential_digits",
    "sgd_geometry",
    "adam_geometry",
    "tfixup_study",
    "train_vs_inference",
    "variants_vs_scale",
    "xiong_setting",
]
