"""The published Cain tool's search rewritten in C (core/cain/native.py) against the tool itself.

Both run with one worker and the same node budget on the same kernels ("all", 6 registers, the
tool's recommended config otherwise), so both searches are deterministic: the C search must report
the very plans the tool reports as improvements, each at the same node count. Then the time each
took for those nodes: the tool's is its process's wall time less that of a run with a budget of
one node (the JVM start and its reflection scan), the C search's its own; runs alternate, medians.

    .venv/bin/python benchmarks/cain_published_replay.py --published /tmp/scratch/cain-published \\
        [--nodes 20000] [--sets sharpen8,eq15-k2-s201] [--repeats 3] [--json]

The published tool is a peer, never a dependency: build it with benchmarks/build_published_cain.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cain_suites import suites  # noqa: E402
from cain_vs_published import MAIN_CLASS, Published, parse_published  # noqa: E402

from core.cain import native  # noqa: E402
from core.cain.approx import approximate  # noqa: E402
from core.scamp5.isa import instruction_set  # noqa: E402

DEFAULT_SETS = ("sharpen8", "sobel-xy", "eq15-k1-s101", "eq15-k2-s201", "eq15-k3-s302", "log5+gauss3",
                "gabor3-odd", "binomial5", "sobel5-xy")


def published_run(pub: Published, name: str, nodes: int, work: Path) -> tuple[list[tuple[int, int]], float]:
    """The tool's improvements (length, nodes) with one worker and `nodes` nodes, and its wall time."""
    s = {x.name: x for x in suites()}[name]
    cfg = pub.config(s, "all", 6, 3600, 1)
    cfg["runConfig"].update(maxNodes=nodes)
    path = work / f"{name}-{nodes}.json"
    path.write_text(json.dumps(cfg))
    t = time.monotonic()
    out = subprocess.run(["java", "-cp", pub.classpath, MAIN_CLASS, str(path)], capture_output=True, text=True,
                         timeout=3600).stdout
    wall = time.monotonic() - t
    best = 1 << 30
    improvements = []
    for length, _ms, n in parse_published(out)["plans"]:
        if length < best:
            best = length
            improvements.append((length, n))
    return improvements, wall


def native_run(name: str, nodes: int) -> tuple[list[tuple[int, int]], float]:
    s = {x.name: x for x in suites()}[name]
    approx = approximate(s.kernel_set, max_kernels=6)
    t = time.monotonic()
    search = native.NativeSearcher(approx.goals, approx.d, 6, instruction_set("all"), workers=1)
    plans = []
    while search.nodes < nodes and not search.exhausted:
        plans += search.run(nodes - search.nodes, 3600.0)
    wall = time.monotonic() - t
    search.close()
    return [(p.length, p.nodes_at_find) for p in plans], wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--published", default=os.environ.get("CAIN_PUBLISHED"), help="the tool's build folder")
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--sets", default=",".join(DEFAULT_SETS))
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each tool per set (alternating)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    pub = Published.find(args.published)
    if isinstance(pub, str):
        print(f"published tool: ABSENT ({pub})", file=sys.stderr)
        return 2
    native.build()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        start_up = statistics.median(published_run(pub, "sobel-xy", 1, work)[1] for _ in range(args.repeats))
        for name in args.sets.split(","):
            p_walls, n_walls = [], []
            p_imp: list[tuple[int, int]] = []
            n_imp: list[tuple[int, int]] = []
            for _ in range(args.repeats):
                p_imp, w = published_run(pub, name, args.nodes, work)
                p_walls.append(max(1e-3, w - start_up))
                n_imp, w = native_run(name, args.nodes)
                n_walls.append(w)
            p_s, n_s = statistics.median(p_walls), statistics.median(n_walls)
            row = {"set": name, "nodes": args.nodes, "same_plans": p_imp == n_imp, "published": p_imp, "native": n_imp,
                   "published_s": round(p_s, 3), "native_s": round(n_s, 3),
                   "published_nodes_per_s": round(args.nodes / p_s), "native_nodes_per_s": round(args.nodes / n_s),
                   "speedup": round(p_s / n_s, 1)}
            rows.append(row)
            if not args.json:
                print(f"{name:14s} same plans: {row['same_plans']!s:5s}  best {n_imp[-1][0] if n_imp else '-':>3} "
                      f"published {row['published_nodes_per_s']:>7} nodes/s  C {row['native_nodes_per_s']:>7} nodes/s  "
                      f"x{row['speedup']}", flush=True)
    summary = {"sets": len(rows), "same_plans": sum(r["same_plans"] for r in rows),
               "median_speedup": statistics.median(r["speedup"] for r in rows), "jvm_start_s": round(start_up, 2),
               "load_average_end": round(os.getloadavg()[0], 2)}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=1))
    else:
        print(f"{summary['same_plans']} of {summary['sets']} sets: the same plans at the same nodes; median speed-up "
              f"x{summary['median_speedup']} (one worker each; the tool's time less its {start_up:.2f} s start-up)")
    return 0 if summary["same_plans"] == summary["sets"] else 1


if __name__ == "__main__":
    sys.exit(main())
