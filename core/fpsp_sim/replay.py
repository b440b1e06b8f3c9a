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
from core.fpsp_sim import engine, sources
from core.fpsp_sim.sources import ResolvedProgram


@dataclass
class Replay:
    """Everything the stepping view shows: the run, each register's Goal per step, the input."""

    run: Any                     # sims.scamp5.simulator.SimRun
    goals: list[dict[str, SymKernel | None]]
    program: ResolvedProgram
    levels: np.ndarray
    image_description: str


def build(settings: dict[str, Any], program: ResolvedProgram | None = None, size: int | None = None,
          registers: int | None = None) -> Replay:
    """Simulate per the settings (file or text program unless `program` is given)."""
    from sims.scamp5.images import load_input, to_values
    from sims.scamp5.noise import NoiseModel
    from sims.scamp5.simulator import simulate

    s = engine._settings(settings)
    if size is not None and s["size"] is None:
        s["size"] = size
    if registers is not None and s["registers"] is None:
        s["registers"] = registers
    n, regs = engine._array_shape(s, None)
    if program is None:
        if s["program_source"] == "preset":
            raise InputError("run the engine to compile the preset first; the stepper then replays its program")
        program = engine.resolve_program(s, None, regs)   # type: ignore[arg-type]
    image = s["image"]
    if image != "sample" and not image.startswith("pattern:"):
        image = engine.resolve_path(image)
    levels, desc = load_input(image, n, int(s["seed"]))
    noise = NoiseModel.analogue(float(s["noise"]), int(s["seed"]), s["fixed_pattern"], s["saturation"],
                                mode=s["noise_mode"])
    run = simulate(program.program, to_values(levels), regs, program.input_register, noise)
    goals = run_symbolic(program.program, registers=regs, input_register=program.input_register)
    return Replay(run, goals, program, levels, desc)


def from_result(result: dict[str, Any]) -> Replay:
    """Replay a stored result of the simulate engine."""
    try:
        settings = dict(result["settings"])
        text = result["program_text"]
        regs = tuple(result["array"]["registers"])
        size = int(result["array"]["size"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"the stored result lacks what the stepper needs ({exc})", "result") from None
    settings.update(size=size, registers=len(regs))
    prog = sources.from_text(text, regs, result.get("label", "stored program"), result.get("input_register", "A"),
                             list(result.get("output_registers", [])) or None, where="stored program")
    return build(settings, prog)
