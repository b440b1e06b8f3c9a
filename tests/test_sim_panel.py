"""The simulator panel: result display, stepping, PE zoom, exports, and the code-search hand-over."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from core.simulate.result import SimulateResult
from core.cain.result import CainResult
from core.engine import JobRequest, get_engine
from core.jobs import CancelToken
from core.project import Run
from core.workload import FpspFilter, Scamp5Target
from panel_context import FakeContext, open_panel

REPO = Path(__file__).resolve().parents[1]
TABLE2 = str(REPO / "assets/programs/analognet2_cain_table2.txt")


def _context(size: int = 32) -> FakeContext:
    ctx = FakeContext()
    ctx.use("simulate", "targets", f"SCAMP-5 {size}x{size}", Scamp5Target(6, size))
    return ctx


@pytest.fixture
def ctx():
    return _context()


@pytest.fixture
def panel(qtbot, ctx):
    return open_panel(qtbot, "simulate", ctx)


def _events(settings: dict[str, Any], size: int = 32, workload: Any = None):
    spec = get_engine("simulate")
    return list(spec.run(JobRequest(workload, Scamp5Target(6, size), settings), CancelToken()))


def _result(settings: dict[str, Any], size: int = 32, workload: Any = None) -> SimulateResult:
    """The typed result the engine yields last."""
    r = _events(settings, size, workload)[-1].data
    assert isinstance(r, SimulateResult)
    return r


def test_result_is_shown_and_stepped(panel) -> None:
    s = panel.settings()
    s.update(program_file=TABLE2, noise=0.005, noise_mode="emulator")     # the read-out view is the emulator's
    events = _events(s)
    panel.job_started()
    panel.handle_events(events[:-1])
    assert "program: mean RMS error" in panel.plot.series()
    stored = json.loads(json.dumps(events[-1].data.to_json()))         # as a session keeps it
    panel.show_result(SimulateResult.from_json(stored))
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
    s.update(program_file=TABLE2)
    panel.show_result(_result(s))
    st = panel.stepper
    st.set_step(21)
    st.set_pe(10, 12)
    vals = st.pe_values()
    a = st.replay.run.final.values["A"]
    assert vals["A"]["C"] == a[10, 12] and vals["A"]["N"] == a[9, 12] and vals["A"]["E"] == a[10, 13]
    text = st.inspector.text()
    assert "row 10, column 12" in text
    assert "A = 1/4 ×\n 0  0  0\n-3  1  0\n-3  0  2\n" in text    # kernel 1 of AnalogNet2 in register A
    st.set_pe(0, 0)
    assert st.pe_values()["A"]["N"] is None                        # off the array
    assert "\nA\t" in st.inspector.text() and "\t—" in st.inspector.text()
    st.set_step(2)
    assert "C undefined" in st.inspector.text()                    # div's scratch registers
    maps = panel.outputs.maps                                     # exact run: zero error inside
    valid = st.replay.run.final.valid["B"]
    assert np.all(maps["B"]["error"][valid] == 0) and "exact" in panel.outputs.info.text()


def test_keyboard_and_play(panel, qtbot) -> None:
    from PySide6.QtCore import Qt

    s = panel.settings()
    s.update(program_file=TABLE2)
    panel.show_result(_result(s, 16))
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
    s.update(program_file=TABLE2)
    panel.show_result(_result(s, 16))
    st = panel.stepper
    st.export_view(str(tmp_path / "view.png"))
    assert Image.open(tmp_path / "view.png").size[0] > 100
    [gif] = st.export_run(str(tmp_path / "run.gif"))
    with Image.open(gif) as im:
        assert im.n_frames == 22
    [strip] = st.export_run(str(tmp_path / "strip.png"))           # every step in one image
    with Image.open(strip) as im:
        assert im.format == "PNG" and im.size[1] > 22 * 64
    files = st.export_run(str(tmp_path / "frames"))                 # a folder: numbered PNGs
    assert len(files) == 22 and files[0].name == "step_000.png"


def test_step_through_pasted_text_and_errors(panel, ctx) -> None:
    ctx.project.replace_settings("simulate", dict(panel.settings(), program_source="text",
                                                  program_text="# outputs: B\nmovx(B, A, north)\nadd(B, A, B)\n"))
    assert panel.program_text.toPlainText().startswith("# outputs: B")
    assert panel.step_through_settings()
    assert panel.stepper.steps == 2 and panel.stepper.replay.run.final.values["B"].shape == (32, 32)
    panel.program_text.setPlainText("add(B, A)\n")            # typed: goes straight into the project
    assert ctx.project.settings("simulate")["program_text"] == "add(B, A)\n"
    assert not panel.step_through_settings()
    assert "line 1" in panel.stepper.message.text()


def _cain_result(denominator: int) -> CainResult:
    """A finished code search's typed result: a real one (the v1 example session's) with a two-macro
    program and its kernels put in, so the hand-over has something small to replay."""
    from core.session import load

    base = load(Path(__file__).resolve().parent / "data/sessions_v1/example_session.dfx").latest("cain")
    assert base is not None and base.result is not None
    d = base.result.to_json()
    d.update({"filter": "demo", "program": ["movx(B, A, east)", "add(C, A, B)"], "output_registers": ["C"],
              "outputs": {"k": "C"}, "input_register": "A", "input_registers": {"0": "A"}, "kernel_names": ["k"],
              "denominator": denominator, "approximated_kernels": {"k": [[0, 0, 0], [0, 2, 2], [0, 0, 0]]},
              "coefficient_errors": {"k": [[0.0] * 3] * 3}, "found": True, "length": 2})
    d["improvements"] = d["improvements"][-1:]
    d["improvements"][0].update(length=2)
    return CainResult.from_json(d)


def _add_cain_run(ctx: FakeContext, result: CainResult) -> None:
    ctx.project.runs.append(Run(id=f"r{len(ctx.project.runs) + 1}", engine="cain", settings={}, workload=None,
                                target=None, status="finished", result=result))


def test_use_code_search_result(panel, ctx, qtbot) -> None:
    from gui.panels.simulate import PANEL

    _add_cain_run(ctx, _cain_result(4))
    assert panel.use_code_search_result()
    s = ctx.project.settings("simulate")
    assert s["program_source"] == "text" and "# outputs: C" in s["program_text"] and s["reference"] == "expected"
    assert s["expected"]["kernels"] == [[[0, 0, 0], [0, 2, 2], [0, 0, 0]]]
    assert panel.program_text.toPlainText() == s["program_text"]
    assert panel.binding.widget("reference").currentData() == "expected"
    assert panel.step_through_settings() and panel.stepper.replay.program.output_registers == ["C"]
    r = _result(s)                              # (A + A east) / 2 is not what this program computes
    assert r.exact is False and r.outputs["C"].goal_matches_expected is False
    _add_cain_run(ctx, _cain_result(2))         # (2 A + 2 A east) / 2 = A + A east: it is
    assert panel.use_code_search_result()
    r = _result(ctx.project.settings("simulate"))
    assert r.exact is True and "code search" in r.label
    ctx.project.undo()                          # one undo step per hand-over
    assert ctx.project.settings("simulate")["expected"]["denominator"] == 4
    empty = PANEL(get_engine("simulate"), _context())
    qtbot.addWidget(empty)
    assert not empty.use_code_search_result() and empty.context.statuses
    # a search that found nothing leaves the settings alone
    before = ctx.project.settings("simulate")
    _add_cain_run(ctx, replace(_cain_result(2), found=False, length=None, program=[], improvements=[]))
    assert not panel.use_code_search_result() and ctx.statuses
    assert ctx.project.settings("simulate") == before


CUSTOM = {"program_source": "text", "program_file": "elsewhere.txt", "program_text": "# outputs: B\nneg(B, A)\n",
          "search_time_s": 0.05, "isa": "basic", "mode": "auke", "reference": "expected",
          "expected": {"denominator": 1, "kernels": [[[-1]]], "source": "hand"}, "input_register": "A",
          "output_registers": ["B"], "image": "pattern:rings", "noise": 0.0125, "seed": 2 ** 31 - 1,
          "noise_mode": "per-op", "fixed_pattern": 0.002, "saturation": 0.0, "compare": "auke",
          "export": "frames.gif"}


def test_every_setting_survives_project_to_widgets_to_project(qtbot, ctx) -> None:
    from gui.panels.simulate import PANEL

    spec = get_engine("simulate")
    assert set(CUSTOM) == set(spec.default_settings())
    ctx.project.replace_settings("simulate", CUSTOM)
    p = PANEL(spec, ctx)
    qtbot.addWidget(p)
    before = len(ctx.project.undo_stack)
    for key, (widget, adapter) in p.binding.widgets.items():
        assert adapter.read(widget, p.binding.props[key]) == CUSTOM[key], key
        p.binding._edited(key)
    assert ctx.project.settings("simulate") == CUSTOM and len(ctx.project.undo_stack) == before
    assert set(CUSTOM) - set(p.binding.widgets) == {"expected"}     # data that comes with a pasted program
    for key in ("fixed_pattern", "saturation"):                    # null: the documented default
        ctx.project.set_setting("simulate", key, None)
        assert p.binding.widget(key).text() == "default"
        p.binding._edited(key)
        assert ctx.project.settings("simulate")[key] is None


def test_undo_redo_of_widget_edits(panel, ctx) -> None:
    noise = panel.binding.widget("noise")
    noise.setValue(0.01)
    assert ctx.project.settings("simulate")["noise"] == 0.01
    ctx.project.undo()
    assert ctx.project.settings("simulate")["noise"] == 0.0 and noise.value() == 0.0
    ctx.project.redo()
    assert noise.value() == 0.01
    panel.source.setCurrentIndex(panel.source.findData("search"))
    assert ctx.project.settings("simulate")["program_source"] == "search"
    assert not panel.step_button.isEnabled() and panel.binding.widget("search_time_s").isEnabled()
    ctx.project.undo()
    assert panel.source.currentData() == "file" and panel.step_button.isEnabled()
    assert not panel.binding.widget("search_time_s").isEnabled()
    panel.image.setCurrentText("pattern:checker")
    assert ctx.project.settings("simulate")["image"] == "pattern:checker"
    ctx.project.undo()
    assert panel.image.currentText() == "sample"


def test_a_file_program_is_checked_against_the_tabs_workload(panel, ctx) -> None:
    """'filter' was a hidden workload picker: the tab's workload is now the reference."""
    ctx.use("simulate", "workloads", "AnalogNet2 (tool)", FpspFilter("analognet2-tool"))
    ctx.project.set_setting("simulate", "reference", "workload")
    r = _result(panel.settings(), workload=panel.workload())
    assert r.exact is True and r.outputs["B"].goal_matches_expected
    ctx.use("simulate", "workloads", "AnalogNet2 (eq. 1)", FpspFilter("analognet2"))
    r = _result(panel.settings(), workload=panel.workload())
    assert r.exact is False and r.outputs["B"].goal_matches_expected is False
    assert panel.step_through_settings()           # the stepper checks against the same workload
    assert panel.stepper.replay.program.expected
