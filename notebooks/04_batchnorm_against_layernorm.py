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
# # 04 · BatchNorm against LayerNorm at eight times the length
#
# *About 15 minutes to read. From the record it runs in seconds; live, 5 min on one core.*
#
# *Layer Normalization* (Ba, Kiros, Hinton 2016), Sections 6 and 7, against *Recurrent Batch
# Normalization* (Cooijmans et al. 2016), Sections 3-5.
#
# Notebook 03 read the 8 x 8 digits row by row: 8 steps, too short for the questions recurrent
# normalization was invented for. This notebook asks them at eight times the length, on the digits
# read one pixel at a time ($T = 64$), in reading order and permuted, with the same models and the
# same learning-rate grid:
#
# - Cooijmans et al.'s own claims for the BN-LSTM: their table's direction (**M4b**), what a
#   $T_{max}$ inside the sequence costs (**M4c**), BatchNorm's gains started at 0.1 (**M4d**), and
#   what the same choice does to LayerNorm (**M4e**);
# - the LN-LSTM against the BN-LSTM where training ends (**R3c**), and the LN-GRU against the GRU
#   (**R3g**);
# - minibatches of 4, the paper's closing claim (**R6**);
# - a coda where the paper says BatchNorm wins: a small convolutional net (**R5**, **R5b**).
#
# **Scaled down.** Sequential MNIST reads a 28 x 28 digit in 784 steps; here an 8 x 8 digit takes
# 64. The nets have 16 units and train for 150 steps of batch 16 over 8 seeds, so they are far from
# the 99% of Cooijmans et al.: what carries over is the direction of each claim, not its numbers.
#
# A live run (`LNPAPER_RECORD=off`) trains several hundred small networks again.
#
# The verdicts use the words notebook 01 defines once, in its box *How to read a verdict*:
# what "trains", "negligible", "borderline" and "not exercised" mean.

# %%
# %matplotlib inline
import torch

import lnpaper
from lnpaper import claims, stats
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import training_summary
from lnpaper.chapters.ch04_batchnorm_against_layernorm import analysis, figures, runs
from lnpaper.models.recurrent import LayerNormLSTMCell
from lnpaper.spread import mean_sd_text

lnpaper.setup()

# %% [markdown]
# ## Pixel by pixel (T = 64)
#
# Cooijmans et al.'s benchmark is sequential MNIST, a 28 x 28 digit read one pixel at
# a time (784 steps), and its permuted version, whose fixed random pixel order spreads the strokes
# over the whole sequence and so demands long-range memory. The same at 8 x 8 is the digits read
# pixel by pixel, $T = 64$ steps of one pixel, in reading order and in one fixed permuted order
# (`lnpaper.data.digits`, `form="pixels"`).
#
# Five models, every one on the same grid of three learning rates, 8 seeds: the LSTM, the LN-LSTM,
# the BN-LSTM with gains started at 0.1 (Cooijmans et al.) and at 1.0, and the LN-GRU of the
# supplement's Eq. 26-28 (the cell of the order-embedding model, trained here for the first time).
# A model's 48 runs (2 orders x 3 rates x 8 seeds) are one batched model. At $T = 64$ a step costs
# eight times a row-by-row step, so the nets are smaller and the curves shorter: 16 units, batches
# of 16, 150 steps (2 epochs), test NLL every 30 steps. The numbers are far from Cooijmans et al.'s
# 99%: after 150 steps these nets are still learning. What is checked is the direction of each
# claim early in training, each model at its own best rate per task (chosen on validation):
#
# - **M4b**, Cooijmans et al.'s table, direction only: the BN-LSTM at least as accurate as the LSTM
#   (test accuracy over the last quarter no more than 1 point below, the R4 margin) in both orders,
#   and its gain over the LSTM larger on the permuted task (the difference of the per-seed gains
#   above 0);
# - **M4c**, $T_{max}$ inside the sequence: the same trained BN-LSTM tested with the statistics of
#   steps 8-63 all taken from step 7, against its own 64 per-step statistics: test NLL higher.
#   A mismatch between training and test by design, it measures how far the later steps'
#   statistics lie from step 7's;
# - **M4d**, the gain init: BN-LSTM gains from 0.1 below 1.0 in test NLL over the run;
# - **R3c**, LN-LSTM against BN-LSTM as in R3b's second half: lower test NLL over the last quarter
#   (the first quarter holds one evaluation here, step 30; it is shown, not graded, see below).
#
# M4b and R3c are claims about where training ends, and these nets are far from ending. So they are
# graded only if every model they compare averages at least 80% test accuracy over the last quarter
# in both orders (`ENDING_ACCURACY`, declared before it was computed; the row-by-row models reach
# 94-96%); below it their verdict is `inconclusive` at this budget, and their tests are still shown.
#
# One more thing is shown, not graded: the test sequences followed by 16 blank pixels, longer than
# any sequence seen in training.
#
# First, what one pixel per step does to Eq. 20. With a single input, $W_x x_t$ is the column
# $w$ of $W_x$ times the pixel value, so LayerNorm over its $4H$ units returns
# $x_t (w - \bar w) / \sqrt{x_t^2 \sigma_w^2 + \epsilon}$: the same vector for every inked pixel
# (up to $\epsilon$), and exactly 0 for a blank one. The LN-LSTM's input term says only whether a
# pixel is inked; how dark it is survives only through $\epsilon$, and the one in the recurrent term.

