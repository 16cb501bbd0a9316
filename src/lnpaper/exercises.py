"""Write it yourself: each `check_*` takes a reader's function and checks it against the package.

The exercises sit in the notebooks that introduce each method: LayerNorm forward and backward and
RMSNorm in notebook 02, an LN-LSTM step in notebook 03, a Pre-LN block in notebook 06. A check
calls the reader's function on a few cases chosen to catch the usual slips (a large offset, a
constant row, a row near zero, gains that are not 1), compares each answer with lnpaper's own
implementation, prints one line per case, and returns True when every case agrees, False when one
does not, None while the function still raises NotImplementedError. Solutions, out of the reading
path: `lnpaper.exercise_solutions`.
"""

import numpy as np
import torch

from lnpaper import functional
from lnpaper.models.recurrent import LayerNormLSTMCell
from lnpaper.models.transformer import Block

TOLERANCE = 1e-8  # float64 everywhere: a right answer agrees to roundoff, a slip by far more


def _rows(seed: int, rows: int = 4, width: int = 10, offset: float = 0.0, scale: float = 1.0):
    generator = np.random.default_rng(seed)
    return offset + scale * generator.standard_normal((rows, width))


def _affine(seed: int, width: int = 10):
    generator = np.random.default_rng(seed)
    return 1 + 0.5 * generator.standard_normal(width), 0.3 * generator.standard_normal(width)


def _error(mine, reference) -> float:
    """Largest |mine - reference| over the largest |reference| (or 1, if that is smaller)."""
    mine, reference = np.asarray(mine, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    if mine.shape != reference.shape:
        raise ValueError(f"shape {mine.shape}, expected {reference.shape}")
    return float(np.max(np.abs(mine - reference)) / max(1.0, np.max(np.abs(reference))))


def _run(name: str, cases: dict, answer, reference) -> bool | None:
    """Each case: the reader's answer against the reference; one printed line per case."""
    passed = True
    for case, arguments in cases.items():
        try:
            mine = answer(*arguments)
        except NotImplementedError:
            print(f"{name}: not attempted yet (the function raises NotImplementedError)")
            return None
        except Exception as error:  # the reader's code: any error is a result to report
            print(f"  {case:28s} raised {type(error).__name__}: {error}")
            passed = False
            continue
        expected = reference(*arguments)
        if not isinstance(expected, tuple):
            mine, expected = (mine,), (expected,)
        try:
            error = max(_error(m, e) for m, e in zip(mine, expected, strict=True))
        except ValueError as mismatch:
            print(f"  {case:28s} wrong shape or count: {mismatch}")
            passed = False
            continue
        ok = bool(np.isfinite(error)) and error < TOLERANCE
        print(f"  {case:28s} {'right' if ok else 'wrong'}: largest error {error:.1e}")
        passed = passed and ok
    print(f"{name}: {'every case right' if passed else 'not yet: see the wrong cases above'}")
    return passed


def check_layer_norm(layer_norm) -> bool | None:
    """layer_norm(x, gain, bias, eps) -> y: x a float64 array of rows, each normalized over its
    own n values, y = gain * (x - mean) / sqrt(var + eps) + bias, var the mean squared deviation."""
    gain, bias = _affine(1)
    cases = {
        "random rows": (_rows(0), gain, bias, 1e-5),
        "rows with mean 10^4": (_rows(2, offset=1e4, scale=0.01), gain, bias, 1e-5),
        "a constant row": (np.full((1, 10), 3.0), gain, bias, 1e-5),
    }
    return _run("layer_norm", cases, layer_norm, functional.layer_norm)


def check_layer_norm_backward(layer_norm_backward) -> bool | None:
    """layer_norm_backward(dy, x, gain, eps) -> (dx, dgain, dbias): the gradients of a loss whose
    gradient at y = layer_norm(x, gain, bias, eps) is dy, summed over the rows for dgain and dbias."""
    gain, _ = _affine(1)
    cases = {
        "random rows": (_rows(3), _rows(0), gain, 1e-5),
        "rows with mean 10^4": (_rows(3), _rows(2, offset=1e4, scale=0.01), gain, 1e-5),
    }
    return _run("layer_norm_backward", cases, layer_norm_backward, functional.layer_norm_backward)


def check_rms_norm(rms_norm) -> bool | None:
    """rms_norm(x, gain, eps) -> y = gain * x / sqrt(mean(x^2) + eps), over each row of x."""
    gain, _ = _affine(1)
    cases = {
        "random rows": (_rows(0), gain, 1e-5),
        "rows with mean 3": (_rows(2, offset=3.0), gain, 1e-5),
        "rows of RMS 10^-3": (_rows(4, scale=1e-3), gain, 1e-5),
    }
    return _run("rms_norm", cases, rms_norm, functional.rms_norm)


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
    with torch.no_grad():
        (h, c), _ = cell(x, (h, c))
    return h.numpy(), c.numpy()


def check_lnlstm_step(lnlstm_step) -> bool | None:
    """lnlstm_step(x, h, c, cell) -> (h, c): one step of Ba et al.'s LN-LSTM (supplement Eq. 20-22)
    with the parameters of `cell`, an lnpaper LayerNormLSTMCell: weight_ih (W_x), weight_hh (W_h),
    bias (b), and the LayerNorms norm_hh, norm_ih and norm_c (each with .weight and .bias). The
    4H gate pre-activations are chunked in the order i, f, g, o."""

    def answer(x, h, c, cell):
        with torch.no_grad():
            h, c = lnlstm_step(x, h, c, cell)
        return torch.as_tensor(h).numpy(), torch.as_tensor(c).numpy()

    cases = {f"cell and states {seed}": _lstm_case(seed) for seed in (0, 1)}
    return _run("lnlstm_step", cases, answer, _lstm_reference)


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
    with torch.no_grad():
        return block(x).numpy()


def check_pre_ln_block(pre_ln_block) -> bool | None:
    """pre_ln_block(x, block) -> y: a Pre-LN Transformer block, x + attention(norm(x)), then
    + feed-forward(norm(...)) of that, with the modules of `block` (an lnpaper Block): block.attn,
    block.ffn, and the norms before them, block.attn_in_norm and block.ffn_in_norm."""

    def answer(x, block):
        with torch.no_grad():
            return torch.as_tensor(pre_ln_block(x, block)).numpy()

    cases = {f"block and input {seed}": _block_case(seed) for seed in (0, 1)}
    return _run("pre_ln_block", cases, answer, _block_reference)
