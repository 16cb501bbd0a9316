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
# # 08 · Deep stacks: Admin, DeepNorm, Mix-LN and LayerNorm Scaling
#
# *The lesson takes about 5 minutes to read, the evidence about 18 more.
# From the record it runs in seconds; live, 17 min on one core.*

# %%
# %matplotlib inline
import statistics

import numpy as np

import lnpaper
from lnpaper.chapters.ch08_deep_stacks import runs
from lnpaper.chapters.ch08_deep_stacks.runs import ARM_NAMES
from lnpaper.models.transformer import TransformerLM
from lnpaper.source import lines

lnpaper.setup()

# %% [markdown]
#
# ## The lesson
#
# Notebook 06 left two questions about depth. Post-LN needs warmup: does that get worse as the stack
# grows? Pre-LN trains without it: what does it pay in a deep stack? Four later papers answer,
# checked here on notebook 06's language model.
#
# ### The symptom: Post-LN grows touchier with depth
#
# Move every weight matrix of the blocks by 1% of its norm, in a random direction, and measure how
# far the stack's output moves, at 6 blocks and at 36. An optimizer's step is such a move.

# %%
a2 = runs.branch_dependence()
for arm in ("post", "pre"):
    moved = [np.mean(by_depth) for by_depth in a2.output_change[arm]]
    print(
        f"{ARM_NAMES[arm]}: a 1% move shifts the output {moved[0]:.1%} at "
        f"{a2.depths[0]} blocks, {moved[-1]:.1%} at {a2.depths[-1]}"
    )

# %% [markdown]
# Post-LN's output moves more than twice as far at 36 blocks as at 6; Pre-LN's barely changes. The
# same learning rate is a bigger step for a deeper Post-LN, and Liu et al. see this as what makes it
# unstable.
#
# ### Why, and Admin's fix
#
# Liu et al. (2020, *Understanding the Difficulty of Training Transformers*, Sec. 4) trace it to how
# much each sublayer leans on its branch $f$. In Post-LN every sum is normalized, so the stream a
# branch is added to has unit variance and each branch is a quarter to a third of the sum, at every
# depth. A small change to any branch reaches the output almost undamped, and the changes add up over
# the blocks. In Pre-LN the stream is never normalized and grows, so each deeper branch is a smaller
# part of it. Their fix, Admin, keeps Post-LN and weights the stream,
# $x_i = \mathrm{LN}(\omega_i x_{i-1} + f_i(x_{i-1}))$, with $\omega_i$ set by one profiling pass to
# the size of everything added before. At 36 blocks it brings Post-LN's sensitivity down to Pre-LN's;
# at 12 it trains with warmup and stalls without.
#
# ### DeepNorm: a bounded first update
#
# Wang et al. (2022, *DeepNet*) keep Post-LN and change two constants, derived from a bound on how
# far one update can move the output. For $M$ blocks the stream is up-weighted,
# $x_{l+1} = \mathrm{LN}(\alpha x_l + G_l(x_l))$ with $\alpha = (2M)^{1/4}$, and the value, output
# and feed-forward matrices start at $\beta = (8M)^{-1/4}$ times their usual size. In
# `lnpaper.models.transformer`:

# %%
print(lines(TransformerLM.__init__, "alpha = (2 * n_layers)"))
print(lines(TransformerLM.reset_parameters, "beta = (8", "matrix.weight.mul_(beta)"))

# %% [markdown]
# A 6-block Post-LN and its DeepNorm twin train with Adam at 3e-3 and no warmup, where notebook 06's
# Post-LN stalls, from the same data and initial draws. A step's update is how far it moves the
# logits on fixed held-out sequences (root mean square).
#
# **Before you run the next cell:** will DeepNorm's first update be smaller than Post-LN's, and by
# how much? Will DeepNorm learn where Post-LN stalls, ending below the bigram level (a model that
# only knows the previous token)?

# %%
d1 = runs.deepnorm_study()
for arm in d1.arms:
    first = statistics.median(update[0] for update in d1.model_update[arm])
    final = statistics.median(d1.final_loss[arm])
    print(f"{ARM_NAMES[arm]:8s} first update {first:.2f}; loss {final:.2f} nats")
print(f"bigram level {d1.levels['bigram']:.2f} nats")

