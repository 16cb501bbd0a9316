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
# # 03 · LayerNorm in recurrent networks
#
# *The lesson takes about 12 minutes to read, the evidence about 24 more.
# From the record it runs in seconds; live, 14 min on one core.*
#
# *Layer Normalization* (Ba, Kiros, Hinton 2016), Section 3.1 (recurrent networks), the supplement's
# LN-LSTM (Eq. 20-22) and Section 6 (the experiments), with *Recurrent Batch Normalization*
# (Cooijmans et al. 2016) as the rival.

# %%
# %matplotlib inline

import torch

import lnpaper
from lnpaper import exercises
from lnpaper.chapters.ch03_layernorm_in_rnns import (
    analysis,
    analysis_handwriting,
    analysis_reader,
    demos,
    runs,
)
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import training_summary
from lnpaper.data import digits, strokes
from lnpaper.models.recurrent import LayerNormLSTMCell, unroll
from lnpaper.source import code

lnpaper.setup()

# %% [markdown]
#
# ## The lesson
#
# The paper was written for recurrent networks: five of its seven experiments are RNNs. Notebook
# 01 showed what BatchNorm needs inside one. LayerNorm needs nothing; this lesson shows what it
# fixes, how the LN-LSTM is built, and what it buys in training.
#
# ### The symptom: the weights' scale decides a plain RNN's fate
#
# A tanh RNN reads a digit's 8 rows, then runs on zeros to step 300, so that what happens after
# step 8 is the recurrence alone. Its weights are one random draw multiplied by 0.5, 1, 2 or 4.
# Before you run the cell: at step 300, how large is the state at each scale, and how far does a
# nudge to the first row still move it?

# %%
dynamics = runs.rnn_dynamics()  # from the record: 32 digits, 300 steps, float64
nudge = "a nudge at step 0 moves h_300 by"
print(f"{'weights x':>9s} {'RMS of h_300':>13s} {nudge:>33s}")
for scale, hidden in dynamics.hidden_rms["tanh RNN"].items():
    moved = dynamics.sensitivity["tanh RNN"][scale][-1]
    print(f"{scale:9g} {hidden[-1]:13.3f} {moved:33.3g}")

# %% [markdown]
# At 0.5 the state dies out, and with it any gradient from step 300 back to the digit. At 2 and 4
# the state saturates and the nudge is amplified $10^{16}$ and $10^{49}$ times: gradients explode.
# Only near 1 is it neither, and training moves the weights' scale.
#
# ### One normalization per step, from that step alone
#
# Section 3.1's cure: normalize the summed inputs $a_t = W_{hh} h_{t-1} + W_{xh} x_t$ over the
# layer's $H$ units, with statistics from step $t$ alone:
#
# $$\mu_t = \frac1H \sum_{i=1}^H a_{t,i}, \qquad
#   \sigma_t = \sqrt{\frac1H \sum_{i=1}^H (a_{t,i} - \mu_t)^2}, \qquad
#   h_t = f\!\left(\frac{g}{\sigma_t} \odot (a_t - \mu_t) + b\right).$$
#
# One gain $g$ and one bias $b$ serve every step. Nothing else is kept: no running average, no
# statistics per step, no batch. A batch of one, or a sequence longer than any seen in training,
# runs the same code.
#
# ### The LN-LSTM
#
# An LSTM has four gates and a cell state. The supplement (Eq. 20-22) normalizes the recurrent
# term and the input term apart, each over the whole stacked $4H$ vector of the four gates, and the
# cell state only on its way into the output tanh:
#
# $$\begin{aligned}
# \begin{pmatrix} f_t \\ i_t \\ o_t \\ g_t \end{pmatrix} &=
#     \mathrm{LN}(W_h h_{t-1};\, g_1, b_1) + \mathrm{LN}(W_x x_t;\, g_2, b_2) + b \\
# c_t &= \sigma(f_t) \odot c_{t-1} + \sigma(i_t) \odot \tanh(g_t) \\
# h_t &= \sigma(o_t) \odot \tanh\big(\mathrm{LN}(c_t;\, g_3, b_3)\big)
# \end{aligned}$$
#
# The package's cell, line by line (its gates come in PyTorch's order $i, f, g, o$, which
# statistics over all $4H$ units do not notice):

# %%
print(code(LayerNormLSTMCell.forward))


# %% [markdown]
# The recurrence of $c_t$ (Eq. 21) is left alone, so the cell can still carry a large value
# forward. *Graded: R1, reproduced; its test and numbers are in the evidence below.*
#
# **Write it yourself**: one LN-LSTM step from its parameters, checked against `LayerNormLSTMCell`.

# %%
def my_lnlstm_step(x, h, c, cell):
    """One step of Eq. 20-22 with cell.weight_ih (W_x), cell.weight_hh (W_h),
    cell.bias (b) and the LayerNorms cell.norm_hh, cell.norm_ih, cell.norm_c;
    chunk the gates as i, f, g, o. Return (h, c).
    One solution: lnpaper.exercise_solutions.lnlstm_step."""
    raise NotImplementedError  # your code here


exercises.check_lnlstm_step(my_lnlstm_step)

# %% [markdown]
# ### Why two norms, not one over the sum
#
# The two terms do not keep one size. At step 0 the state is zero, so $W_h h_{t-1}$ is zero; it
# grows as the state fills, while $W_x x_t$ stays steady; and training can make $W_h$ larger. One
# LayerNorm over their sum divides both by the sum's spread, so the larger term sets the scale of
# both and the smaller is drowned. Two LayerNorms give each term unit size (times its gain),
# whatever the other does. The cell below runs an untrained LN-LSTM over the test digits' rows and
# measures how large the input's part of the gates is after normalizing.

