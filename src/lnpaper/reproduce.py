"""`python -m lnpaper record` and `python -m lnpaper reproduce`: recompute the record, in parallel.

`recompute` runs record entries in worker processes, each experiment on `record.THREADS` threads,
so the record is the same whatever the number of workers; the analyses `record` runs to find what
the claims and figures read start once every entry is done.

`reproduce` recomputes every entry into a temporary folder and compares it with the record: each
claim's verdict must be the same, and each quantity a verdict rests on must lie within the
tolerance its kind gives (`lnpaper.companion.verdicts`). `record` computes on ATEN's portable kernels
(`record.RECORD_PATH`), so `make test` checks on this machine's native kernels, another numeric path
than the record's, and every CI run shows that the record travels.
"""

import contextlib
import datetime
import importlib
import inspect
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import torch

from lnpaper import stats
from lnpaper.companion import entries, record, work


def _worker_init(directory: str, modules: tuple = ()) -> None:
    """A worker computes in fill mode into `directory`. It leaves Ctrl-C to its parent, which stops
    it; it stops at once when told to (SIGTERM) or when its parent is gone, removing a half-written
    entry, so that no worker outlives a `record` that was interrupted or killed."""
    record.configure(record.settings_for("fill", Path(directory)))
    for module in modules:  # experiments registered outside lnpaper.experiments
        importlib.import_module(module)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: _stop_worker(directory))
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.1)
        _stop_worker(directory)

    threading.Thread(target=watch, daemon=True, name="lnpaper-parent-watch").start()


def _stop_worker(directory: str) -> None:
    entries.stop_writing(Path(directory))  # no entry of this process half written, none started
    os._exit(1)


def _compute(name: str, arguments: dict, redo: frozenset = frozenset()) -> tuple[float, list]:
    """Compute one entry (and what it calls that the record lacks); the keys in `redo` are computed
    again although the record holds them. Its seconds, and the entries it could not write."""
    start = time.perf_counter()
    with record.redoing(redo) as unwritten:
        _function(name)(**arguments)
    return time.perf_counter() - start, list(unwritten)


def _function(name: str):
    """The experiment `name`, or for "module:function" an analysis, which records the runs it
    reads when the record lacks them."""
    if ":" in name:
        module, function = name.split(":")
        return getattr(importlib.import_module(module), function)
    from lnpaper.experiments import EXPERIMENTS

    return EXPERIMENTS[name]


def _progress(done: int, total: int, label: str, seconds: float, started: float) -> None:
    width = 30
    filled = width * done // total
    elapsed = time.perf_counter() - started
    print(
        f"[{'#' * filled}{'.' * (width - filled)}] {done:3d}/{total} {elapsed / 60:5.1f} min  "
        f"{label} ({seconds:.1f} s)",
        file=sys.stderr,
        flush=True,
    )


