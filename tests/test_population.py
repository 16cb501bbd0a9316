"""`train_population`, the one loop behind every multi-run experiment, against `train`, the one-run
loop: S stacked runs, each at its own learning rate, take the steps each would take alone.

The bound: float32, the same operations on each run's slice; only the order of a sum over the
stacked axis could differ, so the runs agree to a few float32 ulps (rtol 1e-5 after 30 steps)."""

import pytest
import torch

from lnpaper.train import PerRunAdam, SeedRuns, train, train_population

FEATURES, EXAMPLES, BATCH, STEPS = 5, 64, 8, 30
LRS = (1e-3, 1e-2, 1e-1)


def data(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(EXAMPLES, FEATURES, generator=generator)
    y = x @ torch.randn(FEATURES, generator=generator) + 0.1 * torch.randn(
        EXAMPLES, generator=generator
    )
    return x, y


def batch_of(step: int, run: int) -> torch.Tensor:
    """Run `run`'s minibatch indices at `step`: its own order, as a seed would give."""
    return torch.randperm(EXAMPLES, generator=torch.Generator().manual_seed(1000 * run + step))[
        :BATCH
    ]


def initial_weights(run: int) -> torch.Tensor:
    return torch.randn(FEATURES, generator=torch.Generator().manual_seed(run))


def one_run(run: int, lr: float) -> tuple[torch.Tensor, list[float]]:
    x, y = data()
    model = torch.nn.Linear(FEATURES, 1, bias=False)
    with torch.no_grad():
        model.weight.copy_(initial_weights(run)[None])

    def loss_fn(m, index):
        return (m(x[index]).squeeze(1) - y[index]).pow(2).mean()

    history = train(
        model, loss_fn, lambda step: batch_of(step, run), steps=STEPS, lr=lr, log_every=1
    )
    return model.weight.detach()[0], history.train_loss


def population(lrs, keep_losses=False) -> tuple[torch.Tensor, SeedRuns]:
    x, y = data()
    weights = torch.stack([initial_weights(run) for run in range(len(lrs))]).requires_grad_()
    optimizer = PerRunAdam([weights], lrs)

    def step_losses(step):
        index = torch.stack([batch_of(step, run) for run in range(len(lrs))])  # (S, B)
        predictions = torch.einsum("sbf,sf->sb", x[index], weights)
        per_run = (predictions - y[index]).pow(2).mean(1)
        return per_run, None

    runs = train_population(
        len(lrs), [weights], step_losses, optimizer, steps=STEPS, keep_losses=keep_losses
    )
    return weights.detach(), runs


def test_each_run_of_a_population_takes_the_steps_it_would_take_alone():
    weights, runs = population(LRS)
    for run, lr in enumerate(LRS):
        alone, losses = one_run(run, lr)
        torch.testing.assert_close(weights[run], alone, rtol=1e-5, atol=1e-7)
        assert runs.train_loss[run] == pytest.approx(losses, rel=1e-5)
    assert runs.diverged_at == [None] * len(LRS)


def test_a_run_that_diverges_is_frozen_and_the_others_go_on():
    weights, runs = population((1e-2, 1e30, 1e-2), keep_losses=True)
    x, _ = data()
    assert runs.diverged_at[1] is not None and runs.diverged_at[0] is runs.diverged_at[2] is None
    assert len(runs.train_loss[1]) == runs.diverged_at[1] < len(runs.train_loss[0]) == STEPS
    torch.testing.assert_close(weights[0], one_run(0, 1e-2)[0], rtol=1e-5, atol=1e-7)
    assert len(runs.losses) == STEPS and runs.losses[0].shape == (3,)


def test_every_run_diverging_stops_the_loop():
    _, runs = population((1e30, 1e30))
    assert all(step is not None for step in runs.diverged_at)
    assert len(runs.steps) < STEPS


def test_evaluation_and_monitoring_come_at_the_steps_asked():
    weights = torch.zeros(2, FEATURES, requires_grad=True)
    seen, monitored = [], []

    def step_losses(step):
        return weights.pow(2).sum(1) + 1.0, None

    def monitor(step):
        monitored.append(step)
        return {"norm": weights.norm(dim=1)}

    runs = train_population(
        2, [weights], step_losses, torch.optim.Adam([weights], lr=1e-2), steps=7,
        evaluate=seen.append, eval_every=3, monitor=monitor, monitor_steps=(0, 5, 7),
        log_every=2, log_grad_norm=True,
    )  # fmt: skip
    assert seen == [0, 3, 6, 7] and monitored == [0, 5, 7]
    assert runs.steps == [2, 4, 6, 7] and len(runs.logs["norm"][0]) == 3
    assert len(runs.logs["grad_norm"][1]) == 7


@pytest.mark.parametrize(("steps", "log_every"), [(0, 1), (5, 0)])
def test_a_loop_with_nothing_to_do_is_refused(steps, log_every):
    weights = torch.zeros(1, 2, requires_grad=True)
    with pytest.raises(ValueError, match="steps|log_every"):
        train_population(
            1, [weights], lambda step: (weights.sum(1), None), torch.optim.Adam([weights]),
            steps=steps, log_every=log_every,
        )  # fmt: skip


@pytest.mark.parametrize(
    "make", ["_lm_steps", "_fused_lm_steps", "_rnn_steps", "_mlp_steps", "_cnn_steps"]
)
def test_the_benchmark_times_the_same_work_alone_and_together(make):
    """`python -m lnpaper bench` divides a population's time by its runs: that is fair only if a
    population step does each run's work (matrix-product and convolution FLOPs). Measured: the
    LSTM, MLP and CNN populations exactly 3x, the language model 4% more (1.420e9 against
    3 x 4.546e8: the batched backward); a population doing less, or much more, would make the
    ratio meaningless. The CNN's grouped convolutions are counted as `lnpaper work` counts them
    (torch's counter ignores a convolution's groups in its backward)."""
    from lnpaper import bench
    from lnpaper.companion.work import Counter

    def flops(step) -> int:
        with Counter() as counter:
            step()
        return counter.total()

    one, population = getattr(bench, make)(3)
    alone = flops(one)
    assert alone > 0 and 3 * alone <= flops(population) <= 1.05 * 3 * alone
