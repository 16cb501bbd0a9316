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
# # 10 · What the norm computes: the redundant mean, the backward pass, a pointwise replacement
#
# *About 15 minutes to read. From the record it runs in seconds; live, 8 min on one core.*
#
# Three questions that *Layer Normalization* (Ba, Kiros, Hinton 2016) left open have been asked
# again since 2019. Is the re-centering needed at all (**E1**)? Is what helps the forward
# normalization or the gradients through its statistics (**E2**)? Can a pointwise squashing
# function, with no statistic at all, replace it (**Y1**)? Each has an exact or mechanistic part that
# a laptop can check, and a number from a large model that it cannot. The notebook ends with nGPT and
# a map of today's open models.
#
# Verdict words such as "negligible" and "not exercised" are defined in notebook 01's box *How to
# read a verdict*.

# %%
# %matplotlib inline
import statistics

import torch

import lnpaper
from lnpaper import claims, stats
from lnpaper.chapters.ch10_what_the_norm_computes import analysis, figures, runs
from lnpaper.source import code

lnpaper.setup()

# %% [markdown]
# ## E1 · The mean is redundant in a Pre-LN Transformer
#
# In a Pre-LN model only LayerNorms read the residual stream $x$: each block's two input norms and
# the final norm. LayerNorm ignores the stream's mean over the hidden axis,
# $\mathrm{LN}(x + c\mathbf{1}) = \mathrm{LN}(x)$, so that mean is computed, carried and thrown
# away. Jiang et al. (NeurIPS 2023, arXiv:2305.14858) turn this into an exact rewrite:
#
# 1. make every write to the stream zero-mean: each token and position embedding row
#    $e \to e - \bar e\,\mathbf{1}$, and each residual branch's output projection $y = zW^\top + c$
#    (attention's $W^O$, the FFN's $W^{(2)}$) centered over its output axis,
#    $W \to W - \mathbf{1}\,\overline{W}_{\text{rows}}$, $c \to c - \bar c\,\mathbf{1}$, so that
#    $\bar y = 0$ for every input $z$;
# 2. on a zero-mean input $\mu = 0$ and $\sigma^2 = \frac1d\sum_i x_i^2$, so
#    $g \odot (x - \mu)/\sqrt{\sigma^2 + \epsilon} + b = g \odot x/\mathrm{RMS}(x) + b$: LayerNorm
#    *is* RMSNorm with the same $\epsilon$; RMSNorm has no bias, so $b$ folds into the linear layers
#    that read the norm, $(r + b)W^\top + c = rW^\top + (Wb + c)$.
#
# The two steps, as `lnpaper.models.zero_mean` writes them:

# %%
from lnpaper.chapters.ch10_what_the_norm_computes import claims as mean_claims
from lnpaper.data import SyntheticLanguage
from lnpaper.models import TransformerLM, zero_mean

print(code(zero_mean.center_residual_writers))
print(code(zero_mean._fold_bias))

# %% [markdown]
# Live, on notebook 06's model at init, in float64: the rewrite's logits against the original's,
# and the mean of what every norm reads after the rewrite, as bounds (roundoff differs by machine).

# %%
language = SyntheticLanguage()
torch.manual_seed(0)
pre_ln = TransformerLM(
    language.vocab_size, d_model=64, n_layers=6, n_heads=2, max_len=16
)
pre_ln = pre_ln.double()
tokens = language.sample(64, 16, seed=999_999)
rewritten = zero_mean.zero_mean_rmsnorm(pre_ln)
with torch.no_grad():
    gap = (rewritten(tokens) - pre_ln(tokens)).abs().max().item()
stream_mean = runs._norm_input_means(rewritten, tokens)
assert gap < mean_claims.EXACT_BOUND, f"rewrite differs by {gap:.1e}"
assert stream_mean < 1e-12, f"a norm reads a stream with mean / RMS {stream_mean:.1e}"
print(f"max |logit difference| < {mean_claims.EXACT_BOUND:g};")
print("every norm input's |mean| / RMS < 1e-12")
block_norms = (n for b in rewritten.blocks for n in (b.attn_in_norm, b.ffn_in_norm))
slots = [rewritten.final_norm, *block_norms]
assert all(isinstance(m, lnpaper.RMSNorm) for m in slots)
print(f"all {len(slots)} norm slots are RMSNorm;")
print("the LayerNorm biases live in the readers' biases")

