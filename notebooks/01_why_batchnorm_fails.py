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
# # 01 · Why BatchNorm fails for sequence models
#
# *About 15 minutes to read. From the record it runs in seconds; live, 18 min on one core.*
#
# *Layer Normalization* (Ba, Kiros, Hinton 2016), Sections 1-2 (the motivation) and 6.6 (batch
# size), with *Recurrent Batch Normalization* (Cooijmans et al. 2016) for the recurrent case.
#
# Batch normalization assumes there is a batch of examples to take statistics over. The paper opens
# by listing what goes wrong when that assumption is strained; this notebook measures each problem:
#
# - one example's output depends on which other examples share its batch (**M1**);
# - a batch of one gives an output that carries no information (**M2**);
# - training and inference compute two different functions (**M3**);
# - a recurrent net needs statistics for every time step, and a rule for steps longer than any seen
#   in training (**M4**, Cooijmans et al.);
# - at batch size 4 BatchNorm trains worse and LayerNorm does not (**M5**, **M5b**, Sec. 6.6),
#   losing less than BatchNorm seed by seed (**M5e**); exact statistics at inference do not undo
#   BatchNorm's loss (**M5c**); LayerNorm converges faster than BatchNorm at both batch sizes
#   (**M5d**);
# - LayerNorm trained one example per step, the "pure online regime" of Sec. 3 (**M2b**), and
#   whether it does as well there as at batch 128 (**M2c**, our own question).
#
# Results are read from the record in `results/`; a live run (`LNPAPER_RECORD=off`) recomputes them.
# Each claim is also a row of `CLAIMS.md`.

# %%
# %matplotlib inline
import math

import torch

import lnpaper
from lnpaper import claims, demos, stats, vocabulary
from lnpaper.chapters.ch01_why_batchnorm_fails import analysis, figures, runs
from lnpaper.chapters.ch01_why_batchnorm_fails.claims import (
    M5_LAST_EPOCHS,
    M5_MARGIN,
    M5_PAPER_BN,
    m5_differences,
    m5_population_gain,
)
from lnpaper.chapters.ch01_why_batchnorm_fails.runs import M5_BATCHNORMS
from lnpaper.data import digits

lnpaper.setup()

# %% [markdown]
# ## Graded against whoever sat the exam
#
# Picture a teacher who grades each answer against the class that sat the exam today: Ana's 72 is
# excellent in a weak class and poor in a strong one, and with four classmates her grade is mostly
# noise. At the end of term the teacher switches to an average kept from past classes. That is
# BatchNorm: a unit's summed input is measured against the mean and spread of that unit over the
# current mini-batch in training, and against stored running averages at inference.
#
# LayerNorm gives every student their own ruler, made from their own scores across subjects. No
# classmate enters, and the ruler never changes. In network terms: one example's summed inputs are
# standardized over the layer's own units.

# %%
figures.exam_rulers()

# %% [markdown]
# Throughout, the "scores" are real summed inputs $a = Wx$: a freshly initialized 64 -> 64 linear
# layer applied to scikit-learn's handwritten digits (8 x 8 pixels, `lnpaper.data.digits`).
#
# In code the two are the same three lines; only the axis of the statistics differs. `a` holds one
# row per example and one column per unit:


# %%
def batch_norm_by_hand(a, eps=1e-5):  # per unit, over the batch: the class's ruler
    mean = a.mean(dim=0, keepdim=True)
    variance = a.var(dim=0, unbiased=False, keepdim=True)
    return (a - mean) / torch.sqrt(variance + eps)


def layer_norm_by_hand(a, eps=1e-5):  # per example, over its own units: its own ruler
    mean = a.mean(dim=1, keepdim=True)
    variance = a.var(dim=1, unbiased=False, keepdim=True)
    return (a - mean) / torch.sqrt(variance + eps)


# %% [markdown]
# Both normalizers also learn a gain $g$ and a bias $b$ per unit, $y = g \hat a + b$; they start at
# 1 and 0, so at initialization the package's modules compute exactly these lines (checked below).
#
# ## M1: your output depends on your batch-mates
#
# Put training image 0 into two different batches of four and normalize both batches.

# %%
x_train, y_train = digits.load("train")
torch.manual_seed(0)
first_layer = torch.nn.Linear(64, 64, bias=False)
with torch.no_grad():
    a = first_layer(x_train)  # summed inputs, one row per image

