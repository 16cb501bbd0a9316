"""`lnpaper.setup()`: the first code cell of every notebook.

Same machine, same versions, same outputs: seeds are fixed, and so is the thread count, because 1 and
2 threads sum floats in different orders and change the last bits of a training run.
"""

import platform
import random

import matplotlib
import numpy as np
import torch

from lnpaper.companion import record
from lnpaper.companion.record import THREADS
from lnpaper.companion.style import RC_PARAMS

SEED = 0


def setup(seed: int = SEED, quiet: bool = False, recompute: bool = False) -> None:
    """Seeds, a fixed thread count, rounded printing and the plot style, in one call; with
    `recompute=True`, a live run: experiments are computed here instead of read from the record.

    It prints the versions it ran with and where results come from: nbval compares those lines, so a
    notebook whose stored outputs came from other versions than constraints.txt fails its test
    instead of drifting silently, and a live run says so.
    """
    if recompute:
        record.configure("off")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(THREADS)
    np.set_printoptions(precision=4, suppress=True)
    torch.set_printoptions(precision=4, sci_mode=False)
    # the figures' house style (`lnpaper.companion.style`) for plots a notebook draws itself
    matplotlib.rcParams.update(RC_PARAMS)
    if not quiet:
        # Two lines, so that each fits a book column (88 characters) with any version string.
        print(f"lnpaper setup: seed {seed}, {THREADS} thread")
        print(
            f"versions: python {platform.python_version()}, torch {torch.__version__}, "
            f"numpy {np.__version__}, matplotlib {matplotlib.__version__}"
        )
        print(results_line(record.current().mode))


def results_line(mode: str) -> str:
    """What a reader needs to know about the numbers below: recorded, or computed here."""
    if mode == "off":
        capability = torch.backends.cpu.get_cpu_capability()
        return (
            f"results: a live run, computed on this machine ({capability}): numbers may differ "
            "from the record in their last digits, and chaotic training in more"
        )
    if record.record_dir() != record.REPO_RESULTS:  # e.g. make test's recomputed record
        return f"results: read from {record.record_dir()}, not the record in results/"
    return "results: read from the record in results/ (LNPAPER_RECORD=off for a live run)"
