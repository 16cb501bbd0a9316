"""Progress bars and notices, shown only while a reader's own call is computed live
(`lnpaper.companion.record` turns them on around it): training loops report their steps through
`steps`, and the record, the reproduction check and the tests see plain ranges, so no output they
compare ever holds a bar.

What a reader starts at once is one *session*: in IPython (a notebook) everything one cell computes
live, however many experiment calls it makes; elsewhere, and in a widget's callback between cells,
one top-level call, an experiment or a study (a chapter function that gathers several experiments,
whose session lasts until it returns).
A session prints one notice, before its first training loop (`shown`), one line when it ends
(`finished`), and shows one bar.

The bar only moves forward and reads 100% only when the session ends. Its fraction is the time
spent against the estimate the notice gave (the record's nearest call, scaled; a study's whole
estimate is known as it starts), 90% at the estimated time and creeping towards 99% past it, and
never more than the share of the training steps done among those started so far: a single training
loop, whose step count is known as it starts, moves the bar by its steps when the estimate is too
low. A later call in the same cell adds its estimate to the total; the bar then holds its place until
the work catches up rather than moving back. Beside the bar: the loop ("6 runs") and the steps done
of those started.

`tqdm.auto` draws a widget in JupyterLab and a text bar on a terminal. Bars report and never
compute: no random state, no tensor, no step of a loop depends on them."""

import contextlib
import dataclasses
import sys
import time
from collections.abc import Iterable, Iterator
from types import FrameType

RESOLUTION = 1000  # the bar counts thousandths of the session
SETTLE = 0.9  # the fraction shown at the estimated time
CREEP = 0.99  # the most shown before the session ends


@dataclasses.dataclass(eq=False)
class Session:
    """What one cell (or one top-level call) computes live, and its bar."""

    key: object  # ("cell", IPython's execution count), or ("call", the owner's frame or object())
    label: str  # the bar's name: the top-level call's or the study's
    owner: FrameType | None  # a study whose return ends the session (outside IPython)
    planned: float | None = None  # a study's estimated seconds in all, known as it starts
    estimated: float = 0.0  # the estimates of its calls so far, when nothing was planned
    unknown: bool = False  # a call without an estimate: the steps alone move the bar
    start: float = dataclasses.field(default_factory=time.perf_counter)
    done: int = 0  # training steps done
    started: int = 0  # training steps of the loops started so far
    shown: float = 0.0  # the fraction the bar shows: it never decreases
    loop: str = ""  # the running loop's label
    bar: object = None
    announced: bool = False  # its notice is printed (or waiting to be)
    computed: list = dataclasses.field(default_factory=list)  # (name, seconds) of its live calls


_depth = 0  # the `shown` blocks open now
_session: Session | None = None
_notice: str | None = None  # the session's notice, waiting for its first training loop
_cell_hook = None  # the IPython shell that tells `_cells` when a cell starts and ends
_cells = 0  # the cells IPython has started running since the hook was set
_running: int | None = None  # the number of the cell running now, if one is


def _cell() -> tuple | None:
    """("cell", k) while IPython runs a cell (the k-th since this module first looked), else None:
    outside IPython, and in IPython between cells (a widget's callback, such as a slider moved,
    runs outside any cell). The first time, it asks IPython to say when each cell starts and ends;
    the cell that first asks is running already."""
    global _cell_hook, _running
    module = sys.modules.get("IPython")
    shell = module.get_ipython() if module is not None else None
    if shell is None:
        return None
    if _cell_hook is not shell:
        shell.events.register("pre_run_cell", start_cell)
        shell.events.register("post_run_cell", end_cell)
        _cell_hook = shell
        # a kernel says which message it handles: a cell's, or a widget's between cells
        message = getattr(shell, "parent_header", {}).get("header", {}).get("msg_type")
        if message in (None, "execute_request"):
            start_cell()
    return None if _running is None else ("cell", _running)


def start_cell(*_) -> None:
    """A cell starts: what it computes live is one session."""
    global _cells, _running
    _cells += 1
    _running = _cells


def end_cell(*_) -> None:
    """The running cell ends, and its session: its bar reaches 100% and closes, its line is
    printed."""
    global _running
    _running = None
    if _session is not None and _session.key[0] == "cell":
        _close()


