"""Starting the GUI, and rendering it to an image for the README (`--screenshot`)."""

from __future__ import annotations

import gc
import os
import re
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication



_COLLECTOR: object = None


def make_app() -> QApplication:
    global _COLLECTOR
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication), "a plain QCoreApplication already exists; the GUI needs a QApplication"
    app.setApplicationName("Dataflow Explorer")
    app.setOrganizationName("DataflowExplorer")
    if _COLLECTOR is None:
        # the cyclic garbage collector runs on the UI thread only, from a timer (pyqtgraph's collector):
        # run automatically it starts in whichever thread allocates next, and a worker thread (a
        # study's runner, a Dask client) that frees a widget's cycle there deadlocks or crashes Qt
        from pyqtgraph.util.garbage_collector import GarbageCollector

        _COLLECTOR = GarbageCollector(interval=1.0)
    return app


def freeze_startup_objects() -> None:
    """What start-up built (imported modules, the window) lives as long as the app: take it out of
    the cyclic collector's view. Otherwise every full collection walks it all, 60-70 ms with the UI
    thread blocked, each time enough new objects have piled up (a finished run's result)."""
    gc.collect()
    gc.freeze()


MAX_SIDE = 16384       # Qt's own limit on a widget's side (QWIDGETSIZE_MAX is larger, but no screen is)


def parse_size(text: str) -> tuple[int, int]:
    """--size WIDTHxHEIGHT, each side 1..MAX_SIDE pixels; InputError naming --size otherwise."""
    from core.errors import InputError

    m = re.fullmatch(r"\s*(\d{1,6})\s*[xX]\s*(\d{1,6})\s*", text)
    if not m or not all(1 <= int(v) <= MAX_SIDE for v in m.groups()):
        raise InputError(f"expected WIDTHxHEIGHT, each 1..{MAX_SIDE} pixels, got {text[:40]!r}", "--size")
    return int(m.group(1)), int(m.group(2))


def run_gui(open_path: str | None = None, screenshot: str | None = None, tab: str | None = None,
            compare: str | None = None, size: str | None = None, show: str | None = None) -> int:
    from core.errors import InputError

    try:                       # checked before any window exists: a bad option costs nothing
        width_height = parse_size(size) if size else None
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if screenshot:
        from core.files import output_folder

        try:                   # where the image goes, before any window is built
            output_folder(Path(screenshot).parent, [Path(screenshot).name], "--screenshot")
        except InputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = make_app()
    from gui.main_window import MainWindow, fit_to_screen

    window = MainWindow(restore_layout=not screenshot)
    window.interactive = not screenshot       # rendering for a file: errors on stderr, never a modal dialog
    if tab:
        try:
            window.set_current_engine(tab)
        except KeyError as exc:
            print(f"error: {exc.args[0]}", file=sys.stderr)
            return 2
    if open_path and not window.open_path(open_path, ask=False):
        if screenshot:          # the window has said why on stderr (`error: <where>: <what>`)
            return 2
    if tab:
        window.set_current_engine(tab)
    ids = [r.strip() for r in (compare or "").split(",") if r.strip()]
    show, _, where = (show or "").partition(":")     # RUN[:KEY=N,...]: what to focus on, e.g. r2:step=8
    try:
        focus = {k.strip(): int(v) for k, v in (p.split("=", 1) for p in where.split(",") if p.strip())}
    except ValueError:
        print(f"error: --show: expected RUN[:KEY=N,...], got {show}:{where}", file=sys.stderr)
        return 2
    unknown = [r for r in ids + ([show] if show else []) if all(run.id != r for run in window.project.runs)]
    if unknown:
        print(f"error: --compare/--show: no run {unknown[0]!r} in this session", file=sys.stderr)
        return 2
    if show:
        window.open_run(show, **focus)
    if width_height:
        window.resize(*width_height)
    if not screenshot:
        fit_to_screen(window)
    window.show()
    freeze_startup_objects()
    if ids:
        app.processEvents()             # docks take their sizes once the window is shown
        window.compare(ids)
    if screenshot:
        return _screenshot(app, window, screenshot)
    if not open_path:                   # the first launch offers the example session (gui.tour)
        from PySide6.QtCore import QTimer

        QTimer.singleShot(0, window.offer_example)
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
