"""S language models of one configuration stepped as one: every seed's weights stacked on a leading
axis, and `TransformerLM`'s forward written once over the stack with batched matrix products.

Why: at notebook 06's size (d 64, batch 16 x 16 tokens) a matrix product is 256 x 64 by 64 x 64,
and a step costs mostly the overhead of launching each small operation. `torch.func.vmap` over
`functional_call` (`lnpaper.train.population.StackedModels`) still launches the one-run
operations one by one, with the copies its batching rules make. Here the S seeds' rows go through
one `baddbmm` per weight matrix (the attention's three input projections through a single one),
each head's attention reads strided views of that product without copying it, and each norm is
one kernel for every seed, so a population step is a few large kernels. Each seed reads only
its own slice of every tensor, so seed i's logits, loss and gradients are those of its own
`TransformerLM` run alone, up to the roundoff of a differently ordered sum
(tests/test_stacked_transformer.py states the bounds).

`FusedLanguageModels(models)` has the interface of `StackedModels`: `params` and `buffers`, the
dicts `torch.func.stack_module_state` makes (the same names, each an S x ... leaf tensor, so
optimizers, per-run learning rates and monitors that read parameters by name work unchanged),
`size`, `logits(tokens, shared)`, `losses(tokens, shared)` and `model(index, like)`. For monitors
that need the inside of the stack it adds `streams` (the residual stream entering each block and
the final norm) and `attention_logits` (a block's logits z_ij), for every seed at once.

Every option of `TransformerConfig` is read from the first model's modules (placements, norms and
their eps, caps, QK-norms, DeepNorm's alpha, Admin's omega, LayerNorm Scaling, ReZero's gates,
learned or fixed embedding scales, (1 + w) gains), and so are `lnpaper.models.zero_mean`'s
rewrites (`BiasedRMSNorm`, `Centered` writers). `COMPUTED_FIELDS` lists the config's fields this
forward computes: a model whose config sets any other field, a module or a parametrization the
forward does not know is refused when the population is built (`fused_unsupported` says why),
never computed wrongly; tests/test_stacked_transformer.py fails when the config gains a field
that is not listed. Not reproduced: the one-run norms' rescue of a row whose squares overflow float32
(values near 1e19), which vmap skips as well.
"""

import copy
import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import stack_module_state
from torch.nn.utils import parametrize
from torch.nn.utils.parametrize import ParametrizationList

from lnpaper.models.transformer import TransformerLM
from lnpaper.models.transformer_blocks import (
    Block,
    CausalSelfAttention,
    FeedForward,
    UnitOffset,
    soft_cap,
)
from lnpaper.models.zero_mean import BiasedRMSNorm, Centered
from lnpaper.norms import Derf, DetachNorm, DyT, LayerNorm, RMSNorm

NORM_KINDS = (LayerNorm, RMSNorm, BiasedRMSNorm, DyT, Derf, DetachNorm, nn.Identity)
MODULE_KINDS = (
    *NORM_KINDS,
    TransformerLM, Block, CausalSelfAttention, FeedForward, nn.Linear, nn.Embedding,
    nn.ModuleList, nn.ModuleDict, ParametrizationList, UnitOffset, Centered,
)  # fmt: skip
DTYPES = (torch.float32, torch.float64)
# The TransformerConfig fields whose effect `_forward` computes: the sizes from the tensors, the rest
# from the template's modules and attributes (the one-run model's names in the comments below).
COMPUTED_FIELDS = frozenset({
    "vocab_size", "d_model", "n_layers", "n_heads", "d_ff", "max_len",  # tensor shapes
    "placement",  # Block.placement, one branch each in _block
    "norm", "gain_offset", "alpha_init",  # the norm modules' kinds, UnitOffset, alpha tensors
    "init",  # weights only, and the embed_scale of T-Fixup in _embed
    "embed_norm", "scale_embedding", "learned_embed_scale",  # _embed
    "attn_logit_cap", "final_logit_cap",  # _scores, _forward
    "qk_norm", "qk_norm_span",  # _queries_keys_values, _scores
    "deepnorm", "deepnorm_parts",  # Block.residual_scale in _block; beta is in the weights
    "admin", "layer_scaling",  # the omega tensors and Block.input_scale in _block
    "rezero",  # the gate tensors in _attention and _feed_forward
})  # fmt: skip


