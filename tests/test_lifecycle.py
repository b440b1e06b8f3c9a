"""The one run lifecycle (core.lifecycle): every way a run can end, recorded the same way, and the
outcome's one JSON form read back as it was."""

from __future__ import annotations

import json

import pytest

from core.engine import JobRequest
from core.jobs import CancelToken, MetricPoint
from core.lifecycle import RunError, RunOutcome, UncheckedResult, record_run
from tests.demo_engine import DEMO, DemoResult


def _run(token: CancelToken | None = None, on_event=None, **settings) -> RunOutcome:
    ticks = iter(range(100))
    return record_run(DEMO, JobRequest(None, None, settings), token, on_event, clock=lambda: float(next(ticks)))


def test_a_finished_run_has_its_typed_result_and_what_it_streamed():
    seen = []
    out = _run(on_event=seen.append, steps=4)
    assert out.status == "finished" and out.error is None
    assert isinstance(out.result, DemoResult) and (out.result.steps, out.result.sum) == (4, 6)
    assert out.headline() == {"sum": 6, "steps": 4}
    assert out.series == {"main": {"sum": [[0.0, 0.0], [1.0, 1.0], [2.0, 3.0], [3.0, 6.0]]}}
    assert out.partial["best"].to_json() == {"sum": 6, "step": 3} and out.log == ["info: demo started"]
    assert out.duration_s == 1.0 and out.events == len(seen) and any(isinstance(e, MetricPoint) for e in seen)


@pytest.mark.parametrize("settings, kind, text", [
    ({"steps": -1}, "input", "settings.steps: steps must be >= 0"),
    ({"steps": 5, "check_fails_at": 1}, "check", "demo result disagrees with its reference"),
    ({"steps": 5, "fail_at": 2}, "other", "RuntimeError: demo failure"),
    ({"steps": 2, "bad_result": True}, "other", "the result does not match its type: result.bad: unknown field"),
])
def test_every_failure_has_one_status_and_one_line(settings, kind, text):
    out = _run(**settings)
    assert out.status == "failed" and out.result is None
    assert out.error is not None and out.error.kind == kind and out.error.text == text
    assert ("Traceback" in out.error.detail) == (kind == "other" and "fail_at" in settings)


def test_a_result_that_does_not_read_back_is_kept_and_survives_the_process_boundary():
    out = _run(steps=2, bad_result=True)
    assert out.partial["result"].data == {"steps": 2, "sum": 1, "bad": True}
    back = RunOutcome.from_json(json.loads(json.dumps(out.to_json(stream=False))), DEMO)
    assert back.status == "failed" and back.partial == {"result": UncheckedResult({"steps": 2, "sum": 1, "bad": True})}


def test_cancel_is_a_status_not_an_error():
    token = CancelToken()
    token.cancel()
    out = _run(token, steps=5)
    assert out.status == "cancelled" and out.error is None and out.result is None


def test_the_json_form_reads_back_the_same_outcome():
    out = _run(steps=3)
    back = RunOutcome.from_json(json.loads(json.dumps(out.to_json())), DEMO)
    assert back == out
    lean = RunOutcome.from_json(out.to_json(stream=False), DEMO)
    assert lean.result == out.result and lean.series == {} and lean.partial == {}
    failed = RunOutcome.failed(RunError("crash", "the engine's process ended with signal SIGSEGV", detail="x"))
    assert RunOutcome.from_json(failed.to_json(), DEMO) == failed


def test_a_finished_outcome_without_a_result_fails():
    out = RunOutcome.from_json({"status": "finished", "result": None}, DEMO)
    assert out.status == "failed" and out.error == RunError("other", "finished without a result")
