"""The redundant mean (Jiang et al., NeurIPS 2023, "Pre-RMSNorm and Pre-CRMSNorm Transformers").

Notebook 07. In a Pre-LN Transformer nothing reads the residual stream except a LayerNorm (each
block's two input norms and the final norm), and LayerNorm ignores its input's mean:
LN(x + c 1) = LN(x). So the mean of the stream over the hidden axis is computed, carried and then
thrown away. Two exact rewrites follow.

1. Keep the stream zero-mean. Everything that writes to it gets its mean over the hidden axis
   removed: each token embedding and position embedding row, e -> e - mean(e), and each residual
   branch's output projection (W^O of attention, W^(2) of the feed-forward network), whose output
   y = z W^T + c has mean (z W^T + c) 1 / d over the hidden axis; subtracting the mean over the
   output axis from every column of W^T and from c, W -> W - 1 mean_rows(W), c -> c - mean(c),
   makes every branch output zero-mean for every z. The stream then has mean 0 at every depth, and
   since only LayerNorms read it, the model's outputs are unchanged.
2. On a zero-mean input LayerNorm is RMSNorm: mu = 0 and sigma^2 = (1/d) sum_i x_i^2, so
   g (x - mu) / sqrt(sigma^2 + eps) + b = g x / RMS(x) + b with the same eps. RMSNorm has no bias; b
   folds into the linear layers that read the norm's output: (r + b) W^T + c = r W^T + (W b + c).
   With `layer_scaling` a block's input norms' outputs are multiplied by 1 / sqrt(l) before the
   linear layers read them, so the bias folds in scaled: (r + b) / sqrt(l) W^T + c =
   r / sqrt(l) W^T + (W b / sqrt(l) + c).

A norm on the embedding output (`embed_norm`) is refused: it writes g * x_hat + b into the stream,
whose mean over the hidden axis, sum_i g_i x_hat_i / d + mean(b), depends on the token once the gain
g has trained away from a constant, and no change of the writers' weights removes it.

`zero_mean_rmsnorm(model)` does both on a copy and returns an RMSNorm model with the same outputs
(tested in float64 in tests/test_zero_mean.py). The equivalence is exact at one set of weights;
whether it survives training (the centered gradients differ from the original's) is an experiment.
"""

import copy

import torch
from torch import nn

from lnpaper.models.transformer import TransformerLM
from lnpaper.norms import LayerNorm, RMSNorm


def _check_convertible(model: TransformerLM) -> None:
    if not isinstance(model, TransformerLM):
        raise ValueError(f"expected a TransformerLM, got {type(model).__name__}")
    if model.placement != "pre" or model.norm != "layernorm":
        raise ValueError(
            "the zero-mean rewrite needs a Pre-LN model (placement='pre', norm='layernorm'), "
            f"got placement={model.placement!r}, norm={model.norm!r}"
        )
    norms = [m for m in model.modules() if isinstance(m, LayerNorm)]
    if any(not m.elementwise_affine for m in norms):
        raise ValueError("the zero-mean rewrite expects LayerNorms with a gain and a bias")
    if model.embed_norm is not None:
        raise ValueError(
            "the zero-mean rewrite cannot take embed_norm=True: the embedding norm writes "
            "g * x_hat + b into the stream, whose mean over the hidden axis depends on the token "
            "once g is not constant, so the stream cannot be made zero-mean"
        )


# Notebook 07 prints center_residual_writers and _fold_bias: their lines stay within 88 columns.
@torch.no_grad()
def center_residual_writers(model: TransformerLM) -> TransformerLM:
    """Step 1, in place: every write to the residual stream has mean 0 over the hidden
    axis."""
    _check_convertible(model)
    for table in (model.token_embedding.weight, model.position_embedding):
        table.sub_(table.mean(dim=1, keepdim=True))  # each row e -> e - mean(e)
    for block in model.blocks:
        # nn.Linear: weight is d_out x d_in
        for projection in (block.attn.out, block.ffn.w2):
            projection.weight.sub_(projection.weight.mean(dim=0, keepdim=True))
            projection.bias.sub_(projection.bias.mean())
    return model


def _as_rmsnorm(layer_norm: LayerNorm) -> RMSNorm:
    rms = RMSNorm(layer_norm.normalized_shape, eps=layer_norm.eps)  # the same eps, inside the sqrt
    rms = rms.to(layer_norm.weight.dtype)
    with torch.no_grad():
        rms.weight.copy_(layer_norm.weight)  # the gain g carries over
    return rms


@torch.no_grad()
def _fold_bias(bias: torch.Tensor, readers: list[nn.Linear]) -> None:
    """c -> c + W b in each linear layer that reads a norm's output."""
    for linear in readers:
        linear.bias.add_(linear.weight @ bias)


def zero_mean_rmsnorm(model: TransformerLM) -> TransformerLM:
    """A copy of a Pre-LN `model` rewritten with a zero-mean residual stream and RMSNorm in place of
    every LayerNorm (the norms' biases folded into the layers that read them); same outputs."""
    _check_convertible(model)
    converted = center_residual_writers(copy.deepcopy(model))
    for block in converted.blocks:
        attention = block.attn
        # the norm's output reaches the linear layers times input_scale (1 / sqrt(l) with
        # layer_scaling, else 1), and so does its bias: c -> c + W b * input_scale
        attn_bias = block.attn_in_norm.bias * block.input_scale
        ffn_bias = block.ffn_in_norm.bias * block.input_scale
        _fold_bias(attn_bias, [attention.query, attention.key, attention.value])
        _fold_bias(ffn_bias, [block.ffn.w1])
        block.attn_in_norm = _as_rmsnorm(block.attn_in_norm)
        block.ffn_in_norm = _as_rmsnorm(block.ffn_in_norm)
    _fold_bias(converted.final_norm.bias, [converted.head])
    converted.final_norm = _as_rmsnorm(converted.final_norm)
    converted.norm = "rmsnorm"
    return converted
