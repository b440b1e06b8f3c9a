"""Where the simulator's program comes from: a text file, pasted text, or the Cain code search.

Program text is the macro syntax of core.scamp5.program with the header of core.scamp5.program_file
(`# input: A`, `# outputs: A B C`), since a bare program does not say which registers are its
results. Without `outputs`, the outputs are the registers the program writes that hold a value at
the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.checks import read_text_file
from core.errors import InputError
from core.jobs import CancelToken
from core.scamp5.interp import SymKernel
from core.scamp5.program import Instr
from core.scamp5.program_file import read_program
from core.workload import KernelSet

if TYPE_CHECKING:
    from core.cain.result import CainResult
    from core.cain.plans import ProgramPlan

# Bounds on a program given as a file or text: SCAMP-5 programs are tens to hundreds of
# instructions; a simulation of 10,000 already takes minutes, and parsing a million lines did too.
MAX_INSTRUCTIONS = 10_000
PROGRAM_LIMIT = 4 << 20


@dataclass
class ResolvedProgram:
    """A checked program with the registers that hold its input and its results."""

    program: list[Instr]
    input_register: str
    output_registers: list[str]
    label: str                                   # e.g. "file analognet2.txt", "Cain search (all)"
    expected: dict[str, SymKernel] = field(default_factory=dict)   # register -> kernel it should hold
    requested: dict[str, SymKernel] = field(default_factory=dict)  # register -> kernel before approximation
    info: dict[str, Any] = field(default_factory=dict)


def from_text(text: str, regs: tuple[str, ...], label: str, input_register: str | None = None,
              outputs: list[str] | None = None, where: str = "program") -> ResolvedProgram:
    """Parse program text (core.scamp5.program_file); errors carry `where:line N`. Registers given
    here win over the header's."""
    text = text.removeprefix("\ufeff")             # pasted from a file saved with a BOM
    count = sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    if count > MAX_INSTRUCTIONS:
        raise InputError(f"the program has {count:,} instruction lines; at most {MAX_INSTRUCTIONS:,} are simulated "
                         f"(each one updates every register plane of the array)", where)
    program, header = read_program(text, regs, where)
    if not program:
        raise InputError("the program has no instructions", where)
    inp = input_register or header.input_register or "A"
    outs = list(outputs or header.output_registers)
    for what, names in (("input register", [inp]), ("output registers", outs)):
        for n in names:
            if n not in regs:
                raise InputError(f"register {n!r} is not one of {', '.join(regs)}", f"{where}: {what}")
    return ResolvedProgram(program, inp, outs, label)


def from_file(path: str, regs: tuple[str, ...], input_register: str | None = None,
              outputs: list[str] | None = None) -> ResolvedProgram:
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise InputError("program file not found", str(p))
    text = read_text_file(p, "program file", PROGRAM_LIMIT)     # UTF-8, a BOM dropped; a regular file
    return from_text(text, regs, f"file {p.name}", input_register, outputs, where=str(p))


def kernel_of(k: Any, denominator: float, where: str = "kernels") -> SymKernel:
    """A kernel (SymKernel, Kernel, or a 2-D matrix of numerators) over `denominator` as a SymKernel."""
    from sims.scamp5.analysis import kernel_from_matrix

    if isinstance(k, SymKernel):
        return k
    values = getattr(k, "values", k)
    try:
        rows = [list(r) for r in values]
        if any(isinstance(v, (list, tuple)) for r in rows for v in r):
            raise InputError("multi-channel kernels need one input image per channel; the simulator has one", where)
        return kernel_from_matrix(rows, denominator)
    except (TypeError, ValueError) as exc:
        raise InputError(f"not a kernel matrix: {exc}", where) from None


def from_search(kernels: KernelSet, regs: tuple[str, ...], isa: str, mode: str, time_s: float,
                cancel: CancelToken | None = None) -> ResolvedProgram:
    """Run the Cain code search (core.cain.api.compile_filter) with a short budget."""
    try:
        from core.cain.api import compile_filter
    except ImportError as exc:
        raise InputError(f"the code search (core.cain) is not available: {exc}", "preset") from None
    plan = compile_filter(kernels, isa=isa, registers=len(regs), time_s=time_s, mode=mode, cancel=cancel)
    program = list(plan.program)
    if not program:
        raise InputError(f"the code search found no program for {kernels.name} in {time_s:g} s", "preset")
    outs = [str(r) for r in plan.output_registers]
    inp = str(plan.input_register)
    res = ResolvedProgram(program, inp, outs, f"{'AUKE-style' if mode == 'auke' else 'Cain'} search "
                          f"({isa}, {time_s:g} s) for {kernels.name}")
    for i, reg in enumerate(outs):
        res.requested[reg] = kernel_of(kernels.kernels[i], kernels.denominator, f"kernels[{i}]")
        res.expected[reg] = kernel_of(plan.approximated_kernels[i], plan.denominator, f"approximated kernel {i}")
    res.info = {"d": plan.d, "isa": isa, "mode": mode, "time_s": time_s, "length": len(program),
                "max_abs_approximation_error": plan.max_abs_error, "verified_by_search": plan.verified}
    return res


def settings_from_cain_result(found: CainResult | ProgramPlan | None) -> dict[str, Any]:
    """Simulator settings that replay a code-search program: a final result (its best program) or
    one plan (core.cain.plans) goes in as a program file text, and its approximated kernels
    become the expected results. What the Cain panel's "Open in stepper" and the simulator's "Use
    code-search result" both apply."""
    from core.cain import plans
    from core.cain.result import CainResult

    plan = plans.best_plan(found) if isinstance(found, CainResult) else found
    if plan is None or not plan.program:
        raise InputError("the code-search result holds no program", "cain.program")
    out: dict[str, Any] = {"program_source": "text", "program_text": plans.program_text(plan),
                           "input_register": "", "output_registers": [], "reference": "none", "expected": None}
    approx, names = plan.approximated_kernels, plan.kernel_names
    if names and len(names) == len(plan.output_registers) and plan.denominator and all(n in approx for n in names):
        out["reference"] = "expected"
        out["expected"] = {"denominator": plan.denominator, "kernels": [approx[n] for n in names],
                           "source": f"the code search's approximated kernels ({plan.filter or '?'})"}
    return out
