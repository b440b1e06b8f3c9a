"""Input images for the simulated sensor: image files, a natural sample photo, synthetic patterns.

Every image becomes an 8-bit grey level g in 0..255, stored as g / 256 (full scale just under 1).
Values are then dyadic rationals, so an exact simulation is bit-exact in float64 and can be
compared with `==` against the convolution and the exact interpreter.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from core.errors import InputError
from core.files import MB, regular_file
from core.paths import ASSETS

SAMPLE = ASSETS / "scamp5_sample.png"          # the drawn scene as a file (pattern:scene draws it too)
# The default input ("sample"): a photograph shipped with scikit-learn (a dependency), so filters
# meet real texture and edges in every direction; the drawn scene gave planes of almost one colour
# (issue 30).
SAMPLE_PHOTO = "china.jpg"
FULL_SCALE = 256.0
# An image file is scaled down to the array (256 x 256); a camera photo has tens of millions of pixels,
# a decompression bomb (a small PNG of 100,000 x 100,000) billions.
MAX_PIXELS = 64_000_000
IMAGE_FILE_LIMIT = 256 * MB
PATTERNS = ("sample", "gradient", "checker", "rings", "impulse", "noise", "scene")


def grey_levels(path: str | Path, size: int) -> np.ndarray:
    """An image file as size x size uint8 grey levels (converted to grey, resized)."""
    from PIL import Image, UnidentifiedImageError

    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise InputError("image file not found", str(p))
    regular_file(p, "image file", IMAGE_FILE_LIMIT)          # not a FIFO or device, bounded
    too_big = f"at most {MAX_PIXELS // 1_000_000} million pixels are read (it is scaled to the array's size anyway)"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)     # refused below, by size
            with Image.open(p) as im:
                w, h = im.size          # from the header: a decompression bomb is refused before decoding
                if w * h > MAX_PIXELS:
                    raise InputError(f"the image is {w} x {h} pixels; {too_big}", str(p))
                im.load()
                grey = im.convert("L")
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError("image file not found", str(p)) from None
    except Image.DecompressionBombError:
        raise InputError(f"the image has over {2 * (Image.MAX_IMAGE_PIXELS or 0) // 1_000_000} million pixels; "
                         f"{too_big}", str(p)) from None
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise InputError(f"cannot read image: {exc}", str(p)) from None
    if grey.size != (size, size):
        grey = grey.resize((size, size), Image.Resampling.BILINEAR)
    return np.asarray(grey, dtype=np.uint8)


def _photo_path() -> Path | None:
    """scikit-learn's sample photo, found without importing scikit-learn (a second or so)."""
    import importlib.util

    spec = importlib.util.find_spec("sklearn")
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(root) / "datasets" / "images" / SAMPLE_PHOTO
        if path.is_file():
            return path
    return None


def photo(size: int) -> np.ndarray | None:
    """The sample photo as size x size uint8 grey levels: its centre square, converted to grey and
    resized with area averaging; None when scikit-learn or its images are missing."""
    from PIL import Image

    path = _photo_path()
    if path is None:
        return None
    with Image.open(path) as im:
        grey = im.convert("L")
    w, h = grey.size
    side = min(w, h)
    grey = grey.crop(((w - side) // 2, (h - side) // 2, (w - side) // 2 + side, (h - side) // 2 + side))
    return np.asarray(grey.resize((size, size), Image.Resampling.BOX), dtype=np.uint8)


def scene(size: int) -> np.ndarray:
    """A procedurally drawn grey scene (disc, bars, ramp, checker patch, gentle texture) as uint8.

    It is `assets/scamp5_sample.png` and `pattern:scene`: edges in all directions and smooth areas.
    """
    y, x = np.mgrid[0:size, 0:size] / max(size - 1, 1)
    img = 0.25 + 0.35 * x                                   # left-to-right ramp
    img += 0.08 * np.sin(2 * np.pi * 5 * (x + 0.5 * y))     # soft diagonal texture
    disc = (x - 0.32) ** 2 + (y - 0.35) ** 2 < 0.18 ** 2
    img[disc] = 0.92
    ring = np.abs(np.hypot(x - 0.32, y - 0.35) - 0.18) < 0.012
    img[ring] = 0.1
    bars = (y > 0.62) & (y < 0.9) & (x > 0.08) & (x < 0.48) & ((np.floor(x * 40) % 2) == 0)
    img[bars] = 0.05
    check = (x > 0.58) & (x < 0.92) & (y > 0.58) & (y < 0.92)
    img[check] = np.where(((np.floor(x * 16) + np.floor(y * 16)) % 2) == 0, 0.95, 0.15)[check]
    tri = (y > 0.08) & (y < 0.45) & (x > 0.6) & (x - 0.6 < (y - 0.08) * 0.9)
    img[tri] = 0.7
    return np.clip(np.round(img * 255), 0, 255).astype(np.uint8)


def pattern(name: str, size: int, seed: int = 0) -> np.ndarray:
    """A synthetic test pattern as uint8 grey levels."""
    y, x = np.mgrid[0:size, 0:size]
    if name == "gradient":
        g = (x + y) * 255.0 / max(2 * size - 2, 1)
    elif name == "checker":
        g = np.where(((x // 8) + (y // 8)) % 2 == 0, 224, 32)
    elif name == "rings":
        r = np.hypot(x - size / 2, y - size / 2)
        g = 128 + 100 * np.cos(r / 3.0)
    elif name == "impulse":
        g = np.zeros((size, size))
        g[size // 2, size // 2] = 255
    elif name == "noise":
        g = np.random.default_rng(seed).integers(0, 256, (size, size))
    elif name in ("scene", "sample"):
        return scene(size)
    else:
        raise InputError(f"unknown pattern {name!r}; known: {', '.join(PATTERNS)}", "image")
    return np.clip(np.round(g), 0, 255).astype(np.uint8)


def load_input(spec: str, size: int, seed: int = 0) -> tuple[np.ndarray, str]:
    """Grey levels for an image spec: 'sample', 'pattern:<name>' (or a bare pattern name), or a file.

    Returns (uint8 levels, description)."""
    if size < 3 or size > 4096:
        raise InputError(f"array size must be 3..4096, got {size}", "size")
    s = spec.strip()
    if s == "sample":
        levels = photo(size)
        if levels is not None:
            return levels, f"sample photo ({SAMPLE_PHOTO}, scikit-learn)"
        return scene(size), "sample scene (drawn; scikit-learn's sample photo is missing)"
    name = s[len("pattern:"):] if s.startswith("pattern:") else s
    if name in PATTERNS and not Path(s).exists():
        return pattern(name, size, seed), f"synthetic pattern {name}"
    return grey_levels(s, size), f"image file {s}"


def to_values(levels: np.ndarray) -> np.ndarray:
    """Grey levels as register values (full scale 1)."""
    return np.asarray(levels, dtype=float) / FULL_SCALE
