"""How fast the SCAMP-5 stepper steps and plays, in the real window (offscreen).

The window is opened at 1920x1080 in its default layout; "Step through" simulates Cain's published
AnalogNet2 program (21 macros) on the 256x256 array and loads it into the stepper. Then:
- one step = `set_step(i)` plus the event processing that paints it (Qt paints what changed),
  forwards and backwards over the program several times: median and p95 ms of wall time (target
  < 16 ms), and of the process's CPU time (less sensitive to other jobs on a shared machine);
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
    ap.add_argument("--passes", type=int, default=10, help="forward+backward passes over the program (default 10)")
    ap.add_argument("--play-seconds", type=float, default=4.0, help="seconds of Play per rate (default 4)")
    ap.add_argument("--size", default="1920x1080", help="window size (default 1920x1080)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer

    from gui.app import make_app
    from gui.main_window import MainWindow

    app = make_app()
    win = MainWindow(restore_layout=False)
    w, h = (int(v) for v in a.size.split("x"))
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
    for _ in range(10):
        app.processEvents()
    px_per_pe = st.canvas.fit_pixels_per_pe()

    order = list(range(1, st.steps + 1)) + list(range(st.steps - 1, -1, -1))
    samples, cpu = [], []
    for _ in range(a.passes):
        for i in order:
            t, c = time.perf_counter(), time.process_time()
            st.set_step(i)
            app.processEvents()
            samples.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)

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

    out = {"array": "256x256", "program": "AnalogNet2, Cain Table 2 (21 macros)", "window": a.size,
           "step_ms": {"median": statistics.median(samples), "p95": percentile(samples, 0.95),
                       "max": max(samples), "n": len(samples)},
           "step_cpu_ms": {"median": statistics.median(cpu), "p95": percentile(cpu, 0.95)},
           "play_instr_per_s": {"asked_30": play["30"], "asked_50": play["50"]},
           "step_through_ms": step_through_ms, "pixels_per_pe": px_per_pe,
           "load_avg": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    if a.json:
        print(json.dumps(out))
        return
    s = out["step_ms"]
    print(f"stepper, {out['array']}, {out['program']}, window {a.size} (load {out['load_avg']:.1f})")
    print(f"  one step (set_step + paint): median {s['median']:.1f} ms, p95 {s['p95']:.1f} ms, "
          f"max {s['max']:.1f} ms over {s['n']} steps (target < 16 ms); CPU time median "
          f"{out['step_cpu_ms']['median']:.1f} ms, p95 {out['step_cpu_ms']['p95']:.1f} ms")
    print(f"  Play: asked 30 instr/s -> {play['30']:.1f}; asked 50 -> {play['50']:.1f}")
    print(f"  Step through (simulate + load + paint): {step_through_ms:.0f} ms")
    print(f"  grid: {px_per_pe:.2f} screen pixels per PE")


if __name__ == "__main__":
    main()
