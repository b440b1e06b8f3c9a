"""Checks of a simulated run: ideal results, error maps, and agreement with the exact interpreter.

The ideal result of a register is the correlation of the input image with the kernel (Goal) it
should hold, with zero padding (scipy.ndimage.correlate, mode 'constant'), kernel rows north to
south as in the Cain paper. It is compared over the PEs whose value cannot have been affected by
the array edge (`valid` in sims.scamp5.array); the edge band is reported separately.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np
from scipy.ndimage import correlate

from core.scamp5.interp import SymKernel, run_exact, run_symbolic
from core.scamp5.program import Instr
from sims.scamp5.images import FULL_SCALE
from sims.scamp5.simulator import SimRun


def kernel_matrix(kernel: SymKernel, radius: int | None = None) -> np.ndarray:
    """Coefficients as a float (2r+1) square, rows north to south, columns west to east."""
    return np.array([[float(v) for v in row] for row in kernel.to_matrix(radius)], dtype=float)


def ideal(values: np.ndarray, kernel: SymKernel) -> np.ndarray:
    """The register's ideal plane: zero-padded correlation of the input with its kernel."""
    if not kernel.terms:
        return np.zeros_like(values)
    return correlate(values, kernel_matrix(kernel), mode="constant", cval=0.0)


def kernel_from_matrix(matrix: Sequence[Sequence[float]], denominator: float = 1) -> SymKernel:
    """A kernel matrix (numerators) over a denominator as an exact SymKernel."""
    return SymKernel.from_matrix([[Fraction(v).limit_denominator(1 << 20) for v in row] for row in matrix],
                                 Fraction(1) / Fraction(denominator).limit_denominator(1 << 20))


@dataclass
class RegisterReport:
    """Errors of one output register against its ideal kernel."""

    register: str
    kernel: list[list[str]]        # coefficients as exact fractions, rows north to south
    rms_error: float               # over the interior (edge-independent) PEs
    max_error: float
    interior_pixels: int
    edge_pixels: int
    edge_rms_error: float          # over the edge band, against the zero-padded ideal
    edge_max_error: float
    matches_interpreter: bool | None

    def to_json(self) -> dict:
        return asdict(self)


def goals(program: Sequence[Instr], registers: Sequence[str], input_register: str) -> list[dict[str, SymKernel | None]]:
    """The Goal of every register before and after each macro (core.scamp5.interp symbolic mode)."""
    return run_symbolic(list(program), registers=tuple(registers), input_register=input_register)


def error_stats(err: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    sel = err[mask]
    if sel.size == 0:
        return 0.0, 0.0
    return float(np.sqrt(np.mean(sel * sel))), float(np.max(np.abs(sel)))


def interpreter_agreement(run: SimRun, levels: np.ndarray) -> dict[str, bool]:
    """Does the bus-level run equal core.scamp5.interp.run_exact on every register that holds a
    defined value (scratch operands of div/diva are undefined at the macro level)?"""
    exact = run_exact(run.program, levels.astype(np.int64), registers=run.registers,
                      input_register=run.input_register)
    out: dict[str, bool] = {}
    for reg in run.registers:
        if exact.registers.get(reg) is None:
            continue
        ref = exact.as_float(reg)
        out[reg] = bool(np.array_equal(run.final.values[reg] * FULL_SCALE, ref))
    return out


def report_register(run: SimRun, register: str, kernel: SymKernel, values: np.ndarray,
                    read: np.ndarray, matches: bool | None) -> tuple[RegisterReport, np.ndarray]:
    """Report for one output register; returns it and the signed error map (read - ideal)."""
    err = read - ideal(values, kernel)
    valid = run.final.valid[register]
    rms, mx = error_stats(err, valid)
    erms, emx = error_stats(err, ~valid)
    mat = [[str(Fraction(v)) for v in row] for row in kernel.to_matrix()] if kernel.terms else [["0"]]
    return RegisterReport(register, mat, rms, mx, int(valid.sum()), int((~valid).sum()), erms, emx, matches), err


def step_errors(run: SimRun, values: np.ndarray, goal_states: list[dict[str, SymKernel | None]]
                ) -> list[dict[str, float]]:
    """RMS error (interior PEs) of every register holding a Goal, after each macro: how the error
    grows with program length."""
    cache: dict[SymKernel, np.ndarray] = {}
    out = []
    for rec, state in zip(run.records, goal_states):
        row: dict[str, float] = {}
        for reg, goal in state.items():
            if goal is None:
                continue
            if goal not in cache:
                cache[goal] = ideal(values, goal)
            err = run.read_out(reg, rec.index) - cache[goal]
            row[reg] = error_stats(err, rec.state.valid[reg])[0]
        out.append(row)
    return out
