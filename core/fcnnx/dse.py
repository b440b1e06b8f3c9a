"""Per-CNN design space exploration (latency-resource Pareto front) and joint design points.

For every partition of the CNN into subgraphs and every weight-tile cap (input folding), the
folding of the engine's stages is grown greedily from one PE of one operator per stage: each step
gives the bottleneck stage (the one setting II_max in most of the frame time) its next larger
<N_PE, N_op> configuration, as fpgaConvNet-style explorers do. A step that does not fit falls back
to the options between it and the last fitting one before the stage stops growing. Every fitting
step is a design point; "fits" is always the joint design's check (the engine plus its hardware
scheduler, MCNN-HS), so a CNN's fastest point is one that a joint design can hold. The points that
are not dominated in (frame time with the whole bandwidth, average resource use) form the CNN's
Pareto front. Joint design points are the combinations of front points whose summed resources
(plus the hardware scheduler) fit the device.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterator, Sequence

import numpy as np

from core.fcnnx.model import (ON_CHIP, STREAMED, RESOURCE_KEYS, Block, EngineDesign, LayerTask, StageConfig,
                              SubgraphLoad, alone_time, average_utilisation, build_subgraphs, choose_placement,
                              engine_base, feature_blocks, fits, in_tile_for, stage_resources,
                              subgraph_loads)
from core.nets.layers import Network

TILE_CAPS: tuple[int | None, ...] = (None, 1 << 20, 1 << 18, 1 << 16)
ALL_PARTITIONS_UP_TO = 7          # blocks; deeper CNNs use chunkings of equal depth
GROWTH = 1.3                      # each greedy step makes the stage at least this much faster


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


def _ladder(kind: str, tasks: list[LayerTask], avail: dict[str, int]) -> list[tuple[int, int]]:
    """<N_PE, N_op> options of a stage by increasing cost (the stage's share of the device, summed over
    the four resources, weights streamed), each strictly faster than every cheaper one."""
    return list(_ladder_cycles(kind, tuple(tasks), tuple(avail[k] for k in RESOURCE_KEYS))[0])


@lru_cache(maxsize=4096)
def _ladder_cycles(kind: str, tasks: tuple[LayerTask, ...], device: tuple[int, ...]
                   ) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """`_ladder` on a device of `device` (its RESOURCE_KEYS), with each option's cycles (the sum of
    the tasks' II); remembered, as the design space exploration sizes the same stages for many
    partitions and tile caps."""
    avail = dict(zip(RESOURCE_KEYS, device))
    if not tasks:
        return ((1, 1),), (0,)
    n_out = max(t.n_out for t in tasks)
    k2 = max(t.k2 for t in tasks)
    # every PE count that is the smallest for its ceil(N_out / N_PE) (the divisors among them)
    pes = sorted({math.ceil(n_out / q) for q in range(1, n_out + 1)})
    ops = sorted({d for d in range(1, k2 + 1) if k2 % d == 0})
    listed = list(tasks)

    def cost(p: int, o: int) -> float:
        r = stage_resources(kind, listed, p, o, STREAMED)
        return sum(r[k] / avail[k] for k in RESOURCE_KEYS)

    cands = sorted(((cost(p, o), sum(t.ii(p, o) for t in tasks), p, o) for p in pes for o in ops))
    ladder, cycles, best = [], [], math.inf
    for _, cyc, p, o in cands:
        if cyc < best:
            best = cyc
            ladder.append((p, o))
            cycles.append(cyc)
    return tuple(ladder), tuple(cycles)


MCNN_HS_LUTS, MCNN_HS_FFS, MCNN_HS_BRAM = 3000, 4000, 8     # config table, CU, two staging buffers


def scheduler_overhead(n_subgraphs: int) -> dict[str, int]:
    """MCNN-HS: control unit and configuration table (grows with the subgraphs), staging buffers."""
    return {"luts": MCNN_HS_LUTS + 40 * n_subgraphs, "ffs": MCNN_HS_FFS + 60 * n_subgraphs, "dsps": 0,
            "bram18k": MCNN_HS_BRAM}


def fit_base(n_subgraphs: int) -> dict[str, int]:
    """What every engine design carries besides its stages when it fits: the engine's fixed part
    and the MCNN-HS for its subgraphs, as a joint design of this CNN alone charges it."""
    base, hs = engine_base(), scheduler_overhead(n_subgraphs)
    return {k: base[k] + hs[k] for k in RESOURCE_KEYS}


class _Grower:
    """Greedy folding growth for one (partition, tile cap), with incremental II bookkeeping."""

    def __init__(self, design: EngineDesign, avail: dict[str, int]) -> None:
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
        device = tuple(avail[k] for k in RESOURCE_KEYS)
        ladders = [_ladder_cycles(sc.kind, tuple(self.tasks[i]), device) for i, sc in enumerate(design.stages)]
        self.ladders = [list(lad) for lad, _ in ladders]
        self.cycles = [list(cyc) for _, cyc in ladders]
        for sc, lad in zip(design.stages, self.ladders):      # start at each stage's cheapest option
            sc.n_pe, sc.n_op = lad[0]
        self.pos = [0] * n_st
        self.frozen = [False] * n_st      # stages whose next option made the engine not fit
        self.last: tuple[int, int] | None = None     # (stage, position) of the last step
        self.retry: list[int] = []        # that stage's positions to try if the step does not fit
        self.ii = np.zeros((n_st, n_sg))
        self.res = [stage_resources(sc.kind, self.tasks[i], 1, 1) for i, sc in enumerate(design.stages)]
        self.res_streamed = list(self.res)
        for k in range(n_st):
            self._update(k)

    def _update(self, k: int) -> None:
        sc = self.d.stages[k]
        for j, ts in enumerate(self.per[k]):
            iis = [t.ii(sc.n_pe, sc.n_op) for t in ts]
            self.ii[k, j] = max(iis) if iis else 0
        self.res[k] = stage_resources(sc.kind, self.tasks[k], sc.n_pe, sc.n_op, ON_CHIP)
        self.res_streamed[k] = stage_resources(sc.kind, self.tasks[k], sc.n_pe, sc.n_op, STREAMED)

    def placements(self, avail: dict[str, int]) -> list[list[str]]:
        """The weight placements to offer at this folding: on chip where they fit and, when it
        differs, every stage that can stream streamed (the least BRAM); none if neither fits."""
        fitted = choose_placement(fit_base(len(self.d.subgraphs)), self.res, self.res_streamed, avail)
        if fitted is None:
            return []
        least = [STREAMED if s["bram18k"] < o["bram18k"] else ON_CHIP for o, s in zip(self.res, self.res_streamed)]
        return [fitted] if least == fitted else [fitted, least]

    def resources(self, placement: list[str]) -> dict[str, int]:
        base = engine_base()
        for w, on, st in zip(placement, self.res, self.res_streamed):
            r = on if w == ON_CHIP else st
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
            if i + 1 >= len(lad) or self.frozen[k]:
                continue
            cyc = self.cycles[k]
            nxt = i + 1
            while nxt + 1 < len(lad) and cyc[nxt] * GROWTH > cyc[i]:
                nxt += 1
            self.last = (int(k), i)
            self.retry = self._fallbacks(i, nxt, len(lad))
            self._set(int(k), nxt)
            return True
        return False

    def _set(self, k: int, pos: int) -> None:
        self.pos[k] = pos
        sc = self.d.stages[k]
        sc.n_pe, sc.n_op = self.ladders[k][pos]
        self._update(k)

    @staticmethod
    def _fallbacks(pos: int, failed: int, n: int, tries: int = 3) -> list[int]:
        """Where to go, fastest first, if the step from `pos` to `failed` does not fit: the next few
        options (BRAM is not monotone in the folding: more banks can need fewer BRAMs each), then
        the smaller steps between `pos` and `failed` (a step skips options less than GROWTH faster,
        and one of them may fit where the step does not)."""
        return list(range(failed + 1, min(failed + 1 + tries, n))) + list(range(failed - 1, pos, -1))

    def undo(self) -> bool:
        """The last step did not fit: tries its fallbacks one by one, else takes the step back and
        stops growing that stage. False if there was no step to take back."""
        if self.last is None:
            return False
        k, pos = self.last
        if self.retry:
            self._set(k, self.retry.pop(0))
            return True
        self.last = None
        self._set(k, pos)
        self.frozen[k] = True
        return True


def explore_cnn(net: Network, avail: dict[str, int], clock_hz: float, bandwidth_bps: float, batch: int = 1,
                check: Callable[[], None] = lambda: None, max_steps: int = 400) -> Iterator[DesignPoint]:
    """Every design point the greedy growth visits that fits the device on its own, with its
    hardware scheduler (the check `joint_points` applies to a joint design of this CNN alone)."""
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
            g = _Grower(design, avail)
            for _ in range(max_steps):
                variants = g.placements(avail)
                if not variants:
                    if g.undo() and (g.last is not None or g.step()):   # a further option, or another stage
                        continue
                    break
                for placement in variants:
                    res = g.resources(placement)
                    snap = EngineDesign(net.name, groups, cap, design.subgraphs,
                                        [StageConfig(s.kind, s.position, s.n_pe, s.n_op, w)
                                         for s, w in zip(design.stages, placement)])
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


def thin(front: list[DesignPoint], keep: int, target_fps: float | None = None) -> list[DesignPoint]:
    """At most `keep` front points, spread evenly in log frame time (ends kept). With a target (the
    joint enumeration), the two points around it come first: the cheapest that reaches it and the
    fastest that does not (the best a joint design may have room for when the other CNNs take their
    share); then the ends, and the remaining places spread evenly in average resource use, the
    quantity joint designs share out (in log frame time most places go to the cheapest designs)."""
    if len(front) <= keep:
        return list(front)
    chosen: list[DesignPoint] = []
    if target_fps is None:
        lo, hi = math.log(front[-1].frame_time_s), math.log(front[0].frame_time_s)
        for i in range(keep):
            aim = hi + (lo - hi) * i / max(keep - 1, 1)
            p = min(front, key=lambda q: abs(math.log(q.frame_time_s) - aim))
            if p not in chosen:
                chosen.append(p)
        return sorted(chosen, key=lambda p: p.avg_util)
    reach = [p for p in front if p.fps >= target_fps * (1 - 1e-9)]
    below = [p for p in front if p.fps < target_fps * (1 - 1e-9)]
    near = ([min(reach, key=lambda q: q.avg_util)] if reach else []) + ([max(below, key=lambda q: q.fps)] if below else [])
    for cand in near + [front[0], front[-1]]:
        if cand not in chosen and len(chosen) < keep:
            chosen.append(cand)
    rest = [p for p in front if p not in chosen]
    m = keep - len(chosen)
    least, most = front[0].avg_util, front[-1].avg_util
    for i in range(1, m + 1):
        share = least + (most - least) * i / (m + 1)
        p = min(rest, key=lambda q: abs(q.avg_util - share))
        chosen.append(p)
        rest.remove(p)
    return sorted(chosen, key=lambda p: p.avg_util)


# ---------------------------------------------------------------- joint design points
def joint_resources(points: tuple[DesignPoint, ...]) -> dict[str, int]:
    total = scheduler_overhead(sum(len(p.loads) for p in points))
    for p in points:
        for k in RESOURCE_KEYS:
            total[k] += p.resources[k]
    return total


def joint_feasible(fronts: list[list[DesignPoint]], avail: dict[str, int]) -> list[list[DesignPoint]]:
    """Each front without the points that no joint design can hold: with every other CNN at its least
    of each resource (and fewest subgraphs), a bound no real partner beats, they would not fit. If a
    front loses every point nothing fits together; then each front keeps only its cheapest point."""
    least = [{k: min(p.resources[k] for p in f) for k in RESOURCE_KEYS} for f in fronts]
    fewest = [min(len(p.loads) for p in f) for f in fronts]
    out = []
    for i, f in enumerate(fronts):
        others = {k: sum(least[j][k] for j in range(len(fronts)) if j != i) for k in RESOURCE_KEYS}
        n_others = sum(fewest) - fewest[i]
        keep = []
        for p in f:
            hs = scheduler_overhead(n_others + len(p.loads))
            if fits({k: others[k] + p.resources[k] + hs[k] for k in RESOURCE_KEYS}, avail):
                keep.append(p)
        out.append(keep)
    if not all(out):
        return [[min(f, key=lambda p: p.avg_util)] for f in fronts]
    return out


def joint_fronts(fronts: list[list[DesignPoint]], avail: dict[str, int], keep: int,
                 targets_fps: Sequence[float | None] | None = None) -> list[list[DesignPoint]]:
    """The front points that enter the joint enumeration: those a joint design can hold, thinned to
    `keep` per CNN around its target (None: no target, as for the throughput objective)."""
    aims: list[float | None] = list(targets_fps) if targets_fps else [None] * len(fronts)
    return [thin(f, keep, t) for f, t in zip(joint_feasible(fronts, avail), aims)]


def joint_points(fronts: list[list[DesignPoint]], avail: dict[str, int]) -> list[tuple[DesignPoint, ...]]:
    """All combinations of front points whose aggregate resources fit the device."""
    return [combo for combo in itertools.product(*fronts) if fits(joint_resources(combo), avail)]
