# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 · The Transformer: where the norm goes, and whether it must be there
#
# *Layer Normalization* (Ba, Kiros, Hinton 2016) never mentions the Transformer: it appeared eleven
# months later, and wrote every sublayer as $\mathrm{LayerNorm}(x + \mathrm{Sublayer}(x))$ without
# saying why. This notebook shows why LayerNorm fit, then checks what the next eight years learned:
#
# - Post-LN against Pre-LN at initialization: the gradient of the last feed-forward matrix against
#   depth (claim **T1**) and the size of the residual stream (**T2**), Xiong et al. 2020;
# - why Post-LN needs learning-rate warmup and Pre-LN does not (**T3**);
# - removing the norm: the RMSNorm paper's "we fail to train" (**T4**), T-Fixup's initialization that
#   makes it possible again (**T5**), and DyT, which replaces the norm by an element-wise tanh
#   (**T6**);
# - what the motive became: Santurkar et al.'s smoother landscape, and the exact projection in
#   BatchNorm's backward pass (**T7**).
#
# Everything is scaled to a laptop CPU: a 6-layer, $d = 64$ language model trained for 200 steps on a
# generated language, three seeds per configuration (the scaled-down list is at the end). The first
# run takes about a minute and a half on one core, mostly 28 small training runs; after that the
# results come from the store in `.cache/` and the notebook runs in seconds.

# %%
# %matplotlib inline
import inspect

import numpy as np
import torch

import lnpaper
from lnpaper import claims, experiments, figures
from lnpaper.data import SyntheticLanguage
from lnpaper.models import TransformerLM
from lnpaper.models.transformer import Block
from lnpaper.spread import mean_sd_text

lnpaper.setup()

# %% [markdown]
# ## Why LayerNorm fit the Transformer
#
# The Transformer dropped recurrence but kept everything that made BatchNorm awkward for recurrent
# nets (notebook 01): inputs of every length, generation one token at a time with a batch of one,
# and a model that must compute at inference exactly what it computed in training. LayerNorm
# normalizes each token over its own $d$ features (notebook 02, claim F2), so none of these matters.
#
# Two consequences, checked on the model this notebook trains. Decoding token by token, each step
# with a batch of one, gives the same logits as the whole sequence at once (to float32 rounding);
# and training mode and evaluation mode are one function. BatchNorm would fail both: it cannot even normalize one token.

# %%
torch.manual_seed(0)
model = TransformerLM(16, d_model=64, n_layers=6, placement="pre")
sentence = torch.randint(0, 16, (1, 12))
whole = model(sentence)
step_by_step = torch.stack([model(sentence[:, : t + 1])[0, -1] for t in range(12)])
print(f"max |whole sequence - token by token| = {(whole[0] - step_by_step).abs().max():.1e}")
model.eval()
print(f"max |train mode - eval mode|           = {(model(sentence) - whole).abs().max():.1e}")
assert torch.allclose(whole[0], step_by_step, atol=1e-5)
try:
    lnpaper.BatchNorm(64)(torch.randn(1, 64))
except ValueError as error:
    print(f"BatchNorm on one token: ValueError: {str(error)[:70]}...")

# %% [markdown]
# ## The model, and where its norm goes
#
# `lnpaper.models.TransformerLM` is a decoder-only language model: token and position embeddings, a
# stack of blocks, a linear head. Each block has causal self-attention and a feed-forward network
# $F(x) = \mathrm{ReLU}(x W^{(1)} + b^{(1)})\, W^{(2)} + b^{(2)}$, each with a residual connection.
# The `placement` decides where the normalizer sits; each is two lines next to its formula:

# %%
print(inspect.getsource(Block.forward))

