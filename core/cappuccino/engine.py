"""Cappuccino engine: inference software synthesis for a mobile SoC (Motamedi, Fong, Ghiasi).

Steps of a run: load the network, weights and validation set; allocate work to threads
(KLP/FLP/OLP, OLP chosen); check the map-major reordering by computing the network both ways;
measure every per-layer inexact configuration on the validation set and choose modes under the
accuracy budget; synthesise the C program and a naive baseline; compile and run both here (when a
C compiler exists), check their classifications against numpy and report the speedups.

The network is the tab's CNN workload (the built-in trained digits CNN or an ONNX file, with its
validation set attached) and the mobile SoC target gives the threads and the vector width; the
settings hold the search and the timing.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import time
from pathlib import Path
from typing import Any, Callable, Generator, Iterator

import numpy as np

from core.cappuccino import allocation, layout, synth, synth_program, synth_run
from core.cappuccino.cost import CappuccinoCost, cost_lines, cost_of_plan, is_this_machine
from core.cappuccino.forward import ActivationCache, LayoutCheck, check_layouts
from core.cappuccino.inexact import (SEARCH_GMAC_IMAGES, Configuration, ModeChoice, sample_rows, search_modes,
                                     search_work)
from core.cappuccino.model import BUILTIN, CnnModel, ConvOp, load_builtin, load_onnx_model, load_validation_npz
from core.cappuccino.numerics import IMPRECISE, PRECISE, RELAXED
from core.cappuccino.progress import CalibratedPlan, Clock
from core.cappuccino.synth_program import Plan
from core.cappuccino.result import (CappuccinoResult, CompiledProgram, LayerRow, LayoutChecks, ModelInfo, Synthesis,
                                    TargetInfo)
from core.cappuccino.settings import MAX_BUDGET_PP, CappuccinoSettings
from core.settings import defaults_of, parse, schema_of
from core.results import EngineResult
from core.engine import EngineSpec, JobRequest
from core.errors import CheckFailed, InputError
from core.files import file_problem
from core.machine_load import LoadRecord, OtherWorkRate
from core.jobs import CancelToken, Event, FinalResult, LogLine, MetricPoint, Progress
from core.nets import zoo
from core.work_units import Stage, WorkPlan
from core.workload import BUILTIN_DIGITS, CnnNetwork, MobileSocTarget, Target, Workload

NAME = "cappuccino"
EQUATIONS = {
    "(1) row-major address": "addr(m, r, c) = (m*H + r)*W + c",
    "(2) map-major address": "addr(m, r, c) = ((floor(m/V)*H + r)*W + c)*V + m mod V",
    "(3) OLP thread row": "r = floor(t / (V*W)) mod H",
    "(4) OLP thread column": "c = floor(t / V) mod W",
    "(5) OLP thread map": "m = floor(t / (V*W*H))*V + t mod V",
}


SETTINGS_SCHEMA: dict[str, Any] = schema_of(CappuccinoSettings)


def default_settings() -> dict[str, Any]:
    return defaults_of(CappuccinoSettings)


def _check(s: CappuccinoSettings) -> None:
    """The ranges in the engine's words (the schema's types are checked before)."""
    if not 0 <= s.accuracy_budget <= MAX_BUDGET_PP:
        raise InputError(f"accuracy budget must be 0..{MAX_BUDGET_PP:g} percentage points, got {s.accuracy_budget!r}",
                         "settings.accuracy_budget")
    if s.prefer not in (RELAXED, IMPRECISE):
        raise InputError(f"prefer must be 'relaxed' or 'imprecise', got {s.prefer!r}", "settings.prefer")
    for key, lo in (("min_seconds", 0.0), ("repeats", 1), ("limit", 0), ("search_sample", 0)):
        v = getattr(s, key)
        if v < lo:
            raise InputError(f"must be a number >= {lo}, got {v!r}", f"settings.{key}")


def _settings(raw: dict[str, Any]) -> CappuccinoSettings:
    """The request's settings over the defaults, typed (InputError names the setting)."""
    return parse(CappuccinoSettings, raw, check=_check, retired=dict.fromkeys(
        ("model", "onnx_path", "validation_path"), "the network is the tab's CNN workload now, not a setting"))


def _target(target: Any) -> tuple[int, int]:
    if target is None:
        return max(1, os.cpu_count() or 1), 4
    if not isinstance(target, MobileSocTarget):
        raise InputError(f"the Cappuccino engine needs a mobile SoC target, got {getattr(target, 'kind', target)!r}",
                         "target.kind")
    if target.vector_width not in synth.VECTOR_WIDTHS:
        raise InputError(f"the synthesised C programs use vectors of {', '.join(map(str, synth.VECTOR_WIDTHS))} "
                         f"float32 lanes; this target has {target.vector_width}", "target.vector_width")
    if not 1 <= target.cores <= 256:
        raise InputError(f"threads must be 1..256, got {target.cores}", "target.cores")
    return target.cores, target.vector_width