# %% [markdown]
# DeepNorm's first step moves the logits about a third as far, and it trains, while Post-LN's loss
# stays at a guess that knows only how often each token occurs. The paper's 1,000 layers are out of
# reach, so only the mechanism is checked. Which half does the work? At this depth the smaller
# initialization alone ends where DeepNorm does (D1b, below).
#
# *Graded: D1, partly; its test and numbers are in the evidence below.*

# %%
# Try it: twelve blocks instead of six. Does DeepNorm still learn where Post-LN stalls?
# Two runs per arm, live: about 20 s on one core. Uncomment and run.
# mine = runs.deepnorm_study(n_layers=12, seeds=(0, 1))
# for arm in mine.arms:  # each beside its recorded 6 blocks
#     call = f"runs.deepnorm_study(), {ARM_NAMES[arm]} at 6 blocks"
#     title = f"{ARM_NAMES[arm]} at 12 blocks: held-out loss"
#     losses = mine.final_loss[arm], d1.final_loss[arm]
#     print(lnpaper.tryit.language_model(*losses, call, quantity=title))

# %% [markdown]
# ### Mix-LN: each placement where it does least harm
#
# Li, Yin and Liu (2025, *Mix-LN*, ICLR 2025) read the two failures off the gradients: Post-LN
# starves its early blocks (their gradient passes through every later LayerNorm), Pre-LN its deep
# ones (their outputs are small beside the grown stream). Mix-LN uses Post-LN for the first quarter
# of the blocks and Pre-LN above. Here it evens out Post-LN's gradients but ends a little behind plain
# Pre-LN.
#
# ### Pre-LN's curse of depth, and LayerNorm Scaling
#
# Sun et al. (2025, *The Curse of Depth in Large Language Models*) find that about half the layers of
# open Pre-LN models can be removed at little cost. Every block adds to a stream nothing normalizes,
# so its variance grows with depth, and a deep block's output is a small change to a large stream. In
# an 8-block Pre-LN after training:

# %%
l1 = runs.layer_scaling_study()
variance = np.mean(l1.variance_trained["pre"], 0)
worth = np.mean(l1.skip_loss_trained["pre"], 0)
print(f"stream variance after: block 1 {variance[0]:.3g}, block 8 {variance[-1]:.3g}")
print(f"loss rise when skipped: block 1 {worth[0]:.3f} nats, block 8 {worth[-1]:.3f}")

# %% [markdown]
# Their fix, LayerNorm Scaling, divides the output of each block's input norms by $\sqrt l$, $l$ the
# block's index: $x_{l+1} = x_l + F(\mathrm{LN}(x_l)/\sqrt l)$, with no new parameter:

# %%
print(lines(TransformerLM.__init__, "input_scale=(index + 1) ** -0.5"))

# %% [markdown]
# In these runs it cuts the last stream's variance to about a quarter, yet its deep blocks do less,
# not more. That is no verdict against it: a stack normalized another way shows the same profile
# here, so the curse is not shown to be Pre-LN's own (the evidence below).
#
# **In three lines.**
# 1. Each of Post-LN's branches is a large share of a normalized stream, so its output grows more
#    sensitive to its weights with every block; Admin weights the stream, and DeepNorm's smaller
#    first step trains where Post-LN stalls.
# 2. Mix-LN puts Post-LN below and Pre-LN above.
# 3. Pre-LN's stream grows with depth and its deep blocks add little; LayerNorm Scaling shrinks their
#    inputs by $1/\sqrt l$.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
#
# ## The evidence
#
# Each fix's claims, graded on the record. The sources' own numbers (1,000 layers, BLEU, 7B
# perplexities) are out of reach on a CPU; each mechanism is not. Notebook 01's box *How to read a
# verdict* defines the verdict words.

# %%
import torch

from lnpaper import formatting
from lnpaper.chapters.ch08_deep_stacks import CHAPTER, analysis, figures
from lnpaper.chapters.ch08_deep_stacks import claims as depth_claims
from lnpaper.chapters.ch08_deep_stacks.analysis import mean_dependence
from lnpaper.chapters.ch08_deep_stacks.claims import profile_summary
from lnpaper.chapters.ch08_deep_stacks.runs import sublayer_dependence
from lnpaper.companion import verdicts
from lnpaper.data.synthetic_language import SyntheticLanguage
from lnpaper.models.transformer import admin_profile

