"""Experiments of notebook 04, the CNN coda: the recorded run behind claims R5 and R5b. The
recurrent runs of notebook 04 are chapter 03's `sequence_training` at T = 64.

- `cnn_coda` (R5, R5b): a small CNN with no norm, BatchNorm or LayerNorm, on the digits as they
  are and framed by a blank margin.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from lnpaper.chapters.ch03_layernorm_in_rnns.runs import evaluate_per_model
from lnpaper.companion.record import experiment
from lnpaper.data import digits
from lnpaper.models.cnn import NORMS as CNN_NORMS
from lnpaper.models.cnn import SeedBatchedCNN, SmallCNN
from lnpaper.train import PerRunAdam, epoch_batches, train_population


def framed_images(split: str, margin: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The digits of `split` as images (N, 1, 8 + 2m, 8 + 2m): each framed by a blank margin of m
    pixels. m = 2 gives MNIST's proportion (a 20 x 20 digit in a 28 x 28 image: 4 of 28 pixels)."""
    x, y = digits.load(split)
    images = x.view(-1, 1, digits.SIDE, digits.SIDE)
    return F.pad(images, (margin,) * 4), y


def units_on(
    activations: torch.Tensor, border: torch.Tensor, *, responding_only: bool = True
) -> tuple[float, float]:
    """The share of ReLU units on, (N, C, side, side) activations, at the border and inside it.
    With `responding_only`, counting only units that respond to the image: a unit whose receptive
    field is blank in every image computes ReLU(bias), the same value for all, and is left out
    whether that is 0 or not. Without it every unit counts, the blank ones too, as the paper's
    "units near the boundary" do."""
    responds = activations.std(dim=0) > 1e-6  # (C, side, side): varies across the images
    if not responding_only:
        responds = torch.ones_like(responds)
    on = (activations > 0).float().mean(dim=0)  # (C, side, side): share of images it is on for

    def share(region):
        mask = responds & region
        return (on[mask].sum() / mask.sum().clamp(min=1)).item()

    return share(border.expand_as(responds)), share((~border).expand_as(responds))


def border_mask(side: int, width: int) -> torch.Tensor:
    """True within `width` pixels of the edge of a side x side grid."""
    mask = torch.ones(side, side, dtype=torch.bool)
    mask[width : side - width, width : side - width] = False
    return mask


@dataclass
class CNNResult:
    norms: list
    channels: list
    steps: int
    batch_size: int
    lr: float
    seeds: list
    margins: list  # blank pixels added around the 8 x 8 digits
    eval_steps: list
    val_loss: dict  # margin -> norm -> [seed][eval step]
    val_accuracy: dict
    test_loss: dict  # margin -> norm -> [seed]
    test_accuracy: dict
    border_positions: dict  # margin -> positions in the border ring (of side^2)
    border_ink: dict  # margin -> mean pixel value in the border ring, training images
    interior_ink: dict  # the same inside it
    border_active: dict  # margin -> per conv layer: share of responding ReLU units on in the ring
    interior_active: dict  # the same inside it
    border_active_all: dict  # the same counting every unit, the blank ones too
    interior_active_all: dict


