"""Studies on Dask: the speed-up from 1 to 2 local workers, the scheduler's cost per point, and how
long the process that runs a study (the GUI's, where the local scheduler lives) is held up.

  speed-up    20 one-second points (Cain searches with time_s = 1, one process each) on local:1 and
              local:2, alternated, medians of the study's run time (cluster start and stop apart);
              target >= 1.8x on 2 cores
  overhead    many trivial points (a Cain search stopped after one node, ~1 ms): (run time x workers
              - the points' own time) / points; target < 20 ms per point
  onesec      200 one-second points on local:2: (run time x 2 - the points' own time) / points;
              target < 20 ms per point (run on its own: --part onesec, about two minutes)
  stall       a thread of the runner's process that wants to wake every 10 ms, while a study of
              trivial points runs on 2 workers: how late it wakes (the GUI thread would be as late)
  gui         the same in the window (offscreen): a 10 ms QTimer on the GUI thread while the Studies
              dock runs the study, its table, plots, and a project run per point included
  fig4        on paper, from the measured figures: assets/studies/cain_fig4.json here and on 100 nodes

    .venv/bin/python benchmarks/study_speedup.py [--rounds 3] [--trivial 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.study import spec  # noqa: E402
from core.study.runner import StudyRunner  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _study(points: int, settings: dict[str, Any]) -> spec.Study:
    return spec.from_json({
        "name": "benchmark", "engine": "cain",
        "workload": {"generate": "random_kernels", "count": 1, "seed": 1},
        "target": {"kind": "scamp5", "registers": 6},
        "settings": {"workers": 1, "seed_share": 0.0, **settings},
        "axes": [{"param": "workload.seed", "range": {"from": 1, "to": points}}],
        "metrics": ["length"]})


def _run(study: spec.Study, cluster: str, out: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    summary = StudyRunner(study, cluster, out, cache=False).run()      # timed: every point runs
    wall = time.perf_counter() - t0
    if summary.error or summary.counts["finished"] != len(study.points):
        raise SystemExit(f"the study did not finish: {summary.error or summary.counts}")
    busy = sum(r["duration_s"] for r in summary.records)
    return {"run_s": summary.timings["run_s"], "start_s": summary.timings["start_s"],
            "stop_s": summary.timings["stop_s"], "wall_s": wall, "points_s": busy}


def speedup(rounds: int, tmp: Path) -> dict[str, Any]:
    study = _study(20, {"time_s": 1.0})
    runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    for r in range(rounds):
        for n in ((1, 2) if r % 2 == 0 else (2, 1)):            # alternate which goes first
            res = _run(study, f"local:{n}", tmp / f"speedup{n}.jsonl")
            runs[n].append(res)
            print(f"  round {r + 1}, {n} worker(s): {res['run_s']:.2f} s for 20 points "
                  f"(cluster start {res['start_s']:.2f} s, stop {res['stop_s']:.2f} s)", flush=True)
    med = {n: statistics.median(x["run_s"] for x in v) for n, v in runs.items()}
    wall = {n: statistics.median(x["wall_s"] for x in v) for n, v in runs.items()}
    return {"points": 20, "point_s": 1.0, "rounds": rounds, "run_s": med, "wall_s": wall,
            "speedup": med[1] / med[2], "speedup_wall": wall[1] / wall[2], "target": 1.8,
            "start_s": statistics.median(x["start_s"] for v in runs.values() for x in v)}


def overhead(points: int, tmp: Path) -> dict[str, Any]:
    study = _study(points, {"time_s": 0.01, "max_nodes": 1})
    out = {}
    for n in (1, 2):
        res = [_run(study, f"local:{n}", tmp / f"overhead{n}.jsonl") for _ in range(3)]
        per = [(x["run_s"] * n - x["points_s"]) / points * 1000 for x in res]
        out[n] = {"per_point_ms": statistics.median(per), "points_ms": statistics.median(x["points_s"] for x in res)
                  / points * 1000, "run_s": statistics.median(x["run_s"] for x in res)}
        print(f"  {n} worker(s): {points} trivial points in {out[n]['run_s']:.2f} s; the points' own time "
              f"{out[n]['points_ms']:.2f} ms each; overhead {out[n]['per_point_ms']:.2f} ms per point", flush=True)
    return {"points": points, "workers": out, "target_ms": 20.0}


def one_second(points: int, tmp: Path) -> dict[str, Any]:
    """The issue's measure: `points` one-second points (Cain, time_s 1) on 2 local workers; the
    scheduler's cost per point is (run time x 2 - the points' own time) / points."""
    study = _study(points, {"time_s": 1.0})
    res = _run(study, "local:2", tmp / "onesec.jsonl")
    per = (res["run_s"] * 2 - res["points_s"]) / points * 1000
    print(f"  2 workers: {points} one-second points in {res['run_s']:.1f} s; the points' own time "
          f"{res['points_s'] / points:.3f} s each; overhead {per:.2f} ms per point", flush=True)
    return {"points": points, "run_s": res["run_s"], "points_s": res["points_s"], "per_point_ms": per,
            "target_ms": 20.0}


def stall(points: int, tmp: Path) -> dict[str, Any]:
    study = _study(points, {"time_s": 0.01, "max_nodes": 1})
    late: list[float] = []
    stop = threading.Event()

    def ticker() -> None:
        due = time.perf_counter() + 0.01
        while not stop.is_set():
            time.sleep(max(0.0, due - time.perf_counter()))
            now = time.perf_counter()
            late.append((now - due) * 1000)
            due = now + 0.01

    th = threading.Thread(target=ticker, daemon=True)
    th.start()
    _run(study, "local:2", tmp / "stall.jsonl")
    stop.set()
    th.join()
    late.sort()
    pick = lambda q: late[min(len(late) - 1, int(q * len(late)))]
    res = {"ticks": len(late), "p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": late[-1]}
    print(f"  a 10 ms timer in the runner's process, {len(late)} ticks during start, {points} points and stop: late by "
          f"{res['p50_ms']:.2f} ms (median), {res['p99_ms']:.2f} ms (99th percentile), {res['max_ms']:.1f} ms (worst)")
    return res


def gui(points: int, tmp: Path) -> dict[str, Any]:
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    window = MainWindow(restore_layout=False)
    window.show()
    panel = window.study_panel
    path = tmp / "gui_study.json"
    path.write_text(json.dumps({
        "name": "gui benchmark", "engine": "cain", "workload": {"generate": "random_kernels", "count": 1, "seed": 1},
        "target": {"kind": "scamp5"}, "settings": {"workers": 1, "time_s": 0.01, "max_nodes": 1},
        "axes": [{"param": "workload.seed", "range": {"from": 1, "to": points}}], "metrics": ["length"]}))
    panel.load_path(path)
    panel.workers.setValue(2)
    late: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        late.append((now - last[0] - 0.01) * 1000)
        last[0] = now
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    assert panel.run_study()
    while panel.is_running():
        app.processEvents()
        time.sleep(0.001)
    timer.stop()
    runs = len(window.project.runs)
    window.project.mark_saved()         # no "save changes?" question on close
    window.close()
    late.sort()
    pick = lambda q: late[min(len(late) - 1, int(q * len(late)))]
    res = {"ticks": len(late), "p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": late[-1], "runs": runs}
    print(f"  a 10 ms QTimer of the window, {len(late)} ticks while the Studies dock ran {points} points "
          f"({runs} runs in the project): late by {res['p50_ms']:.2f} ms (median), {res['p99_ms']:.2f} ms (99th "
          f"percentile), {res['max_ms']:.1f} ms (worst)")
    return res


def fig4(over_ms: float, start_s: float) -> dict[str, Any]:
    s = spec.load(ROOT / "assets/studies/cain_fig4.json")
    n, t = len(s.points), float(s.settings["time_s"])
    per = t + over_ms / 1000 + 0.1                      # + the search's own set-up and verification
    here = {w: start_s + -(-n // w) * per for w in (1, 2)}
    workers = 100 * 16
    waves = -(-n // workers)
    cluster = 5.0 + waves * per                          # + connecting, and the workers' first imports
    paper = 10 * 10 * 2 * 60.0                           # the paper: 10 filters x 10 counts x 2 ways x 60 s
    print(f"  Fig. 4 study: {n} points of {t:g} s; here {here[1] / 60:.1f} min on 1 worker, {here[2] / 60:.1f} min "
          f"on 2; 100 nodes x 16 cores = {workers} workers: {waves} wave, about {cluster:.0f} s. The paper's "
          f"size (200 compilations of 60 s) would be {paper / 3600:.1f} h on one worker and about "
          f"{5 + 60.2:.0f} s on that cluster")
    return {"points": n, "point_s": t, "local_1_s": here[1], "local_2_s": here[2], "cluster_workers": workers,
            "cluster_s": cluster, "paper_serial_s": paper, "paper_cluster_s": 5 + 60.2}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="speed-up rounds (each runs local:1 and local:2)")
    ap.add_argument("--trivial", type=int, default=300, help="trivial points for the overhead")
    ap.add_argument("--part", choices=["all", "speedup", "overhead", "onesec", "stall", "gui"], default="all")
    ap.add_argument("--onesec", type=int, default=200, help="one-second points for --part onesec")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object")
    args = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        figures: dict[str, Any] = {}
        if args.part in ("all", "speedup"):
            print("speed-up, 20 one-second points:", flush=True)
            sp = figures["speedup"] = speedup(args.rounds, tmp)
            print(f"  medians: 1 worker {sp['run_s'][1]:.2f} s, 2 workers {sp['run_s'][2]:.2f} s: speed-up "
                  f"{sp['speedup']:.2f}x (target >= 1.8x); with cluster start and stop {sp['speedup_wall']:.2f}x")
        if args.part in ("all", "overhead"):
            print("scheduler overhead:", flush=True)
            figures["overhead"] = overhead(args.trivial, tmp)
        if args.part == "onesec":
            print(f"scheduler overhead, {args.onesec} one-second points:", flush=True)
            figures["onesec"] = one_second(args.onesec, tmp)
        if args.part in ("all", "stall"):
            print("stall of the runner's process:", flush=True)
            figures["stall"] = stall(args.trivial, tmp)
        if args.part in ("all", "gui"):
            print("stall of the window while the Studies dock runs a study:", flush=True)
            figures["gui"] = gui(args.trivial, tmp)
    if args.part == "all":
        print("on paper:")
        figures["fig4"] = fig4(figures["overhead"]["workers"][1]["per_point_ms"], figures["speedup"]["start_s"])
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
