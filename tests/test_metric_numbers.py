"""Issue 52.1 and 49.3: every result declares its metrics as data (core.metrics), and every number
reads right wherever it shows: the runs table and its tooltips and CSV, Compare, the choice bar,
studies. A percentage is shown as one once (Cappuccino's accuracy read "10,000 %" in Compare), every
engine's headline leads with what a person compares (f-CNNx frames per second per CNN, Cappuccino
time per image and speed-ups against precise and onnxruntime, also where there is no naive
baseline as for ResNet-18), and a 0 that means "all" says so."""

from __future__ import annotations

import argparse
import dataclasses
import re

import pytest
from PySide6.QtCore import Qt
from window_helpers import example_window

from core.cappuccino.result import CappuccinoResult, CompiledProgram, OnnxRuntimeRun
from core.display import format_setting, metric_of
from core.engine import engines, get_engine
from core.lifecycle import RunOutcome, record_run
from core.metrics import Metric, declared
from core.numbers import format_number

UNITS = {"", "instructions", "nodes", "steps", "s", "words", "B", "×", "%", "pp", "fraction", "frames/s"}


@pytest.fixture
def window(qtbot):
    w = example_window(qtbot)
    yield w
    w.shutdown_jobs()


def table_cells(table) -> dict[str, list[str]]:
    return {table.item(r, 0).text(): [table.item(r, c).text() if table.item(r, c) else ""
                                      for c in range(1, table.columnCount())] for r in range(table.rowCount())}


# ---------------------------------------------------------------- the declarations
@pytest.mark.parametrize("name", ["cain", "simulate", "merit", "cappuccino", "fcnnx", "bound"])
def test_every_engine_declares_its_metrics(name):
    metrics = declared(engines()[name].result_type)
    assert len(metrics) >= 2 and all(isinstance(m, Metric) for m in metrics)
    assert len({m.name for m in metrics}) == len(metrics)
    for m in metrics:
        assert m.unit in UNITS, (m.name, m.unit)
        assert m.better in ("higher", "lower", None)
        assert m.title and "_" not in m.title and m.title[0].isupper()


def test_a_percentage_is_shown_as_one_once():
    assert format_number(97.5, "%") == "97.5 %"                  # already percent: not scaled again
    assert format_number(0.975, "fraction") == "97.5 %"
    assert metric_of("cappuccino", "accuracy").text(100.0) == "100 %"
    assert format_number(1.5e-3, "s") == "1.5 ms" and format_number(8.5e-7, "s") == "850 ns"
    assert format_number([30.0, 12.25], "frames/s") == "30, 12.25 frames/s"


def test_a_zero_that_means_all_says_so():
    assert format_setting("cappuccino", "limit", 0) == "all"
    assert format_setting("cappuccino", "limit", 30) == "30"
    assert format_setting("cappuccino", "search_sample", 0) == "auto"


def test_a_search_objective_goes_the_declared_better_way():
    from core.study.metrics import default_direction
    from core.study.search import read_search

    assert default_direction(CappuccinoResult, "speedup_precise") == "maximize"
    assert default_direction(CappuccinoResult, "time_per_image_s") == "minimize"
    spec = read_search({"objectives": ["speedup_precise"], "budget": 2}, ["speedup_precise"], 4,
                       directions={"speedup_precise": "maximize"})
    assert spec.objectives[0].direction == "maximize"


# ---------------------------------------------------------------- Cappuccino without a naive baseline
def _program(key: str, median_us: float, accuracy: float) -> CompiledProgram:
    return CompiledProgram(source=f"{key}.c", modes={}, threads=2, seconds_per_pass=median_us * 1e-6 * 30,
                           passes=3, microseconds_per_image=median_us, median_microseconds_per_image=median_us,
                           agreement=1.0, same_classifications=True, images=30, mismatches=0,
                           near_ties_differing=0, max_logit_difference=0.0, accuracy=accuracy)


