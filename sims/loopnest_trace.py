"""Trace simulator: run a tiled convolution loop nest with an explicit on-chip buffer and count words.

DRAM holds the input, weight and output arrays. The buffer holds one tile of each tensor. Moving
to a new loop iteration fetches any tile that changed (input tiles with their halo: exactly the
input rows and columns some window of the tile reads, so zero padding, which is generated on chip,
and rows a stride larger than the kernel skips are never fetched; a sliding tiling's next tile along
the sweep, the same batch and channel tile one step down or right, keeps the rows or columns the
previous tile holds, copied from the buffer, and fetches the others), writes a replaced partial-sum
tile back to DRAM, and reads it back if that output tile was started before. The MACs are computed
from the buffered data only (rows not fetched are zeros on chip), and the final DRAM output is
compared with a direct convolution on inputs with no zero, so a tiling that forgot a word would
produce wrong numbers, not just wrong counts. The buffer footprint is checked against S at every
step. A streaming tiling computes each step one output row (column) at a time: an input row
(column) is fetched just before the first of the step's output rows that reads it and dropped after
the last, and the footprint is checked after every fetch. Used by tests to confirm
`core.bound.loopnest` word for word.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from core.bound.bounds import axes
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
    x = rng.integers(1, 5, size=(shape.B, shape.Ci, shape.Hi, shape.Wi)) * rng.choice([-1, 1], size=(shape.B, shape.Ci, shape.Hi, shape.Wi))
    x = x.astype(np.float64)                  # no zero input: a row that was needed but not fetched shows
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

    def write_back(key: tuple, co0: int, tile: np.ndarray) -> None:
        """Store psum tile `key` (its N, M, P, Q tile indices) of the group from output channel co0
        to DRAM: a tile the nest replaces, and the group's last one."""
        (a0, a1), (b0, b1) = ranges["N"][key[0]], ranges["M"][key[1]]
        (e0, e1), (f0, f1) = ranges["P"][key[2]], ranges["Q"][key[3]]
        y_dram[a0:a1, co0 + b0:co0 + b1, e0:e1, f0:f1] = tile
        counts.output_writes += tile.size
        log("outputs", "write", tile.size)

    ay, ax = axes(shape)

    for g in range(shape.groups):
        ci0, co0 = g * shape.Cig, g * shape.Cog
        res: dict[str, tuple | None] = {"in": None, "w": None, "out": None}
        data: dict[str, np.ndarray] = {}
        started: set[tuple] = set()
        in_rows = in_cols = np.zeros(0, dtype=np.int64)             # what the input tile on chip holds
        held = 0                                                 # a tensor held for the whole group
        if tiling.hold == "W":
            w_held = w[co0:co0 + shape.Cog].copy()
            held = w_held.size
            counts.weight_reads += held
        elif tiling.hold == "I":
            used_y, used_x = ay.rows_read(0, shape.Ho), ax.rows_read(0, shape.Wo)
            x_held = np.zeros_like(x[:, ci0:ci0 + shape.Cig])      # rows no window reads stay unloaded
            x_held[:, :, used_y[:, None], used_x] = x[:, ci0:ci0 + shape.Cig][:, :, used_y[:, None], used_x]
            held = x.shape[0] * shape.Cig * used_y.size * used_x.size
            counts.input_reads += held
        for idx in itertools.product(*(range(len(ranges[dim])) for dim in order)):
            pos = dict(zip(order, idx))
            (n0, n1), (m0, m1), (c0, c1) = ranges["N"][pos["N"]], ranges["M"][pos["M"]], ranges["C"][pos["C"]]
            (p0, p1), (q0, q1) = ranges["P"][pos["P"]], ranges["Q"][pos["Q"]]
            counts.steps += 1
            key_out = (pos["N"], pos["M"], pos["P"], pos["Q"])
            if res["out"] != key_out:
                if res["out"] is not None:                       # write the replaced psum tile back
                    write_back(res["out"], co0, data["out"])
                if key_out in started:                           # resume a spilled psum tile
                    data["out"] = y_dram[n0:n1, co0 + m0:co0 + m1, p0:p1, q0:q1].copy()
                    counts.output_reads += data["out"].size
                    log("outputs", "read", data["out"].size)
                else:
                    data["out"] = np.zeros((n1 - n0, m1 - m0, p1 - p0, q1 - q0))
                    started.add(key_out)
                res["out"] = key_out
            key_w = (pos["M"], pos["C"])
            if tiling.hold == "W":
                data["w"] = w_held[m0:m1, c0:c1]                   # on chip already
            elif res["w"] != key_w:
                data["w"] = w[co0 + m0:co0 + m1, c0:c1].copy()
                counts.weight_reads += data["w"].size
                log("weights", "read", data["w"].size)
                res["w"] = key_w
            key_in = (pos["N"], pos["C"], pos["P"], pos["Q"])
            rows, cols = ay.rows_read(p0, p1), ax.rows_read(q0, q1)     # what the windows touch
            if tiling.stream:
                if res["in"] == key_in:
                    raise ValueError(f"{tiling}: the nest keeps the input tile for the next step, so it cannot stream")
                res["in"] = key_in
                _stream_step(shape, tiling, S, counts, x[n0:n1, ci0 + c0:ci0 + c1], data, (p0, p1), (q0, q1),
                             held if tiling.hold == "W" else data["w"].size, log)
                continue
            if tiling.hold == "I":
                data["in"] = x_held[n0:n1, c0:c1][:, :, rows][:, :, :, cols]      # on chip already
            elif res["in"] != key_in:
                prev = res["in"]
                src = x[n0:n1, ci0 + c0:ci0 + c1]
                if (tiling.slide and prev is not None and prev[:2] == key_in[:2]
                        and ((prev[3] == key_in[3] and key_in[2] == prev[2] + 1)
                             or (prev[2] == key_in[2] and key_in[3] == prev[3] + 1))):
                    # The next tile along the sweep: rows (columns) the previous tile read stay on
                    # chip, taken from the buffer; only the others come from DRAM.
                    along_p = key_in[2] == prev[2] + 1
                    new_idx, old_idx = (rows, in_rows) if along_p else (cols, in_cols)
                    kept = np.isin(new_idx, old_idx)
                    where = np.searchsorted(old_idx, new_idx[kept])
                    tile = np.empty((n1 - n0, c1 - c0, rows.size, cols.size))
                    if along_p:
                        tile[:, :, kept] = data["in"][:, :, where]
                        tile[:, :, ~kept] = src[:, :, rows[~kept]][:, :, :, cols]
                        fetched = (n1 - n0) * (c1 - c0) * int((~kept).sum()) * cols.size
                    else:
                        tile[:, :, :, kept] = data["in"][:, :, :, where]
                        tile[:, :, :, ~kept] = src[:, :, rows][:, :, :, cols[~kept]]
                        fetched = (n1 - n0) * (c1 - c0) * rows.size * int((~kept).sum())
                    data["in"] = tile
                else:
                    data["in"] = src[:, :, rows][:, :, :, cols].copy()
                    fetched = data["in"].size
                counts.input_reads += fetched
                log("inputs", "read", fetched)
                res["in"] = key_in
                in_rows, in_cols = rows, cols
            words = (held if tiling.hold == "I" else data["in"].size) + \
                (held if tiling.hold == "W" else data["w"].size) + data["out"].size
            counts.peak_words = max(counts.peak_words, words)
            if words > S:
                raise BufferOverflow(f"{words} words resident at step {counts.steps}, buffer holds {S}")
            # Compute from on-chip data only: zero padding is made here, not read from DRAM.
            hy = (p1 - p0 - 1) * D + d * (shape.Hk - 1) + 1
            hx = (q1 - q0 - 1) * D + d * (shape.Wk - 1) + 1
            ry0, rx0 = p0 * D - P, q0 * D - P                              # first row of the span, padding included
            local = np.zeros((n1 - n0, c1 - c0, hy, hx))
            local[:, :, (rows - ry0)[:, None], cols - rx0] = data["in"]
            for r in range(shape.Hk):
                for s in range(shape.Wk):
                    patch = local[:, :, r * d: r * d + (p1 - p0 - 1) * D + 1: D, s * d: s * d + (q1 - q0 - 1) * D + 1: D]
                    data["out"] += np.einsum("ncpq,mc->nmpq", patch, data["w"][:, :, r, s])
        last = res["out"]
        assert last is not None         # set by the loop's first step
        write_back(last, co0, data["out"])
    counts.max_abs_error = float(np.abs(y_dram - direct_conv(x, w, shape)).max())
    return counts


