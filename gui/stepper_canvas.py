"""The stepper's register planes on one canvas: a grid of views with linked pan and zoom.

napari's grid mode is the model: every plane is a view of the same pixel array, so panning or
zooming one moves all of them (`follow`); the grid takes as many columns as give the largest tiles for the
canvas's shape; hidden planes give their room to the others; a double click on a plane shows it
alone (and again brings the others back). Each tile carries badges drawn in screen space (they do
not zoom): its name, "written" or "read" for the current instruction, and one arrow per NEWS shift
into it. One colour bar beside the grid: the shared scale, or, with a scale per plane, the fraction
of each plane's own limit (the tiles' badges give the limits).

Only tiles whose plane changed are re-imaged on a step (records share unchanged planes), so a step
costs the planes the instruction wrote.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QWidget

from gui.plotting import diverging_colormap, theme
from sims.scamp5.step_effects import Shift

WRITE_COLOUR = QColor(255, 150, 0)          # border and badge of a register the instruction writes
READ_COLOUR = QColor(120, 160, 200)         # badge of a register it reads
ARROW = 16                                  # px, the arrow glyph in a shift badge
COLORBAR_WIDTH = 12
SPACING = 3                                 # px between tiles
COLORBAR_HEIGHT = 40                        # px, the horizontal colour bar


class Badge(QGraphicsItem):
    """A small label with an optional arrow, fixed in screen pixels over a view."""

    def __init__(self, parent: QGraphicsItem | None = None, bold: bool = False) -> None:
        super().__init__(parent)
        self.text = ""
        self.arrow: tuple[int, int] | None = None      # (drow, dcol)
        self.fg = QColor("black")
        self.bg = QColor(255, 255, 255, 200)
        self.font = QFont()
        self.font.setBold(bold)
        self._rect = QRectF()
        self.setZValue(1000)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set(self, text: str, fg: QColor, bg: QColor, arrow: tuple[int, int] | None = None) -> None:
        if (text, arrow) == (self.text, self.arrow) and fg == self.fg and bg == self.bg:
            return
        self.prepareGeometryChange()
        self.text, self.fg, self.bg, self.arrow = text, QColor(fg), QColor(bg), arrow
        fm = QFontMetricsF(self.font)
        w = fm.horizontalAdvance(text) + 8 + (ARROW + 4 if arrow else 0)
        h = max(fm.height(), ARROW if arrow else 0.0) + 4
        self._rect = QRectF(0, 0, w, h)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt name)
        return self._rect

    def paint(self, p: QPainter, *_args: Any) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(self.bg)
        p.drawRoundedRect(self._rect, 3, 3)
        x = 4.0
        if self.arrow is not None:
            self._paint_arrow(p, QRectF(x, (self._rect.height() - ARROW) / 2, ARROW, ARROW))
            x += ARROW + 4
        p.setPen(self.fg)
        p.setFont(self.font)
        p.drawText(QRectF(x, 0, self._rect.width() - x, self._rect.height()),
                   int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), self.text)

    def _paint_arrow(self, p: QPainter, box: QRectF) -> None:
        assert self.arrow is not None
        dr, dc = self.arrow
        c = box.center()
        half = box.width() / 2 - 1
        tip = QPointF(c.x() + dc * half, c.y() + dr * half)
        tail = QPointF(c.x() - dc * half, c.y() - dr * half)
        side = QPointF(-dr * half * 0.55, dc * half * 0.55)         # perpendicular to the direction
        back = QPointF(tip.x() - dc * half * 0.8, tip.y() - dr * half * 0.8)
        p.setPen(QPen(self.fg, 2.2, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.drawLine(tail, back)
        head = QPainterPath(tip)
        head.lineTo(back + side)
        head.lineTo(back - side)
        head.closeSubpath()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(self.fg)
        p.drawPath(head)


def lut32(cmap: pg.ColorMap) -> np.ndarray:
    """The colour map as 256 opaque ARGB32 words: index i shows the value (i - 128) / 127.5 of the
    limit (PlaneImage.set_plane), so 128 is exactly the map's middle (zero)."""
    pos = np.clip(0.5 + (np.arange(256) - 128) / 255.0, 0.0, 1.0)
    rgb = np.asarray(cmap.map(pos, mode="byte"))[:, :3].astype(np.uint32)
    return (0xFF000000 | (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]).astype(np.uint32)