batchnorm, layernorm = lnpaper.BatchNorm(64), lnpaper.LayerNorm(64)  # training mode
pairs = ((batch_norm_by_hand, batchnorm), (layer_norm_by_hand, layernorm))
with torch.no_grad():
    for by_hand, module in pairs:
        gap = (by_hand(a[:4]) - module(a[:4])).abs().max().item()
        assert gap < 1e-5, f"{by_hand.__name__} and the module differ by {gap:.1e}"
layernorm_rows = []
print(f"{'image 0, first 4 units':24s}{'BatchNorm':29s}LayerNorm")
with torch.no_grad():
    for mates in ([1, 2, 3], [4, 5, 6]):
        batch = a[[0, *mates]]  # image 0 first, then its batch-mates
        bn, ln = batchnorm(batch)[0], layernorm(batch)[0]
        layernorm_rows.append(ln)
        bn_first, ln_first = bn[:4].numpy().round(2), ln[:4].numpy().round(2)
        print(f"{f'with images {mates}':24s}{str(bn_first):29s}{ln_first}")
ln_moved = (layernorm_rows[0] - layernorm_rows[1]).abs().max().item()
assert ln_moved == 0.0, (
    f"LayerNorm output of image 0 moved by {ln_moved:.2e} with its batch-mates"
)

# %% [markdown]
# Same image, same weights, different batch-mates: BatchNorm gives it different outputs, LayerNorm
# the same ones to the last bit. How much depends on the batch size, so the next cell draws 200
# random batches per size from 1 to 256 and measures how much the statistics and image 0's output
# spread.

# %%
dependence = runs.batch_dependence()
bn_moved, ln_moved = dependence.batchnorm_difference, dependence.layernorm_difference
print(
    f"two batches of 8: BatchNorm output of image 0 differs by up to {bn_moved:.3f}, "
    f"LayerNorm by {ln_moved:g}"
)
print(
    f"{'batch':>6s} {'sd of mean':>11s} {'sd of var':>10s} {'E[var]/var':>11s} "
    f"{'sd of BN output':>16s}"
)
for k, size in enumerate(dependence.batch_sizes):
    mean_sd, var_sd = dependence.mean_spread[k], dependence.variance_spread[k]
    ratio, output = dependence.variance_ratio[k], dependence.output_spread[k]
    shown = "refused" if output is None else f"{output:.3f}"
    print(f"{size:6d} {mean_sd:11.3f} {var_sd:10.3f} {ratio:11.3f} {shown:>16s}")
assert ln_moved == 0.0, f"LayerNorm output moved by {ln_moved:.2e} between batches"
assert bn_moved > 0.1, f"BatchNorm output moved by only {bn_moved:.3f} between batches"
output_sd, largest = dependence.output_spread, dependence.batch_sizes[-1]
assert output_sd[1] > 5 * output_sd[-1], (
    f"sd of BN output {output_sd[1]:.3f} at batch 2, "
    f"{output_sd[-1]:.3f} at batch {largest}: not 5x apart"
)
figures.batch_dependence(dependence)

# %% [markdown]
# The noise falls like $1/\sqrt{B}$, as for any sample mean: at batch 4 image 0's normalized output
# moves by about 0.57 from one set of batch-mates to the next. The batch variance is also biased
# low, by the factor $(B-1)/B$ (column `E[var]/var`), because BatchNorm divides by $B$.
#
# Try it: the cell below puts image 0 into 20 random batches of the size you pick and plots its
# first 12 units after each normalizer. Slide the batch size from 2 up to 256 and watch BatchNorm's
# orange dots close in on the grey tick (BatchNorm with the whole training split's statistics),
# while LayerNorm's 20 blue dots stay one dot at every size.

# %%
demos.show(
    demos.batch_size,
    batch_size=((2, 4, 8, 16, 32, 64, 128, 256), 4),
)

# %% [markdown]
# ## M2: a batch of one
#
# Online learning, or a large model split across devices, can leave one example per batch. Then the
# batch mean *is* the example and the batch variance is zero, so training-mode BatchNorm returns
# $g \cdot 0 / \sqrt{0 + \epsilon} + b = b$ whatever the input was:

# %%
one = a[:1]  # a batch holding image 0 alone
mu, var = one.mean(0), one.var(0, correction=0)  # the example itself, and exactly 0
gain, bias = torch.ones(64), torch.zeros(64)  # BatchNorm's parameters at init
by_formula = gain * (one - mu) / torch.sqrt(var + 1e-5) + bias
print("BatchNorm by the formula:", by_formula[0, :6].numpy())

