"""Bound against buffer size: a network's and each layer's proven bound and optimal traffic from 1 KiB
to the largest layer's whole working set, as CSV (what the bound tab's "Export curves CSV..." writes).

Run: .venv/bin/python benchmarks/bound_curves.py --network resnet50 [--word-bits 16] > curves.csv
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.bound.analysis import curves_csv  # noqa: E402
from core.bound.engine import ENGINE  # noqa: E402
from core.bound.result import BoundResult  # noqa: E402
from core.jobs import CancelToken, run_foreground  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--network", default="resnet50")
    ap.add_argument("--word-bits", type=int, default=16)
    args = ap.parse_args()
    p = argparse.ArgumentParser()
    ENGINE.add_cli_arguments(p)
    req = ENGINE.request_from_cli(p.parse_args(["--network", args.network, "--word-bits", str(args.word_bits),
                                                "--dataflows", "none"]))
    t0 = time.perf_counter()
    out = run_foreground(ENGINE.run(req, CancelToken()), quiet=True)
    if out.error is not None:
        print(out.error, file=sys.stderr)
        return 2
    assert isinstance(out.result, BoundResult)
    sys.stdout.write(curves_csv(out.result))
    print(f"{args.network}: {len(out.result.sweep)} memory sizes, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
