"""Plots that read well (gui.plotting): no SI-prefix scaling, readable log ticks, best-so-far series
as steps, legends outside the data, and the palette's colours."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import math

from window_helpers import dark_palette

# Waits end when what they wait for happens; this only stops a test that hangs.
HANG_MS = 30_000


class FrozenClock:
    """Stands in for gui.plotting's `time`: the live plots' clock stands still, so points added one
    after another count as "soon after" however long a loaded machine takes between them (the plot's
    redraw timer itself still runs, and the tests wait for what it does)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


def test_axes_never_rescale_by_an_si_prefix(qtbot) -> None:
    from gui.plotting import LivePlot, new_plot

    plot = LivePlot(title="t", x_label="seconds", y_label="RMS error")
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.show()
    plot.add_points("error", [0.001, 0.002, 0.003], [0.0001, 0.0004, 0.0002])
    plot.getPlotItem().vb.autoRange()
    qtbot.wait(10)
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        assert axis.autoSIPrefixScale == 1.0
        assert "(x" not in axis.labelString() and "×" not in axis.labelString()
    other = new_plot(y_label="GB/s")
    qtbot.addWidget(other)
    other.plot([0, 1], [2e9, 3e9])
    other.getPlotItem().vb.autoRange()
    axis = other.getAxis("left")
    assert axis.range[1] > 1e9                                        # the axis saw the range
    assert axis.autoSIPrefixScale == 1.0 and axis.labelString().endswith("GB/s </span>")


def test_the_check_above_can_fail_with_pyqtgraphs_default() -> None:
    """The same data on a plain pyqtgraph axis does get a prefix: the test above tests something."""
    import pyqtgraph as pg

    axis = pg.AxisItem("left")
    axis.setLabel("RMS error")
    axis.setRange(0.0001, 0.0004)
    axis.updateAutoSIPrefix()
    assert axis.autoSIPrefixScale != 1.0


def test_log_ticks_read_as_numbers() -> None:
    from gui.plotting import ReadableAxis, readable_number

    assert [readable_number(x) for x in (1, 20, 500, 0.01, 12345, 1e6, 2e6, -3e-5)] == \
        ["1", "20", "500", "0.01", "12345", "10⁶", "2·10⁶", "-3·10⁻⁵"]
    axis = ReadableAxis("bottom")
    axis.setLogMode(True)
    decades = [0.0, 1.0, 2.0, 3.0]
    assert axis.tickStrings(decades, 1.0, 1.0) == ["1", "10", "100", "1000"]
    minors = [math.log10(m * 10) for m in range(2, 10)]               # 20 .. 90 within two decades
    labels = axis.tickStrings([1.0, *minors, 2.0], 1.0, 0.1)
    assert labels[0] == "10" and labels[-1] == "100" and labels[1] == "20" and labels[4] == "50"
    assert labels[2] == labels[3] == labels[5] == ""                  # 30, 40, 60: unlabelled
    wide = axis.tickStrings([0.0, math.log10(2), 1.0, 2.0, 3.0, 4.0, 5.0], 1.0, 1.0)
    assert wide == ["1", "", "10", "100", "1000", "10000", "10⁵"]


def test_best_so_far_series_are_steps(qtbot) -> None:
    from gui.compare_view import OverlayPlot
    from gui.plotting import LivePlot, is_best_so_far

    assert is_best_so_far("best length") and is_best_so_far("r3 · best length")
    assert is_best_so_far("best objective") and not is_best_so_far("program: mean RMS error")
    plot = LivePlot(title="Best length vs nodes explored", x_label="nodes", y_label="instructions")
    qtbot.addWidget(plot)
    plot.add_points("best length", [31, 220, 900], [25, 21, 19])
    plot.add_points("other", [1, 2], [3, 4])
    assert plot._curves["best length"].opts["stepMode"] == "right"
    assert plot._curves["other"].opts["stepMode"] is None
    path = plot._curves["best length"].curve.getPath()
    drawn = [(path.elementAt(i).x, path.elementAt(i).y) for i in range(path.elementCount())]
    assert drawn[:4] == [(31, 25), (220, 25), (220, 21), (900, 21)]   # held until the next improvement
    overlay = OverlayPlot(title="nodes")
    qtbot.addWidget(overlay)
    overlay.add_points("r3 · best length", [1, 5], [17, 16])
    assert overlay._curves["r3 · best length"].opts["stepMode"] == "right"
    forced = LivePlot(step=False)
    qtbot.addWidget(forced)
    forced.add_points("best length", [1, 2], [3, 2])
    assert forced._curves["best length"].opts["stepMode"] is None