# %%
torch.manual_seed(0)
cell = LayerNormLSTMCell(1, 16)
with torch.no_grad():
    pixel_values = torch.tensor([[1 / 16], [0.25], [1.0], [0.0]])
    normalized = cell.norm_ih(pixel_values @ cell.weight_ih.T)
scale = normalized[2].abs().max().item()
for value, row in zip(("1/16", "1/4"), normalized[:2], strict=True):
    change = (row - normalized[2]).abs().max().item() / scale
    print(
        f"LN(W_x x_t) at pixel value {value} vs 1: differs by {change:.1%} of its size"
    )
print(f"at a blank pixel: {normalized[3].abs().max().item():g}")
assert (
    normalized[3].abs().max().item() == 0.0
    and (normalized[1] - normalized[2]).abs().max() < 0.01 * scale
)

# %%
pixels = analysis.sequential_digits()
tasks = {0: "pixel by pixel", 1: "permuted"}
by_task = {order: training_summary(pixels, order) for order in tasks}
print(
    f"{'model':18s} {'task':15s} {'best lr':>8s} {'test NLL, 30-150':>17s} "
    f"{'final accuracy':>15s} {'+16 blank':>10s}"
)
for model in pixels.runs:
    for order, task in tasks.items():
        row = by_task[order][model]
        accuracy = mean_sd_text([100 * a for a in row["final_accuracy"]])
        longer = sum(row["longer_accuracy"]) / len(row["longer_accuracy"])
        print(
            f"{model:18s} {task:15s} {row['lr']:8g} {mean_sd_text(row['curve']):>17s} "
            f"{accuracy + '%':>15s} {100 * longer:9.1f}%"
        )
print("\nEach at its own best rate, paired by seed, test NLL over the run")
for order, task in tasks.items():
    s = by_task[order]
    print(f"   {task}")
    for a, b in (("LN-LSTM", "LSTM"), ("LN-GRU", "LN-LSTM"), ("LN-GRU", "LSTM"),
                 ("LN-GRU", "BN-LSTM")):  # fmt: skip
        difference = stats.paired_difference(s[a]["curve"], s[b]["curve"])
        print(f"      {a + ' - ' + b:18s} {difference.text()}")
findings = {}
for claim_id in ("M4b", "M4c", "M4d", "R3c"):
    findings[claim_id] = claims.BY_ID[claim_id].evaluate()
    print(f"\n{claim_id}: {findings[claim_id].verdict}")
    print(claims.wrap(findings[claim_id].ours, "   "))
expected = {
    "M4b": claims.INCONCLUSIVE,
    "M4c": claims.REPRODUCED,
    "M4d": claims.REPRODUCED,
    "R3c": claims.INCONCLUSIVE,
}
for claim_id, verdict in expected.items():
    claims.expect(findings[claim_id], verdict)
figures.sequential_digits(pixels)