# %% [markdown]
# Does the equivalence survive training? The source calls the forms equivalent "in both training and
# inference" for a rewrite whose main branch is kept zero-mean. `zero_mean_drift` (from the record)
# checks the equality on ten seeds, at init and after training. Then it trains the plain rewrite,
# with nothing keeping its writers centered, beside its LayerNorm twin (same init, same batches),
# comparing their logits on held-out sequences. The rewrite is a different parameterization of the
# same function, and training does not respect it: LayerNorm's gradient is orthogonal to
# $\mathbf{1}$, RMSNorm's is not, and Adam's elementwise steps do not keep the writers centered, so
# the rewritten stream acquires a mean of its own.

# %%
drift = runs.zero_mean_drift()
logit_gap, loss_gap = analysis.drift_at_end(drift)
print(
    f"float64, {len(drift.seeds)} seeds: max |logit difference| "
    f"{drift.max_logit_diff_init:.1e} at init,"
)
print(
    f"   {drift.max_logit_diff_trained:.1e} after {drift.steps} steps "
    f"(logits up to {drift.logit_scale:.3g})"
)
seeds = f"seeds {min(logit_gap):.3g} to {max(logit_gap):.3g}"
print(f"trained side by side, after {drift.steps} steps:")
print(f"   max |logit gap| median {statistics.median(logit_gap):.3g} ({seeds})")
print(f"   |loss gap| median {statistics.median(loss_gap):.4f} nats")
print(
    f"the rewrite's norm inputs after training: largest |mean| / RMS "
    f"{statistics.median(drift.stream_mean_trained):.2g} (median over seeds)"
)
exact = (drift.max_logit_diff_init, drift.max_logit_diff_trained)
assert max(exact) < mean_claims.EXACT_BOUND, exact
assert min(logit_gap) > 1e3 * max(row[0] for row in drift.logit_drift), (
    "no drift under Adam"
)

# %%
e1 = claims.BY_ID["E1"].evaluate()
print(claims.evidence(e1))
claims.expect(e1, claims.REPRODUCED)

# %% [markdown]
# The exact part holds to roundoff, at init and on trained weights, and after training the two forms
# are equally good models (**E1 reproduced**). But they are no longer the same model: after 100 Adam
# steps their logits differ by about one unit, and the rewritten stream carries a mean again. For the
# free rewrite the equivalence is one of functions at a point, not of training trajectories. The
# source's training claim is for a rewrite kept zero-mean, which E1c tests.

# %%
figures.zero_mean_drift(drift)

# %% [markdown]
# ### E1c · Kept zero-mean, does the rewrite train as Pre-LN does?
#
# Two things separate the free rewrite from its twin.
#
# - **The constraint.** Store each writer free, $\tilde W$, and compute with
#   $W = \tilde W - \mathbf{1}\,\overline{\tilde W}_{\text{rows}}$ (a parametrization, `Centered`).
#   The stream is then zero-mean whatever the optimizer does, and $\tilde W$'s gradient is the
#   centered gradient. That is also the gradient the LayerNorm model's writers get: LayerNorm's
#   backward pass removes the mean, so the gradient reaching the stream is orthogonal to
#   $\mathbf{1}$. Under Adam the two models then keep the same moments and take the same steps.
#   Re-centering the weights after each step instead would not match under Adam, whose moments
#   would see the uncentered gradient.
# - **The bias fold.** $c' = c + Wb$ merges two parameters into one. The LayerNorm model's
#   steps change $W$ by $\delta\,(r + b)^\top$ and move $b$ as well; the rewrite's steps change
#   $W$ by $\delta\, r^\top$ and $c'$ by $\delta$. They differ at first order. An RMSNorm that
#   keeps $b$ as its own parameter ($g \odot x/\mathrm{RMS}(x) + b$, `BiasedRMSNorm`) removes the
#   fold.
#
# So the algebra predicts that, kept zero-mean with the biases kept, the rewrite is Pre-LN's model
# at every step, up to roundoff, and with the biases folded it is not. `constrained_drift` (from the
# record) trains three rewrites of each seed's model, each beside its LayerNorm twin, under Adam and
# under plain SGD. It compares log-probabilities, since adding one constant to every logit does not
# change the model.

