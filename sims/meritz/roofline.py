"""Roofline ceilings of MERIT-z workloads: what compute throughput and DRAM bandwidth allow at best.

A transform needs `ops` ALU instructions (MACs x instructions per Loop() call, as the simulation
counts them) and must move at least its compulsory traffic: every input element it reads, once, and
every output once. With A ALUs at f Hz and B bytes/s the time is at least max(ops / A, bytes / B) / f,
so utilisation <= min(1, intensity x B / (A f)) with intensity = ops / bytes. A network's ceiling
sums the per-layer lower bounds. No tile, buffer or DRAM assumption of the simulation can beat it:
the tests check the simulation against it over the assumption grid.

The elements an operand reads are counted exactly: an index moves along one axis only (eq. 5), so
the read set is the product over axes of the coordinates each axis reaches (inside the tensor: reads
of zero padding need no DRAM traffic); tensors read by several operands count their largest read set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.merit_transform.strategies import get_strategy
from core.merit_transform.transform import MeritTransform, Operand

# The paper's stated MERIT-z parameters (section VI-C): 4 TAUs = 128 ALUs at 400 MHz, 16-bit words,
# DDR3-1600 at 3.2 GB/s.
PAPER_ALUS = 128
PAPER_CLOCK_HZ = 400e6
PAPER_DRAM_GBPS = 3.2
PAPER_WORD_BYTES = 2


def _axis_reads(op: Operand, axis: int, sizes: dict[str, int]) -> int:
    """Distinct coordinates of `axis` the operand reads inside the tensor."""
    coords = np.zeros(1, dtype=np.int64)
    for name, m in op.maps.items():
        if m.axis != axis:
            continue
        step = np.arange(sizes[name], dtype=np.int64) * m.stride
        coords = np.unique(np.add.outer(coords, step).ravel())
    offset = sum(m.offset for m in op.maps.values() if m.axis == axis)
    coords = coords + offset
    return int(np.count_nonzero((coords >= 0) & (coords < op.shape[axis])))


def distinct_reads(t: MeritTransform, op: Operand) -> int:
    """Elements of `op`'s tensor that the transform reads (each needs one DRAM read at least)."""
    sizes = dict(t.indices)
    return math.prod(_axis_reads(op, ax, sizes) for ax in range(len(op.shape)))


def compulsory_words(t: MeritTransform) -> int:
    """Input elements read (largest read set per tensor name) plus the outputs, written once."""
    per_tensor: dict[str, int] = {}
    for op in t.operands:
        per_tensor[op.name] = max(per_tensor.get(op.name, 0), distinct_reads(t, op))
    return sum(per_tensor.values()) + t.p_count


def useful_ops(t: MeritTransform) -> int:
    """ALU instructions of the Loop() calls: what the simulation's utilisation counts as useful."""
    return t.p_count * t.a_count * get_strategy(t.strategy).ops_per_iter


@dataclass
class Roofline:
    """The ceiling of a workload (one or more layers) under given compute and DRAM figures."""

    ops: int
    compulsory_bytes: int
    alus: int
    clock_hz: float
    dram_gbps: float
    min_cycles: float                   # sum over layers of max(compute, compulsory traffic)

    @property
    def intensity(self) -> float:
        """ALU instructions per compulsory DRAM byte."""
        return self.ops / self.compulsory_bytes if self.compulsory_bytes else math.inf

    @property
    def ceiling(self) -> float:
        return self.ops / (self.alus * self.min_cycles) if self.min_cycles else 0.0

    def gbps_needed(self, utilisation: float) -> float:
        """The DRAM bandwidth (GB/s) at which `utilisation` stops being memory-bound (single layer
        view: the whole workload's compulsory bytes against its ops)."""
        return utilisation * self.alus * self.clock_hz * self.compulsory_bytes / self.ops / 1e9 if self.ops else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"ops": self.ops, "compulsory_bytes": self.compulsory_bytes,
                "intensity_ops_per_byte": round(self.intensity, 3), "ceiling": round(self.ceiling, 4),
                "alus": self.alus, "clock_mhz": self.clock_hz / 1e6, "dram_gbps": self.dram_gbps}


def roofline(layers: list[MeritTransform], alus: int = PAPER_ALUS, clock_hz: float = PAPER_CLOCK_HZ,
             dram_gbps: float = PAPER_DRAM_GBPS, word_bytes: int = PAPER_WORD_BYTES) -> Roofline:
    """The roofline ceiling of running `layers` one after another."""
    bpc = dram_gbps * 1e9 / clock_hz
    ops = nbytes = 0
    cycles = 0.0
    for t in layers:
        o, b = useful_ops(t), compulsory_words(t) * word_bytes
        ops += o
        nbytes += b
        cycles += max(o / alus, b / bpc)
    return Roofline(ops, nbytes, alus, clock_hz, dram_gbps, cycles)
