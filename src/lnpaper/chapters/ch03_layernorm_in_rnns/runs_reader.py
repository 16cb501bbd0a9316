"""The attentive reader's miniature (Ba et al. 2016, Sec. 6.2): the reader of
`lnpaper.models.reader` trained on the generated passages of `lnpaper.data.cloze`, a population of
seeds and learning rates per cell (notebook 03)."""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from lnpaper.companion.record import experiment
from lnpaper.data import cloze
from lnpaper.models.reader import AttentiveReader
from lnpaper.train.loop import epoch_batches
from lnpaper.train.optim import PerRunAdam
from lnpaper.train.population import train_population


@dataclass
class ReaderTrainingResult:
    cell: str
    gain_init: float | None  # None: the cell's default (LayerNorm 1.0, BatchNorm 0.1)
    text_statistics: bool  # BN-LSTM only: statistics over the rows that hold text
    hidden: int
    lrs: list  # the rate grid; every list below is indexed [lr][seed]...
    batch_size: int
    seeds: list
    fillers: str  # the generator's filler words per side (lnpaper.data.cloze)
    eval_steps: list
    val_error: list  # [lr][seed][eval step], the share of wrong answers, eval mode
    val_loss: list  # NLL of the answer among the candidates, nats
    test_error: list
    test_loss: list
    cell_gain_init: list  # [lr][seed]: mean |gain| of the document cell's norm on c_t, at init
    cell_gain_final: list  # and after the last step (normalized cells only, else empty)
    # [lr][seed]: E[1 - tanh^2] of the document LSTM's output squashing over the validation
    # passages' text, at init and after the last step (`AttentiveReader.output_slope`; not the bag)
    output_slope_init: list
    output_slope_final: list


def _tensors(split: str, fillers: str):
    data = cloze.load(split, fillers=fillers)
    fields = (data.passages, data.lengths, data.queries, data.candidates, data.answers)
    return [torch.from_numpy(field.copy()) for field in fields]


def _mean_cell_gain(model: AttentiveReader) -> list:
    if model.cell not in ("ln-lstm", "bn-lstm"):
        return []
    return model.document.p("norm_c.weight").detach().abs().mean(1).tolist()


def _output_slope(model: AttentiveReader, tensors) -> list:
    if model.cell == "bag":
        return []
    passages, lengths = (t.expand(model.seeds, *t.shape) for t in tensors[:2])
    return model.output_slope(passages, lengths).tolist()


@experiment
def reader_training(
    *,
    cell: str = "lstm",
    gain_init: float | None = None,
    text_statistics: bool = False,
    hidden: int = 32,
    steps: int = 700,
    batch_size: int = 64,
    lrs=(1e-3, 3e-3),
    seeds=(0, 1, 2, 3, 4, 5),
    eval_every: int = 35,
    fillers: str = "0..v",
) -> ReaderTrainingResult:
    """The attentive reader with `cell` ("lstm", "ln-lstm", "bn-lstm" or the "bag" control)
    trained with Adam at every rate of `lrs` from every seed, as one population: seed s starts
    from the weights drawn after torch.manual_seed(s) and reads the minibatches of
    epoch_batches(..., seed=s) at every rate, each batch padded to its longest passage. A BN-LSTM
    keeps per-step statistics for T_max, the longest training passage. Validation and test
    (error and NLL, eval mode) before the first step and every `eval_every` steps."""
    seeds = [int(s) for s in seeds]
    lrs = [float(lr) for lr in lrs]
    if not seeds or not lrs:
        raise ValueError(f"need at least one rate and one seed, got {lrs} and {seeds}")
    train = _tensors("train", fillers)
    held_out = {split: _tensors(split, fillers) for split in ("val", "test")}
    runs = [(lr, seed) for lr in lrs for seed in seeds]
    model = AttentiveReader(
        cell,
        seeds=[seed for _, seed in runs],
        hidden=hidden,
        gain_init=gain_init,
        max_steps=int(train[1].max()),
        text_statistics=text_statistics,
    )
    gain_init_measured = _mean_cell_gain(model)
    slope_init = _output_slope(model, held_out["val"])
    optimizer = PerRunAdam(model.parameters(), [lr for lr, _ in runs])
    batches = [epoch_batches(len(train[0]), batch_size, seed) for _, seed in runs]
    curves = {name: [] for name in ("val_error", "val_loss", "test_error", "test_loss")}
    eval_steps = []

    def answer_losses(tensors, index=None):
        """Per run: NLL of each answer (S, N) and whether it was the top candidate."""
        passages, lengths, queries, candidates, answers = (
            t.expand(len(runs), *t.shape) if index is None else t[index] for t in tensors
        )
        longest = int(lengths.max())
        logits = model(passages[..., :longest], lengths, queries, candidates)
        nll = F.cross_entropy(logits.flatten(0, 1), answers.flatten(), reduction="none")
        return nll.view(answers.shape), logits.argmax(-1) == answers

    def evaluate(step: int) -> None:
        model.eval()
        with torch.no_grad():
            for split, tensors in held_out.items():
                nll, right = answer_losses(tensors)
                curves[f"{split}_error"].append(1 - right.float().mean(1))
                curves[f"{split}_loss"].append(nll.mean(1))
        eval_steps.append(step)
        model.train()

    def step_losses(step: int):
        index = torch.stack([batch(step) for batch in batches])  # (runs, batch_size)
        nll, _ = answer_losses(train, index)
        return None, nll.sum() / batch_size  # each run's mean: its own gradient

    train_population(
        len(runs), optimizer.params, step_losses, optimizer, steps=steps, evaluate=evaluate,
        eval_every=eval_every,
    )  # fmt: skip

    def nested(values: torch.Tensor) -> list:  # (runs, ...) -> [lr][seed]...
        return values.view(len(lrs), len(seeds), *values.shape[1:]).tolist()

    def by_run(values: list) -> list:
        return nested(torch.tensor(values)) if values else []

    return ReaderTrainingResult(
        cell=cell,
        gain_init=gain_init,
        text_statistics=text_statistics,
        hidden=hidden,
        lrs=lrs,
        batch_size=batch_size,
        seeds=seeds,
        fillers=fillers,
        eval_steps=eval_steps,
        **{name: nested(torch.stack(values, dim=1)) for name, values in curves.items()},
        cell_gain_init=by_run(gain_init_measured),
        cell_gain_final=by_run(_mean_cell_gain(model)),
        output_slope_init=by_run(slope_init),
        output_slope_final=by_run(_output_slope(model, held_out["val"])),
    )
