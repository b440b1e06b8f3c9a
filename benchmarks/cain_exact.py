"""The exact method (core/cain/exact.py) on the paper's Gaussian and on small classic kernels.

For each set: the length our search finds ("known"), the proven lower bound the exact method
reaches within the budget, whether that proves the known length optimal (bound == known) or
finds a shorter program (then optimal at its length), the relaxed phase's part, nodes and seconds
on this machine. "all" instruction set, 6 registers. Not a test: wall-clock budgets here.

    .venv/bin/python benchmarks/cain_exact.py [--sets gauss3,sobel-x] [--budget-s 120] [--json]
    .venv/bin/python benchmarks/cain_exact.py --sets gauss3 --parts 64 --workers 2 --budget-s 7200
    .venv/bin/python benchmarks/cain_exact.py --sets prewitt-xy --parts 128 --split-depth 2 --record p.jsonl

With --parts N the search is shared out: share k searches only the programs whose first instruction
is the input state's child i with i % N == k (Prover.split; with --split-depth 2, whose first two
instructions fall in share k, so that one first instruction with a large subtree is shared out too),
the shares run in --workers processes (a pool: each takes the next share), and the proven bound is
the smallest any share reached. With --record FILE each share is appended to FILE as it ends, and a
later run with the same FILE skips the shares of the same proof that ended there: a proof of many
hours runs in several sittings.

A program shorter than the search's that a parted run found (PROVER_PROGRAMS, with the command that
finds it again under --ignore-recorded) is checked and its length taken as the upper bound, so that
"proven optimal" then needs only the lengths below it refuted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cain_suites import LAP4, PREWITT_X, SOBEL_X, fresh_sets, suites  # noqa: E402

from core.cain.approx import approximate  # noqa: E402
from core.cain.exact import Prover, check_program  # noqa: E402
from core.cain.lower_bound import problem_bound  # noqa: E402
from core.filters import preset  # noqa: E402
from core.scamp5.isa import instruction_set  # noqa: E402
from core.scamp5.program import parse_program  # noqa: E402
from core.workload import Kernel, KernelSet  # noqa: E402


def _one(name: str, den: int, m: list[list[int]]) -> KernelSet:
    return KernelSet(name, den, [Kernel(name, [list(map(float, r)) for r in m])])


# (name, kernels, length our search finds, or None where we only ask for the optimum)
def sets() -> list[tuple[str, KernelSet, int | None]]:
    suite = {s.name: s.kernel_set for s in suites() + fresh_sets()}
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
        ("f-sobel-diag", suite["f-sobel-diag"], 10),     # fresh (issue 28), never tuned on
    ]


# Programs shorter than the search's, found by the prover in a parted run (the command that finds
# each again is given); run() checks each with check_program before it takes its length as the upper
# bound, so "proven optimal" then needs only the shorter lengths refuted.
PROVER_PROGRAMS = {
    # --sets sobel-xy --parts 128 --split-depth 2 --shares 1 --ignore-recorded (2026-11-28: 80.6 M nodes, 290 s)
    "sobel-xy": "movx(B, A, north); subx(C, A, south, B); add2x(D, A, B, south, west); subx(E, D, north, C); "
                "add(F, C, D, E); sub2x(B, F, east, east, F); subx(F, C, east, E); add(F, C, D, F)",
}


def prover_program(name: str, ks: KernelSet) -> list[str] | None:
    """The recorded prover program of `name`, checked to compute its kernels (else AssertionError)."""
    text = PROVER_PROGRAMS.get(name)
    if text is None:
        return None
    a = approximate(ks, max_kernels=6)
    prog = parse_program(text)
    check_program(prog, a.goals, a.d, a.channels, 6)
    return [str(i) for i in prog]


def upper(name: str, ks: KernelSet, known: int | None, use_recorded: bool = True) -> int | None:
    """The shortest length known for `name`: the search's, or a recorded prover program's."""
    recorded = prover_program(name, ks) if use_recorded else None
    if recorded is not None and (known is None or len(recorded) < known):
        return len(recorded)
    return known


def run(name: str, ks: KernelSet, known: int | None, budget_s: float, slice_nodes: int,
        use_recorded: bool = True) -> dict:
    a = approximate(ks, max_kernels=6)
    isa = instruction_set("all")
    recorded = PROVER_PROGRAMS.get(name) if use_recorded else None
    known = upper(name, ks, known, use_recorded)
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
        verdict = f"{known} proven optimal" + (" (the recorded prover program)" if recorded is not None else "")
    else:
        verdict = f"not decided: every length below {p.bound} refuted"
    return {"name": name, "d": a.d, "known": known, "general_bound": problem_bound(a.goals, a.d, a.channels, isa).value,
            "start_bound": first, "bound": p.bound, "relaxed_bound": p.relaxed_bound, "done": p.done,
            "program": None if p.program is None else [str(i) for i in p.program], "verdict": verdict,
            "nodes": p.nodes, "seconds": round(seconds, 2)}


def _share(job: tuple[str, int, int, float, int, int, int, bool]) -> dict:
    """One share of a parted proof, in a pool process."""
    name, k, n, budget_s, slice_nodes, relax_nodes, depth, use_recorded = job
    ks, known = next((ks, upper(nm, ks, known, use_recorded)) for nm, ks, known in sets() if nm == name)
    a = approximate(ks, max_kernels=6)
    t0 = time.monotonic()
    p = Prover(a.goals, a.d, a.channels, instruction_set("all"), 6, upper=known, split=(k, n), relax_nodes=relax_nodes,
               split_depth=depth)
    while not p.done and time.monotonic() - t0 < budget_s:
        p.run(slice_nodes)
    from core.cain.exact import load

    return {"share": k, "library": Path(load()._name).name,     # the build this process loaded and ran
            "bound": p.bound, "relaxed_bound": p.relaxed_bound, "done": p.done, "nodes": p.nodes,
            "program": None if p.program is None else [str(i) for i in p.program],
            "seconds": round(time.monotonic() - t0, 2)}


def _recorded(record: Path | None, key: dict) -> dict[int, dict]:
    """Shares of this proof (same set, parts, split depth and known length) that ended in an earlier
    sitting, from the --record file; a torn last line is ignored."""
    out: dict[int, dict] = {}
    if record is None or not record.exists():
        return out
    for line in record.read_text().splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(r, dict) and all(r.get(k) == v for k, v in key.items()) and r.get("done"):
            out[int(r["share"])] = r
    return out


def run_parts(name: str, parts: int, workers: int, budget_s: float, slice_nodes: int, relax_nodes: int,
              shares: list[int] | None = None, depth: int = 1, record: Path | None = None,
              use_recorded: bool = True) -> dict:
    """The proof shared out over `parts` shares in `workers` processes (each within `budget_s` of the start).
    `shares`: only these of them (a long proof run in several sittings; the verdict then covers those only).
    `record`: a JSON-lines file each ended share is appended to as it ends; shares of the same proof that
    ended there before are not run again and count in the verdict (a proof over several sittings)."""
    import multiprocessing as mp

    ks, known = next((ks, upper(nm, ks, known, use_recorded)) for nm, ks, known in sets() if nm == name)
    a = approximate(ks, max_kernels=6)
    isa = instruction_set("all")
    t0 = time.monotonic()
    key = {"set": name, "parts": parts, "split_depth": depth, "known": known}
    before = _recorded(record, key)
    done: list[dict] = list(before.values())
    if before:
        print(f"  {len(before)} share(s) ended in an earlier sitting ({record})", flush=True)
    with mp.get_context("spawn").Pool(workers) as pool:
        todo = [k for k in (range(parts) if shares is None else shares) if 0 <= k < parts and k not in before]
        jobs = [(name, k, parts, budget_s, slice_nodes, relax_nodes, depth, use_recorded) for k in todo]
        for r in pool.imap_unordered(_share, jobs):
            done.append(r)
            if record is not None:
                with record.open("a") as f:
                    f.write(json.dumps({**key, **r}) + "\n")
            print(f"  share {r['share']:3d}: bound {r['bound']} (relaxed {r['relaxed_bound']}) "
                  f"{'done' if r['done'] else 'stopped'} {r['nodes']:,} nodes {r['seconds']} s "
                  f"[{len(done) - len(before)}/{len(jobs)}, {time.monotonic() - t0:.0f} s]", flush=True)
    if not done:
        raise SystemExit(f"{name}: no share to run")
    bound = min(r["bound"] for r in done)
    programs = [r["program"] for r in done if r["program"]]
    best = min(programs, key=len) if programs else None
    if best is not None:
        verdict = f"a program of {len(best)} found"
    elif len({r["share"] for r in done if r["done"]}) < parts:
        verdict = f"{len(done)} of {parts} shares: every length below {bound} refuted in them"
    elif known is not None and bound >= known:
        verdict = f"{known} proven optimal" + (" (the recorded prover program)"
                                                if use_recorded and name in PROVER_PROGRAMS else "")
    else:
        verdict = f"not decided: every length below {bound} refuted"
    return {"name": name, "known": known, "parts": parts, "split_depth": depth, "workers": workers,
            "general_bound": problem_bound(a.goals, a.d, a.channels, isa).value, "bound": bound,
            "verdict": verdict, "program": best, "nodes": sum(r["nodes"] for r in done),
            "seconds": round(time.monotonic() - t0, 2), "shares": sorted(done, key=lambda r: r["share"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="", help="comma-separated names (default: all)")
    ap.add_argument("--budget-s", type=float, default=120.0, help="wall-clock budget per set")
    ap.add_argument("--slice", type=int, default=200_000, help="nodes per slice between budget checks")
    ap.add_argument("--parts", type=int, default=0, help="share each proof out in this many parts")
    ap.add_argument("--workers", type=int, default=2, help="processes for the parts (default 2)")
    ap.add_argument("--relax-nodes", type=int, default=10 ** 12,
                    help="with --parts: nodes of the relaxed phase before the exact one (default: all it needs)")
    ap.add_argument("--shares", default="", help="with --parts: only these shares, e.g. 0-31 or 3,7 (a proof in "
                    "several sittings)")
    ap.add_argument("--split-depth", type=int, choices=(1, 2), default=1,
                    help="with --parts: share out by the first instruction (1) or the first two (2: evener shares)")
    ap.add_argument("--record", type=Path, default=None,
                    help="with --parts: append each ended share to this JSON-lines file, and skip the shares "
                         "of the same proof that ended there before (a proof over several sittings)")
    ap.add_argument("--ignore-recorded", action="store_true",
                    help="do not take a recorded prover program's length as the upper bound (to find it again)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    shares = None
    if args.shares:
        shares = []
        for piece in args.shares.split(","):
            lo, _, hi = piece.partition("-")
            shares += list(range(int(lo), int(hi or lo) + 1))
    want = [s for s in args.sets.split(",") if s]
    if args.parts:
        out = [run_parts(name, args.parts, args.workers, args.budget_s, args.slice, args.relax_nodes, shares,
                         args.split_depth, args.record, not args.ignore_recorded)
               for name, _ks, _known in sets() if not want or name in want]
        for r in out:
            print(f"{r['name']}: {r['verdict']} (bound {r['bound']}, general {r['general_bound']}; {r['parts']} parts "
                  f"in {r['workers']} processes, {r['nodes']:,} nodes, {r['seconds']} s)")
        if args.json:
            print(json.dumps(out, indent=1))
        return
    rows = []
    for name, ks, known in sets():
        if want and name not in want:
            continue
        r = run(name, ks, known, args.budget_s, args.slice, not args.ignore_recorded)
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
