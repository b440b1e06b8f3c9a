"""The typed result of the "cappuccino" engine (core.cappuccino.engine): thread allocation, the
map-major check, the inexact modes chosen under the accuracy budget and the compiled programs.

The engine yields it, and the cappuccino panel and the text output read its fields. Without a C
compiler (or with compilation off) synthesis has no programs and no speedups. The domain classes
that serialise to their part of the result are its field types (allocation.Strategy,
forward.LayoutCheck, inexact.ModeChoice and its Configurations), not copies of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.cappuccino.allocation import Strategy
from core.cappuccino.cost import CappuccinoCost
from core.cappuccino.forward import LayoutCheck
from core.cappuccino.inexact import ModeChoice
from core.cappuccino.sharing import SharingChoice
from core.machine_load import LoadRecord
from core.metrics import Metric, ratio
from core.results import EngineResult, extra_keys, optional_key

CHOSEN = "parallel_inexact"                    # the program with the chosen modes


@dataclass(kw_only=True)
class ModelInfo:
    name: str
    title: str
    input_shape: list[int]
    validation_images: int
    notes: str
    # what the model loader adds (the built-in one: trained_validation_accuracy, validation_file)
    extra: dict[str, Any] = extra_keys()


@dataclass(kw_only=True)
class TargetInfo:
    threads: int
    vector_width: int


@dataclass(kw_only=True)
class LayoutChecks:
    precise: LayoutCheck
    chosen: LayoutCheck


@dataclass(kw_only=True)
class LayerRow:
    name: str
    kind: str                                   # conv | fc | pool | gap | concat | add | lrn | softmax
    in_shape: tuple[int, int, int]
    out_shape: tuple[int, int, int]
    strategies: list[Strategy]
    chosen: str
    olp_threads: int
    groups: int
    worker_ranges: list[tuple[int, int]]
    parallelism: str
    olp_map_sample: list[list[int]]             # (thread, map, row, col)
    macs: int
    mode: str
    accuracy_alone: dict[str, float]
    accuracy: float | None                      # None for the weightless kinds (pooling, concat, ...)


@dataclass(kw_only=True)
class CompiledProgram:
    """One compiled C program, timed and compared with the numpy reference."""

    source: str
    modes: dict[str, str]
    threads: int
    seconds_per_pass: float
    passes: int
    microseconds_per_image: float
    median_microseconds_per_image: float
    agreement: float
    same_classifications: bool
    images: int
    mismatches: int
    near_ties_differing: int
    max_logit_difference: float | None
    accuracy: float
    # version 2 (issue 17: weights as data, errors per mode, onnxruntime as the peer)
    max_abs_error: float | None = optional_key()         # vs the numpy reference of the program's modes
    max_rel_error: float | None = optional_key()         # ... divided by the largest reference output
    onnxruntime_max_abs_error: float | None = optional_key()    # vs onnxruntime's float32 output
    onnxruntime_max_rel_error: float | None = optional_key()
    build_seconds: float | None = optional_key()
    source_lines: int | None = optional_key()
    source_bytes: int | None = optional_key()
    weight_file_bytes: int | None = optional_key()       # 0 for the baseline (weights in its source)


@dataclass(kw_only=True)
class ProgramSize:
    source_lines: int
    source_bytes: int
    weight_file_bytes: int


@dataclass(kw_only=True)
class OnnxRuntimeRun:
    """onnxruntime (CPU provider, same threads) on the same ONNX file and images, timed interleaved."""

    version: str
    threads: int
    onnx: str
    microseconds_per_image: float               # fastest run
    median_microseconds_per_image: float
    ratios: dict[str, float]                    # program -> its median time / onnxruntime's median time


@dataclass(kw_only=True)
class Synthesis:
    emitted: list[str]                          # files written to the output folder
    modes: dict[str, str]
    compiler: str | None
    compiler_note: str | None = optional_key()
    programs: dict[str, CompiledProgram] | None = optional_key()   # only when compiled and run
    speedups: dict[str, float] | None = optional_key()             # program -> baseline time / its time
    message: str
    program_sizes: dict[str, ProgramSize] | None = optional_key()  # version 2: every program written
    baseline_note: str | None = optional_key()                     # why there is no naive baseline
    onnxruntime: OnnxRuntimeRun | None = optional_key()            # when onnxruntime ran
    onnxruntime_note: str | None = optional_key()                  # why it did not
    thread_split: SharingChoice | None = optional_key()            # the chosen program's measured split
    thread_split_note: str | None = optional_key()                 # why it was not measured
    # version 3 (issue 49): the machine's other work while the programs were timed, and why the
    # chosen inexact modes were dropped for precise (they did not measure faster)
    load: LoadRecord | None = optional_key()
    kept_precise: str | None = optional_key()

@dataclass(kw_only=True)
class CappuccinoResult(EngineResult):
    """Version 2 adds per-program sizes, build times, errors and the onnxruntime comparison (all
    optional keys, so a version-1 result reads unchanged); version 3 the machine's load while the
    programs were timed and why chosen modes were dropped for precise (optional keys too); version 4
    the network's cost record on the target (issue 50: each step's time measured here or modelled,
    its compulsory bytes, its limits; an optional key, so earlier versions read unchanged)."""

    VERSION = 4
    UPGRADES = {1: lambda d: d, 2: lambda d: d, 3: lambda d: d}

    model: ModelInfo
    target: TargetInfo
    equations: dict[str, str]
    layout_check: LayoutChecks
    inexact: ModeChoice
    layers: list[LayerRow]
    synthesis: Synthesis
    classification_agreement: dict[str, float]  # program -> agreement with numpy (empty when not run)
    summary: str
    check_failed: str | None = optional_key()   # a compiled program classified differently
    cost: CappuccinoCost | None = optional_key()  # version 4: only when the programs were compiled and run

    def validate(self, path: str = "result") -> None:
        if self.cost is not None:           # a stored record verifies itself (every figure at its limit or above)
            self.cost.record.check(f"{path}.cost.record")

    def median_seconds_per_image(self, program: str = CHOSEN) -> float | None:
        """A compiled program's median time per image (None where it was not compiled and run)."""
        p = (self.synthesis.programs or {}).get(program)
        return None if p is None else p.median_microseconds_per_image * 1e-6

    def onnxruntime_seconds_per_image(self) -> float | None:
        ort = self.synthesis.onnxruntime
        return None if ort is None else ort.median_microseconds_per_image * 1e-6

    # Medians, as the benchmark compares; the speed-ups against the naive C baseline only exist for
    # networks small enough to build it (not ResNet-18), so they come last.
    METRICS = (
        Metric("time_per_image_s", "Time per image", "s", "lower",
               "median time of the chosen program (parallel, the chosen inexact modes) for one image",
               read=lambda r: r.median_seconds_per_image()),
        Metric("speedup_precise", "Speed-up over precise", "×", "higher",
               "the precise parallel program's median time over the chosen program's",
               read=lambda r: ratio(r.median_seconds_per_image("parallel"), r.median_seconds_per_image())),
        Metric("speedup_onnxruntime", "Speed-up over onnxruntime", "×", "higher",
               "onnxruntime's median time on the same images and threads over the chosen program's",
               read=lambda r: ratio(r.onnxruntime_seconds_per_image(), r.median_seconds_per_image())),
        Metric("accuracy", "Accuracy", "%", "higher", "top-1 validation accuracy with the chosen modes",
               read=lambda r: r.inexact.accuracy),
        Metric("accuracy_drop_pp", "Accuracy drop", "pp", "lower", "precise accuracy minus the chosen modes'",
               read=lambda r: r.inexact.precise_accuracy - r.inexact.accuracy),
        Metric("speedup", "Speed-up over naive C", "×", "higher",
               "the naive single-thread C baseline's time over the chosen program's (small networks only)",
               read=lambda r: (r.synthesis.speedups or {}).get(CHOSEN)),
        Metric("speedup_parallel", "Precise speed-up over naive C", "×", "higher",
               read=lambda r: (r.synthesis.speedups or {}).get("parallel")),
        Metric("timings", "Timings", "", None, "whether other work ran while the programs were timed",
               read=lambda r: r.timing_reliability()),
    )

    def timing_reliability(self) -> str | None:
        """"unreliable: ..." when other work ran while the programs were timed, "idle machine" when it
        was measured and none did, None when nothing was timed or the load was not recorded."""
        load = self.synthesis.load
        if load is None or not self.synthesis.programs:
            return None
        return f"unreliable: other work kept {load.other_cores:.1f} of {load.cpus} cores busy" if load.busy \
            else "idle machine"
