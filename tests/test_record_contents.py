"""What the committed record holds: every entry belongs to a registered experiment (the check would
stop on one that no longer exists), and every file is standard JSON that any tool can read."""

import json

from lnpaper.companion import record
from lnpaper.experiments import EXPERIMENTS


def test_every_entry_names_a_registered_experiment():
    names = {entry["experiment"] for entry in record.entries(record.REPO_RESULTS)}
    assert names <= set(EXPERIMENTS), sorted(names - set(EXPERIMENTS))


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON (NaN and Infinity are Python's extension)")


def test_every_file_is_standard_json():
    for path in sorted(record.REPO_RESULTS.glob("*.json")):
        json.loads(path.read_text(), parse_constant=_not_json)


def test_the_record_was_made_on_one_numeric_path():
    # The reproduction check recomputes on a path other than the record's; a record on two paths
    # leaves it only ATEN's portable kernels (record.check_path refuses such an entry).
    paths = {entry["made"]["cpu_capability"] for entry in record.entries(record.REPO_RESULTS)}
    assert len(paths) == 1, f"the record mixes numeric paths: {sorted(paths)}"
