"""Every zoo network through the bound engine: per-network totals against the proven lower bound.

For each network (batch 1) and on-chip memory (64, 128, 512 KiB of 16-bit words): the optimal
dataflow's total DRAM traffic, the proven bound (per layer max(segment bound, compulsory), summed),
the paper's asymptotic formula, the worst per-layer ratio optimal / proven and its layer, how many
layers move less than the paper's formula, and that no layer and no baseline moves less than the
proven bound. Then the time to analyse the whole of ResNet-50 (bound, optimal tiling, the four
baselines and the on-chip mapping, one memory size, no sweep): median of --repeat runs.

Run: .venv/bin/python benchmarks/bound_zoo.py [--json] [--repeat 5]
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
from core.bound.loopnest import BASELINES, _optimal  # noqa: E402
from core.bound.shapes import from_conv  # noqa: E402
from core.nets import zoo  # noqa: E402

FLOWS = tuple(BASELINES)


def network_row(net: str, kib: int) -> dict:
    shapes = [from_conv(l) for l in zoo.get(net).convs]
    m = Machine(kib * 1024, 16)
    layers = [analyse_layer(s, m, FLOWS) for s in shapes]
    tot = network_totals(layers, FLOWS)
    worst = max(layers, key=lambda l: l.optimal.ratio_reference or 0.0)
    violations = [l.name for l in layers if l.optimal.traffic.total < l.bound.reference]
    violations += [f"{l.name}:{k}" for l in layers for k, b in l.baselines.items()
                   if b is not None and b.traffic.total < l.bound.reference]
    return {"network": net, "kib": kib, "layers": len(layers), "optimal": tot.optimal, "proven": tot.reference,
            "paper": tot.paper, "ratio": tot.ratio_reference, "worst_ratio": tot.worst_ratio_reference,
            "worst_layer": worst.name, "below_paper": sum((l.optimal.ratio_paper or 0.0) < 1 for l in layers),
            "segment_binds": sum(l.bound.segment.total > l.bound.compulsory.total for l in layers),
            "violations": violations,
            "gap": {k: sum(1 for l in layers if l.gap and l.gap.source == k) for k in ("attained", "output writes", "open")}}


def resnet50_time(repeat: int) -> dict:
    shapes = [from_conv(l) for l in zoo.get("resnet50").convs]
    m = Machine(64 * 1024, 16)
    times = []
    for _ in range(repeat):
        _optimal.cache_clear()                   # time the searches, not the memory of an earlier run
        t0 = time.perf_counter()
        layers = [analyse_layer(s, m, FLOWS) for s in shapes]
        network_totals(layers, FLOWS)
        times.append(time.perf_counter() - t0)
    return {"layers": len(shapes), "median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "repeat": repeat}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--memories", default="64,128,512")
    args = ap.parse_args()
    rows = [network_row(net, kib) for net in zoo.names() for kib in (int(v) for v in args.memories.split(","))]
    timing = resnet50_time(args.repeat)
    if args.json:
        print(json.dumps({"networks": rows, "resnet50_analysis": timing}, indent=1))
        return 0
    print(f"{'network':14s} {'KiB':>4s} {'layers':>6s} {'optimal':>12s} {'proven':>12s} {'paper':>12s} {'ratio':>6s} "
          f"{'worst':>6s} {'worst layer':22s} {'<paper':>6s} {'seg':>4s} {'gap -/w/?':>10s}")
    for r in rows:
        print(f"{r['network']:14s} {r['kib']:4d} {r['layers']:6d} {r['optimal']:12d} {r['proven']:12.0f} "
              f"{r['paper']:12.0f} {r['ratio']:6.3f} {r['worst_ratio']:6.3f} {r['worst_layer'][:22]:22s} "
              f"{r['below_paper']:6d} {r['segment_binds']:4d} "
              f"{'/'.join(str(v) for v in r['gap'].values()):>10s}" + (f"  VIOLATIONS {r['violations']}" if r["violations"]
                                                                  else ""))
    print("\nratio = optimal / proven (network totals); worst = largest per-layer ratio; <paper = layers whose "
          "optimal moves less than the paper's asymptotic formula; seg = layers where the segment bound is above "
          "the compulsory traffic; gap -/w/?: layers where the bound is attained / the gap is no larger than the "
          "output writes / open.")
    print(f"whole ResNet-50 ({timing['layers']} conv+fc layers, bound + optimal + {len(FLOWS)} baselines + on-chip "
          f"mapping at 64 KiB): median {timing['median_s']:.3f} s of {timing['repeat']} (min {timing['min_s']:.3f}, "
          f"max {timing['max_s']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