# %% [markdown]
# ### A2 · Admin: Post-LN leans on its branches, and that amplifies perturbations
#
# Liu et al. (Sec. 4) measure how much a sublayer's output depends on its residual branch $f$ rather
# than on the stream $s$ it is added to:
#
# $$\beta_i = \frac{\mathrm{Var}[f_i(x_{i-1})]}{\mathrm{Var}[s_i + f_i(x_{i-1})]}.$$
#
# Heavy dependence turns a small change of the parameters into a large change of the output: Liu
# et al. (Sec. 4) bound its variance, $\mathrm{Var}[F(x; W) - F(x; W^*)]$, by $O(N)$ for Post-LN
# against $O(\log N)$ for Pre-LN. Admin's $\omega$ is the square root of the accumulated variance
# of the branches before it. In `lnpaper`:

# %%
print(lines(admin_profile, "omega = math.sqrt", "weight.fill_", "x = norm("))
print(lines(sublayer_dependence, "ratios.append"))

# %% [markdown]
# On a 12-block model at init, the ratio per sublayer, with Admin's $\omega$ profiled on another
# batch than the one measured:

# %%
from lnpaper.models.transformer import admin, post_ln

tokens_a2 = SyntheticLanguage().sample(16, 16, seed=0)
beta_i = {}
for arm, build in (("post", post_ln), ("admin", admin)):
    torch.manual_seed(0)
    model = TransformerLM(build(16, n_layers=12, n_heads=2, max_len=16))
    if arm == "admin":
        admin_profile(model, SyntheticLanguage().sample(16, 16, seed=1))
    beta_i[arm] = sublayer_dependence(model, tokens_a2)
    shown = ", ".join(f"{beta_i[arm][i]:.2f}" for i in (0, 5, 11, 23))
    print(f"{ARM_NAMES[arm]:8s} beta_i at sublayers 1, 6, 12, 24: {shown}")
    attention, feed_forward = np.mean(beta_i[arm][0::2]), np.mean(beta_i[arm][1::2])
    print(
        f"{'':8s} mean over attention {attention:.2f}, "
        f"feed-forward {feed_forward:.2f}, all 24 {np.mean(beta_i[arm]):.3f}"
    )
deep_half = {arm: np.mean(values[12:]) for arm, values in beta_i.items()}
assert deep_half["admin"] < 0.5 * deep_half["post"], deep_half

# %% [markdown]
# Sublayers 6, 12 and 24 are feed-forward ones, which lean on their branches less than the
# attention sublayers do; the mean over all 24 is what the table below averages over seeds and
# batches (0.336 for Post-LN at 12 blocks).
# The lesson's experiment, `branch_dependence`, does this for Post-LN, Pre-LN and Admin from 6 to 36
# blocks, with the 1% move of every weight matrix $W$ of the blocks:

# %%
print(
    f"{'means over seeds, blocks L':34s}"
    + "".join(f"{depth:>8d}" for depth in a2.depths)
)
for arm in a2.arms:
    dependence = [np.mean(by_depth) for by_depth in mean_dependence(a2, arm)]
    shown = "".join(f"{v:8.3f}" for v in dependence)
    print(f"{ARM_NAMES[arm] + ', dependency':34s}{shown}")
for arm in a2.arms:
    change = [np.mean(by_depth) for by_depth in a2.output_change[arm]]
    shown = "".join(f"{v:8.4f}" for v in change)
    print(f"{ARM_NAMES[arm] + ', output change':34s}{shown}")
a2_finding = CHAPTER.grade("A2")
print(verdicts.evidence(a2_finding))
verdicts.expect(a2_finding, verdicts.PARTLY)
figures.branch_dependence(a2)

# %% [markdown]
# Both halves of the mechanism show: at 36 blocks Post-LN's sublayers depend on their branches about
# seven times as much as Pre-LN's, its output change grows faster with depth, and Admin brings
# Post-LN to Pre-LN's levels on both counts. That this is *the root cause* of Post-LN's trouble is
# Liu et al.'s reading, not checked here. Fitting $\|\Delta F\| \propto L^b$ per seed, Post-LN's
# exponent is about 0.5 and Pre-LN's and Admin's about 0.2, matching Liu et al.'s rates for the
# variance, the norm's square. Graded on the mechanism's direction at init, **A2** is `partly`.
#
# **A2b** asks whether Admin lets a deep Post-LN train where plain Post-LN fails: 12 blocks at D1's
# rate without warmup, on 12 new seeds.

# %%
a2b = CHAPTER.grade("A2b")
print(verdicts.evidence(a2b))
verdicts.expect(a2b, verdicts.NOT_REPRODUCED)

