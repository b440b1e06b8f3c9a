"""How long `session validate` takes on a large session (target: a 300 MB session in under 10 s).

The session is the example session (assets/example_session.dfx) with its runs repeated under fresh
ids until its JSON text reaches --mb megabytes; it is written as plain JSON (the largest file a user
can hand over; a compressed one reads the same text after gunzip) and as the app saves it
(gzip-compressed), and each is validated as a real `python main.py session validate FILE` process,
import time included. Prints the size, the time of each and whether it met the target.

Run: .venv/bin/python benchmarks/session_validate.py [--mb 300] [--repeat 1]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core import session  # noqa: E402

EXAMPLE = REPO / "assets" / "example_session.dfx"
TARGET_S = 10.0


def big_document(megabytes: float) -> dict:
    """The example session's document with its runs repeated until its JSON reaches `megabytes`."""
    doc = session.read_document(EXAMPLE)
    base = doc["runs"]
    sizes = [len(json.dumps(r, separators=(",", ":"))) for r in base]
    runs, total, i = [], len(json.dumps({**doc, "runs": []})), 0
    while total < megabytes * 1e6:
        run = dict(base[i % len(base)], id=f"r{i + 1}")
        runs.append(run)
        total += sizes[i % len(base)] + 1
        i += 1
    doc["runs"] = runs
    return doc


def validate_seconds(path: Path) -> float:
    """Wall time of one `main.py session validate` process; it must say the file is valid."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(REPO / "main.py"), "session", "validate", str(path)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"validate failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=300.0, help="size of the session's JSON text, MB (default 300)")
    ap.add_argument("--repeat", type=int, default=1, help="validations per file; the median counts")
    args = ap.parse_args(argv)
    doc = big_document(args.mb)
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in (("plain JSON", text), ("gzip", gzip.compress(text, compresslevel=session.GZIP_LEVEL))):
            path = Path(tmp) / f"big_{name.split()[0]}.dfx"
            path.write_bytes(data)
            seconds = statistics.median(validate_seconds(path) for _ in range(args.repeat))
            ok &= seconds < TARGET_S
            print(f"{name:10s} {len(doc['runs']):5d} runs  {len(data) / 1e6:8.1f} MB on disk  "
                  f"{len(text) / 1e6:8.1f} MB of JSON  validate {seconds:6.2f} s  "
                  f"({'under' if seconds < TARGET_S else 'OVER'} {TARGET_S:g} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
