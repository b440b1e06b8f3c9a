"""The MERIT engine: transform, verify, tile, bank/butterfly analysis, reuse and MERIT-z utilisation.

The workload is the tab's library item: a MERIT transform (one of the built-in workloads or a transform
JSON) or a kernel set, run as a convolution. The settings hold the mapping only: banks, MERIT-z size,
bandwidth, the suites timed, the curve and the tile.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from core.machine_load import LoadRecord
from core.results import EngineResult
from core.settings import declarations, defaults_of, parse, schema_of, setting
from core.engine import EngineSpec, JobRequest
from core.errors import InputError
from core.jobs import CancelToken, Event, FinalResult, LogLine, MetricPoint, Progress
from core.work_units import Stage, WorkPlan
from core.merit import banks as B
from core.merit import butterfly as BF
from core.merit import reuse
from core.merit_transform import workloads as W
from core.merit.evaluate import evaluate, evaluate_rows, m_grid, naive_rows
from core.merit_transform.fileformat import load_transform_file, workload_from_json
from core.merit.result import (Butterfly, Codegen, CodegenC, Meritz, MeritzAssumptions, MeritzConfig, MeritzLayer, MeritResult,
                               MeritzSuite, UtilisationCurve, Verification)
from core.merit.tiling import clipped_footprint, tile_sizes, tiling_report
from core.merit.sample import OutputSample, choose_sample, needs_sampling
from core.units import parse_bandwidth

CURVE_ALUS = [32, 64, 128, 256, 512, 1024]
NETWORKS = ["alexnet", "vgg16"]
DEFAULT_WORKLOAD = "conv3x3"
# Bank counts: a power of two (the butterfly network's width); the bank analysis grows steeply with the
# count (64 banks take some 20 s on a 3x3 convolution), so 64 is the limit.
BANK_COUNTS = [2, 4, 8, 16, 32, 64]
ALUS_PER_TAU = 32
MAX_ALUS = 65536
MAX_SEED = 2 ** 31 - 1
WORKLOAD_KINDS = ("merit_transform", "kernels")
COST_FROM = 0.9                     # the share of the nominal progress before the costing (when there is one)
COST_TARGETS = {"cpu": "this machine (C measured)", "gpu": "GPU (H100, modelled)"}
MAX_PSUM_KIB = 1024


def _zoo_names() -> list[str]:
    from core.nets import zoo

    return zoo.names()


_ALU_COUNT = {"type": "integer", "minimum": ALUS_PER_TAU, "maximum": MAX_ALUS, "multipleOf": ALUS_PER_TAU}


@dataclass(frozen=True)
class MeritSettings:
    """The mapping's settings, declared once (SETTINGS_SCHEMA is made from them). The zoo networks and
    Table IX take most of a run's time (tens of seconds): explicit choices, off by default, so a default
    run answers in a second or two. A network costed layer by layer on a CPU or GPU target
    (core.merit.cost): none by default, measuring a network's C here takes tens of seconds."""

    banks: int = setting(8, "Banks", "Shared-memory banks = lanes per warp access; a power of two (the butterfly "
                         "network's width), 2 to 64", enum=BANK_COUNTS)
    alus: int = setting(128, "ALUs", f"ALUs of the MERIT-z model: a multiple of {ALUS_PER_TAU} (one TAU), "
                        f"{ALUS_PER_TAU} to {MAX_ALUS}", minimum=ALUS_PER_TAU, maximum=MAX_ALUS,
                        multiple_of=ALUS_PER_TAU, step=ALUS_PER_TAU)
    bandwidth_gbps: float = setting(3.2, "DRAM", "DRAM bandwidth of the MERIT-z model (the paper's DDR3-1600: "
                                    "3.2 GB/s)", exclusive_minimum=0, unit="GB/s", decimals=2, step=0.1)
    networks: list[str] = setting([], "Networks", "Zoo networks timed on MERIT-z at batch 32 (Table VIII: AlexNet, "
                                  "VGG-16); none by default: each adds seconds to tens of seconds to a run",
                                  items={"type": "string", "enum": _zoo_names()}, schema={"uniqueItems": True})
    table_ix: bool = setting(False, "Table IX", "Also time the six Table IX workloads on MERIT-z (off by default: "
                             "it adds seconds to a run)")
    curve_alus: list[int] = setting(list(CURVE_ALUS), "Curve ALUs", "ALU counts of the utilisation curve (Fig. 15), "
                                    f"comma-separated; multiples of {ALUS_PER_TAU}", items=_ALU_COUNT)
    seed: int = setting(0, "Seed", "Seed of the random operand data the transform is verified on", minimum=0,
                        maximum=MAX_SEED)
    tile: dict[str, int] = setting({}, "Tile", "Tile extents overriding the workload's, as index=size pairs, e.g. "
                                   "y=16,x=8 (indices left out keep the workload's tile)", placeholder="default",
                                   schema={"additionalProperties": {"type": "integer", "minimum": 1}})
    # The MERIT-z model's assumptions (sims.meritz.MeritzConfig); the defaults are the model as first written.
    psum_kib: int = setting(5, "Partial sums", "MERIT-z partial-sum (Compute Pipeline) SRAM per TAU; it caps the "
                            "outputs of a tile (paper: 5 KB)", minimum=1, maximum=MAX_PSUM_KIB, unit="KB")
    broadcast: bool = setting(False, "Broadcast shared tiles", "MERIT-z: one DRAM transfer of a tile feeds every TAU "
                              "of the same round that needs it (e.g. a weight tile shared by spatial tiles); off: "
                              "each TAU loads its own copy")
    dram_model: str = setting(
        "flat", "DRAM model", "MERIT-z DRAM: a flat rate at the bandwidth (footprint bytes), or DDR3-1600 timing at "
        "the same peak: 64 B bursts and row-buffer misses (tRP + tRCD = 27.5 ns, JEDEC JESD79-3)",
        enum=["flat", "ddr3-1600"], labels={"flat": "flat rate", "ddr3-1600": "DDR3-1600 rows/bursts"})
    lane_padding: str = setting(
        "pad", "Lanes", "MERIT-z SIMD lanes: 'pad' runs ceil(outputs/32) lane groups per accumulation step (idle "
        "lanes count); 'fold' packs all of a tile's Loop() calls 32 per instruction (the paper's folding, Fig. 10)",
        enum=["pad", "fold"], labels={"pad": "padded to 32", "fold": "folded (Fig. 10)"})
    codegen: bool = setting(True, "Generate and check code", "Generate C (naive, tiled, packed) and CUDA from the "
                            "transform; compile and run the C and compare it with numpy, run the CUDA where nvcc "
                            "and a GPU are present and its CPU emulation otherwise")
    cost_network: str = setting("", "Cost network", "A network (a zoo name such as resnet18, or an ONNX file) whose "
                                "every convolution is costed as a MERIT transform on the cost target: time and "
                                "off-chip bytes per layer against their limits (empty: none)",
                                placeholder="zoo name or .onnx (optional)")
    cost_target: str = setting("cpu", "Cost target", "Where the network is costed: this machine (each layer's "
                               "generated C measured here) or an H100 GPU (roofline model from its data sheet)",
                               enum=list(COST_TARGETS), labels=COST_TARGETS)
    emit_dir: str = setting("", "Write code to", "Folder for the generated sources, a Makefile and the check's "
                            "inputs (empty: kept in the result only)", placeholder="folder (optional)")


