"""What several window tests do alike: open the example session in a main window, let it settle, cancel
the demo engine part way through a long count."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

HANG_MS = 60_000        # stops a test that hangs; waits end when what they wait for happens
SIZES = [(1920, 1080), (1366, 768)]     # the screens the layout tests check: full HD and a small laptop


def cancel_demo_partway(window, qtbot) -> None:
    """Start a long demo count, wait until it has shown some best step, cancel it and wait until
    it has stopped: the run is then `cancelled` with a partial result."""
    window.set_current_engine("demo")
    window.project.replace_settings("demo", {"steps": 100_000, "delay": 0.002})
    window.run_current()
    qtbot.waitUntil(lambda: getattr(window.project.runs[-1].partial.get("best"), "step", 0) > 5, timeout=HANG_MS)
    window.cancel_current()
    qtbot.waitUntil(lambda: not window.runner.is_running("demo"), timeout=HANG_MS)


EXAMPLE = Path(__file__).resolve().parents[1] / "assets" / "example_session.dfx"


def example_window(qtbot, size: tuple[int, int] | None = None):
    """A main window (no saved layout, no modal questions) with the example session open and shown."""
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    w.interactive = False
    qtbot.addWidget(w)
    assert w.open_path(EXAMPLE, ask=False)
    if size:
        w.resize(*size)
    w.show()
    return w


def settle() -> None:
    """Let Qt lay out and paint what is pending (a few rounds: a layout change can queue another)."""
    from PySide6.QtWidgets import QApplication

    for _ in range(6):
        QApplication.processEvents()


def shown_example_window(qtbot, size: tuple[int, int] = SIZES[0]):
    """A fixture's body (`yield from`): the example window at `size`, laid out; its jobs stopped after."""
    w = example_window(qtbot, size)
    settle()
    yield w
    w.shutdown_jobs()


def show_every_view(window, qtbot, size: tuple[int, int]):
    """Resize the example window and fill its views: the stepper with run r2's program loaded (waited
    for), Compare on r3 and r4; returns the stepper."""
    window.resize(*size)
    window.open_run("r2")
    stepper = window.panels["simulate"].stepper
    qtbot.waitUntil(lambda: stepper.replay is not None, timeout=HANG_MS)
    window.compare(["r3", "r4"])
    settle()
    return stepper


@contextmanager
def dark_palette() -> Iterator[None]:
    """The application's palette dark (light text on near-black) inside the block, restored after."""
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    old = app.palette()
    dark = QPalette()
    for role, grey in ((QPalette.ColorRole.Window, 40), (QPalette.ColorRole.Base, 25),
                       (QPalette.ColorRole.WindowText, 220), (QPalette.ColorRole.Text, 220)):
        dark.setColor(role, QColor(grey, grey, grey))
    app.setPalette(dark)
    try:
        yield
    finally:
        app.setPalette(old)


@contextmanager
def comparison_window(qtbot, keep_target: Callable[[Any], bool]) -> Iterator[Any]:
    """A shown main window on the starter project whose runs (a comparison's parts) run on threads,
    with only the library's targets `keep_target` keeps; its parts and runs stopped after."""
    from core.run_controller import thread_launcher
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    w.interactive = False
    w.runner.controller.launcher = thread_launcher
    qtbot.addWidget(w)
    for e in list(w.project.entries("targets")):
        if not keep_target(e):
            w.project.remove("targets", e.id)
    w.show()
    try:
        yield w
    finally:
        w.targets_panel.shutdown()
        w.runner.shutdown()
