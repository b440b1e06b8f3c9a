"""Discrete-event simulation of f-CNNx engines sharing one off-chip memory port.

Two arbitration schemes are simulated:
* `simulate_scheduled`: the multi-CNN hardware scheduler (MCNN-HS). Engines start their subgraphs
  at the schedule's start times (cycle after cycle); the control unit serves the engines
  round-robin, each for its subgraph's number of consecutive slots (one long burst per slot).
* `simulate_async`: the contention-unaware baseline. Every engine has its own DMA engine issuing
  short bursts whenever its input FIFO has room; the memory serves requests first come, first
  served, so streams of different engines interleave at burst granularity.

Memory model (assumptions, in beats of the port): each burst costs its beats plus
BURST_OVERHEAD beats (command, DRAM row activation); a burst from a different engine than the
previous one costs SWITCH_PENALTY more (row conflict, bus turnaround). With 1024-beat bursts this
gives 92-97% efficiency (the paper measured > 90% on ZC706); interleaved 256-beat DMA bursts get
72%. Engines are fluid consumers: a subgraph consumes its bytes at traffic/latency bytes per second
at most, from a FIFO of FIFO_BYTES filled by whole bursts; it ends when its last byte is consumed.
For long runs bursts are grouped (g bursts per event, g overheads and penalties) to bound the
number of events; the FIFO is then scaled by g too, so that a grouped chunk still fills only part
of it and transfer and compute keep overlapping as they do at g = 1. `SimResult.group` reports g.
"""

from __future__ import annotations

import functools
import math
import random
from typing import Callable
from dataclasses import dataclass, field

BURST_OVERHEAD = 40           # beats lost per burst
SWITCH_PENALTY = 50           # extra beats when the port changes engine
FIFO_BYTES = 32 * 1024
MCNN_BURST = 1024             # beats per slot (MCNN-HS)
DMA_BURST = 256               # beats per DMA burst (AXI4 maximum)
MAX_EVENTS = 150_000


def planning_efficiency(burst: int = MCNN_BURST) -> float:
    """Bandwidth fraction the MCNN-HS delivers even if every slot changes engine (used by the DSE
    as the effective bandwidth)."""
    return burst / (burst + BURST_OVERHEAD + SWITCH_PENALTY)


@dataclass(frozen=True)
class SimTask:
    engine: int
    name: str
    nbytes: int
    latency_s: float            # at full speed
    release_s: float = 0.0      # start time inside the cycle (scheduled mode)
    slots: int = 1              # consecutive slots per round (scheduled mode)

    @functools.cached_property
    def rate(self) -> float:        # read on every event of the simulation: computed once
        return self.nbytes / self.latency_s


@dataclass
class SimResult:
    fps: list[float]
    period_s: float | None
    elapsed_s: float
    bytes_moved: int
    busy_s: float
    efficiency: float           # payload time / port busy time
    group: int
    trace: list[tuple[int, str, float, float]] = field(default_factory=list)   # first cycle: engine, task, start, end


class _Engine:
    """State of one engine's current subgraph."""

    def __init__(self, tasks: list[tuple[float, SimTask]], chain_len: int = 0, fifo_bytes: int = FIFO_BYTES,
                 prefetch: bool = False) -> None:
        self.queue = tasks            # (release time, task) in order
        self.fifo = fifo_bytes
        self.prefetch = prefetch      # a subgraph's data may enter the FIFO before it starts (staging buffer)
        self.chain_len = chain_len    # subgraphs per inference (0: not counted)
        self.completed = 0
        self.k = -1
        self.prev_end = 0.0
        self.delivered = 0
        self.cons = 0.0
        self.start = 0.0
        self.ends: list[tuple[int, float]] = []   # (queue index, end time)
        self.task: SimTask | None = None    # the current subgraph (None: the queue is done)
        self._advance()

    def _advance(self) -> None:
        self.k += 1
        if self.k < len(self.queue):
            release, self.task = self.queue[self.k]
            self.start = max(self.prev_end, release)
            self.delivered = 0
            self.cons = self.start
        else:
            self.task = None

    def want_time(self, chunk: int) -> float:
        """Earliest time the engine can take `chunk` more bytes into its FIFO."""
        t = self.task
        if t is None:
            return math.inf
        room_needed = self.fifo - min(chunk, self.fifo)
        if self.prefetch:           # cons starts at the subgraph's start: at most a FIFO's worth ahead of it
            return self.cons - room_needed / t.rate
        return max(self.start, self.cons - room_needed / t.rate)

    def receive(self, n: int, at: float) -> None:
        t = self.task
        assert t is not None
        self.delivered += n
        self.cons = max(self.cons, at) + n / t.rate
        if self.delivered >= t.nbytes:
            self.prev_end = self.cons
            self.ends.append((self.k, self.cons))
            if self.chain_len and (self.k + 1) % self.chain_len == 0:
                self.completed += 1
            self._advance()


