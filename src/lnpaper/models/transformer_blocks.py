"""The parts of notebook 06's language model (`lnpaper.models.transformer.TransformerLM`): causal
self-attention, the ReLU feed-forward network, the block that places the norms around them, and
`make_norm`, which builds any of the normalizers by name. What each option means is in
`lnpaper.models.transformer`'s docstring; the checks here refuse a bad value by its name.
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
DETACHED = {"detach_mean": ("mean",), "detach_std": ("std",), "detach_both": ("mean", "std")}
POINTWISE = ("dyt", "derf")  # no statistic: each value squashed on its own, with a learnable alpha
NORMS = ("layernorm", "rmsnorm", "prmsnorm", *POINTWISE, "layernorm_simple", *DETACHED, "identity")
QK_NORMS = ("layernorm", "rmsnorm", "l2")
PRMS_FRACTION = 0.0625  # Zhang & Sennrich's p for pRMSNorm
NORM_IN = ("pre", "peri")  # a norm on each sublayer's input
NORM_OUT = ("post", "peri", "reordered")  # on its output (post: on the residual sum)


def check_placement(placement: str, allowed=PLACEMENTS) -> None:
    if placement == "sandwich":
        raise ValueError(
            "placement 'sandwich' is the 'peri' block; Gemma 2's sandwich model is "
            "gemma2(vocab_size), Peri-LN's peri_ln(vocab_size) (lnpaper.models.transformer)"
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
