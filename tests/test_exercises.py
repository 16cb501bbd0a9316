"""The exercises' checks (`lnpaper.exercises`): a solution passes every case, a usual slip fails
the case made to catch it, and an unattempted exercise is reported as such."""

import numpy as np
import pytest
import torch

from lnpaper import exercise_solutions as solutions
from lnpaper import exercises


def one_pass_layer_norm(x, gain, bias, eps=1e-5):  # E[x^2] - E[x]^2
    mean = x.mean(-1, keepdims=True)
    variance = (x**2).mean(-1, keepdims=True) - mean**2
    return gain * (x - mean) / np.sqrt(variance + eps) + bias


def unbiased_layer_norm(x, gain, bias, eps=1e-5):  # the sample variance, n - 1
    mean = x.mean(-1, keepdims=True)
    return gain * (x - mean) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + eps) + bias


def backward_without_projection(dy, x, gain, eps=1e-5):  # as if mean and variance were constants
    mean = x.mean(-1, keepdims=True)
    inv_std = 1 / np.sqrt(x.var(-1, keepdims=True) + eps)
    return dy * gain * inv_std, (dy * (x - mean) * inv_std).sum(0), dy.sum(0)


def rms_norm_eps_outside(x, gain, eps=1e-5):  # x / (RMS + eps), the authors' own code
    return gain * x / (np.sqrt((x**2).mean(-1, keepdims=True)) + eps)


def lnlstm_step_plain_cell_output(x, h, c, cell):  # forgets Eq. 22's LN on c_t
    gates = cell.norm_hh(h @ cell.weight_hh.T) + cell.norm_ih(x @ cell.weight_ih.T) + cell.bias
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def lnlstm_step_one_norm(x, h, c, cell):  # one LayerNorm over the sum, as BatchNorm papers do not
    gates = cell.norm_hh(h @ cell.weight_hh.T + x @ cell.weight_ih.T) + cell.bias
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cell.norm_c(c)), c


def post_ln_block(x, block):  # the norm after the residual sum
    x = block.attn_in_norm(x + block.attn(x))
    return block.ffn_in_norm(x + block.ffn(x))


CHECKS = {
    "layer_norm": (exercises.check_layer_norm, [one_pass_layer_norm, unbiased_layer_norm]),
    "layer_norm_backward": (exercises.check_layer_norm_backward, [backward_without_projection]),
    "rms_norm": (exercises.check_rms_norm, [rms_norm_eps_outside]),
    "lnlstm_step": (exercises.check_lnlstm_step,
                    [lnlstm_step_plain_cell_output, lnlstm_step_one_norm]),
    "pre_ln_block": (exercises.check_pre_ln_block, [post_ln_block]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CHECKS))
def test_a_solution_passes_and_a_slip_fails(name, capsys):
    check, wrong = CHECKS[name]
    assert check(getattr(solutions, name)) is True
    assert capsys.readouterr().out.endswith(f"{name}: every case right\n")
    for attempt in wrong:
        assert check(attempt) is False, attempt.__name__
        assert " wrong: largest error " in capsys.readouterr().out


def errors(output: str) -> dict:
    """case -> largest error, from a check's printed lines."""
    found = {}
    for line in output.splitlines():
        if "largest error" in line:
            case = line.split(" right:")[0].split(" wrong:")[0].strip()
            found[case] = float(line.rsplit(" ", 1)[1])
    return found


def test_the_one_pass_variance_fails_only_where_the_offset_is_large(capsys):
    exercises.check_layer_norm(one_pass_layer_norm)
    found = errors(capsys.readouterr().out)
    assert found["rows with mean 10^4"] > 1e-6
    assert found["random rows"] < 1e-12 and found["a constant row"] < 1e-12


def test_eps_outside_the_square_root_is_off_by_parts_in_a_million_and_by_far_more_near_zero(capsys):
    exercises.check_rms_norm(rms_norm_eps_outside)
    found = errors(capsys.readouterr().out)
    assert 1e-7 < found["random rows"] < 1e-4 and found["rows of RMS 10^-3"] > 0.1


def test_an_unattempted_exercise_is_reported_and_an_error_is_a_wrong_answer(capsys):
    def not_yet(*arguments):
        raise NotImplementedError

    def broken(x, gain, bias, eps=1e-5):
        return x.reshape(-1)  # the wrong shape

    def raises(x, gain, bias, eps=1e-5):
        raise KeyError("oops")

    assert exercises.check_layer_norm(not_yet) is None
    assert (
        capsys.readouterr().out
        == "layer_norm: not attempted yet (the function raises NotImplementedError)\n"
    )
    assert exercises.check_layer_norm(broken) is False
    assert "wrong shape or count" in capsys.readouterr().out
    assert exercises.check_layer_norm(raises) is False
    assert "raised KeyError" in capsys.readouterr().out


def test_a_check_leaves_the_notebooks_random_stream_alone():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    exercises.check_lnlstm_step(solutions.lnlstm_step)
    exercises.check_pre_ln_block(solutions.pre_ln_block)
    assert torch.equal(torch.rand(3), expected)
