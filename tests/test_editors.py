"""Item editors (gui.editors): each edit reaches the project as one undoable change, undo
redraws the editor, and an invalid edit shows a message and changes nothing."""

import json

import pytest
from PySide6.QtCore import Qt

from core.errors import InputError
from core.library_items import layers_from_text, parse_kernel_text
from core.project import Project
from core.workload import (BUILTIN_DIGITS, CnnNetwork, CnnSet, ConvLayers, FpgaTarget, FpspFilter, Kernel, KernelSet,
                           MeritTransformWorkload)
from gui.editors import TargetEditor, editor_for
from gui.editors.cnn import CnnEditor
from gui.editors.cnn_set import CnnSetEditor
from gui.editors.conv_layers import ConvLayersEditor
from gui.editors.fpsp_filter import FilterEditor
from gui.editors.kernels import KernelSetEditor
from gui.editors.merit_transform import MeritTransformEditor

IDENTITY = KernelSet("k", 1, [Kernel("k1", [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])])


def _editor(qtbot, value, lib="workloads"):
    project = Project()
    entry_id = project.add(lib, "item", value)
    project.undo_stack.clear()
    ed = editor_for(project, lib, entry_id)
    qtbot.addWidget(ed)
    return project, entry_id, ed


def _value(project, entry_id, lib="workloads"):
    return project.entry(lib, entry_id).value


def test_parse_kernel_text():
    assert parse_kernel_text("1 2 1\n2, 4, 2\n1 2 1\n\n0 1\n1 0") == [
        [[1, 2, 1], [2, 4, 2], [1, 2, 1]], [[0, 1], [1, 0]]]
    assert parse_kernel_text("[1 2; 3 4]") == [[[1, 2], [3, 4]]]
    with pytest.raises(InputError) as info:
        parse_kernel_text("1 2\n3 x")
    assert info.value.where == "pasted text line 2" and "'x'" in info.value.message
    with pytest.raises(InputError, match="ragged"):
        parse_kernel_text("1 2\n3")
    with pytest.raises(InputError, match="limit is 7x7"):
        parse_kernel_text("\n".join(["1 " * 8] * 8))


def test_layers_from_text_names_the_bad_line():
    assert layers_from_text("Ci=3,Hi=8,Wi=8,Co=8,kernel=3\n\n  Ci=8,Co=8  \n").layers == [
        "Ci=3,Hi=8,Wi=8,Co=8,kernel=3", "Ci=8,Co=8"]
    with pytest.raises(InputError) as info:
        layers_from_text("Ci=3,Co=8\nCi=3,Co=x")
    assert info.value.where == "line 2" and "integer" in info.value.message
    with pytest.raises(InputError, match="larger than the padded input") as info:
        layers_from_text("Ci=3,Co=8,kernel=3")
    assert info.value.where.startswith("line 1")
    with pytest.raises(InputError, match="no layer"):
        layers_from_text("\n")


def test_editor_per_kind(qtbot):
    kinds = {KernelSetEditor: IDENTITY, FilterEditor: FpspFilter("sobel"), CnnSetEditor: CnnSet(["vgg16"]),
             CnnEditor: CnnNetwork("vgg16"), MeritTransformEditor: MeritTransformWorkload("gemm"),
             ConvLayersEditor: ConvLayers(["Ci=3,Co=8"])}
    for cls, value in kinds.items():
        _, _, ed = _editor(qtbot, value)
        assert type(ed) is cls
    _, _, ed = _editor(qtbot, FpgaTarget(), "targets")
    assert type(ed) is TargetEditor


