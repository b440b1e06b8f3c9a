"""JSON only at the process and session edges (issue 52): what one run converts between objects and
JSON, counted, so that no conversion inside the model or a view creeps back (docs/project-model.md,
"Object/JSON conversions of one run").

Every to_json / from_json of the classes a run carries (its request, snapshots, workload and target,
result, partial results, outcome) is wrapped with a counter; a conversion made inside another (a
request's JSON form holds its workload's) counts once, as the outer one."""

from __future__ import annotations

import threading
import time
from typing import Any, get_args

import pytest

from core import engine as engine_module
from core.cain.plans import ProgramPlan
from core.engine import JobRequest
from core.jobs import PartialResult
from core.lifecycle import RunOutcome, UncheckedResult
from core.project import Project, Snapshot
from core.results import EngineResult
from core.run_controller import RunController, process_launcher, thread_launcher
from core.workload import Kernel, KernelSet, Scamp5Target, Target, Workload
from tests.demo_engine import DEMO_ON_KERNELS, DemoBest, DemoChildren, DemoProcess

CLASSES = [JobRequest, RunOutcome, Snapshot, EngineResult, ProgramPlan, UncheckedResult, DemoBest, DemoChildren,
           DemoProcess, *get_args(Workload), *get_args(Target)]


def count_conversions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The outermost to_json / from_json calls made from now on, in order ("RunOutcome.from_json")."""
    calls: list[str] = []
    depth = threading.local()

    def counted(f: Any, name: str) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            level = getattr(depth, "n", 0)
            if level == 0:
                calls.append(name)
            depth.n = level + 1
            try:
                return f(*args, **kwargs)
            finally:
                depth.n = level
        return wrapper

    for cls in CLASSES:
        for name in ("to_json", "from_json"):
            raw = vars(cls).get(name)
            if raw is None:             # inherited: counted where it is defined
                continue
            if isinstance(raw, classmethod):
                monkeypatch.setattr(cls, name, classmethod(counted(raw.__func__, f"{cls.__name__}.{name}")))
            else:
                monkeypatch.setattr(cls, name, counted(raw, f"{cls.__name__}.{name}"))
    return calls


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project whose demo engine runs on kernels and a SCAMP-5 target, both chosen."""
    monkeypatch.setattr(engine_module, "_REGISTRY", {"demo": DEMO_ON_KERNELS, **engine_module.engines()})
    p = Project.starter()
    ks = KernelSet("mine", 4, [Kernel("g", [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]])])
    p.choose("demo", "workloads", p.add("workloads", "mine", ks))
    p.choose("demo", "targets", p.add("targets", "SCAMP", Scamp5Target()))
    p.set_setting("demo", "steps", 5)
    return p


def _streamed(project: Project) -> dict[str, Any]:
    """The last partial result of each kind the project records, as the views get them."""
    last: dict[str, Any] = {}
    project.events.record.connect(lambda ev: last.update((e.kind, e.data) for e in ev.events
                                                         if isinstance(e, PartialResult)))
    return last


def _run_to_its_end(controller: RunController, engine: str) -> Any:
    job = controller.start(engine)
    deadline = time.monotonic() + 60          # a bound for a broken run, not a timing
    while controller.busy() and time.monotonic() < deadline:
        controller.poll()
        time.sleep(0.005)
    assert not controller.busy()
    return controller.project.run(job.run_id)


def test_a_run_in_this_process_and_its_view_convert_nothing(project, monkeypatch, qtbot):
    """Asked for, snapshotted, run (on a thread: no process edge), recorded, finished and shown in
    its tab, with its live plot and partial results: no JSON at all."""
    from gui.panels.generic import GenericPanel
    from tests.panel_context import FakeContext

    panel = GenericPanel(DEMO_ON_KERNELS, FakeContext(project=project))
    qtbot.addWidget(panel)
    streamed = _streamed(project)
    calls = count_conversions(monkeypatch)
    run = _run_to_its_end(RunController(project, thread_launcher), "demo")
    assert run.status == "finished" and run.result.sum == 10 and streamed["best"] == DemoBest(sum=10, step=4)
    assert not run.partial                  # a finished run's partial results are in its result
    assert run.workload.name == "mine" and run.workload.value == project.chosen("demo", "workloads").value
    assert run.workload.value is not project.chosen("demo", "workloads").value      # a frozen copy
    panel.show_run(run)
    assert panel.tree.topLevelItemCount() == 2 and panel.export_json_button.isEnabled()
    assert calls == []


def test_a_run_in_its_worker_process_converts_at_the_process_edge_only(project, monkeypatch):
    """The window's side of a run in a worker process: the request's JSON form made once as it is
    sent, the outcome's read once as it comes back (the worker reads the one and writes the other:
    core.worker.main). Four in all, none inside the model."""
    streamed = _streamed(project)
    calls = count_conversions(monkeypatch)
    run = _run_to_its_end(RunController(project, process_launcher), "demo")
    assert run.status == "finished" and run.result.sum == 10, run.error
    assert streamed["process"].workload == "kernels"       # the worker got the workload it was sent
    assert streamed["best"] == DemoBest(sum=10, step=4)     # typed partial results cross pickled, not as JSON
    assert calls == ["JobRequest.to_json", "RunOutcome.from_json"]


def test_showing_a_stored_cain_result_converts_nothing(monkeypatch, qtbot):
    """Cain's tab reads its typed result: plans, plots, the Program tab and the C++ view, no JSON."""
    from core import session
    from core.paths import ROOT
    from tests.panel_context import FakeContext, open_panel

    project = session.load(ROOT / "assets" / "example_session.dfx")       # the session edge
    run = next(r for r in project.runs if r.engine == "cain" and r.result is not None)
    panel = open_panel(qtbot, "cain", FakeContext(project=project))
    calls = count_conversions(monkeypatch)
    panel.show_run(run)
    assert panel.program_view.toPlainText().count(";") == run.result.length and panel.cpp_view.toPlainText()
    assert calls == []
