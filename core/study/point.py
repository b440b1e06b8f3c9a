"""One study point, run inside a Dask worker process.

The worker gets the engine's name and the point's request as JSON (never live objects: a remote
worker on another machine rebuilds them), drives the engine's job with core.jobs.drive exactly as
the command line does, and sends back a small JSON-able record: status, metrics, headline, the
result, the plotted series and the error text. Everything the engine raises is caught here, so a
future only fails when the worker itself dies; the runner retries those.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import traceback
from typing import Any

from core.engine import JobRequest, engines, get_engine
from core.errors import CheckFailed, InputError
from core.jobs import CancelToken, Event, LogLine, MetricPoint, add_metric_point, drive
from core.study.metrics import Metric, extract
from core.workload import target_from_json, workload_from_json

MAX_SERIES_POINTS = 2000        # per series sent back (the project thins further)
MAX_LOG_LINES = 50
CANCEL_POLL_S = 0.3


def warm_up() -> dict[str, Any]:
    """Run once in every worker when a study starts: loads the engine registry (so the first point
    does not pay for the imports) and says what this worker can run."""
    from core.engine import LOAD_ERRORS

    return {"engines": sorted(engines()), "load_errors": dict(LOAD_ERRORS), "pid": os.getpid(),
            "host": socket.gethostname()}


def _watch_cancel(name: str, client: Any, token: CancelToken, done: threading.Event) -> None:
    """Cancel on a cluster: the runner sets a Dask Event; a point still running after a moment
    polls it and cancels its job (engines check their token between steps)."""
    if done.wait(CANCEL_POLL_S):
        return
    try:
        from distributed import Event as DaskEvent

        flag = DaskEvent(name, client=client)
        while not done.is_set():
            if flag.wait(CANCEL_POLL_S):
                token.cancel()
                return
    except Exception:       # the scheduler went away: the runner is gone, nothing to listen to
        return


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, (InputError, CheckFailed)):
        return str(exc)
    tb = "".join(traceback.format_exception(exc)[-3:]).strip()
    return f"{type(exc).__name__}: {exc}\n{tb}"


def run_point(engine: str, request: dict[str, Any], metrics: list[Metric],
              cancel_event: str | None = None) -> dict[str, Any]:
    """Run one point to its end; never raises (errors are part of the record)."""
    t0 = time.perf_counter()
    token = CancelToken()
    done = threading.Event()
    series: dict[str, dict[str, list[list[float]]]] = {}
    log: list[str] = []
    record: dict[str, Any] = {"worker": f"{socket.gethostname()}:{os.getpid()}", "metrics": {}, "headline": {},
                              "result": None, "error": None, "series": series, "log": log}

    def on_event(ev: Event) -> None:
        if isinstance(ev, MetricPoint):
            add_metric_point(series, ev, MAX_SERIES_POINTS)
        elif isinstance(ev, LogLine):
            log.append(f"{ev.level}: {ev.message}")
            del log[:-MAX_LOG_LINES]

    watcher = None
    try:
        spec = get_engine(engine)
        if cancel_event is not None:
            from distributed import get_client

            watcher = threading.Thread(target=_watch_cancel, args=(cancel_event, get_client(), token, done),
                                       daemon=True)
            watcher.start()
        req = JobRequest(None if request.get("workload") is None else workload_from_json(request["workload"]),
                         None if request.get("target") is None else target_from_json(request["target"]),
                         dict(request.get("settings") or {}))
        outcome = drive(spec.run(req, token), on_event, token)
    except Exception as exc:        # the request itself did not build (a worker with other code)
        record.update(status="failed", error=_error_text(exc), duration_s=round(time.perf_counter() - t0, 4))
        return record
    finally:
        done.set()
    record["duration_s"] = round(time.perf_counter() - t0, 4)
    if outcome.cancelled:
        record["status"] = "cancelled"
    elif outcome.error is not None:
        record.update(status="failed", error=_error_text(outcome.error))
    elif outcome.result is None:
        record.update(status="failed", error="finished without a result")
    else:
        result = outcome.result
        if spec.result_type is not None:
            try:
                obj = spec.result_type.from_json(result)
            except InputError as exc:
                record.update(status="failed", error=f"the result does not match its type: {exc}")
                return record
            record["headline"] = dict(obj.headline())
        record.update(status="finished", result=result, metrics=extract(result, record["headline"], metrics))
    return record