batch_of_one = runs.batch_of_one()
max_abs = batch_of_one.by_formula_max_abs
print(f"\nmax |output - beta| over all units: {max_abs:g}")
# each library's refusal, wrapped to the column
print(claims.wrap(f"torch.nn.BatchNorm1d: {batch_of_one.torch_error}"))
print(claims.wrap(f"lnpaper.BatchNorm: {batch_of_one.lnpaper_error}"))
alone_sd = batch_of_one.layernorm_alone_std
in_batch = batch_of_one.layernorm_in_batch_difference
print(
    f"\nLayerNorm of image 0 alone: sd over units {alone_sd:.3f}, "
    f"same as inside a batch of 64 to {in_batch:g}"
)
assert max_abs == 0.0, f"BatchNorm of a batch of one is {max_abs:.2e} away from beta"
assert "more than 1 value per channel" in batch_of_one.torch_error, (
    f"torch.nn.BatchNorm1d on a batch of one: {batch_of_one.torch_error}"
)
assert in_batch == 0.0, f"LayerNorm alone vs in a batch: {in_batch:.2e}"

# %% [markdown]
# The output carries no information about the input. PyTorch refuses the case, and so does
# `lnpaper.BatchNorm`. LayerNorm needs no batch at all.
#
# ## M3: one layer, two functions
#
# At inference there may be no batch, so BatchNorm switches to running averages of the statistics it
# saw in training. The same input now goes through a different computation:

# %%
probe = a[:8]
gaps = {}
for norm in (lnpaper.BatchNorm(64), lnpaper.LayerNorm(64)):
    name = type(norm).__name__
    with torch.no_grad():
        training_mode = norm.train()(probe)
        eval_mode = norm.eval()(probe)
    gaps[name] = (training_mode - eval_mode).abs().max().item()
    print(f"{name:9s}: max |train mode - eval mode| = {gaps[name]:.3g}")
assert gaps["LayerNorm"] == 0.0, (
    f"LayerNorm's two modes differ by {gaps['LayerNorm']:.2e}"
)
assert gaps["BatchNorm"] > 1.0, (
    f"a fresh BatchNorm's modes differ by only {gaps['BatchNorm']:.3f}"
)

# %% [markdown]
# A fresh BatchNorm's running averages are still 0 and 1, so the gap is large. Does training close
# it? The next cell trains the digits MLP of M5 with each normalizer at batch 32 for 150 steps and,
# every 5 steps, passes the same 128 test images through it in both modes (the training-mode pass
# through a copy, so the measurement does not move the running averages).

# %%
modes = runs.train_vs_inference()
bn_gap, ln_gap = modes.logit_gap["batchnorm"], modes.logit_gap["layernorm"]
bn_changed, errors = modes.changed_predictions["batchnorm"], modes.running_error
print(
    f"{'step':>5s} {'running-mean error':>19s} {'BN logit gap':>13s} "
    f"{'BN changed':>11s} {'LN logit gap':>13s}"
)
for k in range(0, len(modes.eval_steps), 5):
    print(
        f"{modes.eval_steps[k]:5d} {errors[k]:19.3f} {bn_gap[k]:13.3f} "
        f"{bn_changed[k]:11d} {ln_gap[k]:13g}"
    )
assert max(ln_gap) == 0.0, (
    f"LayerNorm's logits differ between modes by up to {max(ln_gap):.2e}"
)
assert min(bn_gap) > 0.0, f"BatchNorm's logit gap reached {min(bn_gap):g} at some step"
assert errors[-1] < 0.1 * errors[0], (
    f"running-mean error {errors[0]:.3f} at step 0, {errors[-1]:.3f} "
    f"at step {modes.eval_steps[-1]}: not down tenfold"
)
figures.train_vs_inference(modes)

# %% [markdown]
# The running mean converges within about 40 steps, then stays a few hundredths of a standard
# deviation off, since it averages over batches of a moving network. The two modes' logits never
# agree, and a prediction or two out of 128 still flips. LayerNorm's gap is exactly zero at every
# step.
#
# ## M4: recurrent nets, and statistics per time step
#
# An LSTM applies the same weights at every step to summed inputs $a_t = W_x x_t + W_h h_{t-1} + b$,
# starting from $h_0 = c_0 = 0$. So the distribution of $a_t$ goes through a transient while the
# state fills up, then (for stationary inputs) settles. Cooijmans et al. (2016) found that averaging
# BatchNorm's statistics over all time steps "severely degrades performance", so they keep separate
# statistics per step, sharing only the gain and bias; beyond the longest training length $T_{max}$
# they reuse the statistics of step $T_{max}$.
#
# `lnpaper.RecurrentBatchNorm` is that module: call it once per step with the step's index.