def recompute(
    tasks: list[dict],
    directory: Path,
    workers: int,
    redo: set[str] = frozenset(),
    modules: tuple = (),
    then: list[dict] = (),
) -> list[str]:
    """Compute `tasks` (an experiment's name or an analysis's "module:function", and arguments)
    into `directory` in fill mode on `workers` processes, the longest first (by their recorded
    seconds; a task never recorded, first); then the tasks of `then`, once every one of `tasks`
    is done (the analyses that read what `tasks` records). The keys in `redo` are computed again
    although the record holds them, each new entry replacing the old one when complete, and each
    once: a task that reaches one already redone reads it. `modules` are imported in each worker
    (experiments registered elsewhere).

    Interrupted (Ctrl-C, SIGTERM, a failed experiment), it stops its workers at once, and the
    record holds each entry's old version or its new one. Returns the entries that could not be
    written."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    pending, later = _longest_first(tasks), _longest_first(then)
    total = len(pending) + len(later)
    done_keys: set[str] = set()
    unwritten: list[str] = []
    started = time.perf_counter()
    # spawn, not fork: a forked torch inherits the parent's thread pools
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=_worker_init,
        initargs=(str(directory), tuple(modules)),
    )
    with _sigterm_raises():
        try:
            running = {}
            while pending or running or later:
                if not pending and not running:
                    pending, later = later, []
                for task in pending[: workers - len(running)]:
                    pending.remove(task)
                    left = frozenset(redo) - done_keys
                    future = pool.submit(_compute, task["experiment"], task["arguments"], left)
                    running[future] = task
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    task = running.pop(future)
                    seconds, failed = future.result()
                    unwritten += failed
                    done_keys.add(task["key"])
                    label = task.get("label") or f"{task['experiment']}-{task['key']}"
                    _progress(
                        total - len(pending) - len(running) - len(later),
                        total,
                        label,
                        seconds,
                        started,
                    )
        except BaseException:
            _stop_pool(pool, Path(directory))
            raise
        pool.shutdown()
    return unwritten


def _longest_first(tasks) -> list[dict]:
    return sorted(tasks, key=lambda task: -task.get("made", {}).get("seconds", math.inf))


@contextlib.contextmanager
def _sigterm_raises():
    """SIGTERM raises SystemExit in the main thread, as Ctrl-C raises KeyboardInterrupt, so that
    `recompute` can stop its workers before it goes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _stop_pool(pool: ProcessPoolExecutor, directory: Path) -> None:
    """Stop every worker now (a running experiment is not waited for) and remove what one was
    writing."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()  # the worker removes its partial entry and exits
    deadline = time.monotonic() + 5
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5)
    for process in processes:
        entries.remove_partial(directory, process.pid)
    pool.shutdown(wait=False, cancel_futures=True)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def typed_entries(directory: Path) -> list[dict]:
    """The record's entries, each result checked against its experiment's result type."""
    from lnpaper.companion.registry import result_types
    from lnpaper.experiments import EXPERIMENTS  # noqa: F401 (every chapter's experiments, registered)

    return record.entries(directory, result_types())


def record_command(names: list[str], workers: int) -> int:
    """Recompute the entries of `names` (all if none) in the record itself, and the default call of
    each experiment named; then compute whatever the claims and
    figures need that it still lacks. Each new entry replaces the old one only when it is complete,
    so an interrupted `record` loses nothing."""
    if workers < 1:
        print(f"record: --workers must be at least 1, got {workers}", file=sys.stderr)
        return 2
    unknown = sorted(set(names) - _registered())
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
    registered = _registered()
    calls = [] if names else _default_calls()
    asked = {run.__name__ for run in calls if run.__name__ in registered} | set(names)
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
        if run.__name__ not in registered
    ]  # fmt: skip
    print(f"record: {len(redo)} entries, {len(defaults)} default calls and {len(analyses)} "
          f"analyses into {directory}, {workers} worker(s), on ATEN's portable kernels "
          f"(ATEN_CPU_CAPABILITY={RECORD_ATEN})")  # fmt: skip
    try:
        with _workers_on_path(RECORD_ATEN):  # the record's path, whatever this machine's
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
    from lnpaper.experiments import EXPERIMENTS

    try:
        bound = inspect.signature(EXPERIMENTS[name]).bind()
    except TypeError:
        return None
    bound.apply_defaults()
    return record.key(name, dict(bound.arguments))


def _default_calls() -> list:
    """The experiments that the claims and the figures call, with their default arguments."""
    from lnpaper import claims
    from lnpaper.figures import FIGURES

    runs = [run for claim in claims.CLAIMS for run in claim.experiments]
    runs += [spec.experiment for spec in FIGURES.values() if spec.experiment is not None]
    return list(dict.fromkeys(runs))


def _claims_reading(names: set[str], directory: Path) -> list:
    """The claims that read an entry of an experiment in `names` from the record in `directory`,
    directly or through an analysis (watched as they read, not guessed from their names)."""
    from lnpaper import claims

    chosen = []
    with record.using(record.settings_for("strict", directory)):
        for claim in claims.CLAIMS:
            with record.reading() as read:
                for run in claim.experiments:
                    run()
            if {name for name, _ in read} & names:
                chosen.append(claim)
    return chosen


def _registered() -> set[str]:
    from lnpaper.experiments import EXPERIMENTS

    return set(EXPERIMENTS)


# ---- the comparison -----------------------------------------------------------------------------


def _number(value: float) -> str:
    return f"{value:.4g}"


def compare_claims(recorded_dir: Path, fresh_dir: Path, chosen=None) -> tuple[list, list, list]:
    """(quantity rows, verdict rows, decision rows) of every claim (or the `chosen` ones),
    recorded against recomputed.

    A decision that lands on its other side is a failure only when the record does not mark it
    fragile (`lnpaper.stats`: its interval lay farther from its boundary than the robustness
    band); a fragile one is listed. A verdict that changes is a failure unless every decision
    that changed under it was fragile."""
    from lnpaper import claims

    chosen = chosen or claims.CLAIMS

    def evaluate(directory):
        with record.using(record.settings_for("strict", directory)):
            return {claim.id: claim.evaluate() for claim in chosen}

    before, after = evaluate(recorded_dir), evaluate(fresh_dir)
    quantities, verdicts, decisions = [], [], []
    for claim in chosen:
        claim_id, old, new = claim.id, before[claim.id], after[claim.id]
        names = ", ".join(run.__name__ for run in claim.experiments)
        moved = {}
        for index, (was, now) in enumerate(zip(old.decisions, new.decisions, strict=False)):
            decisions.append(DecisionRow(claim_id, old.decision_label(index), was, now))
            if was.outcome != now.outcome:
                moved[index] = now.outcome
        if old.verdict == new.verdict:
            status = "same"
        else:  # moved through fragile decisions only: their new outcomes alone give the new verdict
            fragile = all(old.decisions[i].fragile for i in moved)
            with record.using(record.settings_for("strict", recorded_dir)):
                explained = moved and claim.verdict_with(moved) == new.verdict
            status = "moved (fragile)" if fragile and explained else "CHANGED"
        verdicts.append((claim_id, names, old.verdict, new.verdict, status))
        fresh = {q.label: q for q in new.quantities}
        for quantity in old.quantities:
            now = fresh.get(quantity.label)
            if now is None:
                quantities.append((claim_id, quantity.label, quantity.kind,
                                   _number(quantity.value), "missing", "", "", False))  # fmt: skip
                continue
            tolerance = quantity.tolerance(now)
            ok = abs(now.value - quantity.value) <= tolerance
            # An aggregate whose tolerance is wider than the effect it decides cannot tell that
            # effect from none: reported as too loose.
            loose = quantity.kind == "aggregate" and tolerance > old.decided_effect(quantity)
            quantities.append((claim_id, quantity.label, quantity.kind, _number(quantity.value),
                               _number(now.value), _number(tolerance), "too loose" if loose else "",
                               ok))  # fmt: skip
    return quantities, verdicts, decisions


@dataclass(frozen=True)
class DecisionRow:
    claim: str
    label: str
    recorded: stats.Decision
    now: stats.Decision

    @property
    def changed(self) -> bool:
        return self.recorded.outcome != self.now.outcome

    @property
    def ok(self) -> bool:
        return not self.changed or self.recorded.fragile


def _machine(entries: list[dict]) -> str:
    capabilities = sorted({e["made"]["cpu_capability"] for e in entries})
    dates = sorted({e["made"]["date"] for e in entries})
    models = sorted({e["made"].get("cpu_model") or "CPU model not recorded" for e in entries})
    return (
        f"CPU capability {', '.join(capabilities)} ({'; '.join(models)}), "
        f"made {dates[0]} to {dates[-1]}"
    )


def _commit() -> str:
    """The commit the check ran on, with '+ changes' when the tree differed from it."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"{head} + changes to src/" if dirty else head  # fmt: skip


