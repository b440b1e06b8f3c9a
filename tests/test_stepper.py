"""The SCAMP-5 stepper: linked planes, plane visibility, written registers and NEWS shifts, the PE
inspector, Play, exports, and what a macro's bus operations mean (sims.scamp5.step_effects)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from core.scamp5.program import parse_program
from sims.scamp5 import step_effects
from sims.scamp5.bus import NEWS, expand
from sims.scamp5.simulator import simulate
from tests import stepper_fixtures
from window_helpers import dark_palette

replay = stepper_fixtures.replay        # the fixtures, shared with the other stepper tests
stepper = stepper_fixtures.stepper

PLANES = ["A", "B", "C", "D", "E", "F", NEWS]


# ---------------------------------------------------------------- what a macro does (no Qt)
def _ops(line: str):
    [ins] = parse_program(line)
    return expand(ins.op, ins.args)


def test_written_read_and_shifts_of_macros() -> None:
    ops = _ops("movx(E, D, west)")
    assert step_effects.written(ops) == (NEWS, "E") and step_effects.read(ops) == ("D",)
    [s] = step_effects.shifts(ops)
    assert (s.sources, s.dest, s.direction) == (("D",), NEWS, "east")      # E(p) = D(p west): values go east
    ops = _ops("add2x(D, F, D, north, north)")
    assert [(s.sources, s.dest, s.direction) for s in step_effects.shifts(ops)] == \
        [(("F", "D"), NEWS, "south"), ((NEWS,), "D", "south")]
    assert step_effects.shifts(_ops("add(A, B, C)")) == [] and step_effects.written(_ops("add(A, B, C)")) == (NEWS, "A")


@pytest.mark.parametrize("direction", ["north", "east", "south", "west"])
def test_a_shift_arrow_points_where_the_values_went(direction: str) -> None:
    """Checked against the simulator: after movx(B, A, d) every PE holds the value that came from one
    PE against the arrow, i.e. B[r, c] = A[r - drow, c - dcol]."""
    [ins] = parse_program(f"movx(B, A, {direction})")
    [s] = step_effects.shifts(expand(ins.op, ins.args))
    image = np.random.default_rng(1).random((8, 8))
    b = simulate([ins], image).final.values["B"]
    dr, dc = s.drow, s.dcol
    inner = (slice(1, 7), slice(1, 7))
    assert np.allclose(b[inner], np.roll(image, (dr, dc), axis=(0, 1))[inner])


# ---------------------------------------------------------------- the view
def test_the_grid_takes_the_columns_that_give_the_largest_tiles() -> None:
    from gui.panels.simulate.canvas import best_columns

    assert best_columns(7, 1054, 580) == 4            # 1920x1080: two rows of four, 262 px tiles
    assert best_columns(7, 600, 1000) == 2            # a tall canvas: two columns
    assert best_columns(6, 1000, 600) == 3 and best_columns(1, 800, 600) == 1 and best_columns(0, 10, 10) == 1


def test_loads_a_replay_and_steps(stepper, replay) -> None:
    assert stepper.steps == 21 and stepper.planes == PLANES
    assert stepper.canvas.visible_planes() == PLANES and stepper.canvas.columns >= 2
    stepper.step_forward()
    stepper.step_forward()
    assert stepper.step == 2 and stepper.listing.currentRow() == 2
    shown = stepper.canvas.tiles["D"].shown
    assert shown is replay.run.records[2].state.values["D"]          # the run's own cached plane
    stepper.set_step(0)                                               # the input: A positive, the rest 0
    a = replay.run.records[0].state.values["A"]
    r, c = np.unravel_index(np.argmax(a), a.shape)
    hot = stepper.canvas.tiles["A"].image.qimage.pixelColor(int(c), int(r))
    assert hot.red() > 200 and hot.blue() < 80                        # the largest value is red
    assert stepper.canvas.tiles["B"].image.qimage.pixelColor(0, 0).name() == "#ffffff"   # 0 is white


def test_a_step_re_images_only_the_planes_it_changed(stepper) -> None:
    stepper.set_scale_mode("plane")
    stepper.set_step(2)
    planes = stepper.current_planes()
    stepper.set_step(3)                                               # movx(E, D, west): writes NEWS and E
    assert stepper.canvas.show_planes(stepper.current_planes(), stepper.limits(), stepper.pe) == 0
    stepper.set_step(2)
    assert stepper.canvas.show_planes(planes, stepper.limits(), stepper.pe) == 0
    fresh = stepper.canvas.show_planes(stepper.values_at(3), stepper.limits(), stepper.pe)
    assert fresh == 2


def test_linked_views_share_a_range(stepper, qtbot) -> None:
    tiles = stepper.canvas.tiles
    for t in tiles.values():                                         # the whole 32x32 array in every view
        (x0, x1), (y0, y1) = t.vb.viewRange()
        assert x0 <= 0.5 and x1 >= 31.5 and y0 <= 0.5 and y1 >= 31.5 and x1 - x0 < 64
    b = tiles["B"].vb
    b.scaleBy((0.25, 0.25), center=(8, 8))                          # what the wheel does ...
    b.sigRangeChangedManually.emit(b.state["mouseEnabled"])          # ... and then announces
    want = b.viewRect()
    for name, t in tiles.items():
        got = t.vb.viewRect()
        assert got.center().x() == pytest.approx(want.center().x(), abs=0.01), name
        assert got.center().y() == pytest.approx(want.center().y(), abs=0.01), name
        assert min(got.width(), got.height()) == pytest.approx(min(want.width(), want.height()), rel=0.05), name
    stepper.resize(900, 500)                                          # resizing never spreads a range
    qtbot.wait(20)
    for t in tiles.values():
        assert t.vb.viewRect().width() < 64
    stepper.reset_zoom_button.click()
    assert tiles["E"].vb.viewRange()[0][1] >= 31.5


def test_hide_and_show_a_plane(stepper) -> None:
    canvas = stepper.canvas
    before = canvas.fit_pixels_per_pe()
    for name in ("NEWS", "F", "E"):
        stepper.set_plane_visible(name, False)
    assert canvas.visible_planes() == ["A", "B", "C", "D"]
    assert canvas.tiles["NEWS"].vb.scene() is None                    # off the canvas
    item = [stepper.plane_list.item(i) for i in range(stepper.plane_list.count())
            if stepper.plane_list.item(i).text() == "NEWS"][0]
    from PySide6.QtCore import Qt

    assert item.checkState() == Qt.CheckState.Unchecked
    assert canvas.fit_pixels_per_pe() > before                        # the others took the room
    item.setCheckState(Qt.CheckState.Checked)                         # ticking the list shows it again
    assert "NEWS" in canvas.visible_planes() and canvas.tiles["NEWS"].vb.scene() is canvas.scene()
    canvas.toggle_solo("B")                                           # a double click on B: B alone
    assert canvas.visible_planes() == ["B"]
    canvas.toggle_solo("B")
    assert canvas.visible_planes() == ["A", "B", "C", "D", NEWS]
    exported = stepper.export_run(str(Path(os.environ.get("TMPDIR", "/tmp")) / f"strip-{os.getpid()}.png"))[0]
    with Image.open(exported) as im:                                  # exports follow the planes on show
        assert im.size[0] < 190 + 7 * 68
    exported.unlink()


def test_the_written_registers_are_highlighted(stepper) -> None:
    stepper.set_step(3)                                               # movx(E, D, west)
    roles = {n: t.role for n, t in stepper.canvas.tiles.items()}
    assert roles == {"A": "", "B": "", "C": "", "D": "read", "E": "written", "F": "", NEWS: "written"}
    assert "written" in stepper.canvas.tiles["E"].title.text and "written" not in stepper.canvas.tiles["A"].title.text
    colours = {stepper.plane_list.item(i).text(): stepper.plane_list.item(i).background().color().name()
               for i in range(stepper.plane_list.count())}
    assert colours["E"] == colours[NEWS] != colours["A"]
    assert "E (written)" in stepper.inspector.text() and "A (written)" not in stepper.inspector.text()
    notes = [stepper.bus_list.item(i).text() for i in range(stepper.bus_list.count())]
    assert notes[:2] == ["1. bus(XE, D)  XE := -D", "2. bus(E, NEWS)  E := -NEWS"]
    assert "writes NEWS, E; reads D" in notes and "shift: D → NEWS, one PE east" in notes
    stepper.set_step(0)                                               # the input step writes the input register
    assert stepper.canvas.tiles["A"].role == "written" and stepper.canvas.tiles["E"].role == ""


def test_news_shifts_are_drawn_as_arrows(stepper) -> None:
    stepper.set_step(3)                                               # movx(E, D, west): D moves east into NEWS
    [badge] = [b for b in stepper.canvas.tiles[NEWS].shift_badges if b.isVisible()]
    assert badge.arrow == (0, 1) and badge.text == "D east"
    assert not any(b.isVisible() for t in stepper.canvas.tiles.values() if t.name != NEWS for b in t.shift_badges)
    stepper.set_step(8)                                               # add2x(D, F, D, north, north): two shifts
    arrows = {n: [(b.arrow, b.text) for b in t.shift_badges if b.isVisible()] for n, t in stepper.canvas.tiles.items()}
    assert arrows[NEWS] == [((1, 0), "F+D south")] and arrows["D"] == [((1, 0), "NEWS south")]
    stepper.set_step(11)                                              # add(E, E, D): no shift, no arrow
    assert not any(b.isVisible() for t in stepper.canvas.tiles.values() for b in t.shift_badges)


def test_inspector_shows_a_pe_without_scrolling_sideways(stepper, replay) -> None:
    stepper.set_step(21)
    stepper.set_pe(5, 7)
    final = replay.run.final.values
    text = stepper.inspector.text()
    assert "PE (row 5, column 7) after step 21" in text
    row_b = next(line for line in text.splitlines() if line.startswith("B\t"))
    assert row_b.split("\t")[1:] == [f"{final['B'][r, c]:.3g}" for r, c in ((5, 7), (4, 7), (5, 8), (6, 7), (5, 6))]
    assert "A = 1/4 ×" in text
    assert (stepper.inspector.row.value(), stepper.inspector.col.value()) == (5, 7)
    from PySide6.QtCore import Qt

    view, scroll = stepper.inspector.view, stepper.inspector.scroll_area
    assert scroll.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    assert view.width() >= view.table_w                               # the table fits the pane
    stepper.inspector.col.setValue(9)                                 # the boxes move the PE
    assert stepper.pe == (5, 9)


def test_play_keeps_going_with_loop_and_stops(stepper) -> None:
    stepper.set_play_rate(30)
    assert stepper.play_rate() == 30
    stepper.set_step(20)
    stepper.play(loop=True)
    assert stepper.is_playing() and stepper.timer.interval() == 33
    for _ in range(3):
        stepper.timer.timeout.emit()
    assert stepper.step == 1 and stepper.is_playing()                # 21, then the input again, then 1
    stepper.stop()
    assert not stepper.is_playing() and stepper.play_button.text() == "Play"
    stepper.loop_box.setChecked(False)
    stepper.set_step(20)
    stepper.play()
    for _ in range(3):
        if stepper.is_playing():
            stepper.timer.timeout.emit()
    assert stepper.step == 21 and not stepper.is_playing()


def test_colour_scales_and_bar(stepper) -> None:
    stepper.set_step(6)
    stepper.set_scale_mode("shared")
    lims = stepper.limits()
    assert len(set(lims.values())) == 1 and stepper.canvas.colorbar.levels() == pytest.approx((-lims["A"], lims["A"]))
    stepper.set_scale_mode("plane")
    lims = stepper.limits()
    assert lims["A"] != lims["B"] and stepper.canvas.colorbar.levels() == pytest.approx((-1.0, 1.0))
    assert f"±{lims['B']:.3g}" in stepper.canvas.tiles["B"].title.text
    stepper.set_scale_mode("step")
    assert stepper.limits()["F"] == 0 or "all 0" not in stepper.canvas.tiles["F"].title.text


def test_gif_and_png_strip_exports_are_valid(stepper, tmp_path: Path) -> None:
    [gif] = stepper.export_run(str(tmp_path / "run.gif"))
    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames == 22 and im.info.get("loop") == 0
    [strip] = stepper.export_run(str(tmp_path / "run.png"))
    with Image.open(strip) as im:
        im.load()
        assert im.format == "PNG" and im.size[1] >= 22 * 64 and im.size[0] >= 7 * 64
        # the written-register frame is drawn: orange pixels exist
        assert (np.asarray(im.convert("RGB")) == (255, 150, 0)).all(axis=2).any()


def test_dark_palette_is_honoured(qtbot, replay) -> None:
    from gui.panels.simulate.stepper import Scamp5Stepper

    with dark_palette():
        st = Scamp5Stepper()
        qtbot.addWidget(st)
        st.load(replay)
        assert st.canvas.backgroundBrush().color().lightness() < 80
        zero = int(st.canvas.tiles["A"].image.lut[128])                 # ARGB of a zero PE
        assert sum((zero >> k) & 0xFF for k in (0, 8, 16)) < 3 * 80      # zero is dark, not white
        assert st.canvas.tiles["B"].image.qimage.pixelColor(0, 0).lightness() < 80   # B is all 0 at step 0


def test_open_in_stepper_is_one_click_from_the_window(qtbot) -> None:
    """The Cain tab's "Open in stepper" calls the window's open_in_simulator: the simulate tab shows the
    program in the stepper at once, its settings folded away to give the planes room."""
    from core.cain.plans import ProgramPlan
    from core.simulate.sources import settings_from_cain_result
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    # the program the Cain panel shows: a plan (core.cain.plans)
    plan = ProgramPlan(filter="demo", program=["movx(B, A, east)", "add(C, A, B)"], output_registers=["C"],
                       outputs={"k": "C"}, input_register="A", input_registers={"0": "A"}, kernel_names=["k"],
                       d=1, denominator=2, approximated_kernels={"k": [[0, 0, 0], [0, 2, 2], [0, 0, 0]]},
                       isa="all", registers=6, length=2, nodes=5, time_s=0.1, method="simultaneous")
    w.open_in_simulator(settings_from_cain_result(plan))
    panel = w.panels["simulate"]
    st = panel.stepper
    assert w.current_engine().name == "simulate" and panel.tabs.currentWidget() is st
    assert st.steps == 2 and st.step == 0 and st.canvas.tiles["C"].shown is not None
    assert not panel.summary.isVisibleTo(panel) and panel.settings_button.text() == "Show settings"
    panel.settings_button.click()                      # one click brings the settings back ...
    assert panel.summary.isVisibleTo(panel)
    w.open_in_simulator(settings_from_cain_result(plan))
    assert panel.summary.isVisibleTo(panel)            # ... and they stay once the user asked for them
