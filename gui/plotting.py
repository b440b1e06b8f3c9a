"""Plotting helpers shared by all panels: a live multi-series plot and image/table exports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtWidgets import QFileDialog, QTableWidget, QWidget

from core.atomic import atomic_write_text

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


class LivePlot(pg.PlotWidget):
    """Named series that grow point by point; redraws happen once per batch, not per point."""

    def __init__(self, title: str = "", x_label: str = "", y_label: str = "", parent: QWidget | None = None,
                 step: bool = False) -> None:
        super().__init__(parent=parent, background="w")
        self.setTitle(title, color="k")
        self.setLabel("bottom", x_label)
        self.setLabel("left", y_label)
        self.showGrid(x=True, y=True, alpha=0.3)
        self.addLegend(offset=(-10, 10))
        self._data: dict[str, tuple[list[float], list[float]]] = {}
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._step = step

    def clear_series(self) -> None:
        for curve in self._curves.values():
            self.removeItem(curve)
        self._curves.clear()
        self._data.clear()
        legend = self.getPlotItem().legend
        if legend is not None:
            legend.clear()

    def add_points(self, series: str, xs: list[float], ys: list[float]) -> None:
        if series not in self._data:
            color = PALETTE[len(self._data) % len(PALETTE)]
            self._data[series] = ([], [])
            self._curves[series] = self.plot([], [], name=series, pen=pg.mkPen(color, width=2),
                                             symbol="o", symbolSize=5, symbolBrush=color,
                                             stepMode=None)
        dx, dy = self._data[series]
        dx.extend(xs)
        dy.extend(ys)
        self._curves[series].setData(np.asarray(dx, float), np.asarray(dy, float))

    def series(self) -> dict[str, tuple[list[float], list[float]]]:
        return self._data


def export_plot(plot: pg.PlotWidget, path: str) -> None:
    """Save a plot as PNG or SVG, chosen by the file's suffix."""
    item = plot.getPlotItem()
    if path.lower().endswith(".svg"):
        pyqtgraph.exporters.SVGExporter(item).export(path)
    else:
        pyqtgraph.exporters.ImageExporter(item).export(path)


def ask_export_plot(parent: QWidget, plot: pg.PlotWidget, stem: str = "plot") -> str | None:
    path, _ = QFileDialog.getSaveFileName(parent, "Export plot", f"{stem}.png", "PNG image (*.png);;SVG image (*.svg)")
    if path:
        export_plot(plot, path)
    return path or None


def table_to_csv(table: QTableWidget) -> str:
    """The visible table as CSV text (headers first)."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([table.horizontalHeaderItem(c).text() if table.horizontalHeaderItem(c) else ""
                for c in range(table.columnCount())])
    for r in range(table.rowCount()):
        w.writerow([table.item(r, c).text() if table.item(r, c) else "" for c in range(table.columnCount())])
    return buf.getvalue()


def ask_export_table(parent: QWidget, table: QTableWidget, stem: str = "table") -> str | None:
    path, _ = QFileDialog.getSaveFileName(parent, "Export table", f"{stem}.csv", "CSV (*.csv)")
    if path:
        atomic_write_text(Path(path), table_to_csv(table))
    return path or None