def _this_machine() -> str:
    """This machine as the report names it: CPU model and its native capability."""
    capability = torch.backends.cpu.get_cpu_capability()
    return f"{record.cpu_model() or 'CPU model unknown'}, native {capability}"


def title_line(commit: str, machine: str) -> str:
    """The report's first line: which code was checked, on which machine (`_this_machine`: its CPU
    model and native capability). The book shows the committed report of a writer's run wherever
    it is read, so the report names its machine and commit rather than saying "this machine"."""
    model, _, capability = machine.rpartition(", ")
    capability = capability.removeprefix("native ")
    return f"# Reproduction report: commit {commit} on {model} ({capability})"


# A table longer than this many rows is folded (a <details>, closed, that GitHub and the book both
# show as a line to click), so that the report's answer and its short tables stay in view.
FOLD_ROWS = 15


def fold_long_tables(lines: list[str]) -> list[str]:
    """`lines` with each Markdown table of more than FOLD_ROWS rows inside a closed <details>."""
    folded: list[str] = []
    index = 0
    while index < len(lines):
        is_head = index + 1 < len(lines) and lines[index + 1].startswith("|---")
        if not (lines[index].startswith("| ") and is_head):
            folded.append(lines[index])
            index += 1
            continue
        end = index + 2
        while end < len(lines) and lines[end].startswith("| "):
            end += 1
        table = lines[index:end]
        rows = len(table) - 2
        if rows > FOLD_ROWS:
            table = ['<details class="lnpaper-table">', f"<summary>Show the table: {rows} rows"
                     "</summary>", "", *table, "", "</details>"]  # fmt: skip
        folded += table
        index = end
    return folded