# %%
torch.manual_seed(0)
lstm = LayerNormLSTMCell(inputs=8, hidden=32)
x_rows, _ = digits.load("test", form="rows")  # (300 digits, T = 8 rows, 8 pixels)


def input_size(u, normalized):  # RMS of u's part of LN(normalized), mean over digits
    spread = normalized.var(-1, correction=0) + lstm.norm_ih.eps
    return (u.var(-1, correction=0) / spread).sqrt().mean(0)


print(f"{'step':34s}" + "".join(f"{t:6d}" for t in range(8)))
for times in (1, 4):  # W_h as drawn, then 4x (LayerNorm leaves h_t as it is)
    with torch.no_grad():
        lstm.weight_hh.mul_(times)
        terms = unroll(lstm, x_rows, keep=("W_x x_t", "W_h h_t-1"))[1]
        lstm.weight_hh.div_(times)
    u, v = terms["W_x x_t"], terms["W_h h_t-1"]
    rows = {
        f"RMS of W_h h_t-1, W_h x {times}": v.pow(2).mean(-1).sqrt().mean(0),
        "   input's size, one LN of the sum": input_size(u, u + v),
        "   input's size, own LN (Eq. 20)": input_size(u, u),
    }
    if times == 1:
        rows = {"RMS of W_x x_t": u.pow(2).mean(-1).sqrt().mean(0), **rows}
    for name, values in rows.items():
        print(f"{name:34s}" + "".join(f"{m:6.2f}" for m in values))
apart, together = input_size(u, u).min(), input_size(u, u + v)[1:].max()
assert apart > 0.99 > 0.25 > together, f"W_h x 4: {apart:.3f} apart, {together:.3f}"

# %% [markdown]
# The recurrent term starts at 0 and joins the input term at step 1. Normalized together, the
# input keeps about half its size once the recurrence speaks, and under a fifth when $W_h$ is four
# times larger. Normalized apart, it keeps all of it at every step.
#
# ### Why the dynamics settle
#
# Back to the symptom: the same draw, the same four scales, now with LayerNorm in the cell.

# %%
print(f"{'weights x':>9s} {'RMS of h_300':>13s} {nudge:>33s}")
for scale, hidden in dynamics.hidden_rms["LN tanh RNN"].items():
    moved = dynamics.sensitivity["LN tanh RNN"][scale][-1]
    print(f"{scale:9g} {hidden[-1]:13.3f} {moved:33.3g}")

# %% [markdown]
# The scale is gone. LayerNorm divides $a_t$ by its own spread, so multiplying the weights by 4
# multiplies $a_t$ and its $\sigma_t$ by 4 and leaves $h_t$ as it was: the same state, step after
# step, at every scale. This is Section 3.1's reason: invariance to rescaling the summed inputs
# gives "much more stable hidden-to-hidden dynamics".
#
# What it does not remove: the nudge at step 0 still grows, here by about 6.6% a step at every
# scale, to $10^8$ by step 300. LayerNorm fixes the *size* of the state, not how perturbations
# grow; that is set by the gain $g$ and the direction of $W_h$, which training learns. So a growing
# dependence on step 0 is not LayerNorm failing: it is the part the weights' scale no longer
# decides. *Graded: R2, partly; its test and numbers are in the evidence below.*
#
# **Try it.** Move the weight scale and the LN RNN's gain. Without LayerNorm (grey) the scale
# decides whether the state and the path back to step 0 die out or blow up; with it (blue) the
# scale changes nothing, and the gain takes its place.

# %%
demos.show(
    demos.rnn_scale,
    scale=((0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0), 1.0),
    gain=((0.5, 0.75, 1.0, 1.5, 2.0), 1.0),
)

# %% [markdown]
# ### Does it train faster?
#
# Section 6 reports that LayerNorm speeds training up, compared at the same settings. Here a
# 32-unit LSTM and LN-LSTM read each 8 x 8 digit row by row ($T = 8$) and name it. Both start from
# the same weights and minibatches and train 300 Adam steps, 10 runs at each of three
# learning rates. "Faster" means a lower test NLL over the first quarter (steps 25-75),
# per step as in the paper's curves; a LayerNorm step costs more (`python -m lnpaper bench`).
#
# **Before you run the next cell:** is the LN-LSTM ahead at every shared rate? And when
# each model runs at the rate that suits it best?

# %%
study = analysis.recurrent_training()  # from the record


def early(summary, model):  # mean test NLL over steps 25-75
    return sum(summary[model]["early"]) / len(summary[model]["early"])


print(f"{'test NLL, steps 25-75, mean of 10 runs':40s} {'LSTM':>7s} {'LN-LSTM':>8s}")
for k, lr in enumerate(study.runs["LSTM"]["lrs"]):
    same = training_summary(study, lr_index=k)
    name = f"   both at rate {lr:g}"
    print(f"{name:40s} {early(same, 'LSTM'):7.3f} {early(same, 'LN-LSTM'):8.3f}")
best = training_summary(study)
name = f"   each at its best ({best['LSTM']['lr']:g}, {best['LN-LSTM']['lr']:g})"
print(f"{name:40s} {early(best, 'LSTM'):7.3f} {early(best, 'LN-LSTM'):8.3f}")

# %% [markdown]
# At the two smaller rates the LN-LSTM is far ahead; at 0.03, the grid's largest, the two are
# level. *Graded: R3, partly; its test and numbers are in the evidence below.* Tuned, the lead is
# gone: at its own best rate the plain LSTM starts as fast. Much of LayerNorm's shared-rate speed
# is what a larger rate buys the plain LSTM; on this small task the LN-LSTM does not end better
# either.
#
# ### The paper's own race: the attentive reader
#
# The paper's one race against recurrent BatchNorm is the attentive reader (Sec. 6.2): an LSTM
# reads a passage, another a query with one entity blanked, and attention names it. Here the
# passages are generated, and a batch is padded to its longest, which Cooijmans et al. saw bias
# BatchNorm. An LSTM, LN-LSTM or BN-LSTM of 32 units trains 700 steps, 6 runs each at the better
# of two rates. **Before you run the cell:** which leads early, and which at the end?

