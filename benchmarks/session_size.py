"""What a session costs on disk and in time (targets: an f-CNNx run under 200 KB; save and open of a
17-run session each under 0.5 s). For the example session (assets/example_session.dfx; made by
assets/make_example_session.py) and for a 17-run session made of its runs repeated (the size of the
session the issue measured: 8.4 MB, save 1.8 s, open 2.9 s before compact storage), it prints each
run's share of the file (the file's size with and without the run) and the median save and open
times.

Run: .venv/bin/python benchmarks/session_size.py [--session FILE.dfx] [--runs 17] [--repeat 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core import session  # noqa: E402
from core.project import Project, Run  # noqa: E402

EXAMPLE = REPO / "assets" / "example_session.dfx"
RUN_TARGET_BYTES = 200_000
TIME_TARGET_S = 0.5


def file_bytes(project: Project, runs: list[Run] | None = None) -> int:
    """The size of the session file of `project` (with these runs instead of its own)."""
    doc = session.to_json(project)
    if runs is not None:
        doc["runs"] = [session.document._run_json(r) for r in runs]
    return len(session.encode(doc))


def run_sizes(project: Project) -> list[tuple[str, str, int]]:
    """(run id, engine, bytes the run adds to the file): the file's size minus its size without it."""
    whole = file_bytes(project)
    return [(run.id, run.engine, whole - file_bytes(project, [r for r in project.runs if r is not run]))
            for run in project.runs]


def with_runs(project: Project, n: int) -> Project:
    """The project with its runs repeated (fresh ids) up to n runs."""
    base = list(project.runs)
    runs = list(base)
    while len(runs) < n:
        runs.append(dataclasses.replace(base[len(runs) % len(base)], id=f"r{len(runs) + 1}"))
    bigger = Project()
    bigger.replace_with(project)
    bigger.runs = runs
    return bigger


def times(project: Project, repeat: int) -> tuple[float, float, int]:
    """Median save and open seconds, and the file's bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.dfx"
        saves, opens = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            session.save(project, path)
            saves.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            session.load(path)
            opens.append(time.perf_counter() - t0)
        return statistics.median(saves), statistics.median(opens), path.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--session", default=str(EXAMPLE))
    ap.add_argument("--runs", type=int, default=17, help="runs of the larger session (the example's repeated)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    project = session.load(args.session)
    print(f"{args.session}: {len(project.runs)} runs, file {Path(args.session).stat().st_size / 1e3:.1f} kB on disk")
    print(f"  {'run':<5}{'engine':<10}{'kB in the file':>15}")
    for rid, engine, size in run_sizes(project):
        flag = "  (over the 200 kB target)" if size > RUN_TARGET_BYTES else ""
        print(f"  {rid:<5}{engine:<10}{size / 1e3:>15.1f}{flag}")
    for label, p in (("example session", project), (f"{args.runs}-run session", with_runs(project, args.runs))):
        save_s, open_s, size = times(p, args.repeat)
        print(f"{label}: {len(p.runs)} runs, {size / 1e3:.1f} kB; save {save_s:.3f} s, open {open_s:.3f} s "
              f"(targets < {TIME_TARGET_S} s each; medians of {args.repeat})")


if __name__ == "__main__":
    main()