# %% [markdown]
# - **Post-LN** (the 2017 Transformer) normalizes the residual stream itself after every sublayer:
#   there is no clean path from input to output.
# - **Pre-LN** normalizes only what enters a sublayer: the stream is a plain sum
#   $x_L = x_0 + \sum_l F_l(\cdot)$, never normalized inside the stack, so it needs one final norm
#   before the head.
# - **Peri-LN** (Kim et al. 2025; the same block appeared earlier as "sandwich" norms) normalizes a
#   sublayer's input *and* output, and keeps the stream unnormalized.
# - `norm` picks LayerNorm, RMSNorm, DyT or `identity`; `identity` keeps the slots but computes
#   nothing, which is the `none` network. `tests/test_transformer.py` pins each of these facts.
#
# ## A language with a known floor
#
# Real text would need a download and hours. `lnpaper.data.SyntheticLanguage` generates sequences
# from a second-order Markov chain over 16 tokens: after any two tokens only three continuations are
# allowed, with fixed random probabilities. Because the rule is known, so is the best loss any model
# can reach, and so are the milestones on the way: knowing token frequencies (unigram), knowing the
# previous token (bigram), knowing the previous two (the rule, which needs attention).

# %%
language = SyntheticLanguage()
levels = language.levels()
print(f"uniform guess    ln V = {levels.uniform:.3f} nats/token")
print(f"unigram          H(x_t) = {levels.unigram:.3f}")
print(f"bigram           H(x_t | x_t-1) = {levels.bigram:.3f}")
print(f"the rule         H(x_t | x_t-2, x_t-1) = {levels.rate:.3f}")
print(f"entropy floor of a 17-token sequence's loss: {language.entropy_floor(17):.3f}")
print("two sentences:", *(" ".join(f"{t:2d}" for t in row) for row in language.sample(2, 17, 0)),
      sep="\n  ")  # fmt: skip

# %% [markdown]
# A loss below 2.34 means the model uses more than the previous token (the rule looks two back);
# 0.94 is the floor.
#
# ## T1 · The gradient of the last $W^{(2)}$ at initialization
#
# Xiong et al. (2020, Theorem 1) analyse one quantity at initialization: the gradient of $W^{(2)}$ in
# the last feed-forward sublayer. Under a deliberately simple setting (single-head attention with
# $W^Q = W^K = 0$, Xavier weights, LayerNorm gain 1 and bias 0, Gaussian inputs, and an assumption
# that hidden-state norms concentrate) it is bounded by $O(d\sqrt{\ln d})$ for Post-LN, independent
# of the depth $L$, and by $O(d\sqrt{\ln d / L})$ for Pre-LN. These are upper bounds, not "Post-LN
# explodes". Their measurement: about 1.6 for Post-LN from 6 to 14 layers, falling for Pre-LN.
#
# `experiments.grad_norm_vs_depth` follows that setting: $W^Q = W^K = 0$ (so each token averages the
# tokens it may see: causal uniform attention), one head, feed-forward width $d = 128$ as in their
# analysis, token embeddings $N(0, 1)$ and positions 0 so the first block sees Gaussian inputs, and
# the next-token loss on a batch of the language. Ten seeds per depth.

# %%
post = experiments.grad_norm_vs_depth(placement="post")
pre = experiments.grad_norm_vs_depth(placement="pre")
print(f"||dL/dW^(2)||_F of the last block, mean +- sd over {len(post.seeds)} seeds")
print(f"{'L':>4s} {'Post-LN':>16s} {'Pre-LN':>16s}")
for k, depth in enumerate(post.depths):
    cells = [mean_sd_text(r.grad_norm[k]) for r in (post, pre)]
    print(f"{depth:4d} {cells[0]:>16s} {cells[1]:>16s}")
at_14 = np.mean(post.grad_norm[-1]) / np.mean(pre.grad_norm[-1])
print(f"\nat L = 14, Post-LN's gradient is {at_14:.1f} times Pre-LN's")
print(f"14-to-6 ratio  Post-LN {post.ratio_last_to_first:.2f} +- {post.ratio_standard_error:.2f}"
      f"   Pre-LN {pre.ratio_last_to_first:.2f} +- {pre.ratio_standard_error:.2f}"
      f"   (the bound's scaling for Pre-LN: sqrt(6/14) = {np.sqrt(6 / 14):.2f})")  # fmt: skip
assert abs(post.ratio_last_to_first - 1) <= 2 * post.ratio_standard_error  # flat within noise
assert pre.ratio_last_to_first + 2 * pre.ratio_standard_error < 1  # falls with depth
figures.grad_norm_vs_depth(experiments.xiong_setting())

