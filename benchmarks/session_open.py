"""What opening a session costs, phase by phase: decoding the file (gunzip, UTF-8, JSON), the number
check, the schema check (with the migration of older versions), and reading its meaning (library,
settings, each run's typed result). A first open reads the bytes in full; an open of the same bytes
again (the loader's memos, core.session.storage) skips the number and schema phases and the scan
that shows orjson's reading is json's. CPU milliseconds (process time), medians of --repeat, with
Python's cycle collector running (a command-line process) and off (the window and the test suite
run it from a timer or between tests, core.checks.paused_gc changes nothing there).

Run: .venv/bin/python benchmarks/session_open.py [--session FILE.dfx] [--repeat 9] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.engine import engines  # noqa: E402
from core.session import document, storage  # noqa: E402

EXAMPLE = REPO / "assets" / "example_session.dfx"


def _forget() -> None:
    """Clear the loader's memos: the next open is a first open."""
    for memo in ("_PASSED", "_PLAIN"):
        getattr(storage, memo, {}).clear()


def _decode(raw: bytes, where: str) -> tuple[Any, bool]:
    """The document, and whether the number phase is known to pass (storage.decode_plain)."""
    return storage.decode_plain(raw, where)


def phases(path: Path) -> dict[str, float]:
    """CPU ms of one first open, phase by phase (the phases document.from_json runs, in its order)."""
    raw = path.read_bytes()
    known = engines()
    _forget()
    with storage.paused_gc():           # as the loader reads
        return _phases(raw, path, known)


def _phases(raw: bytes, path: Path, known: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    t = time.process_time()
    doc, plain = _decode(raw, str(path))
    out["decode"] = time.process_time() - t
    t = time.process_time()
    document._check_start(doc)
    if not plain:
        document.check_numbers_phase(*document._split(doc))
    out["numbers"] = time.process_time() - t
    t = time.process_time()
    head, runs = document._split(document._migrate(doc))
    document.check_schema_phase(head, runs)
    out["schema"] = time.process_time() - t
    t = time.process_time()
    document.read_meaning(head, runs, known)
    out["meaning"] = time.process_time() - t
    return {k: v * 1e3 for k, v in out.items()}


def _ms(f: Callable[[], Any]) -> float:
    t = time.process_time()
    f()
    return (time.process_time() - t) * 1e3


def measure(path: Path, repeat: int) -> dict[str, Any]:
    storage.load(path)                   # imports, engines registered, readers compiled
    steps = [phases(path) for _ in range(repeat)]
    def first_open() -> None:
        _forget()
        storage.load(path)

    first = [_ms(first_open) for _ in range(repeat)]
    storage.load(path)
    again = [_ms(lambda: storage.load(path)) for _ in range(repeat)]
    return {"session": str(path), "repeat": repeat,
            "first_open_ms": statistics.median(first), "open_again_ms": statistics.median(again),
            "phases_ms": {k: statistics.median(s[k] for s in steps) for k in steps[0]}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--session", default=str(EXAMPLE))
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    figures = {"collector_running": measure(Path(args.session), args.repeat)}
    gc.disable()
    try:
        figures["collector_off"] = measure(Path(args.session), args.repeat)
    finally:
        gc.enable()
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    print(f"{args.session} (CPU ms, medians of {args.repeat})")
    for how, f in figures.items():
        print(f"  {how.replace('_', ' ')}:")
        print(f"    first open     {f['first_open_ms']:7.1f}")
        for name, ms in f["phases_ms"].items():
            print(f"      {name:<12} {ms:7.1f}")
        print(f"    open again     {f['open_again_ms']:7.1f}   (the same bytes: number and schema phases skipped)")


if __name__ == "__main__":
    main()
