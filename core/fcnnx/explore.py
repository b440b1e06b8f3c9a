"""Memory-aware DSE (Algorithm 1) over joint design points, and the contention-unaware baseline.

For a joint design point the scheduler picks repetitions per cycle, proposes slow-downs greedily
(RCLS without bandwidth limits, then RemoveViolations) and refines them by pattern search with the
RCLS scheduler ("rcls"), or solves the scheduling problem exactly with CP-SAT ("ilp"). Joint points
are visited in order of a lower bound on their objective (no CNN can run faster than it does alone
with the whole bandwidth), so the search stops as soon as no unvisited point can win.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from core.fcnnx.bounds import configuration_bound
from core.fcnnx.dse import DesignPoint
from core.fcnnx.exact import solve_exact
from core.fcnnx.hwsched import BURST_LENGTH, elements_per_beat, rounds_needed, slots_for
from core.fcnnx.result import CompactSchedule, ScheduledSubgraph
from core.fcnnx.result import Schedule as StoredSchedule
from core.fcnnx.schedule import (CAPACITY, Objective, Problem, Schedule, SearchResult, bandwidth_profile,
                                 best_proposal, build_problem, check_schedule, makespan_lower_bound,
                                 pattern_search, rep_candidates)

SCHEDULERS = ("rcls", "ilp")
ILP_MAX_TASKS = 60        # the exact scheduler is for small problems (subgraphs per cycle)
# subgraphs per cycle for rcls: a cycle holds whole inferences, so rates 20:1 between a CNN of 62
# subgraphs and a slow one need ~1,300 of one CNN alone (Table III row 6 takes 1,833)
MAX_TASKS = 2400
# pattern search on a cycle of n subgraphs costs ~n per evaluation: above this size the budget shrinks
# so that a cycle costs no more than one of this size at the full budget (at least a quarter of it)
BUDGET_TASKS = 800


@dataclass
class PointResult:
    combo: tuple[DesignPoint, ...]
    value: float
    reps: tuple[int, ...]
    problem: Problem
    schedule: Schedule
    period_s: float
    evaluations: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def fps(self) -> list[float]:
        return [f / self.period_s for f in self.problem.frames]


def peak_fps(combo: Sequence[DesignPoint]) -> list[float]:
    """Each engine alone with the whole bandwidth (the blue points of Fig. 4)."""
    return [p.fps for p in combo]


def lower_bound(combo: Sequence[DesignPoint], objective: Objective) -> float:
    """No CNN runs faster than alone, and the period can always be stretched: a valid bound."""
    total = 0.0
    for i, p in enumerate(combo):
        x = objective.rate_factor(i) * p.fps
        total += (x - 1.0) ** 2 if x < 1.0 else 0.0
    return total * 0.999


def async_estimate(combo: Sequence[DesignPoint], objective: Objective, bandwidth_bps: float, efficiency: float,
                   limit: Sequence[float | None]) -> list[float]:
    """Fluid estimate of the contention-unaware design (red points of Fig. 4): engines demand
    bandwidth for their (rate-limited) frame rates and share an interleaved port of lower efficiency
    in proportion to demand."""
    fps = [min(p.fps, l) if l else p.fps for p, l in zip(combo, limit)]
    demand = sum(f * sum(l.traffic_bytes for l in p.loads) for f, p in zip(fps, combo))
    avail = bandwidth_bps * efficiency
    scale = min(1.0, avail / demand) if demand > 0 else 1.0
    return [f * scale for f in fps]


@dataclass(order=True)
class _Cycle:
    """A repetition vector waiting in schedule_point's queue, keyed by the best objective its
    makespan bound allows."""

    key: float
    seq: int
    reps: tuple[int, ...] = field(compare=False)
    problem: Problem = field(compare=False)
    bound: int = field(compare=False)
    refined: bool = field(compare=False, default=False)
    probe: SearchResult | None = field(compare=False, default=None)


def schedule_point(combo: tuple[DesignPoint, ...], objective: Objective, bandwidth_bps: float, scheduler: str = "rcls",
                   budget: int = 300, ilp_time_limit: float = 60.0, max_tasks: int = MAX_TASKS,
                   check: Callable[[], None] = lambda: None,
                   cancelled: Callable[[], bool] = lambda: False) -> PointResult | None:
    """The best (repetitions, slow-downs, schedule) for one joint design point.

    Repetition vectors are taken best bound first, so that the others are often pruned. A vector's
    bound starts as the simple one (longest chain, traffic) and is tightened by the configuration
    bound the first time the vector comes up, then the vector goes back into the queue: a vector
    whose engines cannot all run at full speed together is not scheduled before one that may beat
    it. With rcls the greedy proposals are tried first; one that reaches the simple bound is optimal
    for its vector and needs neither the tighter bound nor the pattern search."""
    t0 = time.perf_counter()
    frames = [p.frame_time_s for p in combo]
    traffic = [sum(l.traffic_bytes for l in p.loads) for p in combo]
    nsub = [len(p.loads) for p in combo]
    if scheduler == "ilp":
        max_tasks = min(max_tasks, ILP_MAX_TASKS)
        if sum(nsub) > max_tasks:
            return None
    batch = combo[0].batch

    def key(prob: Problem, bound: int) -> float:
        return objective.best_period(prob.frames, bound * prob.tick_s)[0]

    queue: list[_Cycle] = []
    for reps in rep_candidates(frames, traffic, nsub, objective, bandwidth_bps, max_tasks=max_tasks, batch=batch):
        prob = build_problem([p.loads for p in combo], reps, bandwidth_bps, batch)
        bound = makespan_lower_bound(prob)
        queue.append(_Cycle(key(prob, bound), len(queue), tuple(reps), prob, bound))
    heapq.heapify(queue)
    best: PointResult | None = None
    evaluations = 0

    def consider(c: _Cycle, sched: Schedule, value: float, period: float) -> None:
        nonlocal best
        if best is None or value < best.value:
            best = PointResult(combo, value, c.reps, c.problem, sched, period)

    while queue:
        check()
        c = heapq.heappop(queue)
        if best is not None and c.key >= best.value:      # nor can any other: the queue is ordered
            break
        if scheduler == "rcls" and c.probe is None:
            c.probe = best_proposal(c.problem, objective, c.bound)
            evaluations += c.probe.evaluations
            consider(c, c.probe.schedule, c.probe.value, c.probe.period_s)
            if c.probe.schedule.makespan <= c.bound:
                continue
        if not c.refined:
            c.bound, c.refined = configuration_bound(c.problem, c.bound), True
            c.key = key(c.problem, c.bound)
            heapq.heappush(queue, c)
            continue
        if scheduler == "ilp":
            sched = solve_exact(c.problem, ilp_time_limit, cancelled=cancelled)
            if sched is None:
                continue
            value, period = objective.best_period(c.problem.frames, sched.makespan * c.problem.tick_s)
            evaluations += 1
        else:
            assert c.probe is not None      # the rcls branch above always sets it
            n = len(c.problem.tasks)
            res = pattern_search(c.problem, objective, start=c.probe.schedule.level, check=check, bound=c.bound,
                                 budget=min(budget, max(budget // 4, budget * BUDGET_TASKS // n)))
            sched, value, period = res.schedule, res.value, res.period_s
            evaluations += res.evaluations
        consider(c, sched, value, period)
    if best is not None:
        best.errors = check_schedule(best.problem, best.schedule)
        best.evaluations = evaluations
        best.seconds = time.perf_counter() - t0
    return best


def chosen_schedule(r: PointResult, names: Sequence[str]) -> StoredSchedule:
    """Start times, slow-downs and slots of one cycle: the result's `schedule` of the chosen point."""
    p, s = r.problem, r.schedule
    rows: list[ScheduledSubgraph] = []
    epb = elements_per_beat()
    for i, t in enumerate(p.tasks):
        d, q = p.duration(i, s.level[i]), p.demand(i, s.level[i])
        load = r.combo[t.cnn].loads[t.sub]
        slots = slots_for(q / CAPACITY)
        elements = load.traffic_bytes // 2
        rows.append(ScheduledSubgraph(
            cnn=names[t.cnn], subgraph=load.name, inference=t.rep + 1, start_s=s.start[i] * p.tick_s,
            duration_s=d * p.tick_s, slowdown=s.level[i] / p.levels, bandwidth_gbps=q / CAPACITY * p.bandwidth_bps / 1e9,
            slots=slots, elements=elements, rounds_alone=rounds_needed(elements, slots), burst=BURST_LENGTH,
            elements_per_beat=epb))
    prof = bandwidth_profile(p, s)
    # the MCNN-HS configuration of the whole cycle is the result's hardware_table (core.fcnnx.hwtable)
    return StoredSchedule(method=s.method, optimal=s.optimal, repetitions=list(r.reps),
                          frames_per_cycle=r.problem.frames,
                          makespan_s=s.makespan * p.tick_s, period_s=r.period_s, tick_s=p.tick_s, subgraphs=rows,
                          constraint_violations=r.errors,
                          bandwidth_profile=[(t * p.tick_s, u / CAPACITY * p.bandwidth_bps / 1e9) for t, u in prof])


