"""The Compare view: two or more runs side by side.

What differs and what can be overlaid is core.compare's answer; this view lays it out: a settings
table with the differing rows marked, the headline metrics, and each plot the runs share drawn once
with one colour per run. It follows the project, so a deleted run drops out (and Undo brings it back).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSplitter, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

import pyqtgraph as pg

from core.compare import DiffRow, common_plots, engine_title, format_value, headline_rows, plots_reason, \
    item_text, series_label, settings_diff, status_text
from core.project import Project, Run
from core.project_events import RunChanged
from gui.follow import follow
from gui.plotting import PALETTE, LivePlot, ask_export_plot, ask_export_table

DIFF_BACKGROUND = "#fff2b3"
ABSENT_TEXT = "—"
SERIES_STYLES = [Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine]


def run_colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


class OverlayPlot(LivePlot):
    """A LivePlot whose series take their run's colour (and a dash per series of the same run)."""

    def add_styled(self, label: str, points: list[list[float]], colour: str, style: Qt.PenStyle) -> None:
        self.add_points(label, [p[0] for p in points], [p[1] for p in points])
        curve = self._curves[label]
        curve.setPen(pg.mkPen(colour, width=2, style=style))
        curve.setSymbolBrush(colour)
        curve.setSymbolPen(colour)


