"""The typed result of a target_cost run: one part of a comparison (core.comparison.ComparisonRow
without what only the whole comparison knows: the best marks, the run id)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.cost import CostRecord
from core.metrics import Metric
from core.results import EngineResult, optional_key


@dataclass(kw_only=True)
class TargetCostResult(EngineResult):
    network: str                        # the network's title
    source: str                         # a zoo name or an ONNX file
    macs: int                           # the network's
    target: str                         # the target's name
    kind: str                           # its kind (core.kinds)
    engine: str                         # the costing's engine in words ("" when none)
    note: str                           # how it was costed: what is measured, what modelled
    measured: bool                      # the part timed code on this machine
    seconds: float                      # how long the costing took
    covered_macs: int                   # MACs of the layers the target runs
    reason: str | None = optional_key()     # why nothing of the network runs there, in words
    record: CostRecord | None = optional_key()

    def validate(self, path: str = "result") -> None:
        super().validate(path)
        if self.record is not None:         # a stored record verifies itself (every figure at its limit or above)
            self.record.check(f"{path}.record")

    def row(self) -> Any:
        """The comparison's row of this part (core.comparison.ComparisonRow)."""
        from core.comparison import ComparisonRow

        return ComparisonRow(target=self.target, kind=self.kind, engine=self.engine, record=self.record,
                             reason=self.reason, note=self.note, measured=self.measured, seconds=self.seconds,
                             covered_macs=self.covered_macs)

    def _total(self, key: str) -> float | None:
        if self.record is None or self.reason is not None:
            return None
        value = getattr(self.record.total, key).value
        return None if value is None else float(value)

    METRICS = (
        Metric("latency_s", "Latency", "s", "lower", "the network's time on the target (batch 1)",
               read=lambda r: r._total("time_s")),
        Metric("energy_j", "Energy", "J", "lower", "the network's energy on the target (none without a model)",
               read=lambda r: r._total("energy_j")),
        Metric("offchip_bytes", "Off-chip traffic", "B", "lower", "bytes moved to and from off-chip memory",
               read=lambda r: r._total("offchip_bytes")),
        Metric("macs_run", "MACs run", "fraction", "higher", "the share of the network's MACs the target runs",
               read=lambda r: r.covered_macs / r.macs if r.macs else None),
    )
