"""The least DRAM traffic of any schedule of the bound's machine model, for layers of a handful of MACs.

The machine (docs/bound.md, "The proven bound"): S words on chip; loading an input or a weight, or a
partial sum back, costs one; storing a partial sum costs one; a MAC needs its input, its weight and
its output's running sum on chip; a sum is created on chip for free; zero padding is never loaded;
every output ends in DRAM. A shortest-path search (Dijkstra) over states (words on chip, MACs done)
finds the optimum exactly, with two reductions that lose nothing:

* MACs are done as soon as their three words are on chip (doing one earlier changes no transfer);
* a partial sum on chip always has a MAC done since it came in (an optimal schedule never brings
  one in and drops it unused), so evicting it costs a store.

Used by tests/test_bound_proof.py to check that no schedule at all moves less than the proven bound.
"""

from __future__ import annotations

import functools
import heapq
import itertools

from core.bound.bounds import axes
from core.bound.shapes import ConvShape


def macs_of(shape: ConvShape) -> tuple[list[tuple[int, int, int]], int, int, int]:
    """The layer's MACs with a real input as (output, input, weight) ids, and the counts of distinct
    outputs, inputs and weights they use (ids are 0-based per kind)."""
    macs, n_out, n_in, n_w = _macs_of(shape)
    return list(macs), n_out, n_in, n_w


@functools.lru_cache(maxsize=64)
def _macs_of(shape: ConvShape) -> tuple[tuple[tuple[int, int, int], ...], int, int, int]:
    """macs_of, computed once per shape (the tests schedule one layer many times)."""
    ay, ax = axes(shape)
    ty, tx = ay.taps(), ax.taps()
    outs: dict[tuple, int] = {}
    ins: dict[tuple, int] = {}
    wts: dict[tuple, int] = {}
    macs = []
    for n, m, p, q in itertools.product(range(shape.B), range(shape.Co), range(shape.Ho), range(shape.Wo)):
        g = m // shape.Cog
        for c, r, s in itertools.product(range(shape.Cig), range(shape.Hk), range(shape.Wk)):
            h, w = int(ty[p, r]), int(tx[q, s])
            if not (0 <= h < shape.Hi and 0 <= w < shape.Wi):
                continue                                   # padding: zero made on chip, no MAC needed
            o = outs.setdefault((n, m, p, q), len(outs))
            i = ins.setdefault((n, g * shape.Cig + c, h, w), len(ins))
            k = wts.setdefault((m, c, r, s), len(wts))
            macs.append((o, i, k))
    return tuple(macs), len(outs), len(ins), len(wts)


def optimal_traffic(shape: ConvShape, S: int, limit: int = 2_000_000) -> int:
    """The exact least traffic of the machine model (RuntimeError past `limit` expanded states).

    A* search: the cost so far plus, as the admissible estimate, one load for every word that is
    still needed and not on chip (a started sum included) and one store for every sum not yet
    stored for good. Words no MAC still needs leave the chip at once (an operand for free, a
    finished sum with its store), which no optimal schedule can do better than."""
    macs, n_out, n_in, n_w = _macs_of(shape)
    n_items = n_out + n_in + n_w                     # items: outputs, then inputs, then weights
    need = [(o, n_out + i, n_out + n_in + k) for o, i, k in macs]
    item_macs = [0] * n_items
    for j, trio in enumerate(need):
        for it in trio:
            item_macs[it] |= 1 << j
    trio_mask = [(1 << o) | (1 << i) | (1 << k) for o, i, k in need]
    all_done = (1 << len(need)) - 1

    def settle(res: int, done: int) -> tuple[int, int, int]:
        """Do every MAC whose words are on chip, then drop what is no longer needed; returns
        (resident, done, stores made)."""
        for j, m in enumerate(trio_mask):
            if res & m == m:
                done |= 1 << j
        stores = 0
        for it in range(n_items):
            if res >> it & 1 and not item_macs[it] & ~done:
                res &= ~(1 << it)
                stores += it < n_out
        return res, done, stores

    def estimate(res: int, done: int) -> int:
        h = 0
        for it in range(n_items):
            left = item_macs[it] & ~done
            if not left:
                continue
            if it < n_out:
                h += 1                                  # its final store
                if not res >> it & 1 and item_macs[it] & done:
                    h += 1                              # a started sum must come back
            elif not res >> it & 1:
                h += 1
        return h

    res0, done0, c0 = settle(0, 0)
    best = {(res0, done0): c0}
    heap = [(c0 + estimate(res0, done0), c0, res0, done0)]
    expanded = 0
    while heap:
        f, d, res, done = heapq.heappop(heap)
        if best.get((res, done), 1 << 60) < d:
            continue
        if done == all_done:
            return d
        expanded += 1
        if expanded > limit:
            raise RuntimeError(f"more than {limit} states")
        resident = [it for it in range(n_items) if res >> it & 1]
        for y in range(n_items):
            if res >> y & 1 or not item_macs[y] & ~done:
                continue
            cost_in = 1 if y >= n_out or item_macs[y] & done else 0
            for z in ([None] if len(resident) < S else resident):
                r2, cost = res | 1 << y, cost_in
                if z is not None:
                    r2 &= ~(1 << z)
                    cost += z < n_out and bool(item_macs[z] & done)    # store the evicted partial sum
                r2, d2, stores = settle(r2, done)
                nd = d + cost + stores
                if nd < best.get((r2, d2), 1 << 60):
                    best[(r2, d2)] = nd
                    heapq.heappush(heap, (nd + estimate(r2, d2), nd, r2, d2))
    raise RuntimeError("no schedule finishes (S too small)")


def schedule_traffic(shape: ConvShape, S: int, order: list[int]) -> int:
    """The traffic of one concrete schedule of the machine model: the MACs (ids into `macs_of`) in
    the given order, each bringing in its missing words and, when the chip is full, evicting the word
    whose next use is farthest away (Belady; a partial sum with MACs done is stored when evicted and
    read back when used again). Not optimal, but every schedule it makes is valid, so none may move
    less than a lower bound."""
    macs, n_out, n_in, _ = _macs_of(shape)
    if S < 3:
        raise ValueError("a MAC needs three words on chip")
    seq = [(o, n_out + i, n_out + n_in + k) for o, i, k in (macs[j] for j in order)]
    uses: dict[int, list[int]] = {}
    for t, trio in enumerate(seq):
        for it in trio:
            uses.setdefault(it, []).append(t)
    never = 1 << 60
    nxt = {it: 0 for it in uses}                     # index into uses[it] of its next use
    next_use = {it: ts[0] for it, ts in uses.items()}    # the time of that use (never: 1 << 60)
    resident: set[int] = set()
    started: set[int] = set()                        # outputs with a MAC done
    traffic = 0
    for t, trio in enumerate(seq):
        for it in trio:
            if it in resident:
                continue
            if len(resident) >= S:
                # The trio's words on chip are used now (next use t), every other word later: the
                # farthest next use is never one of the trio's.
                victim = max(resident, key=next_use.__getitem__)
                resident.discard(victim)
                traffic += victim < n_out and victim in started            # store a partial sum
            resident.add(it)
            traffic += it >= n_out or it in started                           # load (creating a sum is free)
        started.add(trio[0])
        for it in trio:
            k = nxt[it] = nxt[it] + 1
            ts = uses[it]
            next_use[it] = ts[k] if k < len(ts) else never
    return traffic + sum(1 for z in resident if z < n_out)                    # the final stores
