"""Analysis of notebook 07's runs: the studies that gather recorded runs, and the summaries the
notebook prints and the claims and figures read. Nothing here is recorded: each function reads
recorded experiments (through the record) and computes in memory, so the record holds each run once.
Each function's docstring names the claims it serves."""

from lnpaper import stats
from lnpaper.chapters.ch02_transpose.variants import (
    rms_eps_outside_sqrt as rms_eps_outside_sqrt,  # notebook 02's slip, RMSNorm's own eps question
)
from lnpaper.chapters.ch05_invariances.invariance import PAPER_TABLE as PAPER_TABLE
from lnpaper.chapters.ch05_invariances.runs import (  # Table 1, for what RMSNorm gives up
    invariance_measurements as invariance_measurements,
)
from lnpaper.chapters.ch05_invariances.runs import lost_invariances as lost_invariances
from lnpaper.chapters.ch05_invariances.runs import table_text as table_text
from lnpaper.chapters.ch06_transformer.analysis import (  # notebook 06 shares them: T6 reads them
    SWEEP_LRS as SWEEP_LRS,
)
from lnpaper.chapters.ch06_transformer.analysis import rmsnorm_lr_sweep as rmsnorm_lr_sweep
from lnpaper.chapters.ch06_transformer.analysis import rmsnorm_study as rmsnorm_study
from lnpaper.chapters.ch06_transformer.analysis import sweep_name as sweep_name
from lnpaper.chapters.ch06_transformer.runs import StudyResult, lm_training
from lnpaper.chapters.ch07_rmsnorm_placement.runs import recentred_training, spike_run

PLACEMENT_CONFIGS = {"Post-LN": "post", "Pre-LN": "pre", "Peri-LN": "peri"}


def placement_study(
    *, lr: float = 1e-2, seeds=tuple(range(6)), steps: int = 200, names=tuple(PLACEMENT_CONFIGS)
) -> StudyResult:
    """P5: notebook 06's six-layer model and language with the norm after the residual sum (Post),
    before each sublayer (Pre) or before and after it (Peri, the same block as "sandwich"), trained
    with Adam at lr 1e-2, above notebook 06's 3e-3, without warmup. Each run records the residual
    stream's variance and every block's gradient norm at init and after training."""
    runs = {
        name: vars(lm_training(placement=PLACEMENT_CONFIGS[name], lr=lr, seeds=seeds, steps=steps))
        for name in names
    }
    return StudyResult(runs=runs)


SPIKE_PLACEMENTS = {"Pre-LN": "pre", "Peri-LN": "peri"}


def spike_study(*, lrs=(1e-2, 3e-2), seeds=tuple(range(6)), steps: int = 100) -> StudyResult:
    """P5: Pre-LN and Peri-LN at each learning rate, 1e-2 (`placement_study`'s) and 3e-2, for the
    first 100 steps, where a high rate without warmup is least stable; runs are keyed
    "Pre-LN, lr 0.01"."""
    runs = {
        f"{name}, lr {lr:g}": vars(spike_run(placement=placement, lr=lr, seeds=seeds, steps=steps))
        for lr in lrs
        for name, placement in SPIKE_PLACEMENTS.items()
    }
    return StudyResult(runs=runs)


# P5 and O1 are graded on fresh seeds, declared before their runs. On six seeds, where most runs
# have no spike, no test on counts could decide; and P5's gradient spread was first run on three
# seeds, then six once three had not decided. So the spike counts, the largest jump and the
# placement measures are graded on 30 seeds that played no part in choosing the measures, the
# rates or the tests; seeds 0-5, on which they were chosen, are shown beside them.
FRESH_SEEDS = tuple(range(6, 36))


def spike_confirmation() -> StudyResult:
    """P5's spikes on FRESH_SEEDS: `spike_study` with its other arguments the defaults."""
    return spike_study(seeds=FRESH_SEEDS)


def placement_confirmation() -> StudyResult:
    """P5's graded arms, Pre-LN and Peri-LN, as `placement_study` runs them, on FRESH_SEEDS (Post-LN,
    which P5 does not grade, is left to the first seeds)."""
    return placement_study(seeds=FRESH_SEEDS, names=("Pre-LN", "Peri-LN"))


# ---- summaries the notebook prints and the claims check ----------------------------------


def recentred_study(*, center: float = 0.2) -> StudyResult:
    """P2c: LayerNorm and RMSNorm in P2's model, every weight matrix initialized `center` off."""
    norms = {"LayerNorm": "layernorm", "RMSNorm": "rmsnorm"}
    return StudyResult(
        runs={
            name: vars(recentred_training(norm=norm, center=center)) for name, norm in norms.items()
        }
    )


def placement_summary(study) -> dict:
    """Per placement, per seed: the last block's stream variance after training, its growth over
    training (after / at init), its growth over depth after training (last block / first), and
    the spread of the blocks' gradient norms after training (largest / smallest)."""
    summary = {}
    for name, run in study.runs.items():
        rows = zip(run["stream_variance_init"], run["stream_variance_final"],
                   run["block_grad_norm_final"], strict=True)  # fmt: skip
        finished = [(init, final, grad) for init, final, grad in rows if final is not None]
        summary[name] = {
            "last_variance": [final[-1] for _, final, _ in finished],
            "growth_in_training": [final[-1] / init[-1] for init, final, _ in finished],
            "growth_over_depth": [final[-1] / final[0] for _, final, _ in finished],
            "grad_spread": [max(grad) / min(grad) for _, _, grad in finished],
        }
    return summary


def spike_summary(study) -> dict:
    """lr -> {"Pre-LN": ..., "Peri-LN": ...}, each with, per seed, the number of spikes of the
    global gradient norm and its largest jump (largest step over the median of the steps before
    it, `stats.jump_ratios`)."""
    summary = {}
    for name, run in study.runs.items():
        arm = name.split(",")[0]
        summary.setdefault(run["lr"], {})[arm] = {
            "spikes": [len(steps) for steps in run["spikes"]],
            "largest_jump": [
                max(stats.jump_ratios(norms, stats.SPIKE_WINDOW)) for norms in run["grad_norm"]
            ],
        }
    return summary
