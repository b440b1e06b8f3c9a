"""Per-layer and per-network analysis: bound, optimal dataflow, baselines, on-chip traffic, memory sweep."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from core.bound.bounds import conv_bound
from core.bound.loopnest import BASELINES, min_memory, search_baseline, search_optimal
from core.bound.onchip import map_to_pes
from core.bound.shapes import ConvShape
from core.bound.result import Baseline, Best, LayerAnalysis, Optimal, SweepRow, Totals
from core.errors import InputError

SWEEP_KIB = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


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
    # The paper's dataflow is optimal in its regime (psums fill most of S, HkWkCi >> sqrt(RS)); on tiny
    # memories or maps a psum-spilling baseline can move less, so the overall best is reported too.
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
        baselines=baselines, best=Best(dataflow=best, total=cands[best]))


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
    """Network traffic at one memory size for the bound and every dataflow (None where it does not fit)."""
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
        if fits:
            row.optimal += search_optimal(s, S).traffic.total   # type: ignore[operator,union-attr]
        for key in dataflows:
            r = search_baseline(s, S, BASELINES[key]) if fits else None
            total = row.per_dataflow[key]
            row.per_dataflow[key] = None if r is None or total is None else total + r.traffic.total
    if not fits:
        row.optimal = None
    return row


def sweep_machines(m: Machine) -> list[Machine]:
    sizes = sorted({k * 1024 for k in SWEEP_KIB} | {m.memory_bytes})
    return [Machine(b, m.word_bits, m.pe_rows, m.pe_cols) for b in sizes]


def iter_sweep(shapes: list[ConvShape], m: Machine, dataflows: tuple[str, ...]) -> Iterator[SweepRow]:
    for mm in sweep_machines(m):
        yield sweep_point(shapes, mm, dataflows)