def _interval(decision: stats.Decision) -> str:
    if decision.evidence:
        return decision.evidence.split(", band")[0]
    return f"[{decision.low:+.3g}, {decision.high:+.3g}]"


def _boundary(decision: stats.Decision) -> str:
    if not decision.boundaries:
        return "sign test"
    return ", ".join(f"{b:+.3g}" if b else "0" for b in decision.boundaries)


def check_problems(recorded, fresh, quantities, verdicts, decisions) -> list[str]:
    """What fails the check, one line each: an entry not recomputed, a verdict changed through a
    decision the record did not mark fragile, such a decision, a quantity outside its tolerance."""
    problems = [f"{e['experiment']}-{e['key']} was not recomputed"
                for e in recorded if e["key"] not in fresh]  # fmt: skip
    problems += [
        f"{c}: verdict {old!r} recorded, {new!r} now, through a decision that was not fragile"
        for c, _, old, new, status in verdicts
        if status == "CHANGED"
    ]
    problems += [
        f"{row.claim}: {row.label}: {row.recorded.outcome} recorded ({row.recorded.margin_text()}), "
        f"{row.now.outcome} now ({_interval(row.now)}); the record did not mark it fragile"
        for row in decisions
        if not row.ok
    ]
    problems += [f"{c}: {label} {rec} recorded, {now} now (tolerance {tol})"
                 for c, label, _, rec, now, tol, _, ok in quantities if not ok]  # fmt: skip
    return problems


def _named(claim_ids) -> str:
    """' (R4c, M4e)': the claim IDs, each once, in order; '' for none."""
    ids = list(dict.fromkeys(claim_ids))
    return f" ({', '.join(ids)})" if ids else ""


def _table_row(cells) -> str:
    return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"


def _table_head(columns) -> list[str]:
    return [_table_row(columns), "|" + "---|" * len(columns)]


# The sentence that tells a student what "fragile" means, where the report first uses the word.
FRAGILE_IN_WORDS = (
    "A decision (an interval of a difference set against a boundary, such as 0) is *fragile* when "
    "its recorded interval ended so close to the boundary that the tiny numeric differences "
    "between two machines can put it on the other side; such a decision may move without "
    "failing the check, and a verdict may move only through one."
)


def answer_lines(problems, quantities, verdicts, decisions) -> list[str]:
    """The report's first lines after its title (`title_line`, which names the machine): whether
    the check passed, then how many verdicts, quantities and decisions came out the same, and the
    claims of those that moved or changed."""
    moved_verdicts = [row[0] for row in verdicts if row[-1] == "moved (fragile)"]
    changed_verdicts = [row[0] for row in verdicts if row[-1] == "CHANGED"]
    same = len(verdicts) - len(moved_verdicts) - len(changed_verdicts)
    outside = [row[0] for row in quantities if not row[-1]]
    moved = [row for row in decisions if row.changed]
    robust = [row.claim for row in moved if not row.ok]
    fragile_part = (f", {len(robust)} of them not fragile{_named(robust)}" if robust
                    else ", all of them fragile")  # fmt: skip
    if problems:
        verdict = f"**The check failed**: {len(problems)} problem(s), listed under *What failed*."
    else:
        verdict = ("**The check passed**: every experiment was recomputed on that machine, and "
                   "every quantity lay within its tolerance.")  # fmt: skip
    return [
        verdict,
        "",
        f"- verdicts: {same} of {len(verdicts)} the same; {len(moved_verdicts)} moved through "
        f"fragile decisions{_named(moved_verdicts)}; {len(changed_verdicts)} changed"
        f"{_named(changed_verdicts)}",
        f"- quantities: {len(quantities) - len(outside)} of {len(quantities)} within tolerance"
        + (f"; outside it{_named(outside)}" if outside else ""),
        f"- decisions: {len(moved)} of {len(decisions)} moved to the other side of their boundary"
        + (f"{_named(row.claim for row in moved)}{fragile_part}" if moved else ""),
        "",
        FRAGILE_IN_WORDS,
    ]


