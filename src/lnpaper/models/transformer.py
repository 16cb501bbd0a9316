"""A small decoder-only Transformer language model whose normalization can be moved and swapped.

Notebook 06. Every block has two sublayers F, causal self-attention and a ReLU feed-forward network
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
- `mix` (Mix-LN, Li, Yin, Liu 2025): `post` blocks for the first floor(L / 4) of the L blocks and
  `pre` blocks for the rest, plus a final Norm
- `none`:  x_{l+1} = x_l + F(x_l), no norm anywhere

and which normalizer is used is the `norm`: `layernorm` (Ba et al. 2016), `rmsnorm` (Zhang &
Sennrich 2019), `prmsnorm` (their partial RMSNorm: the statistic from the first 6.25% of the units;
notebook 07), `dyt` (Zhu et al. 2025, alpha initialized to `alpha_init`, 0.5 by default), `derf`
(Chen et al. 2025, erf in place of tanh, with a learnable shift), `layernorm_simple` (LayerNorm
without gain and bias), `detach_mean`, `detach_std`, `detach_both` (Xu et al. 2019's DetachNorm:
LayerNorm with those statistics cut from the backward pass) or `identity` (every slot keeps its
place but computes nothing, so any placement with `identity` is the `none` network).

Model options around the blocks, all off by default (the defaults build the network notebooks 06
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

Options of notebooks 08-10, also off by default:
- `qk_norm`: a norm on the queries and keys before their dot product. `layernorm` or `rmsnorm` over
  each head's d_head coordinates (`qk_norm_span="head"`: ViT-22B, Wortsman et al. 2023, Gemma 3) or
  over the whole d-wide projection before the heads are split (`"full"`: OLMo 2); `l2` is Henry et
  al. 2020's: q / ||q|| and k / ||k|| per head, and the dot product times a learnable scalar g,
  g_0 = log2(L^2 - L), instead of 1 / sqrt(d_head). Henry et al.'s L is the 97.5th percentile of
  the training sequences' lengths; here every training sequence is `max_len` long, so L = `max_len`.
- `deepnorm` (Wang et al. 2022, with `placement="post"`): x_{l+1} = LN(alpha x_l + G(x_l)), alpha =
  (2M)^{1/4} for M blocks, and after the normal init W^V, W^O, W^(1) and W^(2) are multiplied by
  beta = (8M)^{-1/4} (W^Q and W^K are not). `deepnorm_parts` "alpha" or "beta" keeps one half
  only (notebook 08's D1b), "both" (the default) is DeepNorm.
- `rezero` (Bachlechner et al. 2020, with `placement="none"`): x_{l+1} = x_l + a F(x_l) for each
  sublayer, a a learnable scalar starting at 0, so every block is the identity at init; SkipInit
  (De & Smith 2020) is the same gate, proposed for ResNets.
- `admin` (Liu et al. 2020, with `placement="post"`): x_i = LN(x_{i-1} * omega_i + f_i(x_{i-1})) for
  each sublayer, omega_i a learnable d-vector, 1 until `admin_profile` sets it from one batch.
- `layer_scaling` (Sun et al. 2025, with `placement="pre"`): each block's two input norms' outputs
  multiplied by 1 / sqrt(l), l = 1, 2, ... the block's index; no parameters.
- `learned_embed_scale`: the embedding times a learnable scalar initialized to sqrt(d) (DyT's
  LLaMA models); unlike `scale_embedding`, which is fixed.

Initialization, `init`:
- `default`: Xavier (Glorot) normal for every weight matrix, zero biases, token embeddings N(0, 1),
  position embeddings 0. At init the input to the first block is then exactly Gaussian N(0, I_d), the
  input Xiong et al. (2020, Sec. 3.2) assume. Norm gains start at 1 and biases at 0.
- `tfixup` (Huang, Perez, Ba, Volkovs 2020, Sec. 3): Xavier for the weight matrices, token
  embeddings N(0, d^{-1/2}), read here as a *standard deviation* of d^{-1/2} (the convention of
  the fairseq code base the paper builds on); then the attention value and output matrices (their
  v and w), both feed-forward matrices and the token embeddings are multiplied by (9N)^{-1/4}, N
  the number of blocks. That is the paper's decoder rule, derived for the decoder layers of an
  encoder-decoder model, whose cross-attention it also scales; here it is applied to a
  decoder-only stack without cross-attention. Structurally our two-sublayer block is T-Fixup's
  encoder layer, whose rule is 0.67 N^{-1/4} (0.36 against the decoder rule's 0.31 at N = 12); we
  keep the decoder rule because the stack is a decoder (causal, trained as a language model), and
  say so where T5 is checked. As in the authors' fairseq code (`embed_scale`), the looked-up token
  embedding is multiplied by sqrt(d) in the forward pass, before the positions are added, so a
  token enters the stack with a standard deviation of (9N)^{-1/4} per coordinate. T-Fixup is meant
  for `placement="none"`, but any placement accepts it.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from lnpaper.arguments import (
    check_choice,
    check_flag,
    check_positive_float,
    check_positive_int,
)
from lnpaper.norms import Derf, DetachNorm, DyT, LayerNorm, RMSNorm, is_vmapped

PLACEMENTS = ("post", "pre", "peri", "reordered", "none")  # a block's
MODEL_PLACEMENTS = (*PLACEMENTS, "mix")  # Mix-LN mixes two block placements in one stack
DETACHED = {"detach_mean": ("mean",), "detach_std": ("std",), "detach_both": ("mean", "std")}
POINTWISE = ("dyt", "derf")  # no statistic: each value squashed on its own, with a learnable alpha
NORMS = ("layernorm", "rmsnorm", "prmsnorm", *POINTWISE, "layernorm_simple", *DETACHED, "identity")
QK_NORMS = ("layernorm", "rmsnorm", "l2")
DEEPNORM_PARTS = ("both", "alpha", "beta")
MIX_POST_FRACTION = 0.25  # Mix-LN (Li et al., arXiv:2412.13795): Post-LN in the first floor(0.25 L)
PRMS_FRACTION = 0.0625  # Zhang & Sennrich's p for pRMSNorm
INITS = ("default", "tfixup")
FINAL_NORM = (
    "pre",
    "peri",
    "reordered",
    "mix",
)  # their residual stream is never normalized in the stack
NORM_IN = ("pre", "peri")  # a norm on each sublayer's input
NORM_OUT = ("post", "peri", "reordered")  # on its output (post: on the residual sum)
GEMMA2_ATTN_LOGIT_CAP, GEMMA2_FINAL_LOGIT_CAP = 50.0, 30.0


def check_placement(placement: str, allowed=PLACEMENTS) -> None:
    if placement == "sandwich":
        raise ValueError(
            "placement 'sandwich' is the 'peri' block; Gemma 2's sandwich model is "
            "gemma2_model(), Peri-LN's peri_ln_model()"
        )
    if placement not in allowed:
        raise ValueError(f"placement must be one of {allowed}, got {placement!r}")


def check_cap(name: str, cap) -> float | None:
    """A soft cap: None, or a finite number > 0 (True is not a cap of 1)."""
    if cap is None:
        return None
    try:
        return check_positive_float(name, cap)
    except ValueError:
        raise ValueError(f"{name} must be None or a finite number > 0, got {cap!r}") from None


def check_heads(d_model, n_heads) -> None:
    """d_model and n_heads positive ints, and the heads splitting d_model evenly."""
    check_positive_int("d_model", d_model)
    check_positive_int("n_heads", n_heads)
    if d_model % n_heads:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")


def check_qk_norm(qk_norm, qk_norm_span) -> None:
    if qk_norm is not None:
        check_choice("qk_norm", qk_norm, QK_NORMS)
    check_choice("qk_norm_span", qk_norm_span, ("head", "full"))
    if qk_norm is None and qk_norm_span != "head":
        raise ValueError(
            f"qk_norm_span={qk_norm_span!r} says where the qk_norm goes, but qk_norm is None"
        )
    if qk_norm == "l2" and qk_norm_span != "head":
        raise ValueError("qk_norm 'l2' normalizes each head's q and k: qk_norm_span 'head'")


def soft_cap(z: torch.Tensor, cap: float) -> torch.Tensor:
    """cap * tanh(z / cap): about z while |z| << cap, never beyond +-cap (Gemma 2)."""
    return cap * torch.tanh(z / cap)


class UnitOffset(nn.Module):
    """The parametrization g = 1 + w: the module stores w, its forward sees g."""

    def forward(self, w: torch.Tensor) -> torch.Tensor:
        return 1 + w

    def right_inverse(self, g: torch.Tensor) -> torch.Tensor:
        return g - 1  # so a gain of 1 is stored as w = 0


def make_norm(
    norm: str, d_model: int, gain_offset: bool = False, alpha_init: float = 0.5
) -> nn.Module:
    """One normalizer over the last axis (each token on its own); with `gain_offset` its gain is
    stored as w in g = 1 + w, w = 0 at init (`module.weight` still reads g). `alpha_init` is the
    pointwise norms' (dyt, derf) initial alpha."""
    check_choice("norm", norm, NORMS)
    check_flag("gain_offset", gain_offset)
    if norm == "layernorm":
        module = LayerNorm(d_model)
    elif norm == "rmsnorm":
        module = RMSNorm(d_model)
    elif norm == "prmsnorm":
        module = RMSNorm(d_model, partial=PRMS_FRACTION)
    elif norm == "dyt":
        module = DyT(d_model, alpha_init=alpha_init)
    elif norm == "derf":
        module = Derf(d_model, alpha_init=alpha_init)
    elif norm in DETACHED:
        module = DetachNorm(d_model, detach=DETACHED[norm])
    elif norm in ("identity", "layernorm_simple"):
        if gain_offset:
            raise ValueError(f"gain_offset needs a norm with a gain; norm {norm!r} has none")
        return nn.Identity() if norm == "identity" else LayerNorm(d_model, elementwise_affine=False)
    else:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if gain_offset:
        parametrize.register_parametrization(module, "weight", UnitOffset())
    return module