def test_a_live_plot_keeps_its_x_range_ahead_of_the_data(qtbot) -> None:
    """Each new range re-renders the axes and their grid, so a live plot must not take a new one per batch."""
    from gui.plotting import LivePlot

    plot = LivePlot(x_label="nodes")
    qtbot.addWidget(plot)
    box = plot.getPlotItem().getViewBox()
    plot.add_points("best length", [0, 300], [25, 21])
    first = box.viewRange()[0]
    assert first[1] >= 300 + 300 / 3 - 1e-9                 # headroom beyond the data
    plot.add_points("best length", [350, 390], [20, 20])    # within the headroom: the range stays
    assert box.viewRange()[0] == first
    plot.add_points("best length", [1000], [19])            # beyond it: a new range, ahead again
    assert box.viewRange()[0][1] > 1000
    box.sigRangeChangedManually.emit([True, False])         # the user zooms: the plot leaves x alone
    box.setXRange(10, 20, padding=0)
    plot.add_points("best length", [5000], [18])
    assert box.viewRange()[0] == [10, 20]
    plot.clear_series()                                     # a new run follows its data again
    plot.add_points("best length", [0, 3], [5, 4])
    assert 3 < box.viewRange()[0][1] < 10


def test_the_cain_plots_draw_best_length_as_steps(qtbot) -> None:
    from core.engine import get_engine
    from gui.panels.cain import PANEL
    from panel_context import FakeContext

    panel = PANEL(get_engine("cain"), FakeContext())
    qtbot.addWidget(panel)
    from core.jobs import MetricPoint

    panel.handle_events([MetricPoint("best length", 10.0, 30.0, "nodes"), MetricPoint("best length", 50.0, 24.0, "nodes")])
    curves = [p._curves for p in (panel.nodes_plot, panel.time_plot) if "best length" in p._curves]
    assert curves and all(c["best length"].opts["stepMode"] == "right" for c in curves)
    for plot in (panel.nodes_plot, panel.time_plot):
        assert plot.getAxis("bottom").labelText and plot.getAxis("left").labelText


def test_the_legend_sits_outside_the_data(qtbot) -> None:
    from gui.plotting import LivePlot

    for w, h, beside in ((500, 400, False), (1200, 250, True)):
        plot = LivePlot(title="t", x_label="x", y_label="y")
        qtbot.addWidget(plot)
        plot.resize(w, h)
        plot.show()
        qtbot.waitExposed(plot)
        for i in range(3):
            plot.add_points(f"series {i}", [0, 1, 2], [i, i + 1, i + 2])
        qtbot.wait(20)
        legend = plot.legend.sceneBoundingRect()
        view = plot.getPlotItem().vb.sceneBoundingRect()
        overlap = legend.intersected(view)
        assert legend.height() > 0 and min(overlap.width(), overlap.height()) < 1, (w, h)
        assert (legend.left() >= view.right() - 1) == beside


def test_plots_follow_a_dark_palette(qtbot) -> None:
    from gui.plotting import LivePlot, theme

    light = LivePlot()
    qtbot.addWidget(light)
    assert light.backgroundBrush().color().name() == "#ffffff" and not theme().dark
    with dark_palette():
        plot = LivePlot(title="t", x_label="x")
        qtbot.addWidget(plot)
        assert theme().dark and plot.backgroundBrush().color().lightness() < 60
        assert plot.getAxis("bottom").textPen().color().lightness() > 180
        # a palette change re-themes live plots (waited for, not given 10 ms that a busy machine may not have)
        qtbot.waitUntil(lambda: light.backgroundBrush().color().lightness() < 60, timeout=HANG_MS)


def test_grid_lines_are_opaque_blends_drawn_under_the_data(qtbot) -> None:
    """Translucent lines are some 40x slower to draw; the grid keeps its look by blending its colour
    onto the background itself, and lies under the data so an opaque line never covers a curve."""
    from PySide6.QtGui import QPainter, QPicture

    from gui.plotting import LivePlot, theme

    plot = LivePlot(title="t", x_label="x", y_label="y")
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.show()
    plot.add_points("best length", [0.0, 5.0, 9.0], [30.0, 25.0, 20.0])
    qtbot.wait(10)
    view_z = plot.getPlotItem().getViewBox().zValue()
    bg, fg = theme().background, theme().foreground
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        assert axis.zValue() < view_z
        picture = QPicture()
        painter = QPainter(picture)
        _, ticks, _ = axis.generateDrawSpecs(painter)
        painter.end()
        assert len(ticks) > 5
        assert all(pen.color().alpha() == 255 for pen, _, _ in ticks)
        # grid colours lie between the background's and the foreground's
        for pen, _, _ in ticks:
            c = pen.color()
            for part in ("red", "green", "blue"):
                lo, hi = sorted((getattr(bg, part)(), getattr(fg, part)()))
                assert lo - 1 <= getattr(c, part)() <= hi + 1


