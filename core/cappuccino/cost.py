"""A network's cost record (core.cost) on a mobile SoC target from the synthesised program (issue 50).

The layers are the program's steps (synth_program.Plan's ops that run: a convolution with the max
pooling fused into it, or with the residual add it runs as, is one step; a concatenation its inputs
wrote, or a fused pooling, is no step of its own). Per step:

* **MACs**: the multiply-adds of the network's convolutions (and fully connected layers) it computes;
  the steps' MACs add up to the network's.
* **Off-chip bytes, modelled**: the compulsory traffic, each of the step's inputs (the elements some
  window reads), its weights and bias, and its output once; the limit is the same figure (no
  schedule moves less), so value and limit agree and the record says it is the compulsory traffic,
  not a cache simulation.
* **Time**: on this machine *measured*: the program's own per-op wall clock (`--profile`:
  `clock_gettime` around each op on worker 0, summed over the timed passes, printed per image), the
  whole-program timing untouched (it is a separate, unprofiled run). A step whose measured time is
  below its off-chip limit (its data stayed in the caches between passes, which a cold run would
  not see) takes the limit, *modelled*, and its note says so. For another SoC, *modelled*: the time
  model of core.cappuccino.time_model, max(compute cycles per worker / clock, bytes / bandwidth) +
  the step's fixed cost, the cycles counted from the program's plan (the vector FMAs its register
  blocks issue, at the target's FMA issue per cycle, its other kernels' loads and divides), never
  below the step's limit. Nothing in the model is fitted to a network's measured time.

Limits: peak MAC rate = cores x vector width x FMA per cycle x clock, with FMA per cycle the
target's `fma_per_cycle` where it has one, else `FMA_PER_CYCLE` (two: x86-64 cores since Haswell /
Zen 2 and Arm Cortex-A76 and later issue two vector FMA per cycle); off-chip lower bound =
compulsory bytes / bandwidth. A mobile SoC has no energy model here: energy and its limit are None.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from core.cappuccino import synth
from core.cappuccino.model import CnnModel, ConvOp, Op, op_in_shapes
from core.cappuccino.numerics import IMPRECISE, INT8, PRECISE
from core.cappuccino.synth_program import Plan
from core.cappuccino.time_model import step_time
from core.cost import Ceilings, CostRecord, How, LayerCost, layer_cost
from core.errors import InputError
from core.machine_load import LoadMeter, LoadRecord
from core.units import format_quantity
from core.results import optional_key

FMA_PER_CYCLE = 2
ACT_BYTES = 4                       # the program's frames are float32 (binary16 frames are an option it is not run with)
MIN_SECONDS = 0.2                   # each profiled run computes the images for at least this long


@dataclass(kw_only=True)
class StepNote:
    """One step's terms beside its figures in the record."""

    name: str
    ops: list[str]                  # the network's ops the step computes
    kind: str                       # the program's kernel (conv, maxpool, add, ...)
    workers: int                    # cores the program shares it over
    measured_us: float | None       # per image, the program's --profile (None: not measured)
    modelled_us: float              # per image, the time model (time_model.step_time) from the target's fields
    how: str                        # where the record's time comes from, in words
    compute_us: float = 0.0         # the model's terms, per image: compute cycles per worker / clock,
    memory_us: float = 0.0          # bytes / bandwidth, and the phase's fixed cost
    fixed_us: float = 0.0
    measured_cpu_us: float | None = optional_key()    # worker 0's CPU time in the step (a deschedule not counted)


@dataclass(kw_only=True)
class CappuccinoCost:
    """The network's cost on the mobile SoC: each step's terms and the record."""

    network: str
    measured_here: bool             # the target is this machine and the program was timed here
    fma_per_cycle: int
    program: str                    # which program was profiled (its modes)
    steps: list[StepNote]
    whole_program_us: float | None  # the profiled run's whole pass per image (packing and reading out included)
    measured_total_us: float | None  # sum of the steps' measured times
    modelled_total_us: float
    load: LoadRecord | None         # the machine's other work while the program was profiled
    record: CostRecord

    @property
    def measured_cpu_total_us(self) -> float | None:
        """Sum of worker 0's CPU time in the steps (None: the program did not print it)."""
        if not self.steps or any(n.measured_cpu_us is None for n in self.steps):
            return None
        return math.fsum(n.measured_cpu_us or 0.0 for n in self.steps)

    @property
    def model_error(self) -> float | None:
        """modelled / measured - 1 over the network's steps (None: nothing measured)."""
        if not self.measured_total_us:
            return None
        return self.modelled_total_us / self.measured_total_us - 1.0


