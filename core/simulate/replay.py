"""Rebuild a simulation for stepping through it, from a stored result or from settings.

A result holds the program text, the image source and the noise settings, not the register
planes (they would be megabytes per step). The simulation is deterministic and fast, so the GUI
reruns it once and then steps through the cached per-macro states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import InputError
from core.scamp5.interp import SymKernel, run_symbolic
from core.simulate import engine, sources
from core.simulate.result import SimulateResult
from core.simulate.sources import ResolvedProgram
from core.workload import Scamp5Target


@dataclass
class Replay:
    """Everything the stepping view shows: the run, each register's Goal per step, the input."""

    run: Any                     # sims.scamp5.simulator.SimRun
    goals: list[dict[str, SymKernel | None]]
    program: ResolvedProgram
    levels: np.ndarray
    image_description: str


def build(settings: dict[str, Any], target: Any = None, workload: Any = None,
          program: ResolvedProgram | None = None) -> Replay:
    """Simulate per the settings on the target's array (a file or text program, checked against the
    workload if the settings say so, unless `program` is given)."""
    from sims.scamp5.images import load_input, to_values
    from sims.scamp5.noise import NoiseModel
    from sims.scamp5.simulator import simulate

    s = engine._settings(settings)
    n, regs = engine._array_shape(target)
    if program is None:
        if s["program_source"] == "search":
            raise InputError("run the engine to do the code search first; the stepper then replays its program")
        program = engine.resolve_program(s, workload, regs)
    image = s["image"]
    if image != "sample" and not image.startswith("pattern:"):
        image = engine.resolve_path(image)
    levels, desc = load_input(image, n, int(s["seed"]))
    noise = NoiseModel.analogue(float(s["noise"]), int(s["seed"]), s["fixed_pattern"], s["saturation"],
                                mode=s["noise_mode"])
    run = simulate(program.program, to_values(levels), regs, program.input_register, noise)
    goals = run_symbolic(program.program, registers=regs, input_register=program.input_register)
    return Replay(run, goals, program, levels, desc)


def from_result(result: SimulateResult) -> Replay:
    """Replay a stored result of the simulate engine (one stored by format 1 too)."""
    try:
        settings = engine.settings_of_result(result)
    except InputError as exc:
        raise InputError(f"the stored result lacks what the stepper needs ({exc})", "result") from None
    regs = tuple(result.array.registers)
    prog = sources.from_text(result.program_text, regs, result.label, result.input_register,
                             list(result.output_registers) or None, where="stored program")
    return build(settings, Scamp5Target(registers=len(regs), array_size=result.array.size), program=prog)