class CompareView(QWidget):
    def __init__(self, project: Project, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self._requested: list[Run] = []       # the runs asked for; those still in the project are shown
        self.plots: dict[str, OverlayPlot] = {}

        layout = QVBoxLayout(self)
        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        layout.addWidget(self.header)
        self.reason = QLabel()
        self.reason.setWordWrap(True)
        layout.addWidget(self.reason)

        split = QSplitter(Qt.Orientation.Horizontal)
        tables = QWidget()
        tl = QVBoxLayout(tables)
        tl.setContentsMargins(0, 0, 0, 0)
        self.settings_table = self._table()
        self.metrics_table = self._table()
        self.only_diff = QCheckBox("only differences")
        self.only_diff.toggled.connect(lambda _: self._fill_settings())
        self.export_settings_button = self._titled_table(tl, "Settings", self.settings_table, "compare-settings", 3,
                                                         beside=self.only_diff)
        self.export_metrics_button = self._titled_table(tl, "Metrics", self.metrics_table, "compare-metrics", 2)
        split.addWidget(tables)

        self.plots_pane = QWidget()
        pl = QVBoxLayout(self.plots_pane)
        pl.setContentsMargins(0, 0, 0, 0)
        self.plot_tabs = QTabWidget()
        pl.addWidget(self.plot_tabs, 1)
        self.export_plot_button = QPushButton("Export plot…")
        self.export_plot_button.setToolTip("Save the plot on show as PNG or SVG")
        self.export_plot_button.clicked.connect(self._export_current_plot)
        pl.addWidget(self.export_plot_button, 0, Qt.AlignmentFlag.AlignRight)
        split.addWidget(self.plots_pane)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        layout.addWidget(split, 1)

        self.refresh()
        follow(self, project.events.run, self._run_changed)
        follow(self, project.events.reset, lambda _ev: self.refresh())

    @staticmethod
    def _table() -> QTableWidget:
        t = QTableWidget()
        t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        t.verticalHeader().hide()
        t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
        t.setWordWrap(False)
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        t.horizontalHeader().setStretchLastSection(True)
        return t

    def _titled_table(self, into: QVBoxLayout, title: str, table: QTableWidget, name: str, stretch: int,
                      beside: QWidget | None = None) -> QPushButton:
        """`table` under a row with its bold title, `beside` and an Export CSV… button (returned) that saves it
        as `name`.csv."""
        row = QHBoxLayout()
        row.addWidget(QLabel(f"<b>{title}</b>"))
        row.addStretch(1)
        if beside is not None:
            row.addWidget(beside)
        button = QPushButton("Export CSV…")
        button.clicked.connect(lambda: ask_export_table(self, table, name))
        row.addWidget(button)
        into.addLayout(row)
        into.addWidget(table, stretch)
        return button

    # ------------------------------------------------------------ what is compared
    def set_runs(self, run_ids: list[str]) -> None:
        """Compare these runs (in this order); ids the project does not hold are skipped."""
        held = {r.id: r for r in self.project.runs}
        self._requested = [held[i] for i in run_ids if i in held]
        self.refresh()

    def runs(self) -> list[Run]:
        """The compared runs still in the project (a deleted one drops out; Undo brings it back, a
        loaded session replaces them all)."""
        return [r for r in self._requested if any(r is x for x in self.project.runs)]

    def run_ids(self) -> list[str]:
        return [r.id for r in self.runs()]

    def _run_changed(self, ev: RunChanged) -> None:
        if any(r.id == ev.id for r in self._requested):
            self.refresh()

    # ------------------------------------------------------------ drawing
    def refresh(self) -> None:
        runs = self.runs()
        self._fill_header(runs)
        self._fill_settings()
        self._fill_table(self.metrics_table, "Metric", runs, headline_rows(runs) if runs else [])
        self._fill_plots(runs)

    def _fill_header(self, runs: list[Run]) -> None:
        if not runs:
            self.header.setText("Nothing to compare: select two or more runs in the Runs view and press Compare.")
            return
        lines = []
        for i, r in enumerate(runs):
            wl = item_text("workloads", r.workload) or "no workload"       # as the Runs table names it
            lines.append(f"<span style='color:{run_colour(i)}'>■</span> <b>{r.id}</b> · {engine_title(r.engine)} · "
                         f"{_escape(wl)} · {status_text(r)}")
        self.header.setText("<br>".join(lines))

    def _fill_settings(self) -> None:
        runs = self.runs()
        rows = settings_diff(runs) if runs else []
        if self.only_diff.isChecked():
            rows = [r for r in rows if r.differs]
        rows = sorted(rows, key=lambda r: not r.differs)        # what differs first, then the rest
        self._fill_table(self.settings_table, "Setting", runs, rows)

    @staticmethod
    def _fill_table(table: QTableWidget, first: str, runs: list[Run], rows: list[DiffRow]) -> None:
        table.clear()
        table.setColumnCount(1 + len(runs))
        table.setHorizontalHeaderLabels([first] + [r.id for r in runs])
        table.setRowCount(len(rows))
        bold = QFont()
        bold.setBold(True)
        for i, row in enumerate(rows):
            key = QTableWidgetItem(row.label or row.key)        # the title people know, not the key
            key.setToolTip(row.key)
            cells = [key]
            texts = row.texts or [format_value(v) for v in row.values]
            if row.tooltip:
                key.setToolTip(row.tooltip)
            best = row.best or [False] * len(texts)
            notes = row.notes or [""] * len(texts)
            for text, absent, top, note in zip(texts, row.absent, best, notes):
                item = QTableWidgetItem(ABSENT_TEXT if absent else text)
                item.setToolTip("this run has no such entry" if absent else note if note else
                                f"{text}: the best of these runs" if top else text)
                if absent or note:          # nothing to read: greyed, its reason in the tooltip
                    item.setForeground(QBrush(QColor("#888888")))
                if top:
                    item.setFont(bold)
                cells.append(item)
            if row.differs:
                key.setFont(bold)
                key.setToolTip("; ".join(t for t in (row.tooltip, "the runs differ here") if t))
                for item in cells:
                    item.setBackground(QBrush(QColor(DIFF_BACKGROUND)))
            for c, item in enumerate(cells):
                table.setItem(i, c, item)
        table.resizeColumnsToContents()

    def _fill_plots(self, runs: list[Run]) -> None:
        current = self.plot_tabs.tabText(self.plot_tabs.currentIndex()) if self.plot_tabs.count() else None
        while self.plot_tabs.count():
            w = self.plot_tabs.widget(0)
            self.plot_tabs.removeTab(0)
            if w is not None:
                w.deleteLater()
        self.plots = {}
        plots = common_plots(runs)
        why = plots_reason(runs)
        self.reason.setText(f"No plots overlaid: {why}." if why else "")
        self.reason.setVisible(bool(why))
        self.plots_pane.setVisible(bool(plots))
        for name, series in plots.items():
            plot = OverlayPlot(title=name)
            for i, r in enumerate(runs):
                for k, s in enumerate(r.series[name]):
                    plot.add_styled(series_label(r.id, s), series[series_label(r.id, s)], run_colour(i),
                                    SERIES_STYLES[k % len(SERIES_STYLES)])
            self.plots[name] = plot
            self.plot_tabs.addTab(plot, name)
        if current in self.plots:
            self.plot_tabs.setCurrentWidget(self.plots[current])

    def _export_current_plot(self) -> None:
        plot = self.plot_tabs.currentWidget()
        if isinstance(plot, OverlayPlot):
            ask_export_plot(self, plot, f"compare-{self.plot_tabs.tabText(self.plot_tabs.currentIndex())}")


def _escape(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
