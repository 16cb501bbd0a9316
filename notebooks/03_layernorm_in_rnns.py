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
# *Layer Normalization* (Ba, Kiros, Hinton 2016), Section 3.1 (recurrent networks), the supplement's
# LN-LSTM and LN-GRU (Eq. 20-28) and Section 6 (the experiments), with *Recurrent Batch
# Normalization* (Cooijmans et al. 2016) as the rival.
#
# The paper was written for recurrent networks: all but two of its Section 6 experiments are RNNs
# (the two: a feed-forward net on permutation-invariant MNIST, Sec. 6.7, and a preliminary
# convolutional net, the section's last). Notebook 01 showed what BatchNorm needs to work inside an RNN
# (statistics for every time step, and a rule for steps longer than any seen in training). This
# notebook shows what LayerNorm needs instead, which is nothing, and then checks what the paper
# says it buys:
#
# - the LN-LSTM, equation by equation, and what it does not keep (claim **R1**);
# - why the hidden-to-hidden dynamics stop depending on the scale of the weights (**R2**);
# - LSTM, LN-LSTM and BN-LSTM trained on the digits read row by row: faster (**R3**), and as good
#   or better at the end (**R4**, **R4b**)? LN-LSTM against BN-LSTM (**R3b**); the gains' initial
#   value, 1.0 or 0.1;
# - sequences twice as long as any seen in training;
# - a coda where BatchNorm is supposed to win: a small CNN (**R5**).
#
# **Scaled down.** The paper's recurrent experiments ran on GPUs for days, on MSCOCO, BookCorpus,
# binarized MNIST (DRAW, a generative model) and handwriting. Here the data are scikit-learn's
# 8 x 8 digits read row by row, 8 steps of 8 pixels. That is not sequential MNIST, which reads a
# 28 x 28 digit one pixel at a time (784 steps): that benchmark is Le et al.'s (2015, for the IRNN)
# and Cooijmans et al.'s (2016), and Ba et al. did not run it. The recurrent nets have 64 units
# and train for 400 steps of batch 64 (21 epochs of 1197 images), over 10 seeds, with 300
# validation and 300 test images. What carries over is the direction of each claim, not its
# numbers. The LN-GRU of Eq. 26-28 (the order-embedding model's cell) is in `lnpaper.models.recurrent`
# and its tests, but only LSTMs are trained here.
#
# **Run time.** The training results are read from the record in `results/`, so the notebook runs
# in seconds. A live run (`LNPAPER_RECORD=off`) trains all 150 small networks again, which takes
# about six and a half minutes on one CPU core.

# %%
# %matplotlib inline
import inspect

import torch

import lnpaper
from lnpaper import claims, experiments, figures, stats
from lnpaper.claims.layernorm_in_rnns import (
    R4_MARGIN,
    check_r3,
    check_r3b,
    check_r4,
    check_r4b,
    check_r5,
)
from lnpaper.data import digits
from lnpaper.experiments.layernorm_in_rnns import BASELINE_LR, LOWER_LR, mean_tanh_slope
from lnpaper.models.recurrent import LayerNormLSTMCell, LayerNormTanhRNNCell, unroll
from lnpaper.spread import mean_sd_text

lnpaper.setup()

# %% [markdown]
# ## One normalization per step, from that step alone
#
# A recurrent layer computes the same summed inputs at every step,
# $a_t = W_{hh} h_{t-1} + W_{xh} x_t$. Section 3.1 normalizes them over the layer's $H$ units, with
# statistics computed at step $t$ from $a_t$ alone:
#
# $$\mu_t = \frac1H \sum_{i=1}^H a_{t,i}, \qquad
#   \sigma_t = \sqrt{\frac1H \sum_{i=1}^H (a_{t,i} - \mu_t)^2}, \qquad
#   h_t = f\!\left(\frac{g}{\sigma_t} \odot (a_t - \mu_t) + b\right).$$
#
# One gain $g$ and bias $b$ serve every step. Nothing else exists: no running average, no buffer per
# step, no batch. Written out for a tanh RNN reading four digits row by row:

# %%
x_rows, _ = digits.load("test", form="rows")  # (N, T = 8 rows, 8 pixels per row)
x_rows = x_rows.double()  # float64, so that what differs below is rounding, not float32's
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
        h = torch.tanh(g / sigma * (a - mu) + b)  # h_t = f(g / sigma_t (a_t - mu_t) + b)
    return h


four = x_rows[:4]
with torch.no_grad():
    by_hand = ln_rnn(four)
    vs_cell = (by_hand - unroll(cell, four)[0][:, -1]).abs().max().item()
    longer = ln_rnn(torch.cat([four] * 4, dim=1))  # 32 steps: the same code, nothing to extend
    alone = ln_rnn(four[:1])  # a batch of one: the same code, nothing to share