@pytest.fixture(scope="module")
def large_network_result() -> CappuccinoResult:
    """A real (uncompiled) Cappuccino result, given what a large network's compiled run has: the
    precise and chosen programs and onnxruntime timed, and no naive baseline (ResNet-18 has none:
    the "Speed-up" headline, taken against that baseline only, was blank)."""
    spec = get_engine("cappuccino")
    p = argparse.ArgumentParser()
    spec.add_cli_arguments(p)
    out = record_run(spec, spec.request_from_cli(p.parse_args(["--no-compile", "--limit", "30", "--threads", "2"])))
    assert isinstance(out.result, CappuccinoResult)
    acc = out.result.inexact.accuracy
    syn = dataclasses.replace(
        out.result.synthesis, programs={"parallel": _program("parallel", 3000.0, acc),
                                        "parallel_inexact": _program("parallel_inexact", 1500.0, acc)},
        baseline_note="the naive baseline would take too long for this network",
        onnxruntime=OnnxRuntimeRun(version="1.0", threads=2, onnx="net.onnx", microseconds_per_image=1800.0,
                                   median_microseconds_per_image=1875.0,
                                   ratios={"parallel": 1.6, "parallel_inexact": 0.8}))
    return dataclasses.replace(out.result, synthesis=syn)


def test_cappuccino_leads_with_time_per_image_and_its_speed_ups(large_network_result):
    head = large_network_result.headline()
    assert list(head)[:3] == ["time_per_image_s", "speedup_precise", "speedup_onnxruntime"]
    assert head["time_per_image_s"] == pytest.approx(1.5e-3)
    assert head["speedup_precise"] == pytest.approx(2.0)
    assert head["speedup_onnxruntime"] == pytest.approx(1.25)
    assert head["speedup"] is None                      # no naive baseline, and it says nothing else
    assert 0 <= head["accuracy"] <= 100


def test_compare_and_runs_table_show_cappuccino_numbers_that_read_right(window, large_network_result):
    """On main 6105d8f Compare showed this accuracy as "9,333 %" and a blank speed-up."""
    project = window.project
    settings = get_engine("cappuccino").default_settings()
    assert settings["limit"] == 0
    runs = [project.add_finished_run("cappuccino", None, None, settings, RunOutcome.finished(large_network_result))
            for _ in range(2)]
    window.compare([r.id for r in runs])
    metrics = table_cells(window.compare_view.metrics_table)
    acc = large_network_result.inexact.accuracy
    assert metrics["Accuracy"] == [f"{acc:.3g} %"] * 2 and float(metrics["Accuracy"][0][:-2]) <= 100
    assert metrics["Time per image"] == ["1.5 ms"] * 2
    assert metrics["Speed-up over precise"] == ["2×"] * 2
    assert metrics["Speed-up over onnxruntime"] == ["1.25×"] * 2
    assert table_cells(window.compare_view.settings_table)["Images"] == ["all", "all"]

    view = window.runs_view
    from gui.runs_view import KEYS, cell_text

    row = next(r for r in view.model.rows if r["id"] == runs[0].id)
    assert (cell_text(row, "metric"), cell_text(row, "value")) == ("Time per image", "1.5 ms")
    tip = view.model.data(view.model.index(view.model.row_of(runs[0].id), KEYS.index("value")),
                          Qt.ItemDataRole.ToolTipRole)
    assert "Speed-up over onnxruntime: 1.25×" in tip and f"Accuracy: {acc:.3g} %" in tip
    csv = view.csv_text()
    assert "Time per image,1.5 ms" in csv


# ---------------------------------------------------------------- f-CNNx and the bound in the example session
def test_fcnnx_leads_with_frames_per_second_per_cnn(window):
    from gui.choice_bar import run_title
    from gui.runs_view import cell_text

    run = window.project.run("r7")
    named = ", ".join(f"{cnn} {format_number(f, 'frames/s')}" for cnn, f in zip(
        ("ZFNet", "SceneLabelCNN", "VGG-16"), run.result.predicted.fps))        # by title, not by zoo key
    assert run.result.cnns == ["zfnet", "scenelabel", "vgg16"] and named.endswith(" frames/s")
    row = next(r for r in window.runs_view.model.rows if r["id"] == "r7")
    assert cell_text(row, "metric") == "Frames per second per CNN"
    assert cell_text(row, "value") == named                   # each CNN by name, with its rate
    assert f"Frames per second per CNN {named}" in run_title(run, named=True)     # the Showing box's tooltip
    assert run_title(run).startswith("r7 · finished, Frames per second per CNN ")
    window.compare(["r7", "r5"])
    metrics = table_cells(window.compare_view.metrics_table)
    assert metrics["Frames per second per CNN"][0] == named
    assert metrics["Frames per second per CNN, simulated"][0].endswith(" frames/s")


