"""The handwriting miniature (Ba et al. 2016, Sec. 6.5): Graves' prediction network of
`lnpaper.models.handwriting` trained on the generated pen strokes of `lnpaper.data.strokes` at
minibatch 8, a population of seeds and learning rates per cell (notebook 03)."""

from dataclasses import dataclass

import torch

from lnpaper.companion.record import experiment
from lnpaper.data import strokes
from lnpaper.models.handwriting import StrokePredictor
from lnpaper.train.loop import epoch_batches
from lnpaper.train.optim import PerRunAdam
from lnpaper.train.population import train_population

RESET_EVERY = 25  # the locality check: the layers' states zeroed every 25 points


@dataclass
class HandwritingTrainingResult:
    cell: str
    length: int  # T: offsets read per line, each predicting the next
    batch_size: int
    lrs: list  # the rate grid; every list below is indexed [lr][seed]...
    seeds: list
    eval_steps: list
    val_nll: list  # [lr][seed][eval step]: nats per predicted point, eval mode
    test_nll: list
    # [lr][seed]: test NLL after the last step with the states zeroed every RESET_EVERY points
    test_nll_reset: list
    grad_norm: list  # [lr][seed][update]: the global gradient norm before each Adam step
    diverged_at: list  # [lr][seed]: the first update whose loss was not finite, or None
    # [lr][seed][layer][t]: RMS of each layer's summed inputs W_h h + W_x x at step t over the
    # validation lines, at init and after the last step (`StrokePredictor.summed_input_rms`)
    summed_rms_init: list
    summed_rms_final: list


def _offsets(split: str, length: int) -> torch.Tensor:
    return torch.from_numpy(strokes.load(split, length=length).offsets.copy())


@experiment
def handwriting_training(
    *,
    cell: str = "lstm",
    length: int = 200,
    steps: int = 600,
    batch_size: int = 8,
    lrs=(1e-2,),  # the pilot's pick (analysis_handwriting.HANDWRITING_LR)
    seeds=(0, 1, 2, 3, 4, 5, 6, 7),
    eval_every: int = 30,
    hidden: int = 32,
    mixtures: int = 8,
) -> HandwritingTrainingResult:
    """Graves' unconditional prediction network with `cell` ("lstm" or "ln-lstm"), two layers of
    `hidden` units with skip connections and `mixtures` Gaussians, trained with Adam at every rate
    of `lrs` from every seed as one population: seed s starts from the weights drawn after
    torch.manual_seed(s) and reads the training lines in epoch_batches(..., seed=s) order at
    every rate. Validation and test NLL per point (eval mode) before the first step and every
    `eval_every` steps; the gradient norm of every update."""
    seeds = [int(s) for s in seeds]
    lrs = [float(lr) for lr in lrs]
    if not seeds or not lrs:
        raise ValueError(f"need at least one rate and one seed, got {lrs} and {seeds}")
    train = _offsets("train", length)
    held_out = {split: _offsets(split, length) for split in ("val", "test")}
    runs = [(lr, seed) for lr in lrs for seed in seeds]
    model = StrokePredictor(
        cell, seeds=[seed for _, seed in runs], hidden=hidden, mixtures=mixtures
    )
    rms_init = model.summed_input_rms(held_out["val"].expand(len(runs), -1, -1, -1))
    optimizer = PerRunAdam(model.parameters(), [lr for lr, _ in runs])
    batches = [epoch_batches(len(train), batch_size, seed) for _, seed in runs]
    curves = {"val_nll": [], "test_nll": []}
    eval_steps = []

    def evaluate(step: int) -> None:
        model.eval()
        with torch.no_grad():
            for split, lines in held_out.items():
                curves[f"{split}_nll"].append(model(lines.expand(len(runs), -1, -1, -1)))
        eval_steps.append(step)
        model.train()

    def step_losses(step: int):
        index = torch.stack([batch(step) for batch in batches])  # (runs, batch_size)
        per_run = model(train[index])
        return per_run, None

    trained = train_population(
        len(runs), optimizer.params, step_losses, optimizer, steps=steps, evaluate=evaluate,
        eval_every=eval_every, log_grad_norm=True,
    )  # fmt: skip
    model.eval()
    with torch.no_grad():
        test = held_out["test"].expand(len(runs), -1, -1, -1)
        reset = model.point_nll(test, reset_every=RESET_EVERY).mean((1, 2))
    rms_final = model.summed_input_rms(held_out["val"].expand(len(runs), -1, -1, -1))

    def nested(values) -> list:  # (runs, ...) -> [lr][seed]...
        return [values[i * len(seeds) : (i + 1) * len(seeds)] for i in range(len(lrs))]

    def by_run(values: torch.Tensor) -> list:
        return nested(values.tolist())

    return HandwritingTrainingResult(
        cell=cell,
        length=length,
        batch_size=batch_size,
        lrs=lrs,
        seeds=seeds,
        eval_steps=eval_steps,
        **{name: by_run(torch.stack(values, dim=1)) for name, values in curves.items()},
        test_nll_reset=by_run(reset),
        grad_norm=nested(trained.logs["grad_norm"]),
        diverged_at=nested(trained.diverged_at),
        summed_rms_init=by_run(rms_init),
        summed_rms_final=by_run(rms_final),
    )
