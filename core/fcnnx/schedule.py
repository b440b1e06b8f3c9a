"""The cyclic scheduling problem of f-CNNx section III-C with slow-downs, the RCLS heuristic, the
schedule checker, the greedy slow-down proposals and the pattern search of Algorithm 1, and the
objectives FPSobj (eq. 5) and MaxThrpt (eq. 6).

One cycle of length K holds rep(i) inferences of CNN i; its subgraphs form a chain (precedence
s_ij < s_ij+1, and the engine runs one subgraph at a time). Time is counted in integer ticks and
bandwidth in integer units (CAPACITY units = the effective bandwidth), so the heuristic, the exact
CP-SAT model and the checker all judge the same numbers. A slow-down sl = level / LEVELS stretches a
subgraph to ceil(d0 / sl) ticks and scales its demand to ceil(q0 * sl) units (eq. 4). The cycle
is a frame: every subgraph of a cycle ends by K, and the next cycle repeats it; the period may be
stretched beyond the makespan (engines idle) when that improves the objective, e.g. so as not to
overshoot a target frame rate.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterator, Sequence

from core.errors import InputError

CAPACITY = 1000           # bandwidth units that make up the effective bandwidth B_mem
LEVELS = 16               # slow-down grid: sl in {1/16, 2/16, ..., 1}
TARGET_TICKS = 4000       # least resolution of the longest chain
ROUNDING = 1000           # a chain's rounding (at most a tick per subgraph) stays within 1/ROUNDING of it
OBJECTIVES = ("fps", "throughput")


@dataclass(frozen=True)
class Task:
    cnn: int              # CNN index
    sub: int              # subgraph index within the CNN
    rep: int              # which inference of the cycle
    name: str
    d0: int               # ticks at full speed
    q0: int               # bandwidth units at full speed (may exceed CAPACITY: must be slowed down)


@dataclass
class Problem:
    tasks: list[Task]
    chains: list[list[int]]           # task indices per CNN, in precedence order
    reps: list[int]
    tick_s: float
    bandwidth_bps: float              # effective bandwidth that CAPACITY units stand for
    capacity: int = CAPACITY
    levels: int = LEVELS
    batch: int = 1                    # frames per inference of a subgraph chain

    @property
    def frames(self) -> list[int]:
        """Frames each CNN processes per cycle."""
        return [r * self.batch for r in self.reps]

    def duration(self, i: int, level: int) -> int:
        return -(-self.tasks[i].d0 * self.levels // level)

    def demand(self, i: int, level: int) -> int:
        return -(-self.tasks[i].q0 * level // self.levels)

    @cached_property
    def d0(self) -> list[int]:
        return [t.d0 for t in self.tasks]

    @cached_property
    def q0(self) -> list[int]:
        return [t.q0 for t in self.tasks]

    def max_level(self, i: int) -> int:
        """Fastest slow-down level whose demand fits the bandwidth on its own."""
        lv = self.levels
        while lv > 1 and self.demand(i, lv) > self.capacity:
            lv -= 1
        return lv


@dataclass
class Schedule:
    start: list[int]
    level: list[int]
    makespan: int
    method: str = "rcls"
    optimal: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def build_problem(loads: Sequence[Sequence[Any]], reps: Sequence[int], bandwidth_bps: float,
                  batch: int = 1) -> Problem:
    """Tasks of one cycle from each CNN's subgraph loads (latency_s, traffic_bytes) and repetitions."""
    longest = max(r * sum(l.latency_s for l in ls) for ls, r in zip(loads, reps))
    # every subgraph is rounded up by up to a tick, so a chain of many short subgraphs (ZFNet's 62 per
    # inference, 15-22 inferences a cycle) would be stretched by 20 % at a fixed resolution: the tick
    # is at most 1/ROUNDING of each CNN's mean subgraph: no chain grows by more than 1/ROUNDING
    tick = min([longest / TARGET_TICKS] + [sum(l.latency_s for l in ls) / (ROUNDING * len(ls)) for ls in loads if ls])
    tasks: list[Task] = []
    chains: list[list[int]] = []
    for i, (ls, r) in enumerate(zip(loads, reps)):
        chain = []
        for k in range(r):
            for j, l in enumerate(ls):
                # rounded up: a subgraph never gets less time than it needs, so a table replayed on
                # hardware keeps to the schedule (core.fcnnx.hwtable)
                d0 = max(1, math.ceil(l.latency_s / tick - 1e-9))
                q0 = max(1, math.ceil(l.traffic_bytes / (d0 * tick) / bandwidth_bps * CAPACITY - 1e-9))
                chain.append(len(tasks))
                tasks.append(Task(i, j, k, f"{i}:{l.name}#{k + 1}", d0, q0))
        chains.append(chain)
    return Problem(tasks, chains, list(reps), tick, bandwidth_bps, batch=batch)


