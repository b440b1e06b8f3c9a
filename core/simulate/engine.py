"""The "simulate" engine: run a SCAMP-5 macro program on the bus-level pixel-array simulator.

The program (a file, pasted text, or a short Cain code search) runs on a picture in the input
register; every macro executes as its bus operations (sims/scamp5). The result gives, for each
output register, the RMS and maximum error against the ideal correlation with the kernel it should
hold, whether the run equals the exact macro-level interpreter, and how the error grows with the
instruction index (with the analogue noise model on).
"""

from __future__ import annotations

import argparse
import hashlib
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from core.settings import as_dict, defaults_of, parse, schema_of, setting
from core.results import EngineResult
from core.engine import EngineSpec, JobRequest
from core.errors import InputError
from core.paths import ROOT, asset_path
from core.jobs import CancelToken, Event, FinalResult, LogLine, MetricPoint, Progress
from core.scamp5.analogue import ANALOGUE_RANGE, AnalogueWarning, kernel_warnings, register_warnings
from core.scamp5.interp import SymKernel, run_symbolic
from core.scamp5.isa import INSTRUCTION_SETS, register_names
from core.scamp5.program_file import ProgramHeader, write_program
from sims.scamp5.noise import DEFAULT_MODE as DEFAULT_NOISE_MODE
from sims.scamp5.noise import MODE_LABELS as NOISE_MODE_LABELS
from sims.scamp5.noise import MODES as NOISE_MODES
from sims.scamp5.noise import UPPER_BOUND_MODE, mode_note
from core.filters import PRESETS
from core.workload import FpspFilter, KernelSet, Scamp5Target, Target, Workload, kernels_of
from core.simulate import sources
from core.simulate.result import (ArrayShape, ComparedOutput, ComparedProgram, ImageInfo, NoiseInfo, OutputReport,
                                  SimulateResult, Timings)
from core.simulate.sources import ResolvedProgram

REPO = ROOT
DEFAULT_PROGRAM = "assets/programs/analognet2_cain_table2.txt"
SOURCES = ("file", "text", "search")
MODES = ("cain", "auke")
REFERENCES = ("none", "workload", "expected")
MAX_SEARCH_S = 24 * 3600              # core.cain.api.check_options
MAX_SEED = 2 ** 31 - 1


@dataclass(frozen=True)
class SimulateSettings:
    """The simulation's settings, declared once (SETTINGS_SCHEMA is made from them); the array and its
    registers are the SCAMP-5 target's, the kernels the workload's."""

    program_source: str = setting(
        "file", "Program", "Where the program comes from: a file, the pasted text, or a short Cain code search on the "
        "tab's workload", enum=list(SOURCES),
        labels={"file": "Program file", "text": "Pasted text", "search": "Code search (workload)"})
    program_file: str = setting(
        DEFAULT_PROGRAM, "File", "Macro program file; its '# input:' and '# outputs:' lines name the registers "
        "(relative paths are also tried in the repository)", placeholder="program file")
    program_text: str = setting("", "Program text", "A pasted program, one macro per line, with optional "
                                "'# input:' and '# outputs:' lines")
    search_time_s: float = setting(3.0, "Search time", "Budget of the code search (program 'Code search' and "
                                   "compare 'auke')", exclusive_minimum=0, maximum=MAX_SEARCH_S, unit="s",
                                   decimals=1, step=1.0)
    isa: str = setting("all", "Search set", "Instruction set of the code search", enum=list(INSTRUCTION_SETS))
    mode: str = setting("cain", "Search mode", "Code search: all kernels at once (Cain) or one at a time (the AUKE "
                        "baseline)", enum=list(MODES), labels={"cain": "simultaneous", "auke": "one by one"})
    reference: str = setting(
        "none", "Check against", "What a file or pasted program's outputs are compared with: nothing but the Goals "
        "the program computes, the tab's workload (one kernel per output register, in order), or the kernels that "
        "came with a pasted code-search program. A code search is always checked against its own approximation.",
        enum=list(REFERENCES), labels={"none": "the program's own Goals", "workload": "the workload's kernels",
                                       "expected": "the kernels given with the program"})
    # {"denominator": N, "kernels": [matrix per output], "source": str}, or None
    expected: dict[str, Any] | None = setting(None, "Expected kernels", "Kernels given with a pasted code-search "
                                              "program ('Check against: the kernels given with the program')")
    input_register: str = setting("", "Input", "Input register; empty: the program's '# input:' line, else A",
                                  placeholder="from file")
    output_registers: list[str] = setting(
        [], "Outputs", "Output registers, comma separated; empty: the program's '# outputs:' line, the search's, or "
        "every register the program writes", items={"type": "string"}, placeholder="from file")
    image: str = setting("sample", "Image", "'sample', pattern:NAME, or an image file path")
    noise: float = setting(0.0, "Noise", "Write-noise factor per bus operation (0 = exact; Cain's emulator: 0.005)",
                           minimum=0, decimals=4, step=0.001)
    seed: int = setting(1, "Seed", "Seed of the random noise and of random image patterns", minimum=0,
                        maximum=MAX_SEED)
    noise_mode: str = setting(
        DEFAULT_NOISE_MODE, "Noise mode", "per operation (the default): noise drawn at every bus operation and "
        "carried through the arithmetic, the physical estimate; emulator's upper bound: the published Cain "
        "emulator's linear sum of each register's noise std, drawn on read-out, which counts noise the arithmetic "
        "cancels (errors many times too large: an upper bound, not an estimate)",
        enum=list(NOISE_MODES), labels=dict(NOISE_MODE_LABELS))
    fixed_pattern: float | None = setting(None, "Fixed pattern", "Std of the per-PE fixed-pattern offset when noise "
                                          "is on; 'default': the documented default", minimum=0, decimals=4,
                                          step=0.001, null_text="default")
    saturation: float | None = setting(None, "Saturation", "|value| limit when noise is on (0 = none); 'default': "
                                       "the documented default", minimum=0, decimals=2, step=0.1,
                                       null_text="default")
    compare: str = setting("", "Compare", "Also run and compare: 'auke' (an AUKE-style search on the workload) or a "
                           "second program file")
    export: str = setting("", "Export", "Write every step's register planes as an animated GIF, or as numbered PNGs "
                          "into a folder", placeholder="FILE.gif or FOLDER")


