"""The Transformer of notebook 06: each placement computes its formula, the inits do what they say."""

import math

import pytest
import torch

from lnpaper.models.transformer import (
    GEMMA2_ATTN_LOGIT_CAP,
    GEMMA2_FINAL_LOGIT_CAP,
    Block,
    CausalSelfAttention,
    TransformerConfig,
    TransformerLM,
    gemma2_model,
    make_norm,
    next_token_loss,
    peri_ln_model,
    soft_cap,
)
from lnpaper.models.transformer_blocks import NORMS, PLACEMENTS
from lnpaper.norms import DyT

D = 32


def tokens(batch=3, length=10, vocab=11, seed=0):
    return torch.randint(0, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def block(placement, norm="layernorm", seed=0):
    torch.manual_seed(seed)
    return TransformerLM(
        TransformerConfig(11, d_model=D, n_layers=1, n_heads=4, placement=placement, norm=norm)
    )


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


@pytest.mark.parametrize("placement", ["pre", "peri", "reordered", "none"])
def test_residual_stream_is_never_normalized_inside_the_stack(placement):
    """With every sublayer's output matrix at zero the stack is the identity: nothing on the
    residual path rescales it. Post-LN's stack normalizes it instead."""
    torch.manual_seed(0)
    model = TransformerLM(
        TransformerConfig(11, d_model=D, n_layers=3, n_heads=4, placement=placement)
    )
    with torch.no_grad():
        for b in model.blocks:
            for last in (b.attn.out, b.ffn.w2):
                last.weight.zero_()
                last.bias.zero_()
    x = residual_input()
    for b in model.blocks:
        # (peri, reordered: LayerNorm of an all-zero sublayer output is its bias, 0)
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


def test_peri_ln_normalizes_both_input_and_output_of_each_sublayer():
    b = block("peri").blocks[0]
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


def test_none_has_no_normalizer_at_all():
    model = TransformerLM(TransformerConfig(11, d_model=D, n_layers=2, n_heads=4, placement="none"))
    assert model.final_norm is None
    names = {type(m).__name__ for m in model.modules()}
    assert not names & {"LayerNorm", "RMSNorm", "DyT", "Identity"}


@pytest.mark.parametrize("placement", ["post", "pre", "peri"])
def test_identity_norm_is_the_placement_without_normalization(placement):
    x = tokens()
    plain = block("none")(x)
    torch.testing.assert_close(block(placement, norm="identity")(x), plain)
    assert not torch.allclose(block(placement, norm="layernorm")(x), plain)


@pytest.mark.parametrize("placement", ["pre", "peri", "reordered"])
def test_final_norm_for_pre_peri_and_reordered_only(placement):
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
    model = TransformerLM(TransformerConfig(50, d_model=128, n_layers=2, d_ff=512, placement="pre"))
    w1 = model.blocks[0].ffn.w1.weight
    assert abs(w1.std().item() - math.sqrt(2 / (128 + 512))) < 0.02 * math.sqrt(2 / 640)
    assert model.blocks[0].ffn.w1.bias.abs().max() == 0
    assert model.position_embedding.abs().max() == 0
    assert abs(model.token_embedding.weight.std().item() - 1) < 0.02


def test_tfixup_scales_value_output_ffn_and_embeddings_by_9n_to_the_minus_quarter():
    n_layers, d = 12, 128
    torch.manual_seed(0)
    xavier = TransformerLM(
        TransformerConfig(50, d_model=d, n_layers=n_layers, d_ff=512, placement="none")
    )
    torch.manual_seed(0)
    fixup = TransformerLM(
        TransformerConfig(
            50, d_model=d, n_layers=n_layers, d_ff=512, placement="none", init="tfixup"
        )
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


@pytest.mark.parametrize(("init", "factor"), [("default", 1.0), ("tfixup", 8.0)])
def test_only_tfixup_multiplies_the_token_embedding_by_sqrt_d_before_the_positions(init, factor):
    torch.manual_seed(0)
    model = TransformerLM(
        TransformerConfig(50, d_model=64, n_layers=12, max_len=16, placement="none", init=init)
    )
    with torch.no_grad():
        model.position_embedding.normal_()  # so that a scaled position would show
    ids = tokens(batch=4, length=16, vocab=50)
    expected = factor * model.token_embedding(ids) + model.position_embedding
    assert torch.equal(model.embed(ids), expected)


def test_tfixup_tokens_enter_the_stack_with_sd_9n_to_the_minus_quarter():
    n_layers, d = 12, 64
    torch.manual_seed(0)
    model = TransformerLM(
        TransformerConfig(2000, d_model=d, n_layers=n_layers, placement="none", init="tfixup")
    )
    ids = torch.arange(2000).reshape(50, 40)
    expected = (9 * n_layers) ** -0.25  # N(0, d^{-1/2}) * (9N)^{-1/4} * sqrt(d)
    assert abs(model.embed(ids).std().item() - expected) < 0.02 * expected


def test_loss_at_init_is_near_log_vocab_and_gradients_reach_every_parameter():
    torch.manual_seed(0)
    model = TransformerLM(TransformerConfig(11, d_model=D, n_layers=2, n_heads=4, placement="pre"))
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
        ({"n_heads": True}, "n_heads must be a positive int, got True"),
    ],
)
def test_unknown_options_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerLM(TransformerConfig(11, **kwargs))


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
    model = TransformerLM(TransformerConfig(11, d_model=D, n_layers=1, n_heads=4))
    with pytest.raises(ValueError, match=message):
        model(bad)


