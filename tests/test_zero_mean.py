"""The zero-mean rewrite of a Pre-LN Transformer (Jiang et al. 2023): same outputs with RMSNorm."""

import pytest
import torch

from lnpaper.models.transformer import TransformerConfig, TransformerLM
from lnpaper.models.zero_mean import center_residual_writers, zero_mean_rmsnorm
from lnpaper.norms import LayerNorm, RMSNorm

VOCAB = 11


def trained_looking_model(seed: int = 0, **options) -> TransformerLM:
    """A Pre-LN model in float64 whose norm gains and biases and position embeddings are not at
    their init values (at init b = 0 and the positions are 0, and a wrong fold would go unseen)."""
    torch.manual_seed(seed)
    model = TransformerLM(
        TransformerConfig(VOCAB, d_model=16, n_layers=3, n_heads=2, max_len=8, **options)
    ).double()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, LayerNorm):
                module.weight.copy_(1 + 0.3 * torch.randn_like(module.weight))
                module.bias.copy_(0.5 * torch.randn_like(module.bias) + 0.2)
        model.position_embedding.normal_(0.3, 0.5)
        for parameter in model.parameters():
            if parameter.ndim == 1 and parameter.abs().max() == 0:  # zero biases
                parameter.normal_(0.1, 0.2)
    return model


def tokens(seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (4, 8), generator=torch.Generator().manual_seed(seed))


def residual_stream(model, x):
    """The stream after the embeddings and after every block."""
    states = [model.embed(x)]
    for block in model.blocks:
        states.append(block(states[-1]))
    return states


def test_centering_leaves_the_outputs_and_makes_every_stream_state_zero_mean():
    model = trained_looking_model()
    x = tokens()
    before = model(x)
    centered = center_residual_writers(model)
    assert torch.allclose(centered(x), before, rtol=0, atol=1e-12)
    for state in residual_stream(centered, x):
        assert state.mean(dim=-1).abs().max() < 1e-13


def test_the_rmsnorm_model_computes_the_layernorm_models_function_in_float64():
    model = trained_looking_model()
    x = tokens()
    converted = zero_mean_rmsnorm(model)
    assert not any(isinstance(m, LayerNorm) for m in converted.modules())
    assert sum(isinstance(m, RMSNorm) for m in converted.modules()) == 2 * 3 + 1
    assert all(m.eps == 1e-5 for m in converted.modules() if isinstance(m, RMSNorm))
    difference = (converted(x) - model(x)).abs().max().item()
    assert difference < 1e-12, difference
    assert model(x).abs().max() > 1  # the logits are not all tiny, so the bound means something


def test_the_rewrite_copies_and_a_wrong_fold_is_caught():
    model = trained_looking_model()
    x = tokens()
    before = model(x)
    converted = zero_mean_rmsnorm(model)
    assert torch.equal(model(x), before)  # the original is untouched
    with torch.no_grad():  # drop one folded bias: the outputs must then differ
        converted.head.bias.copy_(model.head.bias)
    assert (converted(x) - before).abs().max() > 1e-3


def test_without_centering_layernorm_is_not_rmsnorm(monkeypatch):
    from lnpaper.models import zero_mean

    model = trained_looking_model()
    x = tokens()
    monkeypatch.setattr(zero_mean, "center_residual_writers", lambda m: m)
    uncentered = zero_mean.zero_mean_rmsnorm(model)
    assert (uncentered(x) - model(x)).abs().max() > 1e-2


@pytest.mark.parametrize(
    "options, problem",
    [
        ({"placement": "post"}, "Pre-LN"),
        ({"placement": "peri"}, "Pre-LN"),
        ({"norm": "rmsnorm"}, "Pre-LN"),
    ],
)
def test_models_the_rewrite_does_not_hold_for_are_refused(options, problem):
    model = TransformerLM(
        TransformerConfig(VOCAB, d_model=16, n_layers=2, n_heads=2, max_len=8, **options)
    )
    with pytest.raises(ValueError, match=problem):
        zero_mean_rmsnorm(model)


def test_layer_scaling_folds_the_bias_divided_by_sqrt_l():
    """With layer_scaling a block's input norm's output, bias included, is multiplied by
    1 / sqrt(l) before W reads it: the folded bias is W b / sqrt(l) (issue 21: W b was off by 0.37
    in the logits)."""
    model = trained_looking_model(layer_scaling=True)
    x = tokens()
    converted = zero_mean_rmsnorm(model)
    assert [block.input_scale for block in converted.blocks] == [1.0, 2**-0.5, 3**-0.5]
    difference = (converted(x) - model(x)).abs().max().item()
    assert difference < 1e-12, difference


def test_embed_norm_is_refused_by_name():
    """The embedding norm writes g * x_hat + b into the stream; once g has trained its output's
    mean depends on the token, and no centering of the writers removes it."""
    model = trained_looking_model(embed_norm=True)
    with pytest.raises(ValueError, match="embed_norm=True"):
        zero_mean_rmsnorm(model)
    with pytest.raises(ValueError, match="embed_norm=True"):
        center_residual_writers(model)


def test_unfolded_rewrite_keeps_each_bias_and_computes_the_same_function():
    from lnpaper.models.zero_mean import BiasedRMSNorm

    model = trained_looking_model()
    x = tokens()
    converted = zero_mean_rmsnorm(model, fold_biases=False)
    norms = [m for m in converted.modules() if isinstance(m, BiasedRMSNorm)]
    assert len(norms) == 2 * 3 + 1
    assert torch.equal(converted.head.bias, model.head.bias)  # no reader changed
    assert torch.equal(norms[-1].bias, model.final_norm.bias)
    assert (converted(x) - model(x)).abs().max() < 1e-12


def test_writers_kept_centered_stay_zero_mean_after_steps_that_are_not():
    from lnpaper.models.zero_mean import keep_writers_centered

    models = [zero_mean_rmsnorm(trained_looking_model(seed)) for seed in (0, 1)]
    x = tokens()
    before = [m(x) for m in models]
    kept = keep_writers_centered(models)
    assert type(kept[0]) is type(kept[1]), "a population needs one class"
    for model, reference in zip(kept, before, strict=True):
        assert (model(x) - reference).abs().max() < 1e-12  # the same weights, seed by seed
    optimizer = torch.optim.Adam(kept[0].parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        kept[0](x).pow(2).mean().backward()  # a loss that reads the mean, as RMSNorm's does
        optimizer.step()
    stored = kept[0].blocks[0].attn.out.parametrizations.weight.original
    assert stored.mean(dim=0).abs().max() > 1e-3, "the stored weights moved off the constraint"
    for state in residual_stream(kept[0], x):
        assert state.mean(dim=-1).abs().max() < 1e-13
