"""Analysis of notebook 10's runs: the studies that gather `runs`' recorded experiments
in memory (the record holds each run once), and the summaries the notebook prints and
the claims and figures read."""

from lnpaper.chapters.ch06_transformer.runs import StudyResult
from lnpaper.chapters.ch10_what_the_norm_computes.runs import BUDGETS, norm_variant_training
from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models import TransformerConfig
from lnpaper.models.transformer import TransformerLM

# E2: Xu et al.'s variants, each in every norm slot of the same model
DETACH_VARIANTS = {
    "LayerNorm": "layernorm",
    "LayerNorm-simple": "layernorm_simple",
    "mean detached": "detach_mean",
    "std detached": "detach_std",
    "both detached": "detach_both",
}


def _study(arms: dict, **common) -> StudyResult:
    """One `norm_variant_training` per arm (name -> its own arguments), keyed by name,
    each with the `common` arguments too."""
    runs = {name: norm_variant_training(**arm, **common) for name, arm in arms.items()}
    return StudyResult(runs={name: vars(run) for name, run in runs.items()})


def detach_study(*, seeds=tuple(range(10)), steps: int = 150) -> StudyResult:
    """E2: the runs of DETACH_VARIANTS, fresh data, keyed by their names."""
    arms = {name: {"norm": norm} for name, norm in DETACH_VARIANTS.items()}
    return _study(arms, seeds=seeds, steps=steps)


# E2d: where over-fitting can act. The source blames the gain and bias for over-fitting, which
# fresh data never allows. A 512-sequence pool (8,192 tokens) cycled for 300 steps, about 9 passes,
# is a budget on which LayerNorm both trains and over-fits: chosen on three pilot seeds (100-102,
# LayerNorm alone, not graded: held-out 2.08-2.10 on the pool, 1.83-1.87 on fresh data) and graded
# on ten seeds no earlier run used.
OVERFIT_SEEDS = tuple(range(10, 20))
OVERFIT_POOL = 512
OVERFIT_STEPS = 300


def overfit_study(
    *, seeds=OVERFIT_SEEDS, steps: int = OVERFIT_STEPS, pool_size: int = OVERFIT_POOL
) -> StudyResult:
    """E2d: LayerNorm and LayerNorm-simple on the pool and on fresh data, keyed by name."""
    names = ("LayerNorm", "LayerNorm-simple")
    arms = {name: {"norm": DETACH_VARIANTS[name]} for name in names}
    return _study(arms, budgets=BUDGETS, seeds=seeds, steps=steps, pool_size=pool_size)


# E2c: LayerNorm and LayerNorm-simple each over three rates; 3e-3 is detach_study's.
SIMPLE_LRS = (1e-3, 3e-3, 1e-2)


def simple_lr_sweep(*, seeds=tuple(range(10)), steps: int = 150) -> StudyResult:
    """E2c: detach_study's LayerNorm and LayerNorm-simple runs at each rate of SIMPLE_LRS, keyed
    "LayerNorm, lr 0.001"."""
    arms = {
        f"{name}, lr {lr:g}": {"norm": DETACH_VARIANTS[name], "lr": lr}
        for name in ("LayerNorm", "LayerNorm-simple")
        for lr in SIMPLE_LRS
    }
    return _study(arms, seeds=seeds, steps=steps)


# Y1: the grid, cut so that it stays within the record's budget. Every alpha init is run on fresh
# data; the data-scarce pool and the embedding scalar only at alpha0 = 0.5, DyT's and Derf's
# default, at which the regime claim is tested.
Y1_ALPHAS = (0.2, 0.5, 1.0)
Y1_RUNS = {
    "LayerNorm": {"norm": "layernorm", "budgets": BUDGETS},
    "DyT": {"norm": "dyt", "alpha_inits": Y1_ALPHAS},
    "Derf": {"norm": "derf", "alpha_inits": Y1_ALPHAS},
    "DyT, pool": {"norm": "dyt", "alpha_inits": (0.5,), "budgets": ("pool",)},
    "Derf, pool": {"norm": "derf", "alpha_inits": (0.5,), "budgets": ("pool",)},
    "DyT, embedding scalar": {"norm": "dyt", "alpha_inits": (0.5,), "learned_embed_scale": True},
    "Derf, embedding scalar": {"norm": "derf", "alpha_inits": (0.5,), "learned_embed_scale": True},
}


def after_dyt_study(*, seeds=tuple(range(6)), steps: int = 150) -> StudyResult:
    """Y1: the runs of Y1_RUNS (each a `norm_variant_training`), keyed by their names."""
    return _study(Y1_RUNS, seeds=seeds, steps=steps)


# Y1c: Y1's regime variable is tokens per parameter; its fresh arm is T/P 0.73. This runs LayerNorm
# and DyT (alpha_0 0.5) on fresh data for 400 steps: 102,400 predicted tokens, T/P 1.95 on the
# model's 52,432 parameters, next to the source's rich cell (T/P 1.84).
def dyt_data_rich(*, seeds=tuple(range(10)), steps: int = 400) -> StudyResult:
    """Y1c: `norm_variant_training` on fresh data, LayerNorm and DyT at alpha_0 0.5, keyed by
    name."""
    dyt = {"norm": "dyt", "alpha_inits": (0.5,)}
    arms = {"LayerNorm": {"norm": "layernorm"}, "DyT": dyt}
    return _study(arms, seeds=seeds, steps=steps)


# ---- summaries the notebook prints and the claims and figures read ----------------------------


def tokens_per_parameter(steps: int, batch_size: int = 16, length: int = 16) -> float:
    """Predicted tokens over the parameters of Y1's model (d 32, 4 blocks, 2 heads, the language's
    16 symbols): 52,432, counted from the model."""
    language = SyntheticLanguage()
    config = TransformerConfig(
        language.vocab_size, d_model=32, n_layers=4, n_heads=2, max_len=length
    )
    model = TransformerLM(config)
    return steps * batch_size * length / sum(p.numel() for p in model.parameters())


def mean_saturation(run: dict, setting: str, when: str = "final") -> list:
    """Per slot, the mean over seeds of the fraction of saturated units."""
    rows = run[f"saturation_{when}"][setting]
    return [sum(col) / len(col) for col in zip(*rows, strict=True)]


def drift_at_end(result) -> tuple[list, list]:
    """Per seed, the last comparison's max |logit difference| and |loss difference|."""
    return [row[-1] for row in result.logit_drift], [abs(row[-1]) for row in result.loss_drift]
