"""The demo engine the job tests run: it counts, and on request fails, crashes, ignores Cancel,
starts processes of its own, or says that it runs and waits for a test's go-ahead (a file), so a test
waits for what it needs instead of sleeping for long enough. It lives in its own module because the GUI runs engines in worker
processes: the child imports this module (core.worker.engine_ref gives "tests.demo_engine:DEMO")."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from typing import Any, Iterator

from core.engine import EngineSpec, JobRequest
from core.errors import CheckFailed, InputError
from core.jobs import CancelToken, Event, FinalResult, LogLine, MetricPoint, PartialResult, Progress
from core.metrics import Metric
from core.results import EngineResult, optional_key, read_value, to_plain

# Set by GUI tests to the test process's pid: the engine then refuses to run in that process, so a
# job that ran engine code in the GUI process fails loudly.
GUI_PID: int | None = None


def _crash(how: str) -> None:
    if how == "abort":
        os.abort()
    if how == "segv":
        import ctypes

        ctypes.string_at(0)
    if how == "exit":
        os._exit(3)


class _Partial:
    """The demo's partial results are typed, as every engine's are; their JSON form for sessions."""

    def to_json(self) -> dict[str, Any]:
        return dict(to_plain(self))

    @classmethod
    def from_json(cls, data: Any, where: str = "partial") -> Any:
        return read_value(cls, data, where)


@dataclass(frozen=True)
class DemoProcess(_Partial):
    """Which process ran the demo (tests look for engine code in the GUI's process), and the kind of
    its workload."""

    pid: int
    workload: str | None


@dataclass(frozen=True)
class DemoChildren(_Partial):
    pids: list[int]


@dataclass(frozen=True)
class DemoBest(_Partial):
    sum: int
    step: int


def demo_run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    """Counts to `steps`, one metric point per step; fails on request (for error handling tests)."""
    if GUI_PID is not None and os.getpid() == GUI_PID:
        raise AssertionError("the demo engine ran in the GUI process")
    steps = int(request.settings.get("steps", 10))
    delay = float(request.settings.get("delay", 0.0))
    if steps < 0:
        raise InputError("steps must be >= 0", "settings.steps")
    yield LogLine("demo started")
    yield PartialResult("process", DemoProcess(pid=os.getpid(), workload=request.workload.kind
                                               if request.workload is not None else None))
    children = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
                for _ in range(int(request.settings.get("children", 0)))]
    if children:
        yield PartialResult("children", DemoChildren(pids=[p.pid for p in children]))
    started = request.settings.get("started")
    if started:             # a folder: a file named after this process says the engine is counting here
        open(os.path.join(str(started), str(os.getpid())), "w").close()
    gate = request.settings.get("wait_for")
    while gate and not os.path.exists(str(gate)):       # a test's go-ahead (a file), the token looked at
        cancel.check()
        time.sleep(0.01)
    total = 0
    for i in range(steps):
        cancel.check()
        if request.settings.get("fail_at") == i:
            raise RuntimeError("demo failure")
        if request.settings.get("check_fails_at") == i:
            raise CheckFailed("demo result disagrees with its reference")
        if request.settings.get("hang_at") == i:        # a long step that never looks at the token
            time.sleep(float(request.settings.get("hang", 60)))
        if request.settings.get("crash_at") == i:
            _crash(str(request.settings.get("crash", "segv")))
        total += i
        yield MetricPoint("sum", i, total)
        yield PartialResult("best", DemoBest(sum=total, step=i))
        yield Progress((i + 1) / steps, f"step {i + 1}")
        if delay:
            time.sleep(delay)
    if request.settings.get("bad_result"):         # its JSON form with a field the type lacks
        yield FinalResult({"steps": steps, "sum": total, "bad": True})
    else:
        yield FinalResult(DemoResult(steps=steps, sum=total))


@dataclass(kw_only=True)
class DemoResult(EngineResult):
    """The demo's result: how far it counted and the sum (with "bad" set, a field the type lacks)."""

    steps: int
    sum: int
    nested: dict[str, Any] | None = optional_key()

    METRICS = (Metric("sum", "Sum", "", "higher", read=lambda r: r.sum),
               Metric("steps", "Steps", "steps", None, read=lambda r: r.steps))


def _add_cli(parser) -> None:
    parser.add_argument("--steps", type=int, default=10)


DEMO = EngineSpec(
    name="demo", title="Demo", summary="Counts; used by the tests of the job mechanism.",
    run=demo_run, default_settings=lambda: {"steps": 10},
    add_cli_arguments=_add_cli,
    request_from_cli=lambda args: JobRequest(None, None, {"steps": args.steps}),
    format_text=lambda r: f"sum={r.sum}" if isinstance(r, DemoResult) else "?",
    result_type=DemoResult,
    partial_types={"process": DemoProcess, "children": DemoChildren, "best": DemoBest},
    # every setting the demo reads is declared: settings refuse unknown keys (core.checks.check_settings)
    settings_schema={"type": "object", "properties": {
        "steps": {"type": "integer"}, "delay": {"type": "number"}, "children": {"type": "integer"},
        "started": {"type": "string"}, "wait_for": {"type": "string"}, "fail_at": {"type": "integer"},
        "check_fails_at": {"type": "integer"}, "hang_at": {"type": "integer"}, "hang": {"type": "number"},
        "crash_at": {"type": "integer"}, "crash": {"type": "string"}, "bad_result": {"type": "boolean"}}},
    order=0,
)


# The demo engine as a study runs it (tests/test_study.py): a study may set only the settings its
# engine declares, so this one declares the gate settings ("started", "wait_for") too.
STUDY_DEMO = replace(DEMO, settings_schema={"type": "object", "properties": {
    "steps": {"type": "integer"}, "started": {"type": "string"}, "wait_for": {"type": "string"}}})


# The demo engine on kernels and a SCAMP-5 target (tests/test_json_edges.py: a run's setup has
# snapshots to carry); bound to a name here so that a worker process finds it (core.worker.engine_ref).
DEMO_ON_KERNELS = replace(DEMO, workload_kinds=("kernels",), target_kinds=("scamp5",))
