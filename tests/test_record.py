"""The record: canonical keys, modes, broken and read-only stores, and parallel recomputes."""

import dataclasses
import inspect
import json
import math
import os
import re
import stat
import time
import warnings

import numpy as np
import pytest
import torch

from lnpaper import progress, reproduce, reproduce_compare
from lnpaper.companion import entries, live, record
from lnpaper.companion.record import experiment
from lnpaper.companion.runtime import THREADS, setup


@dataclasses.dataclass
class CountResult:
    values: list
    scale: float
    by_size: dict = dataclasses.field(default_factory=dict)


CALLS = []


@experiment
def counting_experiment(*, scale: float = 2.0, sizes=(1, 2)) -> CountResult:
    CALLS.append(scale)
    return CountResult(
        values=[s * scale for s in sizes], scale=scale, by_size={s: s * scale for s in sizes}
    )


@experiment
def calling_experiment(*, scale: float = 2.0) -> CountResult:
    inner = counting_experiment(scale=scale)
    return CountResult(values=[sum(inner.values)], scale=scale)


@experiment
def choosing_experiment(*, cell: str = "lstm", steps: int = 3) -> CountResult:
    if cell not in ("lstm", "gru"):
        raise ValueError(f"cell must be one of ('lstm', 'gru'), got {cell!r}")
    for _ in progress.steps(steps, "training"):
        pass
    return CountResult(values=[steps], scale=1.0)


@pytest.fixture
def store(tmp_path):
    """An empty record in fill mode (compute and write what is missing)."""
    settings = record.settings_for("fill", tmp_path)
    record.configure(settings)
    CALLS.clear()
    yield tmp_path
    record.configure(None)


def test_an_experiment_is_computed_once_and_then_read_from_the_record(store):
    first = counting_experiment()
    second = counting_experiment()
    assert first == second and CALLS == [2.0]
    counting_experiment(scale=3.0)
    assert CALLS == [2.0, 3.0]
    assert len(list(store.glob("counting_experiment-*.json"))) == 2


def test_a_fresh_result_a_recorded_one_and_a_live_one_are_identical(store):
    fresh = counting_experiment(sizes=(1, 2, 3))
    recorded = counting_experiment(sizes=(1, 2, 3))
    with record.using("off"):
        live = counting_experiment(sizes=(1, 2, 3))
    assert repr(fresh) == repr(recorded) == repr(live)
    assert CALLS == [2.0, 2.0]


def test_dict_keys_come_back_with_their_types(store):
    counting_experiment(sizes=(4, 128))
    result = counting_experiment(sizes=(4, 128))
    assert result.by_size == {4: 8.0, 128: 256.0}  # ints, not "4" and "128"


def test_keys_are_canonical_and_exact_whatever_numpy_prints(store):
    np.set_printoptions(precision=4)  # what lnpaper.setup() does; a repr-based key broke here
    try:
        a = record.key("e", {"x": np.array([0.10001])})
        b = record.key("e", {"x": np.array([0.10004])})
    finally:
        np.set_printoptions(precision=8)
    assert a != b
    assert record.key("e", {"x": (1, 2), "y": 0.5}) == record.key("e", {"y": 0.5, "x": [1, 2]})
    assert record.key("e", {"seeds": range(3)}) == record.key("e", {"seeds": (0, 1, 2)})
    assert record.key("e", {"x": 1.0}) != record.key("e", {"x": 1.0000000000000002})
    assert record.key("e", {"x": 1}) != record.key("f", {"x": 1})
    with pytest.raises(TypeError, match="arguments"):
        record.key("e", {"x": object()})
    with pytest.raises(ValueError, match="finite"):
        record.key("e", {"x": float("nan")})