def _group(total_bytes: float, burst_bytes: int) -> int:
    return max(1, math.ceil(total_bytes / burst_bytes / MAX_EVENTS))


class _Port:
    """The shared memory port: the clock and what it has spent on bursts, switches and payload."""

    def __init__(self, port_bytes: int, bandwidth_bps: float, group: int) -> None:
        self.port_bytes = port_bytes
        self.beat = port_bytes / bandwidth_bps
        self.g = group
        self.t = 0.0
        self.last = -1
        self.busy = 0.0
        self.moved = 0
        self.payload = 0.0

    def transfer(self, e_idx: int, engine: _Engine, chunk: int) -> None:
        """Move up to `chunk` bytes of the engine's current subgraph (g grouped bursts)."""
        task = engine.task
        assert task is not None
        nb = min(chunk, task.nbytes - engine.delivered)
        beats = math.ceil(nb / self.port_bytes)
        cost = beats + self.g * BURST_OVERHEAD + (self.g * SWITCH_PENALTY if self.last != e_idx else 0)
        self.t += cost * self.beat
        self.busy += cost * self.beat
        self.payload += beats * self.beat
        self.moved += nb
        self.last = e_idx
        engine.receive(nb, self.t)

    def result(self, fps: list[float], period_s: float | None,
               trace: list[tuple[int, str, float, float]] | None = None) -> SimResult:
        return SimResult(fps, period_s, self.t, self.moved, self.busy,
                         self.payload / self.busy if self.busy else 0.0, self.g, trace or [])


def _round_robin(engines: list[_Engine], port: _Port, chunk: int, running: Callable[[], bool],
                 check: Callable[[], None] = lambda: None) -> None:
    """The MCNN-HS control unit: hand the port to the next ready engine for its subgraph's slots."""
    n = len(engines)
    ptr = events = 0
    while running():
        events += 1
        if events % 2000 == 0:
            check()
        served = False
        for step in range(n):
            e_idx = (ptr + step) % n
            e = engines[e_idx]
            task = e.task
            if task is None or e.want_time(chunk) > port.t + 1e-15:
                continue
            for slot in range(task.slots):       # the first slot's readiness was just checked
                if slot and e.want_time(chunk) > port.t + 1e-15:
                    break
                port.transfer(e_idx, e, chunk)
                if e.task is not task:
                    break
            ptr = (e_idx + 1) % n
            served = True
            break
        if not served:
            port.t = max(port.t, min(e.want_time(chunk) for e in engines))


def _chain_setup(chains: list[list[SimTask]], bandwidth_bps: float, inferences: int,
                 limit_fps: list[float | None] | None, port_bytes: int, burst: int) -> tuple[list[_Engine], _Port, int]:
    """Free-running engines, one per CNN chain; the slowest sets the horizon, the others run as many
    inferences as fit meanwhile (inputs at most at `limit_fps`)."""
    limit_fps = limit_fps or [None] * len(chains)
    total = sum(inferences * sum(t.nbytes for t in ch) for ch in chains)
    g = _group(total * 4, burst * port_bytes)
    biggest = max(sum(t.nbytes for t in ch) for ch in chains)
    engines = []
    for ch, lim in zip(chains, limit_fps):
        reps = inferences * min(512, math.ceil(4 * biggest / sum(t.nbytes for t in ch)))
        engines.append(_Engine([((r / lim) if (lim and j == 0) else 0.0, task)
                                for r in range(reps) for j, task in enumerate(ch)], len(ch), g * FIFO_BYTES))
    return engines, _Port(port_bytes, bandwidth_bps, g), g * burst * port_bytes


def _chain_fps(engines: list[_Engine], t: float) -> list[float]:
    """Inference rate of each engine between its first and last completed inference."""
    fps = []
    for e in engines:
        finishes = [end for k, end in e.ends if (k + 1) % e.chain_len == 0]
        fps.append((len(finishes) - 1) / (finishes[-1] - finishes[0]) if len(finishes) >= 2 and finishes[-1] > finishes[0]
                   else len(finishes) / t)
    return fps


