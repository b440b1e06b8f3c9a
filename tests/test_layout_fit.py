"""The window must fit a 1280x800 screen: settings rows wrap, long combo entries do not widen it."""

from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from gui.flow_layout import FlowLayout


def test_flow_layout_wraps_and_keeps_labels_with_their_widget(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host)
    buttons = [QPushButton(f"button number {i}") for i in range(6)]
    label = QLabel("Seed:")
    for b in buttons[:5]:
        flow.addWidget(b, 2)
    flow.addWidget(label)
    flow.addWidget(buttons[5])
    flow.addStretch(1)
    one_row = flow.heightForWidth(10_000)
    narrow = buttons[0].sizeHint().width() + 10
    assert flow.heightForWidth(narrow) > 3 * one_row
    assert flow.minimumSize().width() >= label.sizeHint().width() + buttons[5].sizeHint().width()
    host.resize(narrow + label.sizeHint().width(), 1000)
    flow.setGeometry(host.rect())
    assert label.geometry().top() == buttons[5].geometry().top() or \
        abs(label.geometry().center().y() - buttons[5].geometry().center().y()) <= 2


def test_main_window_fits_a_small_screen(qtbot):
    from gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    for name in w.panels:
        w.set_current_engine(name)
        w.panels[name]              # a window not on screen builds a tab's panel when it is asked for
        hint = w.minimumSizeHint()
        assert hint.width() <= 1280 and hint.height() <= 800, (name, hint)
