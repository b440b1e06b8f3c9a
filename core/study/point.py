"""One study point, run inside a Dask worker process.

The worker gets the engine's name and the point's request as JSON (never live objects: a remote
worker on another machine rebuilds them), records the run with core.lifecycle.record_run exactly as
the command line and the window's worker do, and sends back the RunOutcome's JSON form with the
point's metrics and headline. Everything the engine raises is caught here, so a
future only fails when the worker itself dies; the runner retries those.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

from core.engine import JobRequest, engines, get_engine
from core.jobs import CancelToken
from core.lifecycle import RunOutcome, record_run
from core.study.metrics import StudyMetric, extract

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


def run_point(engine: str, request: dict[str, Any], metrics: list[StudyMetric],
              cancel_event: str | None = None) -> dict[str, Any]:
    """Run one point to its end with the one run lifecycle (core.lifecycle.record_run); never raises
    (errors are part of the record). The record is the RunOutcome's JSON form, plus the worker, the
    metrics (read from the typed result here) and the headline."""
    token = CancelToken()
    done = threading.Event()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    try:
        spec = get_engine(engine)
        if cancel_event is not None:
            from distributed import get_client

            threading.Thread(target=_watch_cancel, args=(cancel_event, get_client(), token, done), daemon=True).start()
        outcome = record_run(spec, JobRequest.from_json(request), token, series_limit=MAX_SERIES_POINTS)
    except Exception as exc:        # the request itself did not build (a worker with other code)
        outcome = RunOutcome.failed(exc)
    finally:
        done.set()
    del outcome.log[:-MAX_LOG_LINES]
    return {**outcome.to_json(), "worker": worker, "headline": outcome.headline(),
            "metrics": extract(outcome.result, metrics) if outcome.status == "finished" else {}}
