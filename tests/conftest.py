"""Shared test settings: every run draws the same hypothesis examples and uses one thread."""

import pytest
import torch
from hypothesis import settings

from lnpaper.companion import record

# Same versions, same machine, same outcome: hypothesis draws its examples from a fixed seed and keeps
# no example database between runs.
settings.register_profile("lnpaper", derandomize=True, database=None, deadline=None)
settings.load_profile("lnpaper")
torch.set_num_threads(1)

# Tests read the record, and compute in memory what it lacks (a small experiment a test calls with
# its own arguments); they never write the record.
TESTS = record.Record(record.record_dir(), "on", missing="compute")
record.configure(TESTS)


@pytest.fixture(autouse=True)
def _record_for_tests():
    record.configure(TESTS)
    yield
    record.configure(TESTS)


@pytest.fixture
def no_store():
    """A live run: every experiment computed, nothing read from the record."""
    record.configure("off")
