"""The modelled time of one step of a synthesised Cappuccino program on a mobile SoC (issue 50).

The roofline alone, max(MACs / peak, bytes / bandwidth), took every convolution to run at the
target's peak and every other kernel to be free. This model costs what the program does, step by
step, from its plan (synth_program.Plan: the kernel, register block, chunks and frames of each op)
and the target's fields; each term is a figure of the program's structure, a published figure of
the core, or a rate measured on this machine by benchmarks/cappuccino_machine_rates.py. None is
fitted to a network's measured time (docs/cappuccino.md, "Cost on a mobile SoC", names each).

    time = max(compute cycles per worker / clock, bytes / bandwidth) + the phase's fixed cost

* **Convolution** (`conv`): the vector FMAs the program issues, not the MACs: blocks (overlapping at
  the map's edges) x k-steps x rq x rp, every vector V lanes wide however many output maps are left
  (a 10-map layer at V = 16 wastes 6 lanes), and per k-step the slowest of: rq x rp FMAs at the
  target's FMA issue per cycle, one FMA latency (each accumulator is a dependent chain), and the
  rq weight vectors + rp broadcasts at the load ports; then per output vector the kernel's cost
  beyond its k-steps (bias, residual, ReLU, address, store, loop overheads: CONV_OUT_CYCLES_*, measured
  here on one worker and on two by benchmarks/cappuccino_conv_overhead.py) and per block its set-up
  (synth_program's BLOCK_SETUP). A max pooling fused into it adds the
  pooling's work. A conv whose input frame exceeds the last-level cache reads it again from DRAM
  for every group of rq output stacks after the first. An int8 convolution (issue 35) sums 4 input
  maps a step (one vpdpbusd) and quantises each pixel's maps once a step (synth_program's
  INT8_QUANT_CYCLES; the VNNI kernel at V = 16, the plain-C fallback elsewhere is not modelled); the
  other modes cost as float32.
* **Depthwise** (`dw`): per output vector kh x kw FMAs at the issue rate (independent blocks) and
  the kernel's cost beyond them (DW_OUT_CYCLES_*, measured as the convolution's).
* **Pooling, add, global average**: per output vector its vector loads at the load ports (or,
  global average, its dependent chain of adds) plus the epilogue; **copy**: the epilogue per element.
* **LRN**: per pixel and stack the window's loads and, on the divide/square-root unit, two square
  roots and a division (the rates measured here).
* **Softmax** (one worker): per element two scalar expf (measured here) plus the epilogue.
* **Workers**: an op the program shares (chunks > 1) runs on min(cores, chunks) workers, the slowest
  taking ceil(chunks / workers) of the chunks; a one-chunk op on worker 0 alone.
* **Fixed cost per step**: one phase of the work sharing (claim, count done, wait) and the profile's
  two clock reads, measured here on one worker and on two (PHASE_NS_ONE, PHASE_NS_SHARED): the model
  is of the profiled program, whose per-step times it is checked against (an unprofiled pass has
  no clock reads: ~0.5 µs a step less here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.cappuccino.numerics import INT8
from core.cappuccino.synth_program import (BLOCK_SETUP, EPILOGUE, INT8_QUANT_CYCLES, LOADS_PER_CYCLE, Plan,
                                             ProgOp)

# ---- published figures of the core (x86-64 since Skylake / Zen 2, Arm Cortex-A76 alike)
FMA_LATENCY = 4          # cycles from one FMA to the next on its accumulator: AMD Software Optimization Guide
#                          for family 19h (Zen 3/4), Intel 64 and IA-32 Optimization Reference Manual
#                          (Skylake and later), Arm Cortex-A76 Software Optimization Guide
ADD_LATENCY = 3          # cycles of a vector add on a dependent chain (the same guides: FADD 3 on Zen 2-4)
LOAD_BYTES = 32          # bytes one load port moves per cycle (256-bit on Zen 2-4 and Haswell and later;
#                          a 512-bit load takes two); LOADS_PER_CYCLE (synth_program) ports

# ---- measured on this machine (benchmarks/cappuccino_machine_rates.py, AMD EPYC Zen 4, thread CPU time,
# cycles at the 3.63 GHz the FMA loop ran at: 3.64 vector FMAs per ns at V = 16, 7.25 at V = 8)
SQRT_CYCLES_PER_LANE = 0.625   # a V-lane square root: 2.74 ns at V = 16 (10 cycles), 1.37 ns at V = 8
DIV_CYCLES_PER_LANE = 0.375    # a V-lane division: 1.65 ns at V = 16 (6 cycles), 0.87 ns at V = 8
EXPF_CYCLES = 12.0             # one scalar expf (glibc): 3.3 ns
PHASE_NS_ONE = 540.0           # a step on one worker: claim, count done, wait and the profile's two clock
#                                reads, 33 ns without the thread-CPU-time read (a system call here, ~500 ns)
PHASE_NS_SHARED = 560.0        # the same on two workers, worker 0's CPU time (its wall time beside other
#                                work: 8-9 µs, a deschedule of either worker in it)
CONV_OUT_CYCLES_ONE = 17.8     # a convolution's cycles per output vector beyond its k-steps and block set-up
CONV_OUT_CYCLES_SHARED = 25.0  # (bias, residual, ReLU, address, store and the kernel's loop overheads), all
#                                workers' cycles, on one worker and on two: 1x1 convolutions of 16, 32 and 64
#                                maps, medians (benchmarks/cappuccino_conv_overhead.py on the idle machine: one
#                                worker 17.4-18.5, two 24.8-25.1); synth_program's EPILOGUE, 6, is the plan
#                                chooser's estimate, never measured
DW_OUT_CYCLES_ONE = 17.7       # the same of a 3x3 depthwise convolution beyond its taps' FMAs (128 and 256
DW_OUT_CYCLES_SHARED = 22.7    # maps: one worker 17.4-17.9, two 20.5-24.8)


@dataclass(frozen=True)
class StepTime:
    """One step's modelled terms (seconds per image) and the workers it runs on."""

    compute_s: float
    memory_s: float
    fixed_s: float
    workers: int

    @property
    def total_s(self) -> float:
        return max(self.compute_s, self.memory_s) + self.fixed_s


