"""One run lifecycle: an engine's job in, a recorded run out, the same for every front end.

The command line, the GUI's worker process and a study's Dask worker all call `record_run`: it drives
the engine's generator (core.jobs.drive), keeps what the run streams (the last partial result of
each kind, the plotted series, the log's tail), reads the final result through the engine's typed
result, and decides the run's status and error text in one place. What it returns, a `RunOutcome`,
has one JSON form, used only where it crosses a process boundary (worker to window, Dask worker to
study runner); the project records it as it is.

Statuses: "finished" (a result that reads back through its type), "failed" (an error, a crash, no
result, or a result that does not match its type: the unchecked result is then kept as the partial
result "result", an UncheckedResult, so nothing the engine made is lost) and "cancelled".
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from core import faults
from core.engine import EngineSpec, JobRequest
from core.errors import CheckFailed, InputError
from core.jobs import (CancelToken, Event, FinalResult, LogLine, MetricPoint, PartialData, PartialResult, add_metric_point,
                       drive)
from core.results import EngineResult

MAX_SERIES_POINTS = 4000        # per series of a run; older points are thinned, the newest kept
MAX_LOG_LINES = 200             # the newest log lines a recorded run keeps

Status = Literal["finished", "failed", "cancelled"]
STATUSES: tuple[Status, ...] = ("finished", "failed", "cancelled")
ErrorKind = Literal["input", "check", "machine", "crash", "other"]
ERROR_KINDS: tuple[ErrorKind, ...] = ("input", "check", "machine", "crash", "other")


@dataclass(frozen=True)
class RunError:
    """Why a run failed, as plain data (the exception itself stays where it was raised).

    kind: "input" (bad input: the message names the field), "check" (a self-check of the engine
    disagreed with its reference), "machine" (a fault of the machine in words, core.faults: no
    compiler, folder, memory or room), "crash" (the engine's process ended without an outcome) or "other"
    (any other exception, or no result). `detail` is for the log: a traceback or a fault report."""

    kind: ErrorKind
    message: str
    where: str = ""
    type: str = ""
    detail: str = ""

    @classmethod
    def of(cls, exc: BaseException, doing: str = "") -> "RunError":
        """The error of `exc`; `doing` (e.g. "running MERIT") says what ran out of memory."""
        if isinstance(exc, InputError):
            return cls("input", exc.message, exc.where, type(exc).__name__)
        if isinstance(exc, CheckFailed):
            return cls("check", str(exc), "", type(exc).__name__)
        fault = faults.describe(exc, doing)
        if fault is not None:       # the sentence for the user, the traceback for the log
            return cls("machine", fault, "", type(exc).__name__, "".join(traceback.format_exception(exc)).rstrip())
        return cls("other", str(exc), "", type(exc).__name__, "".join(traceback.format_exception(exc)).rstrip())

    @property
    def text(self) -> str:
        """The one line a user sees: bad input and failed self-checks are their message alone (with the
        field a bad input names), a crash says how the process ended, anything else "Type: message"."""
        if self.kind == "input":
            return f"{self.where}: {self.message}" if self.where else self.message
        if self.kind in ("check", "machine", "crash") or not self.type:
            return self.message
        return f"{self.type}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "where": self.where, "type": self.type,
                "detail": self.detail}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "RunError":
        kind = d.get("kind")
        return cls(kind if kind in ERROR_KINDS else "other", str(d.get("message", "")),
                   str(d.get("where", "")), str(d.get("type", "")), str(d.get("detail", "")))


@dataclass(frozen=True)
class UncheckedResult:
    """A final result that did not read through its engine's type, kept as the engine made it (the
    partial result "result" of a failed run): JSON data by nature, so its JSON form is itself."""

    data: Any

    def to_json(self) -> Any:
        return self.data

    @classmethod
    def from_json(cls, data: Any, where: str = "") -> "UncheckedResult":
        return cls(data)


def partials_json(partial: dict[str, PartialData]) -> dict[str, Any]:
    """The JSON form of a run's last partial results (a session file, a study's record)."""
    return {kind: data.to_json() for kind, data in partial.items()}


def read_partials(spec: EngineSpec, data: Any, where: str = "partial") -> dict[str, PartialData]:
    """A run's partial results read back through the engine's declared types (EngineSpec.partial_types);
    InputError naming the field that does not read. A kind this version no longer streams (MERIT's
    "verification", "banks" and "codegen", Cappuccino's "allocation": no view read them) is left out."""
    out: dict[str, PartialData] = {}
    for kind, value in (data or {}).items():
        cls = UncheckedResult if kind == "result" else spec.partial_types.get(kind)
        if cls is not None:
            out[kind] = cls.from_json(value, f"{where}.{kind}")
    return out


@dataclass
class RunOutcome:
    """What one run produced, however and wherever it ran."""

    status: Status
    result: EngineResult | None = None
    error: RunError | None = None
    duration_s: float | None = None
    events: int = 0
    partial: dict[str, PartialData] = field(default_factory=dict)
    series: dict[str, dict[str, list[list[float]]]] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    @classmethod
    def finished(cls, result: EngineResult, **kw: Any) -> "RunOutcome":
        return cls("finished", result=result, **kw)

    @classmethod
    def failed(cls, error: RunError | BaseException | str, **kw: Any) -> "RunOutcome":
        if isinstance(error, str):
            error = RunError("other", error)
        elif isinstance(error, BaseException):
            error = RunError.of(error)
        return cls("failed", error=error, **kw)

    @classmethod
    def cancelled(cls, **kw: Any) -> "RunOutcome":
        return cls("cancelled", **kw)

    def headline(self) -> dict[str, Any]:
        return {} if self.result is None else dict(self.result.headline())

    # ------------------------------------------------------------ the process boundary
    def to_json(self, stream: bool = True) -> dict[str, Any]:
        """The one JSON form. `stream=False` leaves out what was streamed live (partial results and
        series), for a worker whose events the window has already recorded."""
        return {"status": self.status,
                "result": None if self.result is None else self.result.to_json(),
                "result_version": None if self.result is None else type(self.result).VERSION,
                "error": None if self.error is None else self.error.to_json(),
                "duration_s": self.duration_s, "events": self.events,
                # a result that did not read back is kept as the partial "result": it was never streamed
                "partial": partials_json(self.partial if stream else
                                         {k: v for k, v in self.partial.items() if k == "result"}),
                "series": self.series if stream else {},
                "log": list(self.log)}

    @classmethod
    def from_json(cls, d: dict[str, Any], spec: EngineSpec) -> "RunOutcome":
        """Read back a RunOutcome's JSON form (from a worker running the same code). A result that
        does not read through the engine's type makes a failed run that keeps it."""
        status = d.get("status")
        out = cls(status if status in STATUSES else "failed",
                  error=None if d.get("error") is None else RunError.from_json(d["error"]),
                  duration_s=d.get("duration_s"), events=int(d.get("events") or 0),
                  partial=read_partials(spec, d.get("partial")), series=dict(d.get("series") or {}),
                  log=list(d.get("log") or []))
        if d.get("result") is not None:
            _take_result(out, spec, d["result"], d.get("result_version"))
        elif out.status == "finished":
            out.status, out.error = "failed", RunError("other", "finished without a result")
        return out


def _take_result(out: RunOutcome, spec: EngineSpec, data: Any, version: int | None = None) -> None:
    """The final result, typed: an engine yields its typed result or its JSON dict (read here)."""
    if isinstance(data, EngineResult):
        out.result = data
        return
    try:
        out.result = spec.result_type.from_json(data, version)
    except InputError as exc:
        out.status, out.result = "failed", None
        out.error = RunError("other", f"the result does not match its type: {exc}")
        out.partial["result"] = UncheckedResult(data)


class Recorder:
    """Keeps what a run streams: the last partial result of each kind, the plotted series (thinned
    past `series_limit` points), the log's tail and the final result as yielded."""

    def __init__(self, series_limit: int = MAX_SERIES_POINTS, log_limit: int = MAX_LOG_LINES,
                 forward: Callable[[Event], None] | None = None) -> None:
        self.partial: dict[str, PartialData] = {}
        self.series: dict[str, dict[str, list[list[float]]]] = {}
        self.log: list[str] = []
        self.final: Any = None
        self._series_limit, self._log_limit, self._forward = series_limit, log_limit, forward

    def __call__(self, ev: Event) -> None:
        if isinstance(ev, PartialResult):
            self.partial[ev.kind] = ev.data
        elif isinstance(ev, MetricPoint):
            add_metric_point(self.series, ev, self._series_limit)
        elif isinstance(ev, LogLine):
            self.log.append(f"{ev.level}: {ev.message}")
            del self.log[:-self._log_limit]
        elif isinstance(ev, FinalResult):
            self.final = ev.data
        if self._forward is not None:
            self._forward(ev)


def record_run(spec: EngineSpec, request: JobRequest, token: CancelToken | None = None,
               on_event: Callable[[Event], None] | None = None, *, series_limit: int = MAX_SERIES_POINTS,
               clock: Callable[[], float] = time.perf_counter) -> RunOutcome:
    """Run `spec` on `request` to its end and record it; never raises for anything the engine does
    (its errors are the outcome's). `on_event` sees every event as it comes (a progress display, a
    worker's batches to the window)."""
    token = token or CancelToken()
    t0 = clock()
    rec = Recorder(series_limit, forward=on_event)
    try:
        job = spec.run(request, token)
    except Exception as exc:            # an engine that checks its request before its first event
        return RunOutcome.failed(RunError.of(exc, f"running {spec.title}"), duration_s=round(clock() - t0, 4))
    raw = drive(job, rec, token)
    out = RunOutcome("finished", duration_s=round(clock() - t0, 4), events=raw.events, partial=rec.partial,
                     series=rec.series, log=rec.log)
    if raw.cancelled:
        out.status = "cancelled"
    elif raw.error is not None:
        out.status, out.error = "failed", RunError.of(raw.error, f"running {spec.title}")
    elif rec.final is None:
        out.status, out.error = "failed", RunError("other", "finished without a result")
    else:
        _take_result(out, spec, rec.final)
    return out
