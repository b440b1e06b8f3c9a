"""The code-search panel: settings bound to the project, live events from real small runs, stored
and cancelled runs, clickable programs in the best-length plots, export and the stepper hand-over."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import pytest

from core.cain.result import CainResult
from core.engine import JobRequest, get_engine
from core.simulate import sources
from core.simulate.result import SimulateResult
from core.jobs import CancelToken, FinalResult, PartialResult
from core.lifecycle import RunOutcome
from core.scamp5.isa import register_names
from core.scamp5.program import parse_program
from core.scamp5.program_file import read_program
from core.workload import FpspFilter, Scamp5Target
from panel_context import FakeContext, open_panel


def _events(preset: str, max_nodes: int) -> list:
    spec = get_engine("cain")
    req = JobRequest(FpspFilter(preset), Scamp5Target(),
                     {"workers": 1, "time_s": 60, "max_nodes": max_nodes, "seed_share": 0.5})
    return list(spec.run(req, CancelToken()))


@pytest.fixture(scope="module")
def events():
    return _events("gauss3", 600)


@pytest.fixture(scope="module")
def an2_events():
    """AnalogNet2: three kernels, three improvements (a one-by-one seed, then shorter ones) within
    2000 nodes of one worker."""
    return _events("analognet2", 2000)


def _final(events) -> CainResult:
    final = next(e.data for e in events if isinstance(e, FinalResult))
    assert isinstance(final, CainResult)
    return final


def _simulated(settings: dict) -> SimulateResult:
    """The simulator's result for these settings, on a small array."""
    spec = get_engine("simulate")
    r = list(spec.run(JobRequest(None, Scamp5Target(6, 16), dict(spec.default_settings(), **settings)),
                      CancelToken()))[-1].data
    assert isinstance(r, SimulateResult)
    return r


@pytest.fixture
def ctx():
    return FakeContext()


@pytest.fixture
def panel(qtbot, ctx):
    return open_panel(qtbot, "cain", ctx)


# ------------------------------------------------------------------ settings binding
CUSTOM = {"isa": "basic", "mode": "auke", "time_s": 0.05, "max_nodes": 99, "workers": 64, "traversal": "dfs",
          "d": 3, "tolerance": 0.01, "seed_share": 0.6, "seed": 7}


def test_every_setting_survives_project_to_widgets_to_project(qtbot, ctx) -> None:
    from gui.panels.cain import PANEL

    spec = get_engine("cain")
    assert set(CUSTOM) == set(spec.default_settings())
    ctx.project.replace_settings("cain", dict(CUSTOM, extra_key="kept"))     # a key without a widget
    p = PANEL(spec, ctx)
    qtbot.addWidget(p)
    before = len(ctx.project.undo_stack)
    for key, (widget, adapter) in p.binding.widgets.items():
        assert adapter.read(widget, p.binding.props[key]) == CUSTOM[key], key     # shown, never clamped
        p.binding._edited(key)                     # as if the user touched it: writes back what it shows
    assert ctx.project.settings("cain") == dict(CUSTOM, extra_key="kept")
    assert len(ctx.project.undo_stack) == before             # nothing changed, nothing to undo
    assert set(p.binding.widgets) == set(CUSTOM)   # every setting has its widget (seed_share too)


def test_seed_share_is_kept_when_another_setting_is_edited(panel, ctx) -> None:
    """The old panel's settings() left seed_share out, so any edit dropped it back to the default."""
    ctx.project.set_setting("cain", "seed_share", 0.6)
    panel.binding.widget("isa").setCurrentIndex(panel.binding.widget("isa").findData("basic"))
    s = ctx.project.settings("cain")
    assert s["isa"] == "basic" and s["seed_share"] == 0.6
    assert panel.binding.widget("seed_share").value() == pytest.approx(0.6)


def test_undo_redo_of_a_widget_edit(panel, ctx) -> None:
    workers = panel.binding.widget("workers")
    workers.setValue(5)
    assert ctx.project.settings("cain")["workers"] == 5
    ctx.project.undo()
    assert ctx.project.settings("cain")["workers"] == 2 and workers.value() == 2
    ctx.project.redo()
    assert ctx.project.settings("cain")["workers"] == 5 and workers.value() == 5
    d = panel.binding.widget("d")                  # null shows as 'auto' and comes back as null
    assert d.text() == "auto" and panel.tolerance.isEnabled()
    d.setValue(4)
    assert ctx.project.settings("cain")["d"] == 4 and not panel.tolerance.isEnabled()
    ctx.project.undo()
    assert ctx.project.settings("cain")["d"] is None and panel.tolerance.isEnabled()