# The settings' types and ranges: the panel builds its widgets from them.
SETTINGS_SCHEMA: dict[str, Any] = schema_of(MeritSettings)
# The MERIT-z model's assumptions as settings, at their defaults (the panel groups their widgets).
MERITZ_ASSUMPTION_DEFAULTS: dict[str, Any] = {k: getattr(MeritSettings(), k)
                                              for k in ("psum_kib", "broadcast", "dram_model", "lane_padding")}


def default_settings() -> dict[str, Any]:
    return defaults_of(MeritSettings)


# ---------------------------------------------------------------- settings
def _alu_count(a: Any, where: str, what: str) -> None:
    if isinstance(a, bool) or not isinstance(a, int) or a < ALUS_PER_TAU or a % ALUS_PER_TAU or a > MAX_ALUS:
        raise InputError(f"{what} must be a multiple of {ALUS_PER_TAU} (one TAU = {ALUS_PER_TAU} ALUs) up to "
                         f"{MAX_ALUS}, got {a!r}", where)


def _check(s: MeritSettings) -> MeritSettings:
    """What the schema's types leave, in the engine's words; the cost network stripped."""
    BF.log2_exact(s.banks, "settings.banks")
    if s.banks not in BANK_COUNTS:
        raise InputError(f"at most {BANK_COUNTS[-1]} banks (the bank analysis grows steeply), got {s.banks}",
                         "settings.banks")
    _alu_count(s.alus, "settings.alus", "ALU count")
    if not s.bandwidth_gbps > 0:
        raise InputError(f"bandwidth must be a positive number of GB/s, got {s.bandwidth_gbps!r}",
                         "settings.bandwidth_gbps")
    if not 0 <= s.seed <= MAX_SEED:
        raise InputError(f"seed must be an integer 0..{MAX_SEED}, got {s.seed!r}", "settings.seed")
    if not 1 <= s.psum_kib <= MAX_PSUM_KIB:
        raise InputError(f"partial-sum SRAM must be an integer number of KB from 1 to {MAX_PSUM_KIB}, got "
                         f"{s.psum_kib!r}", "settings.psum_kib")
    for key in ("dram_model", "lane_padding"):
        allowed = declarations(MeritSettings)[key].enum or ()
        if getattr(s, key) not in allowed:
            raise InputError(f"expected one of {', '.join(allowed)}, got {getattr(s, key)!r}", f"settings.{key}")
    s = replace(s, cost_network=cost_network(s.cost_network))
    if s.cost_target not in COST_TARGETS:
        raise InputError(f"expected one of {', '.join(COST_TARGETS)}, got {s.cost_target!r}"[:200],
                         "settings.cost_target")
    for name, v in s.tile.items():
        if v <= 0:
            raise InputError(f"tile size must be a positive integer, got {v!r}", f"settings.tile.{name}")
    for i, a in enumerate(s.curve_alus):
        _alu_count(a, f"settings.curve_alus[{i}]", "curve ALU counts")
    known = _zoo_names()
    for i, n in enumerate(s.networks):
        if n not in known:
            raise InputError(f"unknown network {n!r}; known: {', '.join(known)}", f"settings.networks[{i}]")
        if n in s.networks[:i]:
            raise InputError(f"{n!r} is listed twice", f"settings.networks[{i}]")
    return s


