"""A generic one-level loop-nest traffic model between DRAM and an on-chip buffer of S words.

The layer (one group) is tiled over batch N, output channels M, input channels C, output rows P
and output columns Q with tiles (n, m, c, p, q); the kernel window is never split. The five tile
loops run in a given order (outermost first). The buffer holds the current tile of each tensor:
inputs n*c*rows*cols (halo included, clipped at the borders), weights m*c*Hk*Wk, partial sums
n*m*p*q. A tile is fetched when the loop nest moves to a different tile of that tensor, so:

  fetches of tensor T = (product of trip counts of the loops that are irrelevant to T and sit above
  the innermost loop relevant to T that has more than one trip) x (all of T's distinct tiles).

Outputs whose reduction loop C sits above their innermost relevant loop spill: partial sums are
written back and read again when revisited (reads = writes - outputs). These counts are exact,
edges and halos included: the trace simulator in `sims/loopnest_trace.py` reproduces them word for
word. All functions take numpy arrays so a whole grid of tilings is evaluated at once.

A tensor may instead be *held*: all of one group's weights ("W"), or all the inputs its windows read
("I"), loaded once when the group starts and kept for the whole nest, whatever its loops do (what
ZigZag's uneven mappings call keeping an operand at the buffer level above every loop). A small
weight tensor is worth holding when the output channels are tiled inside a spatial tile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterable

import numpy as np

from core.bound.bounds import axes
from core.bound.geometry import axis_tables, distinct_tiles, rows_used
from core.bound.shapes import ConvShape
from core.results import to_plain

DIMS = ("N", "M", "C", "P", "Q")
RELEVANT = {"inputs": frozenset("NCPQ"), "weights": frozenset("MC"), "outputs": frozenset("NMPQ")}


@dataclass(frozen=True)
class Tiling:
    """Tile sizes (n = b, m = z, c = k, p = y, q = x in the paper's names), the loop order, and the
    tensor held on chip for the whole group ("W" weights, "I" inputs, "" none)."""

    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("b", "z", "k", "y", "x")     # the paper's names, in the JSON too

    n: int
    m: int
    c: int
    p: int
    q: int
    order: str = "NPQMC"
    hold: str = ""

    # The paper's names of the tile sizes
    @property
    def b(self) -> int:
        return self.n

    @property
    def z(self) -> int:
        return self.m

    @property
    def k(self) -> int:
        return self.c

    @property
    def y(self) -> int:
        return self.p

    @property
    def x(self) -> int:
        return self.q

    def to_json(self) -> dict[str, Any]:
        return to_plain(self)


@dataclass(frozen=True)
class Traffic:
    """Words moved between DRAM and the buffer for the whole layer (all groups)."""

    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("reads", "total")

    input_reads: int
    weight_reads: int
    output_writes: int
    output_reads: int
    memory: int          # peak words on chip

    @property
    def reads(self) -> int:
        return self.input_reads + self.weight_reads + self.output_reads

    @property
    def total(self) -> int:
        return self.reads + self.output_writes

    def to_json(self) -> dict[str, Any]:
        return to_plain(self)


def _ceil(a: Any, b: Any) -> Any:
    return -(-a // b)


def held_words(g: ConvShape, hold: str) -> int:
    """Words a held tensor of one group takes (and costs, loaded once): all weights, or every input
    some window reads; 0 when nothing is held."""
    if hold == "W":
        return g.Co * g.Ci * g.Hk * g.Wk
    if hold == "I":
        ay, ax = axes(g)
        return g.B * g.Ci * rows_used(ay) * rows_used(ax)
    if hold:
        raise ValueError(f"hold must be '', 'W' or 'I', got {hold!r}")
    return 0


def evaluate(g: ConvShape, order: str, n: Any, m: Any, c: Any, p: Any, q: Any, hold: str = "") -> dict[str, np.ndarray]:
    """Traffic of one group for arrays of tile sizes (broadcast together)."""
    ay, ax = axes(g)
    _, tot_y, peak_y = axis_tables(ay)
    _, tot_x, peak_x = axis_tables(ax)
    n, m, c, p, q = (np.asarray(v, dtype=np.int64) for v in (n, m, c, p, q))
    trips = {"N": _ceil(g.B, n), "M": _ceil(g.Co, m), "C": _ceil(g.Ci, c), "P": _ceil(g.Ho, p), "Q": _ceil(g.Wo, q)}
    factors = {}
    for tensor, rel in RELEVANT.items():
        active = np.zeros((), dtype=bool)
        f = np.ones((), dtype=np.int64)
        for dim in reversed(order):
            if dim in rel:
                active = active | (trips[dim] > 1)
            else:
                f = f * np.where(active, trips[dim], 1)
        factors[tensor] = f
    all_inputs = g.B * g.Ci * tot_y[p] * tot_x[q]
    outputs = g.B * g.Co * g.Ho * g.Wo
    in_tile, w_tile = n * c * peak_y[p] * peak_x[q], m * c * g.Hk * g.Wk
    input_reads = factors["inputs"] * all_inputs
    weight_reads = factors["weights"] * (g.Co * g.Ci * g.Hk * g.Wk)
    held = held_words(g, hold)
    if hold == "W":
        w_tile, weight_reads = np.full_like(w_tile, held), np.full_like(weight_reads, held)
    elif hold == "I":
        in_tile, input_reads = np.full_like(in_tile, held), np.full_like(input_reads, held)
    return {"input_reads": input_reads, "weight_reads": weight_reads,
            "output_writes": factors["outputs"] * outputs,
            "output_reads": (factors["outputs"] - 1) * outputs,
            "memory": in_tile + w_tile + n * m * p * q}


def traffic_of(shape: ConvShape, t: Tiling) -> Traffic:
    """Exact traffic of the whole layer (every group) for one tiling."""
    g = shape.group_shape()
    r = evaluate(g, t.order, t.n, t.m, t.c, t.p, t.q, t.hold)
    G = shape.groups
    return Traffic(input_reads=G * int(r["input_reads"]), weight_reads=G * int(r["weight_reads"]),
                   output_writes=G * int(r["output_writes"]), output_reads=G * int(r["output_reads"]),
                   memory=int(r["memory"]))


def min_memory(shape: ConvShape) -> int:
    """Words the smallest tile (one output, one channel, one window) needs."""
    g = shape.group_shape()
    return int(evaluate(g, "NMCPQ", 1, 1, 1, 1, 1)["memory"])


@dataclass(frozen=True)
class Family:
    """A dataflow: the loop orders it may use and any tile it fixes."""

    key: str
    title: str
    orders: tuple[str, ...]
    full_rows: bool = False          # q = Wo (whole output rows), as row-stationary designs stream rows
    note: str = ""


BASELINES: dict[str, Family] = {
    "ws": Family("ws", "Weight stationary", ("MCNPQ",),
                 note="weights of an (m, c) tile stay on chip while all outputs stream past; psums spill "
                      "when input channels are tiled"),
    "is": Family("is", "Input stationary", ("NCPQM",),
                 note="an input tile stays on chip while all output channels use it; psums spill when "
                      "input channels are tiled"),
    "os": Family("os", "Output stationary", ("MNPQC",),
                 note="psums stay on chip while input channels stream (c searched freely, tiles on the "
                      "coarse grid)"),
    "rs": Family("rs", "Row stationary (like)", ("MCNPQ",), full_rows=True,
                 note="filter rows stay while whole output rows stream (q = Wo), Eyeriss-style"),
}


def _best_m(g: ConvShape, S: int, n: np.ndarray, c: np.ndarray, p: np.ndarray, q: np.ndarray,
            hold: str = "") -> np.ndarray:
    """The largest useful output-channel tile that fits (traffic never grows with m); 0 if none fits.

    m is then shrunk to the smallest size with the same trip count, which saves memory for free.
    """
    ay, ax = axes(g)
    _, _, peak_y = axis_tables(ay)
    _, _, peak_x = axis_tables(ax)
    held = held_words(g, hold)
    rest = S - (held if hold == "I" else n * c * peak_y[p] * peak_x[q]) - (held if hold == "W" else 0)
    per_m = (0 if hold == "W" else c * g.Hk * g.Wk) + n * p * q
    m = np.minimum(np.maximum(rest, 0) // per_m, g.Co)
    trips = _ceil(g.Co, np.maximum(m, 1))
    return np.where(m >= 1, _ceil(g.Co, trips), 0)


@dataclass(frozen=True)
class SearchResult:
    tiling: Tiling
    traffic: Traffic
    evaluated: int


def _search(shape: ConvShape, S: int, orders: Iterable[str], ns: np.ndarray, cs: np.ndarray, ps: np.ndarray,
            qs: np.ndarray, holds: Iterable[str] = ("",)) -> SearchResult | None:
    """Minimum total traffic over the grid n x c x p x q (m maximal), the given orders and held tensors.

    Ties go to the smaller on-chip footprint, then to the earlier grid point (deterministic)."""
    g = shape.group_shape()
    best: tuple[int, int, Tiling] | None = None
    count = 0
    for hold in holds:
        for n_value in ns:           # one batch tile at a time keeps the arrays small for large batches
            n, c, p, q = np.meshgrid(np.array([n_value]), cs, ps, qs, indexing="ij", sparse=False)
            n, c, p, q = (a.ravel() for a in (n, c, p, q))
            m = _best_m(g, S, n, c, p, q, hold)
            ok = m >= 1
            if not ok.any():
                continue
            n, m, c, p, q = n[ok], m[ok], c[ok], p[ok], q[ok]
            for order in orders:
                r = evaluate(g, order, n, m, c, p, q, hold)
                total = r["input_reads"] + r["weight_reads"] + r["output_writes"] + r["output_reads"]
                count += total.size
                key = np.lexsort((r["memory"], total))[0]
                cand = (int(total[key]), int(r["memory"][key]),
                        Tiling(int(n[key]), int(m[key]), int(c[key]), int(p[key]), int(q[key]), order, hold))
                if best is None or cand[:2] < best[:2]:
                    best = cand
    if best is None:
        return None
    return SearchResult(best[2], traffic_of(shape, best[2]), count)


def search_baseline(shape: ConvShape, S: int, family: Family) -> SearchResult | None:
    """Best tiling of a baseline dataflow: every trip count of every dimension, m sized to fill S."""
    g = shape.group_shape()
    qs = np.array([g.Wo]) if family.full_rows else distinct_tiles(g.Wo)
    return _search(shape, S, family.orders, distinct_tiles(g.B), distinct_tiles(g.Ci), distinct_tiles(g.Ho), qs)


OPTIMAL_ORDERS = ("NPQMC", "MNPQC")
HOLDS = ("", "W", "I")


def search_optimal(shape: ConvShape, S: int) -> SearchResult | None:
    """The paper's communication-optimal dataflow with its exact best integer tiling (b, z, y, x, k).

    Output stationary: the b*x*y*z psums stay on chip while input channels stream k at a time. Every
    output-tile size y, x is tried (the halo makes traffic depend on more than the trip counts), b over
    its trip counts, z as large as fits; k = 1 unless all input channels fit at once (k = Ci), where the
    outer order then decides whether weights (M outermost) or inputs are read once. Each is also tried
    with the weights or the inputs held whole when they fit beside the tiles (read once, kept).
    """
    g = shape.group_shape()
    cs = np.array(sorted({1, g.Ci}), dtype=np.int64)
    holds = [h for h in HOLDS if held_words(g, h) < S]
    return _search(shape, S, OPTIMAL_ORDERS, distinct_tiles(g.B), cs, np.arange(1, g.Ho + 1),
                   np.arange(1, g.Wo + 1), holds)


def exhaustive_optimal(shape: ConvShape, S: int) -> tuple[int, Tiling] | None:
    """Every integer (b, z, y, x, k), both outer orders and every held tensor, no pruning: the
    reference the tests use."""
    g = shape.group_shape()
    best: tuple[int, Tiling] | None = None
    grids = np.meshgrid(np.arange(1, g.B + 1), np.arange(1, g.Co + 1), np.arange(1, g.Ci + 1),
                        np.arange(1, g.Ho + 1), np.arange(1, g.Wo + 1), indexing="ij")
    n, m, c, p, q = (a.ravel() for a in grids)
    for hold in HOLDS:
        for order in OPTIMAL_ORDERS:
            r = evaluate(g, order, n, m, c, p, q, hold)
            ok = r["memory"] <= S
            if not ok.any():
                continue
            total = (r["input_reads"] + r["weight_reads"] + r["output_writes"] + r["output_reads"])[ok]
            i = int(np.argmin(total))
            t = Tiling(int(n[ok][i]), int(m[ok][i]), int(c[ok][i]), int(p[ok][i]), int(q[ok][i]), order, hold)
            if best is None or int(total[i]) * shape.groups < best[0]:
                best = (int(total[i]) * shape.groups, t)
    return best


def paper_traffic(shape: ConvShape, b: int, z: int, y: int, x: int) -> dict[str, float]:
    """The paper's closed form for tiling (b, z, y, x), k < Ci, with x' = D*x + Wk - D (no clipping).

    DRAM reads = (B*Ho*Wo*Co)/(b*x*y*z) * (Hk*Wk*Ci*z + b*x'*y'*Ci); used to show the exact model
    agrees with it when tiles divide the layer and there is no padding.
    """
    g = shape.group_shape()
    D = g.stride
    xp, yp = D * x + g.Wk - D, D * y + g.Hk - D
    blocks = g.B * g.Ho * g.Wo * g.Co / (b * x * y * z)
    reads = blocks * (g.Hk * g.Wk * g.Ci * z + b * xp * yp * g.Ci)
    return {"reads": shape.groups * reads, "writes": shape.outputs}
