"""Plotting helpers shared by all panels: themed plots that read well, a live multi-series plot,
and image/table exports.

Every plot is made here (`new_plot`, `LivePlot`) so the same rules hold everywhere:
- colours follow the application's palette (a dark window gives dark plots; white only in a light
  palette), and follow it again when it changes;
- axes never rescale by an SI prefix ("(x0.001)"): values show in the unit the label names;
- log axes label their ticks as plain numbers (20, 500, 0.01) and switch to powers of ten (10⁶,
  2·10⁶) only far from 1;
- the legend sits under the plot (beside it when the plot is wide and low), so it never covers data;
- a series that holds the best value so far ("best length", "best objective", by the engines'
  naming) is drawn as steps: the value holds until the next improvement.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFontMetricsF, QPalette, QPen
from PySide6.QtWidgets import QApplication, QFileDialog, QGraphicsItem, QTableWidget, QTableWidgetItem, QWidget

from core.atomic import atomic_write_bytes, atomic_write_text

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
# Brighter versions of PALETTE for a dark background (same hues, same order).
PALETTE_DARK = ["#5fa8e8", "#ff6b6b", "#5fd35f", "#ffa54f", "#c29bf0", "#c49a8f", "#f4a6d7", "#4fe0ef"]
LIVE_REDRAW_S = 0.2              # a panel's live plots redraw at most this often while a run streams
# ...and not within this long of each other: two plots fed by one batch (Cain's nodes and time
# plots) would otherwise be painted in one turn of the event loop, 10-12 ms each.
REDRAW_STAGGER_S = 0.05
TEXT_SPACE_SAMPLE = "00000"       # a vertical axis keeps room for tick labels this wide
LEGEND_ENTRY_WIDTH = 170          # px per legend column when the legend wraps under the plot


@dataclass(frozen=True)
class Theme:
    """Colours of plots and image views, read from the application's palette."""

    dark: bool
    background: QColor
    foreground: QColor
    grid_alpha: float

    @property
    def series(self) -> list[str]:
        return PALETTE_DARK if self.dark else PALETTE


def theme() -> Theme:
    """The current palette's colours: the window's base colour behind plots, its text colour for axes."""
    app = QApplication.instance()
    pal = app.palette() if isinstance(app, QApplication) else QPalette()
    window = pal.color(QPalette.ColorRole.Window)
    dark = window.lightness() < 128
    if dark:
        return Theme(True, QColor(pal.color(QPalette.ColorRole.Base)), QColor(pal.color(QPalette.ColorRole.Text)), 0.25)
    return Theme(False, QColor("white"), QColor(pal.color(QPalette.ColorRole.WindowText)), 0.3)


def diverging_colormap(th: Theme | None = None) -> pg.ColorMap:
    """Blue (negative), neutral (0), red (positive) for signed register planes; the neutral middle is
    white in a light palette and a dark grey in a dark one, so zero blends with the background."""
    if (th or theme()).dark:
        return pg.ColorMap([0.0, 0.5, 1.0], [(90, 140, 255), (40, 40, 44), (255, 90, 80)])
    return pg.ColorMap([0.0, 0.5, 1.0], [(38, 76, 217), (255, 255, 255), (217, 38, 38)])


def series_colour(i: int, th: Theme | None = None) -> str:
    return (th or theme()).series[i % len(PALETTE)]


def is_best_so_far(series: str) -> bool:
    """A series of the best value so far, by name ("best length", "r3 · best length")."""
    return series.rsplit("· ", 1)[-1].rsplit(": ", 1)[-1].strip().lower().startswith("best ")


