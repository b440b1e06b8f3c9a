"""The result of costing one network on one target: the cost record (core.cost) and how it was made.

Its metrics (latency, energy, off-chip traffic, each also against its limit on the target) are what a
study over target parameters optimises: they are declared here, with their units and better way, so a
study's objectives read them as data (core.metrics) whatever the target's kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.cost import CostRecord, Figure
from core.metrics import Metric
from core.results import EngineResult


def _value(f: Figure) -> float | None:
    return f.value


def _of_limit(f: Figure) -> float | None:
    return f.of_limit


def _share_run(record: CostRecord, macs: int) -> float | None:
    return sum(l.macs for l in record.layers if l.reason is None) / macs if macs else None


@dataclass(kw_only=True)
class TargetCostResult(EngineResult):
    VERSION = 1
    network: str                # the network in words (the zoo's title, or the ONNX file's name)
    source: str                 # as given: a zoo name or an ONNX file
    macs: int                   # the network's MACs (every convolution and fully connected layer)
    kind: str                   # the target's kind (core.kinds)
    engine: str                 # the costing's engine in words, e.g. "bound (optimal dataflow)"
    note: str                   # how it was costed: what is measured, what modelled
    record: CostRecord          # per layer and in total, each figure with its limit on the target

    METRICS = (
        Metric("latency_s", "Latency", "s", "lower", "time of one inference on the target (the cost record's total)",
               read=lambda r: _value(r.record.total.time_s)),
        Metric("energy_j", "Energy", "J", "lower", "energy of one inference (None: the target has no energy model)",
               read=lambda r: _value(r.record.total.energy_j)),
        Metric("offchip_bytes", "Off-chip traffic", "B", "lower", "bytes moved to and from off-chip memory",
               read=lambda r: _value(r.record.total.offchip_bytes)),
        Metric("throughput_per_s", "Throughput", "/s", "higher", "inferences per second at batch 1 (1 / latency)",
               read=lambda r: 1 / r.record.total.time_s.value if r.record.total.time_s.value else None),
        Metric("macs_run", "MACs run", "fraction", "higher",
               "the share of the network's MACs in layers the target runs (the totals leave the others out)",
               read=lambda r: _share_run(r.record, r.macs)),
        Metric("peak_macs_per_s", "Peak MAC rate", "MAC/s", None,
               "the compute the target is built with (its ceiling): a study weighs it against latency",
               read=lambda r: r.record.ceilings.peak_macs_per_s),
        Metric("latency_of_limit", "Latency / its limit", "×", "lower",
               "the latency over the least any schedule could reach on this target",
               read=lambda r: _of_limit(r.record.total.time_s)),
        Metric("energy_of_limit", "Energy / its limit", "×", "lower",
               "the energy over the least any schedule could spend on this target",
               read=lambda r: _of_limit(r.record.total.energy_j)),
    )
