"""The notebooks' slider demos (`lnpaper.chapters.<chapter>.demos`): each update function's
numbers and figure, the switch between a static figure and live controls
(`lnpaper.companion.widgets`), and, where JupyterLab and ipywidgets are installed (`make lab`
installs them), the controls in Lab itself: they render, and moving a slider redraws the figure.
`make test`'s venv has neither, so there that last test is skipped with a message."""

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from lnpaper.chapters.ch01_why_batchnorm_fails import demos as ch01_demos
from lnpaper.chapters.ch02_transpose import demos as ch02_demos
from lnpaper.chapters.ch03_layernorm_in_rnns import demos as ch03_demos
from lnpaper.chapters.ch05_invariances import demos as ch05_demos
from lnpaper.chapters.ch05_invariances import invariance
from lnpaper.chapters.ch06_transformer import demos as ch06_demos
from lnpaper.chapters.ch07_rmsnorm_placement import demos as ch07_demos
from lnpaper.chapters.ch09_logits_and_placement import demos as ch09_demos
from lnpaper.companion import style, widgets

ROOT = Path(__file__).resolve().parents[1]

DEMO_NOTEBOOKS = {  # each notebook with a slider, and its chapter's demos module
    "01_why_batchnorm_fails": ch01_demos,
    "02_the_transpose": ch02_demos,
    "03_layernorm_in_rnns": ch03_demos,
    "05_invariances": ch05_demos,
    "06_the_transformer": ch06_demos,
    "07_rmsnorm_and_placement": ch07_demos,
    "09_logits_and_placement": ch09_demos,
}


def demo_cell(notebook: str) -> str:
    """The notebook's `demos.show(...)` call, as its jupytext source holds it."""
    source = (ROOT / "notebooks" / f"{notebook}.py").read_text()
    start = source.index("demos.show(\n")
    return source[start : source.index("\n)\n", start) + 2]


class _Capture:
    """A chapter's demos module with `show` returning what it was given."""

    def __init__(self, demos):
        self.demos = demos

    def __getattr__(self, name):
        return getattr(self.demos, name)

    @staticmethod
    def show(update, **controls):
        return update, controls


# Every demo with the controls its notebook gives it, read from the notebook: the tests below
# exercise the reader's own ranges.
DEMOS = {
    notebook: eval(demo_cell(notebook), {"demos": _Capture(demos)})
    for notebook, demos in DEMO_NOTEBOOKS.items()
}


def test_each_chapters_demos_module_shows_through_the_companions_switch():
    """A notebook calls `demos.show` on its own chapter's module: the one switch, re-exported."""
    for demos in DEMO_NOTEBOOKS.values():
        assert demos.show is widgets.show


def drawn(fig: Figure) -> Figure:
    FigureCanvasAgg(fig).draw()
    return fig


def method_colours_are_the_palettes(fig: Figure) -> int:
    """Every legend entry and every labelled line that names a method has the method's colour."""
    checked = 0
    for ax in fig.axes:
        for line in ax.get_lines():
            method = style.method_of(line.get_label())
            if method is not None:
                assert to_hex(line.get_color()) == style.METHOD_COLORS[method].lower(), (
                    f"{line.get_label()!r} is {line.get_color()}"
                )
                checked += 1
    return checked


# ---- notebook 01: one example in batches of every size --------------------------------------------


def test_batchnorm_moves_image_0_less_in_larger_batches_and_layernorm_not_at_all():
    """The spread of image 0's BatchNorm output over 20 batches falls like 1/sqrt(B) (M1: 0.57 at
    batch 4 over 200 draws); its mean approaches BatchNorm with the whole split's statistics.
    LayerNorm's output is the same in every batch, to the last bit."""
    spreads = {}
    for size in (4, 256):
        outputs = ch01_demos.batch_outputs(size)
        spreads[size] = outputs["BatchNorm"].std(0).mean()
        assert np.ptp(outputs["LayerNorm"], axis=0).max() == 0.0
    assert 0.3 < spreads[4] < 0.8 and spreads[256] < spreads[4] / 4, spreads
    gap = np.abs(ch01_demos.batch_outputs(256)["BatchNorm"].mean(0) - outputs["whole split"]).max()
    assert gap < 0.1, gap


