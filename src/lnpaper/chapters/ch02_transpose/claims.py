"""Claims of notebook 02, the transpose: F1-F4."""

from lnpaper.chapters.ch02_transpose import runs as ch02_runs
from lnpaper.companion.verdicts import BA_2016, IDENTITY, Claim, Finding, exact, verdict


def check_f1(parity) -> Finding:
    same_function = max(parity.max_diff_module, parity.max_diff_numpy) < 1e-12
    # The check must be able to tell the choices apart: the unbiased or eps-outside versions differ.
    choices_visible = min(parity.max_diff_unbiased, parity.max_diff_eps_outside) > 1e-6
    init = parity.init_gain == 1.0 and parity.init_bias == 0.0
    ours = (
        f"lnpaper and numpy reference = nn.LayerNorm to {parity.max_diff_module:.1e} (float64); "
        f"1/(H-1) would change outputs by {parity.max_diff_unbiased:.2g}, eps outside the sqrt by "
        f"{parity.max_diff_eps_outside:.2g}; init g = {parity.init_gain:g}, b = {parity.init_bias:g}"
    )
    quantities = (exact("max |lnpaper - nn.LayerNorm|, float64", parity.max_diff_module, 1e-12),)
    return Finding(ours, verdict(same_function and choices_visible and init), quantities)


def check_f2(per_token) -> Finding:
    ours = (
        f"changing one token moves every other token's LayerNorm output by "
        f"{per_token.layernorm_max_other:g} (BatchNorm over B x T: up to "
        f"{per_token.batchnorm_max_other:.2g})"
    )
    quantities = (exact("LayerNorm: other tokens' change", per_token.layernorm_max_other, 0.0),)
    return Finding(ours, verdict(per_token.layernorm_max_other == 0.0), quantities)


def check_f3(backward) -> Finding:
    worst = max(backward.max_diff_dx, backward.max_diff_dgain, backward.max_diff_dbias)
    ours = (
        f"closed form = autograd to {worst:.1e} (float64, dx, dg, db); gradcheck "
        f"{'passes' if backward.gradcheck_passed else 'fails'}"
    )
    quantities = (exact("max |closed form - autograd|, float64", worst, 1e-12),)
    return Finding(ours, verdict(worst < 1e-12 and backward.gradcheck_passed), quantities)


ANNOTATED = "unbiased std, eps outside (Annotated Transformer)"
TORCH_MODULE = "eps outside the sqrt"  # the authors' Lua/Torch module


def check_f4(variants, one_pass) -> Finding:
    annotated, eps_outside = (variants.ratios[name] for name in (ANNOTATED, TORCH_MODULE))
    annotated_eps, torch_eps = (variants.eps[name] for name in (ANNOTATED, TORCH_MODULE))
    at_100 = one_pass.offsets.index(100.0)
    one_pass_error = one_pass.variance_error["one pass E[a^2] - E[a]^2"][at_100]
    nonpositive = one_pass.nonpositive_fraction[at_100]
    smallest = variants.stds[0]
    ours = (
        f"H={variants.width}, each with its source's eps: the Annotated Transformer's (unbiased std, "
        f"eps {annotated_eps:g} outside) gives {annotated[-1]:.4f}x nn.LayerNorm's output at std "
        f"{variants.stds[-1]:g} and {annotated[0]:.1f}x at std {smallest:g}, the authors' Torch "
        f"module (eps {torch_eps:g} outside) {eps_outside[0]:.1f}x at std {smallest:g}; one-pass "
        f"variance at mean 100, std 0.01 (float32): median error {one_pass_error:.0%}, "
        f"{nonpositive:.0%} of rows <= 0"
    )
    differ = abs(annotated[-1] - 1) > 1e-3 and eps_outside[0] > 2
    fails = one_pass_error > 1.0 and nonpositive > 0
    return Finding(ours, verdict(differ and fails))


CLAIMS = (
    Claim(
        id="F1",
        kind=IDENTITY,
        claim="mu and sigma over the H units of one example, biased variance; gain 1, bias 0 at "
        "init; eps inside the sqrt, as PyTorch puts it",
        source=f"{BA_2016}, Sec. 3; init Sec. 6",
        paper_value="no eps in the paper; nn.LayerNorm and the authors' Theano ln(): 1e-5 inside "
        "the sqrt (their Torch module and the Annotated Transformer: outside)",
        experiments=(ch02_runs.layernorm_parity,),
        check=check_f1,
    ),
    Claim(
        id="F2",
        kind=IDENTITY,
        claim="in B x T x d, each (b, t) is normalized over its d features alone",
        source=f"{BA_2016}, Sec. 3, applied per token as in the Transformer",
        paper_value="no mixing across tokens or examples",
        experiments=(ch02_runs.per_token_independence,),
        check=check_f2,
    ),
    Claim(
        id="F3",
        kind=IDENTITY,
        claim="LayerNorm's backward pass has a closed form equal to autograd",
        source="derivation (notebook 02)",
        paper_value="projection off 1 and x_hat, scaled by g / sigma",
        experiments=(ch02_runs.backward_parity,),
        check=check_f3,
    ),
    Claim(
        id="F4",
        kind=IDENTITY,
        claim="variants in the wild are different functions; one-pass variance fails at large offsets",
        source="the Annotated Transformer; the authors' Lua/Torch code",
        paper_value="Annotated Transformer: unbiased std + eps 1e-6 outside; authors' Torch: eps "
        "1e-5 outside; float32 mean 100, std 0.01 gives variance <= 0",
        regime="source: code, not training: the Annotated Transformer's module (unbiased std, eps "
        "1e-6 added to the std), the authors' Torch module (eps 1e-5 added to the std), float32 "
        "rows of mean 100, std 0.01; ours: H = 64, row std 1e-4 to 10 (float64); float32 rows of "
        "1,024 at mean 100, std 0.01",
        experiments=(ch02_runs.variants_vs_scale, ch02_runs.one_pass_variance),
        check=check_f4,
    ),
)
