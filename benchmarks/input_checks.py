"""What the input checks cost (core.checks): opening the example session (assets/example_session.dfx) with the
number and nesting check against the same load without it, alternated A/B, medians; the check alone;
and a session save with its folder lock and on-disk comparison against a plain save.

Run: .venv/bin/python benchmarks/input_checks.py [--repeat 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core import checks, session  # noqa: E402
from core.engine import engines  # noqa: E402
from core.session import document  # noqa: E402

EXAMPLE = REPO / "assets" / "example_session.dfx"


def _ms(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def load_ab(repeat: int) -> dict[str, float]:
    """Median load time with the check (A) and with it replaced by a no-op (B), interleaved."""
    real = checks.check_numbers
    with_check, without = [], []

    def unchecked() -> float:
        document.check_numbers = lambda doc, root: None        # type: ignore[assignment]
        try:
            return _ms(lambda: session.load(EXAMPLE), 1)
        finally:
            document.check_numbers = real                       # type: ignore[assignment]

    for i in range(repeat):                                    # ABBA: neither always goes first
        if i % 2 == 0:
            with_check.append(_ms(lambda: session.load(EXAMPLE), 1))
            without.append(unchecked())
        else:
            without.append(unchecked())
            with_check.append(_ms(lambda: session.load(EXAMPLE), 1))
    a, b = statistics.median(with_check), statistics.median(without)
    return {"load_with_checks_ms": a, "load_without_number_check_ms": b, "load_ratio": a / b}


def check_alone(repeat: int) -> float:
    doc = session.read_document(EXAMPLE)
    return _ms(lambda: checks.check_numbers(doc, "session"), repeat)


def save_ab(repeat: int) -> dict[str, float]:
    """A save that compares with the version read (lock, read, digest) against an unchecked save."""
    project, stamp = session.load_stamped(EXAMPLE)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.dfx"
        stamp = session.save(project, path)
        checked, plain = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            stamp = session.save(project, path, stamp)
            checked.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            stamp = session.save(project, path)
            plain.append(time.perf_counter() - t0)
    a, b = statistics.median(checked) * 1000, statistics.median(plain) * 1000
    return {"save_checked_ms": a, "save_unchecked_ms": b, "save_ratio": a / b}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    engines()
    session.load(EXAMPLE)                                      # warm caches, imports
    out = {**load_ab(args.repeat), "check_numbers_ms": check_alone(args.repeat), **save_ab(args.repeat),
           "file_bytes": EXAMPLE.stat().st_size}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"example session ({out['file_bytes'] / 1e6:.1f} MB): load {out['load_with_checks_ms']:.0f} ms with the "
              f"checks, {out['load_without_number_check_ms']:.0f} ms without the number check "
              f"(ratio {out['load_ratio']:.2f}); the check alone {out['check_numbers_ms']:.0f} ms")
        print(f"save: {out['save_checked_ms']:.0f} ms compared with the version read, {out['save_unchecked_ms']:.0f} "
              f"ms unchecked (ratio {out['save_ratio']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
