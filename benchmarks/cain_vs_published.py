"""The `cain` engine against the published Cain tool (github ed741/cain) on the suites of
benchmarks/cain_suites.py (issue 15): same kernels, same instruction set, same registers, same
time, one tool after the other on the whole machine (never side by side), ours with 2 workers, the
published tool with its README's recommended base config (4 worker threads). Every run waits for
an idle machine (1-minute load average under --max-load, 1.5) and records the load it started at;
a machine that stays busy stops the benchmark (exit 2) unless --allow-load is given.

Per set: program length, time to the first and to the best program, nodes, peak memory (the whole
process tree: our workers, or the JVM), and each program's check by the project's interpreter
(core.scamp5.interp.run_symbolic must give exactly every kernel in its output register; a program
that fails the check counts as not found). Our lower bound / "optimal" verdict is shown when the
result JSON has them. Summary per suite: sets where ours is longer / equal / shorter, mean length
ratio ours/published; tuning sets, the held-aside sets of issue 15 and the fresh suite of issue 28
reported separately.

The published tool is a peer, not a dependency: build it with benchmarks/build_published_cain.sh
DIR and pass --published DIR (or CAIN_PUBLISHED=DIR). Without it the benchmark says so and runs
ours only. Its results do not depend on our engine, so they are cached in
benchmarks/cain_published_cache.json, keyed by kernels, set, registers, time, workers and the
tool's commit (--refresh-published reruns them); every row says whether it came from the cache and
when it was measured.

    .venv/bin/python benchmarks/cain_vs_published.py [--published DIR] [--time 60] [--isa all[,basic]]
        [--registers 6] [--workers 2] [--sets NAME,...] [--held-aside-only | --tuning-only]
        [--tools both|ours|published] [--refresh-published] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.cain_suites import (SuiteSet, by_name, fresh_sets, held_aside_sets, suites,  # noqa: E402
                                    tuning_sets)
from core.files import output_files  # noqa: E402
from core.machine_load import LoadMeter, load_json, warn_if_busy  # noqa: E402
from core.scamp5.interp import SymKernel, run_symbolic  # noqa: E402
from core.scamp5.isa import CLOCKWISE, register_names  # noqa: E402
from core.scamp5.program import parse_program  # noqa: E402

CACHE = ROOT / "benchmarks" / "cain_published_cache.json"
MAIN_CLASS = "uk.co.edstow.cain.Main"
PUBLISHED_WORKERS = 4          # the README's recommended base config (examples/recommendedAnalogue.json)
GRACE_S = 60.0                 # a run still going this long after its budget is killed


@dataclass
class ToolRun:
    """One tool on one set: what it printed, as numbers, and the interpreter's verdict."""

    tool: str                           # "ours" | "published"
    found: bool = False                 # a program that passed the check
    length: int | None = None           # instructions of that program
    claimed_length: int | None = None   # the length the tool itself reported
    check: str = ""                     # the interpreter's verdict
    time_to_first_s: float | None = None
    time_to_best_s: float | None = None
    nodes: int | None = None
    wall_s: float | None = None
    peak_mb: float | None = None
    lower_bound: int | None = None      # ours, when the result has one
    optimal: bool | None = None
    found_by: str = ""                  # ours: the portfolio member that found the best (its strategy)
    program: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    input_register: str = "A"
    reordered: int = 0                  # published: mov2x lines whose directions were swapped (see normalise_mov2x)
    error: str = ""
    cached: bool = False
    measured_at: str = ""               # ISO time the run was made
    load_before: float | None = None    # 1-minute load average when the run started


# ---- the check ---------------------------------------------------------------------------------


def target_kernels(s: SuiteSet) -> list[SymKernel]:
    den = s.kernel_set.denominator
    return [SymKernel.from_matrix(k.values, Fraction(1, den)) for k in s.kernels]


