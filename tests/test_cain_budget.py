"""Cain keeps its time budget: the search ends within a second of it, and no program found after
it is reported as found within it. A test of a bound, not of speed: a loaded machine finds fewer
or worse programs, never later ones."""

import pytest

from core.cain import verify as verify_module
from core.cain.api import compile_filter
from core.cain.approx import approximate
from core.engine import JobRequest, get_engine
from core.filters import preset
from core.jobs import CancelToken, drive
from core.workload import FpspFilter, Scamp5Target

BUDGET_S = 2.0


@pytest.mark.parametrize("settings", [
    {"workers": 2},                         # worker processes; several kernels: a one-by-one seed first
    {"workers": 1},                         # the in-process search
    {"workers": 2, "mode": "auke"},         # one kernel at a time, each with its share of the budget
])
def test_search_keeps_its_budget(settings):
    spec = get_engine("cain")
    request = JobRequest(FpspFilter("analognet2"), Scamp5Target(6, 256),
                         {**spec.default_settings(), "time_s": BUDGET_S, **settings})
    out = drive(spec.run(request, CancelToken()), lambda e: None, CancelToken())
    assert out.error is None, out.error
    result = out.result
    assert result["elapsed_s"] <= BUDGET_S + 1.0
    times = [imp["time_s"] for imp in result["improvements"]]
    assert all(t <= BUDGET_S for t in times) and times == sorted(times)
    if result["found"]:
        assert result["time_to_best_s"] <= BUDGET_S


def test_verification_still_catches_a_wrong_program(monkeypatch):
    """The random-image check (now in exact integers) fails a program whose images differ, even
    when the symbolic check is made to pass."""
    plan = compile_filter(preset("gauss3"), time_s=2, workers=1)
    approx = approximate(preset("gauss3"), max_kernels=6)
    regs = ("A", "B", "C", "D", "E", "F")
    inputs = {0: plan.input_register}
    ok, msg = verify_module.verify(plan.program, approx.goals, approx.d, inputs, plan.output_registers, regs)
    assert ok, msg
    want = [verify_module.goal_kernel(g, approx.d) for g in approx.goals]
    monkeypatch.setattr(verify_module, "run_symbolic",
                        lambda *a, **k: [dict(zip(plan.output_registers, want))])
    wrong = plan.program[:-1]               # without its last instruction the output is something else
    ok, msg = verify_module.verify(wrong, approx.goals, approx.d, inputs, plan.output_registers, regs)
    assert not ok and "image result differs" in msg, msg
