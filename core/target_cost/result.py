"""The result of costing one network on one target: the cost record (core.cost) and how it was made.

It is both a comparison's part (core.comparison_run submits one run per target; `row()` gives the
comparison's row back) and a study point over target parameters. Its metrics (latency, energy,
off-chip traffic, each also against its limit on the target) are declared here, with their units and
better way, so a study's objectives and the comparison read them as data (core.metrics).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.cost import CostRecord, Figure
from core.metrics import Metric
from core.results import EngineResult, optional_key


def _total(r: "TargetCostResult", what: str) -> Figure | None:
    """A total of the record (None where the target runs nothing of the network)."""
    if r.record is None or r.reason is not None:
        return None
    f: Figure = getattr(r.record.total, what)
    return f


def _value(r: "TargetCostResult", what: str) -> float | None:
    f = _total(r, what)
    return None if f is None or f.value is None else float(f.value)


def _of_limit(r: "TargetCostResult", what: str) -> float | None:
    f = _total(r, what)
    return None if f is None else f.of_limit


@dataclass(kw_only=True)
class TargetCostResult(EngineResult):
    VERSION = 1
    network: str                # the network in words (the zoo's title, or the ONNX file's name)
    source: str                 # as given: a zoo name or an ONNX file
    macs: int                   # the network's MACs (every convolution and fully connected layer)
    target: str                 # the target in words (its kind's title; the comparison names its row itself)
    kind: str                   # the target's kind (core.kinds)
    engine: str                 # the costing's engine in words, its tab's title ("" when none)
    note: str                   # how it was costed: what is measured, what modelled
    measured: bool = False      # the part timed code on this machine
    seconds: float = 0.0        # how long the costing took
    covered_macs: int = 0       # MACs of the layers the target runs
    reason: str | None = optional_key()         # why nothing of the network runs there, in words
    record: CostRecord | None = optional_key()  # per layer and in total, each figure with its limit

    def validate(self, path: str = "result") -> None:
        super().validate(path)
        if self.record is not None:         # a stored record verifies itself (every figure at its limit or above)
            self.record.check(f"{path}.record")

    def row(self) -> Any:
        """The comparison's row of this part (core.comparison.ComparisonRow)."""
        from core.comparison import ComparisonRow, current_words

        return ComparisonRow(target=self.target, kind=self.kind, engine=current_words(self.engine), record=self.record,
                             reason=self.reason, note=self.note, measured=self.measured, seconds=self.seconds,
                             covered_macs=self.covered_macs)

    METRICS = (
        Metric("latency_s", "Latency", "s", "lower", "time of one inference on the target (the cost record's total)",
               read=lambda r: _value(r, "time_s")),
        Metric("energy_j", "Energy", "J", "lower", "energy of one inference (None: the target has no energy model)",
               read=lambda r: _value(r, "energy_j")),
        Metric("offchip_bytes", "Off-chip traffic", "B", "lower", "bytes moved to and from off-chip memory",
               read=lambda r: _value(r, "offchip_bytes")),
        Metric("throughput_per_s", "Throughput", "inferences/s", "higher", "inferences per second at batch 1 (1 / latency)",
               read=lambda r: 1 / v if (v := _value(r, "time_s")) else None),
        Metric("macs_run", "MACs run", "fraction", "higher",
               "the share of the network's MACs in layers the target runs (the totals leave the others out)",
               read=lambda r: r.covered_macs / r.macs if r.macs else None),
        Metric("peak_macs_per_s", "Peak MAC rate", "MAC/s", None,
               "the compute the target is built with (its ceiling): a study weighs it against latency",
               read=lambda r: r.record.ceilings.peak_macs_per_s if r.record is not None else None),
        Metric("latency_of_limit", "Latency / its limit", "×", "lower",
               "the latency over the least any schedule could reach on this target",
               read=lambda r: _of_limit(r, "time_s")),
        Metric("energy_of_limit", "Energy / its limit", "×", "lower",
               "the energy over the least any schedule could spend on this target",
               read=lambda r: _of_limit(r, "energy_j")),
    )
