"""The exercises' checks (`lnpaper.exercises`): a solution passes every case; each known slip,
written as a reader would write it in torch, fails, and the check names the slip and the outputs
it makes wrong; a wrong number of outputs is told what to return; an unattempted exercise is
reported as such."""

import pytest
import torch

from lnpaper import exercise_solutions as solutions
from lnpaper import exercises

CHECKS = {
    "layer_norm": exercises.check_layer_norm,
    "layer_norm_backward": exercises.check_layer_norm_backward,
    "rms_norm": exercises.check_rms_norm,
    "lnlstm_step": exercises.check_lnlstm_step,
    "pre_ln_block": exercises.check_pre_ln_block,
}


# LayerNorm, as a reader would get it wrong


def ln_bessel(x, gain, bias, eps=1e-5):  # torch.var divides by H - 1 unless told otherwise
    mean = torch.mean(x, dim=-1, keepdim=True)
    return gain * (x - mean) / torch.sqrt(torch.var(x, dim=-1, keepdim=True) + eps) + bias


def ln_wrong_axis(x, gain, bias, eps=1e-5):  # BatchNorm's statistics, over the examples
    mean = torch.mean(x, dim=0, keepdim=True)
    variance = torch.mean((x - mean) ** 2, dim=0, keepdim=True)
    return gain * (x - mean) / torch.sqrt(variance + eps) + bias


def ln_eps_missing(x, gain, bias, eps=1e-5):
    mean = torch.mean(x, dim=-1, keepdim=True)
    std = torch.sqrt(torch.mean((x - mean) ** 2, dim=-1, keepdim=True))
    return gain * (x - mean) / std + bias


def ln_eps_outside(x, gain, bias, eps=1e-5):
    mean = torch.mean(x, dim=-1, keepdim=True)
    std = torch.sqrt(torch.mean((x - mean) ** 2, dim=-1, keepdim=True))
    return gain * (x - mean) / (std + eps) + bias


def ln_gain_first(x, gain, bias, eps=1e-5):
    x = gain * x
    mean = torch.mean(x, dim=-1, keepdim=True)
    variance = torch.mean((x - mean) ** 2, dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + eps) + bias


def ln_one_pass(x, gain, bias, eps=1e-5):  # E[x^2] - E[x]^2: right in exact arithmetic only
    mean = x.mean(-1, keepdim=True)
    variance = (x**2).mean(-1, keepdim=True) - mean**2
    return gain * (x - mean) / torch.sqrt(variance + eps) + bias


# its backward pass


def backward(dy, x, gain, eps=1e-5, *, dim=-1, correction=0, eps_at="inside", project=True,
             sums=0):  # fmt: skip
    """The solution's backward pass, with the switch a slip turns."""
    centered = x - torch.mean(x, dim=dim, keepdim=True)
    variance = torch.var(x, dim=dim, keepdim=True, correction=correction)
    std = {
        "inside": torch.sqrt(variance + eps),
        "outside": torch.sqrt(variance) + eps,
        "missing": torch.sqrt(variance),
    }[eps_at]
    x_hat, dx_hat = centered / std, dy * gain
    if project:
        dx_hat = (dx_hat - dx_hat.mean(dim=dim, keepdim=True)
                  - x_hat * (dx_hat * x_hat).mean(dim=dim, keepdim=True))  # fmt: skip
    return dx_hat / std, (dy * x_hat).sum(dim=sums), dy.sum(dim=sums)


def backward_bessel(dy, x, gain, eps=1e-5):
    return backward(dy, x, gain, eps, correction=1)


def backward_wrong_axis(dy, x, gain, eps=1e-5):
    return backward(dy, x, gain, eps, dim=0)


def backward_eps_missing(dy, x, gain, eps=1e-5):
    return backward(dy, x, gain, eps, eps_at="missing")


def backward_eps_outside(dy, x, gain, eps=1e-5):
    return backward(dy, x, gain, eps, eps_at="outside")


def backward_constant_statistics(dy, x, gain, eps=1e-5):  # as if mean and variance were constants
    return backward(dy, x, gain, eps, project=False)


def backward_summed_over_features(dy, x, gain, eps=1e-5):
    return backward(dy, x, gain, eps, sums=-1)