def _stream_step(shape: ConvShape, tiling: Tiling, S: int, counts: TraceCounts, src: np.ndarray,
                 data: dict[str, np.ndarray], prange: tuple[int, int], qrange: tuple[int, int], w_words: int,
                 log: Callable[[str, str, int], None]) -> None:
    """One step of a streaming tiling: the output tile (resident in `data["out"]`) is computed one
    output line at a time (rows for stream "P", columns for "Q"); each input line is fetched from
    `src` (this step's batch and channel tile) before the first output line that reads it and
    dropped after the last."""
    D, P, d = shape.stride, shape.pad, shape.dilation
    ay, ax = axes(shape)
    along, across = (ay, ax) if tiling.stream == "P" else (ax, ay)
    (o0, o1), (a0, a1) = (prange, qrange) if tiling.stream == "P" else (qrange, prange)
    k_along, k_across = (shape.Hk, shape.Wk) if tiling.stream == "P" else (shape.Wk, shape.Hk)
    others = across.rows_read(a0, a1)                              # the columns (rows) every line holds
    start = a0 * D - P                                             # first column of the span, padding included
    span = (a1 - a0 - 1) * D + d * (k_across - 1) + 1
    reads = {o: [int(h) for h in along.rows_read(o, o + 1)] for o in range(o0, o1)}
    last: dict[int, int] = {}
    for o in range(o0, o1):
        for h in reads[o]:
            last[h] = o
    live: dict[int, np.ndarray] = {}
    line_words = src.shape[0] * src.shape[1] * others.size
    taps = (np.arange(k_across) * d)[:, None] + np.arange(a1 - a0) * D    # span column of each (tap, output)
    # the weights as (m, c, tap along the stream, tap across it)
    wts = data["w"] if tiling.stream == "P" else data["w"].transpose(0, 1, 3, 2)
    for o in range(o0, o1):
        for h in reads[o]:
            if h not in live:
                live[h] = src[:, :, h, others] if tiling.stream == "P" else src[:, :, others, h]
                counts.input_reads += line_words
                log("inputs", "read", line_words)
        words = len(live) * line_words + w_words + data["out"].size
        counts.peak_words = max(counts.peak_words, words)
        if words > S:
            raise BufferOverflow(f"{words} words resident at step {counts.steps}, buffer holds {S}")
        # The line's outputs from the lines on chip only: kernel row r reads line o*D - P + r*d, and
        # one not on chip (padding, or a row no window reads) stays zero.
        lines = np.zeros(src.shape[:2] + (k_along, span))
        for r in range(k_along):
            h = o * D - P + r * d
            if h in live:
                lines[:, :, r, others - start] = live[h]
        acc = np.tensordot(lines[:, :, :, taps], wts, axes=([1, 2, 3], [1, 2, 3]))    # (n, a, m)
        if tiling.stream == "P":
            data["out"][:, :, o - o0, :] += acc.transpose(0, 2, 1)
        else:
            data["out"][:, :, :, o - o0] += acc.transpose(0, 2, 1)
        for h in [h for h, end in last.items() if end == o]:
            live.pop(h, None)