def _train_cnns(norm, result, side, train_split, val_split, test_split, *, eval_every) -> dict:
    """One `SmallCNN` per seed of `result.seeds`, trained together as one population
    (`SeedBatchedCNN`, Adam at `result.lr`), each on epoch-shuffled minibatches of its seed.
    Validation every `eval_every` steps and the test split after the last step, both in eval mode.
    Returns {val_loss, val_accuracy: [seed][eval], test_loss, test_accuracy: [seed], "first seed":
    the first seed's trained model}, and sets `result.eval_steps`."""
    (x, y), (val_x, val_y), (test_x, test_y) = train_split, val_split, test_split
    models = []
    for seed in result.seeds:
        torch.manual_seed(seed)
        models.append(SmallCNN(norm, result.channels, side=side))
    model = SeedBatchedCNN(models)
    optimizer = PerRunAdam(model.parameters(), [result.lr] * len(result.seeds))
    batches = [epoch_batches(len(x), result.batch_size, seed) for seed in result.seeds]
    curves, result.eval_steps = {"val_loss": [], "val_accuracy": []}, []

    def every_seed(images):  # (N, 1, side, side) -> (S, N, 1, side, side), a view
        return images.expand(len(result.seeds), *images.shape)

    def evaluate(step: int) -> None:
        model.eval()
        with torch.no_grad():
            nll, accuracy = evaluate_per_model(model, every_seed(val_x), val_y)
        curves["val_loss"].append(nll)
        curves["val_accuracy"].append(accuracy)
        result.eval_steps.append(step)
        model.train()

    def step_losses(step: int):
        index = torch.stack([batch(step) for batch in batches])  # (seeds, batch_size)
        logits = model(x[index])
        # the sum of the per-seed mean losses: each seed gets its own gradient
        loss = F.cross_entropy(logits.flatten(0, 1), y[index].flatten(), reduction="sum")
        return None, loss / result.batch_size

    train_population(
        len(result.seeds), optimizer.params, step_losses, optimizer, steps=result.steps,
        evaluate=evaluate, eval_every=eval_every,
    )  # fmt: skip
    model.eval()
    with torch.no_grad():
        test_loss, test_accuracy = evaluate_per_model(model, every_seed(test_x), test_y)
    return {
        "val_loss": torch.stack(curves["val_loss"], dim=1).tolist(),
        "val_accuracy": torch.stack(curves["val_accuracy"], dim=1).tolist(),
        "test_loss": test_loss.tolist(),
        "test_accuracy": test_accuracy.tolist(),
        "first seed": model.per_seed(0).eval(),
    }


@experiment
def cnn_coda(
    *,
    norms=CNN_NORMS,
    margins=(0, 2),
    channels=(8, 16),
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 3e-3,
    seeds=tuple(range(10)),
    eval_every: int = 20,
) -> CNNResult:
    """R5 (Ba et al. 2016, Sec. 6.7, "preliminary" CNN experiment): `SmallCNN` with no norm, BatchNorm
    or LayerNorm, the same optimizer, steps, seeds and minibatches, on the digits as they are and
    framed by a blank margin.

    The paper's reason for BatchNorm's win: units whose receptive fields lie near the image border
    are rarely on, so the units of one layer do not contribute alike, as LayerNorm's shared
    statistics assume. The 8 x 8 digits fill their box; MNIST's have a blank frame, which the
    margin puts back. Measured besides the training: the ink in the border ring (1 pixel wide, or
    the margin) and how often the ReLU units there are on in the trained network without a norm
    (first seed), against the interior, counting the units that respond to the image and every
    unit."""
    result = CNNResult(
        norms=list(norms),
        channels=list(channels),
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        seeds=[int(s) for s in seeds],
        margins=[int(m) for m in margins],
        eval_steps=[],
        val_loss={},
        val_accuracy={},
        test_loss={},
        test_accuracy={},
        border_positions={},
        border_ink={},
        interior_ink={},
        border_active={},
        interior_active={},
        border_active_all={},
        interior_active_all={},
    )
    for margin in result.margins:
        side = digits.SIDE + 2 * margin
        x, y = framed_images("train", margin)
        val_x, val_y = framed_images("val", margin)
        test_x, test_y = framed_images("test", margin)
        border = border_mask(side, max(1, margin))
        result.border_positions[margin] = int(border.sum())
        result.border_ink[margin] = x[:, 0][:, border].mean().item()
        result.interior_ink[margin] = x[:, 0][:, ~border].mean().item()
        for field in ("border_active", "interior_active", "border_active_all",
                      "interior_active_all"):  # fmt: skip
            getattr(result, field)[margin] = []
        for field in ("val_loss", "val_accuracy", "test_loss", "test_accuracy"):
            getattr(result, field)[margin] = {}
        for norm in norms:
            runs = _train_cnns(norm, result, side, (x, y), (val_x, val_y), (test_x, test_y),
                               eval_every=eval_every)  # fmt: skip
            if norm == "none":  # how often the ReLU units are on, first seed, trained net
                model = runs.pop("first seed")
                with torch.no_grad():
                    for relu in (2, 5):  # the ReLU after each conv layer
                        activations = model.features[: relu + 1](test_x)
                        border_on, inside_on = units_on(activations, border)
                        result.border_active[margin].append(border_on)
                        result.interior_active[margin].append(inside_on)
                        border_on, inside_on = units_on(activations, border, responding_only=False)
                        result.border_active_all[margin].append(border_on)
                        result.interior_active_all[margin].append(inside_on)
            runs.pop("first seed", None)
            for field, values in runs.items():
                getattr(result, field)[margin][norm] = values
    return result