def test_a_half_typed_tolerance_is_not_taken(panel, ctx) -> None:
    panel.tolerance.setText("0.05")
    panel.tolerance.textEdited.emit("0.05")
    assert ctx.project.settings("cain")["tolerance"] == 0.05
    panel.tolerance.setText("1e-")
    panel.tolerance.textEdited.emit("1e-")
    assert ctx.project.settings("cain")["tolerance"] == 0.05 and "tolerance" in panel.binding.errors


# ------------------------------------------------------------------ runs
def test_live_events_then_stored_result(panel, events):
    panel.job_started()
    panel.handle_events([e for e in events if not isinstance(e, FinalResult)])
    final = _final(events)
    found = [e.data for e in events if isinstance(e, PartialResult)]
    assert found
    xs, ys = panel.nodes_plot.series()["best length"]
    assert final.length is not None
    assert ys[-1] == final.length and min(ys) == final.length
    assert panel.time_plot.series()["best length"][1][-1] == final.length
    assert panel.program_view.toPlainText().count(";") == final.length
    assert len(panel.points["nodes"].points()) == len(found) == len(final.improvements)
    assert panel.shown_is_best

    # a session reopens the result without rerunning: everything drawn from the stored result alone
    panel.show_result(None)
    assert panel.program_view.toPlainText() == "" and len(panel.points["time"].points()) == 0
    panel.show_result(CainResult.from_json(json.loads(json.dumps(final.to_json()))))
    assert panel.program_view.toPlainText().count(";") == final.length
    assert panel.cpp_view.toPlainText() == final.cpp
    assert panel.step_slider.maximum() == final.length
    panel.step_slider.setValue(0)
    assert "16" in panel.bag_view.toPlainText() and "A:" in panel.reg_view.toPlainText()
    panel.step_slider.setValue(final.length)
    assert final.program[-1] in panel.step_label.text()
    assert panel.alloc_table.rowCount() == 2
    text = panel.program_text()
    assert [str(i) for i in parse_program(text)] == final.program
    assert panel.export_text_button.isEnabled() and panel.export_cpp_button.isEnabled()


def test_export_is_read_back_by_the_simulator_multi_kernel(panel, an2_events, tmp_path, monkeypatch):
    """The old export wrote '# outputs: k1=A, ...', which the simulator refused (register 'K1=A')."""
    from PySide6.QtWidgets import QFileDialog

    final = _final(an2_events)
    assert len(final.kernel_names) == 3
    panel.show_result(final)
    path = tmp_path / "an2.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    panel.export_program()
    regs = register_names(6)
    res = sources.from_file(str(path), regs)              # the simulator's own reader
    assert [str(i) for i in res.program] == final.program
    assert res.output_registers == final.output_registers and res.input_register == final.input_register
    _, header = read_program(path.read_text(), regs)
    assert header.kernel_names == final.kernel_names
    # and the simulator runs it exactly against the search's kernels
    spec = get_engine("simulate")
    settings = dict(program_file=str(path), reference="expected",
                    expected={"denominator": final.denominator,
                              "kernels": [final.approximated_kernels[n] for n in final.kernel_names]})
    with pytest.raises(Exception, match="pasted program"):     # the expected kernels go with pasted text
        list(spec.run(JobRequest(None, Scamp5Target(6, 16), dict(spec.default_settings(), **settings)),
                      CancelToken()))
    settings.update(program_source="text", program_text=path.read_text())
    r = _simulated(settings)
    assert r.exact is True and r.output_registers == final.output_registers


