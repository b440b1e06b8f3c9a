"""This machine's DRAM bandwidth as a 256 MiB copy (core.host_machine.measure_copy_bandwidth): how the
CPU and mobile-SoC targets' bandwidth default (core.target_fields.HOST_BANDWIDTH_GBPS) was measured.

Run: .venv/bin/python benchmarks/host_bandwidth.py [--mib 256] [--repeats 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.host_machine import host_cpu, measure_copy_bandwidth  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    gbps = measure_copy_bandwidth(args.mib, args.repeats)
    h = host_cpu()
    if args.json:
        print(json.dumps({"cpu": h.name, "cores": h.cores, "mib": args.mib, "copy_gbps": gbps}))
    else:
        print(f"{h.name}, {h.cores} cores: {args.mib} MiB copy at {gbps:.2f} GB/s (read + write), best of {args.repeats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