def simulate_scheduled(cycle: list[list[SimTask]], reps: list[int], period_s: float, bandwidth_bps: float, cycles: int = 3,
                       port_bytes: int = 8, burst: int = MCNN_BURST) -> SimResult:
    """Engines follow the static schedule; memory shared by round-robin slots (MCNN-HS)."""
    total = cycles * sum(t.nbytes for ts in cycle for t in ts)
    g = _group(total, burst * port_bytes)
    port = _Port(port_bytes, bandwidth_bps, g)
    engines = [_Engine([(c * period_s + t.release_s, t) for c in range(cycles) for t in ts], 0, g * FIFO_BYTES)
               for ts in cycle]
    _round_robin(engines, port, g * burst * port_bytes, lambda: any(e.task is not None for e in engines))
    return _result(engines, cycle, reps, cycles, period_s, port)


def simulate_async(chains: list[list[SimTask]], bandwidth_bps: float, inferences: int = 3,
                   limit_fps: list[float | None] | None = None, port_bytes: int = 8, burst: int = DMA_BURST,
                   seed: int = 1, check: Callable[[], None] = lambda: None) -> SimResult:
    """Contention-unaware baseline: free-running engines, one DMA each, FCFS memory."""
    rng = random.Random(seed)
    engines, port, chunk = _chain_setup(chains, bandwidth_bps, inferences, limit_fps, port_bytes, burst)
    events = 0
    while min(e.completed for e in engines) < inferences and any(e.task is not None for e in engines):
        events += 1
        if events % 2000 == 0:
            check()
        wants = [(e.want_time(chunk), rng.random(), i) for i, e in enumerate(engines)]
        ready = [w for w in wants if w[0] <= port.t + 1e-15]
        if not ready:
            port.t = max(port.t, min(w[0] for w in wants))
            continue
        _, _, e_idx = min(ready)
        port.transfer(e_idx, engines[e_idx], chunk)
    return port.result(_chain_fps(engines, port.t), None)


def _result(engines: list[_Engine], cycle: list[list[SimTask]], reps: list[int], cycles: int, period_s: float,
            port: _Port) -> SimResult:
    per_cycle = [len(ts) for ts in cycle]
    cycle_end = [0.0] * cycles
    trace = []
    for i, e in enumerate(engines):
        for k, end in e.ends:
            c = k // per_cycle[i] if per_cycle[i] else 0
            cycle_end[c] = max(cycle_end[c], end)
    # start times of the first cycle for the trace: recompute from releases and ends
    for i, e in enumerate(engines):
        prev = 0.0
        for k, end in e.ends[:per_cycle[i]]:
            release, task = e.queue[k]
            start = max(prev, release)
            trace.append((i, task.name, start, end))
            prev = end
    if cycles >= 2:
        period = (cycle_end[-1] - cycle_end[0]) / (cycles - 1)
    else:
        period = max(cycle_end[0], period_s)
    fps = [r / period if period > 0 else 0.0 for r in reps]
    return port.result(fps, period, trace)


def simulate_slots(chains: list[list[SimTask]], bandwidth_bps: float, inferences: int = 3,
                   limit_fps: list[float | None] | None = None, port_bytes: int = 8, burst: int = MCNN_BURST,
                   check: Callable[[], None] = lambda: None) -> SimResult:
    """The MCNN-HS as the paper's control unit runs it: engines free-running and data-driven (inputs
    at most at `limit_fps`), the port handed round-robin to the engines, each for its current
    subgraph's configured number of consecutive slots of one long burst."""
    engines, port, chunk = _chain_setup(chains, bandwidth_bps, inferences, limit_fps, port_bytes, burst)
    _round_robin(engines, port, chunk,
                 lambda: min(e.completed for e in engines) < inferences and any(e.task is not None for e in engines),
                 check)
    return port.result(_chain_fps(engines, port.t), None)


# ---------------------------------------------------------------- replay of an exported MCNN-HS table
REPLAY_CYCLES = 4             # the first cycle warms up the port state; fps from the others
REPLAY_RTOL = 1e-4            # the table's period is the schedule's rounded up to a whole beat (< 1e-4 of it)


@dataclass
class ReplayResult:
    """What the table delivers: each engine's frames per second over the steady-state cycles."""

    fps: list[float]
    period_s: list[float]         # measured cycle period per engine
    table_period_s: float
    cycles: int
    late: int                     # subgraph runs that ended after their scheduled end (in any cycle)
    efficiency: float
    group: int
    error: str | None = None      # why the table cannot be replayed (a run without slots, a missing subgraph)


