"""The main window: tabs that say what they run, every run kept, sessions, undo, clean shutdown."""

import json
import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from core import session as sessions
from core.jobs import MetricPoint
from core.project import Project
from core.workload import FpspFilter, Scamp5Target
from window_helpers import cancel_demo_partway

V1 = Path(__file__).parent / "data" / "sessions_v1"
# Waits end when what they wait for happens; this only stops a test that hangs (an engine's process
# starts in a second or two, more on a loaded machine).
HANG_MS = 60_000


@pytest.fixture
def window(qtbot, demo_engine, monkeypatch):
    from gui.main_window import MainWindow

    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    w = MainWindow()
    w.warnings = shown
    qtbot.addWidget(w)
    w.show()
    yield w
    w.shutdown_jobs()


def _job_threads():
    return [t for t in threading.enumerate() if t.name.startswith("job-")]


def _run(window, qtbot, engine="demo", **settings):
    window.set_current_engine(engine)
    for k, v in settings.items():
        window.project.set_setting(engine, k, v)
    n = len(window.project.runs)
    window.run_current()
    qtbot.waitUntil(lambda: len(window.project.runs) > n and window.project.runs[-1].status != "running",
                    timeout=HANG_MS)
    return window.project.runs[-1]


def test_window_opens_with_engine_tabs_and_docks(window):
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert "Demo" in titles
    assert [a.text().replace("&", "") for a in window.menuBar().actions()] == ["File", "Edit", "View", "Run", "Help"]
    assert window.windowTitle().startswith("untitled")
    assert {d.windowTitle() for d in (window.library_dock, window.runs_dock, window.log_dock)} == \
        {"Library", "Runs", "Log"}


def test_each_tab_shows_what_it_runs(window):
    """The choice bar of each tab names the library items its engine will run."""
    for name, bar in window.bars.items():
        for lib, combo in bar.combos.items():
            chosen = window.project.chosen(name, lib)
            assert chosen is not None and combo.currentData() == chosen.id, (name, lib)
            request = window.project.request(name)
            value = request.workload if lib == "workloads" else request.target
            assert value == chosen.value


def test_misfit_choice_says_so_and_offers_a_fix(window, qtbot):
    bar = window.bars["cappuccino"]
    scamp = next(e for e in window.project.targets if e.kind == "scamp5")
    window.project.choose("cappuccino", "targets", scamp.id)
    assert "Mobile SoC" in bar.problem_text()
    fix = next(b for b in bar.fix_buttons if b.text().startswith("Use "))
    fix.click()
    assert bar.problem_text() == "" and window.project.chosen("cappuccino", "targets").kind == "mobile_soc"


def test_tab_switch_is_not_an_edit(window):
    for name in list(window.panels)[:4]:
        window.set_current_engine(name)
    assert not window.project.undo_stack.can_undo() and not window.isWindowModified()


def test_new_session_on_mobile_soc_tab_can_run(window):
    """Was: File > New on the Mobile SoC tab, then Run: target.kind ... got 'scamp5'."""
    window.set_current_engine("cappuccino")
    window.new_session(ask=False)
    request = window.project.request("cappuccino")
    assert request.target.kind == "mobile_soc" and window.bars["cappuccino"].problem_text() == ""


def test_streaming_job_fills_live_plot_and_cancels_fast(window, qtbot):
    """Fast, whatever the machine's load: the job would count for half an hour, and Cancel ends it at once
    (the wait's limit is only against a hang)."""
    window.set_current_engine("demo")
    panel = window.panels["demo"]
    window.project.replace_settings("demo", {"steps": 1_000_000, "delay": 0.002})
    window.run_current()
    assert window.runner.is_running("demo") and window.act_cancel.isEnabled()
    qtbot.waitUntil(lambda: len(panel.plot.series().get("sum", ([], []))[0]) > 20, timeout=HANG_MS)
    window.cancel_current()
    qtbot.waitUntil(lambda: not window.runner.is_running("demo"), timeout=HANG_MS)
    run = window.project.runs[-1]
    assert run.status == "cancelled" and run.is_partial and 20 < run.partial["best"].step < 999_999
    assert not _job_threads() and window.act_run.isEnabled()


def test_every_run_is_kept_and_a_failure_erases_nothing(window, qtbot):
    ok = _run(window, qtbot, steps=10)
    assert ok.status == "finished" and ok.result.to_json() == {"steps": 10, "sum": 45}
    assert window.panels["demo"].tree.topLevelItemCount() == 2 and window.isWindowModified()
    failed = _run(window, qtbot, steps=5, fail_at=3)
    assert failed.status == "failed" and failed.is_partial and failed.partial["best"].step == 2
    assert window.bars["demo"].shown_run == failed.id       # its partial result is on show
    assert [r.id for r in window.project.runs_of("demo")] == [ok.id, failed.id]
    window.open_run(ok.id)                                   # the earlier run is still there, whole
    assert window.bars["demo"].shown_run == ok.id and window.panels["demo"]._result.to_json() == {"steps": 10, "sum": 45}
    assert window.runs_view.model.rowCount() == 2


