"""Saturation is never silent (issue 30): a kernel whose gain, or a register whose value after an
instruction, exceeds SCAMP-5's ±2 analogue range is named, with the register and the instruction,
by Cain and by the simulator (typed warnings in the result, the panels and the command-line text),
and the stepper marks the registers with saturated PEs. Before, a gain-16 blur with noise gave max
error 14.6 and a pale read-out with no word about the range."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json
from fractions import Fraction
from pathlib import Path

import pytest

from core.cain.result import CainResult
from core.engine import JobRequest, get_engine
from core.jobs import CancelToken, FinalResult, LogLine
from core.scamp5.analogue import ANALOGUE_RANGE, AnalogueWarning, kernel_warnings, reach, register_warnings
from core.simulate.result import SimulateResult
from core.workload import FpspFilter, KernelSet, Scamp5Target
from panel_context import FakeContext

REPO = Path(__file__).resolve().parents[1]
TABLE2 = str(REPO / "assets/programs/analognet2_cain_table2.txt")

# x16 by doubling: mov/add pairs; D first leaves ±2 at instruction 4 (4x the input)
GAIN16 = "# input: A\n# outputs: F\nmov(B, A)\nadd(C, A, B)\nmov(B, C)\nadd(D, C, B)\nmov(B, D)\n" \
         "add(E, D, B)\nmov(B, E)\nadd(F, E, B)\n"
BLUR16 = KernelSet.from_json({"kind": "kernels", "name": "blur16", "denominator": 1,
                              "kernels": [{"name": "blur", "values": [[1, 2, 1], [2, 4, 2], [1, 2, 1]]}]}, "")


def _simulate(settings: dict, size: int = 32) -> tuple[SimulateResult, list]:
    spec = get_engine("simulate")
    events = list(spec.run(JobRequest(None, Scamp5Target(6, size), dict(spec.default_settings(), **settings)),
                           CancelToken()))
    final = events[-1]
    assert isinstance(final, FinalResult) and isinstance(final.data, SimulateResult)
    return final.data, events


@pytest.fixture(scope="module")
def gain16() -> tuple[SimulateResult, list]:
    return _simulate({"program_source": "text", "program_text": GAIN16, "noise": 0.005})


@pytest.fixture(scope="module")
def cain_blur16() -> tuple[CainResult, list]:
    spec = get_engine("cain")
    req = JobRequest(BLUR16, Scamp5Target(), {"workers": 1, "time_s": 600, "max_nodes": 3000, "seed_share": 0.5})
    events = list(spec.run(req, CancelToken()))
    final = next(e.data for e in events if isinstance(e, FinalResult))
    assert isinstance(final, CainResult)
    return final, events


# ------------------------------------------------------------------ the check itself
def test_reach_is_the_larger_signed_sum_over_pixels_in_0_1() -> None:
    assert reach([1, 2, 1, 2, 4, 2, 1, 2, 1]) == 16
    assert reach([Fraction(1, 4), Fraction(-3, 4), Fraction(-3, 4), Fraction(1, 2)]) == 1.5
    assert reach([]) == 0
    assert kernel_warnings({"gauss": ([Fraction(1, 16)] * 16, "B")}) == []
    (w,) = kernel_warnings({"blur": ([1, 2, 1, 2, 4, 2, 1, 2, 1], "B")})
    assert (w.kind, w.kernel, w.register, w.reach, w.limit) == ("kernel", "blur", "B", 16, ANALOGUE_RANGE)
    assert "blur" in w.message and "16" in w.message and "±2" in w.message and "divide it by 8" in w.message


def test_register_warning_names_the_first_instruction_over_the_range() -> None:
    states: list[dict[str, list[int] | None]] = [{"A": [1], "B": None}, {"A": [1], "B": [1, 1]},
                                                 {"A": [1], "B": [1, 1, 1]}, {"A": [1], "B": [1]}]
    (w,) = register_warnings(states, ["add(B, A, A)", "add(B, B, A)", "mov(B, A)"])
    assert (w.kind, w.register, w.step, w.instruction, w.reach) == ("register", "B", 2, "add(B, B, A)", 3)
    assert "register B" in w.message and "instruction 2, add(B, B, A)" in w.message
    # a register that hit the limit in a simulation although its ideal value fits
    (s,) = register_warnings(states[:2], ["add(B, A, A)"], saturated={(1, "B"): 5})
    assert s.kind == "saturated" and s.saturated_pixels == 5 and "instruction 1, add(B, A, A)" in s.message


# ------------------------------------------------------------------ the simulator
def test_simulator_warns_about_the_gain16_program(gain16) -> None:
    r, events = gain16
    assert r.warnings is not None
    kinds = [(w.kind, w.register) for w in r.warnings]
    assert ("kernel", "F") in kinds
    first = next(w for w in r.warnings if w.kind == "register")
    assert (first.register, first.step, first.instruction) == ("D", 4, "add(D, C, B)")
    f = next(w for w in r.warnings if w.kind == "register" and w.register == "F")
    assert f.reach == 16 and f.saturated_pixels and f.saturated_pixels > 0    # clipped at ±2 in this run
    warned = [e.message for e in events if isinstance(e, LogLine) and e.level == "warning"]
    assert any("register D" in m and "add(D, C, B)" in m for m in warned)
    text = get_engine("simulate").format_text(r)
    assert "warning: the kernel of output F has a gain of 16" in text and "register D leaves" in text
    # kept by a session: the typed warnings read back equal
    back = SimulateResult.from_json(json.loads(json.dumps(r.to_json())))
    assert back.warnings == r.warnings and back.warnings and isinstance(back.warnings[0], AnalogueWarning)


def test_a_program_in_range_has_no_warning_and_old_results_still_read() -> None:
    r, _ = _simulate({"program_file": TABLE2, "noise": 0.005}, size=16)
    assert r.warnings == []
    assert "warning" not in get_engine("simulate").format_text(r)
    old = r.to_json()
    del old["warnings"]                          # a result stored before the check
    assert SimulateResult.from_json(old).warnings is None


# ------------------------------------------------------------------ Cain
def test_cain_warns_about_the_kernel_and_the_registers(cain_blur16) -> None:
    r, events = cain_blur16
    assert r.found and r.warnings
    (k,) = [w for w in r.warnings if w.kind == "kernel"]
    assert k.kernel == "blur" and k.register == r.outputs["blur"] and k.reach == 16
    regs = [w for w in r.warnings if w.kind == "register"]
    assert regs and all(w.instruction == r.program[w.step - 1] for w in regs)
    assert any(w.register == r.outputs["blur"] and w.reach == 16 for w in regs)
    # said before the search starts, and in the text the command line prints
    logs = [e for e in events if isinstance(e, LogLine)]
    assert logs[1].level == "warning" and "gain of 16" in logs[1].message
    assert "warning: kernel blur" in get_engine("cain").format_text(r)


def test_cain_in_range_has_no_warning() -> None:
    spec = get_engine("cain")
    req = JobRequest(FpspFilter("gauss3"), Scamp5Target(), {"workers": 1, "time_s": 600, "max_nodes": 300})
    final = next(e.data for e in spec.run(req, CancelToken()) if isinstance(e, FinalResult))
    assert final.warnings == []


# ------------------------------------------------------------------ the window
def test_simulate_panel_shows_the_warning_and_the_stepper_marks_saturation(qtbot, gain16) -> None:
    from gui.panels.simulate import PANEL

    ctx = FakeContext()
    ctx.use("simulate", "targets", "SCAMP-5 32x32", Scamp5Target(6, 32))
    panel = PANEL(get_engine("simulate"), ctx)
    qtbot.addWidget(panel)
    panel.show()
    r, _ = gain16
    panel.show_result(r)
    assert panel.result_warnings.isVisible()
    assert "register D leaves the ±2 analogue range at instruction 4, add(D, C, B)" in panel.result_warnings.text()
    assert "more (hover to see all)" in panel.result_warnings.text()           # 5 warnings: 3 shown
    assert "register F leaves" in panel.result_warnings.toolTip()
    st = panel.stepper
    st.set_step(3)                               # C = 2 x input: inside the range
    assert not st.saturation() and not any(t.saturated for t in st.canvas.tiles.values())
    st.set_step(4)                               # D = 4 x input: clipped at ±2 where the image is bright
    sat = st.saturation()
    assert sat.get("D", 0) > 0
    tile = st.canvas.tiles["D"]
    assert tile.saturated == sat["D"]
    texts = [st.bus_list.item(i).text() for i in range(st.bus_list.count())]
    assert any(t.startswith("saturated: D has") for t in texts)
    # the read-out of the saturated output says why it is pale
    labels = [item.text for item in panel.outputs.view.ci.items if hasattr(item, "text")]
    assert any("F read-out (±2: saturated)" in t for t in labels)
    assert any("F ideal" in t and "beyond the ±2 range" in t for t in labels)
    panel.show_result(None)
    assert not panel.result_warnings.isVisible()


def test_cain_panel_shows_the_warning(qtbot, cain_blur16) -> None:
    from gui.panels.cain import PANEL

    panel = PANEL(get_engine("cain"), FakeContext())
    qtbot.addWidget(panel)
    panel.show()
    panel.show_result(cain_blur16[0])
    assert panel.result_warnings.isVisible() and "kernel blur" in panel.result_warnings.text()