def check_program(program: str | list[str], s: SuiteSet, input_register: str, outputs: list[str],
                  registers: int) -> tuple[bool, str]:
    """Run the program symbolically; every output register must hold its kernel exactly."""
    text = program if isinstance(program, str) else "\n".join(program)
    try:
        prog = parse_program(text, registers)
        final = run_symbolic(prog, {input_register: 0}, registers)[-1]
    except Exception as exc:  # any unparsable/unrunnable program fails the check
        return False, f"does not run: {exc}"
    for k, (want, reg) in enumerate(zip(target_kernels(s), outputs)):
        if final.get(reg) != want:
            return False, f"kernel {s.kernels[k].name}: register {reg} holds {final.get(reg)}"
    return True, f"checked: {len(prog)} instructions, {len(outputs)} kernel(s) exact"


_MOV2X = re.compile(r"^\s*mov2x\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)\s*;?\s*$")


def normalise_mov2x(program: list[str]) -> tuple[list[str], int]:
    """The published tool prints mov2x(y, x, d1, d2) with d2 = d1 turned anticlockwise too (e.g.
    south, east), which the instruction table (d2 = d1 or d1 turned clockwise) and our parser reject.
    The shift is d1 + d2 either way, so swapping the two directions gives the same program, same
    length, within the table; returns the program and how many lines were swapped."""
    out, swapped = [], 0
    for line in program:
        m = _MOV2X.match(line)
        if m and m[4] in CLOCKWISE and CLOCKWISE[m[4]] == m[3]:
            line = f"mov2x({m[1]}, {m[2]}, {m[4]}, {m[3]});"
            swapped += 1
        out.append(line)
    return out, swapped


def judge(r: "ToolRun", s: SuiteSet, registers: int) -> None:
    """Set found / check / length of a run from its program (also for cached runs: the check is
    always the current interpreter's)."""
    if not r.program:
        r.found, r.length = False, None
        return
    prog = r.program
    if r.tool == "published":
        prog, r.reordered = normalise_mov2x(prog)
    r.found, r.check = check_program(prog, s, r.input_register, r.outputs, registers)
    if r.found and r.reordered:
        r.check += f" (mov2x directions swapped in {r.reordered} line(s))"
    r.length = len(prog) if r.found else None


# ---- running a process tree with its peak memory ----------------------------------------------


def run_tree(cmd: list[str], timeout_s: float, stdout_path: Path, cwd: Path = ROOT) -> tuple[int, float, float]:
    """Run cmd, stdout to a file; (exit code, wall seconds, peak MB of the whole process tree)."""
    with open(stdout_path, "w") as out, open(stdout_path.with_suffix(".err"), "w") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd)
        ps = psutil.Process(proc.pid)
        peak = 0
        while proc.poll() is None:
            try:
                tree = [ps, *ps.children(recursive=True)]
                rss = 0
                for p in tree:
                    try:
                        rss += p.memory_info().rss
                    except psutil.Error:
                        pass
                peak = max(peak, rss)
            except psutil.Error:
                pass
            if time.monotonic() - t0 > timeout_s:
                for p in ps.children(recursive=True):
                    p.kill()
                proc.kill()
            time.sleep(0.2)
        return proc.returncode, time.monotonic() - t0, peak / 2 ** 20


def wait_for_idle(max_load: float, wait_s: float) -> float:
    """Wait (at most wait_s) until the 1-minute load average is under max_load; return it. A run
    of ours or of the tool leaves the average high for a minute or so after it (it decays with a
    time constant of 60 s), so every run waits for the machine to be idle again."""
    t0 = time.monotonic()
    while True:
        load = os.getloadavg()[0]
        if load < max_load or time.monotonic() - t0 > wait_s:
            return load
        time.sleep(2.0)


# ---- the published tool --------------------------------------------------------------------------


