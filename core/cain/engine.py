"""The "cain" engine: simultaneous-kernel code search for SCAMP-5 (Stow et al., Cain).

Given one or more convolution kernels, it approximates them to multiples of 1/2^d, searches
backwards from the Final-Goals to the input with Cain's reverse search, allocates registers,
and reports every shorter program it finds -- each one first verified by the exact interpreter.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Iterator

from core.cain.api import MODES, check_options
from core.cain.approx import MAX_D, approximate, check_kernels
from core.cain.lower_bound import LowerBound, problem_bound, verdict
from core.cain.plans import ProgramPlan, cpp_text, make_plan
from core.cain.result import CainResult, GoalMatrix
from core.cain.result import Improvement as FoundProgram
from core.cain.solver import TRAVERSALS, Improvement, Proven, Stats, solve
from core.checks import read_json_file
from core.results import EngineResult
from core.settings import defaults_of, parse, schema_of, setting
from core.engine import EngineSpec, JobRequest
from core.errors import InputError
from core.filters import PRESETS, preset
from core.jobs import CancelToken, Event, FinalResult, LogLine, MetricPoint, PartialResult, Progress
from core.scamp5.analogue import AnalogueWarning, flat, kernel_warnings, register_warnings
from core.scamp5.isa import INSTRUCTION_SETS, OP_TABLE, instruction_set, register_names
from core.scamp5.interp import run_symbolic
from core.scamp5.program import format_instr
from core.workload import KernelSet, Scamp5Target, kernels_of



MAX_TIME_S = 24 * 3600          # core.cain.api.check_options
MAX_WORKERS = 64


@dataclass(frozen=True)
class CainSettings:
    """The search's settings, declared once (SETTINGS_SCHEMA is made from them). The registers are
    the SCAMP-5 target's."""

    isa: str = setting("all", "Set", "Instruction set: all / basic (Cain's Table 1) or auke (AUKE's set, which also "
                       "searches one kernel at a time)", enum=list(INSTRUCTION_SETS),
                       labels={"auke": "auke (AUKE's set)"})
    mode: str = setting("cain", "Mode", "simultaneous (Cain: all kernels in one search, sharing work) or one kernel "
                        "at a time, programs concatenated (the AUKE baseline)", enum=list(MODES),
                        labels={"cain": "simultaneous", "auke": "one by one"})
    time_s: float = setting(10.0, "Time", "Search time budget (at most a day)", exclusive_minimum=0,
                            maximum=MAX_TIME_S, unit="s", decimals=1, step=1.0)
    max_nodes: int | None = setting(None, "Max nodes", "Stop after exploring this many search nodes; 'no limit' "
                                    "stops on time only", minimum=1, null_text="no limit")
    workers: int = setting(2, "Workers", "Search worker processes", minimum=1, maximum=MAX_WORKERS)
    traversal: str = setting(
        "portfolio", "Traversal", "portfolio (every worker its own strategy: CGDS, beam search, a wider CGDS, "
        "best-first), or one strategy for every worker: cgds (Cain's Algorithm 1), beam (anytime, widening), "
        "best-first, dfs, or random (CGDS in a random child order)", enum=list(TRAVERSALS))
    d: int | None = setting(None, "d", "Coefficients become multiples of 1/2^d; 'auto' picks the smallest d within "
                            "the tolerance", minimum=0, maximum=MAX_D, null_text="auto")
    tolerance: float = setting(1e-9, "Tolerance", "With d = auto: the largest error allowed per coefficient (e.g. "
                               "0.01); 1e-9 asks for an exact approximation", minimum=0, placeholder="1e-9")
    seed_share: float = setting(0.25, "Seed share", "Several kernels: this share of the time first builds a "
                                "one-by-one program, the length the simultaneous search must beat (0 = off)",
                                minimum=0, maximum=0.9, decimals=2, step=0.05)
    seed: int = setting(0, "Random seed", "Seed of the search workers' random choices: with the same seed and a node "
                        "limit a run gives the same length every time", minimum=0, maximum=2 ** 31 - 1)


SETTINGS_SCHEMA: dict[str, Any] = schema_of(CainSettings)


def default_settings() -> dict[str, Any]:
    return defaults_of(CainSettings)


