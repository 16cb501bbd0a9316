"""A small decoder-only Transformer language model whose normalization can be moved and swapped.

One frozen `TransformerConfig` says everything that tells one model from another (sizes, where the
norms sit and which, the init, the options below) and `TransformerLM(config)` builds it:

    model = TransformerLM(TransformerConfig(vocab_size=16, n_layers=6, placement="pre"))

Each paper's network has a builder that fills in its choices (`post_ln`, `pre_ln`, `peri_ln`,
`gemma2`, `olmo2`, `deepnorm`, `admin`, `tfixup`, `rezero`, `mix_ln`, `layernorm_scaling`); every
other field can still be given, e.g. `TransformerLM(gemma2(16, max_len=16))`. The attention,
feed-forward and block modules are in `lnpaper.models.transformer_blocks`.

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

Model options (fields of the config) around the blocks, all off by default (the defaults build the network notebooks 06
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

import dataclasses
import math
from dataclasses import KW_ONLY, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lnpaper.arguments import check_choice, check_flag, check_positive_float, check_positive_int
from lnpaper.models.transformer_blocks import (
    NORMS,
    PLACEMENTS,
    POINTWISE,
    PRMS_FRACTION,
    Block,
    CausalSelfAttention,
    FeedForward,
    check_cap,
    check_heads,
    check_placement,
    check_qk_norm,
    make_norm,
    soft_cap,
)

# The blocks are read from here too, beside the model they make up.
__all__ = [
    "Block", "CausalSelfAttention", "FeedForward", "GEMMA2_ATTN_LOGIT_CAP",
    "GEMMA2_FINAL_LOGIT_CAP", "MIX_POST_FRACTION", "NORMS", "PLACEMENTS", "POINTWISE",
    "PRMS_FRACTION", "TransformerConfig", "TransformerLM", "admin", "admin_profile", "deepnorm",
    "gemma2", "gemma2_model", "layernorm_scaling", "make_norm", "mix_ln", "next_token_loss",
    "olmo2", "peri_ln", "peri_ln_model", "post_ln", "pre_ln", "rezero", "soft_cap", "tfixup",
]  # fmt: skip

MODEL_PLACEMENTS = (*PLACEMENTS, "mix")  # Mix-LN mixes two block placements in one stack
DEEPNORM_PARTS = ("both", "alpha", "beta")
MIX_POST_FRACTION = 0.25  # Mix-LN (Li et al., arXiv:2412.13795): Post-LN in the first floor(0.25 L)
INITS = ("default", "tfixup")
FINAL_NORM = ("pre", "peri", "reordered", "mix")  # their residual stream is never normalized
GEMMA2_ATTN_LOGIT_CAP, GEMMA2_FINAL_LOGIT_CAP = 50.0, 30.0
NEEDING_A_NORM = ("embed_norm", "gain_offset", "deepnorm", "admin", "layer_scaling")


@dataclass(frozen=True)
class TransformerConfig:
    """One language model's every choice; the module docstring says what each option does. The
    defaults build a 6-block Pre-LN network with LayerNorm. Checked when made: a bad value, or a
    combination that means nothing, is refused by name before any weight is drawn."""

    vocab_size: int
    _: KW_ONLY
    d_model: int = 64
    n_layers: int = 6
    n_heads: int = 4
    d_ff: int | None = None  # None: 4 d_model
    max_len: int = 64
    placement: str = "pre"
    norm: str = "layernorm"
    init: str = "default"
    embed_norm: bool = False
    scale_embedding: bool = False
    gain_offset: bool = False
    attn_logit_cap: float | None = None
    final_logit_cap: float | None = None
    qk_norm: str | None = None
    qk_norm_span: str = "head"
    deepnorm: bool = False
    deepnorm_parts: str = "both"
    admin: bool = False
    layer_scaling: bool = False
    alpha_init: float = 0.5
    learned_embed_scale: bool = False
    rezero: bool = False

    def __post_init__(self):
        def normalized(name, value):  # a frozen field set once, to its checked value
            object.__setattr__(self, name, value)

        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "max_len"):
            normalized(name, check_positive_int(name, getattr(self, name)))
        check_heads(self.d_model, self.n_heads)
        if self.d_ff is not None:  # 0 would make the feed-forward do nothing
            normalized("d_ff", check_positive_int("d_ff", self.d_ff))
        check_placement(self.placement, MODEL_PLACEMENTS)
        check_choice("norm", self.norm, NORMS)
        check_choice("init", self.init, INITS)
        for field in dataclasses.fields(self):
            if field.type is bool:
                check_flag(field.name, getattr(self, field.name))
        normalized("attn_logit_cap", check_cap("attn_logit_cap", self.attn_logit_cap))
        normalized("final_logit_cap", check_cap("final_logit_cap", self.final_logit_cap))
        check_qk_norm(self.qk_norm, self.qk_norm_span)
        self._check_combinations()

    def _check_combinations(self):
        placement, norm, init = self.placement, self.norm, self.init
        if norm == "identity" or placement == "none":
            for name in NEEDING_A_NORM:
                if getattr(self, name):
                    raise ValueError(
                        f"{name}=True would need a norm; placement {placement!r} with norm "
                        f"{norm!r} has none (embed_norm and gain_offset act on a norm; deepnorm, "
                        f"admin and layer_scaling are rules for the norms around the residual "
                        f"stream)"
                    )
        if (self.deepnorm or self.admin) and placement != "post":
            raise ValueError("deepnorm and admin are Post-LN schemes: they need placement 'post'")
        if self.deepnorm and self.admin:
            raise ValueError("deepnorm and admin weight the residual sum two ways: choose one")
        if self.deepnorm and init != "default":
            raise ValueError("deepnorm has its own init (beta); it needs init 'default'")
        check_choice("deepnorm_parts", self.deepnorm_parts, DEEPNORM_PARTS)
        if self.deepnorm_parts != "both" and not self.deepnorm:
            raise ValueError("deepnorm_parts picks DeepNorm's halves: it needs deepnorm=True")
        if self.rezero and (placement != "none" or init != "default"):
            raise ValueError("rezero gates a norm-free stack at the default init: it needs "
                             "placement 'none' and init 'default'")  # fmt: skip
        if self.layer_scaling and placement != "pre":
            raise ValueError("layer_scaling scales Pre-LN's input norms: it needs placement 'pre'")
        check_positive_float("alpha_init", self.alpha_init)
        if self.alpha_init != 0.5 and norm not in POINTWISE:
            raise ValueError(f"alpha_init is the init of {POINTWISE}'s alpha; norm is {norm!r}")
        if placement == "mix" and int(MIX_POST_FRACTION * self.n_layers) == 0:
            raise ValueError(f"placement 'mix' needs n_layers >= 4 (floor(L / 4) Post-LN blocks), "
                             f"got {self.n_layers}")  # fmt: skip
        if self.learned_embed_scale and (self.scale_embedding or init == "tfixup"):
            raise ValueError("learned_embed_scale replaces the fixed sqrt(d) of scale_embedding "
                             "and T-Fixup: choose one")  # fmt: skip
        if self.scale_embedding and init == "tfixup":
            raise ValueError("init 'tfixup' already multiplies the embedding by sqrt(d); "
                             "scale_embedding would do it twice")  # fmt: skip


class TransformerLM(nn.Module):
    """Tokens (B x T, int64) -> next-token logits (B x T x vocab_size), for one `TransformerConfig`.

    x_0 = token embedding (times sqrt(d) under T-Fixup or `scale_embedding`) + position embedding,
    normalized if `embed_norm`; the blocks; a final norm for `pre`, `peri` and `reordered` (whose
    residual stream is otherwise never normalized); a linear head, its logits soft-capped if
    `final_logit_cap`. The options are described in the module's docstring.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise ValueError(
                f"config must be a TransformerConfig, e.g. TransformerConfig(vocab_size, "
                f"n_layers=6) or a paper's builder such as peri_ln(vocab_size); got {config!r:.80}"
            )
        self.config = config
        d_model, n_layers, placement = config.d_model, config.n_layers, config.placement
        norm, gain_offset, alpha_init = config.norm, config.gain_offset, config.alpha_init
        d_ff = 4 * d_model if config.d_ff is None else config.d_ff
        self.vocab_size, self.max_len, self.n_layers = config.vocab_size, config.max_len, n_layers
        self.placement, self.norm, self.init = placement, norm, config.init
        self.final_logit_cap = config.final_logit_cap
        self.deepnorm, self.deepnorm_parts = config.deepnorm, config.deepnorm_parts
        # fairseq's embed_scale, which T-Fixup's N(0, d^{-1/2}) embeddings are drawn for; Gemma's
        fixed_scale = config.init == "tfixup" or config.scale_embedding
        self.embed_scale = math.sqrt(d_model) if fixed_scale else 1.0
        self.token_embedding = nn.Embedding(config.vocab_size, d_model)
        self.position_embedding = nn.Parameter(torch.zeros(config.max_len, d_model))
        # DyT's LLaMA models: a learnable scalar on the embedding, initialized to sqrt(d)
        self.learned_embed_scale = (
            nn.Parameter(torch.tensor(math.sqrt(d_model))) if config.learned_embed_scale else None
        )
        self.embed_norm = (
            make_norm(norm, d_model, gain_offset, alpha_init) if config.embed_norm else None
        )
        n_post = int(MIX_POST_FRACTION * n_layers) if placement == "mix" else 0
        # DeepNorm's alpha = (2M)^{1/4}, unless deepnorm_parts keeps beta only
        deepnorm, deepnorm_parts = config.deepnorm, config.deepnorm_parts
        alpha = (2 * n_layers) ** 0.25 if deepnorm and deepnorm_parts != "beta" else 1.0
        self.blocks = nn.ModuleList(
            Block(
                d_model, config.n_heads, d_ff,
                ("post" if index < n_post else "pre") if placement == "mix" else placement,
                norm, gain_offset=gain_offset, attn_logit_cap=config.attn_logit_cap,
                qk_norm=config.qk_norm, qk_norm_span=config.qk_norm_span,
                max_len=config.max_len, residual_scale=alpha, admin=config.admin,
                input_scale=(index + 1) ** -0.5 if config.layer_scaling else 1.0,  # 1 / sqrt(l)
                alpha_init=alpha_init, rezero=config.rezero,
            )
            for index in range(n_layers)
        )  # fmt: skip
        final = placement in FINAL_NORM
        self.final_norm = make_norm(norm, d_model, gain_offset, alpha_init) if final else None
        self.head = nn.Linear(d_model, config.vocab_size)
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