def fma_of(target: Any) -> int:
    return int(getattr(target, "fma_per_cycle", FMA_PER_CYCLE))


def ceilings_of(target: Any) -> Ceilings:
    peak = target.cores * target.vector_width * fma_of(target) * target.clock_mhz * 1e6
    return Ceilings(peak_macs_per_s=peak, bandwidth_bytes_per_s=target.bandwidth_gbps * 1e9)


def target_words(target: Any) -> str:
    caches = ", ".join(f"{level} {format_quantity(size, 'B')}" for level, size in (
        ("L1d", target.l1d_bytes), ("L2", target.l2_bytes), ("L3", target.l3_bytes)))
    return (f"mobile SoC: {target.cores} cores x {target.vector_width} lanes x {fma_of(target)} FMA at "
            f"{target.clock_mhz:g} MHz, {target.bandwidth_gbps:g} GB/s, {caches}")


def is_this_machine(target: Any) -> bool:
    """The target describes this machine: its clock, DRAM bandwidth and caches are this machine's
    (the fields' defaults), and it asks for no more cores than this machine has."""
    import os

    from core.target_fields import HOST_BANDWIDTH_GBPS
    from core.host_machine import host_cpu

    h = host_cpu()
    return (target.cores <= (os.cpu_count() or 1) and math.isclose(target.clock_mhz, h.clock_mhz)
            and math.isclose(target.bandwidth_gbps, HOST_BANDWIDTH_GBPS) and target.l1d_bytes == h.l1d_bytes
            and target.l2_bytes == h.l2_bytes and target.l3_bytes == h.l3_bytes)


def _touched(n: int, k: int, stride: int, lead: int, out: int) -> int:
    """How many of an axis's n input positions some window reads (a padding position is never read)."""
    starts = np.arange(out) * stride - lead
    read = np.zeros(n, bool)
    for i in range(k):
        pos = starts + i
        read[pos[(pos >= 0) & (pos < n)]] = True
    return int(read.sum())


def input_elements(op: Op) -> int:
    """Elements of the op's inputs it reads (a strided convolution skips some)."""
    if isinstance(op, ConvOp) and not op.fc:
        c, h, w = op.in_shape
        _, oh, ow = op.out_shape
        kh, kw = op.weight.shape[2:]
        top, left = op.pads4[0], op.pads4[1]
        return c * _touched(h, kh, op.stride, top, oh) * _touched(w, kw, op.stride, left, ow)
    return sum(int(np.prod(s)) for s in op_in_shapes(op))


def weight_bytes(op: Op, mode: str) -> int:
    if not isinstance(op, ConvOp):
        return 0
    per = 1 if mode == INT8 else 2 if mode == IMPRECISE else 4
    return per * int(op.weight.size) + 4 * int(op.out_shape[0])       # the bias stays float32


def _steps(model: CnnModel, plan: Plan) -> list[tuple[int, list[Op]]]:
    """(plan op index, the network's ops it computes) for every step the program times."""
    by_name = {op.name: op for op in model.ops}
    out: list[tuple[int, list[Op]]] = []
    for i, p in enumerate(plan.ops):
        if p.kind == "none" or p.fused:
            continue
        base = p.name.split("/copy")[0]
        names = base.split("+") if base not in by_name else [base]
        ops = [by_name[n] for n in names]
        if p.pool >= 0:
            ops.append(by_name[plan.ops[p.pool].name])
        out.append((i, ops))
    return out


def step_bytes(ops: list[Op], modes: dict[str, str], plan_op: Any = None, model: CnnModel | None = None) -> int:
    """The compulsory traffic of a step: its inputs from outside the step, its weights, its output."""
    made = {op.name for op in ops}
    first = ops[0]
    if plan_op is not None and "/copy" in plan_op.name and model is not None:     # one input's slice of a concat
        assert model is not None
        t = plan_op.name.split("/copy")[1]
        k = int(t) if t.isdigit() else 0
        return 2 * ACT_BYTES * int(np.prod(op_in_shapes(first)[k]))
    inputs = input_elements(first)
    for op in ops[1:]:          # an add's other summands come from outside the step
        if len(op.inputs) > 1:
            inputs += sum(int(np.prod(s)) for s, n in zip(op_in_shapes(op), op.inputs) if n not in made)
    weights = sum(weight_bytes(op, modes.get(op.name, PRECISE)) for op in ops)
    return ACT_BYTES * (inputs + int(np.prod(ops[-1].out_shape))) + weights


