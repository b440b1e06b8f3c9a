"""Drives a Cain search to verified programs: problem set-up, worker processes running the compiled
search's portfolio (core/cain/csearch.py), allocation, verification, and the AUKE-style
one-kernel-at-a-time baseline.

`solve` is a generator of `Improvement` (a new shortest verified program) and `Stats` events; the
engine turns them into job events and `api.compile_filter` keeps the last improvement.
"""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.connection as mp_connection
import os
import queue as queue_mod
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, cast

from core import faults
from core.cain import goals as gl
from core.cain.approx import Approximation
from core.cain.codegen import Allocated, AllocationError, allocate, goal_bag_json
from core.cain.csearch import PORTFOLIO, CompiledSearcher, Strategy, strategy_for
from core.cain.exact import ExactUnavailable, Prover
from core.cain.goals import Goal
from core.cain.steps import Plan
from core.cain.verify import verify
from core.jobs import CancelToken
from core.scamp5.isa import InstructionSet, register_names
from core.scamp5.program import Instr

TRAVERSALS = ("portfolio", "cgds", "beam", "best-first", "dfs", "random")
SLICE_NODES = 20000       # nodes per member slice between checks (a few ms to a tenth of a second)
MEMORY_BUDGET_MB = 600    # the compiled searches of all processes together (each process ~100 MB more)
SEED_NODES_PER_KERNEL = 20000   # one-by-one seed program: nodes per kernel (unless its time share ends it first)
PROVER_SLICE_NODES = 5000       # the exact prover's turn in its lane (a few tenths of a second at most)
PROVER_SHARE = 0.05             # its nodes kept within this share of its lane's search nodes (a relaxed-phase
                                # node costs some ten search nodes, an exact-phase one less than one)
PROVER_TT_BITS = 21             # its transposition table: 2^21 entries (75 MB)
PROVER_VALUES = 600_000         # values it keeps before collecting (about 200 MB at most)
STOP_GRACE_S = 0.5        # how long a stopped search waits for its workers (a slice, then exit) before killing them


@dataclass
class Problem:
    """One search: Final-Goals in a register file, with the Initial-Goals per channel."""

    final_goals: list[Goal]
    d: int
    initial: dict[Goal, int]            # Initial-Goal -> channel
    regs: tuple[str, ...]
    isa: InstructionSet

    @property
    def max_coef(self) -> int:
        """Atoms per position a Lower may hold: the input's 2^d, or a Final-Goal's largest count."""
        return max(2 ** self.d, max(gl.max_mult(g) for g in self.final_goals))

    @property
    def max_radius(self) -> int:
        """How far from the centre a Lower may reach: two steps beyond the Final-Goals."""
        return max(max(abs(x), abs(y)) for g in self.final_goals for x, y, _, _ in gl.atoms(g)) + 2

    def searcher(self, strategy: Strategy, best: int, seed: int, memory_mb: float) -> CompiledSearcher:
        return CompiledSearcher(self.final_goals, self.d, len(self.initial), len(self.regs), self.isa, strategy,
                                max_coef=self.max_coef, max_radius=self.max_radius, best=best, seed=seed,
                                memory_mb=memory_mb)


def build_problem(goals: list[Goal], d: int, channels: int, regs: tuple[str, ...], isa: InstructionSet) -> Problem:
    initial = {gl.make_goal({(0, 0, z): 2 ** d}): z for z in range(channels)}
    return Problem(list(goals), d, initial, regs, isa)


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
    strategy: str = ""          # the portfolio member that found it (csearch.Strategy.name)
    registers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def length(self) -> int:
        return len(self.program)


# ------------------------------------------------------------------ the portfolio in processes
def lanes(workers: int, traversal: str, seed: int) -> list[list[Strategy]]:
    """The members each worker runs, in turn: with the portfolio, worker w takes every member i with
    i % workers == w (so one worker runs them all, and more workers share them out); with one
    traversal, each worker runs it (told apart by seeded noise)."""
    if traversal != "portfolio":
        return [[strategy_for(w, workers, traversal, seed)] for w in range(workers)]
    n = max(workers, len(PORTFOLIO))
    out: list[list[Strategy]] = [[] for _ in range(workers)]
    for i in range(n):
        out[i % workers].append(strategy_for(i, n, traversal, seed))
    return out


def member_seed(seed: int, index: int) -> int:
    """The noise stream of member `index` in a run with `seed`."""
    return seed * 1000 + index


