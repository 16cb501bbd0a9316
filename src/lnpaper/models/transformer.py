"""A small decoder-only Transformer language model whose normalization can be moved and swapped.

Notebook 05. Every block has two sublayers F, causal self-attention and a ReLU feed-forward network
F(x) = ReLU(x W^(1) + b^(1)) W^(2) + b^(2), each wrapped in a residual connection. Where the norm sits
is the `placement`:

- `post` (Vaswani et al. 2017):  x_{l+1} = Norm(x_l + F(x_l))
- `pre` (analysed by Xiong et al. 2020, in use before them):  x_{l+1} = x_l + F(Norm(x_l)), plus a
  final Norm before the head
- `peri` (Kim et al. 2025):  x_{l+1} = x_l + Norm(F(Norm(x_l))), plus a final Norm. The same block
  is the "sandwich" of CogView and Gemma 2; what tells Peri-LN's model from Gemma 2's is not the
  block but the options below (`peri_ln_model`, `gemma2_model`)
- `reordered` (OLMo 2's "reordered norm"):  x_{l+1} = x_l + Norm(F(x_l)), the norm on the
  sublayer's output only, plus a final Norm
- `none`:  x_{l+1} = x_l + F(x_l), no norm anywhere

and which normalizer is used is the `norm`: `layernorm` (Ba et al. 2016), `rmsnorm` (Zhang &
Sennrich 2019), `prmsnorm` (their partial RMSNorm: the statistic from the first 6.25% of the units;
notebook 06), `dyt` (Zhu et al. 2025, alpha initialized to 0.5) or `identity` (every slot keeps its
place but computes nothing, so any placement with `identity` is the `none` network).

Model options around the blocks, all off by default (the defaults build the network notebooks 05
and 06 were recorded with, bit for bit):
- `embed_norm`: x_0 = Norm(embedding), a norm on the embedding output before the first block (Kim
  et al.'s optional Peri-LN input norm; Gemma 2 has none).
- `scale_embedding`: the looked-up token embedding is multiplied by sqrt(d) before the positions
  are added (Gemma 2; T-Fixup does it already and refuses it twice).
- `gain_offset`: every norm's gain is g = 1 + w with w a parameter initialized to 0 (Gemma 2's
  RMSNorm); the same function at init as g = 1, but weight decay pulls g toward 1 instead of 0.
- `attn_logit_cap`, `final_logit_cap`: soft-capping z -> cap * tanh(z / cap) of the attention
  scores q.k / sqrt(d_head) (before the causal mask and softmax) and of the head's logits
  (Gemma 2: 50 and 30). None: no cap.

Initialization, `init`:
- `default`: Xavier (Glorot) normal for every weight matrix, zero biases, token embeddings N(0, 1),
  position embeddings 0. At init the input to the first block is then exactly Gaussian N(0, I_d), the
  input Xiong et al. (2020, Sec. 3.2) assume. Norm gains start at 1 and biases at 0.
- `tfixup` (Huang, Perez, Ba, Volkovs 2020, Sec. 3): Xavier for the weight matrices, token
  embeddings N(0, d^{-1/2}), read here as a *standard deviation* of d^{-1/2} (the convention of the
  fairseq code base the paper builds on); then the attention value and output matrices (their v and
  w), both feed-forward matrices and the token embeddings are multiplied by (9N)^{-1/4}, N the number
  of blocks. That is the paper's decoder rule, derived for the decoder layers of an encoder-decoder
  model, whose cross-attention it also scales; here it is applied to a decoder-only stack without
  cross-attention. As in the authors' fairseq code (`embed_scale`), the looked-up token embedding is
  multiplied by sqrt(d) in the forward pass, before the positions are added, so a token enters the
  stack with a standard deviation of (9N)^{-1/4} per coordinate. T-Fixup is meant for
  `placement="none"`, but any placement accepts it.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from lnpaper.checks import check_positive_int
from lnpaper.norms import DyT, LayerNorm, RMSNorm

PLACEMENTS = ("post", "pre", "peri", "reordered", "none")
NORMS = ("layernorm", "rmsnorm", "prmsnorm", "dyt", "identity")
PRMS_FRACTION = 0.0625  # Zhang & Sennrich's p for pRMSNorm
INITS = ("default", "tfixup")
FINAL_NORM = ("pre", "peri", "reordered")  # their residual stream is never normalized in the stack
NORM_IN = ("pre", "peri")  # a norm on each sublayer's input
NORM_OUT = ("post", "peri", "reordered")  # on its output (post: on the residual sum)
GEMMA2_ATTN_LOGIT_CAP, GEMMA2_FINAL_LOGIT_CAP = 50.0, 30.0


def check_placement(placement: str) -> None:
    if placement == "sandwich":
        raise ValueError(
            "placement 'sandwich' is the 'peri' block; Gemma 2's sandwich model is "
            "gemma2_model(), Peri-LN's peri_ln_model()"
        )
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")


def check_cap(name: str, cap) -> None:
    if cap is not None and not (isinstance(cap, int | float) and math.isfinite(cap) and cap > 0):
        raise ValueError(f"{name} must be None or a finite number > 0, got {cap!r}")


def soft_cap(z: torch.Tensor, cap: float) -> torch.Tensor:
    """cap * tanh(z / cap): about z while |z| << cap, never beyond +-cap (Gemma 2)."""
    return cap * torch.tanh(z / cap)


class UnitOffset(nn.Module):
    """The parametrization g = 1 + w: the module stores w, its forward sees g."""

    def forward(self, w: torch.Tensor) -> torch.Tensor:
        return 1 + w

    def right_inverse(self, g: torch.Tensor) -> torch.Tensor:
        return g - 1  # so a gain of 1 is stored as w = 0


def make_norm(norm: str, d_model: int, gain_offset: bool = False) -> nn.Module:
    """One normalizer over the last axis (each token on its own); with `gain_offset` its gain is
    stored as w in g = 1 + w, w = 0 at init (`module.weight` still reads g)."""
    if norm == "layernorm":
        module = LayerNorm(d_model)
    elif norm == "rmsnorm":
        module = RMSNorm(d_model)
    elif norm == "prmsnorm":
        module = RMSNorm(d_model, partial=PRMS_FRACTION)
    elif norm == "dyt":
        module = DyT(d_model, alpha_init=0.5)
    elif norm == "identity":
        if gain_offset:
            raise ValueError("gain_offset needs a norm with a gain; norm 'identity' has none")
        return nn.Identity()
    else:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if gain_offset:
        parametrize.register_parametrization(module, "weight", UnitOffset())
    return module


class CausalSelfAttention(nn.Module):
    """softmax(Q K^T / sqrt(d_head) + causal mask) V, per head, then the output matrix W^O."""

    def __init__(self, d_model: int, n_heads: int, logit_cap: float | None = None):
        super().__init__()
        check_cap("attn_logit_cap", logit_cap)
        self.n_heads, self.logit_cap = n_heads, logit_cap
        self.query = nn.Linear(d_model, d_model)  # W^Q
        self.key = nn.Linear(d_model, d_model)  # W^K
        self.value = nn.Linear(d_model, d_model)  # W^V: T-Fixup's v
        self.out = nn.Linear(d_model, d_model)  # W^O: T-Fixup's w

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, d = x.shape

        def heads(t):  # B x T x d -> B x heads x T x d_head
            return t.view(batch, tokens, self.n_heads, d // self.n_heads).transpose(1, 2)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        if self.logit_cap is None:
            # token t attends to tokens 0..t only; with W^Q = W^K = 0 this is a plain average of them
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # the same, written out, with the scores soft-capped before the mask (Gemma 2)
            scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.n_heads)  # q.k / sqrt(d_head)
            scores = soft_cap(scores, self.logit_cap)
            future = torch.ones(tokens, tokens, dtype=torch.bool, device=x.device).triu(1)
            mixed = scores.masked_fill(future, -math.inf).softmax(dim=-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(batch, tokens, d))


class FeedForward(nn.Module):
    """F(x) = ReLU(x W^(1) + b^(1)) W^(2) + b^(2): Xiong et al.'s notation."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff)  # W^(1)
        self.w2 = nn.Linear(d_ff, d_model)  # W^(2): the matrix of Xiong et al.'s Theorem 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.relu(self.w1(x)))


