"""Shared test settings: every run draws the same hypothesis examples and uses one thread."""

import torch
from hypothesis import settings

# Same versions, same machine, same outcome: hypothesis draws its examples from a fixed seed and keeps
# no example database between runs.
settings.register_profile("lnpaper", derandomize=True, database=None, deadline=None)
settings.load_profile("lnpaper")
torch.set_num_threads(1)