def workload_problem(workload: Any) -> str | None:
    """Kernels the search cannot take whatever the settings (even sizes, mixed channel counts...)."""
    try:
        check_kernels(kernels_of(workload), None)
    except InputError as exc:
        return f"the code search cannot take these kernels: {exc.where}: {exc.message}" if exc.where \
            else f"the code search cannot take these kernels: {exc.message}"
    return None


def migrate_v1_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    """Format 1 kept a register count that overrode the target's: it becomes a SCAMP-5 target."""
    s = dict(settings)
    registers = s.pop("registers", None)
    if registers is None:
        return s, None, None
    if isinstance(registers, bool) or not isinstance(registers, int):      # "six" was never a register count
        raise InputError(f"expected a whole number of registers, got {registers!r}"[:200], "registers")
    return s, None, Scamp5Target(registers=registers)


def registers_of(target: Any) -> int:
    """The registers the search may use: the target's (SCAMP-5: six, A-F)."""
    return target.registers if isinstance(target, Scamp5Target) else 6


def _settings(raw: dict[str, Any], target: Any) -> CainSettings:
    """The request's settings over the defaults, typed, checked with the target's register count
    (InputError names the setting)."""
    def check(s: CainSettings) -> CainSettings:
        if s.isa == "auke":
            s = replace(s, mode="auke")
        share = s.seed_share
        if not 0 <= share <= 0.9:
            raise InputError(f"must be a number in 0..0.9, got {share!r}", "settings.seed_share")
        tol = s.tolerance
        if not (tol >= 0 and math.isfinite(tol)):
            raise InputError(f"must be a number >= 0, got {tol!r}", "settings.tolerance")
        try:
            check_options(s.isa, registers_of(target), s.time_s, s.max_nodes, s.workers, s.traversal, s.mode)
        except InputError as exc:
            where = "target.registers" if exc.where == "registers" else f"settings.{exc.where}"
            raise InputError(exc.message, where) from None
        return s
    return parse(CainSettings, raw, check=check)


def _metric_points(nodes: int, elapsed: float, length: int) -> list[MetricPoint]:
    return [MetricPoint("best length", float(nodes), float(length), plot="nodes"),
            MetricPoint("best length", float(elapsed), float(length), plot="time")]


def _register_goals(imp: Improvement, d: int, regs: tuple[str, ...]) -> list[dict[str, Any]]:
    """What every register holds before step 1 and after each step (Atom counts over 2^d)."""
    states = run_symbolic(imp.program, {r: c for c, r in imp.input_registers.items()}, regs)
    return [{r: (None if k is None else [[int(v) for v in row] for row in k.to_matrix(scale=2 ** d)])
             for r, k in st.items()} for st in states]


def _improvement(imp: Improvement) -> dict[str, Any]:
    """An improvement as the result keeps it: when it was found, and its program."""
    return {"length": imp.length, "nodes": imp.nodes, "time_s": round(imp.elapsed, 4), "method": imp.method,
            "strategy": imp.strategy, "program": [format_instr(i) for i in imp.program], "outputs": dict(imp.output_registers),
            "input_registers": {str(c): r for c, r in imp.input_registers.items()}}


def _search_fields(ks: KernelSet, approx: Any, s: CainSettings, registers: int) -> dict[str, Any]:
    """What every plan of this search shares (core.cain.plans.SEARCH_KEYS)."""
    return {"filter": ks.name, "kernel_names": list(approx.names), "d": approx.d, "denominator": 2 ** approx.d,
            "approximated_kernels": dict(zip(approx.names, approx.approximated)), "isa": s.isa,
            "registers": registers}


# the least share of its budget a search gets, however long its process took to start (a 1 s budget
# on a loaded machine still searches for a moment, and ends a little late rather than empty-handed)
MIN_SEARCH_SHARE = 0.2


def _budget(cancel: CancelToken, time_s: float) -> tuple[float, float]:
    """(start, search seconds): the budget counts from when the run was asked for (cancel.started:
    in the window, when Run was pressed, so the worker process's start-up, its imports and the lower
    bound are spent from it and the run ends when the user expects, issue 30), the search gets what
    is left. A start on another clock (a test's fake one) counts from now."""
    now = time.monotonic()
    lead = now - cancel.started
    if not 0.0 <= lead <= time_s + 3600.0:
        lead = 0.0
    return now - lead, max(time_s - lead, MIN_SEARCH_SHARE * time_s)


