"""What a new user saw on a virtual screen (issues 49/51), offscreen: a target that cannot run the
network says why in the Targets tab (not only in a tooltip), every row of the table stays above the
plots at 1366x768, the Target cost tab has no always-empty live plot and says when a run is on its
way, a unit typed into a target's field leaves no stale complaint in the status bar, and the study
dock says what its number of workers counts."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.comparison import Budgets, Comparison, ComparisonRow
from core.project import Project
from core.workload import DataflowTarget
from gui.library_dock import LibraryBrowser
from gui.targets_panel import COLUMNS, TargetsPanel
from panel_context import FakeContext, open_panel


def _comparison(n: int) -> Comparison:
    rows = [ComparisonRow(target="SCAMP-5", kind="scamp5", engine="Cain (first layer)",
                          reason="no layer runs there (conv1: reads 3 input channels)")]
    rows += [ComparisonRow(target=f"T{i}", kind="dataflow", engine="bound", reason="too big", failed=True)
             for i in range(n - 1)]
    return Comparison(network="LeNet-5", source="lenet5", macs=1000, layers=5, budgets=Budgets(), rows=rows)


def test_a_target_that_cannot_run_says_why_in_the_table_and_the_status(qtbot) -> None:
    panel = TargetsPanel(Project.starter())
    qtbot.addWidget(panel)
    panel.show_comparison(_comparison(2))
    how = COLUMNS.index("How")
    assert panel.table.item(0, how).text() == "not applicable"
    assert panel.table.item(1, how).text() == "failed"
    assert "SCAMP-5: not applicable, no layer runs there (conv1: reads 3 input channels)." in panel.status.text()
    assert "have changed since" not in panel.status.text()
    e = next(e for e in panel.project.entries("targets") if e.kind == "dataflow")     # a target edited since
    panel.project.rename("targets", e.id, "Accelerator, 256 KiB")
    assert panel.status.text().endswith("The library's targets have changed since: press Compare to cost them again.")


@pytest.mark.parametrize("width", [950, 420])     # the tab's room in a 1366x768 window; narrower: a scroll bar
def test_every_row_of_the_table_shows_at_1366x768(qtbot, width) -> None:
    panel = TargetsPanel(Project.starter())
    qtbot.addWidget(panel)
    panel.resize(width, 560)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.status.text().startswith("Pick a network and press Compare")     # a first look says what to do
    panel.show_comparison(_comparison(4))
    t = panel.table
    rows = sum(t.rowHeight(i) for i in range(t.rowCount()))
    assert t.viewport().height() >= rows
    assert panel.plots.height() >= 200          # the plots keep their room
    assert not panel.plot.getAxis("left")._tickLevels    # no bar: no stripes of empty ticks


def test_the_target_cost_tab_has_no_empty_live_plot_and_says_a_run_is_on_its_way(qtbot) -> None:
    ctx = FakeContext()
    panel = open_panel(qtbot, "cost", ctx)
    titles = [panel.tabs.tabText(i) for i in range(panel.tabs.count())]
    assert "Live plot" not in titles and titles[0] == "Layers"
    assert panel.export_plot_button.isHidden()
    run = ctx.project.start_run("cost")
    panel.show_run(run)
    assert panel.headline.text().startswith("Costing ")


def test_a_unit_typed_into_a_target_field_leaves_no_stale_complaint(qtbot) -> None:
    ctx = FakeContext()
    b = LibraryBrowser(ctx.project, ctx)
    qtbot.addWidget(b)
    tid = ctx.project.add("targets", "Accelerator, 64 KiB", DataflowTarget())
    b.select("targets", tid)
    field = b.editor.binding.widget("memory_bytes")
    field.setFocus()
    field.selectAll()
    QTest.keyClicks(field, "256 KiB")
    QTest.keyClick(field, Qt.Key.Key_Return)
    assert ctx.project.entry("targets", tid).value.memory_bytes == 256 * 1024
    assert any("cannot read" in s for s in ctx.statuses)     # said while "256 Ki" could not be read
    assert ctx.statuses[-1] == ""                            # and gone once the field reads


def test_the_study_dock_says_what_its_number_counts(qtbot) -> None:
    from core.run_controller import thread_launcher
    from gui.run_adapter import RunAdapter
    from gui.study_panel import StudyPanel

    ctx = FakeContext()
    ctx.runner = RunAdapter(ctx.project, thread_launcher)      # type: ignore[attr-defined]
    panel = StudyPanel(ctx)
    qtbot.addWidget(panel)
    panel.show()
    assert panel.workers_label.text() == "workers" and panel.workers_label.isVisible()
    panel.where.setCurrentIndex(panel.where.findData("address"))
    assert not panel.workers_label.isVisible()


def test_the_study_plots_write_in_ink_not_pyqtgraphs_faint_grey(qtbot) -> None:
    from gui.study_panel import INK, _plot_widget

    plot = _plot_widget()
    qtbot.addWidget(plot)
    plot.setLabel("left", "Latency", units="s")
    assert f"color: {INK}" in plot.getAxis("left").labelString()
    assert plot.getAxis("bottom").textPen().color().name() == INK
