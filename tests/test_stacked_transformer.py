"""The fused language-model population computes, seed by seed, what each seed's own TransformerLM
computes alone: logits, losses, gradients and a few optimizer steps, for every configuration the
experiments build.

Bounds, float32 (machine epsilon 1.2e-7), each seed against its own model run alone:
- logits: max |difference| <= 1e-5 x max |logit|. A logit is a sum of d-term dot products
  through a few blocks, reordered by the batched kernels (and LayerNorm's statistics come from
  torch's kernel, not the one-run model's two-pass formula); measured at most 1.4e-6.
- losses: relative 1e-5.
- gradients, per parameter tensor: max |difference| <= 1e-4 x max |its gradient| + 1e-6 x G,
  G the seed's largest gradient entry. A gradient sums B x T terms per entry and flows back through
  every block; some are 0 in exact arithmetic and pure roundoff here (the key bias: softmax
  ignores a shift shared by a row of logits), which only the second term can bound. Measured:
  at most 1.4e-5 x G (pRMSNorm, whose statistic is 4 units' squares), 2.5e-6 x G otherwise.
- training: per-step losses within relative 1e-4 over five Adam steps (Adam divides by the
  gradient's root mean square, which amplifies the roundoff of near-zero gradients early on).
Float64 (the zero-mean rewrites' exactness runs): the same with 1e-12 for 1e-5 and 1e-10 for 1e-4.
Models are moved off their init (every parameter plus seeded noise) so that no gate, gain or
omega sits at a value that would hide a wrong formula.
"""

import pytest
import torch

from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models.fused_transformer import FusedLanguageModels, fused_unsupported
from lnpaper.models.transformer import (
    TransformerConfig,
    TransformerLM,
    admin_profile,
    next_token_loss,
)
from lnpaper.models.zero_mean import keep_writers_centered, zero_mean_rmsnorm
from lnpaper.train import PerRunAdam, StackedModels, train_population
from lnpaper.train.population import stacked_language_models

VOCAB = SyntheticLanguage().vocab_size
SEEDS, BATCH, LENGTH = (0, 1, 2), 4, 8

# Every configuration the experiments construct (notebooks 05-07), as TransformerLM options, on
# a small model (d 16, two heads, two blocks unless the scheme needs more).
CONFIGS = {
    "pre": {},
    "post": {"placement": "post"},
    "peri": {"placement": "peri"},
    "reordered": {"placement": "reordered"},
    "none": {"placement": "none"},
    "none, tfixup": {"placement": "none", "init": "tfixup"},
    "rezero": {"placement": "none", "rezero": True},
    "mix": {"placement": "mix", "n_layers": 4},
    "identity": {"norm": "identity"},
    "rmsnorm": {"norm": "rmsnorm"},
    # the experiments' width: at d 16 the statistic would be one unit's square, near 0 at times,
    # where roundoff in that unit is amplified without bound (alone as well as fused)
    "prmsnorm": {"norm": "prmsnorm", "d_model": 64},
    "dyt": {"norm": "dyt"},
    "dyt, alpha 0.2, learned scale": {
        "norm": "dyt",
        "alpha_init": 0.2,
        "learned_embed_scale": True,
    },  # fmt: skip
    "derf": {"norm": "derf"},
    "derf, learned scale": {"norm": "derf", "learned_embed_scale": True},
    "layernorm_simple": {"norm": "layernorm_simple"},
    "detach_mean": {"norm": "detach_mean"},
    "detach_std": {"norm": "detach_std"},
    "detach_both": {"norm": "detach_both"},
    "qk layernorm": {"qk_norm": "layernorm"},
    "qk rmsnorm": {"qk_norm": "rmsnorm"},
    "qk l2": {"qk_norm": "l2"},
    "soft-cap 50": {"attn_logit_cap": 50.0},
    "tight caps": {"attn_logit_cap": 0.5, "final_logit_cap": 1.0},
    "olmo2": {"placement": "reordered", "qk_norm": "layernorm", "qk_norm_span": "full"},
    "gemma, g": {
        "placement": "peri",
        "norm": "rmsnorm",
        "scale_embedding": True,
        "attn_logit_cap": 50.0,
        "final_logit_cap": 30.0,
    },  # fmt: skip
    "gemma, 1 + w": {
        "placement": "peri",
        "norm": "rmsnorm",
        "scale_embedding": True,
        "gain_offset": True,
        "attn_logit_cap": 50.0,
        "final_logit_cap": 30.0,
    },  # fmt: skip
    "peri-ln, embed_norm": {"placement": "peri", "embed_norm": True},
    "deepnorm": {"placement": "post", "deepnorm": True},
    "deepnorm alpha": {"placement": "post", "deepnorm": True, "deepnorm_parts": "alpha"},
    "deepnorm beta": {"placement": "post", "deepnorm": True, "deepnorm_parts": "beta"},
    "admin": {"placement": "post", "admin": True},
    "layer_scaling": {"layer_scaling": True, "n_layers": 4},
}


