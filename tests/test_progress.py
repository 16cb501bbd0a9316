"""Progress bars appear only around a reader's live call, never in what the record or nbval see, and
a live call shows one bar however many training loops it runs."""

import inspect
import re
import sys

import pytest

from lnpaper import progress
from lnpaper.chapters.ch10_what_the_norm_computes import analysis
from lnpaper.companion import record
from lnpaper.companion.record import experiment
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


def finished(bar) -> tuple:
    """A closed bar's name, whether it reached its end, and the steps beside it."""
    return bar.desc, bar.n == bar.total == progress.RESOLUTION, bar.postfix.split(", ")[-1]


def test_a_lone_loop_gets_one_bar_named_after_its_call(bars):
    counted_steps(steps=6)
    assert [finished(bar) for bar in bars] == [("counted_steps", True, "6/6 steps")]
    assert closed(bars[0])


def test_a_nested_call_shows_one_bar_over_all_its_inner_loops(bars):
    assert two_trainings(first=3, second=5) == {"logged": [1, 2, 3, 1, 2, 3, 4, 5]}
    assert [finished(bar) for bar in bars] == [("two_trainings", True, "8/8 steps")]
    assert closed(bars[0])


def test_a_study_of_several_experiments_shows_one_bar_until_it_returns(bars):
    study = analysis.detach_study(steps=2, seeds=(0,))
    assert len(study.runs) == len(analysis.DETACH_VARIANTS) == 5
    assert [finished(bar) for bar in bars] == [("detach_study", True, "10/10 steps")]
    assert closed(bars[0]) and sys.getprofile() is None


def test_an_owner_keeps_its_bar_between_blocks_and_closes_it_as_it_returns(bars):
    def study(fail: bool):
        for count in (2, 3):
            with progress.shown("study", inspect.currentframe(), estimate=1.0):
                list(progress.steps(count, "loop"))
        assert not closed(bars[-1]) and bars[-1].n < progress.RESOLUTION
        if fail:
            raise KeyError("stops the study")

    study(fail=False)
    assert len(bars) == 1 and closed(bars[0]) and finished(bars[0]) == ("study", True, "5/5 steps")
    with pytest.raises(KeyError):
        study(fail=True)
    assert len(bars) == 2 and closed(bars[1]) and sys.getprofile() is None


def test_a_loop_that_stops_early_gives_back_the_steps_it_skipped(bars):
    with progress.shown("call"):
        for step in progress.steps(5, "loop"):
            if step == 2:
                break
        list(progress.steps(3, "loop"))
    assert [finished(bar) for bar in bars] == [("call", True, "5/5 steps")]


def test_the_fraction_follows_the_estimate_and_the_steps_and_never_reaches_the_end():
    session = progress.Session(("call", object()), "call", None, planned=10.0)
    session.started, session.done = 100, 100  # every step started is done: time decides
    start = session.start
    assert progress.fraction(session, start + 5) == pytest.approx(0.45)
    assert progress.fraction(session, start + 10) == pytest.approx(progress.SETTLE)
    assert progress.fraction(session, start + 20) == pytest.approx(0.945)  # past the estimate
    assert progress.fraction(session, start + 1e9) < progress.CREEP + 1e-9
    session.done = 20  # a single loop a fifth done: the estimate was too low
    assert progress.fraction(session, start + 20) == pytest.approx(0.2)
    session.shown = 0.5  # never less than the bar shows
    assert progress.fraction(session, start + 1) == 0.5


class Clock:
    """time.perf_counter for the progress module, advanced by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_cell_of_several_calls_shows_one_bar_that_only_moves_forward(bars, monkeypatch):
    """In a notebook the session is the cell: three calls, each with its own estimate and loops,
    advance one bar; a later call adds its estimate and the bar holds its place rather than move
    back; only the cell's end takes it to 100%."""
    clock = Clock()
    monkeypatch.setattr(progress.time, "perf_counter", clock)
    monkeypatch.setattr(progress, "_cell", lambda: ("cell", 7))
    seen = []
    for call, (estimate, loops) in enumerate([(2.0, (20, 20)), (1.0, (10,)), (4.0, (40,))]):
        with progress.shown(f"call {call}", estimate=estimate):
            for count in loops:
                for _ in progress.steps(count, "loop"):
                    clock.now += 0.1
                    seen.append(bars[0].n)
    assert len(bars) == 1 and bars[0].desc == "call 0" and not closed(bars[0])
    assert seen == sorted(seen) and seen[-1] < progress.RESOLUTION
    assert seen[19] < 600  # the first loop of the first call: not near its end
    progress.end_cell()
    assert closed(bars[0]) and finished(bars[0]) == ("call 0", True, "90/90 steps")


def test_a_study_says_once_what_it_computes_and_about_how_long_in_all(capsys):
    """A study of five live experiments: one notice, naming the study and estimating all of it
    from its default call's recorded time, and one closing line."""
    record.configure(record.settings_for("on"))
    try:
        analysis.detach_study(steps=2, seeds=(0,))
    finally:
        record.configure(None)
    notice, closing = capsys.readouterr().out.splitlines()
    assert notice.startswith("detach_study(seeds=[0], steps=2) needs experiment calls the record")
    assert "its default call's experiments took" in notice
    assert closing.startswith("computed 5 experiment calls (norm_variant_training) here in")


def test_in_ipython_a_cell_is_one_session_and_a_call_between_cells_its_own(
    bars, monkeypatch, capsys, tmp_path
):
    """Two live calls in one cell: one notice, one bar, one closing line as the cell ends. A call
    between cells (a slider's callback) is a session of its own, ended with the call."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setattr(InteractiveShell, "_instance", None)  # and none after this test
    monkeypatch.setattr(progress, "_cell_hook", None)
    monkeypatch.setattr(progress, "_running", None)
    shell = InteractiveShell.instance()
    shell.user_ns["counted_steps"] = counted_steps
    record.configure(record.settings_for("on", tmp_path))  # an empty record: every call is live
    try:
        shell.run_cell("counted_steps(steps=2)\ncounted_steps(steps=3)")
        in_cell = capsys.readouterr().out
        counted_steps(steps=4)
        between = capsys.readouterr().out
    finally:
        record.configure(None)
        shell.events.unregister("pre_run_cell", progress.start_cell)
        shell.events.unregister("post_run_cell", progress.end_cell)
    assert in_cell.count("is not in the record") == 1
    last = in_cell.rstrip().splitlines()[-1]
    assert re.fullmatch(
        r"computed 2 experiment calls \(counted_steps\) here in [\d.]+ s \(not recorded\)", last
    )
    assert between.count("is not in the record") == 1 and "computed counted_steps" in between
    assert [finished(bar) for bar in bars] == [
        ("counted_steps", True, "5/5 steps"),
        ("counted_steps", True, "4/4 steps"),
    ]


def test_a_recorded_call_opens_no_bar(bars, tmp_path):
    record.configure(record.settings_for("fill", tmp_path))
    counted_steps(steps=3)  # computed and written: no bar
    record.configure(record.settings_for("strict", tmp_path))
    assert counted_steps(steps=3) == {"logged": [1, 2, 3]}
    with pytest.raises(record.RecordMissing):
        counted_steps(steps=4)
    assert bars == []
