"""The exact method (core/cain/exact.py) on the paper's Gaussian and on small classic kernels.

For each set: the length our search finds ("known"), the proven lower bound the exact method
reaches within the budget, whether that proves the known length optimal (bound == known) or
finds a shorter program (then optimal at its length), the relaxed phase's part, nodes and seconds
on this machine. "all" instruction set, 6 registers. Not a test: wall-clock budgets here.

    .venv/bin/python benchmarks/cain_exact.py [--sets gauss3,sobel-x] [--budget-s 120] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cain_suites import LAP4, PREWITT_X, SOBEL_X, suites  # noqa: E402

from core.cain.approx import approximate  # noqa: E402
from core.cain.exact import Prover  # noqa: E402
from core.cain.lower_bound import problem_bound  # noqa: E402
from core.filters import preset  # noqa: E402
from core.scamp5.isa import instruction_set  # noqa: E402
from core.workload import Kernel, KernelSet  # noqa: E402


def _one(name: str, den: int, m: list[list[int]]) -> KernelSet:
    return KernelSet(name, den, [Kernel(name, [list(map(float, r)) for r in m])])


# (name, kernels, length our search finds, or None where we only ask for the optimum)
def sets() -> list[tuple[str, KernelSet, int | None]]:
    suite = {s.name: s.kernel_set for s in suites()}
    return [
        ("gauss3", preset("gauss3"), 10),
        ("sobel-x", _one("sobel-x", 1, SOBEL_X), None),
        ("laplacian", _one("laplacian", 1, LAP4), None),
        ("box3", suite["box3"], 9),
        ("prewitt-x", _one("prewitt-x", 1, PREWITT_X), None),
        ("sharpen4", suite["sharpen4"], 6),
        ("prewitt-xy", suite["prewitt-xy"], 8),
        ("sobel-xy", suite["sobel-xy"], 9),
        ("gabor3-0-90", suite["gabor3-0-90"], 9),
        ("sharpen8", suite["sharpen8"], 11),
        ("lap4+lap8", suite["lap4+lap8"], 12),
        ("gauss3+box3", suite["gauss3+box3"], 14),
    ]


def run(name: str, ks: KernelSet, known: int | None, budget_s: float, slice_nodes: int) -> dict:
    a = approximate(ks, max_kernels=6)
    isa = instruction_set("all")
    t0 = time.monotonic()
    p = Prover(a.goals, a.d, a.channels, isa, 6, upper=known)
    first = p.bound
    while not p.done and time.monotonic() - t0 < budget_s:
        p.run(slice_nodes)
    seconds = time.monotonic() - t0
    if p.program is not None:
        verdict = f"optimal at {len(p.program)}" + (f" (shorter than {known})" if known and len(p.program) < known
                                                     else "")
    elif known is not None and p.bound >= known:
        verdict = f"{known} proven optimal"
    else:
        verdict = f"not decided: every length below {p.bound} refuted"
    return {"name": name, "d": a.d, "known": known, "general_bound": problem_bound(a.goals, a.d, a.channels, isa).value,
            "start_bound": first, "bound": p.bound, "relaxed_bound": p.relaxed_bound, "done": p.done,
            "program": None if p.program is None else [str(i) for i in p.program], "verdict": verdict,
            "nodes": p.nodes, "seconds": round(seconds, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="", help="comma-separated names (default: all)")
    ap.add_argument("--budget-s", type=float, default=120.0, help="wall-clock budget per set")
    ap.add_argument("--slice", type=int, default=200_000, help="nodes per slice between budget checks")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    want = [s for s in args.sets.split(",") if s]
    rows = []
    for name, ks, known in sets():
        if want and name not in want:
            continue
        r = run(name, ks, known, args.budget_s, args.slice)
        rows.append(r)
        if not args.json:
            print(f"{name:12s} known {str(known):>4s}  general bound {r['general_bound']:2d}  exact bound {r['bound']:2d} "
                  f"(relaxed {r['relaxed_bound']})  {r['verdict']:40s} {r['nodes']:>11,d} nodes {r['seconds']:8.1f} s",
                  flush=True)
            if r["program"] and known and len(r["program"]) < known:
                print("    " + "; ".join(r["program"]))
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
