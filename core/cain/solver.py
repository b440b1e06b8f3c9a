"""Drives a Cain search to verified programs: problem set-up, worker processes, allocation,
verification, and the AUKE-style one-kernel-at-a-time baseline.

`solve` is a generator of `Improvement` (a new shortest verified program) and `Stats` events; the
engine turns them into job events and `api.compile_filter` keeps the last improvement.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as queue_mod
import random
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from core.cain import goals as gl
from core.cain.approx import Approximation
from core.cain.codegen import Allocated, AllocationError, allocate, goal_bag_json
from core.cain.goals import Bag, Goal
from core.cain.native import MAX_REGISTERS as MAX_NATIVE_REGISTERS
from core.cain.native import NativeSearcher, NativeUnavailable
from core.cain.native import available as native_available
from core.cain.pairgen import PairConfig
from core.cain.search import Plan, Searcher
from core.cain.verify import verify
from core.errors import InputError
from core.jobs import CancelToken
from core.scamp5.isa import InstructionSet, register_names
from core.scamp5.program import Instr

SLICE_NODES = 40          # nodes per search slice between checks (well under 0.2 s)
NATIVE_SLICE_NODES = 4000  # the same for the compiled published search (a few ms to a tenth of a second)
PUBLISHED_WORKER = 1      # the portfolio member that runs the published tool's search (core/cain/native.py)
MEMORY_BUDGET_MB = 660    # all search processes together; each trims its frontier beyond its share
NATIVE_MEMORY_SHARE = 0.75  # of what its process leaves of a share, the compiled search's own limit
MEMORY_CHECK_S = 0.5      # how often a search compares its memory with its share
SEED_NODES_PER_KERNEL = 6000   # one-by-one seed program: nodes per kernel (unless its time share ends it first)
STOP_GRACE_S = 0.5        # how long a stopped search waits for its workers (a slice, then exit) before killing them


def trim_limit(share: float) -> float:
    """The memory at which to trim next: freed memory is not always given back to the system,
    so the next trim waits until the process has grown by a fifth of its share again (trimming
    at every check would halve the frontier each time), but never beyond 1.2 shares: the run's
    processes stay under 1 GB together (issue 15) while freed memory is reused."""
    return min(max(share, _rss_mb() + share / 5), 1.2 * share)


def _rss_mb() -> float:
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2 ** 20
    except Exception:  # psutil missing or failing: no guard
        return 0.0


@dataclass
class Problem:
    """One search: Final-Goals in a register file, with the Initial-Goals per channel."""

    cfg: PairConfig
    final_goals: list[Goal]
    initial: dict[Goal, int]
    regs: tuple[str, ...]

    @property
    def final_bag(self) -> Bag:
        return gl.make_bag(self.final_goals)


def build_problem(goals: list[Goal], d: int, channels: int, regs: tuple[str, ...], isa: InstructionSet,
                  seed: int = 0) -> Problem:
    initial = {gl.make_goal({(0, 0, z): 2 ** d}): z for z in range(channels)}
    radius = max(max(abs(x), abs(y)) for g in goals for x, y, _, _ in gl.atoms(g))
    max_coef = max(2 ** d, max(gl.max_mult(g) for g in goals))
    cfg = PairConfig(d=d, registers=len(regs), isa=isa, initial=gl.make_bag(initial), max_coef=max_coef,
                     max_radius=radius + 2, rng=random.Random(seed))
    return Problem(cfg, list(goals), initial, regs)


@dataclass
class Stats:
    nodes: int
    elapsed: float
    best: int | None


@dataclass
class Improvement:
    """A verified program (the shortest so far)."""

    program: list[Instr]
    output_registers: dict[str, str]
    input_registers: dict[int, str]
    nodes: int
    elapsed: float
    verified: bool
    check: str
    bags: list[list[dict[str, Any]]] = field(default_factory=list)
    method: str = "simultaneous"
    searcher: str = "engine"     # which portfolio member found it (Plan.searcher)
    registers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def length(self) -> int:
        return len(self.program)


# ------------------------------------------------------------------ worker processes
def worker_variant(index: int) -> dict[str, Any]:
    """Heuristic and generator of worker `index`'s own search: a portfolio whose members search
    differently.

    Worker 0 (also the single in-process search) counts a Goal's Atoms divided by their common
    power of two (scaled eq. 11-14), splits only the largest Goal at each node, and gives Goals of
    up to 6 Atoms every split. Odd workers follow the published tool's recipe: eq. 11-14 as printed,
    every Goal split, every split of Goals up to 10 Atoms (its Threshold generator), and there also
    the three-part splits with one part a Goal of the bag (its add_3 pairs that share). Worker 1
    runs the published tool's own search, compiled (`published_searcher`), and this recipe only
    where that cannot run. Workers from 2 on add seeded noise to the costs.
    """
    even = index % 2 == 0
    return {"scaled_cost": even, "focus": even, "exhaustive_atoms": 6 if even else 10,
            "max_triples": 0 if even else 3000,
            "jitter": 0.0 if index < 2 else 0.2}


def worker_seed(seed: int, index: int) -> int:
    """The random stream of worker `index` in a run with `seed` (noise, the random traversal)."""
    return seed * 1000 + index


def published_problem(problem: Problem) -> str | None:
    """Why the published tool's search (core/cain/native.py) cannot take this problem; None if it can."""
    if len(problem.initial) != 1:
        return "the published search takes kernels of one input channel"
    if problem.cfg.registers > MAX_NATIVE_REGISTERS:
        return f"the published search takes at most {MAX_NATIVE_REGISTERS} registers"
    if not native_available():
        return "the published search is compiled C, and no C compiler (gcc, cc, clang) could build it here"
    return None