vs_batch = (alone - by_hand[:1]).abs().max().item()
# below 1e-12 it is float64 roundoff, which differs from CPU to CPU: print the bound it meets
print(f"by hand vs lnpaper.models.recurrent.LayerNormTanhRNNCell: "
      f"{'< 1e-12' if vs_cell < 1e-12 else f'{vs_cell:.1e}'}")
print(f"32-step sequences: h_T of shape {tuple(longer.shape)}; example 0 alone vs in its batch: "
      f"{'< 1e-12' if vs_batch < 1e-12 else f'{vs_batch:.1e}'}")
assert vs_cell < 1e-12, f"the LN RNN by hand and LayerNormTanhRNNCell differ by {vs_cell:.2e}"
assert vs_batch < 1e-12, f"example 0 alone and in its batch differ by {vs_batch:.2e}"

# %% [markdown]
# Compare the recurrent BatchNorm of Cooijmans et al. (`lnpaper.RecurrentBatchNorm`, notebook 01):
# it needs the step index, keeps a mean and a variance per unit *per step*, refuses to train on a
# step beyond its `max_steps`, and at inference reuses the statistics of the last trained step.
#
# ## The LN-LSTM (R1)
#
# An LSTM has four gates and a cell state. The supplement (Eq. 20-22) normalizes the two gate terms
# separately, each over the whole stacked $4H$ vector of the four gates, and the cell state only on
# its way into the output tanh:
#
# $$\begin{aligned}
# \begin{pmatrix} f_t \\ i_t \\ o_t \\ g_t \end{pmatrix} &=
#     \mathrm{LN}(W_h h_{t-1};\, g_1, b_1) + \mathrm{LN}(W_x x_t;\, g_2, b_2) + b \\
# c_t &= \sigma(f_t) \odot c_{t-1} + \sigma(i_t) \odot \tanh(g_t) \\
# h_t &= \sigma(o_t) \odot \tanh\big(\mathrm{LN}(c_t;\, g_3, b_3)\big)
# \end{aligned}$$
#
# Two separate LayerNorms keep either term from drowning out the other; the recurrence of $c_t$ is
# left alone, so the cell can still carry a large value forward. In `lnpaper` (gates in PyTorch's
# order $i, f, g, o$; LayerNorm's statistics over all $4H$ units do not depend on the order):

# %%
print(inspect.getsource(LayerNormLSTMCell.forward))

# %% [markdown]
# The experiment behind R1 checks, in float64 on 8 test digits: that this cell is Eq. 20-22 written
# out with plain tensor operations; that the statistics span all $4H$ units (one LayerNorm per gate
# would be a different cell); that multiplying $W_h$ and $W_x$ by 10 leaves it unchanged; and what
# it keeps compared with the BN-LSTM (Cooijmans et al.: the same cell with `RecurrentBatchNorm` in
# the three places, gains starting at 0.1). The plain `LSTMCell` it builds on is checked against
# `torch.nn.LSTMCell`.

# %%
anatomy = experiments.lnlstm_anatomy()
print(f"plain LSTMCell vs torch.nn.LSTMCell:          {anatomy.lstm_parity:.1e}")
print(f"LN-LSTM vs Eq. 20-22 written out:             {anatomy.by_hand_difference:.1e}")
print(f"... vs one LayerNorm per gate instead:        {anatomy.per_gate_difference:.3f}")
print(f"LN(W_x x_t) with g=1, b=0: |mean over 4H| <= {anatomy.stacked_mean:.1e}, "
      f"|mean over one gate| up to {anatomy.per_gate_mean:.3f}")
print(f"W_h, W_x x {anatomy.scale:g}: h_t moves {anatomy.layernorm_scale_change:.1e} (eps 1e-12), "
      f"{anatomy.layernorm_scale_change_eps:.1e} (eps 1e-5); plain LSTM {anatomy.lstm_scale_change:.3f}")
print(f"\n{'':38s} {'LN-LSTM':>10s} {'BN-LSTM':>14s}")
rows = [
    ("numbers stored besides the parameters", anatomy.layernorm_stored, anatomy.batchnorm_stored),
    ("example 0's h_t, other batch-mates", f"{anatomy.layernorm_batch_change:.3g}",
     f"{anatomy.batchnorm_batch_change:.3g}"),
    ("h_t, training mode vs eval mode", f"{anatomy.layernorm_mode_change:.3g}",
     f"{anatomy.batchnorm_mode_change:.3g}"),
    ("longest training sequence", "any", f"T_max = {anatomy.max_steps}"),
    ("beyond T_max at inference", "same code", "step T_max-1's"),
    ("gains start at", "1.0", "0.1"),
]
for name, ln, bn in rows:
    print(f"{name:38s} {ln!s:>10s} {bn!s:>14s}")
