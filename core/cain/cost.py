"""A network's cost record on SCAMP-5 (issue 50, item 3): the first layer's kernels where they fit
the array and its registers, every other layer "not applicable" with the reason in words.

SCAMP-5 computes in its focal plane on the image its pixels sense: one grey-level image, one
analogue value per pixel per register, each macro instruction on every pixel at once. Only a first
layer reads what the array senses; it fits when it reads one channel, its input is no larger than
the array and it is a convolution (not fully connected). Its kernels are then computed in passes of
at most `PASS_KERNELS` kernels (each pass's results read out before the next; fewer when the
registers do not leave room), and Cain (core.cain.api.compile_filter, within a node and time budget)
finds each pass's program, verified by the exact interpreter. The time per frame is the programs'
instructions times the target's instruction time (modelled from Cain's program; no device here).

Kernels: an ONNX file's own weights, else (a zoo network gives shapes only) seeded random ones drawn
uniformly in [-1, 1]; either way scaled by one factor per layer to a largest magnitude of 1 and
approximated to multiples of 1/2^d (Cain's approximation; the worst error is in the note).

Limits. A MAC-rate peak does not bound SCAMP-5: Cain's shift-and-add programs share partial sums, so
how many MACs one instruction realises depends on the kernels. The record's peak is these kernels'
own: their MACs over Cain's proven least instruction count (core.cain.lower_bound) times the
instruction time, so the time limit is that proven least program's time. No off-chip path: the
input is light on the array and the results stay in its registers (bandwidth 0, lower bound 0).
The SCAMP-5 target has no energy model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from core.cain.api import CainPlan, compile_filter
from core.cain.approx import approximate
from core.cain.lower_bound import problem_bound
from core.cost import Ceilings, CostRecord, LayerCost, layer_cost, not_applicable
from core.errors import InputError
from core.nets.source import network_with_weights
from core.scamp5.isa import instruction_set
from core.workload import Kernel, KernelSet, Scamp5Target

PASS_KERNELS = 2              # kernels one Cain search computes together (more: searches of minutes)
D = 2                         # kernels approximated to quarters
MAX_NODES = 20_000            # Cain's node budget per pass
TIME_S = 5.0                  # and its time budget per pass (the node budget usually ends it first)
ISA = "all"

Search = Callable[..., CainPlan]


@dataclass(kw_only=True)
class Scamp5Cost:
    """The record and, for the first layer, how it was costed."""

    network: str
    record: CostRecord
    note: str                 # the first layer: its programs, kernels and error, or why it does not fit


def first_layer_problem(layer: Any, target: Scamp5Target) -> str | None:
    """Why the array cannot compute this first layer (None when it can)."""
    n = target.array_size
    if layer.fc:
        return ("fully connected: every output reads the whole image, and a SCAMP-5 pixel reaches only its "
                "neighbours")
    if layer.in_ch != 1:
        return f"reads {layer.in_ch} input channels; the array senses one grey-level image"
    if layer.in_h > n or layer.in_w > n:
        return f"its {layer.in_h}x{layer.in_w} input is larger than the {n}x{n} array"
    if target.registers < 3:
        return f"a pass needs the input, a result and a working register; the target has {target.registers}"
    return None


def later_layer_reason(layer: Any, first: Any) -> str:
    words = (f"not the first layer: SCAMP-5 computes on the image its pixels sense, and this layer reads "
             f"{layer.in_ch} channel(s) of the network's own activations")
    if layer.in_ch > 1:
        words += f", which would need {layer.in_ch} registers per pixel at once beside its results"
    return words


def layer_kernels(layer: Any, weights: dict[str, dict[str, Any]] | None, seed: int) -> tuple[np.ndarray, str]:
    """The layer's kernels (out x k_h x k_w), scaled to a largest magnitude of 1, and their origin."""
    w = None if weights is None else weights.get(layer.name, {}).get("weight")
    if w is not None:
        k = np.asarray(w, dtype=float).reshape(layer.out_ch, layer.k_h, layer.k_w)
        origin = "the ONNX file's weights"
    else:
        k = np.random.default_rng(seed).uniform(-1.0, 1.0, (layer.out_ch, layer.k_h, layer.k_w))
        origin = f"seeded random kernels (seed {seed}; the zoo network gives shapes only)"
    peak = float(np.max(np.abs(k))) if k.size else 0.0
    return (k / peak if peak > 0 else k), origin


