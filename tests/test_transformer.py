"""The Transformer of notebook 05: each placement computes its formula, the inits do what they say."""

import math

import pytest
import torch

from lnpaper.models.transformer import (
    NORMS,
    PLACEMENTS,
    Block,
    TransformerLM,
    next_token_loss,
)
from lnpaper.norms import DyT

D = 32


def tokens(batch=3, length=10, vocab=11, seed=0):
    return torch.randint(0, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def block(placement, norm="layernorm", seed=0):
    torch.manual_seed(seed)
    return TransformerLM(11, d_model=D, n_layers=1, n_heads=4, placement=placement, norm=norm)


def residual_input(seed=1):
    # offset and scale far from 0 and 1, so a normalized tensor is easy to tell from this one
    return 3.0 + 5.0 * torch.randn(2, 7, D, generator=torch.Generator().manual_seed(seed))


def per_token_stats(x):
    return x.mean(dim=-1), x.var(dim=-1, correction=0)


def test_post_ln_block_output_has_zero_mean_unit_variance_per_token_at_init():
    model = block("post")
    out = model.blocks[0](residual_input())
    mean, var = per_token_stats(out)
    assert mean.abs().max() < 1e-5
    assert (var - 1).abs().max() < 1e-3  # eps = 1e-5 inside the sqrt


def test_post_ln_block_is_norm_of_residual_sum():
    b = block("post").blocks[0]
    x = residual_input()
    h = b.attn_out_norm(x + b.attn(x))  # x_{l+1} = LN(x + F(x)), once per sublayer
    expected = b.ffn_out_norm(h + b.ffn(h))
    torch.testing.assert_close(b(x), expected)


def test_pre_ln_block_adds_sublayers_to_an_unnormalized_residual_stream():
    b = block("pre").blocks[0]
    x = residual_input()
    h = x + b.attn(b.attn_in_norm(x))
    torch.testing.assert_close(b(x), h + b.ffn(b.ffn_in_norm(h)))


@pytest.mark.parametrize("placement", ["pre", "peri", "sandwich", "none"])
def test_residual_stream_is_never_normalized_inside_the_stack(placement):
    """With every sublayer's output matrix at zero the stack is the identity: nothing on the
    residual path rescales it. Post-LN's stack normalizes it instead."""
    torch.manual_seed(0)
    model = TransformerLM(11, d_model=D, n_layers=3, n_heads=4, placement=placement)
    with torch.no_grad():
        for b in model.blocks:
            for last in (b.attn.out, b.ffn.w2):
                last.weight.zero_()
                last.bias.zero_()
    x = residual_input()
    for b in model.blocks:
        # (peri, sandwich: LayerNorm of an all-zero sublayer output is its bias, 0)
        torch.testing.assert_close(b(x), x)
    assert per_token_stats(x)[1].mean() > 10  # still the input's scale, not 1


def test_post_ln_with_the_same_zeroed_sublayers_normalizes_the_stream():
    model = block("post")
    b = model.blocks[0]
    with torch.no_grad():
        for last in (b.attn.out, b.ffn.w2):
            last.weight.zero_()
            last.bias.zero_()
    mean, var = per_token_stats(b(residual_input()))
    assert mean.abs().max() < 1e-5 and (var - 1).abs().max() < 1e-3


@pytest.mark.parametrize("placement", ["peri", "sandwich"])
def test_peri_ln_normalizes_both_input_and_output_of_each_sublayer(placement):
    b = block(placement).blocks[0]
    seen = {}
    b.attn.register_forward_hook(lambda m, inputs, out: seen.update(attn_in=inputs[0]))
    b.ffn.register_forward_hook(lambda m, inputs, out: seen.update(ffn_in=inputs[0]))
    x = residual_input()
    out = b(x)
    h = x + b.attn_out_norm(b.attn(b.attn_in_norm(x)))
    for name, tensor in (
        ("attention input", seen["attn_in"]),
        ("ffn input", seen["ffn_in"]),
        ("attention's addition to the stream", h - x),
        ("ffn's addition to the stream", out - h),
    ):
        mean, var = per_token_stats(tensor)
        assert mean.abs().max() < 1e-4, name
        assert (var - 1).abs().max() < 1e-3, name


def test_sandwich_is_the_peri_block_under_its_older_name():
    x = tokens()
    torch.testing.assert_close(block("sandwich")(x), block("peri")(x))


def test_none_has_no_normalizer_at_all():
    model = TransformerLM(11, d_model=D, n_layers=2, n_heads=4, placement="none")
    assert model.final_norm is None
    names = {type(m).__name__ for m in model.modules()}
    assert not names & {"LayerNorm", "RMSNorm", "DyT", "Identity"}


@pytest.mark.parametrize("placement", ["post", "pre", "peri"])
def test_identity_norm_is_the_placement_without_normalization(placement):
    x = tokens()
    plain = block("none")(x)
    torch.testing.assert_close(block(placement, norm="identity")(x), plain)
    assert not torch.allclose(block(placement, norm="layernorm")(x), plain)


@pytest.mark.parametrize("placement", ["pre", "peri", "sandwich"])
def test_final_norm_for_pre_and_peri_only(placement):
    assert block(placement).final_norm is not None
    assert block("post").final_norm is None


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("placement", PLACEMENTS)
def test_every_combination_runs_and_is_causal(placement, norm):
    model = block(placement, norm)
    x = tokens()
    changed = x.clone()
    changed[:, 6] = (changed[:, 6] + 1) % 11
    out, out_changed = model(x), model(changed)
    assert out.shape == (3, 10, 11)
    torch.testing.assert_close(out[:, :6], out_changed[:, :6])  # the future is never read
    assert not torch.allclose(out[:, 6:], out_changed[:, 6:])


def test_dyt_alpha_starts_at_one_half():
    model = block("pre", "dyt")
    alphas = [m.alpha.item() for m in model.modules() if isinstance(m, DyT)]
    assert len(alphas) == 3 and all(a == 0.5 for a in alphas)  # two per block + final


def test_default_init_is_xavier_and_gives_gaussian_input():
    torch.manual_seed(0)
    model = TransformerLM(50, d_model=128, n_layers=2, d_ff=512, placement="pre")
    w1 = model.blocks[0].ffn.w1.weight
    assert abs(w1.std().item() - math.sqrt(2 / (128 + 512))) < 0.02 * math.sqrt(2 / 640)
    assert model.blocks[0].ffn.w1.bias.abs().max() == 0
    assert model.position_embedding.abs().max() == 0
    assert abs(model.token_embedding.weight.std().item() - 1) < 0.02


def test_tfixup_scales_value_output_ffn_and_embeddings_by_9n_to_the_minus_quarter():
    n_layers, d = 12, 128
    torch.manual_seed(0)
    xavier = TransformerLM(50, d_model=d, n_layers=n_layers, d_ff=512, placement="none")
    torch.manual_seed(0)
    fixup = TransformerLM(
        50, d_model=d, n_layers=n_layers, d_ff=512, placement="none", init="tfixup"
    )
    scale = (9 * n_layers) ** -0.25
    for b_x, b_f in zip(xavier.blocks, fixup.blocks, strict=True):
        for name in ("value", "out"):
            ratio = getattr(b_f.attn, name).weight.std() / getattr(b_x.attn, name).weight.std()
            assert abs(ratio.item() - scale) < 0.05 * scale
        for name in ("query", "key"):  # left at Xavier
            ratio = getattr(b_f.attn, name).weight.std() / getattr(b_x.attn, name).weight.std()
            assert abs(ratio.item() - 1) < 0.05
        for name in ("w1", "w2"):
            ratio = getattr(b_f.ffn, name).weight.std() / getattr(b_x.ffn, name).weight.std()
            assert abs(ratio.item() - scale) < 0.05 * scale
    expected = scale * d**-0.5
    assert abs(fixup.token_embedding.weight.std().item() - expected) < 0.03 * expected


def test_loss_at_init_is_near_log_vocab_and_gradients_reach_every_parameter():
    torch.manual_seed(0)
    model = TransformerLM(11, d_model=D, n_layers=2, n_heads=4, placement="pre")
    loss = next_token_loss(model, tokens())
    assert abs(loss.item() - math.log(11)) < 1.0
    loss.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"placement": "middle"}, "placement must be one of"),
        ({"norm": "batchnorm"}, "norm must be one of"),
        ({"init": "kaiming"}, "init must be one of"),
        ({"d_model": 30, "n_heads": 4}, "divisible by n_heads"),
        ({"n_layers": 0}, "n_layers must be a positive int"),
    ],
)
def test_unknown_options_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerLM(11, **kwargs)


def test_block_refuses_unknown_placement():
    with pytest.raises(ValueError, match="placement"):
        Block(D, 4, 64, "post-pre", "layernorm")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (torch.zeros(3, 10), "int64"),
        (torch.zeros(3, 10, 2, dtype=torch.int64), "shape"),
        (torch.zeros(3, 65, dtype=torch.int64), "sequence length 65"),
        (torch.full((3, 10), 11, dtype=torch.int64), "token ids"),
        (torch.full((3, 10), -1, dtype=torch.int64), "token ids"),
    ],
)
def test_bad_tokens_are_refused(bad, message):
    model = TransformerLM(11, d_model=D, n_layers=1, n_heads=4)
    with pytest.raises(ValueError, match=message):
        model(bad)