def run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    ks = kernels_of(request.workload)
    s = _settings(request.settings, request.target)
    registers = registers_of(request.target)
    approx = approximate(ks, d=s.d, tolerance=s.tolerance, max_kernels=registers)
    isa = instruction_set(s.isa)
    regs = register_names(registers)
    bound = problem_bound(approx.goals, approx.d, approx.channels, isa)
    yield LogLine(f"{ks.name}: {len(approx.goals)} kernel(s), d = {approx.d}, max coefficient error "
                  f"{approx.max_abs_error:g}; {s.mode} search with the '{s.isa}' set, {len(regs)} registers, "
                  f"{s.traversal}, {s.workers} worker(s), {s.time_s:g} s; proven lower bound "
                  f"{bound.value} instructions")
    for w in _kernel_warnings(approx, {}):
        yield LogLine(w.message, "warning")
    start, search_s = _budget(cancel, float(s.time_s))
    proven = bound.value            # the bound, raised by the exact prover as it refutes lengths
    best: Improvement | None = None
    first_t: float | None = None
    improvements: list[dict[str, Any]] = []
    nodes = 0
    last_points = 0.0
    for ev in solve(approx, isa, registers, search_s, s.max_nodes, s.workers,
                    s.traversal, s.mode, cancel, seed_share=float(s.seed_share), stop_at=bound.value,
                    seed=int(s.seed)):
        cancel.check()
        elapsed = time.monotonic() - start
        if isinstance(ev, Proven):
            proven = max(proven, ev.bound)
            yield LogLine(f"proven by exhaustive search: no program has fewer than {proven} instructions")
            continue
        if isinstance(ev, Stats):
            nodes = max(nodes, ev.nodes)
            yield _progress(nodes, elapsed, best, proven, s)
            if best is not None and elapsed - last_points > 0.5:
                last_points = elapsed
                yield from _metric_points(nodes, elapsed, best.length)
            continue
        best = ev
        nodes = max(nodes, ev.nodes)
        if first_t is None:
            first_t = ev.elapsed
        if not ev.registers:
            ev.registers = _register_goals(ev, approx.d, regs)
        improvements.append(_improvement(ev))
        yield from _metric_points(ev.nodes, ev.elapsed, ev.length)
        # a self-contained plan (core.cain.plans): a cancelled run keeps the last one as its partial result
        yield PartialResult("plan", make_plan(FoundProgram(**improvements[-1]), _search_fields(ks, approx, s, registers),
                                              [[GoalMatrix(**g) for g in bag] for bag in ev.bags], ev.registers))
        # the status line names the best length the listing now shows, not the one before (issue 49)
        yield _progress(nodes, elapsed, best, proven, s)
        yield LogLine(f"verified program of length {ev.length} after {ev.nodes} nodes, {ev.elapsed:.2f} s"
                      + (" (optimal: the lower bound)" if ev.length <= proven else ""))
    elapsed = time.monotonic() - start
    if best is not None:
        yield from _metric_points(nodes, elapsed, best.length)
    yield FinalResult(_final(ks, approx, s, registers, best, first_t, improvements, nodes, elapsed, bound, proven))


def _progress(nodes: int, elapsed: float, best: Improvement | None, proven: int, s: CainSettings) -> Progress:
    """How far the search is (its time or node budget, whichever is nearer its end) and what it has."""
    frac = min(1.0, elapsed / s.time_s)
    if s.max_nodes:
        frac = max(frac, min(1.0, nodes / s.max_nodes))
    return Progress(frac, f"{nodes} nodes" + (f", best {best.length}" if best else ", no program yet")
                    + f", lower bound {proven}")


def _kernel_warnings(approx: Any, outputs: dict[str, str]) -> list[AnalogueWarning]:
    """Kernels whose gain leaves the analogue range: known before the search, whatever it finds."""
    return kernel_warnings({name: ([Fraction(v) / 2 ** approx.d for v in flat(m)], outputs.get(name))
                            for name, m in zip(approx.names, approx.approximated)})


def _analogue_warnings(approx: Any, outputs: dict[str, str], program: list[str],
                       registers: list[dict[str, Any]]) -> list[AnalogueWarning]:
    """The kernels' gains, and each register of the found program that can leave the analogue range
    (its Goal after every instruction, numerators over 2^d, core.scamp5.analogue)."""
    scale = Fraction(1, 2 ** approx.d)
    states = [{r: None if m is None else [scale * v for v in flat(m)] for r, m in st.items()} for st in registers]
    return _kernel_warnings(approx, outputs) + register_warnings(states, program)