# %%
# and its defaults, gain_init=0.1 and momentum=0.1
rbn = lnpaper.RecurrentBatchNorm(num_features=4, max_steps=3)
gen = torch.Generator().manual_seed(0)
# training mode: step t normalizes with its batch, updates its own estimates
for _ in range(50):
    for step, scale in enumerate([0.5, 2.0, 3.0]):
        rbn(scale * torch.randn(32, 4, generator=gen), step)
print("running variance per step (rows):\n", rbn.running_var.numpy().round(2))
rbn.eval()
print(
    "inference steps 0..5 use the statistics of steps",
    [rbn.statistics_step(t) for t in range(6)],
)

# %% [markdown]
# The experiment trains a small LSTM (32 units) on streams of random digits, 12 steps long, to name
# the digit shown three steps earlier. Every step shows an independent image, so any drift of the
# statistics comes from the recurrence. Then, on 1024 test streams of 48 steps, it records the batch
# mean and variance of every gate unit at every step.

# %%
lstm = runs.lstm_statistics()
accuracy = sum(lstm.accuracy_per_step) / len(lstm.accuracy_per_step)
print(
    f"task accuracy on test streams: {accuracy:.3f} "
    f"(steps {lstm.delay}..{lstm.test_length - 1}; T_max = {lstm.train_length})"
)
print(
    f"{'step':>5s}"
    + "".join(f"{term:>12s}" for term in lstm.transient)
    + "   var_t / var_steady (a_t)"
)
for t in [0, 1, 2, 3, 4, 5, 8, 12, 24, 47]:
    print(
        f"{t:5d}"
        + "".join(f"{values[t]:12.3f}" for values in lstm.transient.values())
        + f"   {lstm.variance_ratio['a_t'][t]:.3f}"
    )
m4 = analysis.m4_summary(lstm)
first_step, steady = m4["first_step"], m4["steady"]
print("distance from the steady state (mean over units, in steady sd):")
print(
    f"  step 0 {first_step:.3f}, steady level {steady:.3f}, "
    f"within 2x of it from step {m4['settled_at']}"
)
assert first_step > 3 * steady, (
    f"step 0 is {first_step:.3f} from the steady state, steady level {steady:.3f}"
)
figures.lstm_statistics(lstm)

# %% [markdown]
# The input term $W_x x_t$ is flat, as it must be for a stationary stream; the recurrent term
# $W_h h_{t-1}$ starts at its bias with zero variance, and the whole pre-activation takes about five
# steps to settle. Now normalize $a_t$ three ways, with statistics estimated on 12-step training
# sequences and applied to the 48-step test streams, and see how close each comes to mean 0 and
# standard deviation 1 at every step:
#
# - **per step, T_max rule**: `RecurrentBatchNorm(max_steps=12)`, steps 12..47 reuse step 11;
# - **averaged over steps**: one `BatchNorm` whose statistics pool all 12 steps;
# - **per step, T_max = 2**: `RecurrentBatchNorm` trained on sequences cut inside the transient.

# %%
print(f"{'scheme':24s} {'|sd-1| step 0':>14s} {'steps 6-11':>11s} {'steps 12-47':>12s}")
for name in lstm.scale:
    first, inside, beyond = (m4[name][k] for k in ("first", "inside", "beyond"))
    print(f"{name:24s} {first:14.3f} {inside:11.3f} {beyond:12.3f}")
rule, averaged = m4["per step, T_max rule"], m4["averaged over steps"]
short = m4[f"per step, T_max = {lstm.short_max_steps}"]
# pooled statistics miss the transient
assert averaged["first"] > 3 * rule["first"], (
    f"|sd-1| at step 0: averaged {averaged['first']:.3f}, per step {rule['first']:.3f}"
)
# the T_max rule holds past the training length
assert rule["beyond"] < 1.5 * rule["inside"], (
    f"T_max rule |sd-1|: {rule['inside']:.3f} inside, {rule['beyond']:.3f} beyond"
)
# and it holds because step T_max - 1 is already in the steady state
assert short["beyond"] > 3 * rule["beyond"], (
    f"|sd-1| beyond: T_max = {lstm.short_max_steps} {short['beyond']:.3f}, "
    f"T_max rule {rule['beyond']:.3f}"
)
figures.recurrent_batchnorm(lstm)

