"""The typed result of the "bound" engine (core.bound.engine): off-chip traffic of every conv/fc
layer against the communication lower bounds, for the optimal dataflow and the chosen baselines,
and a sweep over on-chip memory sizes.

The bound panel draws the sweep, the per-layer bars and table and one layer's tiling from these
keys. Which baseline dataflows appear is chosen at run time, so their totals and sweep values are
extra keys (a number, or null where a dataflow does not fit some layer).

Version 2 (issue 16): the lower bound is the proven one, `reference` = max(segment bound,
compulsory); the paper's formula is kept beside it as `paper` (asymptotic, not a bound), every
`ratio_bound` (traffic / paper formula) is now `ratio_paper`, the on-chip mapping reports its GBuf
read bound, and a tiling says which tensor it holds for the whole layer (`hold`). Version-1 results are brought forward
by computing the segment bound from each stored layer shape; their traffic figures stay as they were
computed (version 1 loaded whole input spans, rows a stride skips included).

Version 3 (issue 33): a tiling says whether its input tiles slide (`slide`), the segment bound
reports the reads its last, partial segment needs (`last_segment`, part of its total), a layer
says where its gap to the bound lies (`gap`), and sweep rows carry per-layer curves (`layers`). All have
defaults, so version-2 results read
unchanged (no slide, no last-segment term, no gap); the optimal dataflow's space is larger since.
Version 4 adds an optional `fusion` key, the fusion plan (core.bound.fusion.FusionPlan); version-3
results (without it) read as before. Version 5 (issue 33): a strided layer's segment bound may come
from the stride-phase argument, which its `phase_reuse` then states; version-4 results keep the
bounds they were computed with. Version 6 (issue 33): a layer's bound carries the cut bound
(`cut`: compulsory traffic plus the words that must leave the chip and come back, docs/bound.md),
and `reference` may come from it; version-5 results (without it) keep the bounds they were computed with.
Version 7: the cut bound may cut the schedule more than once (`cut.parts` runs; `crossing` is then the
uses beyond each word's first); a version-6 cut (no `parts`) was one cut, two parts.
Version 8: a tiling may stream its input tile through the buffer by output rows or columns
(`stream`: "P" / "Q", "" not); version-7 tilings (without it) did not, and the optimal dataflow's
space is larger since.
Version 9 (issue 50): an optional `costing` key, the optimal dataflow's time and energy on the dataflow
accelerator term by term and the network's cost record (core.cost) against the accelerator's limits;
version-8 results (without it) read as before.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from core.bound.bounds import LayerBound, conv_bound
from core.bound.cost import DataflowCosting
from core.bound.fusion import FusionPlan
from core.bound.loopnest import Tiling, Traffic
from core.bound.onchip import ArchitectureSizing, PeMapping
from core.bound.shapes import ConvShape
from core.metrics import Metric
from core.results import EngineResult, extra_keys, optional_key, to_plain


@dataclass(kw_only=True)
class Source:
    kind: str                                   # network | onnx | layer
    name: str
    title: str | None = optional_key()          # zoo networks
    path: str | None = optional_key()           # ONNX files


# A layer's shape, tilings, traffic and on-chip mapping are the domain classes themselves
# (core.bound.shapes.ConvShape, core.bound.loopnest.Tiling and Traffic, core.bound.onchip.PeMapping):
# the values they derive that the stored JSON also holds (Ho, Wo, macs; the paper's tile names
# b z k y x; reads, total; gbuf_reads, greg_writes) are their JSON_DERIVED keys (core.results).


@dataclass(kw_only=True)
class Optimal:
    tiling: Tiling
    traffic: Traffic
    ratio_reference: float | None               # traffic / proven bound; None when it is 0
    ratio_paper: float | None                   # traffic / paper's formula (below 1 happens)
    evaluated: int
    onchip: PeMapping


@dataclass(kw_only=True)
class Baseline:
    title: str
    tiling: Tiling
    traffic: Traffic
    ratio_reference: float | None
    ratio_paper: float | None
    vs_optimal: float | None


@dataclass(kw_only=True)
class Best:
    dataflow: str
    total: int


@dataclass(kw_only=True)
class Gap:
    """Where the gap between the optimal dataflow and the proven bound lies, as far as can be told
    (docs/bound.md, "The gap"): "attained" (none: the bound and the dataflow are both optimal),
    "output writes" (the traffic is no more than the segment bound plus the layer's output writes,
    which every schedule pays but the proof cannot add, as it spends them on creating partial sums:
    likely the bound's, not proven), "open" (more: the bound's time structure or schedules outside
    the dataflow space, not known which)."""

    words: float                                # optimal - proven
    outputs: int                                # the output writes the proof cannot add
    source: str


@dataclass(kw_only=True)
class LayerAnalysis:
    """Everything the engine reports about one layer (core.bound.analysis.analyse_layer)."""

    name: str
    shape: ConvShape
    spec: str                                   # the --layer text that reads back as this shape
    macs: int
    bound: LayerBound
    bound_asymptotic: bool
    optimal: Optimal
    baselines: dict[str, Baseline | None]       # None: the dataflow does not fit this layer
    best: Best
    gap: Gap | None = optional_key()            # None in results stored before version 3


@dataclass(kw_only=True)
class Totals:
    macs: int
    segment: float
    paper: float
    compulsory: int
    reference: float                            # sum over layers of the proven bound
    optimal: int
    optimal_reads: int
    optimal_writes: int
    gbuf_reads: int
    per_dataflow: dict[str, int | None] = extra_keys()   # baseline dataflow -> total, None if it does not fit
    best: int
    ratio_reference: float | None
    ratio_paper: float | None
    worst_ratio_reference: float | None         # the largest per-layer optimal / proven bound


@dataclass(kw_only=True)
class SweepLayer:
    """One layer at one memory size of the sweep: its proven bound and the optimal dataflow's traffic."""

    name: str
    reference: float
    optimal: int | None                         # None: the layer's smallest tile does not fit


