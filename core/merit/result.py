"""The typed result of the "merit" engine (core.merit.engine): a workload as MERIT transforms,
verified, tiled, checked for bank conflicts, and timed on the MERIT-z model.

The merit panel redraws everything from these fields (grids, tiles, bank layouts, reuse, utilisation).
Parts that are the paper's worked examples (butterfly_examples) or tensor maps are kept as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.cost import CostRecord
from core.merit.butterfly import fmt
from core.merit_transform.transform import MeritTransform
from core.metrics import Metric
from core.results import EngineResult, optional_key

if TYPE_CHECKING:                               # these modules build their parts of the result from here
    from core.merit import reuse
    from core.merit.banks import LayoutResult
    from core.merit.butterfly import Verdict
    from core.merit.tiling import LoadCounts
    from sims.meritz import LayerResult, MeritzConfig as MeritzModel


@dataclass(kw_only=True)
class Verification:
    """R(M(A), M(B)) against a direct numpy implementation and the element-by-element eq. 5."""

    output_shape: list[int]
    naive_eq5_max_abs_diff: float
    naive_rows_checked: int
    reference: str
    max_abs_diff: float | None                  # None: the workload has no direct reference
    ok: bool
    # Since issue 31: which outputs were checked ("all N outputs", or the sample of a large transform:
    # seeded random outputs and whole tiles at the borders, core.merit.sample); absent before.
    sample: str | None = optional_key()
    outputs_checked: int | None = optional_key()


@dataclass(kw_only=True)
class MGrid:
    """A corner of M(operand): source coordinates per (parallel row, accumulate column)."""

    operand: str
    shape: list[int]
    rows: int
    cols: int
    p_labels: list[list[int]]
    a_labels: list[list[int]]
    coords: list[list[list[int]]]               # coords[axis][row][col]


@dataclass(kw_only=True)
class Tile:
    """A tile's extent per index, parallel and accumulated (core.merit.tiling.tiling_report)."""

    parallel: dict[str, int]
    accumulate: dict[str, int]


@dataclass(kw_only=True)
class LoadCount:
    operand: str
    tiles: int
    direct: int
    unrolled: int
    on_the_fly: int
    saving_vs_direct: float

    @classmethod
    def of(cls, c: "LoadCounts") -> "LoadCount":
        return cls(operand=c.operand, tiles=c.tiles, direct=c.direct, unrolled=c.unrolled, on_the_fly=c.on_the_fly,
                   saving_vs_direct=c.saving_vs_direct)


@dataclass(kw_only=True)
class Tiling:
    tile: Tile
    footprints: dict[str, list[int]]            # "i:operand" -> eq. 9 footprint
    measured_footprints: dict[str, list[int]]   # bounding box of the reads
    loads: list[LoadCount]
    footprint_check: bool
    tile_note: str | None = optional_key()      # how the tile was fitted to the device (issue 31)


@dataclass(kw_only=True)
class NonSquare:
    """The XOR-hash + rotation attempt when the square butterfly test fails (eq. 16)."""

    H: list[str]
    found: bool
    X: list[list[int]] | None
    rotation: int
    H_prime: list[str] | None


@dataclass(kw_only=True)
class Butterfly:
    lanes: int
    H: list[str]                                # property matrix rows, e.g. "x10"
    reduces_to_identity: bool
    reduction_steps: list[str]
    non_square: NonSquare | None
    butterfly_ok: bool
    routed_fraction: float
    broadcast_lane_bits: list[int]

    @classmethod
    def of(cls, v: "Verdict") -> "Butterfly":
        return cls(
            lanes=1 << v.L, H=fmt(v.H), reduces_to_identity=v.square_ok, reduction_steps=list(v.steps),
            non_square=None if v.H_tall is None else NonSquare(
                H=fmt(v.H_tall), found=v.Xm is not None, X=None if v.Xm is None else v.Xm.tolist(), rotation=v.k,
                H_prime=None if v.H_squared is None else fmt(v.H_squared)),
            butterfly_ok=v.ok, routed_fraction=round(v.routable, 4),
            # lane bits along which all lanes read the same word: a multicast, outside the permutation
            # condition of section V-C (reported, not routed)
            broadcast_lane_bits=list(v.broadcast_bits))


