"""The Targets tab of the main window (gui/targets_panel.py mounted by gui/main_window.py), offscreen:
a comparison fills the table, Cancel stops its parts, the window's close ends it, the table exports
as CSV and the bars as PNG/SVG. The parts run on threads of the test's process (the window's
controller given the thread launcher), so the held parts below see the test's costings."""

from __future__ import annotations

import csv
import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from core import comparison
from core.comparison import METRICS, Costing
from core.comparison_run import compare
from core.errors import InputError

HANG_MS = 60_000        # only stops a test that hangs


@pytest.fixture
def window(qtbot):
    """A main window on the starter project less SCAMP-5 (a Cain search takes half a minute)."""
    from tests.window_helpers import comparison_window

    with comparison_window(qtbot, lambda e: e.kind != "scamp5") as w:
        yield w


def _click(button) -> None:
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def test_the_targets_tab_follows_the_engine_tabs(window) -> None:
    i = window.tabs.indexOf(window.targets_panel)
    assert i == len(window.panels) and window.tabs.tabText(i) == "Targets"
    window.tabs.setCurrentIndex(i)
    assert window.current_engine() is None          # not an engine: Run (F5) has nothing to run here


def test_a_comparison_fills_the_table_and_exports(window, qtbot, tmp_path, monkeypatch) -> None:
    panel = window.targets_panel
    window.tabs.setCurrentWidget(panel)
    panel.network.setFocus()
    QTest.keyClicks(panel.network, "LeNet")
    assert panel.network.currentData() == "lenet5"
    assert not panel.export_table_button.isEnabled()        # nothing to export yet
    _click(panel.run_button)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=HANG_MS)
    c = panel.comparison
    names = [e.name for e in window.project.entries("targets")]
    assert not c.cancelled and [r.target for r in c.rows] == names and panel.table.rowCount() == len(names)

    out = tmp_path / "targets.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), "CSV (*.csv)"))
    _click(panel.export_table_button)
    rows = list(csv.DictReader(out.open()))
    assert [r["target"] for r in rows] == names
    for r, row in zip(rows, c.rows):
        for k in METRICS:
            m = row.metrics()[k]
            assert (float(r[f"{k} ({comparison_units()[k]})"]) if r[f"{k} ({comparison_units()[k]})"] else None) \
                == m.value
            assert r[f"{k} how"] == m.how and r[f"{k} how"] in ("measured", "modelled", "mixed")
            if m.limit is not None:
                assert float(r[f"{k} limit ({comparison_units()[k]})"]) == m.limit
                assert r[f"{k} % of limit"] != ""
        assert float(r["MACs run (%)"]) == pytest.approx(100 * row.covered_macs / c.macs, rel=1e-3)

    for suffix in ("png", "svg"):
        pic = tmp_path / f"bars.{suffix}"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, pic=pic, **k: (str(pic), ""))
        _click(panel.export_plot_button)
        assert pic.stat().st_size > 0
    assert "<svg" in (tmp_path / "bars.svg").read_text()


def comparison_units() -> dict[str, str]:
    from core.comparison_cli import UNITS

    return UNITS


@pytest.fixture
def held_parts(monkeypatch):
    """Every target's costing replaced by one that holds its part until `go` is set, then refuses
    the network (a row with a reason): parts are counted, nothing is timed."""
    started, go = threading.Event(), threading.Event()
    calls: list[str] = []

    def cost(_source, target, _budgets):
        calls.append(target.kind)
        started.set()
        go.wait(HANG_MS / 1000)
        raise InputError("held by the test")

    kinds = {"dataflow", "fpga", "cpu", "gpu", "mobile_soc", "scamp5"}
    monkeypatch.setattr(comparison, "costings", lambda: {k: Costing(k, "held", cost) for k in kinds})
    yield started, go, calls
    go.set()


def test_cancel_stops_every_part(window, qtbot, held_parts) -> None:
    started, go, calls = held_parts
    panel = window.targets_panel
    panel.workers = 1                               # one part at a time: the rest wait their turn
    n = len(panel.targets())
    assert n >= 2
    _click(panel.run_button)
    qtbot.waitUntil(started.is_set, timeout=HANG_MS)
    assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    cid = panel.current.id
    parts = [r for r in window.project.runs if r.parent == cid]
    assert [r.status for r in parts] == ["running"]         # the one part started: running in the Runs table
    _click(panel.cancel_button)
    go.set()
    qtbot.waitUntil(lambda: panel.run_button.isEnabled(), timeout=HANG_MS)
    c = panel.comparison
    assert c is not None and c.cancelled and len(calls) == 1 and c.rows == []
    # the running part was stopped (kept, as cancelled), the queued ones never ran
    assert [r.status for r in window.project.runs if r.parent == cid] == ["cancelled"]
    assert not window.runner.controller.busy() and window.runner.controller.group_progress(cid) == (n, n)
    assert panel.table.rowCount() == 0 and panel.status.text().startswith("Cancelled")
    assert not panel.cancel_button.isEnabled()


def test_closing_the_window_ends_a_comparison(window, qtbot, held_parts) -> None:
    started, go, calls = held_parts
    panel = window.targets_panel
    panel.workers = 1
    _click(panel.run_button)
    qtbot.waitUntil(started.is_set, timeout=HANG_MS)
    assert panel.shutdown(wait_s=0) is False        # the part in flight is still held
    go.set()
    window.interactive = True                       # the unsaved-changes question: Discard (conftest)
    assert window.close()                           # cancels, and waits for that part
    assert not panel.running() and len(calls) == 1 and not window.runner.controller.busy()


def test_a_comparison_cancelled_before_it_starts_runs_no_part(held_parts) -> None:
    _started, _go, calls = held_parts
    c = compare("lenet5", comparison.default_targets(), cancelled=lambda: True)
    assert c.cancelled and c.rows == [] and calls == [] and c.to_json()["cancelled"] is True


def test_a_panel_deleted_mid_comparison_is_never_written_to(qtbot, held_parts) -> None:
    """The panel owns no thread: a part runs on its controller's handle, which only fills a queue;
    deleting the panel while a part runs (a test's end, a window torn down) cancels its parts,
    neither crashes the process nor lets a further part start."""
    import shiboken6

    from core.project import Project
    from gui.targets_panel import TargetsPanel

    started, go, calls = held_parts
    project = Project.starter()
    panel = TargetsPanel(project)
    panel.workers = 1
    controller = panel.runner.controller
    _click(panel.run_button)
    qtbot.waitUntil(started.is_set, timeout=HANG_MS)
    (job,) = controller.running()
    shiboken6.delete(panel)                         # the C++ side goes now (its adapter and timer with it)
    assert controller.queued() == []                # deleting the panel cancelled the parts still waiting
    go.set()
    assert job.handle is not None and job.handle.wait(HANG_MS / 1000)
    qtbot.wait(200)                                 # nothing polls a freed panel's controller
    assert len(calls) == 1
    controller.shutdown()                           # recorded now: the part that ran, cancelled
    assert not controller.busy() and project.run(job.run_id).status == "cancelled"