def test_cancelled_best_is_what_gets_saved(window, qtbot, tmp_path):
    cancel_demo_partway(window, qtbot)
    shown_best = window.project.runs[-1].partial["best"]
    path = tmp_path / "c.dfx"
    assert window.save_to(path)
    back = sessions.load(path).runs[-1]
    assert back.status == "cancelled" and back.partial["best"] == shown_best


@pytest.mark.parametrize("setting,shown,traceback_logged", [
    ("fail_at", "RuntimeError: demo failure", True),                        # a bug: the log keeps its traceback
    ("check_fails_at", "demo result disagrees with its reference", False),  # a failed self-check: message only
])
def test_engine_error_becomes_a_message(window, qtbot, setting, shown, traceback_logged):
    window.set_current_engine("demo")
    window.project.replace_settings("demo", {"steps": 5, setting: 1})
    window.run_current()
    qtbot.waitUntil(lambda: bool(window.warnings), timeout=HANG_MS)
    assert shown in window.warnings[0] and "Traceback" not in window.warnings[0]
    log = window.log_view.toPlainText()
    assert shown.split(": ")[-1] in log and ("Traceback" in log) == traceback_logged


def test_close_with_running_job_leaves_no_thread(window, qtbot):
    window.set_current_engine("demo")
    window.project.replace_settings("demo", {"steps": 1_000_000, "delay": 0.001})
    window.run_current()
    qtbot.waitUntil(lambda: bool(_job_threads()), timeout=HANG_MS)
    window.close()
    assert not _job_threads()


def test_save_open_round_trip_through_window(window, tmp_path, qtbot):
    wid = window.project.add("workloads", "edges", FpspFilter("sobel"))
    tid = window.project.add("targets", "nine", Scamp5Target(registers=9, array_size=64))
    window.project.choose("cain", "workloads", wid)
    window.project.choose("cain", "targets", tid)
    _run(window, qtbot, steps=10)
    path = tmp_path / "w.dfx"
    assert window.save_to(path)
    assert not window.isWindowModified() and window.windowTitle().startswith("w.dfx")
    saved = sessions.read_document(path)

    window.new_session(ask=False)
    assert not window.project.runs
    assert window.open_path(path, ask=False)
    assert window.project.latest("demo").result.to_json() == {"steps": 10, "sum": 45}
    assert window.project.request("cain").workload == FpspFilter("sobel")
    assert window.project.request("cain").target == Scamp5Target(registers=9, array_size=64)
    assert window.bars["cain"].combos["workloads"].currentData() == wid
    again = tmp_path / "again.dfx"
    window.save_to(again)
    a, b = sessions.read_document(again), saved
    a.pop("saved_at"), b.pop("saved_at")
    assert a == b


@pytest.mark.parametrize("content", ["{", '{"format": "dataflow-explorer-session", "version": 7}', "[]", "MISSING"])
def test_bad_file_leaves_open_session_untouched(window, tmp_path, content):
    good = tmp_path / "good.dfx"
    window.project.add("workloads", "gauss", FpspFilter("gauss5"))
    window.save_to(good)
    before = sessions.to_json(window.project)
    bad = tmp_path / "bad.dfx"
    if content == "MISSING":     # a stored result without a field: was a KeyError in a half-loaded window
        doc = json.loads((V1 / "example_session.dfx").read_text())
        del doc["engines"]["simulate"]["result"]["outputs"]
        content = json.dumps(doc)
    bad.write_text(content)
    assert not window.open_path(bad, ask=False)
    assert window.warnings and "Cannot open bad.dfx" in window.warnings[-1]
    after = sessions.to_json(window.project)
    before.pop("saved_at"), after.pop("saved_at")
    assert after == before and window.path == good


def test_kept_v1_example_opens_in_window(window):
    assert window.open_path(V1 / "example_session.dfx", ask=False)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "SCAMP-5 simulator"
    assert window.bars["cain"].shown_run == window.project.runs_of("cain")[0].id


def test_undo_restores_an_accidental_edit(window):
    tid = window.project.chosen("cain", "targets").id
    window.project.set_value("targets", tid, Scamp5Target(registers=12))
    assert window.isWindowModified() and window.act_undo.isEnabled()
    window.act_undo.trigger()
    assert window.project.request("cain").target.registers == 6 and not window.isWindowModified()
    window.act_redo.trigger()
    assert window.project.request("cain").target.registers == 12