# %% [markdown]
# Statistics pooled over time mis-scale the first steps, where the transient is, by a third.
# Per-step statistics are right at every step, and the T_max rule carries them to four times the
# training length without loss, *because* step $T_{max}$ lies in the steady state: cut training
# inside the transient ($T_{max} = 2$) and every later step is off by half a standard deviation. So
# recurrent BatchNorm needs a buffer of statistics per time step, and an assumption of stationarity
# to reach beyond it. What the paper calls "problematic" (Sec. 3.1) is the case the rule is for: "a
# test sequence longer than any of the training sequences".
#
# **M4 reproduced**: every part of the statistics holds. Cooijmans et al.'s accuracy on sequential
# MNIST (LSTM 98.9%, BN-LSTM 99.0%; permuted 90.2% vs 95.4%) is for notebook 04, which trains the
# BN-LSTM against the LSTM on the digits read pixel by pixel and permuted, as M4b.
#
# ## How to read a verdict
#
# From here on the claims are about training, which is noisy: each is decided by comparing runs over
# several seeds, with an interval and a margin fixed before the runs. Every notebook grades with the
# same few words, defined once in `lnpaper.vocabulary` and printed here.

# %%
print(vocabulary.BOX)

# %% [markdown]
# ## M5: batch size 128 against batch size 4
#
# Section 6.6 of the paper trains a 784-1000-1000-10 network on permutation-invariant MNIST with
# Adam, at batch 128 and at batch 4, and shows (a figure, no numbers) that LayerNorm is robust to
# the batch size while BatchNorm gets worse at batch 4. Here at digits scale:
#
# - **data**: the digits as 64 inputs; 1197 training and 300 test images;
# - **network**: 64-256-256-10 with ReLU (`lnpaper.models.mlp.MLP`), LayerNorm on the hidden layers
#   only, as in the paper;
# - **five networks**, which differ only in the normalizer:
#   - `layernorm`;
#   - `batchnorm` as torch computes it: in training each unit is divided by the batch's *biased*
#     spread, $\sigma_B^2 = \frac1N \sum_n (a_n - \mu_B)^2$, while the running estimate used at
#     inference tracks the *unbiased* $s_B^2 = \frac{1}{N-1} \sum_n (a_n - \mu_B)^2$. At $N = 4$ the
#     expected $\sigma_B^2$ is $\frac34$ of the population variance, so a unit's inference output is
#     $\sqrt{3/4} = 0.87$ times its training scale;
#   - `unbiased batchnorm`: the same places, dividing by $s_B$ in training too;
#   - `paper's batchnorm`: the baseline of Sec. 6.6, *every* layer normalized, the logits too, with
#     the unbiased variance (the paper uses it "for the smaller batch-size"; we use it at both);
#   - `none`: no normalizer;
# - **two evaluations of each BatchNorm net**: with its running averages, and with each layer's
#   *exact* training-set mean and variance, to ask whether the running averages are to blame;
# - **training**: Adam, learning rate $10^{-3}$, 12 epochs at both batch sizes, so the same examples
#   seen; 20 seeds per cell;
# - **test**: seed $i$ fixes a network's initial weights and example order at both batch sizes, so
#   its two runs pair: test accuracy averaged over the last 3 epochs, batch 4 minus batch 128, as a
#   paired interval over the 20 seeds.
#
# The verdicts and margins, declared before the runs: **M5**, "LayerNorm is robust", holds when
# LayerNorm's whole interval lies above -1 point (`M5_MARGIN`: 3 of the 300 test digits). **M5b**,
# "BatchNorm degrades", is graded on the paper's BatchNorm and holds when its whole interval lies
# below 0. **M5c** holds (the loss is the training's, not the running averages') when the paper's
# BatchNorm with exact statistics is still lower at batch 4, its whole interval below 0.
#
# Why the last 3 epochs: the reproduction check (`python -m lnpaper reproduce`, which recomputes
# every experiment on another numeric path) turned over two simpler measures. The last epoch's
# accuracy moves in steps of a third of a point, and its NLL spiked for three LayerNorm seeds on the
# other path. The mean over the last epochs damps both.

