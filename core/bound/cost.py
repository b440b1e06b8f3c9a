"""The optimal dataflow's time and energy on the dataflow accelerator, and the network's cost record
(core.cost) against the accelerator's limits (issue 50; docs/targets.md, "Dataflow accelerator").

Register file. Each PE keeps its bs x ys x xs x zs partial sums in its register file (the LRegs of
core.bound.onchip), so a split whose partial sums per PE exceed the target's `rf_words` is not used, and
a tiling with no such split is not a dataflow of the space (core.bound.objective): the costed dataflow
always fits. A register file too small for every dataflow of a layer is refused (InputError on
target.rf_bytes) with the least it would need.

Time. The PE array computes one output block per iteration, each PE its own bs x ys x xs x zs partial
sums one MAC per cycle (core.bound.onchip.map_to_pes; the costs take its fastest split of a block over
the PE rows, the least-GBuf-traffic split the engine's on-chip table shows may idle most of them), so a block of extents (Lb, Ly, Lx, Lm) takes
ceil(Lb/pb) ceil(Ly/py) ceil(Lx/px) min(Lm, zs) Cig Hk Wk cycles (zs = ceil(m/q) channels a column):
edge blocks have fewer rows per PE, never more, and a patch split leaves PEs idle where it is uneven. Summed over the blocks (the sum of
a product over independent axes is the product of the sums) and the groups, that is the layer's
compute cycles, exact for the mapping. Transfers move the traffic's words at the off-chip bandwidth.
The tiling fills the buffer (its peak words are at most S), so the next tile cannot be loaded while
this one is computed: the layer's time is compute plus transfer, which is at least the limit
max(MACs / peak, lower bound / bandwidth).

Energy. Each level's accesses times its energy per word: DRAM reads (inputs, weights, partial sums read
back) and writes (outputs), the global buffer's fills and its reads by the array, the PE registers'
reads and writes (GRegs and LRegs, core.bound.onchip: the fastest split's counts), and one MAC energy per MAC. The limit is the
proven off-chip lower bound's words at the cheaper of a DRAM read or write, plus the MACs' energy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.bound.loopnest import Tiling, traffic_of
from core.bound.onchip import PeMapping, map_to_pes, per_pe_extent
from core.bound.shapes import ConvShape
from core.cost import Ceilings, CostRecord, Figure, LayerCost, layer_cost
from core.units import format_quantity

if TYPE_CHECKING:
    from core.bound.result import LayerAnalysis
    from core.workload import DataflowTarget

PJ = 1e-12


def compute_cycles(shape: ConvShape, t: Tiling, onchip: PeMapping) -> int:
    """Cycles the PE array computes the layer in (all groups), one MAC per PE per cycle."""
    g = shape.group_shape()
    return (shape.groups * g.Ci * g.Hk * g.Wk
            * per_pe_extent(g.B, t.n, onchip.split_b) * per_pe_extent(g.Ho, t.p, onchip.split_y)
            * per_pe_extent(g.Wo, t.q, onchip.split_x) * per_column_channels(g.Co, t.m, onchip.pe_cols))


def per_column_channels(extent: int, tile: int, pe_cols: int) -> int:
    """Sum over the output-channel tiles of the channels one PE column computes: each column owns
    ceil(tile / pe_cols) channels of every block, so a shorter last tile fills fewer columns."""
    zs = -(-tile // pe_cols)
    full, rest = divmod(extent, tile)
    return full * zs + min(rest, zs)


@dataclass(kw_only=True)
class LayerTimeEnergy:
    """One layer's time and energy on the accelerator, term by term (the cost record holds the sums)."""

    name: str
    tiling: Tiling                # the costed dataflow: the least of the objective over the space
    cycles: int
    split: list[int]              # PE rows split the block's batch, output rows, output columns: pb, py, px
    utilisation: float            # MACs / (cycles x PEs)
    compute_s: float
    transfer_s: float
    dram_j: float
    gbuf_j: float
    rf_j: float
    mac_j: float
    energy_lower_j: float         # the layer's energy limit (also in the cost record)


@dataclass(kw_only=True)
class DataflowCosting:
    """The accelerator the costs were computed for (beside the result's memory and PE array), each
    layer's time and energy terms, and the cost record."""

    objective: str                # what the costed dataflow minimises (core.bound.objective.OBJECTIVES)
    clock_mhz: float
    bandwidth_gbps: float
    energy_pj: dict[str, float]   # per word: dram_read, dram_write, gbuf_read, gbuf_write, rf_read, rf_write; mac
    layers: list[LayerTimeEnergy]
    record: CostRecord


def check_dram(shapes: list[ConvShape], t: "DataflowTarget") -> None:
    """InputError when some layer's inputs, weights and outputs do not fit in the DRAM together."""
    from core.errors import InputError

    for s in shapes:
        need = (s.inputs + s.weights + s.outputs) * t.word_bits // 8
        if need > t.dram_bytes:
            raise InputError(f"layer {s.name} needs {need} bytes of DRAM for its inputs, weights and outputs; the "
                             f"target has {t.dram_bytes}", "target.dram_bytes")