# RMSNorm


def rms_mean_subtracted(x, gain, eps=1e-5):
    centered = x - torch.mean(x, dim=-1, keepdim=True)
    return gain * centered / torch.sqrt(torch.mean(centered**2, dim=-1, keepdim=True) + eps)


def rms_wrong_axis(x, gain, eps=1e-5):
    return gain * x / torch.sqrt(torch.mean(x**2, dim=0, keepdim=True) + eps)


def rms_eps_missing(x, gain, eps=1e-5):
    return gain * x / torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True))


def rms_eps_outside(x, gain, eps=1e-5):  # x / (RMS + eps), the authors' own code
    return gain * x / (torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True)) + eps)


def rms_gain_first(x, gain, eps=1e-5):
    x = gain * x
    return x / torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True) + eps)


# the LN-LSTM step


def lstm_one_norm(x, h, c, cell):  # one LayerNorm over the sum
    gates = cell.norm_hh(h @ cell.weight_hh.T + x @ cell.weight_ih.T) + cell.bias
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cell.norm_c(c)), c


def lstm_one_norm_of_the_input(x, h, c, cell):  # the same, with the input term's norm
    gates = cell.norm_ih(h @ cell.weight_hh.T + x @ cell.weight_ih.T) + cell.bias
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cell.norm_c(c)), c


def lstm_papers_gate_order(x, h, c, cell):  # Eq. 20 stacks [f; i; o; g]
    gates = cell.norm_hh(h @ cell.weight_hh.T) + cell.norm_ih(x @ cell.weight_ih.T) + cell.bias
    f, i, o, g = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cell.norm_c(c)), c


def lstm_plain_cell_output(x, h, c, cell):  # forgets Eq. 22's LN on c_t
    gates = cell.norm_hh(h @ cell.weight_hh.T) + cell.norm_ih(x @ cell.weight_ih.T) + cell.bias
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def lstm_normalized_cell(x, h, c, cell):  # carries LN(c_t) to the next step
    gates = cell.norm_hh(h @ cell.weight_hh.T) + cell.norm_ih(x @ cell.weight_ih.T) + cell.bias
    i, f, g, o = gates.chunk(4, dim=1)
    c = cell.norm_c(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))
    return torch.sigmoid(o) * torch.tanh(c), c


# the Pre-LN block


def block_post_ln(x, block):  # the norm after the residual sum
    x = block.attn_in_norm(x + block.attn(x))
    return block.ffn_in_norm(x + block.ffn(x))


def block_no_attention_norm(x, block):
    x = x + block.attn(x)
    return x + block.ffn(block.ffn_in_norm(x))


def block_no_feed_forward_norm(x, block):
    x = x + block.attn(block.attn_in_norm(x))
    return x + block.ffn(x)


def block_one_norm(x, block):
    x = x + block.attn(block.attn_in_norm(x))
    return x + block.ffn(block.attn_in_norm(x))


def block_residual_after_norm(x, block):
    x = block.attn_in_norm(x)
    x = x + block.attn(x)
    x = block.ffn_in_norm(x)
    return x + block.ffn(x)


