"""Generated online handwriting: the companion's stand-in for IAM-OnDB, on which the paper trained
Graves's handwriting prediction network with and without layer normalization (Ba et al. 2016,
Sec. 6.5; Graves 2013, Sec. 4). Nothing is downloaded.

A line of handwriting is a sequence of pen positions. As in Graves (2013, Sec. 4), a model reads
it as offsets (dx, dy, e): the move from the previous point to this one, and an end-of-stroke bit
e that is 1 when the pen lifts after this point. An LSTM reads the offsets of steps 0..T-1 and
predicts, at each step, the distribution of the next offset (steps 1..T): unconditional
handwriting prediction, with no text given.

How a line is written:
- the alphabet is 12 letter templates, each a smooth open curve through 5 control points
  (a uniform Catmull-Rom spline). A letter starts at (0, 0) and ends at (1, 0), on the baseline
  one letter width to the right; in between it climbs towards y = 1 and may dip towards
  y = -0.5, hook back or loop. The templates come from one fixed seed (`ALPHABET_SEED`): the same alphabet
  for every split and machine;
- a word is 2 to 5 letters (uniform), each drawn uniformly from the 12, written joined: each
  letter starts where the one before ended. After a word's last point the pen lifts (e = 1 there)
  and the next word starts a space further right (0.5 to 1 letter widths);
- each line is written by its own writer, whose style is drawn once for the line: a slant s in
  [-0.4, 0.4] (a shear x += s * y), an x scale and a y scale in [0.7, 1.3], 10 to 17 points per
  letter (evenly spaced in the spline's parameter) and a jitter: Gaussian noise of sd 0.01 to 0.04
  letter widths on every point. Val and test lines are written by new writers.

What makes this the paper's setting: the style persists over the whole line but is never given.
Slant and scale change every offset of a line, so a model that remembers what it has read of the
line (an LSTM's state) can predict the next offset better than one that sees only the last offset
or none, and the longer the line, the longer it has to carry what it inferred. The unit of dx and
dy is fixed by the training split (`DX_SCALE`, `DY_SCALE`: unit sd there) and used for every
split.

A line of `length` steps has points p_0..p_length. Its offsets are p_t - p_{t-1} for t = 1..length,
and offset 0 is a fixed first step `FIRST_STEP` (as if the pen had come from one typical step to the
left of p_0): the same for every line, it tells a model only that a line begins. A line's points
do not depend on `length` except for where the line is cut: each line draws from its own
generator, spawned from its split's seed.

Introduced for the handwriting miniature in notebook 03.
"""

import functools
from dataclasses import dataclass

import numpy as np

from lnpaper.arguments import check_choice, check_int

LETTERS = 12
CONTROL_POINTS = 5
ALPHABET_SEED = 2013
WORD_LETTERS = (2, 5)  # a word's letter count, drawn uniformly from this range (inclusive)
SPACE = (0.5, 1.0)  # the horizontal jump between words, in letter widths
SLANT = (-0.4, 0.4)
SCALE = (0.7, 1.3)  # for x and for y, drawn separately
POINTS_PER_LETTER = (10, 17)  # inclusive
JITTER = (0.01, 0.04)  # sd of the Gaussian noise on each point, in letter widths
FIRST_STEP = (0.075, 0.0)  # offset 0 in letter widths: about one step along a letter (1 / 13.5)
DEFAULT_LENGTH = 200
MAX_LENGTH = 1000
SPLIT_SIZES = {"train": 600, "val": 64, "test": 64}
SPLIT_SEEDS = {"train": 60, "val": 61, "test": 62}
# The standard deviations of dx and dy (in letter widths) over all offsets of the train split at
# the default length, computed once by `_raw("train", DEFAULT_LENGTH)[0][..., k].std()` (numpy,
# float64) for k = 0, 1; tests/test_strokes.py recomputes them.
DX_SCALE = 0.147081
DY_SCALE = 0.199455


