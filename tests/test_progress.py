"""Progress bars appear only around a reader's live call, never in what the record or nbval see, and
a live call shows one bar however many training loops it runs."""

import inspect
import sys

import pytest

from lnpaper import progress
from lnpaper.chapters.ch10_what_the_norm_computes import analysis
from lnpaper.companion import record
from lnpaper.companion.registry import experiment
from lnpaper.train import train_population


@pytest.fixture
def bars(monkeypatch):
    """Every bar opened, the tqdm objects themselves (drawn as usual on the captured stderr)."""
    from tqdm import auto

    opened = []

    class Recorded(auto.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(auto, "tqdm", Recorded)
    return opened


def closed(bar) -> bool:
    return bar.disable  # tqdm disables a bar as it closes it


def test_steps_is_a_plain_range_unless_shown():
    assert progress.steps(3, "x") == range(3)
    with progress.shown("call"):
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


@experiment
def two_trainings(*, first: int = 3, second: int = 5) -> dict:
    """An experiment that calls two others, each with a training loop of its own."""
    return {"logged": counted_steps(steps=first)["logged"] + counted_steps(steps=second)["logged"]}


@pytest.mark.parametrize(("mode", "bar"), [("on", True), ("off", True), ("fill", False)])
def test_a_live_call_shows_its_training_steps_and_a_recorded_one_does_not(
    mode, bar, tmp_path, capsys
):
    record.configure(record.settings_for(mode, tmp_path))
    try:
        assert counted_steps(steps=5) == {"logged": [1, 2, 3, 4, 5]}
    finally:
        record.configure(None)
    shown = capsys.readouterr().err
    assert ("counted_steps" in shown and "2 runs" in shown) == bar


def test_a_lone_loop_gets_one_bar_named_after_its_call(bars):
    counted_steps(steps=6)
    assert [(bar.desc, bar.n, bar.total) for bar in bars] == [("counted_steps", 6, 6)]
    assert closed(bars[0])


def test_a_nested_call_shows_one_bar_over_all_its_inner_loops(bars):
    assert two_trainings(first=3, second=5) == {"logged": [1, 2, 3, 1, 2, 3, 4, 5]}
    assert [(bar.desc, bar.n, bar.total) for bar in bars] == [("two_trainings", 8, 8)]
    assert closed(bars[0])


def test_a_study_of_several_experiments_shows_one_bar_until_it_returns(bars):
    study = analysis.detach_study(steps=2, seeds=(0,))
    assert len(study.runs) == len(analysis.DETACH_VARIANTS) == 5
    assert [(bar.desc, bar.n, bar.total) for bar in bars] == [("detach_study", 10, 10)]
    assert closed(bars[0]) and sys.getprofile() is None


def test_an_owner_keeps_its_bar_between_blocks_and_closes_it_as_it_returns(bars):
    def study(fail: bool):
        for count in (2, 3):
            with progress.shown("study", inspect.currentframe()):
                list(progress.steps(count, "loop"))
        assert not closed(bars[-1])
        if fail:
            raise KeyError("stops the study")

    study(fail=False)
    assert len(bars) == 1 and closed(bars[0]) and (bars[0].n, bars[0].total) == (5, 5)
    with pytest.raises(KeyError):
        study(fail=True)
    assert len(bars) == 2 and closed(bars[1]) and sys.getprofile() is None


def test_a_loop_that_stops_early_gives_back_the_steps_it_skipped(bars):
    with progress.shown("call"):
        for step in progress.steps(5, "loop"):
            if step == 2:
                break
        list(progress.steps(3, "loop"))
    assert [(bar.n, bar.total) for bar in bars] == [(5, 5)]


def test_a_recorded_call_opens_no_bar(bars, tmp_path):
    record.configure(record.settings_for("fill", tmp_path))
    counted_steps(steps=3)  # computed and written: no bar
    record.configure(record.settings_for("strict", tmp_path))
    assert counted_steps(steps=3) == {"logged": [1, 2, 3]}
    with pytest.raises(record.RecordMissing):
        counted_steps(steps=4)
    assert bars == []
