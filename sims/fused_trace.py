"""Trace simulator of a fused chain (core.bound.fusion): run the fused schedule on numbers and count words.

DRAM holds the chain's input, every layer's weights and the last layer's output. For each image,
each strip of q output columns of the last layer and each band of p rows, the simulator works out
by itself (explicit loops over output rows and kernel taps) which rows of every tensor the band needs:
the band's rows of the last layer, then, layer by layer backwards, the rows that the rows it must
compute read. Rows already on chip from the previous band are kept; rows the band does not need
are dropped; the chain input's missing rows are loaded (only the strip's columns: other columns are
NaN on chip, so reading one would spoil the result), each layer computes its missing rows from
buffered data only, and the band's outputs are written. Held weights are loaded once; streamed
weights are loaded whenever a band computes rows of that layer. The footprint is checked against S
at every band, and the output is compared with direct convolutions. Used by tests to confirm
`core.bound.fusion.fused_traffic` word for word.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.bound.fusion import FusedSchedule
from core.bound.shapes import ConvShape
from sims.loopnest_trace import BufferOverflow, direct_conv


@dataclass
class FusedCounts:
    input_reads: int = 0
    weight_reads: int = 0
    output_writes: int = 0
    peak_words: int = 0
    max_abs_error: float = 0.0

    @property
    def total(self) -> int:
        return self.input_reads + self.weight_reads + self.output_writes


def _rows_read(s: ConvShape, out_rows: set[int], vertical: bool) -> set[int]:
    K, n = (s.Hk, s.Hi) if vertical else (s.Wk, s.Wi)
    got = set()
    for o in out_rows:
        for r in range(K):
            i = o * s.stride - s.pad + r * s.dilation
            if 0 <= i < n:
                got.add(i)
    return got


def _compute_row(s: ConvShape, w: np.ndarray, get_row, o: int, cols: list[int]) -> np.ndarray:
    """Output row o of layer s at columns `cols` (all output channels) from input rows `get_row(i)`."""
    out = np.zeros((s.Co, len(cols)))
    cidx = np.array(cols, dtype=np.int64)
    for r in range(s.Hk):
        i = o * s.stride - s.pad + r * s.dilation
        if not 0 <= i < s.Hi:
            continue
        row = get_row(i)                                     # (Ci, Wi), NaN where not on chip
        padded = np.zeros((s.Ci, s.Wi + 2 * s.pad + s.dilation * s.Wk))
        padded[:, s.pad:s.pad + s.Wi] = row
        for t in range(s.Wk):
            patch = padded[:, cidx * s.stride + t * s.dilation]    # (Ci, ncols), padded coordinates
            for g in range(s.groups):
                ci = slice(g * s.Cig, (g + 1) * s.Cig)
                co = slice(g * s.Cog, (g + 1) * s.Cog)
                out[co] += w[co, :, r, t] @ patch[ci]
    return out


def simulate_fused(chain: Sequence[ConvShape], sched: FusedSchedule, S: int, seed: int = 0) -> FusedCounts:
    rng = np.random.default_rng(seed)
    L = len(chain)
    first, last = chain[0], chain[-1]
    x = rng.uniform(0.5, 1.5, (first.B, first.Ci, first.Hi, first.Wi))
    ws = [rng.uniform(-1, 1, (s.Co, s.Cig, s.Hk, s.Wk)) for s in chain]
    dram_out = np.full((last.B, last.Co, last.Ho, last.Wo), np.nan)
    counts = FusedCounts()
    chans = [first.Ci] + [s.Co for s in chain]
    held = sum(s.weights for s, h in zip(chain, sched.hold) if h)
    streamed = max((s.Cig * s.Hk * s.Wk for s, h in zip(chain, sched.hold) if not h), default=0)
    counts.weight_reads += held
    for b in range(first.B):
        for s0 in range(0, last.Wo, sched.q):
            cols: list[set[int]] = [set()] * (L + 1)
            cols[L] = set(range(s0, min(s0 + sched.q, last.Wo)))
            for j in range(L, 0, -1):
                cols[j - 1] = _rows_read(chain[j - 1], cols[j], vertical=False)
            width = [sorted(c) for c in cols]
            buf: list[dict[int, np.ndarray]] = [dict() for _ in range(L)]   # tensor j < L: row -> (C, W)
            for t0 in range(0, last.Ho, sched.p):
                need: list[set[int]] = [set()] * (L + 1)
                new: list[set[int]] = [set()] * (L + 1)
                need[L] = new[L] = set(range(t0, min(t0 + sched.p, last.Ho)))
                for j in range(L, 0, -1):
                    need[j - 1] = _rows_read(chain[j - 1], new[j], vertical=True)
                    for r in list(buf[j - 1]):
                        if r not in need[j - 1]:
                            del buf[j - 1][r]
                    new[j - 1] = need[j - 1] - set(buf[j - 1])
                for r in sorted(new[0]):
                    row = np.full((first.Ci, first.Wi), np.nan)
                    row[:, width[0]] = x[b, :, r][:, width[0]]
                    buf[0][r] = row
                    counts.input_reads += first.Ci * len(width[0])
                for j in range(1, L + 1):
                    s = chain[j - 1]
                    if new[j] and width[j] and not sched.hold[j - 1]:
                        counts.weight_reads += s.weights
                    for o in sorted(new[j]):
                        vals = _compute_row(s, ws[j - 1], lambda i, jj=j - 1: buf[jj][i], o, width[j])
                        if j < L:
                            row = np.full((s.Co, s.Wo), np.nan)
                            row[:, width[j]] = vals
                            buf[j][o] = row
                        else:
                            dram_out[b, :, o, width[j]] = vals.T
                            counts.output_writes += s.Co * len(width[j])
                words = sum(len(buf[j]) * chans[j] * len(width[j]) for j in range(L))
                words += len(new[L]) * chans[L] * len(width[L]) + held + streamed
                if words > S:
                    raise BufferOverflow(f"{words} words on chip > S = {S}")
                counts.peak_words = max(counts.peak_words, words)
    ref = x
    for s, w in zip(chain, ws):
        ref = direct_conv(ref, w, s)
    counts.max_abs_error = float(np.nanmax(np.abs(dram_out - ref))) if not np.isnan(dram_out).any() else float("inf")
    return counts
