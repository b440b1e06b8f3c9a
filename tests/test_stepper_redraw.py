"""What a step of the SCAMP-5 stepper redraws (issue 14: a step well under 16 ms, Play at 30 instr/s):
images and colour limits found again instead of computed when a step is shown again, the written
frame as strips, the PE inspector's height fixed for a run and only its changed parts repainted,
the listing scrolled only near its edge. Each check also looks at what is on show, so a cache that
showed the wrong step would fail here."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


import numpy as np
import pytest

from sims.scamp5.bus import NEWS
from tests import stepper_fixtures

replay = stepper_fixtures.replay        # the fixtures, shared with the other stepper tests
stepper = stepper_fixtures.stepper



def _sweep(st) -> None:
    for i in list(range(1, st.steps + 1)) + list(range(st.steps - 1, -1, -1)):
        st.set_step(i)


@pytest.mark.parametrize("mode", ["step", "plane", "shared"])
def test_a_step_shown_again_renders_no_image_and_shows_its_own_planes(stepper, replay, mode: str) -> None:
    from gui.panels.simulate.canvas import render_plane

    stepper.set_scale_mode(mode)
    _sweep(stepper)
    misses = stepper.canvas.images.misses
    assert misses > 0
    _sweep(stepper)
    stepper.set_step(7)
    assert stepper.canvas.images.misses == misses                    # all found again
    assert stepper.canvas.images.hits > 0
    lims = stepper.limits()
    for name, t in stepper.canvas.tiles.items():                      # and they are step 7's
        plane = replay.run.records[7].state.values[name]
        assert t.shown is plane
        _, want = render_plane(plane, lims[name] or 1.0, t.image.lut)
        assert t.image.qimage == want, name


def test_the_image_cache_keeps_to_its_budget() -> None:
    from gui.panels.simulate.canvas import ImageCache, lut32
    from gui.plotting import diverging_colormap, theme

    lut = lut32(diverging_colormap(theme()))
    cache = ImageCache(max_bytes=3 * 16 * 16 * 4)
    planes = [np.full((16, 16), float(i)) for i in range(5)]
    for p in planes:
        cache.image(p, 4.0, lut)
    assert len(cache) == 3 and cache.bytes == 3 * 16 * 16 * 4 and cache.misses == 5
    cache.image(planes[4], 4.0, lut)                                  # the newest is kept
    assert cache.hits == 1
    cache.image(planes[4], 2.0, lut)                                  # another limit is another image
    assert cache.misses == 6
    other = planes[4].copy()
    assert cache.image(other, 4.0, lut).pixelColor(0, 0) == cache.image(planes[4], 4.0, lut).pixelColor(0, 0)


def test_step_limits_are_computed_once_per_array(stepper, replay, monkeypatch) -> None:
    import gui.panels.simulate.stepper as module
    from sims.scamp5.render import robust_limit

    calls: list[int] = []
    monkeypatch.setattr(module, "robust_limit", lambda planes: calls.append(1) or robust_limit(planes))
    stepper.set_scale_mode("step")
    _sweep(stepper)
    distinct = {id(r.state.values[p]) for r in replay.run.records for p in stepper.planes}
    assert 0 < len(calls) <= len(distinct)                            # records share unchanged planes
    first = len(calls)
    _sweep(stepper)
    assert len(calls) == first                                        # none again
    for step in (0, 5, 21):
        stepper.set_step(step)
        lims = stepper.limits()
        assert lims == {p: robust_limit([replay.run.records[step].state.values[p]]) for p in stepper.planes}


def test_change_mode_shares_one_zero_plane_and_is_right(stepper, replay) -> None:
    stepper.diff_box.setChecked(True)
    stepper.set_step(3)                                               # movx(E, D, west): writes NEWS and E
    planes = stepper.current_planes()
    now, prev = replay.run.records[3].state.values, replay.run.records[2].state.values
    zero = planes["A"]
    assert not zero.any() and all(planes[p] is zero for p in ("A", "B", "C", "D", "F"))
    for p in ("E", NEWS):
        assert np.array_equal(planes[p], now[p] - prev[p])
    assert stepper.current_planes() is planes                         # computed once per step
    stepper.set_step(4)
    before = stepper.canvas.images.misses
    stepper.set_step(3)
    assert stepper.canvas.images.misses == before                     # its images found again


def test_the_written_frame_is_drawn_on_written_planes_only(stepper, qtbot) -> None:
    from gui.panels.simulate.canvas import WRITE_COLOUR

    stepper.set_step(3)                                               # writes NEWS and E
    on = {n for n, t in stepper.canvas.tiles.items() if t.frame.on}
    assert on == {"E", NEWS}
    assert all(s.isVisible() for s in stepper.canvas.tiles["E"].frame.strips)
    assert not any(s.isVisible() for s in stepper.canvas.tiles["A"].frame.strips)
    qtbot.wait(10)
    image = stepper.canvas.grab().toImage()

    def edge_colour(name: str):
        vb = stepper.canvas.tiles[name].vb
        rect = stepper.canvas.mapFromScene(vb.sceneBoundingRect()).boundingRect()
        return image.pixelColor(rect.left() + 1, rect.center().y())

    assert edge_colour("E") == WRITE_COLOUR and edge_colour(NEWS) == WRITE_COLOUR
    assert edge_colour("A") != WRITE_COLOUR
    stepper.set_step(4)                                               # movx(C, E, north)? whatever it writes:
    assert {n for n, t in stepper.canvas.tiles.items() if t.frame.on} == set(stepper.effects()[0])


def test_the_inspector_keeps_its_height_over_a_run(stepper) -> None:
    view = stepper.inspector.view
    heights = set()
    for i in range(stepper.steps + 1):
        stepper.set_step(i)
        heights.add(view.minimumHeight())
        assert f"after step {i}" in stepper.inspector.text()
    assert len(heights) == 1


def test_the_inspector_repaints_only_what_a_step_changed(stepper, monkeypatch) -> None:
    from PySide6.QtGui import QRegion

    view = stepper.inspector.view
    stepper.set_step(2)
    regions: list[QRegion] = []
    monkeypatch.setattr(view, "update", lambda *a: regions.append(QRegion(a[0]) if a else QRegion(view.rect())))
    stepper.set_step(3)                                               # movx(E, D, west): writes NEWS and E
    [dirty] = regions
    lay = view._layout(view.width(), len(view.shown.values), view.shown.goals, list(view.shown.values))
    assert dirty.intersects(lay.rows["E"].toAlignedRect()) and dirty.intersects(lay.rows[NEWS].toAlignedRect())
    assert not dirty.intersects(lay.rows["B"].toAlignedRect())       # neither written nor changed
    assert dirty.boundingRect().height() < view.height()


def test_the_listing_keeps_the_current_line_in_view(stepper) -> None:
    stepper.resize(1400, 400)
    for i in list(range(stepper.steps + 1)) + [3, 18, 0]:
        stepper.set_step(i)
        rect = stepper.listing.visualItemRect(stepper.listing.item(i))
        assert stepper.listing.viewport().rect().contains(rect), i


@pytest.mark.parametrize("width", [1100, 1350, 1366, 1600, 1920])
def test_what_a_step_leaves_on_screen_is_what_a_full_repaint_draws(stepper, width: int) -> None:
    """The partial repaints (changed tiles, frame strips, the inspector's changed rows and Goals,
    the listing scrolled only near its edge) leave the window as a full repaint would draw it, at
    several widths: the offscreen screen hands back the window's backing store after the step, and
    again after the part is repainted whole. (Checked to fail when the inspector skips a repaint,
    and at 1350 px when the planes were drawn scaled by Qt: its raster engine samples a scaled
    image one way under one clip rectangle and another way under several, so PE edges moved by a
    pixel where a step repainted part of a tile.)"""
    from PySide6.QtWidgets import QApplication

    stepper.resize(width, 700)
    QApplication.processEvents()
    parts = {"canvas": stepper.canvas.viewport(), "inspector": stepper.inspector.scroll_area.viewport(),
             "listing": stepper.listing.viewport(), "bus": stepper.bus_list.viewport(),
             "planes": stepper.plane_list.viewport()}
    stepper.set_pe(9, 20)
    for step in list(range(1, stepper.steps + 1)) + list(range(stepper.steps - 1, -1, -3)):
        stepper.set_step(step)
        QApplication.processEvents()              # the step's paint, then the lists' own zero-time updates
        QApplication.processEvents()
        for name, w in parts.items():
            seen = _in_view(w, stepper)                               # a list may run under its neighbour
            shown = _on_screen(stepper, seen)
            w.repaint()                                               # the whole part, at once
            fresh = _on_screen(stepper, seen)
            assert not shown.isNull() and shown.size() == fresh.size() == seen.size(), name
            assert shown == fresh, (width, step, name, _where_they_differ(shown, fresh))


def _on_screen(top, rect):
    return top.screen().grabWindow(top.winId(), rect.x(), rect.y(), rect.width(), rect.height()).toImage()


def _where_they_differ(a, b) -> tuple[int, int, int, int] | None:
    """The bounding box (x0, y0, x1, y1) of the pixels where two images of one size differ."""
    x = np.frombuffer(a.constBits(), np.uint8).reshape(a.height(), a.bytesPerLine())
    y = np.frombuffer(b.constBits(), np.uint8).reshape(b.height(), b.bytesPerLine())
    ys, xs = np.nonzero(x != y)
    if not len(ys):
        return None
    px = a.depth() // 8
    return int(xs.min()) // px, int(ys.min()), int(xs.max()) // px, int(ys.max())


def _in_view(w, top):
    """The part of widget w its parents leave in view, in top's coordinates."""
    from PySide6.QtCore import QPoint, QRect

    rect = QRect(w.mapTo(top, QPoint(0, 0)), w.size())
    p = w.parentWidget()
    while p is not None and p is not top:
        rect &= QRect(p.mapTo(top, QPoint(0, 0)), p.size())
        p = p.parentWidget()
    return rect