def perturbed(model: TransformerLM, seed: int) -> TransformerLM:
    """`model` with every parameter moved by seeded noise of size 0.2, off its init."""
    generator = torch.Generator().manual_seed(1000 + seed)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.2 * torch.randn(parameter.shape, generator=generator))
    return model


def build(seed: int, options: dict) -> TransformerLM:
    options = dict(options)
    n_layers, d_model = options.pop("n_layers", 2), options.pop("d_model", 16)
    torch.manual_seed(seed)
    model = TransformerLM(
        TransformerConfig(
            VOCAB, d_model=d_model, n_layers=n_layers, n_heads=2, max_len=LENGTH, **options
        )
    )
    if options.get("admin"):
        admin_profile(model, SyntheticLanguage().sample(BATCH, LENGTH, seed=50 + seed))
    return perturbed(model, seed)


def token_batches(shared: bool = False) -> torch.Tensor:
    """S x B x T+1 sequences, seed s's its own (or one B x T+1 batch for every seed)."""
    language = SyntheticLanguage()
    if shared:
        return language.sample(BATCH, LENGTH + 1, seed=99)
    return torch.stack([language.sample(BATCH, LENGTH + 1, seed=s) for s in SEEDS])


def float_bounds(dtype):
    """(value bound, gradient bound): the module docstring's bounds for this precision."""
    return (1e-5, 1e-4) if dtype == torch.float32 else (1e-12, 1e-10)


def assert_seed_equals_alone(fused, models, tokens, shared: bool):
    """Logits, losses and every gradient of each seed against its own model run alone; returns
    the largest relative differences seen (logits, losses, gradients)."""
    values, gradients = float_bounds(next(models[0].parameters()).dtype)
    logits = fused.logits(tokens[..., :-1], shared=shared)
    losses = fused.losses(tokens, shared=shared)
    names = list(fused.params)
    fused_grads = torch.autograd.grad(losses.sum(), [fused.params[n] for n in names])
    worst = [0.0, 0.0, 0.0]
    for i, model in enumerate(models):
        own = tokens if shared else tokens[i]
        alone_logits = model(own[:, :-1])
        logit_diff = (logits[i] - alone_logits).abs().max() / alone_logits.abs().max()
        assert logit_diff <= values, f"seed {i}: logits differ by {logit_diff:.2e} (relative)"
        loss = next_token_loss(model, own)
        loss_diff = abs(losses[i].item() - loss.item()) / abs(loss.item())
        assert loss_diff <= values, f"seed {i}: loss {losses[i]:.6f} alone {loss:.6f}"
        parameters = dict(model.named_parameters())
        assert sorted(parameters) == sorted(names)
        alone_grads = torch.autograd.grad(loss, [parameters[n] for n in names])
        largest = max(g.abs().max() for g in alone_grads)
        for name, mine, theirs in zip(names, fused_grads, alone_grads, strict=True):
            diff = (mine[i] - theirs).abs().max()
            bound = gradients * theirs.abs().max() + 1e-2 * gradients * largest
            assert diff <= bound, f"seed {i}, {name}: gradient differs by {diff:.2e} > {bound:.2e}"
            worst[2] = max(worst[2], (diff / largest).item())
        worst[0] = max(worst[0], logit_diff.item())
        worst[1] = max(worst[1], loss_diff)
    return worst


@pytest.mark.parametrize("name", CONFIGS)
def test_each_seed_of_the_fused_population_computes_its_own_model(name):
    models = [build(s, CONFIGS[name]) for s in SEEDS]
    assert fused_unsupported(models) is None
    assert_seed_equals_alone(FusedLanguageModels(models), models, token_batches(), shared=False)


@pytest.mark.parametrize("name", ["pre", "post", "qk l2", "gemma, 1 + w", "dyt"])
def test_a_batch_shared_by_every_seed_is_read_by_each(name):
    models = [build(s, CONFIGS[name]) for s in SEEDS]
    fused = FusedLanguageModels(models)
    assert_seed_equals_alone(fused, models, token_batches(shared=True), shared=True)
    tokens = token_batches(shared=True)
    expanded = tokens.expand(len(SEEDS), *tokens.shape)
    assert torch.equal(fused.losses(tokens, shared=True), fused.losses(expanded))


