"""`python -m lnpaper record` and `python -m lnpaper reproduce`: recompute the record, in parallel
(`lnpaper.recompute`), into itself or into a folder of its own.

`record` recomputes entries in the record itself, then records what the claims and figures read
that it still lacks. `reproduce` recomputes every entry into a temporary folder and compares it with
the record (`lnpaper.reproduce_compare`): each claim's verdict must be the same, and each quantity a
verdict rests on must lie within the tolerance its kind gives (`lnpaper.companion.verdicts`); its
report is `lnpaper.reproduce_report`. `record` computes on ATEN's portable kernels
(`record.RECORD_PATH`), so `make test` checks on this machine's native kernels, another numeric path
than the record's, and every CI run shows that the record travels.
"""

import contextlib
import inspect
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

from lnpaper import book
from lnpaper.companion import record, work
from lnpaper.recompute import recompute, workers_on_path
from lnpaper.reproduce_compare import check_problems, compare_claims
from lnpaper.reproduce_report import report_markdown


def typed_entries(directory: Path) -> list[dict]:
    """The record's entries, each result checked against its experiment's result type."""
    return record.entries(directory, book.result_types())


def record_command(names: list[str], workers: int) -> int:
    """Recompute the entries of `names` (all if none) in the record itself, and the default call of
    each experiment named; then compute whatever the claims and figures need that it still lacks.
    Each new entry replaces the old one only when it is complete, so an interrupted `record` loses
    nothing."""
    if workers < 1:
        print(f"record: --workers must be at least 1, got {workers}", file=sys.stderr)
        return 2
    known = set(book.experiments())
    unknown = sorted(set(names) - known)
    if unknown:
        print(f"record: unknown experiment(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    directory = record.record_dir()
    problem = _unwritable(directory)
    if problem:
        print(f"record: cannot write into the record {directory} ({problem})", file=sys.stderr)
        return 1
    existing = typed_entries(directory)
    chosen = {e["key"] for e in existing if not names or e["experiment"] in names}
    redo = [e for e in existing if e["key"] in chosen]
    # Then whatever the claims and figures ask for that is not recorded yet (new arguments, a new
    # experiment), and the default call of each experiment named: computed unless already there.
    calls = [] if names else _default_calls()
    asked = {run.__name__ for run in calls if run.__name__ in known} | set(names)
    recorded = {e["key"] for e in existing}
    defaults = [
        {"experiment": name, "arguments": {}, "key": key, "label": f"{name}()"}
        for name in sorted(asked)
        if (key := _default_key(name)) is not None and key not in recorded
    ]
    # The analyses the claims and figures read, each once everything above is done: in fill mode
    # an analysis reads the runs it needs and computes (and records) those still missing.
    analyses = [
        {"experiment": f"{run.__module__}:{run.__qualname__}", "arguments": {},
         "key": f"{run.__module__}.{run.__qualname__}()",
         "label": f"{run.__qualname__}() (an analysis)"}
        for run in calls
        if run.__name__ not in known
    ]  # fmt: skip
    print(f"record: {len(redo)} entries, {len(defaults)} default calls and {len(analyses)} "
          f"analyses into {directory}, {workers} worker(s), on ATEN's portable kernels "
          f"(ATEN_CPU_CAPABILITY={RECORD_ATEN})")  # fmt: skip
    try:
        with workers_on_path(RECORD_ATEN):  # the record's path, whatever this machine's
            unwritten = recompute(redo + defaults, directory, workers, redo=chosen, then=analyses)
    except KeyboardInterrupt:
        print(
            f"record: interrupted; each entry in {directory} is as it was or newly complete",
            file=sys.stderr,
        )
        return 130
    for problem in unwritten:
        print(f"record: could not write {problem}", file=sys.stderr)
    print(f"record: {len(record.entries(directory))} entries in {directory}")
    return 1 if unwritten else 0


def _unwritable(directory: Path) -> str:
    """Why an entry cannot be written into `directory`, or "" (tried, not guessed from modes:
    root writes into a read-only folder, and a read-only file system refuses root)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=directory, prefix=".lnpaper-write-check-")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        return error.strerror or str(error)
    return ""


def _default_key(name: str) -> str | None:
    """The record key of experiment `name` called with its default arguments; None if it has an
    argument without a default (it is only ever called by another experiment)."""
    try:
        bound = inspect.signature(book.experiments()[name]).bind()
    except TypeError:
        return None
    bound.apply_defaults()
    return record.key(name, dict(bound.arguments))


def _default_calls() -> list:
    """The experiments that the claims and the figures call, with their default arguments."""
    runs = [run for claim in book.claims() for run in claim.experiments]
    runs += [spec.experiment for spec in book.figures().values() if spec.experiment is not None]
    return list(dict.fromkeys(runs))


def _claims_reading(names: set[str], directory: Path) -> list:
    """The claims that read an entry of an experiment in `names` from the record in `directory`,
    directly or through an analysis (watched as they read, not guessed from their names)."""
    chosen = []
    with record.using(record.settings_for("strict", directory)):
        for claim in book.claims():
            with record.reading() as read:
                for run in claim.experiments:
                    run()
            if {name for name, _ in read} & names:
                chosen.append(claim)
    return chosen


# the path `record` computes on, as ATEN_CPU_CAPABILITY names the capability torch reports
RECORD_ATEN = record.RECORD_PATH.lower()


def choose_path(recorded: set[str], native: str, asked: str | None) -> tuple[str | None, str]:
    """The numeric path to recompute on: (the ATEN_CPU_CAPABILITY to set, or None for none, and
    the path as the report names it). The check is only worth its time on a path other than every
    one the record was made on, and the fastest such path is the best: the native kernels if they
    differ from the record's, else AVX2 on an AVX-512 CPU, else ATEN's portable kernels (about a
    fifth slower). A value the caller set in the environment is kept."""
    if asked:
        return None, f"ATEN_CPU_CAPABILITY={asked} (set by the caller)"
    if native not in recorded:
        return None, f"native {native} (the record's: {', '.join(sorted(recorded))})"
    if native == "AVX512" and "AVX2" not in recorded:
        return "avx2", "ATEN_CPU_CAPABILITY=avx2 (native AVX512 is the record's own path)"
    return "default", f"ATEN_CPU_CAPABILITY=default (native {native} is the record's own path)"


@contextlib.contextmanager
def _fresh_folder(keep: Path | None):
    """A temporary folder, or `keep` emptied of record entries (and left in place afterwards)."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="lnpaper-reproduce-") as name:
            yield Path(name)
        return
    keep.mkdir(parents=True, exist_ok=True)
    for old in keep.glob("*.json"):
        old.unlink()
    yield keep


def reproduce_command(
    workers: int,
    report: Path | None,
    names: list[str] = (),
    keep: Path | None = None,
    flops: Path | None = None,
) -> int:
    """Recompute the record (or only the entries of `names` and the claims that rest on them: a
    writer's quick check) and compare it with what is recorded. With `keep`, the recomputed record
    stays in that folder (its old JSON files removed first): `make test` runs every notebook on it,
    so each must reach its end on this machine's numbers. With `flops` (the counts `python -m
    lnpaper work` wrote), the report states the check's FLOPs and rate."""
    recorded_dir = record.record_dir()
    recorded = typed_entries(recorded_dir)
    if not recorded:
        print(f"reproduce: no record in {recorded_dir}", file=sys.stderr)
        return 1
    chosen_claims = None
    if names:
        unknown = sorted(set(names) - set(book.experiments()))
        if unknown:
            print(f"unknown experiment(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        unchanged = [e for e in recorded if e["experiment"] not in names]
        recorded = [e for e in recorded if e["experiment"] in names]
        chosen_claims = _claims_reading({e["experiment"] for e in recorded}, recorded_dir)
    capabilities = {e["made"]["cpu_capability"] for e in recorded}
    native = torch.backends.cpu.get_cpu_capability()
    aten, path = choose_path(capabilities, native, os.environ.get("ATEN_CPU_CAPABILITY"))
    started = time.perf_counter()
    with _fresh_folder(keep) as fresh_dir:
        if names:  # the entries not asked for are read as recorded
            for entry in unchanged:
                name = f"{entry['experiment']}-{entry['key']}.json"
                (fresh_dir / name).write_bytes((recorded_dir / name).read_bytes())
        print(f"reproduce: recomputing {len(recorded)} entries on {workers} worker(s), {path}")
        with workers_on_path(aten):
            recompute(recorded, fresh_dir, workers)
        asked = {e["key"] for e in recorded}
        fresh = {e["key"]: e for e in typed_entries(fresh_dir) if e["key"] in asked}
        identical = sum(
            e["result"] == fresh[e["key"]]["result"] for e in recorded if e["key"] in fresh
        )
        quantities, verdicts, decisions = compare_claims(recorded_dir, fresh_dir, chosen_claims)
    minutes = (time.perf_counter() - started) / 60
    work_lines = []
    if flops is not None:
        made = [fresh[e["key"]] for e in recorded if e["key"] in fresh]
        cpu = sum(e["made"]["seconds"] for e in made)
        work_lines = work.report_lines(made, flops, cpu, minutes, workers)
    text = report_markdown(
        recorded, fresh, quantities, verdicts, decisions, identical, minutes, workers, path,
        work_lines,
    )  # fmt: skip
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(text)
    print(text)
    problems = check_problems(recorded, fresh, quantities, verdicts, decisions)
    for row in decisions:
        if row.changed and row.ok:
            print(f"reproduce: fragile decision moved (not a failure): {row.claim}: {row.label}: "
                  f"{row.recorded.outcome} -> {row.now.outcome}", file=sys.stderr)  # fmt: skip
    for problem in problems:
        print(f"reproduce: {problem}", file=sys.stderr)
    return 1 if problems else 0
