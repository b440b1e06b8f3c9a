"""Cappuccino's modelled per-layer time on a mobile SoC against the synthesised program measured here
(issue 50, item 4): target within 25 % per network.

Run: python benchmarks/cappuccino_model_vs_measured.py [--networks builtin-digits,resnet18,alexnet] [--threads 2]
     [--vector-width 8] [--images 8] [--min-seconds 0.5] [--json]

Per network the precise Cappuccino program (every layer float32) is synthesised for the target that
describes this machine (its clock, DRAM bandwidth and caches; `--threads` cores, `--vector-width` lanes),
built, and run once with its per-op clock (`--profile`) on `--images` validation images for at least
`--min-seconds`; the model is core.cappuccino.cost's roofline from the target's fields alone,
max(MACs / (workers x V x FMA x clock), compulsory bytes / bandwidth), fitted to nothing. Printed per
step: measured and modelled µs per image; per network the sums and modelled / measured - 1. The
machine's other work while each program ran (core.machine_load) is printed beside it: on a loaded
machine the measured times are long and the comparison says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cappuccino.cost import network_cost  # noqa: E402
from core.host_machine import host_cpu  # noqa: E402
from core.workload import BUILTIN_DIGITS, CnnNetwork, MobileSocTarget  # noqa: E402

TARGET_ERROR = 0.25


def _adjusted(c: Any) -> float | None:
    """modelled x cpus / (cpus - other work) / measured - 1 (None: nothing measured, or no share left)."""
    if not c.measured_total_us or c.load is None or c.load.other_cores >= c.load.cpus:
        return None
    return c.modelled_total_us * c.load.cpus / (c.load.cpus - c.load.other_cores) / c.measured_total_us - 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default=f"{BUILTIN_DIGITS},resnet18,alexnet")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vector-width", type=int, default=min(16, host_cpu().vector_floats))
    ap.add_argument("--images", type=int, default=8)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    target = MobileSocTarget(cores=a.threads, vector_width=a.vector_width)
    rows: list[dict[str, Any]] = []
    for name in a.networks.split(","):
        t0 = time.monotonic()
        load_start = os.getloadavg()[0]
        c = network_cost(CnnNetwork(name), target, measure=True, images=a.images, min_seconds=a.min_seconds)
        err = c.model_error
        rows.append({
            "network": c.network, "target": c.record.target, "measured_here": c.measured_here,
            "steps": [{"name": s.name, "kind": s.kind, "macs": l.macs, "bytes": l.offchip_bytes.value,
                       "workers": s.workers, "measured_us": s.measured_us, "modelled_us": s.modelled_us}
                      for s, l in zip(c.steps, c.record.layers)],
            "measured_us": c.measured_total_us, "modelled_us": c.modelled_total_us,
            "whole_program_us": c.whole_program_us, "model_error": err,
            "within_target": err is not None and abs(err) <= TARGET_ERROR,
            "model_error_load_adjusted": _adjusted(c),
            "record_time_us": (c.record.total.time_s.value or 0) * 1e6,
            "record_limit_us": (c.record.total.time_s.limit or 0) * 1e6,
            "load": None if c.load is None else {"other_cores": c.load.other_cores, "cpus": c.load.cpus,
                                                 "busy": c.load.busy, "load_average_start": load_start},
            "seconds": time.monotonic() - t0})
    if a.json:
        print(json.dumps({"target_error": TARGET_ERROR, "networks": rows}, indent=1))
        return 0
    for r in rows:
        print(f"{r['network']} on the {r['target']} ({r['seconds']:.0f} s)")
        print(f"  {'step':28} {'kind':8} {'MACs':>11} {'workers':>7} {'measured us':>12} {'model us':>10} {'model/meas':>10}")
        for s in r["steps"]:
            ratio = s["modelled_us"] / s["measured_us"] if s["measured_us"] else float("nan")
            print(f"  {s['name'][:28]:28} {s['kind']:8} {s['macs']:11d} {s['workers']:7d} {s['measured_us']:12.2f} "
                  f"{s['modelled_us']:10.2f} {ratio:10.2f}")
        load = r["load"] or {}
        print(f"  network: measured {r['measured_us']:.1f} us/image (whole pass {r['whole_program_us']:.1f}), "
              f"modelled {r['modelled_us']:.1f}: {100 * r['model_error']:+.0f} % -> "
              f"{'within' if r['within_target'] else 'NOT within'} {100 * TARGET_ERROR:.0f} %; other work "
              f"{load.get('other_cores', float('nan')):.1f} of {load.get('cpus', '?')} cores, load average "
              f"{load.get('load_average_start', float('nan')):.1f}; with the model stretched by the share of the "
              f"machine left to it: {_pct(r['model_error_load_adjusted'])}")
    return 0


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.0f} %"


if __name__ == "__main__":
    raise SystemExit(main())
