"""Per-layer and per-network analysis: bound, optimal dataflow, baselines, on-chip traffic, memory sweep."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Callable, Iterator

from core.bound.bounds import LayerBound, conv_bound
from core.bound.loopnest import BASELINES, min_memory, search_baseline, search_optimal
from core.bound.onchip import map_to_pes
from core.bound.shapes import ConvShape
from core.bound.result import Baseline, Best, BoundResult, Gap, LayerAnalysis, Optimal, SweepLayer, SweepRow, Totals
from core.errors import InputError

SWEEP_KIB = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
MAX_SWEEP_KIB = 1 << 20            # 1 GiB: the sweep's last size, whatever a layer's working set


@dataclass(frozen=True)
class Machine:
    memory_bytes: int
    word_bits: int
    pe_rows: int = 16
    pe_cols: int = 16

    @property
    def words(self) -> int:
        return self.memory_bytes * 8 // self.word_bits


def check_fits(shapes: list[ConvShape], S: int, what: str = "memory") -> None:
    """InputError when some layer's smallest tile does not fit in S words."""
    for s in shapes:
        need = min_memory(s)
        if need > S:
            raise InputError(f"on-chip memory of {S} words is too small for layer {s.name}: its smallest tile "
                             f"(one output, one input channel, one {s.Hk}x{s.Wk} window and its weights) needs "
                             f"{need} words", what)


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def analyse_layer(shape: ConvShape, m: Machine, dataflows: tuple[str, ...]) -> LayerAnalysis:
    """Everything the engine reports about one layer at one memory size."""
    S = m.words
    bound = conv_bound(shape, S)
    opt = search_optimal(shape, S)
    if opt is None:
        raise InputError(f"on-chip memory of {S} words is too small for layer {shape.name}", "memory")
    ref = bound.reference
    baselines: dict[str, Baseline | None] = {}
    for key in dataflows:
        fam = BASELINES[key]
        r = search_baseline(shape, S, fam)
        baselines[key] = None if r is None else Baseline(
            title=fam.title, tiling=r.tiling, traffic=r.traffic,
            ratio_reference=_ratio(r.traffic.total, ref), ratio_paper=_ratio(r.traffic.total, bound.paper.total),
            vs_optimal=_ratio(r.traffic.total, opt.traffic.total))
    # The optimal dataflow's space holds every baseline's tilings (and sliding and held tensors), so it
    # is the best; `best` stays in the result's form (before issue 33 a spilling baseline could win).
    cands = {"optimal": opt.traffic.total}
    cands.update({k: v.traffic.total for k, v in baselines.items() if v is not None})
    best = min(cands, key=lambda k: (cands[k], k != "optimal"))
    return LayerAnalysis(
        name=shape.name, shape=shape, spec=shape.spec(), macs=shape.macs, bound=bound,
        bound_asymptotic=shape.Hk * shape.Wk * shape.Cig / (bound.R * S) ** 0.5 > 1.0,
        optimal=Optimal(tiling=opt.tiling, traffic=opt.traffic,
                        ratio_reference=_ratio(opt.traffic.total, ref),
                        ratio_paper=_ratio(opt.traffic.total, bound.paper.total), evaluated=opt.evaluated,
                        onchip=map_to_pes(shape, opt.tiling, m.pe_rows, m.pe_cols)),
        baselines=baselines, best=Best(dataflow=best, total=cands[best]),
        gap=gap_of(opt.traffic.total, bound, shape.outputs))


def gap_of(optimal: int, bound: LayerBound, outputs: int) -> Gap:
    """Where the gap between the optimal dataflow and the proven bound lies, as far as can be told
    (docs/bound.md, "The gap"): none; within the output writes the proof cannot add (the traffic is at most
    the segment bound plus the layer's outputs, or the compulsory traffic, which counts them); or open."""
    proven = bound.reference
    words = optimal - proven
    within = optimal <= max(bound.segment.total + outputs, bound.compulsory.total)
    source = "attained" if words <= 1e-9 * max(1.0, proven) else "output writes" if within else "open"
    return Gap(words=max(0.0, float(words)), outputs=outputs, source=source)


