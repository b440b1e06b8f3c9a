"""Write, build, run and check the synthesised programs of one engine run (the engine's synthesis step).

Programs: `parallel` (every layer precise), `relaxed` and `imprecise` (every layer in that mode: the
error of each mode on its own), `parallel_inexact` (the modes chosen under the accuracy budget) and,
for small chains, the naive `baseline`. Each synthesised program is a C file plus its weight file;
its source size, weight file size and build time are reported. All programs (and onnxruntime on the
same ONNX file with the same thread count, when installed) run interleaved `repeats` times; every
output is checked against the numpy reference of the program's modes (max abs / relative error,
classification of clear-cut images) and against onnxruntime's float32 output.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generator

import numpy as np

from core import faults
from core.atomic import atomic_write_bytes, atomic_write_text
from core.cappuccino import ort_peer, sharing, synth, synth_program
from core.cappuccino.forward import forward_reference
from core.cappuccino.model import CnnModel
from core.cappuccino.numerics import IMPRECISE, INT8, PRECISE, RELAXED
from core.cappuccino.settings import CappuccinoSettings
from core.cappuccino.result import CompiledProgram, OnnxRuntimeRun, ProgramSize, Synthesis
from core.errors import InputError
from core.files import output_folder
from core.jobs import CancelToken, Event, LogLine, MetricPoint, Progress
from core.machine_load import LoadMeter, LoadRecord

# The precise programs keep fused multiply-adds (synth_program.synthesise); a benchmark builds them without.
PRECISE_FMA = True

ORT = "onnxruntime"
Reference = Callable[[dict[str, str]], np.ndarray]
# what the engine does with the kept program's profile: (plan, modes, per-op µs per image in plan order,
# the profiled pass's µs per image, the machine's other work meanwhile)
OnProfile = Callable[[synth_program.Plan, dict[str, str], list[float], float, LoadRecord | None], None]
COMPILE_BASELINE_SHARE = 0.1       # building the plain baseline takes about a tenth of a synthesised program
# the thread split's steps in the progress fractions (each a stage of core.cappuccino.engine.work_plan):
# the profile of the rule's split against every op on one worker from 0.71, the measured split timed
# against the rule's (when it differs), the program built again with it (when kept)
SPLIT_CHECK_AT, SPLIT_BUILD_AT = 0.714, 0.718


@dataclass
class Source:
    key: str
    fname: str
    text: str
    weights: bytes | None           # None: the baseline (weights in the source)
    modes: dict[str, str]
    lines: int
    plan: synth_program.Plan | None = None      # None: the baseline


def _sources(model: CnnModel, chosen: dict[str, str], V: int, threads: int, precise_fma: bool,
             cancel: CancelToken) -> Generator[Event, None, tuple[dict[str, Source], str | None]]:
    uniform = {m: {op.name: m for op in model.conv_ops} for m in (PRECISE, RELAXED, IMPRECISE)}
    plan = {"parallel": ("parallel_precise.c", uniform[PRECISE]), "relaxed": ("relaxed.c", uniform[RELAXED]),
            "imprecise": ("imprecise.c", uniform[IMPRECISE]), "parallel_inexact": ("cappuccino.c", chosen)}
    out: dict[str, Source] = {}
    no_baseline = synth.baseline_problem(model)
    if no_baseline is None:
        text = synth.synthesise_baseline(model)
        out["baseline"] = Source("baseline", "baseline.c", text, None, uniform[PRECISE], text.count("\n") + 1)
    made: dict[tuple, synth.Program] = {}     # the chosen modes are often one uniform mode's
    for n, (key, (fname, modes)) in enumerate(plan.items()):
        yield Progress(0.55 + 0.02 * n, f"synthesising {fname}")
        cancel.check()
        mkey = tuple(sorted(modes.items()))
        if mkey not in made:
            made[mkey] = synth.synthesise_program(model, modes, V, threads, precise_fma)
        prog = made[mkey]
        out[key] = Source(key, fname, prog.source, prog.weights, modes, prog.source_lines, prog.plan)
    return out, no_baseline


def weight_file_name(fname: str) -> str:
    return fname.replace(".c", "_weights.bin")


def synthesise_and_check(model: CnnModel, chosen: dict[str, str], V: int, threads: int, s: CappuccinoSettings,
                         cancel: CancelToken, onnx_path: str | None,
                         reference: Reference | None = None,
                         on_profile: OnProfile | None = None) -> Generator[Event, None, Synthesis]:
    """The engine's `synthesis` result, filled in as the steps go (`message` is set by every way out).

    `reference(modes)`: the numpy logits of x_val with those modes (the engine's incremental
    forward.ActivationCache); forward_reference when None. `on_profile`: after the timed runs, the
    kept program is run once more with its per-op clock (`--profile`, a run of its own, so the
    timings above are untouched) and the profile handed to it."""
    sources, no_baseline = yield from _sources(model, chosen, V, threads, PRECISE_FMA, cancel)
    emit = s.emit_dir
    tmp = Path(tempfile.mkdtemp(prefix="cappuccino-"))
    out = Synthesis(emitted=[], modes=dict(chosen), compiler=None, message="")
    if no_baseline:
        out.baseline_note = no_baseline
    try:
        work = tmp
        if emit:     # every name checked before the first file is written
            names = [src.fname for src in sources.values()]
            names += [weight_file_name(src.fname) for src in sources.values() if src.weights is not None]
            work = output_folder(emit, [*names, "validation_images.f32", "validation_labels.txt"], "emit")
            try:
                work.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"cannot create {emit}: {exc}", "emit") from None
        for src in sources.values():
            atomic_write_text(work / src.fname, src.text)
            files = [work / src.fname]
            if src.weights is not None:
                atomic_write_bytes(work / weight_file_name(src.fname), src.weights)
                files.append(work / weight_file_name(src.fname))
            if emit:
                out.emitted += [str(f.resolve()) for f in files]
        images = work / "validation_images.f32"
        synth.write_images(images, model.x_val)
        labels = work / "validation_labels.txt"
        atomic_write_text(labels, " ".join(str(int(v)) for v in model.y_val) + "\n")
        if emit:
            out.emitted += [str(images.resolve()), str(labels.resolve())]
        out.program_sizes = {k: ProgramSize(source_lines=src.lines, source_bytes=len(src.text.encode()),
                                            weight_file_bytes=len(src.weights) if src.weights is not None else 0)
                             for k, src in sources.items()}
        cc, cc_note = synth.find_compiler_noting() if s.compile else (None, "")
        out.compiler = cc
        if cc_note:
            out.compiler_note = cc_note
            yield LogLine(cc_note, "warning")
        if cc is None:
            kept = f"the programs were written to {Path(emit).resolve()}" if emit else (
                "the programs were generated but not kept (give an output folder to keep them)")
            out.message = ((f"compilation skipped by setting; {kept}" if not s.compile else
                            f"no C compiler found (gcc/cc/clang): {kept}, not compiled or run, "
                            f"so no speedup is reported; {faults.compiler_hint()}") + (f" ({cc_note})" if cc_note else ""))
            yield LogLine(out.message, "warning")
            return out
        yield from _build_run_check(model, sources, work, tmp, images, cc, cc_note, threads, s, cancel, onnx_path, out,
                                    reference, on_profile)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _measure_split(model: CnnModel, sources: dict[str, Source], exes: dict[str, Path], build: dict[str, float],
                   work: Path, images: Path, cc: str, threads: int, s: CappuccinoSettings, cancel: CancelToken,
                   out: Synthesis) -> Generator[Event, None, None]:
    """The chosen program's thread split from measured per-op time (core.cappuccino.sharing), on the
    program just built; a kept split is written into its source and weight file and built again."""
    src = sources["parallel_inexact"]
    assert src.plan is not None
    if not s.measure_split:
        out.thread_split_note = "not measured (setting off): the size rule shares the layers"
        return
    if threads < 2:
        out.thread_split_note = "not measured: one thread"
        return
    if not any(op.chunks > 1 for op in src.plan.ops):
        out.thread_split_note = "not measured: no layer is large enough to share (the program runs on one worker)"
        return
    yield Progress(0.71, "measuring the thread split (profiling the chosen program shared and on one worker)")
    steps = sharing.measure_program_steps(src.plan, exes["parallel_inexact"], work / weight_file_name(src.fname), images,
                                          len(model.x_val), min(float(s.min_seconds), 0.3), cancel.check)
    while True:         # each step its own stage of the progress (core.cappuccino.engine.work_plan)
        try:
            yield Progress(SPLIT_CHECK_AT, f"measuring the thread split: {next(steps)}")
        except StopIteration as done:
            choice = done.value
            break
    out.thread_split = choice
    yield LogLine(choice.summary(), "info")
    if choice.shared is None:
        return
    prog = synth.synthesise_program(model, src.modes, src.plan.V, threads, PRECISE_FMA,
                                    shared=choice.shared)
    sources["parallel_inexact"] = Source(src.key, src.fname, prog.source, prog.weights, src.modes, prog.source_lines,
                                         prog.plan)
    yield Progress(SPLIT_BUILD_AT, f"building {src.fname} with the measured split")
    atomic_write_text(work / src.fname, prog.source)
    atomic_write_bytes(work / weight_file_name(src.fname), prog.weights)
    if out.program_sizes is not None:
        out.program_sizes["parallel_inexact"] = ProgramSize(source_lines=prog.source_lines,
                                                            source_bytes=len(prog.source.encode()),
                                                            weight_file_bytes=len(prog.weights))
    try:
        build["parallel_inexact"] = synth.compile_c(cc, work / src.fname, exes["parallel_inexact"], True, cancel.check)
    except RuntimeError as exc:
        raise InputError(f"the C compiler rejected {src.fname}: {exc}", src.fname) from None


def _build_run_check(model: CnnModel, sources: dict[str, Source], work: Path, tmp: Path, images: Path, cc: str,
                     cc_note: str, threads: int, s: CappuccinoSettings, cancel: CancelToken, onnx_path: str | None,
                     out: Synthesis, reference: Reference | None = None,
                     on_profile: OnProfile | None = None) -> Generator[Event, None, None]:
    exes: dict[str, Path] = {}
    build: dict[str, float] = {}
    # the stage's fractions in work units (core.work_units): the plain baseline builds ten times faster
    cost = [COMPILE_BASELINE_SHARE if src.weights is None else 1.0 for src in sources.values()]
    for n, (key, src) in enumerate(sources.items()):
        yield Progress(0.63 + 0.08 * sum(cost[:n]) / sum(cost), f"compiling {src.fname}")
        exes[key] = tmp / src.fname.replace(".c", "")
        try:
            build[key] = synth.compile_c(cc, work / src.fname, exes[key], src.weights is not None, cancel.check)
        except RuntimeError as exc:
            raise InputError(f"the C compiler rejected {src.fname}: {exc}", src.fname) from None
    yield from _measure_split(model, sources, exes, build, work, images, cc, threads, s, cancel, out)
    count = len(model.y_val)
    ort_version = ort_peer.version() if onnx_path else None
    if onnx_path and ort_version is None:
        out.onnxruntime_note = "onnxruntime is not installed: no comparison with it"
    elif not onnx_path:
        out.onnxruntime_note = "no ONNX file for this network: no comparison with onnxruntime"
    # rounds of every program and onnxruntime, the order reversed every other round (as
    # benchmarks/cappuccino_vs_onnxruntime.py), so a drift of the machine affects each alike; the
    # medians count, and the machine's other work over the rounds is recorded beside them
    keys = list(sources) + ([ORT] if ort_version else [])
    runs: dict[str, list[synth.RunResult]] = {k: [] for k in keys}
    total = s.repeats * len(keys)
    meter = LoadMeter()
    for rep in range(s.repeats):
        for n, key in enumerate(keys if rep % 2 == 0 else keys[::-1]):
            yield Progress(0.72 + 0.26 * (rep * len(keys) + n) / total, f"running {key} ({rep + 1}/{s.repeats})")
            if key == ORT:
                assert onnx_path is not None
                runs[key].append(synth.run_command(ort_peer.command(Path(onnx_path), images, count, s.min_seconds,
                                                                    threads), count, cancel.check, ORT))
            else:
                src = sources[key]
                wpath = work / weight_file_name(src.fname) if src.weights is not None else None
                runs[key].append(synth.run_program(exes[key], images, count, s.min_seconds, cancel.check,
                                                   weights=wpath, threads=threads if wpath else None))
    out.load = meter.stop()
    if out.load.busy:
        yield LogLine(f"timings: {out.load.warning()}", "warning")
    # the timing is over: the numpy references of the programs' modes are the "end" stage's work
    # (core.cappuccino.engine.work_plan), said as such so the time left counts them there (on VGG-16
    # they take minutes: reported inside the timing band, the estimate ran out long before the run)
    yield Progress(0.98, "checking each program's outputs against the numpy reference of its modes")
    ort_out = runs[ORT][0].logits if ort_version else None
    ours = runs["parallel"][0].logits
    if ort_version and (ort_out is None or ours is None or ort_out.shape[1] != ours.shape[1]):
        out.onnxruntime_note = "onnxruntime's output does not have the network's output size: not compared"
        ort_out = None
    refs: dict[tuple, np.ndarray] = {}
    programs: dict[str, CompiledProgram] = {}
    sizes = out.program_sizes or {}
    for n, (key, src) in enumerate(sources.items()):
        mkey = tuple(sorted(src.modes.items()))
        if mkey not in refs:
            refs[mkey] = (reference(src.modes) if reference is not None else
                          forward_reference(model, model.x_val, src.modes)[0])
        programs[key] = _program_record(key, src, runs[key], refs[mkey], model.y_val, ort_out, build[key], threads,
                                        count, sizes[key])
        yield MetricPoint("µs per image", n, programs[key].microseconds_per_image, plot="speed")
    kept = _keep_faster_than_precise(runs, sources, programs, work, out)
    if kept:
        yield LogLine(kept, "warning")
    out.programs = programs
    if on_profile is not None:
        # the kept program (precise when the chosen modes were dropped: its binary is `parallel`'s)
        key = "parallel" if out.kept_precise else "parallel_inexact"
        src = sources[key]
        assert src.plan is not None
        yield Progress(0.98, f"timing each layer of {src.fname} (--profile)")
        meter = LoadMeter()
        prof = synth.run_program(exes[key], images, count, s.min_seconds, cancel.check,
                                 weights=work / weight_file_name(src.fname), threads=threads, profile=True)
        load = meter.stop()
        if prof.op_list is not None:
            on_profile(src.plan, dict(src.modes), prof.op_list, 1e6 * prof.seconds_per_pass / count, load)
    if ort_version:
        times = [r.seconds_per_pass for r in runs[ORT]]
        median = 1e6 * float(np.median(times)) / count
        out.onnxruntime = OnnxRuntimeRun(version=ort_version, threads=threads, onnx=str(onnx_path),
                                         microseconds_per_image=1e6 * min(times) / count,
                                         median_microseconds_per_image=median,
                                         ratios={k: p.median_microseconds_per_image / median
                                                 for k, p in programs.items() if k != "baseline"})
    note = f" ({cc_note})" if cc_note else ""
    msg = [f"compiled with {cc}{note}; median of {s.repeats} alternating runs of >= {s.min_seconds} s each"]
    if out.load is not None and out.load.busy:
        msg.append(f"TIMINGS UNRELIABLE: {out.load.warning()}")
    if kept:
        msg.append(kept)
    if "baseline" in programs:
        base = programs["baseline"].median_microseconds_per_image
        out.speedups = {k: base / v.median_microseconds_per_image for k, v in programs.items()}
        msg.append(f"speedup {out.speedups['parallel_inexact']:.1f}x over the naive baseline")
    if out.onnxruntime is not None:
        r = out.onnxruntime.ratios
        msg.append(f"median time / onnxruntime's: precise {r['parallel']:.2f}, relaxed {r['relaxed']:.2f}, "
                   f"imprecise {r['imprecise']:.2f}, chosen {r['parallel_inexact']:.2f}")
    out.message = "; ".join(msg)


NOISE_FLOOR = 0.02      # timings closer than 2 % are not told apart, however steady the runs


def faster_than_precise(precise: list[float], chosen: list[float]) -> tuple[bool, float, float]:
    """Whether the chosen program measured faster than the precise one by more than the measurement's
    noise: (faster, median of the rounds' time ratios chosen / precise, noise). The runs are paired
    by round (the same moment of the machine); the noise is the ratios' largest distance from their
    median, at least NOISE_FLOOR."""
    ratios = [c / p for p, c in zip(precise, chosen) if p > 0]
    if not ratios:
        return False, float("nan"), float("nan")
    median = float(np.median(ratios))
    noise = max(NOISE_FLOOR, max(abs(r - median) for r in ratios))
    return median < 1.0 - noise, median, noise


def _keep_faster_than_precise(runs: dict[str, list[synth.RunResult]], sources: dict[str, Source],
                              programs: dict[str, CompiledProgram], work: Path, out: Synthesis) -> str:
    """When the chosen modes did not measure faster than every layer precise, keep precise: the chosen
    program becomes the precise one (its record, source and weight file, in the output folder too)
    and the reason is returned (empty when the chosen modes stay). A chosen program that classified
    differently from numpy stays, so that the run's check reports it."""
    chosen = sources["parallel_inexact"]
    if all(m == PRECISE for m in chosen.modes.values()) or programs["parallel_inexact"].mismatches:
        return ""
    faster, ratio, noise = faster_than_precise([r.seconds_per_pass for r in runs["parallel"]],
                                               [r.seconds_per_pass for r in runs["parallel_inexact"]])
    if faster:
        return ""
    inexact = sum(m != PRECISE for m in chosen.modes.values())
    why = (f"kept every layer precise: the chosen modes ({inexact} of {len(chosen.modes)} layers inexact) measured "
           f"{ratio:.2f}x precise's time (median of {len(runs['parallel'])} rounds, noise ±{noise:.2f}), not faster "
           f"by more than the noise")
    precise = sources["parallel"]
    sources["parallel_inexact"] = Source(chosen.key, chosen.fname, precise.text, precise.weights, dict(precise.modes),
                                         precise.lines, precise.plan)
    programs["parallel_inexact"] = dataclasses.replace(programs["parallel"], source=chosen.fname,
                                                       modes=dict(programs["parallel"].modes))
    if precise.weights is not None:
        atomic_write_text(work / chosen.fname, precise.text)
        atomic_write_bytes(work / weight_file_name(chosen.fname), precise.weights)
    if out.program_sizes is not None:
        out.program_sizes["parallel_inexact"] = out.program_sizes["parallel"]
    out.modes = dict(precise.modes)
    out.kept_precise = why
    if out.thread_split is not None:
        out.thread_split = None
        out.thread_split_note = "measured on the inexact program, which was not kept"
    return why


def _program_record(key: str, src: Source, runs: list[synth.RunResult], ref_logits: np.ndarray, labels: np.ndarray,
                    ort_out: np.ndarray | None, build_seconds: float, threads: int, count: int,
                    sizes: ProgramSize) -> CompiledProgram:
    best = min(runs, key=lambda rr: rr.seconds_per_pass)
    ref = ref_logits.argmax(1)
    preds = [np.asarray(rr.predictions) for rr in runs]
    lg = runs[0].logits
    scale = max(1.0, float(np.abs(ref_logits).max()))
    big = float(np.abs(ref_logits).max()) or 1.0
    abs_err = None if lg is None else float(np.abs(lg - ref_logits).max())
    agree = min(float((p == ref).mean()) for p in preds)
    # an image whose two best reference outputs are closer than the rounding of C's arithmetic
    # (other summation order, FMA; binary16 in imprecise layers) may flip: a tie, not an error
    top2 = np.sort(ref_logits, axis=1)[:, -2:]
    # int8: a float layer's last-bit difference may move an int8 input across a rounding boundary,
    # a step of about 1/255 of the layer's range, which later layers carry on (numerics.py)
    tol = (3e-2 if INT8 in src.modes.values() else 2e-3 if IMPRECISE in src.modes.values() else 1e-5) * scale
    clear = (top2[:, 1] - top2[:, 0]) > tol
    differ = np.logical_or.reduce([p != ref for p in preds])
    rec = CompiledProgram(
        source=src.fname, modes=dict(src.modes), threads=1 if key == "baseline" else threads,
        seconds_per_pass=best.seconds_per_pass, passes=best.passes,
        microseconds_per_image=1e6 * best.seconds_per_pass / count,
        median_microseconds_per_image=1e6 * float(np.median([rr.seconds_per_pass for rr in runs])) / count,
        agreement=agree, same_classifications=agree == 1.0, images=count,
        mismatches=int((differ & clear).sum()), near_ties_differing=int((differ & ~clear).sum()),
        max_logit_difference=None if abs_err is None else abs_err / scale,
        accuracy=float(100 * (preds[0] == labels).mean()),
        build_seconds=build_seconds, source_lines=sizes.source_lines, source_bytes=sizes.source_bytes,
        weight_file_bytes=sizes.weight_file_bytes)
    if abs_err is not None:
        rec.max_abs_error, rec.max_rel_error = abs_err, abs_err / big
    if ort_out is not None and lg is not None:
        d = float(np.abs(lg - ort_out).max())
        rec.onnxruntime_max_abs_error = d
        rec.onnxruntime_max_rel_error = d / (float(np.abs(ort_out).max()) or 1.0)
    return rec


def _e(v: float | None) -> str:
    return "-" if v is None else f"{v:.1e}"


def format_programs(syn: Synthesis) -> list[str]:
    """The programs' lines of the engine's text output: time, ratio to onnxruntime, errors, sizes."""
    lines = []
    ort = syn.onnxruntime
    progs = syn.programs or {}
    sizes = syn.program_sizes or {}
    if progs:
        lines.append(f"  {'program':17} {'us/image':>10} {'median':>10} {'/ORT':>5} {'speedup':>8}  {'max abs err':>11} "
                     f"{'max rel err':>11} {'vs ORT rel':>10}  classes  {'C lines':>7} {'wt file':>9} {'build s':>7}")
    for k, p in progs.items():
        ratio = f"{ort.ratios[k]:5.2f}" if ort and k in ort.ratios else "    -"
        sp = (syn.speedups or {}).get(k)
        speed = "-" if sp is None else f"{sp:.2f}x"
        same = "same" if p.same_classifications else f"{100 * p.agreement:.0f} %"
        build = "-" if p.build_seconds is None else f"{p.build_seconds:.1f}"
        ties = f"  ({p.near_ties_differing} near-tie images differ)" if p.near_ties_differing else ""
        source_lines: int | str = "-" if p.source_lines is None else p.source_lines
        lines.append(f"  {k:17} {p.microseconds_per_image:10.1f} {p.median_microseconds_per_image:10.1f} {ratio} "
                     f"{speed:>8}  {_e(p.max_abs_error):>11} {_e(p.max_rel_error):>11} "
                     f"{_e(p.onnxruntime_max_rel_error):>10}  {same:7}  {source_lines:>7} "
                     f"{_mb(p.weight_file_bytes) if p.weight_file_bytes else 'in the C':>9} {build:>7}{ties}")
    if not progs and sizes:
        for k, z in sizes.items():
            lines.append(f"  {k:17} {z.source_lines} lines of C, weight file {_mb(z.weight_file_bytes)}")
    if ort:
        lines.append(f"  onnxruntime {ort.version} ({ort.threads} threads): {ort.microseconds_per_image:.1f} us/image "
                     f"(median {ort.median_microseconds_per_image:.1f})")
    for note in (syn.onnxruntime_note, syn.baseline_note):
        if note:
            lines.append(f"  {note}")
    return lines


def _mb(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"
