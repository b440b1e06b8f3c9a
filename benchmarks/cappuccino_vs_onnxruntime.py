"""Cappuccino's synthesised programs against onnxruntime on the paper's networks (issue 17).

Targets: precise mode within 1.5x of onnxruntime's latency on at least three of the five networks
with 2 threads; an inexact mode faster than onnxruntime on at least one; AlexNet's program builds
in under 60 s.

Run: nice -n 5 python benchmarks/cappuccino_vs_onnxruntime.py [--networks alexnet,...] [--threads 2]
     [--vector-width 16] [--repeats 5] [--min-seconds 1.0] [--images 2] [--precise-no-fma] [--json]

For every network the same ONNX file (core.cappuccino.networks: the zoo's layers with seeded random
weights) goes through onnxruntime (CPU provider, intra_op_num_threads = --threads, one image per
run) and through the synthesised program in precise, relaxed and imprecise mode (every layer in
that mode). Each is its own process, run alternately (onnxruntime, precise, relaxed, imprecise,
onnxruntime, ...) --repeats times; each run computes the --images images in whole passes for at
least --min-seconds. Reported: median latency per image, the ratio ours / onnxruntime, the peak
RSS of each process (onnxruntime's includes the Python interpreter), the output error against
onnxruntime and against the numpy reference of the mode, the build time, C source lines and weight
file size. onnxruntime is a benchmark dependency; without it the table says so and only our side
runs. The machine's load average is printed: on a shared 2-core machine run it with nothing else
of yours running, and compare ratios rather than absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cappuccino import networks, ort_peer, synth  # noqa: E402
from core.cappuccino.forward import forward_reference  # noqa: E402
from core.cappuccino.numerics import IMPRECISE, PRECISE, RELAXED  # noqa: E402

MODES = (PRECISE, RELAXED, IMPRECISE)
ORT = "onnxruntime"


def _run_with_rss(cmd: list[str], count: int, name: str) -> tuple[synth.RunResult, float]:
    """Run a program of the programs' protocol; its result and its own peak RSS in MB (the VmHWM it
    prints: a forked child's rusage would include this Python process's memory)."""
    r = synth.run_command(cmd, count, lambda: None, name)
    return r, (r.peak_rss_kb or 0) / 1024


def bench_network(name: str, a: argparse.Namespace, cc: str, ort_version: str | None, work: Path) -> dict:
    t0 = time.perf_counter()
    model = networks.load(name, images=a.images)
    onnx = Path(model.extra["onnx"])
    row: dict = {"network": name, "title": model.network.title, "weights": model.weights_source,
                 "onnx": str(onnx), "onnx_bytes": onnx.stat().st_size, "load_seconds": time.perf_counter() - t0}
    images = work / f"{name}.f32"
    synth.write_images(images, model.x_val)
    count = len(model.x_val)
    cmds: dict[str, list[str]] = {}
    for mode in MODES:
        modes = {op.name: mode for op in model.conv_ops}
        t1 = time.perf_counter()
        prog = synth.synthesise_program(model, modes, a.vector_width, a.threads, precise_fma=not a.precise_no_fma)
        synth_s = time.perf_counter() - t1
        src, wts, exe = work / f"{name}_{mode}.c", work / f"{name}_{mode}.bin", work / f"{name}_{mode}"
        src.write_text(prog.source)
        wts.write_bytes(prog.weights)
        build = synth.compile_c(cc, src, exe, True, lambda: None)
        row[mode] = {"synthesis_seconds": synth_s, "build_seconds": build, "source_lines": prog.source_lines,
                     "source_bytes": len(prog.source.encode()), "weight_file_bytes": len(prog.weights),
                     "reference": forward_reference(model, model.x_val, modes)[0]}
        cmds[mode] = [str(exe), str(wts), str(images), str(count), str(a.min_seconds), str(a.threads)]
    if ort_version:
        cmds[ORT] = ort_peer.command(onnx, images, count, a.min_seconds, a.threads)
    runs: dict[str, list[tuple[synth.RunResult, float]]] = {k: [] for k in cmds}
    order = ([ORT] if ort_version else []) + list(MODES)
    for _ in range(a.repeats):                  # alternating: A B C D A B C D ...
        for k in order:
            runs[k].append(_run_with_rss(cmds[k], count, f"{name} {k}"))
    ort_out = runs[ORT][0][0].logits if ort_version else None
    for k in order:
        per_image = [1e3 * r.seconds_per_pass / count for r, _ in runs[k]]
        cpu = [1e3 * (r.cpu_seconds or float("nan")) / (r.passes * count) for r, _ in runs[k]]
        rec = row.setdefault(k, {})
        rec.update(median_ms=float(np.median(per_image)), min_ms=float(min(per_image)), runs_ms=per_image,
                   median_cpu_ms=float(np.median(cpu)), peak_rss_mb=float(max(rss for _, rss in runs[k])))
        out = runs[k][0][0].logits
        if k != ORT:
            ref = rec.pop("reference")
            rec["max_abs_error_vs_numpy"] = float(np.abs(out - ref).max())
            rec["max_rel_error_vs_numpy"] = float(np.abs(out - ref).max() / (np.abs(ref).max() or 1.0))
            rec["same_top1_as_numpy"] = bool((out.argmax(1) == ref.argmax(1)).all())
            if ort_out is not None:
                rec["max_abs_error_vs_onnxruntime"] = float(np.abs(out - ort_out).max())
                rec["max_rel_error_vs_onnxruntime"] = float(np.abs(out - ort_out).max() / (np.abs(ort_out).max() or 1.0))
                rec["same_top1_as_onnxruntime"] = bool((out.argmax(1) == ort_out.argmax(1)).all())
    if ort_version:
        for mode in MODES:
            row[mode]["ratio_to_onnxruntime"] = row[mode]["median_ms"] / row[ORT]["median_ms"]
            row[mode]["cpu_ratio_to_onnxruntime"] = row[mode]["median_cpu_ms"] / row[ORT]["median_cpu_ms"]
    return row


def table(rows: list[dict], ort_version: str | None) -> list[str]:
    lines = [f"{'network':13} {'onnxruntime':>11} {'precise':>16} {'relaxed':>16} {'imprecise':>16}  "
             f"{'RSS MB ort/p/i':>15}  {'rel err vs ort p/r/i':>24}  {'build s p':>9} {'C lines':>7} {'weights p/i':>13}"]
    for r in rows:
        def cell(mode: str) -> str:
            ratio = r[mode].get("ratio_to_onnxruntime")
            return f"{r[mode]['median_ms']:7.2f}" + (f" ({ratio:4.2f}x)" if ratio is not None else "        ")
        ort = f"{r[ORT]['median_ms']:8.2f} ms" if ORT in r else "    absent"
        rss = (f"{r[ORT]['peak_rss_mb']:.0f}/" if ORT in r else "-/") + \
            f"{r[PRECISE]['peak_rss_mb']:.0f}/{r[IMPRECISE]['peak_rss_mb']:.0f}"
        errs = "/".join(f"{r[m].get('max_rel_error_vs_onnxruntime', float('nan')):.1e}" for m in MODES)
        lines.append(f"{r['network']:13} {ort:>11} {cell(PRECISE):>16} {cell(RELAXED):>16} {cell(IMPRECISE):>16}  "
                     f"{rss:>15}  {errs:>24}  {r[PRECISE]['build_seconds']:9.1f} {r[PRECISE]['source_lines']:7d} "
                     f"{r[PRECISE]['weight_file_bytes'] / 1e6:6.1f}/{r[IMPRECISE]['weight_file_bytes'] / 1e6:.1f}MB")
    lines.append("")
    lines.append(f"{'CPU time':13} {'onnxruntime':>11} {'precise':>16} {'relaxed':>16} {'imprecise':>16}   "
                 "(ms of CPU per image, all threads, during the timed passes: less sensitive to other jobs)")
    for r in rows:
        def cpu(mode: str) -> str:
            ratio = r[mode].get("cpu_ratio_to_onnxruntime")
            return f"{r[mode]['median_cpu_ms']:7.2f}" + (f" ({ratio:4.2f}x)" if ratio is not None else "        ")
        ort = f"{r[ORT]['median_cpu_ms']:8.2f} ms" if ORT in r else "    absent"
        lines.append(f"{r['network']:13} {ort:>11} {cpu(PRECISE):>16} {cpu(RELAXED):>16} {cpu(IMPRECISE):>16}")
    if not ort_version:
        lines.append("onnxruntime is not installed (pip install 'onnxruntime>=1.17,<2'): only the synthesised programs ran")
    return lines


def verdict(rows: list[dict]) -> dict:
    within = [r["network"] for r in rows if r[PRECISE].get("ratio_to_onnxruntime", 99) <= 1.5]
    faster = [(r["network"], m) for r in rows for m in (RELAXED, IMPRECISE) if r[m].get("ratio_to_onnxruntime", 99) < 1.0]
    alex = [r[PRECISE]["build_seconds"] for r in rows if r["network"] == "alexnet"]
    return {"precise_within_1_5x": within, "precise_target_met": len(within) >= 3,
            "inexact_faster_than_onnxruntime": faster, "inexact_target_met": bool(faster),
            "alexnet_build_seconds": max(alex) if alex else None,
            "alexnet_build_target_met": bool(alex) and max(alex) < 60}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default=",".join(networks.PAPER))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vector-width", type=int, default=16, choices=synth.VECTOR_WIDTHS)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--images", type=int, default=2, help="sample images per run (seeded random inputs)")
    ap.add_argument("--precise-no-fma", action="store_true",
                    help="precise mode with separately rounded multiply and add (no fused multiply-add)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    cc = synth.find_compiler()
    if cc is None:
        print("no C compiler (gcc/cc/clang) found: nothing to benchmark", file=sys.stderr)
        return 2
    ort_version = ort_peer.version()
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="capp-vs-ort-") as tmp:
        for name in a.networks.split(","):
            rows.append(bench_network(name.strip(), a, cc, ort_version, Path(tmp)))
            if not a.json:
                print(f"  {name}: done (load average {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    res = {"threads": a.threads, "vector_width": a.vector_width, "precise_fma": not a.precise_no_fma, "repeats": a.repeats, "min_seconds": a.min_seconds,
           "images": a.images, "onnxruntime": ort_version, "compiler": cc,
           "load_average": {"before": load_before, "after": os.getloadavg()[0]}, "cpus": os.cpu_count(),
           "networks": rows, "targets": verdict(rows)}
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"Cappuccino vs onnxruntime {ort_version or '(absent)'}: {a.threads} threads, V={a.vector_width}, median of "
          f"{a.repeats} alternating runs of >= {a.min_seconds} s, {a.images} images (seeded random weights and inputs)"
          + ("; precise without FMA" if a.precise_no_fma else ""))
    print("\n".join(table(rows, ort_version)))
    t = res["targets"]
    print(f"precise within 1.5x of onnxruntime: {', '.join(t['precise_within_1_5x']) or 'none'} "
          f"({'met' if t['precise_target_met'] else 'NOT met'}: 3 of 5 needed)")
    print(f"inexact faster than onnxruntime: {', '.join(f'{n} {m}' for n, m in t['inexact_faster_than_onnxruntime']) or 'none'} "
          f"({'met' if t['inexact_target_met'] else 'NOT met'})")
    if t["alexnet_build_seconds"] is not None:
        print(f"AlexNet program build: {t['alexnet_build_seconds']:.1f} s ({'met' if t['alexnet_build_target_met'] else 'NOT met'}: < 60 s)")
    print(f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs "
          "(a shared machine: other jobs slow both sides; compare the ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
