"""The Targets tab and the library as a user reads them (issue 51, looked at on a virtual screen):
a conv-layers workload's status line reads like a network's, the Engine column names each engine
by its tab's title (a kept part of an older session too; the JSON keeps the engine's name beside
the title), nothing moved against a limit of nothing reads as at its limit, and a library item's
summary says names and titles, never a registry key ("zoo vgg16", "zc706")."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core import comparison
from core.bound.shapes import parse_layer_spec
from core.comparison import Budgets, Comparison, ComparisonRow, Costing, costings, workload_words
from core.comparison_cli import cell, format_table
from core.cost import Figure
from core.engine import engines
from core.errors import InputError
from core.layer_source import layers_source
from core.numbers import format_number
from core.project import Project, summary
from core.target_cost.result import TargetCostResult
from core.workload import CnnNetwork, CnnSet, ConvLayers, FpgaTarget, MeritTransformWorkload
from gui.library_dock import LibraryBrowser
from gui.targets_panel import COLUMNS, LEGEND_H, PLOTS_MIN_H, ROOFLINE_FRAME_H, TargetsPanel
from panel_context import FakeContext

SPECS = ["name=wide,Ci=16,Hi=28,Wi=28,Co=32,kernel=3,pad=1", "name=fc,Ci=256,Co=10"]
HANG_MS = 60_000        # only stops a test that hangs


def _panel(qtbot, size: tuple[int, int] | None = None) -> TargetsPanel:
    """A Targets panel on the starter project, shown at `size` when given."""
    panel = TargetsPanel(Project.starter())
    qtbot.addWidget(panel)
    if size is not None:
        panel.resize(*size)
        panel.show()
        qtbot.waitExposed(panel)
    return panel


def _record(times: list[float], offchip_lower: float = 1.0, macs: int = 1000):
    """A sound cost record of layers l0, l1, ... taking `times` seconds each."""
    from core.cost import Ceilings, CostRecord, layer_cost

    c = Ceilings(peak_macs_per_s=1e9, bandwidth_bytes_per_s=1e9)
    return CostRecord.of("fake", c, [layer_cost(f"l{i}", macs, c, offchip_lower, time_s=t, offchip_bytes=1e3,
                                                energy_j=None) for i, t in enumerate(times)])


def _show(panel: TargetsPanel, rows: list[ComparisonRow], macs: int = 1000, layers: int = 5) -> None:
    panel.show_comparison(Comparison(network="LeNet-5", source="lenet5", macs=macs, layers=layers,
                                     budgets=Budgets(), rows=rows))


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("DATAFLOW_EXPLORER_CACHE", str(folder))
    return folder


# ---------------------------------------------------------------- the status line
def test_a_conv_layers_status_line_reads_like_a_networks(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_source, _target, _budgets):
        raise InputError("held by the test")

    monkeypatch.setattr(comparison, "costings", lambda: {k: Costing(k, "fake", refuse) for k in ("dataflow", "cpu")})
    project = Project.starter()
    for e in list(project.entries("targets")):
        if e.kind not in ("dataflow", "cpu"):
            project.remove("targets", e.id)
    project.add("workloads", "Two layers", ConvLayers(list(SPECS)))
    panel = TargetsPanel(project)
    qtbot.addWidget(panel)
    panel.network.setFocus()
    QTest.keyClicks(panel.network, "Two layers")            # picked as a person does
    assert panel.network.currentText() == "Two layers (conv layers)"
    QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=HANG_MS)
    macs = format_number(sum(parse_layer_spec(s).macs for s in SPECS), "MACs")
    text = panel.status.text()
    assert text.startswith(f"2 conv layers (wide, fc), each costed on its own: {macs} in all, on 2 targets; "), text
    assert "layers:" not in text and ": 2 layers" not in text and "(s)" not in text and "GMACs" not in text
    panel.shutdown()


def test_a_networks_status_line_counts_in_words() -> None:
    c = Comparison(network="LeNet-5", source="lenet5", macs=2_300_000, layers=5, budgets=Budgets(), rows=[])
    assert workload_words(c) == "LeNet-5: 5 layers, 2.3 million MACs"
    one = Comparison(network="1 conv layer (wide)", source=layers_source(SPECS[:1]), macs=10, layers=1,
                     budgets=Budgets(), rows=[])
    assert workload_words(one) == "1 conv layer (wide), costed on its own: 10 MACs"


# ---------------------------------------------------------------- the engine column
def test_the_engine_column_names_each_engine_by_its_tab(qtbot) -> None:
    titles = {name: spec.title for name, spec in engines().items()}
    got = costings()
    assert got["dataflow"].engine == "Communication bounds (optimal dataflow)"
    assert got["scamp5"].engine == "FPSP code search (Cain, first layer)"
    for c in got.values():          # each starts with its engine's tab title, never its code name
        assert c.engine_key in titles and c.engine.startswith(titles[c.engine_key].rstrip(")")), c.engine
    row = ComparisonRow(target="Accelerator, 64 KiB", kind="dataflow", engine=got["dataflow"].engine,
                        reason="too big")
    panel = _panel(qtbot)
    _show(panel, [row])
    assert panel.table.item(0, COLUMNS.index("Engine")).text() == "Communication bounds (optimal dataflow)"
    # the command line's table says the same; its JSON keeps the engine's name, the title beside it
    assert "Communication bounds (optimal dataflow)" in format_table(panel.comparison)
    d = row.to_json()
    assert d["engine"] == "bound" and d["engine_title"] == "Communication bounds (optimal dataflow)"


def test_a_part_kept_by_an_older_session_says_its_engine_in_todays_words() -> None:
    old = TargetCostResult(network="LeNet-5", source="lenet5", macs=1, target="Accelerator", kind="dataflow",
                           engine="bound (optimal dataflow)", note="", reason="too big")
    assert old.row().engine == "Communication bounds (optimal dataflow)"


def test_nothing_moved_against_a_limit_of_nothing_is_at_its_limit() -> None:
    m = comparison._metric(Figure(value=0.0, limit=0.0, how="modelled"))
    assert m.pct_of_limit == 100.0 and cell(m, "offchip_bytes", False) == "0 B (0 B, 100%)"


# ---------------------------------------------------------------- library summaries
@pytest.mark.parametrize("value, words", [
    (CnnNetwork("vgg16"), "VGG-16 (zoo)"),
    (CnnNetwork("resnet18"), "ResNet-18 (zoo)"),
    (CnnSet(["zfnet", "scenelabel", "vgg16"]), "ZFNet, SceneLabelCNN, VGG-16"),
    (MeritTransformWorkload("conv3x3"), "built-in: 3x3 convolution (Fig. 6 example)"),
    (FpgaTarget(), "ZC706, 1 GB/s"),
    (ConvLayers(["Ci=1,Co=2"]), "1 conv layer"),
])
def test_a_library_summary_says_names_not_keys(value, words) -> None:
    assert summary(value) == words


def test_the_library_lists_say_names_and_follow_what_is_typed(qtbot) -> None:
    ctx = FakeContext()
    browser = LibraryBrowser(ctx.project, ctx)
    qtbot.addWidget(browser)
    for lib in ("workloads", "targets"):
        tree = browser.trees[lib]
        texts = [tree.topLevelItem(i).text(2) for i in range(tree.topLevelItemCount())]
        for text in texts:
            assert "(s)" not in text and not text.startswith("zoo ") and "zc706" not in text, text
    wid = ctx.project.add("workloads", "Layers", ConvLayers(["Ci=1,Co=2"]))
    browser.select("workloads", wid)
    editor = browser.editor
    assert editor is not None
    editor.text.setFocus()
    editor.text.moveCursor(editor.text.textCursor().MoveOperation.End)
    QTest.keyClick(editor.text, Qt.Key.Key_Return)
    QTest.keyClicks(editor.text, "name=wide,Ci=16,Hi=28,Wi=28,Co=32,kernel=3")
    tree = browser.trees["workloads"]
    row = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount()) if tree.topLevelItem(i).text(0) == "Layers")
    assert row.text(2) == "2 conv layers (wide)"


# ---------------------------------------------------------------- room on a short tab
def test_a_comparison_shown_while_the_tab_is_hidden_shows_every_row_once_the_tab_shows(qtbot) -> None:
    """A session opened fills the Targets tab while another tab is on show: once it shows, every
    target's row is above the plots (it was one row short, a scroll bar beside)."""
    rows = [ComparisonRow(target=f"T{i}", kind="dataflow", engine="E", reason="too big") for i in range(6)]
    panel = _panel(qtbot)
    panel.resize(1500, 700)
    _show(panel, rows)
    panel.show()
    qtbot.waitExposed(panel)
    t = panel.table
    assert t.viewport().height() >= sum(t.rowHeight(i) for i in range(t.rowCount()))