def _final(ks: KernelSet, approx: Any, s: CainSettings, registers: int, best: Improvement | None, first_t: float | None,
           improvements: list[dict[str, Any]], nodes: int, elapsed: float, bound: LowerBound,
           proven: int) -> CainResult:
    lower = bound.raised(proven)        # the exact prover refuted every length below `proven`
    nothing = CainResult(
        filter=ks.name, kernel_names=list(approx.names), isa=s.isa, mode=s.mode,
        registers=registers, traversal=s.traversal, workers=s.workers,
        time_budget_s=s.time_s, max_nodes=s.max_nodes,
        d=approx.d, denominator=2 ** approx.d,
        approximated_kernels=dict(zip(approx.names, approx.approximated)),
        coefficient_errors=dict(zip(approx.names, approx.errors)),
        max_abs_error=approx.max_abs_error,
        nodes_explored=nodes, elapsed_s=round(elapsed, 3),
        nodes_per_s=round(nodes / elapsed, 1) if elapsed > 0 else None,
        improvements=[FoundProgram(**imp) for imp in improvements],
        found=False, length=None, program=[], output_registers=[], outputs={},
        input_register="A", input_registers={}, time_to_first_s=None, time_to_best_s=None,
        verified=False, verification="no program found within the budget", cpp="",
        bus_steps=None, goal_bags=[], register_goals=[],
        lower_bound=lower, warnings=_kernel_warnings(approx, {}),
    )
    if best is None:
        return nothing
    outputs = dict(best.output_registers)
    return replace(
        nothing,
        found=True, length=best.length, program=[format_instr(i) for i in best.program], method=best.method,
        output_registers=[outputs[n] for n in approx.names], outputs=outputs,
        input_register=best.input_registers.get(0, "A"),
        input_registers={str(c): r for c, r in best.input_registers.items()},
        time_to_first_s=round(first_t or best.elapsed, 4), time_to_best_s=round(best.elapsed, 4),
        verified=best.verified, verification=best.check,
        cpp=cpp_text(make_plan(FoundProgram(**improvements[-1]), _search_fields(ks, approx, s, registers))),
        bus_steps=sum(OP_TABLE[i.spec.key].bus_steps for i in best.program),
        goal_bags=[[GoalMatrix(**g) for g in bag] for bag in best.bags], register_goals=best.registers,
        gap=best.length - lower.value, optimal=best.length <= lower.value,
        warnings=_analogue_warnings(approx, outputs, [format_instr(i) for i in best.program], best.registers),
    )


# ------------------------------------------------------------------ command line
def add_cli_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--preset", choices=sorted(PRESETS), help="a built-in filter")
    src.add_argument("--kernels", metavar="FILE.json", help="kernel file (see docs/cain.md)")
    p.add_argument("--isa", default="all", choices=list(INSTRUCTION_SETS),
                   help="instruction set: all, basic, or auke (AUKE's set, one kernel at a time)")
    p.add_argument("--mode", default="cain", choices=list(MODES),
                   help="cain: all kernels together; auke: one at a time, concatenated (baseline)")
    p.add_argument("--registers", type=int, default=6, help="analogue registers (default 6: A-F)")
    p.add_argument("--time", type=float, default=60.0, help="search time budget in seconds (default 60)")
    p.add_argument("--max-nodes", type=int, default=None, help="stop after this many nodes")
    p.add_argument("--workers", type=int, default=2, help="search worker processes (default 2)")
    p.add_argument("--traversal", default="portfolio", choices=list(TRAVERSALS),
                   help="portfolio (default: a strategy per worker), or one for all: cgds, beam, best-first, dfs, "
                        "random (CGDS with random child order)")
    p.add_argument("--d", type=int, default=None, help="divisions: coefficients become multiples of 1/2^d")
    p.add_argument("--tolerance", type=float, default=1e-9,
                   help="largest coefficient error when d is chosen automatically")
    p.add_argument("--seed-share", type=float, default=0.25,
                   help="several kernels: share of the time spent first on a one-by-one program, the bound "
                        "the simultaneous search must beat (0 = off)")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed of the search workers (same seed and --max-nodes: same length)")