def test_bound_states_its_traffic_in_words_and_bytes_and_against_the_proven_bound(window):
    run = window.project.run("r5")
    words = run.result.totals.optimal
    assert run.headline["optimal_traffic_bytes"] == words * run.result.word_bits // 8
    window.compare(["r5", "r7"])
    metrics = table_cells(window.compare_view.metrics_table)
    assert metrics["Optimal traffic"][0] == "203.5 million words"
    assert re.fullmatch(r"[\d.]+ [kMG]B", metrics["Optimal traffic, bytes"][0])
    assert metrics["Traffic / proven bound"][0] == "1.102×"


def test_compare_marks_the_best_value_the_declared_way(window):
    window.compare(["r3", "r4"])                       # two Cain runs: programs of 16 and 19 instructions
    table = window.compare_view.metrics_table
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == "Program length")
    lengths = [window.project.run(i).result.length for i in ("r3", "r4")]
    best = 1 + lengths.index(min(lengths))
    assert table.item(row, best).font().bold() and not table.item(row, 3 - best).font().bold()
    assert "lower is better" in table.item(row, 0).toolTip()


# ---------------------------------------------------------------- studies
STUDY = {"name": "bound columns", "engine": "bound",
         "workload": {"kind": "conv_layers", "layers": ["Ci=8,Hi=12,Wi=12,Co=8,Hk=3,pad=1"]},
         "target": {"kind": "dataflow", "memory_bytes": 65536, "word_bits": 16, "pe_rows": 16, "pe_cols": 16},
         "settings": {"sweep": False, "dataflows": []},
         "axes": [{"param": "target.memory_bytes", "values": [2048, 4096]}],
         "metrics": ["optimal_traffic", "ratio_reference", {"name": "memory", "path": "memory_bytes"}],
         "search": {"sampler": "grid", "objectives": ["optimal_traffic", "memory"]}}


def test_a_study_reads_the_declared_metrics(window):
    """No metric list: the declared ones; search directions and the Studies table's titles and units
    come from the declaration (a path keeps its name)."""
    from core.study import spec

    plain = spec.from_json({k: v for k, v in STUDY.items() if k not in ("metrics", "search")}, None, None)
    assert [m.name for m in plain.metrics] == [m.name for m in declared(engines()["bound"].result_type)]
    study = spec.from_json(STUDY, None, None)
    assert [o.direction for o in study.search.objectives] == ["minimize", "minimize"]
    panel = window.study_panel
    cols = panel._columns(study)
    assert "Optimal traffic" in cols and "Traffic / proven bound" in cols and "memory" in cols
    panel.running = study
    panel._fill_table(study)
    from gui.study_panel import PointRow

    panel._fill_row(0, PointRow.of({"index": 0, "params": {"target.memory_bytes": 2048}, "status": "finished",
                                    "duration_s": 0.25,
                                    "metrics": {"optimal_traffic": 2_500_000, "ratio_reference": 1.25, "memory": 2048}}))
    row = [panel.table.item(0, c).text() for c in range(panel.table.columnCount())]
    assert "2.5 million words" in row and "1.25×" in row and "250 ms" in row


def test_the_study_command_lines_table_writes_metrics_with_their_units():
    from core.study import cli, spec

    study = spec.from_json(STUDY, None, None)
    rec = {"index": 0, "params": {"target.memory_bytes": 2048}, "status": "finished",
           "metrics": {"optimal_traffic": 2_500_000, "ratio_reference": 1.25, "memory": 2048}}
    table = cli._table(study, [rec])
    assert "2.5 million words" in table and "1.25×" in table and "2048" in table


def test_energies_and_powers_below_one_take_small_prefixes():
    """A layer's energy reads 6.5 µJ, a MAC's 3.7 pJ, never 6.5e-6 J (issue 49, numbers that read right)."""
    from core.numbers import format_number

    assert format_number(6.5e-6, "J") == "6.5 µJ"
    assert format_number(3.7e-12, "J") == "3.7 pJ"
    assert format_number(0.02, "J") == "20 mJ"
    assert format_number(0.25, "W") == "250 mW"
    assert format_number(2.5, "J") == "2.5 J" and format_number(4.2e3, "J") == "4.2 kJ"
