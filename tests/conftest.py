"""Shared fixtures: headless Qt, no modal dialogs, a private settings folder, and a small demo engine."""

from __future__ import annotations

import os
import time
from typing import Iterator

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from core import engine as engine_module
from core.engine import EngineSpec, JobRequest
from core.errors import CheckFailed, InputError
from core.jobs import CancelToken, Event, FinalResult, LogLine, MetricPoint, PartialResult, Progress


def demo_run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    """Counts to `steps`, one metric point per step; fails on request (for error handling tests)."""
    steps = int(request.settings.get("steps", 10))
    delay = float(request.settings.get("delay", 0.0))
    if steps < 0:
        raise InputError("steps must be >= 0", "settings.steps")
    yield LogLine("demo started")
    total = 0
    for i in range(steps):
        cancel.check()
        if request.settings.get("fail_at") == i:
            raise RuntimeError("demo failure")
        if request.settings.get("check_fails_at") == i:
            raise CheckFailed("demo result disagrees with its reference")
        total += i
        yield MetricPoint("sum", i, total)
        yield PartialResult("best", {"sum": total, "step": i})
        yield Progress((i + 1) / steps, f"step {i + 1}")
        if delay:
            time.sleep(delay)
    yield FinalResult({"steps": steps, "sum": total})


def _add_cli(parser) -> None:
    parser.add_argument("--steps", type=int, default=10)


DEMO = EngineSpec(
    name="demo", title="Demo", summary="Counts; used by the tests of the job mechanism.",
    run=demo_run, default_settings=lambda: {"steps": 10},
    add_cli_arguments=_add_cli,
    request_from_cli=lambda args: JobRequest(None, None, {"steps": args.steps}),
    format_text=lambda r: f"sum={r['sum']}",
    settings_schema={"type": "object", "properties": {"steps": {"type": "integer"}}},
    order=0,
)


@pytest.fixture
def demo_engine(monkeypatch):
    """Registers the demo engine next to the real ones for one test."""
    registry = dict(engine_module.engines())
    registry = {"demo": DEMO, **registry}
    monkeypatch.setattr(engine_module, "_REGISTRY", registry)
    return DEMO


@pytest.fixture(autouse=True)
def _private_qsettings(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture(autouse=True)
def _no_modal_dialogs(monkeypatch):
    """A modal message box would wait forever headless: answer 'discard' and just record messages.
    Tests that check a message patch these again themselves."""
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    for name in ("warning", "critical", "information"):
        monkeypatch.setattr(QMessageBox, name, lambda *a, **k: QMessageBox.StandardButton.Ok)
