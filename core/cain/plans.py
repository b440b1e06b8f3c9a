"""The programs a code search found, each as a self-contained, typed plan, and its program file.

The engine streams a plan as a PartialResult("plan") whenever it finds a shorter program (a cancelled
run keeps the last one), and the final result keeps every improvement's program (they are few). A
`ProgramPlan` carries what it takes to show, export or simulate that one program without the rest of
the result: when it was found (length, nodes, time_s, method, strategy), the program and its
registers, what the search shares (filter, kernel_names, d, denominator, approximated_kernels, isa,
registers) and, for the best program, its Goal-Bags and register Goals.

The panel's plots, its Program tab, its export and the simulator's hand-over all read plans from
here, so none of them rebuilds one from a result by hand. plans_of and best_plan make them from the
typed final result (a CainResult) with no JSON; a plan's JSON form (to_json / from_json, the keys a
session's partial result "plan" has always had) is made only where a session is saved or read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.cain.codegen import cpp_kernel
from core.cain.result import CainResult, GoalMatrix, Improvement, IntKernel, IntMatrix
from core.results import optional_key, read_value, to_plain
from core.scamp5.isa import register_names
from core.scamp5.program import parse_program
from core.scamp5.program_file import ProgramHeader, write_program

# what every plan of one search shares (the result's fields of the same names)
SEARCH_KEYS = ("filter", "kernel_names", "d", "denominator", "approximated_kernels", "isa", "registers")


@dataclass(kw_only=True)
class ProgramPlan:
    """One verified program a search found, and what it takes to show, export or simulate it."""

    length: int
    nodes: int
    time_s: float
    method: str                                 # "simultaneous" | "one-by-one"
    strategy: str | None = optional_key()       # the portfolio member that found it
    program: list[str]
    outputs: dict[str, str]                     # kernel name -> register
    output_registers: list[str]                 # in kernel order
    input_register: str
    input_registers: dict[str, str]             # channel ("0", ...) -> register
    filter: str
    kernel_names: list[str]
    d: int
    denominator: int
    approximated_kernels: dict[str, IntKernel]
    isa: str
    registers: int
    goal_bags: list[list[GoalMatrix]] | None = optional_key()          # the best program's only
    register_goals: list[dict[str, IntMatrix | None]] | None = optional_key()

    def to_json(self) -> dict[str, Any]:
        """The plan's JSON form (a session's partial result "plan")."""
        return dict(to_plain(self))

    @classmethod
    def from_json(cls, data: Any, where: str = "plan") -> "ProgramPlan":
        """A plan read back from its JSON form; InputError naming the field that does not read."""
        plan: ProgramPlan = read_value(cls, data, where)
        return plan


def make_plan(found: Improvement, search: dict[str, Any], goal_bags: list[list[GoalMatrix]] | None = None,
              register_goals: list[dict[str, IntMatrix | None]] | None = None) -> ProgramPlan:
    """A plan from an improvement (when it was found, its program) and the search's shared fields
    (SEARCH_KEYS)."""
    outputs = dict(found.outputs or {})
    names = list(search.get("kernel_names") or outputs)
    inputs = dict(found.input_registers or {"0": "A"})
    return ProgramPlan(
        length=found.length, nodes=found.nodes, time_s=found.time_s, method=found.method, strategy=found.strategy,
        program=list(found.program or []), outputs=outputs, output_registers=[outputs[n] for n in names if n in outputs],
        input_register=inputs.get("0", next(iter(inputs.values()), "A")), input_registers=inputs,
        filter=search["filter"], kernel_names=names, d=search["d"], denominator=search["denominator"],
        approximated_kernels=dict(search["approximated_kernels"]), isa=search["isa"], registers=search["registers"],
        goal_bags=goal_bags, register_goals=register_goals)


def plans_of(result: CainResult) -> list[ProgramPlan | None]:
    """One plan per improvement of a final result, in the order found; None where the result does
    not keep that program (results stored before programs were kept hold only the best one)."""
    search = {k: getattr(result, k) for k in SEARCH_KEYS}
    imps = result.improvements
    out: list[ProgramPlan | None] = []
    for i, imp in enumerate(imps):
        if i == len(imps) - 1 and result.found:
            # the last improvement is the best program: the result's own fields describe it fully
            best = replace(imp, program=result.program, outputs=result.outputs, input_registers=result.input_registers)
            out.append(make_plan(best, search, result.goal_bags, result.register_goals))
        elif not imp.program:
            out.append(None)
        else:
            out.append(make_plan(imp, search))
    return out


def best_plan(result: CainResult) -> ProgramPlan | None:
    """The best program of a final result as a plan; None when nothing was found."""
    if not result.found:
        return None
    plans = plans_of(result)
    return plans[-1] if plans else None


def program_text(plan: ProgramPlan) -> str:
    """The plan as a program file (core.scamp5.program_file): title, input, outputs, kernel names."""
    prog = list(plan.program)
    inputs = plan.input_registers or {"0": plan.input_register or "A"}
    outs, names = list(plan.output_registers), list(plan.kernel_names)
    comments = [f"Cain code search: {plan.filter or 'kernels'}, {len(prog)} macros",
                f"found after {plan.nodes} nodes, {plan.time_s} s" + (f" ({plan.method})" if plan.method else "")
                + (f"; coefficients over {plan.denominator}" if plan.denominator else "")]
    header = ProgramHeader(input_registers=[str(inputs[k]) for k in sorted(inputs, key=int)],
                           output_registers=outs, kernel_names=names if len(names) == len(outs) else [],
                           comments=comments)
    return write_program(prog, header)


def cpp_text(plan: ProgramPlan) -> str:
    """The plan as a C++ kernel body for the SCAMP-5 host API (core.cain.codegen)."""
    regs = register_names(int(plan.registers or 6))
    program = parse_program("\n".join(plan.program), regs)
    title = (f"{plan.filter or 'kernels'}: {len(program)} SCAMP-5 macro instructions (Cain, "
             f"'{plan.isa}' set, d = {plan.d}, verified by the exact interpreter)")
    inputs = {int(c): str(r) for c, r in (plan.input_registers or {"0": "A"}).items()}
    return cpp_kernel(program, title, inputs, dict(plan.outputs), regs)
