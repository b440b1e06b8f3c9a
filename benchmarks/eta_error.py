"""How wrong the window's "about N s left" is, per engine (issue 30: within 30 % after the first 20 %
of each run).

Each engine runs once, in this process, on the setup a new project gives its tab (the starter library
and default settings, as the window's Run would send it); every Progress it reports is stamped with
the time. The estimate (core.jobs.Eta, which the window and the command line both use, with the
time left an engine reports itself where it does: Progress.seconds_left) is then replayed on those
stamps and read at 100 evenly spaced moments from 20 % of the run's duration to its end, as the
window's clock would read it. Its error at a moment t is that of the whole duration it
implies: |t + estimated time left - actual duration| / actual duration.

Beside the error over the whole window it reports the error at 20 %, 50 % and 80 % of each run's
duration (signed: positive when the estimate says the run ends later than it does).

Run: .venv/bin/python benchmarks/eta_error.py [--engines cappuccino,merit+zoo,fcnnx] [--json] [--trace FILE]
     [--replay FILE [--as-recorded]]
("merit+zoo": MERIT with AlexNet and VGG-16 of Table VIII and Table IX, its heavy explicit choices;
"cappuccino+resnet18", "cappuccino+vgg16": Cappuccino on those zoo networks, issue 49's runs;
"cappuccino+alexnet" one the estimate was not shaped on).
`--replay FILE`: summarise the stamps a previous --trace wrote instead of running the engines; where
the trace holds the estimator's raw inputs (Cappuccino's plan journal: work counts, nominal fractions,
messages, load), this checkout's estimator is run on them again (`--as-recorded`: the estimates the
run showed).
`--json`: {"engines": {name: {"duration_s", "updates", "max_error", "median_error", "at", "ok"}}, "limit": 0.3}
("at": {"20": error, "50": ..., "80": ...}).
The figures depend on the machine's load (the engines' stages slow down unevenly); run it with
`nice`, as the other benchmarks.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.files import output_files  # noqa: E402
from core.engine import engines  # noqa: E402
from core.jobs import Eta, Event, Progress  # noqa: E402
from core.lifecycle import record_run  # noqa: E402
from core.project import Project  # noqa: E402
from core.workload import CnnNetwork  # noqa: E402

LIMIT = 0.30            # the largest error allowed ...
FROM = 0.20             # ... from this share of the run on
MOMENTS = 100
AT = (0.2, 0.5, 0.8)    # the moments reported one by one
DEFAULT_ENGINES = ("cappuccino", "merit", "merit+zoo", "fcnnx", "bound", "simulate", "cain")
# Settings beside the defaults, by variant name ("engine+variant"): Cain's budget kept short (the
# estimate of a budget is exact), and MERIT with its heavy explicit choices, the zoo networks of
# Table VIII and Table IX (the run the issue measured).
SETTINGS: dict[str, dict[str, Any]] = {"cain": {"time_s": 5.0},
                                       "merit+zoo": {"networks": ["alexnet", "vgg16"], "table_ix": True}}
# Workloads other than the tab's starter one, by variant name
WORKLOADS: dict[str, Any] = {f"cappuccino+{name}": CnnNetwork(name) for name in ("resnet18", "vgg16", "alexnet")}


Stamp = tuple[Any, ...]     # (time, fraction[, the engine's seconds left or None[, its stage's part or None]])
MESSAGES: dict[str, list[tuple[float, float, str]]] = {}     # per variant: (time, fraction, message) as it changed
LOADS: dict[str, dict[str, float]] = {}    # per variant: the 1-minute load average at its start, end and over it
JOURNALS: dict[str, list[list[Any]]] = {}   # per variant: the estimator's raw inputs (Cappuccino's plan journal)


def trace(variant: str) -> tuple[float, list[Stamp], str]:
    """Run the engine's default request (with the variant's settings); (duration, [(time, fraction,
    seconds left)], status)."""
    engine = variant.split("+")[0]
    project = Project.starter()
    for key, value in SETTINGS.get(variant, {}).items():
        project.set_setting(engine, key, value)
    request = project.request(engine)
    if variant in WORKLOADS:
        request = dataclasses.replace(request, workload=WORKLOADS[variant])
    stamps: list[Stamp] = []
    MESSAGES.setdefault(variant, [])
    plans = _journaled(engine)
    loads = [_load()]
    t0 = time.perf_counter()

    def seen(ev: Event) -> None:
        if isinstance(ev, Progress) and ev.fraction is not None:
            loads.append(_load())
            stamps.append((time.perf_counter() - t0, float(ev.fraction), ev.seconds_left, ev.stage_seconds_left))
            if not MESSAGES[variant] or MESSAGES[variant][-1][2] != ev.message:
                MESSAGES[variant].append((stamps[-1][0], stamps[-1][1], ev.message))

    try:
        out = record_run(engines()[engine], request, on_event=seen)
    finally:
        plans.close()
    loads.append(_load())
    LOADS[variant] = {"start": loads[0], "end": loads[-1], "mean": round(statistics.mean(loads), 2),
                      "max": max(loads)}
    JOURNALS[variant] = [[when - t0, *rest] for p in plans.made for when, *rest in p.journal]
    return time.perf_counter() - t0, stamps, out.status if out.error is None else f"{out.status}: {out.error.text}"


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


class _journaled:
    """While a Cappuccino run goes, keep the plans it makes: their journals (the estimator's raw
    inputs) go into the trace, so --replay can run the estimator again on them."""

    def __init__(self, engine: str) -> None:
        self.made: list[Any] = []
        self._orig = None
        if engine == "cappuccino":
            from core.cappuccino import engine as capp

            self._mod, self._orig = capp, capp.work_plan

            def work_plan(clock: Any = time.perf_counter) -> Any:
                plan = self._orig(clock)      # type: ignore[misc]
                self.made.append(plan)
                return plan
            capp.work_plan = work_plan        # type: ignore[assignment]

    def close(self) -> None:
        if self._orig is not None:
            self._mod.work_plan = self._orig  # type: ignore[assignment]


def rerun(journal: list[list[Any]]) -> list[Stamp]:
    """A Cappuccino run's stamps as this checkout's estimator makes them from the raw inputs a trace
    recorded (the plan's journal: work counts, nominal fractions and messages, the machine's load),
    on a fake clock set to each input's time."""
    from core.cappuccino import engine as capp

    now = [0.0]
    plan = capp.work_plan(lambda: now[0])
    stamps: list[Stamp] = []
    for when, what, *rest in journal:
        now[0] = when
        if what == "units":
            plan.set_units(rest[0], rest[1])
        elif what == "shape":
            plan.set_shape(_complete_shape(rest[0]))
            if not any(e[1] == "units" and e[2] == "split_check" for e in journal):
                # recorded before the split's second comparison and rebuild were stages of their own
                split = next(st for st in plan.stages if st.name == "split")
                plan.set_units("split_check", split.units)
                plan.set_units("split_build", capp.COMPILE_S if rest[0]["splitting"] else 0.0)
        elif what == "progress":
            plan.slowdown = lambda s=rest[2]: s
            ev = plan.progress(rest[0], rest[1])
            stamps.append((when, float(ev.fraction or 0.0), ev.seconds_left, ev.stage_seconds_left))
    return stamps