# %%
reader = analysis_reader.reader_study()  # from the record
at_best = analysis_reader.reader_summary(reader)
print(f"{'test error (%), 6 runs':34s} {'steps 35-175':>12s} {'525-700':>8s}")
for label in ("LSTM", "LN-LSTM", "BN-LSTM", "bag of embeddings"):
    row = at_best[label]
    first, last = (sum(row[q]) / len(row[q]) for q in ("first", "last"))
    print(f"{label + ', lr ' + format(row['lr'], 'g'):34s} {first:12.1f} {last:8.1f}")

# %% [markdown]
# Over the first quarter all three sit near 72% error (chance is 80%): none reads yet (*Graded:
# R7, inconclusive*). Then the plain LSTM learns first: over steps 525-700 it errs 17% of the
# time, the BN-LSTM 48%, the LN-LSTM 60%, all still falling (R7b, undecided at this budget).
#
# ### Long lines, small batches: handwriting
#
# The paper's conclusion says LayerNorm helps most with long sequences and small minibatches, from
# Sec. 6.5: Graves' network predicting each pen offset of handwritten lines, 8 a batch. Here
# the lines are generated (each writer slants and stretches 12 letter shapes), and two LSTM layers
# of 32 units train 600 steps on lines of 200 points and of 50. **Before you run the cell:** is
# LayerNorm's head start larger on the longer lines?

# %%
writing = analysis_handwriting.handwriting_study()  # from the record
quarter = analysis_handwriting.quarter_means  # one value per run
print(f"{'test NLL, nats a point':28s} {'updates 30-150':>14s} {'450-600':>8s}")
for label, run in writing.runs.items():
    first, last = (quarter(run, 0, q) for q in ("first", "last"))
    print(f"{label:28s} {sum(first) / len(first):14.3f} {sum(last) / len(last):8.3f}")

# %% [markdown]
# Over the first 150 updates the LN-LSTM is barely ahead (*Graded: R8, inconclusive*); then the
# plain LSTM overtakes it, both still falling (R8b, undecided at this budget). The head start does
# not grow with the line (R8c, inconclusive), and the plain LSTM was never unstable here.

# %%
# Try it: the paper expects LayerNorm to help most at small minibatches. Its lead
# after 30 updates at minibatch 32 (the record's is 8), live, about 9 s on one core.
# Uncomment and run.
# mine = analysis_handwriting.early_runs(batch_size=32)
# at_8 = writing.runs["LN-LSTM, T = 50"], writing.runs["LSTM, T = 50"]
# print(lnpaper.tryit.compared(
#     analysis_handwriting.lead_after(*mine), analysis_handwriting.lead_after(*at_8),
#     "analysis_handwriting.handwriting_study(), T = 50, minibatch 8", unit="nats",
#     quantity="LayerNorm's lead after 30 updates", zero="neither cell ahead",
#     larger="per update, a larger minibatch widens LayerNorm's lead",
#     smaller="a larger minibatch narrows it, as the paper expects"))

# %% [markdown]
# ### Section 6 in one table
#
# The paper's experiments, its numbers, and what stands in for each here ("rows": digits read row
# by row; "pixels": notebook 04's one pixel a step).
#
# | | cell; data | the paper reports | stand-in here |
# |---|---|---|---|
# | Sec. 6.1 order embeddings | GRU; MSCOCO | best model in 60% of the time; R@1 46.6 to 48.5 | GRU rows: R3f, R4c |
# | Sec. 6.2 attentive reader | LSTM; CNN news | faster, better than LSTM, BN-LSTM; gain 1 over 0.1 | reader: R7-R7c |
# | Sec. 6.3 skip-thoughts | GRU; BookCorpus | faster; all five tasks better (MR 77.3 to 79.5) | GRU rows: R3f, R4c |
# | Sec. 6.4 DRAW | LSTM, LN on $c_t$ only; MNIST | almost twice as fast; 82.09 (LN) vs 82.36 nats | rows: R3, R4 |
# | Sec. 6.5 handwriting | LSTM, batch 8; IAM-OnDB | much faster; comparable likelihood | strokes: R8-R8c; pixels: R6 |
# | Sec. 6.6 permutation-invariant MNIST | MLP; MNIST | robust to batch size | MLP (notebook 01): M5 |
# | Sec. 6.7 CNN | convnet; not given | faster than no norm, but BN better | small CNN (04): R5, R5b |
#
# **In three lines.**
# - In an RNN, LayerNorm normalizes each step's summed inputs from that step alone, with one gain
#   and bias for every step: nothing stored, any length, any batch.
# - The LN-LSTM normalizes its input and recurrent terms apart, so neither drowns the other, and
#   takes the weights' scale out of the recurrence; how perturbations grow stays the gain's and
#   $W_h$'s.
# - At a shared learning rate it trains faster; tuned, the plain LSTM catches up, and here LN does
#   not end better. On the paper's reader and its handwriting the plain LSTM ends ahead.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
#
# ## The evidence
#
# Each claim of the lesson with its test, its numbers and its verdict.
# **Scaled down**: the paper's recurrent experiments ran on GPUs for days; here the nets have 32
# units and train for hundreds of steps, so what carries over is each claim's direction, not its
# numbers. The verdict words are defined in notebook 01's box *How to read a verdict*.

# %%
import math
import textwrap

import numpy as np

