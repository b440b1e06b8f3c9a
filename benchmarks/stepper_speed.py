"""How fast the SCAMP-5 stepper steps and plays, in the real window (offscreen).

The window is opened at 1920x1080 in its default layout; "Step through" simulates Cain's published
AnalogNet2 program (21 macros) on the 256x256 array and loads it into the stepper. Then:
- the first pass forwards over the program, right after loading: every step is new, so its images
  and colour limits are computed (`cold`);
- one step = `set_step(i)` plus the event processing that paints it (Qt paints what changed),
  forwards and backwards over the program several times: median and p95 ms of wall time (target
  < 16 ms), and of the UI thread's CPU time (less sensitive to other jobs on a shared machine);
- a breakdown of a step's CPU time, from more passes with an event filter that notes when each
  widget starts painting: `set_step` itself (state lookup, colour limits, images, badges, the
  inspector's data, the lists' items) and the paint of each part (planes canvas, PE inspector,
  program listing, bus operations, planes list, the rest); and the image cache's hits and misses;
- Play asks for 30 and 50 instr/s (looping) for a few seconds each: the achieved rate counts the
  steps shown per second of wall time (target: 30 reached);
- "Step through" itself (simulate + load + first paint), and the screen pixels per PE of the grid.

Prints a summary, or one JSON object with --json. Times vary with the machine's load; run it on a
quiet machine for figures to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TABLE2 = str(REPO / "assets/programs/analognet2_cain_table2.txt")


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passes", type=_positive(int), default=10,
                    help="forward+backward passes over the program (default 10)")
    ap.add_argument("--play-seconds", type=_positive(float), default=4.0, help="seconds of Play per rate (default 4)")
    ap.add_argument("--size", type=_size, default="1920x1080", help="window size WIDTHxHEIGHT (default 1920x1080)")
    ap.add_argument("--scale", choices=("step", "plane", "shared"), default="step",
                    help="colour scale: each plane's own at each step (the stepper's default), over the run, or shared")
    ap.add_argument("--change", action="store_true", help="show each plane's change from the previous step")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer

    from gui.app import make_app
    from gui.main_window import MainWindow

    app = make_app()
    win = MainWindow(restore_layout=False)
    w, h = a.size
    win.resize(w, h)
    win.show()
    win.set_current_engine("simulate")
    panel = win.panels["simulate"]
    win.project.replace_settings("simulate", {**win.project.settings("simulate"), "program_source": "file",
                                              "program_file": TABLE2, "noise": 0.0})
    settle = time.monotonic() + 0.5
    while time.monotonic() < settle:
        app.processEvents()
    t0 = time.perf_counter()
    ok = panel.step_through_settings()
    app.processEvents()
    step_through_ms = (time.perf_counter() - t0) * 1000
    assert ok, "Step through failed"
    st = panel.stepper
    st.set_scale_mode(a.scale)
    st.diff_box.setChecked(a.change)
    for _ in range(10):
        app.processEvents()
    px_per_pe = st.canvas.fit_pixels_per_pe()

    def timed_step(i: int) -> tuple[float, float]:
        t, c = time.perf_counter(), time.thread_time()
        st.set_step(i)
        app.processEvents()
        return (time.perf_counter() - t) * 1000, (time.thread_time() - c) * 1000

    cold = [timed_step(i)[0] for i in range(1, st.steps + 1)]
    order = list(range(1, st.steps + 1)) + list(range(st.steps - 1, -1, -1))
    samples, cpu = [], []
    for _ in range(a.passes):
        for i in order:
            wall, c = timed_step(i)
            samples.append(wall)
            cpu.append(c)
    breakdown = _breakdown(app, st, order, max(2, a.passes // 2))

    play: dict[str, float] = {}
    for rate in (30.0, 50.0):
        shown = []
        st.step_changed.connect(shown.append)
        st.set_play_rate(rate)
        loop = QEventLoop()
        QTimer.singleShot(int(a.play_seconds * 1000), loop.quit)
        t = time.perf_counter()
        st.play(loop=True)
        loop.exec()
        elapsed = time.perf_counter() - t
        st.stop()
        st.step_changed.disconnect(shown.append)
        play[f"{rate:g}"] = len(shown) / elapsed

    out = {"array": "256x256", "program": "AnalogNet2, Cain Table 2 (21 macros)", "window": f"{w}x{h}",
           "step_ms": {"median": statistics.median(samples), "p95": percentile(samples, 0.95),
                       "max": max(samples), "n": len(samples)},
           "step_cpu_ms": {"median": statistics.median(cpu), "p95": percentile(cpu, 0.95)},
           "cold_step_ms": {"median": statistics.median(cold), "max": max(cold), "n": len(cold)},
           "breakdown_cpu_ms": breakdown, "scale": a.scale, "change": a.change,
           "image_cache": _cache_figures(st),
           "play_instr_per_s": {"asked_30": play["30"], "asked_50": play["50"]},
           "step_through_ms": step_through_ms, "pixels_per_pe": px_per_pe,
           "load_avg": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    if a.json:
        print(json.dumps(out))
        return
    s = out["step_ms"]
    print(f"stepper, {out['array']}, {out['program']}, window {out['window']} (load {out['load_avg']:.1f})")
    print(f"  one step (set_step + paint): median {s['median']:.1f} ms, p95 {s['p95']:.1f} ms, "
          f"max {s['max']:.1f} ms over {s['n']} steps (target < 16 ms); UI thread CPU median "
          f"{out['step_cpu_ms']['median']:.1f} ms, p95 {out['step_cpu_ms']['p95']:.1f} ms")
    c = out["cold_step_ms"]
    print(f"  first pass (images and limits computed): median {c['median']:.1f} ms, max {c['max']:.1f} ms")
    b = out["breakdown_cpu_ms"]
    print("  CPU ms per step: " + ", ".join(f"{k} {v:.2f}" for k, v in b.items()))
    ic = out["image_cache"]
    print(f"  image cache: {ic['hits']} hits, {ic['misses']} misses, {ic['mib']} MiB; " if ic else "  ",
          f"scale {a.scale}" + (", changes" if a.change else ""), sep="")
    print(f"  Play: asked 30 instr/s -> {play['30']:.1f}; asked 50 -> {play['50']:.1f}")
    print(f"  Step through (simulate + load + paint): {step_through_ms:.0f} ms")
    print(f"  grid: {px_per_pe:.2f} screen pixels per PE")


def _positive(kind):
    """An argparse type: a number of `kind` above 0 (argparse names the option and exits 2)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be above 0")
        return value
    return parse


