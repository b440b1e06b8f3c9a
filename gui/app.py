"""Starting the GUI, and rendering it to an image for the README (`--screenshot`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication



def make_app() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Dataflow Explorer")
    app.setOrganizationName("DataflowExplorer")
    return app


def run_gui(open_path: str | None = None, screenshot: str | None = None, tab: str | None = None,
            compare: str | None = None, size: str | None = None, show: str | None = None) -> int:
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = make_app()
    from gui.main_window import MainWindow, fit_to_screen

    window = MainWindow(restore_layout=not screenshot)
    if tab:
        try:
            window.set_current_engine(tab)
        except KeyError as exc:
            print(f"error: {exc.args[0]}", file=sys.stderr)
            return 2
    if open_path and not window.open_path(open_path, ask=False):
        if screenshot:
            print(f"error: cannot open {open_path}", file=sys.stderr)
            return 2
    if tab:
        window.set_current_engine(tab)
    ids = [r.strip() for r in (compare or "").split(",") if r.strip()]
    unknown = [r for r in ids + ([show] if show else []) if all(run.id != r for run in window.project.runs)]
    if unknown:
        print(f"error: --compare/--show: no run {unknown[0]!r} in this session", file=sys.stderr)
        return 2
    if show:
        window.open_run(show)
    if size:
        try:
            w, h = (int(v) for v in size.lower().split("x"))
        except ValueError:
            print(f"error: --size: expected WIDTHxHEIGHT, got {size!r}", file=sys.stderr)
            return 2
        window.resize(w, h)
    if not screenshot:
        fit_to_screen(window)
    window.show()
    if ids:
        app.processEvents()             # docks take their sizes once the window is shown
        window.compare(ids)
    if screenshot:
        return _screenshot(app, window, screenshot)
    return app.exec()


def _screenshot(app: QApplication, window, path: str) -> int:
    import time

    end = time.monotonic() + 1.0
    while time.monotonic() < end:      # let layouts and plots settle
        app.processEvents()
        time.sleep(0.02)
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    from core.atomic import atomic_write_bytes

    target = Path(path)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    fmt = (target.suffix.lstrip(".") or "png").upper()
    try:
        if not window.grab().save(buffer, fmt):
            raise OSError(f"Qt cannot write {fmt} images")
        atomic_write_bytes(target, bytes(data.data()))   # usual permissions, never a half-written file
    except OSError as exc:
        print(f"error: could not write {path}: {exc}", file=sys.stderr)
        return 1
    window.shutdown_jobs()
    window.project.mark_saved()          # nothing to ask about: the screenshot changed nothing
    window.close()
    print(f"wrote {target}")
    return 0
