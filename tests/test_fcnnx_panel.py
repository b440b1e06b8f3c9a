import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import pytest

from core.engine import JobRequest, get_engine
from core.jobs import CancelToken, FinalResult
from core.workload import CnnSet, FpgaTarget
from panel_context import FakeContext


@pytest.fixture
def panel(qtbot):
    from gui.panels.fcnnx import PANEL

    p = PANEL(get_engine("fcnnx"), FakeContext(CnnSet(["lenet5", "cifar10_quick"]), FpgaTarget("zc706", 0.5)))
    qtbot.addWidget(p)
    return p


def test_settings_round_trip(panel, qtbot):
    s = panel.settings()
    assert s["cnns"] == [] and s["board"] == "" and s["bandwidth_gbps"] == 0.0
    s.update(cnns=["zfnet", "vgg16"], targets=[25.0, 4.0], board="zcu102", bandwidth_gbps=1.7, objective="throughput",
             scheduler="ilp", simulate=False)
    with qtbot.waitSignal(panel.settings_changed, timeout=1000, raising=False):
        panel.set_settings(s)
    assert panel.settings() == s


def test_panel_live_and_redraw_from_json(panel):
    ctx = panel.context
    settings = panel.settings()
    settings["objective"] = "throughput"
    events = list(get_engine("fcnnx").run(JobRequest(ctx.workload(), ctx.target(), settings), CancelToken()))
    assert isinstance(events[-1], FinalResult)
    panel.job_started()
    panel.handle_events(events[:-1])
    live = panel.pareto_plot.series()
    assert set(live) == {"lenet5", "cifar10_quick"} and all(len(xs) > 3 for xs, _ in live.values())
    assert {"peak", "contention-unaware (est.)", "memory-aware"} <= set(panel.joint_plot.series())
    result = json.loads(json.dumps(events[-1].data))
    panel.show_result(result)
    # fronts redraw from the stored result alone
    assert len(panel.pareto_plot.series()["lenet5"][0]) == len(result["pareto_fronts"]["lenet5"])
    # Gantt holds every subgraph of the cycle, and the bandwidth profile is drawn under it
    assert len(panel.gantt_bars) == len(result["schedule"]["subgraphs"])
    assert panel.bw_plot.listDataItems()
    bars = panel.resource_bars()
    assert set(bars) == {"lenet5", "cifar10_quick"}
    dsp = result["design"]["per_cnn"][0]["resources"]["dsps"] / result["available"]["dsps"] * 100
    assert bars["lenet5"][2] == pytest.approx(dsp)
    assert "constraints checked: ok" in panel.sched_info.text()
    panel.show_result(None)
    assert not panel.gantt_bars
