"""Time-left estimates from work units (issue 30): fake clocks and made-up traces, never wall-clock time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.jobs import Eta, Progress
from core.work_units import Stage, WorkPlan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.eta_error import LIMIT, errors  # noqa: E402


def _trace(stages: list[tuple[float, float, float, int]]) -> tuple[float, list[tuple[float, float]]]:
    """A made-up run: stages (nominal lo, nominal hi, seconds, steps), each reporting its nominal
    fraction at the start of every step, on a fake clock. Returns (duration, [(time, nominal)])."""
    t, stamps = 0.0, []
    for lo, hi, seconds, steps in stages:
        for i in range(steps):
            stamps.append((t, lo + (hi - lo) * i / steps))
            t += seconds / steps
    stamps.append((t, 1.0))
    return t, stamps


# A Cappuccino run on a small network as the build machine showed it: the early stages report most of
# the fraction in a second, five compilations (the first one a tenth of the others) take 60 %.
CAPPUCCINO = [(0.0, 0.1, 0.9, 2), (0.1, 0.55, 0.1, 10), (0.55, 0.63, 0.05, 4), (0.63, 0.72, 9.4, 1),
              (0.72, 0.98, 4.5, 15), (0.98, 1.0, 0.05, 1)]


def test_fractions_of_fixed_stage_bands_mislead_the_estimate():
    """Was: "about 1 s left" at 5.3 s of a 25.6 s Cappuccino run. The raw fractions fail the limit."""
    duration, stamps = _trace(CAPPUCCINO)
    worst = max(e for e in errors(duration, stamps) if e is not None)
    assert worst > LIMIT


def test_work_units_keep_the_estimate_within_the_limit_after_a_fifth_of_the_run():
    duration, stamps = _trace(CAPPUCCINO)
    plan = WorkPlan([Stage("early", 0.0, 0.1, 0.9), Stage("search", 0.1, 0.55, 0.1),
                     Stage("synthesis", 0.55, 0.63, 0.05), Stage("compile", 0.63, 0.72, 9.0),
                     Stage("timing", 0.72, 0.98, 4.8), Stage("end", 0.98, 1.0, 0.05)])
    shared = [(t, plan.progress(f).fraction) for t, f in stamps]
    errs = [e for e in errors(duration, shared) if e is not None]
    assert errs and max(errs) <= LIMIT


def test_share_follows_the_units_not_the_bands():
    plan = WorkPlan([Stage("a", 0.0, 0.5, 1.0), Stage("b", 0.5, 1.0, 3.0)])
    assert plan.share(0.0) == 0.0 and plan.share(0.5) == pytest.approx(0.25)
    assert plan.share(0.75) == pytest.approx(0.625) and plan.share(1.0) == 1.0
    assert plan.within("b", 1, 4) == pytest.approx(0.625)
    plan.set_units("b", 1.0)                         # re-estimated: half the work is then done at 0.5
    assert plan.share(0.5) == pytest.approx(0.5)
    with pytest.raises(KeyError):
        plan.set_units("c", 1.0)


def test_reported_work_never_goes_back():
    """A stage re-estimated upwards (more joint points left than thought) must not move the bar back,
    which would also restart the estimate."""
    plan = WorkPlan([Stage("a", 0.0, 0.5, 1.0), Stage("b", 0.5, 1.0, 1.0)])
    first = plan.progress(0.75).fraction
    plan.set_units("b", 10.0)
    assert plan.progress(0.76).fraction == first


def test_remap_passes_other_events_and_closes_the_engine():
    closed = []

    def engine():
        try:
            yield Progress(0.5, "half")
            yield "other"
            yield Progress(None, "unknown")
        finally:
            closed.append(True)

    plan = WorkPlan([Stage("a", 0.0, 0.5, 3.0), Stage("b", 0.5, 1.0, 1.0)])
    out = list(plan.remap(engine()))
    assert out[0] == Progress(0.75, "half") and out[1] == "other" and out[2].fraction is None
    gen = plan.remap(engine())
    next(gen)
    gen.close()
    assert closed == [True, True]


def test_benchmark_error_is_zero_for_steady_work_and_none_before_an_estimate():
    stamps = [(float(t), t / 10) for t in range(11)]
    errs = errors(10.0, stamps)
    assert all(e is not None and e < 1e-9 for e in errs)
    assert errors(10.0, [(0.0, 0.0)]) == [None] * len(errs)


def test_eta_counts_down_on_a_fake_clock():
    eta = Eta()
    eta.update(0.0, 100.0)
    eta.update(0.5, 110.0)
    assert eta.remaining(110.0) == pytest.approx(10.0) and eta.remaining(114.0) == pytest.approx(6.0)


def test_cappuccino_plans_most_of_a_small_networks_work_for_compiling_and_timing(monkeypatch):
    from core.cappuccino import engine as capp

    monkeypatch.setattr(capp.synth, "find_compiler_noting", lambda: ("/usr/bin/cc", ""))
    model = capp.load_model(capp.CnnNetwork(capp.BUILTIN_DIGITS), 0)
    plan = capp.work_plan()
    capp.plan_work(plan, model, capp.CappuccinoSettings(), onnx=False)
    units = {st.name: st.units for st in plan.stages}
    assert units["compile"] == pytest.approx(capp.PROGRAMS * capp.COMPILE_S + capp.COMPILE_BASELINE_S)
    assert units["timing"] > units["search"] and plan.share(0.63) < 0.2
    plan_off = capp.work_plan()
    capp.plan_work(plan_off, model, capp.CappuccinoSettings(compile=False), onnx=False)
    assert {st.name: st.units for st in plan_off.stages}["compile"] == 0.0


def test_cappuccino_plans_a_big_zoo_networks_load_before_loading_it():
    """Was: VGG-16's load (its reference pass, 14 s) counted one unit, so its first estimate said 4 hours."""
    from core.cappuccino import engine as capp

    vgg, alex = capp.load_units(capp.CnnNetwork("vgg16"), 0), capp.load_units(capp.CnnNetwork("alexnet"), 0)
    assert vgg > 10 * alex and alex >= 1.0 and capp.load_units(capp.CnnNetwork("vgg16"), 2) == pytest.approx(vgg / 4)
    assert capp.load_units(capp.CnnNetwork(capp.BUILTIN_DIGITS), 0) == 1.0


def test_fcnnx_plans_its_scheduling_by_joint_points():
    from core.fcnnx import engine as fc

    s = fc.default_settings()
    plan = fc.work_plan(fc.FcnnxSettings(), 3)
    units = {st.name: st.units for st in plan.stages}
    assert units["scheduling"] == pytest.approx(fc.EXPECTED_VISITS * s["ps_budget"] * fc.PS_EVAL_S)
    assert units["dse"] == pytest.approx(3 * fc.DSE_S)
    no_sim = {st.name: st.units for st in fc.work_plan(fc.FcnnxSettings(simulate=False), 3).stages}
    assert no_sim["simulation"] == 0
