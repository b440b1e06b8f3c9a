"""An engine that reports when its run was asked for (its CancelToken's `started`), for the test that
the window's worker process hands that moment to the engine (tests/test_gui_heavy.py). It lives in
its own module because the worker process imports it (core.worker.engine_ref gives
"tests.started_engine:STARTED")."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from core.engine import JobRequest
from core.jobs import CancelToken, Event, LogLine
from tests.demo_engine import DEMO


def started_run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    yield LogLine(f"started {cancel.started!r}")
    yield from DEMO.run(JobRequest(None, None, {"steps": 1}), cancel)


STARTED = replace(DEMO, name="started", run=started_run)
