"""`python -m lnpaper record` interrupted: by Ctrl-C, SIGINT or SIGTERM while it computes, it stops at
once with every worker, and the record is byte for byte as it was."""

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lnpaper.companion import entries, record

pytestmark = pytest.mark.slow  # `record` started and interrupted in subprocesses

# An experiment of the book that no other entry calls, so `record` redoes one entry, and that takes
# long enough (tens of seconds) that it is still computing when the signal lands; the test stops
# it within seconds, so its length costs nothing.
EXPERIMENT = "branch_dependence"


def _interruptible() -> None:
    """Ctrl-C as a terminal delivers it: a suite started in the background (`make test &`) runs
    with SIGINT ignored, which its children inherit, and then `record` never sees the signal
    (it ran to the end, exiting 0, in two fresh-clone runs started that way)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def _computing(entry: Path) -> bool:
    """Whether a process holds the lock `record.call` holds while it computes `entry`."""
    try:
        fd = os.open(entries.lock_file(entry), os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _alive(pid: int) -> bool:
    """A process that runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _descendants(root: int) -> set[int]:
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


@pytest.fixture
def copied_record(tmp_path):
    directory = tmp_path / "results"
    shutil.copytree(record.REPO_RESULTS, directory)
    return directory


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree in /proc")
@pytest.mark.parametrize(
    "how", ["SIGTERM to record", "SIGINT to record alone", "Ctrl-C (SIGINT to its group)"]
)
def test_an_interrupted_record_stops_at_once_and_leaves_the_record_as_it_was(copied_record, how):
    (entry,) = copied_record.glob(f"{EXPERIMENT}-*.json")
    before = _files(copied_record)
    env = {**os.environ, "LNPAPER_RECORD_DIR": str(copied_record)}
    process = subprocess.Popen(
        [sys.executable, "-m", "lnpaper", "record", EXPERIMENT, "--workers", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a shell gives a command
        preexec_fn=_interruptible,
    )
    try:
        deadline = time.monotonic() + 180
        while not _computing(entry):  # its worker holds the entry's lock while it computes
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "record never started computing"
            time.sleep(0.05)
        tree = _descendants(process.pid)
        assert tree, "record computes in a worker process"
        if how == "SIGTERM to record":
            process.send_signal(signal.SIGTERM)
        elif how == "SIGINT to record alone":
            process.send_signal(signal.SIGINT)
        else:
            os.killpg(process.pid, signal.SIGINT)
        stopped = time.monotonic()
        process.wait(timeout=20)
        while any(_alive(pid) for pid in tree) and time.monotonic() - stopped < 20:
            time.sleep(0.05)
        took = time.monotonic() - stopped
        assert not [pid for pid in tree if _alive(pid)], f"workers outlived record ({how})"
        assert took < 5, f"record took {took:.1f} s to stop ({how})"
        assert process.returncode != 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
    assert _files(copied_record) == before, err.decode()[-2000:]