from lnpaper import stats
from lnpaper.chapters.ch03_layernorm_in_rnns import (
    CHAPTER,
    claims_handwriting,
    figures,
    runs_lengths,
)
from lnpaper.chapters.ch03_layernorm_in_rnns.runs import mean_tanh_slope
from lnpaper.companion import verdicts
from lnpaper.models.recurrent import LayerNormTanhRNNCell
from lnpaper.spread import mean_sd_text
from lnpaper.vocabulary import R4_MARGIN

# %% [markdown]
# ### The LN RNN written out
#
# The lesson's formula for a tanh RNN reading four digits row by row, in float64:

# %%
x64 = x_rows.double()  # float64, so that what differs below is rounding, not float32's
torch.manual_seed(0)
cell = LayerNormTanhRNNCell(inputs=8, hidden=16).double()
W_hh, W_xh = cell.weight_hh.detach(), cell.weight_ih.detach()
g, b, eps = cell.norm.weight.detach(), cell.norm.bias.detach(), cell.norm.eps


def ln_rnn(x):
    h = torch.zeros(x.shape[0], 16, dtype=x.dtype)
    for t in range(x.shape[1]):
        a = h @ W_hh.T + x[:, t] @ W_xh.T  # a_t = W_hh h_{t-1} + W_xh x_t
        mu = a.mean(-1, keepdim=True)  # mu_t: this example, this step
        sigma = ((a - mu) ** 2).mean(-1, keepdim=True).add(eps).sqrt()  # sigma_t
        h = torch.tanh(g / sigma * (a - mu) + b)  # h_t = f(g/sigma_t (a_t - mu_t) + b)
    return h


four = x64[:4]
with torch.no_grad():
    by_hand = ln_rnn(four)
    vs_cell = (by_hand - unroll(cell, four)[0][:, -1]).abs().max().item()
    # 32 steps: the same code, nothing to extend
    longer = ln_rnn(torch.cat([four] * 4, dim=1))
    alone = ln_rnn(four[:1])  # a batch of one: the same code, nothing to share
vs_batch = (alone - by_hand[:1]).abs().max().item()
# below 1e-12 it is float64 roundoff, which differs by CPU: print the bound it meets
cell_shown = "< 1e-12" if vs_cell < 1e-12 else f"{vs_cell:.1e}"
batch_shown = "< 1e-12" if vs_batch < 1e-12 else f"{vs_batch:.1e}"
print(f"by hand vs lnpaper.models.recurrent.LayerNormTanhRNNCell: {cell_shown}")
print(f"32-step sequences: h_T of shape {tuple(longer.shape)}")
print(f"example 0 alone vs in its batch: {batch_shown}")
assert vs_cell < 1e-12, f"the LN RNN by hand and the cell differ by {vs_cell:.2e}"
assert vs_batch < 1e-12, f"example 0 alone and in its batch differ by {vs_batch:.2e}"

# %% [markdown]
# Cooijmans et al.'s recurrent BatchNorm (`lnpaper.RecurrentBatchNorm`, notebook 01), by contrast,
# needs the step index, keeps a mean and a variance per unit *per step*, refuses to train on a step
# beyond its `max_steps`, and at inference reuses the statistics of the last trained step.
#
# ### The LN-LSTM (R1)
#
# The check behind R1, in float64 on 8 test digits: the cell is Eq. 20-22 written out with plain
# tensor operations; its statistics span all $4H$ units (one LayerNorm per gate would be a different
# cell); multiplying $W_h$ and $W_x$ by 10 leaves it unchanged; and it keeps none of the state of the
# BN-LSTM (Cooijmans et al.: the same cell with `RecurrentBatchNorm` in the three places, gains
# starting at 0.1).

# %%
anatomy = runs.lnlstm_anatomy()
print(f"plain LSTMCell vs torch.nn.LSTMCell:          {anatomy.lstm_parity:.1e}")
print(f"LN-LSTM vs Eq. 20-22 written out:             {anatomy.by_hand_difference:.1e}")
print(
    f"... vs one LayerNorm per gate instead:        {anatomy.per_gate_difference:.3f}"
)
print(
    f"LN(W_x x_t) with g=1, b=0: |mean over 4H| <= {anatomy.stacked_mean:.1e}, "
    f"|mean over one gate| up to {anatomy.per_gate_mean:.3f}"
)
print(
    f"W_h, W_x x {anatomy.scale:g}: h_t moves {anatomy.layernorm_scale_change:.1e} "
    f"(eps 1e-12), {anatomy.layernorm_scale_change_eps:.1e} (eps 1e-5); "
    f"plain LSTM {anatomy.lstm_scale_change:.3f}"
)
print(f"\n{'':38s} {'LN-LSTM':>10s} {'BN-LSTM':>14s}")
rows = [
    (
        "numbers stored besides the parameters",
        anatomy.layernorm_stored,
        anatomy.batchnorm_stored,
    ),
    (
        "example 0's h_t, other batch-mates",
        f"{anatomy.layernorm_batch_change:.3g}",
        f"{anatomy.batchnorm_batch_change:.3g}",
    ),
    (
        "h_t, training mode vs eval mode",
        f"{anatomy.layernorm_mode_change:.3g}",
        f"{anatomy.batchnorm_mode_change:.3g}",
    ),
    ("longest training sequence", "any", f"T_max = {anatomy.max_steps}"),
    ("beyond T_max at inference", "same code", "step T_max-1's"),
    ("gains start at", "1.0", "0.1"),
]
for name, ln, bn in rows:
    print(f"{name:38s} {ln!s:>10s} {bn!s:>14s}")
