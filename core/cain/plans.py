"""The programs a code search found, each as a self-contained "plan" dict, and its program file.

The engine streams a plan as a PartialResult("plan") whenever it finds a shorter program, and the
final result keeps every improvement's program (they are few). A plan carries what it takes to show,
export or simulate that one program without the rest of the result:

    length, program ([macro text]), outputs ({kernel: register}), output_registers ([register per
    kernel]), input_register, input_registers ({channel: register}), nodes, time_s, method, strategy
    (the portfolio member that found it, since result version 3),
    filter, kernel_names, d, denominator, approximated_kernels ({kernel: numerators over 2^d}),
    isa, registers, and for the best program goal_bags and register_goals.

The panel's plots, its Program tab, its export and the simulator's hand-over all read plans from
here, so none of them rebuilds one from a result by hand. A plan is a plain dict (it is streamed as
a partial result); plans_of and best_plan make them from the typed final result (a CainResult).
"""

from __future__ import annotations

from typing import Any

from core.cain.codegen import cpp_kernel
from core.cain.result import CainResult
from core.results import to_plain
from core.scamp5.isa import register_names
from core.scamp5.program import parse_program
from core.scamp5.program_file import ProgramHeader, write_program

# what every plan of one search shares (the result's fields of the same names)
SEARCH_KEYS = ("filter", "kernel_names", "d", "denominator", "approximated_kernels", "isa", "registers")
PROGRAM_KEYS = ("program", "outputs", "input_registers")


def make_plan(entry: dict[str, Any], search: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A plan from an improvement entry (length, nodes, time_s, method, program, outputs,
    input_registers) and the search's shared fields (SEARCH_KEYS)."""
    outputs: dict[str, str] = dict(entry.get("outputs") or {})
    names = list(search.get("kernel_names") or outputs)
    inputs: dict[str, str] = dict(entry.get("input_registers") or {"0": "A"})
    plan = {**entry, **{k: search.get(k) for k in SEARCH_KEYS}, "outputs": outputs,
            "output_registers": [outputs[n] for n in names if n in outputs], "input_registers": inputs,
            "input_register": inputs.get("0", next(iter(inputs.values()), "A"))}
    plan.update(extra or {})
    return plan


def plans_of(result: CainResult) -> list[dict[str, Any] | None]:
    """One plan per improvement of a final result, in the order found; None where the result does
    not keep that program (results stored before programs were kept hold only the best one)."""
    search = {k: getattr(result, k) for k in SEARCH_KEYS}
    imps = result.improvements
    out: list[dict[str, Any] | None] = []
    for i, imp in enumerate(imps):
        entry: dict[str, Any] = to_plain(imp)           # the improvement's stored keys, as streamed
        extra = None
        if i == len(imps) - 1 and result.found:
            # the last improvement is the best program: the result's own fields describe it fully
            entry.update({k: getattr(result, k) for k in PROGRAM_KEYS})
            extra = {"goal_bags": to_plain(result.goal_bags), "register_goals": result.register_goals}
        elif not entry.get("program"):
            out.append(None)
            continue
        out.append(make_plan(entry, search, extra))
    return out


def best_plan(result: CainResult) -> dict[str, Any] | None:
    """The best program of a final result as a plan; None when nothing was found."""
    if not result.found:
        return None
    plans = plans_of(result)
    return plans[-1] if plans else None


def program_text(plan: dict[str, Any]) -> str:
    """The plan as a program file (core.scamp5.program_file): title, input, outputs, kernel names."""
    prog = [str(p) for p in plan.get("program") or []]
    inputs = plan.get("input_registers") or {"0": plan.get("input_register") or "A"}
    outs = [str(r) for r in plan.get("output_registers") or []]
    names = [str(n) for n in plan.get("kernel_names") or []]
    comments = [f"Cain code search: {plan.get('filter') or 'kernels'}, {len(prog)} macros"]
    if plan.get("nodes") is not None:
        comments.append(f"found after {plan.get('nodes')} nodes, {plan.get('time_s')} s"
                        + (f" ({plan['method']})" if plan.get("method") else "")
                        + (f"; coefficients over {plan['denominator']}" if plan.get("denominator") else ""))
    header = ProgramHeader(input_registers=[str(inputs[k]) for k in sorted(inputs, key=int)],
                           output_registers=outs, kernel_names=names if len(names) == len(outs) else [],
                           comments=comments)
    return write_program(prog, header)


def cpp_text(plan: dict[str, Any]) -> str:
    """The plan as a C++ kernel body for the SCAMP-5 host API (core.cain.codegen)."""
    regs = register_names(int(plan.get("registers") or 6))
    program = parse_program("\n".join(str(p) for p in plan.get("program") or []), regs)
    title = (f"{plan.get('filter') or 'kernels'}: {len(program)} SCAMP-5 macro instructions (Cain, "
             f"'{plan.get('isa')}' set, d = {plan.get('d')}, verified by the exact interpreter)")
    inputs = {int(c): str(r) for c, r in (plan.get("input_registers") or {"0": "A"}).items()}
    return cpp_kernel(program, title, inputs, dict(plan.get("outputs") or {}), regs)
