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