def test_an_entry_says_how_it_was_made(store):
    calling_experiment()
    (path,) = store.glob("calling_experiment-*.json")
    entry = json.loads(path.read_text())
    made = entry["made"]
    assert made["torch"] == torch.__version__ and made["numpy"] == np.__version__
    assert made["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert made["threads"] == THREADS and made["seconds"] >= 0 and made["date"]
    assert entry["arguments"] == {"scale": 2.0}
    assert "calls" not in entry  # the record holds leaf runs: an entry lists no calls it made
    assert entry["code"] == record.code_of(calling_experiment)


def test_an_entry_is_read_from_disk_once_until_its_file_changes(store):
    """One process reads and decodes an entry once, whoever asks (a cell, a claim, the ledger);
    a changed file is read again, and each reader gets a result of its own."""
    counting_experiment()
    (path,) = store.glob("counting_experiment-*.json")
    _age(path)
    record.configure(record.settings_for("strict", store))
    reads = entries.DECODED.reads
    first, second = counting_experiment(), counting_experiment()
    assert first == second and entries.DECODED.reads == reads + 1
    assert first.values is not second.values  # a reader may change its result: not shared
    entry = json.loads(path.read_text())
    entry["result"]["values"] = [7.0, 8.0]
    path.write_text(json.dumps(entry))
    assert counting_experiment().values == [7.0, 8.0] and entries.DECODED.reads == reads + 2
    # a file changed this recently may change again unseen by its time: read every time
    assert counting_experiment().values == [7.0, 8.0] and entries.DECODED.reads == reads + 3
    _age(path)
    counting_experiment(), counting_experiment()
    assert entries.DECODED.reads == reads + 4


def _age(path) -> None:
    """Date the file a minute back, beyond any file system's timestamp granularity."""
    then = time.time() - 60
    os.utime(path, (then, then))


def test_an_entry_that_lists_the_calls_it_made_still_reads(store):
    counting_experiment()
    (path,) = store.glob("counting_experiment-*.json")
    entry = json.loads(path.read_text())
    entry["calls"] = [["another_experiment", "0123456789abcdef"]]  # as entries once recorded
    path.write_text(json.dumps(entry))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert counting_experiment().values == [2.0, 4.0]
    assert CALLS == [2.0]


def test_an_entry_from_another_numeric_path_is_refused_before_it_is_computed(store, monkeypatch):
    monkeypatch.setattr(record, "REPO_RESULTS", store)  # the store is the committed record
    here = torch.backends.cpu.get_cpu_capability()
    monkeypatch.setattr(record, "RECORD_PATH", "AVX512" if here != "AVX512" else "AVX2")
    with pytest.raises(RuntimeError, match="set ATEN_CPU_CAPABILITY=default"):
        counting_experiment(scale=5.0)
    assert CALLS == []  # refused before computing
    monkeypatch.setattr(record, "RECORD_PATH", here)
    counting_experiment(scale=5.0)  # on the record's path it is computed and kept
    assert CALLS == [5.0]
    monkeypatch.setattr(record, "RECORD_PATH", "AVX512" if here != "AVX512" else "AVX2")
    monkeypatch.setattr(record, "REPO_RESULTS", store / "elsewhere")
    counting_experiment(scale=6.0)  # a folder that is not the committed record takes any path


def test_a_missing_entry_is_an_error_naming_the_experiment_and_its_arguments(store):
    record.configure(record.settings_for("strict", store))
    with pytest.raises(
        record.RecordMissing, match=r"counting_experiment\(scale=5.0, sizes=\[1, 2\]\)"
    ):
        counting_experiment(scale=5.0)
    assert CALLS == []


def test_a_readers_own_call_runs_live_says_so_and_writes_nothing(store, capsys):
    """In the default mode a call the record lacks is computed here, in memory, announced with
    the nearest recorded call's time as a guide; strict mode (make test) keeps it an error."""
    record.configure(record.settings_for("fill", store))
    counting_experiment()  # the default call, recorded
    record.configure(record.settings_for("on", store))
    files = sorted(p.name for p in store.iterdir())
    CALLS.clear()
    assert counting_experiment(scale=5.0).values == [5.0, 10.0]
    out = capsys.readouterr().out  # printed, not an error box
    assert "counting_experiment(scale=5.0, sizes=[1, 2]) is not in the record" in out
    assert "computing it here, live" in out and "the recorded call nearest yours" in out
    assert "not recorded" in out
    assert sorted(p.name for p in store.iterdir()) == files
    counting_experiment(scale=5.0)  # kept in memory: computed once
    assert CALLS == [5.0]


def test_a_call_the_experiment_refuses_gets_its_error_and_no_notice(store, capsys):
    """The notice waits for the first training loop, and an experiment checks its words before
    it trains: a refused call is answered by the error alone, and leaves no notice behind."""
    record.configure(record.settings_for("on", store))
    with pytest.raises(ValueError, match="cell must be one of"):
        choosing_experiment(cell="transformer")
    assert "is not in the record" not in capsys.readouterr().out
    choosing_experiment(cell="gru")
    out = capsys.readouterr().out
    assert out.count("is not in the record") == 1
    assert "choosing_experiment(cell='gru', steps=3) is not in the record" in out
    assert out.index("is not in the record") < out.index("computed choosing_experiment")


def test_only_the_readers_own_call_is_announced_not_the_calls_inside_it(store, capsys):
    record.configure(record.settings_for("on", store))
    calling_experiment(scale=7.0)  # computes counting_experiment(scale=7.0) live inside it
    out = capsys.readouterr().out
    assert out.count("is not in the record") == 1 and "calling_experiment(scale=7.0)" in out


def test_a_cell_announces_its_first_live_call_and_counts_them_all_in_one_line(
    store, capsys, monkeypatch
):
    """In a notebook, one notice and one closing line per cell, however many live calls it makes;
    a call refused before it trains leaves the notice to the next one."""
    record.configure(record.settings_for("on", store))
    monkeypatch.setattr(progress, "_cell", lambda: ("cell", 3))
    with pytest.raises(ValueError, match="cell must be one of"):
        choosing_experiment(cell="transformer")
    choosing_experiment(cell="gru")
    choosing_experiment(cell="gru", steps=4)
    counting_experiment(scale=9.0)
    running = capsys.readouterr().out
    assert "computed" not in running  # the cell is still running
    progress.end_cell()
    out = running + capsys.readouterr().out
    assert out.count("is not in the record") == 1 and out.count("\ncomputed") == 1
    assert "choosing_experiment(cell='gru', steps=3) is not in the record" in out
    assert "computed 3 experiment calls (choosing_experiment, counting_experiment) here in" in out
    monkeypatch.setattr(progress, "_cell", lambda: ("cell", 4))  # the next cell announces again
    choosing_experiment(cell="gru", steps=5)
    progress.end_cell()
    out = capsys.readouterr().out
    assert out.count("is not in the record") == 1 and "computed choosing_experiment here" in out


def test_the_estimate_scales_a_recorded_calls_time_by_the_counts_that_differ():
    defaults = {"seeds": (0, 1, 2), "steps": 200, "lr": 3e-3, "norm": "layernorm", "flag": True}
    assert live.scaled_estimate(60.0, {"seeds": (0,), "steps": 400}, defaults) == 40.0
    # rates, words and flags are not counts: the estimate stays the recorded call's
    assert (
        live.scaled_estimate(60.0, {"lr": 1e-2, "norm": "rmsnorm", "flag": False}, defaults) == 60.0
    )
    assert live.scaled_estimate(60.0, {"seeds": range(30)}, defaults) == 600.0
    # a size within one step counts by its square root
    assert live.scaled_estimate(60.0, {"hidden": 64, "batch_size": 4}, {"hidden": 16}) == 120.0
    # which seed, and how often to evaluate, do not size the work
    assert live.scaled_estimate(60.0, {"seed": 7, "eval_every": 50}, {"seed": 1}) == 60.0


def test_an_epoch_based_estimate_counts_the_steps_a_smaller_batch_takes(store):
    """With the epochs fixed, half the batch is twice the steps (epochs x examples / batch), each
    somewhat cheaper: the estimate rises. Counted as a size within one step alone it fell."""
    recorded = {"model": "layernorm", "batch_size": 4, "epochs": 12, "seeds": list(range(20))}
    mine = {"model": "layernorm", "batch_size": 2, "epochs": 4, "seeds": (0, 1)}
    steps = (4 / 2) / (12 / 4)
    expected = 49.1 * steps * math.sqrt(2 / 4) * (2 / 20)
    assert live.scaled_estimate(49.1, mine, recorded) == pytest.approx(expected)
    assert expected > 49.1 * (4 / 12) * (2 / 20)  # more than the epochs and seeds alone say
    # the study form: each of its batch sizes counts its own steps
    study = {"batch_sizes": [128, 2], "epochs": 12}
    work = 12 / math.sqrt(128) + 12 / math.sqrt(2)
    default = 12 / math.sqrt(128) + 12 / math.sqrt(4)
    assert live.scaled_estimate(
        1.0, study, {"batch_sizes": [128, 4], "epochs": 12}
    ) == pytest.approx(work / default)
    # the nearest recorded call: the same batch before a cheaper-to-scale other batch
    _recorded(store, recorded, 49.1)
    _recorded(store, {**recorded, "batch_size": 128}, 7.6)
    estimate, nearest, seconds = live.nearest_estimate("counting_experiment", mine, store)
    assert (nearest["batch_size"], seconds) == (4, 49.1) and estimate == pytest.approx(expected)


def test_a_longer_test_is_not_more_training():
    """The test sequences' length is a forward pass after training: it does not scale the time."""
    recorded = {"steps": 200, "test_length": 16, "extra_steps": 0}
    mine = {"steps": 200, "test_length": 48, "extra_steps": 16}
    assert live.scaled_estimate(16.4, mine, recorded) == 16.4


def _recorded(store, arguments: dict, seconds: float) -> None:
    entry = {"experiment": "counting_experiment", "arguments": arguments,
             "made": {"seconds": seconds}}  # fmt: skip
    name = f"counting_experiment-{record.key('counting_experiment', arguments)}.json"
    (store / name).write_text(json.dumps(entry))


def test_the_estimate_starts_from_the_recorded_call_that_shares_the_most_words(store):
    """A live call is timed from the recorded call of its experiment nearest to it: the one that
    shares its model and data (words), then the one needing the least scaling of its counts."""
    _recorded(store, {"cell": "lstm", "form": "rows", "steps": 300, "seeds": [0, 1]}, 10.0)
    _recorded(store, {"cell": "lstm", "form": "pixels", "steps": 300, "seeds": [0, 1]}, 80.0)
    _recorded(store, {"cell": "lstm", "form": "pixels", "steps": 30, "seeds": [0]}, 3.0)
    estimate, nearest, seconds = live.nearest_estimate(
        "counting_experiment", {"cell": "lstm", "form": "pixels", "steps": 200, "seeds": (0,)},
        store,
    )  # fmt: skip
    assert seconds == 80.0 and estimate == pytest.approx(80.0 / 3)  # scaled by 1/3, not by 200/30
    assert nearest["form"] == "pixels"
    estimate, nearest, _ = live.nearest_estimate(
        "counting_experiment", {"cell": "gru", "form": "rows", "steps": 600, "seeds": (0, 1)}, store
    )
    assert estimate == 20.0 and nearest["form"] == "rows"
    message = live.live_message("counting_experiment", {"cell": "gru", "form": "rows",
                                                         "steps": 600, "seeds": (0, 1)}, store)  # fmt: skip
    assert "about 20 s" in message and "differs in cell, steps" in message
    assert live.nearest_estimate("calling_experiment", {"scale": 1.0}, store) is None


@pytest.mark.parametrize("garbage", ["", '{"experiment": "counting_exp', "not json", "[]"])
def test_a_broken_entry_is_named_in_a_warning_and_recomputed(store, garbage):
    counting_experiment()
    (path,) = store.glob("counting_experiment-*.json")
    for mode in ("on", "fill"):  # in read-only mode too: recomputed, not a crash
        path.write_text(garbage)
        record.configure(record.settings_for(mode, store))
        with pytest.warns(UserWarning, match=f"record entry {path} is broken") as seen:
            assert counting_experiment().values == [2.0, 4.0]
        assert len(seen) == 1  # named once
    assert json.loads(path.read_text())["result"]["values"] == [2.0, 4.0]  # fill rewrote it


def test_an_entry_whose_arguments_do_not_match_its_key_is_broken(store):
    counting_experiment()
    (path,) = store.glob("counting_experiment-*.json")
    entry = json.loads(path.read_text())
    entry["arguments"]["scale"] = 3.0
    path.write_text(json.dumps(entry))
    with pytest.warns(UserWarning, match="do not hash to its key"):
        counting_experiment()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_record_still_returns_the_result(store):
    store.chmod(0o555)
    try:
        with pytest.warns(UserWarning, match="could not record"):
            result = counting_experiment()
        assert result.values == [2.0, 4.0]
        assert counting_experiment() == result and CALLS == [2.0]  # kept for this process
    finally:
        store.chmod(0o755)


def test_a_write_error_still_returns_the_result(store, monkeypatch):
    def refuse(path, entry):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(entries, "write_entry", refuse)
    with pytest.warns(UserWarning, match="could not record"):
        assert counting_experiment().values == [2.0, 4.0]


def test_entries_get_the_permissions_of_the_umask(store):
    before = os.umask(0o022)
    try:
        counting_experiment()
    finally:
        os.umask(before)
    (path,) = store.glob("counting_experiment-*.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_an_empty_record_dir_variable_means_the_default(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LNPAPER_RECORD_DIR", "")
    assert record.record_dir() == record.REPO_RESULTS
    monkeypatch.setenv("LNPAPER_RECORD_DIR", str(tmp_path / "elsewhere"))
    assert record.record_dir() == tmp_path / "elsewhere"


def test_modes_come_from_the_environment(monkeypatch):
    record.configure(None)
    monkeypatch.setenv("LNPAPER_RECORD", "off")
    assert record.current().read is False and record.current().missing == "compute"
    monkeypatch.setenv("LNPAPER_RECORD", "")
    assert record.current().missing == "live"
    monkeypatch.setenv("LNPAPER_RECORD", "strict")
    assert record.current().missing == "error"
    monkeypatch.setenv("LNPAPER_RECORD", "sometimes")
    with pytest.raises(ValueError, match="LNPAPER_RECORD must be one of on, strict, off, fill"):
        record.current()


def test_a_live_run_writes_nothing_and_says_so(store, capsys):
    with record.using("off"):
        counting_experiment()
        counting_experiment()  # kept in memory for this process
    assert CALLS == [2.0] and not list(store.glob("*.json"))
    try:
        setup(recompute=True)
        assert "a live run, computed on this machine" in capsys.readouterr().out
    finally:
        record.configure(None)
    setup()
    assert "read from the record" in capsys.readouterr().out


@experiment
def thread_count_experiment() -> CountResult:
    return CountResult(values=[torch.get_num_threads()], scale=1.0)


@pytest.mark.parametrize("mode", ["fill", "off"])
def test_experiments_run_on_the_fixed_thread_count_whatever_the_caller_set(store, mode):
    record.configure(record.settings_for(mode, store))
    torch.set_num_threads(2)
    try:
        assert thread_count_experiment().values == [THREADS]
        assert torch.get_num_threads() == 2  # and the caller's setting comes back
    finally:
        torch.set_num_threads(1)


def test_results_must_be_plain_numbers(store):
    with pytest.raises(TypeError, match="plain numbers"):
        entries.to_plain(CountResult(values=[object()], scale=1.0))


@pytest.mark.slow
def test_the_record_is_the_same_whatever_the_number_of_workers(tmp_path):
    """Two cheap experiments recomputed in worker processes, on 1 and on 2 workers."""
    tasks = [
        {"experiment": name, "arguments": {}, "key": name}
        for name in ("layernorm_parity", "per_token_independence", "batch_of_one")
    ]
    for workers in (1, 2):
        reproduce.recompute(tasks, tmp_path / str(workers), workers)
    one, two = sorted((tmp_path / "1").glob("*.json")), sorted((tmp_path / "2").glob("*.json"))
    assert [p.name for p in one] == [p.name for p in two] and len(one) == 3
    for a, b in zip(one, two, strict=True):
        assert json.loads(a.read_text())["result"] == json.loads(b.read_text())["result"]


def test_no_warning_in_a_clean_read(store):
    counting_experiment()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counting_experiment()


# ---- the reproduction check's comparison ------------------------------------------------------


def test_each_kind_of_quantity_has_its_own_tolerance():
    from lnpaper import stats
    from lnpaper.companion import verdicts as core

    assert core.exact("x", 1e-16, 1e-12).tolerance(core.exact("x", 5e-16, 1e-12)) == 1e-12
    a = stats.paired_difference([1.0, 2.0, 3.0, 4.0], [0.0] * 4)
    b = stats.paired_difference([1.5, 2.5, 3.5, 4.5], [0.0] * 4)
    tolerance = core.aggregate("m", a).tolerance(core.aggregate("m", b))
    assert tolerance == pytest.approx(3 * math.hypot(a.se, b.se))
    assert core.count("k", 6, 6).tolerance(core.count("k", 6, 6)) == 0.0  # p = 1: exactly


@pytest.mark.slow
def test_the_comparison_catches_a_changed_quantity_and_a_changed_verdict(tmp_path):
    from lnpaper import ledger

    recorded, fresh = tmp_path / "recorded", tmp_path / "fresh"
    tasks = [{"experiment": "backward_parity", "arguments": {}, "key": "b"}]
    for directory in (recorded, fresh):
        reproduce.recompute(tasks, directory, workers=1)
    f3 = [ledger.BY_ID["F3"]]
    quantities, verdicts, _ = reproduce_compare.compare_claims(recorded, fresh, f3)
    assert all(row[-1] for row in quantities) and quantities
    assert [row[-1] for row in verdicts] == ["same"]

    (path,) = fresh.glob("backward_parity-*.json")
    entry = json.loads(path.read_text())
    entry["result"]["max_diff_dx"] = 1e-9  # beyond F3's roundoff bound, and its verdict flips
    path.write_text(json.dumps(entry))
    quantities, verdicts, _ = reproduce_compare.compare_claims(recorded, fresh, f3)
    assert not quantities[0][-1]
    assert verdicts == [("F3", "backward_parity", "reproduced", "not reproduced", "CHANGED")]


def test_a_writers_check_of_some_runs_compares_the_claims_that_read_them():
    chosen = {c.id for c in reproduce._claims_reading({"sequence_training"}, record.REPO_RESULTS)}
    # R3 reads its runs through an analysis (recurrent_training), M4e through gain_pixels
    assert {"R3", "R3c", "M4e", "R6"} <= chosen
    assert not chosen & {"F1", "I1", "T1", "R5"}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"lr": "fast"}, "lm_training(lr='fast'): expected a number, like the default 0.003"),
        ({"batch_size": 16.5}, "lm_training(batch_size=16.5): expected a whole number"),
        ({"steps": True}, "lm_training(steps=True): expected a whole number"),
        ({"batch_size": -16}, "lm_training(batch_size=-16): a count cannot be negative"),
        ({"seeds": 5}, "lm_training(seeds=5): expected a sequence"),
        ({"placement": 1}, "lm_training(placement=1): expected a name"),
        ({"learning_rate": 0.1}, "lm_training() has no parameter 'learning_rate'; it takes: "),
    ],
)
def test_an_experiment_names_a_bad_argument_before_anything_runs(arguments, message):
    from lnpaper.chapters.ch06_transformer import runs

    with pytest.raises(TypeError, match=re.escape(message)):
        runs.lm_training(**arguments)


def test_numpy_numbers_and_any_sequence_pass_the_argument_check():
    from lnpaper.arguments import check_arguments

    def kinds(*, lr: float = 1e-3, steps: int = 3, seeds=(0, 1), arm: str = "pre"):
        pass

    signature = inspect.signature(kinds)
    for arguments in ({"lr": np.float32(0.1)}, {"lr": 1}, {"steps": np.int64(5)},
                      {"seeds": range(4)}, {"seeds": [3]}, {"seeds": np.arange(2)},
                      {"arm": "peri"}):  # fmt: skip
        check_arguments("kinds", signature, arguments)