# check, the reader's slip, the outputs it makes wrong, the name the check gives it
SLIPS = [
    ("layer_norm", ln_bessel, "y", "Bessel's correction"),
    ("layer_norm", ln_wrong_axis, "y", "the wrong axis"),
    ("layer_norm", ln_eps_missing, "y", "eps missing"),
    ("layer_norm", ln_eps_outside, "y", "eps outside the square root"),
    ("layer_norm", ln_gain_first, "y", "the gain applied before normalizing"),
    ("layer_norm_backward", backward_bessel, "dx, dgain", "Bessel's correction"),
    ("layer_norm_backward", backward_wrong_axis, "dx, dgain", "the wrong axis"),
    ("layer_norm_backward", backward_eps_missing, "dx, dgain", "eps missing"),
    ("layer_norm_backward", backward_eps_outside, "dx, dgain", "eps outside the square root"),
    ("layer_norm_backward", backward_constant_statistics, "dx",
     "the mean and variance taken as constants"),
    ("layer_norm_backward", backward_summed_over_features, "dgain, dbias",
     "dgain and dbias summed over the features"),
    ("rms_norm", rms_mean_subtracted, "y", "subtracting the mean"),
    ("rms_norm", rms_wrong_axis, "y", "the wrong axis"),
    ("rms_norm", rms_eps_missing, "y", "eps missing"),
    ("rms_norm", rms_eps_outside, "y", "eps outside the square root"),
    ("rms_norm", rms_gain_first, "y", "the gain applied before normalizing"),
    ("lnlstm_step", lstm_one_norm, "h, c", "one norm on the sum of the input and recurrent"),
    ("lnlstm_step", lstm_one_norm_of_the_input, "h, c",
     "one norm on the sum of the input and recurrent"),
    ("lnlstm_step", lstm_papers_gate_order, "h, c", "the gates chunked in the paper's order"),
    ("lnlstm_step", lstm_plain_cell_output, "h", "Eq. 22 without its LayerNorm on c_t"),
    ("lnlstm_step", lstm_normalized_cell, "c", "c_t normalized in the recurrence"),
    ("pre_ln_block", block_post_ln, "the block's output", "Post-LN for Pre-LN"),
    ("pre_ln_block", block_no_attention_norm, "the block's output",
     "a missing norm before the attention"),
    ("pre_ln_block", block_no_feed_forward_norm, "the block's output",
     "a missing norm before the feed-forward"),
    ("pre_ln_block", block_one_norm, "the block's output", "one norm for both sublayers"),
    ("pre_ln_block", block_residual_after_norm, "the block's output",
     "the residual stream taken after the norm"),
]  # fmt: skip

OUTPUTS = {
    "layer_norm": ["y"],
    "layer_norm_backward": ["dx", "dgain", "dbias"],
    "rms_norm": ["y"],
    "lnlstm_step": ["h", "c"],
    "pre_ln_block": ["the block's output"],
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_the_packages_solution_passes_every_case(name, capsys):
    assert CHECKS[name](getattr(solutions, name)) is True
    output = capsys.readouterr().out
    assert output.endswith(f"{name}: every case right\n")
    assert " wrong:" not in output and "this matches" not in output


@pytest.mark.parametrize(
    ("name", "slip", "wrong", "named"), SLIPS, ids=[slip.__name__ for _, slip, _, _ in SLIPS]
)
def test_a_slip_fails_and_is_named_with_the_outputs_it_makes_wrong(
    name, slip, wrong, named, capsys
):
    assert CHECKS[name](slip) is False
    output = capsys.readouterr().out
    matches = [line for line in output.splitlines() if "this matches" in line]
    assert len(matches) == 1, output  # this slip, and no other
    assert matches[0].startswith(f"  {wrong}: this matches {named}"), output
    case_lines = [line for line in output.splitlines() if " wrong: " in line]
    assert case_lines, output
    right = [o for o in OUTPUTS[name] if o not in wrong.split(", ")]
    for line in case_lines:  # each wrong case names its wrong outputs, and no right one as wrong
        verdicts = line.split(" wrong: ", 1)[1]
        assert all(verdicts.count(f"{o} off by") + verdicts.count(f"{o} has") for o in
                   wrong.split(", ")), line  # fmt: skip
        assert all(f"{o} off by" not in verdicts and f"{o} has" not in verdicts for o in right)


def test_an_output_that_no_slip_explains_is_wrong_without_a_name(capsys):
    def doubled(x, gain, bias, eps=1e-5):
        return 2 * solutions.layer_norm(x, gain, bias, eps)

    assert exercises.check_layer_norm(doubled) is False
    output = capsys.readouterr().out
    assert "wrong: y off by up to" in output and "this matches" not in output


@pytest.mark.parametrize(
    ("name", "answer", "message"),
    [
        ("layer_norm_backward", lambda dy, x, gain, eps=1e-5: solutions.layer_norm_backward(
            dy, x, gain, eps)[0], "return (dx, dgain, dbias); got 1 tensor"),
        ("layer_norm_backward", lambda dy, x, gain, eps=1e-5: solutions.layer_norm_backward(
            dy, x, gain, eps)[:2], "return (dx, dgain, dbias); got a tuple of 2"),
        ("lnlstm_step", lambda x, h, c, cell: solutions.lnlstm_step(x, h, c, cell)[0],
         "return (h, c); got 1 tensor"),
        ("pre_ln_block", lambda x, block: (solutions.pre_ln_block(x, block), x),
         "return y, one tensor; got a tuple of 2"),
        ("layer_norm", lambda x, gain, bias, eps=1e-5: None,
         "return y, one tensor; got None"),
    ],
    ids=["dx alone", "two of three", "h alone", "a tuple for one", "no return"],
)  # fmt: skip
def test_a_wrong_number_of_outputs_is_told_what_to_return(name, answer, message, capsys):
    assert CHECKS[name](answer) is False
    output = capsys.readouterr().out
    assert message in output
    assert "shape" not in output and "this matches" not in output


def test_a_wrong_shape_is_named_by_output(capsys):
    def unsummed(dy, x, gain, eps=1e-5):
        dx, _, _ = solutions.layer_norm_backward(dy, x, gain, eps)
        x_hat = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True, correction=0)
                                                            + eps)  # fmt: skip
        return dx, dy * x_hat, dy

    assert exercises.check_layer_norm_backward(unsummed) is False
    output = capsys.readouterr().out
    assert "dgain has shape (4, 10), expected (10,), dbias has shape (4, 10), expected (10,)" in (
        output
    )
    assert "dx right" in output


