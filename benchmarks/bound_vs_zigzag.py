"""The bound engine's optimal dataflow side by side with ZigZag (zigzag-dse 3.9.1) on the same machine.

Machine, for both: one MAC, one on-chip buffer of S words holding inputs, weights and partial sums,
DRAM; every word moved between DRAM and the buffer costs one, everything else nothing. In ZigZag
this is an accelerator with a 1x1 operational array, one SRAM of S x 16 bits serving I1, I2 and O,
and a DRAM with read and write cost 1 per 16-bit access (port width 16 bits) and all other costs 0,
so its minimal energy is its fewest DRAM words; every operand, partial sums included, is 16 bits.

Padding: ours never loads padding (it is made on chip), ZigZag clips a tile's input rows only to
the padded map, so its border tiles count padding rows. For the comparison both get the same layer
with the padding made explicit: the padded map (Hi + 2P) x (Wi + 2P) as the input, no padding left,
so both load the zero rows as data. Ours with padding made on chip is printed beside it (`ours*`),
and the proven lower bound of the original layer.

ZigZag runs in its own virtual environment (never a project dependency), e.g.
    python3 -m venv /tmp/zz && /tmp/zz/bin/pip install zigzag-dse==3.9.1 six
    .venv/bin/python benchmarks/bound_vs_zigzag.py --zigzag-python /tmp/zz/bin/python
Each ZigZag run (one layer, one memory size) is cached in a JSON file (--cache), so a run that was
stopped goes on where it stopped; --time-budget stops starting new runs after so many seconds.
ZigZag's LOMA search considers `--lpf` loop prime factors (its default 6); more finds better
mappings, much more slowly (one 3x3 layer: 3 s at 6, 330 s at 8 on this machine).

Fused layers: by its documentation ZigZag 3.9.1 maps and costs a model layer by layer (it parses a
whole ONNX model, but has no layer-fused or depth-first mode); layer fusion is in Stream, a separate
framework built on ZigZag. So this comparison stays layer by layer; our fusion plans are in
benchmarks/bound_fused.py (docs/bound.md, "Fused chains").

Run: .venv/bin/python benchmarks/bound_vs_zigzag.py --zigzag-python /tmp/zz/bin/python [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
WORD_BITS = 16


# ------------------------------------------------------------------ the ZigZag side (runs in ZigZag's venv)
def _memory_yaml(name: str, size_bits: int, cost: float, allocations: list[str]) -> str:
    """One memory level of the machine: read/write cost `cost` per access, and one 16-bit read/write
    port per allocation list (the buffer has a port per operand, DRAM one for all)."""
    ports = "".join(f"""      - name: rw_port_{i}
        type: read_write
        bandwidth_min: 16
        bandwidth_max: 16
        allocation: [{alloc}]
""" for i, alloc in enumerate(allocations, start=1))
    return f"""  {name}:
    size: {size_bits}
    r_cost: {cost}
    w_cost: {cost}
    area: 0
    latency: 1
    operands: [I1, I2, O]
    ports:
{ports}    served_dimensions: [D1]
"""


def _accelerator_yaml(words: int) -> str:
    sram = _memory_yaml("sram", words * WORD_BITS, 0.0,
                        ['"I1, tl", "I1, fh"', '"I2, tl", "I2, fh"', '"O, tl", "O, fl", "O, th", "O, fh"'])
    dram = _memory_yaml("dram", 100000000000, 1.0,
                        ['"I1, fh", "I1, tl", "I2, fh", "I2, tl", "O, fh", "O, tl", "O, fl", "O, th"'])
    return f"""name: one_mac_one_buffer
memories:
{sram}{dram}operational_array:
  input_precision: [16, 16]
  unit_energy: 0.0
  unit_area: 1.0
  dimensions: [D1]
  sizes: [1]
