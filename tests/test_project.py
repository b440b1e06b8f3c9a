"""The project model: library, choices, settings, runs, change events and undo/redo, without Qt."""

import pytest

from core.engine import engines
from core.errors import InputError
from core.engine import get_engine
from core.jobs import MetricPoint, PartialResult
from core.lifecycle import RunOutcome
from core.project import MAX_SERIES_POINTS, Project, summary
from core.project_events import RunRecorded, SettingsChanged, ShownChanged
from core.undo import UndoStack
from core.workload import CnnSet, FpspFilter, MobileSocTarget, Scamp5Target
from tests.demo_engine import DemoBest


@pytest.fixture
def project():
    p = Project.starter()
    p.seen = []
    for signal in p.events.all().values():
        signal.connect(p.seen.append)
    return p


def test_starter_project_lets_every_engine_run(project):
    for name in engines():
        for lib in ("workloads", "targets"):
            assert project.problem(name, lib) is None, (name, lib, project.problem(name, lib))
        project.request(name)                  # raises if it could not run
    assert all(summary(e.value) for e in project.workloads + project.targets)


def test_choice_follows_kinds_and_explains_misfits(project):
    sid = project.entry("targets", project.choice("cain").target).id
    project.choose("cappuccino", "targets", sid)     # a SCAMP-5 target for the mobile SoC engine
    why = project.problem("cappuccino", "targets")
    assert "SCAMP-5" in why and "Mobile SoC" in why
    with pytest.raises(InputError) as info:
        project.request("cappuccino")
    assert info.value.where == "target"
    assert [e.value.kind for e in project.fitting("cappuccino", "targets")] == ["mobile_soc"]
    project.undo()
    assert project.problem("cappuccino", "targets") is None


def test_settings_edits_merge_and_undo(project, monkeypatch):
    from core import undo

    # edits merge within a window of time: an endless one here, so that a loaded machine's pause
    # between the two edits cannot part them
    monkeypatch.setattr(undo, "MERGE_WINDOW_S", float("inf"))
    before = project.settings("cain")
    project.set_setting("cain", "time_s", 2.0)
    project.set_setting("cain", "time_s", 3.0)       # within the merge window: one step
    project.undo_stack.seal()
    project.set_setting("cain", "workers", 1)
    assert project.settings("cain")["time_s"] == 3.0 and len(project.undo_stack) == 2
    project.undo()
    assert project.settings("cain")["workers"] == before["workers"]
    project.undo()
    assert project.settings("cain") == before
    project.redo()
    assert project.settings("cain")["time_s"] == 3.0
    assert SettingsChanged("cain", "time_s") in project.seen


def test_library_add_rename_delete_and_undo(project):
    n = len(project.workloads)
    wid = project.add("workloads", "Sobel", FpspFilter("sobel"))
    assert project.entry("workloads", wid).name == "Sobel"
    dup = project.duplicate("workloads", wid)
    assert project.entry("workloads", dup).name == "Sobel copy" and len(project.workloads) == n + 2
    with pytest.raises(InputError, match="already named"):
        project.rename("workloads", dup, "Sobel")
    project.choose("cain", "workloads", wid)
    project.remove("workloads", wid)
    assert project.choice("cain").workload is None and "pick one" in project.problem("cain", "workloads")
    project.undo()                                   # the item and the choice come back together
    assert project.choice("cain").workload == wid and project.entry("workloads", wid) is not None
    with project.macro("two edits"):
        project.rename("workloads", wid, "Edges")
        project.set_value("workloads", wid, FpspFilter("laplacian"))
    project.undo()
    assert project.entry("workloads", wid).name == "Sobel" and project.entry("workloads", wid).value == FpspFilter("sobel")
    with pytest.raises(InputError):
        project.add("workloads", "x", Scamp5Target())     # a target is not a workload


def test_tab_switches_are_not_edits(project):
    project.view["current_engine"] = "bound"
    assert not project.modified and not project.undo_stack.can_undo()


def _run(project, engine, outcome, events=()):
    run = project.start_run(engine)
    project.record(run.id, list(events))
    return project.finish_run(run.id, outcome)


