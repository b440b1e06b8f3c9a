"""The library browser (gui.library_dock): lists that follow the project, add / duplicate / rename /
delete / import as undoable project changes, and target editors that never clamp a valid value."""

import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QSpinBox

from core.library_items import import_file, new_target, new_workload, workload_variants
from core.project import KIND_TITLES, summary
from core.workload import (BUILTIN_DIGITS, TARGET_KINDS, WORKLOAD_KINDS, CnnNetwork, DataflowTarget, KernelSet,
                           MeritTransformWorkload, MobileSocTarget, Scamp5Target)
from gui.editors import TargetEditor
from gui.library_dock import LibraryBrowser
from panel_context import FakeContext
from test_editors import GEMM_TRANSFORM


@pytest.fixture
def browser(qtbot):
    ctx = FakeContext()
    ctx.project.undo_stack.clear()
    b = LibraryBrowser(ctx.project, ctx)
    qtbot.addWidget(b)
    return b


def _rows(b, lib):
    tree = b.trees[lib]
    return [[tree.topLevelItem(i).text(c) for c in range(3)] for i in range(tree.topLevelItemCount())]


def _names(b, lib):
    return [r[0] for r in _rows(b, lib)]


def _project_names(b, lib):
    return [e.name for e in b.project.entries(lib)]


# ------------------------------------------------------------------ the lists
def test_lists_show_name_kind_and_summary(browser):
    for lib in ("workloads", "targets"):
        assert _rows(browser, lib) == [[e.name, KIND_TITLES[lib][e.kind], summary(e.value)]
                                       for e in browser.project.entries(lib)]
    assert browser.current() == ("workloads", browser.project.workloads[0].id)


def test_lists_follow_project_changes(browser):
    p = browser.project
    wid = p.workloads[1].id
    p.rename("workloads", wid, "Edge kernels")
    p.set_value("workloads", wid, KernelSet.from_json({"kernels": [{"values": [[1, -1]]}]}))
    assert _rows(browser, "workloads")[1] == ["Edge kernels", "Convolution kernels", "1 kernel 1x2"]
    p.undo()
    p.undo()
    assert _names(browser, "workloads") == _project_names(browser, "workloads")
    assert _rows(browser, "workloads")[1][2] == summary(p.workloads[1].value)
    fresh = FakeContext().project
    fresh.workloads = fresh.workloads[:2]
    p.replace_with(fresh)                         # a session opened: everything redrawn
    assert _names(browser, "workloads") == ["AnalogNet2", "My kernels"]


def test_select_shows_the_editor(browser):
    t = browser.project.targets[2]
    browser.select("targets", t.id)
    assert browser.current() == ("targets", t.id)
    assert isinstance(browser.editor, TargetEditor) and browser.editor.entry_id == t.id
    assert browser.trees["targets"].currentItem().data(0, Qt.ItemDataRole.UserRole) == t.id
    assert not browser.trees["workloads"].selectedItems()
    browser.trees["workloads"].topLevelItem(1).setSelected(True)      # a click in the other list
    assert browser.current() == ("workloads", browser.project.workloads[1].id)
    assert not browser.trees["targets"].selectedItems()


# ------------------------------------------------------------------ add / duplicate / rename / delete
def test_add_menu_offers_every_kind_and_the_variants(browser):
    menu = browser.add_menu
    titles = [a.text() for a in menu.actions() if not a.isSeparator()]
    for title in list(WORKLOAD_KINDS.values()) + list(TARGET_KINDS.values()):
        assert title in titles
    sub = {a.text(): a.menu() for a in menu.actions() if a.menu() is not None}
    cnn = [a.text() for a in sub["CNN"].actions()]
    assert "Digits CNN (trained)" in cnn and "VGG-16" in " ".join(cnn)
    merit = [a.text() for a in sub["MERIT transform"].actions()]
    assert merit == list(workload_variants("merit_transform").values())
    before = len(browser.project.workloads)
    next(a for a in sub["CNN"].actions() if a.text() == "Digits CNN (trained)").trigger()
    assert len(browser.project.workloads) == before + 1
    assert browser.project.workloads[-1].value == CnnNetwork(BUILTIN_DIGITS)
    assert browser.current() == ("workloads", browser.project.workloads[-1].id)


@pytest.mark.parametrize("kind", list(WORKLOAD_KINDS))
def test_each_new_workload_is_valid(kind):
    for variant in [None, *workload_variants(kind)]:
        name, value = new_workload(kind, variant)
        assert value.kind == kind and name
        if hasattr(value, "validate"):
            value.validate()


