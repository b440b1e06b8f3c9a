"""How busy the machine was while we timed something: other work beside our own.

A timing against a peer (onnxruntime, a published tool) means something only on an otherwise idle
machine. The 1-minute load average lags and counts our own threads, so on Linux this measures the
interval itself: the CPU time the whole machine spent (/proc/stat) minus the CPU time this process
and its reaped children spent (getrusage), over the wall time. Elsewhere it falls back to the load
average at the start, less nothing (so it errs towards "busy").

Engines and benchmarks that time against a peer keep a `LoadRecord` beside their figures and say
`warning()` when it is not None.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import asdict, dataclass
from typing import Any

# More than this many cores' worth of other work on average makes timings unreliable (the brief:
# time against a peer only with load under 1.5 on this 2-core machine; other work of half a core
# already moves a 2-thread measurement by tens of percent).
BUSY_CORES = 0.5


def _machine_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (user+nice+system+irq+softirq+steal),
    None where /proc/stat is not there."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    busy = sum(ticks[i] for i in (0, 1, 2, 5, 6, 7) if i < len(ticks))
    return busy / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return 0.0


@dataclass(frozen=True)
class LoadRecord:
    """What else ran while we measured: `other_cores` is the average number of cores other work kept
    busy over `seconds` of wall time (measured from CPU accounts where `method` is "cpu-accounts",
    else the 1-minute load average at the start)."""

    other_cores: float
    seconds: float
    cpus: int
    load_average_start: float
    load_average_end: float
    method: str                 # "cpu-accounts" or "load-average"

    @property
    def busy(self) -> bool:
        return self.other_cores > BUSY_CORES

    def warning(self) -> str | None:
        """One sentence for people when the timings are unreliable, else None."""
        if not self.busy:
            return None
        return (f"other work kept {self.other_cores:.1f} of {self.cpus} cores busy while this was timed "
                f"(1-minute load {self.load_average_start:.1f} -> {self.load_average_end:.1f}): the times "
                f"and ratios are unreliable; measure again on an idle machine")

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "LoadRecord":
        return LoadRecord(float(d["other_cores"]), float(d["seconds"]), int(d["cpus"]),
                          float(d["load_average_start"]), float(d["load_average_end"]), str(d["method"]))


class LoadMeter:
    """Measures other work between start() (or construction) and stop():

        meter = LoadMeter()
        ... time things ...
        record = meter.stop()
    """

    def __init__(self) -> None:
        self.start()

    def start(self) -> None:
        self._wall = time.monotonic()
        self._machine = _machine_cpu_seconds()
        self._own = _own_cpu_seconds()
        self._load = load_average()

    def stop(self) -> LoadRecord:
        wall = max(time.monotonic() - self._wall, 1e-9)
        machine = _machine_cpu_seconds()
        own = _own_cpu_seconds() - self._own
        cpus = os.cpu_count() or 1
        end_load = load_average()
        if self._machine is not None and machine is not None:
            other = max(0.0, (machine - self._machine - own) / wall)
            return LoadRecord(min(other, float(cpus)), wall, cpus, self._load, end_load, "cpu-accounts")
        return LoadRecord(self._load, wall, cpus, self._load, end_load, "load-average")


def load_json(record: LoadRecord) -> dict[str, Any]:
    """What a result or a benchmark's --json keeps beside its timings: the record, and whether the
    timings are unreliable (other work ran)."""
    return {"machine_load": record.to_json(), "timings_unreliable": record.busy}


def warn_if_busy(record: LoadRecord, file: Any = None) -> str | None:
    """Print the record's warning (on stderr unless `file`), for a benchmark or a command line that
    prints timings; returns it."""
    import sys

    text = record.warning()
    if text is not None:
        print(f"warning: {text}", file=file or sys.stderr)
    return text


class OtherWorkRate:
    """Cores' worth of other work now, from CPU accounts between calls (the machine's busy CPU time
    less this process's and its reaped children's), smoothed over about `window_s` seconds.

    What a time-left estimate should scale by: the 1-minute load average lags a minute behind and
    counts this run's own threads (numpy's and onnxruntime's thread pools made it read 13 on 2 cores
    while a ResNet-18 run went at full speed). Falls back to the load average where /proc/stat is not
    there."""

    def __init__(self, window_s: float = 10.0, clock: Any = time.monotonic) -> None:
        self.window_s = window_s
        self.clock = clock
        self._t = clock()
        self._machine = _machine_cpu_seconds()
        self._own = _own_cpu_seconds()
        self._rate: float | None = None

    def cores(self) -> float:
        machine = _machine_cpu_seconds()
        if machine is None or self._machine is None:
            return load_average()
        now, own = self.clock(), _own_cpu_seconds()
        dt = now - self._t
        if dt < 0.5 and self._rate is not None:        # too short to read: the last figure
            return self._rate
        other = max(0.0, (machine - self._machine - (own - self._own)) / max(dt, 1e-9))
        other = min(other, float(os.cpu_count() or 1))
        weight = min(1.0, dt / self.window_s) if self._rate is not None else 1.0
        self._rate = other if self._rate is None else self._rate + weight * (other - self._rate)
        self._t, self._machine, self._own = now, machine, own
        return self._rate