print(f"\nLN-LSTM on 32-step sequences: max |h| {anatomy.layernorm_longer:.3f}")
print(verdicts.wrap(f"BN-LSTM trained on them: {anatomy.batchnorm_longer_error}"))
identities = (anatomy.lstm_parity, anatomy.by_hand_difference, anatomy.stacked_mean)
assert max(identities) < 1e-12, (
    f"LSTMCell vs torch {anatomy.lstm_parity:.2e}, LN-LSTM vs Eq. 20-22 "
    f"{anatomy.by_hand_difference:.2e}, mean over 4H {anatomy.stacked_mean:.2e}"
)
assert anatomy.per_gate_difference > 0.1 and anatomy.per_gate_mean > 0.1, (
    f"per-gate statistics move h_t by only {anatomy.per_gate_difference:.3g}, "
    f"one gate's mean {anatomy.per_gate_mean:.3g}"
)
assert anatomy.layernorm_scale_change < 1e-8 and anatomy.lstm_scale_change > 0.1, (
    f"W x {anatomy.scale:g}: LN-LSTM moves {anatomy.layernorm_scale_change:.2e}, "
    f"LSTM {anatomy.lstm_scale_change:.3g}"
)
assert anatomy.layernorm_batch_change == anatomy.layernorm_mode_change == 0.0, (
    f"LN-LSTM: batch-mates move h_t by {anatomy.layernorm_batch_change:.2e}, "
    f"the mode by {anatomy.layernorm_mode_change:.2e}"
)
assert anatomy.layernorm_stored == 0 < anatomy.batchnorm_stored, (
    f"stored: LN-LSTM {anatomy.layernorm_stored}, BN-LSTM {anatomy.batchnorm_stored}"
)

# %% [markdown]
# All four hold, so R1 is `reproduced`. The BN-LSTM stores 2304 numbers (a mean and a variance for
# each of $4H + 4H + H$ units at each of 8 steps); the LN-LSTM none. The scale invariance is exact
# only while $\epsilon$ is negligible next to the variance of the summed inputs: at initialization
# $W_x x_t$ is small, so $\epsilon = 10^{-5}$ already moves $h_t$ by $10^{-3}$ when the weights are
# scaled by 10.

# %% [markdown]
# ### Why the dynamics settle (R2)
#
# The lesson's runs in full. $W_h$ has entries $N(0, 1/H)$, so its eigenvalues fill the unit disc.
# "Dependence" is $\|(\partial h_t / \partial x_0)\, v\|$ for a random unit direction $v$: the
# factor by which a gradient from step $t$ reaches step 0.

# %%
r2 = analysis.dynamics_summary(dynamics)
t_in = f"t={dynamics.input_steps}"
print(
    f"{'':17s} {'RMS of a_t':>19s} {'RMS h_t':>9s} {'dependence':>14s} {'growth':>9s}"
)
print(
    f"{'':11s} {'scale':>5s} {t_in:>9s} {'t=300':>9s} {'t=300':>9s} "
    f"{'on x_0, t=300':>14s} {'per step':>9s}"
)
for net in dynamics.summed_rms:
    for scale in dynamics.summed_rms[net]:
        summed = dynamics.summed_rms[net][scale]
        hidden = dynamics.hidden_rms[net][scale]
        print(
            f"{net:11s} {scale:5g} {summed[dynamics.input_steps - 1]:9.3g} "
            f"{summed[-1]:9.3g} {hidden[-1]:9.3f} "
            f"{dynamics.sensitivity[net][scale][-1]:14.3g} "
            f"{r2['growth'][net][scale]:9.3f}"
        )
(h_low, h_high), (a_low, a_high) = r2["ln_hidden_range"], r2["ln_summed_per_scale"]
print(
    f"LN RNN: RMS of h_t within {h_low:.3f}-{h_high:.3f} at every scale and free step;"
)
print(f"RMS of a_t / scale {a_low:.4f}-{a_high:.4f};")
print(f"trajectories equal to 1e-3 until step {r2['same_until']}")
plain_last = r2["plain_summed_last"]
assert plain_last[0.5] < 1e-6 and plain_last[4.0] > 1.0, (
    f"tanh RNN: RMS of a_300 {plain_last[0.5]:.2e} at 0.5, {plain_last[4.0]:.3g} at 4"
)
assert h_high < 1.05 * h_low, f"LN RNN: RMS of h_t {h_low:.3f}-{h_high:.3f}"
assert a_high < 1.01 * a_low, f"LN RNN: RMS of a_t / scale {a_low:.4f}-{a_high:.4f}"
assert all(1.0 < growth < 1.1 for growth in r2["growth"]["LN tanh RNN"].values()), (
    "LN RNN: growth per step "
    + ", ".join(f"{growth:.3f}" for growth in r2["growth"]["LN tanh RNN"].values())
)
figures.rnn_dynamics(dynamics)

# %% [markdown]
# The LN runs part ways after 25 steps: the $\epsilon$ inside the square root breaks the invariance
# by a hair, and this net amplifies small differences. One draw could mislead, so R2 is graded on
# five draws of the weights, and the runs are repeated at gains 0.5 and 2 (shown, not graded):

# %%
draws = analysis.dynamics_draws()
print("LN RNN, growth of a perturbation per free step, every weight scale")
for gain, results in draws.items():
    by_draw = [analysis.dynamics_summary(r)["growth"]["LN tanh RNN"] for r in results]
    ranges = "  ".join(f"{min(g.values()):.3f}-{max(g.values()):.3f}" for g in by_draw)
    print(f"  g = {gain:<4g} draws 0-4: {ranges}")

# %% [markdown]
# At $g = 1$ the growth belongs to the draw: two of five grow by about 7% per step, two stay within
# 1% of steady, one shrinks. The gain moves it more: at $g = 2$ every draw grows, at $g = 0.5$ none
# by more than 1%. The first two parts of the claim (the plain net drifts with the scale, the LN net
# does not) hold in every draw; the bound on growth fails in two of five: R2 is `partly`.
#
# ### Training: faster, and as good or better? (R3, R3d, R4, R4b)
#
# LayerNorm trains faster (**R3**) and ends as good (**R4**) or better (**R4b**), on the lesson's
# digit rows. R3 compares rate by rate; R3d and the ends take each model at its *own* best rate
# (validation NLL over the run). "At the end" is steps 250-300; "as good" allows 1 point less
# accuracy (`R4_MARGIN`); "better" needs higher accuracy and lower NLL.

