"""Figures of notebook 09 on attention logits and today's placements: Q1's learning-rate sweep."""

import statistics

from lnpaper.chapters.ch09_logits_and_placement import analysis as ch09_analysis
from lnpaper.chapters.ch09_logits_and_placement.runs import LOGIT_LIMIT
from lnpaper.companion import style
from lnpaper.companion.chapter import figure
from lnpaper.data.synthetic_language import SyntheticLanguage

# QK-norm is not a normalizer of the stream, so not a palette method: QK-LayerNorm borrows
# LayerNorm's blue, and the model without it the grey of "no norm".
QK_COLORS = {"no QK-norm": style.GREY, "QK-LayerNorm": style.BLUE}


@figure("qk_norm_sweep", experiment=ch09_analysis.qk_sweep)
def qk_norm_sweep(sweep):
    """Q1, after Wortsman et al.'s Fig. 1: the held-out loss and the largest layer-0 attention
    logit against the learning rate, with and without QK-LayerNorm (mean and range over seeds)."""
    summary = ch09_analysis.qk_summary(sweep)
    fig = style.new_figure(panels=2, height=4.4)
    loss_ax, logit_ax = fig.subplots(1, 2)
    language = SyntheticLanguage().levels()
    n = len(next(iter(summary.values()))["sensitivity"])
    for arm, arm_summary in summary.items():
        colour = QK_COLORS[arm]
        initial = next(iter(sweep.runs[arm].values()))["initial_loss"]
        finals = [[initial[i] if v is None else min(v, initial[i]) for i, v in enumerate(losses)]
                  for losses in arm_summary["final_loss"].values()]  # fmt: skip
        style.band(loss_ax, sweep.lrs, list(map(list, zip(*finals, strict=True))), colour,
                   label=arm, lw=2.0)  # fmt: skip
        peaks = list(arm_summary["peak_logit"].values())
        style.band(logit_ax, sweep.lrs, list(map(list, zip(*peaks, strict=True))), colour, lw=2.0)
    for ax in (loss_ax, logit_ax):
        style.log_axis(ax, "x")
        ax.set_xlabel("learning rate (Adam, 10% warmup)")
    loss_ax.set_ylabel(f"held-out loss ({style.NATS_PER_TOKEN})")
    loss_ax.set_title("final loss, capped at the loss at init")
    lowest = min(min(v for v in losses if v is not None) for arm in summary.values()
                 for losses in arm["final_loss"].values())  # fmt: skip
    loss_ax.set_ylim(lowest - 0.05, language.uniform + 0.1)
    # labelled where both curves run low (lr 3e-3 to 1e-2), not over the rising no-QK-norm line
    style.levels(loss_ax, [(language.unigram, "unigram"), (language.bigram, "bigram")], at=0.4)
    logit_ax.set_ylabel(r"largest layer-0 logit $|z_{ij}|$ in training")
    logit_ax.set_title(r"attention logits $z_{ij} = q_i \cdot k_j / \sqrt{d_h}$")
    style.log_axis(logit_ax, "y")
    # room above the mark for its label, under the panel's title, when the logits stay below it
    logit_ax.set_ylim(top=max(logit_ax.get_ylim()[1], 10 * LOGIT_LIMIT))
    style.levels(logit_ax, [(LOGIT_LIMIT, "$10^4$: Wortsman et al.'s divergence mark")], at=0.01)
    none, qk = summary["no QK-norm"], summary["QK-LayerNorm"]
    lr = 1e-1 if 1e-1 in sweep.lrs else max(sweep.lrs)  # Wortsman et al.'s high rate, if swept
    style.finding(
        fig,
        f"QK-LayerNorm holds layer-0 logits near {statistics.fmean(qk['peak_logit'][lr]):.0f} at "
        f"lr {lr:g}; without it they reach {statistics.fmean(none['peak_logit'][lr]):,.0f} "
        f"(means of {n} seeds).\n"
        f"Learning-rate sensitivity (final loss over the rates, mean minus best): "
        f"{statistics.fmean(qk['sensitivity']):.3f} nats with it, "
        f"{statistics.fmean(none['sensitivity']):.3f} without",
    )
    style.shared_legend(fig, extra=[style.band_handle(n, "mean")])
    return fig
