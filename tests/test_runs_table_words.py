"""The Runs table read as a person reads it (issues 51 and 52): a comparison's part that cannot run
its target reads "not applicable", greyed, with the reason in its tooltip, while a run with no such
metric reads nothing; every run names its workload's network, and a study's points name their
target's varied fields with units."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.compare import NOT_APPLICABLE
from core.comparison import targets_of_kinds
from core.comparison_run import compare
from core.lifecycle import RunOutcome
from core.project import Project
from tests.test_comparison_runs import Fakes, fakes  # noqa: F401  (the fixture)


def test_a_part_that_cannot_run_reads_not_applicable_greyed_and_a_failed_run_nothing(qtbot, fakes: Fakes) -> None:  # noqa: F811
    from gui.runs_view import KEYS, RunsModel

    fakes.refuse = {"scamp5"}
    project = Project()
    c = compare("lenet5", targets_of_kinds(["scamp5", "gpu"]), project=project)
    refused, fine = (project.run(r.run_id) for r in c.rows)
    failed = project.add_finished_run("cost", refused.workload, refused.target, {}, RunOutcome.failed("broke"))
    model = RunsModel(project)
    value = KEYS.index("value")

    def cell(run_id: str, role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole):
        return model.data(model.index(model.row_of(run_id), value), role)

    fg = Qt.ItemDataRole.ForegroundRole
    assert cell(refused.id) == NOT_APPLICABLE
    assert cell(refused.id, fg) is not None and cell(refused.id, fg).name() == "#888888"
    assert refused.result.reason in cell(refused.id, Qt.ItemDataRole.ToolTipRole)
    assert cell(fine.id) not in ("", NOT_APPLICABLE) and cell(fine.id, fg) is None
    assert cell(failed.id) == "" and cell(failed.id, fg) is None      # no result: no such metric, nothing said


def test_every_run_names_its_network_not_its_kind(qtbot) -> None:
    from gui.runs_view import KEYS, RunsModel

    from core.project import Snapshot
    from core.workload import CnnNetwork, ConvLayers, DataflowTarget

    project = Project()
    target = Snapshot("", "Dataflow accelerator", DataflowTarget())      # a study's inline target, by its kind
    layers = ConvLayers(["name=conv1,Ci=3,Hi=32,Wi=32,Co=16,kernel=3", "Ci=16,Hi=32,Wi=32,Co=32,kernel=3,pad=1"])
    cases = [   # (workload snapshot, Workload cell, its tooltip)
        (Snapshot("", "CNN", CnnNetwork("resnet18")), "ResNet-18", "CNN: ResNet-18"),   # an older study's run
        (Snapshot("", "CNN", CnnNetwork(onnx_path="/models/tiny_yolo.onnx")), "tiny_yolo", "CNN: tiny_yolo"),
        (Snapshot("w3", "Layers", layers), "2 conv layers: conv1, Ci=16,Hi=32,Wi=32,Co=32,kernel=3,pad=1",
         "Convolution layers: 2 conv layers: conv1, Ci=16,Hi=32,Wi=32,Co=32,kernel=3,pad=1"),
        (Snapshot("w4", "My small net", CnnNetwork("lenet5")), "My small net", "CNN: LeNet-5"),   # the user's name
    ]
    runs = [project.add_finished_run("cost", w, target, {}, RunOutcome.failed("x")) for w, _, _ in cases]
    model = RunsModel(project)
    col, tcol = KEYS.index("workload"), KEYS.index("target")
    for run, (_, text, tip) in zip(runs, cases):
        i = model.row_of(run.id)
        assert model.data(model.index(i, col)) == text
        assert model.data(model.index(i, col), Qt.ItemDataRole.ToolTipRole) == tip
        assert model.data(model.index(i, tcol)) == "Accelerator, 64 KiB"

    from PySide6.QtTest import QTest

    from gui.runs_view import ID_ROLE, RunsView
    from tests.test_runs_view import RunsCtx

    view = RunsView(project, RunsCtx())
    qtbot.addWidget(view)
    QTest.keyClicks(view.filter_edit, "resnet")         # a person looks for their network's runs
    assert [view.proxy.index(i, 0).data(ID_ROLE) for i in range(view.proxy.rowCount())] \
        == [runs[0].id]

    from gui.choice_bar import run_title
    from gui.compare_view import CompareView

    assert run_title(runs[0]).endswith(" · ResNet-18")          # the Showing box of the run's tab
    compare_view = CompareView(project)
    qtbot.addWidget(compare_view)
    compare_view.set_runs([runs[0].id, runs[2].id])
    assert "ResNet-18" in compare_view.header.text() and "2 conv layers: conv1" in compare_view.header.text()
    workload_row = next(i for i in range(compare_view.settings_table.rowCount())
                        if compare_view.settings_table.item(i, 0).text() == "Workload")
    assert compare_view.settings_table.item(workload_row, 1).text() == "ResNet-18"


def _notes(study) -> list[str]:
    from types import SimpleNamespace

    from core.run_controller import _point_note

    return [_point_note(SimpleNamespace(runner=SimpleNamespace(study=study)), p.index, p.params) for p in study.points]


def test_a_studys_points_name_their_varied_fields_with_units() -> None:
    from core.study import spec as study_spec
    from tests.test_study_targets import SWEEP

    study = study_spec.from_json(SWEEP)
    assert [p.target_name for p in study.points] == [
        f"Dataflow accelerator (buffer={b}, bandwidth={w})" for b in ("1 KiB", "8 KiB") for w in ("3.2 GB/s", "25.6 GB/s")]
    assert _notes(study)[3] == "study lenet5 buffer x bandwidth #3: buffer=8 KiB, bandwidth=25.6 GB/s"


def _tiny_onnx(path) -> str:
    """A one-convolution ONNX model (opset 13) at `path`."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], np.zeros(108, np.float32).tolist())
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    onnx.save(helper.make_model(helper.make_graph([node], "g", [x], [y], [w]),
                                opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return str(path)


def test_a_study_over_networks_names_each_points_network(tmp_path) -> None:
    from core.study import spec as study_spec
    from tests.test_study_targets import SWEEP

    base = {k: v for k, v in SWEEP.items() if k != "objectives"}
    over_field = study_spec.from_json({**base, "axes": [{"param": "workload.network", "values": ["lenet5", "resnet18"]}]})
    assert [p.workload_name for p in over_field.points] == ["LeNet-5", "ResNet-18"]     # was "LeNet-5 (network=resnet18)"
    whole = study_spec.from_json({**base, "axes": [{"param": "workload", "values": [
        {"kind": "cnn", "network": "resnet18"}, {"kind": "cnn", "onnx_path": _tiny_onnx(tmp_path / "tiny_yolo.onnx")}]}]})
    assert [p.workload_name for p in whole.points] == ["ResNet-18", "tiny_yolo"]
    assert _notes(whole) == ["study lenet5 buffer x bandwidth #0: workload=ResNet-18",      # not a Python dict
                             "study lenet5 buffer x bandwidth #1: workload=tiny_yolo"]
    batch = study_spec.from_json({**base, "axes": [{"param": "workload.batch", "values": [1, 2]}]})
    assert [p.workload_name for p in batch.points] == ["LeNet-5 (batch=1)", "LeNet-5 (batch=2)"]


def test_deleting_a_run_with_the_delete_key_leaves_run_where_it_was(qtbot) -> None:
    """Undo's words change with what it would undo ("Undo Delete run r1"); Run beside it stays put."""
    from PySide6.QtCore import QItemSelectionModel
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QToolBar

    from core.project import Snapshot
    from core.workload import CnnNetwork
    from gui.main_window import MainWindow
    from tests.window_helpers import settle

    w = MainWindow(restore_layout=False)
    w.interactive = False
    qtbot.addWidget(w)
    w.resize(1366, 768)
    w.show()
    try:
        run = w.project.add_finished_run("cost", Snapshot("", "CNN", CnnNetwork("lenet5")), None, {},
                                         RunOutcome.failed("x"))
        settle()
        tb = w.findChild(QToolBar, "main-toolbar")
        undo, run_button = tb.widgetForAction(w.act_undo), tb.widgetForAction(w.act_run)
        before = (undo.geometry(), run_button.mapTo(w, run_button.rect().topLeft()))
        table = w.runs_view.table
        table.selectionModel().select(table.model().index(0, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                                      | QItemSelectionModel.SelectionFlag.Rows)
        table.setFocus()
        QTest.keyClick(table, Qt.Key.Key_Delete)
        settle()
        assert run.id not in [r.id for r in w.project.runs]
        assert w.act_undo.toolTip() == f"Undo Delete run {run.id}"
        assert (undo.geometry(), run_button.mapTo(w, run_button.rect().topLeft())) == before
        QTest.mouseClick(undo, Qt.MouseButton.LeftButton)
        settle()
        assert run.id in [r.id for r in w.project.runs]
        assert run_button.mapTo(w, run_button.rect().topLeft()) == before[1]
    finally:
        w.shutdown_jobs()


def test_compare_reads_a_refused_parts_metrics_as_not_applicable_with_the_reason(qtbot, fakes: Fakes) -> None:  # noqa: F811
    from gui.compare_view import CompareView

    fakes.refuse = {"scamp5"}
    project = Project()
    c = compare("lenet5", targets_of_kinds(["scamp5", "gpu"]), project=project)
    refused, fine = (project.run(r.run_id) for r in c.rows)
    view = CompareView(project)
    qtbot.addWidget(view)
    view.set_runs([refused.id, fine.id])
    t = view.metrics_table
    rows = {t.item(i, 0).text(): (t.item(i, 1), t.item(i, 2)) for i in range(t.rowCount())}
    latency_refused, latency_fine = rows["Latency"]
    assert latency_refused.text() == NOT_APPLICABLE and refused.result.reason in latency_refused.toolTip()
    assert latency_refused.foreground().color().name() == "#888888"
    assert latency_fine.text() not in ("—", NOT_APPLICABLE)
    assert rows["MACs run"][0].text() == "0 %"                  # a value it has is shown as it is