# %%
robustness = analysis.batch_size_robustness()
cells = analysis.m5_cells(robustness)
big, small = robustness.batch_sizes
print("after the last epoch:")
print(
    f"{'model':18s} {'batch':>5s} {'steps':>5s} {'test NLL (mean +- sd)':>22s} "
    f"{'test accuracy':>15s}"
)
for (name, batch), cell in cells.items():
    (nll, nll_sd), (accuracy, accuracy_sd) = cell["nll"], cell["accuracy"]
    steps = robustness.steps[batch]
    print(
        f"{name:18s} {batch:5d} {steps:5d} {nll:12.4f} +- {nll_sd:.4f} "
        f"{100 * accuracy:7.2f} +- {100 * accuracy_sd:.2f}%"
    )
print("\nthe same BatchNorm nets with exact statistics, after the last epoch:")
print(f"{'model':18s} {'batch':>5s} {'test NLL':>10s} {'test accuracy':>14s}")
for (name, batch), cell in cells.items():
    if "population accuracy" in cell:
        accuracy, nll = cell["population accuracy"][0], cell["population nll"][0]
        print(f"{name:18s} {batch:5d} {nll:10.4f} {100 * accuracy:13.2f}%")

test_size = len(digits.load("test")[1])
# wrong test digits per epoch, the last epochs, LayerNorm's seeds
for batch in (big, small):
    wrong = [
        [round(test_size * (1 - a)) for a in run["accuracy"][-M5_LAST_EPOCHS:]]
        for run in robustness.curves["layernorm"][batch]
    ]
    spiky = {
        seed: w for seed, w in zip(robustness.seeds, wrong, strict=True) if max(w) >= 10
    }
    print(
        f"\nLayerNorm at batch {batch}, wrong test digits in each of the last "
        f"{M5_LAST_EPOCHS} epochs: most {max(map(max, wrong))} of {test_size}"
    )
    seeds = f"{len(spiky)} (seeds {', '.join(map(str, spiky))})" if spiky else "none"
    print(f"  seeds with an epoch at 10 or more: {seeds}")

# %% [markdown]
# The paired differences. The last column pairs differently: at batch 4, the same nets with exact
# statistics minus with their running averages.

# %%
print(f"batch {small} minus batch {big}, mean over the last {M5_LAST_EPOCHS} epochs,")
print(f"paired by seed: mean [95% t interval], n = {len(robustness.seeds)}")
print(f"{'model':18s} {'test accuracy (points)':>23s} {'test NLL':>25s}")
change = {}
for name in robustness.curves:
    acc, nll = m5_differences(robustness, name), m5_differences(robustness, name, "nll")
    change[name] = acc
    print(
        f"{name:18s} {100 * acc.mean:+8.2f} "
        f"[{100 * acc.low:+.2f}, {100 * acc.high:+.2f}] "
        f"{nll.mean:+9.4f} [{nll.low:+.4f}, {nll.high:+.4f}]"
    )
# the BatchNorms again: exact statistics, and exact minus running at the small batch
print(
    f"\n{'model':18s} {'exact statistics (points)':>26s} "
    f"{'exact - running at ' + str(small):>24s}"
)
for name in M5_BATCHNORMS:
    exact = m5_differences(robustness, name, "population accuracy")
    gain = m5_population_gain(robustness, name)
    print(
        f"{name:18s} {100 * exact.mean:+9.2f} "
        f"[{100 * exact.low:+.2f}, {100 * exact.high:+.2f}] "
        f"{100 * gain.mean:+8.2f} [{100 * gain.low:+.2f}, {100 * gain.high:+.2f}]"
    )

ln, paper = change["layernorm"], change[M5_PAPER_BN]
paper_exact = m5_differences(robustness, M5_PAPER_BN, "population accuracy")
ln_robust = stats.no_worse(ln, M5_MARGIN, "higher")
bn_degrades = stats.better(paper, "lower")
loss_stays = stats.better(paper_exact, "lower")
print(
    f"\nM5, LayerNorm no lower at batch {small} by more than {100 * M5_MARGIN:g} "
    f"point: {ln_robust}"
)
print(f"M5b, the paper's BatchNorm lower at batch {small}: {bn_degrades}")
print(f"M5c, still lower with exact statistics: {loss_stays}")
stats.expect(stats.HOLDS, stats.no_worse, ln, M5_MARGIN, "higher")
stats.expect(stats.HOLDS, stats.better, paper, "lower")
stats.expect(stats.HOLDS, stats.better, paper_exact, "lower")
figures.batch_size(robustness)

