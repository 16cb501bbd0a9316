"""One function per experiment, grouped by the notebook that runs it, each returning a dataclass of
plain numbers and knowing nothing of plotting.

Every experiment goes through the result store in `lnpaper.cache`, so the notebook that shows it and
`python -m lnpaper figures` that draws it pay for it once.
"""

from lnpaper.experiments.registry import EXPERIMENTS, experiment
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

__all__ = [
    "EXPERIMENTS",
    "backward_parity",
    "batchnorm_backward_projection",
    "experiment",
    "grad_norm_vs_depth",
    "layernorm_parity",
    "lm_training",
    "loss_smoothness",
    "normalization_study",
    "one_pass_variance",
    "per_token_independence",
    "tfixup_study",
    "variants_vs_scale",
    "xiong_setting",
]
