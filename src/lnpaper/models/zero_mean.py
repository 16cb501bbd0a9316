"""The redundant mean (Jiang et al., NeurIPS 2023, "Pre-RMSNorm and Pre-CRMSNorm Transformers").

Notebook 10. In a Pre-LN Transformer nothing reads the residual stream except a LayerNorm (each
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
whether it survives training is an experiment (`zero_mean_drift`, `constrained_drift`). Two options
take the rewrite apart for that (notebook 10, E1c):

- `keep_writers_centered`: every writer is stored free, w~, and used centered, w = w~ - mean(w~)
  (`Centered`, a parametrization), so the stream stays zero-mean whatever training does, and the
  gradient w~ receives is the centered gradient. Without it the writers are centered once and then
  train freely.
- `zero_mean_rmsnorm(model, fold_biases=False)`: each LayerNorm becomes g * x / RMS(x) + b
  (`BiasedRMSNorm`), keeping its bias b as a parameter of its own instead of folding it into the
  readers' biases.
"""

import copy
import dataclasses

import torch
from torch import nn
from torch.nn.utils import parametrize

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


# Notebook 10 prints center_residual_writers and _fold_bias: their lines stay within 88 columns.
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


class Centered(nn.Module):
    """The parametrization w = w~ - mean(w~) over `dim`: the module stores w~ and computes with w,
    whose mean over `dim` is 0 whatever w~ is; the gradient w~ gets is the centered gradient."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, stored: torch.Tensor) -> torch.Tensor:
        return stored - stored.mean(dim=self.dim, keepdim=True)


def _writers(model: TransformerLM):
    """(module, tensor name, axis its mean is taken over) for every write to the stream."""
    yield model.token_embedding, "weight", 1  # each row e -> e - mean(e)
    yield model, "position_embedding", 1
    for block in model.blocks:
        for projection in (block.attn.out, block.ffn.w2):
            yield projection, "weight", 0  # d_out x d_in: over the output axis
            yield projection, "bias", 0


@torch.no_grad()
def keep_writers_centered(models: list[TransformerLM]) -> list[TransformerLM]:
    """Copies of rewritten `models` (writers already centered) whose writers are computed from
    centered weights (`Centered`), so each stream stays zero-mean through training. torch makes a
    new module class for every parametrized module, and a population must share one class: the
    copies are made from one parametrized template and given each model's weights."""
    template = copy.deepcopy(models[0])
    for module, name, dim in _writers(template):
        parametrize.register_parametrization(module, name, Centered(dim))
    kept = []
    for model in models:
        copied = copy.deepcopy(template)
        copied.load_state_dict(model.state_dict(), strict=False)  # all but the writers
        for (target, name, _), (source, _, _) in zip(
            _writers(copied), _writers(model), strict=True
        ):
            getattr(target.parametrizations, name).original.copy_(getattr(source, name))
        kept.append(copied)
    return kept


class BiasedRMSNorm(RMSNorm):
    """g * x / RMS(x) + b: RMSNorm that keeps LayerNorm's bias b as its own parameter."""

    def __init__(self, normalized_shape, eps: float | None = None):
        super().__init__(normalized_shape, eps=eps)
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        return super().forward(a) + self.bias


def _as_rmsnorm(layer_norm: LayerNorm, keep_bias: bool = False) -> RMSNorm:
    # the same eps, inside the sqrt
    kind = BiasedRMSNorm if keep_bias else RMSNorm
    rms = kind(layer_norm.normalized_shape, eps=layer_norm.eps).to(layer_norm.weight.dtype)
    with torch.no_grad():
        rms.weight.copy_(layer_norm.weight)  # the gain g carries over
        if keep_bias:
            rms.bias.copy_(layer_norm.bias)
    return rms


@torch.no_grad()
def _fold_bias(bias: torch.Tensor, readers: list[nn.Linear]) -> None:
    """c -> c + W b in each linear layer that reads a norm's output."""
    for linear in readers:
        linear.bias.add_(linear.weight @ bias)


def zero_mean_rmsnorm(model: TransformerLM, *, fold_biases: bool = True) -> TransformerLM:
    """A copy of a Pre-LN `model` rewritten with a zero-mean residual stream and RMSNorm in place of
    every LayerNorm (the norms' biases folded into the layers that read them); same outputs.
    `fold_biases=False`: each norm keeps its bias (`BiasedRMSNorm`) and no reader changes."""
    _check_convertible(model)
    converted = center_residual_writers(copy.deepcopy(model))
    if not fold_biases:
        for block in converted.blocks:
            block.attn_in_norm = _as_rmsnorm(block.attn_in_norm, keep_bias=True)
            block.ffn_in_norm = _as_rmsnorm(block.ffn_in_norm, keep_bias=True)
        converted.final_norm = _as_rmsnorm(converted.final_norm, keep_bias=True)
        converted.norm = "rmsnorm"
        converted.config = dataclasses.replace(converted.config, norm="rmsnorm")
        return converted
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
    converted.config = dataclasses.replace(converted.config, norm="rmsnorm")
    return converted
