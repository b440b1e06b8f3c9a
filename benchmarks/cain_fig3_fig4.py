"""Cain's Fig. 3 and Fig. 4 on this machine, as studies (assets/studies/cain_fig3_nodes.json,
cain_fig3_kernels.json, cain_fig4.json) run by the study runner on a local Dask cluster: random 3x3
kernels as in the paper's eq. 15 (coefficients u/8, u uniform in 0..8), one search per point, the
points spread over the workers.

  fig3        median best length vs nodes explored, local heuristic vs random order
              (paper: 100 filters, 20000 nodes, 60 s, 1 worker)
  fig3right   shortest length for filters of 1-4 random kernels (paper: 25 each, 60 s, 4 threads)
  fig4        18 registers, 1-10 kernels: kernels compiled one by one (the AUKE baseline, programs
              concatenated) vs simultaneously (the simultaneous run is not seeded with a one-by-one
              program) (paper: 10 filters each, 60 s per compilation, 4 threads)

The defaults are scaled down so a full run takes minutes, not hours; pass --samples, --time and
--max-nodes to match the paper, and --cluster tcp://HOST:PORT to spread the points over a cluster
(docs/studies.md). Writes CSV files, and PNG plots when matplotlib is installed; each study's
results file (JSON lines) lands beside them.

    .venv/bin/python benchmarks/cain_fig3_fig4.py [--part fig3|fig3right|fig4|all] [--samples N]
        [--time S] [--max-nodes N] [--max-kernels N] [--cluster local:N|tcp://HOST:PORT] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.files import output_files  # noqa: E402
from core.study import spec  # noqa: E402
from core.study.runner import StudyRunner  # noqa: E402

STUDIES = Path(__file__).resolve().parents[1] / "assets" / "studies"


def run_study(name: str, args: argparse.Namespace, settings: dict[str, Any], axes: dict[str, Any]) -> list[dict]:
    """Run an asset study with these settings and axes (by label) swapped in; its finished records."""
    doc = json.loads((STUDIES / f"{name}.json").read_text())
    doc["settings"] = {**doc["settings"], **settings}
    for axis in doc["axes"]:
        if axis.get("label", axis["param"].split(".", 1)[-1]) in axes:
            axis.pop("values", None)
            axis.pop("range", None)
            axis.update(axes[axis.get("label", axis["param"].split(".", 1)[-1])])
    study = spec.from_json(doc, None, STUDIES / f"{name}.json")
    out = args.out / f"{name}.results.jsonl"
    print(f"{name}: {len(study.points)} points on {args.cluster}", flush=True)
    summary = StudyRunner(study, args.cluster, out, on_log=lambda m: print(f"  {m}", flush=True),
                          on_record=lambda r: print(f"  #{r['index']} {r['params']}: {r['status']} "
                                                    f"{r['metrics'] or r.get('error', '')}", flush=True),
                          cache=False).run()       # measured afresh, never from an earlier run
    if summary.error:
        raise SystemExit(f"{name}: {summary.error}")
    failed = [r for r in summary.records if r["status"] != "finished"]
    if failed:
        print(f"{name}: {len(failed)} point(s) did not finish: {failed[0].get('error')}")
    return [r for r in summary.records if r["status"] == "finished"]


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


def fig3(args: argparse.Namespace) -> None:
    recs = run_study("cain_fig3_nodes", args, {"time_s": args.time, "max_nodes": args.max_nodes},
                     {"filter": {"range": {"from": 1, "to": args.samples}}})
    checkpoints = sorted({int(args.max_nodes * k / 40) for k in range(1, 41)})
    curves: dict[str, list[list[int | None]]] = {"heuristic": [], "random": []}
    found = {"heuristic": 0, "random": 0}
    for r in recs:
        label = "heuristic" if r["params"]["traversal"] == "cgds" else "random"
        imps = r["result"]["improvements"]
        found[label] += bool(imps)
        curves[label].append([min((p["length"] for p in imps if p["nodes"] <= n), default=None)
                              for n in checkpoints])
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


def fig3_right(args: argparse.Namespace) -> None:
    recs = run_study("cain_fig3_kernels", args, {"time_s": args.time},
                     {"filter": {"range": {"from": 1, "to": args.samples}}})
    rows = [{"kernels": r["params"]["kernels"], "sample": r["params"]["filter"] - 1,
             "length": r["metrics"]["length"] or ""} for r in recs]
    for n in range(1, 5):
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


def fig4(args: argparse.Namespace) -> None:
    recs = run_study("cain_fig4", args, {"time_s": args.time},
                     {"filter": {"range": {"from": 1, "to": args.samples}},
                      "kernels": {"range": {"from": 1, "to": args.max_kernels}}})
    by_point: dict[tuple[int, int], dict[str, Any]] = {}
    for r in recs:
        row = by_point.setdefault((r["params"]["kernels"], r["params"]["filter"]),
                                  {"kernels": r["params"]["kernels"], "sample": r["params"]["filter"] - 1,
                                   "simultaneous": "", "individual": ""})
        row["simultaneous" if r["params"]["mode"] == "cain" else "individual"] = r["metrics"]["length"] or ""
    rows = [by_point[k] for k in sorted(by_point)]
    for row in rows:
        print(f"fig4: {row['kernels']} kernel(s) sample {row['sample'] + 1}: simultaneous {row['simultaneous']}, "
              f"individually {row['individual']}")
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
    ap.add_argument("--samples", type=int, default=10, help="random filters per point of each figure")
    ap.add_argument("--time", type=float, default=10.0, help="seconds per compilation")
    ap.add_argument("--max-nodes", type=int, default=5000, help="node budget for fig3 (paper: 20000)")
    ap.add_argument("--max-kernels", type=int, default=10, help="fig4: largest kernel count")
    ap.add_argument("--cluster", default="local", help="local (a worker per core), local:N, or tcp://HOST:PORT")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "cain")
    args = ap.parse_args()
    unwritable = output_files({"--out": args.out / "fig4.csv"})
    if unwritable:
        print(f"error: {unwritable}", file=sys.stderr)
        raise SystemExit(2)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.part in ("fig3", "all"):
        fig3(args)
    if args.part in ("fig3right", "all"):
        fig3_right(args)
    if args.part in ("fig4", "all"):
        fig4(args)


if __name__ == "__main__":
    main()