@pytest.mark.slow
def test_screenshot_command(tmp_path, demo_engine):
    from main import main

    out = tmp_path / "shot.png"
    assert main(["--screenshot", str(out), "--tab", "demo"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_window_remembers_its_layout_and_screenshots_ignore_it(qtbot, demo_engine):
    """Splitters (the library's, a panel's), docks, geometry and the maximised state survive a restart."""
    from PySide6.QtWidgets import QSplitter

    from gui.main_window import MainWindow

    def opened(**kw):
        w = MainWindow(**kw)
        qtbot.addWidget(w)
        w.resize(1300, 850)
        w.show()
        w.set_current_engine("cain")            # a hidden tab's splitters have no sizes yet
        qtbot.wait(10)
        return w

    def cain_split(w):
        return w.panels["cain"].findChildren(QSplitter)[0]

    first = opened()
    lib, cain = first.library.splitter, cain_split(first)
    lib.setSizes([sum(lib.sizes()) - 160, 80, 80])
    cain.setSizes([150, sum(cain.sizes()) - 150])
    lib_sizes, cain_sizes = lib.sizes(), cain.sizes()
    first.log_dock.raise_()
    first.close()

    second = opened()
    assert second.library.splitter.sizes() == lib_sizes and cain_split(second).sizes() == cain_sizes
    assert not second.log_dock.visibleRegion().isEmpty() and second.runs_dock.visibleRegion().isEmpty()
    second.showMaximized()
    second.close()
    assert opened().isMaximized()

    shot = opened(restore_layout=False)         # --screenshot: the default layout, and nothing saved
    assert not shot.isMaximized() and shot.library.splitter.sizes() != lib_sizes
    shot.library.splitter.setSizes([10, 10, 500])
    shot.close()
    assert opened().isMaximized()


def test_drop_and_recent(window, tmp_path):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    path = tmp_path / "dropped.dfx"
    p = Project.starter()
    p.add("workloads", "lap", FpspFilter("laplacian"))
    sessions.save(p, path)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert window.path == path and any(e.name == "lap" for e in window.project.workloads)
    recent = [a.text() for a in window.recent_menu.actions()]
    assert str(path.resolve()) in recent


def _another_value(prop, current):
    """A different value the schema allows (None when this helper cannot pick one)."""
    if "enum" in prop:
        return next((v for v in prop["enum"] if v != current), None)
    kind = prop.get("type")
    kind = [t for t in kind if t != "null"][0] if isinstance(kind, list) else kind
    if kind == "boolean":
        return not current
    if kind in ("integer", "number") and isinstance(current, (int, float)) and not isinstance(current, bool):
        hi = prop.get("maximum", current + 10)
        step = prop.get("multipleOf", 1)
        value = current + step if current + step <= hi else current - step
        lo = prop.get("minimum", prop.get("exclusiveMinimum", value - 1) + (1e-9))
        return (int(value) if kind == "integer" else float(value)) if value >= lo else None
    return None


def test_every_engines_settings_survive_save_open_and_undo(window, tmp_path):
    """Each bound setting changed to another valid value: the widgets show it, a saved and reopened
    session holds it, and undoing every edit brings back the defaults in project and widgets."""
    project = window.project
    defaults = {n: project.settings(n) for n in window.panels}
    changed = {}
    for name, panel in window.panels.items():
        for key in panel.binding.widgets:
            new = _another_value(panel.binding.props[key].to_schema(), project.settings(name).get(key))
            if new is not None:
                project.undo_stack.seal()
                project.set_setting(name, key, new)
                changed.setdefault(name, []).append(key)
        assert panel.binding.shown() == {k: project.settings(name)[k] for k in panel.binding.widgets}, name
    assert set(changed) >= set(window.panels) - {"demo"}
    edited = {n: project.settings(n) for n in window.panels}
    path = tmp_path / "all.dfx"
    assert window.save_to(path)
    window.new_session(ask=False)
    assert {n: window.project.settings(n) for n in window.panels} == defaults
    assert window.open_path(path, ask=False)
    for name, panel in window.panels.items():
        assert window.project.settings(name) == edited[name], name
        assert panel.binding.shown() == {k: edited[name][k] for k in panel.binding.widgets}, name
    window.project.replace_with(sessions.load(path))
    for name, keys in changed.items():             # edit again, then undo every edit
        for key in keys:
            window.project.undo_stack.seal()
            window.project.set_setting(name, key, defaults[name][key])
    while window.project.undo():
        pass
    for name, panel in window.panels.items():
        assert window.project.settings(name) == edited[name], name
        assert panel.binding.shown() == {k: edited[name][k] for k in panel.binding.widgets}, name


def test_panels_draw_from_the_model_not_from_the_window(window, qtbot):
    """Events recorded into the project reach the panel showing that run, whoever records them."""
    window.set_current_engine("demo")
    project, panel = window.project, window.panels["demo"]
    run = project.start_run("demo")
    project.show("demo", run.id)
    project.record(run.id, [MetricPoint("sum", 0, 0), MetricPoint("sum", 1, 1)])
    qtbot.waitUntil(lambda: len(panel.plot.series().get("sum", ([], []))[0]) == 2, timeout=5000)
    assert window.bars["demo"].shown_run == run.id
    window.set_current_engine("cain")
    project.record(run.id, [MetricPoint("sum", 2, 3)])            # hidden: drawn when shown again
    window.set_current_engine("demo")
    qtbot.waitUntil(lambda: len(panel.plot.series().get("sum", ([], []))[0]) == 3, timeout=5000)