# %%
kept_arms = runs.constrained_drift()
arm_names = list(kept_arms.logprob_gap["adam"])
print(f"{len(kept_arms.seeds)} seeds, {kept_arms.steps} steps, float64")
print("max |log-prob gap| from the LayerNorm twin over the run, per seed, and the")
print("largest |mean| / RMS of what a norm reads after training:")
for optimizer, lr in kept_arms.lrs.items():
    print(f"  {optimizer} {lr:g}")
    for arm in arm_names:
        worst = mean_claims.worst_gaps(kept_arms, optimizer, arm)
        means = kept_arms.stream_mean[optimizer][arm]
        print(
            f"    {arm:29s} {' '.join(f'{g:7.1e}' for g in worst)}"
            f"  |mean|/RMS <= {max(means):.0e}"
        )
folded, free = arm_names[1], arm_names[2]
print("folded gap / free gap, and held-out loss minus the twin's, per seed:")
for optimizer in kept_arms.lrs:
    ratios = [
        a / b
        for a, b in zip(
            mean_claims.worst_gaps(kept_arms, optimizer, folded),
            mean_claims.worst_gaps(kept_arms, optimizer, free),
            strict=True,
        )
    ]
    losses = kept_arms.final_loss[optimizer]
    twin = losses["LayerNorm"]
    shifts = [a - b for a, b in zip(losses[folded], twin, strict=True)]
    print(
        f"  {optimizer}: ratio {' '.join(f'{r:.2f}' for r in ratios)};"
        f" folded {' '.join(f'{d:+.4f}' for d in shifts)} nats"
    )

# %%
figures.constrained_drift(kept_arms)

# %%
e1c = claims.BY_ID["E1c"].evaluate()
print(claims.evidence(e1c))
claims.expect(e1c, claims.PARTLY)

# %% [markdown]
# The prediction holds on both counts. Kept zero-mean with its biases kept, the rewrite stays
# Pre-LN's model to roundoff, within $10^{-12}$ under both optimizers: the source's training
# equivalence holds for the constraint. Folded, the rewrite leaves its twin by the first comparison
# and ends 0.35 to 0.93 apart in log-probability, most of the free rewrite's drift. So E1's drift
# comes mostly from the fold, not from the stream reacquiring a mean (**E1c partly**). The source's
# own norms carry no affine and fold gain and bias alike; here only the bias is folded, so the full
# fold is not run. The folded rewrites are no worse as models: they end within 0.01 nats of their
# twins' held-out losses. A 2026 follow-up (arXiv:2605.14521), not read here, reports the
# equivalence "partially broken in practical training".

# %% [markdown]
# The source's 1-10% time saving on GPUs (**E1b**) is a wall-time number: not checkable here.
# Notebook 07 (P3) shows how much the CPU answer depends on how the two norms are written.

# %%
print(claims.BY_ID["E1b"].evaluate().verdict)

# %%
# Try it: at a third of the rate, 1e-3, do the two forms drift apart less? Two seeds,
# live: about 10 s on one core. Uncomment and run.
# mine = runs.zero_mean_drift(lr=1e-3, seeds=(0, 1))
# print("loss difference at the end:", [f"{row[-1]:+.4f}" for row in mine.loss_drift])

# %% [markdown]
# ## E2 · The backward pass through the statistics (Xu et al. 2019)
#
# Is it LayerNorm's forward normalization that helps, or the gradients through its mean and
# variance? Xu et al. (NeurIPS 2019, "Understanding and Improving Layer Normalization") pull the two
# apart. DetachNorm computes LayerNorm's forward pass, $y = g \odot (a - \mu)/\sigma + b$, but treats
# $\mu$, $\sigma$ or both as constants in the backward pass; LayerNorm-simple drops the gain and
# bias. They claim that LayerNorm-simple is better than LayerNorm on four of their datasets, and
# that detaching hurts. Here each variant fills every norm slot of a smaller Pre-norm model, sized
# to fit the record's budget and trained on fresh data:

# %%
print(code(lnpaper.norms.DetachNorm.forward))

