"""MERIT-z against the paper's Tables VIII and IX: utilisation per row under today's default
assumptions, under the one assumption set (of a small grid) that comes closest over the whole table,
each row's own closest set, and the roofline ceiling of each row under the paper's stated parameters
(128 ALUs, 400 MHz, 16-bit words, 3.2 GB/s), so a figure those parameters cannot reach shows as such.

Run: .venv/bin/python benchmarks/merit_tables.py [--quick] [--psum 5,8,16] [--json]
(--quick leaves out VGG-16, which takes most of the time.) The Saliency network of Table VIII [22]
is not in the zoo (its layer sizes are not given), so its rows are not reproduced.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.nets import zoo  # noqa: E402
from sims import meritz as Z  # noqa: E402
from sims.meritz.dram import DRAM_MODELS  # noqa: E402
from sims.meritz.roofline import PAPER_ALUS, PAPER_DRAM_GBPS, roofline  # noqa: E402

# Table VIII rows: (network, row, paper utilisation, layers of the zoo network); None = all layers.
TABLE_VIII: list[tuple[str, str, float, list[str] | None]] = [
    ("alexnet", "AlexNet (overall)", 0.88, None),
    ("alexnet", "AlexNet CONV1+Pool2", 0.88, ["conv1"]),
    ("alexnet", "AlexNet CONV2+Pool2", 0.95, ["conv2"]),
    ("alexnet", "AlexNet CONV3", 0.77, ["conv3"]),
    ("alexnet", "AlexNet CONV4", 0.72, ["conv4"]),
    ("alexnet", "AlexNet CONV5", 0.72, ["conv5"]),
    ("alexnet", "AlexNet FC1-3 (batch 32)", 0.92, ["fc6", "fc7", "fc8"]),
    ("vgg16", "VGG-16 (overall)", 0.85, None),
    ("vgg16", "VGG-16 CONV1", 0.89, ["conv1_1"]),
    ("vgg16", "VGG-16 CONV2-4+Pool2", 0.95, ["conv1_2", "conv2_1", "conv2_2"]),
    ("vgg16", "VGG-16 CONV5-13+Pool2", 0.83, ["conv3_1", "conv3_2", "conv3_3", "conv4_1", "conv4_2", "conv4_3",
                                               "conv5_1", "conv5_2", "conv5_3"]),
    ("vgg16", "VGG-16 FC1-3 (batch 32)", 0.92, ["fc6", "fc7", "fc8"]),
]


def table_rows(quick: bool) -> list[dict[str, Any]]:
    """Every reproduced row: its table, name, the paper's utilisation and its layers."""
    rows = []
    nets = {n: Z.network_transforms(zoo.get(n)) for n in (["alexnet"] if quick else ["alexnet", "vgg16"])}
    for net, row, paper, names in TABLE_VIII:
        if net not in nets:
            continue
        layers = [(f"{net}/{n}", t) for n, t in nets[net] if names is None or n in names]
        rows.append({"table": "VIII", "row": row, "paper": paper, "layers": layers})
    for name, t, size in Z.table_ix_transforms():
        rows.append({"table": "IX", "row": f"{name} ({size})", "paper": Z.PAPER_TABLE_IX[name],
                     "layers": [(f"ix/{name}", t)]})
    return rows


def assumption_grid(psums: list[int]) -> list[Z.MeritzConfig]:
    """The paper's 128 ALUs at 3.2 GB/s under every combination of the four assumptions."""
    return [Z.MeritzConfig(alus=PAPER_ALUS, dram_gbps=PAPER_DRAM_GBPS, cp_bytes=k * 1024, broadcast=bc,
                           dram_model=dram, lane_padding=lane)
            for k, bc, dram, lane in itertools.product(psums, (False, True), DRAM_MODELS, Z.LANE_RULES)]


def label(cfg: Z.MeritzConfig) -> str:
    return (f"psum {cfg.cp_bytes // 1024} KB, broadcast {'on' if cfg.broadcast else 'off'}, "
            f"{cfg.dram_model}, lanes {cfg.lane_padding}")


def evaluate(rows: list[dict[str, Any]], cfg: Z.MeritzConfig) -> list[float]:
    """Utilisation of each row under `cfg`: useful ops / (ALUs x cycles) over the row's layers."""
    per_layer: dict[str, Z.LayerResult] = {}
    out = []
    for row in rows:
        res = []
        for key, t in row["layers"]:
            if key not in per_layer:
                per_layer[key] = Z.simulate(t, cfg, key)
            res.append(per_layer[key])
        out.append(sum(r.useful_ops for r in res) / (cfg.alus * sum(r.cycles for r in res)))
    return out


def errors(ours: list[float], paper: list[float], reachable: list[bool]) -> dict[str, float]:
    """Mean and max |ours - paper| and Pearson's r over all rows; the mean also over the rows whose
    paper figure the roofline allows (the others no assumption set can match)."""
    o, p, ok = np.array(ours), np.array(paper), np.array(reachable)
    return {"mean_abs_error": float(np.mean(np.abs(o - p))), "max_abs_error": float(np.max(np.abs(o - p))),
            "mean_abs_error_reachable": float(np.mean(np.abs(o - p)[ok])) if ok.any() else float("nan"),
            "correlation": float(np.corrcoef(o, p)[0, 1]) if np.std(o) > 0 else float("nan")}