@dataclass(frozen=True)
class Published:
    """A local build made by benchmarks/build_published_cain.sh."""

    root: Path
    classpath: str
    commit: str
    base_config: dict[str, Any]

    @staticmethod
    def find(path: str | None) -> "Published | str":
        """The build at path, or a sentence saying why there is none."""
        if not path:
            return "no published tool given (--published DIR or CAIN_PUBLISHED; build it with " \
                   "benchmarks/build_published_cain.sh DIR)"
        root = Path(path)
        cp, commit = root / "cain.classpath", root / "cain-commit"
        base = root / "src" / "examples" / "recommendedAnalogue.json"
        missing = [str(p) for p in (cp, commit, base) if not p.is_file()]
        if missing:
            return f"published tool at {root} is incomplete (missing {', '.join(missing)}); " \
                   f"rebuild it with benchmarks/build_published_cain.sh {root}"
        return Published(root, cp.read_text().strip(), commit.read_text().strip(), json.loads(base.read_text()))

    def config(self, s: SuiteSet, isa: str, registers: int, time_s: float, workers: int) -> dict[str, Any]:
        """The README's recommended base config with our kernels, set, registers and time."""
        den = s.kernel_set.denominator
        depth = den.bit_length() - 1 if den & (den - 1) == 0 else 10
        regs = list(register_names(registers))
        cfg = json.loads(json.dumps(self.base_config))
        cfg["name"] = s.name
        cfg["maxApproximationDepth"] = max(depth, 0)
        cfg["maxApproximationError"] = 0
        exact = den & (den - 1) == 0          # a power of two: integers and depth -log2(den), as its examples
        cfg["filter"] = {regs[i]: {"depth": -depth, "array": k.values} if exact else
                         {"depth": 0, "array": [[v / den for v in row] for row in k.values]}
                         for i, k in enumerate(s.kernels)}
        cfg["registerAllocator"]["availableRegisters"] = regs
        cfg["registerAllocator"]["initialRegisters"] = [regs[0]]
        rc = cfg["runConfig"]
        rc.update(searchTime=int(round(time_s * 1000)), timeOut=True, workers=workers, liveCounter=False,
                  livePrintPlans=1, quiet=False)
        cfg["pairGen"]["strategy"]["ops"] = isa
        return cfg


_PLAN = re.compile(r"^Plan: \d+ Cost: -?\d+ \(length=(\d+)\).* found at (\d+)ms after locally searching (\d+) nodes")
_NODES = re.compile(r"NodesExpanded: (\d+)")
_BLOCK = re.compile(r"scamp5_kernel_begin\(\);(.*?)scamp5_kernel_end\(\);", re.S)


def parse_published(text: str) -> dict[str, Any]:
    """The published tool's stdout as numbers: its plans (length, ms, nodes), nodes expanded by all
    workers, and the best program's instructions (the last kernel block it prints)."""
    plans = [(int(m[1]), int(m[2]), int(m[3])) for m in map(_PLAN.match, text.splitlines()) if m]
    blocks = _BLOCK.findall(text)
    program: list[str] = []
    if blocks:
        body = re.sub(r"/\*.*?\*/", "", blocks[-1], flags=re.S)
        program = [ln.strip() for ln in body.splitlines() if ln.strip()]
    nodes = [int(n) for n in _NODES.findall(text)]
    return {"plans": plans, "program": program, "nodes": sum(nodes) if nodes else None,
            "no_solution": "No Solutions Found!" in text}


def run_published(pub: Published, s: SuiteSet, isa: str, registers: int, time_s: float, workers: int,
                  work: Path) -> ToolRun:
    cfg_path = work / f"{s.name}-{isa}.cain.json"
    cfg_path.write_text(json.dumps(pub.config(s, isa, registers, time_s, workers), indent=1))
    out = work / f"{s.name}-{isa}.published.out"
    r = ToolRun("published", measured_at=dt.datetime.now().isoformat(timespec="seconds"))
    code, r.wall_s, r.peak_mb = run_tree(["java", "-cp", pub.classpath, MAIN_CLASS, str(cfg_path)],
                                         time_s + GRACE_S, out)
    text = out.read_text(errors="replace")
    p = parse_published(text)
    r.nodes = p["nodes"]
    r.outputs = list(register_names(registers))[:len(s.kernels)]
    r.input_register = r.outputs[0]
    if p["plans"]:
        r.time_to_first_s = min(ms for _, ms, _ in p["plans"]) / 1000
        best = min(p["plans"], key=lambda t: (t[0], t[1]))
        r.claimed_length, r.time_to_best_s = best[0], best[1] / 1000
    if not p["program"]:
        err = out.with_suffix(".err").read_text(errors="replace").strip().splitlines()
        r.error = "no program" + (" (No Solutions Found!)" if p["no_solution"] else "") + \
                  (f"; exit {code}" if code else "") + (f"; {err[-1][:200]}" if err else "")
        return r
    r.program = p["program"]
    judge(r, s, registers)
    return r