# %% [markdown]
# **M5 on the first 20 seeds: no worse, narrowly.** LayerNorm's test accuracy at batch 4 is +0.17
# [-0.34, +0.68] points from batch 128's: the interval clears the -1 point margin, but only by 0.66.
# Single LayerNorm seeds spike for an epoch at batch 4 and recover (printed under the table), which
# widens the interval. No normalizer at all *gains* points at batch 4 (33 times more Adam steps for
# the same examples): LayerNorm is robust in that it loses nothing, not in that it gains what the
# plain network gains.
#
# Two checks, not graded. The 3-epoch window was chosen on these seeds, so the first line shows
# other windows. And with such heavy tails a t interval leans on assumptions, so the second counts
# the seeds above the margin, against a fair coin (an exact sign test).

# %%
big, small = robustness.batch_sizes
ln_runs = robustness.curves["layernorm"]
print(f"LayerNorm, batch {small} minus {big}, accuracy over the last k epochs (pp):")
windows = []
for k in (1, 2, 3, 4, 6):
    late_k = {
        b: [sum(run["accuracy"][-k:]) / k for run in ln_runs[b]] for b in (small, big)
    }
    d = stats.paired_difference(late_k[small], late_k[big])
    windows.append(
        f"k={k} {100 * d.mean:+.2f} [{100 * d.low:+.2f}, {100 * d.high:+.2f}]"
    )
print("   " + "; ".join(windows[:3]))
print("   " + "; ".join(windows[3:]))
late = {
    b: [sum(r["accuracy"][-M5_LAST_EPOCHS:]) / M5_LAST_EPOCHS for r in ln_runs[b]]
    for b in (small, big)
}
above = sum(a - b > -M5_MARGIN for a, b in zip(late[small], late[big], strict=True))
n = len(late[small])
p_value = sum(math.comb(n, j) for j in range(above, n + 1)) / 2**n
print(f"sign test: {above} of {n} seeds above -1 pp, one-sided p = {p_value:.4f}")

# %% [markdown]
# The lower end stays above -1 point over every window, down to -0.50 over the last six epochs, so
# the verdict does not hang on the window. By seeds, 17 of 20 lie above the margin, which a coin
# would give with probability 0.001. The spikes make the margin tight; they do not make LayerNorm's
# typical batch-4 run worse.
#
# Still, the window was picked after a look. So M5 is graded on 20 fresh seeds, 20-39, run after the
# statistic and margin were fixed, with the comparison the paper's figure draws declared beside it
# (**M5e**): seed by seed, LayerNorm's change from batch 128 to 4 minus a BatchNorm's, against the
# paper's BatchNorm and against BatchNorm in LayerNorm's places, each interval above 0.

# %%
confirmation = analysis.batch_size_confirmation()
m5, m5e = claims.BY_ID["M5"].evaluate(), claims.BY_ID["M5e"].evaluate()
print(claims.evidence(m5))
print()
print(claims.evidence(m5e))
claims.expect(m5, claims.REPRODUCED)
claims.expect(m5e, claims.REPRODUCED)
first = stats.paired_difference(
    m5_differences(robustness, "layernorm").values,
    m5_differences(robustness, "batchnorm").values,
)
print(f"\nseeds 0-19, LN's change minus BN in LN's places' (pp, not graded): "
      f"{100 * first.mean:+.2f} [{100 * first.low:+.2f}, {100 * first.high:+.2f}]")