# the paper's networks are 0.35-1.8 GMACs, VGG-16 15.5; the search (incremental, on a sample) and the
# checks are sized for these: VGG-16 runs in about 3 minutes, a network ten times its size would not
MAX_ZOO_GMACS = 20.0
CACHE_BYTES = 2 ** 30   # the precise activations of every validation image are kept up to this size


def workload_problem(workload: Any) -> str | None:
    """Why a CNN the kinds allow still cannot be synthesised; None when it can."""
    if not isinstance(workload, CnnNetwork):
        return None
    if workload.source == "zoo" and workload.network in zoo.names():
        gmacs = zoo.get(workload.network).macs / 1e9
        if gmacs > MAX_ZOO_GMACS:
            return (f"{workload.network} needs {gmacs:.1f} GMACs per image; the numpy search and checks are sized "
                    f"for zoo networks up to {MAX_ZOO_GMACS:g} GMACs (the paper's need 0.35-1.8, VGG-16 15.5)")
    if workload.source == "onnx" and file_problem(workload.onnx_path):
        return f"ONNX file {file_problem(workload.onnx_path)}: {workload.onnx_path}"
    if workload.validation_path and not Path(workload.validation_path).is_file():
        return f"validation file not found: {workload.validation_path}"
    if workload.source == "onnx" and not workload.validation_path:
        shape = onnx_input_shape(workload.onnx_path)
        if shape is not None and shape != DIGITS_SHAPE:
            return (f"the ONNX network reads {shape[0]}x{shape[1]}x{shape[2]} images and has no validation set: "
                    "give it one in its Validation set field (a .npz of images x and labels y); only 1x8x8 "
                    "networks can use the built-in digits")
    return None


DIGITS_SHAPE = (1, 8, 8)        # the built-in digits, the validation set of an ONNX network without one
_SHAPES: dict[tuple[str, int, int], tuple[int, int, int] | None] = {}


