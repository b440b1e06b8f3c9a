"""Many `main.py` command lines, each in its own process, without paying Python's and the app's
start-up for each: this process imports the app once, then forks one child per command line.

A child is a real process with its own exit code, stdout and stderr (redirected to files), its own
working folder and its own process group (killed whole on a time-out, worker processes included),
so what a test sees is what a user would see from `python main.py ...`; only the import is shared.

    python tests/cli_batch.py CASES.json RESULTS.json [--jobs N] [--timeout S]

CASES.json: [{"id": ..., "argv": [...], "cwd": "..."}]; RESULTS.json: {id: {"rc", "stdout",
"stderr", "seconds", "timed_out"}}.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _child(argv: list[str], cwd: str, out: str, err: str) -> None:
    """Runs in the forked child: never returns."""
    code = 1
    try:
        os.setpgid(0, 0)
        os.chdir(cwd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import main

        try:
            code = main.main(argv)
        except SystemExit as exc:          # argparse, --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
    except BaseException:                  # what the interpreter would print for an uncaught error
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)


def run_batch(cases: list[dict[str, Any]], jobs: int = 2, timeout: float = 30.0) -> dict[str, dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    import main  # noqa: F401  (imported once, before the forks)
    from core.cli import build_parser

    build_parser()                         # discovers the engines once
    outdir = Path(tempfile.mkdtemp(prefix="cli_batch_"))
    pending = list(cases)
    running: dict[int, tuple[dict[str, Any], float]] = {}
    results: dict[str, dict[str, Any]] = {}

    def finish(pid: int, status: int | None, timed_out: bool) -> None:
        case, start = running.pop(pid)
        base = outdir / str(case["id"]).replace("/", "_")
        rc = -1 if status is None else (os.waitstatus_to_exitcode(status))
        results[case["id"]] = {
            "rc": 124 if timed_out else rc, "timed_out": timed_out, "seconds": round(time.monotonic() - start, 3),
            "stdout": Path(f"{base}.out").read_text(errors="replace"),
            "stderr": Path(f"{base}.err").read_text(errors="replace")}

    while pending or running:
        while pending and len(running) < jobs:
            case = pending.pop(0)
            base = outdir / str(case["id"]).replace("/", "_")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(case["argv"], case["cwd"], f"{base}.out", f"{base}.err")
            try:
                os.setpgid(pid, pid)           # also here: a kill must not race the child's own setpgid
            except (PermissionError, ProcessLookupError):
                pass
            running[pid] = (case, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid:
            if pid in running:
                finish(pid, status, False)
            continue
        now = time.monotonic()
        for pid, (case, start) in list(running.items()):
            if now - start > case.get("timeout", timeout):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                finish(pid, None, True)
        time.sleep(0.005)
    return results


def main_() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("results")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()
    cases = json.loads(Path(a.cases).read_text())
    results = run_batch(cases, a.jobs, a.timeout)
    Path(a.results).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
