"""Costed networks on the default dataflow accelerator (issue 50): per network and objective, the
totals of the cost record (time, energy, off-chip bytes, each against its limit) and how long the
bound engine took to cost it (no memory sweep, no fusion plan, no baselines).

Run: .venv/bin/python benchmarks/target_costs.py [--networks resnet18,vgg16,mobilenet_v1]
     [--objectives traffic,latency,energy,edp] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.bound.engine import ENGINE  # noqa: E402
from core.bound.objective import OBJECTIVES  # noqa: E402
from core.bound.result import BoundResult  # noqa: E402
from core.engine import JobRequest  # noqa: E402
from core.jobs import CancelToken, run_foreground  # noqa: E402
from core.workload import CnnNetwork, DataflowTarget  # noqa: E402


def cost(network: str, objective: str) -> dict[str, object]:
    req = JobRequest(CnnNetwork(network), DataflowTarget(),
                     {"sweep": False, "fusion": False, "dataflows": [], "objective": objective})
    t0 = time.perf_counter()
    out = run_foreground(ENGINE.run(req, CancelToken()), quiet=True)
    took = time.perf_counter() - t0
    if out.error is not None or not isinstance(out.result, BoundResult) or out.result.costing is None:
        raise SystemExit(f"{network}: {out.error}")
    rec = out.result.costing.record
    assert rec.problems() == []
    t = rec.total
    return {"network": network, "objective": objective, "layers": len(rec.layers), "macs": t.macs,
            "time_s": t.time_s.value, "time_limit_s": t.time_s.limit, "energy_j": t.energy_j.value,
            "energy_limit_j": t.energy_j.limit, "offchip_bytes": t.offchip_bytes.value,
            "offchip_limit_bytes": t.offchip_bytes.limit, "seconds": took}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--networks", default="resnet18,vgg16,mobilenet_v1")
    ap.add_argument("--objectives", default=",".join(OBJECTIVES))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [cost(n, o) for n in args.networks.split(",") for o in args.objectives.split(",")]
    if args.json:
        print(json.dumps({"target": DataflowTarget().to_json(), "rows": rows}, indent=1))
        return 0
    print(f"{'network':13s} {'objective':9s} {'time ms':>9s} {'limit':>8s} {'x':>6s} {'energy mJ':>10s} {'limit':>8s} "
          f"{'x':>5s} {'off-chip MB':>11s} {'limit':>7s} {'took s':>7s}")
    for r in rows:
        t, tl, e, el = (float(r[k]) for k in ("time_s", "time_limit_s", "energy_j", "energy_limit_j"))  # type: ignore[arg-type]
        b, bl = float(r["offchip_bytes"]), float(r["offchip_limit_bytes"])  # type: ignore[arg-type]
        print(f"{r['network']:13s} {r['objective']:9s} {t * 1e3:9.3f} {tl * 1e3:8.3f} {t / tl:6.2f} {e * 1e3:10.3f} "
              f"{el * 1e3:8.3f} {e / el:5.2f} {b / 1e6:11.3f} {bl / 1e6:7.3f} {float(r['seconds']):7.1f}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