# %% [markdown]
# Without warmup Admin stalls with Post-LN at the unigram level, while Pre-LN trains (**A2b not
# reproduced** at this budget). Admin's recipe warms up; **A2c**, declared before its run, adds 50
# warmup steps on 12 new seeds.

# %%
a2c = CHAPTER.grade("A2c")
print(verdicts.evidence(a2c))
verdicts.expect(a2c, verdicts.REPRODUCED)

# %% [markdown]
# With warmup, Post-LN still fails in every run and Admin trains in all, 0.540 nats lower:
# **A2c reproduced**. Admin needs its recipe's warmup.
#
# ### D1 · DeepNorm: a bounded first update
#
# DeepNorm's constants on the 6-block model, against plain Post-LN's initialization:

# %%
from lnpaper.models.transformer import deepnorm, post_ln

M = 6
torch.manual_seed(0)
deep = TransformerLM(deepnorm(16, n_layers=M, n_heads=2, max_len=16))
torch.manual_seed(0)
plain = TransformerLM(post_ln(16, n_layers=M, n_heads=2, max_len=16))
scaled = {
    name: (module(deep).weight.std() / module(plain).weight.std()).item()
    for name, module in (
        ("W^Q", lambda m: m.blocks[0].attn.query),
        ("W^V", lambda m: m.blocks[0].attn.value),
        ("W^O", lambda m: m.blocks[0].attn.out),
        ("W^(1)", lambda m: m.blocks[0].ffn.w1),
        ("W^(2)", lambda m: m.blocks[0].ffn.w2),
    )
}
alpha, beta = (2 * M) ** 0.25, (8 * M) ** -0.25
print(f"M = {M}: alpha = (2M)^(1/4) = {alpha:.3f}, beta = (8M)^(-1/4) = {beta:.3f}")
print(
    f"the block's alpha {deep.blocks[0].residual_scale:.3f}; "
    "std against plain Post-LN's:"
)
print("   " + ", ".join(f"{name} x{ratio:.3f}" for name, ratio in scaled.items()))
assert abs(deep.blocks[0].residual_scale - alpha) < 1e-12
assert abs(scaled["W^Q"] - 1) < 1e-6 and all(
    abs(scaled[name] - beta) < 1e-6 for name in ("W^V", "W^O", "W^(1)", "W^(2)")
), scaled

# %% [markdown]
# The lesson's `deepnorm_study` takes, before each of the first 20 steps, the logits on 64 fixed
# held-out sequences; the model update of step $t$ is
# $\sqrt{\overline{(F(x;\theta_t) - F(x;\theta_{t-1}))^2}}$.

# %%
for arm in d1.arms:
    first = [u[0] for u in d1.model_update[arm]]
    final = formatting.median_text(d1.final_loss[arm])
    print(f"{ARM_NAMES[arm]:8s} update at step 1: {formatting.median_text(first)}")
    print(f"{'':8s} held-out loss after {d1.steps} steps: {final} nats")
d1_finding = CHAPTER.grade("D1")
print(verdicts.evidence(d1_finding))
verdicts.expect(d1_finding, verdicts.PARTLY)
figures.deepnorm_update(d1)

# %% [markdown]
# Both parts of the mechanism hold, but the depth the bound was built for is out of reach, so **D1**
# is `partly`.
#
# Which half bounds the first update, $\alpha$ or $\beta$? No source runs them apart. **D1b**,
# declared before its run, asks whether each alone keeps the largest of the first 20 updates below
# Post-LN's, on D1's model, rate, data and seeds, with a Pre-LN arm beside.

# %%
halves = analysis.deepnorm_halves()
post_updates = depth_claims.largest_update(d1, "post")
for source, arm in (
    (d1, "post"), (d1, "deepnorm"), (halves, "deepnorm-alpha"),
    (halves, "deepnorm-beta"), (halves, "pre"),
):  # fmt: skip
    ratio = statistics.geometric_mean(
        u / p
        for u, p in zip(
            depth_claims.largest_update(source, arm), post_updates, strict=True
        )
    )
    final = formatting.median_text(source.final_loss[arm])
    print(
        f"{ARM_NAMES[arm]:22s} largest update x{ratio:.2f} of Post-LN's; loss {final}"
    )
d1b = CHAPTER.grade("D1b")
print(verdicts.evidence(d1b))
verdicts.expect(d1b, verdicts.REPRODUCED)

