"""Bad input is refused at the boundary, by name.

Every public constructor checks its arguments with `lnpaper.arguments`: the ValueError names the
argument and the value, nothing reaches torch's internals and nothing is coerced (True is not a
count of 1, 8.0 is not a size, a cap of True is not a cap of 1). numpy's integers are ints.
"""

import re

import numpy as np
import pytest
import torch

import lnpaper
from lnpaper import arguments
from lnpaper.data import digits
from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models.cnn import SmallCNN
from lnpaper.models.mlp import MLP, SeedBatchedMLP
from lnpaper.models.recurrent import SequenceClassifier, make_cell
from lnpaper.models.transformer import (
    Block,
    CausalSelfAttention,
    FeedForward,
    TransformerConfig,
    TransformerLM,
    make_norm,
)
from lnpaper.norms import Derf, DetachNorm


def refused(make, *names):
    """`make()` raises a ValueError whose message holds every one of `names`."""
    with pytest.raises(ValueError) as error:
        make()
    for name in names:
        assert name in str(error.value), (name, str(error.value))


# ---- the norms ----------------------------------------------------------------------------

SHAPED = {
    "LayerNorm": lnpaper.LayerNorm,
    "RMSNorm": lnpaper.RMSNorm,
    "DyT": lnpaper.DyT,
    "Derf": Derf,
    "DetachNorm": DetachNorm,
}


@pytest.mark.parametrize("shape", [8.0, True, (8, True), (8, 2.0), (), "8", None, (0,), -1])
@pytest.mark.parametrize("name", SHAPED)
def test_a_normalized_shape_that_is_not_positive_ints_is_refused(name, shape):
    refused(lambda: SHAPED[name](shape), "normalized_shape", repr(shape))


@pytest.mark.parametrize("name", SHAPED)
def test_numpy_integers_are_ints(name):
    norm = SHAPED[name](np.int64(8))
    assert norm.normalized_shape == (8,) and type(norm.normalized_shape[0]) is int
    assert SHAPED[name]((np.int32(2), np.int64(4))).normalized_shape == (2, 4)
    assert SHAPED[name](torch.Size([2, 4])).normalized_shape == (2, 4)


@pytest.mark.parametrize(
    "make, names",
    [
        (lambda: lnpaper.WeightNormLinear(0, 4), ("in_features", "0")),
        (lambda: lnpaper.WeightNormLinear(-1, 4), ("in_features", "-1")),
        (lambda: lnpaper.WeightNormLinear(4, 0), ("out_features", "0")),
        (lambda: lnpaper.WeightNormLinear(True, 4), ("in_features", "True")),
        (lambda: lnpaper.WeightNormLinear(4, 2.0), ("out_features", "2.0")),
        (lambda: lnpaper.WeightNormLinear(4, 2, bias=1), ("bias", "1")),
        (lambda: lnpaper.DyT(8, alpha_init=True), ("alpha_init", "True")),
        (lambda: lnpaper.DyT(8, alpha_init="0.5"), ("alpha_init", "'0.5'")),
        (lambda: Derf(8, alpha_init=True), ("alpha_init", "True")),
        (lambda: Derf(8, shift_init=True), ("shift_init", "True")),
        (lambda: Derf(8, shift_init=float("nan")), ("shift_init", "nan")),
        (lambda: lnpaper.BatchNorm(True), ("num_features", "True")),
        (lambda: lnpaper.BatchNorm(4.0), ("num_features", "4.0")),
        (lambda: lnpaper.RecurrentBatchNorm(4, max_steps=True), ("max_steps", "True")),
        (lambda: lnpaper.RecurrentBatchNorm(4, max_steps=3, bias=1), ("bias", "1")),
        (lambda: lnpaper.LayerNorm(8, elementwise_affine=1), ("elementwise_affine", "1")),
        (lambda: DetachNorm(8, elementwise_affine=None), ("elementwise_affine", "None")),
        (lambda: DetachNorm(8, detach="mean"), ("detach", "'mean'")),
        (lambda: lnpaper.RMSNorm(8, rounding=["ceil"]), ("rounding", "['ceil']")),
    ],
)
def test_bad_norm_arguments_are_refused_by_name(make, names):
    refused(make, *names)


