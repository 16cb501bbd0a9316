"""The generated handwriting (lnpaper.data.strokes): fixed splits of offsets (dx, dy, e) in the
train split's unit, lines that a shorter length only cuts, pen lifts where the words put them, a
writer's slant that lasts the whole line and can be read back from its offsets, and the
no-memory reference loss a sequence model must beat."""

import math

import numpy as np
import pytest

from lnpaper.data import strokes

SPLITS = tuple(strokes.SPLIT_SIZES)


@pytest.fixture(scope="module")
def train():
    return strokes.load("train")


def test_each_split_has_its_size_shape_and_dtypes():
    for split, size in strokes.SPLIT_SIZES.items():
        data = strokes.load(split)
        assert data.offsets.shape == (size, strokes.DEFAULT_LENGTH + 1, 3)
        assert data.offsets.dtype == np.float32
        assert np.isfinite(data.offsets).all()
        for style in (data.slant, data.scale_x, data.scale_y, data.points_per_letter, data.jitter):
            assert style.shape == (size,)
        assert data.points_per_letter.dtype == np.int64
        assert set(np.unique(data.offsets[..., 2])) <= {0.0, 1.0}
    assert strokes.load("val", length=7).offsets.shape == (64, 8, 3)


def test_splits_are_fixed_shared_and_read_only():
    a = strokes.load("val")
    assert strokes.load("val") is a
    assert strokes.load("val", length=strokes.DEFAULT_LENGTH) is a
    for array in (a.offsets, a.slant, a.scale_x, a.scale_y, a.points_per_letter, a.jitter):
        with pytest.raises(ValueError):
            array[0] = 0


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"split": "dev"}, "split"),
        ({"split": "train", "length": 1}, "length"),
        ({"split": "train", "length": 1001}, "length"),
        ({"split": "train", "length": 50.0}, "length"),
        ({"split": "train", "length": True}, "length"),
    ],
)
def test_a_bad_split_or_length_is_refused_by_name(kwargs, named):
    for function in (strokes.load, strokes.independent_nll):
        with pytest.raises(ValueError, match=named) as raised:
            function(**kwargs)
        value = kwargs[named]
        assert repr(value) in str(raised.value)


def test_a_shorter_length_cuts_the_same_lines():
    for split in SPLITS:
        short, full = strokes.load(split, length=50), strokes.load(split)
        np.testing.assert_array_equal(short.offsets, full.offsets[:, :51])
        np.testing.assert_array_equal(short.slant, full.slant)
        np.testing.assert_array_equal(short.points_per_letter, full.points_per_letter)


def test_train_offsets_have_unit_sd_and_the_scales_recompute(train):
    """The scales are the sd of the unscaled train offsets at the default length; dividing by
    them leaves the train split's dx and dy with sd 1 (offset 0, the fixed first step, counted)."""
    assert train.offsets[..., 0].astype(np.float64).std() == pytest.approx(1, abs=1e-3)
    assert train.offsets[..., 1].astype(np.float64).std() == pytest.approx(1, abs=1e-3)
    raw, _ = strokes._raw("train", strokes.DEFAULT_LENGTH)
    for k, scale in enumerate((strokes.DX_SCALE, strokes.DY_SCALE)):
        assert f"{raw[..., k].std():.3g}" == f"{scale:.3g}"
    first = np.array(strokes.FIRST_STEP) / [strokes.DX_SCALE, strokes.DY_SCALE]
    np.testing.assert_allclose(
        train.offsets[:, 0, :2], np.broadcast_to(first, (len(train.offsets), 2)), 1e-6
    )
    assert (train.offsets[:, 0, 2] == 0).all()


