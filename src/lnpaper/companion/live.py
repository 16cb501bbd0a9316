"""What a reader's own call, computed live, says before it starts: what it computes and about how
long it will take. The estimate starts from the nearest recorded call of the same experiment (or,
for a study, its default call) and scales its recorded seconds by the counts that differ: steps,
seeds and epochs in proportion, sizes within one training step by their square root, and counts
that do not size the work (`NOT_WORK`) not at all. A guide on one core, not a promise.

`lnpaper.progress` shows the bar and the closing line; this module only finds the session's owner
(`calling_study`) and words the notice.
"""

import inspect
import math
import types
from collections.abc import Callable
from pathlib import Path

from lnpaper.companion import entries
from lnpaper.companion.entries import canonical, describe


def calling_study() -> types.FrameType | None:
    """The frame of the outermost chapter function running now (a study such as `detach_study`, a
    claim's check, a figure's drawing), None if there is none (a reader called the experiment
    directly). Its live experiment calls share one progress bar, which closes when it returns.
    Module code and generators do not count: neither returns once, when it is done."""
    study = None
    frame = inspect.currentframe()
    while frame is not None:
        in_chapter = frame.f_globals.get("__name__", "").startswith("lnpaper.chapters.")
        if in_chapter and frame.f_code.co_name != "<module>" and not _suspends(frame.f_code):
            study = frame
        frame = frame.f_back
    return study


def _suspends(code: types.CodeType) -> bool:
    return bool(
        code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR)
    )


