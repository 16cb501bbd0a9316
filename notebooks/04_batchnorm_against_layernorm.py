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
# *About 15 minutes to read. From the record it runs in seconds; live, 6 min on one core.*
#
# *Layer Normalization* (Ba, Kiros, Hinton 2016), Sections 6 and 7, against *Recurrent Batch
# Normalization* (Cooijmans et al. 2016), Sections 3-5.
#
# Notebook 03 read the 8 x 8 digits row by row, in 8 steps: too short for the questions recurrent
# normalization was invented for. This notebook asks them at eight times the length, reading the
# digits one pixel at a time ($T = 64$), in order and permuted:
#
# - Cooijmans et al.'s own claims for the BN-LSTM: their table's direction (**M4b**), what a $T_{max}$
#   inside the sequence costs (**M4c**), BatchNorm's gains started at 0.1 (**M4d**), what the same
#   choice does to LayerNorm (**M4e**), and statistics averaged over time (**M4h**);
# - the LN-LSTM against the BN-LSTM where training ends (**R3c**), a control without LayerNorm on
#   its one-pixel input term (**R3h**), and the LN-GRU against the GRU (**R3g**);
# - minibatches of 4, the paper's closing claim (**R6**);
# - a coda where the paper says BatchNorm wins: a small convolutional net (**R5**, **R5b**).
#
# **Scaled down.** Sequential MNIST reads a 28 x 28 digit in 784 steps; here an 8 x 8 digit takes 64.
# The nets are small and briefly trained, far from the 99% of Cooijmans et al.: what carries over is
# the direction of each claim, not its numbers.
#
# Notebook 01's box *How to read a verdict* defines the verdict words.

# %%
# %matplotlib inline

import torch

import lnpaper
from lnpaper import claims, stats
from lnpaper.chapters.ch03_layernorm_in_rnns.analysis import training_summary
from lnpaper.chapters.ch04_batchnorm_against_layernorm import analysis, figures, runs
from lnpaper.models.recurrent import LayerNormLSTMCell, RawInputLayerNormLSTMCell
from lnpaper.source import code
from lnpaper.spread import mean_sd_text

lnpaper.setup()

# %% [markdown]
# ## Pixel by pixel (T = 64)
#
# The idea: feed each digit to the recurrent net one pixel per step, so that it must carry what it
# sees across 64 steps, and ask which normalizer helps. This is a small copy of Cooijmans et al.'s
# sequential MNIST and of its permuted version, whose fixed random pixel order spreads the strokes
# over the whole sequence and so demands long-range memory (`lnpaper.data.digits`, `form="pixels"`).
#
# Five models share one grid of three learning rates and 8 seeds: the LSTM, the LN-LSTM, the BN-LSTM
# with gains started at 0.1 (Cooijmans et al.) and at 1.0, and the LN-GRU of the supplement's Eq.
# 26-28. The nets have 16 units and train for 150 steps of batch 16 (2 epochs), with test NLL every 30
# steps; they are still learning at the end. Each model is compared at its own best rate per task,
# chosen on validation:
#
# - **M4b**, Cooijmans et al.'s table, direction only: the BN-LSTM no more than 1 point below the LSTM
#   in test accuracy over the last quarter, in both orders, and its gain larger on the permuted task;
# - **M4c**, $T_{max}$ inside the sequence: the same trained BN-LSTM has a higher test NLL when the
#   statistics of steps 8-63 are all taken from step 7 than with its own 64 per-step statistics. The
#   mismatch is by design: it measures how far the later steps' statistics lie from step 7's;
# - **M4d**, the gain init: BN-LSTM gains from 0.1 below 1.0 in test NLL over the run;
# - **R3c**, LN-LSTM against BN-LSTM: lower test NLL over the last quarter.
#
# M4b and R3c are claims about where training ends, and these nets are far from it. So they are graded
# only if every model they compare averages at least 80% test accuracy over the last quarter in both
# orders (`ENDING_ACCURACY`, declared in advance); below it their verdict is `inconclusive` at this
# budget, and their tests are still shown. Also shown, not graded: the test sequences followed by 16
# blank pixels, longer than any sequence seen in training.
#
# First, what one pixel per step does to Eq. 20. With a single input, $W_x x_t$ is the column $w$ of
# $W_x$ times the pixel value, so LayerNorm over its $4H$ units returns
# $x_t (w - \bar w) / \sqrt{x_t^2 \sigma_w^2 + \epsilon}$: the same vector for every inked pixel (up
# to $\epsilon$), and exactly 0 for a blank one. The LN-LSTM's input term says only whether a pixel is
# inked; how dark it is survives only through $\epsilon$, and the one in the recurrent term.

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
print("\nEach at its own best rate, test NLL over the run, paired by seed (n = 8)")
print(f"{'':18s} {'pixel by pixel':>24s} {'permuted':>24s}")
for a, b in (("LN-LSTM", "LSTM"), ("LN-GRU", "LN-LSTM"), ("LN-GRU", "LSTM"),
             ("LN-GRU", "BN-LSTM")):  # fmt: skip
    cells = [
        stats.paired_difference(by_task[order][a]["curve"], by_task[order][b]["curve"])
        for order in tasks
    ]
    print(f"{a + ' - ' + b:18s} " + " ".join(f"{c.bracket():>24s}" for c in cells))
