"""Experiments of notebook 03, longer than training: the recurrent models trained on streams of
one length and tested on longer ones, behind claims R1 (its lengths), M4f and M4g.

- `longer_sequences` (R1, M4): trained on one length, tested on twice that.
- `stationary_statistics` (M4f, M4g): a BN-LSTM's statistics averaged over time, and its T_max
  rule, on a stationary input.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from lnpaper.chapters.ch03_layernorm_in_rnns.runs import RECURRENT_MODELS, _average_over_time
from lnpaper.companion.record import experiment
from lnpaper.data import digits
from lnpaper.models.recurrent import SequenceClassifier, make_cell
from lnpaper.models.seed_batched_classifier import SeedBatchedClassifier
from lnpaper.train import PerRunAdam, epoch_batches, train_population


@dataclass
class LongerSequencesResult:
    train_length: int  # T_max: the length of every training sequence
    test_length: int
    delay: int  # the task: name the digit shown `delay` steps earlier
    hidden: int
    steps: int
    seeds: list
    accuracy: dict  # model -> [seed][per test step t = delay .. test_length - 1]


def _train_on_streams(
    name: str, seeds: list, train_length, delay, hidden, steps, batch_size, lr
) -> SeedBatchedClassifier:
    """One model of RECURRENT_MODELS per seed, trained together on streams of random digits
    `train_length` steps long (at every step: name the digit shown `delay` steps earlier), Adam at
    `lr`; returned in eval mode. The training streams are the same for every call."""
    x, y = digits.digit_stream("train", count=4096, length=train_length, seed=0)
    kind, gain_init = RECURRENT_MODELS[name]
    per_seed = []
    for seed in seeds:
        torch.manual_seed(seed)
        cell = make_cell(kind, digits.PIXELS, hidden, max_steps=train_length, gain_init=gain_init)
        per_seed.append(SequenceClassifier(cell, digits.CLASSES, every_step=True))
    model = SeedBatchedClassifier(per_seed)  # the seeds as one population, each on its batches
    optimizer = PerRunAdam(model.parameters(), [lr] * len(seeds))
    batches = [epoch_batches(len(x), batch_size, seed) for seed in seeds]

    def step_losses(step: int):
        index = torch.stack([batch(step) for batch in batches])  # (seeds, batch_size)
        logits = model(x[index])[:, :, delay:]  # at step t, name the digit of step t - delay
        targets = y[index][:, :, :-delay]
        # the sum of the per-seed mean losses: each seed gets its own gradient
        loss = F.cross_entropy(logits.flatten(0, 2), targets.flatten(), reduction="sum")
        return None, loss / targets[0].numel()

    train_population(len(seeds), optimizer.params, step_losses, optimizer, steps=steps)
    return model.eval()


@experiment
def longer_sequences(
    *,
    models=("LN-LSTM", "BN-LSTM"),
    train_length: int = 8,
    test_length: int = 16,
    delay: int = 2,
    hidden: int = 64,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 1e-2,
    seeds=tuple(range(5)),
) -> LongerSequencesResult:
    """Train on streams of random digits `train_length` steps long (notebook 01's task: at every
    step name the digit shown `delay` steps earlier), test on streams `test_length` long. The
    BN-LSTM normalizes steps >= T_max with the statistics of step T_max - 1 (Cooijmans et al.'s
    rule); the LN-LSTM and the LSTM have nothing to extend."""
    test_x, test_y = digits.digit_stream("test", count=1024, length=test_length, seed=1)
    seeds = [int(s) for s in seeds]
    accuracy = {}
    for name in models:
        model = _train_on_streams(name, seeds, train_length, delay, hidden, steps, batch_size, lr)
        with torch.no_grad():
            predictions = model(test_x.expand(len(seeds), *test_x.shape)).argmax(-1)
        correct = predictions[:, :, delay:] == test_y[:, :-delay]
        accuracy[name] = correct.float().mean(1).tolist()  # [seed][t]
    return LongerSequencesResult(
        train_length=train_length,
        test_length=test_length,
        delay=delay,
        hidden=hidden,
        steps=steps,
        seeds=seeds,
        accuracy=accuracy,
    )


@dataclass
class StationaryStatisticsResult:
    train_length: int  # T_max
    test_length: int
    delay: int
    hidden: int
    steps: int
    seeds: list
    loss: dict  # statistics -> [seed][test step t = delay .. test_length - 1], test NLL
    accuracy: dict  # the same, test accuracy
    drift: list  # [seed][t = 1 .. T_max - 1]: how far step t's statistics lie from step t - 1's


STATISTICS = ("per step", "averaged")  # BN-LSTM population statistics at inference


def _statistic_drift(model: SeedBatchedClassifier) -> list:
    """[seed][t]: the root mean square over every BN-LSTM unit of the change of its running mean
    from step t - 1 to t, in units of its running standard deviation at t (0 once the statistics
    are stationary)."""
    changes = []
    for name in ("norm_hh", "norm_ih", "norm_c"):
        mean = model.p(f"cell.{name}.running_mean")  # (T_max, S * C)
        sd = model.p(f"cell.{name}.running_var").sqrt().clamp(min=1e-12)
        change = ((mean[1:] - mean[:-1]) / sd[1:]).view(len(mean) - 1, model.seeds, -1)
        changes.append(change)
    return torch.cat(changes, dim=2).pow(2).mean(2).sqrt().T.tolist()


@experiment
def stationary_statistics(
    *,
    train_length: int = 8,
    test_length: int = 32,
    delay: int = 2,
    hidden: int = 64,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 1e-2,
    seeds=tuple(range(10)),
) -> StationaryStatisticsResult:
    """M4f, M4g: Cooijmans et al.'s two statements about a BN-LSTM's statistics, on an input whose
    distribution is the same at every step (longer_sequences' digit streams), so that whatever
    changes along the sequence is the network's own transient. The BN-LSTM (gains 0.1) is trained
    on streams T_max = `train_length` long and tested on streams `test_length` long: with its
    per-step population statistics (steps >= T_max use step T_max - 1's, their rule), and with
    those statistics averaged over the T_max steps for every step. Training is the same for both:
    a BatchNorm shared over time still normalizes each step by its own batch statistics, and what
    is shared is the estimate used at inference."""
    test_x, test_y = digits.digit_stream("test", count=1024, length=test_length, seed=1)
    seeds = [int(s) for s in seeds]
    model = _train_on_streams("BN-LSTM", seeds, train_length, delay, hidden, steps, batch_size, lr)
    drift = _statistic_drift(model)
    loss, accuracy = {}, {}
    targets = test_y[:, :-delay].expand(len(seeds), -1, -1)
    for statistics_name in STATISTICS:
        if statistics_name == "averaged":
            _average_over_time(model)
        with torch.no_grad():
            logits = model(test_x.expand(len(seeds), *test_x.shape))[:, :, delay:]
            nll = F.cross_entropy(logits.transpose(1, 3), targets.transpose(1, 2),
                                  reduction="none")  # fmt: skip
            right = logits.argmax(-1) == targets
        loss[statistics_name] = nll.mean(2).tolist()  # (S, T - delay): over the test streams
        accuracy[statistics_name] = right.float().mean(1).tolist()
    return StationaryStatisticsResult(
        train_length=train_length,
        test_length=test_length,
        delay=delay,
        hidden=hidden,
        steps=steps,
        seeds=seeds,
        loss=loss,
        accuracy=accuracy,
        drift=drift,
    )