def test_kernel_editor_edits_reach_the_project(qtbot):
    project, wid, ed = _editor(qtbot, IDENTITY)
    assert ed.set_kernels_from_text("1 2 1\n2 4 2\n1 2 1")
    ed.denominator.setValue(16)
    ed.add_kernel()
    assert ed.list.currentRow() == 1
    ed.cols.setValue(5)
    ed.rows.setValue(5)
    ed.table.item(0, 4).setText("3")
    ks = _value(project, wid)
    assert ks.denominator == 16 and len(ks.kernels) == 2
    assert ks.kernels[0].values == [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    assert ks.kernels[1].values[0] == [0, 0, 0, 0, 3] and len(ks.kernels[1].values) == 5
    ed.table.item(1, 1).setText("abc")          # refused, old value kept, message shown
    assert "not a number" in ed.error.text() and ed.error.isVisibleTo(ed)
    assert ed.table.item(1, 1).text() == "0"
    assert _value(project, wid).kernels[1].values[1][1] == 0
    ed.remove_kernel()
    ed.remove_kernel()                           # the last kernel stays
    assert len(_value(project, wid).kernels) == 1 and "at least one" in ed.error.text()


def test_kernel_editor_undo_redraws(qtbot):
    project, wid, ed = _editor(qtbot, IDENTITY)
    ed.table.item(1, 1).setText("7")
    assert _value(project, wid).kernels[0].values[1][1] == 7
    assert project.undo()
    assert _value(project, wid) == IDENTITY and ed.table.item(1, 1).text() == "1"
    ed.name_edit.setText("renamed set")
    ed.name_edit.editingFinished.emit()
    assert _value(project, wid).name == "renamed set"
    project.undo()
    assert ed.name_edit.text() == "k"


def test_kernel_editor_paste_errors_change_nothing(qtbot):
    project, wid, ed = _editor(qtbot, IDENTITY)
    assert not ed.set_kernels_from_text("1 2\n3 x")
    assert "'x'" in ed.error.text() and _value(project, wid) == IDENTITY
    assert not project.undo_stack.can_undo()


def test_kernel_rename_in_list(qtbot):
    two = KernelSet("k", 1, [Kernel("a", [[1.0]]), Kernel("b", [[2.0]])])
    project, wid, ed = _editor(qtbot, two)
    ed.list.item(1).setText("a")                  # duplicate: refused
    assert "already named" in ed.error.text() and ed.list.item(1).text() == "b"
    ed.list.item(1).setText("second")
    assert [k.name for k in _value(project, wid).kernels] == ["a", "second"]


def test_multichannel_kernel_survives_editor(qtbot):
    ks = KernelSet("z", 2, [Kernel("a", [[[1.0, 0.0], [0.0, 1.0]], [[2.0, 2.0], [2.0, 2.0]]])])
    project, wid, ed = _editor(qtbot, ks)
    assert ed.channel.isVisibleTo(ed) and ed.channel.maximum() == 2
    ed.channel.setValue(2)
    assert ed.table.item(0, 0).text() == "2"
    ed.table.item(0, 0).setText("5")
    assert _value(project, wid).kernels[0].values == [[[1.0, 0.0], [0.0, 1.0]], [[5.0, 2.0], [2.0, 2.0]]]
    ed.rows.setValue(3)
    assert [len(c) for c in _value(project, wid).kernels[0].channels] == [3, 3]


def test_filter_editor(qtbot):
    project, wid, ed = _editor(qtbot, FpspFilter("gauss3"))
    ed.combo.setCurrentIndex(ed.combo.findData("sobel"))
    assert _value(project, wid) == FpspFilter("sobel") and "sobel_x" in ed.preview.text()
    project.undo()
    assert ed.combo.currentData() == "gauss3" and "gauss3" in ed.preview.text()


def test_cnn_set_editor(qtbot):
    project, wid, ed = _editor(qtbot, CnnSet(["zfnet", "vgg16"]))
    rows = {ed.list.item(i).data(Qt.ItemDataRole.UserRole): ed.list.item(i) for i in range(ed.list.count())}
    assert rows["zfnet"].checkState() == Qt.CheckState.Checked
    assert rows["lenet5"].checkState() == Qt.CheckState.Unchecked
    rows["lenet5"].setCheckState(Qt.CheckState.Checked)
    assert _value(project, wid).cnns == ["zfnet", "vgg16", "lenet5"]
    ed.batch.setValue(4)
    assert _value(project, wid).batch == 4
    for name in ("zfnet", "vgg16", "lenet5"):     # unticking every one is refused
        rows[name].setCheckState(Qt.CheckState.Unchecked)
    assert "no CNNs" in ed.error.text()
    assert _value(project, wid).cnns == ["lenet5"] and rows["lenet5"].checkState() == Qt.CheckState.Checked
    while project.undo():
        pass
    assert _value(project, wid) == CnnSet(["zfnet", "vgg16"]) and ed.batch.value() == 1
    assert rows["lenet5"].checkState() == Qt.CheckState.Unchecked


def test_cnn_editor_sources(qtbot, tmp_path):
    project, wid, ed = _editor(qtbot, CnnNetwork("vgg16"))
    assert ed.source.currentData() == "zoo" and ed.network.currentData() == "vgg16"
    ed.network.setCurrentIndex(ed.network.findData("lenet5"))
    assert _value(project, wid) == CnnNetwork("lenet5")
    ed.source.setCurrentIndex(ed.source.findData("builtin"))
    # the zoo's Network row is hidden, not greyed out (issue 30: it read as if it applied)
    assert _value(project, wid).source == "builtin" and not ed.network.isVisibleTo(ed)
    bad = tmp_path / "not.onnx"
    bad.write_bytes(b"not a model")
    assert not ed.set_onnx_path(str(bad))
    assert str(bad) in ed.error.text() and _value(project, wid).source == "builtin"
    assert not ed.set_validation_path(str(tmp_path / "missing.npz"))
    assert "file not found" in ed.error.text()
    npz = tmp_path / "val.npz"
    npz.write_bytes(b"")
    assert ed.set_validation_path(str(npz))
    assert _value(project, wid).validation_path == str(npz)
    ed.batch.setValue(8)
    assert _value(project, wid).batch == 8
    while project.undo():
        pass
    assert ed.source.currentData() == "zoo" and ed.network.currentData() == "vgg16"
    assert ed.validation.text() == "" and ed.batch.value() == 1


def test_cnn_editor_shows_builtin(qtbot):
    _, _, ed = _editor(qtbot, CnnNetwork(BUILTIN_DIGITS))
    assert ed.source.currentData() == "builtin"


def test_merit_editor(qtbot, tmp_path):
    project, wid, ed = _editor(qtbot, MeritTransformWorkload("conv3x3"))
    assert ed.combo.currentData() == "conv3x3" and not ed.json_view.isVisibleTo(ed)
    ed.combo.setCurrentIndex(ed.combo.findData("gemm"))
    ed.combo.activated.emit(ed.combo.currentIndex())
    assert _value(project, wid) == MeritTransformWorkload("gemm")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(GEMM_TRANSFORM))
    assert ed.load_json(str(path))
    w = _value(project, wid)
    assert w.transform == GEMM_TRANSFORM and w.builtin == "gemm"
    assert ed.json_view.isVisibleTo(ed) and '"gemm-4x6x5"' in ed.json_view.toPlainText()
    assert ed.combo.currentData() is None and "gemm-4x6x5" in ed.combo.currentText()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**GEMM_TRANSFORM, "strategy": "nope"}))
    assert not ed.load_json(str(bad))
    assert str(bad) in ed.error.text() and _value(project, wid).transform == GEMM_TRANSFORM
    while project.undo():
        pass
    assert ed.combo.currentData() == "conv3x3" and not ed.json_view.isVisibleTo(ed)


