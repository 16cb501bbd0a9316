import pytest
import torch

from lnpaper.train import epoch_batches, train, warmup_lr


def regression_problem(seed=0):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 3, generator=generator)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    return x, y


def mse(model, batch):
    x, y = batch
    return ((model(x).squeeze(-1) - y) ** 2).mean()


def fit(steps=50, lr=0.05, **kwargs):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    x, y = regression_problem()
    batches = epoch_batches(len(x), 16, seed=0)
    history = train(
        model, mse, lambda step: (x[batches(step)], y[batches(step)]), steps=steps, lr=lr, **kwargs
    )
    return model, history


def test_warmup_is_linear_then_constant():
    assert [warmup_lr(s, 1.0, 4) for s in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert warmup_lr(0, 0.1, 0) == 0.1


def test_training_lowers_the_loss_and_is_repeatable():
    _, first = fit()
    _, second = fit()
    assert first.train_loss[-1] < 0.1 * first.train_loss[0]
    assert first == second
    assert first.diverged_at is None


def test_logging_windows_and_eval_schedule():
    calls = []

    def evaluate(model):
        calls.append(model.training)
        return {"weight_norm": model.weight.norm()}

    _, history = fit(steps=10, log_every=4, evaluate=evaluate, eval_every=4)
    assert history.steps == [4, 8, 10]
    assert history.eval_steps == [0, 4, 8, 10]
    assert calls == [False] * 4  # evaluation runs in eval mode
    assert all(isinstance(v, float) for v in history.eval_curve("weight_norm"))


def test_warmup_changes_the_first_steps():
    _, plain = fit(steps=5)
    _, warm = fit(steps=5, warmup_steps=100)
    assert plain.train_loss[0] == warm.train_loss[0]  # the same first batch and weights
    assert plain.train_loss[1:] != warm.train_loss[1:]


def test_a_non_finite_loss_stops_the_run_and_is_recorded():
    model = torch.nn.Linear(1, 1)
    scales = [1.0, 1.0, 1.0, float("inf"), 1.0]

    def loss(model, scale):
        return (model.weight.sum() - 1) ** 2 * scale

    history = train(model, loss, lambda step: scales[step], steps=5, lr=0.1)
    assert history.diverged_at == 3
    assert history.steps == [1, 2, 3]


def test_a_diverging_run_keeps_its_finite_steps_since_the_last_log():
    model = torch.nn.Linear(1, 1)
    losses = []

    def loss(model, step):
        value = (model.weight.sum() - 1) ** 2
        value = value * float("nan") if step == 15 else value  # the 16th call turns NaN
        losses.append(value.item())
        return value

    history = train(model, loss, lambda step: step, steps=30, lr=0.1, log_every=10)
    assert history.diverged_at == 15
    assert history.steps == [10, 15]  # steps 11-15 are a window of their own
    assert history.train_loss == pytest.approx([sum(losses[:10]) / 10, sum(losses[10:15]) / 5])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"steps": 0}, "steps"),
        ({"lr": 0.0}, "lr"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"log_every": 0}, "log_every"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    settings = {"steps": 5, "lr": 0.1} | kwargs
    with pytest.raises(ValueError, match=message):
        fit(**settings)


def test_epoch_batches_visit_every_example_once_per_epoch():
    batches = epoch_batches(10, 3, seed=1)
    first_epoch = torch.cat([batches(s) for s in range(3)])
    second_epoch = torch.cat([batches(s) for s in range(3, 6)])
    assert len(set(first_epoch.tolist())) == 9  # one example is left over, never a short batch
    assert not torch.equal(first_epoch, second_epoch)
    assert torch.equal(batches(4), epoch_batches(10, 3, seed=1)(4))
    assert not torch.equal(batches(0), epoch_batches(10, 3, seed=2)(0))


@pytest.mark.parametrize("batch_size", [0, 11])
def test_epoch_batches_reject_impossible_sizes(batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        epoch_batches(10, batch_size, seed=0)
