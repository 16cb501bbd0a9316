"""Write it yourself: each `check_*` takes a reader's function and checks it against the package.

The exercises sit in the notebooks that introduce each method: LayerNorm forward and backward and
RMSNorm in notebook 02, an LN-LSTM step in notebook 03, a Pre-LN block in notebook 06. A check
calls the reader's function on a few float64 torch tensors chosen to catch the usual slips (a large
offset, a constant row, a row near zero, gains that are not 1), compares each output with lnpaper's
own implementation, and prints one line per case naming the outputs that are wrong (dx, dgain or
dbias; h or c). A difference alone says that something is off, not where: so each exercise also
has a table of its known slips, each a small float64 function of its own, and a wrong output that
agrees with one of them to roundoff is named with its fix ("this matches Bessel's correction: ...").

A check returns True when every case agrees, False when one does not, None while the function
still raises NotImplementedError. Solutions, out of the reading path: `lnpaper.exercise_solutions`.
"""

from functools import partial

import numpy as np
import torch

from lnpaper import functional
from lnpaper.models.recurrent import LayerNormLSTMCell
from lnpaper.models.transformer import Block

TOLERANCE = 1e-8  # float64 everywhere: a right answer agrees to roundoff, a slip by far more


def _rows(seed: int, rows: int = 4, width: int = 10, offset: float = 0.0, scale: float = 1.0):
    generator = np.random.default_rng(seed)
    return torch.from_numpy(offset + scale * generator.standard_normal((rows, width)))


def _affine(seed: int, width: int = 10):
    generator = np.random.default_rng(seed)
    gain, bias = 1 + 0.5 * generator.standard_normal(width), 0.3 * generator.standard_normal(width)
    return torch.from_numpy(gain), torch.from_numpy(bias)


def _numpy(function):
    """`function` (one of lnpaper.functional's, on numpy arrays) called on torch tensors."""

    def on_tensors(*arguments):
        return function(*(a.numpy() if isinstance(a, torch.Tensor) else a for a in arguments))

    return on_tensors