def test_the_batch_figure_says_what_it_shows():
    fig = drawn(ch01_demos.batch_size(batch_size=4))
    assert fig.get_suptitle().startswith("Batch 4: BatchNorm's output moves by sd 0.")
    assert fig.get_suptitle().endswith("LayerNorm's by 0")
    assert fig.axes[0].get_ylim() == (-4.5, 4.5)
    assert method_colours_are_the_palettes(fig) == 2


# ---- notebook 02: the one-pass variance -----------------------------------------------------------


def test_the_two_pass_output_stays_at_float32_rounding_at_every_offset():
    for offset in (0.0, 1.0, 100.0, 1e4):
        errors = ch02_demos.one_pass_errors(offset, 1e-5)
        assert np.all(np.isfinite(errors["two passes"]))
        assert errors["two passes"].max() < 1e-6, (offset, errors["two passes"].max())


def test_the_one_pass_variance_breaks_at_mean_100_and_a_large_eps_hides_it():
    """At mean 100 (float32 spacing of 1e4 about 1e-3, ten times the variance 1e-4) some rows get
    var + eps <= 0 and the rest are off by order 1; an eps of 1e-2, a hundred times the variance,
    hides the error and shrinks the output itself to sqrt(1e-4 / (1e-4 + 1e-2)) = 0.0995."""
    small = ch02_demos.one_pass_errors(100.0, 1e-5)
    lost = ~np.isfinite(small["one pass"])
    assert 0 < lost.sum() < ch02_demos.ONE_PASS_ROWS
    assert np.median(small["one pass"][~lost]) > 0.1
    at_offset_0 = ch02_demos.one_pass_errors(0.0, 1e-5)["one pass"]
    assert np.all(np.isfinite(at_offset_0)) and at_offset_0.max() < 1e-4
    large = ch02_demos.one_pass_errors(100.0, 1e-2)
    assert np.all(np.isfinite(large["one pass"]))
    assert np.median(large["one pass"]) < 0.2
    assert large["exact size"] == pytest.approx(np.sqrt(1e-4 / (1e-4 + 1e-2)), rel=0.05)


def test_the_one_pass_figure_says_what_it_shows():
    fig = drawn(ch02_demos.one_pass_variance(offset=100.0, eps=1e-5))
    title = fig.get_suptitle()
    assert title.startswith("Median row error: one pass ") and "two passes" in title
    assert "no output in" in fig.axes[0].get_title()
    assert method_colours_are_the_palettes(fig) == 2


# ---- notebook 06: depth against the gradient at initialization -----------------------------------


def test_the_depth_demo_reproduces_t1_and_lemma_2_at_24_layers():
    """Post-LN's last W^(2) gets several times Pre-LN's gradient at 24 layers; its stream before
    each second LayerNorm stays near 3d/2, Pre-LN's grows inside Lemma 2's band."""
    post, pre = ch06_demos.depth_run("post", 24), ch06_demos.depth_run("pre", 24)
    assert np.mean(post.grad_norm[0]) > 3 * np.mean(pre.grad_norm[0])
    assert all(abs(v - 1.5) < 0.3 for v in post.residual_sq_norm)
    for layer, value in zip(pre.layers[1:], pre.residual_sq_norm[1:], strict=True):
        assert 1 + layer / 2 <= value <= 1 + 1.5 * layer, (layer, value)


def test_the_depth_demo_leaves_the_notebooks_random_stream_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    ch06_demos.depth_run.__wrapped__("pre", 4)  # uncached: it seeds torch per seed inside
    assert torch.equal(torch.rand(3), expected)


def test_the_depth_figure_keeps_its_axes_and_colours():
    fig = drawn(ch06_demos.depth_gradient(depth=24))
    assert "Post-LN's last" in fig.get_suptitle()
    stream = fig.axes[0]
    assert stream.get_xlim() == (0, 24.5) and stream.get_ylim() == (0, 38)
    assert method_colours_are_the_palettes(fig) == 4  # each placement's stream and seeds


# ---- notebook 05: a transformation of Table 1 ------------------------------------------------------


@pytest.mark.parametrize("transformation", list(ch05_demos.TRANSFORMATIONS))
def test_each_transformation_reproduces_table_1_at_the_papers_eps(transformation):
    """Without eps every normalizer is either unchanged to float64 rounding, as Table 1 (and
    notebook 05's measurement) says, or changed by more than 1e-2; DyT by every transformation."""
    column = ch05_demos.TRANSFORMATIONS[transformation]
    for size in (0.1, 4.0):
        changes = ch05_demos.table_changes(transformation, size, 1e-300)
        for row, change in changes.items():
            expected = invariance.PAPER_TABLE.get(row, {}).get(column, False)
            assert (change < 1e-13) if expected else (change > 1e-2), (row, size, change)