# ---- the model options: each against its formula; the defaults change nothing ----------------


def model_with(seed=0, **options):
    torch.manual_seed(seed)
    return TransformerLM(TransformerConfig(11, d_model=D, n_layers=2, n_heads=4, **options))


def test_default_options_build_the_same_network_as_before():
    """Every option off is the model the record was made with: same parameters, same logits."""
    x = tokens()
    plain = model_with(placement="peri")
    off = model_with(placement="peri", embed_norm=False, scale_embedding=False, gain_offset=False,
                     attn_logit_cap=None, final_logit_cap=None)  # fmt: skip
    assert [n for n, _ in plain.named_parameters()] == [n for n, _ in off.named_parameters()]
    assert torch.equal(plain(x), off(x))


def test_reordered_block_normalizes_only_each_sublayers_output():
    b = block("reordered").blocks[0]
    assert b.attn_in_norm is None and b.ffn_in_norm is None
    seen = {}
    b.attn.register_forward_hook(lambda m, inputs, out: seen.update(attn_in=inputs[0]))
    x = residual_input()
    h = x + b.attn_out_norm(b.attn(x))  # x + Norm(F(x)), OLMo 2
    torch.testing.assert_close(b(x), h + b.ffn_out_norm(b.ffn(h)))
    assert torch.equal(seen["attn_in"], x)  # the sublayer reads the raw stream
    mean, var = per_token_stats(b(x) - h)  # what it adds is normalized
    assert mean.abs().max() < 1e-4 and (var - 1).abs().max() < 1e-3


def test_embed_norm_normalizes_the_embedding_output():
    model = model_with(placement="peri", embed_norm=True)
    with torch.no_grad():
        model.position_embedding.normal_()
    ids = tokens()
    raw = model.token_embedding(ids) + model.position_embedding[: ids.shape[1]]
    torch.testing.assert_close(model.embed(ids), model.embed_norm(raw))
    mean, var = per_token_stats(model.embed(ids))
    assert mean.abs().max() < 1e-5 and (var - 1).abs().max() < 1e-3
    assert model_with(placement="peri").embed_norm is None


def test_scale_embedding_multiplies_the_token_embedding_by_sqrt_d_before_the_positions():
    model = model_with(placement="peri", scale_embedding=True)
    with torch.no_grad():
        model.position_embedding.normal_()
    ids = tokens()
    expected = math.sqrt(D) * model.token_embedding(ids) + model.position_embedding[:10]
    torch.testing.assert_close(model.embed(ids), expected)


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm", "dyt"])
def test_gain_offset_stores_w_and_computes_with_one_plus_w(norm):
    plain, offset = make_norm(norm, D), make_norm(norm, D, gain_offset=True)
    stored = dict(offset.named_parameters())
    w = stored["parametrizations.weight.original"]
    assert torch.equal(w, torch.zeros(D))  # w = 0 at init: g = 1, the same function
    x = residual_input()
    torch.testing.assert_close(offset(x), plain(x))
    with torch.no_grad():
        w.copy_(torch.linspace(-0.5, 0.5, D))
        plain.weight.copy_(1 + torch.linspace(-0.5, 0.5, D))  # g = 1 + w
    torch.testing.assert_close(offset(x), plain(x))
    assert torch.equal(offset.weight, 1 + w)