# %% [markdown]
# Every model but one picks the largest rate of the grid, 3e-2, in both orders (the LN-LSTM picks
# 1e-2 permuted): at $T = 64$ and 150 steps these nets want to learn faster than the grid allows,
# so a higher rate might do better still for most of them; the comparisons are at the same
# footing, not at a proven optimum. After 150 steps (two epochs) the accuracies are 27-52%, far
# from converged.
#
# - **M4b** is `inconclusive` at this budget: the LSTM and the BN-LSTM average 32-51% over steps
#   120-150. Its tests go Cooijmans et al.'s way (they would give `reproduced`): permuted, the
#   BN-LSTM is far ahead of the LSTM (50.9% against 32.0%, +18.9 [+13.2, +24.6] points); in reading
#   order it leads by +5.5 [+2.0, +9.1] points, an interval clear of the 1-point margin; the gain
#   is larger permuted by +13.4 [+5.0, +21.8] points, the direction of their table.
# - **M4c** is `reproduced`, and by far the largest effect here: cutting the BN-LSTM's statistics at
#   step 8 (steps 8-63 normalized with step 7's) raises its test NLL by +2.25 [+2.01, +2.48] nats
#   pixel by pixel and +1.05 [+0.77, +1.32] permuted, and costs 35 and 33 points of accuracy. Eight
#   pixels of an 8 x 8 digit are its top row, mostly blank (at pixel 7 the input's variance over
#   the training images is 0.004, against 0.077 on average over pixels 8-63): the statistics of
#   that stretch are not those of the strokes that follow. What M4c shows is that this input is
#   not stationary along the sequence, not a recurrent transient: on the stationary stream above
#   the transient was over in two steps, and averaging statistics over time cost 0.005 nats
#   (M4f). Per-step statistics are not optional here because of the data. One more effect of
#   blank pixels: pixel 0 is blank in every training image (so are pixels 32 and 39), so at those
#   steps BatchNorm's batch variance of $W_x x_t$ is 0 and only $\epsilon$ keeps the division
#   finite. Cooijmans et al. met the same on MNIST and added noise to the initial hidden state;
#   this BN-LSTM does not, and relies on $\epsilon = 10^{-5}$ alone.
# - **M4d** is `reproduced`: at $T = 64$ the BN-LSTM with gains from 0.1 is below the one from 1.0
#   in test NLL over the run (-0.196 [-0.347, -0.044] pixel by pixel, -0.406 [-0.480, -0.332]
#   permuted), the reverse of $T = 8$ above, where 1.0 led early. Cooijmans et al.'s choice pays off
#   where the sequence is long.
# - **R3c** is `inconclusive` at this budget: the LN-LSTM and the BN-LSTM average 24-51% over
#   steps 120-150. Its test goes against the paper (it would give `not reproduced`): late, the
#   BN-LSTM is lower in both orders (LN minus BN +0.27 [+0.14, +0.40] and +0.66 [+0.51, +0.81]).
#   That is evidence about two epochs of training, not about where these models converge; and one
#   pixel per step handicaps the LN-LSTM's input term (above), while the BN-LSTM's per-step
#   statistics normalize each pixel position by its own mean and variance, a positional signal LN
#   never gets. Early, at step 30, the LN-LSTM is ahead in reading order (-0.22 [-0.41, -0.02]) and
#   the two are even permuted (+0.03 [-0.05, +0.11]). That early half is shown, not graded: one
#   evaluation over 8 seeds sits so near its boundary that another machine's kernels can carry its
#   reading-order part across it (to -0.19, an interval that reaches past 0).
#
# The LN-LSTM is not ahead of the plain LSTM either (shown, not graded: LN minus LSTM over the run
# +0.058 [-0.071, +0.188] and +0.076 [-0.063, +0.216]), and it is the weakest model permuted. The
# input term above is one suspect: with one pixel per step, LN$(W_x x_t)$ keeps whether a pixel is
# inked, not how dark. The LN-GRU (Eq. 26-28), whose candidate state normalizes $W x_t$ and $U h$
# separately, is ahead of the LSTM and the LN-LSTM in both orders (over the run, LN-GRU minus
# LN-LSTM -0.292 [-0.445, -0.138] and -0.381 [-0.565, -0.197]; minus the LSTM -0.233 [-0.317,
# -0.150] and -0.305 [-0.468, -0.142]), and ahead of the BN-LSTM in reading order but not permuted
# (LN-GRU minus BN-LSTM -0.138 [-0.231, -0.045] and +0.108 [-0.004, +0.219]). The next section runs
# the plain GRU beside it. Two checks would test the input-term suspect directly and are not run
# here: an LN-LSTM without LayerNorm on $W_x x_t$, or fed two or more pixels per step; and the DRAW
# variant with LayerNorm on $c_t$ only (supplement Eq. 29-31). Nor is the gradient's size through
# time, $\lVert \partial L / \partial h_t \rVert$ against $t$, measured in the trained nets, which
# would test Sec. 3.1's premise beyond R2's initialization.
#
# Test sequences 16 blank pixels longer than training: every model falls to 7-13% accuracy, chance
# for ten classes. The readout was trained on $h_{64}$ alone, and 16 more steps of a recurrence that
# never had to hold its answer wash it out, with or without a normalizer; the BN-LSTM's $T_{max}$
# rule (steps 64-79 use step 63's statistics) does no worse than LayerNorm's statelessness. Longer
# test sequences test the task as much as the normalizer: notebook 01's stream task and the section
# "Longer than training" above, where the answer is asked at every step, are the fair version.
#
# ### LayerNorm's gains at $T = 64$ (M4e)
#
# The paper's conclusion on initialization is a contrast: layer normalization "is not sensitive
# to the initial scale in the same way that recurrent BN is". M4d shows the BN half here; the
# LN half needs the LN-LSTM with gains from 0.1 too, on the same task, grid, steps and seeds
# (`gain_pixels`, which reuses this section's other three runs). Declared before that run: per
# seed, what 0.1 instead of 1.0 buys the LN-LSTM in test NLL over the run, minus what it buys
# the BN-LSTM, must be above 0 in both orders.