@contextlib.contextmanager
def shown(
    label: str,
    owner: FrameType | None = None,
    *,
    estimate: float | None = None,
    plan: float | None = None,
    notice: str | None = None,
) -> Iterator[Session | None]:
    """Inside this block, `steps` advances the session's bar; a block inside another belongs to the
    outer one. At the outermost level the block joins the running session if it is the same cell
    (in IPython) or the same `owner` (a study's frame), else it starts a session named `label`.
    `estimate` is this call's guess in seconds (None if there is none); `plan` a study's guess for
    all its calls, given by the call that starts its session. `notice` is printed before the first
    training loop if the session has not announced itself yet: an experiment checks its arguments
    before it trains, so a call it refuses is answered by its error alone. Outside IPython the session ends
    with the block, or with `owner`'s return when there is one (its bar waits between blocks)."""
    global _depth, _notice, _session
    if _depth:
        _depth += 1
        try:
            yield _session
        finally:
            _depth -= 1
        return
    if sys.getprofile() is _close_on_return:  # a study's session waiting: this call decides
        sys.setprofile(None)
    cell = _cell()
    if cell is not None:
        same = _session is not None and _session.key == cell
    else:
        same = _session is not None and owner is not None and _session.owner is owner
    if not same:
        _close()
        key = cell or ("call", owner if owner is not None else object())
        _session = Session(key, label, owner, planned=plan)
    session = _session
    if estimate is None:
        session.unknown = True
    else:
        session.estimated += estimate
    waiting = notice is not None and not session.announced
    if waiting:
        _notice, session.announced = notice, True
    _depth += 1
    failed = False
    try:
        yield session
    except BaseException:
        failed = True
        raise
    finally:
        _depth -= 1
        if waiting and _notice is not None:  # it failed before training: its error speaks for it
            _notice, session.announced = None, False
        _show()
        if cell is None:
            if owner is None or failed or sys.getprofile() is not None:
                _close()
            else:  # a study's session waits for its next call, and ends as it returns
                sys.setprofile(_close_on_return)


def finished(name: str, seconds: float) -> None:
    """A live call of the session is done: the session's closing line counts it."""
    if _session is not None:
        _session.computed.append((name, seconds))


def steps(count: int, label: str) -> Iterable[int]:
    """range(count); inside `shown`, each step also moves the session's bar, with `label` (which
    loop) beside it, and a waiting `notice` is printed first."""
    if not _depth:
        return range(count)
    flush_notice()
    session = _session
    session.started += count
    session.loop = label
    if session.bar is None:
        from tqdm.auto import tqdm

        session.bar = tqdm(
            desc=session.label,
            total=RESOLUTION,
            leave=False,
            mininterval=0.5,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]",
        )
    session.bar.set_postfix_str(_postfix(session))  # drawn now: the loop that starts
    return _advancing(session, count)


def _postfix(session: Session) -> str:
    return f"{session.loop}, {session.done}/{session.started} steps"


def flush_notice() -> None:
    """Print the waiting notice, if any (for a call that finished without a training loop)."""
    global _notice
    if _notice is not None:
        text, _notice = _notice, None
        write(text)


def write(text: str) -> None:
    """print(text), clearing an open bar's line first and drawing it again below the text."""
    bar = _session.bar if _session is not None else None
    if bar is None:
        print(text)
    else:
        bar.write(text, file=sys.stdout)


def fraction(session: Session, now: float | None = None) -> float:
    """The fraction of `session` done, as its bar shows it before it ends (see the module's
    docstring): time against the estimate, never past the share of the started steps done, never
    less than shown already, and never 100%."""
    by_steps = session.done / session.started if session.started else 0.0
    total = max(session.planned or 0.0, session.estimated)
    if total and not session.unknown:
        spent = (time.perf_counter() if now is None else now) - session.start
        if spent <= total:
            by_time = SETTLE * spent / total
        else:
            by_time = CREEP - (CREEP - SETTLE) * total / spent
        guess = min(by_time, by_steps)
    else:
        guess = by_steps
    return max(session.shown, min(guess, CREEP))


def _advancing(session: Session, count: int) -> Iterator[int]:
    done = 0
    try:
        for step in range(count):
            yield step
            done += 1
            session.done += 1
            _show()
    finally:  # a loop that stops early gives back the steps it skipped
        session.started -= count - done


def _show() -> None:
    session = _session
    if session is None or session.bar is None:
        return
    session.shown = fraction(session)
    moved = round(RESOLUTION * session.shown) - session.bar.n
    session.bar.set_postfix_str(_postfix(session), refresh=False)
    if moved > 0:
        session.bar.update(moved)


def _close() -> None:
    """End the session: its bar to 100% and closed, then its line, if it computed anything."""
    global _session, _notice
    session, _session = _session, None
    _notice = None
    if session is None:
        return
    if session.bar is not None:
        session.bar.update(RESOLUTION - session.bar.n)
        session.bar.close()
    if session.announced and session.computed:
        seconds = sum(s for _, s in session.computed)
        names = list(dict.fromkeys(name for name, _ in session.computed))
        if len(session.computed) == 1:
            what = names[0]
        else:
            what = f"{len(session.computed)} experiment calls ({', '.join(names)})"
        print(f"computed {what} here in {seconds:.1f} s (not recorded)")


def _close_on_return(frame, event, arg) -> None:
    """The profile function while a study's session waits between its blocks: it ends with the
    study."""
    if event == "return" and _session is not None and frame is _session.owner:
        sys.setprofile(None)
        _close()
