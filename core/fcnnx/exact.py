"""Exact scheduler for small problems: the cyclic scheduling problem with slow-downs as a CP-SAT
model (OR-Tools), minimising the makespan jointly over start times and slow-down levels.

Each subgraph chooses one slow-down level (an optional interval per level, exactly one present);
the chosen intervals share the bandwidth through a cumulative constraint of CAPACITY units and
each CNN's subgraphs follow each other. The model uses the same ticks, units and levels as the
RCLS heuristic, so the two objectives are directly comparable.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ortools.sat.python import cp_model

from core.fcnnx.schedule import Problem, Schedule


def solve_exact(p: Problem, time_limit_s: float = 60.0, workers: int = 2, hint: Schedule | None = None,
                cancelled: Callable[[], bool] = lambda: False) -> Schedule | None:
    """Minimum-makespan schedule (optimal when `optimal` is set); None when none was found in time.
    `cancelled` is polled every 0.1 s from a watcher thread that stops the solver."""
    m: Any = cp_model.CpModel()     # ortools' stubs only name the snake_case API (ortools >= 9.9)
    n = len(p.tasks)
    horizon = sum(p.duration(i, 1) for i in range(n))
    starts, ends, choice = [], [], []
    intervals, demands = [], []
    for i in range(n):
        s = m.NewIntVar(0, horizon, f"s{i}")
        e = m.NewIntVar(0, horizon, f"e{i}")
        lits = {}
        for lv in range(1, p.max_level(i) + 1):
            if p.demand(i, lv) > p.capacity:
                continue
            x = m.NewBoolVar(f"x{i}_{lv}")
            d = p.duration(i, lv)
            iv = m.NewOptionalIntervalVar(s, d, e, x, f"iv{i}_{lv}")
            intervals.append(iv)
            demands.append(p.demand(i, lv))
            lits[lv] = x
        m.AddExactlyOne(lits.values())
        starts.append(s)
        ends.append(e)
        choice.append(lits)
    m.AddCumulative(intervals, demands, p.capacity)
    for chain in p.chains:
        for a, b in zip(chain, chain[1:]):
            m.Add(ends[a] <= starts[b])
    makespan = m.NewIntVar(0, horizon, "makespan")
    m.AddMaxEquality(makespan, ends)
    m.Minimize(makespan)
    if hint is not None:
        for i in range(n):
            m.AddHint(starts[i], hint.start[i])
            for lv, x in choice[i].items():
                m.AddHint(x, 1 if lv == hint.level[i] else 0)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = workers
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.1):
            if cancelled():
                solver.StopSearch()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        status = solver.Solve(m)
    finally:
        done.set()
        watcher.join()
    if cancelled():
        from core.jobs import Cancelled

        raise Cancelled()
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    levels = [next(lv for lv, x in choice[i].items() if solver.Value(x)) for i in range(n)]
    return Schedule([solver.Value(s) for s in starts], levels, solver.Value(makespan), "cp-sat",
                    status == cp_model.OPTIMAL,
                    {"wall_s": solver.WallTime(), "bound": solver.BestObjectiveBound()})