# %%
m4e = claims.BY_ID["M4e"].evaluate()
print(claims.wrap(m4e.ours))
claims.expect(m4e, claims.PARTLY)

# %% [markdown]
# It holds permuted; in reading order it is inconclusive by a hair, so M4e is `partly`. Gains from
# 0.1 buy the BN-LSTM 0.20 and 0.41 nats over the run and the LN-LSTM nothing (+0.02 and +0.05,
# intervals across 0), so the difference between the two cells' gain effects is +0.21 [-0.01, +0.43]
# in reading order, an interval that just crosses 0, and +0.46 [+0.29, +0.62] permuted. The
# reading-order part sits within machine noise of its boundary (the ledger's 'Borderline' note
# below): another machine's kernels can carry it across, and M4e would then be `reproduced`.
# The difference is not one of scale: LayerNorm's output is $g$ times a standardized vector, so
# at $g = 0.1$ its gates' inputs sit at 0.1 just as BatchNorm's do with $\gamma = 0.1$, and at 1.0
# both saturate alike. What separates the cells lies elsewhere, in statistics per example rather
# than per batch, in the steps whose one pixel has no variance across the batch, and in what
# LayerNorm on a one-pixel input term keeps (above); these runs do not tell which. The caveat of
# this section holds here too: two epochs, 21-51% accuracy, so this is about how the gains shape
# early training at $T = 64$, not where the models end.
#
# ### The GRU at $T = 64$ (R3g)
#
# The LN-GRU leads the pixel-by-pixel table above, but no plain GRU stood beside it. Here one does:
# the GRU on the same task, grid, steps, seeds and minibatches (`gru_pixels`, which reuses the
# LN-GRU's runs), graded as R3f was at $T = 8$: at each shared rate, in both pixel orders, test NLL
# over the first quarter of training below the GRU's. Declared before the GRU's run. At $T = 64$
# the first quarter holds one evaluation, step 30, the one that made R3c's early half unsteady, so
# the verdict also needs the intervals to lie clear of 0.

# %%
r3g = claims.BY_ID["R3g"].evaluate()
print(f"R3g: {r3g.verdict}")
print(claims.wrap(r3g.ours, indent="    "))
claims.expect(r3g, claims.REPRODUCED)
grus = analysis.gru_pixels()
print("\nEach at its own best rate, LN-GRU minus GRU, paired by seed")
for order, task in tasks.items():
    s = training_summary(grus, order)
    run = stats.paired_difference(s["LN-GRU"]["curve"], s["GRU"]["curve"])
    late = stats.paired_difference(s["LN-GRU"]["late"], s["GRU"]["late"])
    print(f"   {task}")
    print(f"      test NLL over the run        {run.text()}")
    print(f"      test NLL over steps 120-150  {late.text()}")

