"""A network's cost record (core.cost) from MERIT transforms on a CPU or GPU target (issue 50, item 3).

Every convolution (and fully connected layer, a 1x1 convolution) of a zoo network or an ONNX file is
one MERIT convolution transform (core.merit_transform.workloads.conv). Per layer:

* **CPU, this machine:** the transform's generated C (core.merit.codegen_run.check_c: compiled, run,
  checked against numpy) is timed here; its fastest verified kernel's median time is the layer's time,
  *measured*. A layer above `MEASURE_MAX_MACS` is measured on a scaled-down copy (its output rows and
  columns, then its output channels, cut until it fits the budget) and its time extrapolated by the
  MACs ratio: that time is *modelled* and the layer's note says from what.
* **CPU, another machine, and GPU:** modelled by the roofline, max(MACs / peak MAC rate, off-chip
  bytes / bandwidth), from the target's fields. No CUDA is timed unless a GPU is present; none is
  used here (the note says so).

Off-chip bytes (modelled, both kinds): the words the transform's tiled code loads, each operand's
eq. 9 footprint once per tile (core.merit.tiling.load_counts, the C tile on a CPU, the CUDA tile
fitted to the GPU on a GPU), plus the outputs written once, in float32. The limit is the compulsory
traffic, proven for every schedule and memory size: every input a window reads, every weight and
every output once (`compulsory_words`). The bound engine's tighter bound, which grows as the on-chip
memory shrinks, is another engine's model and not imported here (the engines are siblings); a
cache-sized S would change little for layers whose operands fit the last-level cache. CPU and GPU
targets have no energy model: energy and its limit are None.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Generator

from core.cost import Ceilings, CostRecord, How, LayerCost, layer_cost
from core.errors import InputError
from core.merit.result import LayerNote, MeritCost
from core.nets.source import network_layers
from core.units import format_quantity
from core.merit.tiling import load_counts
from core.merit_transform import workloads as W
from core.merit_transform.transform import MeritTransform

WORD_BYTES = 4                       # float32, the generated code's type
MEASURE_MAX_MACS = 1 << 25           # above, the C is timed on a scaled-down copy of the layer
MEASURE_ROUNDS = 3

# (transform, seed) -> (seconds per call of the fastest verified kernel, what was run); None: not measured
Measure = Callable[[MeritTransform, int], tuple[float, str] | None]


def layer_transform(layer: Any, h: int | None = None, w: int | None = None, out_ch: int | None = None) -> MeritTransform:
    """A network layer as a MERIT convolution transform (optionally with a smaller input or fewer
    output channels, for a measurement on a scaled-down copy)."""
    return W.conv(layer.in_ch, h or layer.in_h, w or layer.in_w, out_ch or layer.out_ch, layer.k_h, layer.stride,
                  layer.dilation, layer.pad, layer.groups, name=W_name(layer.name), kw=layer.k_w)


def W_name(name: str) -> str:
    """A transform name from a layer name (letters, digits and underscores)."""
    out = "".join(c if c.isalnum() else "_" for c in name) or "layer"
    return out if not out[0].isdigit() else "l" + out


def macs_of(t: MeritTransform) -> int:
    return t.p_count * t.a_count


def scaled_layer(layer: Any, budget: int = MEASURE_MAX_MACS) -> MeritTransform:
    """The layer as a transform of at most `budget` MACs (the whole layer when it fits): its input's
    rows and columns cut first (never below the kernel's extent), then its output channels (in
    whole groups)."""
    full = layer_transform(layer)
    if macs_of(full) <= budget:
        return full
    kh = (layer.k_h - 1) * layer.dilation + 1
    kw = (layer.k_w - 1) * layer.dilation + 1
    f = math.sqrt(budget / macs_of(full))
    h = max(kh, min(layer.in_h, int(layer.in_h * f)))
    w = max(kw, min(layer.in_w, int(layer.in_w * f)))
    t = layer_transform(layer, h, w)
    if macs_of(t) <= budget:
        return t
    g = layer.groups
    per_group = layer.out_ch // g
    keep = max(1, int(per_group * budget / macs_of(t)))
    return layer_transform(layer, h, w, keep * g)


def describe(t: MeritTransform, layer: Any) -> str:
    return (f"conv {layer.in_ch}x{layer.in_h}x{layer.in_w} -> {layer.out_ch}, {layer.k_h}x{layer.k_w} "
            f"s{layer.stride} p{layer.pad}" + (f" g{layer.groups}" if layer.groups > 1 else "")
            + f" ({t.p_count} outputs x {t.a_count} MACs each)")


def offchip_words(t: MeritTransform, tile: dict[str, int]) -> int:
    """Words the tiled code moves: each input operand's footprint once per tile, the outputs once."""
    return sum(c.on_the_fly for c in load_counts(t, tile)) + t.p_count


