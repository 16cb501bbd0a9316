"""The MLP of the batch-size experiment (notebook 01, M5)."""

import re

import pytest
import torch
import torch.nn.functional as F

import lnpaper
from lnpaper.models.mlp import MLP, SeedBatchedMLP, UnbiasedBatchNorm
from lnpaper.train import epoch_batches, train


def kinds(model):
    return [type(layer).__name__ for layer in model.layers]


def test_layernorm_on_hidden_layers_only_as_in_the_paper():
    model = MLP((64, 32, 16, 10), norm="layernorm")
    assert kinds(model) == ["Linear", "LayerNorm", "ReLU", "Linear", "LayerNorm", "ReLU", "Linear"]
    linears = [layer for layer in model.layers if isinstance(layer, torch.nn.Linear)]
    assert [layer.bias is None for layer in linears] == [True, True, False]  # b replaces the bias
    assert model(torch.randn(3, 64)).shape == (3, 10)


def test_batchnorm_can_normalize_the_logits_too():
    model = MLP((64, 32, 10), norm="batchnorm", norm_logits=True)
    assert kinds(model) == ["Linear", "BatchNorm", "ReLU", "Linear", "BatchNorm"]
    assert all(isinstance(m, lnpaper.BatchNorm) for m in model.layers if "Norm" in type(m).__name__)


def test_no_norm_keeps_every_bias():
    model = MLP((8, 4, 2), norm="none")
    assert kinds(model) == ["Linear", "ReLU", "Linear"]
    assert all(layer.bias is not None for layer in model.layers if hasattr(layer, "bias"))


def test_layernorm_output_of_one_example_ignores_its_batch_but_batchnorm_does_not():
    torch.manual_seed(0)
    x = torch.randn(6, 16)
    ln, bn = MLP((16, 8, 3), norm="layernorm"), MLP((16, 8, 3), norm="batchnorm")
    torch.testing.assert_close(ln(x)[:1], ln(x[:1]))
    assert not torch.allclose(bn(x)[:2], bn(x[:2]))


