"""Pictures of a simulated run without Qt: one frame per macro, or every macro in one strip.

Used for exporting a run as an animated GIF, numbered PNGs or a PNG strip (Pillow), from the GUI
or a script. Colour scales are symmetric (blue negative, white 0, red positive) and fixed over the
run so frames are comparable (one limit for all planes, or one per plane), or each plane's own at
each step, as the stepper can show them. As in the stepper, the
registers a macro writes get an orange frame, and its NEWS shifts an arrow in the receiving plane
(sims.scamp5.step_effects).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

import numpy as np
from PIL import Image, ImageDraw

from sims.scamp5 import step_effects
from sims.scamp5.simulator import SimRun, StepRecord

WRITE_RGB = (255, 150, 0)


def diverging(values: np.ndarray, limit: float) -> np.ndarray:
    """Blue (negative) - white (0) - red (positive) RGB uint8 for values in [-limit, limit]."""
    t = np.clip(values / (limit if limit > 0 else 1.0), -1.0, 1.0)
    rgb = np.empty(values.shape + (3,), np.float64)
    pos, neg = np.clip(t, 0, 1), np.clip(-t, 0, 1)
    rgb[..., 0] = 1.0 - neg * 0.85
    rgb[..., 1] = 1.0 - (pos + neg) * 0.8
    rgb[..., 2] = 1.0 - pos * 0.85
    return np.round(rgb * 255).astype(np.uint8)


def robust_limit(planes: Iterable[np.ndarray], quantile: float = 0.995) -> float:
    """One symmetric colour limit for many planes: the largest per-plane 99.5 % quantile of |value|
    (a few extreme PEs, e.g. at the edges, do not wash out the rest); the largest |value| where
    that is 0, and 0 only for planes of zeros. Planes shared between steps are looked at once, and
    on every other row and column."""
    best, peak, seen = 0.0, 0.0, set()
    for p in planes:
        if id(p) in seen:
            continue
        seen.add(id(p))
        sample = np.abs(p[::2, ::2]).ravel()
        if sample.size:
            k = min(sample.size - 1, int(quantile * (sample.size - 1)))
            best = max(best, float(np.partition(sample, k)[k]))
            if not best:
                peak = max(peak, float(np.max(np.abs(p))))
    return best or peak


def shared_limit(run: SimRun, planes: Sequence[str]) -> float:
    """max |value| over the given planes and every step (the shared colour scale)."""
    return max((float(np.max(np.abs(rec.state.values[p]))) for rec in run.records for p in planes), default=1.0) or 1.0


Limit = Union[float, Mapping[str, float], str, None]
"""A colour scale: one limit, a limit per plane, "step" (each plane's own at each step, robust),
"plane" (each plane's own over the run, robust), or None (the largest |value| of all)."""


def _limits(run: SimRun, planes: Sequence[str], difference: bool, limits: Limit,
            step: int = 0) -> dict[str, float]:
    if limits == "step":
        return {p: robust_limit([_plane(run, step, p, difference)]) or 1.0 for p in planes}
    if limits == "plane":
        return {p: robust_limit(_plane(run, i, p, difference) for i in range(len(run.records))) or 1.0
                for p in planes}
    if isinstance(limits, Mapping):
        return {p: float(limits[p]) or 1.0 for p in planes}
    if limits is not None:
        return {p: float(limits) or 1.0 for p in planes}
    if difference:
        lim = max((float(np.max(np.abs(run.records[i].state.values[n] - run.records[i - 1].state.values[n])))
                   for i in range(1, len(run.records)) for n in planes), default=1.0) or 1.0
    else:
        lim = shared_limit(run, planes)
    return {p: lim for p in planes}


def _plane(run: SimRun, step: int, name: str, difference: bool) -> np.ndarray:
    v = run.records[step].state.values[name]
    return v - run.records[max(step - 1, 0)].state.values[name] if difference else v


def _written(run: SimRun, rec: StepRecord) -> tuple[str, ...]:
    return (run.input_register,) if rec.instr is None else step_effects.written(rec.bus_ops)


def _arrow(draw: ImageDraw.ImageDraw, x: int, y: int, size: int, drow: int, dcol: int) -> None:
    """An arrow in the box (x, y, size): pointing where the values went."""
    cx, cy, h = x + size / 2, y + size / 2, size / 2 - 2
    tip = (cx + dcol * h, cy + drow * h)
    back = (cx + dcol * h * 0.1, cy + drow * h * 0.1)
    tail = (cx - dcol * h, cy - drow * h)
    side = (-drow * h * 0.6, dcol * h * 0.6)
    draw.rectangle((x, y, x + size, y + size), fill=WRITE_RGB)
    draw.line((tail, back), fill="black", width=max(2, size // 8))
    draw.polygon((tip, (back[0] + side[0], back[1] + side[1]), (back[0] - side[0], back[1] - side[1])), fill="black")


def _tile(draw: ImageDraw.ImageDraw, img: Image.Image, plane: np.ndarray, limit: float, x: int, y: int, tile: int,
          written: bool, shifts: Sequence[step_effects.Shift]) -> None:
    rgb = Image.fromarray(diverging(plane, limit)).resize((tile, tile), Image.Resampling.NEAREST)
    img.paste(rgb, (x, y))
    if written:
        draw.rectangle((x - 2, y - 2, x + tile + 1, y + tile + 1), outline=WRITE_RGB, width=2)
    size = max(10, tile // 6)
    for k, s in enumerate(shifts):
        _arrow(draw, x + tile - size - 2, y + 2 + k * (size + 2), size, s.drow, s.dcol)


def frame(run: SimRun, step: int, planes: Sequence[str], limit: Limit, tile: int = 128,
          difference: bool = False, columns: int = 4) -> Image.Image:
    """One frame: a labelled grid of the planes after macro `step` (or their change from step-1)."""
    rec = run.records[step]
    limits = _limits(run, planes, difference, limit, step)
    written = _written(run, rec)
    shifts = step_effects.shifts(rec.bus_ops)
    columns = max(1, min(columns, len(planes)))
    rows = -(-len(planes) // columns)
    label_h, head_h, gap = 14, 18, 6
    img = Image.new("RGB", (columns * (tile + gap) + gap, head_h + rows * (tile + label_h + gap) + gap), "white")
    draw = ImageDraw.Draw(img)
    title = f"step {step}/{len(run.records) - 1}: {rec.instr if rec.instr else 'input loaded'}"
    draw.text((gap, 3), title + ("   (change from previous step)" if difference else ""), fill="black")
    for i, name in enumerate(planes):
        x = gap + (i % columns) * (tile + gap)
        y = head_h + (i // columns) * (tile + label_h + gap)
        draw.text((x, y), name + ("  written" if name in written else ""),
                  fill=(200, 100, 0) if name in written else "black")
        _tile(draw, img, _plane(run, step, name, difference), limits[name], x, y + label_h, tile,
              name in written, [s for s in shifts if s.dest == name])
    return img


def strip(run: SimRun, planes: Sequence[str], tile: int = 64, difference: bool = False,
          limit: Limit = None, label_w: int = 190) -> Image.Image:
    """Every step in one image: a row per step (its instruction on the left), a column per plane."""
    fixed = None if limit == "step" else _limits(run, planes, difference, limit)
    gap, head_h = 4, 16
    n = len(run.records)
    img = Image.new("RGB", (label_w + len(planes) * (tile + gap) + gap, head_h + n * (tile + gap) + gap), "white")
    draw = ImageDraw.Draw(img)
    for j, name in enumerate(planes):
        draw.text((label_w + gap + j * (tile + gap), 2), name, fill="black")
    for i, rec in enumerate(run.records):
        y = head_h + i * (tile + gap)
        written = _written(run, rec)
        shifts = step_effects.shifts(rec.bus_ops)
        limits = fixed or _limits(run, planes, difference, limit, i)
        draw.text((4, y + tile // 2 - 6), f"{i:>3}  {rec.instr if rec.instr else 'input'}", fill="black")
        for j, name in enumerate(planes):
            _tile(draw, img, _plane(run, i, name, difference), limits[name], label_w + gap + j * (tile + gap), y,
                  tile, name in written, [s for s in shifts if s.dest == name])
    return img


def _png_bytes(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def export_strip(run: SimRun, path: str | Path, planes: Sequence[str], tile: int = 64, difference: bool = False,
                 limit: Limit = None) -> Path:
    """Write the whole run as one PNG (see `strip`). Returns the file written."""
    from core.atomic import atomic_write_bytes

    p = Path(path)
    atomic_write_bytes(p, _png_bytes(strip(run, planes, tile, difference, limit)))
    return p


def export_frames(run: SimRun, path: str | Path, planes: Sequence[str], tile: int = 128,
                  difference: bool = False, ms_per_frame: int = 500, limit: Limit = None) -> list[Path]:
    """Write the run as an animated GIF (path ends in .gif) or as numbered PNGs (a folder or a
    'name.png' stem: name_000.png, name_001.png, ...). Returns the files written."""
    from core.atomic import atomic_write_bytes

    p = Path(path)
    fixed = limit if limit == "step" else _limits(run, planes, difference, limit)
    frames = [frame(run, i, planes, fixed, tile, difference) for i in range(len(run.records))]
    if p.suffix.lower() == ".gif":
        buf = io.BytesIO()
        frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=ms_per_frame, loop=0)
        atomic_write_bytes(p, buf.getvalue())
        return [p]
    if p.suffix.lower() == ".png":
        folder, stem = p.parent, p.stem
    else:
        folder, stem = p, "step"
        folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, f in enumerate(frames):
        target = folder / f"{stem}_{i:03d}.png"
        atomic_write_bytes(target, _png_bytes(f))
        out.append(target)
    return out