def test_numpy_integers_are_accepted_as_sizes_everywhere():
    assert lnpaper.BatchNorm(np.int64(4)).num_features == 4
    linear = lnpaper.WeightNormLinear(np.int64(4), np.int64(2))
    assert (linear.in_features, linear.out_features) == (4, 2)
    assert type(linear.in_features) is int
    model = TransformerLM(
        TransformerConfig(np.int64(11), d_model=np.int64(16), n_layers=np.int64(1), n_heads=2)
    )
    assert model(torch.zeros(2, 4, dtype=torch.int64)).shape == (2, 4, 11)


# ---- the Transformer ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, names",
    [
        ({"d_ff": 0}, ("d_ff", "0")),
        ({"d_ff": -1}, ("d_ff", "-1")),
        ({"d_ff": 2.5}, ("d_ff", "2.5")),
        ({"d_ff": True}, ("d_ff", "True")),
        ({"qk_norm_span": "full"}, ("qk_norm_span", "'full'", "qk_norm is None")),
        ({"qk_norm": "l2norm"}, ("qk_norm", "'l2norm'")),
        ({"attn_logit_cap": True}, ("attn_logit_cap", "True")),
        ({"final_logit_cap": True}, ("final_logit_cap", "True")),
        ({"placement": "post", "norm": "identity", "deepnorm": True}, ("deepnorm", "'identity'")),
        ({"placement": "post", "norm": "identity", "admin": True}, ("admin", "'identity'")),
        ({"norm": "identity", "layer_scaling": True}, ("layer_scaling", "'identity'")),
        ({"norm": "dyt", "alpha_init": True}, ("alpha_init", "True")),
        ({"n_heads": 3}, ("n_heads (3)", "d_model (16)")),
        ({"max_len": 8.0}, ("max_len", "8.0")),
    ],
)
def test_bad_transformer_options_are_refused_by_name(options, names):
    refused(lambda: TransformerLM(TransformerConfig(11, d_model=16, n_layers=2, **options)), *names)


def test_the_transformer_defaults_still_build():
    model = TransformerLM(TransformerConfig(11, d_model=16, n_layers=2, n_heads=2))
    assert model.blocks[0].ffn.w1.out_features == 64  # d_ff = 4 d
    assert model.blocks[0].attn.qk_norm_span == "head"


@pytest.mark.parametrize(
    "make, names",
    [
        (lambda: Block(16, 3, 64, "pre", "layernorm"), ("n_heads (3)", "d_model (16)")),
        (lambda: Block(16, 2, 0, "pre", "layernorm"), ("d_ff", "0")),
        (lambda: Block(16, 2, 64, "post", "layernorm", admin=1), ("admin", "1")),
        (lambda: Block(16, 2, 64, "pre", "layernorm", input_scale=0.0), ("input_scale", "0.0")),
        (lambda: CausalSelfAttention(16, 3), ("n_heads (3)",)),
        (lambda: CausalSelfAttention(16, True), ("n_heads", "True")),
        (lambda: CausalSelfAttention(16, 2, logit_cap=True), ("attn_logit_cap", "True")),
        (lambda: FeedForward(16, 0), ("d_ff", "0")),
        (lambda: make_norm("layernorm", 16.0), ("normalized_shape", "16.0")),
        (lambda: make_norm("layernorm", 16, gain_offset=1), ("gain_offset", "1")),
        (lambda: make_norm(["layernorm"], 16), ("norm", "['layernorm']")),
    ],
)
def test_transformer_parts_refuse_bad_arguments_by_name(make, names):
    refused(make, *names)


# ---- recurrent cells, MLP, CNN -----------------------------------------------------------


