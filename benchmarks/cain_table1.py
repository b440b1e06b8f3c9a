"""Cain's Table 1 on this machine: best program length per filter and instruction set.

For each filter (3x3 Gauss, 5x5 Gauss, 5x5+3x3 Gauss, AnalogNet2 and the published tool's
AnalogNet2) and set ("all", "basic"; optionally the AUKE-style baseline), runs the engine with
6 registers for --time seconds (60 by default, as in the paper) and prints the best length,
time to the first and to the best program, nodes per second, peak memory (the benchmark
process plus its worker processes, sampled), the proven lower bound and the gap to it.

    .venv/bin/python benchmarks/cain_table1.py [--time 60] [--workers 2] [--seed 0] [--auke] [--csv out.csv] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil  # noqa: E402

from core.cain.engine import ENGINE  # noqa: E402
from core.engine import JobRequest  # noqa: E402
from core.filters import preset  # noqa: E402
from core.jobs import CancelToken, FinalResult  # noqa: E402
from core.workload import Scamp5Target  # noqa: E402

FILTERS = ["gauss3", "gauss5", "gauss5+gauss3", "analognet2", "analognet2-tool"]
# Table 1 of the paper / scamp5-instructions.md (published Cain, 60 s, A-F)
PAPER = {("gauss3", "all"): 10, ("gauss5", "all"): 19, ("gauss5+gauss3", "all"): 26, ("analognet2", "all"): 21,
         ("analognet2-tool", "all"): 21, ("gauss3", "basic"): 12, ("gauss5", "basic"): 25,
         ("gauss5+gauss3", "basic"): 39, ("analognet2", "basic"): 30, ("analognet2-tool", "basic"): 30,
         ("gauss3", "auke"): 12, ("gauss5", "auke"): 50, ("gauss5+gauss3", "auke"): 62,
         ("analognet2", "auke"): 49, ("analognet2-tool", "auke"): 49}


def _rss_total(proc: psutil.Process) -> int:
    total = 0
    for p in [proc] + proc.children(recursive=True):
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


ADD_SUB = {"add", "addx", "add2x", "sub", "subx", "sub2x"}


def add_sub_operands(program: list[str]) -> int:
    """Register operands read by add/sub macros (Cain's Table 2 measure of shared work)."""
    total = 0
    for line in program:
        op, args = line.split("(", 1)
        if op in ADD_SUB:
            regs = [a.strip() for a in args.rstrip(")").split(",")[1:]]
            total += sum(1 for a in regs if a not in ("north", "east", "south", "west"))
    return total


def run_one(name: str, isa: str, time_s: float, workers: int, registers: int = 6, seed: int = 0) -> dict:
    req = JobRequest(preset(name), Scamp5Target(registers=registers),
                     {"isa": isa, "time_s": time_s, "workers": workers, "seed": seed})
    me = psutil.Process()
    peak = _rss_total(me)
    last = 0.0
    final = None
    for ev in ENGINE.run(req, CancelToken()):
        now = time.monotonic()
        if now - last > 0.5:
            last = now
            peak = max(peak, _rss_total(me))
        if isinstance(ev, FinalResult):
            final = ev.data.to_json()          # the engine's typed result, read here by its JSON keys
    assert final is not None
    return {"filter": name, "set": isa, "length": final["length"], "paper": PAPER.get((name, isa)),
            "time_to_first_s": final["time_to_first_s"], "time_to_best_s": final["time_to_best_s"],
            "nodes": final["nodes_explored"], "nodes_per_s": final["nodes_per_s"],
            "peak_mem_mb": round(peak / 2 ** 20), "verified": final["verified"], "method": final.get("method"),
            "found_by": ((final.get("improvements") or [{}])[-1]).get("strategy"),
            "add_sub_operands": add_sub_operands(final["program"]) if final["program"] else None,
            "lower_bound": final["lower_bound"]["value"], "gap": final.get("gap"), "optimal": final.get("optimal"),
            "elapsed_s": final["elapsed_s"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=float, default=60.0, help="seconds per filter and set (default 60)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--filters", default=",".join(FILTERS))
    ap.add_argument("--sets", default="all,basic")
    ap.add_argument("--auke", action="store_true", help="also run the AUKE-style baseline (AUKE's set, one by one)")
    ap.add_argument("--csv", help="also write the rows to this CSV file")
    ap.add_argument("--seed", type=int, default=0, help="the search's random seed")
    ap.add_argument("--json", action="store_true", help="print one JSON object (the rows) at the end")
    args = ap.parse_args()
    sets = args.sets.split(",") + (["auke"] if args.auke else [])
    rows = []
    print(f"{'filter':16s} {'set':6s} {'length':>6s} {'paper':>5s} {'first s':>8s} {'best s':>8s} "
          f"{'nodes':>8s} {'nodes/s':>8s} {'peak MB':>8s} {'bound':>5s} {'gap':>4s} {'elapsed':>7s} verified method "
          f"found-by add/sub-operands", flush=True)
    for name in args.filters.split(","):
        for isa in sets:
            r = run_one(name, isa, args.time, args.workers, seed=args.seed)
            rows.append(r)
            print(f"{r['filter']:16s} {r['set']:6s} {str(r['length']):>6s} {str(r['paper']):>5s} "
                  f"{str(r['time_to_first_s']):>8s} {str(r['time_to_best_s']):>8s} {r['nodes']:>8d} "
                  f"{str(r['nodes_per_s']):>8s} {r['peak_mem_mb']:>8d} {r['lower_bound']:>5d} {str(r['gap']):>4s} "
                  f"{r['elapsed_s']:>7.2f} {r['verified']} {r['method']} {r['found_by']} {r['add_sub_operands']}",
                  flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    if args.json:
        print(json.dumps({"time_s": args.time, "workers": args.workers, "seed": args.seed, "rows": rows}))


if __name__ == "__main__":
    main()
