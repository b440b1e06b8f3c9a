"""The hardware targets in the window: every kind's editor shows every field and opening it changes
nothing; the bound tab's cost objective is chosen with the keyboard and runs."""

import os
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from core.bound.engine import ENGINE
from core.kinds import kinds
from core.workload import CnnNetwork, DataflowTarget
from gui.library_dock import LibraryBrowser
from panel_context import FakeContext, open_panel


@pytest.fixture
def browser(qtbot):
    ctx = FakeContext()
    b = LibraryBrowser(ctx.project, ctx)
    qtbot.addWidget(b)
    return b


@pytest.mark.parametrize("kind", list(kinds("targets")))
def test_every_target_kind_opens_with_every_field_unchanged(browser, kind):
    name, item = kinds("targets")[kind].new(None)
    tid = browser.project.add("targets", name, item)
    browser.select("targets", tid)
    for key in type(item).SCHEMA["properties"]:
        assert browser.editor.binding.widget(key) is not None, key
    assert browser.project.entry("targets", tid).value == item


def _bound_tab(qtbot) -> tuple[FakeContext, Any]:
    """The bound tab with LeNet-5 on the default accelerator chosen."""
    ctx = FakeContext()
    ctx.use("bound", "workloads", "LeNet-5", CnnNetwork("lenet5"))
    ctx.use("bound", "targets", "acc", DataflowTarget())
    return ctx, open_panel(qtbot, "bound", ctx)


def test_cost_objective_by_keyboard(qtbot):
    ctx, panel = _bound_tab(qtbot)
    box = panel.objective
    assert isinstance(box, QComboBox) and box.currentText() == "least off-chip traffic"
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Down)
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.currentText() == "least latency"
    assert ctx.project.settings("bound")["objective"] == "latency"
    assert ctx.project.request("bound").settings["objective"] == "latency"


def test_the_bound_tab_shows_the_costed_totals(qtbot):
    from core.jobs import CancelToken, FinalResult

    ctx, panel = _bound_tab(qtbot)
    events = list(ENGINE.run(ctx.project.request("bound"), CancelToken()))
    assert isinstance(events[-1], FinalResult)
    r = events[-1].data
    panel.show_result(r)
    text = panel.cost_info.text()
    t = r.costing.record.total
    assert text.startswith("On the accelerator (200 MHz, 12.8 GB/s), the dataflow of the least off-chip traffic")
    assert f"{t.time_s.value / t.time_s.limit:.2f}x its limit" in text and "energy" in text
    panel.show_result(None)
    assert panel.cost_info.text() == ""