@dataclass(kw_only=True)
class BankLayout:
    layout: str                                 # naive | padded | xor | ...
    pitch: int
    padding_words: int
    extra_cycles: int
    conflicting_accesses: int
    accesses: int
    conflict_free: bool
    detail: str
    c: list[int]
    bank_grid: list[list[int]]                  # bank of every stored word, -1 for padding
    shown_access: list[tuple[int, int, int]]    # (row, col, accessed) cells of the drawn access
    butterfly: Butterfly | None

    @classmethod
    def of(cls, r: "LayoutResult") -> "BankLayout":
        return cls(layout=r.name, pitch=r.pitch, padding_words=r.padding_words, extra_cycles=r.extra_cycles,
                   conflicting_accesses=r.conflict_steps, accesses=r.accesses, conflict_free=r.extra_cycles == 0,
                   detail=r.detail, c=list(r.c), bank_grid=r.grid, shown_access=[(a, b, c) for a, b, c in r.shown],
                   butterfly=None if r.verdict is None else Butterfly.of(r.verdict))


@dataclass(kw_only=True)
class Banks:
    operand: str
    footprint: list[int]
    banks: int
    lanes: int
    steps: int
    layouts: list[BankLayout]


@dataclass(kw_only=True)
class ReuseRow:
    """A row of Table III; the counts are {"per_pass": n, "once": m}."""

    architecture: str
    level: str
    inputs: dict[str, float]
    kernels: dict[str, float]
    outputs: dict[str, float]
    macs: dict[str, float]
    rate: float
    note: str
    paper: float | None

    @classmethod
    def of(cls, row: "reuse.ReuseRow", paper: float | None) -> "ReuseRow":
        def count(x: "reuse.Count") -> dict[str, float]:
            return {"per_pass": x.per_pass, "once": x.once}
        return cls(architecture=row.architecture, level=row.level, inputs=count(row.inputs),
                   kernels=count(row.kernels), outputs=count(row.outputs), macs=count(row.macs),
                   rate=round(row.rate, 4), note=row.note, paper=paper)


@dataclass(kw_only=True)
class Reuse:
    rows: list[ReuseRow]


@dataclass(kw_only=True)
class MeritzConfig:
    alus: int
    taus: int
    alus_per_tau: int
    clock_mhz: float
    dram_gbps: float
    rp_kib: list[float]
    cp_kib: float
    word_bytes: int

    @classmethod
    def of(cls, cfg: "MeritzModel") -> "MeritzConfig":
        return cls(alus=cfg.alus, taus=cfg.taus, alus_per_tau=cfg.alus_per_tau, clock_mhz=cfg.clock_hz / 1e6,
                   dram_gbps=cfg.dram_gbps, rp_kib=[b / 1024 for b in cfg.rp_bytes], cp_kib=cfg.cp_bytes / 1024,
                   word_bytes=cfg.word_bytes)


@dataclass(kw_only=True)
class MeritzLayer:
    name: str
    utilisation: float
    cycles: int
    useful_ops: int
    dram_bytes: int
    bound: str                                  # "dram" | "compute"
    tile: dict[str, int]
    # Since the layer tile view: the parallel indices and each operand's eq. 9 footprint ("i:name" ->
    # extents) of the tile; absent in results stored before.
    parallel: list[str] | None = optional_key()
    footprints: dict[str, list[int]] | None = optional_key()

    @classmethod
    def of(cls, r: "LayerResult", parallel: list[str], footprints: dict[str, list[int]]) -> "MeritzLayer":
        return cls(name=r.name, utilisation=round(r.utilisation, 4), cycles=round(r.cycles), useful_ops=r.useful_ops,
                   dram_bytes=round(r.dram_bytes), bound=r.bound, tile=dict(r.tile), parallel=parallel,
                   footprints=footprints)


@dataclass(kw_only=True)
class MeritzSuite:
    """A network or workload timed on MERIT-z: overall utilisation and the paper's figure."""

    name: str
    utilisation: float
    paper: float | None
    layers: list[MeritzLayer]