def test_a_short_tab_scrolls_rather_than_hiding_rows_under_the_plots(qtbot) -> None:
    """1366x768 with the Runs dock, the window made smaller after a comparison: the tab's table and
    plots scroll, every row of the six targets whole and the plots keeping their share (it showed
    two rows)."""
    panel = _panel(qtbot, (950, 900))
    _show(panel, [ComparisonRow(target=f"T{i}", kind="dataflow", engine="E", reason="too big") for i in range(6)])
    panel.resize(950, 330)                  # the window made smaller afterwards
    qtbot.waitUntil(lambda: panel.scroller.verticalScrollBar().maximum() > 0, timeout=60_000)   # only stops a hang: it ends when the bar appears
    t = panel.table
    assert t.viewport().height() >= sum(t.rowHeight(i) for i in range(t.rowCount()))
    assert panel.plots.height() >= max(PLOTS_MIN_H, 0.35 * panel.split.height())


def test_a_deleted_or_failed_parts_share_of_the_macs_is_not_said_to_be_nothing(qtbot) -> None:
    from core.comparison_run import DELETED_REASON

    rows = [ComparisonRow(target="Gone", kind="fpga", engine="E", reason=DELETED_REASON, deleted=True),
            ComparisonRow(target="Broke", kind="cpu", engine="E", reason="the costing failed", failed=True),
            ComparisonRow(target="SCAMP-5", kind="scamp5", engine="E", reason="reads 3 input channels")]
    panel = _panel(qtbot)
    _show(panel, rows)
    col = COLUMNS.index("MACs run")
    assert [panel.table.item(i, col).text() for i in range(3)] == ["-", "-", "0%"]
    lines = format_table(panel.comparison).splitlines()
    assert [next(l for l in lines if l.startswith(r.target)).rstrip().endswith(end) for r, end in
            zip(rows, ["-", "-", "0%"])] == [True, True, True]


