"""core.machine_load.OtherWorkRate: the other work a time-left estimate scales by, read from CPU
accounts (the machine's busy time less our own) and smoothed, never the load average's lag."""

from __future__ import annotations

from core import machine_load
from core.machine_load import OtherWorkRate


def test_other_work_is_the_machines_cpu_time_less_our_own_per_second(monkeypatch):
    now = [0.0]
    machine = [100.0]
    own = [10.0]
    monkeypatch.setattr(machine_load, "_machine_cpu_seconds", lambda: machine[0])
    monkeypatch.setattr(machine_load, "_own_cpu_seconds", lambda: own[0])
    monkeypatch.setattr(machine_load.os, "cpu_count", lambda: 2)
    rate = OtherWorkRate(window_s=10.0, clock=lambda: now[0])
    now[0], machine[0], own[0] = 10.0, 120.0, 20.0       # 20 s busy, 10 of them ours: one other core
    assert rate.cores() == 1.0
    now[0], machine[0], own[0] = 10.2, 120.3, 20.1       # too short an interval: the last figure
    assert rate.cores() == 1.0
    now[0], machine[0], own[0] = 15.0, 125.0, 25.0       # only our own work since: half way down (5 s of 10)
    assert abs(rate.cores() - 0.5) < 1e-9
    now[0], machine[0], own[0] = 25.0, 135.0, 35.0       # ten more seconds of only ours: all the way
    assert rate.cores() == 0.0


def test_our_own_threads_never_count_as_other_work(monkeypatch):
    """A run whose thread pools keep both cores busy reads as no other work (the 1-minute load
    average read 13 on 2 cores in such a run)."""
    now, machine, own = [0.0], [0.0], [0.0]
    monkeypatch.setattr(machine_load, "_machine_cpu_seconds", lambda: machine[0])
    monkeypatch.setattr(machine_load, "_own_cpu_seconds", lambda: own[0])
    rate = OtherWorkRate(clock=lambda: now[0])
    now[0], machine[0], own[0] = 30.0, 60.0, 60.0
    assert rate.cores() == 0.0


def test_without_cpu_accounts_it_falls_back_to_the_load_average(monkeypatch):
    monkeypatch.setattr(machine_load, "_machine_cpu_seconds", lambda: None)
    monkeypatch.setattr(machine_load, "load_average", lambda: 3.5)
    assert OtherWorkRate().cores() == 3.5
