"""The simulator panel: result display, stepping, PE zoom, exports, and the code-search hand-over."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from core.engine import JobRequest, get_engine
from core.jobs import CancelToken
from core.workload import Scamp5Target
from panel_context import FakeContext

REPO = Path(__file__).resolve().parents[1]
TABLE2 = str(REPO / "assets/programs/analognet2_cain_table2.txt")


@pytest.fixture
def panel(qtbot):
    from gui.panels.simulate import PANEL

    p = PANEL(get_engine("simulate"), FakeContext(None, Scamp5Target(6, 32)))
    qtbot.addWidget(p)
    return p


def _events(settings: dict[str, Any]):
    spec = get_engine("simulate")
    return list(spec.run(JobRequest(None, Scamp5Target(6, 32), settings), CancelToken()))


def test_result_is_shown_and_stepped(panel) -> None:
    s = panel.settings()
    s.update(program_file=TABLE2, size=32, noise=0.005)
    events = _events(s)
    panel.job_started()
    panel.handle_events(events[:-1])
    assert "program: mean RMS error" in panel.plot.series()
    panel.show_result(events[-1].data)
    st = panel.stepper
    assert st.steps == 21 and st.listing.count() == 22 and st.step == 0
    assert st.bus_list.item(0).text().startswith("sensor image")
    st.step_forward()
    assert st.step == 1 and [st.bus_list.item(i).text().split()[1] for i in range(5)] == \
        ["bus2(D,", "bus(NEWS,", "bus(A,", "bus2(D,", "bus(A,"]
    assert st.listing.currentRow() == 1
    st.run_to_end()
    assert st.step == 21
    st.step_back()
    assert st.step == 20
    st.jump_spin.setValue(6)
    st.jump_button.click()
    assert st.step == 6 and "subx" in st.listing.item(6).text()
    # Stepping shows the cached states: the planes are the run's own snapshots.
    assert st.current_planes()["B"] is st.replay.run.records[6].state.values["B"]
    # Outputs tab: read-out, ideal and error map per output register.
    maps = panel.outputs.maps
    assert sorted(maps) == ["A", "B", "C"]
    a = maps["A"]
    assert np.array_equal(a["error"], a["read-out"] - a["ideal"]) and np.abs(a["error"]).max() > 0
    assert "RMS" in panel.outputs.info.text()
    st.diff_box.setChecked(True)
    d = st.current_planes()["B"]
    assert np.array_equal(d, st.replay.run.records[6].state.values["B"] - st.replay.run.records[5].state.values["B"])
    st.diff_box.setChecked(False)
    assert st.readout_box.isEnabled()                       # emulator noise: read-out view available
    st.readout_box.setChecked(True)
    b = st.current_planes()["B"]
    assert np.array_equal(b, st.replay.run.read_out("B", 6)) and not np.array_equal(b, st.replay.run.records[6].state.values["B"])
    assert st.pe_values()["B"]["C"] == b[st.pe]


def test_pe_zoom_shows_neighbours_and_goals(panel) -> None:
    s = panel.settings()
    s.update(program_file=TABLE2, size=32)
    panel.show_result(_events(s)[-1].data)
    st = panel.stepper
    st.set_step(21)
    st.set_pe(10, 12)
    vals = st.pe_values()
    a = st.replay.run.final.values["A"]
    assert vals["A"]["C"] == a[10, 12] and vals["A"]["N"] == a[9, 12] and vals["A"]["E"] == a[10, 13]
    text = st.pe_view.text()
    assert "row 10, column 12" in text and "-3/4" in text          # kernel 1 of AnalogNet2 in register A
    st.set_pe(0, 0)
    assert st.pe_values()["A"]["N"] is None                        # off the array
    st.set_step(2)
    assert "undefined" in st.pe_view.text()                       # div's scratch registers
    maps = panel.outputs.maps                                     # exact run: zero error inside
    valid = st.replay.run.final.valid["B"]
    assert np.all(maps["B"]["error"][valid] == 0) and "exact" in panel.outputs.info.text()


def test_keyboard_and_play(panel, qtbot) -> None:
    from PySide6.QtCore import Qt

    s = panel.settings()
    s.update(program_file=TABLE2, size=16)
    panel.show_result(_events(s)[-1].data)
    st = panel.stepper
    panel.show()
    qtbot.waitExposed(panel)
    panel.activateWindow()
    st.listing.setFocus()
    qtbot.keyClick(st.listing, Qt.Key.Key_Right)
    qtbot.keyClick(st.listing, Qt.Key.Key_Right)
    assert st.step == 2
    qtbot.keyClick(st.listing, Qt.Key.Key_Left)
    assert st.step == 1
    qtbot.keyClick(st.listing, Qt.Key.Key_Down)              # moving in the listing steps too
    assert st.step == 2
    qtbot.keyClick(st.listing, Qt.Key.Key_End)
    assert st.step == 21
    qtbot.keyClick(st.listing, Qt.Key.Key_Home)
    assert st.step == 0
    qtbot.keyClick(st.listing, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert panel.focusWidget() is st.jump_spin
    st.speed.setValue(50.0)
    st.toggle_play()
    assert st.timer.isActive() and st.timer.interval() == 20 and st.play_button.text() == "Pause"
    # Drive the play timer by hand (no event-loop spin, so other tests' leftovers cannot interfere).
    for _ in range(25):
        if st.timer.isActive():
            st.timer.timeout.emit()
    assert st.step == 21 and not st.timer.isActive() and st.play_button.text() == "Play"


def test_exports(panel, tmp_path: Path) -> None:
    s = panel.settings()
    s.update(program_file=TABLE2, size=16)
    panel.show_result(_events(s)[-1].data)
    st = panel.stepper
    st.export_view(str(tmp_path / "view.png"))
    assert Image.open(tmp_path / "view.png").size[0] > 100
    [gif] = st.export_run(str(tmp_path / "run.gif"))
    with Image.open(gif) as im:
        assert im.n_frames == 22
    files = st.export_run(str(tmp_path / "frames.png"))
    assert len(files) == 22 and files[0].name == "frames_000.png"


def test_step_through_pasted_text_and_errors(panel) -> None:
    panel.set_settings(dict(panel.settings(), program_source="text",
                            program_text="# outputs: B\nmovx(B, A, north)\nadd(B, A, B)\n"))
    assert panel.step_through_settings()
    assert panel.stepper.steps == 2 and panel.stepper.replay.run.final.values["B"].shape == (32, 32)
    panel.set_settings(dict(panel.settings(), program_text="add(B, A)\n"))
    assert not panel.step_through_settings()
    assert "line 1" in panel.stepper.message.text()


def test_use_code_search_result(qtbot) -> None:
    from gui.panels.simulate import PANEL

    # The shape of the code-search engine's result (core/cain/engine.py).
    cain = {"filter": "demo", "program": ["movx(B, A, east)", "add(C, A, B)"], "output_registers": ["C"],
            "input_register": "A", "kernel_names": ["k"], "denominator": 4,
            "approximated_kernels": {"k": [[0, 0, 0], [0, 2, 2], [0, 0, 0]]}}
    p = PANEL(get_engine("simulate"), FakeContext(None, Scamp5Target(6, 32), {"cain": cain}))
    qtbot.addWidget(p)
    assert p.use_code_search_result()
    s = p.settings()
    assert s["program_source"] == "text" and "# outputs: C" in s["program_text"]
    assert s["expected"]["kernels"] == [[[0, 0, 0], [0, 2, 2], [0, 0, 0]]]
    assert p.step_through_settings() and p.stepper.replay.program.output_registers == ["C"]
    r = _events(s)[-1].data                     # (A + A east) / 2 is not what this program computes
    assert r["exact"] is False and r["outputs"]["C"]["goal_matches_expected"] is False
    cain["denominator"] = 2                     # (2 A + 2 A east) / 2 = A + A east: it is
    assert p.use_code_search_result()
    r = _events(p.settings())[-1].data
    assert r["exact"] is True and "code search" in r["label"]
    empty = PANEL(get_engine("simulate"), FakeContext(None, Scamp5Target(6, 32)))
    qtbot.addWidget(empty)
    assert not empty.use_code_search_result() and empty.context.statuses


def test_settings_round_trip(panel) -> None:
    s = dict(panel.settings(), image="pattern:rings", noise=0.01, noise_mode="per-op", seed=9, compare="auke")
    panel.set_settings(s)
    assert panel.settings() == s