"""


def _workload_yaml(L: dict[str, Any]) -> tuple[str, str]:
    """One layer (no padding: the caller made it explicit) as a ZigZag workload, and the loop
    dimension the 1x1 array unrolls (by 1)."""
    D, d = L["stride"], L["dilation"]
    rel = f"[ix={D}*ox+{d}*fx, iy={D}*oy+{d}*fy]"
    G, cig, cog = L["groups"], L["Ci"] // L["groups"], L["Co"] // L["groups"]
    if G == 1:
        eq, dims, sizes, unroll = ("O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]", "[B, K, C, OY, OX, FY, FX]",
                                   [L["B"], cog, cig, L["Ho"], L["Wo"], L["Hk"], L["Wk"]], "K")
    elif cig == 1 and cog == 1:
        eq, dims, sizes, unroll = ("O[b][g][oy][ox]+=W[g][fy][fx]*I[b][g][iy][ix]", "[B, G, OY, OX, FY, FX]",
                                   [L["B"], G, L["Ho"], L["Wo"], L["Hk"], L["Wk"]], "G")
    else:
        eq, dims, sizes, unroll = ("O[b][g][k][oy][ox]+=W[g][k][c][fy][fx]*I[b][g][c][iy][ix]",
                                   "[B, G, K, C, OY, OX, FY, FX]",
                                   [L["B"], G, cog, cig, L["Ho"], L["Wo"], L["Hk"], L["Wk"]], "K")
    text = f"""- id: 0
  name: {L['name']}
  operator_type: Conv
  equation: {eq}
  dimension_relations: {rel}
  loop_dims: {dims}
  loop_sizes: {sizes}
  operand_precision: {{W: 16, I: 16, O: 16, O_final: 16}}
  operand_source: {{I: 0}}
  pr_loop_dims: [IX, IY]
  pr_loop_sizes: [{L['Wi']}, {L['Hi']}]
  padding: [[0, 0], [0, 0]]
"""
    return text, unroll


def call_zigzag(workload: str, accelerator: str, spatial: str, lpf: int) -> tuple[float, float, Any, float]:
    """ZigZag's best mapping for energy of one layer (runs in ZigZag's venv): (energy, latency in
    cycles, its cost-model evaluations, seconds). `spatial`: the mapping's spatial_mapping lines."""
    import contextlib
    import io
    import logging

    from zigzag.api import get_hardware_performance_zigzag

    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp:
        files = {"workload.yaml": workload, "accelerator.yaml": accelerator,
                 "mapping.yaml": f"- name: default\n  spatial_mapping:\n{spatial}"
                                 f"  memory_operand_links:\n    O: O\n    W: I2\n    I: I1\n"}
        for name, text in files.items():
            Path(tmp, name).write_text(text)
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            energy, latency, cmes = get_hardware_performance_zigzag(
                str(Path(tmp, "workload.yaml")), str(Path(tmp, "accelerator.yaml")), str(Path(tmp, "mapping.yaml")),
                opt="energy", dump_folder=str(Path(tmp, "out")), lpf_limit=lpf, loma_show_progress_bar=False)
        return float(energy), float(latency), cmes, time.perf_counter() - t0


def zigzag_worker() -> None:
    """Read one job (JSON on stdin), run ZigZag on it, print {"energy", "seconds"} as JSON."""
    job = json.load(sys.stdin)
    wl, unroll = _workload_yaml(job["layer"])
    energy, _latency, _cmes, seconds = call_zigzag(wl, _accelerator_yaml(job["words"]), f"    D1:\n      - {unroll}, 1\n",
                                                   job["lpf"])
    print(json.dumps({"energy": energy, "seconds": seconds}))


