"""Noise that means something by default (issue 49 item 5): the simulator runs the per-operation
model unless asked otherwise, and the published emulator's model is labelled an upper bound wherever
its figures appear (the combo, its tooltip, the result's text, headline and JSON, the Outputs view).
A saved run that used the emulator still says so."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json
from pathlib import Path
from typing import Any

import pytest

from core.engine import JobRequest, get_engine
from core.jobs import CancelToken
from core.simulate import engine as sim
from core.simulate import replay as replays
from core.simulate.result import SimulateResult
from core.workload import Scamp5Target
from panel_context import FakeContext, open_panel

TABLE2 = str(Path(__file__).resolve().parents[1] / "assets/programs/analognet2_cain_table2.txt")


def _result(**settings: Any) -> SimulateResult:
    s = {**sim.default_settings(), "program_file": TABLE2, **settings}
    events = list(get_engine("simulate").run(JobRequest(None, Scamp5Target(6, 32), s), CancelToken()))
    r = events[-1].data
    assert isinstance(r, SimulateResult)
    return r


@pytest.fixture
def panel(qtbot):
    ctx = FakeContext()
    ctx.use("simulate", "targets", "SCAMP-5 32x32", Scamp5Target(6, 32))
    return open_panel(qtbot, "simulate", ctx)


def test_the_window_defaults_to_per_operation_and_labels_the_emulator_an_upper_bound(panel):
    """Was: the combo showed "emulator" on a new project, with no word that its figures are an upper bound."""
    combo = panel.binding.widget("noise_mode")
    assert combo.currentText() == "per operation"
    assert panel.settings()["noise_mode"] == "per-op"
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert "emulator's upper bound" in texts
    assert "upper bound" in combo.toolTip() and "physical" in combo.toolTip()


def test_a_run_shows_which_model_its_errors_come_from(panel):
    per_op = _result(noise=0.01)
    assert per_op.noise.mode == "per-op" and per_op.headline()["noise_model"] == "per operation"
    emulator = _result(noise=0.01, noise_mode="emulator")
    # the emulator's linear sum is many times the per-operation estimate on the same program and seed
    assert emulator.headline()["max_rms_error"] > 5 * per_op.headline()["max_rms_error"]
    assert emulator.headline()["noise_model"] == "emulator's upper bound"
    assert emulator.noise.note and "upper bound" in emulator.noise.note
    assert "upper bound" in json.dumps(emulator.to_json()["noise"])
    text = sim.format_text(emulator)
    assert "mode emulator (emulator's upper bound)" in text and "the errors below are the emulator's upper bound" in text
    assert "upper bound" not in sim.format_text(per_op)
    panel.show_result(emulator)
    assert "upper bound" in panel.outputs.info.text()
    panel.show_result(per_op)
    assert "per operation" in panel.outputs.info.text() and "upper bound" not in panel.outputs.info.text()


def test_a_saved_emulator_run_still_says_emulator():
    emulator = _result(noise=0.01, noise_mode="emulator")
    stored = json.loads(json.dumps(emulator.to_json()))
    # as a session kept it before the mode's note existed, and before the setting existed at all
    del stored["noise"]["note"]
    del stored["settings"]["noise_mode"]
    old = SimulateResult.from_json(stored)
    assert old.noise.mode == "emulator" and old.headline()["noise_model"] == "emulator's upper bound"
    assert sim.settings_of_result(old)["noise_mode"] == "emulator"
    assert replays.from_result(old).run.noise.mode == "emulator"