def test_every_run_is_kept_and_failures_keep_partial_results(demo_engine):
    p = Project.starter()
    done = RunOutcome.from_json({"status": "finished", "result": {"steps": 3, "sum": 3}}, get_engine("demo"))
    ok = _run(p, "demo", done, [MetricPoint("sum", 1, 1)])
    p.set_setting("demo", "steps", 5)
    failed = _run(p, "demo", RunOutcome.failed(RuntimeError("boom")),
                  [MetricPoint("sum", 1, 1), PartialResult("best", DemoBest(sum=7, step=1))])
    cancelled = _run(p, "demo", RunOutcome.cancelled())
    assert [r.status for r in p.runs] == ["finished", "failed", "cancelled"]
    assert (ok.result.steps, ok.result.sum) == (3, 3) and ok.settings == {"steps": 10}
    assert failed.is_partial and failed.partial == {"best": DemoBest(sum=7, step=1)} and failed.settings == {"steps": 5}
    assert not cancelled.is_partial and p.latest("demo") is ok
    assert p.modified
    p.delete_run(ok.id)
    assert p.latest("demo") is None
    p.undo()
    assert p.latest("demo") is ok and p.runs.index(ok) == 0


def test_result_not_matching_its_type_fails_the_run(project):
    run = project.start_run("cain")
    r = project.finish_run(run.id, RunOutcome.from_json({"status": "finished", "result": {"not": "a cain result"}}, get_engine("cain")))
    assert r.status == "failed" and "does not match its type" in r.error and r.partial["result"]


def test_series_are_thinned_not_cut(demo_engine):
    p = Project.starter()
    run = p.start_run("demo")
    p.record(run.id, [MetricPoint("s", i, i) for i in range(3 * MAX_SERIES_POINTS)])
    pts = run.series["main"]["s"]
    assert len(pts) <= MAX_SERIES_POINTS + 1 and pts[0] == [0.0, 0.0] and pts[-1][0] == 3 * MAX_SERIES_POINTS - 1


def test_restore_setup_brings_back_edited_or_deleted_items(project):
    wid = project.add("workloads", "Mine", CnnSet(["lenet5"]))
    project.choose("fcnnx", "workloads", wid)
    run = project.start_run("fcnnx")
    project.finish_run(run.id, RunOutcome.cancelled())
    project.set_value("workloads", wid, CnnSet(["vgg16"]))
    project.set_setting("fcnnx", "objective", "throughput")
    project.restore_setup(run.id)
    chosen = project.chosen("fcnnx", "workloads")
    assert chosen.value == CnnSet(["lenet5"]) and chosen.id != wid and "Mine" in chosen.name
    assert project.settings("fcnnx") == run.settings
    project.undo()                                     # one step
    assert project.chosen("fcnnx", "workloads").id == wid and project.settings("fcnnx")["objective"] == "throughput"


def test_undo_stack_clean_state_and_redo_tail():
    st = UndoStack()
    box = []
    from core.undo import Command

    st.push(Command("a", lambda: box.append(1), lambda: box.pop()))
    st.set_clean()
    st.push(Command("b", lambda: box.append(2), lambda: box.pop()))
    assert not st.is_clean() and st.undo_text() == "b"
    st.undo()
    assert st.is_clean() and box == [1]
    st.push(Command("c", lambda: box.append(3), lambda: box.pop()))   # drops the redo of b
    assert not st.can_redo() and box == [1, 3]


def test_mobile_target_values_are_kept(project):
    tid = project.add("targets", "wide", MobileSocTarget(4, 32))
    assert project.entry("targets", tid).value.vector_width == 32


def test_run_ids_are_never_reused(demo_engine):
    p = Project.starter()
    a = p.start_run("demo")
    b = p.start_run("demo")
    p.delete_run(b.id)
    c = p.start_run("demo")
    p.undo()                                   # b comes back beside c
    assert len({r.id for r in p.runs}) == 3 and c.id not in (a.id, b.id)


def test_recording_announces_the_batch_and_the_shown_run_is_view_state(demo_engine, tmp_path):
    from core import session

    p = Project.starter()
    run = p.start_run("demo")
    seen: list[object] = []
    for signal in (p.events.shown, p.events.record):
        signal.connect(seen.append)
    steps = len(p.undo_stack._commands)
    p.show("demo", run.id)
    batch = [MetricPoint("sum", 0, 0), PartialResult("best", DemoBest(sum=0, step=0))]
    p.record(run.id, batch)
    assert seen[0] == ShownChanged("demo", run.id)
    assert isinstance(seen[1], RunRecorded) and seen[1].events == batch and seen[1].id == run.id
    assert p.shown("demo") is run and len(p.undo_stack._commands) == steps     # not an edit
    p.finish_run(run.id, RunOutcome.cancelled())
    path = tmp_path / "s.dfx"
    session.save(p, path)
    assert session.load(path).shown("demo").id == run.id       # which run a tab shows is saved
    p.delete_run(run.id)
    assert p.shown("demo") is None
    with pytest.raises(KeyError):
        p.show("demo", "r99")
