"""What the committed record holds: every entry belongs to an experiment a chapter lists (the check would
stop on one that no longer exists), and every file is standard JSON that any tool can read."""

import ast
import inspect
import json
import textwrap

from lnpaper import book
from lnpaper.companion import record

EXPERIMENTS = book.experiments()


def test_every_entry_names_an_experiment_of_the_book():
    names = {
        entry["experiment"] for entry in record.entries(record.REPO_RESULTS, book.result_types())
    }
    assert names <= set(EXPERIMENTS), sorted(names - set(EXPERIMENTS))


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON (NaN and Infinity are Python's extension)")


def test_every_file_is_standard_json():
    for path in sorted(record.REPO_RESULTS.glob("*.json")):
        json.loads(path.read_text(), parse_constant=_not_json)


def test_the_record_was_made_on_atens_portable_kernels():
    # So that every CPU checks it on its own native kernels, another path than the record's
    # (record.check_path refuses an entry made on any other).
    paths = {
        entry["made"]["cpu_capability"]
        for entry in record.entries(record.REPO_RESULTS, book.result_types())
    }
    assert paths == {record.RECORD_PATH}, f"the record was made on {sorted(paths)}"


def test_every_entry_is_reached_by_its_experiments_current_signature():
    # An experiment that gains a parameter, even with a default, binds every call to new
    # arguments and so to new keys: its recorded entries would no longer be found (the check
    # would fail on them). Each entry's arguments, bound now, must give back its key.
    import inspect

    stale = []
    for entry in record.entries(record.REPO_RESULTS, book.result_types()):
        signature = inspect.signature(EXPERIMENTS[entry["experiment"]].__wrapped__)
        try:
            bound = signature.bind(**entry["arguments"])
        except TypeError:  # a parameter the experiment no longer has
            stale.append(f"{entry['experiment']}-{entry['key']}")
            continue
        bound.apply_defaults()
        if record.key(entry["experiment"], dict(bound.arguments)) != entry["key"]:
            stale.append(f"{entry['experiment']}-{entry['key']}")
    assert not stale, f"entries no current call reaches: {stale}"


def test_no_entry_is_stale():
    # Each entry carries a fingerprint of its experiment's code: one that no longer matches was
    # made by other code than the repository holds. Recompute it: `make record NAMES=...`.
    from lnpaper.companion.fingerprint import stale_entries

    assert (
        stale_entries(record.entries(record.REPO_RESULTS, book.result_types()), EXPERIMENTS) == []
    )


# The record holds runs only: a study that gathers runs is its chapter's `analysis`, computed in
# memory, so the record keeps each run once and re-recording a run re-records nothing else.
def test_no_experiment_calls_another():
    registered = {id(run) for run in EXPERIMENTS.values()}
    callers = []
    for name, run in EXPERIMENTS.items():
        function = inspect.unwrap(run)
        if not function.__module__.startswith("lnpaper."):
            continue  # a test's own experiments, outside the book
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
        reached = [
            function.__globals__.get(n.id) for n in ast.walk(tree) if isinstance(n, ast.Name)
        ]
        reached += [
            getattr(function.__globals__.get(n.value.id), n.attr, None)
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        ]
        if any(id(value) in registered for value in reached if value is not run):
            callers.append(name)
    assert callers == []