# ---- ours ----------------------------------------------------------------------------------------


def bound_value(lb: Any) -> int | None:
    """The result's lower bound: an object with its `value` and terms (CainResult version 2), or a
    plain number; None before there was one."""
    if isinstance(lb, dict):
        lb = lb.get("value")
    return lb if isinstance(lb, int) and not isinstance(lb, bool) else None



def run_ours(s: SuiteSet, isa: str, registers: int, time_s: float, workers: int, work: Path) -> ToolRun:
    kfile = work / f"{s.name}.kernels.json"
    kfile.write_text(json.dumps(s.kernels_json()))
    out = work / f"{s.name}-{isa}.ours.json"
    r = ToolRun("ours", measured_at=dt.datetime.now().isoformat(timespec="seconds"))
    cmd = [sys.executable, str(ROOT / "main.py"), "cain", "--kernels", str(kfile), "--isa", isa,
           "--registers", str(registers), "--time", f"{time_s:g}", "--workers", str(workers), "--json"]
    code, r.wall_s, r.peak_mb = run_tree(cmd, time_s + GRACE_S, out)
    try:
        d = json.loads(out.read_text())
    except ValueError:
        err = out.with_suffix(".err").read_text(errors="replace").strip().splitlines()
        r.error = f"no result (exit {code}){': ' + err[-1][:200] if err else ''}"
        return r
    r.nodes, r.time_to_first_s, r.time_to_best_s = d.get("nodes_explored"), d.get("time_to_first_s"), d.get("time_to_best_s")
    r.lower_bound, r.optimal = bound_value(d.get("lower_bound")), d.get("optimal")
    r.claimed_length = d.get("length")
    r.found_by = str(((d.get("improvements") or [{}])[-1]).get("strategy") or "")
    if not d.get("found", d.get("program") is not None) or not d.get("program"):
        r.error = "no program"
        return r
    r.program, r.outputs = list(d["program"]), list(d["output_registers"])
    r.input_register = d.get("input_register", "A")
    judge(r, s, registers)
    return r


# ---- the cache of published results --------------------------------------------------------------


def cache_key(s: SuiteSet, isa: str, registers: int, time_s: float, workers: int, commit: str) -> str:
    ident = json.dumps({"kernels": s.kernels_json(), "isa": isa, "registers": registers, "time_s": time_s,
                        "workers": workers, "commit": commit}, sort_keys=True)
    return f"{s.name}|{isa}|r{registers}|{time_s:g}s|w{workers}|{commit[:12]}|" + \
        hashlib.sha256(ident.encode()).hexdigest()[:16]