# ---- each paper's network, as a config: its choices, and any other field as `options` ----------


def post_ln(vocab_size: int, **options) -> TransformerConfig:
    """Vaswani et al.'s (2017) Post-LN: x_{l+1} = LN(x_l + F(x_l)), no final norm."""
    return TransformerConfig(vocab_size, **{"placement": "post", **options})


def pre_ln(vocab_size: int, **options) -> TransformerConfig:
    """Pre-LN (analysed by Xiong et al. 2020): x_{l+1} = x_l + F(LN(x_l)), a final LN."""
    return TransformerConfig(vocab_size, **{"placement": "pre", **options})


def peri_ln(vocab_size: int, **options) -> TransformerConfig:
    """Kim et al.'s (2025) Peri-LN: the peri block, a final norm and (their option, on here) a norm
    on the embedding output."""
    return TransformerConfig(vocab_size, **{"placement": "peri", "embed_norm": True, **options})


def gemma2(vocab_size: int, **options) -> TransformerConfig:
    """Gemma 2's sandwich: the same peri block with RMSNorm, no norm on the embedding output but the
    embedding times sqrt(d), gains g = 1 + w, attention scores capped at 50 and logits at 30."""
    gemma = {
        "placement": "peri",
        "norm": "rmsnorm",
        "scale_embedding": True,
        "gain_offset": True,
        "attn_logit_cap": GEMMA2_ATTN_LOGIT_CAP,
        "final_logit_cap": GEMMA2_FINAL_LOGIT_CAP,
    }
    return TransformerConfig(vocab_size, **{**gemma, **options})