SETTINGS_SCHEMA: dict[str, Any] = schema_of(SimulateSettings)


def default_settings() -> dict[str, Any]:
    return defaults_of(SimulateSettings)


# ------------------------------------------------------------------ settings
def _check(s: SimulateSettings) -> None:
    """What the schema's types leave, in the engine's words."""
    for key, allowed in (("program_source", SOURCES), ("mode", MODES), ("reference", REFERENCES),
                         ("noise_mode", NOISE_MODES)):
        if getattr(s, key) not in allowed:
            raise InputError(f"must be one of {', '.join(allowed)}, got {getattr(s, key)!r}", f"settings.{key}")
    if s.isa not in INSTRUCTION_SETS:
        raise InputError(f"unknown instruction set {s.isa!r}; known: {', '.join(INSTRUCTION_SETS)}", "settings.isa")
    if not s.noise >= 0:
        raise InputError(f"must be a number >= 0, got {s.noise!r}", "settings.noise")
    if not 0 < s.search_time_s <= MAX_SEARCH_S:
        raise InputError(f"must be a number of seconds > 0 (at most a day), got {s.search_time_s!r}",
                         "settings.search_time_s")
    for key in ("fixed_pattern", "saturation"):
        v = getattr(s, key)
        if v is not None and not v >= 0:
            raise InputError(f"must be a number >= 0 or null, got {v!r}", f"settings.{key}")
    if not 0 <= s.seed <= MAX_SEED:
        raise InputError(f"must be an integer in 0..{MAX_SEED}, got {s.seed!r}", "settings.seed")
    exp = s.expected
    if exp is not None:         # kernels that came with a pasted program: JSON as the program gave them
        denominator = exp.get("denominator")
        if (not isinstance(exp.get("kernels"), list) or isinstance(denominator, bool)
                or not isinstance(denominator, (int, float)) or denominator <= 0):
            raise InputError("expected {'denominator': positive number, 'kernels': [matrix, ...]}", "settings.expected")
    if s.reference == "expected" and exp is None:
        raise InputError("no kernels came with the program: check against the workload or nothing",
                         "settings.reference")


def checked_settings(raw: dict[str, Any]) -> SimulateSettings:
    """The settings over the defaults, checked and typed (InputError names the setting): the run's
    and the stepper's replay's one reading of them."""
    return parse(SimulateSettings, raw, check=_check)