# %% [markdown]
# Pre-LN's gradient falls with depth, and its 14-to-6 ratio lands on the bound's $\sqrt{6/14}$.
# Post-LN's does not fall: it stays at the same level from 6 to 14 layers, as Xiong et al. measured.
# Its ratio is 1.24, 1.6 standard errors above 1: "about constant" holds within the spread of ten
# seeds, and a slight rise is not excluded at this sample size. The absolute values (about 2 for
# Post-LN, against their 1.6) depend on the loss and the data and are not comparable. What matters
# for training is the *ratio between the placements*: at 14 layers Post-LN's last layer gets almost
# five times Pre-LN's gradient, and that is the gradient a large early step acts on.
#
# ## T2 · The residual stream against Lemma 2
#
# The proof rests on Lemma 2. For Post-LN, the sum entering the second LayerNorm of each block,
# $x^{post,5} = x + \mathrm{FFN}(x)$ with $\lVert x \rVert^2 = d$ after the first LayerNorm, has
# $E\lVert x^{post,5}\rVert^2 = 3d/2$ in every block (the ReLU keeps half of the FFN's $d$). For
# Pre-LN the stream grows by between $d/2$ (FFN only) and $3d/2$ (FFN plus an attention term of at
# most $d$) per block: $(1 + l/2)\,d \le E\lVert x_l\rVert^2 \le (1 + 3l/2)\,d$. We count $l$ as the
# number of blocks the stream has passed, so $l = 0$ is the embedding, $E\lVert x_0\rVert^2 = d$.

# %%
print("Post-LN, E||x^(post,5)||^2 / d per block (Lemma 2: 1.5):")
print("  " + " ".join(f"{v:.2f}" for v in post.residual_sq_norm))
print("Pre-LN, E||x_l||^2 / d after l blocks, with Lemma 2's bounds:")
for layer, value in zip(pre.layers, pre.residual_sq_norm, strict=True):
    if layer % 2 == 0:
        print(f"  l={layer:2d}: {value:6.2f}   in [{1 + layer / 2:4.1f}, {1 + 1.5 * layer:4.1f}]")
assert all(abs(v - 1.5) < 0.15 for v in post.residual_sq_norm)
for layer, value in zip(pre.layers[1:], pre.residual_sq_norm[1:], strict=True):
    assert 1 + layer / 2 <= value <= 1 + 1.5 * layer, layer
figures.residual_norms_vs_lemma2(experiments.xiong_setting())

# %% [markdown]
# Both hold. Pre-LN's stream grows by about $1.15\,d$ per block, inside the band: the FFN adds its
# $d/2$, and the attention term, which the lemma only bounds between 0 and $d$, is large for the
# first positions of a sequence, where a token averages only a few tokens (often the same one, in a
# 16-token vocabulary). The mechanism of Theorem 1 is visible here: in Pre-LN, the final LayerNorm divides
# by a stream whose size grows like $\sqrt{l}$, which scales the last layers' gradients down by the
# same factor; Post-LN renormalizes to $\lVert x\rVert^2 = d$ after every sublayer, so nothing
# scales down with depth.
#
# ## T3 · Warmup
#
# Xiong et al. trained Post-LN on IWSLT14 De-En with Adam at learning rate 5e-4 or 1e-3: without
# warmup it reached BLEU 8.45, with 4000 warmup steps about 34. Pre-LN trained without warmup.
#
# Here: the 6-layer, $d = 64$ model, Adam at learning rate 3e-3, 200 steps of 16 sequences, with and
# without 50 steps of linear warmup, three seeds. Why 3e-3: at 1e-3 our small Post-LN model trains
# without warmup (one seed, to show it), so 3e-3 is where the difference shows at this scale.

# %%
gentle = experiments.lm_training(placement="post", lr=1e-3, seeds=(0,))
print(f"Post-LN, lr 1e-3, no warmup, seed 0: held-out loss {gentle.final_loss[0]:.3f} "
      f"(bigram level {levels.bigram:.3f})")  # fmt: skip
