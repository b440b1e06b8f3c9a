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

A tiling may *slide*: when the innermost input loop that has more than one trip is P (Q), each
input tile keeps the rows (columns) it shares with the tile before it, the halo of a sliding
window, and loads only the others (`geometry.slide_table`); a line buffer is the case of whole
rows (q = Wo, all channels in one tile) sliding down. It costs no memory (the kept rows are part of
the next tile) and never adds traffic, so the searches always slide where it applies.

A tiling may instead *stream* its input tile ("P" by output rows, "Q" by columns): within each step
the output tile is computed one output row (column) at a time, each input row (column) loaded just
before its first use in the step and dropped after its last (`geometry.live_table`). Every input
word still comes once per step, so the traffic is the plain tiling's, but only the live rows take
room: the output tile and the weights stay resident while the input passes through, which frees
memory for larger output tiles (two levels of tiling: the resident output block, and the rows
inside it). It holds only where an input tile serves one step: not when the nest reuses it across
output-channel tiles (an M loop with more than one trip inside the input's innermost active loop).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, ClassVar, Iterable

import numpy as np

from core.bound.bounds import axes
from core.bound.geometry import Axis, axis_tables, distinct_tiles, live_table, rows_used, slide_table
from core.bound.shapes import ConvShape
from core.results import to_plain

DIMS = ("N", "M", "C", "P", "Q")
RELEVANT = {"inputs": frozenset("NCPQ"), "weights": frozenset("MC"), "outputs": frozenset("NMPQ")}


@dataclass(frozen=True)
class Tiling:
    """Tile sizes (n = b, m = z, c = k, p = y, q = x in the paper's names), the loop order, the
    tensor held on chip for the whole group ("W" weights, "I" inputs, "" none), whether input
    tiles slide (keep the halo they share with the previous tile along the innermost input loop),
    and whether they stream through the buffer by output rows ("P") or columns ("Q") instead."""

    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("b", "z", "k", "y", "x")     # the paper's names, in the JSON too

    n: int
    m: int
    c: int
    p: int
    q: int
    order: str = "NPQMC"
    hold: str = ""
    slide: bool = False
    stream: str = ""         # "P" / "Q": the input tile passes through by output rows / columns (or "")

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


@lru_cache(maxsize=4096)
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


def input_footprint(g: ConvShape, n: Any, c: Any, p: Any, q: Any, stream: str = "") -> Any:
    """Words the input tile takes on chip: the whole tile (halo included), or with `stream` only the
    rows (columns) live at once while the tile passes through by output rows (columns)."""
    ay, ax = axes(g)
    _, _, peak_y = axis_tables(ay)
    _, _, peak_x = axis_tables(ax)
    if stream == "P":
        return n * c * live_table(ay)[p] * peak_x[q]
    if stream == "Q":
        return n * c * peak_y[p] * live_table(ax)[q]
    if stream:
        raise ValueError(f"stream must be '', 'P' or 'Q', got {stream!r}")
    return n * c * peak_y[p] * peak_x[q]


def stream_ok(g: ConvShape, order: str, n: Any, m: Any, c: Any, p: Any, q: Any) -> np.ndarray:
    """Where an input tile may stream: it serves one step, i.e. the output-channel loop has one trip or
    some input loop with more than one trip sits inside it (else the nest keeps the tile for the next
    output-channel tile, so it must stay whole)."""
    trips = {"N": _ceil(g.B, n), "C": _ceil(g.Ci, c), "P": _ceil(g.Ho, p), "Q": _ceil(g.Wo, q)}
    inner = np.zeros(np.broadcast(n, m, c, p, q).shape, dtype=bool)
    for dim in order[order.index("M") + 1:]:
        inner = inner | (np.asarray(trips[dim]) > 1)
    return (np.asarray(_ceil(g.Co, m)) == 1) | inner


@lru_cache(maxsize=4096)
def _layer_tables(g: ConvShape) -> tuple[Axis, Axis, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The axes of a group and their `axis_tables` (pure functions of the shape, so remembered)."""
    ay, ax = axes(g)
    return ay, ax, axis_tables(ay), axis_tables(ax)


class TileGrid:
    """Arrays of tile sizes (broadcast together) with a held tensor and a way of streaming, and what
    their traffic needs that no loop order changes (trip counts, footprints, all the tensors' tiles),
    computed once so `evaluate` of many loop orders over the same grid repeats only what the order
    decides (which loops refetch each tensor, which sweep slides)."""

    def __init__(self, g: ConvShape, n: Any, m: Any, c: Any, p: Any, q: Any, hold: str = "", stream: str = ""):
        self.g, self.hold, self.stream = g, hold, stream
        self.ay, self.ax, (_, tot_y, _), (_, tot_x, _) = _layer_tables(g)
        n, m, c, p, q = (np.asarray(v, dtype=np.int64) for v in (n, m, c, p, q))
        self.p, self.q = p, q
        self.trips = {"N": -(-g.B // n), "M": -(-g.Co // m), "C": -(-g.Ci // c), "P": -(-g.Ho // p),
                      "Q": -(-g.Wo // q)}
        self.big = {dim: t > 1 for dim, t in self.trips.items()}
        self.shape = np.broadcast(n, m, c, p, q).shape
        self.one = np.ones(self.shape, dtype=np.int64)
        self.rows, self.cols = tot_y[p], tot_x[q]
        in_tile, w_tile = input_footprint(g, n, c, p, q, stream), m * c * g.Hk * g.Wk
        self.held = held_words(g, hold)
        if hold == "W":
            w_tile = np.full_like(w_tile, self.held)
        elif hold == "I":
            in_tile = np.full_like(in_tile, self.held)
        self.memory = in_tile + w_tile + n * m * p * q
        self.all_ok = np.ones(self.shape, dtype=bool)
        self.m_one = self.trips["M"] == 1
        for shared in (self.memory, self.all_ok):          # returned for every order: never to be changed
            if isinstance(shared, np.ndarray):
                shared.setflags(write=False)

    def _factor(self, order: str, rel: frozenset[str]) -> np.ndarray:
        """The product of the trip counts of the loops irrelevant to a tensor that sit above the
        innermost relevant loop with more than one trip (each where that holds)."""
        active: np.ndarray | None = None
        f = self.one
        for dim in reversed(order):
            if dim in rel:
                active = self.big[dim] if active is None else active | self.big[dim]
            elif active is not None:
                f = f * np.where(active, self.trips[dim], 1)
        return f

    def stream_ok(self, order: str) -> np.ndarray:
        """`stream_ok` of the grid in one loop order."""
        inner = self.m_one
        for dim in order[order.index("M") + 1:]:
            inner = inner | self.big[dim]
        return inner | np.zeros(self.shape, dtype=bool)

    def evaluate(self, order: str, slide: bool = False) -> dict[str, np.ndarray]:
        """`evaluate` of the grid in one loop order."""
        g, hold, stream = self.g, self.hold, self.stream
        if stream and (slide or hold == "I"):
            raise ValueError("a streamed input tile neither slides nor is held")
        rows, cols = self.rows, self.cols
        if slide:
            # The innermost input loop with more than one trip: a sweep along it loads each tile's new
            # rows (columns) only; every other input loop change starts a new sweep.
            found: np.ndarray | None = None
            for dim in reversed(order):
                if dim in RELEVANT["inputs"]:
                    big = self.big[dim]
                    this = big if found is None else ~found & big
                    if dim == "P":
                        rows = np.where(this, slide_table(self.ay)[self.p], rows)
                    elif dim == "Q":
                        cols = np.where(this, slide_table(self.ax)[self.q], cols)
                    found = big if found is None else found | big
        outputs = g.B * g.Co * g.Ho * g.Wo
        f_out = self._factor(order, RELEVANT["outputs"])
        if hold == "I":
            input_reads = np.full(self.shape, self.held, dtype=np.int64)
        else:
            input_reads = self._factor(order, RELEVANT["inputs"]) * (g.B * g.Ci * rows * cols)
        if hold == "W":
            weight_reads = np.full(self.shape, self.held, dtype=np.int64)
        else:
            weight_reads = self._factor(order, RELEVANT["weights"]) * (g.Co * g.Ci * g.Hk * g.Wk)
        return {"input_reads": input_reads, "weight_reads": weight_reads,
                "output_writes": f_out * outputs, "output_reads": (f_out - 1) * outputs,
                "memory": self.memory, "ok": self.stream_ok(order) if stream else self.all_ok}


def evaluate(g: ConvShape, order: str, n: Any, m: Any, c: Any, p: Any, q: Any, hold: str = "",
             slide: bool = False, stream: str = "") -> dict[str, np.ndarray]:
    """Traffic of one group for arrays of tile sizes (broadcast together). With `stream`, "ok" says
    which tilings may stream (`stream_ok`); it is all True otherwise. (Several loop orders over the
    same tiles: `TileGrid`, which shares what the order does not change.)"""
    return TileGrid(g, n, m, c, p, q, hold, stream).evaluate(order, slide)


def evaluate_one(g: ConvShape, t: Tiling) -> dict[str, int]:
    """`evaluate` of one tiling in plain Python integers (no arrays: a single tiling costs a few
    microseconds instead of numpy's per-call overhead); "ok" is 1 where it may stream (or does not),
    else 0. Tile sizes outside 1..the layer's size go to `evaluate`, which decides what they mean."""
    n, m, c, p, q, order, hold, stream = t.n, t.m, t.c, t.p, t.q, t.order, t.hold, t.stream
    if not (0 < n <= g.B and 0 < m <= g.Co and 0 < c <= g.Ci and 0 < p <= g.Ho and 0 < q <= g.Wo):
        r = evaluate(g, order, n, m, c, p, q, hold, t.slide, stream)
        return {k: int(v) for k, v in r.items()}
    if stream and (t.slide or hold == "I"):
        raise ValueError("a streamed input tile neither slides nor is held")
    ay, ax, (_, tot_y, _), (_, tot_x, _) = _layer_tables(g)
    trips = {"N": -(-g.B // n), "M": -(-g.Co // m), "C": -(-g.Ci // c), "P": -(-g.Ho // p), "Q": -(-g.Wo // q)}
    factors = {}
    for tensor, rel in RELEVANT.items():
        active, f = False, 1
        for dim in reversed(order):
            if dim in rel:
                active = active or trips[dim] > 1
            elif active:
                f *= trips[dim]
        factors[tensor] = f
    rows, cols = int(tot_y[p]), int(tot_x[q])
    if t.slide:
        for dim in reversed(order):
            if dim in RELEVANT["inputs"] and trips[dim] > 1:
                if dim == "P":
                    rows = int(slide_table(ay)[p])
                elif dim == "Q":
                    cols = int(slide_table(ax)[q])
                break
    outputs = g.B * g.Co * g.Ho * g.Wo
    in_tile, w_tile = int(input_footprint(g, n, c, p, q, stream)), m * c * g.Hk * g.Wk
    input_reads = factors["inputs"] * g.B * g.Ci * rows * cols
    weight_reads = factors["weights"] * (g.Co * g.Ci * g.Hk * g.Wk)
    held = held_words(g, hold)
    if hold == "W":
        w_tile = weight_reads = held
    elif hold == "I":
        in_tile = input_reads = held
    ok = not stream or trips["M"] == 1 or any(trips[d] > 1 for d in order[order.index("M") + 1:])
    return {"input_reads": input_reads, "weight_reads": weight_reads,
            "output_writes": factors["outputs"] * outputs, "output_reads": (factors["outputs"] - 1) * outputs,
            "memory": in_tile + w_tile + n * m * p * q, "ok": int(ok)}


def traffic_of(shape: ConvShape, t: Tiling) -> Traffic:
    """Exact traffic of the whole layer (every group) for one tiling."""
    r = evaluate_one(shape.group_shape(), t)
    if not r["ok"]:
        raise ValueError(f"{t}: the nest keeps this input tile for several output-channel tiles, so it cannot stream")
    G = shape.groups
    return Traffic(input_reads=G * r["input_reads"], weight_reads=G * r["weight_reads"],
                   output_writes=G * r["output_writes"], output_reads=G * r["output_reads"], memory=r["memory"])


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
            hold: str = "", stream: str = "") -> np.ndarray:
    """The largest useful output-channel tile that fits (traffic never grows with m); 0 if none fits.

    m is then shrunk to the smallest size with the same trip count, which saves memory for free.
    """
    held = held_words(g, hold)
    rest = S - (held if hold == "I" else input_footprint(g, n, c, p, q, stream)) - (held if hold == "W" else 0)
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
            qs: np.ndarray, holds: Iterable[str] = ("",), slide: bool = False,
            streams: Iterable[str] = ("",)) -> SearchResult | None:
    """Minimum total traffic over the grid n x c x p x q (m maximal), the given orders, held tensors
    and ways of streaming the input tile ("" none: the tile whole, sliding if `slide`).

    Ties go to the smaller on-chip footprint, then to the earlier grid point (deterministic)."""
    g = shape.group_shape()
    best: tuple[int, int, Tiling] | None = None
    count = 0
    never = np.iinfo(np.int64).max
    for hold, stream in itertools.product(holds, streams):
        if stream and hold == "I":
            continue
        slides = slide and hold != "I" and not stream
        for n_value in ns:           # one batch tile at a time keeps the arrays small for large batches
            found = grid_tiles(g, S, np.array([n_value]), cs, ps, qs, hold, stream)
            if found is None:
                continue
            n, m, c, p, q = found
            grid = TileGrid(g, n, m, c, p, q, hold, stream)
            for order in orders:
                r = grid.evaluate(order, slides)
                total = np.where(r["ok"], r["input_reads"] + r["weight_reads"] + r["output_writes"]
                                 + r["output_reads"], never)
                count += int(r["ok"].sum())
                least = int(total.min())
                if least == never:
                    continue
                ties = np.flatnonzero(total == least)          # the least traffic, then the least memory, then the first
                key = int(ties[np.argmin(r["memory"][ties])])
                cand = (int(total[key]), int(r["memory"][key]),
                        Tiling(int(n[key]), int(m[key]), int(c[key]), int(p[key]), int(q[key]), order, hold,
                               slides, stream))
                if best is None or cand[:2] < best[:2]:
                    best = cand
    if best is None:
        return None
    return SearchResult(best[2], traffic_of(shape, best[2]), count)


def grid_tiles(g: ConvShape, S: int, ns: np.ndarray, cs: np.ndarray, ps: np.ndarray, qs: np.ndarray, hold: str,
               stream: str) -> tuple[np.ndarray, ...] | None:
    """The grid n x c x p x q with each point's largest fitting m (`_best_m`), as arrays (n, m, c, p, q)
    of the points that fit; None when none does. A streamed input tile is kept only where it fits an
    output-channel tile of fewer trips than the plain tiling's: it moves what the plain tiling of the
    same trip counts moves, so it can only gain there."""
    n, c, p, q = (a.ravel() for a in np.meshgrid(ns, cs, ps, qs, indexing="ij", sparse=False))
    m = _best_m(g, S, n, c, p, q, hold, stream)
    ok = m >= 1
    if stream:
        plain = _best_m(g, S, n, c, p, q, hold)
        ok &= (plain == 0) | (_ceil(g.Co, np.maximum(m, 1)) < _ceil(g.Co, np.maximum(plain, 1)))
    if not ok.any():
        return None
    return n[ok], m[ok], c[ok], p[ok], q[ok]


def search_baseline(shape: ConvShape, S: int, family: Family) -> SearchResult | None:
    """Best tiling of a baseline dataflow: every trip count of every dimension, m sized to fill S. The
    baselines are the conventional dataflows: no sliding, no held tensor."""
    g = shape.group_shape()
    qs = np.array([g.Wo]) if family.full_rows else distinct_tiles(g.Wo)
    return _search(shape, S, family.orders, distinct_tiles(g.B), distinct_tiles(g.Ci), distinct_tiles(g.Ho), qs)


OPTIMAL_ORDERS = ("NPQMC", "MNPQC")
HOLDS = ("", "W", "I")
STREAMS = ("P", "Q")
ALL_ORDERS = tuple("".join(o) for o in itertools.permutations(DIMS))


def general_orders(g: ConvShape) -> tuple[str, ...]:
    """Every loop order of one group, one per class of orders that differ only in where loops of a
    single trip for the whole layer sit (such a loop never changes a fetch): 24 orders at batch 1."""
    single = {d for d, size in zip(DIMS, (g.B, g.Co, g.Ci, g.Ho, g.Wo)) if size == 1}
    seen: dict[str, str] = {}
    for order in ALL_ORDERS:
        seen.setdefault("".join(d for d in order if d not in single), order)
    return tuple(seen.values())


def _settle_slide(shape: ConvShape, r: SearchResult) -> SearchResult:
    """Report sliding only where it saves words (a tiling whose innermost input loop is C or N, or
    whose tiles share no rows, has the same traffic without it)."""
    if r.tiling.slide:
        plain = replace(r.tiling, slide=False)
        if traffic_of(shape, plain) == r.traffic:
            return SearchResult(plain, r.traffic, r.evaluated)
    return r


def search_optimal(shape: ConvShape, S: int) -> SearchResult | None:
    """The least traffic over the engine's dataflow space, with its exact integer tiling (`_optimal`);
    remembered per layer shape and memory, as networks repeat shapes and the memory sweep revisits them."""
    return _optimal(replace(shape, name=""), S)


@lru_cache(maxsize=2048)
def _optimal(shape: ConvShape, S: int) -> SearchResult | None:
    """The least traffic over the engine's dataflow space, with its exact integer tiling.

    The space (docs/bound.md, "Optimal dataflow"): (1) the paper's output-stationary dataflow, the
    b*x*y*z psums on chip while input channels stream k at a time, with every output-tile size y, x
    (the halo makes traffic depend on more than the trip counts), b over its trip counts, z as large
    as fits and k in {1, Ci} (any other k moves what k = 1 does in more memory), both outer orders;
    (2) every loop order of the five tile loops (psums spill where the input-channel loop sits
    outside an output loop: weight and input stationary), with every trip count of every loop (each
    tile the smallest of its trip count) and m as large as fits. Each with one tensor held whole
    when it fits beside the tiles, and with input tiles sliding (keeping the halo they share with the
    previous tile, along rows or columns, whichever loop is the innermost input loop): free, so it
    is always used where it applies; or with input tiles streaming through by output rows or
    columns (less room, the same traffic, so larger tiles fit), reported only where that moves
    fewer words.
    """
    g = shape.group_shape()
    holds = [h for h in HOLDS if held_words(g, h) < S]
    cs = np.array(sorted({1, g.Ci}), dtype=np.int64)
    found = [_search(shape, S, OPTIMAL_ORDERS, distinct_tiles(g.B), cs, np.arange(1, g.Ho + 1),
                     np.arange(1, g.Wo + 1), holds, slide=True, streams=streams)
             for streams in (("",), STREAMS)]
    found += [_search(shape, S, general_orders(g), distinct_tiles(g.B), distinct_tiles(g.Ci), distinct_tiles(g.Ho),
                      distinct_tiles(g.Wo), holds, slide=True, streams=streams) for streams in (("",), STREAMS)]
    results = [r for r in found if r is not None]
    if not results:
        return None
    # A streamed tiling is reported only where it moves fewer words (it always takes less room).
    best = min(results, key=lambda r: (r.traffic.total, bool(r.tiling.stream), r.traffic.memory))
    return _settle_slide(shape, SearchResult(best.tiling, best.traffic, sum(r.evaluated for r in results)))


def _grid_best(g: ConvShape, S: int, orders: Iterable[str], axes_values: list[np.ndarray], holds: Iterable[str],
               slides: Iterable[bool]) -> tuple[int, Tiling] | None:
    grids = np.meshgrid(*axes_values, indexing="ij")
    n, m, c, p, q = (a.ravel() for a in grids)
    best: tuple[int, Tiling] | None = None
    grids_of: dict[tuple[str, str], TileGrid] = {}
    ways = [(s, "") for s in slides] + [(False, st) for st in STREAMS]
    for hold in holds:
        for slide, stream in ways:
            if stream and hold == "I":
                continue
            grid = grids_of.get((hold, stream))
            if grid is None:
                grid = grids_of[(hold, stream)] = TileGrid(g, n, m, c, p, q, hold, stream)
            for order in orders:
                r = grid.evaluate(order, slide)
                ok = (r["memory"] <= S) & r["ok"]
                if not ok.any():
                    continue
                total = (r["input_reads"] + r["weight_reads"] + r["output_writes"] + r["output_reads"])[ok]
                i = int(np.argmin(total))
                if best is None or int(total[i]) < best[0]:
                    best = (int(total[i]), Tiling(int(n[ok][i]), int(m[ok][i]), int(c[ok][i]), int(p[ok][i]),
                                                  int(q[ok][i]), order, hold, slide, stream))
    return best


def exhaustive_optimal(shape: ConvShape, S: int, general: bool = True) -> tuple[int, Tiling] | None:
    """The brute-force reference the tests use, no pruning: (1) every integer (b, z, y, x, k) of both
    output-stationary orders, sliding or streaming by rows or columns, and (2) with `general`, every
    one of the 120 loop orders with every trip-count tile of N, C, P, Q and every m, sliding or not
    or streaming; each with every held tensor."""
    g = shape.group_shape()
    ar = lambda v: np.arange(1, v + 1)
    found = [_grid_best(g, S, OPTIMAL_ORDERS, [ar(g.B), ar(g.Co), ar(g.Ci), ar(g.Ho), ar(g.Wo)], HOLDS, (True,))]
    if general:
        found.append(_grid_best(g, S, ALL_ORDERS, [distinct_tiles(g.B), ar(g.Co), distinct_tiles(g.Ci),
                                                   distinct_tiles(g.Ho), distinct_tiles(g.Wo)], HOLDS, (False, True)))
    best = min((f for f in found if f is not None), key=lambda f: f[0], default=None)
    return None if best is None else (best[0] * shape.groups, best[1])


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
