"""How long `session validate` takes on a large session (target: a 300 MB session in under 10 s).

The session is the example session (assets/example_session.dfx) with its runs repeated under fresh
ids until its JSON text reaches --mb megabytes; it is written as the app writes it (compact JSON
ending with the run index, core.session.encode_text) as plain JSON (the largest file a user can hand
over; a compressed one reads the same text after gunzip) and gzip-compressed, and each is validated
as a real `python main.py session validate FILE` process, import time included. Prints the size,
the time of each and whether it met the target.

--baseline DIR also times DIR/main.py (another checkout, e.g. `git archive` of an older commit) on
the same session as format 3 wrote it (no index), in the same run: on a shared machine only times
taken together compare.

Run: .venv/bin/python benchmarks/session_validate.py [--mb 300] [--repeat 1] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
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
    doc.pop("index", None)
    doc["version"] = session.VERSION
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


CPU: list[float] = []       # CPU seconds of each validation (its worker processes included)


def validate_seconds(path: Path, root: Path = REPO) -> float:
    """Wall time of one `main.py session validate` process; it must say the file is valid. Its CPU
    time goes to CPU: on a loaded machine, wall times say little about the work done."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(root / "main.py"), "session", "validate", str(path)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"validate failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=300.0, help="size of the session's JSON text, MB (default 300)")
    ap.add_argument("--repeat", type=int, default=1, help="validations per file; the median counts")
    ap.add_argument("--baseline", type=Path, help="also time this checkout's main.py on the format-3 file")
    args = ap.parse_args(argv)
    doc = big_document(args.mb)
    text = session.encode_text(doc).encode("ascii")
    old = json.dumps({**doc, "version": 3}, separators=(",", ":")).encode("ascii") if args.baseline else b""
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name, data, data_old in (("plain JSON", text, old),
                                     ("gzip", gzip.compress(text, compresslevel=session.GZIP_LEVEL, mtime=0),
                                      gzip.compress(old, compresslevel=session.GZIP_LEVEL, mtime=0))):
            path = Path(tmp) / f"big_{name.split()[0]}.dfx"
            path.write_bytes(data)
            seconds = statistics.median(validate_seconds(path) for _ in range(args.repeat))
            ok &= seconds < TARGET_S
            line = (f"{name:10s} {len(doc['runs']):5d} runs  {len(data) / 1e6:8.1f} MB on disk  "
                    f"{len(text) / 1e6:8.1f} MB of JSON  validate {seconds:6.2f} s (CPU {CPU[-1]:6.2f} s)  "
                    f"({'under' if seconds < TARGET_S else 'OVER'} {TARGET_S:g} s)")
            if args.baseline:
                path.write_bytes(data_old)
                before = statistics.median(validate_seconds(path, args.baseline) for _ in range(args.repeat))
                line += f"  baseline {before:6.2f} s (CPU {CPU[-1]:6.2f} s; {before / seconds:.1f}x)"
            print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
