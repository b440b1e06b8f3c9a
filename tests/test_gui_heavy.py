"""Lighter and faster (issue 30): the default MERIT run leaves its heavy parts (zoo networks, Table IX)
to explicit choices; a Cain budget counts from when Run was pressed, so the worker process's start-up
is part of it; the search holds no named semaphores a killed run could leak; sessions store runs
compactly. No test here reads the wall clock: budgets run on a fake clock, gates wait for events,
and sizes are counted in bytes."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import queue
from typing import Any
from pathlib import Path

import pytest

from core.engine import JobRequest, get_engine
from core.jobs import CancelToken, FinalResult, LogLine, Progress
from core.lifecycle import record_run
from core.project import Project
from core.workload import FpspFilter, Scamp5Target
from panel_context import FakeContext


# ------------------------------------------------------------------ MERIT's default run
@pytest.mark.slow
def test_merit_default_run_leaves_the_heavy_parts_to_explicit_choices() -> None:
    spec = get_engine("merit")
    s = spec.default_settings()
    assert s["networks"] == [] and s["table_ix"] is False
    props = spec.settings_schema["properties"]
    assert props["networks"]["title"] == "Networks" and props["table_ix"]["title"] == "Table IX"
    # the command line's defaults are the same run; both parts are one flag away
    import argparse

    p = argparse.ArgumentParser()
    spec.add_cli_arguments(p)
    req = spec.request_from_cli(p.parse_args(["--workload", "conv3x3"]))
    assert req.settings["networks"] == [] and req.settings["table_ix"] is False
    req = spec.request_from_cli(p.parse_args(["--workload", "conv3x3", "--networks", "alexnet", "--table-ix"]))
    assert req.settings["networks"] == ["alexnet"] and req.settings["table_ix"] is True
    # a new project's MERIT run times this workload only
    project = Project.starter()
    run = project.start_run("merit")
    outcome = record_run(spec, project.request_of(run))
    assert outcome.status == "finished", outcome.error
    result: Any = outcome.result
    assert [suite.name for suite in result.meritz.suites] == ["this workload (conv3x3)"]


def test_merit_panel_shows_the_heavy_parts_unticked(qtbot) -> None:
    from gui.panels.merit import PANEL

    panel = PANEL(get_engine("merit"), FakeContext())
    qtbot.addWidget(panel)
    assert not any(box.isChecked() for box in panel.net_checks.boxes.values())
    table9: Any = panel.table9_check
    assert not table9.isChecked()
    table9.setChecked(True)
    assert panel.project.settings("merit")["table_ix"] is True


# ------------------------------------------------------------------ Cain's budget in the window
class FakeClock:
    """Stands in for the `time` module of the search's modules (as in test_cain_budget): each
    reading moves it on by `tick`."""

    def __init__(self, start: float, tick: float) -> None:
        self.now, self.tick = start, tick

    def monotonic(self) -> float:
        self.now += self.tick
        return self.now

    def perf_counter(self) -> float:
        return self.monotonic()

    def sleep(self, s: float) -> None:
        self.now += s


@pytest.mark.slow
def test_cain_budget_counts_from_when_the_run_was_asked_for(monkeypatch) -> None:
    """A worker process that took 2 s of a 6 s budget to start leaves the search 4 s: the run ends
    at Run + 6 s (before, 6 s after the engine started, 8.4 s after Run in the window)."""
    from core.cain import csearch, solver
    from core.cain import engine as cain_engine

    clock = FakeClock(10.0, 0.0005)           # long before CLOCK_MONOTONIC, as in test_cain_budget
    for module in (cain_engine, solver, csearch):
        monkeypatch.setattr(module, "time", clock)
    budget = 6.0
    token = CancelToken(started=clock.now - 2.0)           # Run was pressed 2 s ago
    spec = get_engine("cain")
    req = JobRequest(FpspFilter("gauss3"), Scamp5Target(), {"workers": 1, "time_s": budget})
    events = list(spec.run(req, token))
    final = next(e.data for e in events if isinstance(e, FinalResult))
    ended = clock.now - token.started
    assert budget <= ended <= budget + 0.1, ended
    assert budget <= final.elapsed_s <= budget + 0.1
    assert final.found


def test_a_start_on_another_clock_gives_the_whole_budget(monkeypatch) -> None:
    from core.cain import engine as cain_engine

    clock = FakeClock(50.0, 0.001)
    monkeypatch.setattr(cain_engine, "time", clock)
    assert cain_engine._budget(CancelToken(started=clock.now - 2.0), 6.0)[1] == pytest.approx(4.0, abs=0.01)
    assert cain_engine._budget(CancelToken(started=clock.now + 100.0), 6.0)[1] == 6.0      # in the future
    assert cain_engine._budget(CancelToken(started=clock.now - 5.9), 6.0)[1] == pytest.approx(1.2)  # least share


def test_the_worker_process_hands_the_moment_run_was_pressed_to_the_engine() -> None:
    from core.worker import ProcessJob

    job = ProcessJob("started", JobRequest(None, None, {}), ref="tests.started_engine:STARTED")
    job.start()
    assert job.wait(120)
    assert job.outcome is not None and job.outcome.status == "finished", job.outcome
    lines = []
    while True:
        try:
            lines += [e.message for e in job.batches.get_nowait() if isinstance(e, LogLine)]
        except queue.Empty:
            break
    assert f"started {job.started!r}" in lines


def test_the_window_runner_gives_the_engine_the_moment_run_was_pressed(qtbot, monkeypatch) -> None:
    """Through the window's run adapter: the engine's budget clock starts when the job was asked for,
    before the worker process existed (read off the monotonic clock around the call, not timed)."""
    import time

    from core import engine as engine_module
    from core.project import Project
    from core.run_controller import Setup
    from gui.run_adapter import RunAdapter
    from tests.started_engine import STARTED

    monkeypatch.setattr(engine_module, "_REGISTRY", {"started": STARTED, **engine_module.engines()})
    runner = RunAdapter(Project())
    lines: list[str] = []
    runner.events.connect(lambda run_id, events: lines.extend(e.message for e in events if isinstance(e, LogLine)))
    done: list[object] = []
    runner.finished.connect(lambda run_id, outcome, parent: done.append(outcome))
    before = time.monotonic()
    runner.submit(Setup("started", None, None, {}))
    after = time.monotonic()
    qtbot.waitUntil(lambda: bool(done), timeout=120_000)
    started = float(next(m for m in lines if m.startswith("started ")).split()[1])
    assert before <= started <= after


# ------------------------------------------------------------------ no leaked semaphores
@pytest.mark.slow
def test_the_search_workers_hold_no_named_semaphores(monkeypatch) -> None:
    """The search's worker messages, stop flag and counters hold no POSIX semaphores (the old
    Queue, Event, Value and Array held ten), so a run killed by a signal leaves none to leak."""
    from multiprocessing import resource_tracker

    registered: list[tuple[str, str]] = []
    real = resource_tracker.register

    def spy(name: str, rtype: str) -> None:
        registered.append((name, rtype))
        real(name, rtype)

    monkeypatch.setattr(resource_tracker, "register", spy)
    spec = get_engine("cain")
    req = JobRequest(FpspFilter("gauss5"), Scamp5Target(), {"workers": 2, "time_s": 600, "max_nodes": 4000})
    final = next(e.data for e in spec.run(req, CancelToken()) if isinstance(e, FinalResult))
    assert final.found
    assert [r for r in registered if r[1] == "semaphore"] == []


@pytest.mark.slow
def test_a_killed_search_leaks_no_semaphore(capfd) -> None:
    """The window quitting, or a Cancel that outlives its grace, terminates the run's process group;
    before, its resource tracker then printed "10 leaked semaphore objects"."""
    from core.worker import ProcessJob

    req = JobRequest(FpspFilter("gauss5"), Scamp5Target(), {"workers": 2, "time_s": 600})
    job = ProcessJob("cain", req)
    job.start()
    searching = False
    while not searching and not job.done.is_set():          # a gate: the workers' search has begun
        try:
            batch = job.batches.get(timeout=1.0)
        except queue.Empty:
            continue
        searching = any(isinstance(e, Progress) and "nodes" in e.message for e in batch)
    assert searching
    job.cancel(grace=0.0)                                    # no time to stop by itself: SIGTERM
    assert job.wait(60)
    assert job.outcome is not None and job.outcome.status == "cancelled"
    err = capfd.readouterr().err
    assert "leaked semaphore" not in err, err


# ------------------------------------------------------------------ compact sessions
EXAMPLE = Path(__file__).resolve().parents[1] / "assets" / "example_session.dfx"


def _file_bytes(project: Project, runs: list | None = None) -> int:
    from core import session

    doc = session.to_json(project)
    if runs is not None:
        doc["runs"] = [session.document._run_json(r) for r in runs]
    return len(session.encode(doc))


def test_an_fcnnx_run_costs_under_200_kb_and_reads_back_unchanged(tmp_path) -> None:
    """Before: indented JSON, 2.1 MB per f-CNNx run (8.4 MB for 17 runs). Now compact JSON, gzip-
    compressed: every number as it was."""
    from core import session

    project = session.load(EXAMPLE)
    fcnnx = [r for r in project.runs if r.engine == "fcnnx"]
    assert fcnnx
    whole = _file_bytes(project)
    for run in fcnnx:
        share = whole - _file_bytes(project, [r for r in project.runs if r is not run])
        assert share < 200_000, share
    path = tmp_path / "s.dfx"
    session.save(project, path)
    # saved_at is stamped again at save (to the second): a new stamp can compress a few bytes
    # differently, so the file is the measured size give or take the stamp.
    assert abs(path.stat().st_size - whole) <= 32, (path.stat().st_size, whole)
    back = session.load(path)
    assert session.to_json(back) | {"saved_at": ""} == session.to_json(project) | {"saved_at": ""}
    assert fcnnx[-1].result is not None
    assert session.read_document(path)["runs"][-1]["result"] == fcnnx[-1].result.to_json()


def test_plain_json_sessions_still_open(tmp_path) -> None:
    """Files saved before compression (plain JSON text, any format version) open as before; a
    compressed file cut short is refused with a clear message."""
    import gzip
    import json

    from core import session
    from core.errors import SessionError

    project = session.load(EXAMPLE)
    plain = tmp_path / "plain.dfx"
    plain.write_text(json.dumps(session.to_json(project), indent=1))
    assert session.to_json(session.load(plain))["runs"] == session.to_json(project)["runs"]
    cut = tmp_path / "cut.dfx"
    cut.write_bytes(gzip.compress(plain.read_bytes())[:5000])
    with pytest.raises(SessionError, match="truncated"):
        session.load(cut)


@pytest.mark.slow
def test_the_window_saves_a_compact_session(qtbot, tmp_path, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    from gui.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: pytest.fail(str(a[2])))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    window = MainWindow()
    qtbot.addWidget(window)
    assert window.open_path(EXAMPLE, ask=False)
    path = tmp_path / "w.dfx"
    assert window.save_to(path)
    runs = len(window.project.runs)
    assert path.stat().st_size < 100_000 * runs          # 7 runs: 4.3 MB before, under 0.2 MB now
    assert window.open_path(path, ask=False) and len(window.project.runs) == runs
    window.shutdown_jobs()
