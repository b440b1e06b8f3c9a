"""Issue 30, "Internal names and raw numbers show through": the window names settings and metrics as
people do (schema titles, not keys) and writes numbers with units and sensible precision, in undo
texts, the runs table, Compare, the choice bar and the stepper; a constant series gets a sane axis."""

from __future__ import annotations

import re

import numpy as np
import pytest
from window_helpers import example_window

# What must never show: exponent forms of ordinary numbers, long runs of digits, "-0", raw keys.
RAW_NUMBER = re.compile(r"\d\.\d+e[+-]?\d|\d\.\d{6,}|(?<![\w.])-0(?![.\d])")
SNAKE_KEY = re.compile(r"\b[a-z]+_[a-z_]+\b")


@pytest.fixture
def window(qtbot):
    w = example_window(qtbot)
    yield w
    w.shutdown_jobs()


def table_cells(table) -> list[list[str]]:
    return [[table.item(r, c).text() if table.item(r, c) else "" for c in range(table.columnCount())]
            for r in range(table.rowCount())]


# ---------------------------------------------------------------- the helper itself
@pytest.mark.parametrize("value, unit, text", [
    (203453132, "words", "203.5 million words"),
    (23.29172, "", "23.29"),
    (8.881784197001252e-16, "", "8.88e-16"),
    (-0.0, "", "0"),
    (-1e-20, "", "-1e-20"),
    (0.0727, "fraction", "7.27 %"),
    (3.2e9, "B/s", "3.2 GB/s"),
    (2.5e10, "Ops", "25 GOps"),
    (18855, "nodes", "18,855 nodes"),
    (21, "instructions", "21 instructions"),
    (1.1023163435687866, "×", "1.102×"),
    (None, "s", "—"),
])
def test_numbers_read_with_units_and_sensible_precision(value, unit, text):
    from core.display import format_number

    assert format_number(value, unit) == text


def test_settings_and_headlines_have_names_for_people():
    from core.display import format_setting, metric_of, setting_label

    assert setting_label("cain", "time_s") == "Time" and setting_label("merit", "bandwidth_gbps") == "DRAM"
    assert format_setting("merit", "bandwidth_gbps", 3.2) == "3.2 GB/s"
    assert format_setting("cain", "mode", "auke") == "one by one"          # the schema's item label
    assert metric_of("bound", "optimal_traffic").title == "Optimal traffic"
    assert metric_of("cain", "length").text(21) == "21 instructions"


# ---------------------------------------------------------------- undo
def test_undo_names_the_setting_by_its_title(window):
    window.project.set_setting("cain", "time_s", 7.0)
    assert window.act_undo.text().replace("&", "") == "Undo Change Time"
    window.project.set_setting("merit", "bandwidth_gbps", 2.0)
    text = window.act_undo.text().replace("&", "")
    assert text == "Undo Change DRAM" and "_" not in text
    window.project.undo()
    assert window.act_redo.text().replace("&", "") == "Redo Change DRAM"


# ---------------------------------------------------------------- the runs table
def test_runs_table_shows_titles_and_numbers_with_units(window):
    model = window.runs_view.model
    from gui.runs_view import KEYS, cell_text

    rows = {row["id"]: {k: cell_text(row, k) for k in KEYS} for row in model.rows}
    assert rows["r5"]["metric"] == "Optimal traffic"
    assert rows["r5"]["value"] == "203.5 million words"
    assert rows["r1"]["metric"] == "Program length" and rows["r1"]["value"] == "21 instructions"
    assert "Traversal: best-first" in rows["r4"]["settings"]
    for run_id, row in rows.items():
        for key in ("settings", "metric", "value"):
            assert not RAW_NUMBER.search(row[key]), (run_id, key, row[key])
            assert not SNAKE_KEY.search(row[key]), (run_id, key, row[key])


# ---------------------------------------------------------------- Compare
def test_compare_shows_titles_and_units(window):
    window.compare(["r3", "r4"])
    settings = table_cells(window.compare_view.settings_table)
    names = [row[0] for row in settings]
    assert "Traversal" in names and "Set" in names and "Max nodes" in names and "Time" in names
    assert not any(SNAKE_KEY.fullmatch(n) or n in ("isa", "max_nodes", "time_s") for n in names), names
    assert next(row for row in settings if row[0] == "Time")[1:] == ["6 s", "6 s"]
    metrics = table_cells(window.compare_view.metrics_table)
    lengths = [f"{window.project.run(r).result.length} instructions" for r in ("r3", "r4")]   # the session's own
    assert next(row for row in metrics if row[0] == "Program length")[1:] == lengths
    for row in settings + metrics:
        for cell in row:
            assert not RAW_NUMBER.search(cell), row


def test_compare_of_the_bound_and_merit_headlines_has_no_raw_numbers(window):
    window.compare(["r5", "r6", "r7"])
    metrics = table_cells(window.compare_view.metrics_table)
    flat = " | ".join(" ".join(row) for row in metrics)
    assert "203.5 million words" in flat and "8.88e-16" in flat and "7.27 %" in flat
    assert not RAW_NUMBER.search(flat.replace("8.88e-16", "")), flat
    assert not any(SNAKE_KEY.fullmatch(row[0]) for row in metrics), [row[0] for row in metrics]


