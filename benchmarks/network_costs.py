"""Networks costed on the CPU, GPU and SCAMP-5 targets (issue 50): the totals of each cost record
(time and off-chip bytes against their limits, how many layers measured, modelled or not applicable)
and how long the costing took. MERIT costs the CPU (this machine; `--measure` times the generated C,
otherwise the roofline) and the GPU (H100 preset, roofline); core/cain/cost.py costs SCAMP-5 (Cain
with its node budget for a first layer that fits). The dataflow accelerator's figures are
benchmarks/target_costs.py's.

Run: .venv/bin/python benchmarks/network_costs.py [--networks resnet18,vgg16,mobilenet_v1] [--onnx F.onnx]
     [--measure] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cain.cost import scamp5_cost  # noqa: E402
from core.cost import CostRecord  # noqa: E402
from core.errors import InputError  # noqa: E402
from core.hardware.targets import GpuTarget, this_machine  # noqa: E402
from core.merit.cost import measure_c, network_cost  # noqa: E402
from core.workload import Scamp5Target  # noqa: E402


def _row(network: str, target: str, rec: CostRecord, seconds: float) -> dict[str, Any]:
    assert rec.problems() == []
    t = rec.total
    hows = Counter("not applicable" if l.reason else l.time_s.how for l in rec.layers)
    return {"network": network, "target": target, "layers": len(rec.layers), "hows": dict(hows), "macs": t.macs,
            "time_s": t.time_s.value, "time_limit_s": t.time_s.limit, "offchip_bytes": t.offchip_bytes.value,
            "offchip_limit_bytes": t.offchip_bytes.limit, "seconds": seconds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--networks", default="resnet18,vgg16,mobilenet_v1")
    ap.add_argument("--onnx", default="", help="also an ONNX file")
    ap.add_argument("--measure", action="store_true", help="time each layer's generated C on this machine")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sources = [n.strip() for n in args.networks.split(",") if n.strip()] + ([args.onnx] if args.onnx else [])
    rows = []
    for src in sources:
        for name, run in (("cpu", lambda s: network_cost(s, this_machine(), measure=measure_c if args.measure
                                                                     else None).record),
                          ("gpu", lambda s: network_cost(s, GpuTarget()).record),
                          ("scamp5", lambda s: scamp5_cost(s, Scamp5Target()).record)):
            t0 = time.perf_counter()
            try:
                rec = run(src)
            except InputError as exc:
                print(f"error: {src}: {exc.message}", file=sys.stderr)
                return 2
            rows.append(_row(src, name, rec, time.perf_counter() - t0))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v * 1e3:.4g}"

    def mb(v: float | None) -> str:
        return "-" if v is None else f"{v / 1e6:.4g}"

    print(f"{'network':14s} {'target':7s} {'time ms':>9s} {'limit ms':>9s} {'off-chip MB':>11s} {'limit MB':>9s} "
          f"{'took s':>7s}  layers")
    for r in rows:
        hows = ", ".join(f"{n} {k}" for k, n in r["hows"].items())
        print(f"{r['network'][:14]:14s} {r['target']:7s} {ms(r['time_s']):>9s} {ms(r['time_limit_s']):>9s} "
              f"{mb(r['offchip_bytes']):>11s} {mb(r['offchip_limit_bytes']):>9s} {r['seconds']:7.2f}  {hows}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
