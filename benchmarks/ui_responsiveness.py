"""How well the window keeps up while engines run (target on the build machine: longest gap of a
10 ms UI timer < 50 ms, p99 < 20 ms).

Offscreen, it opens the main window and starts Cain (60 s budget, 2 workers), f-CNNx and MERIT on
their starter workloads through the Run button's code path (`set_current_engine` + `run_current`),
then measures the gaps between ticks of a 10 ms timer on the UI thread for `--seconds` (30) with the
Cain tab on show. A bare Qt timer process (a QCoreApplication with the same timer, nothing else) runs
beside it, so the figures can be told apart from what the machine itself does to a timer. Then the
same for another `--seconds` with the simulator's stepper playing at 30 instructions/s (Cain still
searching). Every job is cancelled at the end.

Each phase also reports the UI thread's own CPU time within each gap (`max_busy_ms`, `p99_busy_ms`)
and, for the longest gap, how much of it was that work and how much waiting for a core (Linux
schedstat): on a shared machine most of a long gap is the latter. `--slow` lists the window's slots
and plot paints that took over 20 ms (with their CPU share); `--profile FILE` writes a cProfile of the UI thread.

Run: .venv/bin/python benchmarks/ui_responsiveness.py [--seconds 30] [--json] [--slow] [--profile FILE]
`--json`: {"engines": {"max_gap_ms", "p99_ms", ...}, "stepper": {...}, "bare": {...}, "runs": [...]}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

INTERVAL_MS = 10
ENGINES = ("cain", "fcnnx", "merit")
PLAY_RATE = 30.0

# The bare timer: a separate interpreter with only a QCoreApplication and the same timer.
BARE = r"""
import json, sys, time
from PySide6.QtCore import QCoreApplication, QTimer, Qt
app = QCoreApplication([])
stamps = []
t = QTimer(); t.setTimerType(Qt.TimerType.PreciseTimer); t.setInterval(int(sys.argv[1]))
t.timeout.connect(lambda: stamps.append(time.perf_counter()))
t.start()
QTimer.singleShot(int(float(sys.argv[2]) * 1000), app.quit)
app.exec()
print(json.dumps([b - a for a, b in zip(stamps, stamps[1:])]))
"""


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


def summary(gaps_s: list[float], busy_s: list[float] | None = None,
            waits_s: list[float] | None = None) -> dict[str, Any]:
    """Longest gap and 99th percentile between ticks, in ms. With `busy_s` (the UI thread's CPU
    time within each gap: the window's own work) and `waits_s` (its time ready to run but waiting
    for a core, from the kernel's schedstat): what the longest gap was made of."""
    if not gaps_s:
        return {"max_gap_ms": None, "p99_ms": None, "median_ms": None, "ticks": 0}
    ms = [g * 1000 for g in gaps_s]
    out = {"max_gap_ms": round(max(ms), 1), "p99_ms": round(_p99(ms), 1), "median_ms": round(statistics.median(ms), 1),
           "over_50ms": sum(1 for g in ms if g > 50), "ticks": len(ms) + 1}
    if busy_s:
        busy = [b * 1000 for b in busy_s]
        out.update({"max_busy_ms": round(max(busy), 1), "p99_busy_ms": round(_p99(busy), 1)})
        worst = max(range(len(ms)), key=ms.__getitem__)
        out["longest_gap_busy_ms"] = round(busy[worst], 1)
        if waits_s:
            out["longest_gap_runqueue_ms"] = round(waits_s[worst] * 1000, 1)
    return out


def _runqueue_wait() -> float:
    """Seconds this thread has spent ready to run but waiting for a core (Linux; 0 elsewhere)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def measure(seconds: float) -> tuple[list[float], list[float], list[float]]:
    """Gaps between the ticks of a 10 ms precise timer on the UI thread over `seconds`, the UI
    thread's CPU time within each gap, and its time waiting for a core."""
    from PySide6.QtCore import QEventLoop, Qt, QTimer

    stamps: list[tuple[float, float, float]] = []
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(INTERVAL_MS)
    timer.timeout.connect(lambda: stamps.append((time.perf_counter(), time.thread_time(), _runqueue_wait())))
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    timer.start()
    loop.exec()
    timer.stop()
    pairs = list(zip(stamps, stamps[1:]))
    return [b[0] - a[0] for a, b in pairs], [b[1] - a[1] for a, b in pairs], [b[2] - a[2] for a, b in pairs]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="length of each measured phase (default 30)")
    ap.add_argument("--cain-time", type=float, default=60.0, help="Cain's time budget in seconds (default 60)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--profile", metavar="FILE", help="cProfile the UI thread during both phases into FILE")
    ap.add_argument("--slow", action="store_true",
                    help="list the window's slots and plot paints that kept the UI thread busy for more than 20 ms")
    args = ap.parse_args()

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from gui.app import freeze_startup_objects, make_app
    from gui.main_window import MainWindow

    slow: list[tuple[float, str]] = []
    if args.slow:
        _trace_slow_slots(slow)

    load = [round(x, 2) for x in os.getloadavg()]
    app = make_app()
    window = MainWindow(restore_layout=False)
    window.resize(1600, 1000)
    window.show()
    for _ in range(20):
        app.processEvents()
    freeze_startup_objects()            # as gui.app.run_gui does once the window is up
    window.project.set_setting("cain", "time_s", float(args.cain_time))
    window.project.set_setting("cain", "workers", 2)

    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()

    bare = subprocess.Popen([sys.executable, "-c", BARE, str(INTERVAL_MS), str(args.seconds)],
                            stdout=subprocess.PIPE, text=True)
    started = time.monotonic()
    for name in ENGINES:                # the Run button's path, one tab after the other
        window.set_current_engine(name)
        window.run_current()
    window.set_current_engine("cain")
    engines_gaps, engines_busy, engines_waits = measure(args.seconds)
    running_1 = window.runner.running()
    bare_out, _ = bare.communicate(timeout=60)
    bare_gaps = json.loads(bare_out or "[]")

    stepper_note = ""
    window.set_current_engine("simulate")
    panel = window.panels["simulate"]
    stepper = panel.stepper
    if not panel.step_through_settings():
        stepper_note = "the stepper could not load the simulate tab's program"
    stepper.set_play_rate(PLAY_RATE)
    stepper.play(loop=True)
    steps_before = _steps_shown(stepper)
    t0 = time.monotonic()
    stepper_gaps, stepper_busy, stepper_waits = measure(args.seconds)
    played = _steps_shown(stepper) - steps_before
    played_for = time.monotonic() - t0
    stepper.stop()
    running_2 = window.runner.running()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)

    # let the jobs end by themselves within their budgets, then stop what is left
    end = started + args.cain_time + 10
    while window.runner.running() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)
    window.shutdown_jobs()
    app.processEvents()
    runs = [{"engine": r.engine, "status": r.status, "duration_s": r.duration_s, "error": r.error,
             **_cain_budget(r)} for r in window.project.runs]
    out = {"engines": {**summary(engines_gaps, engines_busy, engines_waits), "running": running_1},
           "stepper": {**summary(stepper_gaps, stepper_busy, stepper_waits), "running": running_2, "play_rate": PLAY_RATE,
                       "instr_per_s": round(played / max(1e-9, played_for), 1) if played else None,
                       **({"note": stepper_note} if stepper_note else {})},
           "bare": summary(bare_gaps), "runs": runs, "cpus": os.cpu_count(), "load_before": load}
    window.project.mark_saved()
    window.close()
    if args.slow:
        out["slow"] = [{"ms": round(ms, 1), "what": what} for ms, what in sorted(slow, reverse=True)[:30]]
    if args.json:
        print(json.dumps(out))
    else:
        for key in ("engines", "stepper", "bare"):
            s = out[key]
            print(f"{key:8} longest gap {s['max_gap_ms']} ms, p99 {s['p99_ms']} ms, median {s['median_ms']} ms, "
                  f"{s['over_50ms']} gaps over 50 ms of {s['ticks']} ticks"
                  + (f"; UI thread busy at most {s['max_busy_ms']} ms, p99 {s['p99_busy_ms']} ms; the longest gap: "
                     f"{s['longest_gap_busy_ms']} ms busy, {s.get('longest_gap_runqueue_ms')} ms waiting for a core"
                     if "max_busy_ms" in s else "")
                  + (f"; running {', '.join(s['running'])}" if s.get("running") else ""))
        print(f"stepper played {out['stepper']['instr_per_s']} instr/s (asked {PLAY_RATE:g})")
        for item in out.get("slow", []):
            print(f"slow: {item['ms']:7.1f} ms  {item['what']}")
        for r in runs:
            print(f"run {r['engine']}: {r['status']} in {r['duration_s']} s" + (f", {r['error']}" if r["error"] else "")
                  + (f"; search {r['elapsed_s']} s of {r['budget_s']} s, last improvement at {r['last_improvement_s']} s"
                     if "budget_s" in r else ""))
    return 0