def _stacks(c: int, v: int) -> int:
    return -(-c // v)


def load_cycles(loads: float, vector_loads: float, v: int) -> float:
    """Cycles the load ports need for `loads` loads of which `vector_loads` are V-lane vectors (a
    vector wider than a port takes several ports)."""
    per_vector = max(1, -(-4 * v // LOAD_BYTES))
    return (loads - vector_loads + vector_loads * per_vector) / LOADS_PER_CYCLE


def conv_fmas(plan: Plan, p: ProgOp) -> tuple[int, int]:
    """(blocks, k-steps per block) of a convolution as the program runs it."""
    V = plan.V
    tin, tout = plan.tensors[p.ins[0]], plan.tensors[p.out]
    groups = _stacks(_stacks(tout.C, V), p.rq)
    blocks = groups * (_stacks(tout.H * tout.W, p.rp) if p.flat else tout.H * _stacks(tout.W, p.rp))
    maps = p.gin * V if p.gin else (_stacks(tin.C, V) - 1) * V + (p.klast or V)    # the last stack's maps only
    return blocks, maps * p.kh * p.kw


def _pool_cycles(plan: Plan, p: ProgOp) -> float:
    """A pooling's cycles: per output vector k x k vector loads, then the epilogue."""
    to = plan.tensors[p.out]
    outs = _stacks(to.C, plan.V) * to.H * to.W
    k2 = p.kh * p.kw
    return outs * (max(load_cycles(k2, k2, plan.V), k2 / 2) + EPILOGUE)


def conv_step_cycles(p: ProgOp, V: int, fma_per_cycle: int) -> float:
    """Cycles of one k-step of a convolution's register block: the slowest of its rq x rp FMAs at the
    issue rate, one FMA latency, and its rq weight vectors and rp broadcasts at the load ports."""
    return max(p.rq * p.rp / fma_per_cycle, FMA_LATENCY, load_cycles(p.rq + p.rp, p.rq, V))


def dw_tap_cycles(p: ProgOp, V: int, fma_per_cycle: int) -> float:
    """Cycles of a depthwise convolution's taps per output vector: kh x kw FMAs at the issue rate, or
    their input vectors at the load ports (independent output vectors: no latency chain)."""
    taps = p.kh * p.kw
    return max(taps / fma_per_cycle, load_cycles(taps, taps, V))


def step_cycles(plan: Plan, i: int, fma_per_cycle: int, workers: int = 1) -> float:
    """Cycles of all the work of plan op i (over all `workers`)."""
    p, V = plan.ops[i], plan.V
    to = plan.tensors[p.out]
    out_vectors = _stacks(to.C, V) * to.H * to.W
    if p.kind == "conv":
        blocks, steps = conv_fmas(plan, p)
        block = p.rq * p.rp
        step = conv_step_cycles(p, V, fma_per_cycle)
        if p.mode == INT8:      # one vpdpbusd sums 4 input maps; each pixel's maps quantised once per 4-map step
            steps, step = -(-steps // 4), step + INT8_QUANT_CYCLES / 4 * p.rp
        out = CONV_OUT_CYCLES_SHARED if workers > 1 else CONV_OUT_CYCLES_ONE
        cycles = blocks * (steps * step + out * block + BLOCK_SETUP)
        return cycles + (_pool_cycles(plan, plan.ops[p.pool]) if p.pool >= 0 else 0.0)
    if p.kind == "dw":
        out = DW_OUT_CYCLES_SHARED if workers > 1 else DW_OUT_CYCLES_ONE
        return out_vectors * (dw_tap_cycles(p, V, fma_per_cycle) + out)
    if p.kind in ("maxpool", "avgpool"):
        return _pool_cycles(plan, p)
    if p.kind == "add":
        n = len(p.ins)
        return out_vectors * (load_cycles(n, n, V) + EPILOGUE)
    if p.kind == "gap":
        ti = plan.tensors[p.ins[0]]
        return _stacks(ti.C, V) * (ti.H * ti.W * ADD_LATENCY + EPILOGUE)
    if p.kind == "lrn":
        n = max(1, p.lrn[0])
        root_div = V * (2 * SQRT_CYCLES_PER_LANE + DIV_CYCLES_PER_LANE)
        return out_vectors * (max(load_cycles(n + 2, n + 2, V), root_div) + 2 * EPILOGUE)
    if p.kind == "softmax":
        ti = plan.tensors[p.ins[0]]
        return ti.C * ti.H * ti.W * (2 * EXPF_CYCLES + EPILOGUE)
    if p.kind == "copy":
        ti = plan.tensors[p.ins[0]]
        return ti.C * ti.H * ti.W * EPILOGUE
    return 0.0


def workers_of(p: ProgOp, cores: int) -> int:
    return min(cores, p.chunks) if p.chunks > 1 else 1


def reread_bytes(plan: Plan, p: ProgOp, l3_bytes: int) -> float:
    """DRAM bytes a convolution reads beyond its compulsory traffic: its input frame again for every
    group of rq output stacks after the first, where the frame exceeds the last-level cache."""
    if p.kind != "conv":
        return 0.0
    frame = plan.frames[plan.tensors[p.ins[0]].buf]
    size = frame.nbytes
    groups = _stacks(_stacks(plan.tensors[p.out].C, plan.V), p.rq)
    return float(size * (groups - 1)) if size > l3_bytes and groups > 1 else 0.0


def step_time(plan: Plan, i: int, target: Any, fma_per_cycle: int, compulsory_bytes: float) -> StepTime:
    """The modelled time of plan op i on `target` (a MobileSocTarget: cores, clock, bandwidth, L3)."""
    p = plan.ops[i]
    workers = workers_of(p, target.cores)
    share = 1.0 if workers == 1 else math.ceil(p.chunks / workers) / p.chunks
    compute = step_cycles(plan, i, fma_per_cycle, workers) * share / (target.clock_mhz * 1e6)
    memory = (compulsory_bytes + reread_bytes(plan, p, target.l3_bytes)) / (target.bandwidth_gbps * 1e9)
    fixed = (PHASE_NS_SHARED if workers > 1 else PHASE_NS_ONE) * 1e-9
    return StepTime(compute_s=compute, memory_s=memory, fixed_s=fixed, workers=workers)