def _kind(module: nn.Module) -> type:
    """The class a module was built as: torch.nn.utils.parametrize swaps in a subclass."""
    return type(module).__bases__[0] if parametrize.is_parametrized(module) else type(module)


def _settings(module: nn.Module) -> dict:
    """A module's plain attributes (placement, eps, caps, scales...): what its forward reads."""
    plain = (bool, int, float, str, tuple, type(None))
    return {k: v for k, v in vars(module).items() if not k.startswith("_") and isinstance(v, plain)}


def fused_unsupported(models: list) -> str | None:
    """Why `models` cannot be one fused population, or None when they can: one configuration of
    `TransformerLM` (or its zero-mean rewrites) in float32 or float64, built of modules the fused
    forward knows."""
    if not models:
        return "need at least one model"
    first = models[0]
    if not isinstance(first, TransformerLM):
        return f"models must be TransformerLM, got {type(first).__name__}"
    # every model's config: fields that set only weights (alpha_init, say) may differ between them
    unknown = [
        field.name
        for model in models
        if isinstance(model, TransformerLM)
        for field in dataclasses.fields(model.config)
        if field.name not in COMPUTED_FIELDS and getattr(model.config, field.name) != field.default
    ]
    if unknown:
        return f"the fused forward does not compute the config's {sorted(set(unknown))}"
    for name, module in first.named_modules():
        if _kind(module) not in MODULE_KINDS:
            return f"module {name or 'model'!r} is a {_kind(module).__name__}, not fused here"
        if isinstance(module, ParametrizationList) and hasattr(module, "original0"):
            return f"module {name!r} is a parametrization with several stored tensors"
    dtypes = {p.dtype for p in first.parameters()}
    if len(dtypes) != 1 or next(iter(dtypes)) not in DTYPES:
        return f"parameters must all be float32 or all float64, got {sorted(map(str, dtypes))}"
    reference = [(name, _kind(m), _settings(m)) for name, m in first.named_modules()]
    for index, model in enumerate(models[1:], start=1):
        if not isinstance(model, TransformerLM):
            return f"models must be TransformerLM, got {type(model).__name__} at {index}"
        mine = [(name, _kind(m), _settings(m)) for name, m in model.named_modules()]
        for (name, kind, settings), (other, other_kind, other_settings) in zip(
            reference, mine, strict=False
        ):
            if (name, kind) != (other, other_kind) or settings != other_settings:
                changed = sorted(k for k in settings.keys() | other_settings.keys()
                                 if settings.get(k) != other_settings.get(k))  # fmt: skip
                return (f"model {index} differs from model 0 in module {name or 'model'!r} "
                        f"({changed or other_kind.__name__})")  # fmt: skip
        if len(mine) != len(reference):
            return f"model {index} has {len(mine)} modules, model 0 {len(reference)}"
    return None


