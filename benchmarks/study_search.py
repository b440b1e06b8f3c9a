"""How much of a grid a search needs: Optuna's samplers (core/study/search.py) against the full grid.

For each example, the whole grid is run once (a study with the "grid" sampler, its results file kept
under benchmarks/out/ and resumed, so a second run of this benchmark computes nothing again). Then
each sampler searches the same grid again with a budget of 15 % of its points, replayed from those
results: a proposal is answered with the point's recorded metrics, exactly what running it would
give (the engines are deterministic for these settings: node budgets, no timing metrics). Targets
(issue 32): the best single objective within 1 % of the grid's, or at least 90 % of the grid front's
hypervolume (two objectives; reference point: the grid's worst value of each objective).

Seeds 1-5 are the ones looked at while writing this; seeds 101-110 were held aside and are reported
separately, and seeds 201-220 were drawn when the polish of single-objective searches was added
(core/study/search.py), after it was written, and run once. Seeds 301-340 ("fresh 2") were drawn
later to test a variant (two-axis steps once no one-axis step is left), which made no seed meet the
target that missed it and was dropped; they are reported as one more unseen run of the polish. Nothing in the samplers is tuned
(Optuna's defaults, TPE multivariate); `--no-polish` replays the searches without the polish.

    python benchmarks/study_search.py [--examples bound,cain] [--budget 0.15] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.study import results_file, spec  # noqa: E402
from core.study.runner import StudyRunner  # noqa: E402
from core.study.search import Objective, Searcher, SearchSpec, front, hypervolume, objective_values  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
SEEDS, HELD_OUT, FRESH = list(range(1, 6)), list(range(101, 111)), list(range(201, 221))
FRESH2 = list(range(301, 341))      # drawn on 2026-11-28, after the polish, run once
FRESH3 = list(range(401, 441))      # drawn on 2026-11-28, after the best-first polish, run once
SAMPLERS = ("tpe", "nsga2", "random")

# Grids of at least 500 points whose points take well under a second each, so the reference grid can
# be computed here: the bound engine over a dataflow accelerator's design space, with two objectives
# and with one.
_BOUND = {"engine": "bound", "workload": {"kind": "cnn", "network": "alexnet"},
          "target": {"kind": "dataflow", "memory_bytes": 65536, "word_bits": 16, "pe_rows": 16, "pe_cols": 16},
          "settings": {"sweep": False, "dataflows": []}}
_MEMORY = {"param": "target.memory_bytes", "values": [k * 1024 for k in (8, 16, 24, 32, 48, 64, 96, 128, 192, 256,
                                                                         384, 512)]}
_WORD = {"param": "target.word_bits", "values": [8, 12, 16, 24, 32]}
EXAMPLES: dict[str, dict[str, Any]] = {
    "bound-design": {
        **_BOUND, "name": "bound: accelerator design space",
        "axes": [_MEMORY, _WORD, {"param": "target.pe_rows", "values": [4, 8, 16, 32, 64]},
                 {"param": "workload.network", "values": ["alexnet", "resnet18"]}],
        "metrics": [{"name": "gbuf_reads", "path": "totals.gbuf_reads"}, "optimal_traffic",
                    {"name": "memory", "path": "memory_bytes"}],
        "objectives": [["optimal_traffic", "minimize"], ["memory", "minimize"]],
    },
    "bound-onchip": {
        **_BOUND, "name": "bound: on-chip traffic",
        "axes": [_MEMORY, _WORD, {"param": "target.pe_rows", "values": [4, 8, 16, 32]},
                 {"param": "target.pe_cols", "values": [4, 8, 16, 32]}],
        "metrics": [{"name": "gbuf_reads", "path": "totals.gbuf_reads"}],
        "objectives": [["gbuf_reads", "minimize"]],
    },
}


# The three search examples of assets/studies (f-CNNx, MERIT-z, Cain), whose own grids are 80-120
# points: the same engine, workload, target, settings, metrics and objectives, with the axes widened
# to a grid of at least 500 points (issue 32's reference).
STUDIES = ROOT / "assets" / "studies"
WIDER_AXES: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "fcnnx": ("fcnnx_search.json", [
        {"param": "target.board", "from": "boards"},
        {"param": "target.bandwidth_gbps", "values": [round(0.25 * i, 2) for i in range(1, 27)]},
        {"param": "settings.objective", "values": ["fps", "throughput"]},
        {"param": "settings.front_size", "values": [4, 6]}]),
    "merit-z": ("merit_z_search.json", [
        {"param": "settings.psum_kib", "values": [2, 3, 4, 5, 6, 8, 12, 16, 24, 32]},
        {"param": "settings.broadcast", "values": [False, True]},
        {"param": "settings.dram_model", "values": ["flat", "ddr3-1600"]},
        {"param": "settings.lane_padding", "values": ["pad", "fold"]},
        {"param": "settings.alus", "values": [64, 96, 128, 192, 256, 384, 512]}]),
    "cain": ("cain_search.json", [
        {"param": "settings.traversal", "values": ["portfolio", "cgds", "beam", "best-first", "dfs", "random"]},
        {"param": "settings.seed_share", "values": [0.0, 0.15, 0.3, 0.45, 0.6, 0.75]},
        {"param": "settings.workers", "values": [1, 2, 3, 4]},
        {"param": "settings.seed", "values": [0, 1, 2, 3]}]),
}


def example_from_study(name: str) -> dict[str, Any]:
    """The example study `name` of WIDER_AXES as this benchmark's example: its search section becomes the
    objectives, its axes the wider ones."""
    file, axes = WIDER_AXES[name]
    doc = json.loads((STUDIES / file).read_text())
    objectives = [[o, "minimize"] if isinstance(o, str) else [o["metric"], o.get("direction", "minimize")]
                  for o in doc["search"]["objectives"]]
    keep = {k: v for k, v in doc.items() if k not in ("format", "version", "description", "search", "axes")}
    return {**keep, "axes": axes, "objectives": objectives}


EXAMPLES.update({name: example_from_study(name) for name in WIDER_AXES})


def grid_records(name: str, doc: dict[str, Any], cluster: str) -> tuple[spec.Study, list[dict[str, Any]]]:
    """The example's whole grid, run once and kept (resumed: points already in the file are reused)."""
    OUT.mkdir(parents=True, exist_ok=True)
    study_doc = {k: copy.deepcopy(v) for k, v in doc.items() if k != "objectives"}
    study_doc["search"] = {"sampler": "grid", "objectives": [o[0] for o in doc["objectives"]]}
    study = spec.from_json(study_doc)
    path = OUT / f"search-{name}.grid.jsonl"
    summary = StudyRunner(study, cluster, path, resume=path.exists()).run()
    if summary.error:
        raise SystemExit(f"{name}: the grid did not run: {summary.error}")
    by_key = {r["key"]: r for r in results_file.read(path) if r.get("type") == "point"}
    return study, [by_key[p.key] for p in study.points if p.key in by_key]


