"""How a combo box fits its text (issue 49: "ratio to the prc", "first block (cor" were cut).

The rule, for every combo box in the window:
- A setting's choices are short and fixed: the box is as wide as its widest choice, so its current
  text is always whole (the settings rows wrap, gui.flow_layout). Only a choice wider than
  LONG_ENTRY_PX (a long board or file name) is elided.
- Where the entries are names people give or runs the session holds (the choice bar's workload,
  target and "Showing"), the box takes the room its row gives it and, where that is too little,
  shows the text elided with "…" and the whole text in its tooltip. Elision is intended there.
- A popup is always at least as wide as its widest item (Qt widens it; tests/test_no_clipped_text.py
  measures it).

Qt cuts a combo box's text at its edge without a mark; ComboElider paints it elided instead.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QApplication, QComboBox, QStyle, QStyleOptionComboBox, QStylePainter, QToolTip, \
    QWidget

LONG_ENTRY_PX = 360         # a choice wider than this is elided rather than widen its row
ELIDE = "elideIntended"     # a combo box's property: its entries are names, elision is meant


def text_room(combo: QComboBox) -> int:
    """The width the style gives a combo box's current text."""
    opt = QStyleOptionComboBox()
    combo.initStyleOption(opt)
    return combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                        QStyle.SubControl.SC_ComboBoxEditField, combo).width()


def elided_text(combo: QComboBox) -> str:
    """The current text as the box shows it: whole where it fits, else cut with "…"."""
    text = combo.currentText()
    return combo.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, max(0, text_room(combo)))


def tooltip_text(combo: QComboBox) -> str:
    """The tooltip the box shows: the whole current text first where it is elided."""
    tip = combo.toolTip()
    if combo.isEditable() or elided_text(combo) == combo.currentText():
        return tip
    return combo.currentText() + (f"\n\n{tip}" if tip and combo.currentText() not in tip else "")


class ComboElider(QObject):
    """Paints a combo box's current text elided where it does not fit, and shows the whole text as
    its tooltip then (an event filter: the boxes are made by many modules)."""

    def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 (Qt name)
        if not isinstance(obj, QComboBox) or obj.isEditable():
            return False
        if event.type() == QEvent.Type.Paint:
            text = elided_text(obj)
            if text == obj.currentText():
                return False                        # fits: Qt paints it as always
            painter = QStylePainter(obj)
            opt = QStyleOptionComboBox()
            obj.initStyleOption(opt)
            painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
            opt.currentText = text
            painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)
            painter.end()
            return True
        if event.type() == QEvent.Type.ToolTip:
            tip = tooltip_text(obj)
            if tip != obj.toolTip():
                QToolTip.showText(event.globalPos(), tip, obj)
                return True
        return False


def fit_combos(root: QWidget, elider: ComboElider) -> None:
    """Apply the rule above to every combo box under `root`."""
    for combo in root.findChildren(QComboBox):
        fit_combo(combo, elider)


def fit_combo(combo: QComboBox, elider: ComboElider) -> None:
    if combo.property(ELIDE):
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    else:
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        combo.setMaximumWidth(LONG_ENTRY_PX + _decoration(combo))
    combo.installEventFilter(elider)
    QApplication.sendEvent(combo, QEvent(QEvent.Type.StyleChange))       # drops its cached size hints
    combo.updateGeometry()


def _decoration(combo: QComboBox) -> int:
    """What a combo box needs beside its text (frame, arrow, margins), in its style."""
    opt = QStyleOptionComboBox()
    combo.initStyleOption(opt)
    full = combo.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, opt, QSize(100, 20), combo)
    return max(0, full.width() - 100)
