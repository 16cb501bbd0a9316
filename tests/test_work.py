"""The check's floating-point work (`python -m lnpaper work`, `lnpaper.companion.work`)."""

import json

import torch

from lnpaper.companion import work


def _entry(key, code, seconds):
    return {"key": key, "code": code, "experiment": "x", "made": {"seconds": seconds}}


def test_a_matmul_is_counted_as_two_flops_per_multiply_add():
    a, b = torch.ones(8, 16), torch.ones(16, 4)
    with work.Counter() as counter:
        a @ b
    assert counter.total() == 2 * 8 * 16 * 4


def test_the_counter_runs_through_autograd_grad():
    """Higher-order gradients (the Fisher and geometry experiments) go through `autograd.grad`,
    which torch's FlopCounterMode refuses; the counter counts them."""
    w = torch.ones(4, 4, requires_grad=True)
    x = torch.ones(3, 4)
    with work.Counter() as counter:
        (grad,) = torch.autograd.grad((x @ w).pow(2).sum(), w, create_graph=True)
        grad.sum().backward()
    assert counter.total() >= 2 * 3 * 4 * 4 * 2  # the forward product and its gradient


def test_a_grouped_convolutions_backward_is_bounded_by_its_forward():
    """torch counts a grouped convolution's backward as if it were ungrouped: 4 groups, 4x."""
    conv = torch.nn.Conv2d(8, 8, 3, groups=4)
    x = torch.randn(2, 8, 6, 6, requires_grad=True)
    with work.Counter() as counter:
        conv(x).sum().backward()
    counts = counter.counts
    forward = 2 * 2 * 8 * 4 * 4 * (8 // 4) * 9  # batch, out channels, 4 x 4 outputs, in per group
    assert sum(counts.values()) > 3 * forward  # the raw count, wrong
    assert work._counted(counts) == 3 * forward


def test_the_report_counts_only_entries_whose_code_is_unchanged(tmp_path):
    counts = {"a": {"code": "c1", "flops": 4e12}, "b": {"code": "old", "flops": 1e12}}
    (tmp_path / "flops.json").write_text(json.dumps(counts))
    entries = [_entry("a", "c1", 30.0), _entry("b", "c2", 10.0)]
    lines = work.report_lines(entries, tmp_path / "flops.json", 40.0, 1.0, 2)
    assert "4.0 TFLOP" in lines[0] and "1 of 2 entries (75% of" in lines[0]
    assert "100.0 GFLOP/s per worker" in lines[1]  # 4e12 / 40 s
    assert "66.7 for the 2 together over 1.0 min" in lines[1]


def test_without_counts_the_report_says_the_work_was_not_counted(tmp_path):
    lines = work.report_lines([_entry("a", "c", 1.0)], tmp_path / "none.json", 1.0, 1.0, 1)
    assert lines == [f"- floating-point work: not counted (no {tmp_path / 'none.json'}: "
                     "`python -m lnpaper work`)"]  # fmt: skip