@pytest.mark.parametrize("kind", list(TARGET_KINDS))
def test_each_new_target_round_trips(kind):
    _, value = new_target(kind)
    assert type(value).from_json(value.to_json()) == value


def test_add_duplicate_rename_delete_and_undo(browser):
    p = browser.project
    names0 = _project_names(browser, "workloads")
    wid = browser.add_item("workloads", "merit_transform", "gemm")
    assert p.entry("workloads", wid).value == MeritTransformWorkload("gemm")
    assert _names(browser, "workloads") == names0 + ["MERIT GEMM (Fig. 2)"]
    browser.act_duplicate.trigger()
    assert _names(browser, "workloads")[-1] == "MERIT GEMM (Fig. 2) copy"
    dup = browser.current()[1]
    item = browser.trees["workloads"].topLevelItem(len(names0) + 1)
    item.setText(0, "  My GEMM ")                 # what an inline edit (F2 / double-click) does
    assert p.entry("workloads", dup).name == "My GEMM" and item.text(0) == "My GEMM"
    item.setText(0, "AnalogNet2")                 # taken: refused with a message, the old name stays
    assert p.entry("workloads", dup).name == "My GEMM" and item.text(0) == "My GEMM"
    assert "already named" in browser.message.text() and browser.message.isVisibleTo(browser)
    item.setText(0, "   ")
    assert "cannot be empty" in browser.message.text() and item.text(0) == "My GEMM"
    browser.act_delete.trigger()
    assert "My GEMM" not in _names(browser, "workloads") and p.entry("workloads", dup) is None
    assert browser.current() is not None and browser.current()[1] != dup
    assert p.undo()                               # the delete
    assert _names(browser, "workloads")[-1] == "My GEMM" and browser.current() == ("workloads", dup)
    while p.undo():
        pass
    assert _names(browser, "workloads") == names0 == _project_names(browser, "workloads")
    while p.redo():
        pass
    assert _names(browser, "workloads") == names0 + ["MERIT GEMM (Fig. 2)"]


def test_keys_and_tooltips(browser):
    keys = {browser.act_delete: "Del", browser.act_rename: "F2"}
    for act, key in keys.items():
        assert act.shortcut().toString() == key and f"({key})" in act.toolTip()
        assert act.shortcutContext() == Qt.ShortcutContext.WidgetWithChildrenShortcut
    for button in browser.buttons.values():
        assert button.toolTip()


def test_keys_delete_and_rename(qtbot, browser):
    with qtbot.waitActive(browser):
        browser.show()
        browser.activateWindow()
    tree = browser.trees["targets"]
    browser.select("targets", browser.project.targets[0].id)
    tree.setFocus()
    n = len(browser.project.targets)
    qtbot.keyClick(tree, Qt.Key.Key_Delete)
    assert len(browser.project.targets) == n - 1
    browser.project.undo()
    assert len(browser.project.targets) == n
    assert tree.state() != tree.State.EditingState
    qtbot.keyClick(tree, Qt.Key.Key_F2)
    assert tree.state() == tree.State.EditingState


def test_rename_api_refuses_empty_and_duplicates(browser):
    p = browser.project
    wid = p.workloads[0].id
    assert not browser.rename("workloads", wid, "")
    assert not browser.rename("workloads", wid, p.workloads[1].name)
    assert p.workloads[0].name == "AnalogNet2" and not p.undo_stack.can_undo()
    assert browser.rename("workloads", wid, "AN2")
    assert _names(browser, "workloads")[0] == "AN2"


# ------------------------------------------------------------------ import
def _small_onnx(path) -> str:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((4, 1, 3, 3), np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], "small", [x], [y], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def test_import_each_file_kind(browser, tmp_path):
    p = browser.project
    kernels = tmp_path / "edges.json"
    kernels.write_text(json.dumps({"name": "edges", "denominator": 2, "kernels": [{"name": "dx", "values": [[1, -1]]}]}))
    wid = browser.import_path(str(kernels))
    assert p.entry("workloads", wid).name == "edges" and p.entry("workloads", wid).value.denominator == 2
    assert browser.current() == ("workloads", wid) and "Imported" in browser.message.text()

    transform = tmp_path / "t.json"
    transform.write_text(json.dumps(GEMM_TRANSFORM))
    tid = browser.import_path(str(transform))
    assert p.entry("workloads", tid).value == MeritTransformWorkload(transform=GEMM_TRANSFORM)
    assert p.entry("workloads", tid).name == "gemm-4x6x5"

    onnx_id = browser.import_path(_small_onnx(tmp_path / "small.onnx"))
    assert p.entry("workloads", onnx_id).value == CnnNetwork(onnx_path=str(tmp_path / "small.onnx"))
    assert _names(browser, "workloads")[-3:] == ["edges", "gemm-4x6x5", "small"]
    p.undo()
    assert "small" not in _names(browser, "workloads")


