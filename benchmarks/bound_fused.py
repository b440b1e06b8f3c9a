"""Fusion plans of the zoo networks (issue 33, bullet 4): traffic saved against the best layer by layer.

For each network (batch 1) and on-chip memory (64, 128, 512 KiB of 16-bit words): the best layer-by-
layer total (every layer's optimal dataflow), the fusion plan's total (chains of 2..3 layers whose
intermediates have the next layer as their only reader, each with its best fused schedule), the words
saved, the number of fused chains, and that no chain moves less than its proven bound. Then the time
of the whole of ResNet-50 with the fusion plan: bound, optimal dataflow, the four baselines, on-chip
mapping and the plan at one memory size (the searches' memories cleared before each run), median of
--repeat runs, and ResNet-50's fused chains at 512 KiB.

Run: .venv/bin/python benchmarks/bound_fused.py [--json] [--repeat 3] [--memories 64,128,512] [--kib 512]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.bound.analysis import Machine, analyse_layer, network_totals  # noqa: E402
from core.bound.fusion import (_search_fused, col_plan, fusable_links, plan_fusion, plan_text,  # noqa: E402
                               row_plan)
from core.bound.loopnest import BASELINES, _optimal, search_optimal  # noqa: E402
from core.bound.shapes import from_conv  # noqa: E402
from core.nets import zoo  # noqa: E402

FLOWS = tuple(BASELINES)


def _shapes(net: str):
    n = zoo.get(net)
    shapes = [from_conv(l) for l in n.convs]
    return shapes, fusable_links(shapes, n.inputs)


def network_row(net: str, kib: int) -> dict:
    shapes, links = _shapes(net)
    S = kib * 1024 * 8 // 16
    single = [search_optimal(s, S) for s in shapes]
    plan = plan_fusion(shapes, links, S, [-1 if r is None else r.traffic.total for r in single])
    below = [s.layers for s in plan.segments if len(s.layers) > 1 and s.traffic < s.bound]
    return {"network": net, "kib": kib, "layers": len(shapes), "links": sum(links),
            "layer_by_layer": plan.layer_by_layer, "fused": plan.total, "saved": plan.saved,
            "saved_pct": 100.0 * plan.saved / plan.layer_by_layer, "chains": plan.fused_chains,
            "chains_at_bound": sum(1 for s in plan.segments if len(s.layers) > 1 and s.traffic == s.bound),
            "violations": below}


def resnet50_time(repeat: int, kib: int) -> dict:
    shapes, links = _shapes("resnet50")
    m = Machine(kib * 1024, 16)
    times = []
    for _ in range(repeat):
        for cache in (_optimal, _search_fused, row_plan, col_plan):
            cache.cache_clear()                  # time the searches, not the memory of an earlier run
        t0 = time.perf_counter()
        layers = [analyse_layer(s, m, FLOWS) for s in shapes]
        network_totals(layers, FLOWS)
        plan = plan_fusion(shapes, links, m.words, [l.optimal.traffic.total for l in layers])
        times.append(time.perf_counter() - t0)
    return {"kib": kib, "layers": len(shapes), "median_s": statistics.median(times), "min_s": min(times),
            "max_s": max(times), "repeat": repeat, "plan": plan_text(plan)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--memories", default="64,128,512")
    ap.add_argument("--kib", type=int, default=512, help="memory of the timed ResNet-50 run (default 512)")
    args = ap.parse_args()
    rows = [network_row(net, kib) for net in zoo.names() for kib in (int(v) for v in args.memories.split(","))]
    timing = resnet50_time(args.repeat, args.kib)
    if args.json:
        print(json.dumps({"networks": rows, "resnet50": timing}, indent=1))
        return 0
    print(f"{'network':14s} {'KiB':>4s} {'layers':>6s} {'links':>5s} {'layer by layer':>15s} {'fused plan':>12s} "
          f"{'saved':>11s} {'%':>5s} {'chains':>6s} {'at bound':>8s}")
    for r in rows:
        print(f"{r['network']:14s} {r['kib']:4d} {r['layers']:6d} {r['links']:5d} {r['layer_by_layer']:15,d} "
              f"{r['fused']:12,d} {r['saved']:11,d} {r['saved_pct']:5.1f} {r['chains']:6d} {r['chains_at_bound']:8d}"
              + (f"  BELOW BOUND {r['violations']}" if r["violations"] else ""))
    print("\nlinks = consecutive conv/fc pairs that may be fused (the next layer is the only reader); "
          "at bound = fused chains that move exactly their proven lower bound.")
    print(f"\nwhole ResNet-50 with the fusion plan ({timing['layers']} conv+fc layers, bound + optimal + {len(FLOWS)} "
          f"baselines + on-chip mapping + plan at {timing['kib']} KiB): median {timing['median_s']:.3f} s of "
          f"{timing['repeat']} (min {timing['min_s']:.3f}, max {timing['max_s']:.3f})")
    print(f"ResNet-50 at {timing['kib']} KiB, fused chains:")
    print("\n".join(timing["plan"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