def migrate_v1_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], Workload | None, Target | None]:
    """Format 1 picked the search's filter ("preset"), the reference filter ("filter") and the array
    ("size", "registers") in the settings; they become the tab's workload and target."""
    s = dict(settings)
    preset, ref = s.pop("preset", "") or "", s.pop("filter", "") or ""
    size, regs = s.pop("size", None), s.pop("registers", None)
    if s.get("program_source") == "preset":
        s["program_source"] = "search"
    search, text = s.get("program_source") == "search", s.get("program_source") == "text"
    # The two never applied together: the search compiled `preset` ('' = the window's workload) and a
    # file/text program was checked against `filter`; compare 'auke' searched `preset`, else `filter`.
    name = (preset or ref) if search else ref or (preset if str(s.get("compare", "")).strip() == "auke" else "")
    if ref and not search:
        s["reference"] = "workload"
    elif s.get("expected") is not None and text:
        s["reference"] = "expected"
    else:
        s["reference"] = "none"
    if s["reference"] != "expected":
        s["expected"] = None                # the kernels belonged to a pasted program
    if name and name not in PRESETS:
        raise InputError(f"unknown filter preset {name!r}", "filter" if name == ref else "preset")
    workload = FpspFilter(name) if name else None
    target = None
    if size is not None or regs is not None:
        target = Scamp5Target(registers=6 if regs is None else regs, array_size=256 if size is None else size)
    return s, workload, target


def settings_of_result(result: SimulateResult) -> dict[str, Any]:
    """The settings a stored result ran with, brought to today's keys (a version-1 result's too)."""
    return stored_settings(result.settings)


def stored_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings as a result keeps them, brought to today's keys (those of format 1 too)."""
    raw = dict(settings)
    if any(k in raw for k in ("preset", "filter", "size", "registers")) or raw.get("program_source") == "preset":
        raw = migrate_v1_settings(raw)[0]
    if "noise_mode" not in raw:         # kept before the setting existed: the emulator's model then ran
        raw["noise_mode"] = UPPER_BOUND_MODE
    return {k: v for k, v in raw.items() if k in default_settings()}


def workload_problem(workload: Workload) -> str | None:
    """The simulator has one input image, so multi-channel kernels cannot be checked or searched."""
    try:
        ks = kernels_of(workload)
    except InputError as exc:
        return exc.message
    multi = [k.name for k in ks.kernels if k.values and isinstance(k.values[0][0], list) and len(k.values) > 1]
    if multi:
        return (f"the simulator has one input image; {', '.join(multi)} "
                f"{'has' if len(multi) == 1 else 'have'} several input channels")
    return None


def array_shape(target: Any) -> tuple[int, tuple[str, ...]]:
    """The pixel array the target describes (SCAMP-5: 256x256, registers A-F)."""
    size = target.array_size if isinstance(target, Scamp5Target) else 256
    nreg = target.registers if isinstance(target, Scamp5Target) else 6
    if isinstance(size, bool) or not isinstance(size, int) or not 3 <= size <= 4096:
        raise InputError(f"array size must be 3..4096, got {size!r}", "target.array_size")
    if isinstance(nreg, bool) or not isinstance(nreg, int) or not 2 <= nreg <= 26:
        raise InputError(f"register count must be 2..26, got {nreg!r}", "target.registers")
    return size, register_names(nreg)


def resolve_path(path: str) -> str:
    """A relative path that does not exist from the working directory is tried in the checkout, and
    `assets/...` wherever the shipped assets are (core.paths)."""
    p = Path(path).expanduser()
    if not p.is_absolute() and not p.exists() and (REPO / p).exists():
        return str(REPO / p)
    return str(asset_path(str(p)))


def _workload_kernels(workload: Workload | None, why: str) -> KernelSet:
    if workload is None:
        raise InputError(f"{why} needs a workload: convolution kernels or an FPSP filter", "workload")
    return kernels_of(workload)