def onnx_input_shape(path: str) -> tuple[int, int, int] | None:
    """The (C, H, W) an ONNX file's network reads, None when it cannot be told cheaply (the run then
    says why). Read without weights and remembered per file version: the choice bar asks often."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if file_problem(path):          # a FIFO would block onnx.load (and the window with it)
        return None
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _SHAPES:
        _SHAPES[key] = _read_input_shape(path)
    return _SHAPES[key]


def _read_input_shape(path: str) -> tuple[int, int, int] | None:
    try:
        import onnx
        from core.nets.onnx_graph import tensor_dims

        graph = onnx.load(path, load_external_data=False).graph
        consts = {i.name for i in graph.initializer}
        ins = [t for t in graph.input if t.name not in consts]
        dims = tensor_dims(ins[0]) if len(ins) == 1 else None
    except Exception:       # unreadable here: the run reads it again and names the problem
        return None
    if dims is None or any(d is None or d <= 0 for d in dims[1:]):
        return None
    if len(dims) == 4:
        return (int(dims[1] or 0), int(dims[2] or 0), int(dims[3] or 0))
    if len(dims) == 2:
        return (int(dims[1] or 0), 1, 1)
    return None


def _network(workload: Any) -> CnnNetwork:
    if not isinstance(workload, CnnNetwork):
        got = "none" if workload is None else repr(getattr(workload, "kind", type(workload).__name__))
        raise InputError(f"the Cappuccino engine needs a CNN workload (the built-in digits CNN, a zoo network or an "
                         f"ONNX file), got {got}", "workload.kind")
    if workload.source == "zoo":
        why = workload_problem(workload)
        if why:
            raise InputError(why, "workload.network")
    return workload


def load_model(network: CnnNetwork, limit: int = 0) -> CnnModel:
    """The model of a workload; zoo networks get seeded random weights (core.cappuccino.networks)."""
    validation = network.validation_path or None
    if network.source == "builtin":
        return load_builtin(limit or None, validation)
    if network.source == "zoo":
        from core.cappuccino import networks

        model = networks.load(network.network, limit or networks.DEFAULT_IMAGES)
        if validation:
            model.x_val, model.y_val = load_validation_npz(validation, model.input_shape,
                                                           int(np.prod(model.ops[-1].out_shape)))
            model.extra.update(labels=f"from {validation}", validation_file=str(validation))
            model.precise_outputs = None        # they were of the seeded images
        return model
    return load_onnx_model(network.onnx_path, validation, limit or None)


def migrate_v1_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], Workload | None, Target | None]:
    """Format 1 picked the network in the settings (model builtin-digits or onnx, onnx_path,
    validation_path); it becomes the CNN workload, its validation set attached."""
    s = dict(settings)
    model, onnx_path = s.pop("model", BUILTIN), str(s.pop("onnx_path", "") or "")
    validation = str(s.pop("validation_path", "") or "")
    if model == "onnx" and onnx_path:
        workload = CnnNetwork(onnx_path=onnx_path, validation_path=validation)
    else:               # the built-in model, or "onnx" with no file (which could not run): the built-in one
        workload = CnnNetwork(BUILTIN_DIGITS, validation_path=validation)
    return {**default_settings(), **s}, workload, None


# ------------------------------------------------------------------ progress in work units
# Seconds per unit on the build machine (2 shared cores), from benchmarks/eta_error.py's traces: a
# numpy forward pass runs about 1.2e9 MACs/s, gcc builds one synthesised program (OpenMP, the kernel
# library) in about 2.3 s and the plain baseline in 0.25 s, a timed run lasts its min_seconds plus
# about 0.03 s of start-up. The compiled code (issue 35's kernels, 2 threads) ran 55-104 GMACs/s on
# the six zoo networks of benchmarks/cappuccino_vs_onnxruntime.py (median about 87; 4 GMACs/s with
# the kernels before), and loading a zoo network (its reference pass over 8 images, BLAS) about
# 9 GMACs/s (VGG-16: 124 GMACs in 14 s): without these, VGG-16's first estimate said 4 hours.
NUMPY_MACS_PER_S = 1.2e9
LOAD_MACS_PER_S = 9e9
WEIGHT_READ_BYTES_PER_S = 1e9   # a program reading its weight file from the page cache (VGG-16: 553 MB)
COMPILE_S = 2.3
COMPILE_BASELINE_S = 0.25
RUN_START_S = 0.03
# onnxruntime's run is a Python process that imports it and builds a session: its runs took 1.1-1.2 s
# longer than the programs' in a ResNet-18 run at a load of about 2 (benchmarks/eta_error.py --trace);
# less is assumed for a quieter machine, the run's own measurement corrects it
ORT_START_S = 0.8
C_MACS_PER_S = 80e9
SEARCH_SHARE_CAP = 0.98         # the search's share shown before it ends (its work is an estimate)
PROGRAMS = 4                    # parallel precise, relaxed, imprecise and the chosen modes (+ the baseline)


# the kind of work of each stage: each kind's speed on this machine is learnt as the run measures it
# (core.cappuccino.progress); the thread split's profiling runs are a kind of their own (per-op clocks
# in every pass: ResNet-18's took 37x their plan where its timed runs took 6x), the split's second
# comparison is the same work as its first and its rebuild a build
STAGE_KINDS = {"load": "load", "layouts": "numpy", "search": "numpy", "check": "numpy", "synthesis": "other",
               "compile": "compile", "split": "split", "split_check": "split", "split_build": "compile",
               "timing": "run", "end": "numpy"}


def work_plan(clock: Clock = time.monotonic) -> CalibratedPlan:
    """The run's stages in the fraction bands its code reports in; their work (seconds on the build
    machine) is set once the model is loaded (`plan_work`)."""
    return CalibratedPlan([Stage("load", 0.0, 0.05, 1.0), Stage("layouts", 0.05, 0.1, 0.0),
                           Stage("search", 0.1, 0.5, 0.0), Stage("check", 0.5, 0.55, 0.0),
                           Stage("synthesis", 0.55, 0.63, 0.0),
                           Stage("compile", 0.63, 0.71, 0.0), Stage("split", 0.71, synth_run.SPLIT_CHECK_AT, 0.0),
                           Stage("split_check", synth_run.SPLIT_CHECK_AT, synth_run.SPLIT_BUILD_AT, 0.0),
                           Stage("split_build", synth_run.SPLIT_BUILD_AT, 0.72, 0.0),
                           Stage("timing", 0.72, 0.98, 0.0),
                           Stage("end", 0.98, 1.0, 0.0)], STAGE_KINDS, clock)


def load_units(network: CnnNetwork, limit: int) -> float:
    """The load stage's work: a zoo network's reference pass over its images (VGG-16: 124 GMACs, most
    of a minute's run); one unit for the rest (the digits CNN, an ONNX file read)."""
    if network.source != "zoo" or network.network not in zoo.names():
        return 1.0
    from core.cappuccino.networks import DEFAULT_IMAGES

    return max(1.0, zoo.get(network.network).macs * (limit or DEFAULT_IMAGES) / LOAD_MACS_PER_S)


def plan_work(plan: WorkPlan, model: CnnModel, s: CappuccinoSettings, onnx: bool, threads: int = 1,
              numpy_macs_per_s: float = NUMPY_MACS_PER_S) -> None:
    """Each stage's work in seconds on the build machine: forward passes for the layout check and the
    mode search (configurations x images x MACs), one compilation per program, and the timed runs."""
    macs = float(model.network.macs) or 1e6
    weights = sum(op.weight.size for op in model.conv_ops)          # float32 words
    images = max(1, len(model.y_val))
    rows = sample_rows(images, macs / 1e9, s.search_sample)
    forward = macs * images / numpy_macs_per_s
    sample = forward if rows is None else forward * len(rows) / images
    # the layout checks compute the sample twice (row-major and map-major); the search starts from the
    # precise activations (one pass over every image unless the loader kept them) and recomputes only
    # from the layer it changes on (inexact.search_work), and the chosen modes' layout check costs 2 more
    plan.set_units("layouts", 2 * sample)
    plan.set_units("search", (forward if model.precise_outputs is None else 0.0)
                   + search_work(model, s.int8, s.prefer) / macs * sample)
    plan.set_units("check", 2 * sample)
    plan.set_units("synthesis", 0.02 * (PROGRAMS + 1))
    compiling = bool(s.compile and synth.find_compiler_noting()[0])
    baseline = synth.baseline_problem(model) is None
    plan.set_units("compile", (PROGRAMS * COMPILE_S + baseline * COMPILE_BASELINE_S) if compiling else 0.0)
    # the measured thread split (synth_run._measure_split): 12 short runs of the built program, when
    # some layer is big enough for the size rule to share (and a build when the split is kept)
    shareable = threads > 1 and any(int(np.prod(op.out_shape)) * int(np.prod(op.weight.shape[1:]))
                                    >= 2 * synth_program.CHUNK_WORK for op in model.conv_ops)
    # a run reads its weight file, computes one pass for the logits, then passes for min_seconds: a
    # wall-clock wait no load stretches while a pass is shorter (plan.fixed), computing otherwise
    one_pass = macs * images / C_MACS_PER_S
    start = RUN_START_S + 4 * weights / WEIGHT_READ_BYTES_PER_S + one_pass
    split_s = min(float(s.min_seconds), 0.3)
    splitting = compiling and shareable and s.measure_split
    # one comparison: a process that profiles two splits for three rounds each; a second one only when
    # the per-op choice differs from the rule, and a build only when its split is kept
    compare = start + 6 * (max(split_s, one_pass) + one_pass) if splitting else 0.0
    plan.set_units("split", compare)
    plan.set_units("split_check", compare)
    plan.set_units("split_build", COMPILE_S if splitting else 0.0)
    runs = s.repeats * (PROGRAMS + baseline + (1 if onnx else 0)) if compiling else 0
    min_s = float(s.min_seconds)
    ort = s.repeats * ORT_START_S if compiling and onnx else 0.0
    plan.set_units("timing", runs * (start + max(min_s, one_pass)) + ort)
    if isinstance(plan, CalibratedPlan):
        # the work counted, and what follows for the estimate: the waits no load stretches and the threads
        plan.set_shape({"macs": macs, "images": images, "sample_images": images if rows is None else len(rows),
                        "search_macs_per_image": search_work(model, bool(s.int8), str(s.prefer)),
                        "precise_pass": float(model.precise_outputs is None), "weight_bytes": 4.0 * weights,
                        "compiling": float(compiling), "programs": float(PROGRAMS), "baseline": float(baseline),
                        "splitting": float(bool(splitting)), "runs": float(runs), "repeats": float(s.repeats),
                        "onnx": float(bool(onnx)), "min_seconds": min_s, "threads": float(threads),
                        "numpy_macs_per_s": numpy_macs_per_s, "cores": float(max(1, os.cpu_count() or 1)),
                        "split_wait_s": 6 * split_s if splitting and one_pass < split_s else 0.0,
                        "timing_wait_s": runs * min_s if one_pass < min_s else 0.0})
    # the checks: the numpy reference of the programs' other modes over every image (imprecise, chosen)
    plan.set_units("end", 0.05 + (2 * forward if compiling else 0.0))


# ------------------------------------------------------------------ the run
def run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    """The run, its progress reported as the share of its expected time, calibrated as it goes
    (core.cappuccino.progress)."""
    plan = work_plan()
    yield from plan.remap(_run(request, cancel, plan))


def _run(request: JobRequest, cancel: CancelToken, plan: CalibratedPlan) -> Iterator[Event]:
    s = _settings(request.settings)
    threads, V = _target(request.target)
    network = _network(request.workload)
    plan.set_units("load", load_units(network, s.limit))        # before it runs: it may be most of a run
    yield Progress(0.0, "loading model")
    t0 = time.monotonic()
    model = load_model(network, s.limit)
    loaded_s = time.monotonic() - t0
    cancel.check()
    # a zoo network's load is its numpy reference pass over every image: this machine's numpy speed on
    # this network, which the layout checks, the search and the checks at the end run at too (only
    # the progress fractions use it)
    rate = NUMPY_MACS_PER_S
    if network.source == "zoo" and model.precise_outputs is not None and loaded_s > 0.5:
        rate = max(NUMPY_MACS_PER_S, float(model.network.macs) * len(model.x_val) / loaded_s)
    plan_work(plan, model, s, bool(model.extra.get("onnx") or network.source == "onnx"), threads, rate)
    cores = max(1, os.cpu_count() or 1)
    # the load per core the fair share is read from: other work now (CPU accounts, core.machine_load),
    # plus this run's own sampling thread; not the load average, which lags and counts our own threads
    other = OtherWorkRate()
    plan.slowdown = lambda: (other.cores() + 1.0) / cores
    info = ModelInfo(name=model.name, title=model.network.title, input_shape=list(model.input_shape),
                     validation_images=int(len(model.y_val)), notes=model.notes, extra=dict(model.extra))
    alloc = allocation.allocate(model.ops, V, threads)
    rows = sample_rows(len(model.y_val), model.network.macs / 1e9, s.search_sample)
    x_check = model.x_val if rows is None else model.x_val[rows]
    if rows is not None:
        yield LogLine(f"the inexact-mode search and the layout checks measure a seeded sample of {len(rows)} of the "
                      f"{len(model.y_val)} validation images (search images / --search-sample)")
    yield Progress(0.05, "checking map-major reordering against row-major")
    precise_check = check_layouts(model, x_check, V)
    _require_layouts(precise_check, "all layers precise")
    cancel.check()
    cache, full_cache = _activation_cache(model, rows, cancel)

    choice: ModeChoice | None = None
    # progress by the MACs computed against those expected (configurations differ a hundredfold: one
    # that changes the first layer recomputes the whole network, one that changes the last almost nothing)
    expected = max(1.0, search_work(model, bool(s.int8), s.prefer) * len(x_check))
    work0 = cache.work.macs
    for item in search_modes(model, float(s.accuracy_budget), s.prefer, cancel.check, cache, rows,
                             int8=bool(s.int8)):
        if isinstance(item, Configuration):
            yield MetricPoint("accuracy", item.index, item.accuracy, plot="accuracy")
            yield Progress(0.1 + 0.4 * min(SEARCH_SHARE_CAP, (cache.work.macs - work0) / expected),
                           f"configuration {item.index + 1}: {item.accuracy:.2f} %")
        else:
            choice = item
    assert choice is not None
    yield LogLine(choice.message, "warning" if choice.all_precise_fallback else "info")
    yield Progress(0.5, "checking map-major reordering with the chosen modes")
    chosen_check = check_layouts(model, x_check, V, choice.modes)
    _require_layouts(chosen_check, "the chosen inexact modes")
    layers = _layer_table(model, alloc, choice, V)

    yield Progress(0.55, "synthesising C programs")
    onnx_path = model.extra.get("onnx") or (network.onnx_path if network.source == "onnx" else None)
    costs: list[CappuccinoCost] = []

    def on_profile(plan: Plan, modes: dict[str, str], op_us: list[float], whole_us: float,
                   load: LoadRecord | None) -> None:
        # the network's cost record from the kept program's per-op times (measured when the target is
        # this machine, else modelled from its fields with the times measured here beside)
        soc = request.target if isinstance(request.target, MobileSocTarget) else MobileSocTarget(cores=threads,
                                                                                                  vector_width=V)
        costs.append(cost_of_plan(model, plan, soc, modes, op_us, is_this_machine(soc),
                                  "chosen modes" if any(m != PRECISE for m in modes.values()) else "precise",
                                  whole_us, load))

    synthesis = yield from _synthesise(model, choice, V, threads, s, cancel, onnx_path,
                                       cache.logits if full_cache else None, on_profile)
    if synthesis.kept_precise:
        # the chosen modes measured no faster than precise: what runs, and what the result says, is precise
        choice = dataclasses.replace(choice, modes={name: PRECISE for name in choice.modes},
                                     accuracy=choice.precise_accuracy,
                                     message=f"{choice.message}; {synthesis.kept_precise}")
        chosen_check = precise_check
        layers = _layer_table(model, alloc, choice, V)
    progs = synthesis.programs or {}
    result = CappuccinoResult(
        model=info, target=TargetInfo(threads=threads, vector_width=V), equations=dict(EQUATIONS),
        layout_check=LayoutChecks(precise=precise_check, chosen=chosen_check), inexact=choice, layers=layers,
        synthesis=synthesis, classification_agreement={k: v.agreement for k, v in progs.items()},
        summary=_summary(choice, synthesis), cost=costs[0] if costs else None)
    mismatch = _mismatch_message(progs)
    if mismatch:
        # the speedup of a program that computes something else means nothing: report, then fail
        result.check_failed = mismatch
        result.summary = f"CHECK FAILED: {mismatch}; " + result.summary
        yield LogLine(mismatch, "error")
        yield FinalResult(result)
        raise CheckFailed(f"compiled program check failed: {mismatch}")
    yield Progress(1.0, "done")
    yield FinalResult(result)


def _require_layouts(check: LayoutCheck, what: str) -> None:
    """The map-major program is only worth timing if it computes what the row-major reference does."""
    if check.ok:
        return
    bad = [f"{name}: max relative difference {check.max_abs_diff[name]:.2e}"
           + ("" if check.zero_overhead_ok[name] else ", OLP threads do not write their own addresses")
           for name in check.max_abs_diff
           if not check.zero_overhead_ok[name] or not check.max_abs_diff[name] <= 1e-3]
    raise CheckFailed(f"map-major layout check failed with {what}: "
                       + ("; ".join(bad) or "every layer within 1e-3")
                       + f"; {100 * check.classification_agreement:.1f} % of the images classified alike")


def _mismatch_message(programs: dict[str, CompiledProgram]) -> str:
    """Empty when every compiled program classified every clear-cut image like numpy."""
    bad = [f"{k} classified {p.mismatches} of {p.images} images differently from the numpy reference"
           for k, p in programs.items() if p.mismatches]
    return "; ".join(bad)


def _layer_table(model: CnnModel, alloc: list[allocation.LayerAllocation], choice: ModeChoice,
                 V: int) -> list[LayerRow]:
    rows = []
    for op, a in zip(model.ops, alloc):
        m, h, w = op.out_shape
        t = np.arange(min(2 * V, layout.olp_threads(m, h, w, V)))
        mm, rr, cc = layout.olp_thread_to_output(t, m, h, w, V)
        if isinstance(op, ConvOp):
            mode = choice.modes.get(op.name, PRECISE)
            alone = dict(choice.per_layer.get(op.name, {}))
            accuracy: float | None = alone.get(mode, choice.precise_accuracy)
        else:
            mode, alone, accuracy = "(storage of its input)", {}, None
        rows.append(LayerRow(
            name=a.name, kind=a.kind, in_shape=a.in_shape, out_shape=a.out_shape, strategies=list(a.strategies),
            chosen=a.chosen, olp_threads=a.olp_threads, groups=a.groups, worker_ranges=list(a.worker_ranges),
            parallelism="OLP",
            olp_map_sample=[[int(i), int(j), int(r), int(c)] for i, j, r, c in zip(t, mm, rr, cc)],
            macs=op.macs if isinstance(op, ConvOp) else 0, mode=mode, accuracy_alone=alone, accuracy=accuracy))
    return rows


def _activation_cache(model: CnnModel, rows: np.ndarray | None,
                      cancel: CancelToken) -> tuple[ActivationCache, bool]:
    """The precise activations the search starts from, and whether they cover every validation image
    (then the programs' references reuse them too); when all images' would exceed CACHE_BYTES only
    the search sample's are kept, and a sample too big for that is refused."""
    per_image = 4 * sum(int(np.prod(op.out_shape)) for op in model.ops)
    images = len(model.y_val)
    if per_image * images <= CACHE_BYTES:
        return ActivationCache(model, model.x_val, model.precise_outputs, check=cancel.check), True
    n = images if rows is None else len(rows)
    if per_image * n > CACHE_BYTES:
        raise InputError(f"the inexact-mode search keeps every layer's output of the images it measures: "
                         f"{n} images need {per_image * n / 2**30:.1f} GiB, at most {CACHE_BYTES / 2**30:g} GiB "
                         f"is used; measure at most {max(1, CACHE_BYTES // per_image)} images", "settings.search_sample")
    x = model.x_val if rows is None else model.x_val[rows]
    outs = None if model.precise_outputs is None else [o if rows is None else o[rows] for o in model.precise_outputs]
    return ActivationCache(model, x, outs, check=cancel.check), False


def _synthesise(model: CnnModel, choice: ModeChoice, V: int, threads: int, s: CappuccinoSettings,
                cancel: CancelToken, onnx_path: str | None = None,
                reference: Callable[[dict[str, str]], np.ndarray] | None = None,
                on_profile: synth_run.OnProfile | None = None) -> Generator[Event, None, Synthesis]:
    """Write the programs and weight files, and when a compiler exists build, run and check them
    (core.cappuccino.synth_run). Returns the result's `synthesis`."""
    return (yield from synth_run.synthesise_and_check(model, choice.modes, V, threads, s, cancel, onnx_path,
                                                      reference, on_profile))


def _summary(choice: ModeChoice, syn: Synthesis) -> str:
    sp = syn.speedups
    parts = [choice.message]
    if syn.load is not None and syn.load.busy:
        parts.insert(0, f"TIMINGS UNRELIABLE: {syn.load.warning()}")
    if sp:
        parts.append(f"speedups: parallel {sp['parallel']:.1f}x, parallel+inexact {sp['parallel_inexact']:.1f}x")
    else:
        parts.append(syn.message)
    return "; ".join(parts)


# ------------------------------------------------------------------ CLI
def add_cli_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--model", metavar="NAME|FILE.onnx",
                   help=f"{BUILTIN} (default, trained), a zoo network (seeded random weights: "
                        f"{', '.join(zoo.names())}) or an ONNX file")
    g.add_argument("--onnx", metavar="FILE", help="ONNX network with its weights")
    p.add_argument("--validation", metavar="NPZ", help="validation set: .npz with arrays x (B,C,H,W) and y")
    p.add_argument("--vector-width", type=int, default=4, help="SIMD lanes V (1, 2, 4, 8, 16; default 4)")
    p.add_argument("--threads", type=int, default=None, help="OLP worker threads (default: CPU count)")
    p.add_argument("--accuracy-budget", type=float, default=0.5,
                   help="allowed accuracy drop in percentage points (default 0.5)")
    p.add_argument("--prefer", choices=[RELAXED, IMPRECISE], default=RELAXED,
                   help="inexact mode preferred when both keep the same number of layers inexact")
    p.add_argument("--int8", action="store_true",
                   help="also try 8-bit integer layers in the inexact-mode search (preferred within the budget)")
    p.add_argument("--rule-split", action="store_true",
                   help="share layers between threads by the size rule, without measuring the split on this machine")
    p.add_argument("--emit", metavar="DIR", help="write the C programs and validation data here")
    p.add_argument("--no-compile", action="store_true", help="write the programs but do not build or run them")
    p.add_argument("--min-seconds", type=float, default=0.3, help="timing: repeat passes for at least this long")
    p.add_argument("--repeats", type=int, default=3, help="timing: runs per program, the fastest counts")
    p.add_argument("--limit", type=int, default=0, help="use only the first N validation images (0: all)")
    p.add_argument("--search-sample", type=int, default=0, metavar="N",
                   help="the inexact-mode search and layout checks measure a seeded sample of N validation images "
                        f"(0, default: automatic, every image while images x GMACs <= {SEARCH_GMAC_IMAGES:g})")