@dataclass
class Proof:
    """What the exact prover established: no program is shorter than `bound`; `program` (with its
    output register per Final-Goal) is one of that length, so optimal."""

    bound: int
    program: list[Instr] | None = None
    outputs: list[str] | None = None


class Lane:
    """One process's members, run in turn in slices of SLICE_NODES; a length one member finds prunes the
    others at once (in one process and at fixed node counts, so the lane stays deterministic). A lane
    may also run the exact prover (core/cain/exact.py) in its turn: it raises the proven lower bound
    from below while the members bring the best length down from above."""

    def __init__(self, problem: Problem, members: list[Strategy], best: int, seed: int, first_index: int,
                 memory_mb: float, max_nodes: int | None, prove: bool = False) -> None:
        share = memory_mb / max(1, len(members))
        self.members = [problem.searcher(m, best, member_seed(seed, first_index + i), share)
                        for i, m in enumerate(members)]
        self.max_nodes = max_nodes          # per member
        self.turn = 0
        self.best = best
        self.prover = make_prover(problem, best) if prove else None
        self.proof: Proof | None = None     # set when the prover raised its bound or found a program

    @property
    def nodes(self) -> int:
        return sum(m.nodes for m in self.members) + (self.prover.nodes if self.prover is not None else 0)

    @property
    def exhausted(self) -> bool:
        return all(m.exhausted or self._spent(m) for m in self.members) and \
            (self.prover is None or self.prover.done or self._prover_spent())

    def _prover_spent(self) -> bool:
        return self.prover is not None and self.max_nodes is not None and self.prover.nodes >= self.max_nodes

    def _spent(self, m: CompiledSearcher) -> bool:
        return self.max_nodes is not None and m.nodes >= self.max_nodes

    def run(self, max_seconds: float) -> list[Plan]:
        """One slice of the next member that still has work (the prover's turn comes after the
        members'; what it proves is left in `proof`)."""
        n = len(self.members) + (1 if self.prover is not None else 0)
        for _ in range(n):
            i = self.turn % n
            self.turn += 1
            if i == len(self.members):
                self._prove()
                return []
            m = self.members[i]
            if m.exhausted or self._spent(m):
                continue
            step = SLICE_NODES if self.max_nodes is None else min(SLICE_NODES, self.max_nodes - m.nodes)
            plans = m.run(step, max_seconds)
            if plans:
                self.best = min(self.best, min(p.length for p in plans))
                for other in self.members:
                    other.set_best(self.best)
            return plans
        return []

    def _prove(self) -> None:
        p = self.prover
        if p is None or p.done or self._prover_spent():
            return
        members_busy = any(not (m.exhausted or self._spent(m)) for m in self.members)
        if members_busy and p.nodes > PROVER_SHARE * sum(m.nodes for m in self.members):
            return                      # its share is spent for now (counted in nodes: deterministic)
        # once every member is done the prover runs on to its own budget: held to a share of nodes
        # that no longer grow, it would never finish and the lane would spin until the deadline
        if p.upper is None or self.best < p.upper:
            p.upper = self.best
        before = (p.bound, p.program is not None)
        try:
            step = PROVER_SLICE_NODES if self.max_nodes is None else min(PROVER_SLICE_NODES,
                                                                        self.max_nodes - p.nodes)
            p.run(step)
        except ExactUnavailable:
            self.prover = None          # beyond what it takes (coefficients, length): the bound stays
            return
        if (p.bound, p.program is not None) != before:
            self.proof = Proof(p.bound, p.program, p.outputs)
            if p.program is not None:
                self.best = min(self.best, len(p.program))
                for m in self.members:
                    m.set_best(self.best)

    def close(self) -> None:
        for m in self.members:
            m.close()
        self.prover = None


def make_prover(problem: Problem, best: int) -> Prover | None:
    """The exact prover on this problem, or None where it cannot run (too many registers or Goals)."""
    try:
        return Prover(problem.final_goals, problem.d, len(problem.initial), problem.isa, len(problem.regs),
                      upper=None if best >= 1 << 30 else best, tt_bits=PROVER_TT_BITS, gc_values=PROVER_VALUES)
    except (ValueError, ExactUnavailable):
        return None


