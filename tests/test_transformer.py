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
        ({"n_heads": True}, "n_heads must be a positive int, got True"),
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


# ---- the experiments and claim checks of notebook 05 ------------------------------------------


def test_grad_norm_vs_depth_accepts_a_range_and_records_every_layer(no_store):
    from lnpaper.experiments import grad_norm_vs_depth

    post = grad_norm_vs_depth(placement="post", depths=(2, 3), seeds=range(2), d_model=16)
    assert post.seeds == [0, 1] and len(post.grad_norm) == 2 and len(post.grad_norm[0]) == 2
    assert post.layers == [1, 2, 3]  # x^{post,5} of each block of the deepest model
    pre = grad_norm_vs_depth(placement="pre", depths=(2, 3), seeds=range(2), d_model=16)
    assert pre.layers == [0, 1, 2, 3]  # the stream after 0..L blocks
    assert pre.residual_sq_norm[-1] > pre.residual_sq_norm[0]  # Pre-LN's stream grows
    with pytest.raises(ValueError, match="placement"):
        grad_norm_vs_depth(placement="peri", depths=(2,), seeds=(0,), d_model=16)


def test_batchnorm_backward_is_the_projection_formula(no_store):
    from lnpaper.experiments import batchnorm_backward_projection

    result = batchnorm_backward_projection(batch=8, features=3)
    assert result.max_diff_formula < 1e-12 and result.max_diff_numpy < 1e-12
    assert result.max_sum < 1e-12
    assert all(v < 1 for v in result.y_hat_sq_norm_over_n)  # eps makes it a near-projection


def test_lm_training_records_each_seed(no_store):
    from lnpaper.experiments import lm_training

    result = lm_training(n_layers=1, seeds=(0, 1), steps=4, log_every=2)
    assert result.steps == [2, 4] and len(result.train_loss) == 2
    assert all(v is not None for v in result.final_loss)
    assert result.diverged_at == [None, None]
    assert result.levels["bigram"] > result.floor > result.levels["rate"]


def fake_run(finals, n_layers=6, warmup=0, diverged=None):
    return {
        "placement": "pre", "norm": "layernorm", "init": "default", "n_layers": n_layers,
        "lr": 3e-3, "warmup_steps": warmup, "seeds": [0, 1, 2], "steps": [10, 20],
        "train_loss": [[3.0, 2.0]] * 3, "initial_loss": [2.8] * 3, "final_loss": list(finals),
        "diverged_at": diverged or [None] * 3,
        "levels": {"uniform": 2.77, "unigram": 2.75, "bigram": 2.34, "rate": 0.84},
        "floor": 0.94,
    }  # fmt: skip


def study(**finals):
    from lnpaper.experiments.transformer import StudyResult

    names = {
        "post_cold": "Post-LN, no warmup",
        "post_warm": "Post-LN, warmup",
        "pre_cold": "Pre-LN, no warmup",
        "pre_warm": "Pre-LN, warmup",
        "none_cold": "no norm (identity), no warmup",
        "none_warm": "no norm (identity), warmup",
        "dyt": "Pre-DyT, no warmup",
    }
    default = {
        "post_cold": (2.76, 2.76, 2.75), "post_warm": (2.17, 2.15, 2.19),
        "pre_cold": (1.95, 1.99, 1.96), "pre_warm": (1.95, 1.95, 1.95),
        "none_cold": (200.0, None, 13.0), "none_warm": (2.4, 2.4, 2.4),
        "dyt": (1.79, 1.80, 1.79),
    }  # fmt: skip
    default.update(finals)
    return StudyResult(runs={names[k]: fake_run(v) for k, v in default.items()})


def test_the_checks_of_notebook_05_pass_on_results_that_reproduce():
    from lnpaper import claims
    from lnpaper.claims import transformer as nb_claims

    good = study()
    for check in (nb_claims.check_t3, nb_claims.check_t4, nb_claims.check_t6):
        assert check(good).verdict == claims.REPRODUCED