# ---------------------------------------------------------------- choice bar and stepper
def test_choice_bar_run_titles_have_units(window):
    from gui.choice_bar import run_title

    bound = window.project.run("r5")
    assert "Optimal traffic 203.5 million words" in run_title(bound)
    assert not RAW_NUMBER.search(run_title(bound))


def test_stepper_never_shows_minus_zero(window, qtbot, monkeypatch):
    window.open_run("r2")
    panel = window.panels["simulate"]
    stepper = panel.stepper
    qtbot.waitUntil(lambda: stepper.replay is not None, timeout=60_000)
    plane = stepper.planes[0]
    monkeypatch.setattr(stepper, "current_planes", lambda: {plane: np.full((4, 4), -0.0, dtype=np.float32)})
    stepper._hovered(plane, 1, 1)
    assert stepper.hover_label.text().endswith("value 0")
    from gui.panels.simulate.inspector import fmt

    assert fmt(np.float32(-0.0)) == "0" and fmt(-1e-12) == "-1e-12"


# ---------------------------------------------------------------- plots
def test_a_constant_series_gets_a_readable_axis(qtbot):
    from gui.plotting import LivePlot

    plot = LivePlot(y_label="instructions")
    qtbot.addWidget(plot)
    plot.add_points("best length", [0, 1, 2, 3], [19, 19, 19, 19])
    lo, hi = plot.getPlotItem().getViewBox().viewRange()[1]
    assert lo <= 0 <= 19 < hi and hi - lo >= 10          # not 18.91-19.09 with ticks of 0.01


# ---------------------------------------------------------------- input handling in the window
def test_a_negative_bandwidth_is_refused_with_the_fields_name(window, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    window.set_current_engine("merit")
    panel = window.panels["merit"]
    field = panel.binding.widget("bandwidth_gbps")
    before = window.project.settings("merit")["bandwidth_gbps"]
    field.setFocus()
    field.selectAll()
    QTest.keyClicks(field, "-5")
    assert field.text().startswith("-5"), "the minus sign was dropped: -5 would read as 5"
    errors = panel.binding.error_texts()
    assert errors and errors[0].startswith("DRAM:") and "-5 GB/s" in errors[0] and "more than 0" in errors[0]
    assert "DRAM" in window.statusBar().currentMessage()
    assert window.project.settings("merit")["bandwidth_gbps"] == before       # nothing taken
    QTest.keyClick(field, Qt.Key.Key_Return)       # the text stays on show, marked, and Run waits
    assert window.project.settings("merit")["bandwidth_gbps"] == before and field.text() == "-5"
    assert not window.act_run.isEnabled() and "DRAM" in window.act_run.toolTip()
    field.selectAll()
    QTest.keyClicks(field, "2.5 GB/s")
    QTest.keyClick(field, Qt.Key.Key_Return)
    assert window.project.settings("merit")["bandwidth_gbps"] == 2.5 and not panel.binding.error_texts()


def test_a_negative_target_bandwidth_is_refused_in_the_library_editor(window):
    from PySide6.QtTest import QTest

    from core.workload import FpgaTarget

    tid = window.project.add("targets", "board", FpgaTarget("zc706", 1.0))
    window.library.select("targets", tid)
    editor = window.library.editor
    field = editor.binding.widget("bandwidth_gbps")
    field.setFocus()
    field.selectAll()
    QTest.keyClicks(field, "-5")
    assert editor.error.isVisibleTo(editor) and "-5 GB/s" in editor.error.text()
    assert editor.error.text().startswith(editor.binding.title("bandwidth_gbps"))
    assert window.project.entry("targets", tid).value.bandwidth_gbps == 1.0


def test_a_bad_kernel_file_says_what_format_is_expected(window, tmp_path):
    import json

    bad = tmp_path / "mine.json"
    bad.write_text(json.dumps({"kernels": [{"name": "k", "values": [[1, 2], [3]]}]}))
    assert window.library.import_path(str(bad)) is None
    text = window.library.message.text()
    assert "mine.json" in text and '"kernels": [{"name": "k1", "values": [[1, 2, 1]' in text
    # and the example it gives is itself a kernel file that imports
    from core.library_items import KERNEL_FILE_HINT

    example = KERNEL_FILE_HINT[KERNEL_FILE_HINT.index("{"):KERNEL_FILE_HINT.rindex("}") + 1]
    good = tmp_path / "example.json"
    good.write_text(example)
    assert window.library.import_path(str(good)) is not None
    not_json = tmp_path / "broken.json"
    not_json.write_text("{kernels: oops")
    assert window.library.import_path(str(not_json)) is None
    assert "A kernel file is JSON like" in window.library.message.text()


def test_the_onnx_editor_lists_the_files_layers(window, tmp_path):
    from core.nets import zoo
    from core.nets.onnx_export import export

    path = export(zoo.get("lenet5"), tmp_path / "lenet.onnx")
    wid = window.library.import_path(str(path))
    assert wid is not None
    editor = window.library.editor
    assert not editor.network.isVisibleTo(editor), "a greyed 'Network: VGG-16' row under an ONNX model"
    text = editor.summary.text()
    assert "4 layers (2 conv, 2 FC)" in text and "input 1x28x28" in text and "MOps" in text, text
    window.project.set_value("workloads", wid, type(window.project.entry("workloads", wid).value)("alexnet"))
    assert editor.network.isVisibleTo(editor) and "AlexNet" in editor.summary.text()