class CausalSelfAttention(nn.Module):
    """softmax(Q K^T / sqrt(d_head) + causal mask) V, per head, then the output matrix W^O; with
    `qk_norm` the queries and keys are normalized first (the module docstring's options)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        logit_cap: float | None = None,
        *,
        qk_norm: str | None = None,
        qk_norm_span: str = "head",
        max_len: int = 64,
        gate: bool = False,
    ):
        super().__init__()
        check_heads(d_model, n_heads)
        check_flag("gate", gate)
        logit_cap = check_cap("attn_logit_cap", logit_cap)
        check_qk_norm(qk_norm, qk_norm_span)
        check_positive_int("max_len", max_len)
        self.n_heads, self.logit_cap = n_heads, logit_cap
        self.gate = nn.Parameter(torch.zeros(())) if gate else None  # ReZero's a, from 0
        self.qk_norm, self.qk_norm_span = qk_norm, qk_norm_span
        self.query = nn.Linear(d_model, d_model)  # W^Q
        self.key = nn.Linear(d_model, d_model)  # W^K
        self.value = nn.Linear(d_model, d_model)  # W^V: T-Fixup's v
        self.out = nn.Linear(d_model, d_model)  # W^O: T-Fixup's w
        self.q_norm = self.k_norm = self.qk_scale = None
        if qk_norm in ("layernorm", "rmsnorm"):
            width = d_model // n_heads if qk_norm_span == "head" else d_model
            self.q_norm, self.k_norm = make_norm(qk_norm, width), make_norm(qk_norm, width)
        elif qk_norm == "l2":
            if max_len < 2:
                raise ValueError(f"qk_norm 'l2' needs max_len >= 2, got {max_len}")
            # g_0 = log2(L^2 - L) (Henry et al. 2020)
            self.qk_scale = nn.Parameter(torch.tensor(math.log2(max_len**2 - max_len)))

    def scores(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(the attention logits z_ij before the mask, B x heads x T x T; the values V per head)."""
        batch, tokens, d = x.shape

        def heads(t):  # B x T x d -> B x heads x T x d_head
            return t.view(batch, tokens, self.n_heads, d // self.n_heads).transpose(1, 2)

        # Notebook 09 prints the lines from here to the soft cap: they stay within 88 columns.
        q, k, v = self.query(x), self.key(x), self.value(x)
        # OLMo 2: before the split
        if self.q_norm is not None and self.qk_norm_span == "full":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k, v = heads(q), heads(k), heads(v)
        # per head, over d_head
        if self.q_norm is not None and self.qk_norm_span == "head":
            q, k = self.q_norm(q), self.k_norm(k)
        if self.qk_scale is not None:  # g * <q / ||q||, k / ||k||>
            unit_q, unit_k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
            z = self.qk_scale * unit_q @ unit_k.transpose(-2, -1)
        else:  # q.k / sqrt(d_head)
            z = q @ k.transpose(-2, -1) / math.sqrt(d // self.n_heads)
        if self.logit_cap is not None:  # Gemma 2's soft cap, before the mask
            z = soft_cap(z, self.logit_cap)
        return z, v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, d = x.shape
        # torch.func.vmap has no batching rule for the fused kernel and would loop over the seeds
        batched = is_vmapped(x)
        if self.logit_cap is None and self.qk_norm is None and not batched:
            q, k, v = (
                t.view(batch, tokens, self.n_heads, d // self.n_heads).transpose(1, 2)
                for t in (self.query(x), self.key(x), self.value(x))
            )
            # token t attends to tokens 0..t only; with W^Q = W^K = 0 this is a plain average of them
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # the same, written out, so that the logits can be normalized or capped
            z, v = self.scores(x)
            future = torch.ones(tokens, tokens, dtype=torch.bool, device=x.device).triu(1)
            mixed = z.masked_fill(future, -math.inf).softmax(dim=-1) @ v
        out = self.out(mixed.transpose(1, 2).reshape(batch, tokens, d))
        return out if self.gate is None else self.gate * out


class FeedForward(nn.Module):
    """F(x) = ReLU(x W^(1) + b^(1)) W^(2) + b^(2): Xiong et al.'s notation."""

    def __init__(self, d_model: int, d_ff: int, gate: bool = False):
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("d_ff", d_ff)
        check_flag("gate", gate)
        self.w1 = nn.Linear(d_model, d_ff)  # W^(1)
        self.w2 = nn.Linear(d_ff, d_model)  # W^(2): the matrix of Xiong et al.'s Theorem 1
        self.gate = nn.Parameter(torch.zeros(())) if gate else None  # ReZero's a, from 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.w2(F.relu(self.w1(x)))
        return out if self.gate is None else self.gate * out


class Block(nn.Module):
    """Attention then feed-forward, each with a residual connection; the norms where `placement`
    puts them. `attn_in_norm`/`ffn_in_norm` normalize a sublayer's input, `attn_out_norm`/
    `ffn_out_norm` its output (peri, reordered) or the residual sum (post).

    Post-LN's residual sum may weight the stream: by `residual_scale`, DeepNorm's alpha, or with
    `admin` by learnable vectors `attn_omega`, `ffn_omega` (Admin's omega). Pre-LN's input norms'
    outputs may be multiplied by `input_scale` (LayerNorm Scaling's 1 / sqrt(l)). With `rezero`
    each sublayer's output is multiplied by its own learnable scalar `gate`, starting at 0.
    """

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
        qk_norm: str | None = None,
        qk_norm_span: str = "head",
        max_len: int = 64,
        residual_scale: float = 1.0,
        admin: bool = False,
        input_scale: float = 1.0,
        alpha_init: float = 0.5,
        rezero: bool = False,
    ):
        super().__init__()
        if placement == "mix":
            raise ValueError("a block is 'post' or 'pre'; 'mix' is a TransformerLM placement")
        check_placement(placement)
        check_heads(d_model, n_heads)
        check_positive_int("d_ff", d_ff)
        check_flag("admin", admin)
        residual_scale = check_positive_float("residual_scale", residual_scale)
        input_scale = check_positive_float("input_scale", input_scale)
        if (residual_scale != 1.0 or admin) and placement != "post":
            raise ValueError("residual_scale and admin weight Post-LN's residual sum: 'post' only")
        if input_scale != 1.0 and placement != "pre":
            raise ValueError("input_scale scales Pre-LN's input norms: placement 'pre' only")
        check_flag("rezero", rezero)
        if rezero and placement != "none":
            raise ValueError("rezero gates the branches of a norm-free block: placement 'none'")
        self.placement = placement
        self.residual_scale, self.input_scale = residual_scale, input_scale
        self.attn = CausalSelfAttention(
            d_model, n_heads, logit_cap=attn_logit_cap, qk_norm=qk_norm,
            qk_norm_span=qk_norm_span, max_len=max_len, gate=rezero,
        )  # fmt: skip
        self.ffn = FeedForward(d_model, d_ff, gate=rezero)
        normalize_in, normalize_out = placement in NORM_IN, placement in NORM_OUT

        def norm_if(wanted):
            return make_norm(norm, d_model, gain_offset, alpha_init) if wanted else None

        self.attn_in_norm, self.ffn_in_norm = norm_if(normalize_in), norm_if(normalize_in)
        self.attn_out_norm, self.ffn_out_norm = norm_if(normalize_out), norm_if(normalize_out)
        self.attn_omega = nn.Parameter(torch.ones(d_model)) if admin else None
        self.ffn_omega = nn.Parameter(torch.ones(d_model)) if admin else None

    def _stream(self, x: torch.Tensor, omega: torch.Tensor | None) -> torch.Tensor:
        """What Post-LN adds the branch to: x, alpha x (DeepNorm) or x * omega (Admin)."""
        if omega is not None:
            return x * omega
        return x if self.residual_scale == 1.0 else self.residual_scale * x

    def _scaled(self, x: torch.Tensor) -> torch.Tensor:
        return x if self.input_scale == 1.0 else x * self.input_scale

    def attention_input(self, x: torch.Tensor) -> torch.Tensor:
        """What the attention sublayer reads from the block's input x."""
        return self._scaled(self.attn_in_norm(x)) if self.attn_in_norm is not None else x

    # Notebook 06 prints this method: its lines stay within 88 columns.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # post: x_{l+1} = Norm(x_l + F(x_l)), or alpha x_l, or x_l omega
        if self.placement == "post":
            x = self.attn_out_norm(self._stream(x, self.attn_omega) + self.attn(x))
            return self.ffn_out_norm(self._stream(x, self.ffn_omega) + self.ffn(x))
        # pre: x_{l+1} = x_l + F(Norm(x_l)), Norm's output times 1/sqrt(l)
        if self.placement == "pre":
            x = x + self.attn(self._scaled(self.attn_in_norm(x)))
            return x + self.ffn(self._scaled(self.ffn_in_norm(x)))
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
        qk_norm: str | None = None,
        qk_norm_span: str = "head",
        deepnorm: bool = False,
        deepnorm_parts: str = "both",
        admin: bool = False,
        layer_scaling: bool = False,
        alpha_init: float = 0.5,
        learned_embed_scale: bool = False,
        rezero: bool = False,
    ):
        super().__init__()
        vocab_size = check_positive_int("vocab_size", vocab_size)
        d_model = check_positive_int("d_model", d_model)
        n_layers = check_positive_int("n_layers", n_layers)
        n_heads = check_positive_int("n_heads", n_heads)
        max_len = check_positive_int("max_len", max_len)
        check_heads(d_model, n_heads)
        if d_ff is not None:
            d_ff = check_positive_int("d_ff", d_ff)  # 0 would make the feed-forward do nothing
        check_placement(placement, MODEL_PLACEMENTS)
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        for name, flag in (
            ("embed_norm", embed_norm),
            ("scale_embedding", scale_embedding),
            ("gain_offset", gain_offset),
            ("deepnorm", deepnorm),
            ("admin", admin),
            ("layer_scaling", layer_scaling),
            ("learned_embed_scale", learned_embed_scale),
            ("rezero", rezero),
        ):
            if not isinstance(flag, bool):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        attn_logit_cap = check_cap("attn_logit_cap", attn_logit_cap)
        final_logit_cap = check_cap("final_logit_cap", final_logit_cap)
        check_qk_norm(qk_norm, qk_norm_span)
        needing_a_norm = {
            "embed_norm": embed_norm,
            "gain_offset": gain_offset,
            "deepnorm": deepnorm,
            "admin": admin,
            "layer_scaling": layer_scaling,
        }
        if norm == "identity" or placement == "none":
            for name, wanted in needing_a_norm.items():
                if wanted:
                    raise ValueError(
                        f"{name}=True would need a norm; placement {placement!r} with norm "
                        f"{norm!r} has none (embed_norm and gain_offset act on a norm; deepnorm, "
                        f"admin and layer_scaling are rules for the norms around the residual "
                        f"stream)"
                    )
        if (deepnorm or admin) and placement != "post":
            raise ValueError("deepnorm and admin are Post-LN schemes: they need placement 'post'")
        if deepnorm and admin:
            raise ValueError("deepnorm and admin weight the residual sum two ways: choose one")
        if deepnorm and init != "default":
            raise ValueError("deepnorm has its own init (beta); it needs init 'default'")
        check_choice("deepnorm_parts", deepnorm_parts, DEEPNORM_PARTS)
        if deepnorm_parts != "both" and not deepnorm:
            raise ValueError("deepnorm_parts picks DeepNorm's halves: it needs deepnorm=True")
        if rezero and (placement != "none" or init != "default"):
            raise ValueError("rezero gates a norm-free stack at the default init: it needs "
                             "placement 'none' and init 'default'")  # fmt: skip
        if layer_scaling and placement != "pre":
            raise ValueError("layer_scaling scales Pre-LN's input norms: it needs placement 'pre'")
        check_positive_float("alpha_init", alpha_init)
        if alpha_init != 0.5 and norm not in POINTWISE:
            raise ValueError(f"alpha_init is the init of {POINTWISE}'s alpha; norm is {norm!r}")
        if placement == "mix" and int(MIX_POST_FRACTION * n_layers) == 0:
            raise ValueError(f"placement 'mix' needs n_layers >= 4 (floor(L / 4) Post-LN blocks), "
                             f"got {n_layers}")  # fmt: skip
        if learned_embed_scale and (scale_embedding or init == "tfixup"):
            raise ValueError("learned_embed_scale replaces the fixed sqrt(d) of scale_embedding "
                             "and T-Fixup: choose one")  # fmt: skip
        if scale_embedding and init == "tfixup":
            raise ValueError("init 'tfixup' already multiplies the embedding by sqrt(d); "
                             "scale_embedding would do it twice")  # fmt: skip
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.vocab_size, self.max_len, self.n_layers = vocab_size, max_len, n_layers
        self.placement, self.norm, self.init = placement, norm, init
        self.final_logit_cap, self.deepnorm = final_logit_cap, deepnorm
        self.deepnorm_parts = deepnorm_parts
        # fairseq's embed_scale, which T-Fixup's N(0, d^{-1/2}) embeddings are drawn for; Gemma's
        self.embed_scale = math.sqrt(d_model) if init == "tfixup" or scale_embedding else 1.0
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Parameter(torch.zeros(max_len, d_model))
        # DyT's LLaMA models: a learnable scalar on the embedding, initialized to sqrt(d)
        self.learned_embed_scale = (
            nn.Parameter(torch.tensor(math.sqrt(d_model))) if learned_embed_scale else None
        )
        self.embed_norm = make_norm(norm, d_model, gain_offset, alpha_init) if embed_norm else None
        n_post = int(MIX_POST_FRACTION * n_layers) if placement == "mix" else 0
        # DeepNorm's alpha = (2M)^{1/4}, unless deepnorm_parts keeps beta only
        alpha = (2 * n_layers) ** 0.25 if deepnorm and deepnorm_parts != "beta" else 1.0
        self.blocks = nn.ModuleList(
            Block(
                d_model, n_heads, d_ff,
                ("post" if index < n_post else "pre") if placement == "mix" else placement,
                norm, gain_offset=gain_offset, attn_logit_cap=attn_logit_cap, qk_norm=qk_norm,
                qk_norm_span=qk_norm_span, max_len=max_len, residual_scale=alpha, admin=admin,
                input_scale=(index + 1) ** -0.5 if layer_scaling else 1.0,  # 1 / sqrt(l)
                alpha_init=alpha_init, rezero=rezero,
            )
            for index in range(n_layers)
        )  # fmt: skip
        final = placement in FINAL_NORM
        self.final_norm = make_norm(norm, d_model, gain_offset, alpha_init) if final else None
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
            if self.deepnorm and self.deepnorm_parts != "alpha":
                # DeepNorm: beta = (8M)^{-1/4} on W^V, W^O, W^(1), W^(2)
                beta = (8 * self.n_layers) ** -0.25
                for block in self.blocks:
                    for matrix in (block.attn.value, block.attn.out, block.ffn.w1, block.ffn.w2):
                        matrix.weight.mul_(beta)
            return
        nn.init.normal_(self.token_embedding.weight, std=d_model**-0.5)  # N(0, d^{-1/2})
        scale = (9 * self.n_layers) ** -0.25  # (9N)^{-1/4}
        self.token_embedding.weight.mul_(scale)
        for block in self.blocks:
            for matrix in (block.attn.value, block.attn.out, block.ffn.w1, block.ffn.w2):
                matrix.weight.mul_(scale)

    def embed(self, tokens: torch.Tensor, *, check_ids: bool = True) -> torch.Tensor:
        """x_0. `check_ids=False` skips the range check of the ids, the one data-dependent test,
        which torch.func.vmap cannot run (many seeds' models trained as one batch)."""
        if tokens.dtype != torch.int64 or tokens.ndim != 2:
            raise ValueError(
                f"tokens must be an int64 tensor of shape (batch, length), got dtype "
                f"{tokens.dtype} and shape {tuple(tokens.shape)}"
            )
        if not 1 <= tokens.shape[1] <= self.max_len:
            raise ValueError(f"sequence length {tokens.shape[1]} is not in 1..{self.max_len}")
        if check_ids and tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(f"token ids must lie in 0..{self.vocab_size - 1}")
        tokens_in = self.embed_scale * self.token_embedding(tokens)
        if self.learned_embed_scale is not None:
            tokens_in = self.learned_embed_scale * tokens_in
        x = tokens_in + self.position_embedding[: tokens.shape[1]]
        return x if self.embed_norm is None else self.embed_norm(x)

    def forward(self, tokens: torch.Tensor, *, check_ids: bool = True) -> torch.Tensor:
        x = self.embed(tokens, check_ids=check_ids)
        for block in self.blocks:
            x = block(x)
        if self.final_norm is not None:
            x = self.final_norm(x)
        logits = self.head(x)
        return logits if self.final_logit_cap is None else soft_cap(logits, self.final_logit_cap)

    def attention_logits(self, tokens: torch.Tensor, layer: int = 0) -> torch.Tensor:
        """Block `layer`'s attention logits z_ij (B x heads x T x T, before the causal mask):
        Wortsman et al.'s (2023) measure of attention-logit growth."""
        if not 0 <= layer < self.n_layers:
            raise ValueError(f"layer must lie in 0..{self.n_layers - 1}, got {layer}")
        x = self.embed(tokens)
        for block in self.blocks[:layer]:
            x = block(x)
        block = self.blocks[layer]
        return block.attn.scores(block.attention_input(x))[0]


@torch.no_grad()
def admin_profile(model: TransformerLM, tokens: torch.Tensor) -> list[float]:
    """Admin's initialization (Liu et al. 2020) from one forward pass over `tokens`: sublayer by
    sublayer (attention, then feed-forward, block after block), omega_1 = 1 and
    omega_{i+1} = sqrt(Var[omega_i x_{i-1}] + Var[f_i(x_{i-1})]), variances over every coordinate
    of the batch. Population variances, dividing by n, as the authors' profiling code computes them
    (Transformer-Clinic, fairseq/modules/transformer_layer.py: np.var of the flattened tensors), not
    torch's unbiased default. Sets each omega vector to its value and returns the values."""
    if not any(block.attn_omega is not None for block in model.blocks):
        raise ValueError("admin_profile needs a model built with admin=True")
    x, omega, values = model.embed(tokens), 1.0, []
    for block in model.blocks:
        for branch, weight, norm in (
            (block.attn, block.attn_omega, block.attn_out_norm),
            (block.ffn, block.ffn_omega, block.ffn_out_norm),
        ):
            weight.fill_(omega)
            values.append(omega)
            f = branch(x)
            omega = math.sqrt((omega * x).var(correction=0).item() + f.var(correction=0).item())
            x = norm(weight * x + f)  # the block's own forward, with omega_i
    return values


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
