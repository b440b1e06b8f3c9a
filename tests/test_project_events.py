"""The project's events, one signal per kind of change (core.project_events): each change announces
its kind once, a subscriber of one kind hears nothing of another, undo and redo announce what they
change, and a deleted widget is no longer called (gui.follow)."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from core.jobs import MetricPoint
from core.lifecycle import RunOutcome
from core.project import Project
from core.project_events import (ChoiceChanged, LibraryChanged, ModifiedChanged, Reset, RunChanged, RunRecorded,
                                 SettingsChanged, ShownChanged)
from core.workload import FpspFilter


class Heard:
    """Every event the project announces, as (signal name, payload), in order."""

    def __init__(self, project: Project, modified: bool = False) -> None:
        self.items: list[tuple[str, Any]] = []
        for name, signal in project.events.all().items():
            if modified or name != "modified":
                signal.connect(lambda ev, name=name: self.items.append((name, ev)))

    def take(self) -> list[tuple[str, Any]]:
        out, self.items = self.items, []
        return out


@pytest.fixture
def project(demo_engine) -> Project:
    return Project.starter()


def _users(p: Project, wid: str) -> list[str]:
    return [n for n, c in p.engines.items() if c.workload == wid]


def test_each_change_announces_its_kind_once(project):
    p = project
    heard = Heard(p)
    wid = p.add("workloads", "Sobel", FpspFilter("sobel"))
    assert heard.take() == [("workloads", LibraryChanged("workloads", wid))]
    tid = p.targets[0].id
    p.rename("targets", tid, "My chip")
    assert heard.take() == [("targets", LibraryChanged("targets", tid))]
    p.set_value("workloads", wid, FpspFilter("box3"))
    assert heard.take() == [("workloads", LibraryChanged("workloads", wid))]
    p.choose("cain", "workloads", wid)
    assert heard.take() == [("choice", ChoiceChanged("cain"))]
    p.set_setting("demo", "steps", 3)
    assert heard.take() == [("settings", SettingsChanged("demo", "steps"))]
    p.replace_settings("demo", {"steps": 4})
    assert heard.take() == [("settings", SettingsChanged("demo", None))]

    run = p.start_run("demo")
    assert heard.take() == [("run", RunChanged("demo", run.id))]
    batch = [MetricPoint("sum", 0, 1.0)]
    p.record(run.id, batch)
    got = heard.take()
    assert got == [("record", RunRecorded("demo", run.id))] and got[0][1].events == batch
    p.show("demo", run.id)
    assert heard.take() == [("shown", ShownChanged("demo", run.id))]
    p.show("demo", run.id)                              # already shown: nothing changed, nothing said
    assert heard.take() == []
    p.finish_run(run.id, RunOutcome.cancelled())
    assert heard.take() == [("run", RunChanged("demo", run.id))]
    p.set_note(run.id, "first try")
    assert heard.take() == [("run", RunChanged("demo", run.id))]
    p.delete_run(run.id)
    assert heard.take() == [("run", RunChanged("demo", run.id))]

    users = _users(p, wid)
    assert users == ["cain"]
    p.remove("workloads", wid)                          # the engine that chose it is told too
    assert heard.take() == [("workloads", LibraryChanged("workloads", wid)), ("choice", ChoiceChanged("cain"))]
    p.replace_with(Project.starter())
    assert heard.take() == [("reset", Reset())]


def test_a_subscriber_of_one_kind_hears_nothing_of_another(project):
    p = project
    calls: dict[str, int] = {name: 0 for name in p.events.all()}
    for name, signal in p.events.all().items():
        signal.connect(lambda _ev, name=name: calls.__setitem__(name, calls[name] + 1))
    p.set_setting("demo", "steps", 5)
    p.set_setting("demo", "steps", 6)
    assert {n: c for n, c in calls.items() if c} == {"settings": 2, "modified": 1}
    p.add("targets", "Another", p.targets[0].value)
    assert calls["targets"] == 1 and calls["workloads"] == 0 and calls["settings"] == 2
    assert calls["run"] == calls["record"] == calls["shown"] == calls["choice"] == calls["reset"] == 0


def test_the_library_signal_is_per_library(project):
    assert project.events.library("workloads") is project.events.workloads
    assert project.events.library("targets") is project.events.targets
    with pytest.raises(KeyError):
        project.events.library("run")


def _undo_redo(p: Project, heard: Heard) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    heard.take()
    assert p.undo()
    undone = heard.take()
    assert p.redo()
    return undone, heard.take()


@pytest.mark.parametrize("change, expected", [
    (lambda p: p.add("workloads", "Sobel", FpspFilter("sobel")),
     lambda p, r: [("workloads", LibraryChanged("workloads", r))]),
    (lambda p: p.rename("workloads", p.workloads[0].id, "Renamed"),
     lambda p, r: [("workloads", LibraryChanged("workloads", p.workloads[0].id))]),
    (lambda p: p.set_setting("demo", "steps", 2), lambda p, r: [("settings", SettingsChanged("demo", "steps"))]),
    (lambda p: p.replace_settings("demo", {"steps": 9}), lambda p, r: [("settings", SettingsChanged("demo"))]),
    (lambda p: p.choose("cain", "targets", None), lambda p, r: [("choice", ChoiceChanged("cain"))]),
], ids=["add", "rename", "setting", "settings", "choice"])
def test_undo_and_redo_announce_the_kinds_they_change(project, change: Callable[[Project], Any], expected):
    heard = Heard(project)
    result = change(project)
    want = expected(project, result)
    assert heard.take() == want
    undone, redone = _undo_redo(project, heard)
    assert undone == want and redone == want


def test_undo_of_a_deletion_announces_the_library_and_the_choices(project):
    p = project
    wid = p.choice("cain").workload
    users = _users(p, wid)
    heard = Heard(p)
    p.remove("workloads", wid)
    want = [("workloads", LibraryChanged("workloads", wid))] + [("choice", ChoiceChanged(n)) for n in users]
    assert heard.take() == want
    assert p.undo() and p.choice("cain").workload == wid
    assert heard.take() == want
    assert p.redo() and p.choice("cain").workload is None
    assert heard.take() == want


def test_undo_of_a_deleted_run_and_of_a_restored_setup(project):
    p = project
    run = p.start_run("demo")
    p.finish_run(run.id, RunOutcome.cancelled())
    heard = Heard(p)
    p.delete_run(run.id)
    assert heard.take() == [("run", RunChanged("demo", run.id))]
    undone, redone = _undo_redo(p, heard)
    assert undone == redone == [("run", RunChanged("demo", run.id))]
    p.undo()                                            # the run is back: put its setup back after a change
    p.set_setting("demo", "steps", 8)
    heard.take()
    p.restore_setup(run.id)                             # one undo step: settings (and choices, if any)
    kinds = {name for name, _ in heard.take()}
    assert kinds == {"settings"}
    undone, redone = _undo_redo(p, heard)
    assert {n for n, _ in undone} == {n for n, _ in redone} == {"settings"}


def test_modified_is_announced_only_when_it_flips(project):
    p = project
    heard = Heard(p, modified=True)
    flips = lambda: [ev.modified for name, ev in heard.take() if name == "modified"]  # noqa: E731
    p.set_setting("demo", "steps", 2)
    assert flips() == [True] and p.modified
    p.undo_stack.seal()
    p.set_setting("demo", "steps", 3)                   # a second step, still modified: said once
    assert flips() == []
    p.undo()
    assert flips() == []                                # one edit is still done
    p.undo()
    assert flips() == [False] and not p.modified
    p.redo()
    assert flips() == [True]
    p.mark_saved()
    assert flips() == [False]
    run = p.start_run("demo")                           # a run is not undoable, but it is saved
    assert flips() == [True]
    p.finish_run(run.id, RunOutcome.cancelled())
    assert flips() == []
    p.replace_with(Project.starter())
    assert flips() == [False]
    assert heard.take() == [] and ModifiedChanged(True) == ModifiedChanged(True)


# ---------------------------------------------------------------- widgets come and go
def _connected(p: Project) -> int:
    return sum(len(s) for s in p.events.all().values())


def test_a_deleted_widget_is_not_called_again(qtbot):
    import shiboken6
    from PySide6.QtWidgets import QWidget

    from gui.follow import follow

    p = Project.starter()
    before = _connected(p)
    parent = QWidget()
    child = QWidget(parent)
    calls: list[Any] = []
    follow(child, p.events.workloads, calls.append)
    follow(child, p.events.reset, calls.append)
    assert _connected(p) == before + 2
    p.add("workloads", "Sobel", FpspFilter("sobel"))
    assert len(calls) == 1
    shiboken6.delete(parent)                            # the child goes with its parent
    assert _connected(p) == before
    p.add("workloads", "Sobel again", FpspFilter("sobel"))
    p.replace_with(Project.starter())
    assert len(calls) == 1


def test_real_views_leave_no_subscription_behind(qtbot, demo_engine):
    import shiboken6

    from core.engine import get_engine
    from gui.choice_bar import ChoiceBar
    from gui.compare_view import CompareView
    from gui.panels.generic import GenericPanel
    from gui.runs_view import RunsView
    from tests.panel_context import FakeContext

    p = Project.starter()
    before = _connected(p)
    views = [ChoiceBar(p, get_engine("demo"), lambda _id: None), CompareView(p), RunsView(p, None),  # type: ignore[arg-type]
             GenericPanel(get_engine("demo"), FakeContext(project=p))]        # its settings binding too
    assert _connected(p) > before
    run = p.start_run("demo")
    p.show("demo", run.id)
    for view in views:
        shiboken6.delete(view)
    assert _connected(p) == before
    p.record(run.id, [MetricPoint("sum", 0, 1.0)])      # would reach a deleted view if still connected
    p.finish_run(run.id, RunOutcome.cancelled())
    p.set_setting("demo", "steps", 2)
    p.add("workloads", "Sobel", FpspFilter("sobel"))
    p.replace_with(Project.starter())


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

    def owners(signal: Any) -> list[Any]:
        return [getattr(s, "__self__", None) for s in signal._slots]

    built = [window.panels[name] for name in window.panels]     # every tab's panel (built when reached)
    record = owners(window.project.events.record)
    assert set(map(id, record)) == set(map(id, built))
    assert record and all(isinstance(o, EnginePanel) for o in record) and len(record) == len(window.panels)
    # a setting's change reaches the bindings and the tabs, not the choice bars, the runs view or the window
    names = {type(o).__name__ for o in owners(window.project.events.settings)}
    assert names and not names & {"ChoiceBar", "RunsView", "MainWindow", "LibraryBrowser"}