print(f"\nLN-LSTM on 32-step sequences: max |h| {anatomy.layernorm_longer:.3f}")
print(f"BN-LSTM trained on them: {anatomy.batchnorm_longer_error}")
assert max(anatomy.lstm_parity, anatomy.by_hand_difference, anatomy.stacked_mean) < 1e-12, (
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
# With $H = 16$ units and $T_{max} = 8$ the BN-LSTM stores 2304 numbers (a mean and a variance for
# each of $4H + 4H + H$ units at each of 8 steps); the LN-LSTM none. The scale invariance is exact
# only while $\epsilon$ is negligible next to the variance of the summed inputs. At initialization
# $W_x x_t$ is small (entries of $W$ are $\pm 1/\sqrt{H}$ at most), so $\epsilon = 10^{-5}$ already
# moves $h_t$ by $10^{-3}$ when the weights are scaled by 10.
#
# ## Why the dynamics settle (R2)
#
# Section 3.1 gives the reason LayerNorm should help an RNN: in a plain RNN the average size of the
# summed inputs tends to grow or shrink at every step, which makes gradients explode or vanish; with
# LayerNorm the layer is invariant to rescaling all of its summed inputs, "which results in much
# more stable hidden-to-hidden dynamics".
#
# The experiment takes one set of random weights ($W_h$ with entries $N(0, 1/H)$, so its eigenvalues
# fill the unit disc), multiplies them by 0.5, 1, 2 and 4, and runs a tanh RNN and the LN RNN with
# exactly those weights (64 units, float64) over 300 steps: 8 steps reading a digit's rows, then 292
# steps of zeros, so that what happens afterwards is the recurrence alone. It records the size (RMS
# over units) of $a_t$ and of $h_t$, and how strongly $h_t$ still depends on the first input row:
# $\|(\partial h_t / \partial x_0)\, v\|$ for a random unit direction $v$, the factor by which a
# gradient from step $t$ reaches step 0.

# %%
dynamics = experiments.rnn_dynamics()
r2 = experiments.layernorm_in_rnns.dynamics_summary(dynamics)
print(f"{'':14s} {'scale':>5s} {'RMS a_t: t=8':>13s} {'t=300':>9s} {'RMS h_t: t=300':>15s} "
      f"{'dependence on x_0: t=300':>25s} {'per step':>9s}")
for net in dynamics.summed_rms:
    for scale in dynamics.summed_rms[net]:
        summed, hidden = dynamics.summed_rms[net][scale], dynamics.hidden_rms[net][scale]
        print(f"{net:14s} {scale:5g} {summed[dynamics.input_steps - 1]:13.3g} {summed[-1]:9.3g} "
              f"{hidden[-1]:15.3f} {dynamics.sensitivity[net][scale][-1]:25.3g} "
              f"{r2['growth'][net][scale]:9.3f}")
print(f"LN RNN: RMS of h_t within {r2['ln_hidden_range'][0]:.3f}-{r2['ln_hidden_range'][1]:.3f} at "
      f"every scale and free step; RMS of a_t / scale {r2['ln_summed_per_scale'][0]:.4f}-"
      f"{r2['ln_summed_per_scale'][1]:.4f}; trajectories equal to 1e-3 until step {r2['same_until']}")
plain_last = r2["plain_summed_last"]
assert plain_last[0.5] < 1e-6 and plain_last[4.0] > 1.0, (
    f"tanh RNN: RMS of a_300 {plain_last[0.5]:.2e} at scale 0.5, {plain_last[4.0]:.3g} at 4"
)
assert r2["ln_hidden_range"][1] < 1.05 * r2["ln_hidden_range"][0], (
    f"LN RNN: RMS of h_t {r2['ln_hidden_range'][0]:.3f}-{r2['ln_hidden_range'][1]:.3f}"
)
assert r2["ln_summed_per_scale"][1] < 1.01 * r2["ln_summed_per_scale"][0], (
    f"LN RNN: RMS of a_t / scale {r2['ln_summed_per_scale'][0]:.4f}-{r2['ln_summed_per_scale'][1]:.4f}"
)
assert all(1.0 < growth < 1.1 for growth in r2["growth"]["LN tanh RNN"].values()), (
    "LN RNN: growth per step "
    + ", ".join(f"{growth:.3f}" for growth in r2["growth"]["LN tanh RNN"].values())
)
figures.rnn_dynamics(dynamics)

# %% [markdown]
# In the figure, grey is the plain tanh RNN and blue the LN RNN; the line style is the weight
# scale, and the shaded steps are the ones that read the digit. A curve that runs off the plotted
# range is marked where it leaves it, with the value it reaches at step 300.
#
# Without LayerNorm the weight scale decides the net's fate. At 0.5 the state shrinks by half at
# every step and is $10^{-80}$ after 300 steps, and so is any gradient reaching back to the digit;
# at 2 and 4 the state saturates and a perturbation of the first row grows by 13% and 46% per step
# ($10^{16}$ and $10^{49}$ by the end). Only near 1 does it neither vanish nor explode. With
# LayerNorm the four scales give one hidden trajectory: $a_t$ is simply multiplied by the scale and
# divided out again, so $h_t$ keeps the same size at every step and every scale. (The four runs
# agree to $10^{-3}$ for the first 25 steps and then part ways: the $\epsilon$ inside the square
# root breaks the invariance by a hair, and this particular net amplifies small differences.)
#
# That amplification is the honest limit of the claim. LayerNorm removes the *scale* from the
# dynamics, not the growth of perturbations: here a perturbation grows by about 6.6% per step at
# every scale ($10^8$ after 300 steps): less than the plain net at scale 2 or 4, more than at its
# critical scale of 1. With the summed inputs of every step set to mean 0 and variance 1, what
# remains is decided by the gain $g$ (here 1.0) and by the direction of $W_h$, which training can
# learn. R2 is marked `partly`.
#
# ## Training: faster, and as good or better? (R3, R3b, R4, R4b)
#
# The paper's evidence is a set of learning curves, and what it claims from them has two halves.
# LayerNorm trains faster: on order embeddings the LN model reached its best validation score in
# 60% of the iterations, DRAW trained "almost twice as fast", the handwriting model "much faster"
# (**R3**). And it ends as good or better, depending on the experiment:
#
# - as good (**R4**): DRAW ends at 82.09 nats against the baseline's 82.36 after 200 epochs, and
#   the handwriting model at a comparable log likelihood;
# - better (**R4b**): order embeddings improve every retrieval score (caption R@1 46.6 to 48.5,
#   image R@1 37.8 to 38.9), skip-thoughts every one of five tasks (MR 77.3 to 79.5, for one), and
#   on the attentive reader (Sec. 6.2, validation curves only, no numbers) the LN-LSTM "converges
#   to a better validation result" than the plain LSTM;
# - and the attentive reader's LN-LSTM beats Cooijmans et al.'s BN-LSTM too, faster and to a better
#   validation result (**R3b**).
#
# An earlier version of this notebook had a single claim R4, "the gain is speed, not final
# quality", which quoted DRAW alone and left out the experiments where the paper reports better
# final numbers. R4 now holds only the ties (DRAW, handwriting); R3b and R4b are new.
#
# Here, the 8 x 8 digits read row by row: each image is $T = 8$ steps of 8 pixels, read by a
# 64-unit LSTM, LN-LSTM or BN-LSTM (Cooijmans et al.: per-step statistics, gains 0.1), and a linear
# readout of $h_T$ names the digit. All three start from the same $W_x$ and $W_h$ for a given seed,
# see the same minibatches (batch 64) and use Adam for 400 steps, over 10 seeds. The learning rate
# is the plain LSTM's best of 3e-3, 1e-2 and 2e-2: 1e-2 gives it the lowest validation NLL (the best
# of each run) and the best test accuracy on average (2e-2 close behind on both, 3e-3 far behind).
# At the lower rate 3e-3 the LSTM and LN-LSTM run again, to see how the comparison depends on the
# rate. Validation NLL every 20 steps, in eval mode; test accuracy and NLL after the last step.
#
# Every comparison is paired by seed (the same seed gives both models the same initial weights and
# minibatches): we report the mean of the per-seed differences with its 95% Student-t interval over
# the 10 seeds. "Faster" (R3) is the validation NLL over the first quarter of training (steps
# 20-100): the LN-LSTM's must be lower, with the whole interval below 0, at both rates. The end is
# judged at 1e-2, the LSTM's own rate. "As good at the end" (R4) has a margin fixed in the claim
# record before the runs (`R4_MARGIN`): the LN-LSTM's test accuracy may be at most 1 percentage
# point below the LSTM's, so the interval's lower end must stay above -1 pp. "Better at the end"
# (R4b) needs no margin: the LN-LSTM's test accuracy must be higher and its test NLL lower, each
# interval wholly on its side of 0.

# %%
study = experiments.recurrent_training()
summaries = {lr: experiments.layernorm_in_rnns.training_summary(study, lr) for lr in (BASELINE_LR, LOWER_LR)}
print(f"{'model, Adam lr':18s} {'reaches LSTM best':>18s} {'seeds that reach it':>22s} "
      f"{'NLL, steps 20-100':>18s} {'best val NLL':>16s} {'test accuracy':>15s} {'test NLL':>16s}")
for (model, lr), run in study.runs.items():
    label = f"{model}, lr {lr:g}"
    best = mean_sd_text([min(curve) for curve in run["val_loss"]])
    accuracy = mean_sd_text([100 * a for a in run["test_accuracy"]])
    test_nll = mean_sd_text(run["test_loss"])
    if lr in summaries:
        row = summaries[lr][model]
        reach = "never" if row["reach"] is None else f"step {row['reach']}"
        reached = [r for r in row["reach_per_seed"] if r is not None]
        per_seed = f"{len(reached)} of {len(row['reach_per_seed'])}"
        if reached:
            per_seed += f", steps {min(reached)}-{max(reached)}"
        early = f"{sum(row['early']) / len(row['early']):.3f}"
    else:
        reach = per_seed = early = ""
    print(f"{label:18s} {reach:>18s} {per_seed:>22s} {early:>18s} {best:>16s} {accuracy + '%':>15s} "
          f"{test_nll:>16s}")

print("\nR3, faster: validation NLL over steps 20-100, LN-LSTM - LSTM, paired by seed")
for lr, s in summaries.items():
    early = stats.paired_difference(s["LN-LSTM"]["early"], s["LSTM"]["early"])
    lower = sum(a < b for a, b in zip(s["LN-LSTM"]["early"], s["LSTM"]["early"], strict=True))
    print(f"   lr {lr:g}: {early.text()}, lower in {lower} of {early.n} seeds; the LSTM's best "
          f"(mean curve) {s['level']:.4f}")
    assert stats.better(early, "lower") == stats.HOLDS, f"R3 at lr {lr:g}: {early.text()}"
low = summaries[LOWER_LR]
assert low["LN-LSTM"]["reach"] < 0.5 * low["LSTM"]["reach"], (  # ... and far sooner at 3e-3
    f"lr {LOWER_LR:g}: LN-LSTM reaches the LSTM's best at step {low['LN-LSTM']['reach']}, "
    f"the LSTM at {low['LSTM']['reach']}"
)
assert None not in low["LN-LSTM"]["reach_per_seed"], (
    f"lr {LOWER_LR:g}: LN-LSTM per seed {low['LN-LSTM']['reach_per_seed']}"
)

print("\nAfter the last step, minus the LSTM at the same rate, paired by seed")
for model, lr in (("LN-LSTM", BASELINE_LR), ("BN-LSTM", BASELINE_LR), ("LN-LSTM", LOWER_LR)):
    run, lstm = study.runs[model, lr], study.runs["LSTM", lr]
    accuracy = stats.paired_difference([100 * a for a in run["test_accuracy"]],
                                       [100 * a for a in lstm["test_accuracy"]])
    test_nll = stats.paired_difference(run["test_loss"], lstm["test_loss"])
    print(f"   {model}, lr {lr:g}: test accuracy (pp) {accuracy.text(1)}; test NLL {test_nll.text()}")
r4 = check_r4(study)  # R4: no worse by more than R4_MARGIN in test accuracy, at the LSTM's rate
print(f"R4, no worse than {100 * R4_MARGIN:g} pp in test accuracy at lr {BASELINE_LR:g}: {r4.verdict}")
assert r4.verdict == claims.INCONCLUSIVE, r4.ours
r4b = check_r4b(study)  # R4b: higher test accuracy and lower test NLL, at the LSTM's rate
print(f"R4b, higher test accuracy and lower test NLL at lr {BASELINE_LR:g}: {r4b.verdict}")
assert r4b.verdict == claims.NOT_REPRODUCED, r4b.ours
figures.recurrent_training(study)

# %% [markdown]
# Both learning rates show the speed-up where it is largest, at the start: over the first 100 steps
# the LN-LSTM's validation NLL is about half the LSTM's (0.352 against 0.666 at 1e-2, 0.538 against
# 1.144 at 3e-3), lower in all 10 seeds, and both intervals lie well below 0 (-0.314 [-0.371,
# -0.257] and -0.606 [-0.655, -0.558]). What happens next depends on the learning rate:
#
# - at **3e-3**, too low for the plain LSTM to finish in 400 steps, the LN-LSTM's mean curve reaches
#   the LSTM's final loss by step 140 (35% of the steps; 120-200 in each seed) and ends well below
#   it: best validation NLL 0.058 against 0.131, test accuracy +1.9 [+1.4, +2.5] points;
# - at **1e-2**, the LSTM's own best rate, the LSTM catches up around step 200 and ends at least as
#   well: its best validation NLL is 0.051 against the LN-LSTM's 0.060, the LN-LSTM's mean curve
#   never gets down to the LSTM's best, and only 2 of the 10 seeds of the LN-LSTM ever reach their
#   LSTM's best.
#
# So the speed-up is real, but it is largest when the baseline's learning rate is too low; at the
# baseline's best rate it is a head start rather than a shortcut to the end. R3 is `reproduced`: its
# test is the early validation NLL, which is lower at both rates, together with the gains' initial
# value below. The steps to the baseline's best are shown, not tested. (An earlier version of this
# notebook also required them, and marked R3 `partly` because the LN-LSTM never gets there at 1e-2.)
#
# At the end, at 1e-2, the LN-LSTM's test accuracy is 97.2% against the LSTM's 98.2%, a paired
# difference of -1.0 [-2.1, +0.1] points. The interval includes 0, so the LN-LSTM is not shown to
# be worse, but it also reaches past the declared margin of -1 point, so it is not shown to be no
# worse either: with 10 seeds, R4 is `inconclusive`. (An earlier version of this notebook, with 3
# seeds and a rule that called two means tied when they lay within the sum of their standard
# deviations, marked R4 `reproduced`; with more seeds and the paired test that tie does not hold
# up.) The test NLL leans the same way, and more clearly: the LN-LSTM's is higher, +0.051 [+0.019,
# +0.082], an interval that excludes 0. R4 is decided on accuracy alone, because only accuracy had a
# margin declared before the runs; the NLL is reported but does not set R4's verdict.
#
# R4b, better at the end, is `not reproduced` at the LSTM's own rate: the accuracy interval includes
# 0, and the NLL is significantly *worse*, not better. At 3e-3 the LN-LSTM does end ahead on both
# (+1.9 [+1.4, +2.5] points, NLL -0.033 [-0.055, -0.011]), but only because 400 steps at that rate
# are too few for the plain LSTM; a claim about the end is judged against a baseline at its own
# best rate, so this is not counted. Neither of the paper's end results carries over to this task,
# then: the tie of DRAW and handwriting (R4) is not shown, and the win of order embeddings and
# skip-thoughts (R4b) is not there. Here LayerNorm's advantage is a head start, and at the
# baseline's best rate it may cost a little at the end.
#
# The BN-LSTM is a surprise in the other direction: after a slow start (gains of 0.1, below) it has
# the lowest validation loss from about step 60 on and its mean curve reaches the LSTM's best by
# step 160, yet its test accuracy after the last step, 97.8%, is not above the LSTM's (-0.4 [-1.0,
# +0.2] points). With 300 validation and 300 test images, one image is 0.33 points of accuracy, and
# one confidently wrong image adds about 0.03 to an NLL, so even with 10 seeds the intervals on
# final accuracy are a point or two wide at this scale. Cooijmans et al. report 99.0% for the
# BN-LSTM against 98.9% for the LSTM on sequential MNIST (784 steps) and 95.4% against 90.2% on
# permuted MNIST; the row-by-row digits see no such gap, and the permuted task is not run here
# (claim M4 stays `partly`).
#
# ### LN-LSTM against BN-LSTM (R3b)
#
# On the attentive reader, Ba et al. found the LN-LSTM faster than Cooijmans et al.'s BN-LSTM and
# ending at a better validation result. Both ran here at 1e-2, from the same weights and minibatches
# per seed, the BN-LSTM with its paper's gains of 0.1. The test, paired by seed: the LN-LSTM's mean
# validation NLL lower over the first quarter of training (faster) and over the last quarter, steps
# 320-400 (where it ends up; five evaluations, less noisy than the last one alone).

# %%
summary = summaries[BASELINE_LR]
for part, steps in (("early", "20-100"), ("late", "320-400")):
    ln, bn = summary["LN-LSTM"][part], summary["BN-LSTM"][part]
    difference = stats.paired_difference(ln, bn)
    lower = sum(a < b for a, b in zip(ln, bn, strict=True))
    print(f"val NLL, steps {steps}: LN-LSTM {sum(ln) / len(ln):.3f}, BN-LSTM {sum(bn) / len(bn):.3f}; "
          f"LN - BN {difference.text()}, LN lower in {lower} of {difference.n} seeds")
r3b = check_r3b(study)
print(f"R3b, LN-LSTM below BN-LSTM early and late: {r3b.verdict}")
assert r3b.verdict == claims.PARTLY, r3b.ours

# %% [markdown]
# The first half holds and the second fails. Over steps 20-100 the LN-LSTM's validation NLL is less
# than half the BN-LSTM's (0.352 against 0.778; -0.426 [-0.467, -0.385], lower in all 10 seeds):
# the BN-LSTM's gains of 0.1 hold it back at the start (next section). Over steps 320-400 the
# BN-LSTM is lower in every seed (0.040 against 0.081; LN minus BN +0.041 [+0.019, +0.063]), and
# its test NLL is lower too (+0.036 [+0.014, +0.059]). R3b is `partly`: on this task the BN-LSTM
# starts slower and ends better, the opposite of the attentive reader's second half. The attentive
# reader reads news articles hundreds of words long, at a far larger scale; this run cannot say
# which of the differences (length, task, scale) reverses the ending.
#
# ## Gains: start at 1.0 or at 0.1?
#
# The two papers disagree. Ba et al. found, on the attentive reader, that LayerNorm's gains started
# at 1.0 did "significantly better" than at 0.1. Cooijmans et al. start BatchNorm's gains at 0.1,
# for a reason one line of arithmetic shows: a normalized input $z \sim N(0, 1)$ scaled by the gain
# $s$ enters a tanh (or a sigmoid), and the average slope $E[1 - \tanh^2(s z)]$ is how much gradient
# passes through.

# %%
for s in (0.1, 1.0):
    print(f"E[1 - tanh^2(s z)] at s = {s:g}: {mean_tanh_slope(s):.3f}")
slopes = (round(mean_tanh_slope(0.1), 3), round(mean_tanh_slope(1.0), 3))
assert slopes == (0.990, 0.606), f"tanh slopes at s = 0.1 and 1: {slopes}, not (0.990, 0.606)"

# %% [markdown]
# At gain 0.1 the gates sit in their linear range and pass 99% of the gradient; at gain 1.0 only
# 61%. But a gain of 0.1 also shrinks every gate's signal to a tenth: the gates all start near 0.5
# and the output $h_t = \sigma(o_t) \tanh(0.1 \cdot \hat c_t)$ is small. Which effect wins is an
# empirical question. The experiment trains both cells with both initial gains for 200 steps at lr
# 1e-2 (the runs at each paper's own value are the first 200 steps of the runs above) and compares
# each seed's mean validation NLL over those steps.

# %%
gains = experiments.gain_init_study()
by_gain = experiments.layernorm_in_rnns.gain_summary(gains)
for name, per_seed in by_gain.items():
    curve = [sum(c) / len(c) for c in zip(*gains.runs[name]["val_loss"], strict=True)]
    print(f"{name:18s} mean val NLL over 200 steps {mean_sd_text(per_seed):>16s}   "
          f"at steps 20, 40, 60: " + ", ".join(f"{v:.3f}" for v in curve[1:4]))
print("gain 1.0 - gain 0.1, mean val NLL over 200 steps, paired by seed")
for model in ("LN-LSTM", "BN-LSTM"):  # Ba et al.: 1.0 better for LN; here for BN too
    one, tenth = by_gain[f"{model}, gain 1.0"], by_gain[f"{model}, gain 0.1"]
    gain = stats.paired_difference(one, tenth)
    lower = sum(a < b for a, b in zip(one, tenth, strict=True))
    print(f"   {model}: {gain.text()}, lower in {lower} of {gain.n} seeds")
    assert stats.better(gain, "lower") == stats.HOLDS, f"{model}, gain 1.0 - 0.1: {gain.text()}"
print("LN-LSTM (gain 1.0) - BN-LSTM, mean val NLL over 200 steps, paired by seed (R3b's head start)")
for bn_gain in ("0.1", "1.0"):
    head_start = stats.paired_difference(by_gain["LN-LSTM, gain 1.0"], by_gain[f"BN-LSTM, gain {bn_gain}"])
    print(f"   BN gains at {bn_gain}: {head_start.text()}")
r3 = check_r3(study, gains)  # R3 whole: early NLL at both rates, and the LN gain
print(f"R3, faster at both rates and gain 1.0 ahead of 0.1: {r3.verdict}")
assert r3.verdict == claims.REPRODUCED, r3.ours
figures.gain_init(gains)

# %% [markdown]
# For the LN-LSTM, gain 1.0 learns faster, as Ba et al. found: gain 1.0 minus 0.1 in mean validation
# NLL over the 200 steps is -0.121 [-0.131, -0.111], lower in all 10 seeds. For the BN-LSTM the
# recommended 0.1 is also the slower start here (1.0 minus 0.1: -0.114 [-0.140, -0.087], again in
# all 10 seeds): its validation loss barely moves for the first 20 steps, while the gains grow
# (Adam moves each by about 0.01 per step) until the gates carry a signal; with gain 1.0 it learns
# from the first step. By step 60 the two have met. Cooijmans et al. chose 0.1 for sequences of
# hundreds of steps, where the gradient passing through 784 steps of gates matters far more than
# through 8; at $T = 8$ the slope of 0.606 costs little, and this run cannot say whether 0.1 pays off
# on long sequences.
#
# The gains also explain most of R3b's first half. Over these 200 steps the LN-LSTM's mean validation
# NLL is 0.180 [0.156, 0.205] below the BN-LSTM's at its paper's gains of 0.1, but only 0.067
# [0.036, 0.097] below a BN-LSTM whose gains start at 1.0: LayerNorm keeps a head start, about a
# third of the size.
#
# ## Longer than training
#
# A recurrent net trained on sequences of one length often meets longer ones. LayerNorm's statistics
# come from each step alone, so nothing needs extending; the BN-LSTM reuses the statistics of its
# last trained step (the $T_{max}$ rule of notebook 01). The task is notebook 01's digit stream:
# every step shows a random digit image (64 pixels) and the net must name the digit shown two steps
# earlier. Both nets (64 units) train for 200 steps on streams of 8 steps, over 5 seeds, and are
# tested on 1024 streams of 16.

# %%
longer = experiments.longer_sequences()
lengths = experiments.layernorm_in_rnns.length_summary(longer)
print(f"{'model':10s} {'steps 2-7 (trained)':>20s} {'steps 8-15 (longer)':>20s}")
for model, parts in lengths.items():
    (inside, inside_sd), (beyond, beyond_sd) = parts["inside"], parts["beyond"]
    print(f"{model:10s} {100 * inside:13.1f} +- {100 * inside_sd:.1f} {100 * beyond:13.1f} +- "
          f"{100 * beyond_sd:.1f}%")
    assert beyond >= inside - 0.02, (  # no loss beyond the training length, within 2 points
        f"{model}: {100 * inside:.1f}% inside the training length, {100 * beyond:.1f}% beyond"
    )
figures.longer_sequences(longer)

# %% [markdown]
# Both hold their accuracy at twice the training length. For the BN-LSTM that is the $T_{max}$ rule
# working as notebook 01 predicted: this input stream is stationary and 8 steps are enough for the
# statistics to settle, so step 7's statistics fit every later step. The rule would fail where
# either assumption fails (a transient longer than the training sequences, or inputs whose
# distribution drifts along the sequence); the LN-LSTM makes no such assumption. That the BN-LSTM is
# a point or two more accurate throughout (97.3% and 97.2% against 96.0% and 95.5%) is an edge on
# this task, not a property of length.
#
# ## Coda: where BatchNorm wins (R5)
#
# The paper ends its experiments with a "preliminary" convolutional network: LayerNorm sped training
# up over no normalization, "but batch normalization outperforms the other methods". It gives no
# setup and no numbers, and one reason: units whose receptive fields lie near the border of the
# image are rarely turned on, so the hidden units of a convolutional layer do not contribute alike,
# which is what a statistic shared across them assumes.
#
# Here a small CNN (two 3 x 3 conv layers of 8 and 16 channels, ReLU, 2 x 2 max-pool, linear
# readout; `lnpaper.models.cnn.SmallCNN`) trains for 200 steps with no norm, with BatchNorm (per
# channel, over the batch and the positions) and with LayerNorm (per image, over every unit of the
# layer, $C \times$ height $\times$ width), 10 seeds each. The 8 x 8 digits fill their box, unlike
# MNIST's, whose 20 x 20 digits sit in a blank 28 x 28 frame; so the runs are repeated with each
# digit framed by 2 blank pixels (12 x 12, MNIST's proportion), which puts the rarely-on border
# units back. The claim has two parts, each tested in test NLL, paired by seed, at each image size:
# LN below no norm, and BN below LN (the whole 95% interval of the difference below 0).

# %%
cnn = experiments.cnn_coda()
for margin, by_norm in experiments.layernorm_in_rnns.cnn_summary(cnn).items():
    print(f"{8 + 2 * margin}x{8 + 2 * margin} images; no-norm CNN, share of units on at the border "
          f"vs inside: conv 1 {cnn.border_active[margin][0]:.2f} vs {cnn.interior_active[margin][0]:.2f}, "
          f"conv 2 {cnn.border_active[margin][1]:.2f} vs {cnn.interior_active[margin][1]:.2f}")
    for norm, cells in by_norm.items():
        (nll, nll_sd), (accuracy, accuracy_sd) = cells["test_loss"], cells["test_accuracy"]
        print(f"   {norm:10s} test NLL {nll:.4f} +- {nll_sd:.4f}   test accuracy "
              f"{100 * accuracy:.1f} +- {100 * accuracy_sd:.1f}%")
    loss = cnn.test_loss[margin]
    ln_none = stats.paired_difference(loss["layernorm"], loss["none"])
    bn_ln = stats.paired_difference(loss["batchnorm"], loss["layernorm"])
    print(f"   test NLL, LN - none {ln_none.text()}; LN lower: {stats.better(ln_none, 'lower')}")
    print(f"   test NLL, BN - LN   {bn_ln.text()}; BN lower: {stats.better(bn_ln, 'lower')}")
    assert stats.better(ln_none, "lower") == stats.HOLDS, f"{margin} px margin: LN - none {ln_none.text()}"
    assert stats.better(bn_ln, "lower") == stats.INCONCLUSIVE, f"{margin} px margin: BN - LN {bn_ln.text()}"
border, inside = cnn.border_active[2][1], cnn.interior_active[2][1]
assert border < 0.75 * inside, f"12x12, conv 2: units on {border:.2f} at the border, {inside:.2f} inside"
r5 = check_r5(cnn)
print(f"R5, LN below no norm and BN below LN at both sizes: {r5.verdict}")
assert r5.verdict == claims.PARTLY, r5.ours
figures.cnn_coda(cnn)

# %% [markdown]
# The first half of the claim reproduces: both normalizers cut the test NLL of the plain CNN to about
# a third (LN minus none: -0.069 [-0.092, -0.047] on the bare digits, -0.084 [-0.112, -0.056] in the
# blank frame) and train faster from the first steps. The second half does not show at this scale:
# BN minus LN is +0.002 [-0.001, +0.004] on the bare digits and +0.000 [-0.006, +0.007] in the frame,
# intervals that straddle 0, so the 10 seeds cannot tell the two apart, and if anything LayerNorm
# is a hair ahead on the bare digits. The frame does recreate the paper's premise (in the second
# conv layer, border units are on 37% of the time against 56% inside), so the premise alone does not
# make LayerNorm lose here. Two 3 x 3 layers over a 12 x 12 image are a long way from the paper's
# unspecified network, so R5 is `partly`: LN beats no norm at both sizes, BN beating LN is
# `inconclusive` at both. The paper's own conclusion was that more research was needed; later
# practice settled it by using BatchNorm (or per-channel GroupNorm) for CNNs and LayerNorm for
# sequence models.
#
# ## Claims checked here

# %%
print(claims.checked_here(["R1", "R2", "R3", "R3b", "R4", "R4b", "R5"]))
