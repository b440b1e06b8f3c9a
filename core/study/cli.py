"""`main.py study run FILE` and `main.py study validate FILE`.

Same conventions as the engine subcommands: progress on stderr, the outcome on stdout (`--json`:
one object with every point's parameters, status and metrics, and the counts), bad input exit 2
(`error: study.axes[1].values[2]: ...`), a failed point or an unusable cluster exit 1, Ctrl-C 130
(the points finished so far stay in the results file; `--resume` goes on from there).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_BAD_INPUT = 2


def add_parser(sub: Any) -> None:
    study = sub.add_parser("study", help="parameter sweeps over an engine, on this machine or a Dask cluster",
                           description="Run a study file (docs/studies.md): an engine, base workload, target and "
                                       "settings, axes, repeats and metrics. Examples: assets/studies/.")
    ssub = study.add_subparsers(dest="study_command", metavar="ACTION", required=True)
    run = ssub.add_parser("run", help="run the study's points (results appended to FILE's .results.jsonl)")
    run.add_argument("file", help="the study (.json, .yaml)")
    run.add_argument("--cluster", default="local", metavar="WHERE",
                     help="local (a worker process per core, the default), local:N (N workers), or the address "
                          "of a running Dask scheduler, tcp://HOST:PORT")
    run.add_argument("--resume", action="store_true",
                     help="skip the points already finished in the results file")
    run.add_argument("--out", metavar="FILE.jsonl", help="results file (default: beside the study file)")
    run.add_argument("--no-cache", action="store_true",
                     help="run every point, even one any study finished before (default: reuse the cache of "
                          "finished points, by content)")
    run.add_argument("--session", metavar="FILE.dfx", help="library names in the study refer to this session's "
                                                           "library (default: the starter library)")
    run.add_argument("--json", action="store_true", help="print the points and counts as one JSON object")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    val = ssub.add_parser("validate", help="check a study and count its points (exit 0 valid, 2 invalid)")
    val.add_argument("file")
    val.add_argument("--session", metavar="FILE.dfx")
    val.add_argument("--json", action="store_true", help="print one JSON object")


def _fail(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _load(args: argparse.Namespace) -> Any:
    from core.study import spec

    project = None
    if args.session:
        from core import session

        project = session.load(args.session)
    return spec.load(args.file, project)


def point_json(rec: dict[str, Any]) -> dict[str, Any]:
    """A point as `--json` prints it: no result, series or log (those are in the results file)."""
    keys = ("index", "key", "params", "repeat", "status", "metrics", "error", "duration_s", "attempts", "worker")
    out = {k: rec.get(k) for k in keys}
    out["resumed"] = bool(rec.get("resumed"))
    return out


def _short(v: Any) -> str:
    text = f"{v:.6g}" if isinstance(v, float) else v if isinstance(v, str) else json.dumps(v)
    return text if len(text) <= 24 else text[:21] + "..."


def run_command(args: argparse.Namespace) -> int:
    from core.errors import InputError

    try:
        study = _load(args)
    except InputError as exc:
        if getattr(args, "json", False):
            print(json.dumps({"valid": False, "error": exc.message, "where": exc.where}))
        return _fail(str(exc), EXIT_BAD_INPUT)
    if args.study_command == "validate":
        info = {"valid": True, "study": study.name, "engine": study.engine, "points": len(study.points),
                "axes": study.axis_labels, "metrics": [m.name for m in study.metrics]}
        size = f"{len(study.points)} point(s)"
        if study.search is not None:
            info["search"] = {"sampler": study.search.sampler, "budget": study.search.budget}
            size = f"a {study.search.sampler} search of {study.search.budget} of {len(study.points)} point(s)"
        print(json.dumps(info) if args.json else
              f"{args.file}: valid ({study.engine}, {size}, axes: {', '.join(study.axis_labels) or 'none'})")
        return 0
    return _run(args, study)


def _run(args: argparse.Namespace, study: Any) -> int:
    from core.errors import InputError
    from core.study.runner import StudyRunner
    from core.study.search import front

    search = study.search
    goal = study.front_spec             # a search's objectives, or a sweep's: the front is printed as it grows
    total = search.budget if search is not None else len(study.points)
    seen = [0]
    ended: list[dict[str, Any]] = []
    shown_front: list[list[str]] = [[]]

    def on_log(message: str) -> None:
        if not args.quiet:
            print(f"study: {message}", file=sys.stderr, flush=True)

    def on_record(rec: dict[str, Any]) -> None:
        seen[0] += 1
        if args.quiet:
            return
        params = ", ".join(f"{k}={_param_text(study, k, v)}" for k, v in rec.get("params", {}).items())
        if rec.get("status") == "finished":
            what = ", ".join(f"{k}={_short(v)}" for k, v in (rec.get("metrics") or {}).items())
        else:
            what = str(rec.get("error") or "").splitlines()[0][:200] if rec.get("error") else ""
        took = "" if rec.get("duration_s") is None else f" ({rec['duration_s']:.2f} s)"
        tag = "resumed" if rec.get("resumed") else "cached" if rec.get("cached") else rec.get("status")
        print(f"[{seen[0]:>{len(str(total))}}/{total}] {tag:8s} #{rec['index']} {params}: {what}{took}",
              file=sys.stderr, flush=True)
        if goal is not None:            # the front as it grows, whenever it changes
            ended.append(rec)
            now = front(goal, ended)
            if [r["key"] for r in now] != shown_front[0]:
                shown_front[0] = [r["key"] for r in now]
                print(f"  front: {_front_text(goal, now)}", file=sys.stderr, flush=True)

    try:
        runner = StudyRunner(study, args.cluster, args.out, args.resume, on_record, on_log,
                             cache=not getattr(args, "no_cache", False))
    except InputError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    summary = runner.run()
    counts = summary.counts
    records = summary.records if search is None else [r for r in summary.records if r.get("status") != "not run"]
    best = front(goal, records) if goal is not None else []
    if args.json:
        doc = {"study": summary.study, "engine": summary.engine, "cluster": summary.cluster,
               "results_file": str(summary.results_path), "counts": counts,
               "cancelled": summary.cancelled, "error": summary.error, "timings": summary.timings,
               "points": [point_json(r) for r in records]}
        if search is not None:
            doc["search"] = {"sampler": search.sampler, "budget": search.budget, "grid": len(study.points),
                             "objectives": [{"metric": o.metric, "direction": o.direction} for o in search.objectives],
                             "front": [point_json(r) for r in best]}
        elif goal is not None:
            doc["front"] = {"objectives": [{"metric": o.metric, "direction": o.direction} for o in goal.objectives],
                            "points": [point_json(r) for r in best]}
        print(json.dumps(doc))
    else:
        print(_table(study, records))
        if search is not None:
            print(f"\nsearch ({search.sampler}): {len(records)} of the grid's {len(study.points)} points; "
                  f"front ({', '.join(f'{o.metric} {o.direction}' for o in search.objectives)}):")
            print(_table(study, best))
        elif goal is not None:
            print(f"\nPareto front ({', '.join(f'{o.metric} {o.direction}' for o in goal.objectives)}): "
                  f"{len(best)} of {len(records)} points")
            print(_table(study, best))
        print(f"{counts['finished']} finished ({counts['resumed']} from an earlier run, {counts['cached']} from the "
              f"cache), {counts['failed']} failed, "
              f"{counts['not_run']} not run{' (a search runs only the points it picks)' if search else ''}; "
              f"results in {summary.results_path}")
    if summary.interrupted:
        return _fail("interrupted (finished points are kept: run again with --resume)", 130)
    if summary.error:
        return _fail(summary.error, 1)
    if counts["failed"] or (counts["not_run"] and search is None):
        return _fail(f"{counts['failed']} point(s) failed, {counts['not_run']} not run", 1)
    return 0


def _front_text(search: Any, recs: list[dict[str, Any]]) -> str:
    shown = [" / ".join(_short((r.get("metrics") or {}).get(o.metric)) for o in search.objectives) for r in recs[:6]]
    return f"{len(recs)} point(s): " + ", ".join(f"#{r['index']} {v}" for r, v in zip(recs, shown)) + \
        (", ..." if len(recs) > 6 else "")


def _metric_text(study: Any, m: Any, value: Any) -> str:
    """A headline metric's value with its declared unit (core.metrics), a path's value as it is."""
    if value is None:
        return ""
    if m.path is None:
        from core.display import metric_of

        return metric_of(study.engine, m.name).text(value)
    return _short(value)


def _param_text(study: Any, label: str, value: Any) -> str:
    """An axis value in a table: with its unit where the axis is a target field that has one."""
    shown = study.param_text(label, value)
    return shown if shown is not None else _short(value)


def _table(study: Any, records: list[dict[str, Any]]) -> str:
    cols = ["#"] + study.axis_labels + (["repeat"] if study.repeats > 1 else []) + ["status"] + \
        [m.name for m in study.metrics]
    rows = []
    for r in records:
        row = [str(r["index"])] + [_param_text(study, a, r.get("params", {}).get(a)) for a in study.axis_labels]
        if study.repeats > 1:
            row.append(str(r.get("repeat", 0) + 1))
        row.append(str(r.get("status")))
        row += [_metric_text(study, m, (r.get("metrics") or {}).get(m.name)) for m in study.metrics]
        rows.append(row)
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)
