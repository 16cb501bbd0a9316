"""Claims of notebook 04 on the CNN with a wider blank frame: R5c, Sec. 6.7's BatchNorm win asked
where the paper's premise, border units rarely on, can hold. R5 and R5b are in `claims`."""

from lnpaper import stats
from lnpaper.chapters.ch04_batchnorm_against_layernorm import analysis as ch04_analysis
from lnpaper.companion.verdicts import (
    BA_2016,
    NOT_EXERCISED,
    Claim,
    Finding,
    aggregate,
    from_outcome,
    tested,
)
from lnpaper.vocabulary import outcome_word

# The premise, declared with the test: in the first seed's trained network without a norm, the
# units of the second conv layer within the frame's ring are on for at most half the share of
# images that the units inside it are, counting every unit, the blank ones too.
RARELY = 0.5


def check_r5c(wide) -> Finding:
    """R5c: the premise first (`RARELY`); where it holds, BN below LN in test NLL, paired by seed."""
    margin = ch04_analysis.WIDE_MARGIN
    side = 8 + 2 * margin
    border, inside = wide.border_active_all[margin][-1], wide.interior_active_all[margin][-1]
    premise = border <= RARELY * inside
    loss = wide.test_loss[margin]
    difference = stats.paired_difference(loss["batchnorm"], loss["layernorm"])
    ours = (
        f"{side}x{side} images, a {margin}-pixel frame, seeds {wide.seeds[0]}-{wide.seeds[-1]}: "
        f"conv-2 units on at the border vs inside, every unit counted (no norm, first seed) "
        f"{border:.2f} vs {inside:.2f}, rarely on (at most {RARELY:g} of inside): "
        f"{'yes' if premise else 'no'}; responding units only (not graded) "
        f"{wide.border_active[margin][-1]:.2f} vs {wide.interior_active[margin][-1]:.2f}; test "
        f"NLL after {wide.steps} steps, BN - LN "
    )
    quantities = (aggregate(f"{side}x{side} test NLL, BN - LN", difference),)
    if not premise:  # the test is not run: its difference is shown, undecided
        return Finding(ours + f"{difference.text()} (not tested)", NOT_EXERCISED, quantities)
    outcome = stats.better(difference, "lower")
    ours += tested(difference, outcome_word(outcome, "lower"))
    return Finding(ours, from_outcome(outcome), quantities)


CLAIMS = (
    Claim(
        id="R5c",
        claim="on a CNN whose digits sit in a 4-pixel blank frame, BatchNorm beats LN, where "
        "border units are rarely on",
        source=f"{BA_2016}, Sec. 6.7 (CNN, preliminary)",
        paper_value="no setup or numbers given",
        regime="source: a preliminary ConvNet experiment (Sec. 6.7), setting not stated, on "
        "MNIST (a 20x20 digit in 28x28: a 4-pixel frame); ours: two 3x3 conv layers (8, 16 "
        "channels), 8x8 digits in a 4-pixel frame (16x16), Adam 3e-3, batch 64, 200 steps, 10 "
        "seeds, test NLL",
        experiments=(ch04_analysis.wide_frame,),
        check=check_r5c,
        test="premise first: in the trained network without a norm (first seed), conv-2 units in "
        "the 4-pixel ring on for at most half the share of those inside, every unit counted, else "
        "inconclusive (not exercised); then test NLL, BN minus LN, paired by seed (10 seeds, "
        "10-19, not used by R5b), 95% t CI below 0 reproduces, above 0 does not; the coda's one "
        "rate (Adam 3e-3); declared before the run",
    ),
)
