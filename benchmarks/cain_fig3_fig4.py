"""Cain's Fig. 3 and Fig. 4 on this machine, with random 3x3 kernels as in the paper's eq. 15
(coefficients u/8, u uniform in 0..8).

  fig3        median best length vs nodes explored, local heuristic vs random order
              (paper: 100 filters, 20000 nodes, 60 s, 1 worker)
  fig3right   shortest length for filters of 1-4 random kernels (paper: 25 each, 60 s, 4 threads)
  fig4        18 registers, 1-10 kernels: kernels compiled one by one (concatenated, each kernel
              getting an equal share of the budget) vs simultaneously (same total budget; the
              simultaneous run is not seeded with a one-by-one program)
              (paper: 10 filters each, 60 s per compilation, 4 threads)

The defaults are scaled down so a full run takes minutes, not hours; pass --samples, --time and
--max-nodes to match the paper.  Writes CSV files, and PNG plots when matplotlib is installed.

    .venv/bin/python benchmarks/cain_fig3_fig4.py [--part fig3|fig3right|fig4|all] [--samples N]
        [--time S] [--max-nodes N] [--workers N] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cain.engine import ENGINE  # noqa: E402
from core.engine import JobRequest  # noqa: E402
from core.jobs import CancelToken, FinalResult  # noqa: E402
from core.workload import Kernel, KernelSet  # noqa: E402


def random_filter(rng: random.Random, n: int) -> KernelSet:
    kernels = []
    for i in range(n):
        while True:
            m = [[rng.randint(0, 8) for _ in range(3)] for _ in range(3)]
            if any(any(r) for r in m):
                break
        kernels.append(Kernel(f"r{i + 1}", m))
    return KernelSet(f"random x{n}", 8, kernels)


def run(ks: KernelSet, **settings) -> dict:
    final = None
    for ev in ENGINE.run(JobRequest(ks, None, settings), CancelToken()):
        if isinstance(ev, FinalResult):
            final = ev.data
    assert final is not None
    return final


def _write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        return None


def fig3(args: argparse.Namespace, rng: random.Random) -> None:
    checkpoints = sorted({int(args.max_nodes * k / 40) for k in range(1, 41)})
    curves: dict[str, list[list[int | None]]] = {"heuristic": [], "random": []}
    found = {"heuristic": 0, "random": 0}
    for s in range(args.samples):
        ks = random_filter(rng, 1)
        for label, trav in (("heuristic", "cgds"), ("random", "random")):
            r = run(ks, time_s=args.time, max_nodes=args.max_nodes, workers=1, traversal=trav)
            imps = r["improvements"]
            found[label] += bool(imps)
            curves[label].append([min((p["length"] for p in imps if p["nodes"] <= n), default=None)
                                  for n in checkpoints])
        print(f"fig3 sample {s + 1}/{args.samples}: heuristic best {curves['heuristic'][-1][-1]}, "
              f"random best {curves['random'][-1][-1]}", flush=True)
    rows = []
    for i, n in enumerate(checkpoints):
        row = {"nodes": n}
        for label in curves:
            vals = [c[i] for c in curves[label] if c[i] is not None]
            row[f"{label}_median"] = statistics.median(vals) if vals else ""
            row[f"{label}_with_plan"] = len(vals)
        rows.append(row)
    _write_csv(args.out / "fig3_nodes.csv", rows)
    print(f"fig3: plans found for {found['heuristic']}/{args.samples} filters with the heuristic, "
          f"{found['random']}/{args.samples} with random order")
    plt = _plt()
    if plt:
        fig, ax = plt.subplots(figsize=(6, 4))
        for label in curves:
            xs = [r["nodes"] for r in rows if r[f"{label}_median"] != ""]
            ys = [r[f"{label}_median"] for r in rows if r[f"{label}_median"] != ""]
            ax.step(xs, ys, where="post", label=label)
        ax.set_xlabel("nodes explored")
        ax.set_ylabel("median best length")
        ax.legend()
        fig.savefig(args.out / "fig3_nodes.png", dpi=120)


def fig3_right(args: argparse.Namespace, rng: random.Random) -> None:
    rows = []
    for n in range(1, 5):
        for s in range(args.samples):
            r = run(random_filter(rng, n), time_s=args.time, workers=args.workers, seed_share=0.0)
            rows.append({"kernels": n, "sample": s, "length": r["length"] or ""})
        lengths = [r["length"] for r in rows if r["kernels"] == n and r["length"] != ""]
        print(f"fig3 right: {n} kernel(s): median {statistics.median(lengths) if lengths else '-'} "
              f"({len(lengths)}/{args.samples} found)", flush=True)
    _write_csv(args.out / "fig3_kernels.csv", rows)
    plt = _plt()
    if plt:
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.scatter([r["kernels"] for r in rows if r["length"] != ""], [r["length"] for r in rows if r["length"] != ""])
        ax.set_xlabel("kernels")
        ax.set_ylabel("shortest program")
        fig.savefig(args.out / "fig3_kernels.png", dpi=120)


def fig4(args: argparse.Namespace, rng: random.Random) -> None:
    rows = []
    for n in range(1, args.max_kernels + 1):
        for s in range(args.samples):
            ks = random_filter(rng, n)
            sim = run(ks, time_s=args.time, workers=args.workers, registers=18, seed_share=0.0)
            ind = run(ks, time_s=args.time, workers=args.workers, registers=18, mode="auke", isa="all")
            rows.append({"kernels": n, "sample": s, "simultaneous": sim["length"] or "",
                         "individual": ind["length"] or ""})
            print(f"fig4: {n} kernel(s) sample {s + 1}: simultaneous {sim['length']}, "
                  f"individually {ind['length']}", flush=True)
    _write_csv(args.out / "fig4.csv", rows)
    plt = _plt()
    if plt:
        fig, ax = plt.subplots(figsize=(6, 4))
        for key in ("individual", "simultaneous"):
            pts = [(r["kernels"], r[key]) for r in rows if r[key] != ""]
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=key, alpha=0.7)
        ax.set_xlabel("kernels in the filter")
        ax.set_ylabel("program length")
        ax.legend()
        fig.savefig(args.out / "fig4.png", dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", default="all", choices=["fig3", "fig3right", "fig4", "all"])
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--time", type=float, default=10.0, help="seconds per compilation")
    ap.add_argument("--max-nodes", type=int, default=5000, help="node budget for fig3 (paper: 20000)")
    ap.add_argument("--max-kernels", type=int, default=10, help="fig4: largest kernel count")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "cain")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.part in ("fig3", "all"):
        fig3(args, rng)
    if args.part in ("fig3right", "all"):
        fig3_right(args, rng)
    if args.part in ("fig4", "all"):
        fig4(args, rng)


if __name__ == "__main__":
    main()