def published_searcher(problem: Problem, traversal: str, best: int, memory_mb: float) -> NativeSearcher | None:
    """The published tool's search on this problem, or None where it cannot run: another traversal
    than CGDS, or a problem it does not take (published_problem)."""
    if traversal != "cgds" or published_problem(problem) is not None:
        return None
    try:
        return NativeSearcher(problem.final_goals, problem.cfg.d, problem.cfg.registers, problem.cfg.isa,
                              best=best, mem_limit_mb=memory_mb)
    except (NativeUnavailable, ValueError):
        return None


def _worker(problem: Problem, traversal: str, seed: int, deadline: float, max_nodes: int | None,
            out: Any, stop: Any, best: Any, nodes: Any, index: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's: it stops the workers (_start)
    s: Searcher | NativeSearcher | None = None
    error = None
    try:
        cfg = problem.cfg
        cfg.rng = random.Random(seed)
        cfg.rng_salt = seed
        for k, v in worker_variant(index).items():
            setattr(cfg, k, v)
        share = MEMORY_BUDGET_MB / max(1, len(nodes))
        limit = share
        # the bound is read once: workers never share lengths while they run, so each one's path
        # depends on its seed and node count only, not on the other's timing (determinism)
        if index == PUBLISHED_WORKER:
            # the compiled search keeps its own memory within what this process leaves of the share
            # (with room for what its allocator holds on top of what it counts)
            s = published_searcher(problem, traversal, best.value,
                                   max(64.0, NATIVE_MEMORY_SHARE * (share - _rss_mb())))
        if s is None:
            s = Searcher(cfg, problem.final_bag, traversal, best=best.value)
        slice_nodes = NATIVE_SLICE_NODES if isinstance(s, NativeSearcher) else SLICE_NODES
        last_report = 0.0
        last_mem = 0.0
        while not stop.is_set() and time.monotonic() < deadline and not s.exhausted:
            if max_nodes is not None and s.nodes >= max_nodes:
                break
            step = slice_nodes if max_nodes is None else min(slice_nodes, max_nodes - s.nodes)
            for plan in s.run(step, max(0.0, min(0.1, deadline - time.monotonic()))):
                out.put(("plan", index, plan))
            now = time.monotonic()
            if now - last_report > 0.1:
                nodes[index] = s.nodes
                last_report = now
            if now - last_mem > MEMORY_CHECK_S:
                last_mem = now
                if _rss_mb() > limit:
                    s.trim()
                    limit = trim_limit(share)
    except Exception as exc:          # reported to the parent, which fails the run with it
        error = f"{type(exc).__name__}: {exc}"
    finally:
        if s is not None:
            nodes[index] = s.nodes
        out.put(("done", index, bool(s and s.exhausted), error))
    # Leave at once: an orderly interpreter exit frees a search's whole memory (up to a GB, the best
    # part of a second) while the run waits. The queue is flushed first, so nothing sent is lost.
    out.close()
    out.join_thread()
    os._exit(0)


def _start(p: Any) -> None:
    """Start a worker with SIGINT blocked, a mask it keeps through exec: Ctrl-C in a terminal goes to
    the whole process group, and only the parent may act on it (it stops the workers), so no worker
    prints a KeyboardInterrupt traceback, not even while it starts. The parent gets a Ctrl-C that
    came meanwhile as soon as the mask is restored."""
    if not hasattr(signal, "pthread_sigmask"):
        p.start()
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        p.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def search_plans(problem: Problem, time_s: float, max_nodes: int | None, workers: int, traversal: str,
                 cancel: CancelToken, bound: int = 1 << 30, seed: int = 0,
                 published: bool = False) -> Iterator[tuple[str, Any]]:
    """Yield ("plan", Plan) for each new shortest plan (shorter than `bound`) and ("stats", nodes).
    `published`: the published tool's search alone, in this process (the baseline mode)."""
    start = time.monotonic()
    deadline = start + time_s
    if workers <= 1 or published:
        for k, v in worker_variant(0).items():
            setattr(problem.cfg, k, v)
        problem.cfg.rng = random.Random(worker_seed(seed, 0))
        problem.cfg.rng_salt = worker_seed(seed, 0)
        s: Searcher | NativeSearcher | None = None
        if published:
            s = published_searcher(problem, "cgds", bound, NATIVE_MEMORY_SHARE * MEMORY_BUDGET_MB)
            if s is None:
                raise InputError(published_problem(problem) or "the published search cannot run here", "mode")
        else:
            s = Searcher(problem.cfg, problem.final_bag, traversal, best=bound)
        slice_nodes = NATIVE_SLICE_NODES if published else SLICE_NODES
        last = 0.0
        last_mem = time.monotonic()
        limit = float(MEMORY_BUDGET_MB)
        while time.monotonic() < deadline and not s.exhausted:
            cancel.check()
            if time.monotonic() - last_mem > MEMORY_CHECK_S:
                last_mem = time.monotonic()
                if _rss_mb() > limit:
                    s.trim()
                    limit = trim_limit(MEMORY_BUDGET_MB)
            if max_nodes is not None and s.nodes >= max_nodes:
                break
            for plan in s.run(slice_nodes if max_nodes is None else min(slice_nodes, max_nodes - s.nodes),
                              max(0.0, min(0.1, deadline - time.monotonic()))):
                if plan.found_at <= deadline:
                    yield "plan", plan
            if time.monotonic() - last > 0.1:
                last = time.monotonic()
                yield "stats", s.nodes
        yield "stats", s.nodes
        return
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    stop = ctx.Event()
    best = ctx.Value("i", bound)
    nodes = ctx.Array("q", workers)
    per_worker = None if max_nodes is None else max(1, max_nodes // workers)
    procs = []
    for i in range(workers):
        p = ctx.Process(target=_worker, daemon=True,
                        args=(problem, traversal, worker_seed(seed, i), deadline, per_worker,
                              out, stop, best, nodes, i))
        _start(p)
        procs.append(p)
    done = 0
    best_len = bound

    def take(msg: Any) -> Plan | None:
        """Count a worker's end; return a plan found within the budget and shorter than any so far."""
        nonlocal done, best_len
        if msg[0] == "done":
            done += 1
            if msg[3]:
                raise RuntimeError(f"search worker {msg[1]} failed: {msg[3]}")
        elif msg[0] == "plan":
            plan = msg[2]
            if plan.found_at <= deadline and plan.length < best_len:
                best_len = plan.length
                plan.nodes_at_find = sum(nodes[:])
                return plan
        return None

    try:
        last = 0.0
        while done < workers and time.monotonic() < deadline:
            cancel.check()
            all_exited = not any(p.is_alive() for p in procs)    # checked before reading: no race
            try:
                msg = out.get(timeout=max(0.001, min(0.05, deadline - time.monotonic())))
            except queue_mod.Empty:
                msg = None
                if all_exited:
                    codes = sorted({p.exitcode for p in procs if p.exitcode})
                    raise RuntimeError(f"{workers - done} of {workers} search worker processes ended without "
                                       f"finishing (exit codes {codes or [0]})")
            found = None if msg is None else take(msg)
            if found is not None:
                yield "plan", found
            if time.monotonic() - last > 0.1:
                last = time.monotonic()
                yield "stats", sum(nodes[:])
        # The budget is spent: stop the workers, and still take the plans they found within it.
        stop.set()
        end = time.monotonic() + STOP_GRACE_S
        while done < workers and time.monotonic() < end:
            cancel.check()
            try:
                found = take(out.get(timeout=0.02))
            except queue_mod.Empty:
                if not any(p.is_alive() for p in procs):
                    break
                continue
            if found is not None:
                yield "plan", found
        yield "stats", sum(nodes[:])
    finally:
        stop.set()
        # Keep reading while the workers stop: a worker exits only once its queue has been flushed,
        # and killing it instead leaks its semaphores.
        end = time.monotonic() + STOP_GRACE_S
        while any(p.is_alive() for p in procs) and time.monotonic() < end:
            try:
                out.get(timeout=0.02)
            except queue_mod.Empty:
                pass
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join(timeout=1.0)
        out.close()
        out.cancel_join_thread()


# ------------------------------------------------------------------ allocation and verification
def realise(problem: Problem, plan: Plan, isa: InstructionSet, d: int) -> tuple[Allocated, bool, str]:
    alloc = allocate(plan, problem.final_goals, problem.initial, problem.regs, isa)
    ok, msg = verify(alloc.program, problem.final_goals, d, alloc.input_registers, alloc.output_registers,
                     problem.regs)
    return alloc, ok, msg


def _bags_json(plan: Plan, d: int) -> list[list[dict[str, Any]]]:
    return [goal_bag_json(b, d) for b in plan.bags]


def _regs_json(alloc: Allocated, d: int) -> list[dict[str, Any]]:
    out = []
    for snap in alloc.register_goals:
        out.append({r: (None if g is None else gl.to_matrix(g)) for r, g in snap.items()})
    return out


def solve(approx: Approximation, isa: InstructionSet, registers: int, time_s: float, max_nodes: int | None,
          workers: int, traversal: str, mode: str, cancel: CancelToken,
          seed_share: float = 0.0, stop_at: int = 0, seed: int = 0) -> Iterator[Improvement | Stats]:
    """Search, and yield each verified improvement; `mode` "cain" (simultaneous), "auke" (one by one)
    or "published" (the published tool's search alone, in this process: the baseline worker 1 of
    the cain mode runs; it ignores `workers`, `traversal` and `seed_share`).

    With several kernels and `seed_share` > 0, that share of the time first builds a one-by-one
    program (reported with method "one-by-one"); the simultaneous search must then beat it.

    A program of `stop_at` instructions or fewer ends the search (the proven lower bound: nothing
    shorter exists). The budget is kept: no search goes on past `time_s`, and a program is reported with the time its
    search found it (a plan found after the budget is dropped), so every improvement's `elapsed` is
    within `time_s` whatever verifying it took.

    Determinism: each worker's path depends only on `seed` and its node count (workers share no
    lengths while they run; the seed program is searched for a fixed number of nodes), so a
    `max_nodes` run gives the same length every time, and a timed run differs from another only
    where one got further than the other (or its time share cut the seed program short).
    """
    regs = register_names(registers)
    start = time.monotonic()
    deadline = start + time_s
    if mode in ("cain", "published"):
        problem = build_problem(approx.goals, approx.d, approx.channels, regs, isa)
        published = mode == "published"
        refused = published_problem(problem) if published else None
        if refused:
            raise InputError(refused, "mode")
        best = 1 << 30
        nodes = 0
        last_t = 0.0
        budget = time_s
        if seed_share > 0 and len(approx.goals) > 1 and not published:
            # a quick one-by-one program first: a verified upper bound the simultaneous search
            # then has to beat (it prunes with it from the start)
            # (in this process: starting worker processes for every kernel costs more than it gives)
            seed_max = SEED_NODES_PER_KERNEL * len(approx.goals) if max_nodes is None \
                else max(1, int(max_nodes * seed_share))
            for ev in _solve_individually(approx, isa, regs, time_s * seed_share, seed_max, 1, traversal,
                                          cancel, start, deadline, seed):
                if isinstance(ev, Improvement):
                    best, last_t = ev.length, ev.elapsed
                nodes = max(nodes, ev.nodes)
                yield ev
            if best <= stop_at:
                return
            budget = max(0.0, deadline - time.monotonic())
            if max_nodes is not None:
                max_nodes = max(1, max_nodes - nodes)
        seed_nodes = nodes
        if budget <= 0:
            return
        for kind, payload in search_plans(problem, budget, max_nodes, workers, traversal, cancel, bound=best,
                                          seed=seed, published=published):
            if kind == "stats":
                nodes = seed_nodes + payload
                yield Stats(nodes, time.monotonic() - start, None if best >= 1 << 30 else best)
                continue
            plan: Plan = payload
            if plan.length >= best:
                continue
            try:
                alloc, ok, msg = realise(problem, plan, isa, approx.d)
            except AllocationError:
                continue
            if not ok:
                continue      # an unverified plan is never reported
            best = plan.length
            # workers report out of order: a plan one found before another's earlier report counts
            # from that report, so times grow with each improvement (and stay within the budget)
            last_t = max(last_t, plan.found_at - start)
            yield Improvement(alloc.program, dict(zip(approx.names, alloc.output_registers)),
                              alloc.input_registers, seed_nodes + max(plan.nodes_at_find, 1),
                              last_t, True, msg, bags=_bags_json(plan, approx.d),
                              registers=_regs_json(alloc, approx.d), method="simultaneous",
                              searcher=plan.searcher)
            if best <= stop_at:
                return
        return
    yield from _solve_individually(approx, isa, regs, time_s, max_nodes, workers, traversal, cancel, start, deadline,
                                   seed)


def _solve_individually(approx: Approximation, isa: InstructionSet, regs: tuple[str, ...], time_s: float,
                        max_nodes: int | None, workers: int, traversal: str, cancel: CancelToken,
                        start: float, deadline: float, seed: int = 0) -> Iterator[Improvement | Stats]:
    """AUKE-style baseline: one kernel at a time, earlier outputs' registers reserved, input kept;
    kernel k searches until k+1 n-ths of `time_s`, and none past `deadline` (the whole run's)."""
    n = len(approx.goals)
    used: list[str] = []
    program: list[Instr] = []
    outputs: dict[str, str] = {}
    total_nodes = 0
    inputs: dict[int, str] = {}
    found_at = start          # when the last kernel's chosen plan was found: the program's time
    for k, (name, goal) in enumerate(zip(approx.names, approx.goals)):
        avail = tuple(r for r in regs if r not in used)
        last = k == n - 1
        initial_goals = [gl.make_goal({(0, 0, z): 2 ** approx.d}) for z in range(approx.channels)]
        finals = [goal] + ([] if last else initial_goals)
        problem = build_problem(finals, approx.d, approx.channels, avail, isa)
        problem.final_goals = finals
        best_alloc: Allocated | None = None
        best_found = start
        budget = min(max(time_s * (k + 1) / n - (time.monotonic() - start), 0.05), deadline - time.monotonic())
        if budget <= 0:
            return      # the run's budget is spent: no program made of every kernel's
        sub_nodes = 0
        for kind, payload in search_plans(problem, budget, None if max_nodes is None else max(1, max_nodes // n),
                                          workers, traversal, cancel, seed=seed):
            if kind == "stats":
                sub_nodes = payload
                yield Stats(total_nodes + sub_nodes, time.monotonic() - start, None)
                continue
            plan: Plan = payload
            if best_alloc is not None and plan.length >= len(best_alloc.program):
                continue
            try:
                alloc, ok, _msg = realise(problem, plan, isa, approx.d)
            except AllocationError:
                continue
            if ok:
                best_alloc, best_found = alloc, plan.found_at
        total_nodes += sub_nodes
        if best_alloc is None:
            return      # no program for this kernel within the budget: nothing verified to report
        program += best_alloc.program
        outputs[name] = best_alloc.output_registers[0]
        inputs = inputs or best_alloc.input_registers
        used.append(best_alloc.output_registers[0])
        found_at = max(found_at, best_found)
    ok, msg = verify(program, approx.goals, approx.d, inputs, [outputs[nm] for nm in approx.names], regs)
    if ok:
        yield Improvement(program, outputs, inputs, max(total_nodes, 1), found_at - start, True, msg,
                          method="one-by-one")
