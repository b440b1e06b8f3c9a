"""The PE inspector's numbers keep apart (issue 49: "the PE inspector's numbers run together", a
gap of 4 px): in the window at 1366x768, every value's text is measured against its column's room,
with at least two digits' width between neighbours, and the table is not cut by its pane."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QFontMetricsF

from gui.panels.simulate.inspector import NEIGHBOURS, cell_text



def _plan():
    from core.cain.plans import ProgramPlan

    return ProgramPlan(filter="demo", program=["movx(B, A, east)", "add(C, A, B)"], output_registers=["C"],
                       outputs={"k": "C"}, input_register="A", input_registers={"0": "A"}, kernel_names=["k"],
                       d=1, denominator=2, approximated_kernels={"k": [[0, 0, 0], [0, 2, 2], [0, 0, 0]]},
                       isa="all", registers=6, length=2, nodes=5, time_s=0.1, method="simultaneous")


# the widest numbers the analogue planes hold, negative ones beside each other, and a big one
VALUES = {"A": {"C": -0.0703, "N": -0.0625, "E": -0.1234, "S": 0.0019, "W": -12.5},
          "B": {"C": -127.0, "N": 128.0, "E": -0.5, "S": None, "W": 1.0},
          "C": {"C": -1234.5, "N": -1.0e-5, "E": 0.25, "S": -0.25, "W": 3.0}}


def _stepper_at_1366(qtbot):
    """A main window at 1366x768 with a program opened in the simulator: the window and its stepper."""
    from core.simulate.sources import settings_from_cain_result
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    w.resize(1366, 768)
    w.show()
    qtbot.waitExposed(w)
    w.open_in_simulator(settings_from_cain_result(_plan()))
    return w, w.panels["simulate"].stepper


def test_inspector_columns_keep_two_digits_apart_at_1366x768(qtbot):
    w, st = _stepper_at_1366(qtbot)
    assert w.minimumSizeHint().width() <= 1366
    view = st.inspector.view
    st.inspector.show_pe(1, (2, 3), VALUES, {}, ("B",))
    qtbot.wait(50)
    fm = QFontMetricsF(view.font())
    two_digits = fm.horizontalAdvance("00")
    assert view.gap >= two_digits
    for name, cell in VALUES.items():
        for key, _ in NEIGHBOURS:
            text = cell_text(cell[key], view._fits)
            assert fm.horizontalAdvance(text) + two_digits <= view.col_w, (name, key, text, view.col_w)
    for key, _ in NEIGHBOURS:           # the headings too
        assert fm.horizontalAdvance("value" if key == "C" else key) + two_digits <= view.col_w
    # the register's name and the first value keep apart as well
    assert QFontMetricsF(view.bold).horizontalAdvance("NEWS") < view.name_w
    assert view.width() >= view.table_w, "the table is cut by its pane"
    assert view.visibleRegion().boundingRect().width() >= int(view.table_w)


BIG = {"A": {"C": 12.3e6, "N": -12345678.9, "E": 1.0e9, "S": -4.56e12, "W": 999999.9},
       "B": {"C": -0.0703, "N": 2.0e16, "E": -1234.5, "S": None, "W": 12345.678},
       "C": {"C": 3.0, "N": -999999.0, "E": 0.25, "S": 1.5e-5, "W": -127.0}}


def test_big_values_fit_their_columns_and_tell_the_whole_value_in_a_tooltip(qtbot):
    """12.3 million written out ("12.3 million") widened the columns past the pane, which cut the
    table; it now reads "12.3M" in the column and whole in the cell's tooltip."""
    w, st = _stepper_at_1366(qtbot)
    view = st.inspector.view
    col_w, table_w = view.col_w, view.table_w
    st.inspector.show_pe(1, (2, 3), BIG, {}, ("A",))
    qtbot.wait(50)
    assert (view.col_w, view.table_w) == (col_w, table_w), "a big number widened the table"
    fm = QFontMetricsF(view.font())
    texts = {}
    for name, cell in BIG.items():
        for key, _ in NEIGHBOURS:
            text = texts[name, key] = cell_text(cell[key], view._fits)
            assert fm.horizontalAdvance(text) + view.gap <= view.col_w, (name, key, text)
    assert texts["A", "C"] == "12.3M" and texts["A", "N"] == "-12.3M" and texts["A", "E"] == "1G"
    assert view.width() >= view.table_w and view.visibleRegion().boundingRect().width() >= int(view.table_w)
    # the whole value in the tooltip of the cell under the mouse
    lay = view._layout(view.width(), len(BIG), view.shown.goals, list(BIG))
    y = lay.rows["A"].center().y()
    x_of = {key: view.name_w + (k + 0.5) * view.col_w for k, (key, _) in enumerate(NEIGHBOURS)}
    assert view.cell_tip(x_of["C"], y) == "A at the PE: 12,300,000"
    assert view.cell_tip(x_of["N"], y) == "A at the north neighbour: -12,345,678.9"
    assert view.cell_tip(x_of["S"], y) == "A at the south neighbour: -4,560,000,000,000"
    assert view.cell_tip(x_of["W"], lay.rows["C"].center().y()) == "C at the west neighbour: -127"
    assert view.cell_tip(view.name_w / 2, y) == "" and view.cell_tip(x_of["C"], 1) == ""
    assert "12.3 million" in st.inspector.text()         # the copied text keeps its words
