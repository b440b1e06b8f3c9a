"""f-CNNx Table III: memory-aware design vs the contention-unaware baseline, both measured in the
discrete-event simulator (sims/fcnnx_des.py), FPSobj with 25 fps targets (4 fps for VGG16), reported
with the paper's definitions beside its own figures.

The paper's gains, recomputed from its own GOp/s (fps = GOp/s / Table I workload, FPSobj of eq. 5
with the 25/25/25/4 fps targets):
* "Speed-up (geo. mean)" = geometric mean over the CNNs of new/baseline GOp/s, minus 1;
* "FPSobj (% Gain)" = FPSobj(baseline) / FPSobj(new) - 1 (the objective is a distance: lower is
  better). The other reading, (baseline - new) / baseline, which earlier versions of this benchmark
  used, is printed beside it ("old def."): both are recomputed per row and the one that reproduces
  the printed figure is named.
Ours are computed with the same definitions from the simulated designs (targets lowered by eq. 5
where a CNN cannot reach them, as the paper does). A row meets the target when both gains are within
a factor 1.5 of the paper's; for every row the differences behind the gap are printed: each CNN's
simulated fps against its target and the paper's fps, whether the baseline is bandwidth-bound.
Every row also replays the chosen design's exported MCNN-HS table (hardware_table) and prints
whether its throughput equals the schedule's.

The rows are a study (assets/studies/fcnnx_bandwidth.json at the paper's four bandwidths) run by the
study runner on a local Dask cluster, one row per worker at a time.

Run: .venv/bin/python benchmarks/fcnnx_table3.py [--quick] [--json] [--cluster local:N | tcp://HOST:PORT]
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.study import spec  # noqa: E402
from core.study.runner import StudyRunner  # noqa: E402
from sims.fcnnx_des import BURST_OVERHEAD, DMA_BURST, SWITCH_PENALTY  # noqa: E402

DMA_EFFICIENCY = DMA_BURST / (DMA_BURST + BURST_OVERHEAD + SWITCH_PENALTY)   # interleaved 256-beat bursts

STUDY = Path(__file__).resolve().parents[1] / "assets" / "studies" / "fcnnx_bandwidth.json"
BANDWIDTHS = (1.0, 1.7, 2.0, 3.8)
FACTOR = 1.5               # the target: our gains within this factor of the paper's
ROWS_NEEDED = 5

# Table I workloads (GOp per inference, as printed) and the FPSobj targets of section IV-C.
PAPER_GOPS = {"zfnet": 2.2219, "pilotnet": 0.0620, "scenelabel": 7.6528, "vgg16": 30.72}
PAPER_TARGETS = {"zfnet": 25.0, "pilotnet": 25.0, "scenelabel": 25.0, "vgg16": 4.0}
# Table III as printed: (CNNs, bandwidth GB/s, baseline GOp/s, f-CNNx GOp/s, speed-up %, FPSobj gain %)
PAPER = [
    (("zfnet", "scenelabel", "vgg16"), 1.0, (15.43, 28.61, 16.40), (13.97, 60.14, 48.27), 77, 42),
    (("zfnet", "scenelabel", "vgg16"), 1.7, (17.03, 91.23, 26.15), (19.92, 85.71, 68.80), 42, 51),
    (("zfnet", "scenelabel", "vgg16"), 2.0, (22.58, 87.48, 39.01), (21.45, 92.30, 74.08), 24, 38),
    (("zfnet", "scenelabel", "vgg16"), 3.8, (22.70, 96.22, 48.76), (23.05, 99.21, 79.63), 19, 37),
    (("zfnet", "pilotnet", "scenelabel", "vgg16"), 1.0, (8.12, 0.72, 33.58, 11.22), (10.39, 1.26, 47.71, 47.87), 91, 54),
    (("zfnet", "pilotnet", "scenelabel", "vgg16"), 1.7, (13.51, 1.27, 58.14, 23.33), (21.18, 1.87, 72.91, 48.77), 57, 43),
    (("zfnet", "pilotnet", "scenelabel", "vgg16"), 2.0, (16.00, 1.47, 68.11, 30.37), (20.00, 1.95, 68.86, 69.08), 40, 40),
    (("zfnet", "pilotnet", "scenelabel", "vgg16"), 3.8, (15.46, 1.61, 85.14, 37.96), (16.28, 1.97, 93.43, 75.00), 29, 32),
]


# ---------------------------------------------------------------- the definitions
def speedup(base: list[float], new: list[float]) -> float:
    """Geometric mean of new/baseline throughput, minus 1 (Table III "Speed-up (geo. mean)")."""
    return math.prod(n / b for b, n in zip(base, new)) ** (1 / len(base)) - 1


def gain_paper(obj_base: float, obj_new: float) -> float:
    """FPSobj gain as the paper's figures recompute: baseline/new - 1 (inf when new reaches 0)."""
    return obj_base / obj_new - 1 if obj_new > 0 else math.inf