assert gentle.final_loss[0] < levels.bigram

# %% [markdown]
# At 3e-3, held-out loss after training:

# %%
study = experiments.normalization_study()


def summary(name):
    run = study.runs[name]
    finals = [f"{v:.3f}" if v is not None else "diverged" for v in run["final_loss"]]
    return f"{name:32s} {mean_sd_text(run['final_loss']):>16s}   seeds: {', '.join(finals)}"


for name in ["Post-LN, no warmup", "Post-LN, warmup", "Pre-LN, no warmup", "Pre-LN, warmup"]:
    print(summary(name))
final = {name: run["final_loss"] for name, run in study.runs.items()}
assert min(final["Post-LN, no warmup"]) > levels.bigram > max(final["Post-LN, warmup"])
assert max(final["Pre-LN, no warmup"]) < levels.bigram
assert abs(np.mean(final["Pre-LN, no warmup"]) - np.mean(final["Pre-LN, warmup"])) < 0.1
figures.warmup_curves(study)

# %% [markdown]
# It reproduces, in the small. Without warmup, every Post-LN seed stalls at the unigram level (2.75):
# it learns token frequencies and nothing more, the loss flat for 180 steps. With 50 warmup steps,
# the same model passes the bigram level. Pre-LN trains without warmup, and warmup changes its
# result by less than the spread of the seeds. Xiong et al. also found that warmup helped with plain
# SGD, so Adam's noisy early variance estimates are not the whole story; we test Adam only.
#
# ## T4 · No normalization at all
#
# The RMSNorm paper (Zhang & Sennrich 2019) trained Transformer-base on WMT14 En-De with LayerNorm
# (26.6 BLEU), RMSNorm (26.8) and without normalization: "we fail to train this model". The same
# model here with `norm="identity"`, same learning rate, with and without warmup:

# %%
for name in ["Pre-LN, no warmup", "no norm (identity), no warmup", "no norm (identity), warmup"]:
    print(summary(name))
cold = study.runs["no norm (identity), no warmup"]
print(f"initial held-out loss without a norm: {np.mean(cold['initial_loss']):.1f} "
      f"(ln V = {levels.uniform:.2f})")  # fmt: skip
torch.manual_seed(0)
plain = TransformerLM(16, d_model=64, n_layers=6, placement="none", max_len=16)
with torch.no_grad():
    stream = plain.embed(language.sample(64, 16, seed=0))
    growth = []
    for block in plain.blocks:
        growth.append((block(stream).pow(2).mean() / stream.pow(2).mean()).item())
        stream = block(stream)
print("no norm, at init: mean square of the stream grows per block by",
      " ".join(f"{g:.2f}" for g in growth))  # fmt: skip
assert all(v is None or v > levels.unigram for v in final["no norm (identity), no warmup"])
assert min(final["no norm (identity), warmup"]) > max(final["Pre-LN, no warmup"])
figures.without_normalization(study)

# %% [markdown]
# Without a norm nothing holds the residual stream's size. At Xavier initialization each block
# multiplies the stream's mean square by about two or more (the line above the figure measures it on
# a fresh model), so after six blocks the logits are large and the initial loss is far above
# $\ln V$. Without warmup, training never recovers: every seed ends far above the unigram level.
# With warmup it trains, but ends near the bigram level, far behind Pre-LN. At this scale "fails to train"
# holds without warmup, and "falls far behind" with it.
#
# ## T5 · T-Fixup: an initialization instead of a norm
#
# Huang, Perez, Ba and Volkovs (2020) asked what the norm and the warmup were doing, and replaced
# both with an initialization: Xavier weights, token embeddings $N(0, d^{-1/2})$, then the value and
# output matrices of attention, both feed-forward matrices and the embeddings scaled by
# $(9N)^{-1/4}$ in an $N$-layer decoder. With it they trained Transformers of up to 200 layers with
# no LayerNorm and no warmup. (We read $N(0, d^{-1/2})$ as a standard deviation of $d^{-1/2}$, the
# convention of the fairseq code the paper builds on; `TransformerLM`'s docstring says exactly what
# is implemented.)
#
# A deeper model than before, 12 layers with no normalization and no warmup, at the same learning
# rate:

