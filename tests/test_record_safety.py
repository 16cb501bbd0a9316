"""Nothing lost, nothing silently wrong (issue 21): entries replaced only when the new one is whole,
arguments and the record's folder checked before anything is touched, entries of the wrong shape
named and recomputed, standard JSON for NaN and infinities, advice that works for the call at hand,
and the CPU's model name in each new entry."""

import contextlib
import dataclasses
import json
import math
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import pytest

from lnpaper import book, reproduce, reproduce_report
from lnpaper.__main__ import main
from lnpaper.companion import entries, record
from lnpaper.companion.record import experiment


@dataclasses.dataclass
class SafeResult:
    values: list
    scale: float
    by_size: dict = dataclasses.field(default_factory=dict)
    label: str | None = None


@experiment
def safe_experiment(*, scale: float = 2.0, sizes=(1, 2)) -> SafeResult:
    _log("safe_experiment")
    return SafeResult(
        values=[s * scale for s in sizes], scale=scale, by_size={s: s * scale for s in sizes}
    )


@experiment
def non_finite_experiment() -> SafeResult:
    return SafeResult(
        values=[math.nan, math.inf, -math.inf, 1.5],
        scale=math.nan,
        by_size={1: math.inf, (2, 3): -math.inf},
    )


def _log(name: str) -> None:
    """Each computation, in a file shared by worker processes (LNPAPER_TEST_LOG)."""
    if os.environ.get("LNPAPER_TEST_LOG"):
        with open(os.environ["LNPAPER_TEST_LOG"], "a") as log:
            log.write(name + "\n")


@pytest.fixture
def store(tmp_path):
    record.configure(record.settings_for("fill", tmp_path))
    yield tmp_path
    record.configure(None)


@pytest.fixture
def copied_record(tmp_path, monkeypatch):
    """A copy of the committed record, where `record` writes (never results/ itself)."""
    directory = tmp_path / "results"
    shutil.copytree(record.REPO_RESULTS, directory)
    monkeypatch.setenv("LNPAPER_RECORD_DIR", str(directory))
    return directory


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


# ---- 1. an entry is replaced only by a whole new one ---------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [
        ("replace", OSError(28, "No space left on device")),
        ("fsync", OSError(28, "No space left on device")),
        ("replace", KeyboardInterrupt()),
    ],
    ids=["full disk at the rename", "full disk at the write", "Ctrl-C"],
)
def test_a_failed_or_interrupted_write_leaves_the_old_entry_and_no_temporary_file(
    store, monkeypatch, failure
):
    safe_experiment()
    (path,) = store.glob("safe_experiment-*.json")
    old = path.read_bytes()
    entry = json.loads(old)
    entry["result"]["values"] = [9.0, 9.0]
    where, error = failure

    def fail(*args):
        raise error

    monkeypatch.setattr(os, where, fail)
    with pytest.raises(type(error)):
        entries.write_entry(path, entry)
    monkeypatch.undo()
    assert path.read_bytes() == old
    assert [p.name for p in store.iterdir()] == [path.name]  # no *.tmp left


def test_a_redo_whose_write_fails_keeps_the_old_entry_and_says_so(store, monkeypatch):
    safe_experiment()
    (path,) = store.glob("safe_experiment-*.json")
    old = path.read_bytes()

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with record.redoing({path.stem.rsplit("-", 1)[1]}) as unwritten:
        with pytest.warns(UserWarning, match="could not record"):
            assert safe_experiment().values == [2.0, 4.0]
    assert path.read_bytes() == old and [p.name for p in store.iterdir()] == [path.name]
    assert unwritten and "No space left" in unwritten[0]


def test_record_interrupted_before_it_recomputes_has_deleted_nothing(copied_record, monkeypatch):
    before = _files(copied_record)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(reproduce, "recompute", interrupted)
    with contextlib.suppress(KeyboardInterrupt):
        assert reproduce.record_command(["rnn_dynamics", "cnn_coda"], 1) == 130
    assert _files(copied_record) == before


