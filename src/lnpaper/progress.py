"""Progress bars, shown only while a reader's own call is computed live (`lnpaper.companion.record`
turns them on around it): training loops report their steps through `steps`, and the record, the
reproduction check and the tests see plain ranges, so no output they compare ever holds a bar.

A top-level call shows one bar, named after it, however many training loops it runs: an experiment
may call others, and a study (a function that gathers several experiments) calls one after another,
each its own `shown` block. Every loop inside advances that one bar, its own name ("6 runs") beside
it, rather than opening a bar of its own. The total is not known in advance: it grows by each loop's
steps as the loop starts, and gives back the steps a loop skips when it stops early (every run
diverged), so the count ends at the total. A bar with an `owner`, a study's running frame, stays
open from one of its blocks to the next and closes when that function returns.

`tqdm.auto` draws a widget in JupyterLab and a text bar on a terminal. Bars report and never
compute: no random state, no tensor, no step of a loop depends on them."""

import contextlib
import sys
from collections.abc import Iterable, Iterator
from types import FrameType

_depth = 0  # the `shown` blocks open now
_label = ""  # the top-level call's name: its bar's label
_owner: FrameType | None = None  # the study whose return closes the bar, if any
_bar = None  # the top-level call's bar, opened by its first training loop
_notice: str | None = None  # a live call's notice, waiting for its first training loop


@contextlib.contextmanager
def shown(label: str, owner: FrameType | None = None) -> Iterator[None]:
    """Inside this block, `steps` advances one bar named `label`; a block inside another adds to the
    outer one's bar. With `owner` (a running function's frame), the bar stays open after the block,
    for the next block of the same owner, and closes when `owner` returns. Without it, or when a
    profiler already holds `sys.setprofile` (which watches for the return), it closes with the block."""
    global _depth, _label, _owner
    if _depth == 0:
        _stop_watching()
        if owner is None or owner is not _owner:
            _close()
            _label, _owner = label, owner
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            if _bar is not None and _owner is not None and sys.getprofile() is None:
                sys.setprofile(_close_on_return)
            else:
                _close()


def steps(count: int, label: str) -> Iterable[int]:
    """range(count); inside `shown`, each step also advances the top-level call's bar, with `label`
    (which loop) beside it, and a waiting `notice` is printed first."""
    if not _depth:
        return range(count)
    flush_notice()
    return _advancing(_grown_bar(count, label), count)


def notice(text: str | None) -> None:
    """Hold `text` until the next training loop starts (or `flush_notice`): an experiment checks its
    arguments before it trains, so a call it refuses is answered by its error alone, not by a
    notice that it is being computed. None drops a notice still waiting."""
    global _notice
    _notice = text


def flush_notice() -> None:
    """Print the waiting notice, if any (for a call that finished without a training loop)."""
    global _notice
    if _notice is not None:
        text, _notice = _notice, None
        write(text)


def write(text: str) -> None:
    """print(text), clearing an open bar's line first and drawing it again below the text (a study's
    bar stays open between its experiments, while the record announces each)."""
    if _bar is None:
        print(text)
    else:
        _bar.write(text, file=sys.stdout)


def _advancing(bar, count: int) -> Iterator[int]:
    done = 0
    try:
        for step in range(count):
            yield step
            bar.update()
            done += 1
    finally:  # a loop that stops early gives back the steps it skipped
        if done < count:
            _grow(bar, done - count)


def _grown_bar(count: int, label: str):
    """The top-level call's bar, its total grown by `count` steps; its first loop opens it."""
    global _bar
    if _bar is None:
        from tqdm.auto import tqdm

        _bar = tqdm(desc=_label, total=count, leave=False, mininterval=0.5)
    else:
        _grow(_bar, count)
    _bar.set_postfix_str(label)
    return _bar


def _grow(bar, count: int) -> None:
    bar.total += count
    container = getattr(bar, "container", None)  # tqdm.notebook's widget keeps its own maximum
    if container is not None:
        container.children[1].max = bar.total
    bar.refresh()


def _close() -> None:
    global _bar, _owner
    if _bar is not None:
        _bar.close()
    _bar, _owner = None, None


def _close_on_return(frame, event, arg) -> None:
    """The profile function while a study's bar waits between its blocks: it ends with the study."""
    if event == "return" and frame is _owner:
        sys.setprofile(None)
        _close()


def _stop_watching() -> None:
    if sys.getprofile() is _close_on_return:
        sys.setprofile(None)
