"""The Studies dock: edit a study, run it on this machine or a Dask cluster, watch its points arrive.

The study is edited as JSON or YAML text (checked as you type, with the field path of the first
problem) and loaded from / saved to files; the examples in assets/studies/ are one click away. The
study runs through the window's one run controller (core.run_controller, via gui.run_adapter): its
points execute in Dask worker processes, each one a run of the project from when it is sent out
(shown as running in the Runs view) to its end, kept like any other run; the panel fills its table
and plots from the controller's records as points end.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QCheckBox, QComboBox, QDockWidget, QFileDialog,
                               QFormLayout, QFrame, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMainWindow,
                               QPlainTextEdit, QPushButton, QScrollArea, QSpinBox, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from core.atomic import atomic_write_text
from core.compare import format_value
from core.display import metric_of
from core.engine import engines
from core.errors import InputError
from core.metrics import DURATION, Metric
from core.paths import ASSETS
from core.project import Project
from core.study import spec as study_spec
from core.study.analysis import number, pareto_front
from core.study.metrics import StudyMetric
from core.study.runner import StudyRunner, StudySummary
from gui.follow import follow
from gui.plotting import PALETTE
from gui.run_adapter import RunAdapter
from gui.splitters import splitter

EXAMPLES = ASSETS / "studies"
REDRAW_MS = 100
SI_UNITS = ("s", "J", "B", "W", "Hz", "MAC/s", "/s")    # a plot axis in these gets an SI prefix (µs, mJ, kB)
STATUS_COLOURS = {"finished": "#2ca02c", "failed": "#d62728", "running": "#1f77b4", "pending": "#888888",
                  "not run": "#b36b00"}
DEFAULT_TEXT = """{
  "name": "bound: VGG-16 at three memory sizes",
  "engine": "bound",
  "workload": {"library": "VGG-16"},
  "settings": {"sweep": false},
  "axes": [{"param": "target.memory_bytes", "values": [65536, 131072, 524288]}],
  "metrics": ["optimal_traffic", "ratio_reference"]
}
"""


@dataclass(frozen=True)
class PointRow:
    """A point of the running study as its table row and plots read it: its record (core.study.runner)
    read once, when it arrives. A resumed point's record comes from a results file, which may be older
    and lack the optional fields."""

    index: int
    params: Mapping[str, Any]
    repeat: int = 0
    status: str = "pending"
    resumed: bool = False
    metrics: Mapping[str, Any] = field(default_factory=dict)
    duration_s: float | None = None
    error: str | None = None

    @classmethod
    def of(cls, rec: Mapping[str, Any]) -> "PointRow":
        optional = {k: rec[k] for k in ("repeat", "resumed", "metrics", "duration_s", "error") if rec.get(k) is not None}
        return cls(index=int(rec["index"]), params=rec["params"], status=str(rec["status"]),
                   **{**optional, "error": None if "error" not in optional else str(optional["error"])})


INK = "#222222"      # the study plots' text on their white background


def _plot_widget() -> pg.PlotWidget:
    """The look both of the panel's plots share: white, gridded, with a legend; short enough that a
    low dock clips it rather than growing the window."""
    plot = pg.PlotWidget(background="w")
    plot.showGrid(x=True, y=True, alpha=0.3)
    plot.addLegend(offset=(-10, 10), labelTextColor=INK)
    for side in ("left", "bottom"):     # pyqtgraph's grey text is faint on white: ticks and titles in ink
        plot.getAxis(side).setTextPen(pg.mkPen(INK))
        plot.getAxis(side).labelStyle = {**plot.getAxis(side).labelStyle, "color": INK}
    plot.setMinimumHeight(40)
    return plot



# The command line's names for what this panel asks in its own words (core.study names the flag
# where a value came from): a message about one names the field here, never the flag (issue 49).
FIELD_WORDS = {"--cluster": "Dask scheduler address", "--out": "results file"}


def window_words(text: str) -> str:
    """An error's "--flag: message" as "field: message"."""
    flag, sep, rest = text.partition(": ")
    return f"{FIELD_WORDS[flag]}: {rest}" if sep and flag in FIELD_WORDS else text

class StudyContext(Protocol):
    project: Project
    runner: RunAdapter

    def log(self, message: str, level: str = "info") -> None: ...
    def status(self, message: str) -> None: ...
    def open_run(self, run_id: str, **focus: Any) -> None: ...


