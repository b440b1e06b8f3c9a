"""Every field of every engine tab and library editor, typed into as a person types (key clicks,
never setText): a value with a unit, a value out of range, letters, an empty field. After each,
what the field shows is what the project holds, or Run is refused with the field's label; and a
run started then (F5) records only what the field shows (issue 49).

The fields are found from the engines' registry (core.engine) and the library kinds (core.kinds),
so a field added to a schema is typed into here without a line of this file changing."""

from __future__ import annotations

import math
from typing import Any, Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QLineEdit, QPlainTextEdit, QWidget

from core.engine import engines
from core.errors import InputError
from core.kinds import kinds
from core.workload import DataflowTarget, FpgaTarget
from core.units import QUANTITIES, format_quantity, quantity_of
from gui.binding import FieldBinding, QuantityEdit, nullable
from tests.run_fakes import Sent

CASES = ("unit", "out_of_range", "letters", "empty")


# ---------------------------------------------------------------- one window for the module
@pytest.fixture(scope="module")
def window(qapp):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    w.interactive = False
    w.runner.controller.launcher = Sent()       # a run is recorded, no engine process starts
    yield w
    w.project.undo_stack.set_clean()
    w.close()
    w.deleteLater()


# ---------------------------------------------------------------- what a field shows, typed
def _alternative_unit(unit: str) -> str | None:
    """Another unit of the field's quantity, a thousand times smaller ("GB/s" -> "MB/s"), or a
    binary one for sizes ("B" -> "KiB")."""
    q = quantity_of(unit)
    if q is None:
        return None
    if q.whole:
        return "KiB"
    return next((u for u, v in q.units.items() if v * 1000 == q.units[unit]), None)


def typed_text(w: QWidget, prop: dict[str, Any], stored: Any, case: str) -> str:
    """The text a person types for a case."""
    unit = str(prop.get("unit", ""))
    hi, lo = prop.get("maximum"), prop.get("minimum", prop.get("exclusiveMinimum"))
    if case == "letters":
        return "abc"
    if case == "empty":
        return ""
    if case == "out_of_range":
        if hi is not None and hi < 1e12:
            return f"{hi * 2 + 1:g} {unit}".strip()
        return f"-5 {unit}".strip() if lo is not None and lo >= 0 else "1e400"
    # a value with a unit: the stored one, written in another unit of its kind where it has one
    if isinstance(w, QuantityEdit):
        value = stored if stored is not None else (lo or 1)
        alt = _alternative_unit(unit)
        q = QUANTITIES[quantity_of(unit).name]             # type: ignore[union-attr]
        if alt is not None and q.whole:
            return f"{value} {unit}" if value % 1024 else f"{value // 1024} {alt}"
        if alt is not None:
            return f"{format_quantity(value, unit).split()[0]}000 {alt}".replace(".", "", 0)
        return format_quantity(value, unit)
    number = stored if isinstance(stored, (int, float)) and not isinstance(stored, bool) else 3
    return f"{number} {unit or 'MB'}"


def shown_value(w: QWidget, binding: FieldBinding, key: str) -> tuple[bool, Any]:
    """(whether the text reads, the value it says) -- read from the text itself, not the widget's
    last accepted value."""
    prop = binding.props[key]
    if isinstance(w, QAbstractSpinBox):
        if not w.hasAcceptableInput():
            return False, None
        if w.specialValueText() and w.text() == w.specialValueText():
            v = w.minimum()                                                 # type: ignore[attr-defined]
        else:
            v = w.valueFromText(w.cleanText())                              # type: ignore[attr-defined]
        if nullable(prop) and v == w.minimum():                             # type: ignore[attr-defined]
            return True, None
        return True, (int(v) if isinstance(v, int) else float(v))
    try:
        return True, binding.widgets[key][1].read(w, prop)
    except InputError:
        return False, None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-12)
    return bool(a == b)