def report_markdown(recorded, fresh, quantities, verdicts, decisions, identical, minutes,
                    workers, path, work_lines=()) -> str:  # fmt: skip
    """The report: its title naming the commit and the machine, its answer (`answer_lines`), then
    what the check does, this run's details, and the tables, each with its answer columns first and
    the numbers behind them after, a long one folded (`fold_long_tables`)."""
    env = f"MKL_CBWR={os.environ['MKL_CBWR']}" if os.environ.get("MKL_CBWR") else ""
    problems = check_problems(recorded, fresh, quantities, verdicts, decisions)
    loose = [row for row in quantities if row[-2]]
    fragile = [row for row in decisions if row.recorded.fragile]
    moved = [row for row in decisions if row.changed]
    commit, machine, today = _commit(), _this_machine(), datetime.date.today().isoformat()
    lines = [
        title_line(commit, machine),
        "",
        *answer_lines(problems, quantities, verdicts, decisions),
        "",
    ]
    if problems:
        lines += ["## What failed", "", *[f"- {problem}" for problem in problems], ""]
    lines += [
        "## What the check does",
        "",
        "`python -m lnpaper reproduce` (run by `make test`) recomputes every experiment in",
        "`results/` on the machine it runs on and compares it with the record. Each quantity a",
        "verdict rests on must lie within its tolerance: a roundoff bound for exact quantities, 3",
        "standard errors of the difference for aggregates over seeds, a binomial bound for counts",
        "of runs. Each decision (an interval against its boundary) must come out the same unless",
        "the record marks it fragile: its interval lay within the robustness band of its boundary",
        "(`lnpaper.stats`: 3 sqrt(2) standard errors, what a passing quantity check lets an edge",
        "move), so a machine that reproduces every quantity may still put it on the other side. A",
        "fragile decision that moved is listed, not failed; a verdict may move only through fragile",
        "decisions.",
        "",
        "## This run",
        "",
        f"- code: commit {commit}, {today}",
        f"- record: {len(recorded)} entries, {_machine(recorded)}",
        f"- now: {machine}, recomputed on {path}"
        + (f" ({env})" if env else "")
        + f", {workers} worker(s), {minutes:.1f} min",
        f"- {identical} of {len(recorded)} entries came out bit for bit identical",
        *work_lines,
        f"- decisions: {len(decisions)}, {len(fragile)} fragile in the record; {len(moved)} moved "
        f"({sum(not row.ok for row in moved)} of them not fragile)",
        f"- too loose to check: {len(loose)} aggregates whose tolerance is wider than the effect "
        "they decide (too few seeds, or runs that collapse)",
        *[
            f"- moved, fragile: {row.claim}, {row.label}: {row.recorded.outcome} -> "
            f"{row.now.outcome}"
            for row in moved
            if row.ok
        ],
        "",
        *verdict_table(verdicts),
        "",
        *decision_tables(decisions),
        "",
        *quantity_table(quantities),
    ]
    return "\n".join(fold_long_tables(lines)) + "\n"


# Each table's columns: the answer first (what is decided, as recorded and now, and whether it
# came out the same), so that it shows in the book's 784 px column; the numbers behind it after.
VERDICT_COLUMNS = ("claim", "recorded", "now", "status", "experiments")
DECISION_COLUMNS = ("claim", "decision", "recorded", "now", "status", "fragile")
DECISION_NUMBER_COLUMNS = ("claim", "decision", "test", "boundary", "band", "interval recorded",
                           "interval now")  # fmt: skip
QUANTITY_COLUMNS = ("claim", "quantity", "within tolerance", "recorded", "now", "tolerance",
                    "rule")  # fmt: skip


def verdict_table(verdicts) -> list[str]:
    lines = ["## Verdicts", "", "Each claim's verdict as recorded and now.", ""]
    lines += _table_head(VERDICT_COLUMNS)
    for claim_id, names, old, new, status in verdicts:
        lines.append(_table_row([claim_id, old, new, status if status == "same" else f"**{status}**",
                                 names]))  # fmt: skip
    return lines