@dataclass(kw_only=True)
class UtilisationCurve:
    alus: list[int]
    series: dict[str, list[float]]              # suite name -> utilisation per ALU count


@dataclass(kw_only=True)
class MeritzAssumptions:
    """The MERIT-z model's choices behind the figures (sims.meritz.MeritzConfig.assumptions)."""

    psum_kib: float                             # partial-sum (Compute Pipeline) SRAM
    broadcast: bool                             # one DRAM transfer of a shared tile feeds several TAUs
    dram_model: str                             # "flat" | "ddr3-1600" (row-buffer and burst timing)
    lane_padding: str                           # "pad" (idle lanes) | "fold" (Fig. 10 folding)
    dram_timing: dict[str, Any] | None          # the row/burst figures used; None with the flat model
    summary: str                                # one line, e.g. for the panel


def _assumptions_before_version_2() -> MeritzAssumptions:
    """Results stored before the assumptions were recorded ran with these (the model's defaults)."""
    return MeritzAssumptions(psum_kib=5.0, broadcast=False, dram_model="flat", lane_padding="pad", dram_timing=None,
                             summary="partial sums 5 KB, broadcast off, DRAM flat rate, lanes padded to 32")


@dataclass(kw_only=True)
class Meritz:
    config: MeritzConfig
    suites: list[MeritzSuite]
    curve: UtilisationCurve
    # Since version 2; a result stored before reads as the defaults it ran with.
    assumptions: MeritzAssumptions = field(default_factory=_assumptions_before_version_2)


@dataclass(kw_only=True)
class CodegenKernel:
    """One generated C function: naive loop nest, tiled (the engine's tile), packed micro-kernel or rows
    (whole output rows, short windows)."""

    stage: str
    variant: str
    function: str
    note: str


@dataclass(kw_only=True)
class CodegenC:
    """The C generated from the transform (core.merit.codegen_c), compiled, run and compared with numpy.
    Times are median seconds per call, summed over stages; `verified` only when every kernel ran and
    matched within `tolerance` (measure: `error_measure`)."""

    language: str
    flags: list[str]
    error_measure: str
    tolerance: float
    sources: dict[str, str]                     # file name -> text
    kernels: list[CodegenKernel]
    compiled: bool
    run: bool
    verified: bool
    max_rel_error: float | None
    message: str
    compiler: str | None
    compile_s: float | None
    threads: int | None
    timings_s: dict[str, float]                 # naive | tiled | packed | rows | numpy
    speedup: dict[str, float | None]            # vs_naive, vs_numpy of the fastest generated kernel
    errors: dict[str, float] | None = optional_key()      # per kernel variant
    best: str | None = optional_key()
    time_s: float | None = optional_key()
    sample: str | None = optional_key()          # outputs compared with numpy (issue 31)
    tile_note: str | None = optional_key()
    # other work on the machine while the C and numpy were timed (core.machine_load.LoadRecord's JSON):
    # a busy machine makes `timings_s` and `speedup` unreliable
    machine_load: dict[str, Any] | None = optional_key()


@dataclass(kw_only=True)
class CudaKernel:
    """What the result keeps of a generated CUDA kernel (core.merit.codegen_cuda.CudaProgram): its
    source is in CodegenCuda.sources, and the host driver's sizes are not kept."""

    stage: str
    function: str
    blocks: int
    threads: int
    outputs_per_thread: int
    smem_bytes: int
    layout: str                                 # the bank layout of the shared footprint and where it came from
    # Since issue 31: the tile fitted to the device description (core.merit.device)
    tile: dict[str, int] | None = optional_key()
    tile_note: str | None = optional_key()
    device: str | None = optional_key()
    smem_limit: int | None = optional_key()
    dynamic_smem: bool | None = optional_key()
    launch_bounds: int | None = optional_key()
    regs_estimate: int | None = optional_key()


@dataclass(kw_only=True)
class EmulatedCheck:
    """The CUDA kernels run on the CPU (blocks as OpenMP teams): checks indexing, not GPU speed."""

    what: str
    ran: bool
    ok: bool
    max_rel_error: float | None
    seconds: float | None
    message: str


