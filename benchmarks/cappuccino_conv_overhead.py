"""The convolution kernel's cost per output vector beyond its k-steps, measured on this machine for
Cappuccino's time model on a mobile SoC (issue 50, item 4): core.cappuccino.time_model's
CONV_OUT_CYCLES_ONE and CONV_OUT_CYCLES_SHARED.

Run: python benchmarks/cappuccino_conv_overhead.py [--vector-width 16] [--repeats 3] [--json]

Why: the model's first per-output figure (synth_program.EPILOGUE, 6 cycles: bias, ReLU, address,
store) is the plan chooser's estimate, never measured. A 1x1 convolution with few input maps spends
most of its time there, so the model under-estimated such layers by a third.

How: one-layer networks, each a single 1x1 convolution of `maps` input maps to 64 output maps on a
28x28 image (maps = V, 2V, 4V: 16, 32 and 64 k-steps per output vector at V = 16), are synthesised
as Cappuccino programs, built and profiled here (`--profile`: per step, worker 0's CPU time and the
wall time) on one worker and on two. Per program, all workers' cycles in the conv step (at the clock
the FMA loop of benchmarks/cappuccino_machine_rates.py measures) per output vector, less the k-steps'
cycles the time model gives (time_model.conv_step_cycles) and the block set-up's share, is the
overhead; printed per program and as the median per worker count. One worker is timed in CPU time
(a deschedule does not count); two workers in wall time (worker 0 waits for worker 1 in the step),
so the two-worker figure wants an otherwise idle machine: the machine's other work is printed.
These programs are not networks of the comparison and no network's time is fitted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.host_machine import host_cpu, host_fma  # noqa: E402
from core.machine_load import LoadMeter  # noqa: E402

OUT_MAPS, SIZE = 64, 28


def one_conv_program(folder: Path, maps: int, depthwise: bool = False) -> Any:
    """A CnnNetwork of one 1x1 convolution (maps -> OUT_MAPS on SIZE x SIZE), or a 3x3 depthwise one
    (maps -> maps, padded): the comparison's one-layer file and its seeded images (core.layer_source)."""
    from core.bound.shapes import parse_layer_spec
    from core.layer_source import layer_onnx
    from core.workload import CnnNetwork

    spec = (f"name=dw3x3_{maps},Ci={maps},Hi={SIZE},Wi={SIZE},Co={maps},kernel=3,pad=1,groups={maps}" if depthwise
            else f"name=conv1x1_{maps},Ci={maps},Hi={SIZE},Wi={SIZE},Co={OUT_MAPS},kernel=1")
    onnx = layer_onnx(parse_layer_spec(spec), folder)
    return CnnNetwork(onnx_path=onnx, validation_path=str(Path(onnx).with_suffix(".npz")))


def overhead(network: Any, workers: int, vector_width: int, clock_mhz: float, repeats: int) -> dict[str, Any]:
    """The conv step's measured cycles per output vector and the overhead beyond the model's k-steps."""
    from core.cappuccino import synth, time_model
    from core.cappuccino.cost import network_cost
    from core.cappuccino.engine import load_model
    from core.cappuccino.numerics import PRECISE
    from core.cappuccino.synth_program import BLOCK_SETUP
    from core.workload import MobileSocTarget

    fma = host_fma().issue_per_cycle(vector_width)
    target = MobileSocTarget(cores=workers, vector_width=vector_width, fma_per_cycle=fma, clock_mhz=clock_mhz)
    model = load_model(network, 8)
    plan = synth.synthesise_program(model, {op.name: PRECISE for op in model.conv_ops}, vector_width, workers).plan
    i = next(k for k, p in enumerate(plan.ops) if p.kind in ("conv", "dw"))
    p = plan.ops[i]
    if p.kind == "dw":      # per output vector its taps' FMAs (time_model.dw_tap_cycles), no block
        to = plan.tensors[p.out]
        out_vectors, steps, block, setup = -(-to.C // vector_width) * to.H * to.W, p.kh * p.kw, 1, 0
        kstep = time_model.dw_tap_cycles(p, vector_width, fma)
    else:
        blocks, steps = time_model.conv_fmas(plan, p)
        block, setup = p.rq * p.rp, BLOCK_SETUP
        out_vectors = blocks * block            # as the kernel computes them (edge blocks overlap)
        kstep = steps * time_model.conv_step_cycles(p, vector_width, fma) / block
    runs = [network_cost(network, target, measure=True) for _ in range(repeats)]
    step = [s.kind for s in runs[0].steps].index(p.kind)
    us = statistics.median((r.steps[step].measured_cpu_us if workers == 1 else r.steps[step].measured_us) or 0.0
                           for r in runs)
    share = 1.0 if workers == 1 else p.chunks / (workers * -(-p.chunks // workers))
    cycles = us * clock_mhz * workers * share / out_vectors
    return {"kind": p.kind, "maps": model.x_val.shape[1], "workers": workers, "rq": p.rq, "rp": p.rp,
            "k_steps": steps, "measured_us": us, "cycles_per_output_vector": cycles, "k_step_cycles": kstep,
            "overhead_cycles": cycles - kstep - setup / block}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vector-width", type=int, default=min(16, host_cpu().vector_floats))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--clock-mhz", type=float, default=None,
                    help="the cores' clock under vector work (default: measured by the FMA loop)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    V = a.vector_width
    if a.clock_mhz:
        clock = a.clock_mhz
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from cappuccino_machine_rates import measure

        clock = 1e3 * max(measure(V, 5_000_000)["fma_per_ns"] for _ in range(3)) / host_fma().issue_per_cycle(V)
    rows: list[dict[str, Any]] = []
    meter = LoadMeter()
    with tempfile.TemporaryDirectory(prefix="capp-conv-overhead-") as tmp:
        nets = [one_conv_program(Path(tmp), m) for m in (V, 2 * V, 4 * V)] + \
            [one_conv_program(Path(tmp), m, depthwise=True) for m in (8 * V, 16 * V)]
        for workers in (1, 2):
            for net in nets:
                rows.append(overhead(net, workers, V, clock, a.repeats))
    load = meter.stop()
    median = {(k, w): statistics.median(r["overhead_cycles"] for r in rows if r["workers"] == w and r["kind"] == k)
              for k in ("conv", "dw") for w in (1, 2)}
    out = {"vector_width": V, "clock_mhz": clock, "programs": rows,
           "overhead_cycles_median": {f"{k} {w}": m for (k, w), m in median.items()},
           "other_cores": load.other_cores, "cpus": load.cpus}
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"V = {V}, clock {clock:.0f} MHz; one 1x1 conv to {OUT_MAPS} maps on {SIZE}x{SIZE}; other work "
          f"{load.other_cores:.1f} of {load.cpus} cores")
    print(f"  {'kind':4} {'maps':>4} {'wk':>2} {'block':>6} {'k-steps':>7} {'us':>8} {'cyc/out':>8} {'k-step cyc':>10} "
          f"{'overhead':>8}")
    for r in rows:
        print(f"  {r['kind']:4} {r['maps']:4d} {r['workers']:2d} {r['rq']}x{r['rp']:<4d} {r['k_steps']:7d} {r['measured_us']:8.1f} "
              f"{r['cycles_per_output_vector']:8.1f} {r['k_step_cycles']:10.1f} {r['overhead_cycles']:8.1f}")
    for (k, w), m in median.items():
        print(f"  {k} overhead per output vector, {w} worker{'s' if w > 1 else ''} (all workers' cycles): {m:.1f} cycles")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