# ---------------------------------------------------------------- RCLS
def rcls(p: Problem, level: Sequence[int], bandwidth: bool = True) -> Schedule | None:
    """Resource-constrained list scheduling: at each event start the ready subgraphs in order of
    longest remaining chain whose demand fits the free bandwidth. Two list rules are tried, the
    non-delay one (any fitting subgraph starts) and the strict-priority one (nothing starts past a
    subgraph that does not fit, so a long chain is not starved); the shorter schedule is kept.
    None when a subgraph can never fit."""
    a = _rcls(p, level, bandwidth, strict=False)
    if a is None or not bandwidth or not a.info.get("overtook"):
        return a          # nothing ever started past a waiting subgraph: the strict rule gives the same schedule
    b = _rcls(p, level, bandwidth, strict=True)
    return b if b is not None and b.makespan < a.makespan else a


def _rcls(p: Problem, level: Sequence[int], bandwidth: bool, strict: bool) -> Schedule | None:
    # the inner loop runs thousands of times per pattern search: plain lists, no method calls
    n = len(p.tasks)
    L, cap = p.levels, p.capacity
    dur = [-(-d * L // lv) for d, lv in zip(p.d0, level)]
    dem = [-(-q * lv // L) for q, lv in zip(p.q0, level)]
    if bandwidth and max(dem) > cap:
        return None
    chains = p.chains
    remaining = [0] * n
    for chain in chains:
        acc = 0
        for i in reversed(chain):
            acc += dur[i]
            remaining[i] = acc
    lens = [len(ch) for ch in chains]
    nxt = [0] * len(chains)
    busy = [False] * len(chains)
    start = [0] * n
    running: list[tuple[int, int, int]] = []
    used, t, done = 0, 0, 0
    blocked = overtook = False
    while done < n:
        ready = [(-remaining[ch[nxt[c]]], c) for c, ch in enumerate(chains) if not busy[c] and nxt[c] < lens[c]]
        ready.sort()
        waiting = False
        for _, c in ready:
            i = chains[c][nxt[c]]
            if not bandwidth or used + dem[i] <= cap:
                overtook = overtook or waiting
                start[i] = t
                used += dem[i]
                busy[c] = True
                heapq.heappush(running, (t + dur[i], c, i))
            else:
                blocked = waiting = True
                if strict:
                    break
        if not running:
            return None
        t = running[0][0]
        while running and running[0][0] == t:
            _, c, i = heapq.heappop(running)
            used -= dem[i]
            busy[c] = False
            nxt[c] += 1
            done += 1
    return Schedule(start, list(level), max(map(int.__add__, start, dur)), "rcls",
                    info={"blocked": blocked, "overtook": overtook})


# ---------------------------------------------------------------- checker
def check_schedule(p: Problem, s: Schedule) -> list[str]:
    """Every constraint of the problem; an empty list means the schedule is valid."""
    errors: list[str] = []
    n = len(p.tasks)
    if len(s.start) != n or len(s.level) != n:
        return [f"schedule has {len(s.start)} start times and {len(s.level)} slow-downs for {n} subgraphs"]
    for i in range(n):
        if not 1 <= s.level[i] <= p.levels:
            errors.append(f"{p.tasks[i].name}: slow-down {s.level[i]}/{p.levels} outside (0, 1]")
    if errors:
        return errors
    dur = [p.duration(i, s.level[i]) for i in range(n)]
    for i in range(n):
        if s.start[i] < 0 or s.start[i] + dur[i] > s.makespan:
            errors.append(f"{p.tasks[i].name}: runs {s.start[i]}..{s.start[i] + dur[i]}, outside the cycle 0..{s.makespan}")
    for chain in p.chains:
        for a, b in zip(chain, chain[1:]):
            if s.start[a] + dur[a] > s.start[b]:
                errors.append(f"{p.tasks[b].name} starts at {s.start[b]} before {p.tasks[a].name} ends at {s.start[a] + dur[a]}")
    starts = set(s.start)       # the load only rises where a subgraph starts
    for t, load in bandwidth_profile(p, s):
        if t in starts and load > p.capacity:
            errors.append(f"bandwidth {load}/{p.capacity} units exceeded at tick {t}")
    if s.makespan != max(s.start[i] + dur[i] for i in range(n)):
        errors.append(f"makespan {s.makespan} is not the last end time")
    return errors


def bandwidth_profile(p: Problem, s: Schedule) -> list[tuple[int, int]]:
    """(tick, units in use from that tick on) at every change."""
    n = len(p.tasks)
    delta: dict[int, int] = {}
    for i in range(n):
        d, q = p.duration(i, s.level[i]), p.demand(i, s.level[i])
        delta[s.start[i]] = delta.get(s.start[i], 0) + q
        delta[s.start[i] + d] = delta.get(s.start[i] + d, 0) - q
    out, acc = [], 0
    for t in sorted(delta):
        acc += delta[t]
        out.append((t, acc))
    return out


# ---------------------------------------------------------------- objectives
@dataclass(frozen=True)
class Objective:
    """FPSobj (targets in fps) or MaxThrpt (targets = T_max in GOp/s, with ops per inference)."""

    kind: str
    targets: tuple[float, ...]
    ops: tuple[int, ...]

    def rate_factor(self, i: int) -> float:
        """a_i such that the normalised figure of CNN i is a_i * (inferences per second)."""
        if self.kind == "fps":
            return 1.0 / self.targets[i]
        return self.ops[i] / 1e9 / self.targets[i]

    def value_of_fps(self, fps: Sequence[float]) -> float:
        return sum((self.rate_factor(i) * f - 1.0) ** 2 for i, f in enumerate(fps))

    def best_period(self, reps: Sequence[int], makespan_s: float) -> tuple[float, float]:
        """(objective, period) for the best period >= makespan (closed form: the objective is a
        quadratic in 1/period)."""
        a = [r * self.rate_factor(i) for i, r in enumerate(reps)]
        x = min(sum(a) / sum(v * v for v in a), 1.0 / makespan_s)
        return sum((v * x - 1.0) ** 2 for v in a), 1.0 / x


# ---------------------------------------------------------------- Algorithm 1, lines 3-8
def greedy_slowdowns(p: Problem) -> list[int]:
    """Schedule without bandwidth limits, measure each subgraph's worst overlap demand, and slow it
    down by the factor that removes the violation (RemoveViolations)."""
    full = [p.levels] * len(p.tasks)
    s0 = rcls(p, full, bandwidth=False)
    assert s0 is not None
    prof = bandwidth_profile(p, s0)
    ticks = [t for t, _ in prof]
    units = [u for _, u in prof]
    levels = []
    for i in range(len(p.tasks)):
        a, b = s0.start[i], s0.start[i] + p.duration(i, p.levels)
        lo, hi = bisect.bisect_left(ticks, a), bisect.bisect_left(ticks, b)
        peak = max(units[lo:hi], default=0)
        at = bisect.bisect_right(ticks, a) - 1        # the load in force when the subgraph starts
        peak = max(peak, units[at] if at >= 0 else 0)
        lv = p.levels if peak <= p.capacity else max(1, int(p.levels * p.capacity / peak))
        levels.append(min(lv, p.max_level(i)))
    return levels


def _fitting_level(p: Problem, i: int, units: float) -> int:
    """Fastest allowed level at which subgraph i draws at most `units` of bandwidth (at least 1)."""
    return max(1, min(p.max_level(i), int(p.levels * units // p.tasks[i].q0)))


def initial_proposals(p: Problem) -> list[list[int]]:
    """Greedy slow-down proposals: RemoveViolations of the unconstrained RCLS schedule; every
    subgraph at the fastest speed that keeps it within 1/m of the bandwidth (m = 1 .. N+1), so that
    m bandwidth-hungry engines can share the port; fluid shares; and, per engine, that engine at
    full speed with the others in what its heaviest subgraph leaves."""
    n = len(p.tasks)
    props = [greedy_slowdowns(p)]
    for share in range(1, len(p.chains) + 2):      # each subgraph limited to 1/share of the bandwidth
        props.append([_fitting_level(p, i, p.capacity / share) for i in range(n)])
    # fluid shares: engine i gets the fraction of the bandwidth its cycle traffic needs, so that all
    # chains can run side by side and end together when the cycle is bandwidth-bound
    traffic = [sum(p.tasks[i].q0 * p.tasks[i].d0 for i in ch) for ch in p.chains]
    chain_of = [0] * n
    for c, ch in enumerate(p.chains):
        for i in ch:
            chain_of[i] = c
    total = sum(traffic) or 1
    props.append([_fitting_level(p, i, traffic[chain_of[i]] / total * p.capacity) for i in range(n)])
    # one engine gives way to another: when two critical engines cannot run side by side at full
    # speed, the cycle is shortest if one keeps its speed and the other fits in the rest
    for c, ch in enumerate(p.chains):
        left = p.capacity - max(p.demand(i, p.max_level(i)) for i in ch)
        rest = sum(traffic) - traffic[c] or 1
        props.append([p.max_level(i) if chain_of[i] == c else _fitting_level(p, i, left * traffic[chain_of[i]] / rest)
                      for i in range(n)])
    return props


@dataclass
class SearchResult:
    schedule: Schedule
    value: float
    period_s: float
    evaluations: int


def evaluate(p: Problem, levels: Sequence[int], objective: Objective) -> tuple[float, Schedule | None, float]:
    s = rcls(p, levels)
    if s is None:
        return math.inf, None, math.inf
    value, period = objective.best_period(p.frames, s.makespan * p.tick_s)
    return value, s, period


def makespan_lower_bound(p: Problem) -> int:
    """No schedule is shorter than its longest chain at full allowed speed, nor than its total
    traffic (demand x duration, which slow-downs never reduce) over the capacity."""
    chain = max(sum(p.duration(i, p.max_level(i)) for i in ch) for ch in p.chains)
    area = sum(p.tasks[i].q0 * p.tasks[i].d0 for i in range(len(p.tasks)))
    return max(chain, -(-area // p.capacity))


def _chain_ends(p: Problem, s: Schedule) -> int:
    return sum(s.start[c[-1]] + p.duration(c[-1], s.level[c[-1]]) for c in p.chains if c)


def _better(p: Problem, a: tuple[float, Schedule | None, float], b: tuple[float, Schedule | None, float]) -> bool:
    """Objective first; on a tie, the earlier the chains end the better (the makespan is a maximum,
    so single moves often leave it unchanged: this tie-break gives the search a slope to follow)."""
    if a[1] is None:
        return False
    if b[1] is None or a[0] < b[0] - 1e-12:
        return True
    return abs(a[0] - b[0]) <= 1e-12 and _chain_ends(p, a[1]) < _chain_ends(p, b[1])


def best_proposal(p: Problem, objective: Objective, bound: int | None = None) -> SearchResult:
    """The best of the greedy proposals (Algorithm 1, lines 3-5), stopping at the first one whose
    schedule reaches `bound` (the makespan lower bound: nothing can beat it)."""
    bound = makespan_lower_bound(p) if bound is None else bound
    best: tuple[float, Schedule | None, float] = (math.inf, None, math.inf)
    tried = 0
    for lv in initial_proposals(p):
        res = evaluate(p, lv, objective)
        tried += 1
        if _better(p, res, best):
            best = res
            if res[1] is not None and res[1].makespan <= bound:
                break
    if best[1] is None:
        raise too_little_bandwidth(p)
    return SearchResult(best[1], best[0], best[2], tried)


def too_little_bandwidth(p: Problem) -> InputError:
    """Why no proposal schedules: a subgraph that, slowed down as far as the levels go (1/levels of
    its speed), still draws more than the whole off-chip bandwidth. Named by the target's field,
    with how many times more bandwidth it needs."""
    worst = max(range(len(p.tasks)), key=lambda i: p.demand(i, 1) / p.capacity)
    factor = p.demand(worst, 1) / p.capacity
    t = p.tasks[worst]
    if factor <= 1:         # not reached: RCLS schedules every task that fits the bandwidth alone
        return InputError("no schedule fits the off-chip bandwidth", "target.bandwidth_gbps")
    return InputError(f"the off-chip bandwidth ({p.bandwidth_bps / 1e9:.3g} GB/s effective) is too low: subgraph "
                      f"{t.name!r} would need {factor:.3g} times as much even when slowed to 1/{p.levels} of its "
                      f"speed; give a higher bandwidth", "target.bandwidth_gbps")


def pattern_search(p: Problem, objective: Objective, start: Sequence[int] | None = None, budget: int = 300,
                   check: Callable[[], None] = lambda: None, bound: int | None = None) -> SearchResult:
    """Derivative-free pattern search over the slow-down levels (Algorithm 1, line 8) from `start`
    (by default the best greedy proposal): explore the coordinate directions at the current mesh
    size, move on the first improvement; when none improves, poll twice as far; when that fails
    too, halve the mesh. Stops at `bound` (default: `makespan_lower_bound`) or after `budget`
    evaluations, proposals included."""
    bound = makespan_lower_bound(p) if bound is None else bound
    cache: dict[tuple[int, ...], tuple[float, Schedule | None, float]] = {}
    spent = 0
    if start is None:
        first = best_proposal(p, objective, bound)
        cur = list(first.schedule.level)
        cache[tuple(cur)] = (first.value, first.schedule, first.period_s)
        spent = first.evaluations - 1
    else:
        cur = list(start)

    def f(lv: list[int]) -> tuple[float, Schedule | None, float]:
        key = tuple(lv)
        if key not in cache:
            cache[key] = evaluate(p, lv, objective)
        return cache[key]

    best = f(cur)
    n = len(p.tasks)
    caps = [p.max_level(i) for i in range(n)]
    # Directions: each subgraph's own slow-down (largest traffic first), each CNN's together, all
    # together; with both signs they positively span the space, as pattern search requires.
    order = [[i] for i in sorted(range(n), key=lambda i: -p.tasks[i].q0 * p.tasks[i].d0)]
    groups: list[list[int]] = order + [list(c) for c in p.chains if len(c) > 1] + [list(range(n))]
    chain_of = {i: c for c, ch in enumerate(p.chains) for i in ch}

    def moves(step: int) -> Iterator[list[int]]:
        # exploration at the mesh size, then a poll twice as far
        for reach in (step, 2 * step):
            for group in groups:
                for sign in (1, -1):
                    cand = cur.copy()
                    for i in group:
                        cand[i] = min(caps[i], max(1, cur[i] + sign * reach))
                    if cand != cur:
                        yield cand
        # exchanges (on the finest mesh): speed one subgraph up and slow another engine's down just
        # enough for the two to share the bandwidth
        if step > 1:
            return
        for (i,) in order:
            up = min(caps[i], cur[i] + step)
            if up == cur[i]:
                continue
            for (j,) in order:
                if chain_of[j] == chain_of[i]:
                    continue
                lv = cur[j]
                while lv > 1 and p.demand(i, up) + p.demand(j, lv) > p.capacity:
                    lv -= 1
                if lv < cur[j]:
                    cand = cur.copy()
                    cand[i], cand[j] = up, lv
                    yield cand

    step = max(1, p.levels // 8)      # the proposals are already close: start with a fine mesh
    while step >= 1 and spent + len(cache) < budget and best[1] is not None and best[1].makespan > bound:
        moved = False
        for cand in moves(step):
            res = f(cand)
            if len(cache) % 16 == 0:
                check()
            if _better(p, res, best):
                cur, best, moved = cand, res, True
                break
            if spent + len(cache) >= budget:
                break
        if not moved:
            step //= 2
    assert best[1] is not None
    return SearchResult(best[1], best[0], best[2], spent + len(cache))


# ---------------------------------------------------------------- repetitions per cycle
def rep_candidates(frame_s: Sequence[float], bytes_per_inf: Sequence[int], n_subgraphs: Sequence[int],
                   objective: Objective, bandwidth_bps: float, max_rep: int = 4, max_tasks: int = 2400,
                   keep: int = 4, batch: int = 1) -> list[tuple[int, ...]]:
    """Repetition vectors ranked by an optimistic estimate of the cycle (each engine alone, and the
    total traffic over the bandwidth). Candidates: every small vector (entries up to max_rep), and
    vectors proportional to the wanted frame rates (min of the objective's aim and the engine's
    peak), with the slowest CNN repeated 1..8 times and the others rounded down or up."""
    n = len(frame_s)
    vectors: set[tuple[int, ...]] = set(itertools.product(range(1, max_rep + 1), repeat=n))
    want = [min(1.0 / objective.rate_factor(i), batch / frame_s[i]) for i in range(n)]
    slowest = min(want)
    for m in range(1, 9):
        base = [m * w / slowest for w in want]
        for pick in itertools.product((math.floor, math.ceil), repeat=n):
            vectors.add(tuple(max(1, int(f(b))) for f, b in zip(pick, base)))
    scored = []
    rf = [objective.rate_factor(i) for i in range(n)]
    for reps in vectors:     # ~100 vectors per joint point: best_period inlined, same arithmetic
        if math.gcd(*reps) != 1:
            continue
        if sum(r * k for r, k in zip(reps, n_subgraphs)) > max_tasks:
            continue
        k = max(max(r * f for r, f in zip(reps, frame_s)),
                sum(r * b for r, b in zip(reps, bytes_per_inf)) / bandwidth_bps)
        a = [(r * batch) * f for r, f in zip(reps, rf)]
        x = min(sum(a) / sum(v * v for v in a), 1.0 / k)
        scored.append((sum((v * x - 1.0) ** 2 for v in a), sum(reps), reps))
    if not scored:
        scored = [(0.0, n, tuple(1 for _ in frame_s))]
    scored.sort()
    return [r for _, _, r in scored[:keep]]