@pytest.mark.slow
def test_record_replaces_an_entry_with_its_recomputed_one(copied_record):
    (path,) = copied_record.glob("layernorm_parity-*.json")
    old = json.loads(path.read_text())
    assert reproduce.record_command(["layernorm_parity"], 1) == 0
    new = json.loads(path.read_text())
    # the same result up to roundoff: another CPU sums float64 in another order (exact equality
    # held only on the machine that made the record)
    assert (
        new["result"].keys() == old["result"].keys()
        and new["made"]["cpu_model"] == record.cpu_model()
    )
    for name, value in old["result"].items():
        if isinstance(value, float):
            assert new["result"][name] == pytest.approx(value, rel=1e-6, abs=1e-12), name
        else:
            assert new["result"][name] == value, name
    assert sorted(_files(copied_record)) == sorted(p.name for p in record.REPO_RESULTS.iterdir())


@pytest.mark.slow
def test_analyses_start_once_the_runs_are_redone_and_read_them(tmp_path, monkeypatch):
    """The tasks of `then` (the analyses `record` runs) start only once every run is redone: an
    analysis reads the new entries, and nothing is computed twice."""
    directory = tmp_path / "record"
    with record.using(record.settings_for("fill", directory)):
        gathered_analysis()
    runs = sorted(directory.glob("safe_experiment-*.json"))
    for path in runs:
        entry = json.loads(path.read_text())
        entry["result"]["values"] = [-1.0]  # as if an older version of the code had made it
        path.write_text(json.dumps(entry))
    log = tmp_path / "log"
    monkeypatch.setenv("LNPAPER_TEST_LOG", str(log))
    # a test's experiment is not in the book: its task names its module, as an analysis does
    tasks = [
        {**json.loads(path.read_text()), "experiment": f"{__name__}:safe_experiment"}
        for path in runs
    ]
    analysis = {"experiment": f"{__name__}:gathered_analysis", "arguments": {}, "key": "analysis"}
    redo = {task["key"] for task in tasks}
    reproduce.recompute(tasks, directory, 2, redo=redo, then=[analysis])
    values = {
        entry["arguments"]["scale"]: entry["result"]["values"]
        for entry in (json.loads(path.read_text()) for path in runs)
    }
    assert values == {3.0: [3.0, 6.0], 4.0: [4.0, 8.0]}
    assert log.read_text().split() == ["safe_experiment", "safe_experiment"]
    assert not list(directory.glob("*.tmp"))


# ---- 2. arguments checked before anything is touched ---------------------------------------------


def test_record_with_no_workers_is_refused_and_touches_nothing(copied_record, capsys):
    before = _files(copied_record)
    assert reproduce.record_command(["rnn_dynamics"], 0) == 2
    assert "--workers must be at least 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["record", "rnn_dynamics", "--workers", "0"])
    assert stop.value.code == 2 and "must be at least 1, got 0" in capsys.readouterr().err
    assert reproduce.record_command(["rnn_dynamics", "no_such_experiment"], 1) == 2
    assert "unknown experiment(s): no_such_experiment" in capsys.readouterr().err
    assert _files(copied_record) == before


def test_record_named_computes_that_experiments_default_call(tmp_path, monkeypatch):
    """So that `python -m lnpaper record NAME`, which RecordMissing advises for a default call,
    records it, also for an experiment that only other experiments call."""
    monkeypatch.setenv("LNPAPER_RECORD_DIR", str(tmp_path))
    asked = []
    monkeypatch.setattr(reproduce, "recompute", lambda tasks, *a, **k: asked.extend(tasks) or [])
    assert reproduce.record_command(["lm_training"], 1) == 0
    assert [task["key"] for task in asked] == [reproduce._default_key("lm_training")]


def gathered_analysis() -> list:
    """An analysis: it records nothing itself and reads two runs of safe_experiment."""
    return [safe_experiment(scale=3.0).values, safe_experiment(scale=4.0).values]


def test_record_fills_the_runs_an_analysis_reads_and_records_no_analysis(tmp_path, monkeypatch):
    monkeypatch.setenv("LNPAPER_RECORD_DIR", str(tmp_path))
    monkeypatch.setattr(reproduce, "_default_calls", lambda: [gathered_analysis])
    assert reproduce.record_command([], 1) == 0
    recorded = sorted((e["experiment"], e["arguments"]["scale"]) for e in record.entries(tmp_path))
    assert recorded == [("safe_experiment", 3.0), ("safe_experiment", 4.0)]
    record.configure(record.settings_for("strict", tmp_path))
    try:
        assert gathered_analysis() == [[3.0, 6.0], [4.0, 8.0]]  # read, not computed
    finally:
        record.configure(None)


