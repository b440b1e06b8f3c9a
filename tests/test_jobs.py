"""The job mechanism and the command line shared by every engine."""

import json
import threading

import pytest

from core.engine import JobRequest
from core.jobs import CancelToken, Cancelled, FinalResult, MetricPoint, drive, run_foreground
from main import main
from tests.conftest import demo_run


def test_drive_collects_result_and_events():
    seen = []
    out = drive(demo_run(JobRequest(None, None, {"steps": 5}), CancelToken()), seen.append, CancelToken())
    assert out.result.to_json() == {"steps": 5, "sum": 10}
    assert [e.y for e in seen if isinstance(e, MetricPoint)] == [0, 1, 3, 6, 10]
    assert isinstance(seen[-1], FinalResult)


def test_cancel_from_another_thread_is_prompt():
    """Prompt in steps, not seconds: another thread cancels once step 5 is out (however long that
    thread then takes to run on a loaded machine), and the job makes at most one more step."""
    token = CancelToken()
    job = demo_run(JobRequest(None, None, {"steps": 10_000, "delay": 0.01}), token)
    reached = threading.Event()
    after_cancel: list[float] = []

    def seen(e):
        if isinstance(e, MetricPoint):
            if token.cancelled:
                after_cancel.append(e.x)
            if e.x == 5:
                reached.set()

    def cancel_at_step_5():
        reached.wait()
        token.cancel()

    canceller = threading.Thread(target=cancel_at_step_5)
    canceller.start()
    out = drive(job, seen, token)
    canceller.join()
    assert out.cancelled and out.result is None
    assert len(after_cancel) <= 1, after_cancel


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
    assert out.result.sum == 3
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
    bad.write_text(json.dumps(sessions.read_document(good)).replace('"scamp5"', '"toaster"'))   # plain JSON opens too
    assert main(["session", "validate", str(bad), "--json"]) == 2
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out == {"valid": False, "error": out["error"], "where": "session.library.targets[0].value.kind"}
    assert "toaster" in out["error"]


def test_cli_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "session" in capsys.readouterr().out


def test_eta_from_the_fraction_rate():
    from core.jobs import Eta, eta_text, format_duration

    eta = Eta()
    assert eta.remaining(0.0) is None
    eta.update(None, 0.0)                      # an unknown fraction says nothing
    eta.update(0.05, 10.0)                     # first report after a slow start: the rate counts from here
    eta.update(0.10, 10.5)
    assert eta.remaining(10.5) is None         # under a second of reports: no estimate yet
    eta.update(0.15, 11.0)
    assert eta.remaining(11.0) == pytest.approx(8.5)        # 0.1 per s, 0.85 left
    assert eta.remaining(12.0) == pytest.approx(7.5)        # counts down between reports
    assert eta_text(eta, 12.0) == "about 8 s left"
    eta.update(1.0, 13.0)
    assert eta.remaining(20.0) == 0.0
    assert (format_duration(42), format_duration(125), format_duration(4380)) == ("42 s", "2 min 05 s", "1 h 13 min")


def test_eta_of_a_time_budget_is_the_budget_left():
    """Cain reports elapsed/budget: the estimate is exact, whatever happened before its first report."""
    from core.jobs import Eta

    eta = Eta()
    for t in range(0, 21):
        eta.update(t / 60, 5.0 + t)            # the job started 5 s before the engine's first report
    assert eta.remaining(25.0) == pytest.approx(40.0)


def test_command_line_progress_line_shows_time_left():
    import io

    from core.jobs import Progress, ProgressDisplay

    out = io.StringIO()
    display = ProgressDisplay(out, quiet=False)
    display.last = -10.0
    display.eta.update(0.0, display.start - 2.0)
    display(Progress(0.5, "half way"))
    assert "50.0% about 2 s left, half way" in out.getvalue()