# %%
fixup = experiments.tfixup_study()
for name, run in fixup.runs.items():
    print(f"{name:30s} held-out loss at init: {np.mean(run['initial_loss']):.3g}")
for name, run in fixup.runs.items():
    finals = [f"{v:.3f}" if v is not None else "diverged" for v in run["final_loss"]]
    print(f"{name:30s} held-out loss: {', '.join(finals)}; non-finite at step: {run['diverged_at']}")
xavier_run, fixup_run = fixup.runs.values()
assert all(v is None or v > levels.unigram for v in xavier_run["final_loss"])
assert all(v is not None and v < levels.bigram for v in fixup_run["final_loss"])
figures.tfixup_curves(fixup)

# %% [markdown]
# With Xavier initialization the 12-layer model without a norm starts with a loss in the thousands,
# and most seeds hit a non-finite loss within the first steps. The same model with T-Fixup's scaling
# trains from the first step and ends below Pre-LN's 6-layer loss above. Each residual branch is
# scaled by about $(9N)^{-1/2}$, so the sum of twelve of them stays near the size of its input:
# the job the norm was doing at initialization.
#
# ## T6 · DyT: a norm without statistics
#
# Zhu, Chen, He, LeCun and Liu (2025) replace every norm layer by
# $\mathrm{DyT}(x) = \gamma \tanh(\alpha x) + \beta$, with one learnable scalar $\alpha$ (initialized
# to 0.5) and no mean or variance of anything: each value is squashed on its own. At their scales it
# matches or beats the normalized models; others report it lagging at small scale, so we compare
# without asserting either way. Pre-LN placement, same settings as T3:

# %%
for name in ["Pre-LN, no warmup", "Pre-DyT, no warmup"]:
    print(summary(name))
dyt_gap = np.mean(final["Pre-DyT, no warmup"]) - np.mean(final["Pre-LN, no warmup"])
print(f"DyT minus LayerNorm: {dyt_gap:+.3f} nats")
assert max(final["Pre-DyT, no warmup"]) < levels.bigram  # it trains; no equality is asserted

# %% [markdown]
# At this scale DyT trains as well as LayerNorm and, after 200 steps, a little better on every seed.
# This is one short run on a toy language, not a verdict on DyT: the comparison can flip with
# learning rate, length of training and $\alpha$'s initial value.
#
# ## T7 · What the motive became
#
# BatchNorm was introduced to reduce "internal covariate shift", the drift of each layer's input
# distribution. Santurkar et al. (2018) argued that its benefit has little to do with that: it makes
# the loss landscape smoother, its loss and gradient more Lipschitz. One piece is exact. For one
# feature over a batch of $N$, with $\hat y = (x - \mu_B)/\sigma$,
# $\sigma = \sqrt{\sigma_B^2 + \epsilon}$ and upstream gradient $g = \partial L/\partial y$:
#
# $$\frac{\partial L}{\partial x} = \frac{\gamma}{\sigma}\Big(g - \tfrac1N \mathbf 1
#   \langle \mathbf 1, g\rangle - \tfrac1N \hat y \langle \hat y, g\rangle\Big).$$
#
# Since $\langle \mathbf 1, \hat y\rangle = 0$ and $\lVert\mathbf 1\rVert^2 = N$, and
# $\lVert \hat y\rVert^2 = N\sigma_B^2/(\sigma_B^2 + \epsilon)$, the bracket is $g$ projected off
# $\mathrm{span}\{\mathbf 1, \hat y\}$: exactly so when $\epsilon = 0$. It is LayerNorm's backward
# pass from notebook 02, taken down a column instead of along a row.