def ceilings_of(t: "DataflowTarget") -> Ceilings:
    word_bytes = t.word_bits / 8
    return Ceilings(peak_macs_per_s=t.pes * t.clock_mhz * 1e6, bandwidth_bytes_per_s=t.bandwidth_gbps * 1e9,
                    mac_j=t.mac_pj * PJ, dram_j_per_byte=min(t.dram_read_pj, t.dram_write_pj) * PJ / word_bytes)


def target_words(t: "DataflowTarget") -> str:
    return (f"dataflow accelerator: {t.pe_rows}x{t.pe_cols} PEs at {t.clock_mhz:g} MHz, "
            f"{format_quantity(t.memory_bytes, 'B')} buffer, {t.word_bits}-bit words, {t.bandwidth_gbps:g} GB/s")


def cost_layer(l: "LayerAnalysis", t: "DataflowTarget", objective: str = "traffic") -> tuple[LayerTimeEnergy, LayerCost]:
    """One layer's time and energy terms and its costs, for the dataflow of the least `objective`
    (core.bound.objective) mapped by its fastest split."""
    from core.bound.objective import search_for

    found = search_for(l.shape, t, objective)
    if found is None:
        raise rf_too_small(l, t)
    return cost_tiling(l, found.tiling, t)


def rf_too_small(l: "LayerAnalysis", t: "DataflowTarget") -> Exception:
    """Why no dataflow of the space was found: the register file holds too few partial sums (InputError,
    naming the field), or, since the engine checked that the layer fits the buffer, a fault here."""
    from core.bound.objective import least_rf_words
    from core.errors import InputError

    need = least_rf_words(l.shape, t)
    if need is None:            # the layer fits (the engine checked): the space always holds a tiling
        return RuntimeError(f"no dataflow of layer {l.name} fits {t.memory_words} words")
    return InputError(f"the register file is too small for layer {l.name}: every dataflow of the search's space "
                      f"keeps at least {need} partial sums in each PE ({need * t.word_bits / 8:g} B of "
                      f"{t.word_bits}-bit words), and the target's register file holds {t.rf_bytes} B",
                      "target.rf_bytes")


def cost_tiling(l: "LayerAnalysis", tiling: Tiling, t: "DataflowTarget") -> tuple[LayerTimeEnergy, LayerCost]:
    """One layer's time and energy terms and its costs for one tiling, mapped by its fastest split."""
    tr = traffic_of(l.shape, tiling)
    c = ceilings_of(t)
    word_bytes = t.word_bits / 8
    oc = map_to_pes(l.shape, tiling, t.pe_rows, t.pe_cols, fastest=True, rf_words=t.rf_words)
    cycles = compute_cycles(l.shape, tiling, oc)
    compute_s = cycles / (t.clock_mhz * 1e6)
    transfer_s = tr.total * word_bytes / c.bandwidth_bytes_per_s
    dram = (tr.reads * t.dram_read_pj + tr.output_writes * t.dram_write_pj) * PJ
    gbuf = (oc.gbuf_reads * t.gbuf_read_pj + oc.gbuf_writes * t.gbuf_write_pj) * PJ
    rf = ((oc.greg_reads + oc.lreg_reads) * t.rf_read_pj + (oc.greg_writes + oc.lreg_writes) * t.rf_write_pj) * PJ
    mac = l.macs * t.mac_pj * PJ
    cost = layer_cost(l.name, l.macs, c, l.bound.reference * word_bytes, time_s=compute_s + transfer_s,
                      offchip_bytes=tr.total * word_bytes, energy_j=dram + gbuf + rf + mac)
    assert cost.energy_j.limit is not None
    term = LayerTimeEnergy(name=l.name, tiling=tiling, cycles=cycles, split=[oc.split_b, oc.split_y, oc.split_x],
                           utilisation=l.macs / (cycles * t.pes) if cycles else 0.0, compute_s=compute_s,
                           transfer_s=transfer_s, dram_j=dram, gbuf_j=gbuf, rf_j=rf, mac_j=mac,
                           energy_lower_j=cost.energy_j.limit)
    return term, cost


def costing_of(parts: list[tuple[LayerTimeEnergy, LayerCost]], t: "DataflowTarget",
               objective: str = "traffic") -> DataflowCosting:
    """The network's costing from its layers' (cost_layer), its record checked against its limits."""
    record = CostRecord.of(target_words(t), ceilings_of(t), [c for _, c in parts])
    wrong = record.problems()
    if wrong:               # the model broke a limit it must meet: a fault here, not the user's input
        raise RuntimeError(f"the cost record fails its own check: {wrong[0][0]}: {wrong[0][1]}")
    energies = {"dram_read": t.dram_read_pj, "dram_write": t.dram_write_pj, "gbuf_read": t.gbuf_read_pj,
                "gbuf_write": t.gbuf_write_pj, "rf_read": t.rf_read_pj, "rf_write": t.rf_write_pj, "mac": t.mac_pj}
    return DataflowCosting(objective=objective, clock_mhz=t.clock_mhz, bandwidth_gbps=t.bandwidth_gbps,
                           energy_pj=energies, layers=[term for term, _ in parts], record=record)