def cost_of_plan(model: CnnModel, plan: Plan, target: Any, modes: dict[str, str], op_us: Sequence[float] | None,
                 measured_here: bool, program: str, whole_us: float | None = None,
                 load: LoadRecord | None = None, op_cpu_us: Sequence[float] | None = None) -> CappuccinoCost:
    """The record of the program `plan` on `target`; `op_us` the profiled per-op µs per image (plan
    order), used as the times when `measured_here`, else only beside the model's."""
    c = ceilings_of(target)
    costs: list[LayerCost] = []
    notes: list[StepNote] = []
    for i, ops in _steps(model, plan):
        p = plan.ops[i]
        macs = sum(op.macs for op in ops if isinstance(op, ConvOp))
        nbytes = float(step_bytes(ops, modes, p, model))
        st = step_time(plan, i, target, fma_of(target), nbytes)
        workers = st.workers
        stream = nbytes / c.bandwidth_bytes_per_s
        modelled = max(st.total_s, c.time_limit(macs, nbytes))        # never below the roofline
        measured = None if op_us is None else float(op_us[i]) * 1e-6
        time_s, how, words = modelled, "modelled", ("time model: max(compute cycles per worker / clock, bytes / "
                                                    "bandwidth) + the step's fixed cost")
        if measured_here and measured is not None:
            if measured >= c.time_limit(macs, nbytes):
                time_s, how, words = measured, "measured", "measured here: the program's per-op clock (--profile)"
            else:
                time_s, words = c.time_limit(macs, nbytes), (
                    f"measured {measured * 1e6:.3g} µs with its data in the caches, below the {stream * 1e6:.3g} µs its "
                    "compulsory bytes take at the bandwidth: the latter is the time (modelled)")
        hw: How = "measured" if how == "measured" else "modelled"
        costs.append(layer_cost(p.name, macs, c, nbytes, time_s=time_s, offchip_bytes=nbytes, energy_j=None,
                                time_how=hw))
        notes.append(StepNote(name=p.name, ops=[op.name for op in ops], kind=p.kind, workers=workers,
                              measured_us=None if measured is None else measured * 1e6, modelled_us=modelled * 1e6,
                              how=words, compute_us=st.compute_s * 1e6, memory_us=st.memory_s * 1e6,
                              fixed_us=st.fixed_s * 1e6,
                              measured_cpu_us=None if op_cpu_us is None else float(op_cpu_us[i])))
    record = CostRecord.of(target_words(target), c, costs)
    bad = record.problems()
    if bad:         # the record breaks a limit it must meet by construction: a fault here
        raise RuntimeError(f"the cost record fails its own check: {bad[0][0]}: {bad[0][1]}")
    measured_total = (math.fsum(n.measured_us for n in notes if n.measured_us is not None)
                      if op_us is not None else None)
    return CappuccinoCost(network=model.name, measured_here=measured_here and op_us is not None,
                          fma_per_cycle=fma_of(target), program=program, steps=notes, whole_program_us=whole_us,
                          measured_total_us=measured_total, modelled_total_us=math.fsum(n.modelled_us for n in notes),
                          load=load, record=record)


def profiled_run(exe: Path, weights: Path, images: Path, count: int, threads: int, check: Callable[[], None],
                 min_seconds: float = MIN_SECONDS) -> synth.RunResult:
    """One profiled run of a built program, its per-op wall (and worker 0's CPU) µs per image."""
    r = synth.run_program(exe, images, count, min_seconds, check, weights=weights, threads=threads, profile=True)
    if r.op_list is None:
        raise RuntimeError(f"{exe.name} printed no per-op times with --profile")
    return r


def cost_network(network: Any, target: Any, *, measure: bool | None = None, images: int = 8,
                 min_seconds: float = MIN_SECONDS, check: Callable[[], None] | None = None) -> CostRecord:
    """The network's cost record on a mobile SoC target (see `network_cost`)."""
    return network_cost(network, target, measure=measure, images=images, min_seconds=min_seconds, check=check).record