def _table_problem(doc: dict, engines: list[dict]) -> str | None:
    """Structural checks the control unit relies on: every repetition lists every subgraph of its
    CNN once, in order, and every run has at least one slot (a run without slots is never served)."""
    for e in engines:
        n = e["subgraphs_per_inference"]
        for rep in e["repetitions"]:
            order = [sg["subgraph"] for sg in rep["subgraphs"]]
            if order != list(range(n)):
                return (f"{e['cnn']} repetition {rep['repetition']}: subgraphs {order}, expected 0..{n - 1} in order")
            for sg in rep["subgraphs"]:
                if sg["slots"] < 1:
                    return f"{e['cnn']} repetition {rep['repetition']} {sg['name']}: {sg['slots']} slots, never served"
                if sg["bytes"] != sum(t["bytes"] for t in sg["transfers"]):
                    return f"{e['cnn']} repetition {rep['repetition']} {sg['name']}: bytes differ from its transfers"
        if not e["repetitions"]:
            return f"{e['cnn']}: no repetitions"
    return None


def replay_table(doc: dict, cycles: int = REPLAY_CYCLES, check: Callable[[], None] = lambda: None) -> ReplayResult:
    """Run an exported MCNN-HS table (the JSON document of core.fcnnx.hwtable, as read back from the
    file) on the simulated memory port: each run of a subgraph is released at its start beat in
    every period, engines are served round-robin for each run's slots, and an engine's next run
    waits for its previous one. The frame rate of each engine is measured between the ends of its
    last run in the first and the last cycle."""
    engines = doc["engines"]
    beat = doc["beat_s"]
    period = doc["period_beats"] * beat
    bw = doc["bandwidth_bps"]
    problem = _table_problem(doc, engines)
    if problem is not None:
        return ReplayResult([0.0] * len(engines), [math.inf] * len(engines), period, cycles, 0, 0.0, 1, problem)
    per_cycle = [sum(len(rep["subgraphs"]) for rep in e["repetitions"]) for e in engines]
    runs = [[sg for rep in e["repetitions"] for sg in rep["subgraphs"]] for e in engines]
    total = cycles * sum(sg["bytes"] for rs in runs for sg in rs)
    g = _group(total, doc["burst_beats"] * doc["port_bytes"])
    port = _Port(doc["port_bytes"], bw, g)
    sims = [_Engine([(c * period + sg["start_beat"] * beat,
                      SimTask(i, sg["name"], sg["bytes"], sg["latency_s"], sg["start_beat"] * beat, sg["slots"]))
                     for c in range(cycles) for sg in rs], 0, g * FIFO_BYTES, prefetch=True)
            for i, rs in enumerate(runs)]
    # the control unit fills the engines' FIFOs before the first period starts, as it does before
    # every later run (prefetch): start the port early enough to fill them all
    chunk_beats = g * (doc["burst_beats"] + BURST_OVERHEAD + SWITCH_PENALTY)
    port.t = -len(sims) * math.ceil(g * FIFO_BYTES / (g * doc["burst_beats"] * doc["port_bytes"])) * chunk_beats * beat
    horizon = (cycles + 1) * period * 4            # a table that falls this far behind has failed
    _round_robin(sims, port, g * doc["burst_beats"] * doc["port_bytes"],
                 lambda: any(e.task is not None for e in sims) and port.t < horizon, check)
    late = 0
    fps, measured = [], []
    first = 1 if cycles >= 3 else 0
    for e, rs, n, eng in zip(sims, runs, per_cycle, engines):
        ends = dict(e.ends)
        for k, end in e.ends:
            c, j = divmod(k, n)
            late += c >= first and end > c * period + rs[j]["end_beat"] * beat * (1 + 1e-9)
        a, b = ends.get((first + 1) * n - 1), ends.get(cycles * n - 1)
        if a is None or b is None or b <= a:
            fps.append(0.0)
            measured.append(math.inf)
            continue
        p = (b - a) / (cycles - 1 - first)
        measured.append(p)
        fps.append(eng["frames_per_cycle"] / p)
    return ReplayResult(fps, measured, period, cycles, late, port.payload / port.busy if port.busy else 0.0, g)


def replay_matches(schedule_fps: list[float], replay: ReplayResult, rtol: float = REPLAY_RTOL) -> bool:
    """The table delivers the schedule's throughput: every engine's replayed frame rate within rtol
    of the schedule's (the table's period is the schedule's rounded up to a whole beat)."""
    return replay.error is None and len(schedule_fps) == len(replay.fps) and all(
        f > 0 and abs(r - f) <= rtol * f for f, r in zip(schedule_fps, replay.fps))
