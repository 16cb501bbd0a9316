"""glibc's allocator, pinned: every process that computes an experiment or times an operation
calls `pin_allocator` first (`lnpaper.companion.record.compute`, `python -m lnpaper bench`).

Why: glibc's malloc serves blocks above a threshold from fresh mmaps and gives the top of its heap
back to the OS after frees above another; by default it raises both only to twice the largest
block it has seen freed. A training step that holds several full-size temporaries at once (a
recurrent population's gates, a norm composed of separate ops) then hands its memory back after
every step and page-faults it in again on the next. Pinned, a seed-batched LN-LSTM step takes
about an eighth less time on the 2-core machine the record was made on; the arithmetic, and so
every result, is unchanged. The cost: a process keeps the memory it has used at its peak.
"""

import ctypes
import ctypes.util
import platform

# mallopt's parameter numbers (glibc's malloc.h) and the values pinned.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 1 << 30  # blocks below 1 GiB come from the heap, not from fresh mmaps
TRIM_THRESHOLD = 2**31 - 1  # never give the heap's top back to the OS (mallopt takes a C int)


def pin_allocator() -> str:
    """Fix glibc's mmap and trim thresholds in this process; returns what was done, in words.

    The same effect as starting Python with MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ set,
    but it works from inside a running process (a notebook's kernel), because mallopt applies to
    every later allocation. Elsewhere than glibc (macOS, musl) it does nothing and says so.
    """
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return "not pinned (not glibc)"
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if not (
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        and libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    ):
        return "not pinned (mallopt refused)"
    return (
        f"pinned (glibc mallopt: mmap threshold {MMAP_THRESHOLD}, trim threshold {TRIM_THRESHOLD})"
    )