def gain_old(obj_base: float, obj_new: float) -> float:
    """The reading earlier versions used: (baseline - new) / baseline."""
    return (obj_base - obj_new) / obj_base if obj_base > 0 else 0.0


def fpsobj(fps: list[float], targets: list[float]) -> float:
    """Eq. 5: sum of squared relative distances to the targets."""
    return sum((f / t - 1) ** 2 for f, t in zip(fps, targets))


def within(ours: float, paper: float, factor: float = FACTOR) -> bool:
    """Same sign and at most `factor` apart."""
    return ours > 0 and paper > 0 and paper / factor <= ours <= paper * factor


def paper_row(cnns: tuple[str, ...], base: tuple[float, ...], new: tuple[float, ...], sp: int, gain: int) -> dict[str, Any]:
    """The paper's gains recomputed both ways from its own figures, and which one it printed."""
    fb = [g / PAPER_GOPS[c] for g, c in zip(base, cnns)]
    fn = [g / PAPER_GOPS[c] for g, c in zip(new, cnns)]
    tg = [PAPER_TARGETS[c] for c in cnns]
    ob, on = fpsobj(fb, tg), fpsobj(fn, tg)
    g_new, g_old = 100 * gain_paper(ob, on), 100 * gain_old(ob, on)
    return {"cnns": list(cnns), "baseline_gops": list(base), "fcnnx_gops": list(new), "baseline_fps": fb,
            "fcnnx_fps": fn, "printed_speedup_pct": sp, "printed_gain_pct": gain,
            "speedup_pct": 100 * speedup(list(base), list(new)), "objective_baseline": ob, "objective_fcnnx": on,
            "gain_paper_def_pct": g_new, "gain_old_def_pct": g_old,
            "definition": "baseline/new - 1" if abs(g_new - gain) < abs(g_old - gain) else "(baseline - new)/baseline",
            "definition_within_1pt": abs(g_new - gain) <= 1.0}


# ---------------------------------------------------------------- our rows
def run_rows(bandwidths: tuple[float, ...], cluster: str) -> list[dict]:
    """The study (both CNN sets with their targets, eq. 5 as the paper) at these bandwidths: its
    records in row order (set, then bandwidth)."""
    doc = json.loads(STUDY.read_text())
    axis = next(a for a in doc["axes"] if a.get("param") == "target.bandwidth_gbps")
    axis["values"] = list(bandwidths)
    study = spec.from_json(doc, None, STUDY)
    with tempfile.TemporaryDirectory() as d:
        summary = StudyRunner(study, cluster, Path(d) / "table3.results.jsonl",
                              on_log=lambda m: print(f"study: {m}", file=sys.stderr, flush=True), cache=False).run()
    if summary.error:
        raise SystemExit(summary.error)
    bad = [r for r in summary.records if r["status"] != "finished"]
    if bad:
        raise SystemExit(f"point {bad[0]['index']} {bad[0]['params']}: {bad[0].get('error')}")
    return summary.records