def test_six_targets_bars_keep_room_for_their_names_on_a_short_tab(qtbot) -> None:
    """1366x768: the table's six rows fitted, the time bars got some 60 px and the targets' names
    beside them overlapped; now the plots keep room for each bar (the tab scrolls instead)."""
    record = _record([1.0, 1.0, 1.0], offchip_lower=0.0)
    panel = _panel(qtbot, (950, 380))
    _show(panel, [ComparisonRow(target=f"Target number {i}", kind="dataflow", engine="E", record=record,
                                covered_macs=3000) for i in range(6)], macs=3000, layers=3)
    qtbot.wait(20)
    assert panel.bars == 6
    view = panel.plot.getViewBox().sceneBoundingRect()
    line = panel.fontMetrics().height()
    assert view.height() / panel.bars >= line, (view.height(), line)     # a name's height per bar at least
    t = panel.table
    assert t.viewport().height() >= sum(t.rowHeight(i) for i in range(t.rowCount()))


def test_the_roofline_on_show_keeps_room_for_its_legend_on_a_short_tab(qtbot) -> None:
    """1366x768: five targets' legend lines in a 160 px roofline hid its axis' words; the roofline
    on show keeps a legend line's room a target (the tab scrolls), the bars keep theirs otherwise."""
    record = _record([1.0])
    panel = _panel(qtbot, (950, 380))
    _show(panel, [ComparisonRow(target=f"Target {i}", kind="dataflow", engine="E", record=record, covered_macs=1000)
                  for i in range(6)], layers=1)
    assert len(panel.roofline_items) == 6
    bars = panel.split.minimumHeight()
    QTest.mouseClick(panel.plots.tabBar(), Qt.MouseButton.LeftButton,
                     pos=panel.plots.tabBar().tabRect(panel.plots.indexOf(panel.roofline)).center())
    assert panel.plots.currentWidget() is panel.roofline
    qtbot.wait(20)
    assert panel.split.minimumHeight() > bars
    assert panel.plots.height() >= 6 * LEGEND_H + ROOFLINE_FRAME_H, (panel.split.sizes(), panel.split.height())