def test_eps_makes_the_rescalings_approximate_and_leaves_the_recentring_exact():
    rescaled = ch05_demos.table_changes("X rescaled", 0.1, 1e-5)
    for row in ("batchnorm", "layernorm", "rmsnorm"):
        assert 1e-4 < rescaled[row] < 1e-1, (row, rescaled[row])
    assert ch05_demos.table_changes("W recentred", 0.1, 1e-5)["layernorm"] < 1e-13


def test_the_table_figure_keeps_one_layout_for_every_choice():
    """The verdicts sit in a margin outside the layout, so the axes do not move as they change."""
    boxes = set()
    for transformation, eps in (("W recentred", 1e-300), ("X rescaled", 1e-5)):
        fig = drawn(ch05_demos.table_1(transformation=transformation, size=0.1, eps=eps))
        boxes.add(tuple(np.round(fig.axes[0].get_position().bounds, 3)))
        texts = [t.get_text() for t in fig.texts if t.get_text() != fig.get_suptitle()]
        assert len(texts) == 5 and texts[-1] == "No"  # DyT: in no source's table
    assert len(boxes) == 1, boxes
    assert texts[0] == "No; paper: Invariant"  # BatchNorm, X rescaled, eps 1e-5


# ---- notebook 03: a tanh RNN's weight scale --------------------------------------------------------


def test_the_rnn_demo_is_rnn_dynamics_at_its_scale():
    """The demo's run is rnn_dynamics' computation: its steps agree with the recorded call's."""
    from lnpaper.chapters.ch03_layernorm_in_rnns import runs

    recorded = runs.rnn_dynamics()
    run = ch03_demos.rnn_run(2.0, 1.0)
    for net in ("tanh RNN", "LN tanh RNN"):
        assert run.hidden_rms[net][2.0] == pytest.approx(
            recorded.hidden_rms[net][2.0][: ch03_demos.RNN_STEPS], rel=1e-9
        )


def test_layernorm_takes_the_scale_out_and_leaves_the_gain_in():
    ln = "LN tanh RNN"
    small, large = ch03_demos.rnn_run(0.5, 1.0), ch03_demos.rnn_run(4.0, 1.0)
    assert small.hidden_rms["tanh RNN"][0.5][-1] < 1e-20  # the plain net dies out at 0.5
    assert large.hidden_rms["tanh RNN"][4.0][-1] > 0.5  # and saturates at 4
    # the same trajectory but for eps, whose tiny difference this net amplifies (notebook 03)
    assert small.hidden_rms[ln][0.5] == pytest.approx(large.hidden_rms[ln][4.0], rel=1e-2)
    low, high = ch03_demos.rnn_run(1.0, 0.5), ch03_demos.rnn_run(1.0, 2.0)
    assert high.sensitivity[ln][1.0][-1] > 1e6 * low.sensitivity[ln][1.0][-1]


def test_the_rnn_figure_says_what_it_shows():
    fig = drawn(ch03_demos.rnn_scale(scale=4.0, gain=1.0))
    assert fig._suptitle.get_text().startswith("Weights × 4: at step 120")
    assert method_colours_are_the_palettes(fig) >= 4


# ---- notebook 07: a shift and a scale of one row ----------------------------------------------------


@pytest.mark.parametrize("scale", [0.5, 2.0, 10.0])
def test_both_norms_ignore_a_scale_and_only_layernorm_a_shift(scale):
    for name in ("LayerNorm", "RMSNorm"):  # exact but for eps = 1e-5 against a variance near 1
        before, after = ch07_demos.row_outputs(0.0, scale)[name]
        assert np.abs(after - before).max() < 1e-4
    before, after = ch07_demos.row_outputs(3.0 * scale, scale)["LayerNorm"]
    assert np.abs(after - before).max() < 1e-4
    before, after = ch07_demos.row_outputs(3.0 * scale, scale)["RMSNorm"]
    assert np.abs(after - before).max() > 0.5