def baseline_demand(r: dict) -> float:
    """Bytes/s the contention-unaware design's CNNs need at their peak rates."""
    base = r["baseline"]
    return sum(f * sum(sg["traffic_bytes"] for sg in d["subgraphs"])
               for f, d in zip(base["peak"]["fps"], base["design"]))


def bandwidth_bound(r: dict) -> bool:
    """Judged on the contention-unaware design (the memory-aware one was chosen to fit the
    bandwidth, so judging it would be circular): its CNNs at their peak rates need more than its
    DMA bursts can draw from the port."""
    return baseline_demand(r) > r["bandwidth_gbps"] * 1e9 * DMA_EFFICIENCY


def our_row(r: dict, paper: dict[str, Any]) -> dict[str, Any]:
    ma, bs = r["simulated"], r["baseline"]["simulated"]
    sp = 100 * speedup(bs["gops"], ma["gops"])
    g_new, g_old = 100 * gain_paper(bs["objective"], ma["objective"]), 100 * gain_old(bs["objective"], ma["objective"])
    hw = r.get("hardware_table") or {}
    per_cnn = [{"cnn": c, "target_fps": t, "user_target_fps": u, "fps_max": m,
                "baseline_fps": b, "fcnnx_fps": n, "paper_baseline_fps": pb, "paper_fcnnx_fps": pn}
               for c, t, u, m, b, n, pb, pn in zip(r["cnns"], r["targets_fps"], r["user_targets_fps"], r["fps_max"],
                                                   bs["fps"], ma["fps"], paper["baseline_fps"], paper["fcnnx_fps"])]
    return {"speedup_pct": sp, "gain_paper_def_pct": g_new, "gain_old_def_pct": g_old,
            "objective_baseline": bs["objective"], "objective_fcnnx": ma["objective"],
            "speedup_ratio": sp / paper["speedup_pct"], "gain_ratio": g_new / paper["gain_paper_def_pct"],
            "speedup_within": within(sp, paper["speedup_pct"]), "gain_within": within(g_new, paper["gain_paper_def_pct"]),
            "bandwidth_bound": bandwidth_bound(r), "baseline_gops": bs["gops"], "fcnnx_gops": ma["gops"],
            "baseline_demand_gbps": baseline_demand(r) / 1e9,
            "dma_bandwidth_gbps": r["bandwidth_gbps"] * DMA_EFFICIENCY,
            # each design's simulated fps over what it may reach (alone with the whole bandwidth, inputs
            # at most at the target rate): near 1, no bandwidth schedule can make it faster
            "baseline_share_of_peak": [f / min(p, t) for f, p, t in zip(bs["fps"], r["baseline"]["peak"]["fps"],
                                                                      r["targets_fps"])],
            "fcnnx_share_of_peak": [f / min(p, t) for f, p, t in zip(ma["fps"], r["peak"]["fps"], r["targets_fps"])],
            # what our memory-aware design's traffic would need at the paper's f-CNNx frame rates
            "demand_at_paper_fps_gbps": sum(f * sum(sg["traffic_bytes"] for sg in d["subgraphs"])
                                            for f, d in zip(paper["fcnnx_fps"], r["design"]["per_cnn"])) / 1e9,
            "per_cnn": per_cnn, "port_efficiency": {"fcnnx": ma["efficiency"], "baseline": bs["efficiency"]},
            "replay_matches": hw.get("replay_matches"), "schedule_fps": hw.get("schedule_fps"),
            "replay_fps": hw.get("replay_fps"), "baseline_point_memory_aware": baseline_point(r)}