def test_the_zero_mean_rewrites_fuse_like_their_one_run_models():
    """E1's rewrite in float32, and E1c's in float64: RMSNorm with LayerNorm's eps, norms that
    keep their bias, and writers stored free and used centered (a parametrization)."""
    layernorm = [build(s, {}) for s in SEEDS]
    rewritten = [zero_mean_rmsnorm(m) for m in layernorm]
    assert_seed_equals_alone(FusedLanguageModels(rewritten), rewritten, token_batches(), False)
    doubled = [zero_mean_rmsnorm(m.double(), fold_biases=False) for m in layernorm]
    kept = [perturbed(m, i) for i, m in enumerate(keep_writers_centered(doubled))]
    assert any(".parametrizations." in name for name, _ in kept[0].named_parameters())
    assert_seed_equals_alone(FusedLanguageModels(kept), kept, token_batches(), False)


def test_the_population_has_the_interface_of_the_vmapped_one():
    models = [build(s, CONFIGS["gemma, 1 + w"]) for s in SEEDS]
    fused, vmapped = FusedLanguageModels(models), StackedModels(models)
    assert fused.size == vmapped.size == len(SEEDS)
    assert (
        list(fused.params) == list(vmapped.params)
        and fused.buffers.keys() == vmapped.buffers.keys()
    )
    for name, value in fused.params.items():
        assert value.is_leaf and value.requires_grad
        assert torch.equal(value, vmapped.params[name])
    for i, model in enumerate(models):
        copy = fused.model(i, like=models[0])
        assert all(torch.equal(a, b) for a, b in zip(copy.state_dict().values(),
                                                      model.state_dict().values(), strict=True))  # fmt: skip
    probe = token_batches(shared=True)
    assert torch.allclose(fused.logits(probe[:, :-1], shared=True),
                          vmapped.logits(probe[:, :-1], shared=True), rtol=0, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("name", ["pre", "post", "layer_scaling", "qk layernorm"])
def test_streams_and_attention_logits_are_each_seeds_own(name):
    models = [build(s, CONFIGS[name]) for s in SEEDS]
    fused = FusedLanguageModels(models)
    probe = token_batches(shared=True)[:, :-1]
    streams = fused.streams(probe, shared=True)
    layers = models[0].n_layers
    assert len(streams) == layers + 1
    for i, model in enumerate(models):
        with torch.no_grad():
            x = model.embed(probe)
            for layer in range(layers + 1):
                scale = x.abs().max()
                assert (streams[layer][i] - x).abs().max() <= 1e-5 * scale, f"seed {i}, x_{layer}"
                if layer < layers:
                    z = model.attention_logits(probe, layer=layer)
                    mine = fused.attention_logits(probe, layer=layer, shared=True)[i]
                    assert (mine - z).abs().max() <= 1e-5 * z.abs().max(), f"seed {i}, z {layer}"
                    x = model.blocks[layer](x)
    with pytest.raises(ValueError, match="layer"):
        fused.attention_logits(probe, layer=layers, shared=True)


@pytest.mark.parametrize("name", ["pre", "post", "gemma, 1 + w"])
def test_fused_training_tracks_each_seed_trained_alone(name):
    """Five steps with a learning rate per run (PerRunAdam, the population's Adam) against each
    seed's own torch Adam at that rate, on each seed's own batches."""
    steps, rates = 5, [1e-2, 3e-3, 1e-3]
    models = [build(s, CONFIGS[name]) for s in SEEDS]
    alone = [build(s, CONFIGS[name]) for s in SEEDS]
    language = SyntheticLanguage()
    data = torch.stack([language.sample(steps * BATCH, LENGTH + 1, seed=s) for s in SEEDS])
    fused = FusedLanguageModels(models)
    optimizer = PerRunAdam(list(fused.params.values()), rates)
    runs = train_population(
        fused.size, list(fused.params.values()),
        lambda step: (fused.losses(data[:, step * BATCH : (step + 1) * BATCH]), None),
        optimizer, steps=steps, keep_losses=True,
    )  # fmt: skip
    for i, (model, rate) in enumerate(zip(alone, rates, strict=True)):
        adam = torch.optim.Adam(model.parameters(), lr=rate)
        for step in range(steps):
            adam.zero_grad()
            loss = next_token_loss(model, data[i, step * BATCH : (step + 1) * BATCH])
            loss.backward()
            adam.step()
            fused_loss = runs.losses[step][i].item()
            assert fused_loss == pytest.approx(loss.item(), rel=1e-4), f"seed {i}, step {step}"
        # compared by what they compute: Adam divides each step by the gradient's RMS, so an
        # entry whose gradient is about 0 (the key biases, which softmax ignores) moves by
        # roundoff-driven amounts near lr alone as well as together, changing no output
        trained, probe = fused.model(i, like=model), data[i, :, :-1]
        with torch.no_grad():
            logits, alone_logits = trained(probe), model(probe)
        assert (logits - alone_logits).abs().max() <= 1e-4 * alone_logits.abs().max()


class Twice(torch.nn.Module):
    def forward(self, x):
        return 2 * x


def test_the_factory_fuses_what_it_can_and_falls_back_to_vmap():
    models = [build(s, {}) for s in SEEDS]
    assert isinstance(stacked_language_models(models), FusedLanguageModels)
    assert isinstance(stacked_language_models(models, fused=False), StackedModels)
    unknown = [build(s, {}) for s in SEEDS]
    for model in unknown:
        model.final_norm = Twice()  # a module the fused forward does not know; vmap runs it
    assert isinstance(stacked_language_models(unknown), StackedModels)
    with pytest.raises(ValueError, match="fused"):
        stacked_language_models(models, fused="yes")


def test_what_cannot_be_fused_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="at least one"):
        FusedLanguageModels([])
    with pytest.raises(ValueError, match="TransformerLM"):
        FusedLanguageModels([torch.nn.Linear(2, 2)])
    odd = build(0, {})
    odd.final_norm = Twice()
    with pytest.raises(ValueError, match="final_norm.*Twice"):
        FusedLanguageModels([odd])
    with pytest.raises(ValueError, match="placement"):
        FusedLanguageModels([build(0, {}), build(1, {"placement": "post"})])
    with pytest.raises(ValueError, match="eps"):
        other = build(1, {})
        other.final_norm.eps = 1e-3
        FusedLanguageModels([build(0, {}), other])
    with pytest.raises(ValueError, match="float32 or all float64"):
        FusedLanguageModels([build(0, {}).half()])


