"""Seeds trained as one batch give what training each seed alone gives, and diverged seeds are
contained."""

import pytest
import torch

from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models.transformer import TransformerConfig, TransformerLM, next_token_loss
from lnpaper.train import train, train_language_models

SEEDS, STEPS, BATCH, LENGTH = (0, 1, 2), 6, 4, 8


def build(seed, dtype=torch.float32, **options):
    torch.manual_seed(seed)
    return TransformerLM(
        TransformerConfig(
            SyntheticLanguage().vocab_size,
            d_model=16,
            n_layers=2,
            n_heads=2,
            max_len=LENGTH,
            **options,
        )
    ).to(dtype)


def data_for(seeds):
    language = SyntheticLanguage()
    return torch.stack([language.sample(STEPS * BATCH, LENGTH + 1, seed=s) for s in seeds])


# In float64 the batched runs are the one-seed runs to roundoff: logits within 1e-12, weights
# within 1e-9 after six Adam steps (measured: 5e-15 and 6e-11). In float32 only the losses are
# compared: the keys' bias adds the same q.b to every logit of a query, which the softmax does not
# see, so its gradient is zero but for roundoff, float32 roundoff is far above Adam's eps, and Adam
# moves it by lr with the roundoff's sign, which a batched kernel and a single one need not share.
# Those weights then differ by up to 2 lr (measured: 0.017) while the losses agree to 1e-7.
@pytest.mark.parametrize("options", [{}, {"placement": "post"}, {"qk_norm": "layernorm"}])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batched_seeds_follow_the_one_seed_loop(options, dtype):
    data = data_for(SEEDS)
    held_out = SyntheticLanguage().sample(16, LENGTH + 1, seed=99)
    runs, stacked = train_language_models(
        [build(s, dtype, **options) for s in SEEDS],
        lambda step: data[:, step * BATCH : (step + 1) * BATCH],
        held_out, steps=STEPS, lr=1e-2, log_every=2,
    )  # fmt: skip
    rel = 1e-5 if dtype == torch.float32 else 1e-12
    for i, seed in enumerate(SEEDS):
        alone = build(seed, dtype, **options)
        history = train(alone, next_token_loss,
                        lambda step, i=i: data[i, step * BATCH : (step + 1) * BATCH],
                        steps=STEPS, lr=1e-2, log_every=2)  # fmt: skip
        assert runs.train_loss[i] == pytest.approx(history.train_loss, rel=rel)
        with torch.no_grad():
            assert runs.final_loss[i] == pytest.approx(next_token_loss(alone, held_out).item(),
                                                       rel=rel)  # fmt: skip
            if dtype == torch.float64:
                same = stacked.model(i, alone)
                inputs = held_out[:, :-1]
                torch.testing.assert_close(same(inputs), alone(inputs), rtol=0, atol=1e-12)
                for (name, mine), theirs in zip(
                    same.named_parameters(), alone.parameters(), strict=True
                ):
                    torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-9, msg=name)


def test_a_diverged_seed_is_recorded_and_the_others_go_on():
    data = data_for(SEEDS)
    models = [build(s) for s in SEEDS]
    with torch.no_grad():
        models[1].head.weight.fill_(float("nan"))
    held_out = SyntheticLanguage().sample(16, LENGTH + 1, seed=99)
    runs, _ = train_language_models(
        models, lambda step: data[:, step * BATCH : (step + 1) * BATCH], held_out,
        steps=STEPS, lr=1e-2, log_every=2,
    )  # fmt: skip
    assert runs.diverged_at == [None, 0, None]
    assert runs.final_loss[1] is None and runs.train_loss[1] == []
    assert all(v is not None for v in (runs.final_loss[0], runs.final_loss[2]))


def test_the_monitor_logs_per_seed_values_at_the_asked_steps():
    data = data_for(SEEDS)
    held_out = SyntheticLanguage().sample(16, LENGTH + 1, seed=99)
    runs, _ = train_language_models(
        [build(s) for s in SEEDS], lambda step: data[:, step * BATCH : (step + 1) * BATCH],
        held_out, steps=STEPS, lr=1e-2,
        monitor=lambda step, stacked: {"loss": stacked.losses(held_out, shared=True)},
        monitor_steps=(0, STEPS),
    )  # fmt: skip
    assert [row[0] for row in runs.logs["loss"]] == pytest.approx(runs.initial_loss)
    assert [row[1] for row in runs.logs["loss"]] == pytest.approx(runs.final_loss)


def test_weight_decay_needs_adamw():
    data = data_for(SEEDS[:1])
    with pytest.raises(ValueError, match="adamw"):
        train_language_models([build(0)], lambda step: data[:, :BATCH], data[0, :4],
                              steps=1, lr=1e-3, weight_decay=0.1)  # fmt: skip


def test_the_global_gradient_norm_is_logged_at_every_step():
    data = data_for(SEEDS)
    held_out = SyntheticLanguage().sample(16, LENGTH + 1, seed=99)
    runs, _ = train_language_models(
        [build(s) for s in SEEDS], lambda step: data[:, step * BATCH : (step + 1) * BATCH],
        held_out, steps=2, lr=1e-2, log_grad_norm=True,
    )  # fmt: skip
    alone = build(SEEDS[1])
    next_token_loss(alone, data[1, :BATCH]).backward()
    norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in alone.parameters())).item()
    assert len(runs.logs["grad_norm"][1]) == 2
    assert runs.logs["grad_norm"][1][0] == pytest.approx(norm, rel=1e-5)
