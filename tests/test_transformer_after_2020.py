"""The Transformer options of notebooks 08-10 (after 2020): each computes its formula, and the
combinations they do not define are refused."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lnpaper.models.transformer import Block, TransformerConfig, TransformerLM, admin_profile
from lnpaper.norms import Derf, DetachNorm, DyT, LayerNorm, RMSNorm

D, VOCAB = 16, 11


def model(seed=0, **options):
    torch.manual_seed(seed)
    options = {"d_model": D, "n_layers": 4, "n_heads": 2, "max_len": 8, **options}
    return TransformerLM(TransformerConfig(VOCAB, **options)).double()


def tokens(seed=1):
    return torch.randint(0, VOCAB, (3, 8), generator=torch.Generator().manual_seed(seed))


def heads(t, n_heads=2):
    batch, length, d = t.shape
    return t.view(batch, length, n_heads, d // n_heads).transpose(1, 2)


def causal_attention(z, v):
    future = torch.ones(z.shape[-1], z.shape[-1], dtype=torch.bool).triu(1)
    return z.masked_fill(future, -math.inf).softmax(-1) @ v


# ---- QK-norm ------------------------------------------------------------------------------------


@pytest.mark.parametrize("qk_norm", ["layernorm", "rmsnorm"])
def test_per_head_qk_norm_normalizes_each_heads_queries_and_keys(qk_norm):
    lm = model(qk_norm=qk_norm)
    attention = lm.blocks[0].attn
    assert attention.q_norm.normalized_shape == (D // 2,)
    x = torch.randn(3, 8, D, dtype=torch.float64)
    q = attention.q_norm(heads(attention.query(x)))
    k = attention.k_norm(heads(attention.key(x)))
    z = q @ k.transpose(-2, -1) / math.sqrt(D // 2)
    assert torch.allclose(attention.scores(x)[0], z, rtol=0, atol=1e-12)
    mixed = causal_attention(z, heads(attention.value(x)))
    expected = attention.out(mixed.transpose(1, 2).reshape(3, 8, D))
    assert torch.allclose(attention(x), expected, rtol=0, atol=1e-12)


def test_full_width_qk_norm_normalizes_before_the_heads_are_split():
    attention = model(qk_norm="rmsnorm", qk_norm_span="full").blocks[0].attn
    assert attention.q_norm.normalized_shape == (D,)
    x = torch.randn(3, 8, D, dtype=torch.float64)
    q, k = heads(attention.q_norm(attention.query(x))), heads(attention.k_norm(attention.key(x)))
    z = q @ k.transpose(-2, -1) / math.sqrt(D // 2)
    assert torch.allclose(attention.scores(x)[0], z, rtol=0, atol=1e-12)


def test_l2_qk_norm_bounds_the_logits_by_its_learnable_scale():
    lm = model(qk_norm="l2")
    attention = lm.blocks[0].attn
    assert attention.qk_scale.item() == pytest.approx(math.log2(8**2 - 8))  # log2(L^2 - L)
    x = 100 * torch.randn(3, 8, D, dtype=torch.float64)  # huge inputs: the logits stay bounded
    z = attention.scores(x)[0]
    q, k = (
        F.normalize(heads(attention.query(x)), dim=-1),
        F.normalize(heads(attention.key(x)), dim=-1),
    )
    assert torch.allclose(z, attention.qk_scale * q @ k.transpose(-2, -1), rtol=0, atol=1e-12)
    assert z.abs().max() <= attention.qk_scale.abs() + 1e-12
    z.sum().backward()
    assert attention.qk_scale.grad is not None


def test_attention_logits_reads_the_named_layers_scores():
    lm = model(placement="pre")
    x = tokens()
    h = lm.embed(x)
    h = lm.blocks[0](h)
    block = lm.blocks[1]
    expected = block.attn.scores(block.attn_in_norm(h))[0]
    assert torch.equal(lm.attention_logits(x, layer=1), expected)
    with pytest.raises(ValueError, match="layer"):
        lm.attention_logits(x, layer=4)


# ---- DeepNorm and Admin -------------------------------------------------------------------------


def test_deepnorm_weights_the_stream_by_alpha_and_scales_four_matrices_by_beta():
    n = 4
    plain, deep = model(placement="post"), model(placement="post", deepnorm=True)
    alpha, beta = (2 * n) ** 0.25, (8 * n) ** -0.25
    for a, b in zip(plain.blocks, deep.blocks, strict=True):
        assert b.residual_scale == pytest.approx(alpha)
        for name in ("value", "out"):
            ratio = getattr(b.attn, name).weight / getattr(a.attn, name).weight
            assert torch.allclose(ratio, torch.full_like(ratio, beta), rtol=1e-6)
        for name in ("w1", "w2"):
            ratio = getattr(b.ffn, name).weight / getattr(a.ffn, name).weight
            assert torch.allclose(ratio, torch.full_like(ratio, beta), rtol=1e-6)
        assert torch.equal(a.attn.query.weight, b.attn.query.weight)  # q and k are not scaled
        assert torch.equal(a.attn.key.weight, b.attn.key.weight)
    block, x = deep.blocks[0], torch.randn(3, 8, D, dtype=torch.float64)
    h = block.attn_out_norm(alpha * x + block.attn(x))
    assert torch.allclose(block(x), block.ffn_out_norm(alpha * h + block.ffn(h)), atol=1e-12)


def test_deepnorm_parts_keep_one_half_each():
    n = 4
    plain = model(placement="post")
    alpha_only = model(placement="post", deepnorm=True, deepnorm_parts="alpha")
    beta_only = model(placement="post", deepnorm=True, deepnorm_parts="beta")
    for a, up, down in zip(plain.blocks, alpha_only.blocks, beta_only.blocks, strict=True):
        assert up.residual_scale == pytest.approx((2 * n) ** 0.25) and down.residual_scale == 1.0
        assert torch.equal(up.attn.value.weight, a.attn.value.weight)  # no beta
        ratio = down.ffn.w2.weight / a.ffn.w2.weight
        assert torch.allclose(ratio, torch.full_like(ratio, (8 * n) ** -0.25), rtol=1e-6)


def test_admin_with_unit_omegas_is_post_ln_and_its_profile_follows_the_recursion():
    x = tokens()
    post, admin = model(placement="post"), model(placement="post", admin=True)
    assert torch.equal(admin(x), post(x))  # omega = 1: x * 1 + f(x)
    values = admin_profile(admin, x)
    assert len(values) == 2 * 4 and values[0] == 1.0
    # redo the recursion by hand: omega_{i+1} = sqrt(Var[omega_i x] + Var[f_i(x)]), with the
    # population variance of the flattened tensors, np.var, as the authors' profiling code computes
    with torch.no_grad():
        h, omega, by_hand = admin.embed(x), 1.0, []
        for block in admin.blocks:
            for branch, weight, norm in ((block.attn, block.attn_omega, block.attn_out_norm),
                                         (block.ffn, block.ffn_omega, block.ffn_out_norm)):  # fmt: skip
                assert torch.allclose(weight, torch.full_like(weight, omega), rtol=1e-12, atol=0)
                by_hand.append(omega)
                f = branch(h)
                omega = math.sqrt(np.var((omega * h).numpy().ravel()) + np.var(f.numpy().ravel()))
                h = norm(weight * h + f)
    assert by_hand == pytest.approx(values, rel=1e-12)
    assert all(b > a for a, b in zip(values, values[1:], strict=False))  # omega accumulates


def test_admin_profile_needs_an_admin_model():
    with pytest.raises(ValueError, match="admin=True"):
        admin_profile(model(placement="post"), tokens())


# ---- LayerNorm Scaling, Mix-LN -----------------------------------------------------------------


def test_layer_scaling_multiplies_each_blocks_input_norms_by_one_over_sqrt_l():
    lm = model(placement="pre", layer_scaling=True)
    x = torch.randn(3, 8, D, dtype=torch.float64)
    for index, block in enumerate(lm.blocks):
        s = 1 / math.sqrt(index + 1)
        assert block.input_scale == pytest.approx(s)
        h = x + block.attn(s * block.attn_in_norm(x))
        expected = h + block.ffn(s * block.ffn_in_norm(h))
        assert torch.allclose(block(x), expected, rtol=0, atol=1e-12)
    assert lm.blocks[0].input_scale == 1.0  # the first block is unscaled: l = 1
    plain = model(placement="pre")
    assert torch.equal(plain.blocks[0](x), lm.blocks[0](x))


@pytest.mark.parametrize("n_layers, n_post", [(4, 1), (8, 2), (12, 3), (6, 1)])
def test_mix_ln_puts_post_ln_in_the_first_quarter_and_pre_ln_after(n_layers, n_post):
    lm = model(placement="mix", n_layers=n_layers)
    placements = [block.placement for block in lm.blocks]
    assert placements == ["post"] * n_post + ["pre"] * (n_layers - n_post)
    assert lm.final_norm is not None


# ---- norms and the embedding scalar ------------------------------------------------------------


@pytest.mark.parametrize(
    "norm, kind", [("derf", Derf), ("detach_mean", DetachNorm), ("detach_std", DetachNorm),
                   ("detach_both", DetachNorm), ("layernorm_simple", LayerNorm)],
)  # fmt: skip
def test_the_new_norms_fill_every_slot(norm, kind):
    lm = model(placement="peri", norm=norm)
    slots = [lm.final_norm] + [getattr(b, n) for b in lm.blocks
                               for n in ("attn_in_norm", "ffn_in_norm", "attn_out_norm", "ffn_out_norm")]  # fmt: skip
    assert all(isinstance(m, kind) for m in slots)
    assert torch.isfinite(lm(tokens())).all()


def test_detach_norms_detach_what_they_say():
    lm = model(norm="detach_std")
    assert lm.final_norm.detach == ("std",)
    assert model(norm="detach_both").final_norm.detach == ("mean", "std")
    assert model(norm="layernorm_simple").final_norm.weight is None


@pytest.mark.parametrize("norm, kind", [("dyt", DyT), ("derf", Derf)])
def test_alpha_init_sets_every_pointwise_norms_alpha(norm, kind):
    lm = model(norm=norm, alpha_init=0.2)
    alphas = [m.alpha.item() for m in lm.modules() if isinstance(m, kind)]
    assert len(alphas) == 2 * 4 + 1 and alphas == pytest.approx([0.2] * len(alphas))


def test_the_learned_embedding_scale_starts_at_sqrt_d_and_learns():
    lm = model(norm="dyt", learned_embed_scale=True)
    assert lm.learned_embed_scale.item() == pytest.approx(math.sqrt(D))
    x = tokens()
    expected = math.sqrt(D) * lm.token_embedding(x) + lm.position_embedding[:8]
    assert torch.allclose(lm.embed(x), expected, rtol=0, atol=1e-12)
    lm(x).sum().backward()
    assert lm.learned_embed_scale.grad is not None


# ---- what is refused ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, problem",
    [
        ({"qk_norm": "l1"}, "qk_norm must be"),
        ({"qk_norm": "layernorm", "qk_norm_span": "row"}, "qk_norm_span"),
        ({"qk_norm": "l2", "qk_norm_span": "full"}, "'l2'"),
        ({"deepnorm": True}, "placement 'post'"),
        ({"admin": True, "placement": "peri"}, "placement 'post'"),
        ({"deepnorm": True, "admin": True, "placement": "post"}, "choose one"),
        ({"deepnorm": True, "placement": "post", "init": "tfixup"}, "init 'default'"),
        ({"layer_scaling": True, "placement": "post"}, "placement 'pre'"),
        ({"alpha_init": 0.2}, "alpha_init"),
        ({"norm": "dyt", "alpha_init": 0.0}, "alpha_init"),
        ({"placement": "mix", "n_layers": 3}, "n_layers >= 4"),
        ({"learned_embed_scale": True, "scale_embedding": True}, "choose one"),
        ({"norm": "layernorm_simple", "gain_offset": True}, "gain"),
        ({"deepnorm": 1}, "True or False"),
        ({"placement": "post", "deepnorm_parts": "alpha"}, "needs deepnorm=True"),
        ({"placement": "post", "deepnorm": True, "deepnorm_parts": "gamma"}, "deepnorm_parts"),
    ],
)
def test_undefined_combinations_are_refused(options, problem):
    with pytest.raises(ValueError, match=problem):
        model(**options)


def test_a_block_is_never_mix_and_scales_only_where_they_apply():
    with pytest.raises(ValueError, match="TransformerLM placement"):
        Block(D, 2, 64, "mix", "layernorm")
    with pytest.raises(ValueError, match="'post' only"):
        Block(D, 2, 64, "pre", "layernorm", residual_scale=2.0)
    with pytest.raises(ValueError, match="'pre' only"):
        Block(D, 2, 64, "post", "layernorm", input_scale=0.5)


def test_rmsnorm_qk_norm_uses_rmsnorm():
    assert isinstance(model(qk_norm="rmsnorm").blocks[0].attn.q_norm, RMSNorm)