def test_bad_tokens_are_refused_naming_what_is_wrong():
    fused = FusedLanguageModels([build(s, {}) for s in SEEDS])
    tokens = token_batches()
    with pytest.raises(ValueError, match="int64"):
        fused.logits(tokens.float())
    with pytest.raises(ValueError, match="shape"):
        fused.logits(tokens[:2])
    with pytest.raises(ValueError, match="shape"):
        fused.logits(tokens, shared=True)
    with pytest.raises(ValueError, match="sequence length"):
        fused.logits(torch.zeros(len(SEEDS), 2, LENGTH + 1, dtype=torch.int64))
    with pytest.raises(ValueError, match="token ids"):
        fused.logits(tokens[..., :-1] + VOCAB)
    with pytest.raises(ValueError, match="shared"):
        fused.logits(tokens, shared=1)


def test_the_benchmark_times_the_fused_population_on_each_runs_work():
    """`python -m lnpaper bench` divides the fused population's time by its runs: fair only if
    its step does each run's matrix-product work, within the 5% its written-out attention adds
    (measured: 4.734e9 against 10 x 4.546e8 at S = 10)."""
    from lnpaper import bench

    one, population = bench._fused_lm_steps(3)
    alone = bench._flops(one)
    assert alone > 0 and 3 * alone <= bench._flops(population) <= 1.05 * 3 * alone
    table = {"language model, vmap": (20.0, 12.0, 20.0, 36.0),
             "language model, fused": (20.0, 10.0, 20.0, 44.0)}  # fmt: skip
    text = bench.format_populations(table, matmul=88.0)
    assert (
        "88.0 GFLOP/s" in text and "50%" in text and "fused / vmap time per run-step: 0.83" in text
    )


# ---- the guard: the fused forward computes every field of TransformerConfig, or refuses it ------


def test_every_config_field_is_one_the_fused_forward_computes():
    # A field added to TransformerConfig fails here until the fused forward computes it and
    # COMPUTED_FIELDS lists it; until then fused_unsupported refuses a model that sets it.
    from dataclasses import fields

    from lnpaper.models.fused_transformer import COMPUTED_FIELDS

    assert {field.name for field in fields(TransformerConfig)} == COMPUTED_FIELDS


def test_a_config_field_the_fused_forward_does_not_compute_sends_the_models_to_vmap():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class WithANewOption(TransformerConfig):
        new_option: bool = False

    def models(new_option):
        config = WithANewOption(VOCAB, d_model=16, n_layers=2, n_heads=2, max_len=LENGTH,
                                new_option=new_option)  # fmt: skip
        return [TransformerLM(config) for _ in SEEDS]

    assert "new_option" in fused_unsupported(models(True))
    assert isinstance(stacked_language_models(models(True)), StackedModels)
    with pytest.raises(ValueError, match="new_option"):
        FusedLanguageModels(models(True))
    assert fused_unsupported(models(False)) is None  # at its default it changes nothing