def baseline_point(r: dict) -> dict[str, Any] | None:
    """The baseline's joint point as the memory-aware search scheduled it (None if it was pruned):
    a cycle holds whole inferences (at most explore.MAX_TASKS subgraphs), so a joint point whose CNNs' rates differ
    by more than its repetition vectors can express is predicted below its peak, and the search may
    choose another point that simulates worse than the baseline."""
    rows, k, c = r.get("joint_points") or [], r.get("baseline_joint"), r.get("chosen_joint")
    if k is None or c is None or k >= len(rows) or rows[k].get("memory_aware") is None:
        return None
    sch = rows[k].get("schedule") or r["schedule"]
    chosen_value = rows[c]["memory_aware"]
    return {"peak_objective": rows[k]["peak"], "predicted_objective": rows[k]["memory_aware"],
            "repetitions": sch["repetitions"], "predicted_fps": sch.get("fps", r["predicted"]["fps"]),
            "peak_fps": r["baseline"]["peak"]["fps"], "chosen_predicted_objective": chosen_value,
            "chosen_peak_objective": rows[c]["peak"], "is_chosen": k == c}


def _fmt(v: list[float], d: int = 2) -> str:
    return "(" + ", ".join(f"{x:.{d}f}" for x in v) + ")"


def main() -> int:
    quick = "--quick" in sys.argv
    as_json = "--json" in sys.argv
    cluster = sys.argv[sys.argv.index("--cluster") + 1] if "--cluster" in sys.argv else "local"
    bws = BANDWIDTHS[:1] if quick else BANDWIDTHS
    records = run_rows(bws, cluster)
    rows = []
    for rec in records:
        r = rec["result"]
        pid = next(k for k, p in enumerate(PAPER) if list(p[0]) == r["cnns"] and p[1] == rec["params"]["bandwidth_gbps"])
        cnns, bw, base, new, sp, gain = PAPER[pid]
        paper = paper_row(cnns, base, new, sp, gain)
        rows.append({"id": pid + 1, "cnns": r["cnns"], "bandwidth_gbps": bw, "paper": paper, "ours": our_row(r, paper),
                     "seconds": rec["duration_s"]})
    met = [row["ours"]["speedup_within"] and row["ours"]["gain_within"] for row in rows]
    replay_ok = all(row["ours"]["replay_matches"] for row in rows)
    defs = sum(row["paper"]["definition_within_1pt"] for row in rows)
    summary = {"rows_within_factor": sum(met),
               "rows_not_bandwidth_bound": sum(not row["ours"]["bandwidth_bound"] for row in rows), "rows": len(rows), "factor": FACTOR, "rows_needed": ROWS_NEEDED,
               "target_met": sum(met) >= min(ROWS_NEEDED, len(rows)),
               "paper_gain_definition_rows_within_1pt": defs, "replay_equals_schedule_on_every_row": replay_ok}
    if as_json:
        print(json.dumps({"rows": rows, "summary": summary}))
        return 0 if replay_ok else 1

    print("Table III, the paper's figures recomputed (fps = GOp/s / Table I GOp, targets 25/25/25/4 fps):")
    print(f"{'ID':>2} {'BW':>7}  {'speed-up printed/recomputed':>27}  {'FPSobj gain printed':>19}  "
          f"{'base/new-1':>10}  {'(b-n)/b':>8}  definition")
    for row in rows:
        p = row["paper"]
        print(f"{row['id']:>2} {row['bandwidth_gbps']:>4.1f}GB/s  {p['printed_speedup_pct']:>15}% / {p['speedup_pct']:>6.1f}%  "
              f"{p['printed_gain_pct']:>18}%  {p['gain_paper_def_pct']:>9.1f}%  {p['gain_old_def_pct']:>7.1f}%  "
              f"{p['definition']}{'' if p['definition_within_1pt'] else ' (> 1 pt off)'}")
    print(f"the paper's FPSobj gains recompute as baseline/new - 1 within 1 point on {defs} of {len(rows)} rows")
    print()
    print("Ours (simulated), same definitions; ratio = ours / paper; within = both gains within "
          f"{FACTOR}x of the paper's:")
    print(f"{'ID':>2} {'set':<7} {'BW':>7}  {'speed-up':>8} {'ratio':>6}  {'FPSobj gain':>11} {'ratio':>6} "
          f"{'old def.':>8}  {'bw-bound':>8} {'within':>6}  {'replay=schedule':>15} {'time':>6}")
    for row, ok in zip(rows, met):
        o = row["ours"]
        print(f"{row['id']:>2} {len(row['cnns'])} CNNs  {row['bandwidth_gbps']:>4.1f}GB/s  {o['speedup_pct']:>7.0f}% "
              f"{o['speedup_ratio']:>6.2f}  {o['gain_paper_def_pct']:>10.0f}% {o['gain_ratio']:>6.2f} "
              f"{o['gain_old_def_pct']:>7.0f}%  {str(o['bandwidth_bound']):>8} {str(ok):>6}  "
              f"{str(o['replay_matches']):>15} {row['seconds']:>5.1f}s")
    print()
    print("Where the designs differ from the paper's (per CNN: fps simulated / target, the paper's fps; "
          "targets lowered by eq. 5 are marked *):")
    for row in rows:
        o = row["ours"]
        parts = []
        for c in o["per_cnn"]:
            star = "*" if c["target_fps"] < c["user_target_fps"] else ""
            parts.append(f"{c['cnn']} base {c['baseline_fps']:.2f} new {c['fcnnx_fps']:.2f} / {c['target_fps']:.2f}{star} "
                         f"(paper {c['paper_baseline_fps']:.2f} -> {c['paper_fcnnx_fps']:.2f})")
        print(f"{row['id']:>2}: " + "; ".join(parts))
        print(f"    baseline needs {o['baseline_demand_gbps']:.2f} GB/s at its peak rates, its DMAs draw "
              f"{o['dma_bandwidth_gbps']:.2f} GB/s; at the paper's f-CNNx fps our design would move "
              f"{o['demand_at_paper_fps_gbps']:.2f} GB/s; fps reached / reachable (min of peak and target): baseline "
              f"{_fmt(o['baseline_share_of_peak'])}, f-CNNx {_fmt(o['fcnnx_share_of_peak'])}")
        print(f"    FPSobj baseline {o['objective_baseline']:.3f} new {o['objective_fcnnx']:.3f} "
              f"(paper {row['paper']['objective_baseline']:.3f} -> {row['paper']['objective_fcnnx']:.3f}); "
              f"port efficiency new {100 * o['port_efficiency']['fcnnx']:.1f}% baseline "
              f"{100 * o['port_efficiency']['baseline']:.1f}%; replay fps "
              + (_fmt(o["replay_fps"], 3) + " schedule " + _fmt(o["schedule_fps"], 3) if o["replay_fps"] else "-"))
        bp = o["baseline_point_memory_aware"]
        if bp and not bp["is_chosen"]:
            print(f"    the baseline's joint point (peak FPSobj {bp['peak_objective']:.3f}, fps {_fmt(bp['peak_fps'])}) "
                  f"scheduled memory-aware: repetitions {bp['repetitions']}, fps {_fmt(bp['predicted_fps'])}, predicted "
                  f"FPSobj {bp['predicted_objective']:.3f}; the chosen point: peak {bp['chosen_peak_objective']:.3f}, "
                  f"predicted {bp['chosen_predicted_objective']:.3f}")
    compute_bound = sum(not row["ours"]["bandwidth_bound"] for row in rows)
    print(f"rows whose baseline is not bandwidth-bound (no memory-aware gain is possible there): {compute_bound} "
          f"of {len(rows)} (the paper: 2 of 8, rows 4 and 8)")
    print(f"rows with both gains within {FACTOR}x of the paper's: {sum(met)} of {len(rows)} "
          f"(target {ROWS_NEEDED} of 8): {'MET' if summary['target_met'] else 'NOT MET'}")
    print("exported MCNN-HS table replays at the schedule's throughput on every row:", "PASS" if replay_ok else "FAIL")
    return 0 if replay_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