findings = {}
for claim_id in ("M4b", "M4c", "M4d", "R3c"):
    findings[claim_id] = claims.BY_ID[claim_id].evaluate()
    print(f"\n{claim_id}")
    print(claims.evidence(findings[claim_id]))
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
# Nearly every model picks the grid's largest rate, 3e-2: an equal footing, not a proven optimum.
#
# - **M4b** is `inconclusive` at this budget: the LSTM and the BN-LSTM average 32-51% over the last
#   quarter. Its tests go Cooijmans et al.'s way and would give `reproduced`: permuted, the BN-LSTM is
#   far ahead of the LSTM (+18.9 [+13.2, +24.6] points), and its gain is larger permuted than in
#   reading order, the direction of their table.
# - **M4c** is `reproduced`, and by far the largest effect here: cutting the BN-LSTM's statistics at
#   step 8 raises its test NLL by +2.25 [+2.01, +2.48] nats pixel by pixel, and costs 35 and 33 points
#   of accuracy. The first eight pixels are the digit's top row, mostly blank, unlike the strokes that
#   follow. So M4c shows that this input is not stationary along the sequence, not a recurrent
#   transient (on a stationary stream that is over in two steps, M4f). One more effect of blank
#   pixels: pixel 0 is blank in every training image (so are pixels 32 and 39), so there BatchNorm's
#   batch variance of $W_x x_t$ is 0 and only $\epsilon = 10^{-5}$ keeps the division finite.
#   Cooijmans et al. added noise to the initial hidden state for this; this BN-LSTM does not.
# - **M4d** is `reproduced`: at $T = 64$ the BN-LSTM with gains from 0.1 is below the one from 1.0 in
#   test NLL over the run in both orders, the reverse of the row-by-row $T = 8$ runs, where 1.0 led
#   early. Cooijmans et al.'s choice pays off where the sequence is long.
# - **R3c** is `inconclusive` at this budget: the LN-LSTM and the BN-LSTM average 24-51% over the last
#   quarter. Its test goes against the paper and would give `not reproduced`: late, the BN-LSTM is
#   lower in both orders (LN minus BN +0.27 [+0.14, +0.40] and +0.66 [+0.51, +0.81]). That is evidence
#   about two epochs, not about where these models converge. And while the BN-LSTM's per-step
#   statistics normalize each pixel position by its own mean and variance, LN never gets that
#   positional signal. Early, at step 30, the LN-LSTM is ahead in reading order (-0.22 [-0.41,
#   -0.02]), shown, not graded: one evaluation sits so near its boundary that another machine's
#   kernels can carry it across.
#
# The LN-LSTM is not ahead of the plain LSTM either (not graded), and is the weakest permuted; its
# one-pixel input term is a suspect. The LN-GRU (Eq. 26-28), whose candidate state
# normalizes $W x_t$ and $U h$ separately, is ahead of the LSTM and the LN-LSTM in both orders, and
# ahead of the BN-LSTM in reading order but not permuted. R3h, below, tests the suspect.
#
# Test sequences 16 blank pixels longer than training: every model falls to 7-13% accuracy, chance for
# ten classes. The readout was trained on $h_{64}$ alone, and 16 more steps wash the answer out, with
# or without a normalizer: a test of the task more than the normalizer.
#
# ### Statistics averaged over time (M4h)
#
# Cooijmans et al. keep statistics per step because "simply averaging statistics over time severely
# degrades performance" (Sec. 3). Notebook 03's M4f found that negligible on an input that is the same
# at every step. Here the trained BN-LSTM is tested with its statistics averaged over the 64 steps.
# Declared before the run: test NLL averaged minus per step above 0 in both orders, beyond the
# negligible 0.02 nats for `reproduced`.

# %%
m4h = claims.BY_ID["M4h"].evaluate()
print(claims.evidence(m4h))
claims.expect(m4h, claims.REPRODUCED)