def test_gain_offset_reaches_every_norm_of_the_model():
    model = model_with(placement="peri", embed_norm=True, gain_offset=True)
    norms = [m for m in model.modules() if hasattr(m, "parametrizations")]
    assert len(norms) == 2 * 2 * 2 + 1 + 1  # four per block, the embedding's, the final
    assert not any(n.endswith("weight") and "original" not in n for n, _ in model.named_parameters()
                   if "norm" in n)  # fmt: skip


def test_soft_cap_is_cap_tanh_z_over_cap():
    z = torch.linspace(-200, 200, 101, dtype=torch.float64)
    torch.testing.assert_close(soft_cap(z, 30.0), 30.0 * torch.tanh(z / 30.0))
    assert soft_cap(z, 30.0).abs().max() < 30.0
    small = torch.tensor([1e-3], dtype=torch.float64)
    torch.testing.assert_close(soft_cap(small, 30.0), small)  # about z while |z| << cap


def test_final_logit_cap_caps_the_heads_logits():
    plain, capped = model_with(placement="pre"), model_with(placement="pre", final_logit_cap=0.5)
    x = tokens()
    torch.testing.assert_close(capped(x), 0.5 * torch.tanh(plain(x) / 0.5))


def attention_by_hand(attn, x, cap):
    batch, length, d = x.shape
    heads = attn.n_heads

    def split(t):
        return t.view(batch, length, heads, d // heads).transpose(1, 2)

    q, k, v = split(attn.query(x)), split(attn.key(x)), split(attn.value(x))
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(d // heads)
    if cap is not None:
        scores = cap * torch.tanh(scores / cap)
    weights = torch.zeros_like(scores)
    for t in range(length):  # softmax over s <= t only
        weights[..., t, : t + 1] = torch.softmax(scores[..., t, : t + 1], dim=-1)
    mixed = torch.einsum("bhts,bhsd->bhtd", weights, v)
    return attn.out(mixed.transpose(1, 2).reshape(batch, length, d))


@pytest.mark.parametrize("cap", [None, 1e9, 0.3])
def test_attention_logit_cap_is_cap_tanh_of_the_scaled_scores(cap):
    torch.manual_seed(0)
    attn = CausalSelfAttention(D, 4, logit_cap=cap).double()
    x = residual_input().double()
    torch.testing.assert_close(attn(x), attention_by_hand(attn, x, cap))


def test_attention_logit_cap_changes_large_scores():
    torch.manual_seed(0)
    plain = CausalSelfAttention(D, 4)
    torch.manual_seed(0)
    capped = CausalSelfAttention(D, 4, logit_cap=0.3)
    x = residual_input()
    assert (plain(x) - capped(x)).abs().max() > 1e-2  # the scores here reach well past 0.3


def test_peri_ln_and_gemma2_share_the_block_but_not_the_model():
    peri, gemma = peri_ln_model(11, d_model=D, n_heads=4), gemma2_model(11, d_model=D, n_heads=4)
    assert peri.placement == gemma.placement == "peri"
    assert peri.embed_norm is not None and gemma.embed_norm is None
    assert peri.embed_scale == 1.0 and gemma.embed_scale == math.sqrt(D)
    assert gemma.final_logit_cap == GEMMA2_FINAL_LOGIT_CAP == 30.0
    assert all(b.attn.logit_cap == GEMMA2_ATTN_LOGIT_CAP == 50.0 for b in gemma.blocks)
    assert gemma.norm == "rmsnorm" and gemma.blocks[0].attn_in_norm.weight.eq(1).all()
    assert peri.final_logit_cap is None and peri.blocks[0].attn.logit_cap is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"placement": "sandwich"}, r"gemma2\(vocab_size\)"),
        ({"placement": "none", "embed_norm": True}, "need a norm"),
        ({"norm": "identity", "gain_offset": True}, "need a norm"),
        ({"init": "tfixup", "scale_embedding": True}, "twice"),
        ({"final_logit_cap": 0.0}, "final_logit_cap must be"),
        ({"attn_logit_cap": float("inf")}, "attn_logit_cap must be"),
        ({"final_logit_cap": "30"}, "final_logit_cap must be"),
        ({"embed_norm": 1}, "embed_norm must be True or False"),
    ],
)
def test_bad_option_combinations_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerLM(TransformerConfig(11, **kwargs))


