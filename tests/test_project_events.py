"""One signal per kind of change (issue 52, item 6): each change of the project is announced on its
kind's signal (then on `changed`), and the window's widgets listen only to the kinds they show."""

from __future__ import annotations

import pytest

from core.jobs import MetricPoint
from core.lifecycle import RunOutcome
from core.project import EVENT_KINDS, Project, ProjectEvent


def _heard(p: Project) -> list[tuple[str, str]]:
    """(signal, event kind) of every announcement from now on."""
    heard: list[tuple[str, str]] = []
    for kind in EVENT_KINDS:
        p.events.of(kind).connect(lambda ev, kind=kind: heard.append((kind, ev.kind)))
    p.changed.connect(lambda ev: heard.append(("changed", ev.kind)))
    return heard


def test_each_change_is_announced_on_its_kinds_signal_then_on_changed(demo_engine):
    p = Project.starter()
    heard = _heard(p)
    wid = p.add("workloads", "mine", p.workloads[0].value)
    p.set_setting("demo", "steps", 3)
    run = p.start_run("demo")
    p.show("demo", run.id)
    p.record(run.id, [MetricPoint("sum", 0, 0)])
    p.finish_run(run.id, RunOutcome.cancelled())
    p.replace_with(Project.starter())
    assert heard == [("library", "library"), ("changed", "library"), ("settings", "settings"),
                     ("changed", "settings"), ("run", "run"), ("changed", "run"), ("shown", "shown"),
                     ("changed", "shown"), ("record", "record"), ("changed", "record"), ("run", "run"),
                     ("changed", "run"), ("reset", "reset"), ("changed", "reset")]
    assert wid


def test_disconnecting_leaves_every_kind():
    p = Project.starter()
    seen: list[ProjectEvent] = []
    undo = p.events.connect(seen.append, "library", "reset")
    p.add("workloads", "a", p.workloads[0].value)
    undo()
    p.add("workloads", "b", p.workloads[0].value)
    p.replace_with(Project.starter())
    assert [e.kind for e in seen] == ["library"]


@pytest.fixture
def window(qtbot):
    from tests.window_helpers import example_window

    w = example_window(qtbot)
    yield w
    w.shutdown_jobs()


def test_a_running_runs_batches_reach_only_the_views_that_draw_them(window):
    """Many batches a second: only the engine tabs hear them (and draw the one they show); the
    choice bars, runs view, library, bindings and the window itself do not."""
    from gui.panels.base import EnginePanel

    slots = window.project.events.record._slots
    assert slots and all(isinstance(getattr(s, "__self__", None), EnginePanel) for s in slots)
    assert len(slots) == len(window.panels)
    # a setting's change reaches the bindings, the window (modified) and the panels that follow settings
    owners = {type(getattr(s, "__self__", None)).__name__ for s in window.project.events.settings._slots}
    assert "ChoiceBar" not in owners and "RunsView" not in owners and "MainWindow" in owners