# %% [markdown]
# Each half alone bounds the first updates below Post-LN's, $\beta$ clearly and $\alpha$ less (an
# interval within machine noise of undecided); together they bound them far more (**D1b
# reproduced**, borderline). Either half alone keeps the model from stalling, and $\beta$ alone ends
# where DeepNorm does. Pre-LN's largest update is 0.83 of Post-LN's, close to $\alpha$ alone's 0.80,
# and both train while Post-LN stalls: at this depth the bound is at most part of the story.
#
# DeepNorm's constants grow with depth. **D1c** and **D1d**, declared before their run, repeat D1
# and D1b at 24 blocks, every arm on D1's rate, steps and seeds.

# %%
for claim_id in ("D1c", "D1d"):
    finding = CHAPTER.grade(claim_id)
    print(claim_id)
    print(verdicts.evidence(finding))
verdicts.expect(CHAPTER.grade("D1c"), verdicts.PARTLY)
verdicts.expect(CHAPTER.grade("D1d"), verdicts.INCONCLUSIVE)

# %% [markdown]
# At 24 blocks full DeepNorm still bounds the first updates and trains where Post-LN stalls
# (**D1c partly**, the mechanism only). Neither half alone keeps the largest update below Post-LN's
# (**D1d inconclusive**); $\alpha$ alone now stalls while $\beta$ alone still trains. Deeper, the
# two halves are needed together.
#
# ### X1 · Mix-LN: Post-LN below, Pre-LN above
#
# Mix-LN uses Post-LN for the first $\lfloor L/4 \rfloor$ blocks; in `lnpaper` it is a placement of
# the whole model:

# %%
from lnpaper.models.transformer import mix_ln

print(lines(TransformerLM.__init__, "n_post = int(MIX_POST_FRACTION"))
mix = TransformerLM(mix_ln(16, n_layers=8, n_heads=2, max_len=16))
print("blocks of an 8-block Mix-LN:", [block.placement for block in mix.blocks])
assert [b.placement for b in mix.blocks] == ["post"] * 2 + ["pre"] * 6

# %% [markdown]
# The experiment `gradient_profile` measures each block's gradient norm
# $\|\partial L / \partial \theta_l\|$ on 64 held-out sequences at init and after 20 Adam steps, at
# a rate where Post-LN trains without warmup. A profile's *tilt* is the mean log norm of the last
# quarter of the blocks minus that of the first quarter (below 0: the deep blocks get less); its
# *spread* is the standard deviation of the log norms over the blocks (0 when flat).

# %%
x1 = runs.gradient_profile()
profile = profile_summary(x1)
for (when, arm), measures in profile.items():
    tilt, spread = np.mean(measures["tilt"]), np.mean(measures["spread"])
    print(f"{when:8s} {ARM_NAMES[arm]:8s} tilt {tilt:+.2f}, spread {spread:.2f}")
x1_finding = CHAPTER.grade("X1")
print(verdicts.evidence(x1_finding))
verdicts.expect(x1_finding, verdicts.PARTLY)
figures.gradient_profile(x1)

# %% [markdown]
# Pre-LN's profile tilts down and Post-LN's up, mildly at init and steeply after 20 steps. Mix-LN
# removes Post-LN's tilt but is not more even than Pre-LN: at init its spread is a little larger,
# after training the two cannot be told apart. The source's "more uniform than both" does not show:
# **X1** is `partly`.
#
# **X1b** grades the claim the profile is meant to explain, a lower loss than both, on X1's model
# and rate trained longer on new seeds.

# %%
x1b = CHAPTER.grade("X1b")
print(verdicts.evidence(x1b))
verdicts.expect(x1b, verdicts.PARTLY)

# %% [markdown]
# Mix-LN is far below Post-LN and a little above Pre-LN, by more than the
# negligible margin (**X1b partly**). At this depth its two Post-LN blocks cost it more than its
# balanced gradients give back.
#
# ### L1 · LayerNorm Scaling: the curse of depth
#
# The scale per block, $1/\sqrt l$:

# %%
from lnpaper.models.transformer import layernorm_scaling

scaled_lm = TransformerLM(layernorm_scaling(16, n_layers=8, n_heads=2, max_len=16))
scales = [block.input_scale for block in scaled_lm.blocks]
print("input scales:", ", ".join(f"{scale:.3f}" for scale in scales))
assert all(abs(scale - (i + 1) ** -0.5) < 1e-12 for i, scale in enumerate(scales))