def resolve_program(s: SimulateSettings, workload: Workload | None, regs: tuple[str, ...],
                    cancel: CancelToken | None = None, mode: str | None = None) -> ResolvedProgram:
    """The program the settings name, with its input/output registers and expected kernels."""
    inp = s.input_register.upper() or None
    outs = [str(r).upper() for r in s.output_registers] or None
    src = s.program_source
    if src == "search" or mode is not None:
        ks = _workload_kernels(workload, "the code search")
        return sources.from_search(ks, regs, s.isa, mode or s.mode, float(s.search_time_s), cancel)
    if src == "text":
        if not s.program_text.strip():
            raise InputError("no program text: paste a program or pick a file", "settings.program_text")
        res = sources.from_text(s.program_text, regs, "pasted program", inp, outs)
    else:
        if not s.program_file:
            raise InputError("no program file given", "settings.program_file")
        res = sources.from_file(resolve_path(s.program_file), regs, inp, outs)
    if s.reference == "expected":
        if src != "text":
            raise InputError("the expected kernels came with a pasted program; check a file against the "
                             "workload or nothing", "settings.reference")
        exp = s.expected
        assert exp is not None          # checked_settings refuses "expected" without kernels
        if len(exp["kernels"]) != len(res.output_registers):
            raise InputError(f"{len(exp['kernels'])} expected kernels but {len(res.output_registers)} output "
                             "registers", "settings.expected")
        for i, (reg, k) in enumerate(zip(res.output_registers, exp["kernels"])):
            res.expected[reg] = sources.kernel_of(k, exp["denominator"], f"settings.expected.kernels[{i}]")
            res.requested[reg] = res.expected[reg]
        res.label += f", checked against {exp.get('source', 'the expected kernels')}"
    elif s.reference == "workload":
        ks = _workload_kernels(workload, "checking against the workload")
        if not res.output_registers:
            raise InputError("name the output registers (one per kernel) to compare with the workload",
                             "settings.output_registers")
        if len(ks.kernels) != len(res.output_registers):
            raise InputError(f"the workload {ks.name} has {len(ks.kernels)} kernels but the program names "
                             f"{len(res.output_registers)} output registers", "workload")
        for reg, k in zip(res.output_registers, ks.kernels):
            res.expected[reg] = sources.kernel_of(k, ks.denominator, "workload")
            res.requested[reg] = res.expected[reg]
    return res


# ------------------------------------------------------------------ the run
def _auto_outputs(program, goal_final: dict[str, SymKernel | None]) -> list[str]:
    written = []
    for ins in program:
        for role, reg in zip(ins.spec.roles, ins.args):
            if role in ("out", "inout") and reg not in written:
                written.append(reg)
    return sorted(r for r in written if (g := goal_final.get(r)) is not None and g.terms)


def _kernel_text(k: SymKernel | None) -> list[list[str]] | None:
    if k is None:
        return None
    from fractions import Fraction

    return [[str(Fraction(v)) for v in row] for row in k.to_matrix()] if k.terms else [["0"]]


@dataclass
class ProgramRun:
    """One program simulated and analysed: the parts of a SimulateResult that belong to a program
    (the main one's become the result's, each one's a ComparedProgram), and the run itself for export."""

    label: str
    program: list[str]
    program_length: int
    bus_steps: int
    input_register: str
    output_registers: list[str]
    outputs: dict[str, OutputReport]
    exact: bool
    matches_interpreter: bool
    interpreter_registers: dict[str, bool]
    error_growth: list[float]
    output_error_growth: dict[str, list[float | None]]
    simulate_s: float
    with_analysis_s: float
    info: dict[str, Any]
    warnings: list[AnalogueWarning]
    run: Any                                    # sims.scamp5.simulator.SimRun

    def compared(self) -> ComparedProgram:
        """This program as one of those run side by side, outputs in kernel order (programs may put
        the same kernel in different registers)."""
        return ComparedProgram(
            label=self.label, program_length=self.program_length, bus_steps=self.bus_steps,
            final_mean_rms_error=self.error_growth[-1],
            outputs=[ComparedOutput(register=r, rms_error=self.outputs[r].rms_error,
                                    max_error=self.outputs[r].max_error) for r in self.output_registers],
            error_growth=self.error_growth, exact=self.exact, program=self.program)


