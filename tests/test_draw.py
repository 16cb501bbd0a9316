"""DRAW without attention (lnpaper.models.draw): each seed of a population is the model built alone;
the loss is -ELBO as torch.distributions computes it; the KL term is a KL; the noise is each
seed's own; bad input is named."""

import pytest
import torch
import torch.nn.functional as F

from lnpaper.models.draw import DRAW, glimpse_noise


def _images(seeds: int, count: int = 5, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return (torch.rand(seeds, count, 64, generator=generator) < 0.3).float()


@pytest.mark.parametrize("cell", ["lstm", "ln-c-lstm"])
def test_each_seed_is_the_model_built_alone(cell):
    population = DRAW(cell, seeds=(3, 7), hidden=6, latent=2, glimpses=3)
    alone = DRAW(cell, seeds=(7,), hidden=6, latent=2, glimpses=3)
    images = _images(2)
    noise = glimpse_noise((3, 7), "train", 5, (5, 3, 2))
    losses = population(images, noise)
    loss = alone(images[1:], glimpse_noise((7,), "train", 5, (5, 3, 2)))
    torch.testing.assert_close(losses[1:], loss, rtol=1e-6, atol=1e-6)
    losses.sum().backward()
    loss.sum().backward()
    for (name, stacked), (_, single) in zip(
        population.named_parameters(), alone.named_parameters(), strict=True
    ):
        torch.testing.assert_close(stacked.grad[1:], single.grad, rtol=1e-5, atol=1e-6, msg=name)


def test_the_noise_is_each_seeds_own_and_reproducible():
    pair = glimpse_noise((0, 1), "train", 4, (3, 2))
    torch.testing.assert_close(pair[1], glimpse_noise((1,), "train", 4, (3, 2))[0], rtol=0, atol=0)
    torch.testing.assert_close(pair, glimpse_noise((0, 1), "train", 4, (3, 2)), rtol=0, atol=0)
    assert not torch.equal(pair[0], pair[1])  # seeds differ
    assert not torch.equal(pair, glimpse_noise((0, 1), "train", 5, (3, 2)))  # updates differ
    assert not torch.equal(pair, glimpse_noise((0, 1), "eval", 4, (3, 2)))  # streams differ


def test_the_loss_is_minus_the_elbo_by_torch_distributions():
    """Two glimpses written out with the per-seed cells, the Normal posteriors' KL from
    torch.distributions.kl_divergence and the Bernoulli likelihood's log_prob."""
    from torch.distributions import Bernoulli, Normal, kl_divergence

    model = DRAW("ln-c-lstm", seeds=(2,), hidden=5, latent=3, glimpses=2)
    images, noise = _images(1, count=4, seed=1), glimpse_noise((2,), "eval", 0, (4, 2, 3))
    encoder, decoder = model.encoder.per_seed(0), model.decoder.per_seed(0)
    weights = {name: value[0] for name, value in model.named_parameters()}
    x = images[0]
    canvas = torch.zeros(4, 64)
    state_enc = state_dec = (torch.zeros(4, 5), torch.zeros(4, 5))
    kl = torch.zeros(4)
    for t in range(2):
        read = torch.cat([x, x - torch.sigmoid(canvas), state_dec[0]], dim=1)
        state_enc, _ = encoder(read, state_enc)
        q = F.linear(state_enc[0], weights["posterior.weight"], weights["posterior.bias"])
        posterior = Normal(q[:, :3], q[:, 3:].exp())
        kl = kl + kl_divergence(posterior, Normal(0.0, 1.0)).sum(1)
        state_dec, _ = decoder(posterior.mean + posterior.stddev * noise[0, :, t], state_dec)
        canvas = canvas + F.linear(state_dec[0], weights["write.weight"], weights["write.bias"])
    expected = (-Bernoulli(logits=canvas).log_prob(x).sum(1) + kl).mean()
    torch.testing.assert_close(model(images, noise), expected[None], rtol=1e-5, atol=1e-5)


def test_the_kl_is_at_least_zero_and_zero_where_q_is_the_prior():
    model = DRAW("lstm", seeds=(0, 1), hidden=6, latent=4, glimpses=5)
    images, noise = _images(2), glimpse_noise((0, 1), "eval", 0, (5, 5, 4))
    with torch.no_grad():
        _, kl = model.bound_terms(images, noise)
        assert kl.shape == (2, 5, 5) and torch.all(kl >= 0) and kl.max() > 1e-3
        model.posterior.p("weight").zero_()
        model.posterior.p("bias").zero_()  # mu = 0, log sigma = 0: q = N(0, I)
        reconstruction, kl = model.bound_terms(images, noise)
    assert torch.equal(kl, torch.zeros_like(kl))
    assert reconstruction.shape == (2, 5) and torch.all(reconstruction > 0)


def test_the_cell_states_are_kept_at_the_first_and_last_glimpse():
    model = DRAW("lstm", seeds=(0,), hidden=6, latent=2, glimpses=4)
    images, noise = _images(1), glimpse_noise((0,), "eval", 0, (5, 4, 2))
    cells = {}
    with torch.no_grad():
        model.bound_terms(images, noise, cells)
        encoder = model.encoder.per_seed(0)
        read = torch.cat([images[0], images[0] - 0.5, torch.zeros(5, 6)], dim=1)
        (_, c_1), _ = encoder(read, (torch.zeros(5, 6), torch.zeros(5, 6)))
    assert set(cells) == {"encoder", "decoder"} and len(cells["decoder"]) == 2
    torch.testing.assert_close(cells["encoder"][0][0], c_1)  # the canvas starts at 0


def test_seeds_differ_and_the_callers_random_state_is_kept():
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    model = DRAW("lstm", seeds=(0, 1), hidden=4, latent=2, glimpses=2)
    assert torch.rand(1) == before
    assert not torch.equal(model.write.p("weight")[0], model.write.p("weight")[1])


@pytest.mark.parametrize(
    ("images", "noise", "match"),
    [
        (torch.zeros(2, 3, 64), torch.zeros(2, 3, 2, 2), "seeds=1"),
        (torch.zeros(1, 3, 63), torch.zeros(1, 3, 2, 2), "64"),
        (torch.full((1, 3, 64), 0.5), torch.zeros(1, 3, 2, 2), "binary.*got 0.5"),
        (torch.zeros(1, 3, 64, dtype=torch.long), torch.zeros(1, 3, 2, 2), "float"),
        (torch.zeros(1, 3, 64), torch.zeros(1, 3, 3, 2), r"noise must be \(1, 3, 2, 2\)"),
    ],
)
def test_bad_input_is_named(images, noise, match):
    model = DRAW("lstm", seeds=(0,), hidden=4, latent=2, glimpses=2)
    with pytest.raises(ValueError, match=match):
        model(images, noise)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"cell": "ln-lstm"}, "cell"),
        ({"hidden": 0}, "hidden must be a positive int, got 0"),
        ({"latent": 2.5}, "latent must be a positive int, got 2.5"),
        ({"glimpses": -1}, "glimpses must be a positive int, got -1"),
        ({"seeds": ()}, "seed"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DRAW(**kwargs)


def test_bad_noise_arguments_are_named():
    with pytest.raises(ValueError, match="stream"):
        glimpse_noise((0,), "test", 0, (2,))
    with pytest.raises(ValueError, match="index"):
        glimpse_noise((0,), "train", -1, (2,))
    with pytest.raises(ValueError, match="seed"):
        glimpse_noise((-2,), "train", 0, (2,))


def test_draw_training_on_a_tiny_call():
    from lnpaper.chapters.ch03_layernorm_in_rnns.runs_draw import draw_training

    tiny = {"glimpses": 3, "steps": 4, "seeds": (0, 1), "eval_every": 2, "hidden": 8}
    result = draw_training.__wrapped__(cell="ln-c-lstm", **tiny)
    assert result.eval_steps == [0, 2, 4]
    for name in ("test_bound", "test_kl", "encoder_c_growth", "decoder_c_share"):
        values = getattr(result, name)
        assert len(values) == 2 and all(len(seed) == 3 for seed in values), name
    assert len(result.train_bound[0]) == 2 and result.diverged_at == [None, None]
    assert all(0 <= share <= 1 for seed in result.decoder_c_share for share in seed)
    assert result.test_bound[0][0] != result.test_bound[1][0]  # seeds differ
    assert result.test_bound[0][-1] < result.test_bound[0][0]  # four updates lower the bound
    kl_at_start = result.test_kl[0][0]
    assert 0 < kl_at_start < result.test_bound[0][0]
    again = draw_training.__wrapped__(cell="ln-c-lstm", **tiny)
    assert again == result  # the same numbers from the same call
    alone = draw_training.__wrapped__(cell="ln-c-lstm", **{**tiny, "seeds": (1,)})
    assert alone.test_bound[0] == pytest.approx(result.test_bound[1], rel=1e-5)
    lstm = draw_training.__wrapped__(cell="lstm", **tiny)
    assert lstm.test_bound[0][0] != result.test_bound[0][0]  # the cells differ from the start


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eval_every": 0}, "eval_every must be a positive int, got 0"),
        ({"eval_samples": 0}, "eval_samples must be a positive int, got 0"),
        ({"seeds": ()}, "seed"),
        ({"cell": "gru"}, "cell"),
    ],
)
def test_draw_training_refuses_bad_arguments(kwargs, match):
    from lnpaper.chapters.ch03_layernorm_in_rnns.runs_draw import draw_training

    with pytest.raises(ValueError, match=match):
        draw_training.__wrapped__(**{"glimpses": 2, "steps": 1, "hidden": 4, **kwargs})
