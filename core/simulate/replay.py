"""Rebuild a simulation for stepping through it, from a stored result or from settings.

A result holds the program text, the image source and the noise settings, not the register
planes (they would be megabytes per step). The simulation is deterministic and fast, so the GUI
reruns it once and then steps through the cached per-macro states.

The declared exception to "the GUI never runs engine code" (README, Architecture): this module is
the one piece of core the window calls to compute rather than to read, listed in
`GUI_COMPUTES` below and checked by tests/test_layering.py. It qualifies because it writes no
file, starts no process or thread, reads only the image the settings name, is deterministic, and is
bounded: one simulation of a program the engine's checks already accepted, with no search, whose
kept planes (every step's registers) stay under REPLAY_MAX_BYTES, or it is refused. It uses only public functions of the
engine, never the engine's `run`.
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


# What a GUI process may compute with core code, and why each is allowed (tests/test_layering.py
# checks that gui/ imports no other computing module of an engine package).
GUI_COMPUTES = {
    "core.simulate.replay": "the stepper's replay of one checked program; bounded by REPLAY_MAX_BYTES",
    "sims.scamp5.render": "turns a replayed step's planes into pictures (pure, per frame)",
    "sims.scamp5.step_effects": "what one step changed, from two kept snapshots (pure)",
    "sims.scamp5.bus": "a macro's bus operations, to show them (pure, no array work)",
    "sims.scamp5.images": "reads the input picture the settings name (one file, bounded size)",
    "sims.scamp5.analysis": "error figures of the replayed outputs against their kernels (pure)",
    "sims.scamp5.noise": "the noise modes' names, to label the emulator's upper bound (constants only)",
}
# The stepper keeps every step's planes (float64, the registers and NEWS, twice with noise).
REPLAY_MAX_BYTES = 2 * 2 ** 30


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

    s = engine.checked_settings(settings)
    n, regs = engine.array_shape(target)
    if program is None:
        if s.program_source == "search":
            raise InputError("run the engine to do the code search first; the stepper then replays its program")
        program = engine.resolve_program(s, workload, regs)
    steps, planes = len(program.program) + 1, len(regs) + 1
    need = steps * planes * n * n * 8 * (2 if float(s.noise) > 0 else 1)
    if need > REPLAY_MAX_BYTES:
        raise InputError(f"the stepper keeps every step's registers: {steps} steps on a {n}x{n} array need about "
                         f"{need / 2 ** 30:.1f} GiB (at most {REPLAY_MAX_BYTES // 2 ** 30} GiB); choose a target with "
                         f"a smaller array to step through it (a run of the engine keeps no steps and still works)",
                         "target.array_size")
    image = s.image
    if image != "sample" and not image.startswith("pattern:"):
        image = engine.resolve_path(image)
    levels, desc = load_input(image, n, int(s.seed))
    noise = NoiseModel.analogue(float(s.noise), int(s.seed), s.fixed_pattern, s.saturation,
                                mode=s.noise_mode)
    run = simulate(program.program, to_values(levels), regs, program.input_register, noise)
    goals = run_symbolic(program.program, registers=regs, input_register=program.input_register)
    return Replay(run, goals, program, levels, desc)


def from_result(result: SimulateResult) -> Replay:
    """Replay a stored result of the simulate engine (one stored by format 1 too)."""
    try:
        settings = engine.settings_of_result(result)
    except InputError as exc:
        raise InputError(f"the stored result lacks what the stepper needs ({exc})", "result") from None
    settings["noise_mode"] = result.noise.mode      # the model it ran with, whatever today's default
    regs = tuple(result.array.registers)
    prog = sources.from_text(result.program_text, regs, result.label, result.input_register,
                             list(result.output_registers) or None, where="stored program")
    return build(settings, Scamp5Target(registers=len(regs), array_size=result.array.size), program=prog)