class PlaneImage(QGraphicsObject):
    """A register plane as an image, one PE per unit square.

    The colour lookup happens once per plane and limit, in numpy, into an ARGB32 image that Qt
    draws as it is: pyqtgraph's ImageItem hands Qt an indexed image, converted again at every
    paint (0.57 ms against 0.09 ms per 256x256 plane here), and a step repaints several planes."""

    def __init__(self, colours: np.ndarray) -> None:
        super().__init__()
        self.lut = colours
        self.qimage: QImage | None = None
        self._buf = np.zeros((0, 0), np.uint32)
        self._rect = QRectF()
        self.click_handler: Any = None

    def set_plane(self, plane: np.ndarray, limit: float) -> None:
        idx = np.clip(plane * (127.5 / limit) + 128.0, 0, 255).astype(np.uint8)
        self._buf = np.ascontiguousarray(self.lut[idx])
        rows, cols = plane.shape
        if self._rect.size() != QSizeF(cols, rows):
            self.prepareGeometryChange()
            self._rect = QRectF(0, 0, cols, rows)
        self.qimage = QImage(self._buf.data, cols, rows, 4 * cols, QImage.Format.Format_ARGB32_Premultiplied)
        self.update()

    def set_lut(self, colours: np.ndarray) -> None:
        self.lut = colours

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt name)
        return self._rect

    def paint(self, p: QPainter, *_args: Any) -> None:
        if self.qimage is not None:
            p.drawImage(self._rect, self.qimage)

    def mouseClickEvent(self, ev: Any) -> None:  # noqa: N802 (pyqtgraph name)
        if self.click_handler is not None:
            self.click_handler(ev)


@dataclass
class Tile:
    """One register plane's view."""

    name: str
    vb: pg.ViewBox
    image: PlaneImage
    marker: pg.ScatterPlotItem
    title: Badge
    shift_badges: list[Badge] = field(default_factory=list)
    shown: np.ndarray | None = None          # the array on show (compared by identity)
    levels: tuple[float, float] | None = None
    shifts: list[Shift] = field(default_factory=list)
    role: str = ""                            # "written", "read" or ""
    border: str | None = None                 # the role the border was drawn for
    pe: tuple[int, int] | None = None         # where the marker is


def best_columns(n: int, width: float, height: float, bar: float = 0.0, spacing: float = 4.0) -> int:
    """The column count giving the largest square tiles for n planes in width x height pixels."""
    if n <= 0:
        return 1
    best, best_side = 1, -1.0
    for cols in range(1, n + 1):
        rows = math.ceil(n / cols)
        side = min((width - bar - spacing * cols) / cols, (height - spacing * rows) / rows)
        if side > best_side + 0.5:
            best, best_side = cols, side
    return best