def _touched(n: int, k: int, stride: int, pad: int, dilation: int, out: int) -> int:
    """How many of an axis's n input positions some window reads (padding is never read)."""
    used = {y * stride - pad + i * dilation for y in range(out) for i in range(k)}
    return sum(1 for u in used if 0 <= u < n)


def compulsory_words(layer: Any) -> int:
    """The proven off-chip lower bound of one layer at batch 1 in words: every input element some
    window reads, every weight and every output crosses the chip's edge at least once, whatever the
    schedule and the on-chip memory."""
    rows = _touched(layer.in_h, layer.k_h, layer.stride, layer.pad, layer.dilation, layer.out_h)
    cols = _touched(layer.in_w, layer.k_w, layer.stride, layer.pad, layer.dilation, layer.out_w)
    return layer.in_ch * rows * cols + layer.weights + layer.out_ch * layer.out_h * layer.out_w


def measure_c(t: MeritTransform, seed: int) -> tuple[float, str] | None:
    """The fastest verified kernel of the transform's generated C, timed here (None: it did not run
    or did not match numpy, so no time is taken from it)."""
    import numpy as np

    from core.merit.codegen_run import check_c

    rng = np.random.default_rng(seed)
    data = {op.name: rng.standard_normal(tuple(op.shape)) for op in t.operands}
    c = check_c([t], data, {}, None, rounds=MEASURE_ROUNDS, seed=seed)
    if not c.verified or c.time_s is None:
        return None
    return c.time_s, f"{c.best} kernel, {c.threads} threads, median of {MEASURE_ROUNDS}"


def cpu_ceilings(target: Any) -> Ceilings:
    return Ceilings(peak_macs_per_s=target.peak_macs_per_s, bandwidth_bytes_per_s=target.bandwidth_gbps * 1e9)


def target_words(target: Any) -> str:
    if target.kind == "gpu":
        return (f"GPU {target.device}: {target.sms} SMs at {target.clock_mhz:g} MHz, {target.fp32_tflops:g} TFLOPS "
                f"fp32, {target.bandwidth_gbps:g} GB/s")
    return (f"CPU: {target.cores} cores x {target.vector_width} lanes x {target.fma_per_cycle} FMA at "
            f"{target.clock_mhz:g} MHz, {target.bandwidth_gbps:g} GB/s, {format_quantity(target.l3_bytes, 'B')} L3")


def is_this_machine(target: Any) -> bool:
    from core.hardware.targets import this_machine

    return target.kind == "cpu" and target == this_machine()


def network_cost(source: str, target: Any, *, measure: Measure | None = measure_c, seed: int = 0,
                 budget: int = MEASURE_MAX_MACS, cancel: Callable[[], None] | None = None) -> MeritCost:
    """The network's cost record on a CPU or GPU target (see the module docstring). `measure` times a
    transform's C here (None: model every layer, as for a target that is not this machine)."""
    steps = cost_steps(source, target, measure=measure, seed=seed, budget=budget, cancel=cancel)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            result: MeritCost = stop.value
            return result


# Seconds per layer on the build machine: compiling and timing a layer's C (a scaled-down copy at most
# MEASURE_MAX_MACS) 2.8 s (ResNet-18's 21 layers in 59 s); modelling one (the tile fit and the loads)
# 0.05 s (ResNet-18 on the GPU target in about 1 s).
MEASURED_LAYER_S = 2.8
MODELLED_LAYER_S = 0.05


def estimate_seconds(source: str, target: Any) -> float:
    """The costing's estimated seconds (work units for the progress, core.work_units)."""
    try:
        n = len(network_layers(source)[1])
    except InputError:
        return 1.0
    return n * (MEASURED_LAYER_S if target.kind == "cpu" and is_this_machine(target) else MODELLED_LAYER_S)


