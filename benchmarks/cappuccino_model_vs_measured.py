"""Cappuccino's modelled per-layer time on a mobile SoC against the synthesised program measured here
(issue 50, item 4): target within 25 % per network.

Run: python benchmarks/cappuccino_model_vs_measured.py [--networks builtin-digits,resnet18,alexnet] [--threads 2]
     [--vector-width 16] [--images 8] [--min-seconds 0.5] [--repeats 3] [--clock-mhz MHZ] [--bandwidth-gbps GBPS] [--roofline]
     [--json]

Per network the precise Cappuccino program (every layer float32) is synthesised for the target that
describes this machine (its caches; `--threads` cores, `--vector-width` lanes; the FMA issue per
cycle of its microarchitecture at that width, core.host_machine.host_fma; the clock its cores run
vector code at and the DRAM read bandwidth of `--threads` workers, measured by
benchmarks/cappuccino_machine_rates.py unless `--clock-mhz` / `--bandwidth-gbps` are given), built, and run `--repeats` times (in rounds: each round times every network once) with its per-op clock (`--profile`) on
`--images` validation images for at least `--min-seconds`; per step the median of the runs. The
model is core.cappuccino.time_model (each term from the program's plan, a published figure or a
micro-benchmark, fitted to no network); `--roofline` prints the old roofline beside it
(max(MACs / (workers x V x FMA x clock), compulsory bytes / bandwidth), the limit). Printed per step:
measured wall and worker-0 CPU µs per image and the model's; per network the sums and model /
measured - 1. The machine's other work while each program ran (core.machine_load) is printed beside
it: on a loaded machine the measured wall times are long (a worker descheduled mid-step), and
worker 0's CPU time, which leaves the deschedules out, is the fairer comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cappuccino.cost import CappuccinoCost, network_cost  # noqa: E402
from core.host_machine import host_cpu, host_fma  # noqa: E402
from core.errors import InputError  # noqa: E402
from core.workload import BUILTIN_DIGITS, CnnNetwork, MobileSocTarget  # noqa: E402

TARGET_ERROR = 0.25


def _adjusted(c: Any) -> float | None:
    """modelled x cpus / (cpus - other work) / measured - 1 (None: nothing measured, or no share left)."""
    if not c.measured_total_us or c.load is None or c.load.other_cores >= c.load.cpus:
        return None
    return c.modelled_total_us * c.load.cpus / (c.load.cpus - c.load.other_cores) / c.measured_total_us - 1.0


def measured_machine(vector_width: int, threads: int) -> tuple[float, float]:
    """(MHz, GB/s): the clock this machine's cores run vector code at (the FMA loop's vector FMAs per
    ns over the microarchitecture's published FMA issue per cycle) and the DRAM read bandwidth of
    `threads` workers (1 or 2), best of three runs of benchmarks/cappuccino_machine_rates.py."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from cappuccino_machine_rates import measure

    runs = [measure(vector_width, 5_000_000) for _ in range(3)]
    clock = 1e3 * max(r["fma_per_ns"] for r in runs) / host_fma().issue_per_cycle(vector_width)
    return clock, max(r[f"read_gbps_{min(threads, 2)}"] for r in runs)


def _median(xs: list[float | None]) -> float | None:
    v = [x for x in xs if x is not None]
    return statistics.median(v) if v else None