# %%
detach = analysis.detach_study()
for name, difference in mean_claims.detach_differences(detach).items():
    print(f"{name:>17} minus LayerNorm: {difference.text()}")

# %%
e2, e2b = claims.BY_ID["E2"].evaluate(), claims.BY_ID["E2b"].evaluate()
print(claims.evidence(e2))
print(claims.evidence(e2b))
claims.expect(e2, claims.PARTLY)
claims.expect(e2b, claims.REPRODUCED)

# %% [markdown]
# Dropping the gain and bias costs nothing: LayerNorm-simple is three thousandths of a nat lower, far
# inside the 0.02 nats this ledger calls negligible, so "no worse" holds and "better" is not a
# finding (**E2 partly**). Nor could it be here: the source's reason for "better" is over-fitting,
# which gain and bias make more likely, and a model that sees fresh sequences cannot over-fit.
# Cutting the statistics from the backward pass hurts, the mean's gradient more clearly than the
# standard deviation's, whose effect stays undecided (**E2b reproduced**, if only just under Holm's
# correction; CLAIMS.md). A 2026 study (arXiv:2605.26895), not read here, reports removing the scale
# vectors harmful in LLM pre-training: a 2019 result on small models need not carry to today's.

# %%
figures.detach_norms(detach)

# %% [markdown]
# **E2d** lets the source's reason act: a pool of 512 sequences cycled for about nine passes. The
# premise is checked first: LayerNorm must over-fit the pool, its held-out loss clearly above the
# same model's on fresh data.

# %%
e2d = claims.BY_ID["E2d"].evaluate()
print(claims.evidence(e2d))
claims.expect(e2d, claims.PARTLY)

# %% [markdown]
# The premise holds: LayerNorm over-fits by about 0.29 nats. LayerNorm-simple over-fits by nearly as
# much, and the two norms' held-out losses on the pool differ by less than the negligible margin.
# Here the gain and bias are not where over-fitting comes from (**E2d partly**).

# %% [markdown]
# E2 ran both norms at one rate, 3e-3. **E2c**, declared before its run, gives each its own best of
# three rates, picked by its training loss over the last 10 steps, and grades the picks as E2 does.

# %%
e2c = claims.BY_ID["E2c"].evaluate()
print(claims.evidence(e2c))
claims.expect(e2c, claims.PARTLY)

# %% [markdown]
# Both pick 3e-3, the middle of the grid, so E2's shared rate was already each one's best: no
# worse, with a gain too small to call (**E2c partly**).

# %% [markdown]
# ## Y1 · After DyT: Derf, and when a pointwise norm helps
#
# When can a squashing function with no statistic stand in for the norm? DyT (Zhu et al. 2025,
# notebook 06) replaces the norm by $\gamma \odot \tanh(\alpha x) + \beta$. Derf (arXiv:2512.10938)
# uses $\gamma \odot \mathrm{erf}(\alpha x + s) + \beta$ with a learnable shift $s$
# ($\alpha_0 = 0.5$, $s_0 = 0$ in its code); its README reports GPT-2 validation losses
# LayerNorm 2.94, DyT 2.97, Derf 2.94, out of reach here (**Y1b**). DyT's LLaMA models also multiply
# the embedding by a learnable scalar initialized to $\sqrt d$. An independent 2026 study
# (arXiv:2604.23434, abstract) finds DyT regime-dependent: better than LayerNorm when data is
# scarce, worse with more. That is checkable in miniature: the same model (d = 32, 4 blocks) on
# fresh sequences at every step, or on a 64-sequence pool cycled about 37 times.
#
# A squashing norm saturates where $|\alpha x + s| > 2$ ($\tanh 2 = 0.96$, $\mathrm{erf}\, 2 = 0.995$):
# there its output no longer depends on its input. The cell measures how many values saturate.

# %%
print(code(lnpaper.norms.Derf.forward))

# %%
after = analysis.after_dyt_study()
print("alpha_0 0.5, minus LayerNorm:")
for (method, budget), difference in mean_claims.regime_differences(after).items():
    print(f"  {method:4s} {budget + ':':6s} {difference.text()}")
