"""The digits data module: one fixed split, the flat, permuted and sequence forms, clear errors."""

import numpy as np
import pytest
import torch

from lnpaper.data import digits


def test_the_split_is_fixed_disjoint_and_covers_every_image():
    parts = digits.split_indices()
    sizes = {name: len(index) for name, index in parts.items()}
    assert sizes == {"train": 1197, "val": 300, "test": 300}
    everything = np.concatenate(list(parts.values()))
    assert sorted(everything.tolist()) == list(range(1797))
    first = digits.load("test")[1][:10].tolist()
    digits.split_indices.cache_clear()  # recomputed from its seed: the same images
    assert digits.load("test")[1][:10].tolist() == first


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_flat_images_are_scaled_pixels_with_every_label(split):
    x, y = digits.load(split)
    assert x.dtype == torch.float32 and y.dtype == torch.int64
    assert x.shape == (len(y), 64)
    assert x.min() == 0.0 and x.max() == 1.0
    assert set(y.tolist()) == set(range(10))


def test_rows_and_pixels_are_the_same_images_as_sequences():
    flat, labels = digits.load("val")
    rows, row_labels = digits.load("val", form="rows")
    pixels, _ = digits.load("val", form="pixels")
    assert rows.shape == (300, 8, 8) and pixels.shape == (300, 64, 1)  # (N, T, features)
    assert torch.equal(rows[:, 2, :], flat[:, 16:24])  # step 2 is the third row from the top
    assert torch.equal(pixels[:, 10, 0], flat[:, 10])  # step 10 is pixel 10 in reading order
    assert torch.equal(labels, row_labels)


def test_permuted_pixels_follow_one_fixed_permutation():
    flat, _ = digits.load("train")
    permuted, _ = digits.load("train", permuted=True)
    order = digits.pixel_permutation()
    assert sorted(order.tolist()) == list(range(64)) and not np.array_equal(order, np.arange(64))
    assert torch.equal(permuted, flat[:, order])
    assert torch.equal(digits.load("train", form="pixels", permuted=True)[0][:, :, 0], permuted)


def test_digit_stream_draws_whole_images_reproducibly():
    x, y = digits.digit_stream("test", count=5, length=7, seed=3)
    assert x.shape == (5, 7, 64) and y.shape == (5, 7)
    images, labels = digits.load("test")
    match = (x[2, 4] == images).all(dim=1).nonzero().flatten()  # step 4 of sequence 2 is an image
    assert len(match) >= 1 and y[2, 4] == labels[match[0]]
    again, _ = digits.digit_stream("test", count=5, length=7, seed=3)
    other, _ = digits.digit_stream("test", count=5, length=7, seed=4)
    assert torch.equal(x, again) and not torch.equal(x, other)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: digits.load("validation"), "split must be one of ('train', 'val', 'test')"),
        (lambda: digits.load("train", form="columns"), "form must be one of ('flat', 'rows'"),
        (lambda: digits.digit_stream("train", count=0, length=3, seed=0), "count must be a pos"),
        (lambda: digits.digit_stream("train", count=2, length=2.5, seed=0), "length must be a p"),
        (lambda: digits.digit_stream("dev", count=2, length=2, seed=0), "split must be one of"),
    ],
)
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert message in str(error.value)


# ---- the fixed binarization (notebook 03's DRAW miniature) -----------------------------------------


def test_binarized_is_one_fixed_draw_of_zeros_and_ones():
    first = digits.binarized("test")
    assert first.shape == (300, 64) and first.dtype == torch.float32
    assert set(first.unique().tolist()) == {0.0, 1.0}
    assert torch.equal(digits.binarized("test"), first)  # the same at every call
    digits._binarized_images.cache_clear()
    assert torch.equal(digits.binarized("test"), first)  # and in every process
    train = digits.binarized("train")
    assert train.shape == (1197, 64) and not torch.equal(train[:300], first)


def test_binarized_pixels_follow_their_grey_levels():
    grey, _ = digits.load("train")
    ones = digits.binarized("train")
    assert torch.all(ones[grey == 0] == 0) and torch.all(ones[grey == 1] == 1)
    # over the 1197 training images each pixel's share of 1s tracks its mean grey / 16: the
    # binomial's standard error is at most 0.5 / sqrt(1197) = 0.0145, and 4 of them bound all 64
    assert (ones.mean(0) - grey.mean(0)).abs().max() < 4 * 0.5 / 1197**0.5
    assert torch.corrcoef(torch.stack([ones.mean(0), grey.mean(0)]))[0, 1] > 0.99


def test_binarized_levels_are_the_designs():
    levels = digits.binarized_levels("test")
    # the design's probe: mean-image bound 27.3 and binarization entropy 13.5 nats on test; the
    # entropy has no draw in it, the bound moves by about 0.2 nats from one binarization to another
    assert levels["binarization entropy"] == pytest.approx(13.51, abs=0.01)
    assert levels["mean image"] == pytest.approx(27.3, abs=0.3)
    assert levels["binarization entropy"] < levels["mean image"]


def test_binarized_refuses_an_unknown_split():
    with pytest.raises(ValueError, match="split"):
        digits.binarized("validation")
    with pytest.raises(ValueError, match="split"):
        digits.binarized_levels("all")
