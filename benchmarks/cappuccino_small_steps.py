"""Cappuccino's time model on small steps (issue 50, item 4): synthetic networks of no zoo, so the
model's per-step and per-block terms are seen apart from any network it is compared with.

Run: python benchmarks/cappuccino_small_steps.py [--shapes 64x4,16x16,4x64] [--channels 16] [--convs 3]
     [--clock-mhz 3650] [--bandwidth-gbps 18] [--json]

Each network is `--convs` 3x3 convolutions (pad 1, ReLU) of `--channels` maps on one HxW map, the
same MACs at every shape but blocks of different widths (the synthesiser picks the register block).
The precise program runs on one worker (V = 16 where the CPU has AVX-512, else 8) and per step prints
worker 0's CPU time, the model's time and the residual (CPU - model) per step and per block: what
the model leaves out of a small step on this machine. Random weights and images (seeded).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cappuccino import synth, time_model  # noqa: E402
from core.cappuccino.cost import network_cost  # noqa: E402
from core.cappuccino.engine import load_model  # noqa: E402
from core.cappuccino.numerics import PRECISE  # noqa: E402
from core.host_machine import host_cpu, host_fma  # noqa: E402
from core.workload import CnnNetwork, MobileSocTarget  # noqa: E402


def write_network(folder: Path, h: int, w: int, c: int, n: int, rng: np.random.Generator) -> CnnNetwork:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])
    y = helper.make_tensor_value_info(f"r{n}", TensorProto.FLOAT, [1, c, h, w])
    inits, nodes, prev = [], [], "x"
    for k in range(1, n + 1):
        values = (rng.standard_normal(c * c * 9) * 0.1).astype(np.float32)
        inits.append(helper.make_tensor(f"w{k}", TensorProto.FLOAT, [c, c, 3, 3], values.tolist()))
        nodes += [helper.make_node("Conv", [prev, f"w{k}"], [f"c{k}"], pads=[1, 1, 1, 1], name=f"conv{k}"),
                  helper.make_node("Relu", [f"c{k}"], [f"r{k}"])]
        prev = f"r{k}"
    model = helper.make_model(helper.make_graph(nodes, "small", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 13)])
    path, npz = folder / f"n{h}x{w}.onnx", folder / f"v{h}x{w}.npz"
    onnx.save(model, str(path))
    np.savez(npz, x=rng.standard_normal((8, c, h, w)).astype(np.float32), y=np.zeros(8, np.int64))
    return CnnNetwork(onnx_path=str(path), validation_path=str(npz))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="64x4,16x16,4x64")
    ap.add_argument("--channels", type=int, default=16)
    ap.add_argument("--convs", type=int, default=3)
    ap.add_argument("--clock-mhz", type=float, default=3650.0, help="this machine's: cappuccino_machine_rates.py")
    ap.add_argument("--bandwidth-gbps", type=float, default=18.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    V = min(16, host_cpu().vector_floats)
    target = MobileSocTarget(cores=1, vector_width=V, fma_per_cycle=host_fma().issue_per_cycle(V),
                             clock_mhz=a.clock_mhz, bandwidth_gbps=a.bandwidth_gbps)
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="capp-small-") as tmp:
        for shape in a.shapes.split(","):
            h, w = (int(v) for v in shape.split("x"))
            model = load_model(write_network(Path(tmp), h, w, a.channels, a.convs, rng), 8)
            plan = synth.synthesise_program(model, {op.name: PRECISE for op in model.conv_ops}, V, 1).plan
            c = network_cost(model, target, measure=True, images=8, min_seconds=0.3)
            for s in c.steps:
                i = next(j for j, p in enumerate(plan.ops) if p.name == s.name)
                blocks, steps = time_model.conv_fmas(plan, plan.ops[i])
                cpu = s.measured_cpu_us or 0.0
                rows.append({"shape": shape, "step": s.name, "rq": plan.ops[i].rq, "rp": plan.ops[i].rp,
                             "blocks": blocks, "cpu_us": cpu, "model_us": s.modelled_us,
                             "residual_us": cpu - s.modelled_us,
                             "residual_cycles_per_block": (cpu - s.modelled_us) * a.clock_mhz / blocks,
                             "other_cores": None if c.load is None else c.load.other_cores})
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'shape':>6} {'step':6} {'block':>6} {'blocks':>6} {'CPU us':>8} {'model us':>8} {'resid us':>8} "
          f"{'cyc/block':>9} {'other':>5}")
    for r in rows:
        print(f"{r['shape']:>6} {r['step']:6} {r['rq']}x{r['rp']:<4} {r['blocks']:6d} {r['cpu_us']:8.2f} "
              f"{r['model_us']:8.2f} {r['residual_us']:8.2f} {r['residual_cycles_per_block']:9.0f} "
              f"{r['other_cores'] or 0:5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