@pytest.mark.parametrize(
    "make, names",
    [
        (lambda: make_cell("lstm", 3, 4, max_steps=5.0), ("max_steps", "5.0")),
        (lambda: make_cell("ln-gru", 3, 4, max_steps=0), ("max_steps", "0")),
        (lambda: make_cell("gru", 3, 4, max_steps=True), ("max_steps", "True")),
        (lambda: make_cell("bn-lstm", 3, 4, max_steps=True), ("max_steps", "True")),
        (lambda: make_cell("lstm", 3.0, 4), ("inputs", "3.0")),
        (lambda: make_cell(["lstm"], 3, 4), ("cell", "['lstm']")),
        (lambda: SequenceClassifier(make_cell("lstm", 3, 4), 10, every_step=1), ("every_step",)),
        (lambda: SequenceClassifier(torch.nn.Linear(3, 4), 10), ("cell", "Linear")),
        (lambda: MLP((64, True, 10)), ("sizes", "True")),
        (lambda: MLP((64.0, 10)), ("sizes", "64.0")),
        (lambda: MLP(64), ("sizes", "64")),
        (lambda: MLP(norm_logits=1), ("norm_logits", "1")),
        (lambda: MLP(norm=["layernorm"]), ("norm", "['layernorm']")),
        (lambda: SeedBatchedMLP((8, 4, 2), seeds=(0.5,)), ("seed", "0.5")),
        (lambda: SmallCNN(channels=(16, 32, 64)), ("channels", "(16, 32, 64)")),
        (lambda: SmallCNN(channels=(16, True)), ("channels", "True")),
        (lambda: SmallCNN(side=True), ("side", "True")),
    ],
)
def test_model_constructors_refuse_bad_arguments_by_name(make, names):
    refused(make, *names)


def test_make_cell_keeps_max_steps_for_the_batchnorm_lstm():
    cell = make_cell("bn-lstm", 3, 4, max_steps=np.int64(5))
    assert cell.norm_c.max_steps == 5


# ---- data ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, names",
    [
        (lambda: SyntheticLanguage(branching=True), ("branching", "True")),
        (lambda: SyntheticLanguage(vocab_size=16.0), ("vocab_size", "16.0")),
        (lambda: SyntheticLanguage(vocab_size=True), ("vocab_size", "True")),
        (lambda: SyntheticLanguage(seed=1.5), ("seed", "1.5")),
        (lambda: SyntheticLanguage().sample(True, 8, 0), ("n", "True")),
        (lambda: SyntheticLanguage().sample(4, 8.0, 0), ("length", "8.0")),
        (lambda: SyntheticLanguage().sample(4, 8, 0.5), ("seed", "0.5")),
        (lambda: SyntheticLanguage().entropy_floor(8.0), ("length", "8.0")),
        (lambda: digits.load("train", permuted=1), ("permuted", "1")),
        (lambda: digits.load(["train"]), ("split", "['train']")),
        (lambda: digits.load("train", form="grid"), ("form", "'grid'")),
        (lambda: digits.digit_stream("train", count=2, length=3, seed=0.5), ("seed", "0.5")),
        (lambda: digits.digit_stream("train", count=True, length=3, seed=0), ("count", "True")),
    ],
)
def test_data_constructors_refuse_bad_arguments_by_name(make, names):
    refused(make, *names)


def test_data_accepts_numpy_integers():
    language = SyntheticLanguage(vocab_size=np.int64(16), branching=np.int64(3), seed=np.int64(0))
    assert torch.equal(language.sample(np.int64(4), np.int64(8), np.int64(1)),
                       SyntheticLanguage().sample(4, 8, 1))  # fmt: skip


# ---- the argument checks themselves ------------------------------------------------------


@pytest.mark.parametrize("value", [True, False, 1.0, "1", None, np.bool_(True)])
def test_check_positive_int_refuses_what_is_not_an_int(value):
    with pytest.raises(ValueError, match=re.escape(f"count must be a positive int, got {value!r}")):
        arguments.check_positive_int("count", value)


def test_check_positive_int_returns_a_python_int():
    assert type(arguments.check_positive_int("count", np.int64(3))) is int


@pytest.mark.parametrize("value", [1, 0, None, "yes", np.bool_(True)])
def test_check_flag_accepts_only_bools(value):
    with pytest.raises(ValueError, match="flag must be True or False"):
        arguments.check_flag("flag", value)
