"""The typed result of the "bound" engine (core.bound.engine): off-chip traffic of every conv/fc
layer against the communication lower bound, for the optimal dataflow and the chosen baselines,
and a sweep over on-chip memory sizes.

The bound panel draws the sweep, the per-layer bars and table and one layer's tiling from these
keys. Which baseline dataflows appear is chosen at run time, so their totals and sweep values are
extra keys (a number, or null where a dataflow does not fit some layer).
"""

from __future__ import annotations

from dataclasses import dataclass
from core.bound.onchip import ArchitectureSizing
from core.results import EngineResult, extra_keys, optional_key


@dataclass(kw_only=True)
class Source:
    kind: str                                   # network | onnx | layer
    name: str
    title: str | None = optional_key()          # zoo networks
    path: str | None = optional_key()           # ONNX files


@dataclass(kw_only=True)
class ConvShapeJson:
    name: str
    B: int
    Ci: int
    Hi: int
    Wi: int
    Co: int
    Hk: int
    Wk: int
    stride: int
    pad: int
    groups: int
    dilation: int
    fc: bool
    Ho: int
    Wo: int
    macs: int


@dataclass(kw_only=True)
class Compulsory:
    inputs: int
    weights: int
    outputs: int
    total: int


@dataclass(kw_only=True)
class LayerBound:
    R: int                                      # most windows reading one input element
    R_paper: float
    reads: float
    writes: int
    total: float
    compulsory: Compulsory
    reference: float                            # max(bound, compulsory): no dataflow moves less


@dataclass(kw_only=True)
class TilingJson:
    """Tile sizes under both naming schemes (n m c p q = b z k y x) and the loop order."""

    n: int
    m: int
    c: int
    p: int
    q: int
    order: str
    b: int
    z: int
    k: int
    y: int
    x: int


@dataclass(kw_only=True)
class TrafficJson:
    input_reads: int
    weight_reads: int
    output_writes: int
    output_reads: int
    memory: int                                 # peak words on chip
    reads: int
    total: int


@dataclass(kw_only=True)
class OnChip:
    """The optimal tiling mapped onto the PE array (core.bound.onchip.PeMapping)."""

    pe_rows: int
    pe_cols: int
    split_b: int
    split_y: int
    split_x: int
    zs: int
    psums_per_pe: int
    utilisation: float
    gbuf_input_reads: int
    gbuf_weight_reads: int
    gbuf_writes: int
    greg_input_writes: int
    greg_weight_writes: int
    greg_reads: int
    lreg_writes: int
    lreg_reads: int
    output_drain: int
    gbuf_reads: int
    greg_writes: int


@dataclass(kw_only=True)
class Optimal:
    tiling: TilingJson
    traffic: TrafficJson
    ratio_bound: float | None                   # None when the bound is 0
    ratio_reference: float | None
    evaluated: int
    onchip: OnChip


@dataclass(kw_only=True)
class BaselineJson:
    title: str
    tiling: TilingJson
    traffic: TrafficJson
    ratio_bound: float | None
    ratio_reference: float | None
    vs_optimal: float | None


@dataclass(kw_only=True)
class Best:
    dataflow: str
    total: int


@dataclass(kw_only=True)
class LayerJson:
    name: str
    shape: ConvShapeJson
    spec: str                                   # the --layer text that reads back as this shape
    macs: int
    bound: LayerBound
    bound_asymptotic: bool
    optimal: Optimal
    baselines: dict[str, BaselineJson | None]   # None: the dataflow does not fit this layer
    best: Best


@dataclass(kw_only=True)
class Totals:
    macs: int
    bound: float
    compulsory: int
    reference: float
    optimal: int
    optimal_reads: int
    optimal_writes: int
    gbuf_reads: int
    per_dataflow: dict[str, int | None] = extra_keys()   # baseline dataflow -> total, None if it does not fit
    best: int
    ratio_bound: float | None
    ratio_reference: float | None


@dataclass(kw_only=True)
class SweepRow:
    memory_bytes: int
    words: int
    bound: float
    compulsory: int
    reference: float
    optimal: int | None                         # None: some layer does not fit
    per_dataflow: dict[str, int | None] = extra_keys()


@dataclass(kw_only=True)
class Timing:
    analysis: float
    total: float


@dataclass(kw_only=True)
class BoundResult(EngineResult):
    engine: str
    source: Source
    memory_bytes: int
    word_bits: int
    memory_words: int
    pe_rows: int
    pe_cols: int
    batch: int
    dataflows: list[str]
    dataflow_titles: dict[str, str]
    layers: list[LayerJson]
    passthrough: list[str]                      # layers that move no conv traffic (pooling, ...)
    totals: Totals
    sweep: list[SweepRow]
    architecture: ArchitectureSizing                  # buffer sizing for this machine
    paper_architecture: ArchitectureSizing            # the same for the paper's machine
    timing_s: Timing

    def headline(self) -> dict[str, float | int | str | None]:
        return {"optimal_traffic": self.totals.optimal, "ratio_bound": self.totals.ratio_bound,
                "ratio_reference": self.totals.ratio_reference}