def check_settings(raw: dict[str, Any]) -> MeritSettings:
    """The request's settings over the defaults, typed (InputError names the setting)."""
    return parse(MeritSettings, raw, check=_check, retired=dict.fromkeys(
        ("workload", "transform"), "the workload is the tab's library item now, not a setting"))


def cost_network(text: str, where: str = "settings.cost_network") -> str:
    """The network to cost as typed (a zoo name or an .onnx file; empty: none), stripped; InputError
    for a name that is neither."""
    net = text.strip()
    if net and not net.lower().endswith(".onnx") and net not in _zoo_names():
        raise InputError(f"unknown network {net[:60]!r}; known: {', '.join(_zoo_names())} (or an .onnx file)", where)
    return net


def kernel_set_problem(workload: Any) -> str | None:
    """Why a kernel set cannot run as one convolution (None when it can)."""
    chans = [k.channels for k in workload.kernels]
    shapes = {(len(c), len(c[0]), len(c[0][0])) for c in chans if c and c[0]}
    if len(shapes) > 1:
        sizes = ", ".join(sorted(f"{kh}x{kw}" + (f"x{z}" if z > 1 else "") for z, kh, kw in shapes))
        return f"the kernels differ in size ({sizes}); MERIT needs one kernel size per convolution"
    return None


def workload_problem(workload: Any) -> str | None:
    """Why a MERIT transform or kernel set the kinds allow still cannot run; None when it can."""
    from core.workload import KernelSet, MeritTransformWorkload

    if isinstance(workload, KernelSet):
        return kernel_set_problem(workload)
    if isinstance(workload, MeritTransformWorkload):
        try:
            workload.validate()
        except InputError as exc:
            return f"{exc.where}: {exc.message}"
    return None


def _kernel_set_workload(workload: Any) -> W.Workload:
    """A kernel set as a convolution: one output channel per kernel, same-size kernels."""
    why = kernel_set_problem(workload)
    if why:
        raise InputError(why, "workload.kernels")
    chans = [k.channels for k in workload.kernels]
    z, kh, kw = len(chans[0]), len(chans[0][0]), len(chans[0][0][0])
    Wt = np.array(chans, dtype=float) / workload.denominator
    t = W.conv(z, 32, 32, len(chans), kh, name=workload.name, kw=kw)
    return W.Workload(workload.name, f"Kernel set {workload.name!r} as a convolution", [t],
                      lambda r: {"I": r.standard_normal((z, 32, 32)), "W": Wt},
                      lambda d: W.conv_ref(d["I"], d["W"]), {"oc": 1, "y": 8, "x": 8}, "I", "kernel set")


def resolve_workload(workload: Any) -> W.Workload:
    """The run's MERIT workload: a built-in one, a transform file's, or a kernel set as a convolution."""
    from core.workload import KernelSet, MeritTransformWorkload

    if isinstance(workload, MeritTransformWorkload):
        if workload.transform is not None:
            return workload_from_json(workload.transform, "workload.transform")
        if workload.builtin not in W.WORKLOADS:
            raise InputError(f"unknown workload {workload.builtin!r}; known: {', '.join(W.names())}",
                             "workload.builtin")
        return W.WORKLOADS[workload.builtin]
    if isinstance(workload, KernelSet):
        return _kernel_set_workload(workload)
    got = "none" if workload is None else repr(getattr(workload, "kind", type(workload).__name__))
    raise InputError(f"the MERIT engine needs a MERIT transform or a kernel set as workload, got {got}",
                     "workload.kind")


def migrate_v1_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    """Format 1 picked the workload in the settings: a built-in name, "window-kernels" (the session's
    kernel set, which the tab keeps when it fits: no implied item) or a transform JSON."""
    from core.workload import MeritTransformWorkload

    s = dict(settings)
    name, transform = s.pop("workload", "conv3x3"), s.pop("transform", None)
    workload: MeritTransformWorkload | None = None
    if transform is not None:
        workload = MeritTransformWorkload(transform=transform)
        workload.validate("settings.transform")
    elif name != "window-kernels":
        if name not in W.WORKLOADS:
            raise InputError(f"unknown workload {name!r}; known: {', '.join(W.names())}", "settings.workload")
        workload = MeritTransformWorkload(builtin=name)
    return {**default_settings(), **s}, workload, None


# ---------------------------------------------------------------- the run
def _butterfly_examples() -> dict[str, Any]:
    """The paper's examples, eqs. 11-16, recomputed."""
    a11 = BF.address_pattern(3, [1, 6, 12])
    h13 = BF.property_matrix(np.stack([BF.address_pattern(a, [1, 6, 12]) for a in range(16)]), 3)
    h14, h15 = BF.parse(["100", "x10", "xx1"]), BF.parse(["10x", "x10", "0x1"])
    h16 = BF.property_matrix(np.stack([BF.address_pattern(a, [4, 8, 3]) for a in range(16)]), 4)
    sq = BF.square_up(h16, 3)
    return {
        "eq11_banks": (a11 % 8).tolist(), "eq13_H": BF.fmt(h13),
        "eq14_reduces": BF.reduce_to_identity(h14)[0], "eq15_reduces": BF.reduce_to_identity(h15)[0],
        "eq16_H": BF.fmt(h16), "eq16_X": None if sq is None else sq[0].tolist(),
        "eq16_rotation": None if sq is None else sq[1], "eq16_H_prime": None if sq is None else BF.fmt(sq[2]),
    }


