"""DRAM cost models of the MERIT-z simulation: a flat rate, or DDR3-1600 row-buffer and burst timing.

The paper simulates its DRAM with Ramulator ("1-rank, 2-channel, DDR3 1600, 2Gbx8, and 3.2 GBps").
The default model moves footprint bytes at the configured peak rate (the 1 KB L1 absorbs misaligned
bursts). The "ddr3-1600" model keeps the same peak rate and latency but charges what a DDR3 rank does:

* tensors are stored densely, row-major; a tile reads one run per row of its footprint box (rows
  merge into one run where the box covers whole rows);
* data moves in whole bursts (BL8 on a 64-bit rank = 64 B): a run of L bytes starting `off` bytes
  into a burst costs ceil((off + L) / B) bursts. The offsets of a tile's runs are the lattice of its
  first address plus multiples of the row pitches (the simulation knows the first address of each
  tile; the tile search also averages over the tile grid's starts), and the cost is the mean over
  that lattice (mean_bursts). The paper's 1 KB L1, which would keep the partial bursts at a run's
  ends for the neighbouring tile, is not modelled: this is the pessimistic side, the flat model the
  optimistic one;
* each DRAM row (page) a tile touches is a row-buffer miss (hits are free). Consecutive pages sit in
  different banks, so activations overlap the data transfer of other banks, limited to four per tFAW
  window; the first one of a transfer is exposed: a transfer of N bytes with m misses takes
  max(N / bandwidth, m x tFAW / 4) + tRP + tRCD. The pages touched are the fewer of the runs' own
  pages and the pages the tile's address span covers. Same peak bandwidth and fixed latency as the
  flat model, so it never beats it.

Figures: JEDEC JESD79-3 DDR3-1600K (11-11-11): tCK = 1.25 ns, CL = tRCD = tRP = 13.75 ns, BL8, 8 banks,
tFAW = 30 ns (1 KB page); a 2 Gb x8
device (e.g. Micron MT41J256M8) has a 1 KB page, so a rank of eight has an 8 KB row. Writes are
assembled into whole lines by the Write Pipeline (paper, section V-A) and cost the flat rate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

DRAM_MODELS = ("flat", "ddr3-1600")


@dataclass(frozen=True)
class DramTiming:
    """Row/burst timing of one DDR standard speed bin (figures in the module docstring)."""

    name: str = "ddr3-1600"
    standard: str = "JEDEC JESD79-3 DDR3-1600K (11-11-11), 2Gb x8 devices, 1 rank"
    tck_ns: float = 1.25
    cl_ns: float = 13.75
    trcd_ns: float = 13.75
    trp_ns: float = 13.75
    tfaw_ns: float = 30.0          # four-activate window
    banks: int = 8
    burst_bytes: int = 64          # BL8 x 8 bytes (64-bit rank)
    page_bytes: int = 8192         # 1 KB page per x8 device, 8 devices per rank

    def miss_cycles(self, clock_hz: float) -> float:
        """Cycles of the accelerator clock an exposed row-buffer miss adds (precharge + activate)."""
        return (self.trp_ns + self.trcd_ns) * 1e-9 * clock_hz

    def activate_cycles(self, clock_hz: float) -> float:
        """Cycles per activation when they overlap other banks' transfers (tFAW / 4)."""
        return self.tfaw_ns / 4 * 1e-9 * clock_hz

    def transfer_cycles(self, nbytes: Any, misses: Any, bytes_per_cycle: float, clock_hz: float,
                        transfers: Any = 1) -> Any:
        """Cycles to move `nbytes` with `misses` row-buffer misses in `transfers` transfers."""
        busy = np.maximum(nbytes / bytes_per_cycle, misses * self.activate_cycles(clock_hz))
        return busy + np.where(misses > 0, transfers, 0) * self.miss_cycles(clock_hz)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


DDR3_1600 = DramTiming()


def pitches(shape: list[int]) -> list[int]:
    """Row-major pitches (words) of a dense tensor."""
    out = [1]
    for k in range(len(shape) - 1, 0, -1):
        out.insert(0, out[0] * shape[k])
    return out


def runs(fp: list[Any], shape: list[int]) -> tuple[Any, Any, list[Any]]:
    """(words per contiguous run, number of runs, per axis: True where the axis is merged into the
    run) of a box `fp` in a dense row-major tensor of `shape`: trailing axes the box covers whole merge
    with the next one. Works on numbers and on broadcastable arrays (the tile search)."""
    fp = [np.asarray(f, dtype=np.float64) for f in fp]
    run = fp[-1]
    merged = [np.zeros((), dtype=bool)] * len(fp)
    merged[-1] = np.ones((), dtype=bool)
    whole = np.ones((), dtype=bool)
    for k in range(len(fp) - 1, 0, -1):
        whole = whole & (fp[k] >= shape[k])
        merged[k - 1] = whole
        run = np.where(whole, run * fp[k - 1], run)
    vol = np.prod(np.broadcast_arrays(*fp), axis=0) if len(fp) > 1 else fp[0]
    return run, vol / run, merged


def mean_bursts(run_bytes: Any, step_bytes: Any, shift_bytes: Any, burst: int, unit: int = 1) -> Any:
    """Mean of ceil((off + L) / B) over the start offsets off = shift + k x step (mod B), k = 0, 1, ...:
    the multiples of g = gcd(step, B) shifted by shift mod g. Exact for one tile when step = 0 (then
    off = shift mod B). Offsets are multiples of `unit` (the word size). Works on broadcastable arrays."""
    run_bytes = np.asarray(run_bytes, dtype=np.float64)
    step = np.asarray(step_bytes, dtype=np.int64) % burst
    g = np.gcd(step, burst)
    g = np.where(step == 0, burst, g)
    shift = np.asarray(shift_bytes, dtype=np.int64) % g
    total = np.zeros(np.broadcast_shapes(np.shape(run_bytes), np.shape(g), np.shape(shift)))
    for off in range(0, burst, unit):
        hit = (off % g) == shift
        if np.any(hit):
            total = total + np.where(hit, np.ceil((off + run_bytes) / burst), 0.0)
    return total / (burst // g)


def burst_cost(fp: list[Any], shape: list[int], word_bytes: int, timing: DramTiming,
               step: Any = 0, shift: Any = 0) -> tuple[Any, Any]:
    """(bytes moved, expected row-buffer misses) to read the box `fp` of a dense tensor of `shape`
    whose first element is at word `shift` (+ a multiple of `step` when averaging over a tile grid)."""
    w, b, page = word_bytes, timing.burst_bytes, timing.page_bytes
    run, n, merged = runs(fp, shape)
    pitch = pitches(shape)
    g = np.asarray(step, dtype=np.int64)
    for k in range(len(fp) - 1):            # the runs start at multiples of the unmerged axes' pitches
        row = np.where(~merged[k] & (np.asarray(fp[k]) > 1), pitch[k], 0).astype(np.int64)
        g = np.gcd(g, row)
    nbytes = n * mean_bursts(run * w, g * w, np.asarray(shift) * w, b, w) * b
    span = np.ones((), dtype=np.float64)
    for k in range(len(fp)):
        span = span + (np.asarray(fp[k], dtype=np.float64) - 1) * pitch[k]
    pages_by_runs = n * (run * w + page - w) / page
    pages_by_span = (span * w + page - w) / page
    return nbytes, np.minimum(pages_by_runs, pages_by_span)
