"""Pictures of a simulated run without Qt: one frame per macro, all register planes side by side.

Used for exporting a run as an image sequence or an animated GIF (Pillow), from the GUI or a
script. Every frame uses one shared, symmetric colour scale so frames are comparable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
from PIL import Image, ImageDraw

from sims.scamp5.simulator import SimRun


def diverging(values: np.ndarray, limit: float) -> np.ndarray:
    """Blue (negative) - white (0) - red (positive) RGB uint8 for values in [-limit, limit]."""
    t = np.clip(values / (limit if limit > 0 else 1.0), -1.0, 1.0)
    rgb = np.empty(values.shape + (3,), np.float64)
    pos, neg = np.clip(t, 0, 1), np.clip(-t, 0, 1)
    rgb[..., 0] = 1.0 - neg * 0.85
    rgb[..., 1] = 1.0 - (pos + neg) * 0.8
    rgb[..., 2] = 1.0 - pos * 0.85
    return np.round(rgb * 255).astype(np.uint8)


def shared_limit(run: SimRun, planes: Sequence[str]) -> float:
    """max |value| over the given planes and every step (the shared colour scale)."""
    return max((float(np.max(np.abs(rec.state.values[p]))) for rec in run.records for p in planes), default=1.0) or 1.0


def frame(run: SimRun, step: int, planes: Sequence[str], limit: float, tile: int = 128,
          difference: bool = False, columns: int = 4) -> Image.Image:
    """One frame: a labelled grid of the planes after macro `step` (or their change from step-1)."""
    rec = run.records[step]
    prev = run.records[max(step - 1, 0)]
    rows = -(-len(planes) // columns)
    label_h = 14
    head_h = 18
    img = Image.new("RGB", (columns * (tile + 4) + 4, head_h + rows * (tile + label_h + 4) + 4), "white")
    draw = ImageDraw.Draw(img)
    title = f"step {step}/{len(run.records) - 1}: {rec.instr if rec.instr else 'input loaded'}"
    draw.text((4, 3), title + ("   (change from previous step)" if difference else ""), fill="black")
    for i, name in enumerate(planes):
        v = rec.state.values[name]
        if difference:
            v = v - prev.state.values[name]
        rgb = Image.fromarray(diverging(v, limit)).resize((tile, tile), Image.Resampling.NEAREST)
        x = 4 + (i % columns) * (tile + 4)
        y = head_h + (i // columns) * (tile + label_h + 4)
        draw.text((x, y), name, fill="black")
        img.paste(rgb, (x, y + label_h))
    return img


def export_frames(run: SimRun, path: str | Path, planes: Sequence[str], tile: int = 128,
                  difference: bool = False, ms_per_frame: int = 500) -> list[Path]:
    """Write the run as an animated GIF (path ends in .gif) or as numbered PNGs (a folder or a
    'name.png' stem: name_000.png, name_001.png, ...). Returns the files written."""
    from core.atomic import atomic_write_bytes
    import io

    p = Path(path)
    limit = shared_limit(run, planes)
    if difference:
        limit = max((float(np.max(np.abs(run.records[i].state.values[n] - run.records[i - 1].state.values[n])))
                     for i in range(1, len(run.records)) for n in planes), default=1.0) or 1.0
    frames = [frame(run, i, planes, limit, tile, difference) for i in range(len(run.records))]
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
        buf = io.BytesIO()
        f.save(buf, format="PNG")
        target = folder / f"{stem}_{i:03d}.png"
        atomic_write_bytes(target, buf.getvalue())
        out.append(target)
    return out
