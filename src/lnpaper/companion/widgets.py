"""The switch every chapter's slider demo goes through: live controls in JupyterLab, one static
figure everywhere else.

A demo (`lnpaper.chapters.<chapter>.demos`) is a pure function `update(**params) -> Figure` that
recomputes a small, exact computation and redraws its figure. `show(update, name=(choices,
default), ...)` puts it in a notebook cell: in a live JupyterLab kernel with ipywidgets it shows
one control per parameter wired to `update`; everywhere else (nbval, `make notebooks`, the book,
a venv without ipywidgets) it draws the figure for the defaults, so the stored output is one
picture and one line of text, whatever is installed. `styled` draws a demo in the house style.
"""

import importlib.util
import os

import matplotlib

from lnpaper.companion import style


def live() -> bool:
    """True where `show` should draw controls: LNPAPER_DEMOS=live or static decides; unset, a
    kernel that a Jupyter server started (JupyterLab, Notebook) with ipywidgets importable.

    Detecting the widget frontend itself is not deterministic (nothing answers a widget's comm
    in time), so the test is the environment, which is: jupyter_server gives every kernel it
    starts JPY_SESSION_NAME (the notebook's path), and nbval, nbconvert and nbclient, which run
    `make test`, `make notebooks` and the book's notebooks, start theirs without it. The
    Makefile's notebook targets set LNPAPER_DEMOS=static as well, so even a `make notebooks` run
    from inside Lab stores the static figure.
    """
    mode = os.environ.get("LNPAPER_DEMOS", "")
    if mode in ("static", "live"):
        return mode == "live"
    return "JPY_SESSION_NAME" in os.environ and importlib.util.find_spec("ipywidgets") is not None


def _control(name: str, choices, default):
    """A slider over the listed values, or buttons for a list of words. The figure is redrawn
    when the slider is let go (continuous_update=False), not at every value it passes."""
    import ipywidgets

    if all(isinstance(choice, str) for choice in choices):
        return ipywidgets.ToggleButtons(options=list(choices), value=default, description=name)
    options = [(f"{choice:g}", choice) for choice in choices]
    return ipywidgets.SelectionSlider(
        options=options, value=default, description=name, continuous_update=False
    )


def show(update, **controls):
    """`update`'s figure for each parameter's default, live or static (see `live`).

    `controls` maps each parameter of `update` to (choices, default). Live: the figure, shown
    here, and the controls under it (returned, so the cell shows them); moving one redraws the
    figure in place. Static: one line naming the parameters, and the figure (returned, so the
    cell shows it)."""
    defaults = {name: default for name, (choices, default) in controls.items()}
    for name, (choices, default) in controls.items():
        if default not in choices:
            raise ValueError(f"{name}: default {default!r} is not one of {list(choices)}")
    if live():
        return _live(update, defaults, controls)
    shown = ", ".join(f"{name} {value:g}" if not isinstance(value, str) else f"{name} {value}"
                      for name, value in defaults.items())  # fmt: skip
    line = f"drawn at {shown}; in JupyterLab (make lab) controls redraw it"
    print(line if len(line) <= 88 else line.replace("; ", "\n", 1))  # the book's column: 88
    return update(**defaults)


def _live(update, defaults: dict, controls: dict):
    """`show`'s live form. The figure is a plain output of the cell, replaced in place as a control
    moves (IPython's display_id), not an output inside a widget: a notebook saved and opened
    again keeps it, as last drawn, in any frontend, even one that saved no widget state (where
    JupyterLab then writes "model not found" in the controls' place, and running the cell brings
    them back)."""
    import ipywidgets
    from IPython.display import DisplayHandle, display

    # outside IPython `display` prints the figure and gives no handle: a fresh one prints too
    figure = display(update(**defaults), display_id=True) or DisplayHandle()
    sliders = {name: _control(name, *spec) for name, spec in controls.items()}

    def redraw(_change) -> None:
        figure.update(update(**{name: slider.value for name, slider in sliders.items()}))

    for slider in sliders.values():
        slider.observe(redraw, names="value")
    box = ipywidgets.VBox(list(sliders.values()))
    box.add_class("lnpaper-demo")  # what tests/test_demos.py finds in JupyterLab
    return box


def styled(update):
    """Draw inside the house style, as every figure is (`lnpaper.companion.chapter.figure`)."""
    return matplotlib.rc_context(style.RC_PARAMS)(update)
