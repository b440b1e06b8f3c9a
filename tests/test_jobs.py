"""The job mechanism and the command line shared by every engine."""

import json
import threading
import time

import pytest

from core.engine import JobRequest
from core.jobs import CancelToken, Cancelled, FinalResult, MetricPoint, drive, run_foreground
from main import main
from tests.conftest import demo_run


def test_drive_collects_result_and_events():
    seen = []
    out = drive(demo_run(JobRequest(None, None, {"steps": 5}), CancelToken()), seen.append, CancelToken())
    assert out.result == {"steps": 5, "sum": 10}
    assert [e.y for e in seen if isinstance(e, MetricPoint)] == [0, 1, 3, 6, 10]
    assert isinstance(seen[-1], FinalResult)


def test_cancel_from_another_thread_is_prompt():
    token = CancelToken()
    job = demo_run(JobRequest(None, None, {"steps": 10_000, "delay": 0.01}), token)
    t0 = time.monotonic()
    threading.Timer(0.2, token.cancel).start()
    out = drive(job, lambda e: None, token)
    assert out.cancelled and out.result is None
    assert time.monotonic() - t0 < 0.2 + 0.5


def test_engine_error_is_captured_not_raised():
    out = drive(demo_run(JobRequest(None, None, {"steps": 5, "fail_at": 2}), CancelToken()), lambda e: None,
                CancelToken())
    assert isinstance(out.error, RuntimeError) and out.result is None


def test_token_check_raises():
    token = CancelToken()
    token.check()
    token.cancel()
    with pytest.raises(Cancelled):
        token.check()


def test_run_foreground_reports_progress_on_stderr(capsys):
    out = run_foreground(demo_run(JobRequest(None, None, {"steps": 3}), CancelToken()))
    assert out.result["sum"] == 3
    assert "demo started" in capsys.readouterr().err


def test_cli_engine_json_and_text(demo_engine, capsys):
    assert main(["demo", "--steps", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"steps": 4, "sum": 6}
    assert main(["demo", "--steps", "4"]) == 0
    assert capsys.readouterr().out.strip() == "sum=6"


def test_cli_bad_input_exits_2(demo_engine, capsys):
    assert main(["demo", "--steps", "-1", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "settings.steps: steps must be >= 0" in captured.err


def test_cli_session_validate(tmp_path, demo_engine, capsys):
    from core import session as sessions

    from core.project import Project

    good = tmp_path / "g.dfx"
    sessions.save(Project.starter(), good)
    assert main(["session", "validate", str(good)]) == 0
    bad = tmp_path / "b.dfx"
    bad.write_text(good.read_text().replace('"scamp5"', '"toaster"'))
    assert main(["session", "validate", str(bad), "--json"]) == 2
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out == {"valid": False, "error": out["error"], "where": "session.library.targets[0].value.kind"}
    assert "toaster" in out["error"]


def test_cli_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "session" in capsys.readouterr().out
