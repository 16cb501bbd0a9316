"""The DRAW miniature (Ba et al. 2016, Sec. 6.4): DRAW without attention (`lnpaper.models.draw`)
trained on the fixed binarization of the 8 x 8 digits (`lnpaper.data.digits.binarized`), a
population of seeds per cell (notebook 03)."""

from dataclasses import dataclass

import torch

from lnpaper.arguments import check_positive_int
from lnpaper.companion.record import experiment
from lnpaper.data import digits
from lnpaper.models.draw import DRAW, glimpse_noise
from lnpaper.train.loop import epoch_batches
from lnpaper.train.optim import PerRunAdam
from lnpaper.train.population import train_population

LARGE_CELL = 2.0  # |c_T| above it: a cell state on which the plain LSTM's output tanh saturates
CELL_CHECKS = ("growth", "share")


@dataclass
class DrawTrainingResult:
    cell: str
    glimpses: int
    batch_size: int
    lr: float
    seeds: list
    eval_steps: list
    # every list below is indexed [seed][...]; the test figures are on the 300 test images, in
    # eval mode, each averaged over the same `eval_samples` draws of the noise at every evaluation
    test_bound: list  # [seed][eval]: -ELBO, nats per image
    test_kl: list  # [seed][eval]: its KL part, summed over glimpses, nats per image
    train_bound: list  # [seed][k]: the training minibatches' -ELBO, mean over each eval window
    diverged_at: list  # [seed]: the first update whose loss was not finite, or None
    # [seed][eval]: RMS(c_T) / RMS(c_1) of each cell's state (RMS over images and units), and the
    # share of |c_T| > LARGE_CELL: whether c_t grows over the glimpses, which LN on c_t undoes
    encoder_c_growth: list
    encoder_c_share: list
    decoder_c_growth: list
    decoder_c_share: list


def _rms(c: torch.Tensor) -> torch.Tensor:
    return c.pow(2).mean((1, 2)).sqrt()


@experiment
def draw_training(
    *,
    cell: str = "lstm",
    glimpses: int = 32,
    steps: int = 720,  # 40 epochs of 1197 // 64 = 18 minibatches
    batch_size: int = 64,
    lr: float = 1e-3,
    seeds=(0, 1, 2, 3, 4, 5, 6, 7),
    eval_every: int = 18,  # once an epoch
    eval_samples: int = 4,
    hidden: int = 64,
    latent: int = 8,
) -> DrawTrainingResult:
    """DRAW without attention with encoder and decoder cells `cell` ("lstm" or "ln-c-lstm") of
    `hidden` units, `latent` dimensions of z per glimpse and `glimpses` glimpses, trained with Adam
    at `lr` from every seed as one population: seed s starts from the weights drawn after
    torch.manual_seed(s), reads the binarized training images in epoch_batches(..., seed=s) order
    and at update k draws glimpse_noise(s, "train", k). The test bound before the first step and
    every `eval_every` steps, averaged over the noise samples glimpse_noise(s, "eval", 0..
    `eval_samples` - 1), the same at every evaluation and in both cells."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError(f"need at least one seed, got {seeds}")
    eval_samples = check_positive_int("eval_samples", eval_samples)
    eval_every = check_positive_int("eval_every", eval_every)
    train = digits.binarized("train")
    test_images = digits.binarized("test")
    test = test_images.repeat(eval_samples, 1)  # one row per image and noise sample
    model = DRAW(cell, seeds=seeds, hidden=hidden, latent=latent, glimpses=glimpses)
    shape = (len(test_images), glimpses, latent)
    test_noise = torch.cat([glimpse_noise(seeds, "eval", k, shape) for k in range(eval_samples)], 1)
    optimizer = PerRunAdam(model.parameters(), [float(lr)] * len(seeds))
    batches = [epoch_batches(len(train), batch_size, seed) for seed in seeds]
    curves = {f"{part}_c_{kind}": [] for part in ("encoder", "decoder") for kind in CELL_CHECKS}
    curves.update(test_bound=[], test_kl=[])
    eval_steps = []

    def evaluate(step: int) -> None:
        model.eval()
        cells = {}
        with torch.no_grad():
            images = test.expand(len(seeds), -1, -1)
            reconstruction, kl = model.bound_terms(images, test_noise, cells)
        curves["test_kl"].append(kl.sum(-1).mean(1))
        curves["test_bound"].append((reconstruction + kl.sum(-1)).mean(1))
        for name, states in cells.items():  # c_1 first, c_T last
            first, last = states[0], states[-1]
            curves[f"{name}_c_growth"].append(_rms(last) / _rms(first))
            curves[f"{name}_c_share"].append((last.abs() > LARGE_CELL).float().mean((1, 2)))
        eval_steps.append(step)
        model.train()

    def step_losses(step: int):
        index = torch.stack([batch(step) for batch in batches])  # (seeds, batch_size)
        noise = glimpse_noise(seeds, "train", step, (batch_size, glimpses, latent))
        return model(train[index], noise), None

    trained = train_population(
        len(seeds), optimizer.params, step_losses, optimizer, steps=steps, evaluate=evaluate,
        eval_every=eval_every, log_every=eval_every,
    )  # fmt: skip
    return DrawTrainingResult(
        cell=cell,
        glimpses=glimpses,
        batch_size=batch_size,
        lr=float(lr),
        seeds=seeds,
        eval_steps=eval_steps,
        **{name: torch.stack(values, dim=1).tolist() for name, values in curves.items()},
        train_bound=trained.train_loss,
        diverged_at=trained.diverged_at,
    )