def _cli_network(name: str, validation: str) -> CnnNetwork:
    """--model NAME|FILE.onnx (or --onnx FILE) as a CNN workload."""
    if name.lower().endswith(".onnx") or os.sep in name:
        return CnnNetwork(onnx_path=name, validation_path=validation)
    if name != BUILTIN_DIGITS and name not in zoo.names():
        raise InputError(f"unknown network {name!r}; give {BUILTIN_DIGITS}, a zoo network ({', '.join(zoo.names())}) "
                         "or an .onnx file", "--model")
    return CnnNetwork(name, validation_path=validation)


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    settings = default_settings()
    validation = args.validation or ""
    network = _cli_network(getattr(args, "onnx", None) or getattr(args, "model", None) or BUILTIN_DIGITS, validation)
    settings.update(accuracy_budget=args.accuracy_budget, prefer=args.prefer, emit_dir=args.emit or "", compile=not args.no_compile,
                    min_seconds=args.min_seconds, repeats=args.repeats, limit=args.limit,
                    search_sample=args.search_sample, int8=args.int8, measure_split=not args.rule_split)
    if args.vector_width not in synth.VECTOR_WIDTHS:
        raise InputError(f"must be one of {synth.VECTOR_WIDTHS}, got {args.vector_width}", "--vector-width")
    threads = args.threads if args.threads is not None else max(1, os.cpu_count() or 1)
    if not 1 <= threads <= 256:
        raise InputError(f"must be 1..256, got {threads}", "--threads")
    if args.repeats < 1:
        raise InputError(f"must be >= 1, got {args.repeats}", "--repeats")
    if args.search_sample < 0:
        raise InputError(f"must be >= 0 (0: automatic), got {args.search_sample}", "--search-sample")
    if not math.isfinite(args.accuracy_budget) or not 0 <= args.accuracy_budget <= MAX_BUDGET_PP:
        raise InputError(f"must be 0..{MAX_BUDGET_PP:g} percentage points, got {args.accuracy_budget}",
                         "--accuracy-budget")
    _settings(settings)
    return JobRequest(network, MobileSocTarget(cores=threads, vector_width=args.vector_width), settings)


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1e}"