def _size(text: str) -> tuple[int, int]:
    """WIDTHxHEIGHT in pixels, each at least 200."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT, e.g. 1920x1080")
    w, h = (int(p) for p in parts)
    if w < 200 or h < 200:
        raise argparse.ArgumentTypeError(f"{text!r}: width and height must be at least 200 pixels")
    return w, h


def _cache_figures(st) -> dict[str, float] | None:
    """The canvas's image cache (None for a stepper without one, e.g. an older checkout compared)."""
    cache = getattr(st.canvas, "images", None)
    if cache is None:
        return None
    return {"hits": cache.hits, "misses": cache.misses, "mib": round(cache.bytes / 2 ** 20, 1)}


def _breakdown(app, st, order: list[int], passes: int) -> dict[str, float]:
    """Mean CPU ms per step: set_step, and the paint of each part of the stepper (see the docstring).

    An application event filter notes the UI thread's CPU clock when a widget's paint event begins;
    Qt paints widgets one after the other, so the time to the next mark is that widget's paint."""
    from PySide6.QtCore import QEvent, QObject

    parts = {st.canvas: "paint_canvas", st.inspector.view: "paint_inspector", st.listing: "paint_listing",
             st.bus_list: "paint_bus_ops", st.plane_list: "paint_planes_list"}
    marks: list[tuple[float, str]] = []

    def part(w) -> str:
        while w is not None:
            if w in parts:
                return parts[w]
            w = w.parent()
        return "paint_other"

    class Marks(QObject):
        def eventFilter(self, obj, ev):  # noqa: N802 (Qt name)
            if ev.type() == QEvent.Type.Paint:
                marks.append((time.thread_time(), part(obj)))
            return False

    total: dict[str, float] = {"set_step": 0.0}
    for name in (*parts.values(), "paint_other", "events_other"):
        total[name] = 0.0
    spy = Marks()
    app.installEventFilter(spy)
    n = 0
    try:
        for _ in range(passes):
            for i in order:
                t = time.thread_time()
                st.set_step(i)
                marks[:] = [(time.thread_time(), "events_other")]
                total["set_step"] += marks[0][0] - t
                app.processEvents()
                marks.append((time.thread_time(), ""))
                for (t0, what), (t1, _) in zip(marks, marks[1:]):
                    total[what] += t1 - t0
                n += 1
    finally:
        app.removeEventFilter(spy)
    return {k: round(v / n * 1000, 3) for k, v in total.items()}


if __name__ == "__main__":
    main()