class Block(nn.Module):
    """Attention then feed-forward, each with a residual connection; the norms where `placement`
    puts them. `attn_in_norm`/`ffn_in_norm` normalize a sublayer's input, `attn_out_norm`/
    `ffn_out_norm` its output (peri, reordered) or the residual sum (post)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        placement: str,
        norm: str,
        *,
        gain_offset: bool = False,
        attn_logit_cap: float | None = None,
    ):
        super().__init__()
        check_placement(placement)
        self.placement = placement
        self.attn = CausalSelfAttention(d_model, n_heads, logit_cap=attn_logit_cap)
        self.ffn = FeedForward(d_model, d_ff)
        normalize_in, normalize_out = placement in NORM_IN, placement in NORM_OUT

        def norm_if(wanted):
            return make_norm(norm, d_model, gain_offset) if wanted else None

        self.attn_in_norm, self.ffn_in_norm = norm_if(normalize_in), norm_if(normalize_in)
        self.attn_out_norm, self.ffn_out_norm = norm_if(normalize_out), norm_if(normalize_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.placement == "post":  # x_{l+1} = Norm(x_l + F(x_l))
            x = self.attn_out_norm(x + self.attn(x))
            return self.ffn_out_norm(x + self.ffn(x))
        if self.placement == "pre":  # x_{l+1} = x_l + F(Norm(x_l))
            x = x + self.attn(self.attn_in_norm(x))
            return x + self.ffn(self.ffn_in_norm(x))
        if self.placement == "peri":  # x_{l+1} = x_l + Norm(F(Norm(x_l)))
            x = x + self.attn_out_norm(self.attn(self.attn_in_norm(x)))
            return x + self.ffn_out_norm(self.ffn(self.ffn_in_norm(x)))
        if self.placement == "reordered":  # x_{l+1} = x_l + Norm(F(x_l))
            x = x + self.attn_out_norm(self.attn(x))
            return x + self.ffn_out_norm(self.ffn(x))
        x = x + self.attn(x)  # none: x_{l+1} = x_l + F(x_l)
        return x + self.ffn(x)


class TransformerLM(nn.Module):
    """Tokens (B x T, int64) -> next-token logits (B x T x vocab_size).

    x_0 = token embedding (times sqrt(d) under T-Fixup or `scale_embedding`) + position embedding,
    normalized if `embed_norm`; the blocks; a final norm for `pre`, `peri` and `reordered` (whose
    residual stream is otherwise never normalized); a linear head, its logits soft-capped if
    `final_logit_cap`. The options are described in the module's docstring.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        d_model: int = 64,
        n_layers: int = 6,
        n_heads: int = 4,
        d_ff: int | None = None,
        max_len: int = 64,
        placement: str = "pre",
        norm: str = "layernorm",
        init: str = "default",
        embed_norm: bool = False,
        scale_embedding: bool = False,
        gain_offset: bool = False,
        attn_logit_cap: float | None = None,
        final_logit_cap: float | None = None,
    ):
        super().__init__()
        for name, value in (
            ("vocab_size", vocab_size),
            ("d_model", d_model),
            ("n_layers", n_layers),
            ("n_heads", n_heads),
            ("max_len", max_len),
        ):
            check_positive_int(name, value)
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        check_placement(placement)
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        for name, flag in (
            ("embed_norm", embed_norm),
            ("scale_embedding", scale_embedding),
            ("gain_offset", gain_offset),
        ):
            if not isinstance(flag, bool):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        check_cap("attn_logit_cap", attn_logit_cap)
        check_cap("final_logit_cap", final_logit_cap)
        if (embed_norm or gain_offset) and (placement == "none" or norm == "identity"):
            raise ValueError(
                "embed_norm and gain_offset need a norm; placement 'none' and norm 'identity' "
                "have none"
            )
        if scale_embedding and init == "tfixup":
            raise ValueError("init 'tfixup' already multiplies the embedding by sqrt(d); "
                             "scale_embedding would do it twice")  # fmt: skip
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.vocab_size, self.max_len, self.n_layers = vocab_size, max_len, n_layers
        self.placement, self.norm, self.init = placement, norm, init
        self.final_logit_cap = final_logit_cap
        # fairseq's embed_scale, which T-Fixup's N(0, d^{-1/2}) embeddings are drawn for; Gemma's
        self.embed_scale = math.sqrt(d_model) if init == "tfixup" or scale_embedding else 1.0
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Parameter(torch.zeros(max_len, d_model))
        self.embed_norm = make_norm(norm, d_model, gain_offset) if embed_norm else None
        self.blocks = nn.ModuleList(
            Block(d_model, n_heads, d_ff, placement, norm, gain_offset=gain_offset,
                  attn_logit_cap=attn_logit_cap)
            for _ in range(n_layers)
        )  # fmt: skip
        final = placement in FINAL_NORM
        self.final_norm = make_norm(norm, d_model, gain_offset) if final else None
        self.head = nn.Linear(d_model, vocab_size)
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_normal_(module.weight)  # Var = 2 / (fan_in + fan_out)
                nn.init.zeros_(module.bias)
        self.position_embedding.zero_()
        d_model = self.token_embedding.embedding_dim
        if self.init == "default":
            nn.init.normal_(self.token_embedding.weight, std=1.0)
            return
        nn.init.normal_(self.token_embedding.weight, std=d_model**-0.5)  # N(0, d^{-1/2})
        scale = (9 * self.n_layers) ** -0.25  # (9N)^{-1/4}
        self.token_embedding.weight.mul_(scale)
        for block in self.blocks:
            for matrix in (block.attn.value, block.attn.out, block.ffn.w1, block.ffn.w2):
                matrix.weight.mul_(scale)

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.dtype != torch.int64 or tokens.ndim != 2:
            raise ValueError(
                f"tokens must be an int64 tensor of shape (batch, length), got dtype "
                f"{tokens.dtype} and shape {tuple(tokens.shape)}"
            )
        if not 1 <= tokens.shape[1] <= self.max_len:
            raise ValueError(f"sequence length {tokens.shape[1]} is not in 1..{self.max_len}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(f"token ids must lie in 0..{self.vocab_size - 1}")
        tokens_in = self.embed_scale * self.token_embedding(tokens)
        x = tokens_in + self.position_embedding[: tokens.shape[1]]
        return x if self.embed_norm is None else self.embed_norm(x)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        if self.final_norm is not None:
            x = self.final_norm(x)
        logits = self.head(x)
        return logits if self.final_logit_cap is None else soft_cap(logits, self.final_logit_cap)


def peri_ln_model(vocab_size: int, *, embed_norm: bool = True, **options) -> TransformerLM:
    """Kim et al.'s (2025) Peri-LN: the peri block, a final norm and (their option, on here) a norm
    on the embedding output."""
    return TransformerLM(vocab_size, placement="peri", embed_norm=embed_norm, **options)


def gemma2_model(vocab_size: int, **options) -> TransformerLM:
    """Gemma 2's sandwich: the same peri block with RMSNorm, no norm on the embedding output but the
    embedding times sqrt(d), gains g = 1 + w, attention scores capped at 50 and logits at 30
    (Gemma 2's values; `options` can change any of them)."""
    gemma = {
        "placement": "peri",
        "norm": "rmsnorm",
        "scale_embedding": True,
        "gain_offset": True,
        "attn_logit_cap": GEMMA2_ATTN_LOGIT_CAP,
        "final_logit_cap": GEMMA2_FINAL_LOGIT_CAP,
    }
    return TransformerLM(vocab_size, **{**gemma, **options})


def next_token_loss(model: TransformerLM, tokens: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting tokens[:, 1:] from the tokens before each (nats/token)."""
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