for method in ("DyT", "Derf"):
    for a in analysis.Y1_ALPHAS:
        fractions = analysis.mean_saturation(
            after.runs[method], f"alpha {a:g}, fresh"
        )
        span = f"{min(fractions):.3f}-{max(fractions):.3f}"
        print(f"{method} alpha_0 {a:g}: saturated values per slot {span}")
for method in ("DyT", "Derf"):
    scalar = after.runs[f"{method}, embedding scalar"]
    with_scalar = stats.paired_difference(
        scalar["final_loss"]["alpha 0.5, fresh"],
        after.runs[method]["final_loss"]["alpha 0.5, fresh"],
    )
    first_slot = analysis.mean_saturation(scalar, "alpha 0.5, fresh", "init")[0]
    print(f"{method} with the embedding scalar minus without:")
    print(f"   {with_scalar.text()}")
    print(f"   first slot saturated at init {first_slot:.2f}")

# %%
y1, y1b = claims.BY_ID["Y1"].evaluate(), claims.BY_ID["Y1b"].evaluate()
print(claims.evidence(y1))
print(claims.evidence(y1b))
claims.expect(y1, claims.NOT_EXERCISED)

# %% [markdown]
# The scarce half of the regime claim is not exercised (**Y1**: `inconclusive (not exercised)`). On
# the cycled pool every model overfits until it is worse than a uniform guess: held-out losses of
# 3.87 to 4.70 nats against the uniform level of 2.77. DyT and Derf overfit less than LayerNorm (0.45
# nats lower), but among models that all do worse than knowing nothing, "better" measures how
# overconfidently each has memorized, not what it has learned. On fresh data DyT and Derf at
# $\alpha_0 = 0.5$ are level with LayerNorm.
#
# The study's regime variable is tokens per parameter, T/P: DyT ahead near 0.016, behind at 1.84. Our
# pool (T/P 0.02) is close to its scarce cell; our fresh arm (T/P 0.73) is 40% of its rich cell. So
# "worse with more data" is neither reached nor refuted here; Y1c goes further. The study is a
# single-author preprint, weak evidence either way.
#
# Notebook 06 found DyT 0.17 nats *better* than LayerNorm on fresh data (d 64, 6 blocks); given each
# its own best of three rates (T6b), the lead shrinks to 0.14 nats and holds. Here every arm runs at
# one rate, 3e-3, so each gap mixes quality with sensitivity to the rate.
#
# $\alpha_0 = 0.5$ is the best initial value for both; $\alpha_0 = 1$ saturates half the final
# norm's values. The embedding scalar hurts: our embeddings are already $N(0, 1)$, so multiplying
# them by $\sqrt{32}$ saturates about half of the first slot's values at init. The scalar, we think,
# is meant for far smaller embeddings.

# %%
figures.after_dyt(after)

# %% [markdown]
# **Y1c: the rich cell.** Does DyT fall behind with more data, as the preprint finds at T/P 1.84?
# Declared before its run: the same model and rate on fresh data for 400 steps, 102,400 predicted
# tokens (T/P 1.95); DyT is worse if its held-out loss minus LayerNorm's, paired by seed, has its
# interval above 0.

# %%
rich = analysis.dyt_data_rich()
y1c = claims.BY_ID["Y1c"].evaluate()
print(claims.evidence(y1c))
claims.expect(y1c, claims.REPRODUCED)

# %%
figures.dyt_data_rich(rich)

# %% [markdown]
# At T/P near 2 DyT falls behind, by 0.15 nats, on every one of the ten seeds: the preprint's
# direction, reproduced in miniature (**Y1c reproduced**). The curves show the two level to about
# step 260 (T/P 1.3); then LayerNorm's loss drops faster and DyT's does not follow within the run.
# Across the three budgets: a 64-sequence pool (T/P 0.02) DyT better, fresh data to T/P 0.73 level,
# to T/P 1.95 worse. With one learning rate throughout, more tokens also means more steps, so "more
# data" and "longer training" are one variable here.