# %%
summary = training_summary(study)
rates = study.runs["LSTM"]["lrs"]
# Two tables of the same rows: the validation areas that choose each model's rate, then
# the test results at that rate.
validation = " ".join(f"{'val, lr ' + format(lr, 'g'):>12s}" for lr in rates)
print(f"{'model':18s} {validation} {'best':>6s}")
for model in study.runs:
    row = summary[model]
    areas = " ".join(f"{area:12.3f}" for area in row["val_area"])
    print(f"{model:18s} {areas} {row['lr']:6g}")
print(
    f"\n{'model':18s} {'test NLL 25-75':>15s} {'acc. 250-300':>15s} "
    f"{'NLL 250-300':>15s}"
)
for model in study.runs:
    row = summary[model]
    early_nll = mean_sd_text(row["early"])
    accuracy = mean_sd_text([100 * a for a in row["late_accuracy"]])
    late = mean_sd_text(row["late"])
    print(f"{model:18s} {early_nll:>15s} {accuracy + '%':>15s} {late:>15s}")

print(
    "\nLN-LSTM minus LSTM at the same rate, test NLL over steps 25-75, paired by seed"
)
for k, lr in enumerate(rates):
    same = training_summary(study, lr_index=k)
    lead = stats.paired_difference(same["LN-LSTM"]["early"], same["LSTM"]["early"])
    print(f"   lr {lr:g}: {lead.text()}")
print("\nEach at its own best rate, minus the LSTM, paired by seed")
for model in ("LN-LSTM", "BN-LSTM"):
    lead = stats.paired_difference(summary[model]["early"], summary["LSTM"]["early"])
    accuracy = stats.paired_difference(
        [100 * a for a in summary[model]["late_accuracy"]],
        [100 * a for a in summary["LSTM"]["late_accuracy"]],
    )
    late = stats.paired_difference(summary[model]["late"], summary["LSTM"]["late"])
    print(f"   {model}: test NLL, steps 25-75   {lead.text()}")
    print(f"      accuracy (pp), steps 250-300 {accuracy.text(1)}")
    print(f"      test NLL, steps 250-300      {late.text()}")
r3, r3d = CHAPTER.grade("R3"), CHAPTER.grade("R3d")
print(f"\nR3, LN-LSTM faster at every shared rate: {r3.verdict}")
verdicts.expect(r3, verdicts.PARTLY)
print(f"R3d, LN-LSTM faster, each at its own best rate: {r3d.verdict}")
verdicts.expect(r3d, verdicts.INCONCLUSIVE)
r4 = CHAPTER.grade("R4")  # no worse by more than R4_MARGIN in accuracy, late
r4_margin = f"{100 * R4_MARGIN:g} pp"
print(f"R4, no worse than {r4_margin} in test accuracy, steps 250-300: {r4.verdict}")
verdicts.expect(r4, verdicts.INCONCLUSIVE)
r4b = CHAPTER.grade("R4b")  # higher test accuracy and lower test NLL, late
print(f"R4b, higher test accuracy and lower test NLL, steps 250-300: {r4b.verdict}")
verdicts.expect(r4b, verdicts.INCONCLUSIVE)
figures.recurrent_training(study)

# %% [markdown]
# R3 is `partly`: faster at 2 of 3 shared rates. Each at its own best rate, the LN-LSTM minus the
# LSTM over steps 25-75 is +0.014 [-0.023, +0.051] (R3d `inconclusive`). Over steps 250-300 its accuracy is -1.0
# [-2.1, +0.1] points from the LSTM's, past the margin of -1 (R4 `inconclusive`), and its test NLL
# is higher, +0.047 [+0.017, +0.076], both too close to 0 to grade (R4b `inconclusive`).
#
# ### The GRU, the cell the paper used (R3f, R4c)
#
# Sec. 6.1 and 6.3 ran GRUs: the plain GRU (supplement Eq. 23-25) against the LN-GRU (Eq. 26-28,
# four LayerNorms), graded as R3 and R4b.

# %%
for claim_id in ("R3f", "R4c"):
    finding = CHAPTER.grade(claim_id)
    print(claim_id)
    print(verdicts.evidence(finding))
verdicts.expect(CHAPTER.grade("R3f"), verdicts.SOME_PARTS)
verdicts.expect(CHAPTER.grade("R4c"), verdicts.INCONCLUSIVE)

# %% [markdown]
# The GRUs repeat the LSTMs' story: faster at two shared rates (R3f `partly`), not better at the
# end, its NLL +0.035 [+0.001, +0.068] nats worse, too little to grade (R4c `inconclusive`).
#
# ### The attentive reader (R7-R7c)
#
# The lesson's race, graded as declared, after two checks: the task must need the LSTM
# (a bag of embeddings and the passage's most frequent candidate end 15 points behind it), and
# the end is graded only where training ended (under 2 points of change in its last quarter).

# %%
padded = analysis_reader.padded_steps(reader.runs["BN-LSTM"])
frequent = analysis_reader.most_frequent_error()
print(f"batches with 30%+ padded rows at {padded['lowest']:.2f} of their steps or more")
print(f"the most frequent candidate: {frequent:.1f}% test error")
print(f"{'test error (%), steps 525-700':34s} {'mean':>6s} {'change':>7s}")
for label, row in at_best.items():
    last = sum(row["last"]) / len(row["last"])
    print(f"{label:34s} {last:6.1f} {row['last_quarter_change']:+7.1f}")
