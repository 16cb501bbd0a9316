"""R4e: the own-best comparisons' grid edge, its per-seed scores and its check."""

import math

import pytest

from lnpaper.chapters.ch03_layernorm_in_rnns import claims_grid
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import EDGE_MODELS, seed_scores
from lnpaper.companion import verdicts

SEEDS = list(range(10))


def run_with(curves_per_lr):
    """A sequence_training result as a dict, one order: val_loss[0][lr][seed][eval]."""
    return {"eval_steps": [0, 25, 50, 75, 100], "val_loss": [curves_per_lr]}


def test_seed_scores_average_the_steps_each_pick_ranks_rates_by():
    curve = [9.0, 4.0, 3.0, 2.0, 1.0]
    run = run_with([[curve, [9.0, 4.0, 3.0, 2.0, math.nan]]])
    run_scores, late_scores = seed_scores(run, "run")[0], seed_scores(run, "late")[0]
    assert run_scores[0] == pytest.approx(2.5)  # steps 25-100, step 0 left out
    assert late_scores[0] == pytest.approx(1.0)  # the last quarter: step 100 alone
    assert math.isinf(run_scores[1]) and math.isinf(late_scores[1])
    with pytest.raises(ValueError, match="pick must be one of"):
        seed_scores(run, "best")


def edges(shift, diverged=0):
    """Every EDGE_MODELS entry with scores at the top rate and at 1e-1 (top + shift per seed)."""
    edge = [0.30 + 0.01 * (s % 3) for s in SEEDS]
    beyond = [e + shift + (0.002 if s % 2 else -0.002) for s, e in enumerate(edge)]
    beyond[:diverged] = [math.inf] * diverged
    return {(model, pick): {"seeds": SEEDS, "edge": edge, "beyond": list(beyond)}
            for model, pick, _ in EDGE_MODELS}  # fmt: skip


@pytest.mark.parametrize(
    "shift, diverged, verdict",
    [(0.1, 0, verdicts.REPRODUCED), (-0.1, 0, verdicts.NOT_REPRODUCED),
     (0.0, 0, verdicts.INCONCLUSIVE), (-0.1, 2, verdicts.REPRODUCED)],
)  # fmt: skip
def test_r4e_holds_where_one_step_past_the_edge_is_worse(shift, diverged, verdict):
    finding = claims_grid.check_r4e(edges(shift, diverged))
    assert finding.verdict == verdict
    assert len(finding.quantities) == len(EDGE_MODELS)
    if diverged:
        assert "2 of 10 seeds diverged at 0.1" in finding.ours


def test_r4e_is_partly_when_one_model_gains_past_the_edge():
    scores = edges(0.1)
    first = next(iter(scores))
    scores[first] = edges(-0.1)[first]
    assert claims_grid.check_r4e(scores).verdict == verdicts.SOME_PARTS