def scamp5_cost(source: str, target: Scamp5Target, *, seed: int = 0, d: int = D, max_nodes: int = MAX_NODES,
                time_s: float = TIME_S, pass_kernels: int = PASS_KERNELS, search: Search = compile_filter,
                cancel: Any = None) -> Scamp5Cost:
    """The network's cost record on SCAMP-5 (see the module docstring)."""
    name, layers, weights = network_with_weights(source)
    first = layers[0]
    rest = [not_applicable(l.name, l.macs, later_layer_reason(l, first)) for l in layers[1:]]
    t = target.instruction_ns * 1e-9
    target_words = (f"SCAMP-5: {target.array_size}x{target.array_size} array, {target.registers} registers, "
                    f"{target.instruction_ns:g} ns per instruction")
    why = first_layer_problem(first, target)
    if why is None:
        kernels, origin = layer_kernels(first, weights, seed)
        size = max(1, min(pass_kernels, target.registers - 2))
        length = bound = 0
        worst = 0.0
        passes = 0
        for lo in range(0, first.out_ch, size):
            group = list(range(lo, min(lo + size, first.out_ch)))
            # a pass Cain cannot finish within the budget is tried again one kernel at a time
            for part in ([group] if len(group) == 1 else [group, *([i] for i in group)]):
                ks = KernelSet(f"{first.name}_{part[0]}", 1, [Kernel(f"k{i}", kernels[i].tolist()) for i in part])
                try:
                    plan = search(ks, isa=ISA, registers=target.registers, time_s=time_s, max_nodes=max_nodes,
                                  d=d, cancel=cancel)
                except InputError as exc:
                    if len(part) > 1:
                        continue
                    why = (f"Cain found no program for kernel {part[0] + 1} within {max_nodes} nodes or {time_s:g} s "
                           f"({exc.message})")
                    break
                approx = approximate(ks, d=d, max_kernels=target.registers)
                bound += problem_bound(approx.goals, approx.d, approx.channels, instruction_set(ISA)).value
                length += plan.length
                worst = max(worst, plan.max_abs_error)
                passes += 1
                if len(part) > 1:
                    break
            if why is not None:
                break
        if why is None:
            # the kernels' own peak: their MACs in the proven least program's time (module docstring)
            ceilings = Ceilings(peak_macs_per_s=first.macs / (max(bound, 1) * t), bandwidth_bytes_per_s=0.0)
            cost = layer_cost(first.name, first.macs, ceilings, 0.0, time_s=length * t, offchip_bytes=0.0,
                              energy_j=None)
            note = (f"{first.name}: {first.out_ch} kernels {first.k_h}x{first.k_w} ({origin}) in {passes} pass(es) "
                    f"of at most {size}; Cain's programs {length} instructions (proven least {bound}), "
                    f"{length * target.instruction_ns / 1e3:.4g} us per frame; kernels approximated to 1/{2 ** d}, "
                    f"worst coefficient error {worst:.3g}" + (f"; computed at every pixel, kept at stride "
                                                              f"{first.stride}" if first.stride > 1 else ""))
            return Scamp5Cost(network=name, record=CostRecord.of(target_words, ceilings, [cost, *rest]).check(),
                              note=note)
    assert why is not None
    # no layer runs: the ceilings are the array's plain ones (one operation per pixel per instruction)
    ceilings = Ceilings(peak_macs_per_s=target.array_size ** 2 / t, bandwidth_bytes_per_s=0.0)
    record = CostRecord.of(target_words, ceilings, [not_applicable(first.name, first.macs, why), *rest])
    return Scamp5Cost(network=name, record=record.check(), note=f"{first.name}: {why}")


def cost_of(cost: LayerCost) -> str:
    """One line of a layer's SCAMP-5 cost, or its reason."""
    if cost.reason is not None:
        return f"{cost.name}: not applicable: {cost.reason}"
    v = cost.time_s.value
    return f"{cost.name}: {v * 1e6:.4g} us per frame" if v is not None else f"{cost.name}: -"
