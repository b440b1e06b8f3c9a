"""The mobile SoC's FMA issue field in the target editor (issue 50): shown with its unit and source,
typed by a person, stored as typed, undone."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.workload import MobileSocTarget
from gui.library_dock import LibraryBrowser
from panel_context import FakeContext
from test_typing_fields import type_into


def test_typing_the_fma_issue_stores_it_and_undo_restores_it(qtbot):
    ctx = FakeContext()
    b = LibraryBrowser(ctx.project, ctx)
    qtbot.addWidget(b)
    tid = b.project.add("targets", "wide SoC", MobileSocTarget(vector_width=16))
    b.select("targets", tid)
    w = b.editor.binding.widget("fma_per_cycle")
    assert w.value() == 2 and "/cycle" in w.suffix() and "Zen 4" in w.toolTip()
    type_into(w, "1")
    QTest.keyClick(w, Qt.Key.Key_Return)
    assert b.project.entry("targets", tid).value.fma_per_cycle == 1
    b.project.undo()
    assert b.project.entry("targets", tid).value.fma_per_cycle == 2 and w.value() == 2