def network_totals(layers: list[LayerAnalysis], dataflows: tuple[str, ...]) -> Totals:
    """Sums over layers; a baseline infeasible on some layer has no total."""
    per_dataflow: dict[str, int | None] = {}
    for key in dataflows:
        vals = [l.baselines[key] for l in layers]
        per_dataflow[key] = None if any(v is None for v in vals) else sum(v.traffic.total for v in vals if v)
    optimal = sum(l.optimal.traffic.total for l in layers)
    reference = sum(l.bound.reference for l in layers)
    paper = sum(l.bound.paper.total for l in layers)
    ratios = [l.optimal.ratio_reference for l in layers if l.optimal.ratio_reference is not None]
    return Totals(
        macs=sum(l.macs for l in layers), segment=sum(l.bound.segment.total for l in layers), paper=paper,
        compulsory=sum(l.bound.compulsory.total for l in layers), reference=reference, optimal=optimal,
        optimal_reads=sum(l.optimal.traffic.reads for l in layers),
        optimal_writes=sum(l.optimal.traffic.output_writes for l in layers),
        gbuf_reads=sum(l.optimal.onchip.gbuf_reads for l in layers), per_dataflow=per_dataflow,
        best=sum(l.best.total for l in layers), ratio_reference=_ratio(optimal, reference),
        ratio_paper=_ratio(optimal, paper), worst_ratio_reference=max(ratios) if ratios else None)


def sweep_point(shapes: list[ConvShape], m: Machine, dataflows: tuple[str, ...],
                check: Callable[[], None] = lambda: None) -> SweepRow:
    """Network and per-layer traffic at one memory size for the bound and every dataflow (None where
    it does not fit: a layer's smallest tile, and for the network's totals any layer's)."""
    S = m.words
    row = SweepRow(memory_bytes=m.memory_bytes, words=S, segment=0.0, paper=0.0, compulsory=0, reference=0.0,
                   optimal=0, per_dataflow={key: 0 for key in dataflows})
    fits = all(min_memory(s) <= S for s in shapes)
    for s in shapes:
        check()
        b = conv_bound(s, S)
        row.segment += b.segment.total
        row.paper += b.paper.total
        row.compulsory += b.compulsory.total
        row.reference += b.reference
        opt = search_optimal(s, S) if min_memory(s) <= S else None
        row.layers.append(SweepLayer(name=s.name, reference=b.reference, optimal=None if opt is None else
                                     opt.traffic.total))
        if fits and opt is not None and row.optimal is not None:
            row.optimal += opt.traffic.total
        for key in dataflows:
            r = search_baseline(s, S, BASELINES[key]) if fits else None
            total = row.per_dataflow[key]
            row.per_dataflow[key] = None if r is None or total is None else total + r.traffic.total
    if not fits:
        row.optimal = None
    return row


def working_set_bytes(shapes: list[ConvShape], word_bits: int) -> int:
    """The memory that holds the largest layer's whole working set (every input its windows read,
    every weight, every output, at once): from there on the bound is the compulsory traffic."""
    words = max((conv_bound(s, 1).compulsory.total for s in shapes), default=1)
    return -(-words * word_bits // 8)


def sweep_machines(m: Machine, shapes: list[ConvShape] | None = None) -> list[Machine]:
    """The memory sizes of the sweep: with the layers, 1 KiB, 2 KiB, 4 KiB, ... up to the first that
    holds the largest layer's whole working set (at most MAX_SWEEP_KIB); without, 4 KiB ... 2 MiB.
    The chosen size is always one of them."""
    if shapes is None:
        kib = set(SWEEP_KIB)
    else:
        top = min(MAX_SWEEP_KIB, max(1, -(-working_set_bytes(shapes, m.word_bits) // 1024)))
        kib = {1 << i for i in range(0, max(0, (top - 1).bit_length()) + 1)}
    sizes = sorted({k * 1024 for k in kib} | {m.memory_bytes})
    return [Machine(b, m.word_bits, m.pe_rows, m.pe_cols) for b in sizes]


def curves_csv(result: BoundResult) -> str:
    """The memory sweep as CSV, one row per memory size and curve: the network's totals (proven bound,
    its two parts, the paper's formula, the optimal dataflow and each baseline) and every layer's
    proven bound and optimal traffic; empty cells where a dataflow does not fit."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    flows = list(result.dataflows)
    w.writerow(["curve", "memory (bytes)", "memory (words)", "proven bound", "segment bound", "compulsory",
                "paper (asymptotic)", "optimal"] + [f"{k} total" for k in flows])

    def cell(v: float | None) -> str:
        return "" if v is None else f"{v:.0f}"
    for row in result.sweep:
        w.writerow(["network", row.memory_bytes, row.words, cell(row.reference), cell(row.segment),
                    cell(row.compulsory), cell(row.paper), cell(row.optimal)]
                   + [cell(row.per_dataflow.get(k)) for k in flows])
    for i, layer in enumerate(result.layers):
        for row in result.sweep:
            if i < len(row.layers):
                p = row.layers[i]
                w.writerow([p.name, row.memory_bytes, row.words, cell(p.reference), "", "", "", cell(p.optimal)]
                           + [""] * len(flows))
    return out.getvalue()


def iter_sweep(shapes: list[ConvShape], m: Machine, dataflows: tuple[str, ...]) -> Iterator[SweepRow]:
    for mm in sweep_machines(m):
        yield sweep_point(shapes, mm, dataflows)