@dataclass(kw_only=True)
class CodegenCuda:
    language: str
    error_measure: str
    tolerance: float
    sources: dict[str, str]
    kernels: list[CudaKernel]
    nvcc: str | None
    gpu: bool
    compiled: bool
    run: bool
    verified: bool                              # true only when run on a GPU and matched
    max_rel_error: float | None
    timings_s: dict[str, float]
    message: str                                # e.g. "not run: no GPU"
    emulated_check: EmulatedCheck | None
    sample: str | None = optional_key()          # outputs compared (issue 31)


@dataclass(kw_only=True)
class Codegen:
    c: CodegenC
    cuda: CodegenCuda
    emitted: list[str]                          # files written (--emit / settings.emit_dir)
    seconds: float


@dataclass(kw_only=True)
class LayerNote:
    """How one layer of a costed network was costed (core.merit.cost), in words beside its figures."""

    name: str
    transform: str                   # the transform's sizes, e.g. "conv 64x56x56 -> 64, 3x3 s1 p1 (...)"
    how: str                         # "measured here: ...", "extrapolated ... from ...", "roofline: ..."
    tile: dict[str, int]             # the tile whose loads are the off-chip bytes


@dataclass(kw_only=True)
class MeritCost:
    """A network's cost record on a CPU or GPU target (core.merit.cost), and per layer how it was
    costed (version 3)."""

    network: str
    target_kind: str                 # "cpu" | "gpu"
    measured_here: bool              # the target is this machine and its C was timed here
    notes: list[LayerNote]
    record: CostRecord
    gpu_note: str | None = optional_key()


@dataclass(kw_only=True)
class MeritResult(EngineResult):
    # Version 2 added `codegen` (C and CUDA generated from the transform, run and checked) and, in the
    # MERIT-z part, optional keys; both optional, so version-1 results read unchanged. Version 3 added
    # `cost` (a network's cost record on a CPU or GPU target, core.merit.cost), optional likewise.
    VERSION = 3
    UPGRADES = {1: lambda d: d, 2: lambda d: d}

    workload: str
    title: str
    paper: str
    transform: list[MeritTransform]
    verification: Verification
    m_grids: list[MGrid]
    tiling: Tiling
    banks: Banks
    butterfly_examples: dict[str, Any]          # the paper's eqs. 11-16 recomputed, as printed
    reuse: Reuse
    meritz: Meritz
    codegen: Codegen | None = optional_key()            # only with settings.codegen (version 2)
    cost: MeritCost | None = optional_key()             # only with settings.cost_network (version 3)

    def validate(self, path: str = "result") -> None:
        super().validate(path)
        if self.cost is not None:            # a stored record verifies itself (every figure at its limit or above)
            self.cost.record.check(f"{path}.cost.record")

    def own_utilisation(self) -> float | None:
        """MERIT-z's utilisation on this run's own workload; None where it was not timed."""
        own = [s for s in self.meritz.suites if s.name.startswith("this workload")]
        return own[-1].utilisation if own else None

    def paper_gap(self) -> float | None:
        """How far the MERIT-z model is from the paper's utilisations (Tables VIII/IX), where the run
        timed suites the paper reports: the mean of |model - paper| / paper; None without any."""
        gaps = [abs(s.utilisation - s.paper) / s.paper for s in self.meritz.suites if s.paper]
        return sum(gaps) / len(gaps) if gaps else None

    METRICS = (
        Metric("verification_ok", "Verified", "", None, "the transform's result equals the direct convolution",
               read=lambda r: r.verification.ok),
        Metric("max_abs_diff", "Max |R - direct|", "", "lower", read=lambda r: r.verification.max_abs_diff),
        Metric("meritz_utilisation", "MERIT-z utilisation", "fraction", "higher", read=lambda r: r.own_utilisation()),
        Metric("meritz_paper_gap", "MERIT-z gap to the paper", "fraction", "lower",
               "mean |model - paper| / paper over the suites the paper reports", read=lambda r: r.paper_gap()),
    )