def ceilings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        rf = roofline([t for _, t in row["layers"]])
        out.append({**rf.to_json(), "paper_reachable": row["paper"] <= rf.ceiling + 1e-9,
                    "gbps_for_paper": round(rf.gbps_needed(row["paper"]), 2)})
    return out


def run(quick: bool, psums: list[int], log: Any) -> dict[str, Any]:
    rows = table_rows(quick)
    paper = [r["paper"] for r in rows]
    grid = assumption_grid(psums)
    roof = ceilings(rows)
    reachable = [rf["paper_reachable"] for rf in roof]
    sets = []
    for i, cfg in enumerate(grid):
        t0 = time.perf_counter()
        ours = evaluate(rows, cfg)
        sets.append({"assumptions": cfg.assumptions(), "label": label(cfg), "utilisation": ours,
                     **errors(ours, paper, reachable), "seconds": round(time.perf_counter() - t0, 2)})
        log(f"  [{i + 1:2d}/{len(grid)}] {label(cfg):55s} mean |err| {sets[-1]['mean_abs_error']:.3f}  "
            f"r {sets[-1]['correlation']:.2f}  ({sets[-1]['seconds']:.1f} s)")
    default = next(s for s in sets if s["assumptions"] == Z.MeritzConfig().assumptions())
    best = min(sets, key=lambda s: s["mean_abs_error"])
    per_row_best = []
    for j, p in enumerate(paper):
        b = min(sets, key=lambda s: abs(s["utilisation"][j] - p))
        per_row_best.append({"label": b["label"], "utilisation": round(b["utilisation"][j], 4)})
    keys = ("label", "assumptions", "mean_abs_error", "max_abs_error", "mean_abs_error_reachable", "correlation")
    return {"machine_note": "single-threaded simulation; the seconds are wall time on a shared, loaded machine",
            "rows": [{"table": r["table"], "row": r["row"], "paper": r["paper"],
                      "default": round(default["utilisation"][j], 4), "best_set": round(best["utilisation"][j], 4),
                      "row_best": per_row_best[j], "roofline": roof[j]} for j, r in enumerate(rows)],
            "default": {k: default[k] for k in keys}, "best": {k: best[k] for k in keys},
            "grid": [{**{k: s[k] for k in keys[:1] + keys[2:] + ("seconds",)},
                      "utilisation": [round(u, 4) for u in s["utilisation"]]} for s in sets]}


def print_report(r: dict[str, Any]) -> None:
    d, b = r["default"], r["best"]
    print(f"\nTables VIII/IX at {PAPER_ALUS} ALUs, {PAPER_DRAM_GBPS} GB/s: paper vs the model")
    print(f"  default = {d['label']}")
    print(f"  best    = {b['label']} (the one set closest over all rows)")
    print(f"  {'row':42s} {'paper':>6s} {'default':>8s} {'best':>6s} {'roofline':>9s}  row's own best set")
    for row in r["rows"]:
        rf = row["roofline"]
        flag = "" if rf["paper_reachable"] else f"  <- paper above roofline: needs {row['roofline']['gbps_for_paper']} GB/s"
        print(f"  {row['row'][:42]:42s} {row['paper']:6.2f} {row['default']:8.3f} {row['best_set']:6.3f} "
              f"{rf['ceiling']:9.3f}  {row['row_best']['utilisation']:.3f} ({row['row_best']['label']}){flag}")
    for name, s in (("default", d), ("best", b)):
        print(f"  {name:8s} mean |error| {s['mean_abs_error']:.3f} (rows under the roofline: "
              f"{s['mean_abs_error_reachable']:.3f}), max |error| {s['max_abs_error']:.3f}, "
              f"correlation with the paper {s['correlation']:.2f}")
    print("  roofline: utilisation <= min(1, ops per compulsory byte x 8 B/cycle / 128 ALUs); "
          "arithmetic intensity per row:")
    for row in r["rows"]:
        rf = row["roofline"]
        print(f"    {row['row'][:42]:42s} {rf['intensity_ops_per_byte']:8.2f} ops/B  ceiling {rf['ceiling']:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="leave out VGG-16 (most of the time)")
    ap.add_argument("--psum", default="5,8,16", help="partial-sum SRAM sizes of the grid, KB (default 5,8,16)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args()
    try:
        psums = [int(x) for x in args.psum.split(",") if x.strip()]
        if not psums or min(psums) < 1:
            raise ValueError
    except ValueError:
        print(f"error: --psum: expected positive integers (KB) separated by commas, got {args.psum!r}",
              file=sys.stderr)
        sys.exit(2)
    log = (lambda m: print(m, file=sys.stderr)) if args.json else print
    log(f"assumption grid: psum {psums} KB x broadcast off/on x DRAM {'/'.join(DRAM_MODELS)} x lanes "
        f"{'/'.join(Z.LANE_RULES)}")
    t0 = time.perf_counter()
    r = run(args.quick, psums, log)
    r["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(r, indent=1))
    else:
        print_report(r)
        print(f"\n({r['seconds']} s wall; {r['machine_note']})")


if __name__ == "__main__":
    main()