def simulate_program(res: ResolvedProgram, levels: np.ndarray, regs: tuple[str, ...], noise,
                     cancel: CancelToken, label: str, total_programs: int = 1, index: int = 0
                     ) -> Iterator[Event | ProgramRun]:
    """Simulate one resolved program, yielding events and finally its ProgramRun."""
    from sims.scamp5 import analysis
    from sims.scamp5.images import to_values
    from sims.scamp5.simulator import iter_simulate, simulate

    values = to_values(levels)
    goal_states = run_symbolic(res.program, registers=regs, input_register=res.input_register)
    outputs = res.output_registers or _auto_outputs(res.program, goal_states[-1])
    for reg in outputs:
        if goal_states[-1].get(reg) is None:
            raise InputError(f"output register {reg} holds no value at the end of the program", "output_registers")
    n = len(res.program)
    ideal_cache: dict[SymKernel, np.ndarray] = {}
    growth: list[float] = []
    per_reg_growth: dict[str, list[float | None]] = {r: [] for r in outputs}   # None: no value yet
    t0 = time.perf_counter()
    sim_seconds = 0.0
    run = None
    for run, rec in iter_simulate(res.program, values, regs, res.input_register, noise):
        sim_seconds += rec.seconds
        cancel.check()
        errs = []
        for reg, goal in goal_states[rec.index].items():
            if goal is None:
                continue
            if goal not in ideal_cache:
                ideal_cache[goal] = analysis.ideal(values, goal)
            e = run.read_out(reg, rec.index) - ideal_cache[goal]
            rms = analysis.error_stats(e, rec.state.valid[reg])[0]
            errs.append(rms)
            if reg in per_reg_growth:
                per_reg_growth[reg].append(rms)
        for reg in outputs:
            if goal_states[rec.index].get(reg) is None:
                per_reg_growth[reg].append(None)
        growth.append(float(np.mean(errs)) if errs else 0.0)
        yield MetricPoint(f"{label}: mean RMS error", rec.index, growth[-1])
        frac = (index + rec.index / max(n, 1)) / total_programs
        yield Progress(frac, f"{label}: {rec.index}/{n} {rec.instr if rec.instr else 'image loaded'}")
    assert run is not None
    wall = time.perf_counter() - t0
    exact_run = run if not noise.enabled else simulate(res.program, values, regs, res.input_register)
    cancel.check()
    agreement = analysis.interpreter_agreement(exact_run, levels)
    reports: dict[str, OutputReport] = {}
    for reg in outputs:
        kernel = res.expected.get(reg) or goal_states[-1][reg]
        assert kernel is not None           # checked above: every output holds a value at the end
        rep, _err = analysis.report_register(run, reg, kernel, values, run.read_out(reg), agreement.get(reg))
        reports[reg] = OutputReport(
            register=rep.register, kernel=rep.kernel, rms_error=rep.rms_error, max_error=rep.max_error,
            interior_pixels=rep.interior_pixels, edge_pixels=rep.edge_pixels, edge_rms_error=rep.edge_rms_error,
            edge_max_error=rep.edge_max_error, matches_interpreter=rep.matches_interpreter,
            goal=_kernel_text(goal_states[-1][reg]), goal_matches_expected=goal_states[-1][reg] == kernel,
            requested_kernel=_kernel_text(res.requested[reg]) if reg in res.requested else None)
    warnings = _analogue_warnings(res, outputs, goal_states, run, noise)
    exact = (not noise.enabled and all(agreement.values())
             and all(r.max_error == 0.0 and r.goal_matches_expected for r in reports.values())
             and max(growth) == 0.0)
    yield ProgramRun(
        label=res.label, program=[str(i) for i in res.program], program_length=n, bus_steps=run.bus_steps(),
        input_register=res.input_register, output_registers=outputs, outputs=reports, exact=bool(exact),
        matches_interpreter=bool(all(agreement.values())), interpreter_registers=agreement, error_growth=growth,
        output_error_growth=per_reg_growth, simulate_s=sim_seconds, with_analysis_s=wall, info=dict(res.info),
        warnings=warnings, run=run)


def saturation_limit(noise: Any) -> tuple[float, bool]:
    """The analogue range a run is checked against, and whether the model clips at it (noise on
    with saturation); with clipping off a value beyond it would still saturate on the chip."""
    return (noise.saturation, True) if noise.saturation > 0 else (ANALOGUE_RANGE, False)


def saturated_pixels(run: Any, noise: Any) -> dict[tuple[int, str], int]:
    """(step, register) -> PEs at or beyond the analogue range after that step, for the registers
    each step wrote (the stepper marks the same PEs)."""
    limit, clips = saturation_limit(noise)
    out: dict[tuple[int, str], int] = {}
    prev: dict[str, Any] = {}
    for rec in run.records:
        for reg in run.registers:
            plane = rec.state.values[reg]
            if plane is prev.get(reg):
                continue
            prev[reg] = plane
            over = np.abs(plane) >= limit if clips else np.abs(plane) > limit
            n = int(np.count_nonzero(over & rec.state.valid[reg]))
            if n:
                out[(rec.index, reg)] = n
    return out


