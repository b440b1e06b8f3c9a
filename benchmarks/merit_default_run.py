"""Time of the default MERIT run (target: under 5 s): a new project's MERIT tab run as it starts,
i.e. the starter workload with the engine's default settings (code generation on, no zoo networks,
no Table IX). The heavy parts are settings; `--networks alexnet,vgg16 --table-ix` times them too.

Run: .venv/bin/python benchmarks/merit_default_run.py [--repeat 3] [--networks alexnet,vgg16] [--table-ix]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.engine import engines  # noqa: E402
from core.lifecycle import record_run  # noqa: E402
from core.project import Project  # noqa: E402

TARGET_S = 5.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--networks", default="", help="zoo networks to add (default: none, as a default run)")
    ap.add_argument("--table-ix", action="store_true", help="add Table IX (off in a default run)")
    args = ap.parse_args()
    spec = engines()["merit"]
    project = Project.starter()
    settings = dict(project.settings("merit"))
    assert settings == spec.default_settings(), "the starter project's MERIT settings are the defaults"
    if args.networks:
        settings["networks"] = [n for n in args.networks.split(",") if n]
    settings["table_ix"] = settings["table_ix"] or args.table_ix
    project.replace_settings("merit", settings)
    times = []
    for i in range(args.repeat):
        run = project.start_run("merit")
        t0 = time.perf_counter()
        outcome = record_run(spec, project.request_of(run))
        times.append(time.perf_counter() - t0)
        project.finish_run(run.id, outcome)
        print(f"run {i + 1}: {outcome.status}, {times[-1]:.2f} s", file=sys.stderr)
        if outcome.status != "finished":
            sys.exit(f"the run {outcome.status}: {outcome.error}")
    name = project.entry("workloads", project.choice("merit").workload or "")
    print(f"MERIT default run ({name.name if name else '?'}; networks {settings['networks'] or 'none'}, "
          f"Table IX {'on' if settings['table_ix'] else 'off'}, code generation "
          f"{'on' if settings['codegen'] else 'off'}): median {statistics.median(times):.2f} s, "
          f"first {times[0]:.2f} s (target < {TARGET_S:.0f} s)")


if __name__ == "__main__":
    main()