BAD_FILES = {
    "broken.json": ("{not json", "not valid JSON"),
    "ragged.json": (json.dumps({"kernels": [{"values": [[1, 2], [3]]}]}), "ragged rows"),
    "transform.json": (json.dumps({**GEMM_TRANSFORM, "strategy": "nope"}), "strategy"),
    "other.json": (json.dumps({"hello": 1}), "neither a kernel file"),
    "model.onnx": ("this is no protobuf", "ONNX"),
    "notes.txt": ("hello", "not a file the library imports"),
}


@pytest.mark.parametrize("filename", list(BAD_FILES))
def test_bad_import_is_refused_and_changes_nothing(browser, tmp_path, filename):
    text, why = BAD_FILES[filename]
    path = tmp_path / filename
    path.write_text(text)
    before = [e.snapshot() for e in browser.project.workloads]
    assert browser.import_path(str(path)) is None
    assert [e.snapshot() for e in browser.project.workloads] == before
    assert not browser.project.undo_stack.can_undo()
    message = browser.message.text()
    assert str(path) in message and why in message and browser.message.isVisibleTo(browser)
    assert message in browser.context.logs


def test_import_reuses_the_cli_kernel_reader(tmp_path):
    from core.cain.engine import load_kernel_file

    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kind": "kernels", "name": "x", "denominator": 4, "kernels": [{"values": [[1]]}]}))
    assert import_file(str(path)) == ("k", load_kernel_file(str(path)))
    path.write_text(json.dumps({"kind": "cnn_set", "cnns": ["vgg16"]}))       # any workload's JSON form
    assert import_file(str(path))[1].kind == "cnn_set"


# ------------------------------------------------------------------ editors under the lists
@pytest.mark.parametrize("target, key, widget_value", [
    (MobileSocTarget(vector_width=32), "vector_width", 32),
    (DataflowTarget(memory_bytes=1000), "memory_bytes", 1000),
    (Scamp5Target(array_size=4), "array_size", 4),
])
def test_target_editor_keeps_valid_values(browser, target, key, widget_value):
    """The old editor clamped these on open (32 lanes -> 1, 1000 B -> 1024, 4 px -> 8)."""
    tid = browser.project.add("targets", "odd", target)
    browser.select("targets", tid)
    w = browser.editor.binding.widget(key)
    shown = w.currentData() if isinstance(w, QComboBox) else w.value()
    assert shown == widget_value
    if isinstance(w, QSpinBox):
        assert w.minimum() <= widget_value <= w.maximum()
    assert browser.project.entry("targets", tid).value == target
    browser.select("targets", browser.project.targets[0].id)
    browser.select("targets", tid)
    assert browser.project.entry("targets", tid).value == target


def test_editor_edit_reaches_project_and_undo_redraws(browser):
    p = browser.project
    t = next(e for e in p.targets if e.kind == "dataflow")
    browser.select("targets", t.id)
    spin = browser.editor.binding.widget("memory_bytes")
    spin.setValue(4096)
    assert p.entry("targets", t.id).value.memory_bytes == 4096
    row = [e.id for e in p.targets].index(t.id)
    assert _rows(browser, "targets")[row][2].startswith("4 KiB on chip")
    p.undo()
    assert spin.value() == 65536 and p.entry("targets", t.id).value == DataflowTarget()
    assert _rows(browser, "targets")[row][2].startswith("64 KiB on chip")

    k = next(e for e in p.workloads if e.kind == "kernels")
    browser.select("workloads", k.id)
    table = browser.editor.table
    old = table.item(0, 0).text()
    table.item(0, 0).setText("9")
    assert p.entry("workloads", k.id).value.kernels[0].values[0][0] == 9
    table.item(0, 1).setText("abc")               # refused next to the table, nothing changes
    assert "not a number" in browser.editor.error.text()
    assert p.entry("workloads", k.id).value.kernels[0].values[0][1] == 2
    p.undo()
    assert browser.editor.table.item(0, 0).text() == old


def test_editor_follows_kind_change_and_removal(browser):
    p = browser.project
    wid = p.workloads[0].id
    browser.select("workloads", wid)
    first = browser.editor
    p.set_value("workloads", wid, CnnNetwork("lenet5"))     # another kind: another editor
    assert browser.editor is not first and browser.editor.kind == "cnn"
    p.remove("workloads", wid)
    assert browser.current() == ("workloads", p.workloads[0].id)
    assert browser.editor.entry_id == p.workloads[0].id