def _analogue_warnings(res: ResolvedProgram, outputs: list[str], goal_states: list[dict[str, SymKernel | None]],
                       run: Any, noise: Any) -> list[AnalogueWarning]:
    """Kernels whose gain, and registers whose value after an instruction, can leave the analogue
    range, with the PEs that saturated in this run (core.scamp5.analogue)."""
    limit, _clips = saturation_limit(noise)
    found: list[AnalogueWarning] = []
    for reg in outputs:
        k = res.expected.get(reg) or goal_states[-1].get(reg)
        if k is not None:
            found += kernel_warnings({"": ([c for _, c in k.terms], reg)}, limit)
    states = [{r: None if k is None else [c for _, c in k.terms] for r, k in st.items()} for st in goal_states]
    return found + register_warnings(states, [str(i) for i in res.program], limit, saturated_pixels(run, noise))


def _check_export(path: str) -> None:
    """The pictures' place can take files (export_frames: FILE.gif, NAME.png stems, or a folder)."""
    from core.files import output_folder

    p = Path(path)
    if p.suffix.lower() in (".gif", ".png"):
        output_folder(p.parent, [p.name if p.suffix.lower() == ".gif" else f"{p.stem}_000.png"], "settings.export")
    else:
        output_folder(p, ["step_000.png"], "settings.export")


def run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    from sims.scamp5.images import load_input
    from sims.scamp5.noise import NoiseModel

    t_start = time.perf_counter()
    s = checked_settings(request.settings)
    size, regs = array_shape(request.target)
    if s.export.strip():     # where the pictures go is checked before the run, not after it
        _check_export(s.export.strip())
    yield Progress(0.0, "loading the image")
    image_spec = s.image
    if image_spec not in ("sample",) and not image_spec.startswith("pattern:"):
        image_spec = resolve_path(image_spec) if Path(resolve_path(image_spec)).exists() else image_spec
    levels, image_desc = load_input(image_spec, size, int(s.seed))
    if s.program_source == "search":
        yield Progress(None, f"code search ({s.mode}, {s.search_time_s:g} s)")
    res = resolve_program(s, request.workload, regs, cancel)
    cancel.check()
    noise = NoiseModel.analogue(float(s.noise), int(s.seed), s.fixed_pattern, s.saturation,
                                  mode=s.noise_mode)
    programs: list[tuple[str, ResolvedProgram]] = [("program", res)]
    compare = s.compare.strip()
    if compare:
        if compare == "auke":
            yield Progress(None, f"AUKE-style code search ({s.search_time_s:g} s)")
            sub = replace(s, isa="auke", program_source="search")
            other = resolve_program(sub, request.workload, regs, cancel, mode="auke")
            programs.append(("AUKE-style", other))
        else:
            other = sources.from_file(resolve_path(compare), regs)
            if not other.output_registers and res.output_registers:
                other.output_registers = list(res.output_registers)
            other.expected = {k: v for k, r in zip(other.output_registers, res.output_registers)
                              if (v := res.expected.get(r)) is not None}
            programs.append((Path(compare).stem, other))
    analyses: dict[str, ProgramRun] = {}
    for i, (label, prog) in enumerate(programs):
        for item in simulate_program(prog, levels, regs, noise, cancel, label, len(programs), i):
            if isinstance(item, ProgramRun):
                analyses[label] = item
            else:
                yield item
    main = analyses["program"]
    for w in main.warnings:
        yield LogLine(w.message, "warning")
    if not main.exact and not noise.enabled:
        yield LogLine("noise is off but the outputs differ from the ideal kernels; see 'outputs'", "warning")
    exported: list[str] | None = None
    if s.export.strip():
        from sims.scamp5.render import export_frames

        yield Progress(None, "exporting the run as pictures")
        run0 = main.run
        try:
            files = export_frames(run0, s.export.strip(), list(run0.registers) + ["NEWS"])
        except OSError as exc:
            raise InputError(f"cannot write the pictures: {exc}", s.export) from None
        exported = [str(f) for f in files]
    n = main.program_length
    timings = Timings(simulate_s=main.simulate_s, with_analysis_s=main.with_analysis_s,
                      per_instruction_ms=1000 * main.simulate_s / max(n, 1), total_s=time.perf_counter() - t_start)
    yield Progress(1.0, "done")
    # The settings kept were checked by checked_settings above (SimulateResult.validate checks the
    # same when a stored result is read); every number here is a plain Python one.
    yield FinalResult(SimulateResult(
        label=main.label, program=main.program, program_length=n, bus_steps=main.bus_steps,
        input_register=main.input_register, output_registers=main.output_registers, outputs=main.outputs,
        exact=main.exact, matches_interpreter=main.matches_interpreter,
        interpreter_registers=main.interpreter_registers, error_growth=main.error_growth,
        output_error_growth=main.output_error_growth, timings=timings, info=main.info,
        array=ArrayShape(size=size, registers=list(regs)),
        image=ImageInfo(source=s.image, description=image_desc,
                        sha256=hashlib.sha256(levels.tobytes()).hexdigest()[:16]),
        noise=NoiseInfo(**noise.to_json(), enabled=noise.enabled, note=mode_note(noise.mode) if noise.enabled else None),
        settings=as_dict(s),
        # a program file (core.scamp5.program_file): the stored run names its own registers
        program_text=write_program(res.program, ProgramHeader(input_registers=[res.input_register],
                                                              output_registers=list(main.output_registers))),
        comparison={label: a.compared() for label, a in analyses.items()} if len(programs) > 1 else None,
        exported=exported, warnings=main.warnings))


