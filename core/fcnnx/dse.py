"""Per-CNN design space exploration (latency-resource Pareto front) and joint design points.

For every partition of the CNN into subgraphs and every weight-tile cap (input folding), the
folding of the engine's stages is grown greedily from one PE of one operator per stage: each step
gives the bottleneck stage (the one setting II_max in most of the frame time) its next larger
<N_PE, N_op> configuration, as fpgaConvNet-style explorers do. Every step is a design point; the
points that are not dominated in (frame time with the whole bandwidth, average resource use) form
the CNN's Pareto front. Joint design points are the combinations of front points whose summed
resources (plus the hardware scheduler) fit the device.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from core.fcnnx.model import (BRAM_ENGINE, FF_ENGINE, LUT_ENGINE, RESOURCE_KEYS, Block, EngineDesign, LayerTask,
                              SubgraphLoad, alone_time, average_utilisation, build_subgraphs, design_to_json,
                              feature_blocks, fits, in_tile_for, stage_resources, subgraph_loads)
from core.nets.layers import Network

TILE_CAPS: tuple[int | None, ...] = (None, 1 << 20, 1 << 18, 1 << 16)
ALL_PARTITIONS_UP_TO = 7          # blocks; deeper CNNs use chunkings of equal depth
GROWTH = 1.3                      # each greedy step multiplies the stage's operators by at least this


@dataclass
class DesignPoint:
    """A CNN engine design with its figures at a given bandwidth."""

    cnn: str
    design: EngineDesign
    resources: dict[str, int]
    avg_util: float
    loads: list[SubgraphLoad]
    frame_time_s: float            # one inference (batch) with the whole bandwidth
    batch: int
    ops: int                       # operations per inference

    @property
    def fps(self) -> float:
        return self.batch / self.frame_time_s

    @property
    def gops(self) -> float:
        return self.fps * self.ops / 1e9

    def to_json(self) -> dict[str, Any]:
        return {"cnn": self.cnn, "resources": self.resources, "avg_util": self.avg_util,
                "frame_time_s": self.frame_time_s, "fps": self.fps, "gops": self.gops,
                "design": design_to_json(self.design),
                "subgraphs": [{"name": l.name, "latency_s": l.latency_s, "traffic_bytes": l.traffic_bytes}
                              for l in self.loads]}


def compositions(n: int) -> list[list[list[int]]]:
    """All ways to cut 0..n-1 into consecutive non-empty groups."""
    out = []
    for cuts in itertools.product((False, True), repeat=max(n - 1, 0)):
        groups, cur = [], [0]
        for i, cut in enumerate(cuts, start=1):
            if cut:
                groups.append(cur)
                cur = [i]
            else:
                cur.append(i)
        groups.append(cur)
        out.append(groups)
    return out


def partitions(blocks: list[Block], cap: int | None) -> list[list[list[int]]]:
    """Candidate partitions; folded convolutions always stand alone."""
    n = len(blocks)
    folded = {i for i, b in enumerate(blocks) if in_tile_for(b.conv, cap) < b.conv.in_ch}
    if n <= ALL_PARTITIONS_UP_TO:
        cands = compositions(n)
    else:
        cands = [[list(range(s, min(s + d, n))) for s in range(0, n, d)] for d in range(1, n + 1)]
    seen, out = set(), []
    for groups in cands:
        fixed: list[list[int]] = []
        for g in groups:
            run: list[int] = []
            for i in g:
                if i in folded:
                    if run:
                        fixed.append(run)
                        run = []
                    fixed.append([i])
                else:
                    run.append(i)
            if run:
                fixed.append(run)
        key = tuple(map(tuple, fixed))
        if key not in seen:
            seen.add(key)
            out.append(fixed)
    return out


def _ladder(kind: str, tasks: list[LayerTask]) -> list[tuple[int, int]]:
    """<N_PE, N_op> options of a stage, by increasing operators, each strictly faster than the last."""
    if not tasks:
        return [(1, 1)]
    n_out = max(t.n_out for t in tasks)
    k2 = max(t.k2 for t in tasks)
    pes = sorted({d for d in range(1, n_out + 1) if n_out % d == 0} | {min(n_out, 1 << i) for i in range(12)})
    ops = sorted({d for d in range(1, k2 + 1) if k2 % d == 0})
    cands = sorted(((p * o, sum(t.ii(p, o) for t in tasks), p, o) for p in pes for o in ops))
    ladder, best = [], math.inf
    for _, cyc, p, o in cands:
        if cyc < best:
            best = cyc
            ladder.append((p, o))
    return ladder


class _Grower:
    """Greedy folding growth for one (partition, tile cap), with incremental II bookkeeping."""

    def __init__(self, design: EngineDesign) -> None:
        self.d = design
        design.init_stages()
        self.tasks = design.stage_tasks()
        n_st, n_sg = len(self.tasks), len(design.subgraphs)
        # stage -> subgraph -> tasks
        self.per: list[list[list[LayerTask]]] = [[[] for _ in range(n_sg)] for _ in range(n_st)]
        for j, s in enumerate(design.subgraphs):
            for k, (conv, pools) in enumerate(s.blocks):
                self.per[2 * k][j].append(conv)
                self.per[2 * k + 1][j].extend(pools)
        self.ladders = [_ladder(sc.kind, self.tasks[i]) for i, sc in enumerate(design.stages)]
        self.pos = [0] * n_st
        self.ii = np.zeros((n_st, n_sg))
        self.fill = np.zeros((n_st, n_sg))
        self.res = [stage_resources(sc.kind, self.tasks[i], 1, 1) for i, sc in enumerate(design.stages)]
        for k in range(n_st):
            self._update(k)

    def _update(self, k: int) -> None:
        sc = self.d.stages[k]
        for j, ts in enumerate(self.per[k]):
            iis = [t.ii(sc.n_pe, sc.n_op) for t in ts]
            self.ii[k, j] = max(iis) if iis else 0
            self.fill[k, j] = sum(t.fill(i) for t, i in zip(ts, iis))
        self.res[k] = stage_resources(sc.kind, self.tasks[k], sc.n_pe, sc.n_op)

    def resources(self) -> dict[str, int]:
        base = {"luts": LUT_ENGINE, "ffs": FF_ENGINE, "dsps": 0, "bram18k": BRAM_ENGINE}
        for r in self.res:
            for key in RESOURCE_KEYS:
                base[key] += r[key]
        return base

    def step(self) -> bool:
        """Grow the bottleneck stage; False when no stage can be made faster."""
        arg = np.argmax(self.ii, axis=0)
        weight = np.zeros(len(self.ii))
        np.add.at(weight, arg, self.ii.max(axis=0))
        for k in np.argsort(-weight):
            if weight[k] <= 0:
                break
            lad = self.ladders[k]
            i = self.pos[k]
            if i + 1 >= len(lad):
                continue
            cur = lad[i][0] * lad[i][1]
            nxt = i + 1
            while nxt + 1 < len(lad) and lad[nxt][0] * lad[nxt][1] < GROWTH * cur:
                nxt += 1
            self.pos[k] = nxt
            sc = self.d.stages[k]
            sc.n_pe, sc.n_op = lad[nxt]
            self._update(k)
            return True
        return False


def explore_cnn(net: Network, avail: dict[str, int], clock_hz: float, bandwidth_bps: float, batch: int = 1,
                check: Callable[[], None] = lambda: None, max_steps: int = 400) -> Iterator[DesignPoint]:
    """Every design point the greedy growth visits that fits the device on its own."""
    from core.nets.opcount import workload_ops

    blocks = feature_blocks(net)
    if not blocks:
        raise ValueError(f"{net.name} has no convolutional layer to map")
    ops = workload_ops(net, "fcnnx")
    seen_caps = set()
    for cap in TILE_CAPS:
        tiles = tuple(in_tile_for(b.conv, cap) for b in blocks)
        if tiles in seen_caps:
            continue
        seen_caps.add(tiles)
        for groups in partitions(blocks, cap):
            check()
            design = EngineDesign(net.name, groups, cap, build_subgraphs(blocks, groups, cap))
            g = _Grower(design)
            for _ in range(max_steps):
                res = g.resources()
                if not fits(res, avail):
                    break
                snap = EngineDesign(net.name, groups, cap, design.subgraphs,
                                    [type(s)(s.kind, s.position, s.n_pe, s.n_op) for s in design.stages])
                loads = subgraph_loads(snap, clock_hz, bandwidth_bps, batch)
                yield DesignPoint(net.name, snap, res, average_utilisation(res, avail), loads,
                                  alone_time(loads, bandwidth_bps), batch, ops)
                if not g.step():
                    break


def pareto(points: list[DesignPoint]) -> list[DesignPoint]:
    """Points not dominated in (frame time, average utilisation), by increasing resources."""
    pts = sorted(points, key=lambda p: (p.avg_util, p.frame_time_s))
    front, best = [], math.inf
    for p in pts:
        if p.frame_time_s < best * (1 - 1e-9):
            front.append(p)
            best = p.frame_time_s
    return front


def thin(front: list[DesignPoint], keep: int) -> list[DesignPoint]:
    """At most `keep` front points, spread evenly in log frame time (ends always kept)."""
    if len(front) <= keep:
        return list(front)
    lo, hi = math.log(front[-1].frame_time_s), math.log(front[0].frame_time_s)
    chosen: list[DesignPoint] = []
    for i in range(keep):
        target = hi + (lo - hi) * i / (keep - 1)
        p = min(front, key=lambda q: abs(math.log(q.frame_time_s) - target))
        if p not in chosen:
            chosen.append(p)
    return sorted(chosen, key=lambda p: p.avg_util)


# ---------------------------------------------------------------- joint design points
MCNN_HS_LUTS, MCNN_HS_FFS, MCNN_HS_BRAM = 3000, 4000, 8     # config table, CU, two staging buffers


def scheduler_overhead(n_subgraphs: int) -> dict[str, int]:
    """MCNN-HS: control unit and configuration table (grows with the subgraphs), staging buffers."""
    return {"luts": MCNN_HS_LUTS + 40 * n_subgraphs, "ffs": MCNN_HS_FFS + 60 * n_subgraphs, "dsps": 0,
            "bram18k": MCNN_HS_BRAM}


def joint_resources(points: tuple[DesignPoint, ...]) -> dict[str, int]:
    total = scheduler_overhead(sum(len(p.loads) for p in points))
    for p in points:
        for k in RESOURCE_KEYS:
            total[k] += p.resources[k]
    return total


def joint_points(fronts: list[list[DesignPoint]], avail: dict[str, int]) -> list[tuple[DesignPoint, ...]]:
    """All combinations of front points whose aggregate resources fit the device."""
    return [combo for combo in itertools.product(*fronts) if fits(joint_resources(combo), avail)]
