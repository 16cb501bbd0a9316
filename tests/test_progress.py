"""Progress bars appear only around a reader's live call, never in what the record or nbval see."""

import pytest

from lnpaper import progress
from lnpaper.companion import record
from lnpaper.companion.registry import experiment
from lnpaper.train import train_population


def test_steps_is_a_plain_range_unless_shown():
    assert progress.steps(3, "x") == range(3)
    with progress.shown():
        bar = progress.steps(3, "x")
        assert not isinstance(bar, range) and list(bar) == [0, 1, 2]
    assert progress.steps(3, "x") == range(3)


@experiment
def counted_steps(*, steps: int = 4) -> dict:
    import torch

    weights = torch.zeros(2, 3, requires_grad=True)
    runs = train_population(
        2, [weights], lambda step: (weights.pow(2).sum(1) + 1, None), torch.optim.Adam([weights]),
        steps=steps,
    )  # fmt: skip
    return {"logged": runs.steps}


@pytest.mark.parametrize(("mode", "bar"), [("on", True), ("off", True), ("fill", False)])
def test_a_live_call_shows_its_training_steps_and_a_recorded_one_does_not(
    mode, bar, tmp_path, capsys
):
    record.configure(record.settings_for(mode, tmp_path))
    try:
        assert counted_steps(steps=5) == {"logged": [1, 2, 3, 4, 5]}
    finally:
        record.configure(None)
    assert ("2 runs" in capsys.readouterr().err) == bar