def replay(study: spec.Study, records: dict[str, dict[str, Any]], search: SearchSpec) -> list[dict[str, Any]]:
    """The records a search would have run, proposals answered from the grid's results."""
    s = copy.copy(study)
    s.search = search
    searcher = Searcher(s, search)
    ran: list[dict[str, Any]] = []
    while (got := searcher.next_point()) is not None:
        p, known = got
        if known is None:
            rec = records[p.key]
            ran.append(rec)
            searcher.told(p, rec)
    return ran


def score(search: SearchSpec, grid: list[dict[str, Any]], ran: list[dict[str, Any]]) -> dict[str, Any]:
    if len(search.objectives) == 1:
        o = search.objectives[0]
        pick = min if o.minimise else max
        best = pick(v[0] for r in grid if (v := objective_values(search, r)) is not None)
        found = pick(v[0] for r in ran if (v := objective_values(search, r)) is not None)
        gap = abs(found - best) / abs(best) if best else abs(found - best)
        return {"measure": "gap to the grid's best", "value": gap, "met": gap <= 0.01}
    values = [v for r in grid if (v := objective_values(search, r)) is not None]
    ref = [(max if o.minimise else min)(v[i] for v in values) for i, o in enumerate(search.objectives)]
    whole = hypervolume(search, grid, ref)
    got = hypervolume(search, ran, ref)
    share = got / whole if whole else 1.0
    return {"measure": "share of the grid front's hypervolume", "value": share, "met": share >= 0.90}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", default="bound-design,bound-onchip",
                    help="comma-separated: bound-design, bound-onchip (the default: points well under a second), "
                         "fcnnx, merit-z, cain (the assets/studies examples widened to 500+ points: their points "
                         "take 10-60 s each, so a reference grid is hours on 2 cores; it is resumed where it stopped)")
    ap.add_argument("--budget", type=float, default=0.15, help="share of the grid's points a search may run")
    ap.add_argument("--cluster", default="local:2", help="where the reference grid runs (once)")
    ap.add_argument("--no-polish", action="store_true", help="single-objective searches without the polish")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    polish = not args.no_polish
    rows = []
    for name in args.examples.split(","):
        doc = EXAMPLES[name]
        study, grid = grid_records(name, doc, args.cluster)
        by_key = {r["key"]: r for r in grid}
        objectives = [Objective(m, d) for m, d in doc["objectives"]]
        budget = max(1, int(args.budget * len(study.points)))
        front_size = len(front(SearchSpec("grid", budget, objectives), grid))
        for sampler in SAMPLERS:
            for group, seeds in (("looked at", SEEDS), ("held aside", HELD_OUT), ("fresh", FRESH),
                                ("fresh 2", FRESH2), ("fresh 3", FRESH3)):
                scores = [score(search, grid, replay(study, by_key, search))
                          for seed in seeds for search in [SearchSpec(sampler, budget, objectives, seed, polish)]]
                vals = [s["value"] for s in scores]
                rows.append({"example": name, "grid": len(study.points), "grid_front": front_size, "budget": budget,
                             "sampler": sampler, "seeds": group, "measure": scores[0]["measure"],
                             "median": statistics.median(vals), "worst": (max if "gap" in scores[0]["measure"]
                                                                         else min)(vals),
                             "met": sum(s["met"] for s in scores), "runs": len(scores)})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'example':14s} {'grid':>5s} {'budget':>6s} {'sampler':8s} {'seeds':11s} {'measure':38s} "
          f"{'median':>8s} {'worst':>8s} {'target met':>10s}")
    for r in rows:
        print(f"{r['example']:14s} {r['grid']:5d} {r['budget']:6d} {r['sampler']:8s} {r['seeds']:11s} "
              f"{r['measure']:38s} {r['median']:8.4f} {r['worst']:8.4f} {r['met']:>5d}/{r['runs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