def load_kernel_file(path: str) -> KernelSet:
    """A kernel file (docs/cain.md): UTF-8 JSON, every field checked; InputError names the file and field."""
    data = read_json_file(path, "kernel file")
    if isinstance(data, dict) and "kind" in data and data["kind"] != "kernels":
        raise InputError(f"expected kind 'kernels', got {data['kind']!r}"[:200], f"{path}: kind")
    try:
        return KernelSet.from_json(data, "")
    except InputError as exc:
        raise InputError(exc.message, f"{path}: {exc.where}" if exc.where else str(path)) from None


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    ks = preset(args.preset) if args.preset else load_kernel_file(args.kernels)
    settings = {"isa": args.isa, "mode": "auke" if args.isa == "auke" else args.mode,
                "time_s": args.time, "max_nodes": args.max_nodes,
                "workers": args.workers, "traversal": args.traversal, "d": args.d, "tolerance": args.tolerance,
                "seed_share": args.seed_share, "seed": args.seed}
    target = Scamp5Target(registers=args.registers)       # --registers is the target's register count
    approximate(ks, d=args.d, tolerance=args.tolerance, max_kernels=args.registers)
    _settings(settings, target)          # bad options (a bad register count too) fail here, before the run
    return JobRequest(ks, target, settings)


def _matrix_text(m: Any) -> str:
    if m and isinstance(m[0], list) and m[0] and isinstance(m[0][0], list):
        return "\n".join(f"  channel {z}:\n" + _matrix_text(c) for z, c in enumerate(m))
    return "\n".join("    [" + " ".join(f"{v:4d}" for v in row) + " ]" for row in m)


def bound_text(r: CainResult) -> str:
    """"optimal (proven lower bound 10)", "lower bound 19 (gap 4)"; results of version 1 have no bound."""
    return verdict(r.length, r.bound)


def format_text(result: EngineResult) -> str:
    assert isinstance(result, CainResult)
    r = result
    lines = [f"{r.filter}: approximated with d = {r.d} (over {r.denominator}), "
             f"max coefficient error {r.max_abs_error:g}"]
    for name, m in r.approximated_kernels.items():
        lines.append(f"  {name} (x 1/{r.denominator}):")
        lines.append(_matrix_text(m))
    who = f"{r.workers} worker(s)"
    lines.append(f"search: {r.mode} mode, '{r.isa}' set, {r.registers} registers, {r.traversal}, "
                 f"{who}: {r.nodes_explored} nodes in {r.elapsed_s} s "
                 f"({r.nodes_per_s} nodes/s)")
    lines += [f"warning: {w.message}" for w in r.warnings or ()]
    if not r.found:
        lines.append(f"no program found within the budget; {bound_text(r)}")
        return "\n".join(lines)
    by = r.improvements[-1].strategy if r.improvements else None
    lines.append(f"best program: {r.length} instructions ({r.bus_steps} bus steps), {bound_text(r)}; "
                 + (f"found by the {by} search; " if by else "") + "first program after "
                 f"{r.time_to_first_s} s, best after {r.time_to_best_s} s; "
                 f"verified: {r.verified} ({r.verification})")
    lines.append(f"input {r.input_register}; outputs: " +
                 ", ".join(f"{k} -> {v}" for k, v in r.outputs.items()))
    lines += [f"{i + 1:3d}  {ins};" for i, ins in enumerate(r.program)]
    return "\n".join(lines)


ENGINE = EngineSpec(
    name="cain",
    title="FPSP code search (Cain)",
    summary=("Cain: finds short SCAMP-5 analogue macro programs that compute one or more convolution kernels "
             "at once, sharing common sub-expressions (reverse search over Goal-Bags, a portfolio of CGDS, "
             "beam and best-first searches). "
             "Every program shown has been verified by the exact macro interpreter."),
    run=run,
    default_settings=default_settings,
    add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli,
    format_text=format_text,
    workload_kinds=("fpsp_filter", "kernels"),
    target_kinds=("scamp5",),
    partial_types={"plan": ProgramPlan},
    settings_schema=SETTINGS_SCHEMA,
    workload_problem=workload_problem,
    migrate_v1_settings=migrate_v1_settings,
    order=10,
    result_type=CainResult,
)