class StudyPanel(QWidget):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.path: Path | None = None
        self.study: study_spec.Study | None = None       # the study as last checked (None: invalid)
        self.running: study_spec.Study | None = None     # the study being run
        self.runner: StudyRunner | None = None          # the study's runner while it runs
        self._study_id: str | None = None                # its id in the run controller
        self.summary: StudySummary | None = None
        self.records: dict[int, PointRow] = {}           # point index -> its record, typed
        self.run_ids: dict[int, str] = {}                # point index -> the project's run
        self._started = 0.0
        self._checked: tuple[str, int] | None = None      # (text, library version) of self.study
        self._library_version = 0
        self._dock: QDockWidget | None = None
        ev = context.project.events
        follow(self, ev.workloads, self._library_changed)
        follow(self, ev.targets, self._library_changed)
        follow(self, ev.reset, self._library_changed)
        self._build()
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(400)
        self._check_timer.timeout.connect(self.check)
        # Points arriving redraw the plots and the state line at most every REDRAW_MS: each redraw
        # lays out the dock again, which costs the window more than the points themselves.
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self._redraw_now)
        adapter = context.runner
        adapter.study_record.connect(self._take)
        adapter.study_log.connect(self._log)
        adapter.study_done.connect(self._done)
        self.editor.setPlainText(DEFAULT_TEXT)
        self.check()
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ================================================================ layout
    def _build(self) -> None:
        left = QWidget()
        lay = QVBoxLayout(left)
        lay.setContentsMargins(2, 2, 2, 2)
        row = QHBoxLayout()
        self.examples = QComboBox()
        self.examples.addItem("Examples…")
        for f in sorted(EXAMPLES.glob("*.json")) + sorted(EXAMPLES.glob("*.yaml")):
            self.examples.addItem(f.name, str(f))
        self.examples.activated.connect(self._example_chosen)
        self.load_button = QPushButton("Load…")
        self.load_button.clicked.connect(self.load_dialog)
        self.save_button = QPushButton("Save…")
        self.save_button.clicked.connect(self.save_dialog)
        row.addWidget(self.examples, 1)
        row.addWidget(self.load_button)
        row.addWidget(self.save_button)
        lay.addLayout(row)
        self.file_label = QLabel("unsaved study")
        self.file_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.file_label)
        self.editor = QPlainTextEdit()
        self.editor.setFont(QFont("monospace", 9))
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setMinimumHeight(120)
        self.editor.textChanged.connect(lambda: self._check_timer.start())
        lay.addWidget(self.editor, 1)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.message)

        where = QFormLayout()
        self.where = QComboBox()
        self.where.addItem("This machine", "local")
        self.where.addItem("Dask scheduler", "address")
        self.workers = QSpinBox()
        self.workers.setRange(1, 1024)
        self.workers.setValue(os.cpu_count() or 1)
        self.workers.setToolTip("Worker processes of the local Dask cluster (default: one per core)")
        self.address = QLineEdit()
        self.address.setPlaceholderText("tcp://HOST:8786")
        self.address.setToolTip("Address of a running Dask scheduler (`dask scheduler`, or dask-jobqueue on SLURM)")
        self.where.currentIndexChanged.connect(self._where_changed)
        here = QHBoxLayout()
        here.addWidget(self.where)
        here.addWidget(self.workers)
        self.workers_label = QLabel("workers")       # the bare number would not say what it counts
        here.addWidget(self.workers_label)
        here.addWidget(self.address, 1)
        where.addRow("Run on", here)
        lay.addLayout(where)
        row = QHBoxLayout()
        self.resume = QCheckBox("Resume")
        self.resume.setToolTip("Skip the points already finished in the study's results file")
        self.run_button = QPushButton("Run study")
        self.run_button.clicked.connect(self.run_study)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        row.addWidget(self.resume)
        row.addStretch(1)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        lay.addLayout(row)
        self.state = QLabel("")
        lay.addWidget(self.state)
        self._where_changed()

        self.tabs = QTabWidget()
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        # sized once per fill and at the end: resizing to contents on every cell costs ms per cell
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setSortingEnabled(False)
        self.table.cellDoubleClicked.connect(self._open_row)
        self.table.setToolTip("Double-click a point to open its run")
        self.tabs.addTab(self.table, "Points")

        plot_tab = QWidget()
        pl = QVBoxLayout(plot_tab)
        pl.setContentsMargins(2, 2, 2, 2)
        row = QHBoxLayout()
        self.plot_y, self.plot_x, self.plot_by = QComboBox(), QComboBox(), QComboBox()
        for label, combo in (("metric", self.plot_y), ("against", self.plot_x), ("one line per", self.plot_by)):
            row.addWidget(QLabel(label))
            row.addWidget(combo, 1)
            combo.currentIndexChanged.connect(self.redraw)
        pl.addLayout(row)
        self.plot = _plot_widget()
        pl.addWidget(self.plot, 1)
        self.tabs.addTab(plot_tab, "Metric vs axis")

        pareto_tab = QWidget()
        pp = QVBoxLayout(pareto_tab)
        pp.setContentsMargins(2, 2, 2, 2)
        row = QHBoxLayout()
        self.pareto_x, self.pareto_y = QComboBox(), QComboBox()
        self.min_x, self.min_y = QCheckBox("lower is better"), QCheckBox("lower is better")
        for label, combo, box in (("x", self.pareto_x, self.min_x), ("y", self.pareto_y, self.min_y)):
            box.setChecked(True)
            row.addWidget(QLabel(label))
            row.addWidget(combo, 1)
            row.addWidget(box)
            combo.currentIndexChanged.connect(self.redraw)
            box.toggled.connect(self.redraw)
        pp.addLayout(row)
        self.pareto = _plot_widget()
        pp.addWidget(self.pareto, 1)
        self.tabs.addTab(pareto_tab, "Pareto front")

        scroller = QScrollArea()          # the dock may be short: its controls scroll, the window keeps its size
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        scroller.setWidget(left)
        self.tabs.setMinimumHeight(60)   # a short dock clips the plots rather than growing the window
        split = splitter(Qt.Orientation.Horizontal, (scroller, 2), (self.tabs, 3))
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(split)

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        dock = self.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        if isinstance(dock, QDockWidget) and self._dock is None:
            self._dock = dock
            dock.visibilityChanged.connect(self._dock_raised)

    def _dock_raised(self, visible: bool) -> None:
        """Raised in a short bottom dock (190 px by default), take room for the editor and the plots,
        as the comparison does."""
        dock, window = self._dock, self.window()
        if visible and dock is not None and isinstance(window, QMainWindow) and not dock.isFloating() \
                and dock.height() < 300:
            QTimer.singleShot(0, lambda: window.resizeDocks([dock], [max(300, int(0.45 * window.height()))],
                                                            Qt.Orientation.Vertical))

    def _where_changed(self) -> None:
        local = self.where.currentData() == "local"
        self.workers.setVisible(local)
        self.workers_label.setVisible(local)
        self.address.setVisible(not local)

    def cluster(self) -> str:
        return f"local:{self.workers.value()}" if self.where.currentData() == "local" else self.address.text().strip()

    # ================================================================ the study text
    def set_text(self, text: str, path: Path | None = None) -> None:
        self.editor.setPlainText(text)
        self.path = path
        self.file_label.setText(str(path) if path else "unsaved study")
        self.check()

    def load_path(self, path: str | Path) -> bool:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.context.status(f"Cannot read {path}: {exc}")
            return False
        self.set_text(text, path)
        return True

    def _example_chosen(self, index: int) -> None:
        path = self.examples.itemData(index)
        self.examples.setCurrentIndex(0)
        if path:
            self.load_path(path)

    def load_dialog(self) -> None:
        start = str(self.path.parent if self.path else EXAMPLES)
        path, _ = QFileDialog.getOpenFileName(self, "Load study", start, "Studies (*.json *.yaml *.yml);;All files (*)")
        if path:
            self.load_path(path)

    def save_to(self, path: str | Path) -> bool:
        path = Path(path)
        try:
            atomic_write_text(path, self.editor.toPlainText())
        except OSError as exc:
            self.context.status(f"Not saved to {path}: {exc}")
            return False
        self.path = path
        self.file_label.setText(str(path))
        self.check()
        self.context.status(f"Saved {path}")
        return True

    def save_dialog(self) -> bool:
        start = str(self.path) if self.path else "study.json"
        path, _ = QFileDialog.getSaveFileName(self, "Save study", start, "Studies (*.json *.yaml *.yml)")
        return self.save_to(path) if path else False

    def check(self) -> study_spec.Study | None:
        """Read the editor's study against the open project's library; say what is wrong, or what it runs."""
        self._check_timer.stop()
        yaml_first = self.path is not None and self.path.suffix.lower() in (".yaml", ".yml")
        try:
            doc = study_spec.parse_text(self.editor.toPlainText(), "study", yaml_first=yaml_first)
            self.study = study_spec.from_json(doc, self.context.project, self.path)
        except InputError as exc:
            self.study = None
            self.message.setText(f"<span style='color:#d62728'>{exc.where}: {exc.message}</span>"
                                 if exc.where else f"<span style='color:#d62728'>{exc.message}</span>")
            self.message.setTextFormat(Qt.TextFormat.RichText)
            self._update_buttons()
            return None
        s = self.study
        self._checked = (self.editor.toPlainText(), self._library_version)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        size = (f"a {s.search.sampler} search of {s.search.budget} of {len(s.points)} point(s)" if s.search
                else f"{len(s.points)} point(s)")
        spec = engines().get(s.engine)
        self.message.setText(f"{spec.title if spec else s.engine}: {size}; axes: {', '.join(s.axis_labels) or 'none'}; "
                             f"metrics: {', '.join(self._metric_title(s, m) for m in s.metrics) or 'none'}")
        if not self.is_running():
            self._fill_combos(s)
        self._update_buttons()
        return s

    def _library_changed(self, _ev: Any) -> None:
        self._library_version += 1          # names in the study may mean other items now

    # ================================================================ running
    def is_running(self) -> bool:
        return self._study_id is not None

    def _update_buttons(self) -> None:
        running = self.is_running()
        self.run_button.setEnabled(not running and self.study is not None)
        self.cancel_button.setEnabled(running)
        for w in (self.editor, self.load_button, self.examples, self.where, self.workers, self.address, self.resume):
            w.setEnabled(not running)

    def results_path(self, study: study_spec.Study) -> Path:
        if study.path is not None:
            return study.results_path()
        folder = Path(tempfile.gettempdir()) / "dataflow-explorer-studies"
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in study.name)[:60] or "study"
        return folder / f"{safe}.results.jsonl"

    def run_study(self) -> bool:
        if self.is_running():
            return False
        # the study as checked while typing, unless the text or the library changed since
        study = self.study if self._checked == (self.editor.toPlainText(), self._library_version) else self.check()
        if study is None:
            self.context.status("The study has a problem: see the message under the editor")
            return False
        if self.where.currentData() == "local" and not self.workers.hasAcceptableInput():
            # Qt keeps the last number until editing ends: the study would run on workers not shown
            self.context.status(f"Cannot run the study: Workers: cannot read {self.workers.text().strip()!r}: "
                                f"type a number from 1 to {self.workers.maximum()}")
            return False
        try:
            runner = StudyRunner(study, self.cluster(), self.results_path(study), self.resume.isChecked())
        except InputError as exc:
            self.context.status(f"Cannot run the study: {window_words(str(exc))}")
            return False
        self.running, self.runner, self.summary = study, runner, None
        self.records, self.run_ids = {}, {}
        self._fill_table(study)
        self._fill_combos(study)
        self.redraw()
        self.context.log(f"study {study.name}: {len(study.points)} point(s) on {runner.cluster}; results in "
                         f"{runner.path}")
        self._started = time.monotonic()
        self._study_id = self.context.runner.start_study(runner).id
        self._update_buttons()
        return True

    def cancel(self) -> None:
        if self.runner is not None:
            self.runner.cancel()
            self.state.setText("cancelling…")

    def shutdown(self, timeout: float = 10.0) -> bool:
        """Cancel a running study and wait for its runner (which closes the cluster); True when done."""
        controller = self.context.runner.controller
        study = controller.studies.get(self._study_id or "")
        if study is not None:
            study.runner.cancel()
            if study.thread is not None:
                study.thread.join(timeout)
        self.context.runner.poll()
        return study is None or study.thread is None or not study.thread.is_alive()

    def _take(self, study_id: str, rec: dict[str, Any], run_id: str) -> None:
        """A point's record (its run, if it became one, already recorded by the controller)."""
        study = self.running
        if study is None or study_id != self._study_id:
            return
        row = PointRow.of(rec)
        i = row.index
        self.records[i] = row
        if run_id:
            self.run_ids[i] = run_id
        self._fill_row(i, row)
        if not self._redraw.isActive():
            self._redraw.start()

    def _redraw_now(self) -> None:
        self.redraw()
        if self.running is not None:
            self._show_state()

    def _log(self, study_id: str, message: str) -> None:
        if study_id == self._study_id:
            self.context.log(f"study: {message}")

    def _done(self, study_id: str, summary: Any) -> None:
        if study_id != self._study_id:
            return
        self._study_id, self.runner = None, None
        self._redraw.stop()
        self.redraw()
        if isinstance(summary, BaseException):      # the runner itself broke: said, never raised into Qt
            self.context.log(f"study stopped: {type(summary).__name__}: {summary}", "error")
            self.context.status("Study stopped")
            self._update_buttons()
            return
        self.summary = summary
        c = summary.counts
        if summary.error:
            summary.error = window_words(summary.error)
        what = "cancelled" if summary.cancelled else "stopped: " + summary.error if summary.error else "done"
        self.context.log(f"study {summary.study} {what}: {c['finished']} finished, {c['failed']} failed, "
                         f"{c['not_run']} not run", "error" if summary.error else "info")
        self.context.status(f"Study {what}")
        self.table.resizeColumnsToContents()
        self._show_state()
        self._update_buttons()

    def _show_state(self) -> None:
        n = len(self.running.points) if self.running else 0
        fin = sum(r.status == "finished" for r in self.records.values())
        bad = sum(r.status == "failed" for r in self.records.values())
        if self.is_running():
            self.state.setText(f"{fin + bad} of {n} point(s) done ({bad} failed), "
                               f"{time.monotonic() - self._started:.1f} s")
        elif self.summary is not None:
            s = self.summary
            end = "cancelled" if s.cancelled else f"stopped: {s.error}" if s.error else "done"
            self.state.setText(f"{end}: {fin} finished, {bad} failed, {n - fin - bad} not run")

    # ================================================================ table
    def _columns(self, study: study_spec.Study) -> list[str]:
        """The table's headers: a headline metric by its declared title (with its unit in its
        cells), a path by its name."""
        return ["#"] + study.axis_labels + (["repeat"] if study.repeats > 1 else []) + ["status"] + \
            [self._metric(study, m).title for m in study.metrics] + ["time", "run"]

    @staticmethod
    def _metric(study: study_spec.Study, m: StudyMetric) -> Metric:
        return metric_of(study.engine, m.name) if m.path is None else Metric(m.name, m.name)

    @classmethod
    def _metric_title(cls, study: study_spec.Study, m: StudyMetric) -> str:
        """A metric as a picker shows it: its declared title and unit ("Energy (J)"), else its key."""
        declared = cls._metric(study, m)
        unit = {"fraction": "%", "×": ""}.get(declared.unit, declared.unit)
        return f"{declared.title} ({unit})" if unit else declared.title

    def _fill_table(self, study: study_spec.Study) -> None:
        cols = self._columns(study)
        self.table.clear()
        self.table.setColumnCount(len(cols))
        self.table.setHorizontalHeaderLabels(cols)
        self.table.setRowCount(len(study.points))
        for p in study.points:
            self._fill_row(p.index, PointRow(p.index, p.params, p.repeat))
        self.table.resizeColumnsToContents()

    def _fill_row(self, i: int, rec: PointRow) -> None:
        study = self.running
        if study is None or i >= self.table.rowCount():
            return
        values: list[Any] = [i] + [rec.params.get(a) for a in study.axis_labels]
        if study.repeats > 1:
            values.append(int(rec.repeat) + 1)
        values.append("resumed" if rec.resumed else rec.status)
        first_metric = len(values)
        values += [rec.metrics.get(m.name) for m in study.metrics]
        values += [rec.duration_s, self.run_ids.get(i, "")]
        units = [self._metric(study, m) for m in study.metrics] + [DURATION]
        for c, v in enumerate(values):
            shown = units[c - first_metric] if first_metric <= c < first_metric + len(units) else None
            # an axis over a target field with a unit shows it ("8 KiB", "25.6 GB/s")
            param = study.param_text(study.axis_labels[c - 1], v) if 1 <= c <= len(study.axis_labels) else None
            text = param if param is not None else "" if v is None else shown.text(v) if shown else \
                format_value(v) if not isinstance(v, str) else v
            item = self.table.item(i, c)
            if item is None:
                item = QTableWidgetItem(text)
                self.table.setItem(i, c, item)
            elif item.text() != text:
                item.setText(text)
            if c == len(values) - 3 - len(study.metrics):
                item.setForeground(QColor(STATUS_COLOURS.get(rec.status, "#000000")))
                if rec.error:
                    item.setToolTip(rec.error)

    def _open_row(self, row: int, _col: int) -> None:
        run_id = self.run_ids.get(row)
        if run_id:
            try:
                self.context.open_run(run_id)
            except KeyError:
                self.context.status(f"Run {run_id} is no longer in the project")

    # ================================================================ plots
    def _fill_combos(self, study: study_spec.Study) -> None:
        """The pickers: each metric by its declared title and unit ("Energy (J)"), the key its item's
        data (what is plotted), its tooltip which way is better; each axis by its label."""
        metrics = [m.name for m in study.metrics]
        for combo, items in ((self.plot_x, [(a, a) for a in study.axis_labels]),
                             (self.plot_by, [("(none)", None)] + [(a, a) for a in study.axis_labels])):
            combo.blockSignals(True)
            combo.clear()
            for text, data in items:
                combo.addItem(text, data)
            combo.blockSignals(False)
        for combo in (self.plot_y, self.pareto_x, self.pareto_y):
            combo.blockSignals(True)
            combo.clear()
            for sm in study.metrics:
                combo.addItem(self._metric_title(study, sm), sm.name)
                combo.setItemData(combo.count() - 1, self._metric(study, sm).tooltip(), Qt.ItemDataRole.ToolTipRole)
            combo.blockSignals(False)
        if len(metrics) > 1:
            self.pareto_y.setCurrentIndex(1)
        if len(study.axis_labels) > 1:
            self.plot_by.setCurrentIndex(2)
        for combo, box in ((self.pareto_x, self.min_x), (self.pareto_y, self.min_y)):
            # each metric its declared better way (core.metrics); a path's: lower
            m = next((m for m in study.metrics if m.name == combo.currentData()), None)
            box.setChecked(m is None or self._metric(study, m).better != "higher")
        goal = study.front_spec
        if goal is not None:        # a search's or a sweep's objectives are its front's axes, in their directions
            objs = goal.objectives
            for combo, box, o in ((self.pareto_x, self.min_x, objs[0]), (self.pareto_y, self.min_y, objs[-1])):
                combo.setCurrentIndex(metrics.index(o.metric))
                box.setChecked(o.minimise)
            if len(objs) > 1:
                self.tabs.setCurrentIndex(self.tabs.indexOf(self.pareto.parentWidget()))

    def finished_records(self) -> list[PointRow]:
        return [r for _i, r in sorted(self.records.items()) if r.status == "finished"]

    def redraw(self) -> None:
        self._draw_metric()
        self._draw_pareto()

    def _draw_metric(self) -> None:
        self.plot.clear()
        legend = self.plot.getPlotItem().legend
        if legend is not None:
            legend.clear()
        y_key, x_key, by = self.plot_y.currentData() or "", self.plot_x.currentData() or "", self.plot_by.currentData()
        self._axis_label("left", y_key, self.plot)
        study = self.running or self.study
        unit = study.units.get(x_key) if study is not None else None
        self.plot.setLabel("bottom", f"{x_key} ({unit})" if unit else x_key)
        if not y_key or not x_key:
            return
        recs = self.finished_records()
        xs_raw = [r.params.get(x_key) for r in recs]
        categorical = any(number(v) is None for v in xs_raw)
        cats = sorted({str(v) for v in xs_raw}) if categorical else []
        axis = self.plot.getAxis("bottom")
        axis.setTicks([list(enumerate(cats))] if categorical else None)
        groups: dict[str, list[tuple[float, float]]] = {}
        order: dict[str, tuple[float, str]] = {}        # a line's place: by its value, 8 before 16
        for r, xv in zip(recs, xs_raw):
            x = float(cats.index(str(xv))) if categorical else number(xv)
            y = number(r.metrics.get(y_key))
            if x is None or y is None:
                continue
            y *= self._scale(y_key)
            g = self._param_words(by, r.params.get(by)) if by and by != x_key else self.plot_y.currentText()
            groups.setdefault(g, []).append((x, y))
            v = number(r.params.get(by)) if by else None
            order[g] = (v if v is not None else float("inf"), g)
        for k, (name, pts) in enumerate(sorted(groups.items(), key=lambda kv: order[kv[0]])):
            color = PALETTE[k % len(PALETTE)]
            arr = np.asarray(pts, float)
            self.plot.plot(arr[:, 0], arr[:, 1], pen=None, symbol="o", symbolSize=6, symbolBrush=color,
                           symbolPen=None)
            mx = sorted({p[0] for p in pts})        # the mean over repeats and other axes, as a line
            my = [float(np.mean([p[1] for p in pts if p[0] == x])) for x in mx]
            self.plot.plot(mx, my, pen=pg.mkPen(color, width=2), name=name)

    def _draw_pareto(self) -> None:
        self.pareto.clear()
        legend = self.pareto.getPlotItem().legend
        if legend is not None:
            legend.clear()
        a, b = self.pareto_x.currentData() or "", self.pareto_y.currentData() or ""
        self._axis_label("bottom", a)
        self._axis_label("left", b)
        if not a or not b:
            return
        pts = []
        for r in self.finished_records():
            x, y = number(r.metrics.get(a)), number(r.metrics.get(b))
            if x is not None and y is not None:
                pts.append((x * self._scale(a), y * self._scale(b)))
        if not pts:
            return
        arr = np.asarray(pts, float)
        self.pareto.plot(arr[:, 0], arr[:, 1], pen=None, symbol="o", symbolSize=6, symbolBrush="#999999",
                         symbolPen=None, name="points")
        front = pareto_front(pts, (self.min_x.isChecked(), self.min_y.isChecked()))
        fa = arr[front]
        self.pareto.plot(fa[:, 0], fa[:, 1], pen=pg.mkPen("#d62728", width=2), symbol="o", symbolSize=8,
                         symbolBrush="#d62728", name=f"Pareto front ({len(front)})")

    def _param_words(self, label: str, value: Any) -> str:
        """An axis value as a line's name: with its field's unit ("25.6 GB/s"), else a number named by
        its axis ("PE rows = 8", not a bare "8"), else as written."""
        study = self.running or self.study
        text = study.param_text(label, value) if study is not None else None
        if text is not None:
            return text
        if isinstance(value, str):
            return value
        if number(value) is not None:
            return f"{label} = {format_value(value)}"
        return study.param_words(label, value) if study is not None else format_value(value)

    def _scale(self, name: str) -> float:
        """What a metric's values are multiplied by on a plot: 100 for a fraction, drawn in % as its
        picker and axis say."""
        study = self.running or self.study
        m = next((m for m in study.metrics if m.name == name), None) if study is not None else None
        return 100.0 if study is not None and m is not None and self._metric(study, m).unit == "fraction" else 1.0

    def _axis_label(self, side: str, name: str, plot: pg.PlotWidget | None = None) -> None:
        """A plot's metric axis (the front's by default): the metric's declared title, SI-prefixed in
        its unit where it has one ("Latency (µs)"), else its name."""
        plot = self.pareto if plot is None else plot
        study = self.running or self.study
        m = next((m for m in study.metrics if m.name == name), None) if study is not None else None
        declared = self._metric(study, m) if study is not None and m is not None else None
        if declared is not None and declared.unit in SI_UNITS:
            plot.setLabel(side, declared.title, units=declared.unit)
        else:
            plot.setLabel(side, self._metric_title(study, m) if study is not None and m is not None else name,
                          units=None)

    def front_indices(self) -> list[int]:
        """Point indices on the current Pareto front (for tests and exports)."""
        a, b = self.pareto_x.currentData() or "", self.pareto_y.currentData() or ""
        recs, pts = [], []
        for r in self.finished_records():
            x, y = number(r.metrics.get(a)), number(r.metrics.get(b))
            if x is not None and y is not None:
                recs.append(r)
                pts.append((x, y))
        return [recs[i].index for i in pareto_front(pts, (self.min_x.isChecked(), self.min_y.isChecked()))]

