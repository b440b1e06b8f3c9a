"""Cappuccino's time left (issue 49 item 4): a program's threads meet at a barrier after every op, so
on a crowded machine its passes take longer than a thread's fair share says (the longest of T waits).
A fake clock and a fake load: nothing here depends on the wall clock or on this machine's load."""

from __future__ import annotations

import pytest

from core.cappuccino import engine as capp
from core.cappuccino.progress import barrier_slowdown, passes_share

# VGG-16's counts on two threads and two cores, its weight file left out: a pass (1.5 s) is longer
# than min_seconds, so the timed runs are passes with little start-up and no wait
HEAVY = {"macs": 15.47e9, "images": 8.0, "weight_bytes": 0.0, "compiling": 1.0, "runs": 15.0, "repeats": 3.0,
         "onnx": 0.0, "min_seconds": 0.3, "threads": 2.0, "cores": 2.0, "splitting": 1.0,
         "timing_wait_s": 0.0, "split_wait_s": 0.0}
# the digits CNN's: its passes are microseconds, its runs wait out min_seconds (a wait, not work)
LIGHT = {**HEAVY, "macs": 2e5, "onnx": 1.0, "splitting": 0.0, "timing_wait_s": 4.5}


def test_barrier_waits_grow_with_the_threads_and_the_crowd():
    assert barrier_slowdown(1, 5.0) == 1.0                  # one thread waits for no other
    assert barrier_slowdown(2, 1.0) == 1.0                  # alone: every thread on its core
    assert barrier_slowdown(2, 4.0) == pytest.approx(1.0 + 0.5 * 0.75)     # H_2 = 1.5, off its core 3/4
    assert barrier_slowdown(2, 1e9) == pytest.approx(1.5)
    assert barrier_slowdown(4, 1e9) == pytest.approx(1 + 1 / 2 + 1 / 3 + 1 / 4)


def test_only_the_passes_bear_the_barriers():
    heavy, light = passes_share(HEAVY), passes_share(LIGHT)
    assert heavy["run"] > 0.95 and heavy["split"] > 0.95
    assert light["run"] < 0.05                               # start-up and onnxruntime's import
    assert passes_share({**HEAVY, "compiling": 0.0}) == {}   # no programs


def _timing_plan(clock: list[float], load_per_core: float) -> capp.CalibratedPlan:
    plan = capp.work_plan(lambda: clock[0])
    plan.slowdown = lambda: load_per_core
    for name in ("load", "layouts", "search", "check", "synthesis", "compile", "split", "split_check",
                 "split_build", "end"):
        plan.set_units(name, 0.0)
    plan.set_units("timing", 50.0)
    plan.set_shape(HEAVY)
    return plan


def test_a_crowded_two_thread_run_is_expected_slower_than_its_fair_share_and_learnt_without_it():
    clock = [0.0]
    plan = _timing_plan(clock, 3.0)                 # a load of 6 on 2 cores, the program's second thread on top
    plan.progress(0.0)
    fair = 3.0 + 1 / 2
    expected = fair * (1 + plan.bound["run"] * (barrier_slowdown(2, fair) - 1))
    assert plan.share_slowdown("run") == pytest.approx(expected) and expected > 1.3 * fair
    clock[0] = 1.0
    first = plan.progress(0.72)                     # the timed runs begin: not measured yet, the plan's work
    assert first.seconds_left == pytest.approx(50.0 * expected)
    steps = 15
    for i in range(1, steps):                       # the machine runs as the model says
        clock[0] = 1.0 + 50.0 * expected * i / steps
        ev = plan.progress(0.72 + 0.26 * i / steps)
        assert ev.seconds_left == pytest.approx(50.0 * expected * (1 - i / steps), rel=1e-6)
    clock[0] = 1.0 + 50.0 * expected
    plan.progress(0.98)
    assert plan.speed("run") == pytest.approx(1.0)  # the share and the barriers taken out: the build machine's
    plan.slowdown = lambda: 0.0                     # alone: a whole core each, no waits
    plan.progress(0.98)                             # (the load is read with each report)
    assert plan.factor("run") == pytest.approx(1.0)