def test_the_row_figure_says_what_it_shows():
    fig = drawn(ch07_demos.row_shift(shift=10.0, scale=1.0))
    title = fig._suptitle.get_text()
    assert (
        title.startswith("$a \\to a + 10$: LayerNorm's output moves by up to ") and "3.50" in title
    )
    assert method_colours_are_the_palettes(fig) == 2


# ---- notebook 09: the learning rate, with and without QK-norm ---------------------------------------


def test_the_qk_demo_offers_the_sweeps_rates_and_reads_its_runs():
    from lnpaper.chapters.ch09_logits_and_placement import analysis

    update, controls = DEMOS["09_logits_and_placement"]
    assert update is ch09_demos.qk_learning_rate
    assert controls["lr"][0] == analysis.WORTSMAN_LRS
    fig = drawn(ch09_demos.qk_learning_rate(lr=1e-1))
    sweep = analysis.qk_sweep()
    peak = max(max(seed) for seed in sweep.runs["no QK-norm"][1e-1]["max_logit"])
    assert fig._suptitle.get_text().startswith(f"lr 0.1: the largest logit reaches {peak:.3g} ")
    assert len(fig.axes[0].get_lines()) == 10  # one line a seed, five seeds, two arms


# ---- every demo: draws at every extreme, and the switch -------------------------------------------


@pytest.mark.parametrize("notebook", list(DEMOS))
def test_each_demo_draws_at_every_extreme(notebook):
    """Each control at its first and last choice, the others at their defaults: a figure, drawn
    without error (how long a redraw takes is a machine's number, not a test's)."""
    update, controls = DEMOS[notebook]
    defaults = {name: default for name, (choices, default) in controls.items()}
    for name, (choices, _) in controls.items():
        for value in (choices[0], choices[-1]):
            assert isinstance(drawn(update(**{**defaults, name: value})), Figure), (name, value)


def test_live_is_decided_by_the_environment(monkeypatch):
    monkeypatch.delenv("LNPAPER_DEMOS", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert not widgets.live()  # nbval, nbconvert: no Jupyter server started this process
    monkeypatch.setenv("JPY_SESSION_NAME", "notebooks/02_the_transpose.ipynb")
    assert widgets.live() == (importlib.util.find_spec("ipywidgets") is not None)
    monkeypatch.setenv("LNPAPER_DEMOS", "static")
    assert not widgets.live()
    monkeypatch.setenv("LNPAPER_DEMOS", "live")
    assert widgets.live()


def test_static_show_prints_one_line_and_returns_the_default_figure(monkeypatch, capsys):
    monkeypatch.setenv("LNPAPER_DEMOS", "static")
    fig = eval(demo_cell("02_the_transpose"), {"demos": ch02_demos})
    assert isinstance(fig, Figure)
    line = capsys.readouterr().out
    assert line == "drawn at offset 100, eps 1e-05; in JupyterLab (make lab) controls redraw it\n"
    with pytest.raises(ValueError, match="is not one of"):
        widgets.show(ch02_demos.one_pass_variance, offset=((0.0, 1.0), 100.0))


@pytest.mark.parametrize("notebook", DEMO_NOTEBOOKS)
def test_each_static_line_fits_the_books_column(notebook, monkeypatch, capsys):
    monkeypatch.setenv("LNPAPER_DEMOS", "static")
    update, controls = DEMOS[notebook]
    widgets.show(lambda **params: None, **controls)  # the line, not the figure
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(len(line) <= 88 for line in lines), lines


def test_live_show_wires_one_control_per_parameter_to_update(monkeypatch):
    pytest.importorskip("ipywidgets", reason="ipywidgets is the read extra's (make lab)")
    monkeypatch.setenv("LNPAPER_DEMOS", "live")
    calls = []

    def update(offset=1.0, eps=1e-5):
        calls.append((offset, eps))

    widget = widgets.show(update, offset=((0.0, 1.0, 10.0), 1.0), eps=((1e-5, 1e-2), 1e-5))
    offset, eps = widget.children[:2]
    assert calls == [(1.0, 1e-5)]
    offset.value = 10.0
    assert calls[-1] == (10.0, 1e-5)
    assert [o[0] for o in eps.options] == ["1e-05", "0.01"]


def test_live_show_puts_the_figure_in_the_cells_outputs_not_in_the_widget(monkeypatch):
    """The figure is a plain output of the cell, replaced in place as a control moves: a notebook
    saved in JupyterLab (which by default saves no widget state) and opened again still shows it."""
    pytest.importorskip("ipywidgets", reason="ipywidgets is the read extra's (make lab)")
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.pylabtools import select_figure_formats

    monkeypatch.setenv("LNPAPER_DEMOS", "live")
    monkeypatch.setattr(InteractiveShell, "_instance", None)  # and none after this test
    shell = InteractiveShell.instance()  # an IPython, as a notebook's kernel runs the cell
    select_figure_formats(shell, {"png"})  # what %matplotlib inline does
    published = []
    monkeypatch.setattr(
        shell.display_pub,
        "publish",
        lambda data, metadata=None, transient=None, update=False, **kwargs: published.append(
            (data, (transient or {}).get("display_id"), update)
        ),
    )
    update, controls = DEMOS["01_why_batchnorm_fails"]
    widget = widgets.show(update, **controls)
    ((data, display_id, updated),) = published
    assert "image/png" in data and display_id and not updated  # the default figure, a plain output
    widget.children[0].value = 64
    (data, same_id, updated) = published[-1]
    assert "image/png" in data and same_id == display_id and updated  # replaced, not added
    state = json.dumps([child.get_state() for child in widget.children], default=str)
    assert "image/png" not in state and "iVBOR" not in state  # no picture inside the widget


# ---- the controls in JupyterLab, as a reader sees them ---------------------------------------------

LAB_PORT_TIMEOUT = 60  # s for Lab to start
LAB_MISSING = [
    name for name in ("jupyterlab", "ipywidgets") if importlib.util.find_spec(name) is None
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _demo_notebook(path: Path) -> None:
    """A notebook of the demos' cells as the notebooks hold them (`demos.show(...)`), each after
    its chapter's import."""
    cells = ["%matplotlib inline"] + [
        f"from {demos.__name__.removesuffix('.demos')} import demos\n{demo_cell(notebook)}"
        for notebook, demos in DEMO_NOTEBOOKS.items()
    ]
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": c,
                "outputs": [],
                "execution_count": None,
            }
            for c in cells
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))