def olmo2(vocab_size: int, **options) -> TransformerConfig:
    """OLMo 2's reordered norm x_{l+1} = x_l + RMSNorm(F(x_l)) with an RMSNorm on the whole query
    and key projections (notebook 09 runs the same with LayerNorm: `norm` and `qk_norm`)."""
    olmo = {"placement": "reordered", "norm": "rmsnorm", "qk_norm": "rmsnorm"}
    return TransformerConfig(vocab_size, **{**olmo, "qk_norm_span": "full", **options})


def deepnorm(vocab_size: int, **options) -> TransformerConfig:
    """Wang et al.'s (2022) DeepNorm: Post-LN over alpha x_l, and beta on four matrices at init."""
    return TransformerConfig(vocab_size, **{"placement": "post", "deepnorm": True, **options})


def admin(vocab_size: int, **options) -> TransformerConfig:
    """Liu et al.'s (2020) Admin: Post-LN over x_l * omega; `admin_profile` then sets omega."""
    return TransformerConfig(vocab_size, **{"placement": "post", "admin": True, **options})


def tfixup(vocab_size: int, **options) -> TransformerConfig:
    """Huang et al.'s (2020) T-Fixup: no norm, the scaled init of the module docstring."""
    return TransformerConfig(vocab_size, **{"placement": "none", "init": "tfixup", **options})


def rezero(vocab_size: int, **options) -> TransformerConfig:
    """Bachlechner et al.'s (2020) ReZero: no norm, each sublayer's output times a, a_0 = 0."""
    return TransformerConfig(vocab_size, **{"placement": "none", "rezero": True, **options})


def mix_ln(vocab_size: int, **options) -> TransformerConfig:
    """Li, Yin and Liu's (2025) Mix-LN: Post-LN for the first floor(L / 4) blocks, then Pre-LN."""
    return TransformerConfig(vocab_size, **{"placement": "mix", **options})


def layernorm_scaling(vocab_size: int, **options) -> TransformerConfig:
    """Sun et al.'s (2025) LayerNorm Scaling: Pre-LN, block l's input norms times 1 / sqrt(l)."""
    return TransformerConfig(vocab_size, **{"placement": "pre", "layer_scaling": True, **options})


def peri_ln_model(vocab_size: int, **options) -> TransformerLM:
    """`TransformerLM(peri_ln(vocab_size, **options))`."""
    return TransformerLM(peri_ln(vocab_size, **options))


def gemma2_model(vocab_size: int, **options) -> TransformerLM:
    """`TransformerLM(gemma2(vocab_size, **options))`."""
    return TransformerLM(gemma2(vocab_size, **options))


def next_token_loss(model: TransformerLM, tokens: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting tokens[:, 1:] from the tokens before each (nats/token)."""
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