def cost_steps(source: str, target: Any, *, measure: Measure | None = measure_c, seed: int = 0,
               budget: int = MEASURE_MAX_MACS,
               cancel: Callable[[], None] | None = None) -> Generator[tuple[int, int, str], None, MeritCost]:
    """`network_cost` layer by layer: yields (layer index, layers, layer name) before each layer and
    returns the MeritCost."""
    cancel = cancel or (lambda: None)
    if getattr(target, "kind", None) not in ("cpu", "gpu"):
        raise InputError(f"MERIT costs a network on a CPU or GPU target, got {getattr(target, 'kind', None)!r}",
                         "target.kind")
    name, layers = network_layers(source)
    gpu = target.kind == "gpu"
    ceilings = cpu_ceilings(target) if not gpu else Ceilings(peak_macs_per_s=target.peak_macs_per_s,
                                                             bandwidth_bytes_per_s=target.bandwidth_gbps * 1e9)
    here = not gpu and measure is not None and is_this_machine(target)
    costs: list[LayerCost] = []
    notes: list[LayerNote] = []
    for i, layer in enumerate(layers):
        cancel()
        yield i, len(layers), layer.name
        t = layer_transform(layer)
        macs = macs_of(t)
        if gpu:
            from core.merit.device import fit_cuda_tile, gpu_target_device

            tile = fit_cuda_tile(t, {}, gpu_target_device(target)).ext
        else:
            from core.merit.device import fit_c_tile

            tile = fit_c_tile(t, {})[0]
        words = offchip_words(t, tile)
        lower = compulsory_words(layer) * WORD_BYTES
        roof = max(macs / ceilings.peak_macs_per_s, words * WORD_BYTES / ceilings.bandwidth_bytes_per_s)
        how_words = "roofline: max(MACs / peak, off-chip bytes / bandwidth)"
        time_s = roof
        how: How = "modelled"
        got = None
        if here:
            assert measure is not None
            small = scaled_layer(layer, budget)
            got = measure(small, seed)
            cancel()
            if got is None:
                how_words = "roofline (the generated C did not run or did not match numpy here)"
            elif small is t or macs_of(small) == macs:
                time_s, how = got[0], "measured"
                how_words = f"measured here: generated C, {got[1]}"
            else:
                time_s = got[0] * macs / macs_of(small)
                how_words = (f"extrapolated by MACs from the generated C measured here on a scaled-down copy "
                             f"({'x'.join(str(s) for s in small.operands[0].shape)} input, {macs_of(small)} MACs; "
                             f"{got[1]})")
        stream = words * WORD_BYTES / ceilings.bandwidth_bytes_per_s
        if got is not None and time_s < stream:
            # timed call after call, the layer's data stayed in the caches: a call in the network
            # first brings them from DRAM, so the time is the larger of the two (modelled)
            how_words += (f"; its {time_s * 1e3:.3g} ms ran with the data in cache, below the "
                          f"{stream * 1e3:.3g} ms its off-chip bytes take at the bandwidth: the latter is the time")
            time_s, how = stream, "modelled"
        costs.append(layer_cost(layer.name, macs, ceilings, lower, time_s=time_s,
                                offchip_bytes=float(words * WORD_BYTES), energy_j=None, time_how=how))
        notes.append(LayerNote(name=layer.name, transform=describe(t, layer), how=how_words, tile=dict(tile)))
    record = CostRecord.of(target_words(target), ceilings, costs)
    bad = record.problems()
    if bad:
        where, what = bad[0]
        raise InputError(f"the cost record is not sound: {what} (a measured time below the target's peak: is "
                         f"its clock or vector width set too low?)", f"cost.{where}")
    gpu_note = None
    if gpu:
        from core.merit.codegen_run import gpu_present

        gpu_note = ("a GPU is present, but the times are the roofline model's" if gpu_present()
                    else "no GPU on this machine: CUDA not timed, every time is the roofline model's")
    return MeritCost(network=name, target_kind=target.kind, measured_here=here, notes=notes, record=record,
                     gpu_note=gpu_note)