def _meritz_layer(t: Any, r: Any) -> MeritzLayer:
    """A MERIT-z layer's result with what its tile means: which indices are parallel and each operand's
    footprint (eq. 9, clipped to the padded tensor), so a view can show the tile of any layer."""
    return MeritzLayer.of(r, parallel=[n for n, _ in t.parallel],
                          footprints={f"{i}:{op.name}": list(clipped_footprint(t, op, r.tile))
                                      for i, op in enumerate(t.operands)})


def meritz_config(s: MeritSettings) -> Any:
    """The MERIT-z model configured by checked settings (ALUs, bandwidth and the assumptions)."""
    from sims import meritz as Z

    return Z.MeritzConfig(alus=s.alus, dram_gbps=float(s.bandwidth_gbps), cp_bytes=s.psum_kib * 1024,
                          broadcast=s.broadcast, dram_model=s.dram_model, lane_padding=s.lane_padding)


# Progress in work units (core.work_units), seconds on the build machine from benchmarks/eta_error.py's
# traces: generating, compiling and checking the C and CUDA code about 0.7 s; the MERIT-z event model
# about 6e-6 s per sqrt(MACs) of each layer (AlexNet at batch 32: 0.8 s per ALU count, VGG-16: 3 s).
CODEGEN_S = 0.7
MERITZ_S_PER_SQRT_MAC = 6e-6


def suite_cost(layers: list[tuple[str, Any]]) -> float:
    """Estimated seconds of one MERIT-z evaluation of a suite of layers (transforms)."""
    return MERITZ_S_PER_SQRT_MAC * sum(math.sqrt(math.prod(t.p_sizes) * math.prod(t.a_sizes)) for _, t in layers)


def meritz_suites(s: MeritSettings, wl: Any) -> list[tuple[str, list[tuple[str, Any]], float | None]]:
    """What MERIT-z times: the zoo networks chosen (Table VIII), Table IX when chosen, and the workload."""
    from core.nets import zoo
    from sims import meritz as Z

    suites: list[tuple[str, list[tuple[str, Any]], float | None]] = []
    for n in s.networks:
        suites.append((n, Z.network_transforms(zoo.get(n)), Z.PAPER_TABLE_VIII.get(n)))
    if s.table_ix:
        for name, tr, _size in Z.table_ix_transforms():
            suites.append((name, [(name, tr)], Z.PAPER_TABLE_IX.get(name)))
    suites.append((f"this workload ({wl.name})", [(st.name, st) for st in wl.stages], None))
    return suites


def run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    """The run, its progress reported as the share of its work done (core.work_units); the work is
    known before the first report, so the share never has to be taken back."""
    s = check_settings(request.settings)
    suites = meritz_suites(s, resolve_workload(request.workload))
    evaluations = 1 + len(s.curve_alus)
    hi = COST_FROM if s.cost_network else 1.0
    stages = [Stage("setup", 0.0, 0.3, CODEGEN_S if s.codegen or s.emit_dir else 0.05),
              Stage("meritz", 0.3, hi, evaluations * sum(suite_cost(layers) + 1e-3 for _, layers, _ in suites))]
    if s.cost_network:
        from core.merit.cost import estimate_seconds

        stages.append(Stage("cost", hi, 1.0, estimate_seconds(s.cost_network, cost_target(request, s))))
    plan = WorkPlan(stages)
    yield from plan.remap(_run(request, s, cancel))