def test_the_pen_lifts_once_per_word(train):
    """A word of L letters (2..5) written with p points per letter has L * p + 1 points and one
    lift, at its last point. A line's points 0..200 hold only whole words and a cut one, so its
    count of lifts lies between 201 // (5p + 1) and 201 // (2p + 1). Over the split the mean word
    has 3.5p + 1 points with p between 10 and 17, so lifts are 1/36 to 1/60.5 of the points,
    fewer by up to about a fifth for the last word of a line, usually cut before its lift."""
    points = strokes.DEFAULT_LENGTH + 1
    lifts = train.offsets[..., 2].sum(axis=1)
    p = train.points_per_letter
    assert (lifts >= points // (5 * p + 1)).all()
    assert (lifts <= points // (2 * p + 1)).all()
    share = train.offsets[..., 2].mean()
    assert 0.8 / (3.5 * 17 + 1) < share < 1 / (3.5 * 10 + 1)
    # the move after a lift is the space to the next word: to the right, wider than a step
    after = train.offsets[:, 1:][train.offsets[:, :-1, 2] == 1]
    within = train.offsets[:, 1:][train.offsets[:, :-1, 2] == 0]
    assert np.median(after[:, 0]) > 3 * np.median(np.abs(within[:, 0]))


def _slant_estimate(offsets, start, stop):
    """A line's slant read from its offsets start..stop-1: the least-squares slope of dx on dy
    over the moves within words (offset t with e = 0 at t - 1: the move after a lift is the space
    to the next word, wide in x whatever dy is). A shear x += s * y adds s * dy to every dx, so the
    slope is s plus the letters' own slope of dx on dy (stretched by the writer's x scale over y
    scale), which varies with the letters a half line happens to draw, and the jitter pulls it a
    little towards 0. Over 100 offsets (7 letters or so) the slant outweighs both."""
    t = np.arange(start, stop)
    within = offsets[t - 1, 2] == 0
    dx = offsets[t, 0][within] * strokes.DX_SCALE
    dy = offsets[t, 1][within] * strokes.DY_SCALE
    dx, dy = dx - dx.mean(), dy - dy.mean()
    return (dx @ dy) / (dy @ dy)


def test_the_writers_slant_lasts_the_line_and_is_read_from_its_offsets(train):
    half = strokes.DEFAULT_LENGTH // 2
    first = np.array([_slant_estimate(line, 1, half + 1) for line in train.offsets])
    second = np.array([_slant_estimate(line, half + 1, 2 * half + 1) for line in train.offsets])
    assert np.corrcoef(first, second)[0, 1] > 0.8
    assert np.corrcoef(first, train.slant)[0, 1] > 0.8
    assert np.corrcoef(second, train.slant)[0, 1] > 0.8


def test_splits_are_new_writers_with_styles_in_the_stated_ranges():
    lines = [strokes.load(split).offsets[0] for split in SPLITS]
    for i in range(3):
        for j in range(i + 1, 3):
            assert not np.array_equal(lines[i], lines[j])
    for split in SPLITS:
        data = strokes.load(split)
        assert ((data.slant >= -0.4) & (data.slant <= 0.4)).all()
        for scale in (data.scale_x, data.scale_y):
            assert ((scale >= 0.7) & (scale <= 1.3)).all()
        assert ((data.points_per_letter >= 10) & (data.points_per_letter <= 17)).all()
        assert ((data.jitter >= 0.01) & (data.jitter <= 0.04)).all()
    test = strokes.load("test")
    assert len(np.unique(test.points_per_letter)) > 4  # 64 writers draw most of the 8 values
    assert test.slant.std() > 0.15  # uniform on [-0.4, 0.4]: sd 0.23


def test_the_alphabet_is_fixed_and_each_letter_runs_from_0_0_to_1_0():
    letters = strokes.alphabet()
    assert letters.shape == (strokes.LETTERS, strokes.CONTROL_POINTS, 2)
    np.testing.assert_array_equal(letters[:, 0], 0.0)
    np.testing.assert_array_equal(letters[:, -1], [[1.0, 0.0]] * strokes.LETTERS)
    curves = strokes._letter_points(12)
    np.testing.assert_allclose(curves[:, 0], letters[:, 0], atol=1e-12)  # through the ends
    np.testing.assert_allclose(curves[:, 3], letters[:, 1], atol=1e-12)  # and the inner points
    np.testing.assert_allclose(curves[:, -1], letters[:, -1], atol=1e-12)
    distances = np.abs(letters[:, None] - letters[None, :]).max(axis=(2, 3))
    assert distances[~np.eye(strokes.LETTERS, dtype=bool)].min() >= 0.4  # visibly different


@pytest.mark.parametrize("length", [strokes.DEFAULT_LENGTH, 50, 2])
def test_independent_nll_is_finite_fixed_and_fits_train_better_than_unit_gaussians(length):
    values = {split: strokes.independent_nll(split, length=length) for split in SPLITS}
    assert all(math.isfinite(value) for value in values.values())
    assert strokes.independent_nll("test", length=length) == values["test"]
    offsets = strokes.load("train", length=length).offsets[:, 1:].astype(np.float64)
    e = offsets[..., 2]
    lift = e.mean()  # 0 at length 2: no word ends that early, and e = 0 then costs nothing
    bernoulli = -(e * np.log(lift) + (1 - e) * np.log(1 - lift)).mean() if lift > 0 else 0.0
    unit = bernoulli + np.log(2 * np.pi) + 0.5 * (offsets[..., :2] ** 2).sum(axis=-1).mean()
    assert values["train"] < unit
    # maximum likelihood on train: no held-out split can be fitted much better than train
    assert min(values["val"], values["test"]) > values["train"] - 0.2