def _complete_shape(shape: dict[str, float]) -> dict[str, float]:
    """A shape recorded before it named the waits and cores: derived as plan_work derives them."""
    from core.cappuccino import engine as capp

    out = dict(shape)
    if "timing_wait_s" not in out:
        one_pass = out["macs"] * out["images"] / capp.C_MACS_PER_S
        split_s = min(out["min_seconds"], 0.3)
        out["split_wait_s"] = 6 * split_s if out["splitting"] and one_pass < split_s else 0.0
        out["timing_wait_s"] = out["runs"] * out["min_seconds"] if one_pass < out["min_seconds"] else 0.0
        out["cores"] = float(os.cpu_count() or 1)        # the machine that recorded it: this one
    return out


def errors(duration: float, stamps: list[Stamp], moments: int = MOMENTS,
           start: float = FROM) -> list[float | None]:
    """The estimate's error at evenly spaced moments from `start` of the run to its end (None: no
    estimate shown then), replaying the stamped fractions into core.jobs.Eta as the window does."""
    out: list[float | None] = []
    eta, i = Eta(), 0
    for k in range(moments):
        t = duration * (start + (1.0 - start) * k / moments)
        while i < len(stamps) and stamps[i][0] <= t:
            eta.update(stamps[i][1], stamps[i][0], *_told(stamps[i]))
            i += 1
        left = eta.remaining(t)
        out.append(None if left is None else abs(t + left - duration) / duration)
    return out


