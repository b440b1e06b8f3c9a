"""Shared-memory bank conflicts for one tile (paper, section IV-B, Fig. 6).

The tile's footprint (eq. 9) sits in N banks; each lane of the SIMD handles one element of the
p-tile, and at every accumulation step (one element of the a-tile) a warp of N lanes reads N
footprint elements at once. A bank holding several distinct requested words costs one extra cycle
per extra word. Layouts compared, as in Fig. 6:

* naive (ii-a): row-major, row pitch = footprint width;
* padding (ii-b): the smallest row padding that removes every conflict, or else padding words
  inside each row (after every g words), which strided reads along a row need;
* XOR hash (ii-c): row pitch rounded to a power of two, column bits XORed with row bits (or,
  for strided reads along a row, with higher column bits);
* re-tiling (iii, iv): the naive layout, but lanes grouped into warps along other lane bits.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from core.errors import InputError
from core.merit import butterfly
from core.merit.result import BankLayout, Banks
from core.merit.tiling import footprint, tile_sizes
from core.merit_transform.transform import MeritTransform, Operand


@dataclass
class Access:
    """Footprint coordinates read by each lane at each step, flattened to (row, column)."""

    fp: tuple[int, ...]
    rows: np.ndarray          # (lanes, steps) flattened leading coordinates
    cols: np.ndarray          # (lanes, steps) last-axis coordinate
    lane_bits: list[tuple[str, int]] = field(default_factory=list)   # (index, bit) per lane-number bit

    @property
    def height(self) -> int:
        return int(np.prod(self.fp[:-1], dtype=np.int64)) if len(self.fp) > 1 else 1

    @property
    def width(self) -> int:
        return int(self.fp[-1])


def tile_access(t: MeritTransform, op: Operand, tile: dict[str, int]) -> Access:
    """Lane = element of the p-tile (row-major), step = element of the a-tile (row-major)."""
    ext = tile_sizes(t, tile)
    fp = footprint(t, op, ext)
    p_ext = [ext[n] for n, _ in t.parallel]
    a_ext = [ext[n] for n, _ in t.accumulate]
    lanes, steps = int(np.prod(p_ext or [1])), int(np.prod(a_ext or [1]))
    p_idx = np.unravel_index(np.arange(lanes), p_ext) if t.parallel else ()
    a_idx = np.unravel_index(np.arange(steps), a_ext) if t.accumulate else ()
    k = {n: p_idx[i].reshape(-1, 1) for i, (n, _) in enumerate(t.parallel)}
    k.update({n: a_idx[i].reshape(1, -1) for i, (n, _) in enumerate(t.accumulate)})
    xs = t.coords(op, {n: v for n, v in k.items() if n in op.maps})
    xs = [np.broadcast_to(x, (lanes, steps)) - np.min(x) for x in xs]
    rows = np.ravel_multi_index(xs[:-1], fp[:-1]) if len(fp) > 1 else np.zeros((lanes, steps), dtype=np.int64)
    bits: list[tuple[str, int]] = []
    for (n, _), e in zip(t.parallel, p_ext):
        if e & (e - 1):
            bits = []
            break
    else:
        for (n, _), e in reversed(list(zip(t.parallel, p_ext))):
            bits += [(n, b) for b in range(e.bit_length() - 1)]
    return Access(fp, np.asarray(rows, dtype=np.int64), xs[-1].astype(np.int64), bits)


def conflict_cycles(addr: np.ndarray, warps: np.ndarray, n_banks: int) -> np.ndarray:
    """Extra cycles per (warp, step): words in the busiest bank minus one (same word = broadcast)."""
    a = np.sort(addr[warps], axis=1)                       # (warps, N, steps)
    first = np.ones_like(a, dtype=bool)
    first[:, 1:, :] = a[:, 1:, :] != a[:, :-1, :]
    banks = a % n_banks
    counts = np.zeros((a.shape[0], a.shape[2], n_banks), dtype=np.int32)
    for b in range(n_banks):
        counts[:, :, b] = ((banks == b) & first).sum(axis=1)
    return np.maximum(counts.max(axis=2) - 1, 0)


def naive_warps(lanes: int, n: int) -> np.ndarray:
    """Consecutive lanes form a warp; a short last warp repeats its first lane (no extra word)."""
    groups = []
    for s in range(0, lanes, n):
        g = list(range(s, min(lanes, s + n)))
        groups.append(g + [g[0]] * (n - len(g)))
    return np.array(groups, dtype=np.int64)


def bit_warps(total_bits: int, chosen: tuple[int, ...]) -> np.ndarray:
    """Warps whose lanes differ exactly in the `chosen` lane-number bits."""
    others = [b for b in range(total_bits) if b not in chosen]
    groups = []
    for w in range(1 << len(others)):
        base = sum(((w >> i) & 1) << b for i, b in enumerate(others))
        groups.append([base + sum(((n >> i) & 1) << b for i, b in enumerate(chosen)) for n in range(1 << len(chosen))])
    return np.array(groups, dtype=np.int64)


@dataclass
class LayoutResult:
    name: str
    pitch: int
    padding_words: int
    extra_cycles: int
    conflict_steps: int
    accesses: int
    detail: str
    addr: np.ndarray
    warps: np.ndarray
    grid: list[list[int]]                # bank of each stored word (rows x pitch), -1 for padding
    shown: list[list[int]]               # [row, col, conflict 0/1] of warp 0 at its worst step
    c: list[int] = field(default_factory=list)
    verdict: butterfly.Verdict | None = None


def _grid(acc: Access, addr_of, pitch: int, n_banks: int) -> list[list[int]]:
    """Bank of every stored word (rows x pitch), -1 where the layout leaves padding."""
    R, C = np.meshgrid(np.arange(acc.height), np.arange(acc.width), indexing="ij")
    addr = np.asarray(addr_of(R, C), dtype=np.int64)
    grid = np.full((acc.height, pitch), -1, dtype=np.int64)
    grid.reshape(-1)[addr.reshape(-1)] = addr.reshape(-1) % n_banks
    return grid.tolist()


def _evaluate(name: str, acc: Access, addr_of, pitch: int, warps: np.ndarray, n_banks: int, detail: str,
              c: list[int] | None = None) -> LayoutResult:
    addr = addr_of(acc.rows, acc.cols)
    cyc = conflict_cycles(addr, warps, n_banks)
    worst_step = int(np.argmax(cyc[0])) if cyc.size else 0
    lanes_addr = addr[warps[0], worst_step]
    banks = lanes_addr % n_banks
    shown = []
    for a in sorted(set(lanes_addr.tolist())):
        clash = int(len({x for x in lanes_addr.tolist() if x % n_banks == a % n_banks}) > 1)
        shown.append([a // pitch, a % pitch, clash])
    del banks
    return LayoutResult(name, pitch, acc.height * pitch - acc.height * acc.width, int(cyc.sum()),
                        int((cyc > 0).sum()), int(cyc.size), detail, addr, warps,
                        _grid(acc, addr_of, pitch, n_banks), shown, c or [])


def _sample(acc: Access, max_steps: int = 48) -> Access:
    steps = acc.rows.shape[1]
    if steps <= max_steps:
        return acc
    pick = np.unique(np.linspace(0, steps - 1, max_steps).round().astype(int))
    return Access(acc.fp, acc.rows[:, pick], acc.cols[:, pick], acc.lane_bits)


def _padded(W: int, g: int, p: int, rp: int) -> tuple[Callable, int]:
    """Address map with p padding words after every g columns of a row and rp more at its end;
    g >= W is plain row padding."""
    P = W + ((W - 1) // g) * p + rp

    def addr_of(r, c):
        return r * P + c + (c // g) * p
    return addr_of, P


def _padding_search(sac: Access, swarps: np.ndarray, n_banks: int, max_pad: int,
                    check: Callable[[], None]) -> tuple[int, int, int, int] | None:
    """(extra cycles, g, p, rp) of the cheapest padding: the smallest row padding first; only if
    none removes every conflict, padding inside rows (strided reads along a row, as in AlexNet
    CONV1's stride 4, hit the same banks whatever the row pitch)."""
    W = sac.width
    row = [(W, 0, rp) for rp in range(1, max_pad + 1)]
    inside = sorted(((g, p, rp) for g in (1 << k for k in range(max(0, (W - 1).bit_length())))
                     for p in range(1, max_pad + 1) for rp in range(0, max_pad + 1)),
                    key=lambda c: _padded(W, *c)[1])      # cheapest first: the first free one wins
    found = None
    for stage in (row, inside):
        for g, p, rp in stage:
            check()
            f, P = _padded(W, g, p, rp)
            cyc = _evaluate("padding", sac, f, P, swarps, n_banks, "").extra_cycles
            if found is None or (cyc, P) < found[0]:
                found = ((cyc, P), g, p, rp)
            if cyc == 0:
                break
        if found is not None and found[0][0] == 0:
            break
    if found is None:
        return None
    (cyc, _), g, p, rp = found
    return cyc, g, p, rp


def analyse(t: MeritTransform, op: Operand, tile: dict[str, int], n_banks: int,
            max_pad: int | None = None, check: Callable[[], None] | None = None) -> list[LayoutResult]:
    """Conflicts of the naive layout and of the three remedies of Fig. 6.

    Candidate layouts are searched on a sample of steps and warps; the chosen ones are then
    evaluated on every access of the tile."""
    if not isinstance(n_banks, int) or isinstance(n_banks, bool) or n_banks < 1:
        raise InputError(f"bank count must be a positive integer, got {n_banks!r}", "banks")
    acc = tile_access(t, op, tile)
    sac = _sample(acc)
    W = acc.width
    lanes = acc.rows.shape[0]
    warps = naive_warps(lanes, n_banks)
    swarps = warps[:32]

    check = check or (lambda: None)

    def final(name, addr_of, pitch, w, detail, c=None) -> LayoutResult:
        check()
        return _evaluate(name, acc, addr_of, pitch, w, n_banks, detail, c)

    out = [final("naive", lambda r, c: r * W + c, W, warps, f"row-major, pitch {W}")]
    naive = out[0]
    # (ii-b) padding: smallest pad that removes every conflict
    max_pad = n_banks * 2 if max_pad is None else max_pad
    pad = _padding_search(sac, swarps, n_banks, max_pad, check)
    if pad is not None:
        _, g, p, rp = pad
        f, P = _padded(W, g, p, rp)
        detail = (f"{rp} padding word(s) after every {W} words (pitch {P})" if g >= W else
                  f"{p} padding word(s) after every {g} words of a row" + (f", {rp} more at its end" if rp else "")
                  + f" (pitch {P})")
        out.append(final("padding", f, P, warps, detail))
    # (ii-c) XOR hash: pitch a power of two, column XOR (row bits << m)
    xbest = None
    P0 = 1 << max(0, (W - 1).bit_length())
    for P in (P0, 2 * P0):
        lp = P.bit_length() - 1
        for q in range(1, min(lp, 2) + 1):
            for m in range(0, lp - q + 1):
                for r in range(0, 3):
                    def addr_of(rr, cc, P=P, q=q, m=m, r=r):
                        return rr * P + (cc ^ (((rr >> r) & ((1 << q) - 1)) << m))
                    check()
                    cyc = _evaluate("xor", sac, addr_of, P, swarps, n_banks, "").extra_cycles
                    key = (cyc, P, q)
                    if xbest is None or key < xbest[0]:
                        xbest = (key, addr_of, P, f"pitch {P}, column XOR (((row >> {r}) & {(1 << q) - 1}) << {m})")
        if xbest and xbest[0][0] == 0:
            break
    if xbest and xbest[0][0] > 0:
        # strided reads along a row: XOR low column bits with higher column bits (a bijection
        # inside each aligned block of 2^sh columns, so no extra padding)
        for sh in range(2, P0.bit_length()):
            for q in range(1, 3):
                for m in range(0, sh - q + 1):
                    def addr_of(rr, cc, P=P0, q=q, m=m, sh=sh):
                        return rr * P + (cc ^ (((cc >> sh) & ((1 << q) - 1)) << m))
                    check()
                    cyc = _evaluate("xor", sac, addr_of, P0, swarps, n_banks, "").extra_cycles
                    key = (cyc, P0, q)
                    if key < xbest[0]:
                        xbest = (key, addr_of, P0,
                                 f"pitch {P0}, column XOR (((column >> {sh}) & {(1 << q) - 1}) << {m})")
    if xbest:
        out.append(final("xor", xbest[1], xbest[2], warps, xbest[3]))
    # (iii, iv) re-tiling: other lane bits form the warp
    L = n_banks.bit_length() - 1
    if acc.lane_bits and n_banks & (n_banks - 1) == 0 and len(acc.lane_bits) >= L:
        B = len(acc.lane_bits)
        found = []
        for chosen in itertools.combinations(range(B), L):
            if chosen == tuple(range(L)):
                continue                       # that is the naive grouping
            check()
            w = bit_warps(B, chosen)
            cyc = _evaluate("retile", sac, lambda r, c: r * W + c, W, w[:32], n_banks, "").extra_cycles
            found.append((cyc, chosen, w))
            if len(found) > 64:
                break
        found.sort(key=lambda x: x[0])
        free = [f for f in found if f[0] == 0]
        for i, (cyc, chosen, w) in enumerate(free[:2] if free else found[:1]):
            res = final(f"retile-{i + 1}" if free else "retile", lambda r, c: r * W + c, W, w, "")
            a0 = res.addr[w[0, 0], 0]
            res.c = [int(res.addr[w[0, 1 << j], 0] - a0) for j in range(L)]
            res.detail = ("warp lanes step along " + ", ".join(
                f"{acc.lane_bits[b][0]} bit {acc.lane_bits[b][1]}" for b in chosen) + f"; c = {tuple(res.c)}")
            out.append(res)
    # c of the naive layout (eq. 10) for reference
    if n_banks & (n_banks - 1) == 0 and lanes >= n_banks:
        naive.c = [int(naive.addr[warps[0, 1 << i], 0] - naive.addr[warps[0, 0], 0]) for i in range(L)]
    return out


def with_butterfly(results: list[LayoutResult], n_banks: int, check: Callable[[], None] | None = None) -> None:
    """Attach the section V-C verdict for every layout's accesses (needs N a power of two)."""
    butterfly.log2_exact(n_banks)
    for res in results:
        if check:
            check()
        addr = res.addr[res.warps]                       # (warps, N, steps)
        groups = np.transpose(addr, (0, 2, 1)).reshape(-1, n_banks)
        res.verdict = butterfly.verdict(groups, n_banks)


def report(t: MeritTransform, op: Operand, tile: dict[str, int], n_banks: int,
           check: Callable[[], None] | None = None) -> Banks:
    """Every layout of the operand's tile footprint with its conflicts and butterfly verdict."""
    results = analyse(t, op, tile, n_banks, check=check)
    with_butterfly(results, n_banks, check)
    acc = tile_access(t, op, tile)
    return Banks(operand=op.name, footprint=[int(f) for f in acc.fp], banks=n_banks, lanes=int(acc.rows.shape[0]),
                 steps=int(acc.rows.shape[1]), layouts=[BankLayout.of(r) for r in results])