# %% [markdown]
# **M5 and M5e: reproduced, on seeds that played no part in the design.** On the fresh seeds
# LayerNorm moves +0.01 [-0.32, +0.35] points from batch 128 to 4, inside the 1-point margin, and
# loses 2.01 points less than the paper's BatchNorm and 0.87 less than BatchNorm in its own places.
# Both verdicts are borderline: another CPU could move an interval edge across. So LayerNorm's
# robustness is a contrast with BatchNorm, not only a null result, and most of the paper's contrast
# comes from its BatchNorm normalizing the logits too: against BatchNorm in the same places,
# LayerNorm's edge is under a point.
#
# **M5b, BatchNorm degrades: reproduced.** The paper's BatchNorm loses -2.23 [-2.63, -1.82] points
# at batch 4. BatchNorm in LayerNorm's places loses under a third of that, torch's and the unbiased
# one alike, so the built-in 1.15x scale gap between training and inference costs no accuracy. The
# paper's BatchNorm has the highest NLL at both batch sizes: normalized logits with a gain that
# starts at 1 cannot become confident in 12 epochs.
#
# **M5c, the loss is not the running averages: reproduced.** Evaluated with each layer's exact
# training-set statistics, the same nets still lose at batch 4, the paper's BatchNorm -1.31 [-1.57,
# -1.04] points. The running averages cost something too (the last column), most for the paper's
# BatchNorm, whose logits' running averages are the noisiest. So some three fifths of the paper's
# BatchNorm's loss, and most of the like-for-like BatchNorm's, is in the weights themselves: trained
# on statistics of four examples, they are worse however they are evaluated.
#
# **M5d, LayerNorm converges faster: reproduced.** Section 6.6 also says layer normalization
# "exhibits a faster training convergence" than batch normalization applied to all layers. The same
# runs answer it, over the first quarter of training (epochs 1-3):

# %%
m5d = claims.BY_ID["M5d"].evaluate()
print(claims.evidence(m5d))
claims.expect(m5d, claims.REPRODUCED)

# %% [markdown]
# LayerNorm's early test NLL is a full nat below the paper's BatchNorm's at batch 128, where an
# epoch is only 9 Adam steps, and 0.28 nats below at batch 4. Part of that gap is the paper's
# normalized logits, so the line also gives BatchNorm on the hidden layers only: LayerNorm is ahead
# of it too, by 0.71 nats at batch 128 and 0.05 at batch 4. The early speed is LayerNorm's own, and
# largest where the steps are few.
#
# Caveats. In the figure the BatchNorm dots at the two batch sizes overlap; only pairing each seed
# with itself separates them. At batch 128 the networks are still improving at the last epoch, so
# the batch-4 runs, with 33 times more steps, get a head start in optimization: that favours
# LayerNorm's half of the claim and works against BatchNorm's, which degrades anyway. An equal-steps
# arm (batch 128 for the 3,588 steps batch 4 takes) would separate the step count from the batch
# size; it is not run here. And the paper's figure is on MNIST with 1000-unit layers; this is its
# direction at 1/12 of the input size, not its numbers.
#
# **M2b and M2c, online learning.** Section 3 says LayerNorm "can be used in the pure online regime
# with batch size 1": that it works there, not that it works as well as with batches. So M2b grades
# that the same network, rate and 20 seeds, trained one example per Adam step for 12 epochs, trains
# (accuracy above chance). Whether it is also *no worse* than at batch 128 is our own question, M2c,
# graded like M5 and counted apart from the paper's claims.

# %%
m2b = claims.BY_ID["M2b"].evaluate()
print(claims.evidence(m2b))
claims.expect(m2b, claims.REPRODUCED)
m2c = claims.BY_ID["M2c"].evaluate()
print(claims.evidence(m2c))
claims.expect(m2c, claims.INCONCLUSIVE)

# %% [markdown]
# **M2b reproduced**: LayerNorm trains at batch 1, to 97.0% test accuracy; nothing breaks. **M2c
# inconclusive**: it loses 1.6 points against batch 128, an interval from -2.4 to -0.9 that
# straddles the 1-point margin, and borderline, a numeric path away from failing; without the 12th
# of its 20 seeds it does fail. The plain network, at the same rate and steps, *gains* 0.9 points at
# batch 1. So the loss is LayerNorm's own at this rate, with 14,364 steps at $10^{-3}$ against batch
# 128's 108 and no retuning. A smaller rate for the online runs, not tested here, might close the
# gap. (BatchNorm has no arm here: a batch of one leaves it nothing to learn from, M2.)

# %%
# Try it: does LayerNorm stay level at batch 2? Two seeds, four epochs, computed here
# live (the record does not hold it): about 3 s on one core. Uncomment and run.
# mine = runs.batch_size_runs(model="layernorm", batch_size=2, epochs=4, seeds=(0, 1))
# print("test accuracy per seed:", [round(a, 3) for a in mine.final["accuracy"]])

# %% [markdown]
# ## Claims checked here

# %%
checked = ["M1", "M2", "M2b", "M2c", "M3", "M4", "M5", "M5e", "M5b", "M5c", "M5d"]
print(claims.checked_here(checked))
