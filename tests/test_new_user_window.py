"""The window looked at as a new user (issues 49 and 51): Undo keeps its width so Run never moves, a
study run names its network, a comparison's part that cannot run its target reads "not applicable",
and the Pareto pickers show metrics by title and unit."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.compare import NOT_APPLICABLE, headline_text, run_row
from core.comparison import targets_of_kinds
from core.comparison_run import compare
from core.project import Project
from core.study import spec as study_spec
from tests.test_comparison_runs import Fakes, fakes  # noqa: F401  (the fixture)
from tests.window_helpers import settle


@pytest.fixture
def window(qtbot):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    w.interactive = False
    qtbot.addWidget(w)
    w.resize(1366, 768)
    w.show()
    settle()
    yield w
    w.shutdown_jobs()


def test_undo_keeps_its_width_and_run_does_not_move_after_an_edit(window, qtbot) -> None:
    from PySide6.QtWidgets import QToolBar

    tb = window.findChild(QToolBar, "main-toolbar")
    undo, run = tb.widgetForAction(window.act_undo), tb.widgetForAction(window.act_run)
    before = (undo.width(), run.mapTo(window, run.rect().topLeft()))
    long = "Change the settings of a very long named engine with many words in it"
    window.project.replace_settings("demo", {"steps": 7}, text=long)
    settle()
    assert window.act_undo.isEnabled()
    assert (undo.width(), run.mapTo(window, run.rect().topLeft())) == before
    assert window.act_undo.toolTip() == f"Undo {long}"                  # the whole text where it is elided
    shown = window.act_undo.iconText()
    assert shown.startswith("Undo") and shown != f"Undo {long}"
    assert undo.fontMetrics().horizontalAdvance(shown) <= undo.width()
    QTest.mouseClick(undo, Qt.MouseButton.LeftButton)                   # the click lands on Undo, and undoes
    settle()
    assert not window.act_undo.isEnabled() and run.mapTo(window, run.rect().topLeft()) == before[1]


def test_a_study_run_names_its_network_not_cnn() -> None:
    for network, title in (("lenet5", "LeNet-5"), ("resnet18", "ResNet-18")):
        study = study_spec.from_json({
            "name": "x", "engine": "cost", "workload": {"kind": "cnn", "network": network},
            "target": {"kind": "dataflow"}, "axes": [{"param": "target.memory_bytes", "values": ["1 KiB"]}]})
        assert study.workload_name == title
        assert {p.workload_name for p in study.points} == {title}


def test_a_part_that_cannot_run_its_target_reads_not_applicable(fakes: Fakes) -> None:  # noqa: F811
    from gui.runs_view import KEYS, RunsModel

    fakes.refuse = {"scamp5"}
    project = Project()
    c = compare("resnet18", targets_of_kinds(["scamp5", "gpu"]), project=project)
    refused, fine = (project.run(r.run_id) for r in c.rows)
    row = run_row(refused)
    assert row["metric_label"] == "Latency" and row["value_text"] == NOT_APPLICABLE
    assert "Latency: not applicable" in headline_text(refused) and refused.result.reason in headline_text(refused)
    assert run_row(fine)["value_text"] not in ("", NOT_APPLICABLE)

    model = RunsModel(project)
    i = model.row_of(refused.id)
    cell = model.index(i, KEYS.index("value"))
    assert model.data(cell) == NOT_APPLICABLE
    assert refused.result.reason in model.data(cell, Qt.ItemDataRole.ToolTipRole)


def test_pareto_pickers_show_titles_with_units_and_keep_the_key(window, tmp_path, monkeypatch) -> None:
    import json

    from tests.test_study_targets import SWEEP

    panel = window.study_panel
    monkeypatch.setattr(panel, "results_path", lambda _study: tmp_path / "p.results.jsonl")
    panel.editor.setPlainText(json.dumps(SWEEP))
    panel.check()
    assert panel.study is not None
    items = [(panel.pareto_x.itemText(i), panel.pareto_x.itemData(i)) for i in range(panel.pareto_x.count())]
    assert items == [("Energy (J)", "energy_j"), ("Latency (s)", "latency_s"), ("Off-chip traffic (B)", "offchip_bytes")]
    panel.pareto_y.setCurrentIndex(2)
    assert panel.pareto_y.currentData() == "offchip_bytes"
    assert panel.pareto.getPlotItem().getAxis("left").labelText == "Off-chip traffic"


def test_a_bottom_dock_takes_half_a_small_screen_and_the_tabs_scroll(qtbot) -> None:
    from PySide6.QtWidgets import QScrollArea

    from tests.test_no_clipped_text import combo_problems, tab_problems
    from tests.window_helpers import example_window

    w = example_window(qtbot, (1366, 768))
    try:
        settle()
        w.study_dock.raise_()
        w.resizeDocks([w.study_dock], [384], Qt.Orientation.Vertical)
        settle()
        assert w.study_dock.height() >= 300, w.tabs.minimumSizeHint()
        for name in ("simulate", "merit", "cappuccino", "bound"):   # the tallest tabs once held the docks small
            w.set_current_engine(name)
            settle()
            panel = w.panels[name]
            scroller = panel.findChild(QScrollArea)
            assert scroller is not None and scroller.widget() is panel.content
            content, bar = panel.content, scroller.verticalScrollBar()
            assert content.height() >= content.minimumSizeHint().height()    # squeezed nowhere: it scrolls
            assert bar.maximum() > 0
            bar.setValue(bar.maximum())                     # the last row comes into view
            settle()
            button = panel.export_json_button
            bottom = button.mapTo(scroller.viewport(), button.rect().bottomLeft()).y()
            assert 0 <= bottom <= scroller.viewport().height()
            assert not tab_problems(w.tabs) and not combo_problems(w.tabs, popups=False)
    finally:
        w.shutdown_jobs()