# %% [markdown]
# At a shared rate the LN-GRU is ahead at step 30 in all six cells, by 0.05 to 0.20 nats, every
# interval below 0: R3g is `reproduced`, the paper's speed-up at eight times the length. With 8
# seeds and one evaluation, each interval still lies within machine noise of 0 (the ledger's
# robustness band), so the ledger marks it borderline.
# It lasts in reading order only. Each at its best rate (3e-2 for both), the LN-GRU's lead over the
# whole run is -0.154 [-0.234, -0.073] nats in reading order, while permuted the plain GRU is ahead
# (+0.103 [+0.005, +0.201]), and over the last quarter the plain GRU stays ahead permuted (+0.24
# [+0.11, +0.37], not graded). The plain GRU is also no weak baseline: permuted, it is 0.41 nats
# below the LSTM over the run.
#
# ### Small minibatches (R6)
#
# The paper's conclusion (Sec. 7) reads: "recurrent neural networks benefit the most from the
# proposed method especially for long sequences and small mini-batches". BatchNorm's statistics
# come from the minibatch, so they get noisier as it shrinks, and LayerNorm's do not change at
# all. So the $T = 64$ study once more in reading order at minibatches of 4 instead of 16
# (`small_batch_pixels`): the LSTM, LN-LSTM and BN-LSTM, the same grid, seeds, initial weights and
# number of steps (150). Equal steps, not equal epochs: each model makes as many updates as at
# batch 16, from noisier gradients, and sees a quarter of the examples. Declared before the run,
# test NLL over the run, each model at its own best rate at each batch size, paired by seed:
# **R6** holds if at batch 4 the LN-LSTM is below the BN-LSTM, and if that difference is below the
# same difference at batch 16 (LayerNorm's standing against BatchNorm improves as the batch
# shrinks).

# %%
small = analysis.small_batch_pixels()
by_size = {4: training_summary(small), 16: by_task[0]}
header = f"{'model':8s} {'batch':>5s} {'test NLL, 30-150':>17s}"
print(f"{header} {'accuracy, 120-150':>18s}")
for model in analysis.SMALL_BATCH_MODELS:
    for size, s in by_size.items():
        accuracy = mean_sd_text([100 * a for a in s[model]["late_accuracy"]])
        print(
            f"{model:8s} {size:5d} {mean_sd_text(s[model]['curve']):>17s} "
            f"{accuracy + '%':>18s}"
        )
r6 = claims.BY_ID["R6"].evaluate()
print(f"\nR6: {r6.verdict}")
print(claims.wrap(r6.ours, indent="    "))
claims.expect(r6, claims.PARTLY)

# %% [markdown]
# Half of it holds. Going from 16 to 4 examples costs the BN-LSTM 0.37 nats over the run and the
# LN-LSTM 0.22, so the difference LN minus BN moves from +0.15 [+0.06, +0.24] at batch 16 (BN
# ahead) to +0.000 [-0.101, +0.102] at batch 4, a change of -0.15 [-0.29, -0.01]: the direction
# the paper describes. But at batch 4 the LN-LSTM is only level with the BN-LSTM, not ahead, so R6
# is `partly`. The caveat is the budget: 150 steps of 4 examples is 600 digits, half an epoch, and
# every model is barely past chance (21-25% over the last quarter; 2 runs of 8 per model below
# 20% at the end). The plain LSTM loses about as much as the BN-LSTM (0.35 nats), so part of
# BatchNorm's loss is the noisier gradient every model gets, and what is LayerNorm's own is that
# it loses less. An equal-epochs version (600 steps at batch 4) would ask the paper's question at a
# real level of training, at four times the cost; it is not run here. And the LN-LSTM here is
# handicapped by the input: with one pixel per step, LayerNorm on the input term keeps whether a
# pixel is inked but not how dark (above), a setting the paper never ran. The paper's own
# small-batch run (handwriting, batch 8) compared LayerNorm with a plain LSTM, not with
# BatchNorm.
#
# ## Coda: where BatchNorm wins (R5, R5b)
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
# layer, $C \times$ height $\times$ width), 10 seeds each, all at one rate (Adam 3e-3): unlike the
# recurrent models above there is no grid here, so whatever R5b finds is a single-rate result. Both
# normalizers get a gain and a bias per
# channel, $2C$ parameters each: a gain and bias per *unit* would give LayerNorm $2CHW$, and a bias
# per position could absorb the very border effect the paper blames. The 8 x 8 digits fill their box, unlike
# MNIST's, whose 20 x 20 digits sit in a blank 28 x 28 frame; so the runs are repeated with each
# digit framed by 2 blank pixels (12 x 12, MNIST's proportion), which puts the rarely-on border
# units back. The claim has two parts, graded apart, each in test NLL, paired by seed, at each image
# size: LN below no norm (**R5**), and BN below LN (**R5b**; the whole 95% interval of the
# difference below 0). "Units on" counts only units that respond to the image: a unit that sees
# nothing but the blank frame computes ReLU(bias), the same for every digit, and tells nothing
# about how often border units fire.