def type_into(w: QWidget, text: str) -> None:
    """Select the field's text and type over it, key by key (an empty text: Backspace)."""
    w.setFocus()
    if isinstance(w, QAbstractSpinBox):
        w.lineEdit().selectAll()
    elif isinstance(w, (QLineEdit, QPlainTextEdit)):
        w.selectAll()
    if text:
        QTest.keyClicks(w, text)
    else:
        QTest.keyClick(w, Qt.Key.Key_Backspace)


def check(window, engine: str | None, label: str, shown: Callable[[], tuple[bool, Any]], stored: Callable[[], Any],
          run_value: Callable[[Any], Any], where: str) -> None:
    """The rule: shown == stored, or Run is refused naming the field; and F5 records only what is shown.
    For an item no engine runs (engine None), its editor names the field instead."""
    ok, value = shown()
    if engine is None:
        blocker = "; ".join(window.library.editor.field_errors())
    else:
        blocker = window.run_blocker(engine) or ""
    if not (ok and _same(value, stored())):
        assert label in blocker, f"{where}: shows {value!r} (reads: {ok}), holds {stored()!r}; Run: {blocker!r}"
        assert engine is None or not window.act_run.isEnabled(), where
    if engine is None:
        return
    before = len(window.project.runs)
    window.run_current()                        # F5
    if len(window.project.runs) > before:
        run = window.project.runs[-1]
        assert ok and _same(value, run_value(run)), f"{where}: ran with {run_value(run)!r}, shows {value!r}"
        window.project.runs.remove(run)
        window.runner.controller.abandon(run.id)


def exercise(window, engine: str | None, binding: FieldBinding, run_value: Callable[[Any, str], Any],
             name: Callable[[str], str]) -> int:
    """Type every case into every visible, enabled field of a binding; returns how many fields."""
    typed = 0
    for key, (w, _adapter) in list(binding.widgets.items()):
        if not isinstance(w, (QAbstractSpinBox, QLineEdit, QPlainTextEdit)) or getattr(w, "isReadOnly", lambda: False)():
            continue
        # a field shown or enabled only in some modes (the stepper's program text, a search's time)
        # is typed into too: the rule holds for it in every mode
        enabled = w.isEnabled()
        w.setEnabled(True)
        typed += 1
        label = name(key)
        for case in CASES:
            text = typed_text(w, binding.props[key].to_schema(), binding._read_all().get(key), case)
            type_into(w, text)
            where = f"{engine}: {label} typed {text!r} ({case})"
            check(window, engine, label, lambda w=w, k=key: shown_value(w, binding, k),
                  lambda k=key: binding._read_all().get(k), lambda run, k=key: run_value(run, k), where)
            if not isinstance(w, QPlainTextEdit):
                QTest.keyClick(w, Qt.Key.Key_Return)
                check(window, engine, label, lambda w=w, k=key: shown_value(w, binding, k),
                      lambda k=key: binding._read_all().get(k), lambda run, k=key: run_value(run, k),
                      where + " and Enter")
            binding.refresh(key)                # the next case starts from what the project holds
            assert key not in binding.errors
        w.setEnabled(enabled)
    return typed


# ---------------------------------------------------------------- engine tabs
@pytest.mark.parametrize("engine", list(engines()))
def test_every_engine_field_runs_what_it_shows(window, engine):
    window.set_current_engine(engine)
    panel = window.panels[engine]
    n = exercise(window, engine, panel.binding, lambda run, key: run.settings.get(key), panel.binding.title)
    assert n > 0


# ---------------------------------------------------------------- library editors
def _kinds() -> list[tuple[str, str]]:
    return [(lib, name) for lib in ("workloads", "targets") for name in kinds(lib)]   # type: ignore[arg-type]