def _worker(problem: Problem, members: list[Strategy], seed: int, first_index: int, deadline: float,
            max_nodes: int | None, memory_mb: float, prove: bool, out: Any, stop: Any, best: Any, nodes: Any,
            index: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's: it stops the workers (_start)
    lane: Lane | None = None
    error, fault = None, None
    try:
        # the bound is read once: workers never share lengths while they run, so each one's path
        # depends on its members and node counts only, not on the other's timing (determinism)
        lane = Lane(problem, members, best.value, seed, first_index, memory_mb, max_nodes, prove)
        last_report = 0.0
        while not stop.value and time.monotonic() < deadline and not lane.exhausted:
            for plan in lane.run(max(0.0, min(0.1, deadline - time.monotonic()))):
                out.send(("plan", index, plan))
            if lane.proof is not None:
                out.send(("proof", index, lane.proof))
                lane.proof = None
            now = time.monotonic()
            if now - last_report > 0.1:
                nodes[index] = lane.nodes
                last_report = now
    except Exception as exc:          # reported to the parent, which fails the run with it
        fault = faults.describe(exc)    # a fault of the machine (no compiler, no room) goes as its sentence
        error = fault or f"{type(exc).__name__}: {exc}"
    finally:
        if lane is not None:
            nodes[index] = lane.nodes
        out.send(("done", index, bool(lane and lane.exhausted), error, fault is not None))
    # Leave at once: an orderly interpreter exit frees a search's whole memory (the best part of a
    # second) while the run waits. A pipe's send has returned once the parent can read it all.
    out.close()
    os._exit(0)


class _Inbox:
    """The workers' messages, one pipe each, read like a queue (get raises queue.Empty).

    Pipes and raw shared values instead of a multiprocessing Queue, Event, Value and Array: those
    hold ten named POSIX semaphores, which a run ended by a signal (a cancel that outlives its grace,
    the window quitting) cannot unlink, so the resource tracker warned of "10 leaked semaphore
    objects". A pipe and a lock-free shared value hold none."""

    def __init__(self, readers: list[Any]) -> None:
        self._open = list(readers)

    def get(self, timeout: float) -> Any:
        end = time.monotonic() + timeout
        while self._open:
            for conn in mp_connection.wait(self._open, max(0.0, end - time.monotonic())):
                try:
                    return cast(Any, conn).recv()       # one of our pipes' reading ends
                except (EOFError, OSError):  # that worker has gone and said all it had to say
                    self._open.remove(conn)
            if time.monotonic() >= end:
                break
        if not self._open and timeout > 0:
            time.sleep(min(timeout, 0.01))
        raise queue_mod.Empty

    def close(self) -> None:
        for conn in self._open:
            conn.close()
        self._open = []


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
                 prove: bool = False, deadline: float | None = None) -> Iterator[tuple[str, Any]]:
    """Yield ("plan", Plan) for each new shortest plan (shorter than `bound`), ("proof", Proof) when the
    exact prover (`prove`: it runs in the last worker's lane) raises its bound, and ("stats", nodes).
    The search ends `time_s` from now, or at `deadline` (time.monotonic()) when the caller has one of its
    own: a run's searches share its deadline rather than each starting a clock."""
    start = time.monotonic()
    deadline = start + time_s if deadline is None else min(deadline, start + time_s)
    plan_lanes = lanes(workers, traversal, seed)
    n_members = sum(len(lane) for lane in plan_lanes)
    # a node budget is shared out evenly among the members and the prover
    per_member = None if max_nodes is None else max(1, max_nodes // (n_members + (1 if prove else 0)))
    first = [sum(len(x) for x in plan_lanes[:w]) for w in range(workers)]
    if workers <= 1:
        lane = Lane(problem, plan_lanes[0], bound, seed, 0, MEMORY_BUDGET_MB, per_member, prove)
        try:
            last = 0.0
            while time.monotonic() < deadline and not lane.exhausted:
                cancel.check()
                for plan in lane.run(max(0.0, min(0.1, deadline - time.monotonic()))):
                    if plan.found_at <= deadline:
                        yield "plan", plan
                if lane.proof is not None:
                    yield "proof", lane.proof
                    lane.proof = None
                if time.monotonic() - last > 0.1:
                    last = time.monotonic()
                    yield "stats", lane.nodes
            yield "stats", lane.nodes
        finally:
            lane.close()
        return
    ctx = mp.get_context("spawn")
    stop = ctx.RawValue("b", 0)                    # no locks: see _Inbox
    best = ctx.RawValue("i", bound)
    nodes = ctx.RawArray("q", workers)
    procs, readers = [], []
    for i in range(workers):
        reader, writer = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_worker, daemon=True,
                        args=(problem, plan_lanes[i], seed, first[i], deadline, per_member,
                              MEMORY_BUDGET_MB * len(plan_lanes[i]) / n_members, prove and i == workers - 1,
                              writer, stop, best, nodes, i))
        _start(p)
        writer.close()                             # the worker's end: its closing is the reader's EOF
        procs.append(p)
        readers.append(reader)
    out = _Inbox(readers)
    done = 0
    best_len = bound

    def take(msg: Any) -> Plan | Proof | None:
        """Count a worker's end; return a plan found within the budget and shorter than any so far, or
        what the prover proved."""
        nonlocal done, best_len
        if msg[0] == "proof":
            return msg[2]
        if msg[0] == "done":
            done += 1
            if msg[3] and msg[4]:
                raise faults.MachineFault(msg[3])
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
                    if codes and codes[0] < 0:      # killed (the out-of-memory killer, most often): in words
                        raise faults.MachineFault(faults.killed(f"{workers - done} of {workers} search worker "
                                                                f"processes", codes[0]))
                    raise RuntimeError(f"{workers - done} of {workers} search worker processes ended without "
                                       f"finishing (exit codes {codes or [0]})")
            found = None if msg is None else take(msg)
            if found is not None:
                yield ("proof" if isinstance(found, Proof) else "plan"), found
            if time.monotonic() - last > 0.1:
                last = time.monotonic()
                yield "stats", sum(nodes[:])
        # The budget is spent: stop the workers, and still take the plans they found within it.
        stop.value = 1
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
                yield ("proof" if isinstance(found, Proof) else "plan"), found
        yield "stats", sum(nodes[:])
    finally:
        stop.value = 1
        # Keep reading while the workers stop: a worker blocked on a full pipe exits once it is read.
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