def test_conv_layers_editor(qtbot):
    project, wid, ed = _editor(qtbot, ConvLayers(["Ci=3,Co=8"]))
    assert ed.text.toPlainText() == "Ci=3,Co=8"
    two = ["Ci=3,Co=8", "Ci=8,Hi=4,Wi=4,Co=16,kernel=3,pad=1"]
    ed.text.setPlainText("\n".join(two))
    assert _value(project, wid).layers == two
    ed.text.setPlainText("Ci=3,Co=8\nCi=8,Co=oops")
    assert "line 2" in ed.error.text() and ed.error.isVisibleTo(ed)
    assert _value(project, wid).layers == two
    project.undo()
    assert ed.text.toPlainText() == "Ci=3,Co=8" and not ed.error.isVisibleTo(ed)


def test_target_editor_from_schema(qtbot):
    from PySide6.QtTest import QTest

    project, tid, ed = _editor(qtbot, FpgaTarget("zedboard", 2.5), "targets")
    board, bw = ed.binding.widget("board"), ed.binding.widget("bandwidth_gbps")
    assert board.currentData() == "zedboard" and "ZedBoard" in board.currentText()
    assert bw.value() == 2.5 and bw.text() == "2.5 GB/s"       # the stored value with its unit
    bw.selectAll()
    QTest.keyClicks(bw, "1001")         # over the schema's maximum: refused with it (nothing clamped)
    assert "at most 1000 GB/s" in ed.binding.errors["bandwidth_gbps"]
    bw.setValue(4.0)
    assert _value(project, tid, "targets") == FpgaTarget("zedboard", 4.0)
    project.undo()
    assert bw.value() == 2.5


GEMM_TRANSFORM = {
    "name": "gemm-4x6x5", "parallel": [["m", 4], ["n", 5]], "accumulate": [["k", 6]],
    "operands": [{"name": "A", "shape": [4, 6], "map": {"m": [0, 1, 0], "k": [1, 1, 0]}},
                 {"name": "B", "shape": [6, 5], "map": {"k": [0, 1, 0], "n": [1, 1, 0]}}],
    "strategy": "dot", "reference": {"kind": "gemm"},
}