@pytest.mark.parametrize("lib,kind", _kinds())
def test_every_library_field_runs_what_it_shows(window, lib, kind):
    spec = next((s for s in engines().values() if kind in (s.workload_kinds if lib == "workloads"
                                                           else s.target_kinds)), None)
    engine = spec.name if spec is not None else None         # none: the editor alone must name a refusal
    if engine is not None:
        window.set_current_engine(engine)
    entry_id = window.library.add_item(lib, kind)
    if engine is not None:
        window.project.choose(engine, lib, entry_id)
    editor = window.library.editor
    assert editor is not None and editor.entry_id == entry_id
    item = f"{window.project.entry(lib, entry_id).name}"

    def run_value(run, key: str) -> Any:
        snap = run.workload if lib == "workloads" else run.target
        return editor_value(snap.value.to_json(), key)

    def editor_value(value_json: dict[str, Any], key: str) -> Any:
        return value_json.get(key, value_json.get({"rows": "kernels", "cols": "kernels"}.get(key, key)))

    typed = 0
    for binding in editor._bindings:
        if binding is getattr(editor, "size_fields", None):     # the shown kernel's size, not a JSON field
            typed += exercise(window, engine, binding, lambda run, key: _kernel_size(run, key, editor),
                              binding.title)
        else:
            typed += exercise(window, engine, binding, run_value, binding.title)
    for label, attr, held, reads in TEXT_FIELDS.get(kind, []):
        w = getattr(editor, attr)
        typed += 1
        for case in CASES:
            text = {"unit": "5 MB", "out_of_range": "-5", "letters": "abc", "empty": ""}[case]
            type_into(w, text)
            shown = w.toPlainText() if isinstance(w, QPlainTextEdit) else w.text()
            check(window, engine, label, lambda s=shown: reads(s), lambda: held(editor.value()),
                  lambda run: held(run.workload.value),
                  f"{kind}: {label} typed {text!r} ({case})")
        editor.refresh()
    assert item                         # named, so the refusals below name it
    if typed == 0:
        pytest.skip(f"a {kind} has no typed fields (choices and lists only)")


def _reads(parse: Callable[[str], Any]) -> Callable[[str], tuple[bool, Any]]:
    def read(text: str) -> tuple[bool, Any]:
        try:
            return True, parse(text)
        except InputError:
            return False, None
    return read


def _name(text: str) -> str:
    if not text.strip():
        raise InputError("empty")
    return text.strip()


def _layers(text: str) -> list[str]:
    from core.library_items import layers_from_text

    return list(layers_from_text(text).layers)


# free-text fields of editors, outside any binding: (label, attribute, value held, how the text reads)
TEXT_FIELDS: dict[str, list[tuple[str, str, Callable[[Any], Any], Callable[[str], tuple[bool, Any]]]]] = {
    "kernels": [("Set name", "name_edit", lambda v: v.name, _reads(_name))],
    "conv_layers": [("Layers", "text", lambda v: list(v.layers), _reads(_layers))],
}


def _kernel_size(run, key: str, editor) -> int:
    m = run.workload.value.to_json()["kernels"][editor._row]["values"]
    return len(m) if key == "rows" else len(m[0])


# ---------------------------------------------------------------- the two cases, as found
def _open_target(window, engine: str, tid: str, key: str):
    """The engine's tab current with target `tid` its choice and open in the library editor; the
    editor's field for `key`."""
    window.set_current_engine(engine)
    window.project.choose(engine, "targets", tid)
    window.library.select("targets", tid)
    return window.library.editor.binding.widget(key)


