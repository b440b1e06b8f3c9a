"""SCAMP-5 program files: macro text with a header naming its registers, written and read here only.

A bare macro program does not say where its input is or which registers hold its results, so a
program file carries that in comment lines before (or between) the macros:

    # Cain code search: Sobel x and y, 7 macros
    # input: A
    # outputs: C D
    # kernels: sobel_x, sobel_y
    movx(B, A, east);
    ...

`input` lists one register per input channel (the simulator reads the first), `outputs` one
register per kernel in kernel order (space or comma separated), and the optional `kernels` line
the kernels' names in the same order (comma separated, so a name may hold spaces). Any other
comment is free text. The Cain panel's export, the simulator's file and pasted-text sources and the
code-search hand-over all go through `write_program` / `read_program`, so what one writes the
other reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from core.errors import InputError
from core.scamp5.program import Instr, format_instr, parse_program

_DIRECTIVE = re.compile(r"^\s*(?:#|//)\s*(input|outputs?|kernels?)\s*:\s*(.*)$", re.IGNORECASE)


@dataclass
class ProgramHeader:
    """What a program file says about its registers; empty lists where it says nothing."""

    input_registers: list[str] = field(default_factory=list)     # one per input channel
    output_registers: list[str] = field(default_factory=list)    # one per kernel, kernel order
    kernel_names: list[str] = field(default_factory=list)        # [] or one per output register
    comments: list[str] = field(default_factory=list)            # free header text, without '#'

    @property
    def input_register(self) -> str | None:
        return self.input_registers[0] if self.input_registers else None


def _registers(text: str) -> list[str]:
    return [t.upper() for t in re.split(r"[\s,]+", text.strip()) if t]


def read_header(text: str) -> ProgramHeader:
    """The `# input:`, `# outputs:` and `# kernels:` lines of a program text (no register checks).

    An outputs entry written `name=REG` (what the Cain panel exported before this module existed)
    gives the register and the kernel's name."""
    h = ProgramHeader()
    named: list[str] = []
    for line in text.splitlines():
        m = _DIRECTIVE.match(line)
        if not m:
            stripped = line.strip()
            if stripped.startswith(("#", "//")) and not h.input_registers and not h.output_registers:
                h.comments.append(stripped.lstrip("#/").strip())
            continue
        key, value = m.group(1).lower(), m.group(2)
        if key == "input":
            h.input_registers = _registers(value)
        elif key.startswith("output"):
            if "=" in value:
                pairs = [p.split("=", 1) for p in value.split(",") if p.strip()]
                named = [p[0].strip() for p in pairs]
                h.output_registers = [p[-1].strip().upper() for p in pairs]
            else:
                h.output_registers = _registers(value)
        else:
            h.kernel_names = [n.strip() for n in value.split(",") if n.strip()]
    if not h.kernel_names and named and all(named):
        h.kernel_names = named
    return h


def check_header(h: ProgramHeader, registers: Sequence[str], where: str = "program") -> None:
    """Every register the header names must exist; kernel names, if given, match the outputs."""
    for what, names in (("input register", h.input_registers), ("output registers", h.output_registers)):
        for n in names:
            if n not in registers:
                raise InputError(f"register {n!r} is not one of {', '.join(registers)}", f"{where}: {what}")
    if h.kernel_names and len(h.kernel_names) != len(h.output_registers):
        raise InputError(f"{len(h.kernel_names)} kernel names but {len(h.output_registers)} output registers",
                         f"{where}: kernels")


def read_program(text: str, registers: Sequence[str], where: str = "program") -> tuple[list[Instr], ProgramHeader]:
    """Parse a program file's macros and header; errors carry `where:line N` or the header line."""
    try:
        program = parse_program(text, tuple(registers))
    except InputError as exc:
        raise InputError(exc.message, f"{where}:{exc.where}" if exc.where else where) from None
    header = read_header(text)
    check_header(header, registers, where)
    return program, header


def write_program(program: Sequence[Instr | str], header: ProgramHeader) -> str:
    """The file text: free comments, then input / outputs / kernels lines, then one macro per line."""
    lines = [f"# {c}" if c else "#" for c in header.comments]
    if header.input_registers:
        lines.append(f"# input: {' '.join(header.input_registers)}")
    if header.output_registers:
        lines.append(f"# outputs: {' '.join(header.output_registers)}")
    if header.kernel_names:
        lines.append(f"# kernels: {', '.join(n.replace(',', ' ') for n in header.kernel_names)}")
    lines += [f"{format_instr(i) if isinstance(i, Instr) else str(i).rstrip(';')};" for i in program]
    return "\n".join(lines) + "\n"
