"""The typed result of the "simulate" engine (core.simulate.engine): one program on the bus-level
SCAMP-5 model, its errors per output register and how they grow.

The engine yields a SimulateResult; its text form, the simulate panel's outputs view and its Stepper
read its fields, and core.simulate.replay replays it from `settings`, `program_text` and `array`
(so a stored result that lacks them is refused when it is loaded).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.metrics import Metric
from core.results import EngineResult, optional_key
from core.scamp5.analogue import AnalogueWarning

FractionMatrix = list[list[str]]                # coefficients as exact fractions ("-3/4"), rows north to south


@dataclass(kw_only=True)
class OutputReport:
    """One output register against the ideal correlation with its kernel (sims.scamp5.analysis)."""

    register: str
    kernel: FractionMatrix
    rms_error: float                            # over the interior (edge-independent) PEs
    max_error: float
    interior_pixels: int
    edge_pixels: int
    edge_rms_error: float
    edge_max_error: float
    matches_interpreter: bool | None
    goal: FractionMatrix | None                 # what the program leaves in the register
    goal_matches_expected: bool
    requested_kernel: FractionMatrix | None = optional_key()


@dataclass(kw_only=True)
class Timings:
    simulate_s: float
    with_analysis_s: float
    per_instruction_ms: float
    total_s: float


@dataclass(kw_only=True)
class ArrayShape:
    size: int
    registers: list[str]


@dataclass(kw_only=True)
class ImageInfo:
    source: str
    description: str
    sha256: str                                 # first 16 hex digits of the input levels' hash


@dataclass(kw_only=True)
class NoiseInfo:
    """sims.scamp5.noise.NoiseModel as run, and whether any of it was on."""

    write_factor: float
    write_constant: float
    sensor_factor: float
    fixed_pattern: float
    saturation: float
    seed: int
    chip_seed: int
    mode: str
    enabled: bool
    # what the mode's figures mean (issue 49: the emulator's is an upper bound); absent in results
    # stored before, where `mode` still says which ran
    note: str | None = optional_key()

    def model_label(self) -> str:
        """"exact (noise off)", "per operation" or "emulator's upper bound": what the errors are."""
        from sims.scamp5.noise import MODE_LABELS

        return MODE_LABELS.get(self.mode, self.mode) if self.enabled else "exact (noise off)"


@dataclass(kw_only=True)
class ComparedOutput:
    register: str
    rms_error: float
    max_error: float


@dataclass(kw_only=True)
class ComparedProgram:
    """One of the programs run side by side (--compare), outputs in kernel order."""

    label: str
    program_length: int
    bus_steps: int
    final_mean_rms_error: float
    outputs: list[ComparedOutput]
    error_growth: list[float]
    exact: bool
    program: list[str]


@dataclass(kw_only=True)
class SimulateResult(EngineResult):
    label: str
    program: list[str]
    program_length: int
    bus_steps: int
    input_register: str
    output_registers: list[str]
    outputs: dict[str, OutputReport]            # register -> report
    exact: bool
    matches_interpreter: bool
    interpreter_registers: dict[str, bool]
    error_growth: list[float]                   # mean RMS error of the registers holding a Goal, per step
    output_error_growth: dict[str, list[float | None]]   # None: no value in the register yet
    timings: Timings
    info: dict[str, Any]                        # how the program was made (code-search details), may be empty
    array: ArrayShape
    image: ImageInfo
    noise: NoiseInfo
    settings: dict[str, Any]                    # the engine's settings as run (their own schema checks them)
    program_text: str
    comparison: dict[str, ComparedProgram] | None = optional_key()
    exported: list[str] | None = optional_key()
    # kernels and registers that can leave the ±2 analogue range (core.scamp5.analogue); absent in
    # results stored before the check, empty when everything stays inside
    warnings: list[AnalogueWarning] | None = optional_key()

    def validate(self, path: str = "result") -> None:
        """The settings kept are the engine's (a version-1 result's brought to today's keys first):
        the same checks as any settings, so a text where the panel needs a number is refused."""
        from core.checks import check_settings
        from core.simulate.engine import SETTINGS_SCHEMA, stored_settings

        check_settings(SETTINGS_SCHEMA, stored_settings(self.settings), f"{path}.settings")

    METRICS = (
        Metric("max_error", "Max error", "", "lower", "largest |output - ideal| of any output register",
               read=lambda r: max((o.max_error for o in r.outputs.values()), default=None)),
        Metric("max_rms_error", "Max RMS error", "", "lower", "the worst output register's RMS error",
               read=lambda r: max((o.rms_error for o in r.outputs.values()), default=None)),
        Metric("program_length", "Program length", "instructions", "lower", read=lambda r: r.program_length),
        Metric("bus_steps", "Bus steps", "steps", "lower", read=lambda r: r.bus_steps),
        Metric("noise_model", "Noise model", "", None, "the noise mode the errors were computed with "
               "(the emulator's is an upper bound)", read=lambda r: r.noise.model_label()),
    )
