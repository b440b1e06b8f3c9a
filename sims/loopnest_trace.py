"""Trace simulator: run a tiled convolution loop nest with an explicit on-chip buffer and count words.

DRAM holds the input, weight and output arrays. The buffer holds one tile of each tensor. Moving
to a new loop iteration fetches any tile that changed (input tiles with their halo, clipped at the
borders since zero padding is generated on chip), writes a replaced partial-sum tile back to DRAM,
and reads it back if that output tile was started before. The MACs are computed from the buffered
data only, and the final DRAM output is compared with a direct convolution, so a tiling that
forgot a word would produce wrong numbers, not just wrong counts. The buffer footprint is checked
against S at every step. Used by tests to confirm `core.bound.loopnest` word for word.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from core.bound.loopnest import Tiling
from core.bound.shapes import ConvShape


class BufferOverflow(RuntimeError):
    """The tiles resident at one moment need more than S words."""


@dataclass
class TraceCounts:
    input_reads: int = 0
    weight_reads: int = 0
    output_writes: int = 0
    output_reads: int = 0
    peak_words: int = 0
    steps: int = 0
    max_abs_error: float = 0.0
    log: list[tuple[str, str, int]] = field(default_factory=list)   # (tensor, op, words), first few

    @property
    def total(self) -> int:
        return self.input_reads + self.weight_reads + self.output_writes + self.output_reads


def direct_conv(x: np.ndarray, w: np.ndarray, shape: ConvShape) -> np.ndarray:
    """Reference convolution (cross-correlation, zero padding, groups) with numpy."""
    B, Ci, Hi, Wi = x.shape
    G, D, P, d = shape.groups, shape.stride, shape.pad, shape.dilation
    xp = np.zeros((B, Ci, Hi + 2 * P, Wi + 2 * P), dtype=np.float64)
    xp[:, :, P:P + Hi, P:P + Wi] = x
    out = np.zeros((B, shape.Co, shape.Ho, shape.Wo))
    cig, cog = shape.Cig, shape.Cog
    for g in range(G):
        xs = xp[:, g * cig:(g + 1) * cig]
        ws = w[g * cog:(g + 1) * cog]
        for r in range(shape.Hk):
            for s in range(shape.Wk):
                patch = xs[:, :, r * d: r * d + (shape.Ho - 1) * D + 1: D, s * d: s * d + (shape.Wo - 1) * D + 1: D]
                out[:, g * cog:(g + 1) * cog] += np.einsum("ncpq,mc->nmpq", patch, ws[:, :, r, s])
    return out


def _ranges(total: int, tile: int) -> list[tuple[int, int]]:
    return [(a, min(a + tile, total)) for a in range(0, total, tile)]


def simulate(shape: ConvShape, tiling: Tiling, S: int, seed: int = 0, keep_log: int = 0) -> TraceCounts:
    """Execute the tiled nest group by group and count every word moved between DRAM and buffer."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-4, 5, size=(shape.B, shape.Ci, shape.Hi, shape.Wi)).astype(np.float64)
    w = rng.integers(-3, 4, size=(shape.Co, shape.Cig, shape.Hk, shape.Wk)).astype(np.float64)
    y_dram = np.zeros((shape.B, shape.Co, shape.Ho, shape.Wo))
    counts = TraceCounts()
    D, P, d = shape.stride, shape.pad, shape.dilation
    ranges = {"N": _ranges(shape.B, tiling.n), "M": _ranges(shape.Cog, tiling.m), "C": _ranges(shape.Cig, tiling.c),
              "P": _ranges(shape.Ho, tiling.p), "Q": _ranges(shape.Wo, tiling.q)}
    order = tiling.order

    def log(tensor: str, op: str, words: int) -> None:
        if len(counts.log) < keep_log:
            counts.log.append((tensor, op, words))

    def in_window(o0: int, o1: int, k: int, size: int) -> tuple[int, int, int]:
        """Unclipped first input row, and the clipped [lo, hi) rows that exist in DRAM."""
        first = o0 * D - P
        last = (o1 - 1) * D - P + d * (k - 1)
        return first, max(first, 0), min(last, size - 1) + 1

    for g in range(shape.groups):
        ci0, co0 = g * shape.Cig, g * shape.Cog
        res: dict[str, tuple | None] = {"in": None, "w": None, "out": None}
        data: dict[str, np.ndarray] = {}
        started: set[tuple] = set()
        for idx in itertools.product(*(range(len(ranges[dim])) for dim in order)):
            pos = dict(zip(order, idx))
            (n0, n1), (m0, m1), (c0, c1) = ranges["N"][pos["N"]], ranges["M"][pos["M"]], ranges["C"][pos["C"]]
            (p0, p1), (q0, q1) = ranges["P"][pos["P"]], ranges["Q"][pos["Q"]]
            counts.steps += 1
            key_out = (pos["N"], pos["M"], pos["P"], pos["Q"])
            if res["out"] != key_out:
                if res["out"] is not None:                       # write the replaced psum tile back
                    on, om, op_, oq = res["out"]
                    (a0, a1), (b0, b1) = ranges["N"][on], ranges["M"][om]
                    (e0, e1), (f0, f1) = ranges["P"][op_], ranges["Q"][oq]
                    y_dram[a0:a1, co0 + b0:co0 + b1, e0:e1, f0:f1] = data["out"]
                    counts.output_writes += data["out"].size
                    log("outputs", "write", data["out"].size)
                if key_out in started:                           # resume a spilled psum tile
                    data["out"] = y_dram[n0:n1, co0 + m0:co0 + m1, p0:p1, q0:q1].copy()
                    counts.output_reads += data["out"].size
                    log("outputs", "read", data["out"].size)
                else:
                    data["out"] = np.zeros((n1 - n0, m1 - m0, p1 - p0, q1 - q0))
                    started.add(key_out)
                res["out"] = key_out
            key_w = (pos["M"], pos["C"])
            if res["w"] != key_w:
                data["w"] = w[co0 + m0:co0 + m1, c0:c1].copy()
                counts.weight_reads += data["w"].size
                log("weights", "read", data["w"].size)
                res["w"] = key_w
            key_in = (pos["N"], pos["C"], pos["P"], pos["Q"])
            ry0, ylo, yhi = in_window(p0, p1, shape.Hk, shape.Hi)
            rx0, xlo, xhi = in_window(q0, q1, shape.Wk, shape.Wi)
            if res["in"] != key_in:
                data["in"] = x[n0:n1, ci0 + c0:ci0 + c1, ylo:yhi, xlo:xhi].copy()
                counts.input_reads += data["in"].size
                log("inputs", "read", data["in"].size)
                res["in"] = key_in
            words = data["in"].size + data["w"].size + data["out"].size
            counts.peak_words = max(counts.peak_words, words)
            if words > S:
                raise BufferOverflow(f"{words} words resident at step {counts.steps}, buffer holds {S}")
            # Compute from on-chip data only: zero padding is made here, not read from DRAM.
            hy = (p1 - p0 - 1) * D + d * (shape.Hk - 1) + 1
            hx = (q1 - q0 - 1) * D + d * (shape.Wk - 1) + 1
            local = np.zeros((n1 - n0, c1 - c0, hy, hx))
            local[:, :, ylo - ry0:yhi - ry0, xlo - rx0:xhi - rx0] = data["in"]
            for r in range(shape.Hk):
                for s in range(shape.Wk):
                    patch = local[:, :, r * d: r * d + (p1 - p0 - 1) * D + 1: D, s * d: s * d + (q1 - q0 - 1) * D + 1: D]
                    data["out"] += np.einsum("ncpq,mc->nmpq", patch, data["w"][:, :, r, s])
        last = res["out"]
        assert last is not None         # set by the loop's first step
        on, om, op_, oq = last
        (a0, a1), (b0, b1) = ranges["N"][on], ranges["M"][om]
        (e0, e1), (f0, f1) = ranges["P"][op_], ranges["Q"][oq]
        y_dram[a0:a1, co0 + b0:co0 + b1, e0:e1, f0:f1] = data["out"]
        counts.output_writes += data["out"].size
        log("outputs", "write", data["out"].size)
    counts.max_abs_error = float(np.abs(y_dram - direct_conv(x, w, shape)).max())
    return counts
