"""Plain Python API for other engines and the simulator: compile a filter to a SCAMP-5 program.

    from core.cain.api import compile_filter
    plan = compile_filter(preset("gauss3"), time_s=5)
    plan.program            # list[Instr], verified by the exact interpreter
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.cain.approx import approximate
from core.cain.solver import TRAVERSALS, Improvement, Stats, solve
from core.errors import InputError
from core.jobs import CancelToken
from core.scamp5.isa import INSTRUCTION_SETS, MAX_REGISTERS, instruction_set
from core.scamp5.program import Instr
from core.workload import KernelSet


MODES = ("cain", "auke")     # simultaneous, one kernel at a time


@dataclass
class CainPlan:
    """The shortest verified program found."""

    program: list[Instr]
    kernel_names: list[str]
    output_registers: list[str]             # register per kernel, in kernel order
    input_register: str                     # channel 0's register
    input_registers: dict[int, str]         # channel -> register
    d: int
    approximated_kernels: list[Any]         # per kernel: numerators over 2^d
    max_abs_error: float
    nodes_explored: int
    time_s: float
    verified: bool

    @property
    def length(self) -> int:
        return len(self.program)

    @property
    def denominator(self) -> int:
        return 2 ** self.d

    @property
    def outputs(self) -> dict[str, str]:
        """Kernel name -> output register."""
        return dict(zip(self.kernel_names, self.output_registers))


def check_options(isa: str, registers: int, time_s: float, max_nodes: int | None, workers: int,
                  traversal: str, mode: str) -> None:
    if isa not in INSTRUCTION_SETS:
        raise InputError(f"unknown instruction set {isa!r}; known: {', '.join(INSTRUCTION_SETS)}", "isa")
    if isinstance(registers, bool) or not isinstance(registers, int) or not 2 <= registers <= MAX_REGISTERS:
        raise InputError(f"registers must be 2..{MAX_REGISTERS}, got {registers!r}", "registers")
    if not isinstance(time_s, (int, float)) or not time_s > 0 or time_s > 24 * 3600:
        raise InputError(f"time must be a positive number of seconds (at most a day), got {time_s!r}", "time_s")
    if max_nodes is not None and (isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1):
        raise InputError(f"max nodes must be a positive integer, got {max_nodes!r}", "max_nodes")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 64:
        raise InputError(f"workers must be 1..64, got {workers!r}", "workers")
    if traversal not in TRAVERSALS:
        raise InputError(f"unknown traversal {traversal!r}; known: {', '.join(TRAVERSALS)}", "traversal")
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}", "mode")


def compile_filter(kernel_set: KernelSet, *, isa: str = "all", registers: int = 6, time_s: float = 10.0,
                   max_nodes: int | None = None, workers: int = 1, traversal: str = "portfolio",
                   mode: str = "cain", d: int | None = None, tolerance: float = 1e-9,
                   seed_share: float = 0.25, cancel: CancelToken | None = None) -> CainPlan:
    """Search for the shortest program computing every kernel; raise InputError if none is found."""
    check_options(isa, registers, time_s, max_nodes, workers, traversal, mode)
    approx = approximate(kernel_set, d=d, tolerance=tolerance, max_kernels=registers)
    best: Improvement | None = None
    nodes = 0
    for ev in solve(approx, instruction_set(isa), registers, float(time_s), max_nodes, workers, traversal, mode,
                    cancel or CancelToken(), seed_share=seed_share):
        if isinstance(ev, Improvement):
            best = ev
        if isinstance(ev, (Improvement, Stats)):
            nodes = max(nodes, ev.nodes)
    if best is None:
        raise InputError(f"no verified program found within {time_s:g} s"
                         + (f" / {max_nodes} nodes" if max_nodes else "") + "; allow more time or registers",
                         "search")
    return CainPlan(best.program, list(approx.names), [best.output_registers[n] for n in approx.names],
                    best.input_registers.get(0, "A"), best.input_registers, approx.d, list(approx.approximated),
                    approx.max_abs_error, nodes, best.elapsed, best.verified)