# %% [markdown]
# **M4h reproduced**: one set of statistics for all 64 steps raises the test NLL by +0.81 and +0.83
# nats, about 25 points of accuracy. Where the input changes along the sequence, "severely" holds.
#
# ### The one-pixel input term (R3h)
#
# Does LayerNorm on $W_x x_t$ hold the LN-LSTM back? A control answers it: the same cell and weights
# without LayerNorm on the input term, on the same task, grid, steps and seeds. Our question, declared
# before the control's runs: its test NLL over the run minus the LN-LSTM's below 0 in both orders.

# %%
print(code(RawInputLayerNormLSTMCell.forward))
r3h = claims.BY_ID["R3h"].evaluate()
print(claims.evidence(r3h))
claims.expect(r3h, claims.NOT_REPRODUCED)

# %% [markdown]
# **R3h not reproduced**: without LayerNorm on its input term the cell does worse, by +0.39 [+0.28,
# +0.51] nats pixel by pixel and +0.16 [+0.04, +0.27] permuted, and most of its runs collapse. Taking
# the norm off takes its rescaling off too: the raw pixel term sits beside a recurrent term
# normalized to unit size, which drowns it. LayerNorm on one pixel loses how dark it is but keeps it
# heard; it is not what puts the LN-LSTM behind. Not run: two or more pixels per step, and DRAW's
# variant with LayerNorm on $c_t$ only (supplement Eq. 29-31).
#
# ### LayerNorm's gains at $T = 64$ (M4e)
#
# The paper's conclusion on initialization is a contrast: layer normalization "is not sensitive to the
# initial scale in the same way that recurrent BN is". M4d shows the BN half; the LN half needs the
# LN-LSTM with gains from 0.1 too, on the same task, grid, steps and seeds (`gain_pixels`). Declared
# before that run: per seed, what 0.1 instead of 1.0 buys the LN-LSTM in test NLL over the run, minus
# what it buys the BN-LSTM, must be above 0 in both orders.

# %%
m4e = claims.BY_ID["M4e"].evaluate()
print(claims.evidence(m4e))
claims.expect(m4e, claims.PARTLY)

# %% [markdown]
# Gains from 0.1 help the BN-LSTM and do nothing for the LN-LSTM (its intervals cross 0). The declared
# difference is above 0 permuted (+0.46 [+0.29, +0.62]), but in reading order its interval just
# crosses 0, so **M4e** is `partly`. That reading-order part sits within machine noise of its
# boundary: on another machine M4e could be `reproduced`. The difference is not one of scale:
# LayerNorm's output is $g$ times a standardized vector, so at $g = 0.1$ its gates' inputs sit at 0.1
# just as BatchNorm's do with $\gamma = 0.1$. What separates the cells lies elsewhere: statistics per
# example rather than per batch, the steps whose one pixel has no variance across the batch, and what
# LayerNorm keeps of a one-pixel input term; these runs do not tell which.
#
# ### The GRU at $T = 64$ (R3g)
#
# The LN-GRU leads the pixel-by-pixel table above, but no plain GRU stood beside it. Here one does, on
# the same task, grid, steps, seeds and minibatches (`gru_pixels`), graded as R3f was at $T = 8$: at
# each shared rate, in both pixel orders, test NLL over the first quarter of training below the GRU's.
# Declared before the GRU's run. The first quarter holds one evaluation, step 30, so the verdict also
# needs the intervals to lie clear of 0.

# %%
r3g = claims.BY_ID["R3g"].evaluate()
print("R3g")
print(claims.evidence(r3g))
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
# At a shared rate the LN-GRU is ahead at step 30 in all six cells, every interval below 0: **R3g** is
# `reproduced`, the paper's speed-up at eight times the length. With 8 seeds and one evaluation, each
# interval lies within machine noise of 0, so the ledger marks it borderline. The lead lasts in
# reading order only: each at its best rate, permuted, the plain GRU is ahead over the run and over
# the last quarter (not graded). The plain GRU is no weak baseline: permuted, it is 0.41 nats below
# the LSTM over the run.
#
# ### Small minibatches (R6)
#
# The paper's conclusion (Sec. 7) reads: "recurrent neural networks benefit the most from the proposed
# method especially for long sequences and small mini-batches". BatchNorm's statistics come from the
# minibatch, so they get noisier as it shrinks; LayerNorm's do not. So the $T = 64$ study runs again
# in reading order at minibatches of 4 instead of 16 (`small_batch_pixels`): the LSTM, LN-LSTM and
# BN-LSTM, the same grid, seeds, initial weights and number of steps. Equal steps, not equal epochs:
# each model makes as many updates as at batch 16, from noisier gradients, and sees a quarter of the
# examples. Declared before the run, test NLL over the run, each model at its own best rate at each
# batch size, paired by seed: **R6** holds if at batch 4 the LN-LSTM is below the BN-LSTM, and if that
# difference is below the same difference at batch 16.

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
print("\nR6")
print(claims.evidence(r6))
claims.expect(r6, claims.PARTLY)