def network_cost(network: Any, target: Any, *, measure: bool | None = None, images: int = 8,
                 min_seconds: float = MIN_SECONDS, check: Callable[[], None] | None = None) -> CappuccinoCost:
    """The precise (every layer float32) Cappuccino program of `network` (a CnnNetwork, a zoo name,
    or a loaded CnnModel) for `target` (a MobileSocTarget): synthesised, built and profiled here on
    `images` validation images when `measure` (None: when the target is this machine) and a C
    compiler is found; the times modelled otherwise (measured here beside the model's when `measure`
    is True for another SoC). Refuses (InputError) a target that is not a mobile SoC."""
    from core.cappuccino.engine import load_model
    from core.workload import CnnNetwork, MobileSocTarget

    if not isinstance(target, MobileSocTarget):
        raise InputError(f"Cappuccino costs a network on a mobile SoC target, got {getattr(target, 'kind', target)!r}",
                         "target.kind")
    if target.vector_width not in synth.VECTOR_WIDTHS:
        raise InputError(f"vector width must be one of {synth.VECTOR_WIDTHS}", "target.vector_width")
    check = check or (lambda: None)
    here = is_this_machine(target)
    cc = synth.find_compiler_noting()[0] if measure or (measure is None and here) else None
    measure = cc is not None
    if isinstance(network, CnnModel):
        model = network
    else:
        if isinstance(network, str):
            network = CnnNetwork(network=network)
        model = load_model(network, images if measure else 1)     # a zoo network's load runs numpy on them
    modes = {op.name: PRECISE for op in model.conv_ops}
    prog = synth.synthesise_program(model, modes, target.vector_width, target.cores)
    if cc is None:
        return cost_of_plan(model, prog.plan, target, modes, None, False, "precise (not run)")
    with tempfile.TemporaryDirectory(prefix="cappuccino-cost-") as tmp:
        d = Path(tmp)
        (d / "p.c").write_text(prog.source)
        (d / "w.bin").write_bytes(prog.weights)
        x = model.x_val[:images]
        synth.write_images(d / "x.f32", x)
        synth.compile_c(cc, d / "p.c", d / "p", True, check)
        meter = LoadMeter()
        r = profiled_run(d / "p", d / "w.bin", d / "x.f32", len(x), target.cores, check, min_seconds)
        load = meter.stop()
    return cost_of_plan(model, prog.plan, target, modes, r.op_list, here, "precise",
                        1e6 * r.seconds_per_pass / len(x), load, r.op_cpu_list)


def cost_lines(c: CappuccinoCost) -> list[str]:
    """The cost table of the text output: per step the time against its limit, modelled beside measured."""
    r = c.record
    lines = [f"Cost on the {r.target} ({'measured here' if c.measured_here else 'modelled'}; {c.program} program):",
             f"  {'step':24} {'MACs':>12} {'bytes':>10} {'time us':>9} {'limit':>9} {'how':9} {'measured':>9} "
             f"{'model':>9}"]
    for s, l in zip(c.steps, r.layers):
        lines.append(f"  {s.name[:24]:24} {l.macs:12d} {l.offchip_bytes.value or 0:10.0f} "
                     f"{(l.time_s.value or 0) * 1e6:9.2f} {(l.time_s.limit or 0) * 1e6:9.2f} {l.time_s.how:9} "
                     f"{'-' if s.measured_us is None else f'{s.measured_us:.2f}':>9} {s.modelled_us:9.2f}")
    t = r.total
    err = c.model_error
    lines.append(f"  {'total':24} {t.macs:12d} {t.offchip_bytes.value or 0:10.0f} {(t.time_s.value or 0) * 1e6:9.2f} "
                 f"{(t.time_s.limit or 0) * 1e6:9.2f} {t.time_s.how:9} "
                 f"{'-' if c.measured_total_us is None else f'{c.measured_total_us:.2f}':>9} {c.modelled_total_us:9.2f}")
    if err is not None:
        lines.append(f"  model / measured - 1 over the steps: {100 * err:+.0f} %"
                     + (f"; {c.load.warning()}" if c.load is not None and c.load.busy else ""))
    lines.append("  bytes: the compulsory traffic (inputs read, weights, outputs once; modelled). Limit: max(MACs / "
                 "peak, bytes / bandwidth), peak = cores x V x FMA x clock; model: the program's cycles per step "
                 "(docs/cappuccino.md, 'Cost').")
    return lines
