"""A lower bound on one cycle's makespan that sees engines competing for the bandwidth.

The simple bound (`schedule.makespan_lower_bound`: the longest chain, or the total traffic over
the bandwidth) cannot see a cycle in which two engines are both nearly critical but cannot run side
by side at full speed: one of them has to be slowed down, so the cycle is longer than either figure.
Such a repetition vector is never pruned by the simple bound, and its pattern search runs until it
gives up, because it never reaches a bound it cannot reach.

This is a Lagrangian (configuration) bound. Give every subgraph a weight pi >= 0 that it earns
evenly while it runs: at slow-down level l, pi / duration(l) per tick. At any instant each engine
runs at most one subgraph and the running demands fit the bandwidth, so the whole schedule earns
at most M(pi) per tick, the best rate of any such combination of engine modes (a multiple-choice
knapsack over the engines). Every subgraph earns its pi in full, so for every pi

    makespan >= sum(pi) / M(pi).

pi = fastest duration on one chain (zero elsewhere) gives that chain's length; pi = demand x
duration / capacity gives the traffic bound. The bound searches their mixtures
pi_s = lambda_engine(s) * fastest duration(s) + traffic(s) / capacity over lambda >= 0 (a pattern
search in log lambda); each lambda gives a valid bound, the search only makes it tighter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.fcnnx.schedule import Problem, makespan_lower_bound

COMBINATIONS = 50_000     # most mode combinations of the other engines enumerated at once


@dataclass(frozen=True)
class _Modes:
    """One engine's modes, idle included: demand bucket, speed (fraction of the fastest duration)
    and traffic earning rate. Subgraphs with equal demand buckets are merged into one mode with
    the larger speed and rate of each, which can only raise M, so the bound stays valid."""

    w: np.ndarray
    speed: np.ndarray
    rate: np.ndarray


def _engine_modes(p: Problem, chain: list[int], bucket: int) -> _Modes:
    best: dict[int, tuple[float, float]] = {0: (0.0, 0.0)}
    seen: set[tuple[int, int]] = set()
    for i in chain:
        if (p.d0[i], p.q0[i]) in seen:        # repetitions of a subgraph have the same modes
            continue
        seen.add((p.d0[i], p.q0[i]))
        top = p.max_level(i)
        fastest = p.duration(i, top)
        traffic = p.q0[i] * p.d0[i] / p.capacity
        for lv in range(1, top + 1):
            d = p.duration(i, lv)
            w = p.demand(i, lv) // bucket
            s, r = best.get(w, (0.0, 0.0))
            best[w] = (max(s, fastest / d), max(r, traffic / d))
    ws = sorted(best)
    return _Modes(np.array(ws), np.array([best[w][0] for w in ws]), np.array([best[w][1] for w in ws]))


class _Oracle:
    """M(pi) for pi = lambda-mixtures. The engine with the most modes is looked up through a running
    maximum over its demand; the others' mode combinations that fit are enumerated once."""

    def __init__(self, p: Problem) -> None:
        bucket = 1
        while True:
            modes = [_engine_modes(p, ch, bucket) for ch in p.chains]
            cap = p.capacity // bucket       # sum(floor(q / bucket)) <= floor(capacity / bucket): a relaxation
            order = sorted(range(len(modes)), key=lambda c: -len(modes[c].w))
            if self._combine(modes, order, cap):
                break
            bucket *= 2
        self.order = order
        first = modes[order[0]]
        self.w0, self.s0, self.r0 = first.w, first.speed, first.rate
        self.lengths = np.array([sum(p.duration(i, p.max_level(i)) for i in ch) for ch in p.chains], float)
        self.traffic = sum(p.q0[i] * p.d0[i] for i in range(len(p.tasks))) / p.capacity

    def _combine(self, modes: list[_Modes], order: list[int], cap: int) -> bool:
        w = np.zeros(1, dtype=np.int64)
        speed = np.zeros((1, 0))
        rate = np.zeros(1)
        for c in order[1:]:
            m = modes[c]
            if len(w) * len(m.w) > COMBINATIONS:
                return False
            ww = (w[:, None] + m.w[None, :]).ravel()
            keep = ww <= cap
            speed = np.hstack([np.repeat(speed, len(m.w), axis=0), np.tile(m.speed, len(w))[:, None]])[keep]
            rate = (rate[:, None] + m.rate[None, :]).ravel()[keep]
            w = ww[keep]
        self.lookup = np.searchsorted(modes[order[0]].w, cap - w, side="right") - 1
        self.speed, self.rate = speed, rate
        return True

    def rate_bound(self, lam: np.ndarray) -> float:
        """M(pi) for weights lam (one per engine, in chain order)."""
        first = np.maximum.accumulate(lam[self.order[0]] * self.s0 + self.r0)
        others = self.speed @ lam[self.order[1:]] + self.rate
        return float((first[self.lookup] + others).max())

    def bound(self, lam: np.ndarray) -> float:
        return (float(self.lengths @ lam) + self.traffic) / self.rate_bound(lam)


def configuration_bound(p: Problem, simple: int | None = None, max_evaluations: int = 200) -> int:
    """A makespan lower bound at least as high as `makespan_lower_bound` (passed as `simple` when
    already known)."""
    simple = makespan_lower_bound(p) if simple is None else simple
    if len(p.chains) < 2:
        return simple
    oracle = _Oracle(p)
    n = len(p.chains)
    lam = np.ones(n)
    best = oracle.bound(lam)
    directions = list(np.eye(n)) + [np.ones(n)]
    step, evaluations = 4.0, 1
    while step > 1.1 and evaluations < max_evaluations:
        moved = False
        for cand in (lam * step ** (sign * d) for d in directions for sign in (1, -1)):
            value = oracle.bound(cand)
            evaluations += 1
            if value > best + 1e-9:
                lam, best, moved = cand, value, True
                break
        if not moved:
            step = math.sqrt(step)
    return max(simple, math.ceil(best - 1e-6))
