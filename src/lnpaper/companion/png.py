"""Figures as PNG files: written without time stamps, and compared with a fresh drawing as pictures.

A committed PNG is compared with a fresh drawing as a picture, within `PNG_TOLERANCE`, not byte
for byte: numpy's SIMD kernels round the last bit of a float differently on another CPU (AVX-512
against AVX2), and that moves the antialiasing of a few pixels by a level.
"""

import shutil
import tempfile
from pathlib import Path

from matplotlib.testing.compare import compare_images
from matplotlib.testing.exceptions import ImageComparisonFailure
from PIL import Image

from lnpaper.companion.style import RC_PARAMS

# How far a redraw may stray from the committed PNG and still be the same figure: the RMS over every
# 0-255 colour value of the picture, as `compare_images` (matplotlib's image tests, pytest-mpl)
# computes it. Measured on our figures (1300 x 720 to 2000 x 1400 px): another CPU's rounding,
# emulated as a one-ulp change to the log axis or to the data, moves 13-25 pixels of prms_estimate
# and 0-2 of batch_dependence by one level, RMS 0.001-0.004; 18 pixels moved by 16 levels give
# 0.04-0.07. The smallest changes that matter: "." turned "," in a panel title 0.41, one marker
# moved by a pixel 0.79-0.85, one digit changed in a title 1.44-3.58, a line moved by a pixel
# 1.8-4.2. 0.1 sits 25 times above the rounding and 4 times below the comma, so the RMS alone
# separates them. It is at most half of one pixel turned from white to black on our largest figure.
PNG_TOLERANCE = 0.1


def save_png(fig, path: Path) -> None:
    """PNG with no software or time stamp in its metadata, so a rerun writes the same bytes."""
    fig.savefig(path, format="png", dpi=RC_PARAMS["savefig.dpi"], metadata={"Software": None})


def png_difference(committed: Path, fresh: Path) -> str | None:
    """None if `fresh` shows what `committed` shows, within PNG_TOLERANCE; otherwise how they differ.

    When they differ, `compare_images` leaves a diff image beside `fresh`: keep `fresh` in a
    scratch folder.
    """
    if committed.read_bytes() == fresh.read_bytes():
        return None
    try:
        result = compare_images(str(committed), str(fresh), PNG_TOLERANCE, in_decorator=True)
    except ImageComparisonFailure:  # raised when the two pictures have different shapes
        return f"its picture is {_shape(committed)}, a fresh drawing's {_shape(fresh)}"
    except (OSError, SyntaxError) as error:  # Pillow's errors for a file that is not a readable PNG
        return f"it cannot be read as a PNG ({error})"
    if result is None:
        return None
    return f"RMS difference {result['rms']:.3f} over 0-255, beyond the tolerance {PNG_TOLERANCE}"


def _shape(path: Path) -> str:
    with Image.open(path) as image:
        return f"{image.width} x {image.height} px {image.mode}"


def write_png_if_changed(fig, path: Path) -> bool:
    """Save `fig` to `path` unless `path` already shows it within PNG_TOLERANCE; True if written.

    A PNG that a redraw matches is left as it is, bytes and time stamp, so `make figures` on a CPU
    that antialiases a few pixels differently leaves git clean.
    """
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch) / path.name
        save_png(fig, fresh)
        if path.exists() and png_difference(path, fresh) is None:
            return False
        shutil.copyfile(fresh, path)
    return True