def _trace_slow_slots(slow: list[tuple[float, str]], threshold_s: float = 0.02) -> None:
    """Wrap the window's job slots, the panels' drawing and the stepper's step (at class level,
    before the window connects them) to record calls longer than `threshold_s`."""
    import functools

    import pyqtgraph as pg

    from gui.main_window import MainWindow
    from gui.run_adapter import RunAdapter
    from gui.panels import panel_classes
    from gui.panels.generic import GenericPanel
    from gui.panels.simulate.stepper import Scamp5Stepper

    def wrap(cls: Any, name: str) -> None:
        fn = cls.__dict__.get(name)
        if fn is None:
            return

        @functools.wraps(fn)
        def timed(*a: Any, **k: Any) -> Any:
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                dt, cpu = time.perf_counter() - t0, time.thread_time() - c0
                if dt > threshold_s:
                    detail = f" {a[1]}" if len(a) > 1 and isinstance(a[1], str) else ""
                    who = type(a[0]).__name__ if a else cls.__name__
                    slow.append((dt * 1000, f"{who}.{name}{detail} ({cpu * 1000:.1f} ms of it on the CPU)"))

        setattr(cls, name, timed)

    for name in ("_on_events", "_on_progress", "_on_finished", "_tick"):
        wrap(MainWindow, name)
    wrap(RunAdapter, "poll")
    for cls in {GenericPanel, *panel_classes().values()}:
        for name in ("handle_events", "show_run", "show_result"):
            wrap(cls, name)
    wrap(Scamp5Stepper, "set_step")
    wrap(pg.GraphicsView, "paintEvent")         # every plot and the stepper's canvas paint through it


def _steps_shown(stepper: Any) -> int:
    """Steps the stepper has shown so far, counted through its `step_changed` signal."""
    count = getattr(stepper, "_bench_steps", None)
    if count is None:
        count = stepper._bench_steps = [0]
        stepper.step_changed.connect(lambda _step: count.__setitem__(0, count[0] + 1))
    return count[0]


def _cain_budget(run: Any) -> dict[str, Any]:
    result = run.result
    if run.engine != "cain" or result is None:
        return {}
    times = [i.time_s for i in result.improvements]
    return {"elapsed_s": result.elapsed_s, "budget_s": result.time_budget_s,
            "last_improvement_s": max(times) if times else None}


if __name__ == "__main__":
    sys.exit(main())