# %%
projection = experiments.batchnorm_backward_projection()
print(f"batch x features: {projection.shape}, float64")
print(f"autograd through lnpaper.BatchNorm vs the formula:   {projection.max_diff_formula:.1e}")
print(f"lnpaper.functional.batch_norm_backward vs autograd:  {projection.max_diff_numpy:.1e}")
print(f"largest |<1, dL/dx>| over features:                  {projection.max_sum:.1e}")
print(f"largest |cos(dL/dx, y_hat)|:                          {projection.max_cos_y_hat:.1e}")
print("||y_hat||^2 / N per feature:", " ".join(f"{v:.6f}" for v in projection.y_hat_sq_norm_over_n))
print(f"largest |P P - P| of P = I - 11^T/N - y_hat y_hat^T/N:  {projection.max_idempotence_error:.1e}")
assert projection.max_diff_formula < 1e-12 and projection.max_diff_numpy < 1e-12
assert projection.max_sum < 1e-12

# %% [markdown]
# The formula is exact to float64 rounding. The projection is exact only up to $\epsilon$: the
# feature with the smallest spread ($\sigma_B \approx 0.1$, so $\epsilon/\sigma_B^2 = 10^{-3}$)
# keeps a sliver along $\hat y$, as in notebook 02.
#
# Now the landscape. Santurkar et al. walked along the gradient direction during training and
# measured how much the loss varies and how far the gradient moves. We do the same at digits scale:
# notebook 01's MLP (64-128-128-10, `lnpaper.models.mlp.MLP`) on the digits' 1197 training images,
# plain SGD at learning rate 0.2, with BatchNorm, LayerNorm or nothing before each ReLU, probing
# steps of 0.5 to 4 times the learning rate at seven points of training, on one fixed batch.

# %%
smooth = experiments.loss_smoothness()
print(f"{'step':>5s}" + "".join(f"  {n + ': range, dg':>24s}" for n in smooth.norms))
for k, step in enumerate(smooth.checkpoints):
    cells = [f"{smooth.loss_range[n][k]:9.3f} {smooth.grad_change[n][k]:9.2f}" for n in smooth.norms]
    print(f"{step:5d}" + "".join(f"  {c:>24s}" for c in cells))
medians = experiments.transformer.smoothness_medians(smooth)  # over the checkpoints after step 0
for key, by_norm in medians.items():
    print(f"median {key:16s}" + "".join(f"  {n} {v:.3g}" for n, v in by_norm.items()))
for key in ("loss_range", "grad_change"):
    assert medians[key]["batchnorm"] < medians[key]["none"]
figures.loss_smoothness(smooth)

# %% [markdown]
# With BatchNorm the loss barely moves along a step once training is under way, and the gradient
# changes by about its own size; without normalization the loss varies about eight times more and
# the gradient by about three times its size. That much is Santurkar et al.'s picture, at one seed
# and one learning rate. The limits, honestly: the effective $\beta$-smoothness (change of gradient
# per unit of distance) does not favour BatchNorm here (4.7 against 3.9 without a norm), and
# LayerNorm is mixed: its loss varies as little as BatchNorm's late in training, its gradient moves
# more, and its effective $\beta$ is the largest of the three. These medians come from one seed, and
# they move with small details of the setup, so read them as a direction, not a measurement. The
# smoothing result was measured on BatchNorm and does not transfer to LayerNorm for free. We also do
# not rerun their other experiment (injecting noise into the input distributions), so the claim is
# checked in part.
#
# ## What was scaled down
#
# | | the papers | here |
# |---|---|---|
# | task | IWSLT14 / WMT14 translation, BERT | a second-order Markov language, 16 tokens |
# | model | 6-6 to 14-14 encoder-decoder, $d = 512$ | decoder-only, $d = 128$ (T1/T2), $d = 64$, 6 or 12 layers |
# | training | tens of thousands of steps, BLEU | 200 steps of 16 x 16 tokens, held-out loss |
# | seeds | 10 (T1) | 10 (T1/T2), 3 (T3-T6), 1 (T7) |
# | T-Fixup | up to 200 layers | 12 layers |
#
# The claims are checked in direction and mechanism, not in their numbers: BLEU 8.45 against 34 has
# no counterpart in a toy language, but "stalls at the unigram level without warmup, trains with it"
# is the same failure in miniature.
#
# ## Claims checked here

# %%
print(claims.checked_here(["T1", "T2", "T3", "T4", "T5", "T6", "T7"]))
