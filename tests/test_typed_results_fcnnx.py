"""Issue 29, typed results are the data: the f-CNNx engine builds FcnnxResult and its parts directly
(no dict on the way and no from_json inside the engine), and the JSON form a session stores is
unchanged by that: plain JSON values that read back to the same result."""

from __future__ import annotations

import inspect

import pytest

from tests.typed_results import assert_reads_back

from core.engine import JobRequest, get_engine
from core.fcnnx import engine as fcnnx_engine
from core.fcnnx.result import FcnnxResult
from core.jobs import CancelToken, run_foreground
from core.workload import CnnSet, FpgaTarget


def _refuse_from_json(*args, **kwargs):
    raise AssertionError("the engine must build its result, not read it from JSON")


@pytest.fixture(scope="module")
def run_result(tmp_path_factory):
    """Two small CNNs, every joint point scheduled, simulated, the table exported: every optional part."""
    folder = tmp_path_factory.mktemp("table")
    req = JobRequest(CnnSet(["lenet5", "cifar10_quick"]), FpgaTarget("zc706", 0.5),
                     {"max_joint": 6, "prune": False, "simulate": True, "verify_top": 2, "export_table": str(folder)})
    mp = pytest.MonkeyPatch()
    mp.setattr(FcnnxResult, "from_json", classmethod(_refuse_from_json))
    try:
        out = run_foreground(get_engine("fcnnx").run(req, CancelToken()), quiet=True)
    finally:
        mp.undo()
    assert out.error is None, out.error
    assert isinstance(out.result, FcnnxResult)
    return out.result


def test_engine_yields_its_typed_result_without_from_json(run_result):
    r = run_result
    assert r.simulated is not None and r.baseline.simulated is not None and r.comparison is not None
    assert r.hardware_table is not None and r.hardware_table.exported
    assert r.joint_points[r.chosen_joint].schedule is None
    assert any(p.schedule is not None for p in r.joint_points)


def test_json_form_reads_back_the_same(run_result):
    assert_reads_back(run_result, same_value=True)


def test_engine_source_calls_no_from_json():
    src = inspect.getsource(fcnnx_engine)
    assert "FcnnxResult.from_json" not in src and ".from_json(result" not in src
