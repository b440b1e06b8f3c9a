"""f-CNNx's "Target fps" field reads as a person writes numbers (issue 49): 1e9 typed stays "1e9",
never "1000000000.0"; 25 reads "25", not "25.0". Typed key by key, as a person does."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.numbers import editable_text
from tests.panel_context import FakeContext, open_panel


@pytest.mark.parametrize("typed,stored", [("1e9", [1e9]), ("25, 30.5", [25.0, 30.5]), ("1000000000", [1e9])])
def test_target_fps_keeps_what_a_person_typed(qtbot, typed, stored):
    ctx = FakeContext()
    panel = open_panel(qtbot, "fcnnx", ctx)
    w = panel.binding.widgets["targets"][0]
    w.setFocus()
    w.selectAll()
    QTest.keyClicks(w, typed)
    QTest.keyClick(w, Qt.Key.Key_Return)
    assert ctx.project.settings("fcnnx")["targets"] == stored
    panel.binding.refresh("targets")                # the field redrawn from what the project holds
    assert w.text() == typed
    assert "targets" not in panel.binding.errors


def test_target_fps_redrawn_from_the_project_reads_as_a_person_writes(qtbot):
    """Was "1000000000.0,25.0" once the field was redrawn from the project (undo, an opened session)."""
    ctx = FakeContext()
    panel = open_panel(qtbot, "fcnnx", ctx)
    w = panel.binding.widgets["targets"][0]
    w.setFocus()
    w.selectAll()
    QTest.keyClicks(w, "1e9, 25")
    QTest.keyClick(w, Qt.Key.Key_Return)
    ctx.project.undo_stack.undo()
    ctx.project.undo_stack.redo()                   # the project's value written back into the field
    assert ctx.project.settings("fcnnx")["targets"] == [1e9, 25.0]
    assert w.text() == "1e9,25"


@pytest.mark.parametrize("value,text", [(1e9, "1e9"), (25.0, "25"), (0.1, "0.1"), (1234567.0, "1234567"),
                                        (2.5e7, "2.5e7"), (1e-4, "1e-4"), (-3.0, "-3"), (0.0, "0"), (1 / 3, repr(1 / 3)),
                                        (7, "7"), (2_000_000, "2e6")])
def test_editable_text_reads_back_exactly(value, text):
    assert editable_text(value) == text
    assert float(text) == value
