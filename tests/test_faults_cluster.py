"""A Dask worker killed mid-study (issue 53): the point it ran is recorded failed with a sentence
that says what happened and what to do, the points that finished are in the results file, and
`--resume` runs only the point that did not finish: nothing lost, nothing repeated.

The points are the tests' demo engine's: each says which worker process runs it, then waits for the
test's go-ahead (a file), so the worker is killed in the middle of its point however fast or loaded
the machine is."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from typing import Any

import pytest

from core import faults
from core.study import results_file, runner as runner_module, spec
from core.study.runner import StudyRunner
from tests.test_study import scheduler  # noqa: F401  (the two-worker loopback cluster those tests share)

pytestmark = pytest.mark.slow
HANG_S = 120


def test_a_worker_killed_mid_study_loses_and_repeats_nothing(scheduler, tmp_path, monkeypatch):  # noqa: F811
    from distributed import Client

    from core import engine as engine_module
    from tests.dask_demo import DemoEngine
    from tests.demo_engine import STUDY_DEMO

    monkeypatch.setattr(engine_module, "_REGISTRY", {**engine_module.engines(), "demo": STUDY_DEMO})
    monkeypatch.setattr(runner_module, "MAX_ATTEMPTS", 1)      # one death fails the point (the default retries once)
    with Client(scheduler, set_as_default=False) as client:
        client.register_plugin(DemoEngine())
    started, gate = tmp_path / "started", tmp_path / "go"
    started.mkdir()
    doc = {"name": "killed", "engine": "demo", "settings": {"started": str(started), "wait_for": str(gate)},
           "axes": [{"param": "settings.steps", "values": [3, 4, 5]}], "metrics": ["sum"]}
    path = tmp_path / "study.json"
    path.write_text(json.dumps(doc))
    study = spec.from_json(json.loads(path.read_text()), None, path)
    runner = StudyRunner(study, scheduler, cache=False)
    out: dict[str, Any] = {}
    th = threading.Thread(target=lambda: out.setdefault("summary", runner.run()))
    th.start()
    try:
        deadline = time.monotonic() + HANG_S
        while not any(started.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        running = sorted(int(f.name) for f in started.iterdir())
        assert running, "no point started"
        os.kill(running[0], signal.SIGKILL)
    finally:
        gate.touch()
        th.join(HANG_S)
    summary = out["summary"]
    failed = [r for r in summary.records if r["status"] == "failed"]
    assert summary.counts["finished"] == 2 and len(failed) == 1, [r.get("error") for r in summary.records]
    assert failed[0]["error"] == faults.killed_worker(1)
    assert "--resume" in failed[0]["error"] and "died" in failed[0]["error"]
    results = tmp_path / "study.results.jsonl"
    kept = {r["key"] for r in results_file.read(results) if r.get("status") == "finished"}
    assert len(kept) == 2                                       # the finished points are in the file

    ran: list[dict[str, Any]] = []
    again = StudyRunner(study, scheduler, resume=True, cache=False, on_record=ran.append).run()
    assert again.counts["finished"] == 3 and again.counts["resumed"] == 2
    assert [r["key"] for r in ran if not r.get("resumed")] == [failed[0]["key"]]     # only the lost one ran
    finished = [r["key"] for r in results_file.read(results) if r.get("type") == "point" and r["status"] == "finished"]
    assert sorted(finished) == sorted(kept | {failed[0]["key"]}) and len(finished) == 3    # none twice

