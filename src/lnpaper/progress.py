"""Progress bars, shown only while a reader's own call is computed live (`lnpaper.companion.record`
turns them on around it): training loops report their steps through `steps`, and the record, the
reproduction check and the tests see plain ranges, so no output they compare ever holds a bar.

`tqdm.auto` draws a widget in JupyterLab and a text bar on a terminal."""

import contextlib
from collections.abc import Iterable, Iterator

_shown = 0


@contextlib.contextmanager
def shown() -> Iterator[None]:
    """Inside this block, `steps` draws a bar."""
    global _shown
    _shown += 1
    try:
        yield
    finally:
        _shown -= 1


def steps(count: int, label: str) -> Iterable[int]:
    """range(count), with a bar named `label` when shown (it disappears when the loop ends)."""
    if not _shown:
        return range(count)
    from tqdm.auto import tqdm

    return tqdm(range(count), desc=label, leave=False, mininterval=0.5)