def cost_layers(layers: "list[LayerAnalysis]", t: "DataflowTarget", objective: str = "traffic") -> DataflowCosting:
    """The time and energy of every analysed layer's dataflow of the least `objective`, and the record."""
    return costing_of([cost_layer(l, t, objective) for l in layers], t, objective)


def _pct(value: float | None, limit: float | None) -> str:
    return f"{value / limit:6.2f}x" if value is not None and limit else "      -"


def cost_text(c: DataflowCosting) -> list[str]:
    """The cost table of the text output: per layer the time and energy against their limits."""
    r = c.record
    head = (f"{'layer':10s} {'cycles':>11s} {'util':>5s} {'time ms':>9s} {'limit':>9s} {'/limit':>7s} "
            f"{'energy uJ':>10s} {'limit':>10s} {'/limit':>7s} {'DRAM':>5s} {'buf':>5s} {'reg':>5s} {'MAC':>5s}")
    from core.bound.objective import OBJECTIVES

    lines = [f"Cost of the dataflow of the {OBJECTIVES.get(c.objective, c.objective)} on the {r.target}; energy per word {', '.join(f'{k} {v:g}' for k, v in c.energy_pj.items())} pJ:",
             head, "-" * len(head)]
    for t, l in zip(c.layers, r.layers):
        e = l.energy_j.value or 0.0
        share = [f"{100 * x / e:4.0f}%" if e else "    -" for x in (t.dram_j, t.gbuf_j, t.rf_j, t.mac_j)]
        lines.append(f"{t.name[:10]:10s} {t.cycles:11d} {t.utilisation:5.2f} {(l.time_s.value or 0) * 1e3:9.4f} "
                     f"{(l.time_s.limit or 0) * 1e3:9.4f} "
                     f"{_pct(l.time_s.value, l.time_s.limit)} {e * 1e6:10.3f} "
                     f"{(l.energy_j.limit or 0) * 1e6:10.3f} {_pct(l.energy_j.value, l.energy_j.limit)} "
                     + " ".join(share))
    tot = r.total
    lines += ["-" * len(head),
              f"{'total':10s} {sum(t.cycles for t in c.layers):11d} {'':5s} {(tot.time_s.value or 0) * 1e3:9.4f} "
              f"{(tot.time_s.limit or 0) * 1e3:9.4f} {_pct(tot.time_s.value, tot.time_s.limit)} "
              f"{(tot.energy_j.value or 0) * 1e6:10.3f} {(tot.energy_j.limit or 0) * 1e6:10.3f} "
              f"{_pct(tot.energy_j.value, tot.energy_j.limit)}",
              "Modelled: time = compute cycles of the fastest PE split at the clock + the dataflow's traffic at the "
              "bandwidth (no overlap: the tiles fill the buffer); limit = max(MACs / peak, proven bound / bandwidth). "
              "Energy = each level's accesses x its energy per word + MACs x MAC energy; limit = proven bound x the "
              "cheaper DRAM access + MACs x MAC energy. util = MACs / (cycles x PEs). The costed dataflow minimises the "
              "objective over the optimal dataflow's space (for traffic: ties to the least latency), so its tiling "
              "may differ from the table's. docs/targets.md."]
    return lines


def _si(value: float | None, unit: str) -> str:
    """A time or energy with the prefix that reads best (43.48 ms, 19.68 mJ, 336 us)."""
    if value is None:
        return "—"
    for scale, prefix in ((1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")):
        if abs(value) >= scale or scale == 1e-12:
            return f"{value / scale:.4g} {prefix}{unit}"
    return f"{value:.4g} {unit}"


def cost_words(c: DataflowCosting | None) -> str:
    """The costed totals in words, under the bound tab's table: each against its limit."""
    from core.bound.objective import OBJECTIVES

    if c is None:
        return ""
    t = c.record.total

    def against(f: Figure, unit: str, scale: float = 1.0, what: str = "its limit") -> str:
        if f.value is None or f.limit is None:
            return "—"
        shown = (lambda v: _si(v, unit)) if unit in ("s", "J") else (lambda v: f"{v / scale:.4g} {unit}")
        ratio = f"{f.value / f.limit:.2f}x {what} " if f.limit else f"{what} "
        return f"{shown(f.value)} ({ratio}{shown(f.limit)})"

    return (f"On the accelerator ({c.clock_mhz:g} MHz, {c.bandwidth_gbps:g} GB/s), the dataflow of the "
            f"{OBJECTIVES.get(c.objective, c.objective)}: time {against(t.time_s, 's')}, energy "
            f"{against(t.energy_j, 'J')}, off-chip {against(t.offchip_bytes, 'MB', 1e6, 'the proven bound')}. "
            "Modelled; per layer in the text output and --json (docs/targets.md).")
