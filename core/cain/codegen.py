"""Register allocation and code generation for a found plan.

The search keeps every Goal-Bag within the register count, counting the output and scratch
registers each macro needs, so a greedy forward allocation always succeeds: live Goals keep their
registers; an output reuses the register of an operand that dies, when the macro allows it, else
takes a free one; div/diva scratch registers come from the free ones.  Halving uses the most
accurate macro that fits (diva or div when the input dies, div with four operands otherwise,
divq last).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.cain import goals as gl
from core.cain.goals import Bag, Goal
from core.cain.steps import SAME_OPERANDS_OK, Plan
from core.scamp5.isa import InstructionSet
from core.scamp5.program import Instr, format_instr, validate_instr


class AllocationError(RuntimeError):
    """A plan that does not fit the registers (a bug: the search should have culled it)."""


@dataclass
class Allocated:
    program: list[Instr]
    input_registers: dict[int, str]              # channel -> register
    output_registers: list[str]                  # per final Goal, in kernel order
    register_goals: list[dict[str, Goal | None]]  # what each register holds before step 1 / after each step


def _count(bag: Bag) -> dict[Goal, int]:
    out: dict[Goal, int] = {}
    for g in bag:
        out[g] = out.get(g, 0) + 1
    return out


def allocate(plan: Plan, final_goals: list[Goal], initial: dict[Goal, int], regs: tuple[str, ...],
             isa: InstructionSet) -> Allocated:
    """Assign registers and emit macro instructions.  `initial` maps Initial-Goal -> channel."""
    content: dict[str, Goal | None] = {r: None for r in regs}
    inputs: dict[int, str] = {}
    for g, ch in sorted(initial.items(), key=lambda kv: kv[1]):
        content[regs[ch]] = g
        inputs[ch] = regs[ch]
    history = [dict(content)]
    program: list[Instr] = []
    for i, (op, upper, lowers, dirs) in enumerate(plan.steps):
        after = plan.bags[i + 1]
        keep = _count(gl.bag_remove_one(after, upper))
        # operand registers
        picked: list[str] = []
        for j, lo in enumerate(lowers):
            if j == 1 and op in SAME_OPERANDS_OK and lo == lowers[0]:
                picked.append(picked[0])        # S shifted - S: one register read twice
                continue
            cands = [r for r in regs if content[r] == lo and r not in picked]
            if not cands:
                raise AllocationError(f"step {i + 1}: no register holds an operand")
            # prefer an operand copy that is not needed afterwards, so it can be overwritten
            picked.append(cands[-1] if keep.get(lo, 0) else cands[0])
        # registers that must keep their values
        live: set[str] = set()
        for g, n in keep.items():
            holders = [r for r in regs if content[r] == g]
            holders.sort(key=lambda r: r in picked)       # non-operands first
            if len(holders) < n:
                raise AllocationError(f"step {i + 1}: a live Goal is not in enough registers")
            live.update(holders[:n])
        free = [r for r in regs if r not in live]
        dead_ops = [r for r in picked if r not in live]
        instr, out, scratch = _emit(op, picked, dirs, free, dead_ops, isa)
        if instr is None:
            raise AllocationError(f"step {i + 1}: no registers left for {op}")
        validate_instr(instr, regs)
        program.append(instr)
        for r in scratch:
            content[r] = None
        content[out] = upper
        history.append(dict(content))
    outputs: list[str] = []
    used: set[str] = set()
    for g in final_goals:
        holder = next((r for r in regs if content[r] == g and r not in used), None)
        if holder is None:
            raise AllocationError("a final Goal is not in any register at the end")
        outputs.append(holder)
        used.add(holder)
    return Allocated(program, inputs, outputs, history)


def _emit(op: str, ops: list[str], dirs: tuple[str, ...], free: list[str], dead_ops: list[str],
          isa: InstructionSet) -> tuple[Instr | None, str, list[str]]:
    if op == "div":
        x = ops[0]
        if x in dead_ops and isa.allows("diva/3"):
            s = [r for r in free if r != x][:2]
            if len(s) == 2:
                return Instr("diva", (x, s[0], s[1])), x, s
        if x in dead_ops and isa.allows("div/3"):
            rest = [r for r in free if r != x]
            if len(rest) >= 2:
                return Instr("div", (rest[0], rest[1], x)), rest[0], [rest[1], x]
        if isa.allows("div/4"):
            rest = [r for r in free if r != x]
            if len(rest) >= 3:
                return Instr("div", (rest[0], rest[1], rest[2], x)), rest[0], rest[1:3]
        if isa.allows("divq/2"):
            rest = [r for r in free if r != x]
            if rest:
                return Instr("divq", (rest[0], x)), rest[0], []
        return None, "", []
    forbidden: set[str] = set()
    if op in ("sub", "subx", "sub2x"):
        forbidden.add(ops[1])
    if op == "neg":
        forbidden.add(ops[0])
    reusable = {"mov": ops[:1], "movx": ops[:1], "mov2x": ops[:1], "add": ops, "addx": ops, "add2x": ops,
                "sub": ops[:1], "subx": ops[:1], "sub2x": ops[:1], "neg": []}[op]
    choices = [r for r in dead_ops if r in reusable and r not in forbidden]
    choices += [r for r in free if r not in forbidden and r not in choices and r not in ops]
    choices += [r for r in free if r not in forbidden and r not in choices]
    if not choices:
        return None, "", []
    y = choices[0]
    args: tuple[str, ...]
    if op == "subx":
        args = (y, ops[0], dirs[0], ops[1])
    elif op == "sub2x":
        args = (y, ops[0], dirs[0], dirs[1], ops[1])
    else:
        args = (y, *ops, *dirs)
    return Instr(op, args), y, []


def cpp_kernel(program: list[Instr], title: str, inputs: dict[int, str], outputs: dict[str, str],
               regs: tuple[str, ...]) -> str:
    """A C++ kernel body for the SCAMP-5 host API (scamp5_kernel_api macros)."""
    lines = [f"// {title}",
             f"// input: {', '.join(f'channel {c} in {r}' for c, r in sorted(inputs.items()))}",
             f"// outputs: {', '.join(f'{k} in {r}' for k, r in outputs.items())}",
             f"// {len(program)} macro instructions"]
    if len(regs) > 6:
        lines.append(f"// NOTE: uses registers {regs[0]}-{regs[-1]}; SCAMP-5 itself has A-F only")
    lines.append("scamp5_kernel_begin();")
    lines += [f"    {format_instr(i)};" for i in program]
    lines.append("scamp5_kernel_end();")
    return "\n".join(lines) + "\n"


def goal_bag_json(bag: Bag, d: int) -> list[dict[str, Any]]:
    """A Goal-Bag for display: each Goal as a matrix of Atom counts (over 2^d)."""
    out = []
    for g in bag:
        chans = sorted({z for _, _, z, _ in gl.atoms(g)})
        mats = [gl.to_matrix(g, channel=z) for z in chans]
        out.append({"atoms": gl.size(g), "matrix": mats[0] if len(mats) == 1 else mats})
    return out