undecided, partly = verdicts.INCONCLUSIVE, verdicts.PARTLY
for claim_id, verdict in (("R7", undecided), ("R7b", undecided), ("R7c", partly)):
    finding = CHAPTER.grade(claim_id)
    print(f"\n{claim_id}")
    print(verdicts.evidence(finding))
    verdicts.expect(finding, verdict)

# %% [markdown]
# The task needs reading (the two shortcuts stay above 60% error), and padding reaches BatchNorm's
# statistics, yet the BN-LSTM counting text rows alone does no better: -1.3 [-3.0, +0.4] points
# over the run. R7c is `partly`: gain 1.0 leads by 1.5 points early; the end is undecided.
#
# ### Handwriting (R8-R8c)
#
# Graded as declared, after two checks of the paper's reason: does a line's start matter to its
# end, and is the plain LSTM unstable (gradient norms jumping tenfold, or summed inputs drifting
# twofold)?

# %%
reference = strokes.independent_nll("test")
print(f"no memory (one Gaussian and a pen-lift rate): {reference:.3f} nats a point")
for check in (claims_handwriting.long_range, claims_handwriting.unstable):
    print(textwrap.fill(check(writing)[1], 88))
ratio = analysis_handwriting.speed_ratio(writing)
low, mean, high = (math.exp(v) for v in (ratio.low, ratio.mean, ratio.high))
print(f"updates to the LSTM's end level, LN / LSTM: {mean:.2f} [{low:.2f}, {high:.2f}]")
for claim_id in ("R8", "R8b", "R8c"):
    finding = CHAPTER.grade(claim_id)
    print(f"\n{claim_id}")
    print(verdicts.evidence(finding))
    verdicts.expect(finding, undecided)

# %% [markdown]
# A line's start matters: resets cost the trained LSTM 1.279 nats a point. But the instability
# the paper names is absent, so R8's early lead is not Sec. 6.5's stabilized dynamics; and
# LayerNorm needs 1.12 times the updates to reach the LSTM's final level.
#
# ### LN-LSTM against BN-LSTM on digits (R3b)
#
# Our own question: R7-R7b on digits, without padding or attention, each model at its best rate.

# %%
for part, steps in (("early", "25-75"), ("late", "250-300")):
    ln, bn = summary["LN-LSTM"][part], summary["BN-LSTM"][part]
    difference = stats.paired_difference(ln, bn)
    lower = sum(a < b for a, b in zip(ln, bn, strict=True))
    means = f"LN-LSTM {sum(ln) / len(ln):.3f}, BN-LSTM {sum(bn) / len(bn):.3f}"
    print(f"test NLL, steps {steps}: {means}")
    print(
        f"   LN - BN {difference.text()}, LN lower in {lower} of {difference.n} seeds"
    )
r3b = CHAPTER.grade("R3b")
print(f"R3b, LN-LSTM below BN-LSTM early and late: {r3b.verdict}")
verdicts.expect(r3b, verdicts.INCONCLUSIVE)

# %% [markdown]
# Late, the BN-LSTM is lower, LN minus BN +0.024 [+0.002, +0.046], too little to grade: R3b is
# `inconclusive`.
#
# ### The end, at the rate that ends best (R4d)
#
# R4d picks each rate by the last quarter alone, on fresh seeds, grading R4b and R4c.

# %%
r4d = CHAPTER.grade("R4d")
print(verdicts.evidence(r4d))
verdicts.expect(r4d, verdicts.INCONCLUSIVE)

# %% [markdown]
# **R4d inconclusive** at this budget: the LN-LSTM still ends behind, +0.058 [+0.018, +0.098]
# nats, too little to grade, and the GRUs are not told apart.
#
# ### Is the grid wide enough? (R4e)
#
# Four models pick the grid's top rate, 3e-2; R4e retrains each at 1e-1, same seeds.

# %%
r4e = CHAPTER.grade("R4e")
print(verdicts.evidence(r4e))
verdicts.expect(r4e, verdicts.REPRODUCED)

# %% [markdown]
# All do worse there: no comparison above held a baseline below its best.
#
# ### Gains: start at 1.0 or at 0.1? (R3e)
#
# Ba et al. found, on the attentive reader, that LayerNorm's gains started at 1.0 did
# "significantly better" than at 0.1. Cooijmans et al. start BatchNorm's gains at 0.1, for a reason
# arithmetic shows: a normalized input $z \sim N(0, 1)$ scaled by the gain $s$ enters a tanh (or a
# sigmoid), and the average slope $E[1 - \tanh^2(s z)]$ is how much gradient passes through; for
# the sigmoid gates, the average slope as a share of the slope at 0.

# %%
for s in (0.1, 1.0):
    print(f"E[1 - tanh^2(s z)] at s = {s:g}: {mean_tanh_slope(s):.3f}")
nodes, weights = np.polynomial.hermite_e.hermegauss(80)  # z ~ N(0, 1), by quadrature
for s in (0.1, 1.0):
    sigmoid = 1 / (1 + np.exp(-s * nodes))
    share = weights @ (sigmoid * (1 - sigmoid)) / np.sqrt(2 * np.pi) / 0.25
    print(f"E[sigmoid'(s z)] / sigmoid'(0) at s = {s:g}: {share:.3f}")
slopes = (round(mean_tanh_slope(0.1), 3), round(mean_tanh_slope(1.0), 3))
assert slopes == (0.990, 0.606), f"tanh slopes at s = 0.1 and 1: {slopes}"

# %% [markdown]
# At gain 0.1 the tanh units sit in their linear range and pass 99% of the gradient; at gain 1.0
# only 61%. But a gain of 0.1 also shrinks every gate's signal to a tenth: the gates all start near
# 0.5 and the output $h_t = \sigma(o_t) \tanh(0.1 \cdot \hat c_t)$ is small. Which effect wins is an
# empirical question: R7c asks it on the reader, **R3e** here, each gain at its own best rate,
# faster and better at the end (the BN-LSTM's gains too, by mean test NLL over the run).