def test_a_point_of_the_best_length_plot_shows_its_program_and_opens_it(panel, ctx, an2_events):
    final = _final(an2_events)
    imps = final.improvements
    assert len(imps) >= 2 and all(i.program for i in imps)
    panel.show_result(final)
    pts = panel.points["nodes"]
    spots = sorted(pts.points(), key=lambda s: s.data())
    assert [(s.pos().x(), s.pos().y()) for s in spots] == [(i.nodes, i.length) for i in imps]
    panel.tabs.setCurrentIndex(0)
    pts.sigClicked.emit(pts, [spots[0]], None)           # the first (longest) program
    assert panel.tabs.currentWidget() is panel.program_tab
    assert panel.program_view.toPlainText().count(";") == imps[0].length
    assert f"Program 1 of {len(imps)}" in panel.plan_label.text() and str(imps[0].nodes) in panel.plan_label.text()
    assert panel.best_button.isEnabled()
    panel.stepper_button.click()
    [update] = ctx.simulator_updates
    assert update["program_source"] == "text" and update["reference"] == "expected"
    prog, header = read_program(update["program_text"], register_names(6))
    assert imps[0].outputs is not None
    assert [str(i) for i in prog] == imps[0].program
    assert header.output_registers == [imps[0].outputs[n] for n in final.kernel_names]
    # the update is what the simulator runs: the first program computes the kernels exactly too
    r = _simulated(update)
    assert r.exact is True and r.program_length == imps[0].length
    panel.best_button.click()
    assert "Best program" in panel.plan_label.text() and not panel.best_button.isEnabled()
    panel.stepper_button.click()
    assert read_program(ctx.simulator_updates[-1]["program_text"], register_names(6))[0] == \
        parse_program("\n".join(final.program))


def test_a_cancelled_run_keeps_and_shows_its_best_program(panel, ctx, an2_events):
    ctx.project.choose("cain", "workloads", next(e.id for e in ctx.project.workloads if e.name == "AnalogNet2"))
    run = ctx.project.start_run("cain")
    streamed = [e for e in an2_events if not isinstance(e, FinalResult)]
    cut = [i for i, e in enumerate(streamed) if isinstance(e, PartialResult)][1] + 1   # after the 2nd program
    ctx.project.record(run.id, streamed[:cut])
    run = ctx.project.finish_run(run.id, RunOutcome.cancelled())
    assert run.status == "cancelled" and run.partial["plan"].program
    second = [e.data for e in streamed[:cut] if isinstance(e, PartialResult)][-1]
    panel.show_run(run)
    assert panel.program_view.toPlainText().count(";") == second.length
    assert panel.plan_label.text().startswith("Run cancelled.")
    assert panel.nodes_plot.series()["best length"][1][-1] == second.length
    panel.stepper_button.click()
    assert [str(i) for i in read_program(ctx.simulator_updates[-1]["program_text"], register_names(6))[0]] == \
        second.program


def test_show_run_focus_selects_a_program(panel, ctx, an2_events):
    final = _final(an2_events)
    run = ctx.add_finished_run("cain", final.to_json())
    assert run.result == final
    panel.show_run(run, program=0)
    assert panel.tabs.currentWidget() is panel.program_tab
    assert panel.program_view.toPlainText().count(";") == final.improvements[0].length


def test_a_stored_result_without_programs_per_improvement(panel, ctx, events):
    """Results stored before improvements kept their programs: only the best point shows one."""
    stored = json.loads(json.dumps(_final(events).to_json()))
    for imp in stored["improvements"]:
        for key in ("program", "outputs", "input_registers"):
            imp.pop(key, None)
    final = CainResult.from_json(stored)
    assert all(i.program is None for i in final.improvements)
    panel.show_result(final)
    assert len(panel.points["nodes"].points()) == len(final.improvements)
    assert panel.program_view.toPlainText().count(";") == final.length
    if len(final.improvements) > 1:
        assert not panel.select_program(0) and ctx.statuses


def test_the_panel_shows_the_lower_bound_and_the_gap(panel, an2_events):
    """The result's proven lower bound: next to the kernels, and after each program's length; a
    result saved before there was a bound (version 1) says so instead."""
    final = _final(an2_events)
    lb, gap = final.bound, final.gap
    panel.show_result(final)
    assert f"lower bound {lb} (gap {gap})" in panel.kernels_label.text()
    assert f"{final.length} instructions, lower bound {lb} (gap {gap})" in panel.plan_label.text()
    old = {k: v for k, v in final.to_json().items() if k not in ("lower_bound", "gap", "optimal")}
    panel.show_result(CainResult.from_json(old))
    assert "no lower bound" in panel.kernels_label.text() and "gap" not in panel.plan_label.text()


def test_a_batch_with_several_programs_shows_only_its_last(panel, events, monkeypatch):
    """Drawing a program is 1.5 ms of the window's time; a batch draws one, not one per program."""
    shown = []
    monkeypatch.setattr(panel, "_show_plan", lambda plan: shown.append(plan))
    panel.job_started()
    found = [e for e in events if isinstance(e, PartialResult)]
    assert len(found) >= 2
    panel.handle_events([e for e in events if not isinstance(e, FinalResult)])
    assert shown == [found[-1].data] and len(panel._plans) == len(found)
