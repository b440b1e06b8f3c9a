"""The MERIT engine builds its MeritResult from the domain objects (issue 29: JSON only at the process
and session boundaries), and the stored JSON stays what it was."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from tests.typed_results import assert_reads_back

from core.engine import JobRequest, get_engine
from core.jobs import CancelToken, run_foreground
from core.merit import engine as merit_engine
from core.merit.result import MeritResult
from core.workload import MeritTransformWorkload


def _run(workload: str, **settings: Any) -> Any:
    spec = get_engine("merit")
    req = JobRequest(workload=MeritTransformWorkload(builtin=workload), target=None,
                     settings={**spec.default_settings(), "curve_alus": [32, 128], **settings})
    outcome = run_foreground(spec.run(req, CancelToken()), quiet=True)
    if outcome.error is not None:
        raise outcome.error
    return outcome.result


# conv3x3: the generated code and a layout whose butterfly test needs the XOR hash; gemm: a tile of
# the settings' and no generated code (no "codegen" key); bilateral: a strategy with parameters
@pytest.mark.parametrize("workload, settings", [pytest.param("conv3x3", {"codegen": True}, marks=pytest.mark.slow),  # compiles C
                                                ("gemm", {"codegen": False, "banks": 4, "tile": {"m": 2}}),
                                                ("bilateral", {"codegen": False})])
def test_the_engine_yields_its_typed_result_and_its_json_reads_back_unchanged(monkeypatch, workload, settings) -> None:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the engine read its own result through from_json")

    monkeypatch.setattr(MeritResult, "from_json", classmethod(refused))
    r = _run(workload, **settings)
    monkeypatch.undo()
    assert type(r) is MeritResult
    assert (r.codegen is not None) == settings["codegen"]
    stored = assert_reads_back(r)
    assert list(stored) == [f for f in MeritResult.__dataclass_fields__ if f in stored]      # field order kept


def test_the_run_builds_no_json_on_the_way() -> None:
    for fn in (merit_engine.run, merit_engine._run):
        assert "from_json" not in inspect.getsource(fn)