def readable_number(x: float) -> str:
    """A tick label: plain digits near 1, powers of ten far from it (no '2e+06', no '(x1e6)')."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if 1e-3 <= abs(x) < 1e5:
        return f"{x:.6g}"
    exp = int(math.floor(math.log10(abs(x)) + 1e-9))
    mant = x / 10 ** exp
    sup = str(exp).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    m = f"{mant:.2g}"
    return f"10{sup}" if m == "1" else f"-10{sup}" if m == "-1" else f"{m}·10{sup}"


class ReadableAxis(pg.AxisItem):
    """An axis without SI-prefix scaling whose log ticks read as numbers."""

    textWidth: float                # the room for tick labels, kept by pg.AxisItem
    textHeight: float

    def __init__(self, orientation: str, **kw: Any) -> None:
        super().__init__(orientation, **kw)
        self.enableAutoSIPrefix(False)
        # Replaying the axis' QPicture (tick labels, grid lines) costs ~5 ms per paint; a pixmap
        # cache makes a repaint of the data alone a blit (gui responsiveness, issue 14).
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.background = QColor(theme().background)     # what the grid lines are blended onto
        self.setAcceptHoverEvents(True)                    # named ticks' tooltips (hoverMoveEvent)
        self.reset_text_space()

    def _updateLabel(self) -> None:  # noqa: N802 (pyqtgraph name)
        """As pyqtgraph's, but the label's text is set only when it changed: pyqtgraph sets it again
        on every pen, range and SI-prefix update, and laying out rich text costs more than the rest."""
        html = self.labelString()
        if html != getattr(self, "_label_html", None):
            self._label_html = html
            self.label.setHtml(html)
        self._adjustSize()
        self.picture = None
        self.update()

    def reset_text_space(self) -> None:
        """Room for tick labels of five digits (a new run's plot starts from here)."""
        font = self.style.get("tickFont") or QApplication.font()
        room = QFontMetricsF(font).horizontalAdvance(TEXT_SPACE_SAMPLE)
        if self.orientation in ("left", "right"):
            self.textWidth = max(30.0, room)
            self._updateWidth()

    def _updateMaxTextSize(self, x: float) -> None:  # noqa: N802 (pyqtgraph name)
        """The room for tick labels only grows (pyqtgraph also shrinks it): a narrower set of labels
        after a range change ("17.5" to "16") re-laid the plot out, and the plot was painted again,
        re-rendering both axes (12 ms a plot while an engine streamed; issue 14)."""
        if self.orientation in ("left", "right"):
            if x > self.textWidth:
                self.textWidth = x
                if self.style["autoExpandTextSpace"]:
                    self._updateWidth()
        elif x > self.textHeight:
            self.textHeight = x
            if self.style["autoExpandTextSpace"]:
                self._updateHeight()

    def generateDrawSpecs(self, p):  # noqa: N802 (pyqtgraph name)
        """pyqtgraph's specs with every translucent tick and grid pen made opaque, its colour blended
        onto the plot's background beforehand: the raster engine draws a translucent line some 40x
        slower (11 ms for a grid of 50 lines, 0.3 ms opaque), and the axis redraws whenever its range
        changes. The axes lie under the data (ThemedPlot), so the look is the same."""
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis_spec, tick_specs, text_specs = specs
        if self._tickLevels is not None and self.orientation in ("top", "bottom"):
            text_specs = thin_labels(text_specs)
        bg = self.background
        opaque = []
        for pen, p1, p2 in tick_specs:
            colour = pen.color()
            a = colour.alphaF()
            if a < 1.0:
                pen = QPen(pen)
                pen.setColor(QColor.fromRgbF(colour.redF() * a + bg.redF() * (1 - a),
                                             colour.greenF() * a + bg.greenF() * (1 - a),
                                             colour.blueF() * a + bg.blueF() * (1 - a)))
            opaque.append((pen, p1, p2))
        return axis_spec, opaque, text_specs

    def hoverMoveEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        """Over a named tick (a layer, an architecture), its whole name: thin_labels may have left it out."""
        view = self.linkedView()
        names = [t for level in (self._tickLevels or []) for t in level if str(t[1])]
        if view is None or not names:
            self.setToolTip("")
            return
        pos = view.mapSceneToView(event.scenePos())
        along = pos.x() if self.orientation in ("top", "bottom") else pos.y()
        value, name = min(names, key=lambda t: abs(float(t[0]) - along))
        self.setToolTip(str(name) if abs(float(value) - along) <= 0.5 else "")

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        """Decades always; 2 and 5 times a decade when at most three decades show; every minor tick
        below one decade. (pyqtgraph labels all of 2..9 and they run into each other.)"""
        vals = [float(v) for v in values]
        span = (max(vals) - min(vals)) if vals else 0.0
        out = []
        for v in vals:
            mant = round(10 ** (v - math.floor(v + 1e-9)), 6)
            keep = mant == 1 or span < 1 or (span <= 3 and mant in (2, 5))
            out.append(readable_number(10 ** v * scale) if keep else "")
        return out

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        if self.logMode:
            return self.logTickStrings(values, scale, spacing)
        strings = super().tickStrings(values, scale, spacing)
        return [readable_number(v * scale) if abs(v * scale) >= 1e5 else s for v, s in zip(values, strings)]


LABEL_GAP = 6       # px between two tick labels side by side
TICK_OVERHANG_PX = 16


def thin_labels(text_specs: list[Any]) -> list[Any]:
    """Named ticks (one per layer, per architecture) side by side: every k-th label for the least k
    at which none runs into the next (issue 49: the bound's per-layer names overlapped), so the
    labels left stay evenly spaced; the axis's tooltip names the others."""
    specs = sorted(text_specs, key=lambda spec: spec[0].center().x())
    for k in range(1, len(specs) + 1):
        kept = specs[::k]
        if all(b[0].left() >= a[0].right() + LABEL_GAP for a, b in zip(kept, kept[1:])):
            return kept
    return specs[:1]


class OutsideLegend(pg.LegendItem):
    """A legend laid out in the plot's own grid, under the x axis: it takes room, never covers data."""

    def updateSize(self) -> None:  # noqa: N802 (pyqtgraph name)
        height = width = 0.0
        for row in range(self.layout.rowCount()):
            row_h = row_w = 0.0
            for col in range(self.layout.columnCount()):
                item = self.layout.itemAt(row, col)
                if item:
                    row_w += item.width() + 3
                    row_h = max(row_h, item.height())
            width, height = max(width, row_w), height + row_h
        self.setMinimumHeight(height + 6)
        self.setMaximumHeight(height + 6)
        self.setMaximumWidth(width + 6)
        self.updateGeometry()


class LazyMenuViewBox(pg.ViewBox):
    """A ViewBox whose right-click menu is built when first asked for: the menu (and its axis
    forms) cost about a fifth of a plot, and most plots are never right-clicked."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        self._menu: Any = None
        super().__init__(*args, **{**kw, "enableMenu": False})    # builds no menu now
        self.state["enableMenu"] = kw.get("enableMenu", True)        # but it is on

    @property
    def menu(self) -> Any:          # None until built; ViewBox skips what a missing menu would show
        return self._menu

    @menu.setter
    def menu(self, value: Any) -> None:
        self._menu = value

    def _built_menu(self) -> Any:
        if self._menu is None and self.menuEnabled():
            from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu

            self._menu = ViewBoxMenu(self)
            self.updateViewLists()
        return self._menu

    def getMenu(self, ev: Any) -> Any:  # noqa: N802 (pyqtgraph name)
        return self._built_menu()

    def getContextMenus(self, event: Any) -> list[Any]:  # noqa: N802 (pyqtgraph name)
        menu = self._built_menu()
        return menu.actions() if menu is not None else []


def _axes() -> dict[str, ReadableAxis]:
    return {side: ReadableAxis(side) for side in ("left", "bottom", "right", "top")}


class ThemedPlot(pg.PlotWidget):
    """A PlotWidget following the rules in this module's docstring."""

    def __init__(self, parent: QWidget | None = None, title: str = "", x_label: str = "", y_label: str = "",
                 legend: bool = True, **kw: Any) -> None:
        kw.setdefault("axisItems", _axes())
        kw.setdefault("viewBox", LazyMenuViewBox())
        super().__init__(parent=parent, **kw)
        for side in ("top", "right"):                  # made readable too, in case a panel shows them
            self.getPlotItem().hideAxis(side)
        # room at the right for the half of the last x tick label that lies past the axis's end
        # (pyqtgraph draws up to 15 px past it): "5·10⁵" was cut to "5·1" at the widget's edge
        left, top, _right, bottom = self.getPlotItem().layout.getContentsMargins()
        self.getPlotItem().layout.setContentsMargins(left, top, TICK_OVERHANG_PX, bottom)
        under = self.getPlotItem().getViewBox().zValue() - 1
        for side in ("left", "bottom", "right", "top"):  # under the data: their grid lines are opaque
            self.getPlotItem().getAxis(side).setZValue(under)
        self._title = title
        self.legend: OutsideLegend | None = None
        if legend:
            item = self.getPlotItem()
            self.legend = OutsideLegend(offset=None, colCount=1)
            item.layout.addItem(self.legend, 4, 1)
            item.layout.setAlignment(self.legend, Qt.AlignmentFlag.AlignLeft)
            item.legend = self.legend                  # plot(name=...) and addLegend() use it
        self._legend_at = (4, 1)
        self.apply_theme()                  # before the labels: setLabel gives them the theme's colour itself
        if x_label:
            self.setLabel("bottom", x_label)
        if y_label:
            self.setLabel("left", y_label)
        self._themed = True

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        """At least what the plot's own items need (axes, their labels, the legend): a narrower widget
        showed the scene cut at its right edge, the last tick labels with it (the Compare view's plots
        at 1366x768, issue 49)."""
        need = self.getPlotItem().effectiveSizeHint(Qt.SizeHint.MinimumSize)
        own = super().minimumSizeHint()
        return QSize(max(own.width(), math.ceil(need.width())), max(own.height(), math.ceil(need.height())))

    def setTitle(self, title: str | None = None, **kw: Any) -> None:  # noqa: N802 (Qt name)
        """As PlotItem.setTitle, in the theme's colour (a colour given by a caller is ignored)."""
        self._title = title or ""
        kw.pop("color", None)
        self.getPlotItem().setTitle(title, color=theme().foreground, **kw)

    def setLabel(self, axis: str, text: str | None = None, units: str | None = None, unitPrefix: Any = None,  # noqa: N802,N803
                 **args: Any) -> None:
        """As PlotItem.setLabel, in the theme's colour."""
        args.setdefault("color", theme().foreground)
        self.getPlotItem().setLabel(axis, text, units, unitPrefix, **args)

    def vertical_label_fits(self) -> bool:
        """Whether the left axis's label is as short as the axis (else it shows cut; issue 30)."""
        axis = self.getPlotItem().getAxis("left")
        if not axis.isVisible() or not axis.labelText:
            return True
        return axis.label.boundingRect().width() <= axis.geometry().height() + 1

    def apply_theme(self) -> None:
        th = theme()
        self.setBackground(th.background)
        item = self.getPlotItem()
        for side in ("left", "bottom", "right", "top"):
            axis = item.getAxis(side)
            if isinstance(axis, ReadableAxis):
                axis.background = QColor(th.background)
            axis.setPen(pg.mkPen(th.foreground))
            axis.setTextPen(pg.mkPen(th.foreground))
            if axis.labelText or axis.labelUnits:
                axis.setLabel(axis.labelText, axis.labelUnits, **{**axis.labelStyle, "color": th.foreground})
        self.showGrid(x=True, y=True, alpha=th.grid_alpha)
        if self._title:
            item.setTitle(self._title, color=th.foreground)
        if self.legend is not None:
            self.legend.setLabelTextColor(th.foreground)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.PaletteChange and getattr(self, "_themed", False):
            self.apply_theme()
        super().changeEvent(event)

    def close(self) -> bool:
        """As PlotWidget.close, taking the legend off the scene first: PlotWidget.close clears the
        scene, which would delete the legend under Python's feet (a crash)."""
        legend, self.legend = self.legend, None
        item = self.getPlotItem()
        if legend is not None and item is not None:
            item.legend = None
            item.layout.removeItem(legend)
            if legend.scene() is not None:
                legend.scene().removeItem(legend)
        return super().close()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if getattr(self, "_themed", False):
            self._place_legend()

    def _place_legend(self) -> None:
        """Under the plot, in as many columns as fit; beside it (one column) when the plot is wide and
        low, where rows under it would squeeze the data."""
        legend = self.legend
        if legend is None:
            return
        item = self.getPlotItem()
        side = self.width() > 2.5 * self.height()
        where = (2, 3) if side else (4, 1)
        if self._legend_at != where:
            item.layout.removeItem(legend)
            item.layout.addItem(legend, *where)
            item.layout.setAlignment(legend, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft if side
                                     else Qt.AlignmentFlag.AlignLeft)
            self._legend_at = where
        cols = 1 if side else max(1, min(len(legend.items) or 1, int(self.width() // LEGEND_ENTRY_WIDTH)))
        legend.setColumnCount(cols)
        legend.updateSize()


def new_plot(title: str = "", x_label: str = "", y_label: str = "", parent: QWidget | None = None,
             legend: bool = True) -> ThemedPlot:
    """A plot for a panel: themed, readable axes, legend under the plot."""
    return ThemedPlot(parent=parent, title=title, x_label=x_label, y_label=y_label, legend=legend)


class LivePlot(ThemedPlot):
    """Named series that grow point by point; redraws happen once per batch, not per point.

    `step` draws every series as steps; by default only best-so-far series are (is_best_so_far)."""

    _last_any_redraw = -math.inf          # the last redraw of any throttled live plot

    def __init__(self, title: str = "", x_label: str = "", y_label: str = "", parent: QWidget | None = None,
                 step: bool | None = None, redraw_interval_s: float = 0.0) -> None:
        super().__init__(parent=parent, title=title, x_label=x_label, y_label=y_label)
        self._data: dict[str, tuple[list[float], list[float]]] = {}
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._step = step
        # Points arriving less than this long after the last redraw wait for one redraw at the end of
        # the interval: a plot's redraw is 5-8 ms of the window's time (two or three paints of the
        # scene as the ranges follow), and engines stream a batch every 20 ms.
        self.redraw_interval_s = redraw_interval_s
        self._last_redraw = -math.inf
        self._pending: set[str] = set()
        self._pending_xs: list[float] = []
        self._pending_ys: list[float] = []
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.timeout.connect(self.redraw)
        self._x_range: tuple[float, float] | None = None     # the x range this plot set; None: auto
        self._x_seen: tuple[float, float] | None = None      # the data's x extent so far
        self._y_range: tuple[float, float] | None = None     # likewise for y
        self._y_seen: tuple[float, float] | None = None
        self._user_zoomed = False
        self.getPlotItem().getViewBox().sigRangeChangedManually.connect(self._on_user_zoom)

    def clear_series(self) -> None:
        self._redraw_timer.stop()
        self._pending.clear()
        self._pending_xs.clear()
        self._pending_ys.clear()
        self._last_redraw = -math.inf
        for curve in self._curves.values():
            self.removeItem(curve)
        self._curves.clear()
        self._data.clear()
        self._x_range, self._x_seen, self._user_zoomed = None, None, False
        self._y_range, self._y_seen = None, None
        # back to an empty view: a new run must not start on the axes of the run shown before it
        self.getPlotItem().getViewBox().setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.getPlotItem().enableAutoRange(x=True, y=True)
        for side in ("left", "right"):
            axis = self.getPlotItem().getAxis(side)
            if isinstance(axis, ReadableAxis):
                axis.reset_text_space()
        if self.legend is not None:
            self.legend.clear()

    def steps(self, series: str) -> bool:
        """Whether a series is drawn as steps."""
        return is_best_so_far(series) if self._step is None else self._step

    def declare_series(self, *names: str) -> None:
        """Make the curves and legend entries of series known in advance (at a run's start): a legend
        entry made when the first points arrive re-lays the plot out, and the plot is painted twice
        with both axes re-rendered, in the busiest turn of the run (issue 14)."""
        for series in names:
            if series not in self._data:
                color = series_colour(len(self._data))
                self._data[series] = ([], [])
                # "right": y[i] holds from x[i] to x[i+1] (pyqtgraph's naming)
                self._curves[series] = self.plot([], [], name=series, pen=pg.mkPen(color, width=2),
                                                 symbol="o", symbolSize=5, symbolBrush=color, symbolPen=color,
                                                 stepMode="right" if self.steps(series) else None)
                self._place_legend()

    def add_points(self, series: str, xs: list[float], ys: list[float]) -> None:
        self.declare_series(series)
        dx, dy = self._data[series]
        dx.extend(xs)
        dy.extend(ys)
        self._pending.add(series)
        self._pending_xs.extend(xs)
        self._pending_ys.extend(ys)
        now = time.monotonic()
        wait = self._last_redraw + self.redraw_interval_s - now
        if self.redraw_interval_s > 0:      # not in the same turn of the event loop as another plot
            wait = max(wait, LivePlot._last_any_redraw + REDRAW_STAGGER_S - now)
        if wait <= 0:
            self.redraw()
        elif not self._redraw_timer.isActive():
            self._redraw_timer.start(max(1, int(wait * 1000)))

    def redraw(self) -> None:
        """Hand the points added since the last redraw to their curves (and keep x ahead of them)."""
        self._redraw_timer.stop()
        self._last_redraw = time.monotonic()
        if self.redraw_interval_s > 0:
            LivePlot._last_any_redraw = self._last_redraw
        for series in self._pending:
            dx, dy = self._data[series]
            self._curves[series].setData(np.asarray(dx, float), np.asarray(dy, float))
        xs, self._pending_xs = self._pending_xs, []
        ys, self._pending_ys = self._pending_ys, []
        self._pending.clear()
        if xs:
            self._grow_x(xs)
        if ys:
            self._grow_y(ys)

    def _extent(self, axis: str, values: list[float], seen: tuple[float, float] | None) -> tuple[float, float] | None:
        """The data's extent on `axis` ("bottom", "left") so far, the finite `values` included; None where
        the axis's range is left alone: a log axis, a range the user set by zooming or panning, or no
        finite value."""
        if self._user_zoomed or self.getPlotItem().getAxis(axis).logMode:
            return None
        finite = [v for v in values if math.isfinite(v)]
        if not finite:
            return None
        lo, hi = min(finite), max(finite)
        if seen is not None:
            lo, hi = min(lo, seen[0]), max(hi, seen[1])
        return lo, hi

    def _grow_x(self, new_xs: list[float]) -> None:
        """Keep the x range ahead of the data (a third of the span as headroom) instead of following
        every new point: a changed range re-renders both axes with their grid (6-7 ms each), which on
        every batch of a live run kept the window busy (issue 14). Log x axes, and a range the user set
        by zooming or panning, are left alone."""
        seen = self._extent("bottom", new_xs, self._x_seen)
        if seen is None:
            return
        self._x_seen = lo, hi = seen
        if self._x_range is not None and self._x_range[0] <= lo and hi <= self._x_range[1]:
            return
        span = (hi - lo) or abs(hi) or 1.0
        self._x_range = (lo, hi + span / 3)
        self.getPlotItem().getViewBox().setXRange(*self._x_range, padding=0.02)

    def _grow_y(self, new_ys: list[float]) -> None:
        """The y range set here rather than by pyqtgraph's auto-range, which runs as the scene is
        painted and, when it moves the range, has the scene painted a second time (5-7 ms a plot).
        A quarter of the span as headroom on the side the data left the range (a best length keeps
        falling), so most improvements keep the range; log axes and a user's zoom are left alone."""
        seen = self._extent("left", new_ys, self._y_seen)
        if seen is None:
            return
        self._y_seen = lo, hi = seen
        old = self._y_range
        if old is not None and old[0] <= lo and hi <= old[1]:
            return
        if old is None and lo == hi:
            # A constant series (so far): its value against zero, not a ±0.5 % window whose ticks read
            # 18.91, 18.92, ... around 19 (issue 30); the range grows as soon as the data varies.
            self._y_range = (min(0.0, 1.25 * lo), max(0.0, 1.25 * hi)) if lo else (-1.0, 1.0)
            self.getPlotItem().getViewBox().setYRange(*self._y_range, padding=0)
            return
        span = (hi - lo) or abs(hi) * 0.1 or 1.0
        below = old is None or lo < old[0]
        above = old is None or hi > old[1]
        self._y_range = (lo - span * (0.25 if below and old is not None else 0.05),
                         hi + span * (0.25 if above and old is not None else 0.05))
        self.getPlotItem().getViewBox().setYRange(*self._y_range, padding=0)

    def _on_user_zoom(self, *_: Any) -> None:
        self._user_zoomed = True

    def series(self) -> dict[str, tuple[list[float], list[float]]]:
        return self._data


def export_plot(plot: pg.PlotWidget, path: str) -> None:
    """Save a plot as PNG or SVG, chosen by the file's suffix (with every point added so far)."""
    if isinstance(plot, LivePlot):
        plot.redraw()
    item = plot.getPlotItem()
    if path.lower().endswith(".svg"):
        try:
            pyqtgraph.exporters.SVGExporter(item).export(path)
        except ValueError:          # pyqtgraph 0.14's exporter cannot read this Qt's SVG paths: Qt draws it
            atomic_write_bytes(Path(path), _widget_svg(plot))
    else:
        pyqtgraph.exporters.ImageExporter(item).export(path)


def _widget_svg(widget: pg.PlotWidget) -> bytes:
    """The plot painted as SVG (vectors: lines, bars and text) by Qt's own SVG generator."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRect
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(widget.size())
    gen.setViewBox(QRect(0, 0, widget.width(), widget.height()))
    painter = QPainter(gen)
    try:
        widget.render(painter)          # QGraphicsView.render: the scene as on screen
    finally:
        painter.end()
    buf.close()
    return bytes(data.data())


def ask_export_plot(parent: QWidget, plot: pg.PlotWidget, stem: str = "plot") -> str | None:
    path, _ = QFileDialog.getSaveFileName(parent, "Export plot", f"{stem}.png", "PNG image (*.png);;SVG image (*.svg)")
    if path:
        export_plot(plot, path)
    return path or None


def table_to_csv(table: QTableWidget) -> str:
    """The visible table as CSV text (headers first)."""
    import csv
    import io

    def text(item: QTableWidgetItem | None) -> str:
        return item.text() if item is not None else ""

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([text(table.horizontalHeaderItem(c)) for c in range(table.columnCount())])
    for r in range(table.rowCount()):
        w.writerow([text(table.item(r, c)) for c in range(table.columnCount())])
    return buf.getvalue()


def ask_export_table(parent: QWidget, table: QTableWidget, stem: str = "table") -> str | None:
    path, _ = QFileDialog.getSaveFileName(parent, "Export table", f"{stem}.csv", "CSV (*.csv)")
    if path:
        atomic_write_text(Path(path), table_to_csv(table))
    return path or None
