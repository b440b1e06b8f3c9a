"""The project's view state (saved with the session as a JSON object) read typed by the window."""

from __future__ import annotations

from core.project import ComparedRuns, Project


def test_the_view_state_reads_typed_and_writes_the_sessions_form():
    p = Project()
    assert p.current_engine() is None and p.compared() is None and p.shown_id("bound") is None
    p.view["current_engine"] = "bound"
    assert p.current_engine() == "bound"
    p.set_compared(ComparedRuns(["r1", "r2"]))
    assert p.view["compare"] == {"runs": ["r1", "r2"], "on_show": True}         # the session's form
    assert p.compared() == ComparedRuns(["r1", "r2"], True)
    p.view["compare"] = {"runs": ["r3"]}                  # as an older or hand-edited file may hold it
    assert p.compared() == ComparedRuns(["r3"], False)
    p.set_compared(None)
    assert "compare" not in p.view and p.compared() is None
    p.view["shown"] = {"bound": "r9"}                     # a run that is gone: its id, no run
    assert p.shown_id("bound") == "r9" and p.shown("bound") is None
    p.view["current_engine"] = 3                          # not a name: none
    assert p.current_engine() is None