def test_256_kib_into_on_chip_memory_is_262144_bytes_and_the_name_follows(window):
    project = window.project
    tid = next(e.id for e in project.targets if e.name == "Accelerator, 64 KiB")
    field = _open_target(window, "bound", tid, "memory_bytes")
    type_into(field, "256 KiB")
    QTest.keyClick(field, Qt.Key.Key_Return)
    entry = project.entry("targets", tid)
    assert entry.value.memory_bytes == 262144
    assert field.text() == "256 KiB"
    assert entry.name == "Accelerator, 256 KiB"
    assert window.run_blocker("bound") is None
    window.run_current()
    run = project.runs[-1]
    assert run.target.value.memory_bytes == 262144 and run.target.name == "Accelerator, 256 KiB"
    project.runs.remove(run)
    window.runner.controller.abandon(run.id)
    # a name the user chose stays
    window.library.rename("targets", tid, "my chip")
    type_into(field, "1 MiB")
    QTest.keyClick(field, Qt.Key.Key_Return)
    assert entry.value.memory_bytes == 1 << 20 and entry.name == "my chip"
    project.undo()
    project.undo()
    assert entry.name == "Accelerator, 256 KiB" and entry.value.memory_bytes == 262144


def test_a_refused_target_bandwidth_blocks_run_until_fixed(window):
    project = window.project
    tid = next(e.id for e in project.targets if e.kind == "fpga")
    field = _open_target(window, "fcnnx", tid, "bandwidth_gbps")
    editor = window.library.editor
    before = project.entry("targets", tid).value.bandwidth_gbps
    runs = len(project.runs)
    type_into(field, "-5")
    assert not window.act_run.isEnabled()       # named, and F5 twice starts nothing
    assert "Off-chip bandwidth: cannot be -5 GB/s: must be more than 0 GB/s" in window.act_run.toolTip()
    assert "Off-chip bandwidth" in window.bars["fcnnx"].banner_text.text()
    assert "Off-chip bandwidth" in window.statusBar().currentMessage()
    window.run_current()
    window.run_current()
    assert len(project.runs) == runs and project.entry("targets", tid).value.bandwidth_gbps == before
    QTest.keyClick(field, Qt.Key.Key_Return)
    assert field.text() == "-5" and not window.act_run.isEnabled()      # still on show, marked
    type_into(field, "1.5 GB/s")
    QTest.keyClick(field, Qt.Key.Key_Return)
    assert project.entry("targets", tid).value.bandwidth_gbps == 1.5 and field.text() == "1.5 GB/s"
    assert not editor.error.isVisibleTo(editor) and editor.error.text() == ""     # the message went with it
    assert window.run_blocker("fcnnx") is None and window.act_run.isEnabled()
    assert project.entry("targets", tid).name.endswith("at 1.5 GB/s")


def test_units_people_type(window):
    from core.units import parse_quantity, read_field

    assert parse_quantity("256 KiB", "B") == 262144 and parse_quantity("1.5 GB/s", "GB/s") == 1.5
    assert parse_quantity("800 MHz", "Hz") == 800_000_000 and parse_quantity("1.2 GHz", "MHz") == 1200
    assert parse_quantity("3.7 pJ", "pJ") == parse_quantity("0.0037 nJ", "pJ")
    assert parse_quantity("2 ns", "s") * 10 ** 9 == 2 and parse_quantity("500 mW", "W") * 2 == 1
    assert parse_quantity("65,536 B", "B") == 65536 and parse_quantity("64kb", "B") == 64000 and parse_quantity("1 mb/s", "GB/s") * 1000 == 1
    with pytest.raises(InputError, match="not a unit of energy"):
        parse_quantity("3 MHz", "pJ")
    with pytest.raises(InputError, match="whole number of bytes"):
        read_field("1.5 B", {"type": "integer", "unit": "B"})
    prop = {"type": "number", "unit": "GB/s", "exclusiveMinimum": 0, "maximum": 1000.0}
    for text in ("1.5 GB/s", "500 MB/s", "0.001 TB/s", "1e-3 GB/s"):
        v = read_field(text, prop)
        assert read_field(format_quantity(v, "GB/s"), prop) == v           # what is shown reads back the same
    assert format_quantity(262144, "B") == "256 KiB" and format_quantity(1000, "B") == "1000 B"


