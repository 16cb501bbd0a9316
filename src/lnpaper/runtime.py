"""`lnpaper.setup()`: the first code cell of every notebook.

Same machine, same versions, same outputs: seeds are fixed, and so is the thread count, because 1 and
2 threads sum floats in different orders and change the last bits of a training run.
"""

import platform
import random

import matplotlib
import numpy as np
import torch

SEED = 0
THREADS = 1

PLOT_STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.figsize": (6.0, 3.6),
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "image.cmap": "viridis",
}


def seed_everything(seed: int = SEED) -> None:
    """Seed Python, numpy and torch (CPU) at once."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def apply_plot_style() -> None:
    matplotlib.rcParams.update(PLOT_STYLE)


def setup(seed: int = SEED, quiet: bool = False) -> None:
    """Seeds, a fixed thread count, rounded printing and the plot style, in one call.

    It prints the versions it ran with: nbval compares that line, so a notebook whose stored outputs
    came from other versions than constraints.txt fails its test instead of drifting silently.
    """
    seed_everything(seed)
    torch.set_num_threads(THREADS)
    np.set_printoptions(precision=4, suppress=True)
    torch.set_printoptions(precision=4, sci_mode=False)
    apply_plot_style()
    if not quiet:
        print(
            f"lnpaper setup: seed {seed}, {THREADS} thread, python {platform.python_version()}, "
            f"torch {torch.__version__}, numpy {np.__version__}, matplotlib {matplotlib.__version__}"
        )