def _run(request: JobRequest, s: MeritSettings, cancel: CancelToken) -> Iterator[Event]:
    from sims import meritz as Z

    wl = resolve_workload(request.workload)
    yield Progress(0.02, f"workload {wl.name}")
    for st in wl.stages:
        st.validate(f"transform[{st.name}]")
    rng = np.random.default_rng(int(s.seed))
    data = wl.make_data(rng)
    bank_stage = next(st for st in wl.stages if any(op.name == wl.bank_operand for op in st.operands))
    tile = dict(wl.tile)
    tile.update(s.tile)
    tile_sizes(bank_stage, s.tile, "settings.tile")          # names and sizes checked
    # the tile each stage's code runs with, fitted to the CUDA device (core.merit.device): the given
    # one where it fits, else adjusted; chosen where the workload gives none (a transform file)
    from core.merit.codegen_run import stage_tile
    from core.merit.device import fit_cuda_tile

    fits = {st.name: fit_cuda_tile(st, stage_tile(st, tile)) for st in wl.stages}
    naive_diff = 0.0
    samples: dict[str, OutputSample] = {}
    final = wl.stages[-1]
    final_vals: np.ndarray | None = None
    for st in wl.stages:
        cancel.check()
        if st is final and needs_sampling(st):
            # a large transform: exact values of a sample of outputs only, M() gathered for them alone
            drawn = choose_sample(st, fits[st.name].ext, int(s.seed))
            samples[st.name] = drawn
            final_vals = evaluate_rows(st, data, drawn.rows, cancel.check)
            pick = np.unique(np.concatenate([drawn.rows[:1], drawn.rows[-1:],
                                             drawn.rows[rng.integers(0, len(drawn.rows), 14)]]))
            rows = pick.tolist()
            got = final_vals[np.searchsorted(drawn.rows, pick)]
        else:
            out = evaluate(st, data, cancel.check)
            rows = sorted({0, st.p_count - 1, *rng.integers(0, st.p_count, 14).tolist()})
            got = out.reshape(-1)[rows]
            data[st.name] = out
        naive_diff = max(naive_diff, float(np.max(np.abs(naive_rows(st, data, rows) - got))))
    smp = samples.get(final.name)
    if final_vals is None:
        final_vals = np.asarray(data[final.name]).reshape(-1)
    sample_text = smp.describe() if smp is not None else f"all {final.p_count} outputs"
    checked = len(final_vals)
    if wl.reference is not None:
        ref = np.asarray(wl.reference(data))
        if ref.shape != tuple(final.out_shape()):
            raise InputError(f"the reference gives shape {ref.shape}, the transform {tuple(final.out_shape())}",
                             "transform.reference")
        ref_vals = ref.reshape(-1) if smp is None else ref.reshape(-1)[smp.rows]
        diff = float(np.max(np.abs(ref_vals - final_vals))) if ref_vals.size else 0.0
        scale = float(np.max(np.abs(ref_vals))) if ref_vals.size else 0.0
        verification = Verification(
            output_shape=list(final.out_shape()), naive_eq5_max_abs_diff=naive_diff, naive_rows_checked=len(rows),
            reference="direct numpy implementation", max_abs_diff=diff,
            ok=diff <= 1e-9 * max(1.0, scale) and naive_diff <= 1e-9 * max(1.0, scale),
            sample=sample_text, outputs_checked=checked)
    else:
        verification = Verification(
            output_shape=list(final.out_shape()), naive_eq5_max_abs_diff=naive_diff, naive_rows_checked=len(rows),
            reference="none given; checked against eq. 5 walked element by element", max_abs_diff=None,
            ok=naive_diff <= 1e-9, sample=sample_text, outputs_checked=checked)
    yield LogLine(f"verification ({sample_text}): max |R(M(A),M(B)) - direct| = {verification.max_abs_diff}, "
                  f"eq. 5 walk {naive_diff:.3g}")
    yield Progress(0.15, "tiling and bank conflicts")

    fit = fits[bank_stage.name]
    tiling = tiling_report(bank_stage, fit.ext)
    tiling.tile_note = fit.note
    grids = [m_grid(bank_stage, op) for op in bank_stage.operands]
    cancel.check()
    bank = B.report(bank_stage, bank_stage.operand(wl.bank_operand), fit.ext, s.banks, cancel.check)
    cancel.check()
    reuse_rep = reuse.report()
    codegen: Codegen | None = None
    if s.codegen or s.emit_dir:
        yield Progress(0.2, "generating C and CUDA, compiling and checking")
        from core.merit.codegen_run import generate

        codegen = generate(wl.stages, data, tile, wl.reference, bank, wl.bank_operand, s.emit_dir,
                           cancel=cancel.check, samples=samples, seed=int(s.seed))
        for line in codegen_lines(codegen):
            yield LogLine(line)
    yield Progress(0.3, "MERIT-z model")

    cfg = meritz_config(s)
    suites = meritz_suites(s, wl)
    assumptions = MeritzAssumptions(**cfg.assumptions())
    meritz = Meritz(config=MeritzConfig.of(cfg), suites=[],
                    curve=UtilisationCurve(alus=list(s.curve_alus), series={}), assumptions=assumptions)
    yield LogLine(f"MERIT-z assumptions: {assumptions.summary}")
    costs = [suite_cost(layers) + 1e-3 for _, layers, _ in suites]       # one evaluation of each suite
    total = sum(costs) * (1 + len(s.curve_alus))
    hi = COST_FROM if s.cost_network else 1.0
    done = 0.0
    for (name, layers, paper), cost in zip(suites, costs):
        u, results = Z.run_layers(layers, cfg, cancel.check)
        meritz.suites.append(MeritzSuite(name=name, utilisation=round(u, 4), paper=paper,
                                         layers=[_meritz_layer(tr, r) for (_, tr), r in zip(layers, results)]))
        yield LogLine(f"MERIT-z {cfg.alus} ALUs, {name}: utilisation {u:.3f}" + (f" (paper {paper})" if paper else ""))
        done += cost
        series = []
        for a in s.curve_alus:
            cancel.check()
            ua = u if a == cfg.alus else Z.run_layers(layers, Z.replace(cfg, alus=a), cancel.check)[0]
            series.append(round(ua, 4))
            yield MetricPoint(name, a, ua, "utilisation")
            done += cost
            yield Progress(0.3 + (hi - 0.3) * done / total, f"utilisation of {name} at {a} ALUs")
        meritz.curve.series[name] = series

    net_cost = None
    if s.cost_network:
        from core.merit.cost import cost_steps

        target = cost_target(request, s)
        steps = cost_steps(s.cost_network, target, seed=int(s.seed), cancel=cancel.check)
        while True:
            try:
                i, n, name = next(steps)
            except StopIteration as stop:
                net_cost = stop.value
                break
            yield Progress(COST_FROM + (1 - COST_FROM) * i / n, f"costing {name} ({i + 1} of {n}) on {target.kind.upper()}")
        for line in cost_lines(net_cost):
            yield LogLine(line)

    yield FinalResult(MeritResult(
        workload=wl.name, title=wl.title, paper=wl.paper, transform=list(wl.stages),
        verification=verification, m_grids=grids, tiling=tiling, banks=bank,
        butterfly_examples=_butterfly_examples(), reuse=reuse_rep, meritz=meritz, codegen=codegen, cost=net_cost))


