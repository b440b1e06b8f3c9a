"""The stepper's register planes on one canvas: a grid of views with linked pan and zoom.

napari's grid mode is the model: every plane is a view of the same pixel array, so panning or
zooming one moves all of them (`follow`); the grid takes as many columns as give the largest tiles for the
canvas's shape; hidden planes give their room to the others; a double click on a plane shows it
alone (and again brings the others back). Each tile carries badges drawn in screen space (they do
not zoom): its name, "written" or "read" for the current instruction, and one arrow per NEWS shift
into it. One colour bar beside the grid: the shared scale, or, with a scale per plane, the fraction
of each plane's own limit (the tiles' badges give the limits).

Only tiles whose plane changed are re-imaged on a step (records share unchanged planes), so a step
costs the planes the instruction wrote, and their images come from an ImageCache when the step was
shown before. What changes on a tile repaints only its own pixels: the written frame is four strips
(Frame), badges repaint their own rectangles, and the chosen PE's marker is a plain Qt item.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPainterPath, QPen, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QGraphicsRectItem, QWidget

from gui.plotting import diverging_colormap, theme
from sims.scamp5.step_effects import Shift

WRITE_COLOUR = QColor(255, 150, 0)          # border and badge of a register the instruction writes
READ_COLOUR = QColor(120, 160, 200)         # badge of a register it reads
SATURATED_COLOUR = QColor(220, 40, 40)      # badge of a register with PEs at the analogue limit
ARROW = 16                                  # px, the arrow glyph in a shift badge
COLORBAR_WIDTH = 12
SPACING = 3                                 # px between tiles
COLORBAR_HEIGHT = 40                        # px, the horizontal colour bar
BADGE_IMAGES: dict[tuple[Any, ...], QImage] = {}      # a badge's look -> its picture (Badge.paint)


class Badge(QGraphicsItem):
    """A small label with an optional arrow, fixed in screen pixels over a view.

    Drawn once per look into an image (BADGE_IMAGES, shared by all badges): a badge over a plane
    that changed is painted again at every step, and its rounded box, arrow and text cost 0.1 ms of
    Python each time against one drawImage."""

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
        device = p.device()
        dpr = device.devicePixelRatioF() if device is not None else 1.0
        key = (self.text, self.fg.rgba(), self.bg.rgba(), self.arrow, self.font.key(), dpr)
        image = BADGE_IMAGES.get(key)
        if image is None:
            size = self._rect.size() * dpr
            image = QImage(math.ceil(size.width()), math.ceil(size.height()), QImage.Format.Format_ARGB32_Premultiplied)
            image.setDevicePixelRatio(dpr)
            image.fill(Qt.GlobalColor.transparent)
            painter = QPainter(image)
            self.paint_direct(painter)
            painter.end()
            if len(BADGE_IMAGES) >= 512:
                BADGE_IMAGES.pop(next(iter(BADGE_IMAGES)))
            BADGE_IMAGES[key] = image
        p.drawImage(self._rect.topLeft(), image)

    def paint_direct(self, p: QPainter) -> None:
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


def render_plane(plane: np.ndarray, limit: float, lut: np.ndarray) -> tuple[np.ndarray, QImage]:
    """A plane through the colour table into an ARGB32 buffer and the QImage over it (keep both)."""
    idx = np.clip(plane * (127.5 / limit) + 128.0, 0, 255).astype(np.uint8)
    buf = np.ascontiguousarray(lut[idx])
    rows, cols = plane.shape
    return buf, QImage(buf.data, cols, rows, 4 * cols, QImage.Format.Format_ARGB32_Premultiplied)


class ImageCache:
    """Rendered planes by (array, limit), least recently used dropped past `max_bytes`.

    A run's records share unchanged planes, so stepping back and forth or Play's loop shows the
    same arrays again: replaying a step then costs no numpy. Keys hold the array itself, so an
    id() re-used by a new array never finds an old image."""

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[tuple[int, float], tuple[np.ndarray, np.ndarray, QImage]] = OrderedDict()

    def image(self, plane: np.ndarray, limit: float, lut: np.ndarray) -> QImage:
        key = (id(plane), limit)
        hit = self._items.get(key)
        if hit is not None and hit[0] is plane:
            self._items.move_to_end(key)
            self.hits += 1
            return hit[2]
        self.misses += 1
        buf, qimage = render_plane(plane, limit, lut)
        if hit is not None:
            self.bytes -= hit[1].nbytes
        self._items[key] = (plane, buf, qimage)
        self._items.move_to_end(key)
        self.bytes += buf.nbytes
        while self.bytes > self.max_bytes and len(self._items) > 1:
            _, (_, old, _) = self._items.popitem(last=False)
            self.bytes -= old.nbytes
        return qimage

    def clear(self) -> None:
        self._items.clear()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)


class PlaneImage(QGraphicsObject):
    """A register plane as an image, one PE per unit square.

    The colour lookup happens once per plane and limit, in numpy, into an ARGB32 image that Qt
    draws as it is (render_plane; ImageCache keeps them): pyqtgraph's ImageItem hands Qt an indexed
    image, converted again at every paint (0.57 ms against 0.09 ms per 256x256 plane here), and a
    step repaints several planes."""

    def __init__(self, colours: np.ndarray) -> None:
        super().__init__()
        self.lut = colours
        self.qimage: QImage | None = None
        self._buf = np.zeros((0, 0), np.uint32)
        self._rect = QRectF()
        self.click_handler: Any = None
        self._scaled_key: tuple[Any, ...] = ()
        self._scaled_image: QImage | None = None

    def set_plane(self, plane: np.ndarray, limit: float, cache: ImageCache | None = None) -> None:
        if cache is not None:
            self.set_image(cache.image(plane, limit, self.lut))
        else:
            self._buf, qimage = render_plane(plane, limit, self.lut)
            self.set_image(qimage)

    def set_image(self, qimage: QImage) -> None:
        rows, cols = qimage.height(), qimage.width()
        if self._rect.size() != QSizeF(cols, rows):
            self.prepareGeometryChange()
            self._rect = QRectF(0, 0, cols, rows)
        self.qimage = qimage
        self.update()

    def set_lut(self, colours: np.ndarray) -> None:
        self.lut = colours

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt name)
        return self._rect

    def paint(self, p: QPainter, *_args: Any) -> None:
        """The plane scaled once into the pixels of its visible part (`_scaled`), then copied 1:1.

        Qt's raster engine samples a scaled image one way under a rectangular clip (a full repaint)
        and another way under a clip of several rectangles (a step's partial repaint): at zooms where
        a PE is a fractional number of pixels the two put PE edges a pixel apart, so a step left the
        tiles differing from a full repaint (at 1350 px wide, say). A 1:1 copy at whole pixels is the
        same under any clip."""
        if self.qimage is None:
            return
        world = p.worldTransform()
        if world.isRotating() or not world.isAffine():          # never in the grid: Qt draws it
            p.drawImage(self._rect, self.qimage)
            return
        scaled = self._scaled(world, p)
        if scaled is not None:
            p.save()
            p.setWorldTransform(QTransform())
            p.drawImage(QPoint(*self._scaled_key[-1]), scaled)
            p.restore()

    def _scaled(self, world: QTransform, p: QPainter) -> QImage | None:
        """The part of the plane its view leaves visible, drawn at `world` into whole pixels, kept
        while the image, the transform and the view stay as they are."""
        assert self.qimage is not None
        area = QRectF(self._rect)
        clipper = self.parentItem()
        while clipper is not None and not clipper.flags() & QGraphicsItem.GraphicsItemFlag.ItemClipsChildrenToShape:
            clipper = clipper.parentItem()
        if clipper is not None:
            area &= self.mapRectFromItem(clipper, clipper.boundingRect())
        dev = world.mapRect(area)
        x0, y0 = math.floor(dev.left()), math.floor(dev.top())
        w, h = math.ceil(dev.right()) - x0, math.ceil(dev.bottom()) - y0
        if area.isEmpty() or w <= 0 or h <= 0:
            return None
        device = p.device()
        dpr = device.devicePixelRatioF() if device is not None else 1.0
        key = (self.qimage.cacheKey(), world.m11(), world.m22(), world.dx(), world.dy(), dpr, (w, h), (x0, y0))
        if key != self._scaled_key or self._scaled_image is None:
            size = (math.ceil(w * dpr), math.ceil(h * dpr))
            out = self._scaled_image                     # the last one's pixels, where the size is the same
            if out is None or (out.width(), out.height()) != size:
                out = QImage(*size, QImage.Format.Format_ARGB32_Premultiplied)
            out.setDevicePixelRatio(1.0)
            out.fill(Qt.GlobalColor.transparent)
            q = QPainter(out)
            q.setRenderHints(p.renderHints())
            q.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
            q.setTransform(world * QTransform.fromTranslate(-x0, -y0) * QTransform.fromScale(dpr, dpr))
            q.drawImage(self._rect, self.qimage)
            q.end()
            out.setDevicePixelRatio(dpr)
            self._scaled_key, self._scaled_image = key, out
        return self._scaled_image

    def mouseClickEvent(self, ev: Any) -> None:  # noqa: N802 (pyqtgraph name)
        if self.click_handler is not None:
            self.click_handler(ev)


class Frame:
    """The orange border of a written plane, in screen pixels over its view: four strips.

    A ViewBox's own border repaints the whole tile (image, marker, badges) when it changes, and so
    would one item over the tile (Qt unites an item's dirty rectangles); four plain Qt items repaint
    only the strips, so a plane that stops being written costs a frame's worth of pixels."""

    def __init__(self, parent: QGraphicsItem, width: float = 3.0) -> None:
        self.width = width
        self.on = False
        self.strips = []
        for _ in range(4):
            strip = QGraphicsRectItem(parent)
            strip.setPen(QPen(Qt.PenStyle.NoPen))
            strip.setBrush(WRITE_COLOUR)
            strip.setZValue(999)
            strip.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
            strip.hide()
            self.strips.append(strip)

    def set_size(self, size: QSizeF) -> None:
        w, h, b = size.width(), size.height(), self.width
        for strip, rect in zip(self.strips, (QRectF(0, 0, w, b), QRectF(0, h - b, w, b),
                                             QRectF(0, b, b, h - 2 * b), QRectF(w - b, b, b, h - 2 * b))):
            if strip.rect() != rect:
                strip.setRect(rect)

    def set_on(self, on: bool) -> None:
        if on != self.on:
            self.on = on
            for strip in self.strips:
                strip.setVisible(on)


def pe_marker(colour: QColor) -> QGraphicsRectItem:
    """The chosen PE's square, 10 screen pixels whatever the zoom (a plain Qt item: pyqtgraph's
    ScatterPlotItem took 0.2 ms of Python per paint, and every re-imaged tile paints it)."""
    item = QGraphicsRectItem(-5.0, -5.0, 10.0, 10.0)
    item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
    item.setPen(_marker_pen(colour))
    item.setBrush(Qt.BrushStyle.NoBrush)
    item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
    return item


def _marker_pen(colour: QColor) -> QPen:
    pen = QPen(colour, 1.5)
    pen.setCosmetic(True)
    return pen


@dataclass
class Tile:
    """One register plane's view."""

    name: str
    vb: pg.ViewBox
    image: PlaneImage
    marker: QGraphicsRectItem
    title: Badge
    frame: Frame
    shift_badges: list[Badge] = field(default_factory=list)
    shown: np.ndarray | None = None          # the array on show (compared by identity)
    levels: tuple[float, float] | None = None
    shifts: list[Shift] = field(default_factory=list)
    role: str = ""                            # "written", "read" or ""
    saturated: int = 0                        # PEs at or beyond the analogue range at this step
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
        self.images = ImageCache()
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
        self.images.clear()                     # the last run's images (and the arrays they hold)
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
        marker = pe_marker(self._theme.foreground)
        vb.addItem(marker, ignoreBounds=True)
        vb.setBorder(self._border_pen())
        title = Badge(vb, bold=True)
        title.setPos(4, 4)
        frame = Frame(vb)
        vb.sigResized.connect(lambda v, f=frame: f.set_size(v.size()))
        tile = Tile(name, vb, img, marker, title, frame)
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
        first = shown[0]
        vb = first.vb
        if not self.isVisible() or vb.width() < 16 or vb.height() < 16:
            self._needs_fit = True
            return
        assert first.shown is not None, "filtered above"
        rows, cols = first.shown.shape
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
                t.image.set_plane(plane, lim, self.images)
                t.shown, t.levels = plane, levels
                fresh += 1
                if first:
                    self._needs_fit = True
            if t.pe != pe:
                t.marker.setPos(pe[1] + 0.5, pe[0] + 0.5)
                t.pe = pe
        if first_image or self._needs_fit:
            self.reset_view()
        return fresh

    def set_colorbar(self, low: float, high: float) -> None:
        if (low, high) != tuple(self.colorbar.levels()):
            self.colorbar.setLevels((low, high))

    def mark(self, written: Sequence[str], read: Sequence[str], shifts: Sequence[Shift],
             limits: Mapping[str, float] | None = None, saturated: Mapping[str, int] | None = None) -> None:
        """Badges and borders for the current instruction: what it wrote and read, its shifts, and
        the planes with PEs at the analogue limit (`saturated`: plane -> PEs), their badges red."""
        for name, t in self.tiles.items():
            t.role = "written" if name in written else "read" if name in read else ""
            t.saturated = (saturated or {}).get(name, 0)
            t.shifts = [s for s in shifts if s.dest == name]
            t.frame.set_on(t.role == "written")      # repaints the frame's strips only, when it changes
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
        if t.saturated:
            text += f"  ⚠ {t.saturated} PEs saturated"
            t.title.set(text, QColor("white"), SATURATED_COLOUR)
        elif t.role == "written":
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
        self.images.clear()
        self.colorbar.setColorMap(diverging_colormap(th))
        for side in ("left", "right", "top", "bottom"):
            axis = self.colorbar.getAxis(side)
            axis.setPen(pg.mkPen(th.foreground))
            axis.setTextPen(pg.mkPen(th.foreground))
        for t in self.tiles.values():
            t.image.set_lut(self._lut)
            t.shown = None                       # re-image with the new colours
            t.marker.setPen(_marker_pen(th.foreground))
            t.vb.setBorder(self._border_pen())
            self._paint_title(t)

    def _border_pen(self) -> QPen:
        """Every tile's thin outline (a written plane's orange frame is drawn over it: Frame)."""
        th = self._theme
        return pg.mkPen(th.foreground.darker(160) if th.dark else QColor(190, 190, 190), width=1)

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