def _size(value) -> float | None:
    """How much work an argument asks for, relative to another value of it: a count's value, a
    sequence's length (seeds, rates, scales); None for anything else (a rate, a word, a flag)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return float(value)
    if isinstance(value, list | tuple | range) and len(value) > 0:
        return float(len(value))
    return None


# Counts that do not size the work: which seed or example, a delay, an interval between logs or
# evaluations (`*_every`), a warmup inside the steps, a number of heads over a fixed width, and the
# length of the test sequences (`test_length`, `extra_steps`: a forward pass after training, small
# against the training steps).
NOT_WORK = frozenset(
    {"seed", "example", "delay", "tail", "window", "lags", "margins", "warmup", "warmup_steps",
     "n_heads", "threads", "pool_size", "test_length", "extra_steps"}
)  # fmt: skip


# Sizes within one training step. At this companion's sizes a step's time is mostly the overhead
# of many small operations, so it grows far slower than its arithmetic: an LSTM step with a 16 times
# larger batch and 4 times the units took about 10 times as long per run, not 64 (sequence_training
# pixel by pixel, batch 4 and 16 units against 64 and 64).
WITHIN_A_STEP = frozenset(
    {"batch", "batch_size", "hidden", "width", "d_model", "units", "features", "channels"}
)


def _sizes_work(name: str) -> bool:
    return name not in NOT_WORK and not name.endswith("_every")


# A call that trains for `epochs` passes over a fixed training set, a batch of `batch_size` (or of
# each of `batch_sizes`) at a time, takes epochs x examples / batch steps: with the epochs fixed, a
# smaller batch means more steps, each a little cheaper. The training set is the same for the
# reader's call and the recorded one, so its size cancels from their ratio.
EPOCH_ARGUMENTS = frozenset({"epochs", "batch_size", "batch_sizes"})


def epoch_work(arguments: dict) -> float | None:
    """The work of an epoch-based call, up to the size of its training set: for each batch size b,
    its steps per example, epochs / b, times the square root of b (a size within one step,
    `WITHIN_A_STEP`). None if the arguments name no epochs or no batch size."""
    epochs = arguments.get("epochs")
    batches = arguments.get("batch_sizes", [arguments.get("batch_size")])
    if not isinstance(epochs, int) or not isinstance(batches, list | tuple) or not batches:
        return None
    if not all(isinstance(b, int) and b > 0 for b in batches):
        return None
    return sum(epochs / math.sqrt(b) for b in batches)


def scaled_estimate(seconds: float, arguments: dict, recorded: dict) -> float:
    """A recorded call's seconds times, for each count or sequence that differs, the reader's size
    over the recorded call's: work taken to grow in proportion to steps, seeds, epochs, sweeps and
    the like, and with the square root of a size within one step (`WITHIN_A_STEP`). For an
    epoch-based call the epochs and batch sizes count through the steps they make (`epoch_work`).
    A guide only: rates, words and the counts in `NOT_WORK` are not scaled."""
    estimate, counted = seconds, frozenset()
    mine, theirs = epoch_work(arguments), epoch_work(recorded)
    if mine and theirs:
        estimate *= mine / theirs
        counted = EPOCH_ARGUMENTS
    for name, value in arguments.items():
        mine, theirs = _size(value), _size(recorded.get(name))
        if mine is not None and theirs is not None and _sizes_work(name) and name not in counted:
            ratio = mine / theirs
            estimate *= math.sqrt(ratio) if name in WITHIN_A_STEP else ratio
    return estimate


def recorded_calls(name: str, directory: Path) -> list[tuple[dict, float]]:
    """Every recorded call of experiment `name`: its arguments and the seconds it took to make."""
    calls = []
    for path in sorted(directory.glob(f"{name}-*.json")):
        try:
            _, entry = entries.DECODED.load(path)
            if entry["experiment"] == name:
                calls.append((entry["arguments"], float(entry["made"]["seconds"])))
        except (OSError, ValueError, KeyError, TypeError):  # a broken entry is named elsewhere
            continue
    return calls


def _distance(arguments: dict, recorded: dict) -> tuple[int, float, float]:
    """How unlike a recorded call is to the reader's: first the arguments other than counts (a
    model, a data form, a rate) that differ; then how far apart the sizes within one step are (a
    batch, a width: their time is scaled by a rule of thumb, the steps' by counting); then how far
    the counts scale the work."""
    words = sum(
        canonical(value) != recorded.get(name)
        for name, value in arguments.items()
        if _sizes_work(name) and (_size(value) is None or _size(recorded.get(name)) is None)
    )
    step_sizes = sum(
        abs(math.log(_size(value) / _size(recorded[name])))
        for name, value in arguments.items()
        if name in WITHIN_A_STEP and _size(value) and _size(recorded.get(name))
    )
    return words, step_sizes, abs(math.log(scaled_estimate(1.0, arguments, recorded)))


def nearest_estimate(
    name: str, arguments: dict, directory: Path
) -> tuple[float, dict, float] | None:
    """A guess at the seconds a call of `name` takes: the recorded call that shares the most of its
    non-count arguments (and, among those, needs the least scaling), its seconds scaled by the
    counts that differ (`scaled_estimate`). With that call's arguments and recorded seconds; None
    if the record holds no call of `name`."""
    calls = recorded_calls(name, directory)
    if not calls:
        return None
    nearest, seconds = min(calls, key=lambda call: _distance(arguments, call[0]))
    return scaled_estimate(seconds, arguments, nearest), nearest, seconds


LIVE = "here, live, in memory (nothing is written; LNPAPER_RECORD=strict makes this an error)"


def live_message(name: str, arguments: dict, directory: Path, guess=...) -> str:
    """What a reader's own call is about to do, and a guess at how long (`nearest_estimate`, or
    `guess` if given; recorded on the portable kernels, on one core: a guide, not a promise)."""
    text = f"{describe(name, arguments)} is not in the record: computing it {LIVE}"
    if guess is ...:
        guess = nearest_estimate(name, arguments, directory)
    if guess is not None:
        estimate, nearest, seconds = guess
        unlike = [k for k, v in nearest.items() if canonical(arguments.get(k)) != v]
        text += (
            f"; about {estimate:.0f} s on one core: the recorded call nearest yours (it differs "
            f"in {', '.join(unlike) or 'nothing'}) took {seconds:.1f} s, scaled here by the "
            "counts that differ"
        )
    return text


# ---- a study's estimate -------------------------------------------------------------------------


def study_estimate(
    study: types.FrameType, default_seconds: Callable[[Callable], float | None]
) -> tuple[float, str, float] | None:
    """A guess at the seconds a running study (`calling_study`) takes in all with the reader's
    arguments: the seconds its default call's experiments took to record, scaled by the counts
    that differ between the reader's arguments and the defaults (`scaled_estimate`). With the
    study's call as the reader made it, and the recorded seconds. `default_seconds(function)` gives
    the seconds a study's default call took to record, None if it is not all in the record. None if
    the study is not a chapter function whose every parameter has a default, or its default call is
    not all in the record."""
    function = study.f_globals.get(study.f_code.co_name)
    if getattr(function, "__code__", None) is not study.f_code:
        return None
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    if not parameters or any(p.default is inspect.Parameter.empty for p in parameters.values()):
        return None
    arguments = {name: study.f_locals[name] for name in parameters if name in study.f_locals}
    defaults = {name: p.default for name, p in parameters.items()}
    try:
        arguments, defaults = canonical(arguments), canonical(defaults)
    except (TypeError, ValueError):
        return None
    seconds = default_seconds(function)
    if seconds is None:
        return None
    estimate = scaled_estimate(seconds, arguments, defaults)
    return estimate, describe(function.__name__, arguments), seconds


def study_message(estimate: float, call: str, seconds: float) -> str:
    """What a reader's own call of a study is about to do, and a guess at how long in all
    (`study_estimate`)."""
    return (
        f"{call} needs experiment calls the record does not hold: computing them {LIVE}; about "
        f"{estimate:.0f} s on one core: its default call's experiments took {seconds:.1f} s to "
        "record, scaled here by the counts that differ"
    )