@dataclass(frozen=True)
class Strokes:
    """One split. offsets (N, length + 1, 3) float32: dx / DX_SCALE, dy / DY_SCALE and the
    end-of-stroke bit e (0 or 1); the writer of each line: slant, scale_x, scale_y, jitter (N,)
    float64 and points_per_letter (N,) int64."""

    offsets: np.ndarray
    slant: np.ndarray
    scale_x: np.ndarray
    scale_y: np.ndarray
    points_per_letter: np.ndarray
    jitter: np.ndarray


def _catmull_rom(controls: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Points (len(u), 2) of the uniform Catmull-Rom spline through `controls` at parameters u in
    [0, 1] (u = 0 is the first control point, u = 1 the last). The end tangents come from mirrored
    phantom points, so the curve passes through every control point and stops at the last."""
    ends = [2 * controls[0] - controls[1]], [2 * controls[-1] - controls[-2]]
    padded = np.concatenate([ends[0], controls, ends[1]])
    segments = len(controls) - 1
    position = u * segments
    i = np.minimum(position.astype(int), segments - 1)
    f = (position - i)[:, None]
    p0, p1, p2, p3 = padded[i], padded[i + 1], padded[i + 2], padded[i + 3]
    return 0.5 * (
        2 * p1
        + (p2 - p0) * f
        + (2 * p0 - 5 * p1 + 4 * p2 - p3) * f**2
        + (3 * p1 - p0 - 3 * p2 + p3) * f**3
    )


@functools.cache
def alphabet() -> np.ndarray:
    """The control points (LETTERS, CONTROL_POINTS, 2) of the letter templates. A letter runs from
    (0, 0) to (1, 0); its three inner points are spread along x (each a quarter of the way further,
    give or take 0.45, so a letter may hook or loop back) and drawn in y from [-0.5, 1]. A draw is
    kept if it climbs at least 0.6 above the baseline and one of its control points lies at least
    0.4 (in x or y) from the same point of each letter kept before, so the letters differ visibly."""
    rng = np.random.default_rng(ALPHABET_SEED)
    letters = []
    while len(letters) < LETTERS:
        x = np.arange(1, CONTROL_POINTS - 1) / (CONTROL_POINTS - 1)
        x = x + rng.uniform(-0.45, 0.45, CONTROL_POINTS - 2)
        y = rng.uniform(-0.5, 1.0, CONTROL_POINTS - 2)
        controls = np.column_stack([np.r_[0.0, x, 1.0], np.r_[0.0, y, 0.0]])
        if y.max() < 0.6:
            continue
        if any(np.abs(controls - kept).max() < 0.4 for kept in letters):
            continue
        letters.append(controls)
    letters = np.stack(letters)
    letters.flags.writeable = False
    return letters


@functools.cache
def _letter_points(points_per_letter: int) -> np.ndarray:
    """(LETTERS, points_per_letter + 1, 2): each template sampled at u = 0, 1/n, ..., 1."""
    u = np.linspace(0.0, 1.0, points_per_letter + 1)
    points = np.stack([_catmull_rom(controls, u) for controls in alphabet()])
    points.flags.writeable = False
    return points


def _line(rng: np.random.Generator, points: int):
    """One writer's line of `points` points: positions (points, 2) in letter widths, the end-of-
    stroke bits (points,) and the writer's style. Words are drawn until the line is long enough;
    every draw of a word comes after the draws of the words before it, so a shorter line is a
    prefix of a longer one."""
    slant = rng.uniform(*SLANT)
    scale_x, scale_y = rng.uniform(*SCALE, size=2)
    per_letter = int(rng.integers(POINTS_PER_LETTER[0], POINTS_PER_LETTER[1] + 1))
    jitter = rng.uniform(*JITTER)
    templates = _letter_points(per_letter)
    words, ends, start, count = [], [], 0.0, 0
    while count < points:
        letters = rng.integers(0, LETTERS, size=rng.integers(WORD_LETTERS[0], WORD_LETTERS[1] + 1))
        if words:
            start += rng.uniform(*SPACE)
        # each letter without its last point (the next letter's first), then the word's last point
        pieces = [templates[k, :-1] + [start + j, 0.0] for j, k in enumerate(letters)]
        pieces.append(templates[letters[-1], -1:] + [start + len(letters) - 1, 0.0])
        word = np.concatenate(pieces)
        start += len(letters)
        word = word * [scale_x, scale_y]
        word[:, 0] += slant * word[:, 1]
        word += rng.normal(0.0, jitter, size=word.shape)
        words.append(word)
        count += len(word)
        ends.append(count - 1)
    positions = np.concatenate(words)[:points]
    lifts = np.zeros(points)
    lifts[[end for end in ends if end < points]] = 1.0
    return positions, lifts, (slant, scale_x, scale_y, per_letter, jitter)


def _raw(split: str, length: int):
    """Unscaled offsets (N, length + 1, 3) float64 in letter widths, and the writers' styles."""
    seeds = np.random.SeedSequence(SPLIT_SEEDS[split]).spawn(SPLIT_SIZES[split])
    offsets = np.empty((len(seeds), length + 1, 3))
    styles = []
    for row, seed in enumerate(seeds):
        positions, lifts, style = _line(np.random.default_rng(seed), length + 1)
        offsets[row, 0, :2] = FIRST_STEP
        offsets[row, 1:, :2] = np.diff(positions, axis=0)
        offsets[row, :, 2] = lifts
        styles.append(style)
    return offsets, styles


def _check_length(length) -> int:
    check_int("length", length)
    if not 2 <= length <= MAX_LENGTH:
        raise ValueError(f"length must be an int in 2..{MAX_LENGTH}, got {length!r}")
    return int(length)


def load(split: str, *, length: int = DEFAULT_LENGTH) -> Strokes:
    """The fixed lines of one split ("train", "val" or "test"), each `length` + 1 offsets long
    (2 <= length <= 1000), the same on every call and machine (numpy's seeded generators). A model
    reads offsets[:, :length] and predicts offsets[:, 1:]. A shorter `length` cuts the same lines
    earlier: load(split, length=50).offsets equals load(split).offsets[:, :51]."""
    check_choice("split", split, SPLIT_SIZES)
    return _load(split, _check_length(length))


@functools.cache
def _load(split: str, length: int) -> Strokes:
    raw, styles = _raw(split, length)
    offsets = (raw / [DX_SCALE, DY_SCALE, 1.0]).astype(np.float32)
    slant, scale_x, scale_y, per_letter, jitter = (c.copy() for c in np.array(styles).T)
    arrays = (offsets, slant, scale_x, scale_y, per_letter.astype(np.int64), jitter)
    for array in arrays:
        array.flags.writeable = False  # cached: shared by every caller
    return Strokes(*arrays)


@functools.cache
def _independent_nll(split: str, length: int) -> float:
    train = load("train", length=length).offsets[:, 1:].astype(np.float64)
    lift = train[..., 2].mean()
    moves = train[..., :2].reshape(-1, 2)
    mean = moves.mean(axis=0)
    covariance = np.cov(moves, rowvar=False, bias=True)  # maximum likelihood: divide by n
    held = load(split, length=length).offsets[:, 1:].astype(np.float64)
    e = held[..., 2]
    with np.errstate(divide="ignore"):  # below length 20 no line has lifted its pen: lift = 0
        bernoulli = np.where(e == 1, -np.log(lift), -np.log1p(-lift))
    centred = held[..., :2] - mean
    mahalanobis = np.einsum("...i,ij,...j->...", centred, np.linalg.inv(covariance), centred)
    gaussian = 0.5 * (mahalanobis + np.log(np.linalg.det(covariance)) + 2 * np.log(2 * np.pi))
    return float((bernoulli + gaussian).mean())


def independent_nll(split: str, *, length: int = DEFAULT_LENGTH) -> float:
    """The loss of a model with no memory, in nats per predicted offset: each offset of `split`
    (steps 1..length) scored by a Bernoulli on e and one bivariate Gaussian (full covariance) on
    the scaled (dx, dy), independent of everything before it, both fitted by maximum likelihood
    on the train split at the same `length`. It knows the alphabet's average move and how often the
    pen lifts, but not the letter being written nor the writer's style: a sequence model trained on
    these lines must score below it, and by how much says what its memory is worth."""
    check_choice("split", split, SPLIT_SIZES)
    return _independent_nll(split, _check_length(length))
