"""The load meter: other work is the machine's CPU time less ours, per second of wall time (fakes, no
real load)."""

from __future__ import annotations

import pytest

from core import machine_load as ml


@pytest.fixture
def clocks(monkeypatch: pytest.MonkeyPatch) -> dict[str, float]:
    c = {"wall": 100.0, "machine": 1000.0, "own": 10.0}
    monkeypatch.setattr(ml.time, "monotonic", lambda: c["wall"])
    monkeypatch.setattr(ml, "_machine_cpu_seconds", lambda: c["machine"])
    monkeypatch.setattr(ml, "_own_cpu_seconds", lambda: c["own"])
    monkeypatch.setattr(ml, "load_average", lambda: 0.3)
    monkeypatch.setattr(ml.os, "cpu_count", lambda: 2)
    return c


def test_own_work_is_not_other_work(clocks: dict[str, float]) -> None:
    meter = ml.LoadMeter()
    clocks["wall"] += 10
    clocks["own"] += 19.0           # two threads of ours
    clocks["machine"] += 19.5       # and a little noise
    rec = meter.stop()
    assert rec.other_cores == pytest.approx(0.05)
    assert not rec.busy and rec.warning() is None
    assert rec.method == "cpu-accounts"


def test_other_work_makes_timings_unreliable(clocks: dict[str, float]) -> None:
    meter = ml.LoadMeter()
    clocks["wall"] += 10
    clocks["own"] += 10.0
    clocks["machine"] += 20.0       # a whole other core busy
    rec = meter.stop()
    assert rec.other_cores == pytest.approx(1.0)
    assert rec.busy
    text = rec.warning()
    assert text is not None and "1.0 of 2 cores" in text and "unreliable" in text
    assert ml.LoadRecord.from_json(rec.to_json()) == rec


def test_without_cpu_accounts_the_load_average_is_used(clocks: dict[str, float],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ml, "_machine_cpu_seconds", lambda: None)
    monkeypatch.setattr(ml, "load_average", lambda: 1.7)
    rec = ml.LoadMeter().stop()
    assert rec.method == "load-average" and rec.other_cores == 1.7 and rec.busy


def test_real_meter_reads_this_machine() -> None:
    rec = ml.LoadMeter().stop()
    assert rec.cpus >= 1 and rec.other_cores >= 0 and rec.seconds > 0