def cost_target(request: JobRequest, s: MeritSettings) -> Any:
    """The target the network is costed on: the request's CPU or GPU target (the command line's
    --target-file), else the settings' choice (this machine, or the default GPU)."""
    from core.hardware.targets import GpuTarget, this_machine

    if getattr(request.target, "kind", None) in ("cpu", "gpu"):
        return request.target
    return this_machine() if s.cost_target == "cpu" else GpuTarget()


def cost_lines(c: Any) -> list[str]:
    """The cost record as the command line and the log print it: per layer time and off-chip bytes
    against their limits, and how each was costed."""
    r = c.record
    lines = [f"cost of {c.network} on {r.target}:"]
    for layer, note in zip(r.layers, c.notes):
        lines.append(f"  {layer.name:24s} {layer.macs / 1e6:9.1f} M MACs  time {layer.time_s.value * 1e3:9.4g} ms "
                     f"(limit {layer.time_s.limit * 1e3:.4g}, {layer.time_s.how})  off-chip "
                     f"{layer.offchip_bytes.value / 1e6:8.3f} MB (limit {layer.offchip_bytes.limit / 1e6:.3f})")
        lines.append(f"    {note.how}")
    t = r.total
    lines.append(f"  {'total':24s} {t.macs / 1e6:9.1f} M MACs  time {t.time_s.value * 1e3:9.4g} ms "
                 f"(limit {t.time_s.limit * 1e3:.4g}, {t.time_s.how})  off-chip {t.offchip_bytes.value / 1e6:8.3f} MB "
                 f"(limit {t.offchip_bytes.limit / 1e6:.3f})")
    if c.gpu_note:
        lines.append(f"  {c.gpu_note}")
    return lines


# ---------------------------------------------------------------- command line
def add_cli_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--workload", metavar="NAME",
                   help=f"ready-made transform: {', '.join(W.names())} (default: {DEFAULT_WORKLOAD})")
    g.add_argument("--transform", metavar="FILE.json", help="a transform file (format in docs/merit.md)")
    p.add_argument("--banks", type=int, default=8, help="shared-memory banks = lanes per access (power of two)")
    p.add_argument("--alus", type=int, default=128, help="MERIT-z ALUs (multiple of 32)")
    p.add_argument("--bandwidth", default="3.2GB/s", help="MERIT-z DRAM bandwidth (e.g. 3.2GB/s)")
    p.add_argument("--networks", default="", help=f"zoo networks to time on MERIT-z, e.g. {','.join(NETWORKS)} "
                                                  "(default: none)")
    p.add_argument("--table-ix", action=argparse.BooleanOptionalAction, default=False,
                   help="also time the Table IX workloads (default: off)")
    p.add_argument("--curve", default=",".join(map(str, CURVE_ALUS)), help="ALU counts for the scaling curve")
    p.add_argument("--seed", type=int, default=0, help="seed of the random operand data")
    p.add_argument("--tile", default="", metavar="IDX=N,...",
                   help="tile extents overriding the workload's (e.g. y=16,x=8); missing: default")
    p.add_argument("--psum-kib", type=int, default=5, help="MERIT-z partial-sum SRAM per TAU in KB (paper: 5)")
    p.add_argument("--broadcast", action="store_true",
                   help="MERIT-z: one DRAM transfer of a shared tile feeds several TAUs")
    p.add_argument("--dram-model", default="flat", help="MERIT-z DRAM: flat or ddr3-1600 (row/burst timing)")
    p.add_argument("--lane-padding", default="pad", help="MERIT-z lanes: pad (idle lanes) or fold (Fig. 10)")
    p.add_argument("--emit", default="", metavar="DIR",
                   help="write the generated C and CUDA, a Makefile and the check's inputs to DIR (implies --codegen)")
    net = p.add_mutually_exclusive_group()
    net.add_argument("--network", metavar="NAME", default="",
                     help="cost every convolution of this zoo network (resnet18, vgg16, ...) as a MERIT transform "
                          "on the cost target, layer by layer against the target's limits")
    net.add_argument("--onnx", metavar="FILE", default="", help="the same for an ONNX model")
    p.add_argument("--cost-target", default="cpu", choices=list(COST_TARGETS),
                   help="where the network is costed: " + ", ".join(f"{k} ({v})" for k, v in COST_TARGETS.items()))
    p.add_argument("--target-file", default=None, metavar="FILE",
                   help="a CPU or GPU target as JSON (the fields of docs/targets.md); replaces --cost-target")
    p.add_argument("--codegen", action=argparse.BooleanOptionalAction, default=None,
                   help="generate, compile, run and check C and CUDA from the transform (default: only with --emit)")


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    from core.workload import MeritTransformWorkload

    s = default_settings()
    if args.transform:
        transform = load_transform_file(args.transform)
        try:                                                        # errors now, with the file name
            workload_from_json(transform, "")
        except InputError as exc:
            raise InputError(exc.message, f"{args.transform}: {exc.where.lstrip('.')}") from None
        workload = MeritTransformWorkload(transform=transform)
    else:
        name = args.workload or DEFAULT_WORKLOAD
        if name not in W.WORKLOADS:
            raise InputError(f"unknown workload {name!r}; known: {', '.join(W.names())}", "--workload")
        workload = MeritTransformWorkload(builtin=name)
    if args.emit and args.codegen is False:
        raise InputError("--emit writes the generated code, which --no-codegen turns off", "--emit")
    network = getattr(args, "network", "") or getattr(args, "onnx", "") or ""
    s.update(banks=args.banks, alus=args.alus, bandwidth_gbps=parse_bandwidth(args.bandwidth, "--bandwidth"),
             networks=[n for n in args.networks.split(",") if n.strip()], table_ix=bool(args.table_ix),
             curve_alus=parse_alu_list(args.curve, "--curve"), seed=args.seed, tile=parse_tile(args.tile),
             psum_kib=args.psum_kib, broadcast=args.broadcast, dram_model=args.dram_model,
             lane_padding=args.lane_padding, emit_dir=args.emit,
             codegen=bool(args.emit) if args.codegen is None else args.codegen,
             cost_network=network, cost_target=getattr(args, "cost_target", "cpu"))
    target = _target_file(args.target_file) if getattr(args, "target_file", None) else None
    if target is not None and not network:
        raise InputError("a target costs a network: give --network or --onnx too", "--target-file")
    try:
        typed = check_settings(s)
    except InputError as exc:
        flag = {"settings.cost_network": "--onnx" if getattr(args, "onnx", "") else "--network"}.get(exc.where)
        raise InputError(exc.message, flag or exc.where) from None
    if typed.cost_network:
        from core.nets.source import network_layers

        network_layers(typed.cost_network, "--onnx" if getattr(args, "onnx", "") else "--network")
    return JobRequest(workload=workload, target=target, settings=s)