def _decision_status(row: DecisionRow) -> str:
    if not row.changed:
        return "same"
    return "**moved (fragile)**" if row.ok else "**CHANGED**"


def decision_tables(decisions) -> list[str]:
    """Two tables: each decision's outcome as recorded and now, then the numbers behind it."""
    lines = [
        "## Decisions",
        "",
        "Each decision's outcome as recorded and now; `fragile` as above, `one seed` when dropping",
        "a single seed alone changes the recorded outcome.",
        "",
        *_table_head(DECISION_COLUMNS),
    ]
    for row in decisions:
        was = row.recorded
        notes = ["yes"] if was.fragile else []
        notes += ["one seed"] if was.one_seed is not None else []
        lines.append(_table_row([row.claim, row.label, was.outcome, row.now.outcome,
                                 _decision_status(row), ", ".join(notes)]))  # fmt: skip
    lines += [
        "",
        "## The numbers behind each decision",
        "",
        "Each decision's test, the boundary it is set against, its robustness band, and its",
        "interval as recorded and now.",
        "",
        *_table_head(DECISION_NUMBER_COLUMNS),
    ]
    for row in decisions:
        was = row.recorded
        lines.append(_table_row([row.claim, row.label, was.test, _boundary(was), f"{was.band:.2g}",
                                 _interval(was), _interval(row.now)]))  # fmt: skip
    return lines


def quantity_table(quantities) -> list[str]:
    lines = [
        "## Quantities",
        "",
        "Each quantity a verdict rests on, as recorded and now, against its tolerance and the",
        "rule that gives it; `too loose` when that tolerance is wider than the effect it decides.",
        "",
        *_table_head(QUANTITY_COLUMNS),
    ]
    for claim_id, label, kind, recorded, now, tolerance, note, ok in quantities:
        rule = f"{kind}, {note}" if note else kind  # one column, not two: the table fits 784 px
        lines.append(_table_row([claim_id, label, "yes" if ok else "**NO**", recorded, now,
                                 tolerance, rule]))  # fmt: skip
    return lines


# ATEN_CPU_CAPABILITY's value for each capability torch reports
_ATEN_VALUES = {"DEFAULT": "default", "AVX2": "avx2", "AVX512": "avx512"}
RECORD_ATEN = _ATEN_VALUES[record.RECORD_PATH]  # the path `record` computes on


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


@contextlib.contextmanager
def _workers_on_path(aten: str | None):
    """ATEN_CPU_CAPABILITY=aten (None: as it is) for the workers spawned inside the block: each
    imports torch after it is set, and so computes on that path. This process's environment is
    as it was once the block ends."""
    before = os.environ.get("ATEN_CPU_CAPABILITY")
    if aten is not None:
        os.environ["ATEN_CPU_CAPABILITY"] = aten
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ATEN_CPU_CAPABILITY", None)
        else:
            os.environ["ATEN_CPU_CAPABILITY"] = before


def reproduce_command(
    workers: int,
    report: Path | None,
    names: list[str] = (),
    keep: Path | None = None,
    flops: Path | None = None,
) -> int:
    """Recompute the record (or only the entries of `names` and the claims that rest on them: a
    writer's quick check) and compare it with what is recorded. With `keep`, the
    recomputed record stays in that folder (its old JSON files removed first): `make test` runs
    every notebook on it, so each must reach its end on this machine's numbers. With `flops` (the
    counts `python -m lnpaper work` wrote), the report states the check's FLOPs and rate."""
    recorded_dir = record.record_dir()
    recorded = typed_entries(recorded_dir)
    if not recorded:
        print(f"reproduce: no record in {recorded_dir}", file=sys.stderr)
        return 1
    chosen_claims = None
    if names:
        unknown = sorted(set(names) - _registered())
        if unknown:
            print(f"unknown experiment(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        keys = {e["key"] for e in recorded if e["experiment"] in names}
        unchanged = [e for e in recorded if e["key"] not in keys]
        recorded = [e for e in recorded if e["key"] in keys]
        touched = {e["experiment"] for e in recorded}
        chosen_claims = _claims_reading(touched, recorded_dir)
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
        with _workers_on_path(aten):
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