def test_a_study_does_not_run_on_workers_the_field_does_not_show(window, monkeypatch):
    from gui.study_panel import StudyRunner

    panel = window.study_panel
    panel.where.setCurrentIndex(panel.where.findData("local"))
    started = []
    monkeypatch.setattr(StudyRunner, "__init__", lambda self, *a, **k: started.append(a) or None)
    type_into(panel.workers, "")
    assert not panel.run_study() and not started
    assert "Workers" in window.statusBar().currentMessage()
    QTest.keyClick(panel.workers, Qt.Key.Key_Return)          # given up: the field shows the number it holds
    assert panel.workers.hasAcceptableInput()


def test_a_cnn_whose_source_says_onnx_runs_no_zoo_network_meanwhile(window):
    project = window.project
    window.set_current_engine("bound")
    wid = window.library.add_item("workloads", "cnn", "vgg16")
    project.choose("bound", "workloads", wid)
    editor = window.library.editor
    editor.source.setCurrentIndex(editor.source.findData("onnx"))       # picked: no file read yet
    assert "Source" in (window.run_blocker("bound") or "") and not window.act_run.isEnabled()
    type_into(editor.onnx_path, "/no/such/model.onnx")
    assert "ONNX file" in (window.run_blocker("bound") or "")
    editor.source.setCurrentIndex(editor.source.findData("zoo"))        # back: the hidden row holds nothing
    assert window.run_blocker("bound") is None and project.entry("workloads", wid).value.network == "vgg16"
    assert editor.onnx_path.text() == ""


@pytest.mark.parametrize("typed,taken", [("2.5", 2.5), ("abc", None), ("-5", -5.0), ("1e400", None)])
def test_a_kernel_cell_typed_shows_what_it_holds(window, typed, taken):
    project = window.project
    wid = next(e.id for e in project.workloads if e.kind == "kernels")
    window.library.select("workloads", wid)
    editor = window.library.editor
    table = editor.table
    before = project.entry("workloads", wid).value.kernels[0].values[0][1]
    table.setFocus()
    table.setCurrentCell(0, 1)
    QTest.keyClick(table, Qt.Key.Key_F2)                 # edit the cell, as a person does
    editor_widget = table.focusWidget()
    assert isinstance(editor_widget, QLineEdit)
    editor_widget.selectAll()
    QTest.keyClicks(editor_widget, typed)
    QTest.keyClick(editor_widget, Qt.Key.Key_Return)
    QApplication.processEvents()                         # the delegate hands the text over
    held = project.entry("workloads", wid).value.kernels[0].values[0][1]
    assert held == (before if taken is None else taken)
    assert float(table.item(0, 1).text()) == held        # the cell shows what the set holds
    if taken is None:
        assert "Row 1, column 2" in editor.error.text()


def test_arrow_keys_step_a_quantity_as_the_spin_box_did(window):
    project = window.project
    tid = project.add("targets", "Accelerator, 64 KiB", DataflowTarget())
    window.library.select("targets", tid)
    field = window.library.editor.binding.widget("memory_bytes")
    field.setFocus()
    QTest.keyClick(field, Qt.Key.Key_Up)
    assert project.entry("targets", tid).value.memory_bytes == 131072 and field.text() == "128 KiB"
    QTest.keyClick(field, Qt.Key.Key_Down)
    QTest.keyClick(field, Qt.Key.Key_Down)
    assert project.entry("targets", tid).value.memory_bytes == 32768 and field.text() == "32 KiB"
    fid = project.add("targets", "board", FpgaTarget("zc706", 1.0))
    window.library.select("targets", fid)
    bw = window.library.editor.binding.widget("bandwidth_gbps")
    bw.setFocus()
    QTest.keyClick(bw, Qt.Key.Key_Up)
    assert project.entry("targets", fid).value.bandwidth_gbps == 1.1 and bw.text() == "1.1 GB/s"
