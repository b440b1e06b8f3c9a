"""SCAMP-5's analogue range, and the warnings a kernel or a program gets when it leaves it.

An analogue register holds about ±2 full-scale units (a pixel is in [0, 1)); a value beyond that
saturates, silently, on the chip and in the simulator's noise model. A linear kernel on pixels in
[0, 1) reaches at most max(sum of its positive coefficients, sum of |negative ones|), so whether a
kernel or the value a register holds after an instruction can leave the range is known exactly
before anything runs. Cain and the simulator both check it, so that a gain-16 blur is named as the
cause instead of showing up as a large error and a blank read-out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Mapping, Sequence

ANALOGUE_RANGE = 2.0        # |value| an analogue register holds, full-scale units (sims.scamp5.noise's saturation)

Coefficients = Iterable["float | int | Fraction"]


@dataclass(kw_only=True)
class AnalogueWarning:
    """A kernel or a register that can leave the analogue range.

    kind "kernel": an output's kernel itself has a gain beyond the range (step and instruction None);
    kind "register": a register's value after `step` (1-based instruction index) can leave it;
    kind "saturated": a simulated register hit the limit although its ideal value stays inside
    (noise or the fixed-pattern offset pushed it over)."""

    kind: str
    register: str | None                        # None: a kernel the search has not placed yet
    kernel: str | None                          # the kernel's name, when the warning is about one
    step: int | None
    instruction: str | None
    reach: float                                # the largest |value| it can take for pixels in [0, 1)
    limit: float                                # the analogue range it leaves, ±limit
    saturated_pixels: int | None                # simulator: PEs at the limit after `step` (None: not simulated)
    message: str


def reach(coefficients: Coefficients) -> float:
    """The largest |value| of a linear kernel over pixels in [0, 1): the larger of the sums of its
    positive and of its negative coefficients."""
    pos = neg = Fraction(0)
    for c in coefficients:
        c = Fraction(c)
        if c > 0:
            pos += c
        else:
            neg -= c
    return float(max(pos, neg))


def flat(matrix: object) -> list[float | int | Fraction]:
    """The numbers of a (nested) kernel matrix, any depth."""
    if isinstance(matrix, (list, tuple)):
        return [v for row in matrix for v in flat(row)]
    if isinstance(matrix, str):
        return [Fraction(matrix)]
    return [matrix]  # type: ignore[list-item]


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def _scale_hint(r: float, limit: float) -> str:
    k = max(1, math.ceil(math.log2(r / limit)))
    return f"divide it by {2 ** k} to fit"


def kernel_warnings(kernels: Mapping[str, tuple[Coefficients, str | None]], limit: float = ANALOGUE_RANGE
                    ) -> list[AnalogueWarning]:
    """One warning per kernel (name -> (coefficients, output register or None)) whose gain exceeds the range."""
    out = []
    for name, (coefs, register) in kernels.items():
        r = reach(coefs)
        if r > limit:
            what = (f"kernel {name}" + (f" (output {register})" if register else "")) if name else \
                f"the kernel of output {register}"
            out.append(AnalogueWarning(
                kind="kernel", register=register, kernel=name or None, step=None, instruction=None, reach=r,
                limit=limit, saturated_pixels=None,
                message=f"{what} has a gain of {_fmt(r)} (its coefficients on a bright image), "
                        f"beyond the ±{_fmt(limit)} analogue range of SCAMP-5's registers: its values saturate; "
                        f"{_scale_hint(r, limit)}"))
    return out


def register_warnings(states: Sequence[Mapping[str, Coefficients | None]], program: Sequence[str],
                      limit: float = ANALOGUE_RANGE, saturated: Mapping[tuple[int, str], int] | None = None
                      ) -> list[AnalogueWarning]:
    """One warning per register whose value can leave the range at some instruction.

    `states[i]` maps register -> the coefficients of the kernel it holds after instruction i
    (states[0]: before the first), None for no value. `saturated` ((step, register) -> PEs at the
    limit, from a simulation) adds the count, and a "saturated" warning for a register that hit the
    limit though its ideal value stays inside."""
    first: dict[str, int] = {}
    peak: dict[str, tuple[float, int]] = {}
    for i, state in enumerate(states):
        for reg, coefs in state.items():
            if coefs is None:
                continue
            r = reach(coefs)
            if r > limit:
                first.setdefault(reg, i)
                if r > peak.get(reg, (0.0, 0))[0]:
                    peak[reg] = (r, i)
    out = []

    def instr(i: int) -> str | None:
        return program[i - 1] if 1 <= i <= len(program) else None

    def at_step(i: int) -> str:
        return f"instruction {i}, {instr(i)}" if instr(i) else "the start (the input)"

    for reg, i in sorted(first.items(), key=lambda kv: (kv[1], kv[0])):
        r0 = reach(states[i][reg] or ())
        r, at = peak[reg]
        sat = None if saturated is None else max((n for (s, g), n in saturated.items() if g == reg), default=0)
        msg = f"register {reg} leaves the ±{_fmt(limit)} analogue range at {at_step(i)}: it can reach {_fmt(r0)}"
        if at != i:
            msg += f", and {_fmt(r)} at {at_step(at)}"
        if sat:
            msg += f"; {sat} PEs saturated in this run"
        out.append(AnalogueWarning(kind="register", register=reg, kernel=None, step=i, instruction=instr(i),
                                   reach=r, limit=limit, saturated_pixels=sat, message=msg))
    for (step, reg), n in sorted((saturated or {}).items()):
        if n and reg not in first and not any(w.kind == "saturated" and w.register == reg for w in out):
            out.append(AnalogueWarning(
                kind="saturated", register=reg, kernel=None, step=step, instruction=instr(step), reach=limit,
                limit=limit, saturated_pixels=n,
                message=f"register {reg} hit the ±{_fmt(limit)} analogue limit at {at_step(step)}: {n} PEs "
                        f"saturated (noise and offsets on a value near the limit)"))
    return out


__all__ = ["ANALOGUE_RANGE", "AnalogueWarning", "flat", "kernel_warnings", "reach", "register_warnings"]