def test_it_learns_the_digits():
    from lnpaper.data import digits

    lnpaper.setup(quiet=True)
    x, y = digits.load("train")
    model = MLP((64, 32, 32, 10), norm="layernorm")
    batches = epoch_batches(len(x), 64, seed=0)
    history = train(
        model,
        lambda model, index: F.cross_entropy(model(x[index]), y[index]),
        batches,
        steps=60,
        lr=3e-3,
        log_every=20,
    )
    test_x, test_y = digits.load("test")
    model.eval()
    accuracy = (model(test_x).argmax(1) == test_y).float().mean()
    assert history.train_loss[-1] < 0.3 * history.train_loss[0]
    assert accuracy > 0.85


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sizes": (64,)}, "sizes must be at least two positive ints"),
        ({"sizes": (64, 0, 10)}, "sizes must be at least two positive ints"),
        (
            {"norm": "groupnorm"},
            "norm must be one of ('batchnorm', 'unbiased batchnorm', 'layernorm'",
        ),
        ({"norm": "none", "norm_logits": True}, "norm_logits=True needs a normalizer"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        MLP(**kwargs)


def test_wrong_input_shape_raises():
    message = "MLP(64, 32, 10) expects input (N, 64), got shape (3, 8, 8)"
    with pytest.raises(ValueError, match=re.escape(message)):
        MLP((64, 32, 10))(torch.zeros(3, 8, 8))


def test_unbiased_batchnorm_divides_by_the_unbiased_batch_variance():
    torch.manual_seed(0)
    a = torch.randn(4, 6) * 3 + 1
    norm = UnbiasedBatchNorm(6)
    y = norm(a)
    expected = (a - a.mean(0)) / torch.sqrt(a.var(0, correction=1) + norm.eps)
    torch.testing.assert_close(y, expected)
    # the sd over the batch is sqrt(3/4) of BatchNorm's 1: training now matches inference
    torch.testing.assert_close(y.std(0, correction=0), torch.full((6,), 0.75**0.5), atol=1e-4,
                               rtol=0)  # fmt: skip
    reference = lnpaper.BatchNorm(6)
    reference(a)
    torch.testing.assert_close(norm.running_var, reference.running_var)  # the same estimates
    torch.testing.assert_close(norm.running_mean, reference.running_mean)
    norm.eval(), reference.eval()
    torch.testing.assert_close(norm(a), reference(a))  # and the same inference
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        norm.train()(a[:1])


SEED_NETS = [("layernorm", False), ("batchnorm", False), ("unbiased batchnorm", True),
             ("none", False)]  # fmt: skip


@pytest.fixture
def float64():
    """Build and run in float64, where another summation order moves a result by about 1e-15:
    in float32 a BatchNorm over a batch of 4 amplifies that roundoff to 2e-6 on some numeric
    paths (ATEN_CPU_CAPABILITY=avx2 with MKL_CBWR=COMPATIBLE), too near any bound a seed mixed
    with another would still pass."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


@pytest.mark.parametrize("norm, norm_logits", SEED_NETS)
def test_seed_batched_mlp_is_each_seeds_mlp_forward_and_backward(norm, norm_logits, float64):
    sizes, seeds = (64, 32, 24, 10), (3, 0, 7)
    batched = SeedBatchedMLP(sizes, norm, seeds, norm_logits=norm_logits)
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(len(seeds), 4, 64, generator=generator)  # each seed its own batch of 4
    y = torch.randint(0, 10, (len(seeds), 4), generator=generator)
    logits = batched(x)
    F.cross_entropy(logits.transpose(1, 2), y, reduction="none").mean(1).sum().backward()
    for s, seed in enumerate(seeds):
        torch.manual_seed(seed)
        single = MLP(sizes, norm, norm_logits)
        single_logits = single(x[s])
        torch.testing.assert_close(logits[s], single_logits, atol=1e-12, rtol=1e-12)
        F.cross_entropy(single_logits, y[s]).backward()
        linears = [layer for layer in single.layers if isinstance(layer, torch.nn.Linear)]
        for k, layer in zip(
            [k for k, kind in enumerate(batched.kinds) if kind == "linear"], linears, strict=True
        ):
            grad = getattr(batched, f"weight{k}").grad[s]
            # a seed's gradient mixed with another's would be off by far more than 1e-12
            torch.testing.assert_close(grad, layer.weight.grad.T, atol=1e-12, rtol=1e-12)
        norms = [layer for layer in single.layers if isinstance(layer, lnpaper.BatchNorm)]
        for k, layer in zip(
            [k for k, kind in enumerate(batched.kinds) if kind == "batchnorm"], norms, strict=True
        ):  # the running estimates moved with seed s's batch alone
            torch.testing.assert_close(getattr(batched, f"running_var{k}")[s], layer.running_var)
            torch.testing.assert_close(getattr(batched, f"weight{k}").grad[s, 0], layer.weight.grad,
                                       atol=1e-12, rtol=0)  # fmt: skip
        single.eval(), batched.eval()
        test = torch.randn(5, 64, generator=generator)
        torch.testing.assert_close(
            batched(test.expand(len(seeds), -1, -1))[s], single(test), atol=1e-12, rtol=0
        )
        batched.train()


@pytest.mark.parametrize("norm, norm_logits", SEED_NETS)
def test_seed_batched_training_is_each_seeds_training(norm, norm_logits):
    """In float64, so that the chaos of batch-4 training (float32 runs part after a few hundred
    steps, as two numeric paths do) leaves the per-step losses equal."""
    from lnpaper.chapters.ch01_why_batchnorm_fails.runs import classification_loss, train_seeds
    from lnpaper.data import digits

    sizes, seeds, steps = (64, 32, 32, 10), (0, 5), 120
    x, y = digits.load("train")
    x = x.double()
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        batched = SeedBatchedMLP(sizes, norm, seeds, norm_logits=norm_logits)
        losses = train_seeds(batched, x, y, 4, steps, 1e-3)
        for s, seed in enumerate(seeds):
            torch.manual_seed(seed)
            single = MLP(sizes, norm, norm_logits)
            history = train(single, classification_loss(x, y), epoch_batches(len(x), 4, seed),
                            steps=steps, lr=1e-3)  # fmt: skip
            torch.testing.assert_close(losses[:, s], torch.tensor(history.train_loss),
                                       atol=1e-9, rtol=0)  # fmt: skip
    finally:
        torch.set_default_dtype(default)


def test_population_statistics_are_each_layers_exact_statistics():
    sizes, seeds = (64, 16, 16, 10), (0, 1)
    batched = SeedBatchedMLP(sizes, "batchnorm", seeds, norm_logits=True)
    x = torch.randn(2, 50, 64, generator=torch.Generator().manual_seed(2))
    statistics = batched.population_statistics(x)
    assert len(statistics) == 3 and batched.training  # three BatchNorm layers; mode kept
    for s, seed in enumerate(seeds):  # by hand: each layer normalized with its own exact statistics
        torch.manual_seed(seed)
        single = MLP(sizes, "batchnorm", norm_logits=True).eval()
        h, k = x[s], 0
        for layer in single.layers:
            if isinstance(layer, lnpaper.BatchNorm):
                mean, var = statistics[k]
                torch.testing.assert_close(mean[s], h.mean(0))
                torch.testing.assert_close(var[s], h.var(0, correction=0))
                layer.running_mean.copy_(h.mean(0)), layer.running_var.copy_(h.var(0, correction=0))
                k += 1
            h = layer(h)
        batched.eval()
        torch.testing.assert_close(batched(x, statistics)[s], h, atol=1e-6, rtol=0)
        batched.train()


def test_seed_batched_mlp_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one seed"):
        SeedBatchedMLP((8, 4, 2), "layernorm", ())
    with pytest.raises(ValueError, match=re.escape("expects input (2, N, 8), got shape (3, 4, 8)")):
        SeedBatchedMLP((8, 4, 2), "layernorm", (0, 1))(torch.zeros(3, 4, 8))
    with pytest.raises(ValueError, match="batches of 2 or more"):
        SeedBatchedMLP((8, 4, 2), "batchnorm", (0, 1))(torch.zeros(2, 1, 8))
