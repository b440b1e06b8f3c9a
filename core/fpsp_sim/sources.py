"""Where the simulator's program comes from: a text file, pasted text, or the Cain code search.

Program text is the macro syntax of core.scamp5.program. Two optional comment directives name
the registers, since a bare program does not say which registers are its results:

    # input: A
    # outputs: A B C

Without `outputs`, the outputs are the registers the program writes that hold a value at the end.
"""

from __future__ import annotations

import inspect
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


def _kernel_of(k: Any, denominator: float) -> SymKernel:
    from sims.scamp5.analysis import kernel_from_matrix

    if isinstance(k, SymKernel):
        return k
    values = getattr(k, "values", k)
    return kernel_from_matrix(values, denominator)


def from_search(kernels: KernelSet, regs: tuple[str, ...], isa: str, mode: str, time_s: float,
                cancel: CancelToken | None = None) -> ResolvedProgram:
    """Run the Cain code search (core.cain.api.compile_filter) with a short budget."""
    try:
        from core.cain.api import compile_filter
    except ImportError as exc:
        raise InputError(f"the code search (core.cain) is not available: {exc}", "preset") from None
    kwargs: dict[str, Any] = {"isa": isa, "registers": len(regs), "time_s": time_s, "mode": mode}
    params = inspect.signature(compile_filter).parameters
    if cancel is not None and "cancel" in params:
        kwargs["cancel"] = cancel
    plan = compile_filter(kernels, **{k: v for k, v in kwargs.items() if k in params or k == "mode"})
    program = list(getattr(plan, "program"))
    if not program:
        raise InputError(f"the code search found no program for {kernels.name} in {time_s:g} s", "preset")
    outs = [str(r) for r in getattr(plan, "output_registers")]
    inp = str(getattr(plan, "input_register", "A"))
    res = ResolvedProgram(program, inp, outs, f"{'AUKE-style' if mode == 'auke' else 'Cain'} search "
                          f"({isa}, {time_s:g} s) for {kernels.name}")
    approx = getattr(plan, "approximated", None) or getattr(plan, "approximated_kernels", None)
    for i, reg in enumerate(outs):
        res.requested[reg] = _kernel_of(kernels.kernels[i], kernels.denominator)
        if approx is not None and i < len(approx):
            a = approx[i]
            den = getattr(plan, "denominator", None) or (2 ** int(getattr(plan, "d", 0)))
            res.expected[reg] = a if isinstance(a, SymKernel) else _kernel_of(a, den)
    res.info = {"d": getattr(plan, "d", None), "isa": isa, "mode": mode, "time_s": time_s,
                "length": len(program)}
    return res


def from_cain_result(result: dict[str, Any], regs: tuple[str, ...]) -> ResolvedProgram:
    """The program of a finished code-search result (the GUI's 'use code-search result')."""
    prog = result.get("program")
    if isinstance(prog, list):
        text = "\n".join(p if isinstance(p, str) else str(p) for p in prog)
    elif isinstance(prog, str):
        text = prog
    else:
        raise InputError("the code-search result holds no program", "cain.program")
    outs = [str(r) for r in result.get("output_registers", [])]
    inp = str(result.get("input_register", "A"))
    return from_text(text, regs, "code-search result", inp, outs or None, where="cain result")
