"""Cappuccino timings a person can trust (issue 49 item 4): alternating rounds and medians, the
machine's load recorded beside them, precise kept where the chosen inexact modes measured no faster,
and a time-left estimate calibrated by what the run measured. Fake timers, fake load records and
fake clocks throughout: nothing here depends on the wall clock or the machine's load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.cappuccino import engine as capp
from core.cappuccino import synth, synth_run
from core.cappuccino.forward import forward_reference
from core.cappuccino.numerics import PRECISE, RELAXED
from core.cappuccino.result import CappuccinoResult
from core.engine import JobRequest
from core.jobs import CancelToken, FinalResult, LogLine
from core.machine_load import LoadRecord
from core.workload import BUILTIN_DIGITS, CnnNetwork, MobileSocTarget

IMAGES = 60
IDLE = LoadRecord(0.05, 12.0, 2, 0.3, 0.4, "cpu-accounts")
BUSY = LoadRecord(1.6, 12.0, 2, 3.1, 3.4, "cpu-accounts")


def test_faster_than_precise_needs_more_than_the_noise():
    assert synth_run.faster_than_precise([1.0, 1.0, 1.0], [1.2, 1.25, 1.2])[0] is False     # slower
    assert synth_run.faster_than_precise([1.0, 1.0, 1.0], [0.99, 1.0, 0.98])[0] is False    # within 2 %
    ok, ratio, noise = synth_run.faster_than_precise([1.0, 2.0, 1.0], [0.8, 1.6, 0.8])      # paired by round
    assert ok and ratio == pytest.approx(0.8) and noise == pytest.approx(synth_run.NOISE_FLOOR)
    ok, ratio, noise = synth_run.faster_than_precise([1.0, 1.0, 1.0], [0.7, 0.95, 1.1])     # 0.95 ± 0.25
    assert not ok and noise == pytest.approx(0.25)


def _run(monkeypatch, seconds: dict[str, float], load: LoadRecord) -> tuple[CappuccinoResult, list[str], list[str]]:
    """The engine on the digits CNN with every layer allowed inexact (all relaxed is chosen), the C
    compiler, the programs' clock and the load meter faked: each program "runs" for its seconds per
    pass and prints the numpy reference of its modes. Returns the result, the programs in the order
    they ran, and the log."""
    model = capp.load_model(CnnNetwork(BUILTIN_DIGITS), IMAGES)
    modes = {"parallel_precise": PRECISE, "baseline": PRECISE, "relaxed": RELAXED, "imprecise": "imprecise",
             "cappuccino": RELAXED}
    order: list[str] = []

    def fake_run(exe: Path, images: Path, count: int, min_seconds: float, check: Any, **kw: Any) -> synth.RunResult:
        name = exe.name
        if not kw.get("profile"):       # the timed rounds (the per-layer profile is a run of its own after them)
            order.append(name)
        logits = forward_reference(model, model.x_val, {op.name: modes[name] for op in model.conv_ops})[0]
        return synth.RunResult(predictions=[int(i) for i in logits.argmax(1)], passes=4,
                               seconds=4 * seconds[name], logits=logits.astype(np.float32))

    class FakeMeter:
        def stop(self) -> LoadRecord:
            return load

    monkeypatch.setattr(synth, "find_compiler_noting", lambda: ("/fake/cc", ""))
    monkeypatch.setattr(synth, "compile_c", lambda *a, **k: 0.5)
    monkeypatch.setattr(synth, "run_program", fake_run)
    monkeypatch.setattr(synth_run, "LoadMeter", FakeMeter)
    settings = {**capp.default_settings(), "accuracy_budget": 100.0, "measure_split": False, "limit": IMAGES}
    events = list(capp.run(JobRequest(CnnNetwork(BUILTIN_DIGITS), MobileSocTarget(cores=2, vector_width=4), settings),
                           CancelToken()))
    result = next(e.data for e in events if isinstance(e, FinalResult))
    assert isinstance(result, CappuccinoResult)
    return result, order, [e.message for e in events if isinstance(e, LogLine)]


def test_inexact_slower_than_precise_keeps_precise_and_says_why_and_busy_says_unreliable(monkeypatch):
    result, order, log = _run(monkeypatch, {"parallel_precise": 1.0, "cappuccino": 1.15, "relaxed": 1.1,
                                            "imprecise": 0.9, "baseline": 6.0}, BUSY)
    syn = result.synthesis
    # the search chose every layer relaxed; it measured 1.15x precise's time, so precise runs
    assert any(c.modes == {n: RELAXED for n in c.modes} and c.within_budget for c in result.inexact.configurations)
    assert set(result.inexact.modes.values()) == {PRECISE} and set(syn.modes.values()) == {PRECISE}
    assert all(row.mode == PRECISE for row in result.layers if row.kind in ("conv", "fc"))
    assert syn.kept_precise and "1.15x precise's time" in syn.kept_precise and "kept every layer precise" in result.summary
    assert syn.programs is not None and syn.programs["parallel_inexact"].modes == syn.programs["parallel"].modes
    assert syn.speedups is not None and syn.speedups["parallel_inexact"] == pytest.approx(6.0)
    assert result.headline()["speedup"] == pytest.approx(6.0)
    assert any("kept every layer precise" in m for m in log)
    # alternating rounds: the second runs the programs in the reverse order
    n = len(order) // 3
    assert order[n:2 * n] == order[:n][::-1] and order[2 * n:] == order[:n]
    # the busy machine is said in the summary, the headline, the message and the JSON
    assert result.summary.startswith("TIMINGS UNRELIABLE") and "1.6 of 2 cores" in result.summary
    assert str(result.headline()["timings"]).startswith("unreliable")
    assert "TIMINGS UNRELIABLE" in syn.message and "median of 3 alternating runs" in syn.message
    text = capp.format_text(result)                  # what the command line prints
    assert "TIMINGS UNRELIABLE" in text and "kept every layer precise" in text
    js = result.to_json()
    assert js["synthesis"]["load"]["other_cores"] == pytest.approx(1.6) and js["synthesis"]["kept_precise"]
    again = CappuccinoResult.from_json(js)
    assert again.synthesis.load == BUSY and again.headline()["timings"] == result.headline()["timings"]


def test_inexact_faster_than_precise_stays_and_an_idle_machine_is_said(monkeypatch):
    result, _order, _log = _run(monkeypatch, {"parallel_precise": 1.0, "cappuccino": 0.8, "relaxed": 0.8,
                                              "imprecise": 0.7, "baseline": 6.0}, IDLE)
    syn = result.synthesis
    assert set(result.inexact.modes.values()) == {RELAXED} and syn.kept_precise is None
    assert syn.speedups is not None and syn.speedups["parallel_inexact"] == pytest.approx(7.5)
    assert "UNRELIABLE" not in result.summary and result.headline()["timings"] == "idle machine"


def test_a_version_2_result_reads_without_a_load_record(monkeypatch):
    result, _order, _log = _run(monkeypatch, {"parallel_precise": 1.0, "cappuccino": 0.8, "relaxed": 0.8,
                                              "imprecise": 0.7, "baseline": 6.0}, BUSY)
    old = result.to_json()
    del old["synthesis"]["load"]
    old["summary"] = old["summary"].split("; ", 1)[1]
    again = CappuccinoResult.from_json(old, version=2)
    assert again.synthesis.load is None and again.headline()["timings"] is None


# the time-left estimate: tests/test_cappuccino_eta.py


def test_the_programs_tab_says_when_other_work_made_the_timings_unreliable(monkeypatch, qtbot):
    """Was: a run timed on a busy machine showed its ratios with no word that the machine was busy."""
    import dataclasses

    from gui.panels.cappuccino import PANEL
    from panel_context import FakeContext

    panel = PANEL(capp.ENGINE, FakeContext())
    qtbot.addWidget(panel)
    result, _order, _log = _run(monkeypatch, {"parallel_precise": 1.0, "cappuccino": 1.15, "relaxed": 1.1,
                                              "imprecise": 0.9, "baseline": 6.0}, BUSY)
    panel.show_result(result)
    assert not panel.timing_warning.isHidden()
    assert "Timings unreliable" in panel.timing_warning.text() and "1.6 of 2 cores" in panel.timing_warning.text()
    assert panel.message.text().startswith("TIMINGS UNRELIABLE")
    assert "kept every layer precise" in panel.message.text()
    modes = [panel.table.item(i, 10).text() for i in range(panel.table.rowCount())]
    assert "relaxed" not in modes and PRECISE in modes
    idle = dataclasses.replace(result, synthesis=dataclasses.replace(result.synthesis, load=IDLE))
    panel.show_result(idle)
    assert panel.timing_warning.isHidden()