def test_a_streaming_plot_redraws_at_most_once_per_interval(qtbot, monkeypatch) -> None:
    """Batches arrive every 20 ms; a panel's plot takes them all but redraws at the interval's end."""
    from gui import plotting
    from gui.plotting import LivePlot

    monkeypatch.setattr(plotting, "time", FrozenClock(100.0))
    monkeypatch.setattr(LivePlot, "_last_any_redraw", -math.inf)       # no other plot drew just now
    plot = LivePlot(redraw_interval_s=0.2)
    qtbot.addWidget(plot)
    plot.add_points("best length", [0.0], [30.0])           # after a quiet spell: drawn at once
    curve = plot._curves["best length"]
    assert list(curve.getData()[0]) == [0.0]
    plot.add_points("best length", [1.0], [28.0])           # soon after: waits
    plot.add_points("best length", [2.0], [27.0])
    assert list(curve.getData()[0]) == [0.0]
    assert plot.series()["best length"][0] == [0.0, 1.0, 2.0]  # the data itself is all there
    qtbot.waitUntil(lambda: list(curve.getData()[0]) == [0.0, 1.0, 2.0], timeout=HANG_MS)
    assert plot.getPlotItem().getViewBox().viewRange()[0][1] >= 2.0
    plot.add_points("best length", [3.0], [26.0])
    assert plot._redraw_timer.isActive()                     # a redraw is pending ...
    plot.clear_series()                                      # ... and does not survive a new run
    assert not plot._redraw_timer.isActive() and plot.series() == {} and not plot._curves


def test_a_live_plot_sets_its_y_range_itself_with_room_below_a_falling_best(qtbot) -> None:
    """pyqtgraph's auto-range runs during the paint and repaints when it moves the range; the plot
    keeps y itself, with headroom on the side the data left the range."""
    from gui.plotting import LivePlot

    plot = LivePlot(y_label="instructions")
    qtbot.addWidget(plot)
    box = plot.getPlotItem().getViewBox()
    plot.add_points("best length", [0, 1], [30, 26])
    lo, hi = box.viewRange()[1]
    assert lo <= 26 and hi >= 30 and not box.autoRangeEnabled()[1]
    plot.add_points("best length", [2], [20])                 # below: a new range with room below
    lo2, hi2 = box.viewRange()[1]
    assert lo2 < 20 - (30 - 20) / 5 and hi2 >= 30
    plot.add_points("best length", [3], [19])                 # within the room: the range stays
    assert box.viewRange()[1] == [lo2, hi2]
    plot.clear_series()
    assert box.autoRangeEnabled()[1]


def test_two_streaming_plots_fed_by_one_batch_redraw_in_different_turns(qtbot, monkeypatch) -> None:
    from gui import plotting
    from gui.plotting import LivePlot

    monkeypatch.setattr(plotting, "time", FrozenClock(100.0))
    monkeypatch.setattr(LivePlot, "_last_any_redraw", -math.inf)
    a, b = LivePlot(redraw_interval_s=0.2), LivePlot(redraw_interval_s=0.2)
    for p in (a, b):
        qtbot.addWidget(p)
        p.add_points("best length", [0.0], [30.0])
    assert len(a._curves["best length"].getData()[0]) == 1
    assert b._curves["best length"].getData()[0] is None or len(b._curves["best length"].getData()[0]) == 0
    qtbot.waitUntil(lambda: b._curves["best length"].getData()[0] is not None
                    and len(b._curves["best length"].getData()[0]) == 1, timeout=HANG_MS)


def test_tick_label_room_only_grows_so_a_range_change_does_not_relayout(qtbot) -> None:
    """pyqtgraph shrinks a vertical axis when its labels get narrower ("17.5" to "16"), which re-lays
    the plot out and paints it a second time; ours keeps the room until the next run."""
    from gui.plotting import LivePlot

    plot = LivePlot(y_label="instructions")
    qtbot.addWidget(plot)
    axis = plot.getAxis("left")
    start = axis.textWidth
    assert start >= 30
    axis._updateMaxTextSize(start + 25)             # wide labels: more room
    assert axis.textWidth == start + 25
    width = axis.maximumWidth()
    axis._updateMaxTextSize(5)                      # narrow labels: the room stays
    assert axis.textWidth == start + 25 and axis.maximumWidth() == width
    plot.clear_series()                             # a new run starts from the reserved room again
    assert axis.textWidth == start and axis.maximumWidth() < width


def test_declared_series_have_their_legend_entry_before_any_point(qtbot) -> None:
    from gui.plotting import LivePlot

    plot = LivePlot()
    qtbot.addWidget(plot)
    plot.declare_series("best length")
    assert plot.series() == {"best length": ([], [])} and len(plot.legend.items) == 1
    height = plot.legend.maximumHeight()
    plot.add_points("best length", [0.0], [3.0])
    assert len(plot.legend.items) == 1 and plot.legend.maximumHeight() == height