def test_the_checks_of_notebook_05_can_fail():
    from lnpaper import claims
    from lnpaper.claims import transformer as nb_claims
    from lnpaper.experiments.transformer import StudyResult, XiongResult

    # Post-LN trains without warmup too: the warmup claim is not reproduced.
    assert nb_claims.check_t3(study(post_cold=(2.2, 2.1, 2.2))).verdict == claims.NOT_REPRODUCED
    # Pre-LN without warmup stalls.
    assert nb_claims.check_t3(study(pre_cold=(2.7, 2.7, 2.7))).verdict == claims.NOT_REPRODUCED
    # A model without a norm trains fine.
    assert nb_claims.check_t4(study(none_cold=(1.9, 1.9, 1.9))).verdict == claims.NOT_REPRODUCED
    # DyT lags LayerNorm but trains: partly; DyT diverges: not reproduced.
    assert nb_claims.check_t6(study(dyt=(2.2, 2.2, 2.2))).verdict == claims.PARTLY
    assert nb_claims.check_t6(study(dyt=(None, 1.8, 1.8))).verdict == claims.NOT_REPRODUCED
    fixup = {
        "Xavier, 12 layers, no norm": fake_run((None, 390.0, None), 12),
        "T-Fixup, 12 layers, no norm": fake_run((1.85, 1.84, 1.87), 12),
    }
    assert nb_claims.check_t5(StudyResult(runs=fixup)).verdict == claims.REPRODUCED
    fixup["T-Fixup, 12 layers, no norm"] = fake_run((1.85, None, 1.87), 12)
    assert nb_claims.check_t5(StudyResult(runs=fixup)).verdict == claims.NOT_REPRODUCED

    def xiong(post_ratio, pre_ratio, post_sq=1.5):
        def run(ratio, layers, sq):
            return {
                "placement": "post", "d_model": 128, "depths": [6, 14], "seeds": list(range(10)),
                "grad_norm": [[1.0], [ratio]], "mean_grad_norm": [1.0, ratio],
                "ratio_last_to_first": ratio, "ratio_standard_error": 0.05,
                "layers": layers, "residual_sq_norm": sq,
            }  # fmt: skip

        return XiongResult(
            post=run(post_ratio, [1, 2], [post_sq, post_sq]),
            pre=run(pre_ratio, [0, 1, 2], [1.0, 1.7, 2.5]),
        )

    assert nb_claims.check_t1(xiong(1.0, 0.65)).verdict == claims.REPRODUCED
    assert nb_claims.check_t1(xiong(0.6, 0.65)).verdict == claims.PARTLY  # Post-LN falls too
    assert nb_claims.check_t1(xiong(0.6, 1.0)).verdict == claims.NOT_REPRODUCED
    assert nb_claims.check_t2(xiong(1.0, 0.65)).verdict == claims.REPRODUCED
    assert nb_claims.check_t2(xiong(1.0, 0.65, post_sq=1.0)).verdict == claims.NOT_REPRODUCED


def test_the_t7_check_can_fail():
    from lnpaper import claims
    from lnpaper.claims import transformer as nb_claims
    from lnpaper.experiments.transformer import ProjectionResult, SmoothnessResult

    exact = ProjectionResult([32, 6], 1e-14, 1e-14, 1e-14, 2e-4, [0.999] * 6, 2e-4)
    smooth = SmoothnessResult(
        norms=["none", "batchnorm"], lr=0.2, step_multipliers=[1.0], checkpoints=[0, 50, 100],
        loss_range={"none": [0.1, 1.0, 0.8], "batchnorm": [1.6, 0.05, 0.03]},
        grad_change={"none": [0.4, 6.0, 5.0], "batchnorm": [1.0, 1.1, 1.0]},
        beta_smoothness={"none": [1, 8, 9], "batchnorm": [3, 4, 4]},
        train_loss={"none": [2.3, 1.0, 0.5], "batchnorm": [2.3, 0.1, 0.05]},
    )  # fmt: skip
    assert nb_claims.check_t7(exact, smooth).verdict == claims.PARTLY
    wrong = ProjectionResult([32, 6], 1e-3, 1e-14, 1e-14, 2e-4, [0.999] * 6, 2e-4)
    assert nb_claims.check_t7(wrong, smooth).verdict == claims.NOT_REPRODUCED
    rough = SmoothnessResult(**{**vars(smooth), "grad_change": {"none": [1, 1, 1],
                                                                "batchnorm": [2, 2, 2]}})  # fmt: skip
    assert nb_claims.check_t7(exact, rough).verdict == claims.NOT_REPRODUCED