# ---------------------------------------------------------------- what the plots and status say
def test_a_target_that_runs_part_of_the_network_says_which_layers_its_figures_leave_out(qtbot) -> None:
    from dataclasses import replace

    from core.cost import CostRecord, not_applicable

    ran = _record([1.0], macs=900)
    record = CostRecord.of("fake", ran.ceilings, [replace(ran.layers[0], name="conv1"),
                                                  not_applicable("fc", 100, "past the feature extractor")])
    panel = _panel(qtbot)
    _show(panel, [ComparisonRow(target="ZC706 at 1 GB/s", kind="fpga", engine="E", record=record, covered_macs=900)],
          layers=2)
    assert ("ZC706 at 1 GB/s: 1 layer not run (fc: past the feature extractor), left out of its figures."
            in panel.status.text())
    assert panel.table.item(0, COLUMNS.index("MACs run")).text() == "90%"


def test_a_bars_layer_under_the_pointer_is_named_in_the_tooltip(qtbot) -> None:
    """The bars' colours name no layer: the pointer over one says its target, layer and time."""
    from PySide6.QtCore import QPointF

    panel = _panel(qtbot, (1200, 800))
    _show(panel, [ComparisonRow(target="Accelerator", kind="dataflow", engine="E", record=_record([0.003, 0.001]),
                                covered_macs=2000)], macs=2000, layers=2)
    qtbot.wait(20)
    view = panel.plot.getViewBox()
    panel._bar_hovered(panel.plot, view.mapViewToScene(QPointF(85.0, 0.0)))       # l1: 75 % .. 100 %
    assert panel.plot.toolTip().startswith("Accelerator, l1: 1 ms, 25% of its total")
    panel._bar_hovered(panel.plot, view.mapViewToScene(QPointF(85.0, -0.5)))      # between bars: nothing
    assert panel.plot.toolTip() == ""


def test_the_target_cost_tab_says_which_engine_costed_a_part_without_nested_brackets(qtbot) -> None:
    from panel_context import open_panel

    panel = open_panel(qtbot, "cost")
    old = TargetCostResult(network="LeNet-5", source="lenet5", macs=1, target="Accelerator", kind="dataflow",
                           engine="bound (optimal dataflow)", note="", reason="too big")   # an older session's
    panel.show_result(old)
    assert panel.headline.text() == ("LeNet-5 on Accelerator, costed by Communication bounds (optimal dataflow): "
                                     "not run there: too big")


def test_the_command_lines_table_counts_a_networks_macs_in_words() -> None:
    c = Comparison(network="LeNet-5", source="lenet5", macs=2_293_000, layers=4, budgets=Budgets(), rows=[])
    assert format_table(c).splitlines()[0].startswith("LeNet-5 (lenet5): 4 conv/fc layers, 2.293 million MACs;")