# ------------------------------------------------------------------ our side (the project's venv)
def _layers(networks: list[str]) -> list[tuple[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from core.bound.shapes import from_conv
    from core.nets import zoo

    out = []
    for net in networks:
        for layer in zoo.get(net).convs:
            out.append((net, from_conv(layer)))
    return out


def _padded(shape: Any) -> Any:
    """The same layer with its zero padding made explicit: the padded map is the input."""
    from dataclasses import replace

    P = shape.pad
    return replace(shape, Hi=shape.Hi + 2 * P, Wi=shape.Wi + 2 * P, pad=0)


def _key(layer_json: dict[str, Any], words: int, lpf: int) -> str:
    text = json.dumps({"layer": {k: v for k, v in layer_json.items() if k not in ("name", "macs", "fc")},
                       "words": words, "lpf": lpf, "zigzag": "3.9.1"}, sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _run_zigzag(python: str, layer_json: dict[str, Any], words: int, lpf: int, timeout: float) -> dict[str, Any]:
    return run_worker(Path(__file__), python, {"layer": layer_json, "words": words, "lpf": lpf}, timeout)


def run_worker(script: Path, python: str, job: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run `script --zigzag-worker` with ZigZag's python on one job (JSON on stdin); its last line
    of output as JSON, or {"error": ...}."""
    try:
        proc = subprocess.run([python, str(script.resolve()), "--zigzag-worker"], input=json.dumps(job),
                              capture_output=True, text=True, timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:300]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def zigzag_arguments(ap: argparse.ArgumentParser, cache: str, timeout: float) -> None:
    """The options every ZigZag comparison shares: ZigZag's python, which layers, LOMA's limit, the
    cache, the time budget, --json, and the hidden worker mode."""
    ap.add_argument("--zigzag-python", help="python of a virtualenv with zigzag-dse==3.9.1 and six installed")
    ap.add_argument("--only", default="", help="comma list of NETWORK:LAYER to compare (default: every layer)")
    ap.add_argument("--lpf", type=int, default=6, help="ZigZag LOMA loop-prime-factor limit (its default 6)")
    ap.add_argument("--cache", default=cache)
    ap.add_argument("--time-budget", type=float, default=3600.0, help="seconds after which no new ZigZag run starts")
    ap.add_argument("--timeout", type=float, default=timeout, help="seconds one ZigZag run may take")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    ap.add_argument("--zigzag-worker", action="store_true", help=argparse.SUPPRESS)


def parse_or_work(ap: argparse.ArgumentParser, cache: str, timeout: float,
                  worker: Callable[[], None]) -> argparse.Namespace | None:
    """Add the shared options and read the command line; in worker mode (ZigZag's python running this
    script) do the one job and give None."""
    zigzag_arguments(ap, cache, timeout)
    args = ap.parse_args()
    if args.zigzag_worker:
        worker()
        return None
    return args


def read_cache(path: Path) -> dict[str, Any]:
    """ZigZag's results kept between runs (each takes minutes), by job key; empty before the first."""
    return dict(json.loads(path.read_text())) if path.is_file() else {}


def write_cache(path: Path, cache: dict[str, Any]) -> None:
    """Written beside and renamed over, so a run stopped part way never leaves half a cache."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache, indent=1, sort_keys=True))
    os.replace(tmp, path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--networks", default="resnet50,mobilenet_v1,googlenet")
    ap.add_argument("--memories", default="64,128,512", help="on-chip memory sizes in KiB (16-bit words)")
    args = parse_or_work(ap, str(ROOT / "benchmarks" / "bound_vs_zigzag_cache.json"), 900.0, zigzag_worker)
    if args is None:
        return 0

    sys.path.insert(0, str(ROOT))
    from core.bound.bounds import conv_bound
    from core.bound.loopnest import search_optimal
    from core.machine_load import LoadMeter, load_json, warn_if_busy

    cache_path = Path(args.cache)
    cache = read_cache(cache_path)
    t_start = time.perf_counter()
    meter = LoadMeter()         # other work while ours (and ZigZag, per run below) were timed
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], dict[str, Any]] = {}
    for kib in (int(v) for v in args.memories.split(",")):
        words = kib * 1024 * 8 // WORD_BITS
        only = {v.strip() for v in args.only.split(",") if v.strip()}
        for net, shape in _layers(args.networks.split(",")):
            if only and f"{net}:{shape.name}" not in only:
                continue
            same = _padded(shape)
            lj = same.to_json()
            key = _key(lj, words, args.lpf)
            row: dict[str, Any] = {"network": net, "layer": shape.name, "kib": kib, "spec": shape.spec()}
            if (key, kib) in seen:                           # repeated blocks: the same layer again
                rows.append({**seen[(key, kib)], **row})
                continue
            t0 = time.perf_counter()
            opt = search_optimal(same, words)
            native = search_optimal(shape, words)
            row["ours_ms"] = 1000 * (time.perf_counter() - t0) / 2
            row["ours"] = None if opt is None else opt.traffic.total
            row["ours_native"] = None if native is None else native.traffic.total
            row["proven"] = conv_bound(shape, words).reference
            if key not in cache and args.zigzag_python and time.perf_counter() - t_start < args.time_budget:
                print(f"[{time.perf_counter() - t_start:7.0f} s] zigzag {net} {shape.name} at {kib} KiB ...",
                      file=sys.stderr, flush=True)
                zz_meter = LoadMeter()
                cache[key] = _run_zigzag(args.zigzag_python, lj, words, args.lpf, args.timeout)
                cache[key].update(load_json(zz_meter.stop()))
                write_cache(cache_path, cache)
            z = cache.get(key, {})
            row["zigzag"] = z.get("energy")
            row["zigzag_s"] = z.get("seconds")
            row["zigzag_error"] = z.get("error")
            row["zigzag_timing_unreliable"] = z.get("timings_unreliable")       # None: measured before it was kept
            row["ratio"] = (row["ours"] / row["zigzag"]) if row["ours"] and row["zigzag"] else None
            seen[(key, kib)] = {k: v for k, v in row.items() if k not in ("network", "layer", "kib", "spec")}
            rows.append(row)
    done = [r for r in rows if r["ratio"] is not None]
    worse = [r for r in done if r["ratio"] > 1.0]
    summary = {"compared": len(done), "layers": len(rows), "ours_at_or_below_zigzag": len(done) - len(worse),
               "worst_ratio": max((r["ratio"] for r in done), default=None),
               "best_ratio": min((r["ratio"] for r in done), default=None),
               "total_ours": sum(r["ours"] for r in done), "total_zigzag": sum(r["zigzag"] for r in done),
               "zigzag_seconds": sum(r["zigzag_s"] or 0 for r in done),
               "ours_seconds": sum(r["ours_ms"] for r in done) / 1000, "lpf": args.lpf,
               "above_zigzag": [(r["network"], r["layer"], r["kib"], r["ratio"]) for r in worse],
               "zigzag_timings_unreliable": sum(1 for r in done if r.get("zigzag_timing_unreliable"))}
    load = meter.stop()
    summary.update(load_json(load))
    warn_if_busy(load)
    if summary["zigzag_timings_unreliable"]:
        print(f"warning: {summary['zigzag_timings_unreliable']} ZigZag run(s) were timed while other work ran: their "
              f"seconds are unreliable", file=sys.stderr)
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=1))
        return 0
    print(f"{'network':13s} {'layer':22s} {'KiB':>4s} {'ours':>11s} {'ZigZag':>11s} {'ours/ZZ':>8s} {'ours*':>11s} "
          f"{'proven':>11s} {'ZZ s':>6s}")
    for r in rows:
        zz = "-" if r["zigzag"] is None else f"{r['zigzag']:11.0f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:8.4f}"
        zs = "-" if r["zigzag_s"] is None else f"{r['zigzag_s']:6.1f}"
        print(f"{r['network']:13s} {r['layer'][:22]:22s} {r['kib']:4d} {r['ours'] or 0:11d} {zz:>11s} {ratio:>8s} "
              f"{r['ours_native'] or 0:11d} {r['proven']:11.0f} {zs:>6s}" + (f"  ({r['zigzag_error']})"
                                                                          if r["zigzag_error"] else ""))
    s = summary
    print(f"\ncompared {s['compared']} of {s['layers']} layer/memory cases (ZigZag LOMA lpf {s['lpf']}); ours <= ZigZag "
          f"on {s['ours_at_or_below_zigzag']}; ratio ours/ZigZag from {s['best_ratio']} to {s['worst_ratio']}; totals "
          f"{s['total_ours']} vs {s['total_zigzag']:.0f} words; time {s['ours_seconds']:.2f} s vs "
          f"{s['zigzag_seconds']:.0f} s")
    for net, layer, kib, ratio in s["above_zigzag"]:
        print(f"  ZigZag below ours: {net} {layer} at {kib} KiB, ratio {ratio:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
