"""Workload and target editors: kernel editing, pasting, validation messages, round trips."""

import pytest

from core.errors import InputError
from core.workload import CnnSet, DataflowTarget, FpgaTarget, FpspFilter, Kernel, KernelSet, MobileSocTarget
from gui.target_editor import TargetEditor
from gui.workload_editor import KernelEditor, WorkloadEditor, parse_kernel_text


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


def test_kernel_editor_edits(qtbot):
    ed = KernelEditor()
    qtbot.addWidget(ed)
    with qtbot.waitSignal(ed.changed):
        ed.set_kernels_from_text("1 2 1\n2 4 2\n1 2 1")
    ed.denominator.setValue(16)
    ed.add_kernel()
    ed.cols.setValue(5)
    ed.rows.setValue(5)
    ed.table.item(0, 4).setText("3")
    ks = ed.kernel_set()
    assert ks.denominator == 16 and len(ks.kernels) == 2
    assert ks.kernels[1].values[0] == [0, 0, 0, 0, 3] and len(ks.kernels[1].values) == 5
    ed.table.item(1, 1).setText("abc")          # refused, old value kept, message shown
    assert "not a number" in ed.error.text()
    assert ed.kernel_set().kernels[1].values[1][1] == 0
    ed.list.setCurrentRow(1)
    ed.remove_kernel()
    ed.remove_kernel()                           # the last kernel stays
    assert len(ed.kernel_set().kernels) == 1 and "at least one" in ed.error.text()


def test_multichannel_kernel_survives_editor(qtbot):
    ed = KernelEditor()
    qtbot.addWidget(ed)
    ks = KernelSet("z", 2, [Kernel("a", [[[1.0, 0.0], [0.0, 1.0]], [[2.0, 2.0], [2.0, 2.0]]])])
    ed.set_kernel_set(ks)
    assert ed.kernel_set() == ks
    ed.rows.setValue(3)
    assert [len(c) for c in ed.kernel_set().kernels[0].channels] == [3, 3]


def test_workload_editor_round_trips(qtbot):
    ed = WorkloadEditor()
    qtbot.addWidget(ed)
    for w in (FpspFilter("sobel"), KernelSet("k", 4, [Kernel("a", [[1.0, -1.0]])])):
        ed.set_workload(w)
        assert ed.workload() == w
    from core.nets import zoo

    if zoo.names():
        cs = CnnSet(zoo.names()[:2], 3)
        ed.set_workload(cs)
        assert ed.workload() == cs
    ed.set_kind("cnn_set")
    for i in range(ed.cnns.list.count()):
        ed.cnns.list.item(i).setCheckState(ed.cnns.list.item(i).checkState().Unchecked)
    with pytest.raises(InputError, match="no CNNs"):
        ed.workload()


def test_target_editor_round_trips(qtbot):
    ed = TargetEditor()
    qtbot.addWidget(ed)
    for t in (FpgaTarget("zedboard", 2.5), DataflowTarget(131072, 8, 12, 14), MobileSocTarget(4, 8)):
        ed.set_target(t)
        assert ed.target() == t


def test_cnn_picker_starts_with_a_runnable_set(qtbot):
    """Switching to a CNN engine must not leave the user with an empty, unrunnable workload."""
    ed = WorkloadEditor()
    qtbot.addWidget(ed)
    ed.set_kind("cnn_set")
    assert sorted(ed.workload().cnns) == ["scenelabel", "vgg16", "zfnet"]
