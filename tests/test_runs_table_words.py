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
    assert cell(refused.id, fg) is not None and cell(refused.id, fg).name() == "#808080"
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
