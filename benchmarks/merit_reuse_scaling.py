"""Print Table III reuse rates and the MERIT-z utilisation figures (Tables VIII, IX, Fig. 15).

Run: .venv/bin/python benchmarks/merit_reuse_scaling.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.merit import reuse  # noqa: E402
from core.nets import zoo  # noqa: E402
from sims import meritz as Z  # noqa: E402

ALUS = [32, 64, 128, 256, 512, 1024]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip VGG-16 and the 8 KB CP sensitivity run")
    args = ap.parse_args()

    print("Table III: reuse rate = MACs / (input + kernel + output words)")
    for row in reuse.report().rows:
        paper = f"{row.paper:6.2f}" if row.paper is not None else "     -"
        print(f"  {row.architecture:9s} {row.level:28s} model {row.rate:7.3f}  paper {paper}")

    cfg = Z.MeritzConfig()
    suites = [(n, Z.network_transforms(zoo.get(n)), Z.PAPER_TABLE_VIII[n])
              for n in (["alexnet"] if args.quick else ["alexnet", "vgg16"])]
    suites += [(n, [(n, t)], Z.PAPER_TABLE_IX[n]) for n, t, _ in Z.table_ix_transforms()]

    print(f"\nFig. 15: MERIT-z utilisation against ALU count ({cfg.dram_gbps} GB/s, {cfg.clock_hz / 1e6:.0f} MHz)")
    print(f"  {'workload':24s} " + " ".join(f"{a:>6d}" for a in ALUS) + "   paper@128   sim s")
    for name, layers, paper in suites:
        t0 = time.perf_counter()
        curve = Z.scaling(layers, ALUS, cfg)
        dt = time.perf_counter() - t0
        print(f"  {name[:24]:24s} " + " ".join(f"{u:6.3f}" for u in curve) + f"   {paper:9.2f}   {dt:5.2f}")

    u, layers = Z.run_layers(suites[0][1], cfg)
    print(f"\nTable VIII per layer, AlexNet at {cfg.alus} ALUs (overall {u:.3f}, paper 0.88):")
    for r in layers:
        print(f"  {r.name:6s} utilisation {r.utilisation:.3f}  tile {r.tile}")

    if not args.quick:
        big = replace(cfg, cp_bytes=8 * 1024)
        print("\nSensitivity: 8 KB partial-sum SRAM (what Table III's 16x16x16 output tile needs)")
        for name, layers, paper in suites:
            curve = Z.scaling(layers, ALUS, big)
            print(f"  {name[:24]:24s} " + " ".join(f"{u:6.3f}" for u in curve))


if __name__ == "__main__":
    main()