@dataclass
class OnChipCounts:
    """Words moved on chip by the paper's PE-array mapping (core.bound.onchip), counted as they move."""

    gbuf_input_reads: int = 0
    gbuf_weight_reads: int = 0
    greg_input_writes: int = 0
    greg_weight_writes: int = 0
    greg_reads: int = 0
    lreg_writes: int = 0
    output_drain: int = 0
    cycles: int = 0                # the array's compute cycles: per channel step, the busiest PE's MACs
    pe_rows_used: int = 0
    max_psums_per_pe: int = 0
    max_abs_error: float = 0.0


def _split(a: int, b: int, parts: int) -> list[tuple[int, int]]:
    """[a, b) cut into pieces of ceil((b - a) / parts), as the PE rows share a block's outputs."""
    sub = -(-(b - a) // parts)
    return [(s, min(s + sub, b)) for s in range(a, b, sub)]


def simulate_onchip(shape: ConvShape, tiling: Tiling, pe_rows: int, pe_cols: int, split: tuple[int, int, int],
                    group_rows: int = 4, group_cols: int = 4, seed: int = 0) -> OnChipCounts:
    """Run the output-stationary dataflow on a p x q PE array, block by block and channel step by
    channel step, and count what moves between the global buffer (GBuf), the global registers (GRegs)
    and the PEs' local registers (LRegs).

    The block's b*y*x outputs are split over the PE rows into `split` = (pb, py, px) patches, its z
    output channels over the columns (ceil(z/q) each). Per channel step the GBuf sends each PE row the
    input rows and columns its patch's windows read (to the GRegs of every group of `group_cols` PEs
    along the row) and each weight once (to the GRegs of every group of `group_rows` PEs down its
    column); each MAC reads its input and weight from the GRegs (two reads) and accumulates into its
    PE's LReg (one write), padding included, as the array computes whole windows; finished sums
    drain once. Outputs are computed from the PEs' own registers and checked against a direct
    convolution, so a patch that missed a row gives wrong numbers, not only wrong counts."""
    if not tiling.order.endswith("C"):
        raise ValueError("the PE mapping is the output-stationary dataflow: input channels innermost")
    rng = np.random.default_rng(seed)
    x = (rng.integers(1, 5, size=(shape.B, shape.Ci, shape.Hi, shape.Wi))
         * rng.choice([-1, 1], size=(shape.B, shape.Ci, shape.Hi, shape.Wi))).astype(np.float64)
    w = rng.integers(-3, 4, size=(shape.Co, shape.Cig, shape.Hk, shape.Wk)).astype(np.float64)
    out = np.zeros((shape.B, shape.Co, shape.Ho, shape.Wo))
    counts = OnChipCounts()
    D, P, d = shape.stride, shape.pad, shape.dilation
    ay, ax = axes(shape)
    pb, py, px = split
    zs = -(-tiling.m // pe_cols)
    col_groups, row_groups = -(-pe_cols // group_cols), -(-pe_rows // group_rows)
    for g in range(shape.groups):
        ci0, co0 = g * shape.Cig, g * shape.Cog
        for (n0, n1), (m0, m1), (p0, p1), (q0, q1) in itertools.product(
                _ranges(shape.B, tiling.n), _ranges(shape.Cog, tiling.m), _ranges(shape.Ho, tiling.p),
                _ranges(shape.Wo, tiling.q)):
            patches = list(itertools.product(_split(n0, n1, pb), _split(p0, p1, py), _split(q0, q1, px)))
            columns = _ranges(m1 - m0, zs)
            counts.pe_rows_used = max(counts.pe_rows_used, len(patches))
            if len(patches) > pe_rows or len(columns) > pe_cols:
                raise ValueError(f"block needs {len(patches)} x {len(columns)} PEs, the array has {pe_rows} x {pe_cols}")
            lregs = {(i, j): np.zeros((b1 - b0, c1 - c0, y1 - y0, x1 - x0))
                     for i, ((b0, b1), (y0, y1), (x0, x1)) in enumerate(patches) for j, (c0, c1) in enumerate(columns)}
            counts.max_psums_per_pe = max(counts.max_psums_per_pe, max(v.size for v in lregs.values()))
            for c0, c1 in _ranges(shape.Cig, tiling.c):
                k = c1 - c0
                wg = w[co0 + m0:co0 + m1, c0:c1]                        # each weight leaves the GBuf once
                counts.gbuf_weight_reads += wg.size
                counts.greg_weight_writes += wg.size * row_groups
                busiest = 0
                for i, ((b0, b1), (y0, y1), (x0, x1)) in enumerate(patches):
                    rows, cols = ay.rows_read(y0, y1), ax.rows_read(x0, x1)
                    greg = x[b0:b1, ci0 + c0:ci0 + c1][:, :, rows][:, :, :, cols]    # this PE row's patch
                    counts.gbuf_input_reads += greg.size
                    counts.greg_input_writes += greg.size * col_groups
                    hy = (y1 - y0 - 1) * D + d * (shape.Hk - 1) + 1
                    hx = (x1 - x0 - 1) * D + d * (shape.Wk - 1) + 1
                    local = np.zeros((b1 - b0, k, hy, hx))              # padding and skipped rows: zeros
                    local[:, :, (rows - (y0 * D - P))[:, None], cols - (x0 * D - P)] = greg
                    for j, (e0, e1) in enumerate(columns):
                        acc = lregs[(i, j)]
                        for r in range(shape.Hk):
                            for s in range(shape.Wk):
                                patch = local[:, :, r * d: r * d + (y1 - y0 - 1) * D + 1: D,
                                              s * d: s * d + (x1 - x0 - 1) * D + 1: D]
                                acc += np.einsum("ncpq,mc->nmpq", patch, wg[e0:e1, :, r, s])
                        macs = acc.size * k * shape.Hk * shape.Wk
                        counts.greg_reads += 2 * macs
                        counts.lreg_writes += macs
                        busiest = max(busiest, macs)        # the PEs work in parallel, one MAC a cycle each
                counts.cycles += busiest
            for i, ((b0, b1), (y0, y1), (x0, x1)) in enumerate(patches):
                for j, (e0, e1) in enumerate(columns):
                    out[b0:b1, co0 + m0 + e0:co0 + m0 + e1, y0:y1, x0:x1] = lregs[(i, j)]
                    counts.output_drain += lregs[(i, j)].size
    counts.max_abs_error = float(np.abs(out - direct_conv(x, w, shape)).max())
    return counts