class FusedLanguageModels:
    """S `TransformerLM`s of one configuration as stacked tensors, and one batched forward."""

    def __init__(self, models: list[nn.Module]):
        reason = fused_unsupported(models)
        if reason is not None:
            raise ValueError(f"models cannot be fused: {reason}")
        self.params, self.buffers = stack_module_state(models)
        self.template = copy.deepcopy(models[0]).to("meta")  # the configuration, no values
        self.size = len(models)

    # ---- the interface of StackedModels ----------------------------------------------------

    def logits(self, tokens: torch.Tensor, shared: bool = False) -> torch.Tensor:
        """Logits of every seed's model, S x B x T x vocab: tokens S x B x T (or B x T for all
        if `shared`)."""
        return self._forward(self._tokens(tokens, shared))

    def losses(self, tokens: torch.Tensor, shared: bool = False) -> torch.Tensor:
        """Next-token cross-entropy per seed (nats per token), S values; tokens S x B x T+1 (or
        B x T+1 shared)."""
        tokens = self._tokens(tokens, shared)
        logits = self._forward(tokens[..., :-1])
        per_token = F.cross_entropy(
            logits.flatten(0, 2), tokens[..., 1:].flatten(), reduction="none"
        )  # mirrors next_token_loss, per seed
        return per_token.view(self.size, -1).mean(dim=1)

    def model(self, index: int, like: nn.Module) -> nn.Module:
        """Seed `index`'s model as an ordinary module (a copy of `like` with its weights)."""
        single = copy.deepcopy(like)
        state = {name: value[index].detach().clone() for name, value in self.params.items()}
        state.update({name: value[index].clone() for name, value in self.buffers.items()})
        single.load_state_dict(state)
        return single

    # ---- what monitors read from inside the stack -----------------------------------------

    def streams(self, tokens: torch.Tensor, shared: bool = False) -> list[torch.Tensor]:
        """x_0..x_L, the residual stream entering each block and then the final norm (or the
        head), each S x B x T x d."""
        kept = []
        self._forward(self._tokens(tokens, shared), streams=kept)
        return kept

    def attention_logits(
        self, tokens: torch.Tensor, layer: int = 0, shared: bool = False
    ) -> torch.Tensor:
        """Block `layer`'s attention logits z_ij, S x B x heads x T x T, before the causal mask:
        `TransformerLM.attention_logits` for every seed."""
        if not 0 <= layer < self.template.n_layers:
            raise ValueError(f"layer must lie in 0..{self.template.n_layers - 1}, got {layer}")
        tokens = self._tokens(tokens, shared)
        p = self._resolved()
        x = self._embed(p, tokens)
        for index, block in enumerate(self.template.blocks[:layer]):
            x = self._block(p, f"blocks.{index}", block, x, tokens.shape[2])
        block, prefix = self.template.blocks[layer], f"blocks.{layer}"
        x = self._attention_input(p, prefix, block, x)  # mirrors Block.attention_input
        q, k, _ = self._queries_keys_values(p, f"{prefix}.attn", block.attn, x, tokens.shape[2])
        z = [self._scores(p, f"{prefix}.attn", block.attn, *qk) for qk in zip(q, k, strict=True)]
        return torch.stack(z, dim=2)

    # ---- the forward ----------------------------------------------------------------------

    def _tokens(self, tokens: torch.Tensor, shared: bool) -> torch.Tensor:
        """The token ids as S x B x T, checked as `TransformerLM.embed` checks them."""
        if not isinstance(shared, bool):
            raise ValueError(f"shared must be True or False, got {shared!r}")
        wanted = 2 if shared else 3
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.int64:
            raise ValueError(f"tokens must be an int64 tensor, got {tokens!r:.60}")
        if tokens.ndim != wanted or (not shared and tokens.shape[0] != self.size):
            layout = "(batch, length)" if shared else f"({self.size} runs, batch, length)"
            raise ValueError(
                f"tokens must have shape {layout} with shared={shared}, got {tuple(tokens.shape)}"
            )
        vocab = self.template.vocab_size
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab):
            raise ValueError(f"token ids must lie in 0..{vocab - 1}")
        return tokens.expand(self.size, *tokens.shape) if shared else tokens

    def _resolved(self) -> dict:
        """Every tensor the forward reads, by the name its module reads it under: a
        parametrized tensor's stored value turned into what the module computes with (g = 1 + w
        for `UnitOffset`, w~ - mean(w~) for `Centered`), seed axis first."""
        tensors = {}
        for name, value in {**self.params, **self.buffers}.items():
            owner, found, rest = f".{name}".rpartition(".parametrizations.")
            if not found:
                tensors[name] = value
                continue
            owner, attribute = owner[1:], rest.removesuffix(".original")
            module = self.template.get_submodule(owner)
            for step in module.parametrizations[attribute]:
                if isinstance(step, UnitOffset):
                    value = 1 + value
                else:  # Centered: the mean over its dim of one seed's tensor, dim + 1 here
                    dim = step.dim + 1 if step.dim >= 0 else step.dim
                    value = value - value.mean(dim=dim, keepdim=True)
            tensors[f"{owner}.{attribute}" if owner else attribute] = value
        return tensors

    def _forward(self, tokens: torch.Tensor, streams: list | None = None) -> torch.Tensor:
        # mirrors TransformerLM.forward
        model, p = self.template, self._resolved()
        batch, length = tokens.shape[1:]
        x = self._embed(p, tokens)
        for index, block in enumerate(model.blocks):
            if streams is not None:
                streams.append(x.view(self.size, batch, length, -1))
            x = self._block(p, f"blocks.{index}", block, x, length)
        if streams is not None:
            streams.append(x.view(self.size, batch, length, -1))
        x = self._norm(p, "final_norm", model.final_norm, x)
        logits = _linear(p, "head", x).view(self.size, batch, length, -1)
        if model.final_logit_cap is not None:
            logits = soft_cap(logits, model.final_logit_cap)
        return logits

    def _embed(self, p: dict, tokens: torch.Tensor) -> torch.Tensor:
        """x_0 of every seed, S x (B T) x d: its rows are seed s's tokens, batch-major."""
        # mirrors TransformerLM.embed
        model = self.template
        if not 1 <= tokens.shape[2] <= model.max_len:
            raise ValueError(f"sequence length {tokens.shape[2]} is not in 1..{model.max_len}")
        table = p["token_embedding.weight"]  # S x vocab x d
        first_row = torch.arange(self.size, device=tokens.device) * table.shape[1]
        x = F.embedding(tokens + first_row.view(-1, 1, 1), table.flatten(0, 1))  # S x B x T x d
        if model.embed_scale != 1.0:  # T-Fixup's and Gemma's sqrt(d)
            x = model.embed_scale * x
        if model.learned_embed_scale is not None:
            x = _per_seed(p["learned_embed_scale"], x) * x
        x = x + p["position_embedding"][:, None, : tokens.shape[2]]
        x = self._norm(p, "embed_norm", model.embed_norm, x)
        return x.flatten(1, 2)

    def _block(self, p: dict, prefix: str, block: Block, x: torch.Tensor, length: int):
        # mirrors Block.forward, one branch per placement
        def attn(x):
            return self._attention(p, f"{prefix}.attn", block.attn, x, length)

        def ffn(x):
            return self._feed_forward(p, f"{prefix}.ffn", block.ffn, x)

        def norm(slot, x):
            return self._norm(p, f"{prefix}.{slot}", getattr(block, slot), x)

        def stream(x, omega):  # mirrors Block._stream: x, alpha x, or x * omega
            if omega is not None:
                return x * p[f"{prefix}.{omega}"][:, None]
            return x if block.residual_scale == 1.0 else block.residual_scale * x

        def scaled(x):  # mirrors Block._scaled: LayerNorm Scaling's 1 / sqrt(l)
            return x if block.input_scale == 1.0 else x * block.input_scale

        attn_omega = "attn_omega" if block.attn_omega is not None else None
        ffn_omega = "ffn_omega" if block.ffn_omega is not None else None
        if block.placement == "post":  # x_{l+1} = Norm(x_l + F(x_l)), or alpha x_l, or x_l omega
            x = norm("attn_out_norm", stream(x, attn_omega) + attn(x))
            return norm("ffn_out_norm", stream(x, ffn_omega) + ffn(x))
        if block.placement == "pre":  # x_{l+1} = x_l + F(Norm(x_l)), Norm's output times 1/sqrt(l)
            x = x + attn(scaled(norm("attn_in_norm", x)))
            return x + ffn(scaled(norm("ffn_in_norm", x)))
        if block.placement == "peri":  # x_{l+1} = x_l + Norm(F(Norm(x_l)))
            x = x + norm("attn_out_norm", attn(norm("attn_in_norm", x)))
            return x + norm("ffn_out_norm", ffn(norm("ffn_in_norm", x)))
        if block.placement == "reordered":  # x_{l+1} = x_l + Norm(F(x_l))
            x = x + norm("attn_out_norm", attn(x))
            return x + norm("ffn_out_norm", ffn(x))
        x = x + attn(x)  # none: x_{l+1} = x_l + F(x_l)
        return x + ffn(x)

    def _attention_input(self, p: dict, prefix: str, block: Block, x: torch.Tensor):
        # mirrors Block.attention_input
        if block.attn_in_norm is None:
            return x
        x = self._norm(p, f"{prefix}.attn_in_norm", block.attn_in_norm, x)
        return x if block.input_scale == 1.0 else x * block.input_scale

    def _queries_keys_values(self, p, prefix, attn: CausalSelfAttention, x, length: int):
        """Q, K, V as lists over the heads of S x B x T x d_head views (no copies: a batched
        product reads a strided view as it is, and the backward of `split` is one `cat`),
        QK-normalized if the model is."""
        # mirrors CausalSelfAttention.scores up to the dot product
        size, rows, d = x.shape
        names = [f"{prefix}.{name}" for name in ("query", "key", "value")]
        weight = torch.cat([p[f"{name}.weight"] for name in names], dim=1)  # S x 3d x d
        bias = torch.cat([p[f"{name}.bias"] for name in names], dim=1)
        q, k, v = torch.baddbmm(bias[:, None], x, weight.transpose(1, 2)).split(d, dim=-1)
        if attn.q_norm is not None and attn.qk_norm_span == "full":  # OLMo 2: before the split
            q = self._norm(p, f"{prefix}.q_norm", attn.q_norm, q)
            k = self._norm(p, f"{prefix}.k_norm", attn.k_norm, k)

        def heads(t):  # S x (B T) x d -> one S x B x T x d_head view per head
            return [
                h.view(size, rows // length, length, -1) for h in t.split(d // attn.n_heads, -1)
            ]

        q, k, v = heads(q), heads(k), heads(v)
        if attn.q_norm is not None and attn.qk_norm_span == "head":  # per head, over d_head
            q = [self._norm(p, f"{prefix}.q_norm", attn.q_norm, h) for h in q]
            k = [self._norm(p, f"{prefix}.k_norm", attn.k_norm, h) for h in k]
        return q, k, v

    def _scores(self, p, prefix, attn: CausalSelfAttention, q, k) -> torch.Tensor:
        """One head's z_ij before the mask, S x B x T x T, from its q and k (S x B x T x d_head)."""
        # mirrors CausalSelfAttention.scores from the dot product on
        if attn.qk_scale is not None:  # g * <q / ||q||, k / ||k||>
            unit_q, unit_k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
            z = _per_seed(p[f"{prefix}.qk_scale"], q) * unit_q @ unit_k.transpose(-2, -1)
        else:  # q.k / sqrt(d_head)
            z = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if attn.logit_cap is not None:  # Gemma 2's soft cap, before the mask
            z = soft_cap(z, attn.logit_cap)
        return z

    def _attention(self, p, prefix, attn: CausalSelfAttention, x, length: int) -> torch.Tensor:
        # mirrors CausalSelfAttention.forward, written out for every option (the one-run model's
        # own path when the logits are normalized or capped): at T = 16, torch's fused attention
        # kernel is the slower of the two
        size, rows, d = x.shape
        future = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
        mixed = []
        for q, k, v in zip(*self._queries_keys_values(p, prefix, attn, x, length), strict=True):
            z = self._scores(p, prefix, attn, q, k)
            mixed.append(z.masked_fill(future, -math.inf).softmax(dim=-1) @ v)
        out = _linear(p, f"{prefix}.out", torch.cat(mixed, dim=-1).view(size, rows, d))
        return out if attn.gate is None else _per_seed(p[f"{prefix}.gate"], out) * out

    def _feed_forward(self, p, prefix, ffn: FeedForward, x) -> torch.Tensor:
        # mirrors FeedForward.forward
        # in place: baddbmm's backward reads its inputs, not the output the ReLU overwrites
        out = _linear(p, f"{prefix}.w2", F.relu(_linear(p, f"{prefix}.w1", x), inplace=True))
        return out if ffn.gate is None else _per_seed(p[f"{prefix}.gate"], out) * out

    def _norm(self, p: dict, prefix: str, norm: nn.Module | None, x: torch.Tensor):
        """The norm module `norm` of the one-run model (named `prefix`) on x, S x ... x width,
        each seed with its own gain, bias and alpha."""
        kind = None if norm is None else _kind(norm)
        if kind in (None, nn.Identity):
            return x
        width = x.shape[-1]

        def affine(y):  # g * y + b, or g * y, or y
            gain, bias = p.get(f"{prefix}.weight"), p.get(f"{prefix}.bias")
            if gain is None:
                return y
            if bias is None:
                return y * _per_seed(gain, y)
            return torch.addcmul(_per_seed(bias, y), y, _per_seed(gain, y))

        if kind is LayerNorm:  # mirrors LayerNorm.forward, torch's one-kernel statistics
            return affine(F.layer_norm(x, (width,), eps=norm.eps))
        if kind in (RMSNorm, BiasedRMSNorm):  # mirrors RMSNorm.forward (and pRMSNorm's k units)
            eps = torch.finfo(x.dtype).eps if norm.eps is None else norm.eps
            if norm.n_stat == width:
                return affine(F.rms_norm(x, (width,), eps=eps))
            mean_square = x[..., : norm.n_stat].pow(2).mean(dim=-1, keepdim=True)
            return affine(x * torch.rsqrt(mean_square + eps))
        if kind is DyT:  # mirrors DyT.forward: tanh(alpha x)
            return affine(torch.tanh(_per_seed(p[f"{prefix}.alpha"], x) * x))
        if kind is Derf:  # mirrors Derf.forward: erf(alpha x + s)
            alpha, shift = p[f"{prefix}.alpha"], p[f"{prefix}.shift"]
            return affine(torch.erf(_per_seed(alpha, x) * x + _per_seed(shift, x)))
        # DetachNorm: mirrors its standardize, the detached statistics constants to backward
        mu = x.mean(dim=-1, keepdim=True)
        if "mean" in norm.detach:
            mu = mu.detach()
        centered = x - mu
        std = (centered.pow(2).mean(dim=-1, keepdim=True) + norm.eps).sqrt()
        if "std" in norm.detach:
            std = std.detach()
        return affine(centered / std)


def _linear(p: dict, name: str, x: torch.Tensor) -> torch.Tensor:
    """nn.Linear `name` of every seed: x (S, N, in) @ W^T + b, W (S, out, in), b (S, out)."""
    return torch.baddbmm(p[f"{name}.bias"][:, None], x, p[f"{name}.weight"].transpose(1, 2))


def _per_seed(value: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A per-seed tensor (S x feature..., or S for a scalar) shaped to broadcast against `like`
    (S x ... x feature): its seed axis first, its own axes last."""
    middle = like.ndim - value.ndim
    return value.view(value.shape[0], *([1] * middle), *value.shape[1:])