# ------------------------------------------------------------------ command line
def add_cli_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--program", metavar="FILE", help="macro program file (e.g. assets/programs/analognet2_cain_table2.txt)")
    src.add_argument("--preset", metavar="NAME", help="compile this filter preset with the Cain search first")
    p.add_argument("--image", default="sample", help="image file (PNG/JPEG), 'sample', or pattern:NAME "
                   "(gradient, checker, rings, impulse, noise, scene); default sample")
    p.add_argument("--noise", type=float, default=0.0, metavar="SIGMA",
                   help="analogue write-noise factor per bus operation (0 = exact; Cain's emulator uses 0.005)")
    p.add_argument("--seed", type=int, default=1, help="seed of the random noise (default 1)")
    p.add_argument("--noise-mode", default=DEFAULT_NOISE_MODE, choices=list(NOISE_MODES),
                   help="per-op (default): noise drawn at every bus operation and carried through the arithmetic, "
                        "the physical estimate; emulator: the published Cain emulator's upper bound (each "
                        "register's noise std summed linearly and drawn on read-out)")
    p.add_argument("--size", type=int, default=256, help="array size N for N x N PEs (default 256)")
    p.add_argument("--registers", type=int, default=6, help="analogue registers A.. (default 6: A-F)")
    p.add_argument("--input", default="", metavar="REG", help="input register (default: '# input:' line or A)")
    p.add_argument("--outputs", default="", metavar="A,B,C", help="output registers (default: '# outputs:' line, "
                   "the search's, or every register the program writes)")
    p.add_argument("--filter", default="", metavar="NAME", help="check a program's outputs against this filter preset")
    p.add_argument("--isa", default="all", choices=list(INSTRUCTION_SETS), help="instruction set for --preset")
    p.add_argument("--mode", default="cain", choices=list(MODES), help="search mode for --preset")
    p.add_argument("--time", type=float, default=3.0, metavar="S", help="code-search budget for --preset (s)")
    p.add_argument("--compare", default="", metavar="auke|FILE",
                   help="also run an AUKE-style program (search) or a second program file; compares error growth")
    p.add_argument("--export", default="", metavar="FILE.gif|DIR",
                   help="write every step's register planes as an animated GIF, or as numbered PNGs into DIR")
    p.add_argument("--fixed-pattern", type=float, default=None, metavar="STD", help="fixed-pattern offset std")
    p.add_argument("--saturation", type=float, default=None, metavar="LIMIT", help="|value| limit (0 = none)")


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    """--preset and --filter name the workload (searched, or checked against); --size and
    --registers the target; the rest are settings."""
    s = default_settings()
    for flag, given in (("--preset", args.preset), ("--filter", args.filter)):
        if given and given not in PRESETS:
            raise InputError(f"unknown filter preset {given!r}; known: {', '.join(PRESETS)}", flag)
    name = args.preset or args.filter
    if args.program:
        s.update(program_source="file", program_file=args.program, reference="workload" if args.filter else "none")
    else:
        s.update(program_source="search")
    outs = [r.strip().upper() for r in args.outputs.replace(" ", ",").split(",") if r.strip()]
    s.update(image=args.image, noise=args.noise, seed=args.seed, input_register=args.input.upper(),
             output_registers=outs, isa=args.isa, mode=args.mode, search_time_s=args.time,
             noise_mode=args.noise_mode, export=args.export, compare=args.compare,
             fixed_pattern=args.fixed_pattern, saturation=args.saturation)
    s = as_dict(checked_settings(s))
    target = Scamp5Target(registers=args.registers, array_size=args.size)
    array_shape(target)
    return JobRequest(workload=FpspFilter(name) if name else None, target=target, settings=s)