# %% [markdown]
# The lesson's `layer_scaling_study` measures, per block $l$ on the 256 held-out sequences: the
# variance of the stream it outputs; the angular distance between its input and output,
# $\arccos(\cos(x_l, x_{l+1}))/\pi$ averaged over tokens (0: no token turned); and how much the
# held-out loss rises when that block alone is skipped.

# %%
for arm in l1.arms:
    first, last = (np.mean([v[i] for v in l1.variance_trained[arm]]) for i in (0, -1))
    worth = " ".join(f"{v:.3f}" for v in np.mean(l1.skip_loss_trained[arm], 0))
    print(
        f"{ARM_NAMES[arm]:10s} stream variance, block 1 / {l1.n_layers}: "
        f"{first:.3g} / {last:.3g}"
    )
    print(f"{'':10s} loss rise without a block, per block:")
    print(f"{'':10s} {worth}")
l1_finding, l1b_finding = CHAPTER.grade("L1"), CHAPTER.grade("L1b")
print(verdicts.evidence(l1_finding))
print(verdicts.evidence(l1b_finding))
verdicts.expect(l1_finding, verdicts.PARTLY)
verdicts.expect(l1b_finding, verdicts.NOT_REPRODUCED)
figures.layer_scaling(l1)

# %% [markdown]
# The curse shows, in miniature: the deeper half of plain Pre-LN's blocks are worth much less than
# the shallower half when skipped. But with no other placement trained alike, that profile is not
# shown to be Pre-LN's own: any stack whose first block does the heavy lifting has it. So **L1** is
# `partly`.
#
# With the scaling the deep blocks turn the stream *less* and are worth *less* when skipped, both
# significantly, the opposite of the claim. Training need not undo the scaling first: the matrices
# that read the norm's output ($W^Q, W^K, W^V, W^{(1)}$) can absorb a factor $\sqrt 8$ within tens of
# Adam steps, and L1c below finds the same at three times the steps: **L1b not reproduced**, at this
# budget. But is there a curse here to cure?
#
# Declared before its run, **L1d** trains the same setup with Peri-LN (`curse_control`),
# whose blocks normalize what they add while the stream, as in Pre-LN, is never normalized, and asks
# whether Pre-LN's deeper half matters less, next to its shallower half, than Peri-LN's does.

# %%
l1d_finding = CHAPTER.grade("L1d")
print(verdicts.evidence(l1d_finding))
verdicts.expect(l1d_finding, verdicts.INCONCLUSIVE)

# %% [markdown]
# It does not separate them. Peri-LN's deeper half is worth 0.082 nats less than its shallower half,
# Pre-LN's 0.078, and the difference holds 0: **L1d** is `inconclusive`. Peri-LN's stream grows too,
# so this control can neither show the curse to be Pre-LN's own nor rule it out.
#
# Declared before its run, **L1c** asks the same of the study trained three times as long, 300 steps
# (`layer_scaling_long`).

# %%
l1_long = analysis.layer_scaling_long()
print(f"after {l1_long.steps} steps, loss rise without a block, per block:")
for arm in l1_long.arms:
    worth = " ".join(f"{v:.3f}" for v in np.mean(l1_long.skip_loss_trained[arm], 0))
    print(f"   {ARM_NAMES[arm]:10s} {worth}")
l1c_finding = CHAPTER.grade("L1c")
print(verdicts.evidence(l1c_finding))
verdicts.expect(l1c_finding, verdicts.NOT_REPRODUCED)

# %% [markdown]
# Longer training widens the gap: **L1c not reproduced**, at this budget. The scaled models' first
# block carries more of the work (worth 1.03 nats scaled, 0.89 plain), and their loss is lower.
# **L1e** grades that loss, the source's measure, by a test written after both runs were seen:

# %%
l1e_finding = CHAPTER.grade("L1e")
print(verdicts.evidence(l1e_finding))
verdicts.expect(l1e_finding, verdicts.REPRODUCED)

# %% [markdown]
# **L1e reproduced**, at this budget: 0.169 nats lower after 300 steps, 0.049 after 100. The fix
# lowers the loss without restoring the deep blocks.

# %% [markdown]
# ### Claims checked here

# %%
checked = ["A2", "A2b", "A2c", "D1", "D1b", "D1c", "D1d", "X1", "X1b"]
print(CHAPTER.checked_here([*checked, "L1", "L1d", "L1b", "L1c", "L1e"]))