def _row(runs: list[CappuccinoCost], load_start: float, seconds: float) -> dict[str, Any]:
    c = runs[0]
    meas = _median([r.measured_total_us for r in runs])
    cpu = _median([r.measured_cpu_total_us for r in runs])
    steps = []
    for k, (s, l) in enumerate(zip(c.steps, c.record.layers)):
        steps.append({"name": s.name, "kind": s.kind, "macs": l.macs, "bytes": l.offchip_bytes.value,
                      "workers": s.workers, "measured_us": _median([r.steps[k].measured_us for r in runs]),
                      "measured_cpu_us": _median([r.steps[k].measured_cpu_us for r in runs]),
                      "modelled_us": s.modelled_us, "compute_us": s.compute_us, "memory_us": s.memory_us,
                      "fixed_us": s.fixed_us, "roofline_us": (l.time_s.limit or 0) * 1e6})
    err = None if not meas else c.modelled_total_us / meas - 1.0
    err_cpu = None if not cpu else c.modelled_total_us / cpu - 1.0
    loads = [r.load for r in runs if r.load is not None]
    return {"network": c.network, "target": c.record.target, "measured_here": c.measured_here, "runs": len(runs),
            "steps": steps, "measured_us": meas, "measured_cpu_us": cpu, "modelled_us": c.modelled_total_us,
            "roofline_us": (c.record.total.time_s.limit or 0) * 1e6,
            "whole_program_us": _median([r.whole_program_us for r in runs]), "model_error": err,
            "model_error_cpu": err_cpu, "within_target": err is not None and abs(err) <= TARGET_ERROR,
            "within_target_cpu": err_cpu is not None and abs(err_cpu) <= TARGET_ERROR,
            "model_error_load_adjusted": _adjusted(c),
            "load": None if not loads else {
                "other_cores": statistics.median(x.other_cores for x in loads),
                "other_cores_min": min(x.other_cores for x in loads),
                "other_cores_max": max(x.other_cores for x in loads), "cpus": loads[0].cpus,
                "busy": any(x.busy for x in loads), "load_average_start": load_start},
            "seconds": seconds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default=f"{BUILTIN_DIGITS},resnet18,alexnet")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vector-width", type=int, default=min(16, host_cpu().vector_floats))
    ap.add_argument("--images", type=int, default=8)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--clock-mhz", type=float, default=None,
                    help="the cores' clock under vector work (default: measured here by an FMA loop)")
    ap.add_argument("--bandwidth-gbps", type=float, default=None,
                    help="DRAM bandwidth (default: the read bandwidth of --threads workers measured here)")
    ap.add_argument("--roofline", action="store_true", help="print the roofline (the limit) beside each step")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    clock, bandwidth = (a.clock_mhz, a.bandwidth_gbps) if a.clock_mhz and a.bandwidth_gbps else \
        measured_machine(a.vector_width, a.threads)
    clock, bandwidth = a.clock_mhz or clock, a.bandwidth_gbps or bandwidth
    target = MobileSocTarget(cores=a.threads, vector_width=a.vector_width,
                             fma_per_cycle=host_fma().issue_per_cycle(a.vector_width), clock_mhz=clock,
                             bandwidth_gbps=bandwidth)
    names = [n.strip() for n in a.networks.split(",") if n.strip()]
    for name in names:          # every name checked before anything is timed
        try:
            CnnNetwork(name).validate()
        except InputError as exc:
            print(f"error: --networks: {exc.message}", file=sys.stderr)
            return 2
    # Rounds: each round times every network once, so a slow spell of the machine (another tenant of the
    # host, a frequency change) falls on all of them rather than on one network's repeats; per network
    # the median over the rounds.
    runs: dict[str, list[CappuccinoCost]] = {n: [] for n in names}
    seconds = dict.fromkeys(names, 0.0)
    load_start = dict.fromkeys(names, 0.0)
    for k in range(a.repeats):
        for name in names:
            t0 = time.monotonic()
            if k == 0:
                load_start[name] = os.getloadavg()[0]
            runs[name].append(network_cost(CnnNetwork(name), target, measure=True, images=a.images,
                                           min_seconds=a.min_seconds))
            seconds[name] += time.monotonic() - t0
    rows = [_row(runs[n], load_start[n], seconds[n]) for n in names]
    if a.json:
        print(json.dumps({"target_error": TARGET_ERROR, "clock_mhz": clock, "bandwidth_gbps": bandwidth,
                          "fma_source": host_fma().source,
                          "networks": rows}, indent=1))
        return 0
    print(f"clock {clock:.0f} MHz ({'given' if a.clock_mhz else 'measured by the FMA loop'}), DRAM {bandwidth:.1f} GB/s "
          f"({'given' if a.bandwidth_gbps else 'read stream measured here'}); FMA issue "
          f"{target.fma_per_cycle} a cycle at {a.vector_width} lanes ({host_fma().source})")
    for r in rows:
        print(f"{r['network']} on the {r['target']} ({r['seconds']:.0f} s, median of {r['runs']} runs)")
        print(f"  {'step':28} {'kind':8} {'MACs':>11} {'wk':>2} {'meas us':>9} {'cpu us':>9} {'model us':>9} "
              f"{'compute':>8} {'memory':>8}" + (f" {'roofline':>8}" if a.roofline else "") + f" {'model/meas':>10}"
              f" {'model/cpu':>9}")
        for s in r["steps"]:
            m = s["measured_us"]
            ratio = s["modelled_us"] / m if m else float("nan")
            cpu = s["measured_cpu_us"]
            print(f"  {s['name'][:28]:28} {s['kind']:8} {s['macs']:11d} {s['workers']:2d} {m or 0:9.1f} "
                  f"{'-' if cpu is None else f'{cpu:.1f}':>9} {s['modelled_us']:9.1f} {s['compute_us']:8.1f} "
                  f"{s['memory_us']:8.1f}" + (f" {s['roofline_us']:8.1f}" if a.roofline else "") + f" {ratio:10.2f}"
                  f" {s['modelled_us'] / cpu if cpu else float('nan'):9.2f}")
        load = r["load"] or {}
        print(f"  network: measured {r['measured_us']:.1f} us/image wall (whole pass {r['whole_program_us']:.1f}), "
              f"{_num(r['measured_cpu_us'])} worker-0 CPU; modelled {r['modelled_us']:.1f} (roofline "
              f"{r['roofline_us']:.1f}): {_pct(r['model_error'])} against wall, {_pct(r['model_error_cpu'])} against "
              f"CPU -> {'within' if r['within_target'] else 'NOT within'} {100 * TARGET_ERROR:.0f} % (wall), "
              f"{'within' if r['within_target_cpu'] else 'NOT within'} (CPU); other "
              f"work {load.get('other_cores_min', float('nan')):.1f}-{load.get('other_cores_max', float('nan')):.1f} "
              f"of {load.get('cpus', '?')} cores, load average {load.get('load_average_start', float('nan')):.1f}")
    return 0


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.0f} %"


if __name__ == "__main__":
    raise SystemExit(main())