def _config_line(c: Configuration) -> str:
    """One tried configuration: its modes (precise layers left out), accuracy and budget verdict."""
    inexact = [f"{name}={mode}" for name, mode in c.modes.items() if mode != PRECISE]
    verdict = "within budget" if c.within_budget else "over budget"
    return (f"#{c.index:<3} {c.stage:12} {', '.join(inexact) or 'all precise':36} {c.accuracy:6.2f} % "
            f"(drop {c.drop + 0.0:.2f} pp) {verdict}")


def format_text(result: EngineResult) -> str:
    assert isinstance(result, CappuccinoResult)
    r = result
    extra = r.model.extra
    lines = [f"Cappuccino synthesis for {r.model.name} ({r.model.validation_images} validation images), "
             f"V={r.target.vector_width}, {r.target.threads} threads"]
    if extra.get("weights"):
        lines.append(f"weights: {extra['weights']}" + (f"; {extra['labels']}" if extra.get("labels") else ""))
    nw = max([10] + [len(row.name) for row in r.layers])
    lines.append(f"{'layer':{nw}} {'kind':7} {'out shape':>12} {'OLP threads':>11} {'KLP thr':>9} {'FLP thr':>8} "
                 f"{'mode':10} {'acc %':>6}")
    for row in r.layers:
        st = {x.name: x.threads for x in row.strategies}
        acc = "" if row.accuracy is None else f"{row.accuracy:.2f}"
        mode = row.mode if row.kind in ("conv", "fc") else "-"
        lines.append(f"{row.name:{nw}} {row.kind:7} {'x'.join(map(str, row.out_shape)):>12} "
                     f"{row.olp_threads:>11} {st.get('KLP', '-'):>9} "
                     f"{st.get('FLP', '-'):>8} {mode:10} {acc:>6}")
    lc = r.layout_check
    lines.append(f"map-major vs row-major: precise ok={lc.precise.ok}, chosen modes ok={lc.chosen.ok}")
    inx = r.inexact
    lines.append(f"configurations tried: {len(inx.configurations)}; all precise {inx.precise_accuracy:.2f} %")
    for c in inx.configurations:
        lines.append("  " + _config_line(c))
    lines.append(inx.message)
    syn = r.synthesis
    lines += synth_run.format_programs(syn)
    lines.append(syn.message)
    if syn.thread_split is not None:
        lines.append(syn.thread_split.summary())
    elif syn.thread_split_note:
        lines.append(f"thread split {syn.thread_split_note}")
    if r.cost is not None:
        lines += cost_lines(r.cost)
    if r.check_failed:
        lines.append(f"CHECK FAILED: {r.check_failed}")
    for path in syn.emitted:
        lines.append(f"  wrote {path}")
    return "\n".join(lines)


ENGINE = EngineSpec(
    name=NAME,
    title="Mobile SoC synthesis",
    summary=("Cappuccino: synthesises parallel CNN inference software for a mobile SoC — output-level "
             "parallel threads, map-major data for V-wide SIMD with zero-overhead output reordering, and "
             "per-layer inexact arithmetic chosen on the validation set under an accuracy budget; builds and "
             "times the C program against a naive baseline."),
    run=run,
    default_settings=default_settings,
    add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli,
    format_text=format_text,
    workload_kinds=("cnn",),
    target_kinds=("mobile_soc",),
    settings_schema=SETTINGS_SCHEMA,
    order=40,
    result_type=CappuccinoResult,
    workload_problem=workload_problem,
    preferred_workload=lambda w: isinstance(w, CnnNetwork) and w.source == "builtin",
    migrate_v1_settings=migrate_v1_settings,
)