def load_cache(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        d = json.loads(path.read_text())
    except ValueError as exc:
        raise SystemExit(f"{path}: not JSON ({exc}); delete it or pass --refresh-published") from None
    return d.get("runs", {}) if isinstance(d, dict) else {}


def write_atomic(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)


def save_cache(path: Path, runs: dict[str, Any]) -> None:
    doc = {"about": "published Cain results for benchmarks/cain_vs_published.py (key: set|isa|registers|"
                    "time|workers|tool commit|hash of all of them with the kernels)", "runs": runs}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


# ---- the table and the summary ---------------------------------------------------------------------


def _f(x: float | None, nd: int = 1) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _len(r: ToolRun | None) -> str:
    if r is None:
        return "n/a"
    if r.found:
        return f"{r.length}*" if r.reordered else str(r.length)
    return "fail" if r.program else "none"


def kind(held_aside: bool, draw: str = "issue 15") -> str:
    """T: a tuning set; H: held aside (issue 15); F: the fresh suite of issue 28 (held aside too)."""
    return "F" if draw == "issue 28" else ("H" if held_aside else "T")


def print_row(name: str, held_aside: bool, isa: str, pub: ToolRun | None, ours: ToolRun | None,
              draw: str = "issue 15") -> None:
    def part(r: ToolRun | None) -> str:
        if r is None:
            return f"{'n/a':>5} {'':>6} {'':>6} {'':>9} {'':>6}"
        return f"{_len(r):>5} {_f(r.time_to_first_s):>6} {_f(r.time_to_best_s):>6} " \
               f"{(r.nodes if r.nodes is not None else '-'):>9} {_f(r.peak_mb, 0):>6}"
    bound = ""
    if ours is not None and ours.lower_bound is not None:
        bound = f" lb {ours.lower_bound}{' optimal' if ours.optimal else ''}"
    if ours is not None and ours.found_by:
        bound += f" by {ours.found_by}"
    src = "" if pub is None else (f" [cached {pub.measured_at}]" if pub.cached else "")
    loads = "/".join("-" if r is None or r.load_before is None else f"{r.load_before:.2f}" for r in (pub, ours))
    print(f"{name:22} {isa:5} {kind(held_aside, draw)} | {part(pub)} | {part(ours)} |{bound}{src} load {loads}",
          flush=True)
    for r in (pub, ours):
        if r is not None and (r.error or (r.program and not r.found)):
            print(f"    {r.tool}: {r.error or r.check}", flush=True)


HEADER = (f"{'set':22} {'isa':5} T/H | {'published: len':>14} {'first':>6} {'best':>6} {'nodes':>9} {'MB':>6} | "
          f"{'ours: len':>9} {'first':>6} {'best':>6} {'nodes':>9} {'MB':>6} |")


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Longer / equal / shorter counts and length ratios, where both tools have a checked program."""
    both = [r for r in rows if r["published"] and r["ours"] and r["published"]["found"] and r["ours"]["found"]]
    ratios = [r["ours"]["length"] / r["published"]["length"] for r in both]
    out = {"sets": len(rows), "both_found": len(both),
           "ours_longer": sum(r["ours"]["length"] > r["published"]["length"] for r in both),
           "equal": sum(r["ours"]["length"] == r["published"]["length"] for r in both),
           "ours_shorter": sum(r["ours"]["length"] < r["published"]["length"] for r in both),
           "only_ours": sum(bool(r["ours"] and r["ours"]["found"] and not (r["published"] and r["published"]["found"]))
                            for r in rows if r["published"]),
           "only_published": sum(bool(r["published"]["found"] and not (r["ours"] and r["ours"]["found"]))
                                 for r in rows if r["published"] and r["ours"]),
           "mean_ratio": statistics.fmean(ratios) if ratios else None,
           "ratio_of_means": (statistics.fmean(r["ours"]["length"] for r in both)
                              / statistics.fmean(r["published"]["length"] for r in both)) if both else None,
           "ours_peak_mb_max": max((r["ours"]["peak_mb"] or 0 for r in rows if r["ours"]), default=None)}
    return out


def print_summary(label: str, sm: dict[str, Any]) -> None:
    if not sm["both_found"]:
        print(f"  {label:24} {sm['sets']:3} sets: no set where both tools have a checked program"
              + (f"; only ours {sm['only_ours']}" if sm["only_ours"] else ""))
        return
    print(f"  {label:24} {sm['sets']:3} sets, both found {sm['both_found']:3}: ours longer {sm['ours_longer']}, "
          f"equal {sm['equal']}, shorter {sm['ours_shorter']}; only ours {sm['only_ours']}, only published "
          f"{sm['only_published']}; mean ratio ours/published {sm['mean_ratio']:.3f}, "
          f"ratio of mean lengths {sm['ratio_of_means']:.3f}")


# ---- main ------------------------------------------------------------------------------------------


def pick_sets(args: argparse.Namespace) -> list[SuiteSet]:
    if args.sets:
        chosen = by_name([n.strip() for n in args.sets.split(",") if n.strip()])   # ValueError naming a bad one
    elif args.fresh_only:
        chosen = fresh_sets()
    elif args.held_aside_only:
        chosen = held_aside_sets()
    elif args.tuning_only:
        chosen = tuning_sets()
    else:
        chosen = suites()
    if args.held_aside_only:
        chosen = [s for s in chosen if s.held_aside]
    if args.tuning_only:
        chosen = [s for s in chosen if not s.held_aside]
    return chosen


class Busy(Exception):
    """The machine did not become idle: timings against a peer would measure the load."""


def idle(args: argparse.Namespace) -> float:
    load = wait_for_idle(args.max_load, args.idle_wait)
    if load >= args.max_load and not args.allow_load:
        raise Busy(f"the machine stayed busy (1-minute load average {load:.2f} >= {args.max_load:g} after "
                   f"{args.idle_wait:g} s): timing against a peer needs an idle machine; stop the other work, "
                   f"or pass --allow-load to measure anyway")
    return load


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except Busy as exc:
        print(f"--max-load: {exc}", file=sys.stderr)
        return 2


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--published", default=os.environ.get("CAIN_PUBLISHED"),
                    help="directory built by benchmarks/build_published_cain.sh (default: $CAIN_PUBLISHED)")
    ap.add_argument("--time", type=float, default=60.0, help="seconds per tool, set and instruction set (60)")
    ap.add_argument("--isa", default="all", help="all, basic, or all,basic")
    ap.add_argument("--registers", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2, help="our worker processes (2)")
    ap.add_argument("--published-workers", type=int, default=PUBLISHED_WORKERS,
                    help=f"the published tool's worker threads ({PUBLISHED_WORKERS}, its recommended config)")
    ap.add_argument("--sets", help="comma-separated set names (benchmarks/cain_suites.py lists them)")
    grp = ap.add_mutually_exclusive_group()
    grp.add_argument("--held-aside-only", action="store_true")
    grp.add_argument("--tuning-only", action="store_true")
    grp.add_argument("--fresh-only", action="store_true", help="the suite drawn for issue 28 only")
    ap.add_argument("--max-load", type=float, default=1.5,
                    help="start a run only below this 1-minute load average (default 1.5)")
    ap.add_argument("--idle-wait", type=float, default=300.0, help="seconds to wait for it before giving up (300)")
    ap.add_argument("--allow-load", action="store_true", help="run on a busy machine anyway (figures measure the load)")
    ap.add_argument("--tools", choices=("both", "ours", "published"), default="both")
    ap.add_argument("--refresh-published", action="store_true", help="rerun the published tool, replacing cached rows")
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--work", type=Path, help="keep configs and tool output here (default: a temporary folder)")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    ap.add_argument("--save", type=Path, help="also write that JSON object to this file")
    ap.add_argument("--report", type=Path, nargs="+", metavar="SAVED",
                    help="run nothing: print the rows and summary of saved runs (--save files; later ones win)")
    ap.add_argument("--markdown", action="store_true", help="also print the rows as a Markdown table")
    args = ap.parse_args(argv)
    if args.report:
        return report_saved(args.report, args.markdown)
    unwritable = output_files({"--save": args.save, "--cache": args.cache})     # before hours of searching
    if unwritable:
        print(f"error: {unwritable}", file=sys.stderr)
        return 2
    isas = [i.strip() for i in args.isa.split(",") if i.strip()]
    for i in isas:
        if i not in ("all", "basic"):
            print(f"--isa: {i!r} is not one of all, basic", file=sys.stderr)
            return 2
    if not (args.time > 0 and math.isfinite(args.time)):
        print(f"--time: must be a positive number of seconds, got {args.time}", file=sys.stderr)
        return 2
    if not 1 <= args.registers <= 26:
        print(f"--registers: must be 1..26, got {args.registers}", file=sys.stderr)
        return 2
    try:
        sets = pick_sets(args)
    except ValueError as exc:
        print(f"--sets: {exc}", file=sys.stderr)
        return 2
    too_many = [s.name for s in sets if len(s.kernels) > args.registers]
    if too_many:
        print(f"--registers: {args.registers} is fewer than the kernels of {', '.join(too_many)}", file=sys.stderr)
        return 2

    pub: Published | None = None
    if args.tools != "ours":
        found = Published.find(args.published)
        if isinstance(found, str):
            print(f"published tool: ABSENT - {found}; running ours only", flush=True)
        else:
            pub = found
            print(f"published tool: {pub.root} (commit {pub.commit[:12]}), {args.published_workers} worker threads, "
                  f"README's recommended base config", flush=True)
    cache = load_cache(args.cache)
    run_ours_too = args.tools != "published"
    load = os.getloadavg()
    print(f"{len(sets)} set(s) x {', '.join(isas)}; {args.registers} registers; {args.time:g} s per tool; ours "
          f"{'with ' + str(args.workers) + ' workers' if run_ours_too else 'not run'}; one tool at a time; "
          f"{os.cpu_count()} cores, load average {load[0]:.1f} at start", flush=True)
    print(HEADER, flush=True)

    settings = {"time_s": args.time, "isa": isas, "registers": args.registers, "workers": args.workers,
                "published_workers": args.published_workers, "published": str(pub.root) if pub else None,
                "published_commit": pub.commit if pub else None, "cores": os.cpu_count()}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="cain-vs-published-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for s in sets:
            for isa in isas:
                meter = LoadMeter()         # per row: what else ran while the two tools searched
                p_run: ToolRun | None = None
                if pub is not None:
                    key = cache_key(s, isa, args.registers, args.time, args.published_workers, pub.commit)
                    if key in cache and not args.refresh_published:
                        p_run = ToolRun(**cache[key])
                        p_run.cached = True
                        judge(p_run, s, args.registers)
                    else:
                        load = idle(args)
                        p_run = run_published(pub, s, isa, args.registers, args.time, args.published_workers, work)
                        p_run.load_before = load
                        cache[key] = {k: v for k, v in asdict(p_run).items() if k != "cached"}
                        save_cache(args.cache, cache)
                o_run = None
                if run_ours_too:
                    load = idle(args)
                    o_run = run_ours(s, isa, args.registers, args.time, args.workers, work)
                    o_run.load_before = load
                print_row(s.name, s.held_aside, isa, p_run, o_run, s.draw)
                row_load = meter.stop()
                warn_if_busy(row_load, sys.stdout)
                rows.append({"set": s.name, "suite": s.suite, "held_aside": s.held_aside, "draw": s.draw, "isa": isa,
                             "kernels": len(s.kernels), "published": asdict(p_run) if p_run else None,
                             "ours": asdict(o_run) if o_run else None, "load_average": os.getloadavg()[0],
                             **load_json(row_load)})
                if args.save:       # after every row, so a stopped run keeps what it measured (--report reads it)
                    write_atomic(args.save, {"settings": settings, "rows": rows, "partial": True})
    doc = {"settings": settings, "rows": rows, "summary": report(rows, args.markdown),
           "timings_unreliable": any(r.get("timings_unreliable") for r in rows)}
    if args.save:
        write_atomic(args.save, doc)
    if args.json:
        print(json.dumps(doc, indent=1))
    return 0


def report(rows: list[dict[str, Any]], markdown: bool) -> dict[str, Any]:
    """Print the summary (and the rows as a Markdown table); the summary as data."""
    isas = list(dict.fromkeys(r["isa"] for r in rows))
    swapped = sum(1 for r in rows if r["published"] and r["published"]["reordered"] and r["published"]["found"])
    if swapped:
        print(f"* {swapped} published program(s) print mov2x(y, x, d1, d2) with d2 = d1 turned anticlockwise, "
              f"outside the instruction table's rule; checked with the two directions swapped (same shift, "
              f"same length)")
    summary: dict[str, Any] = {}
    print(f"\nsummary (load average at end {os.getloadavg()[0]:.1f}; lengths only where the interpreter "
          f"checked the program):")
    for isa in isas:
        for part, pick in (("all sets", lambda r: True), ("tuning", lambda r: not r["held_aside"]),
                           ("held aside (issue 15)", lambda r: r["held_aside"] and r.get("draw", "issue 15") == "issue 15"),
                           ("fresh (issue 28)", lambda r: r.get("draw") == "issue 28")):
            sel = [r for r in rows if r["isa"] == isa and pick(r)]
            if not sel:
                continue
            sm = summarise(sel)
            summary[f"{isa}/{part}"] = sm
            print_summary(f"{isa} {part}", sm)
            if part == "all sets":
                for suite in dict.fromkeys(r["suite"] for r in sel):
                    sub = [r for r in sel if r["suite"] == suite]
                    sm2 = summarise(sub)
                    summary[f"{isa}/{suite}"] = sm2
                    print_summary(f"  {isa} {suite}", sm2)
    loads = [r["load_average"] for r in rows if r.get("load_average") is not None]
    if loads:
        print(f"  load average after each row: median {statistics.median(loads):.1f}, {min(loads):.1f}-{max(loads):.1f}")
    if markdown:
        print_markdown(rows)
    return summary


def print_markdown(rows: list[dict[str, Any]]) -> None:
    """The rows as the table in docs/cain.md (T tuning, H held aside, F the fresh suite of issue 28)."""
    def tr(d: dict[str, Any] | None) -> ToolRun | None:
        return ToolRun(**d) if d else None

    by = any((r["ours"] or {}).get("found_by") for r in rows)     # runs saved before it was kept lack it
    print("\n| set | suite | T/H | kernels | isa | published | ours | ours bound | published first / best (s) | "
          "ours first / best (s) | published nodes | ours nodes | published MB | ours MB | load at start |"
          + (" ours by |" if by else ""))
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if by else ""))
    for r in rows:
        p, o = tr(r["published"]), tr(r["ours"])
        bound = "" if o is None or o.lower_bound is None else f"{o.lower_bound}{' (optimal)' if o.optimal else ''}"
        pl, ol = _len(p), _len(o)
        if p and o and p.found and o.found and o.length is not None and p.length is not None:
            if o.length < p.length:
                ol = f"**{ol}**"
            elif p.length < o.length:
                pl = f"**{pl}**"
        fb = (lambda t: "-" if t is None else f"{_f(t.time_to_first_s)} / {_f(t.time_to_best_s)}")
        nodes = (lambda t: "-" if t is None or t.nodes is None else f"{t.nodes:,}".replace(",", " "))
        mb = (lambda t: "-" if t is None or t.peak_mb is None else f"{t.peak_mb:,.0f}".replace(",", " "))
        loads = " / ".join("-" if t is None or t.load_before is None else f"{t.load_before:.2f}" for t in (p, o))
        print(f"| {r['set']} | {r['suite']} | {kind(r['held_aside'], r.get('draw', 'issue 15'))} | {r['kernels']} | "
              f"{r['isa']} | {pl} | {ol} | {bound} | {fb(p)} | {fb(o)} | {nodes(p)} | {nodes(o)} | {mb(p)} | {mb(o)} | "
              f"{loads} |"
              + (f" {(o.found_by if o else '') or '-'} |" if by else ""))


def report_saved(paths: list[Path], markdown: bool) -> int:
    """--report: rows of saved runs (--save), later files replacing earlier rows of the same set and isa."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for path in paths:
        try:
            doc = json.loads(path.read_text())
            for r in doc["rows"]:
                rows[(r["set"], r["isa"])] = r
                registers = doc.get("settings", {}).get("registers", 6)
                for tool in ("published", "ours"):        # the current check, on the saved programs
                    if r[tool]:
                        run = ToolRun(**r[tool])
                        run.lower_bound = bound_value(run.lower_bound)
                        judge(run, by_name([r["set"]])[0], registers)
                        r[tool] = asdict(run)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"--report: {path}: not a saved run of this benchmark, or of other suites ({exc})", file=sys.stderr)
            return 2
    print(HEADER)
    for r in rows.values():
        print_row(r["set"], r["held_aside"], r["isa"], ToolRun(**r["published"]) if r["published"] else None,
                  ToolRun(**r["ours"]) if r["ours"] else None, r.get("draw", "issue 15"))
    report(list(rows.values()), markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