@dataclass
class Proven:
    """The exact prover refuted every length below `bound` (core/cain/exact.py)."""

    bound: int


def solve(approx: Approximation, isa: InstructionSet, registers: int, time_s: float, max_nodes: int | None,
          workers: int, traversal: str, mode: str, cancel: CancelToken,
          seed_share: float = 0.0, stop_at: int = 0, seed: int = 0,
          prove: bool = True) -> Iterator[Improvement | Stats | Proven]:
    """Search, and yield each verified improvement; `mode` "cain" (simultaneous) or "auke" (one by one).
    With `prove` (the simultaneous mode) the exact prover runs beside the search: each length it
    refutes is a `Proven` event, and a program it finds is optimal (method "exact").

    With several kernels and `seed_share` > 0, that share of the time first builds a one-by-one
    program (reported with method "one-by-one"); the simultaneous search must then beat it.

    A program of `stop_at` instructions or fewer ends the search (the proven lower bound: nothing
    shorter exists). The budget is kept: no search goes on past `time_s`, and a program is reported with the time its
    search found it (a plan found after the budget is dropped), so every improvement's `elapsed` is
    within `time_s` whatever verifying it took.

    Determinism: each worker's path depends only on `seed`, its members and their node counts
    (workers share no lengths while they run; the seed program is searched for a fixed number of
    nodes), so a
    `max_nodes` run gives the same length every time, and a timed run differs from another only
    where one got further than the other (or its time share cut the seed program short).
    """
    regs = register_names(registers)
    start = time.monotonic()
    deadline = start + time_s
    if mode == "cain":
        problem = build_problem(approx.goals, approx.d, approx.channels, regs, isa)
        best = 1 << 30
        nodes = 0
        last_t = 0.0
        budget = time_s
        if seed_share > 0 and len(approx.goals) > 1:
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
                                          seed=seed, prove=prove, deadline=deadline):
            if kind == "stats":
                nodes = seed_nodes + payload
                yield Stats(nodes, time.monotonic() - start, None if best >= 1 << 30 else best)
                continue
            if kind == "proof":
                proof: Proof = payload
                if proof.bound > stop_at:
                    stop_at = proof.bound
                    yield Proven(proof.bound)
                # a program the prover's last turn found after the deadline is not reported: the budget is kept
                if proof.program is not None and proof.outputs is not None and len(proof.program) < best \
                        and time.monotonic() <= deadline:
                    inputs = {z: regs[z] for z in range(approx.channels)}
                    ok, msg = verify(proof.program, approx.goals, approx.d, inputs, proof.outputs, regs)
                    if ok:
                        best = len(proof.program)
                        last_t = max(last_t, time.monotonic() - start)
                        yield Improvement(proof.program, dict(zip(approx.names, proof.outputs)), inputs,
                                          seed_nodes + nodes, last_t, True, msg, method="exact", strategy="prover")
                if best <= stop_at:
                    return
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
                              strategy=plan.strategy)
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
                                          workers, traversal, cancel, seed=seed, deadline=deadline):
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
