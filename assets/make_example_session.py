"""Build assets/example_session.dfx: the kept format-1 example (Cain's AnalogNet2 search and the
simulator on Cain's published program) brought to format 2, plus a few fresh runs so that the runs
view and a comparison have something to show. Runs every engine in the foreground, Qt-free.

    python assets/make_example_session.py [OUT.dfx]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import session  # noqa: E402
from core.engine import engines  # noqa: E402
from core.lifecycle import record_run  # noqa: E402
from core.project import Project  # noqa: E402
from core.workload import FpspFilter  # noqa: E402


def run(project: Project, engine: str, note: str = "") -> None:
    r = project.start_run(engine)
    outcome = record_run(engines()[engine], project.request_of(r), on_event=lambda ev: project.record(r.id, [ev]))
    project.finish_run(r.id, outcome)
    project.set_note(r.id, note)
    print(f"{r.id} {engine}: {r.status} {r.headline}", file=sys.stderr)


def main(out: str) -> None:
    p = session.load(ROOT / "tests" / "data" / "sessions_v1" / "example_session.dfx")
    gauss = p.add("workloads", "Gaussian 5x5", FpspFilter("gauss5"))
    p.choose("cain", "workloads", gauss)
    for traversal in ("cgds", "best-first"):
        p.replace_settings("cain", {**p.settings("cain"), "time_s": 6.0, "traversal": traversal})
        run(p, "cain", f"Gaussian 5x5, {traversal}")
    p.choose("cain", "workloads", p.workloads[0].id)
    p.replace_settings("cain", {**p.settings("cain"), "time_s": 10.0, "traversal": "cgds"})
    run(p, "bound", "VGG-16 at 64 KiB")
    run(p, "merit", "conv 3x3 on 8 banks")
    run(p, "fcnnx", "f-CNNx's three CNNs on the ZC706")
    p.view["current_engine"] = "cain"
    p.mark_saved()
    session.save(p, out)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "assets" / "example_session.dfx"))