def _target_file(path: str) -> Any:
    """A CPU or GPU target read from a JSON file (InputError names the flag, and the field)."""
    import json

    from core.files import read_bytes
    from core.workload import target_from_json

    try:
        doc = json.loads(read_bytes(path, "--target-file"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not JSON: {exc}"[:200], "--target-file") from None
    if not isinstance(doc, dict) or doc.get("kind") not in ("cpu", "gpu"):
        got = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(f"expected a CPU or GPU target (\"kind\": \"cpu\" or \"gpu\"), got {got!r}",
                         "--target-file.kind")
    return target_from_json(doc, "--target-file")


def _bf_word(bf: Butterfly | None) -> str:
    if bf is None or not bf.butterfly_ok:
        return "no"
    return "yes (X,R)" if bf.non_square and bf.non_square.found else "yes"


def parse_tile(text: str, where: str = "--tile") -> dict[str, int]:
    """'y=16,x=8' -> {'y': 16, 'x': 8} (the command line's and the panel's tile text)."""
    out: dict[str, int] = {}
    for part in [p for p in text.split(",") if p.strip()]:
        name, _, val = part.partition("=")
        try:
            n = int(val)
        except ValueError:
            raise InputError(f"cannot read {part.strip()!r} as index=size", where) from None
        if not name.strip() or n <= 0:
            raise InputError(f"cannot read {part.strip()!r} as index=size (size > 0)", where)
        if name.strip() in out:
            raise InputError(f"index {name.strip()!r} is given twice", where)
        out[name.strip()] = n
    return out


def format_tile(tile: dict[str, int]) -> str:
    """{'y': 16, 'x': 8} -> 'y=16,x=8' (what parse_tile reads back)."""
    return ",".join(f"{k}={v}" for k, v in tile.items())


def parse_alu_list(text: str, where: str = "--curve") -> list[int]:
    """'32,64,128' -> [32, 64, 128]; each a multiple of 32 (one TAU)."""
    out = []
    for i, part in enumerate(p.strip() for p in text.split(",") if p.strip()):
        try:
            a = int(part)
        except ValueError:
            raise InputError(f"cannot read {part!r} as an ALU count", where) from None
        _alu_count(a, where, f"ALU count {i + 1}")
        out.append(a)
    return out


def timing_warning(c: CodegenC) -> str | None:
    """The warning for C timed against numpy while other work ran (core.machine_load), else None."""
    return LoadRecord.from_json(c.machine_load).warning() if c.machine_load else None


def codegen_lines(cg: Codegen) -> list[str]:
    """The code generation's check and timings, as the command line and the log print them."""
    c, cu = cg.c, cg.cuda
    t = c.timings_s
    lines = [f"C ({' '.join(c.flags)}, {c.threads} threads): verified = {c.verified}, max rel error "
             + (f"{c.max_rel_error:.2e}" if c.max_rel_error is not None else "-")
             + (f" ({c.message})" if c.message else "")]
    if c.sample:
        lines.append(f"  checked on {c.sample}")
    if c.tile_note:
        lines.append(f"  C tile: {c.tile_note}")
    if t:
        times = ", ".join(f"{k} {v * 1e3:.4g} ms" for k, v in t.items())
        lines.append(f"  median time per call: {times}; best {c.best}: "
                     + ", ".join(f"{k.replace('_', ' ')} {v:.2f}x" for k, v in c.speedup.items() if v is not None))
        busy = timing_warning(c)
        if busy:
            lines.append(f"  warning: {busy}")
    em = cu.emulated_check
    lines.append(f"CUDA: verified = {cu.verified}" + (f" ({cu.message})" if cu.message else "")
                 + ("" if em is None else
                    f"; emulated check: {'ok' if em.ok else 'not ok'}"
                    + (f", max rel error {em.max_rel_error:.2e}" if em.max_rel_error is not None else "")
                    + (f" ({em.message})" if em.message else "")))
    for k in cu.kernels:
        lines.append(f"  {k.function}: {k.blocks} blocks x {k.threads} threads, {k.smem_bytes} B shared"
                     + (" (dynamic)" if k.dynamic_smem else "") + f", {k.layout}")
        if k.tile_note and (not k.tile_note.startswith("the given tile fits") or k.dynamic_smem):
            lines.append(f"    {k.tile_note}")
    if cg.emitted:
        lines.append(f"  wrote {len(cg.emitted)} files to {Path(cg.emitted[0]).parent}")
    return lines


def format_text(result: EngineResult) -> str:
    assert isinstance(result, MeritResult)
    r = result
    v = r.verification
    lines = [f"MERIT transform: {r.title} ({r.workload})"]
    for st in r.transform:
        p = " x ".join(f"{n}={s}" for n, s in st.parallel)
        a = " x ".join(f"{n}={s}" for n, s in st.accumulate) or "-"
        lines.append(f"  stage {st.name}: p = ({p}), a = ({a}), strategy {st.strategy}")
        for op in st.operands:
            m = ", ".join(f"{i}->(d{a.axis},s{a.stride},o{a.offset})" for i, a in op.maps.items())
            lines.append(f"    {op.name}{tuple(op.shape)}: {m}")
    lines.append(f"verification: max abs diff vs direct = {v.max_abs_diff}, eq. 5 walk = "
                 f"{v.naive_eq5_max_abs_diff:.3g}, ok = {v.ok}" + (f" ({v.sample})" if v.sample else ""))
    t = r.tiling
    lines.append(f"tile: p {t.tile.parallel}, a {t.tile.accumulate}")
    if t.tile_note and not t.tile_note.startswith("the given tile fits"):
        lines.append(f"  {t.tile_note}")
    for k, fp in t.footprints.items():
        lines.append(f"  footprint {k}: {tuple(fp)} (eq. 9; bounding box of the reads "
                     f"{tuple(t.measured_footprints[k])})")
    for ld in t.loads:
        lines.append(f"  loads {ld.operand}: direct {ld.direct}, unrolled {ld.unrolled}, "
                     f"on the fly {ld.on_the_fly} ({100 * ld.saving_vs_direct:.1f}% saved)")
    b = r.banks
    lines.append(f"banks: {b.banks} banks, operand {b.operand}, footprint {tuple(b.footprint)}, "
                 f"{b.lanes} lanes x {b.steps} steps")
    for L in b.layouts:
        bf = L.butterfly
        lines.append(f"  {L.layout:9s} extra cycles {L.extra_cycles:7d}  padding {L.padding_words:4d}  "
                     f"butterfly {_bf_word(bf):9s} H={None if bf is None else bf.H}  {L.detail}")
    lines.append("reuse (Table III):")
    for row in r.reuse.rows:
        paper = f" (paper {row.paper})" if row.paper is not None else ""
        lines.append(f"  {row.architecture:9s} {row.level:28s} {row.rate:7.2f}{paper}")
    if r.codegen:
        lines += codegen_lines(r.codegen)
    if r.cost is not None:
        lines += cost_lines(r.cost)
    mz = r.meritz
    lines.append(f"MERIT-z ({mz.config.alus} ALUs, {mz.config.dram_gbps} GB/s; {mz.assumptions.summary}):")
    for su in mz.suites:
        paper = f" (paper {su.paper})" if su.paper is not None else ""
        lines.append(f"  {su.name:28s} utilisation {su.utilisation:.3f}{paper}")
    if mz.curve.alus:
        lines.append("utilisation vs ALUs " + " ".join(f"{a:>6d}" for a in mz.curve.alus))
        for name, ys in mz.curve.series.items():
            lines.append(f"  {name[:28]:28s}      " + " ".join(f"{y:6.2f}" for y in ys))
    return "\n".join(lines)


ENGINE = EngineSpec(
    name="merit",
    title="MERIT mapping",
    summary=("MERIT tensor transforms (Lin, Chen, Chien): a workload as M(A), M(B) and a ranged inner product, "
             "verified against direct numpy; tile footprints (eq. 9), shared-memory bank conflicts with padding, "
             "XOR hashing and re-tiling (Fig. 6), the butterfly routing test (eqs. 10-16), data reuse (Table III) "
             "and a MERIT-z timing model for utilisation (Tables VIII, IX, Fig. 15)."),
    run=run,
    default_settings=default_settings,
    add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli,
    format_text=format_text,
    workload_kinds=WORKLOAD_KINDS,
    target_kinds=(),
    settings_schema=SETTINGS_SCHEMA,
    order=30,
    result_type=MeritResult,
    workload_problem=workload_problem,
    migrate_v1_settings=migrate_v1_settings,
)