def test_reading_lists_the_runs_an_analysis_reads(store):
    with record.reading() as read:
        gathered_analysis()
    assert [name for name, _ in read] == ["safe_experiment", "safe_experiment"]
    assert [key for _, key in read] == [
        record.key("safe_experiment", {"scale": s, "sizes": [1, 2]}) for s in (3.0, 4.0)
    ]


def test_prune_removes_the_entries_of_experiments_no_chapter_lists(store, monkeypatch, capsys):
    safe_experiment()
    entry = record.compute("gone_experiment", lambda: SafeResult([1.0], 1.0), {})
    entries.write_entry(store / f"gone_experiment-{entry['key']}.json", entry)
    monkeypatch.setenv("LNPAPER_RECORD_DIR", str(store))
    in_the_book = {**book.experiments(), "safe_experiment": safe_experiment}
    monkeypatch.setattr(book, "experiments", lambda: in_the_book)
    assert main(["record", "--prune"]) == 0
    assert [p.name.split("-")[0] for p in store.iterdir()] == ["safe_experiment"]
    assert "removed gone_experiment-" in capsys.readouterr().out


# ---- 4. a record that cannot be written is refused, by name --------------------------------------


def test_record_into_a_folder_it_cannot_create_fails_naming_it(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("LNPAPER_RECORD_DIR", str(blocker / "results"))
    assert reproduce.record_command(["layernorm_parity"], 1) == 1
    assert f"cannot write into the record {blocker / 'results'}" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a folder without write permission")
def test_record_into_a_read_only_record_fails_naming_it(copied_record, capsys):
    before = _files(copied_record)
    copied_record.chmod(0o555)
    try:
        assert reproduce.record_command(["layernorm_parity"], 1) == 1
    finally:
        copied_record.chmod(0o755)
    assert f"cannot write into the record {copied_record}" in capsys.readouterr().err
    assert _files(copied_record) == before


# ---- 5. an entry of the wrong shape is broken: named and recomputed ------------------------------


def _edit(path: Path, edit) -> None:
    entry = json.loads(path.read_text())
    edit(entry)
    path.write_text(json.dumps(entry))


SHAPES = {
    "a string": lambda e: e.update(result="oops"),
    "null": lambda e: e.update(result=None),
    "a list": lambda e: e.update(result=[1, 2]),
    "{}": lambda e: e.update(result={}),
    "an extra field": lambda e: e["result"].update(extra=1),
    "a field of the wrong type": lambda e: e["result"].update(values="oops"),
    "a number of the wrong type": lambda e: e["result"].update(scale="2.0"),
    "a bool for a number": lambda e: e["result"].update(scale=True),
    "a wrong optional": lambda e: e["result"].update(label=3),
    "a broken non-finite marker": lambda e: e["result"].update(scale={"__float__": "lots"}),
    "no made": lambda e: e.pop("made", None),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_an_entry_of_the_wrong_shape_is_named_and_recomputed(store, shape):
    safe_experiment()
    (path,) = store.glob("safe_experiment-*.json")
    for mode in ("on", "fill"):
        _edit(path, SHAPES[shape])
        with pytest.warns(UserWarning, match=f"record entry {path} is broken"):
            assert (
                record.entries(store, {"safe_experiment": SafeResult}) == []
            )  # what `record` reads: no KeyError, no crash
        record.configure(record.settings_for(mode, store))
        with pytest.warns(UserWarning, match=f"record entry {path} is broken") as seen:
            assert safe_experiment() == SafeResult([2.0, 4.0], 2.0, {1: 2.0, 2: 4.0})
        assert len(seen) == 1
    assert json.loads(path.read_text())["result"]["values"] == [2.0, 4.0]  # fill rewrote it


def test_the_message_names_the_field(store):
    safe_experiment()
    (path,) = store.glob("safe_experiment-*.json")
    _edit(path, SHAPES["a field of the wrong type"])
    with pytest.warns(UserWarning, match=r"result.values should be list, got str 'oops'"):
        safe_experiment()
    _edit(path, SHAPES["no made"])
    with pytest.warns(UserWarning, match="it lacks 'made'"):
        safe_experiment()


def test_every_committed_entry_has_the_shape_of_its_experiment():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = record.entries(record.REPO_RESULTS, book.result_types())
    assert len(found) == len(list(record.REPO_RESULTS.glob("*.json")))


# ---- 6. NaN and infinities as standard JSON ------------------------------------------------------


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_nan_and_infinities_are_written_as_standard_json_and_come_back(store):
    fresh = non_finite_experiment()
    (path,) = store.glob("non_finite_experiment-*.json")
    entry = _strict(path.read_text())  # no bare NaN or Infinity
    assert entry["result"]["values"][:3] == [
        {"__float__": "NaN"},
        {"__float__": "Infinity"},
        {"__float__": "-Infinity"},
    ]
    recorded = non_finite_experiment()
    for result in (fresh, recorded):
        assert math.isnan(result.values[0]) and result.values[1:] == [math.inf, -math.inf, 1.5]
        assert math.isnan(result.scale) and result.by_size == {1: math.inf, (2, 3): -math.inf}
    assert entry["key"] == record.key("non_finite_experiment", {})  # keys hash the arguments only


def test_an_older_entry_with_bare_nan_still_reads(store):
    non_finite_experiment()
    (path,) = store.glob("non_finite_experiment-*.json")
    entry = _strict(path.read_text())
    entry["result"] = {"values": [math.nan, math.inf], "scale": -math.inf}
    path.write_text(json.dumps(entry))  # as the record wrote them before
    assert "NaN" in path.read_text()
    record.configure(record.settings_for("on", store))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = non_finite_experiment()
    assert math.isnan(result.values[0]) and result.values[1] == math.inf
    assert result.scale == -math.inf


# ---- 7. advice that works for the call at hand ---------------------------------------------------


def test_a_missing_call_with_other_arguments_is_told_what_works(store):
    record.configure(record.settings_for("strict", store))
    with pytest.raises(record.RecordMissing) as missing:
        safe_experiment(scale=5.0)
    message = str(missing.value)
    assert "safe_experiment(scale=5.0, sizes=[1, 2])" in message
    assert "Add it with `python -m lnpaper record" not in message
    assert "LNPAPER_RECORD=off" in message and "lnpaper.setup(recompute=True)" in message
    assert "LNPAPER_RECORD=fill" in message
    # and the advice works: fill computes and records it, after which it reads
    record.configure(record.settings_for("fill", store))
    assert safe_experiment(scale=5.0).values == [5.0, 10.0]
    record.configure(record.settings_for("on", store))
    assert safe_experiment(scale=5.0).values == [5.0, 10.0]
    with record.using("off"):
        assert safe_experiment(scale=6.0).values == [6.0, 12.0]


def test_a_missing_default_call_is_told_to_record_it(store):
    record.configure(record.settings_for("strict", store))
    with pytest.raises(record.RecordMissing, match="Add it with `python -m lnpaper record safe_"):
        safe_experiment(sizes=[1, 2])  # the defaults, spelled out


# ---- 8. the CPU model beside the capability ------------------------------------------------------


def test_an_entry_names_the_cpu_model_and_keys_do_not_change(store, monkeypatch):
    safe_experiment()
    (path,) = store.glob("safe_experiment-*.json")
    made = json.loads(path.read_text())["made"]
    assert made["cpu_model"] == record.cpu_model()
    if Path("/proc/cpuinfo").exists() and "model name" in Path("/proc/cpuinfo").read_text():
        assert made["cpu_model"]
    assert path.stem.endswith(record.key("safe_experiment", {"scale": 2.0, "sizes": (1, 2)}))
    monkeypatch.setattr(record, "Path", lambda _: Path("/nonexistent/cpuinfo"))
    monkeypatch.setattr(record.platform, "processor", lambda: "a CPU")
    assert record.cpu_model() == "a CPU"
    monkeypatch.setattr(record.platform, "processor", lambda: "")
    assert record.cpu_model() == ""


def test_the_report_names_the_cpu_models_of_the_record():
    def made(model):
        return {"made": {"cpu_capability": "AVX2", "date": "2026-12-01", "cpu_model": model}}

    old = {"made": {"cpu_capability": "AVX2", "date": "2026-11-30"}}
    line = reproduce_report._machine([made("AMD EPYC"), made("Intel Xeon"), old])
    assert "AMD EPYC" in line and "Intel Xeon" in line and "not recorded" in line


# ---- 8. any file, any result, any user -----------------------------------------------------------


def test_an_entry_that_is_not_utf8_is_named_and_recomputed(store):
    safe_experiment()
    (path,) = store.glob("safe_experiment-*.json")
    path.write_bytes(bytes(range(128, 256)))  # raw bytes, no UTF-8
    with pytest.warns(UserWarning, match=f"record entry {path} cannot be read"):
        assert record.entries(store, book.result_types()) == []
    with pytest.warns(UserWarning, match=f"record entry {path} cannot be read"):
        assert safe_experiment() == SafeResult([2.0, 4.0], 2.0, {1: 2.0, 2: 4.0})
    assert json.loads(path.read_text())["result"]["values"] == [2.0, 4.0]  # fill rewrote it


@experiment
def marker_keys_experiment() -> SafeResult:
    return SafeResult(
        values=[{"__items__": [[1, 2]]}, {"__float__": "NaN"}, {"__items__": 1, "other": 2}],
        scale=1.0,
        by_size={"__items__": {"__float__": 3.0}},
    )


def test_a_result_whose_keys_are_the_encodings_markers_comes_back_the_same(store):
    fresh = marker_keys_experiment()
    record.configure(record.settings_for("strict", store))
    recorded = marker_keys_experiment()
    assert recorded == fresh
    assert recorded.values[1] == {"__float__": "NaN"}  # a string, not a float
    assert recorded.by_size == {"__items__": {"__float__": 3.0}}


@pytest.fixture
def shared_folder():
    """A folder every user of the machine can enter (pytest's tmp_path is the test user's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="lnpaper-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.mark.skipif(
    not hasattr(os, "fork") or os.geteuid() != 0, reason="needs root to be two users"
)
def test_two_users_share_an_entrys_lock_and_no_lock_file_is_left(shared_folder, monkeypatch):
    folder = shared_folder / "locks"
    monkeypatch.setattr(entries, "LOCK_FOLDER", folder)
    entry = shared_folder / "entry.json"
    lock_path = entries.lock_file(entry)  # makes the folder, as this user
    # A lock file this user left (its process killed while computing), with umask 0o077's mode.
    lock_path.touch(mode=0o600)
    lock_path.chmod(0o600)
    marks = shared_folder / "marks"
    marks.mkdir()
    marks.chmod(0o777)
    took = marks / "took it"

    # The child is forked before this user takes the lock: a child forked while it is held would
    # share the held lock's open file, and hold it too.
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child, as the user `nobody`: never returns into pytest
        code = 1
        try:
            os.close(ready_write)
            os.setgid(65534)
            os.setuid(65534)
            os.read(ready_read, 1)  # until the other user holds the lock
            with entries.entry_lock(entry):
                os.close(os.open(took, os.O_CREAT | os.O_WRONLY, 0o666))
            code = 0 if not lock_path.exists() else 3
        finally:
            os._exit(code)
    os.close(ready_read)
    with entries.entry_lock(entry):
        os.write(ready_write, b"x")
        time.sleep(1.0)
        assert not took.exists(), "the other user took a lock this one holds"
    os.close(ready_write)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert took.exists()
    assert list(folder.iterdir()) == []  # every lock file removed


def test_each_lock_removes_its_file_when_released(tmp_path, monkeypatch):
    folder = tmp_path / "locks"
    monkeypatch.setattr(entries, "LOCK_FOLDER", folder)
    for name in ("a.json", "b.json", "a.json"):
        with entries.entry_lock(tmp_path / name):
            assert entries.lock_file(tmp_path / name).exists()
    assert list(folder.iterdir()) == []


def test_a_lock_folder_that_cannot_be_used_leaves_the_work_unlocked(tmp_path, monkeypatch):
    in_the_way = tmp_path / "locks"
    in_the_way.write_text("a file where the folder goes")
    monkeypatch.setattr(entries, "LOCK_FOLDER", in_the_way)
    assert entries.lock_file(tmp_path / "a.json") is None
    with entries.entry_lock(tmp_path / "a.json"):
        pass
    assert in_the_way.read_text() == "a file where the folder goes"


@pytest.mark.slow
def test_reproduce_leaves_this_process_environment_as_it_was(copied_record, monkeypatch, capsys):
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    # scikit-learn sets two OpenMP variables the first time it is imported, in whichever process
    # that is: imported here first, its own settings are not counted as the check's.
    import sklearn  # noqa: F401

    before = dict(os.environ)
    assert reproduce.reproduce_command(1, None, ["layernorm_parity"]) == 0
    assert "reproduce: recomputing 1 entries" in capsys.readouterr().out
    assert dict(os.environ) == before  # its workers' path was set for them alone