@pytest.mark.skipif(
    bool(LAB_MISSING) or shutil.which("chromium") is None,
    reason=f"the widgets need a live JupyterLab with ipywidgets (missing: {LAB_MISSING or 'none'}; "
    "`make lab` installs them) and chromium (Debian: apt-get install chromium)",
)
def test_the_controls_render_in_lab_and_a_slider_redraws_the_figure(tmp_path):
    """JupyterLab on a notebook of the demos' cells: Run All, then for each demo its controls are
    there and a slider moved by one step (the arrow key, as a reader's keyboard) replaces its
    figure with a different picture. Then the notebook is saved and opened again with no kernel
    running it: each demo's cell still shows the figure it last drew. Screenshots go to
    $LAB_SHOTS when it is set."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    (tmp_path / "work").mkdir()
    _demo_notebook(tmp_path / "work" / "demos.ipynb")
    port, token = _free_port(), "demos-test"
    env = {k: v for k, v in os.environ.items() if k != "LNPAPER_DEMOS"}  # decided as in Lab
    # Lab's settings of this test alone: every cell in the page, not only those scrolled to
    settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp_path / "settings")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
         f"--IdentityProvider.token={token}", "--ServerApp.root_dir", str(tmp_path / "work"),
         *(["--allow-root"] if os.getuid() == 0 else [])],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    shots = Path(os.environ["LAB_SHOTS"]) if "LAB_SHOTS" in os.environ else None
    # a demo's cell: its controls, and the figure among the cell's outputs
    cells = ".jp-NotebookPanel .jp-CodeCell:has(.lnpaper-demo)"
    image_of = (
        f"(k) => document.querySelectorAll('{cells}')[k]"
        "?.querySelector('.jp-OutputArea-output img')?.getAttribute('src')"
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + LAB_PORT_TIMEOUT
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                assert time.time() < deadline, "JupyterLab did not start"
                time.sleep(0.5)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=shutil.which("chromium"), args=["--headless", "--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab/tree/demos.ipynb?reset&token={token}")
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
            page.wait_for_function(
                "() => document.querySelector('.jp-Notebook-ExecutionIndicator')"
                "?.getAttribute('data-status') === 'idle'",
                timeout=90_000,
            )
            select_kernel = page.locator(".jp-Dialog .jp-mod-accept")  # Lab may ask which kernel
            try:
                select_kernel.click(timeout=5_000)
            except PlaywrightTimeout:
                pass
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
            page.get_by_text("Run All Cells", exact=True).click()
            demo_cells = page.locator(cells)
            try:
                page.wait_for_function(
                    f"() => document.querySelectorAll('{cells}').length === {len(DEMOS)}"
                    f" && ({image_of})({len(DEMOS) - 1})",
                    timeout=60_000,
                )
            except Exception:
                if shots:
                    page.screenshot(path=str(shots / "demo_timeout.png"))
                raise
            last_drawn = []
            for k, notebook in enumerate(DEMOS):
                cell = demo_cells.nth(k)
                cell.scroll_into_view_if_needed()
                before = page.evaluate(image_of, k)
                controls = cell.locator(".widget-slider, .widget-toggle-buttons")
                assert controls.count() == len(DEMOS[notebook][1]), notebook
                sliders = cell.locator(".widget-slider .noUi-handle")
                if shots:
                    page.screenshot(path=str(shots / f"demo_{notebook}_before.png"))
                sliders.first.focus()
                page.keyboard.press("ArrowLeft")
                page.wait_for_function(
                    f"([k, src]) => {{ const now = ({image_of})(k); return now && now !== src; }}",
                    arg=[k, before],
                    timeout=30_000,
                )
                if shots:
                    page.screenshot(path=str(shots / f"demo_{notebook}_after.png"))
                buttons = cell.locator(".widget-toggle-button:not(.mod-active)")
                if buttons.count():  # a choice of words: another one redraws too
                    before = page.evaluate(image_of, k)
                    buttons.last.click()
                    page.wait_for_function(
                        f"([k, src]) => {{ const now = ({image_of})(k); "
                        "return now && now !== src; }",
                        arg=[k, before],
                        timeout=30_000,
                    )
                    if shots:
                        page.screenshot(path=str(shots / f"demo_{notebook}_choice.png"))
                assert len(cell.locator(".jp-OutputArea-output img").all()) == 1, notebook
                last_drawn.append(page.evaluate(image_of, k))
            errors = page.locator(
                ".jp-OutputArea-output[data-mime-type*='stderr']", has_text="Error"
            )
            assert errors.count() == 0, errors.first.inner_text()

            # saved, as Lab's autosave does, and opened again with no kernel to run it
            page.locator(".jp-NotebookPanel .jp-Notebook").click()
            page.keyboard.press("Control+s")
            page.wait_for_function(
                "() => !document.querySelector('.jp-NotebookPanel-toolbar .jp-mod-dirty')"
                " && !document.querySelector('.lm-TabBar-tab.jp-mod-dirty')",
                timeout=30_000,
            )
            saved = json.loads((tmp_path / "work" / "demos.ipynb").read_text())
            for cell in saved["cells"]:
                if "demos.show(" in "".join(cell["source"]):
                    pictures = [o for o in cell["outputs"] if "image/png" in o.get("data", {})]
                    assert len(pictures) == 1, "".join(cell["source"])[:60]
            requests = urllib.request.Request(f"{base}/api/sessions?token={token}")
            for session in json.loads(urllib.request.urlopen(requests, timeout=10).read()):
                urllib.request.urlopen(urllib.request.Request(
                    f"{base}/api/sessions/{session['id']}?token={token}", method="DELETE"
                ), timeout=10)  # fmt: skip
            reopened = browser.new_page(viewport={"width": 1400, "height": 1000})
            reopened.goto(f"{base}/lab/tree/demos.ipynb?reset&token={token}")
            reopened.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
            demo_count = sum("demos.show(" in "".join(c["source"]) for c in saved["cells"])
            shown = reopened.evaluate(
                "() => [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell')]"
                ".filter(c => c.querySelector('.jp-InputArea').textContent.includes('demos.show('))"
                ".map(c => c.querySelector('.jp-OutputArea-output img')?.getAttribute('src'))"
            )
            if shots:
                reopened.screenshot(path=str(shots / "demo_reopened.png"), full_page=True)
            assert len(shown) == demo_count == len(DEMOS)
            assert all(shown), "a demo's figure is missing after saving and opening again"
            assert [src.split(",")[-1] for src in shown] == [
                src.split(",")[-1] for src in last_drawn
            ]  # the figure each demo last drew
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