class PlaneCanvas(pg.GraphicsLayoutWidget):
    """The grid of register planes; see the module docstring."""

    pe_clicked = Signal(int, int)
    hovered = Signal(str, int, int)         # plane, row, column (plane "" when the mouse left the planes)
    layout_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent)
        self.ci.setSpacing(SPACING)
        self.ci.setContentsMargins(0, 0, 0, 0)
        self.tiles: dict[str, Tile] = {}
        self.order: list[str] = []
        self.hidden: set[str] = set()
        self.solo: str | None = None
        self.columns = 0
        self._needs_fit = True
        self._placed: list[Any] = []
        self._theme = theme()
        self._lut = lut32(diverging_colormap(self._theme))
        # the colour bar lives in a small view of its own, for the stepper to place under the grid
        self.colorbar_view = pg.GraphicsLayoutWidget()
        self.colorbar_view.setFixedHeight(COLORBAR_HEIGHT)
        self.colorbar_view.setMinimumWidth(100)
        self.colorbar_view.ci.setContentsMargins(0, 0, 0, 0)
        self.colorbar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=diverging_colormap(self._theme),
                                        interactive=False, width=COLORBAR_WIDTH, colorMapMenu=False,
                                        orientation="horizontal")
        self.colorbar_view.addItem(self.colorbar)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.apply_theme()
        self._themed = True

    # ------------------------------------------------------------------ planes
    def set_planes(self, names: Sequence[str]) -> None:
        """One tile per plane (a new run); keeps which planes were hidden where names repeat."""
        if list(names) == self.order:
            for t in self.tiles.values():
                t.shown, t.levels = None, None
            return
        self._unplace()
        for t in self.tiles.values():
            if t.vb.scene() is not None:
                t.vb.scene().removeItem(t.vb)
        self.tiles.clear()
        self.order = list(names)
        self.hidden &= set(names)
        if self.solo not in names:
            self.solo = None
        for name in names:
            self.tiles[name] = self._make_tile(name)
        self.relayout(force=True)

    def _make_tile(self, name: str) -> Tile:
        vb = pg.ViewBox(lockAspect=True, enableMenu=False, invertY=True)
        img = PlaneImage(self._lut)
        vb.addItem(img)
        marker = pg.ScatterPlotItem(size=10, pen=pg.mkPen(self._theme.foreground, width=1.5), brush=None, symbol="s")
        vb.addItem(marker, ignoreBounds=True)
        title = Badge(vb, bold=True)
        title.setPos(4, 4)
        tile = Tile(name, vb, img, marker, title)
        img.click_handler = lambda ev, t=tile: self._clicked(t, ev)
        vb.sigRangeChangedManually.connect(lambda _mask, t=tile: self.follow(t.name))
        self._paint_title(tile)
        return tile

    def visible_planes(self) -> list[str]:
        if self.solo is not None:
            return [self.solo]
        return [n for n in self.order if n not in self.hidden]

    def set_plane_visible(self, name: str, on: bool) -> None:
        if name not in self.tiles:
            return
        if on:
            self.hidden.discard(name)
        else:
            self.hidden.add(name)
        self.solo = None
        self.relayout(force=True)

    def toggle_solo(self, name: str) -> None:
        """Show only this plane, or all shown planes again."""
        self.solo = None if self.solo == name else name
        self.relayout(force=True)

    # ------------------------------------------------------------------ layout
    def _unplace(self) -> None:
        for item in self._placed:
            self.ci.removeItem(item)
        self._placed = []

    def relayout(self, force: bool = False) -> None:
        """Place the visible tiles in the grid with the best column count for the canvas."""
        names = self.visible_planes()
        cols = best_columns(len(names), self.width(), self.height(), 0, SPACING)
        if not force and cols == self.columns and self._placed:
            return
        self.columns = cols
        self._unplace()
        for i, name in enumerate(names):
            r, c = divmod(i, cols)
            self.ci.addItem(self.tiles[name].vb, row=r, col=c)
            self._placed.append(self.tiles[name].vb)
        for c in range(cols):
            self.ci.layout.setColumnStretchFactor(c, 1)
        self.ci.layout.activate()
        self._place_badges()
        if self._needs_fit:
            self.reset_view()
        self.layout_changed.emit()

    def resizeEvent(self, ev: Any) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(ev)
        if getattr(self, "_themed", False):
            self.relayout()
            self._place_badges()
            if self._needs_fit:
                self.reset_view()

    def showEvent(self, ev: Any) -> None:  # noqa: N802 (Qt name)
        super().showEvent(ev)
        if self._needs_fit:
            self.reset_view()

    def follow(self, name: str) -> None:
        """Give every other view the range of this one (after the user panned or zoomed it).

        pyqtgraph's own axis links also pass ranges on while views are being resized, scaled by
        their pixel sizes: a view a few pixels high then blows the others up to ranges of 10⁴ PEs.
        Only a user's pan or zoom passes a range on here, as a rectangle in PEs; each view keeps its
        aspect around the same centre."""
        rect = self.tiles[name].vb.viewRect()
        for other, t in self.tiles.items():
            if other != name:
                t.vb.setRange(rect=rect, padding=0)

    def reset_view(self) -> None:
        """The whole array in every view. Views only a few pixels big (the canvas not shown yet) are
        left for later: fitting them gives a degenerate range."""
        names = self.visible_planes()
        shown = [self.tiles[n] for n in names if self.tiles[n].shown is not None]
        if not shown:
            return
        vb = shown[0].vb
        if not self.isVisible() or vb.width() < 16 or vb.height() < 16:
            self._needs_fit = True
            return
        rows, cols = shown[0].shown.shape
        for t in self.tiles.values():
            t.vb.setRange(xRange=(0, cols), yRange=(0, rows), padding=0)
        self._needs_fit = False

    def fit_pixels_per_pe(self) -> float:
        """Screen pixels per PE when the whole array fills a tile (the smallest tile on show)."""
        out = math.inf
        for name in self.visible_planes():
            t = self.tiles[name]
            if t.shown is None:
                continue
            rows, cols = t.shown.shape
            g = t.vb.boundingRect()
            out = min(out, g.width() / cols, g.height() / rows)
        return 0.0 if out == math.inf else out

    def view_range(self, name: str) -> list[list[float]]:
        return self.tiles[name].vb.viewRange()

    # ------------------------------------------------------------------ drawing
    def show_planes(self, planes: Mapping[str, np.ndarray], limits: Mapping[str, float], pe: tuple[int, int]) -> int:
        """Image every tile whose plane or levels changed; returns how many were re-imaged."""
        fresh = 0
        first_image = all(t.shown is None for t in self.tiles.values())
        for name, t in self.tiles.items():
            plane = planes[name]
            lim = float(limits[name]) or 1.0
            levels = (-lim, lim)
            if plane is not t.shown or levels != t.levels:
                first = t.shown is None
                t.image.set_plane(plane, lim)
                t.shown, t.levels = plane, levels
                fresh += 1
                if first:
                    self._needs_fit = True
            if t.pe != pe:
                t.marker.setData([pe[1] + 0.5], [pe[0] + 0.5])
                t.pe = pe
        if first_image or self._needs_fit:
            self.reset_view()
        return fresh

    def set_colorbar(self, low: float, high: float) -> None:
        if (low, high) != tuple(self.colorbar.levels()):
            self.colorbar.setLevels((low, high))

    def mark(self, written: Sequence[str], read: Sequence[str], shifts: Sequence[Shift],
             limits: Mapping[str, float] | None = None) -> None:
        """Badges and borders for the current instruction: what it wrote and read, and its shifts."""
        for name, t in self.tiles.items():
            t.role = "written" if name in written else "read" if name in read else ""
            t.shifts = [s for s in shifts if s.dest == name]
            if t.border != t.role:              # a new border repaints the whole tile: only when it changes
                t.border = t.role
                t.vb.setBorder(pg.mkPen(WRITE_COLOUR, width=3) if t.role == "written"
                               else pg.mkPen(self._theme.foreground.darker(160) if self._theme.dark
                                             else QColor(190, 190, 190), width=1))
            self._paint_title(t, None if limits is None else limits.get(name))
            while len(t.shift_badges) < len(t.shifts):
                t.shift_badges.append(Badge(t.vb, bold=True))
            for badge, s in zip(t.shift_badges, t.shifts):
                badge.set(f"{'+'.join(s.sources)} {s.direction}", QColor("black"), WRITE_COLOUR, (s.drow, s.dcol))
                badge.show()
                badge.setToolTip(s.describe())
            for badge in t.shift_badges[len(t.shifts):]:
                badge.hide()
        self._place_badges()

    def _paint_title(self, t: Tile, limit: float | None = None) -> None:
        th = self._theme
        scale = "" if limit is None else "  all 0" if limit == 0 else f"  ±{limit:.3g}"
        text = t.name + scale + (f"  {t.role}" if t.role else "")
        if t.role == "written":
            t.title.set(text, QColor("black"), WRITE_COLOUR)
        elif t.role == "read":
            t.title.set(text, QColor("black"), READ_COLOUR)
        else:
            bg = QColor(th.background)
            bg.setAlpha(200)
            t.title.set(text, th.foreground, bg)

    def _place_badges(self) -> None:
        """Shift badges stack under the title badge, in the tile's top-left corner."""
        for t in self.tiles.values():
            y = 4.0 + t.title.boundingRect().height() + 3
            for badge in t.shift_badges:
                if badge.isVisible():
                    badge.setPos(4.0, y)
                    y += badge.boundingRect().height() + 3

    # ------------------------------------------------------------------ theme
    def apply_theme(self) -> None:
        self._theme = th = theme()
        self.setBackground(th.background)
        self.colorbar_view.setBackground(th.background)
        self._lut = lut32(diverging_colormap(th))
        self.colorbar.setColorMap(diverging_colormap(th))
        for side in ("left", "right", "top", "bottom"):
            axis = self.colorbar.getAxis(side)
            axis.setPen(pg.mkPen(th.foreground))
            axis.setTextPen(pg.mkPen(th.foreground))
        for t in self.tiles.values():
            t.image.set_lut(self._lut)
            t.shown = None                       # re-image with the new colours
            t.marker.setPen(pg.mkPen(th.foreground, width=1.5))
            t.border = None
            self._paint_title(t)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.PaletteChange and getattr(self, "_themed", False):
            self.apply_theme()
        super().changeEvent(event)

    # ------------------------------------------------------------------ mouse
    def _clicked(self, t: Tile, ev: Any) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        ev.accept()
        if ev.double():
            self.toggle_solo(t.name)
            return
        pos = ev.pos()
        self.pe_clicked.emit(int(pos.y()), int(pos.x()))

    def _mouse_moved(self, pos: QPointF) -> None:
        for name in self.visible_planes():
            t = self.tiles[name]
            if t.shown is not None and t.vb.sceneBoundingRect().contains(pos):
                p = t.vb.mapSceneToView(pos)
                r, c = int(math.floor(p.y())), int(math.floor(p.x()))
                if 0 <= r < t.shown.shape[0] and 0 <= c < t.shown.shape[1]:
                    self.hovered.emit(name, r, c)
                    return
        self.hovered.emit("", -1, -1)
