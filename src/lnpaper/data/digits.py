"""scikit-learn's bundled handwritten digits: the companion's MNIST, small enough for a CPU.

1797 images of 8 x 8 pixels with 17 grey levels (0..16), labels 0..9, shipped inside scikit-learn, so
nothing is downloaded. The paper's experiments use MNIST (28 x 28); this is the same kind of task at
1/12 of the input size. Introduced in notebook 01 (the batch-size experiment, claim M5) and used for the
recurrent models of notebook 03.

Every form of the data comes from one fixed split, so a number measured on "test" in one notebook
is measured on the same 300 images in every other:

- `load(split, form="flat")`: (N, 64), pixel values scaled to [0, 1];
- `form="rows"`: (N, 8, 8), a sequence of T = 8 rows of 8 pixels, top row first;
- `form="pixels"`: (N, 64, 1), a sequence of T = 64 single pixels in reading order
  (sequential MNIST's reading, at 64 steps rather than 784);
- `permuted=True`: the 64 pixels in a fixed random order first (permuted MNIST, or for an MLP the
  "permutation-invariant" task: a model that never uses where a pixel sits does as well either way);
- `digit_stream(...)`: sequences (N, T, 64) whose every step is a whole random image, a stationary
  input stream for studying the statistics of recurrent activations over time (notebook 01, M4);
- `binarized(split)`: (N, 64) of 0s and 1s, each pixel drawn once, for good, as a Bernoulli of its
  grey level / 16 (notebook 03's DRAW miniature, after Larochelle & Murray's fixed binarization of
  MNIST), and `binarized_levels` its reference levels in nats per image.

Sequences are always batch first: (N, T, features).
"""

import functools

import numpy as np
import torch

from lnpaper.arguments import check_choice, check_flag, check_int, check_positive_int

SIDE = 8  # images are SIDE x SIDE
PIXELS = SIDE * SIDE
CLASSES = 10
MAX_LEVEL = 16.0  # load_digits counts 0..16 ink levels per pixel
SPLIT_SEED = 0  # the one shuffle behind train / val / test
PERMUTATION_SEED = 1  # the one pixel order behind permuted=True
BINARIZATION_SEED = 2  # the one Bernoulli draw behind binarized()
SPLIT_SIZES = {"train": 1197, "val": 300, "test": 300}  # sums to the 1797 images
FORMS = ("flat", "rows", "pixels")


@functools.cache
def _all_images() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits  # bundled with scikit-learn: no download

    bunch = load_digits()
    return bunch.data.astype(np.float32) / MAX_LEVEL, bunch.target.astype(np.int64)


@functools.cache
def split_indices() -> dict[str, np.ndarray]:
    """Which of the 1797 images belong to train, val and test: a seeded shuffle, cut in that order."""
    images, _ = _all_images()
    if len(images) != sum(SPLIT_SIZES.values()):
        raise ValueError(
            f"expected {sum(SPLIT_SIZES.values())} digits from scikit-learn, got {len(images)}"
        )
    order = np.random.default_rng(SPLIT_SEED).permutation(len(images))
    cuts = np.cumsum([0, *SPLIT_SIZES.values()])
    return {name: order[a:b] for name, a, b in zip(SPLIT_SIZES, cuts[:-1], cuts[1:], strict=True)}


@functools.cache
def pixel_permutation() -> np.ndarray:
    """The fixed order in which `permuted=True` presents the 64 pixels."""
    return np.random.default_rng(PERMUTATION_SEED).permutation(PIXELS)


def _check_split(split: str) -> None:
    check_choice("split", split, SPLIT_SIZES)


def load(split: str, *, form: str = "flat", permuted: bool = False):
    """(x, y) of one split: x float32 in the shape of `form`, y int64 labels 0..9, shape (N,).

    flat: (N, 64); rows: (N, 8, 8) = (N, T, features); pixels: (N, 64, 1) = (N, T, features).
    """
    _check_split(split)
    check_choice("form", form, FORMS)
    check_flag("permuted", permuted)
    images, labels = _all_images()
    index = split_indices()[split]
    x = images[index]
    if permuted:
        x = x[:, pixel_permutation()]
    if form == "rows":
        x = x.reshape(-1, SIDE, SIDE)
    elif form == "pixels":
        x = x.reshape(-1, PIXELS, 1)
    return torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(labels[index])


def digit_stream(split: str, *, count: int, length: int, seed: int):
    """`count` sequences of `length` images drawn at random (with replacement) from `split`.

    Returns x of shape (count, length, 64) and the labels y of shape (count, length). Every step
    shows an independent random image, so the input's distribution is the same at every step: any
    change of a recurrent net's activation statistics over time comes from the net itself.
    """
    _check_split(split)
    count = check_positive_int("count", count)
    length = check_positive_int("length", length)
    seed = check_int("seed", seed)
    x, y = load(split)
    generator = torch.Generator().manual_seed(seed)
    index = torch.randint(len(x), (count, length), generator=generator)
    return x[index], y[index]


@functools.cache
def _binarized_images() -> np.ndarray:
    """All 1797 images binarized by one seeded draw: pixel = 1 with probability grey / 16."""
    images, _ = _all_images()
    uniform = np.random.default_rng(BINARIZATION_SEED).random(images.shape)
    return (uniform < images).astype(np.float32)


def binarized(split: str) -> torch.Tensor:
    """(N, 64) float32 of 0s and 1s: the split's images binarized once and for all, the same at
    every call (a fixed binarization, as Larochelle & Murray's of MNIST; a model is scored on one
    set of binary images, not on fresh draws)."""
    _check_split(split)
    return torch.from_numpy(_binarized_images()[split_indices()[split]])


def binarized_levels(split: str = "test") -> dict[str, float]:
    """Two levels, in nats per image, against which a model of `binarized(split)` is read:

    - "mean image": -log p(x) under independent pixels whose p_j is training pixel j's frequency of
      1s, smoothed as (ones + 1/2) / (N + 1) so that no pixel is certain: what a model learns
      that ignores every dependence between pixels;
    - "binarization entropy": the expected entropy of the draw itself, sum_j H(grey_j / 16) over
      each image, averaged: the floor a model of these images could reach only by knowing every
      grey level, out of reach in practice."""
    _check_split(split)
    train = binarized("train").double()
    p = (train.sum(0) + 0.5) / (len(train) + 1)
    x = binarized(split).double()
    mean_image = -(x * p.log() + (1 - x) * (1 - p).log()).sum(1).mean()
    grey, _ = load(split)
    grey = grey.double()
    entropy = -(torch.special.xlogy(grey, grey) + torch.special.xlogy(1 - grey, 1 - grey))
    return {"mean image": mean_image.item(), "binarization entropy": entropy.sum(1).mean().item()}