# %% [markdown]
# ## Where the geometry ends: nGPT
#
# Notebook 05 read LayerNorm geometrically: a norm puts each hidden vector on a sphere, and a
# scale-invariant weight moves by angles. nGPT (Loshchilov et al. 2024) takes that reading to its
# end. Every embedding, hidden state and weight row is kept on the unit sphere, renormalized after
# each optimizer step, and a block moves the stream part of the way toward its output,
# $h \leftarrow \mathrm{Norm}(h + \alpha\,(\mathrm{Norm}(F(h)) - h))$, with learnable step sizes
# $\alpha$ initialized to 0.05; no norm layers are left to place. Its claim, 4 to 20 times fewer
# steps to the same loss, is out of reach: its README says the gain shows only late, around 200k
# steps. We describe it and claim nothing.
#
# ## A map of today's open models
#
# Every open model below normalizes with [RMSNorm][nb07]: it keeps *Layer Normalization*'s
# per-example statistic and drops its mean; none kept BatchNorm (notebook 01). What moved is where
# the statistic is taken and what else is normalized: the sublayer's output as well as its input, the
# queries and keys as well as the stream. The table shows where the norm sits and what it computes,
# from Hugging Face `transformers`' modeling files and the models' reports; each entry links to the
# notebook that measures that choice.
#
# | model | placement | gains | on queries and keys | embedding | logits |
# |---|---|---|---|---|---|
# | Llama 2, 3 | [Pre-LN][nb06] | $g$ | none | as looked up | as computed |
# | Llama 4 | [Pre-LN][nb06] | $g$ | [RMSNorm per head, no gain][q1], after RoPE | as looked up | as computed |
# | Qwen 2, 2.5 | [Pre-LN][nb06] | $g$ | none (Qwen 2 has biases on q, k, v) | as looked up | as computed |
# | Qwen 3 | [Pre-LN][nb06] | $g$ | [RMSNorm per head][q1], before RoPE | as looked up | as computed |
# | Gemma 2 | [sandwich][nb07] | [$1 + w$][g1] | none | [$\times\sqrt d$][g1] | [capped: 30; attention 50][g1] |
# | Gemma 3 | [sandwich][nb07] | [$1 + w$][g1] | [RMSNorm per head][q1] | [$\times\sqrt d$][g1] | as computed |
# | OLMo 2 | [after the sublayer][o1] | $g$ | [RMSNorm, full width][q1] | as looked up | as computed, z-loss |
#
# "Sandwich": a norm before and after each sublayer (notebook 07's P5); "full width": over the
# whole query or key projection, before the heads are split. Llama 4's norm is HF's
# `Llama4TextL2Norm`, $x / \sqrt{\mathrm{mean}(x^2) + \epsilon}$, an RMSNorm without a gain; it
# normalizes queries and keys only in its RoPE layers, and not at all in the 128-expert model
# (Maverick). OLMo 2's z-loss ($10^{-5}$) is a term of its training loss, not of the forward pass.
#
# **Not covered here.** Pointers, neither run nor read: NormFormer's extra norms (Shleifer et al.
# 2021); Sub-LN / Magneto (Wang et al. 2022); Depth-$\mu$P's $1/\sqrt L$ branch scaling (Yang et
# al. 2023; Bordelon et al. 2023); $\sigma$Reparam (Zhai et al. 2023) and QK-clip; massive
# activations (Sun et al. 2024) and LayerNorm's outlier dimensions (Kovaleva et al. 2021); the B2T
# connection (Takase et al. 2023), ResiDual (Xie et al. 2023) and HybridNorm (2025); ScaleNorm
# (Nguyen & Salazar 2019), the base of Henry et al.'s QK-norm; removing LayerNorm from a trained
# GPT-2 by fine-tuning (Heimersheim 2024); Wortsman et al.'s logit drift and its z-loss.
#
# [nb06]: 06_the_transformer.ipynb
# [nb07]: 07_rmsnorm_and_placement.ipynb
# [q1]: 09_logits_and_placement.ipynb#q1-normalizing-the-queries-and-keys
# [o1]: 09_logits_and_placement.ipynb#o1-the-reordered-norm-of-olmo-2
# [g1]: 09_logits_and_placement.ipynb#g1-the-gains-embeddings-and-caps-of-gemma

# %% [markdown]
# ## Claims checked here

# %%
print(claims.checked_here(["E1", "E1c", "E1b", "E2", "E2c", "E2d", "E2b",
                           "Y1", "Y1c", "Y1b"]))
