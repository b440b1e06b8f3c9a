"""Where the simulator's program comes from: a text file, pasted text, or the Cain code search.

Program text is the macro syntax of core.scamp5.program. Two optional comment directives name
the registers, since a bare program does not say which registers are its results:

    # input: A
    # outputs: A B C

Without `outputs`, the outputs are the registers the program writes that hold a value at the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import InputError
from core.jobs import CancelToken
from core.scamp5.interp import SymKernel
from core.scamp5.program import Instr, format_instr, parse_program
from core.workload import KernelSet

_DIRECTIVE = re.compile(r"^\s*(?:#|//)\s*(input|outputs?)\s*:\s*(.*)$", re.IGNORECASE)


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

    @property
    def text(self) -> str:
        return "\n".join(format_instr(i) for i in self.program)


def directives(text: str) -> dict[str, list[str]]:
    """`# input: A` and `# outputs: A B C` lines of a program text."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = _DIRECTIVE.match(line)
        if m:
            key = "input" if m.group(1).lower() == "input" else "outputs"
            out[key] = [t.upper() for t in re.split(r"[\s,]+", m.group(2).strip()) if t]
    return out


def _check_regs(names: list[str], regs: tuple[str, ...], where: str) -> list[str]:
    for n in names:
        if n not in regs:
            raise InputError(f"register {n!r} is not one of {', '.join(regs)}", where)
    return names


def from_text(text: str, regs: tuple[str, ...], label: str, input_register: str | None = None,
              outputs: list[str] | None = None, where: str = "program") -> ResolvedProgram:
    """Parse program text; errors carry `where:line N`."""
    try:
        program = parse_program(text, regs)
    except InputError as exc:
        raise InputError(exc.message, f"{where}:{exc.where}" if exc.where else where) from None
    if not program:
        raise InputError("the program has no instructions", where)
    d = directives(text)
    inp = input_register or (d.get("input") or ["A"])[0]
    _check_regs([inp], regs, f"{where}: input register")
    outs = outputs or d.get("outputs") or []
    _check_regs(outs, regs, f"{where}: output registers")
    return ResolvedProgram(program, inp, list(outs), label)


def from_file(path: str, regs: tuple[str, ...], input_register: str | None = None,
              outputs: list[str] | None = None) -> ResolvedProgram:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("program file not found", str(p)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read program file: {exc}", str(p)) from None
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


def settings_from_cain_result(result: dict[str, Any]) -> dict[str, Any]:
    """Simulator settings that replay a code-search result: its program as text (with its input
    and output registers as directives) and its approximated kernels as the expected results."""
    prog = result.get("program")
    if not prog:
        raise InputError("the code-search result holds no program", "cain.program")
    lines = prog if isinstance(prog, list) else str(prog).splitlines()
    outs = [str(r) for r in result.get("output_registers", [])]
    header = [f"# code search: {result.get('filter', '?')}, {len(lines)} macros",
              f"# input: {result.get('input_register', 'A')}"]
    if outs:
        header.append(f"# outputs: {' '.join(outs)}")
    out: dict[str, Any] = {"program_source": "text", "program_text": "\n".join(header + [str(x) for x in lines]) + "\n",
                           "input_register": "", "output_registers": [], "filter": "", "expected": None}
    approx = result.get("approximated_kernels")
    names = result.get("kernel_names")
    if isinstance(approx, dict) and isinstance(names, list) and len(names) == len(outs) and result.get("denominator"):
        out["expected"] = {"denominator": result["denominator"], "kernels": [approx[n] for n in names],
                           "source": f"the code search's approximated kernels ({result.get('filter', '?')})"}
    return out