def test_rezero_blocks_start_as_the_identity_and_open_their_gates_by_gradient():
    torch.manual_seed(0)
    model = TransformerLM(
        TransformerConfig(16, n_layers=3, max_len=8, placement="none", rezero=True)
    )
    tokens = torch.randint(0, 16, (2, 8))
    x = model.embed(tokens)
    for block in model.blocks:
        assert torch.equal(block(x), x)  # a = 0: x + 0 * F(x)
    loss = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), tokens.flatten())
    loss.backward()
    block = model.blocks[0]
    assert block.attn.gate.grad != 0 and block.ffn.gate.grad != 0
    assert block.ffn.w2.weight.grad.abs().max() == 0  # behind a closed gate: no gradient yet
    with pytest.raises(ValueError, match="placement 'none'"):
        TransformerLM(TransformerConfig(16, placement="pre", rezero=True))
    with pytest.raises(ValueError, match="init 'default'"):
        TransformerLM(TransformerConfig(16, placement="none", init="tfixup", rezero=True))


def test_a_model_is_built_from_a_config_only():
    with pytest.raises(ValueError, match="config must be a TransformerConfig"):
        TransformerLM(11)
    with pytest.raises(TypeError):
        TransformerConfig(11, 32)  # every field but vocab_size by name
    config = TransformerConfig(11, d_model=D, n_heads=4)
    with pytest.raises(AttributeError):
        config.placement = "post"  # frozen: a model's config is what it was built with
    assert TransformerLM(config).config is config


@pytest.mark.parametrize(
    "options, named",
    [
        ({"norm": "batchnorm"}, "norm must be one of"),
        ({"placement": "sandwich"}, "placement 'sandwich' is the 'peri' block"),
        ({"init": "fixup"}, "init must be one of"),
        ({"rezero": 1}, "rezero must be True or False, got 1"),
        ({"d_ff": 0}, "d_ff must be a positive int, got 0"),
    ],
)
def test_a_bad_config_is_refused_by_name(options, named):
    with pytest.raises(ValueError, match=named):
        TransformerConfig(11, **options)


def test_each_papers_builder_sets_its_choices_and_takes_any_other_field():
    from lnpaper.models import transformer

    expected = {
        transformer.post_ln: {"placement": "post"},
        transformer.pre_ln: {"placement": "pre"},
        transformer.peri_ln: {"placement": "peri", "embed_norm": True},
        transformer.gemma2: {
            "placement": "peri",
            "norm": "rmsnorm",
            "gain_offset": True,
            "scale_embedding": True,
            "attn_logit_cap": 50.0,
            "final_logit_cap": 30.0,
        },  # fmt: skip
        transformer.olmo2: {
            "placement": "reordered",
            "norm": "rmsnorm",
            "qk_norm": "rmsnorm",
            "qk_norm_span": "full",
        },  # fmt: skip
        transformer.deepnorm: {"placement": "post", "deepnorm": True},
        transformer.admin: {"placement": "post", "admin": True},
        transformer.tfixup: {"placement": "none", "init": "tfixup"},
        transformer.rezero: {"placement": "none", "rezero": True},
        transformer.mix_ln: {"placement": "mix"},
        transformer.layernorm_scaling: {"placement": "pre", "layer_scaling": True},
    }
    for builder, choices in expected.items():
        config = builder(11, n_layers=4, max_len=8)
        assert (config.vocab_size, config.n_layers, config.max_len) == (11, 4, 8)
        assert {name: getattr(config, name) for name in choices} == choices, builder.__name__
        TransformerLM(config)  # each builds
    assert transformer.gemma2(11, final_logit_cap=None).final_logit_cap is None