def _array(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().to(torch.float64).numpy()
    return np.asarray(value, dtype=np.float64)


def _outputs(answer, count: int):
    """The answer as a tuple of `count` float64 arrays, or a phrase saying what came back instead."""
    if isinstance(answer, torch.Tensor | np.ndarray):
        if count != 1:
            return "1 tensor"
        answer = (answer,)
    elif answer is None:
        return "None (no return statement?)"
    elif not isinstance(answer, tuple | list):
        return f"a {type(answer).__name__}"
    elif len(answer) != count:
        return f"a {type(answer).__name__} of {len(answer)}"
    try:
        return tuple(_array(value) for value in answer)
    except (TypeError, ValueError):
        return "something that is not tensors: " + ", ".join(type(v).__name__ for v in answer)


def _single_precision(answer) -> bool:
    """Whether an output came back in float32 (or float16), which alone costs digits."""
    values = answer if isinstance(answer, tuple | list) else (answer,)
    return any(str(getattr(v, "dtype", "")).endswith(("float32", "float16")) for v in values)


def _error(mine: np.ndarray, reference: np.ndarray) -> float | str:
    """Largest |mine - reference| over the largest |reference| (or 1, if that is smaller); inf
    where one has nan or inf and the other not; a phrase when the shapes differ."""
    if mine.shape != reference.shape:
        return f"has shape {mine.shape}, expected {reference.shape}"
    finite = np.isfinite(reference)
    if not (np.isfinite(mine) == finite).all():
        return float("inf")
    if not np.array_equal(mine[~finite], reference[~finite], equal_nan=True):
        return float("inf")
    scale = max(1.0, np.max(np.abs(reference[finite]), initial=0.0))
    return float(np.max(np.abs(mine[finite] - reference[finite]), initial=0.0) / scale)


def _agrees(error) -> bool:
    return isinstance(error, float) and error < TOLERANCE


def _describe(output: str, mine: np.ndarray, error) -> str:
    if isinstance(error, str):
        return f"{output} {error}"
    if not np.isfinite(mine).all():
        return f"{output} has nan or inf"
    return f"{output} off by up to {error:.1e}"


def _run(name, outputs, returns, cases, answer, reference, slips) -> bool | None:
    """Each case: the reader's answer against the reference, output by output; one printed line
    per case. A wrong output that agrees with a slip's own output to roundoff names the slip."""
    passed, named = True, {}
    for case, arguments in cases.items():
        expected = _outputs(reference(*arguments), len(outputs))
        try:  # copies: an answer that works in place must not change the reference's inputs
            given = answer(*(a.clone() if isinstance(a, torch.Tensor) else a for a in arguments))
        except NotImplementedError:
            print(f"{name}: not attempted yet (the function raises NotImplementedError)")
            return None
        except Exception as error:  # the reader's code: any error is a result to report
            print(f"  {case:28s} raised {type(error).__name__}: {error}")
            passed = False
            continue
        mine = _outputs(given, len(outputs))
        if isinstance(mine, str):
            print(f"  {case:28s} wrong: return {returns}; got {mine}")
            passed = False
            continue
        errors = [_error(m, e) for m, e in zip(mine, expected, strict=True)]
        wrong = [i for i, error in enumerate(errors) if not _agrees(error)]
        if not wrong:
            print(f"  {case:28s} right: largest error {max(errors):.1e}")
            continue
        passed = False
        line = ", ".join(_describe(outputs[i], mine[i], errors[i]) for i in wrong)
        right = [outputs[i] for i in range(len(outputs)) if i not in wrong]
        line += f"; {' and '.join(right)} right" if right else ""
        if _single_precision(given):
            line += "; returned in float32: keep the inputs' float64"
        print(f"  {case:28s} wrong: {line}")
        for slip, fix, slipped in slips:
            theirs = _outputs(slipped(*arguments), len(outputs))
            for i in wrong:
                if _agrees(_error(mine[i], theirs[i])):
                    named.setdefault((slip, fix), {})[outputs[i]] = None
    print(f"{name}: {'every case right' if passed else 'not yet: see the wrong cases above'}")
    for (slip, fix), which in named.items():
        print(f"  {', '.join(which)}: this matches {slip}: {fix}")
    return passed


# LayerNorm and RMSNorm, forward and backward, with the switches that the slips turn


def _root(mean_square, eps: float, eps_at: str):
    if eps_at == "inside":
        return torch.sqrt(mean_square + eps)
    return torch.sqrt(mean_square) + (eps if eps_at == "outside" else 0.0)


def _norm(x, gain, bias, eps, *, center=True, dim=-1, ddof=0, eps_at="inside", gain_first=False):
    """gain * (x - mean) / sqrt(var + eps) + bias over dim; without `center`, RMSNorm's x / RMS."""
    if gain_first:
        x = gain * x
    a = x - x.mean(dim, keepdim=True) if center else x
    y = a / _root((a**2).sum(dim, keepdim=True) / (x.shape[dim] - ddof), eps, eps_at)
    return (y if gain_first else gain * y) + bias


def _rms(x, gain, eps, **switches):
    return _norm(x, gain, 0.0, eps, **{"center": False} | switches)


def _norm_backward(dy, x, gain, eps, *, dim=-1, ddof=0, eps_at="inside", project=True, sums=0):
    """The gradients of _norm by the formula of exercise_solutions, with the same switches."""
    a = x - x.mean(dim, keepdim=True)
    inv_std = 1 / _root((a**2).sum(dim, keepdim=True) / (x.shape[dim] - ddof), eps, eps_at)
    x_hat, g = a * inv_std, dy * gain
    # the mean and the component along x_hat removed: the mean and the variance move with x
    centered = g - g.mean(dim, keepdim=True) - x_hat * (g * x_hat).mean(dim, keepdim=True)
    return inv_std * (centered if project else g), (dy * x_hat).sum(sums), dy.sum(sums)


BESSEL = "Bessel's correction (dividing by H-1)"
AXIS = "the wrong axis (statistics over the batch, dim 0, instead of each row's features)"
NO_EPS, EPS_OUTSIDE = "eps missing", "eps outside the square root"
GAIN_FIRST = "the gain applied before normalizing"
TO_H = "divide by H, as torch.var(x, dim=-1, keepdim=True, correction=0) does"
TO_ROW = "take the statistics over each row, dim=-1"
EPS_IN = "eps goes inside the square root, torch.sqrt(var + eps)"
RMS_EPS_IN = (
    "eps goes inside the square root, torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True) + eps)"
)

LAYER_NORM_SLIPS = (
    (BESSEL, TO_H, partial(_norm, ddof=1)),
    (AXIS, TO_ROW, partial(_norm, dim=0)),
    (NO_EPS, EPS_IN, partial(_norm, eps_at="missing")),
    (EPS_OUTSIDE, EPS_IN, partial(_norm, eps_at="outside")),
    (GAIN_FIRST, "normalize x first, then gain * x_hat + bias", partial(_norm, gain_first=True)),
)

LAYER_NORM_BACKWARD_SLIPS = (
    (BESSEL, TO_H, partial(_norm_backward, ddof=1)),
    (AXIS, TO_ROW, partial(_norm_backward, dim=0)),
    (NO_EPS, EPS_IN, partial(_norm_backward, eps_at="missing")),
    (EPS_OUTSIDE, EPS_IN, partial(_norm_backward, eps_at="outside")),
    (
        "the mean and variance taken as constants",
        "they move with x, so remove from dx_hat its mean and its component along x_hat",
        partial(_norm_backward, project=False),
    ),
    (
        "dgain and dbias summed over the features",
        "sum over the rows, dim 0, as every row shares one gain and one bias",
        partial(_norm_backward, sums=-1),
    ),
)

RMS_NORM_SLIPS = (
    (
        "subtracting the mean (that is LayerNorm)",
        "RMSNorm does not center, gain * x / torch.sqrt((x**2).mean(dim=-1, keepdim=True) + eps)",
        partial(_rms, center=True),
    ),
    (AXIS, TO_ROW, partial(_rms, dim=0)),
    (NO_EPS, RMS_EPS_IN, partial(_rms, eps_at="missing")),
    (EPS_OUTSIDE, RMS_EPS_IN, partial(_rms, eps_at="outside")),
    (GAIN_FIRST, "normalize x first, then multiply by gain", partial(_rms, gain_first=True)),
)


def check_layer_norm(layer_norm) -> bool | None:
    """layer_norm(x, gain, bias, eps) -> y: x a float64 tensor of rows, each normalized over its
    own H values, y = gain * (x - mean) / sqrt(var + eps) + bias, var the mean squared deviation."""
    gain, bias = _affine(1)
    cases = {
        "random rows": (_rows(0), gain, bias, 1e-5),
        "rows with mean 10^4": (_rows(2, offset=1e4, scale=0.01), gain, bias, 1e-5),
        "a constant row": (torch.full((1, 10), 3.0, dtype=torch.float64), gain, bias, 1e-5),
    }
    reference = _numpy(functional.layer_norm)
    return _run("layer_norm", ("y",), "y, one tensor", cases, layer_norm, reference,
                LAYER_NORM_SLIPS)  # fmt: skip


def check_layer_norm_backward(layer_norm_backward) -> bool | None:
    """layer_norm_backward(dy, x, gain, eps) -> (dx, dgain, dbias): the gradients of a loss whose
    gradient at y = layer_norm(x, gain, bias, eps) is dy, summed over the rows for dgain and dbias."""
    gain, _ = _affine(1)
    cases = {
        "random rows": (_rows(3), _rows(0), gain, 1e-5),
        "rows with mean 10^4": (_rows(3), _rows(2, offset=1e4, scale=0.01), gain, 1e-5),
    }
    reference = _numpy(functional.layer_norm_backward)
    return _run("layer_norm_backward", ("dx", "dgain", "dbias"), "(dx, dgain, dbias)", cases,
                layer_norm_backward, reference, LAYER_NORM_BACKWARD_SLIPS)  # fmt: skip


def check_rms_norm(rms_norm) -> bool | None:
    """rms_norm(x, gain, eps) -> y = gain * x / sqrt(mean(x^2) + eps), over each row of x."""
    gain, _ = _affine(1)
    cases = {
        "random rows": (_rows(0), gain, 1e-5),
        "rows with mean 3": (_rows(2, offset=3.0), gain, 1e-5),
        "rows of RMS 10^-3": (_rows(4, scale=1e-3), gain, 1e-5),
    }
    reference = _numpy(functional.rms_norm)
    return _run("rms_norm", ("y",), "y, one tensor", cases, rms_norm, reference, RMS_NORM_SLIPS)


# One LN-LSTM step (Ba et al., supplement Eq. 20-22), with the switches that the slips turn


@torch.random.fork_rng()  # the notebook's own random stream is left as it was
def _lstm_case(seed: int):
    torch.manual_seed(seed)
    cell = LayerNormLSTMCell(3, 5).double()
    with torch.no_grad():  # gains and biases away from 1 and 0, so that each is seen to act
        for parameter in (p for name, p in cell.named_parameters() if name.startswith("norm")):
            parameter.add_(0.3 * torch.randn_like(parameter))
        cell.bias.add_(0.3 * torch.randn_like(cell.bias))
    x, h, c = (torch.randn(2, n, dtype=torch.float64) for n in (3, 5, 5))
    return x, h, c, cell


def _lstm_reference(x, h, c, cell):
    (h, c), _ = cell(x, (h, c))
    return h, c


def _lstm(x, h, c, cell, *, one_norm=None, order="ifgo", ln_in_output=True, c_normalized=False):
    recurrent, inputs = h @ cell.weight_hh.T, x @ cell.weight_ih.T
    if one_norm is None:
        gates = cell.norm_hh(recurrent) + cell.norm_ih(inputs) + cell.bias
    else:
        gates = getattr(cell, one_norm)(recurrent + inputs) + cell.bias
    gate = dict(zip(order, gates.chunk(4, dim=1), strict=True))
    c = torch.sigmoid(gate["f"]) * c + torch.sigmoid(gate["i"]) * torch.tanh(gate["g"])
    normalized = cell.norm_c(c)
    h = torch.sigmoid(gate["o"]) * torch.tanh(normalized if ln_in_output else c)
    return h, normalized if c_normalized else c


ONE_NORM = "one norm on the sum of the input and recurrent terms"
EACH_TERM = "normalize each term on its own, cell.norm_hh(W_h h) + cell.norm_ih(W_x x) + cell.bias"

LNLSTM_SLIPS = (
    (ONE_NORM, EACH_TERM, partial(_lstm, one_norm="norm_hh")),
    (ONE_NORM, EACH_TERM, partial(_lstm, one_norm="norm_ih")),
    (
        "the gates chunked in the paper's order f, i, o, g",
        "chunk as i, f, g, o, the order of the cell's weights",
        partial(_lstm, order="fiog"),
    ),
    (
        "Eq. 22 without its LayerNorm on c_t",
        "h = sigmoid(o) * tanh(cell.norm_c(c))",
        partial(_lstm, ln_in_output=False),
    ),
    (
        "c_t normalized in the recurrence",
        "return Eq. 21's c_t; only the copy in h's tanh is normalized",
        partial(_lstm, c_normalized=True),
    ),
)


def check_lnlstm_step(lnlstm_step) -> bool | None:
    """lnlstm_step(x, h, c, cell) -> (h, c): one step of Ba et al.'s LN-LSTM (supplement Eq. 20-22)
    with the parameters of `cell`, an lnpaper LayerNormLSTMCell: weight_ih (W_x), weight_hh (W_h),
    bias (b), and the LayerNorms norm_hh, norm_ih and norm_c (each with .weight and .bias). The
    4H gate pre-activations are chunked in the order i, f, g, o."""
    cases = {f"cell and states {seed}": _lstm_case(seed) for seed in (0, 1)}
    with torch.no_grad():
        return _run("lnlstm_step", ("h", "c"), "(h, c)", cases, lnlstm_step, _lstm_reference,
                    LNLSTM_SLIPS)  # fmt: skip


# One Pre-LN Transformer block, with the switches that the slips turn


@torch.random.fork_rng()
def _block_case(seed: int):
    torch.manual_seed(seed)
    block = Block(16, 2, 32, placement="pre", norm="layernorm", max_len=8).double()
    with torch.no_grad():
        for name, parameter in block.named_parameters():
            if "norm" in name:
                parameter.add_(0.3 * torch.randn_like(parameter))
    return torch.randn(2, 8, 16, dtype=torch.float64), block


def _block_reference(x, block):
    return block(x)


def _block(x, block, *, post=False, norms=("attn_in_norm", "ffn_in_norm"), from_normalized=False):
    for sublayer, norm in zip((block.attn, block.ffn), norms, strict=True):
        if post:
            x = getattr(block, norm)(x + sublayer(x))
            continue
        normalized = x if norm is None else getattr(block, norm)(x)
        x = (normalized if from_normalized else x) + sublayer(normalized)
    return x


PRE_LN_BLOCK_SLIPS = (
    (
        "Post-LN for Pre-LN (the norm after the residual sum)",
        "normalize each sublayer's input, x + block.attn(block.attn_in_norm(x))",
        partial(_block, post=True),
    ),
    (
        "a missing norm before the attention",
        "x + block.attn(block.attn_in_norm(x))",
        partial(_block, norms=(None, "ffn_in_norm")),
    ),
    (
        "a missing norm before the feed-forward, the block's last",
        "x + block.ffn(block.ffn_in_norm(x))",
        partial(_block, norms=("attn_in_norm", None)),
    ),
    (
        "one norm for both sublayers",
        "block.ffn_in_norm before the feed-forward (its gain and bias are its own)",
        partial(_block, norms=("attn_in_norm", "attn_in_norm")),
    ),
    (
        "the residual stream taken after the norm",
        "add the sublayer's output to x itself, x + block.attn(block.attn_in_norm(x))",
        partial(_block, from_normalized=True),
    ),
)


def check_pre_ln_block(pre_ln_block) -> bool | None:
    """pre_ln_block(x, block) -> y: a Pre-LN Transformer block, x + attention(norm(x)), then
    + feed-forward(norm(...)) of that, with the modules of `block` (an lnpaper Block): block.attn,
    block.ffn, and the norms before them, block.attn_in_norm and block.ffn_in_norm."""
    cases = {f"block and input {seed}": _block_case(seed) for seed in (0, 1)}
    with torch.no_grad():
        return _run("pre_ln_block", ("the block's output",), "y, one tensor", cases,
                    pre_ln_block, _block_reference, PRE_LN_BLOCK_SLIPS)  # fmt: skip