# %% [markdown]
# Half of it holds. Shrinking the batch costs the BN-LSTM more than the LN-LSTM, so LN minus BN moves
# from +0.15 [+0.06, +0.24] at batch 16 (BN ahead) to +0.000 [-0.101, +0.102] at batch 4, a change of
# -0.15 [-0.29, -0.01]: the direction the paper describes. But at batch 4 the LN-LSTM is only level
# with the BN-LSTM, not ahead, so **R6** is `partly`. The caveat is the budget: 150 steps of 4
# examples is 600 digits, half an epoch, and every model is barely past chance. The plain LSTM loses
# about as much as the BN-LSTM, so part of BatchNorm's loss is the noisier gradient every model gets;
# what is LayerNorm's own is that it loses less. An equal-epochs version (600 steps at batch 4), not
# run here, would ask the question at a real level of training. The paper never ran a one-pixel input
# term, and its own small-batch run (handwriting, batch 8) compared LayerNorm with a plain LSTM, not
# BatchNorm.
#
# ## Coda: where BatchNorm wins (R5, R5b)
#
# The paper ends its experiments with a "preliminary" convolutional network: LayerNorm sped training
# up over no normalization, "but batch normalization outperforms the other methods". It gives no setup
# or numbers, only a reason: units whose receptive fields lie near the border of the image are rarely
# turned on, so the hidden units of a convolutional layer do not contribute alike, which is what a
# statistic shared across them assumes.
#
# Here a small CNN (`lnpaper.models.cnn.SmallCNN`) trains for 200 steps with no norm, with BatchNorm
# (per channel, over the batch and the positions) and with LayerNorm (per image, over every unit of
# the layer, $C \times$ height $\times$ width), 10 seeds each, all at one rate (Adam 3e-3), so
# whatever R5b finds is a single-rate result. Both normalizers get a gain and a bias per channel, $2C$
# parameters each: a bias per position could absorb the very border effect the paper blames. The 8 x 8
# digits fill their box, unlike MNIST's, whose 20 x 20 digits sit in a blank 28 x 28 frame; so the
# runs are repeated with each digit framed by 2 blank pixels (12 x 12), which puts the rarely-on
# border units back. Graded apart, in test NLL paired by seed at each image size: LN below no norm
# (**R5**), and BN below LN (**R5b**; the whole 95% interval below 0). "Units on" counts only units
# that respond to the image: a unit that sees nothing but the blank frame computes ReLU(bias), the
# same for every digit.

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
# The first half of the claim reproduces (**R5**): both normalizers cut the test NLL of the plain CNN
# to about a third and train faster from the first steps. The second half does not show at this scale
# (**R5b**, `inconclusive`): BN minus LN is +0.001 [-0.003, +0.004] on the bare digits, and its
# interval straddles 0 in the frame too, so 10 seeds cannot tell the two apart even with LayerNorm's
# affine cut to BatchNorm's $2C$ parameters. Nor does the frame recreate the paper's premise strongly:
# responding border units are on 58% of the time against 69% inside (one seed, no norm). So R5b grades
# only whether BN beats LN, not the paper's "because". Two 3 x 3 layers are a long way from the
# paper's unspecified network, which it called preliminary. Later practice did not settle on LayerNorm
# over all of C x H x W: CNNs kept BatchNorm, or, at small batches, GroupNorm (statistics over groups
# of channels, per example), and ConvNeXt-style networks normalize each position over its channels, a
# LayerNorm over C alone. Sequence models took LayerNorm.

# %%
# Try it: in a wider blank frame, 4 pixels, does BatchNorm pull ahead of LayerNorm, as
# the border explanation predicts? Two seeds, live: about 7 s here. Uncomment and run.
# mine = runs.cnn_coda(margins=(0, 4), seeds=(0, 1))
# for margin, by_norm in mine.test_loss.items():
#     print(margin, {norm: [round(v, 3) for v in by_norm[norm]] for norm in by_norm})

# %% [markdown]
# ## Claims checked here

# %%
pixels_ids = ["M4b", "M4c", "M4d", "M4h", "R3c", "R3h", "M4e", "R3g", "R6"]
print(claims.checked_here([*pixels_ids, "R5", "R5b"]))