# %%
print("gain 1.0 - gain 0.1, mean test NLL over the run, paired by seed;")
print("each gain at its own best rate")
for model, one, tenth in (
    ("LN-LSTM", "LN-LSTM", "LN-LSTM, gain 0.1"),
    ("BN-LSTM", "BN-LSTM, gain 1.0", "BN-LSTM"),
):
    gain = stats.paired_difference(summary[one]["curve"], summary[tenth]["curve"])
    pairs = zip(summary[one]["curve"], summary[tenth]["curve"], strict=True)
    lower = sum(a < b for a, b in pairs)
    lrs = f"lr {summary[one]['lr']:g} and {summary[tenth]['lr']:g}"
    print(f"   {model} ({lrs}): {gain.text()}")
    print(f"      gain 1.0 lower in {lower} of {gain.n} seeds")
r3e = CHAPTER.grade("R3e")
print("R3e, LN gain 1.0 below 0.1 early and late")
print(verdicts.evidence(r3e))
verdicts.expect(r3e, verdicts.PARTLY)
figures.gain_init(study)

# %% [markdown]
# For the LN-LSTM, gain 1.0 learns faster, as Ba et al. found: 1.0 minus 0.1 in test NLL is -0.406
# [-0.468, -0.344] over steps 25-75. By the end the lead is gone: +0.013 [-0.020, +0.046] over steps
# 250-300. R3e is `partly`, as R7c. For the BN-LSTM the two starting gains are not told apart at
# $T = 8$; M4d checks them at $T = 64$.
#
# ### Longer than training
#
# LayerNorm needs nothing extended; the BN-LSTM reuses its last trained step's statistics (the
# $T_{max}$ rule). On notebook 01's digit stream (name the digit shown two steps earlier) both
# nets train on 8 steps and are tested on 16.

# %%
longer = runs_lengths.longer_sequences()
lengths = analysis.length_summary(longer)
print(f"{'model':10s} {'steps 2-7 (trained)':>20s} {'steps 8-15 (longer)':>20s}")
for model, parts in lengths.items():
    (inside, inside_sd), (beyond, beyond_sd) = parts["inside"], parts["beyond"]
    print(
        f"{model:10s} {100 * inside:13.1f} +- {100 * inside_sd:.1f} "
        f"{100 * beyond:13.1f} +- {100 * beyond_sd:.1f}%"
    )
    # no loss beyond the training length, within 2 points
    assert beyond >= inside - 0.02, (
        f"{model}: {100 * inside:.1f}% inside the training length, "
        f"{100 * beyond:.1f}% beyond"
    )
figures.longer_sequences(longer)

# %% [markdown]
# Both hold their accuracy at twice the training length. For the BN-LSTM that is the $T_{max}$ rule
# working: this stream is stationary and 8 steps let the statistics settle. It would fail for a
# longer transient or a drifting input; the LN-LSTM assumes neither.
#
# ### Cooijmans et al.'s statistics on a stationary input (M4f, M4g)
#
# Cooijmans et al. (their Sec. 3): "averaging statistics over time severely degrades
# performance", and past $T_{max}$ the statistics of step $T_{max}$ serve, because the
# activations settle. The last section's BN-LSTM trains on streams of 8 and is tested on 32, with
# per-step statistics and the rule, and with the 8 steps' statistics averaged. Declared before the
# run: **M4f**, averaged minus per step, test NLL over steps 2-7 above 0; **M4g**, with the rule,
# accuracy over steps 8-31 at most 1 point below steps 2-7.

# %%
stationary = runs_lengths.stationary_statistics()
drift = [
    sum(seed[t] for seed in stationary.drift) / len(stationary.seeds)
    for t in range(stationary.train_length - 1)
]
print("change of the statistics from the step before (rms over units, in running sds)")
print("   " + "  ".join(f"step {t + 1}: {d:.3f}" for t, d in enumerate(drift[:4])))
print(f"{'test NLL, mean of 10 seeds':28s} {'steps 2-7':>10s} {'steps 8-31':>11s}")
inside = stationary.train_length - stationary.delay
for name, losses in stationary.loss.items():
    early_nll = sum(sum(run[:inside]) / inside for run in losses) / len(losses)
    late = sum(sum(run[inside:]) / len(run[inside:]) for run in losses) / len(losses)
    print(f"   {name + ' statistics':25s} {early_nll:10.4f} {late:11.4f}")
for claim_id, expected in (("M4f", verdicts.NEGLIGIBLE), ("M4g", verdicts.REPRODUCED)):
    finding = CHAPTER.grade(claim_id)
    print(claim_id)
    print(verdicts.evidence(finding))
    verdicts.expect(finding, expected)

# %% [markdown]
# The second statement holds here; the first holds in direction only. The statistics move by 0.10 of
# a standard deviation from step 0 to step 1 and by 0.04 or less after that. Averaging over time
# costs +0.005 [+0.000, +0.009] nats, far inside the 0.02 nats the notebooks call negligible, so M4f
# is `not reproduced (negligible)`. The $T_{max}$ rule carries the nets to four times their
# training length with no loss: M4g is `reproduced`. Cooijmans et al.'s transient (Figure 5) is of
# 1000 units, ours of 64 is over in two steps; and averaging here pools only the estimates used at
# inference.
#
# ### Claims checked here

# %%
rows = ["R1", "R2", "R3", "R3f", "R3d", "R3e", "R3b", "R4", "R4b", "R4c", "R4d", "R4e"]
rows += ["R7", "R7b", "R7c", "R8", "R8b", "R8c"]
print(CHAPTER.checked_here([*rows, "M4f", "M4g"]))