@dataclass(kw_only=True)
class SweepRow:
    memory_bytes: int
    words: int
    segment: float
    paper: float
    compulsory: int
    reference: float
    optimal: int | None                         # None: some layer does not fit
    per_dataflow: dict[str, int | None] = extra_keys()
    layers: list[SweepLayer] = field(default_factory=list)     # per layer (version 3; empty before)


@dataclass(kw_only=True)
class Timing:
    analysis: float
    total: float


@dataclass(kw_only=True)
class BoundResult(EngineResult):
    VERSION = 9
    # 2 -> 3 and 3 -> 4: new keys have defaults (4 adds the optional fusion plan, 6 the optional cut bound,
    # 7 the cut's optional number of parts, 8 a tiling's streaming, "" by default, 9 the optional costing)
    UPGRADES = {1: lambda d: upgrade_v1(d), 2: lambda d: d, 3: lambda d: d, 4: lambda d: d, 5: lambda d: d,
                6: lambda d: d, 7: lambda d: d, 8: lambda d: d}

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
    layers: list[LayerAnalysis]
    passthrough: list[str]                      # layers that move no conv traffic (pooling, ...)
    totals: Totals
    sweep: list[SweepRow]
    architecture: ArchitectureSizing                  # buffer sizing for this machine
    paper_architecture: ArchitectureSizing            # the same for the paper's machine
    timing_s: Timing
    # the fusion plan at this memory (issue 33, bullet 4): absent where it was not asked for, and in
    # results written before it existed
    fusion: FusionPlan | None = optional_key()
    # the optimal dataflow's time, energy and cost record on the accelerator (version 9; absent before)
    costing: DataflowCosting | None = optional_key()

    def validate(self, path: str = "result") -> None:
        super().validate(path)
        if self.costing is not None:         # a stored record verifies itself (every figure at its limit or above)
            self.costing.record.check(f"{path}.costing.record")

    METRICS = (
        Metric("optimal_traffic", "Optimal traffic", "words", "lower",
               "words the communication-optimal dataflow moves between DRAM and the chip, all layers",
               read=lambda r: r.totals.optimal),
        Metric("optimal_traffic_bytes", "Optimal traffic, bytes", "B", "lower",
               "the same traffic in bytes, at the target's word size",
               read=lambda r: r.totals.optimal * r.word_bits // 8),
        Metric("ratio_reference", "Traffic / proven bound", "×", "lower",
               "the optimal dataflow's traffic over the proven lower bound (1: it meets the bound)",
               read=lambda r: r.totals.ratio_reference),
        Metric("worst_ratio_reference", "Worst layer's traffic / bound", "×", "lower",
               read=lambda r: r.totals.worst_ratio_reference),
        Metric("ratio_paper", "Traffic / paper's bound", "×", "lower", read=lambda r: r.totals.ratio_paper),
    )


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def upgrade_v1(old: dict[str, Any]) -> dict[str, Any]:
    """Version 1 -> 2: the paper's formula moves to `paper`, the segment bound is computed from each
    stored layer shape (and, for the sweep, at each stored memory size), `reference` becomes the
    proven max(segment, compulsory) and ratios follow it; `ratio_bound` becomes `ratio_paper`."""
    d = copy.deepcopy(old)
    fields = ("name", "B", "Ci", "Hi", "Wi", "Co", "Hk", "Wk", "stride", "pad", "groups", "dilation", "fc")
    shapes = [ConvShape(**{k: l["shape"][k] for k in fields}) for l in d["layers"]]
    S = d["memory_words"]
    for l, shape in zip(d["layers"], shapes):
        b = l["bound"]
        new = to_plain(conv_bound(shape, S))
        new["paper"] = {"reads": b["reads"], "writes": b["writes"], "total": b["total"]}
        new["R"], new["R_paper"] = b["R"], b["R_paper"]
        l["bound"] = new
        for run in [l["optimal"], *(v for v in l["baselines"].values() if v is not None)]:
            run["tiling"]["hold"] = ""
        oc, tr = l["optimal"]["onchip"], l["optimal"]["traffic"]
        oc["gbuf_read_bound"] = tr["input_reads"] + tr["weight_reads"]
        for run in [l["optimal"], *(v for v in l["baselines"].values() if v is not None)]:
            run.pop("ratio_bound", None)
            run["ratio_reference"] = _ratio(run["traffic"]["total"], new["reference"])
            run["ratio_paper"] = _ratio(run["traffic"]["total"], new["paper"]["total"])
    t = d["totals"]
    t["paper"] = t.pop("bound")
    t.pop("ratio_bound", None)
    t["segment"] = sum(l["bound"]["segment"]["total"] for l in d["layers"])
    t["reference"] = sum(l["bound"]["reference"] for l in d["layers"])
    t["ratio_reference"] = _ratio(t["optimal"], t["reference"])
    t["ratio_paper"] = _ratio(t["optimal"], t["paper"])
    ratios = [l["optimal"]["ratio_reference"] for l in d["layers"] if l["optimal"]["ratio_reference"] is not None]
    t["worst_ratio_reference"] = max(ratios) if ratios else None
    for row in d["sweep"]:
        row["paper"] = row.pop("bound")
        bounds = [conv_bound(s, row["words"]) for s in shapes]
        row["segment"] = sum(b.segment.total for b in bounds)
        row["reference"] = sum(b.reference for b in bounds)
    return d