def _g(x: float) -> float:
    return float(f"{x:.6g}")


def schedule_compact(r: PointResult) -> CompactSchedule:
    """One cycle of a joint point the search scheduled but did not choose, as much as a Gantt chart and
    a bandwidth profile need: one column per quantity (6 significant digits), CNNs and subgraphs by
    index (names are on the design points). `chosen_schedule` is the full form, kept for the chosen point."""
    p, s = r.problem, r.schedule
    tasks = list(enumerate(p.tasks))
    return CompactSchedule(
        method=s.method, optimal=s.optimal, repetitions=list(r.reps), makespan_s=s.makespan * p.tick_s,
        period_s=r.period_s, objective=r.value, fps=r.fps,
        cnn=[t.cnn for _, t in tasks], sub=[t.sub for _, t in tasks], inference=[t.rep + 1 for _, t in tasks],
        start_s=[_g(s.start[i] * p.tick_s) for i, _ in tasks],
        duration_s=[_g(p.duration(i, s.level[i]) * p.tick_s) for i, _ in tasks],
        slowdown=[_g(s.level[i] / p.levels) for i, _ in tasks],
        bandwidth_gbps=[_g(p.demand(i, s.level[i]) / CAPACITY * p.bandwidth_bps / 1e9) for i, _ in tasks],
        bandwidth_profile=[(_g(t * p.tick_s), _g(u / CAPACITY * p.bandwidth_bps / 1e9))
                           for t, u in bandwidth_profile(p, s)])


def memory_aware_dse(joints: Sequence[tuple[DesignPoint, ...]], objective: Objective, bandwidth_bps: float,
                     scheduler: str = "rcls", max_joint: int = 60, **kw: Any) -> tuple[PointResult | None, int]:
    """Algorithm 1 without the event stream: joint points by increasing lower bound, each scheduled,
    stopping when no remaining point can beat the best. Returns (best, points scheduled)."""
    best: PointResult | None = None
    visited = 0
    for combo in sorted(joints, key=lambda c: lower_bound(c, objective))[:max_joint]:
        if best is not None and lower_bound(combo, objective) >= best.value:
            break
        res = schedule_point(combo, objective, bandwidth_bps, scheduler, **kw)
        visited += 1
        if res is not None and (best is None or res.value < best.value):
            best = res
    return best, visited