def _fmt_kernel(k: list[list[str]] | None) -> str:
    if not k:
        return "-"
    return "[" + "; ".join(" ".join(row) for row in k) + "]"


def format_text(result: EngineResult) -> str:
    assert isinstance(result, SimulateResult)
    r = result
    arr, noise = r.array, r.noise
    lines = [f"SCAMP-5 simulator: {r.label}",
             f"  {r.program_length} instructions, {r.bus_steps} bus operations, "
             f"{arr.size}x{arr.size} PEs, registers {arr.registers[0]}-{arr.registers[-1]}, "
             f"input {r.input_register}",
             f"  image: {r.image.description}",
             "  noise: " + (f"write factor {noise.write_factor:g}, sensor {noise.sensor_factor:g}, "
                            f"fixed pattern {noise.fixed_pattern:g}, saturation {noise.saturation:g}, "
                            f"seed {noise.seed}, mode {noise.mode} ({noise.model_label()})"
                            if noise.enabled else "off (exact simulation)"),
             *([f"  the errors below are the {mode_note(noise.mode)}"] if noise.enabled and noise.mode == UPPER_BOUND_MODE
               else []),
             "",
             f"  {'reg':<4}{'rms error':>12}{'max error':>12}{'interior':>10}{'edge px':>9}{'edge max':>11}"
             f"{'interp':>8}  kernel"]
    for reg, o in r.outputs.items():
        interp = {True: "same", False: "DIFF", None: "-"}[o.matches_interpreter]
        lines.append(f"  {reg:<4}{o.rms_error:>12.3g}{o.max_error:>12.3g}{o.interior_pixels:>10}"
                     f"{o.edge_pixels:>9}{o.edge_max_error:>11.3g}{interp:>8}  {_fmt_kernel(o.kernel)}")
    if r.warnings:
        lines.append("")
        lines.append(f"  analogue range: {len(r.warnings)} warning(s)")
        lines += [f"    warning: {w.message}" for w in r.warnings]
    lines.append("")
    lines.append(f"  exact: {'true' if r.exact else 'false'}; bus-level run equals the exact interpreter "
                 f"(core.scamp5.interp.run_exact): {'yes' if r.matches_interpreter else 'NO'}")
    if r.comparison is not None:
        lines.append("")
        lines.append("  error at the end of each program (mean RMS error of registers holding a Goal; RMS per output):")
        for label, c in r.comparison.items():
            outs = ", ".join(f"{o.register} {o.rms_error:.4g}" for o in c.outputs)
            lines.append(f"    {label:<12} {c.program_length:>3} instructions  {c.bus_steps:>4} bus ops  "
                         f"final mean RMS {c.final_mean_rms_error:.4g}; outputs in kernel order: {outs}")
            lines.append(f"    {'':<12} ({c.label})")
    if r.exported:
        lines.append(f"  pictures: {r.exported[0]}" + (f" … ({len(r.exported)} files)" if len(r.exported) > 1 else ""))
    t = r.timings
    lines.append(f"  time: simulation {1000 * t.simulate_s:.1f} ms ({t.per_instruction_ms:.2f} ms per "
                 f"instruction), total {t.total_s:.2f} s")
    return "\n".join(lines)


ENGINE = EngineSpec(
    name="simulate",
    title="SCAMP-5 simulator",
    summary="Runs a SCAMP-5 macro program on a bus-level model of the 256x256 pixel array (registers "
            "A-F and NEWS, every macro as its analogue bus operations, optional analogue noise) and "
            "checks each output register against the ideal convolution of its kernel.",
    run=run,
    default_settings=default_settings,
    add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli,
    format_text=format_text,
    workload_kinds=("fpsp_filter", "kernels"),
    target_kinds=("scamp5",),
    settings_schema=SETTINGS_SCHEMA,
    workload_problem=workload_problem,
    migrate_v1_settings=migrate_v1_settings,
    order=20,
    result_type=SimulateResult,
)
