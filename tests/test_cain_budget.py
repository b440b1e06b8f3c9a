"""Cain keeps its time budget: the search stops when its clock passes the budget, and no program
found after it is reported as found within it. Tests of a bound, not of speed, and none depends on
the machine's load: the real runs check only what holds however busy the machine is (a loaded machine
finds fewer or worse programs, never later ones), and when the search stops is checked on a fake
clock that moves on at each reading, so the engine's time is the same on any machine (a stopwatch
around a real run would measure the load: its worker processes take their time to start and stop)."""

import pytest

from core.cain import verify as verify_module
from core.cain.api import compile_filter
from core.cain.approx import approximate
from core.cain.result import CainResult
from core.engine import JobRequest, get_engine
from core.filters import preset
from core.jobs import CancelToken, drive
from core.workload import FpspFilter, Scamp5Target

BUDGET_S = 2.0


class TickingClock:
    """Stands in for the `time` module of the search's modules: each reading moves it on by `tick`,
    so the search's time is the count of its readings, and the in-process search, whose work depends
    on its node counts only, does the same on any machine. It starts at 0, long before the system's
    CLOCK_MONOTONIC (which the C search compares a slice's end with), so each slice of the C search
    ends at its first look at the clock (after 63 nodes)."""

    def __init__(self, tick: float) -> None:
        self.now = 0.0
        self.tick = tick
        self.reads = 0

    def monotonic(self) -> float:
        self.reads += 1
        self.now += self.tick
        return self.now


def _run(settings: dict) -> CainResult:
    spec = get_engine("cain")
    request = JobRequest(FpspFilter("analognet2"), Scamp5Target(6, 256),
                         {**spec.default_settings(), "time_s": BUDGET_S, **settings})
    out = drive(spec.run(request, CancelToken()), lambda e: None, CancelToken())
    assert out.error is None, out.error
    assert isinstance(out.result, CainResult)
    return out.result


def _reported_within_the_budget(result: CainResult) -> None:
    times = [imp.time_s for imp in result.improvements]
    assert all(t <= BUDGET_S for t in times) and times == sorted(times)
    if result.found:
        assert result.time_to_best_s is not None and result.time_to_best_s <= BUDGET_S


@pytest.mark.slow
@pytest.mark.parametrize("settings", [
    {"workers": 2},                         # worker processes; several kernels: a one-by-one seed first
    {"workers": 1},                         # the in-process search
    {"workers": 2, "mode": "auke"},         # one kernel at a time, each with its share of the budget
])
def test_no_program_is_reported_after_the_budget(settings):
    """On the real clock: whatever the load, every program is reported with a time within the budget."""
    _reported_within_the_budget(_run(settings))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["cain", "auke"])
def test_the_search_stops_when_its_clock_passes_the_budget(monkeypatch, mode):
    """On a fake clock (the in-process search): the run searches until its budget is spent and ends a
    few clock readings after it, and what it found is reported within it."""
    from core.cain import csearch, solver
    from core.cain import engine as cain_engine

    clock = TickingClock(0.0005)
    for module in (cain_engine, solver, csearch):
        monkeypatch.setattr(module, "time", clock)
    result = _run({"workers": 1, "mode": mode})
    assert clock.reads > BUDGET_S / clock.tick / 2        # the engine ran on this clock
    assert BUDGET_S <= result.elapsed_s <= BUDGET_S + 20 * clock.tick, result.elapsed_s
    assert result.found
    _reported_within_the_budget(result)


def test_verification_still_catches_a_wrong_program(monkeypatch):
    """The random-image check (now in exact integers) fails a program whose images differ, even
    when the symbolic check is made to pass."""
    plan = compile_filter(preset("gauss3"), time_s=120, max_nodes=1500, workers=1)     # a node budget: no race
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