def test_the_cases_are_float64_tensors_and_an_answer_may_be_a_numpy_array(capsys):
    seen = []

    def as_numpy(x, gain, bias, eps=1e-5):
        seen.extend((x, gain, bias))
        return solutions.layer_norm(x, gain, bias, eps).numpy()

    assert exercises.check_layer_norm(as_numpy) is True
    assert all(isinstance(t, torch.Tensor) and t.dtype == torch.float64 for t in seen)


def test_an_answer_that_works_in_place_is_checked_against_its_own_inputs(capsys):
    def in_place(x, gain, bias, eps=1e-5):
        x -= torch.mean(x, dim=-1, keepdim=True)
        x /= torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True) + eps)
        return x.mul_(gain).add_(bias)

    assert exercises.check_layer_norm(in_place) is True


def test_float32_is_wrong_and_said_to_be(capsys):
    def single(x, gain, bias, eps=1e-5):
        return solutions.layer_norm(x.float(), gain.float(), bias.float(), eps)

    assert exercises.check_layer_norm(single) is False
    assert "returned in float32" in capsys.readouterr().out


def errors(output: str) -> dict:
    """case -> largest error, from a one-output check's printed lines."""
    found = {}
    for line in output.splitlines():
        if "largest error" in line or "off by up to" in line:
            case = line.split(" right:")[0].split(" wrong:")[0].strip()
            found[case] = float(line.rsplit(" ", 1)[1])
    return found


def test_the_one_pass_variance_fails_only_where_the_offset_is_large(capsys):
    assert exercises.check_layer_norm(ln_one_pass) is False
    found = errors(capsys.readouterr().out)
    assert found["rows with mean 10^4"] > 1e-6
    assert found["random rows"] < 1e-12 and found["a constant row"] < 1e-12


def test_eps_outside_the_square_root_is_off_by_parts_in_a_million_and_by_far_more_near_zero(capsys):
    exercises.check_rms_norm(rms_eps_outside)
    found = errors(capsys.readouterr().out)
    assert 1e-7 < found["random rows"] < 1e-4 and found["rows of RMS 10^-3"] > 0.1


def test_an_unattempted_exercise_is_reported_and_an_error_is_a_wrong_answer(capsys):
    def not_yet(*arguments):
        raise NotImplementedError

    def raises(x, gain, bias, eps=1e-5):
        raise KeyError("oops")

    assert exercises.check_layer_norm(not_yet) is None
    assert (
        capsys.readouterr().out
        == "layer_norm: not attempted yet (the function raises NotImplementedError)\n"
    )
    assert exercises.check_layer_norm(raises) is False
    assert "raised KeyError" in capsys.readouterr().out


def test_a_check_leaves_the_notebooks_random_stream_alone():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    exercises.check_lnlstm_step(solutions.lnlstm_step)
    exercises.check_pre_ln_block(solutions.pre_ln_block)
    assert torch.equal(torch.rand(3), expected)