# %%
cnn = runs.cnn_coda()
for margin, by_norm in analysis.cnn_summary(cnn).items():
    side = 8 + 2 * margin
    border, interior = cnn.border_active[margin], cnn.interior_active[margin]
    print(
        f"{side}x{side} images; no-norm CNN, "
        "responding units on at the border vs inside:"
    )
    print(
        f"   conv 1 {border[0]:.2f} vs {interior[0]:.2f}, "
        f"conv 2 {border[1]:.2f} vs {interior[1]:.2f}"
    )
    for norm, cells in by_norm.items():
        (nll, nll_sd), (accuracy, accuracy_sd) = (
            cells["test_loss"],
            cells["test_accuracy"],
        )
        print(
            f"   {norm:10s} test NLL {nll:.4f} +- {nll_sd:.4f}   test accuracy "
            f"{100 * accuracy:.1f} +- {100 * accuracy_sd:.1f}%"
        )
    loss = cnn.test_loss[margin]
    ln_none = stats.paired_difference(loss["layernorm"], loss["none"])
    bn_ln = stats.paired_difference(loss["batchnorm"], loss["layernorm"])
    print(f"   test NLL, LN - none {ln_none.text()}")
    print(f"      LN lower: {stats.better(ln_none, 'lower')}")
    print(f"   test NLL, BN - LN   {bn_ln.text()}")
    print(f"      BN lower: {stats.better(bn_ln, 'lower')}")
r5, r5b = claims.BY_ID["R5"].evaluate(), claims.BY_ID["R5b"].evaluate()
print(f"R5, LN below no norm at both sizes: {r5.verdict}")
print(f"R5b, BN below LN at both sizes: {r5b.verdict}")
claims.expect(r5, claims.REPRODUCED)
claims.expect(r5b, claims.INCONCLUSIVE)
figures.cnn_coda(cnn)

# %% [markdown]
# The first half of the claim reproduces (**R5**): both normalizers cut the test NLL of the plain
# CNN to about a third (LN minus none: -0.068 [-0.089, -0.047] on the bare digits, -0.083 [-0.111,
# -0.056] in the blank frame) and train faster from the first steps. The second half does not show at
# this scale (**R5b**, `inconclusive`): BN minus LN is +0.001 [-0.003, +0.004] on the bare digits and
# -0.000 [-0.006, +0.005] in the frame, intervals that straddle 0, so 10 seeds cannot tell the two
# apart even with LayerNorm's affine cut to BatchNorm's $2C$ parameters. Nor does the frame recreate
# the paper's premise as strongly as a raw count suggests: counting every unit would mix in units
# that see only blank pixels and output a constant, so the count keeps units that respond to the
# digit. Among those, border units are on 58% of the time against 69% inside, counted in one seed
# of the no-norm net. The paper's
# "because" is therefore not tested here: R5b grades only whether BN beats LN. Two 3 x 3 layers over
# a 12 x 12 image are a long way from the paper's unspecified network; the paper called its result
# preliminary. Later practice did not settle on the paper's LayerNorm over all of C x H x W: CNNs
# kept BatchNorm, or, at small batches, GroupNorm (statistics over groups of channels, per example;
# one channel per group is InstanceNorm), and ConvNeXt-style networks normalize each position over
# its channels, a LayerNorm over C alone. Sequence models took LayerNorm.
#
# ## Claims checked here

# %%
pixels_ids = ["M4b", "M4c", "M4d", "R3c", "M4e", "R3g", "R6"]
print(claims.checked_here([*pixels_ids, "R5", "R5b"]))