def _told(stamp: Stamp) -> tuple[float | None, float | None]:
    """The engine's own time left with a stamp and its stage's part of it (Progress.seconds_left,
    stage_seconds_left), None where it gave none."""
    return (stamp[2] if len(stamp) > 2 else None), (stamp[3] if len(stamp) > 3 else None)


def error_at(duration: float, stamps: list[Stamp], share: float) -> float | None:
    """The estimate's signed error at `share` of the run's duration (positive: it says the run ends
    later than it does), None when no estimate is shown then."""
    t = duration * share
    eta = Eta()
    for stamp in stamps:
        if stamp[0] > t:
            break
        eta.update(stamp[1], stamp[0], *_told(stamp))
    left = eta.remaining(t)
    return None if left is None else (t + left - duration) / duration


def summarise(duration: float, stamps: list[Stamp], status: str) -> dict[str, Any]:
    errs = errors(duration, stamps)
    known = [e for e in errs if e is not None]
    worst = max(known) if known else None
    return {"duration_s": round(duration, 2), "updates": len(stamps), "status": status,
            "estimated_share": round(len(known) / len(errs), 2) if errs else 0.0,
            "max_error": None if worst is None else round(worst, 3),
            "median_error": round(statistics.median(known), 3) if known else None,
            "at": {f"{100 * a:.0f}": _round(error_at(duration, stamps, a)) for a in AT},
            # a run too short for an estimate shows none, which is not wrong
            "ok": worst <= LIMIT if worst is not None else duration < 3 * Eta.MIN_SPAN_S}


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


def _at_text(at: dict[str, float | None]) -> str:
    return ", ".join(f"{k} %: " + ("-" if v is None else f"{100 * v:+.0f} %") for k, v in at.items())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default=",".join(DEFAULT_ENGINES))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--trace", metavar="FILE", help="also write every run's (time, fraction) stamps as JSON")
    ap.add_argument("--replay", metavar="FILE", help="summarise the stamps a --trace wrote (no engine runs)")
    ap.add_argument("--as-recorded", action="store_true",
                    help="with --replay: the estimates the run showed, not this checkout's estimator run again")
    args = ap.parse_args(argv)
    unwritable = output_files({"--trace": args.trace})
    if unwritable:
        print(f"error: {unwritable}", file=sys.stderr)
        return 2
    results: dict[str, Any] = {}
    traces: dict[str, Any] = {}
    replay = json.loads(Path(args.replay).read_text()) if args.replay else None
    names = list(replay) if replay is not None else [n.strip() for n in args.engines.split(",") if n.strip()]
    for name in names:
        if replay is not None:
            duration, stamps, status = replay[name]["duration_s"], [tuple(x) for x in replay[name]["stamps"]], "replayed"
            if replay[name].get("journal") and not args.as_recorded:
                # the estimator of this checkout, run again on the recorded run's raw inputs
                stamps, status = rerun(replay[name]["journal"]), "replayed through this estimator"
            elif replay[name].get("journal"):
                status = "as recorded"
        else:
            duration, stamps, status = trace(name)
        results[name] = summarise(duration, stamps, status)
        traces[name] = {"duration_s": duration, "stamps": stamps, "messages": MESSAGES.get(name, []),
                        "journal": JOURNALS.get(name, []), "load_average": LOADS.get(name)}
        if args.trace and replay is None:       # after every run: a long series keeps what it measured
            Path(args.trace).write_text(json.dumps(traces))
        if not args.json:
            r = results[name]
            err = "no estimate" if r["max_error"] is None else \
                f"error max {100 * r['max_error']:.0f} %, median {100 * r['median_error']:.0f} %"
            print(f"{name:11} {r['duration_s']:7.1f} s  {r['updates']:5} updates  {err}  "
                  f"(estimate shown {100 * r['estimated_share']:.0f} % of the time; at {_at_text(r['at'])})  "
                  f"{'ok' if r['ok'] else 'OVER ' + str(int(100 * LIMIT)) + ' %'}  [{r['status']}]", flush=True)
    if args.json:
        print(json.dumps({"engines": results, "limit": LIMIT, "from": FROM}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
