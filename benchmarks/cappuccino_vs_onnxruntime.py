"""Cappuccino's synthesised programs against onnxruntime on the paper's networks and VGG-16 (issues 17, 35).

Targets (issue 35, idle 2-core machine, same thread count): precise mode within 1.25x of
onnxruntime's latency on every network with 1 and with 2 threads; the best inexact mode faster
than onnxruntime on at least three networks.

Run: nice -n 5 python benchmarks/cappuccino_vs_onnxruntime.py [--networks alexnet,...] [--threads 1,2]
     [--modes precise,relaxed,imprecise,int8] [--vector-width 16] [--repeats 5] [--min-seconds 1.0]
     [--images 2] [--max-load 1.5] [--max-wait 600] [--precise-no-fma] [--json]

What it measures. For every network the same ONNX file (core.cappuccino.networks: the zoo's layers
with seeded random weights) goes through onnxruntime (ort_peer.py: CPU provider,
intra_op_num_threads = the thread count, sequential, default spinning, one image per run) and
through the synthesised program of each mode (every layer in that mode; in int8 mode every layer
that int8 admits, the others precise), built once per thread count. int8's input scales are
calibrated on --calibration-images further seeded inputs, never on the timed ones. Each is its own process; a round runs onnxruntime and every mode once, onnxruntime first
in even rounds and last in odd ones (so a slow drift of the machine affects both sides alike), and
--repeats rounds give each side's median latency per image; each run computes the --images images
in whole passes for at least --min-seconds. Reported per network and thread count: the medians,
the ratio ours / onnxruntime, the CPU time per image (all threads), the peak RSS of each process
(onnxruntime's includes the Python interpreter), the output error against onnxruntime and
against the numpy reference of the mode, the build time, C source lines and weight file size.

Load. Before every round the benchmark looks at the load other processes put on the machine and
waits while it is above --max-load (1.5), for at most --max-wait seconds, then refuses (exit
status 2, nothing reported). It cannot use the 1-minute load average between its own runs, which
counts the benchmark's own programs of the last minute: it samples the runnable tasks
(/proc/stat procs_running, less this process) 20 times over two seconds while nothing of its own
runs, and checks the 1-minute load average once before the first run. Every check is recorded.
The output records the date, the CPU model, core count and cache sizes, the compiler, its version
and flags, and onnxruntime's version and session settings: the README and docs quote only figures
taken this way, with that date and machine.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.machine_load import LoadMeter, load_json, warn_if_busy  # noqa: E402
from core.cappuccino import networks, ort_peer, synth, synth_program  # noqa: E402
from core.cappuccino import inexact  # noqa: E402
from core.cappuccino.forward import ActivationCache, forward_reference  # noqa: E402
from core.cappuccino.numerics import IMPRECISE, INT8, PRECISE, RELAXED  # noqa: E402

MODES = (PRECISE, RELAXED, IMPRECISE, INT8)
INEXACT_MODES = (RELAXED, IMPRECISE, INT8)
ORT = "onnxruntime"
REFUSED = 2


class TooBusy(Exception):
    """The machine stayed busier than --max-load for --max-wait seconds."""


def cpu_model() -> str:
    """The model name with its family and model numbers (a VM may name only the vendor's line)."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if "model name" not in fields:
        return platform.processor() or platform.machine()
    return f"{fields['model name']} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')})"


def cache_sizes() -> dict[str, str]:
    """cpu0's caches as the kernel lists them (level + type -> size)."""
    out = {}
    for d in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            out[f"L{(d / 'level').read_text().strip()} {(d / 'type').read_text().strip()}"] = (d / "size").read_text().strip()
        except OSError:
            continue
    return out


def compiler_version(cc: str) -> str:
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


def others_running(samples: int = 20, interval: float = 0.1) -> float:
    """Mean runnable tasks of other processes (procs_running less this one) over samples x interval s."""
    seen = []
    for _ in range(samples):
        try:
            for line in Path("/proc/stat").read_text().splitlines():
                if line.startswith("procs_running"):
                    seen.append(max(0, int(line.split()[1]) - 1))
        except OSError:
            return os.getloadavg()[0]
        time.sleep(interval)
    return float(np.mean(seen)) if seen else os.getloadavg()[0]


class LoadGate:
    """Waits before a round while others load the machine above `limit`; refuses after `max_wait` s."""

    def __init__(self, limit: float, max_wait: float, quiet: bool) -> None:
        self.limit, self.max_wait, self.quiet = limit, max_wait, quiet
        self.checks: list[dict] = []

    def first(self) -> None:
        """Before anything of ours ran: the 1-minute load average is the others' load."""
        self._wait("1-minute load average", lambda: os.getloadavg()[0])

    def before_round(self, what: str) -> None:
        self._wait(f"runnable tasks of others, before {what}", others_running)

    def _wait(self, what: str, measure) -> None:
        t0 = time.monotonic()
        while True:
            load = measure()
            waited = time.monotonic() - t0
            if load <= self.limit:
                self.checks.append({"what": what, "load": round(load, 2), "waited_s": round(waited, 1)})
                return
            if waited > self.max_wait:
                raise TooBusy(f"{what}: {load:.2f} > {self.limit} for {waited:.0f} s")
            if not self.quiet:
                print(f"  waiting: {what} {load:.2f} > {self.limit}", file=sys.stderr, flush=True)
            time.sleep(10)


def _run_with_rss(cmd: list[str], count: int, name: str) -> tuple[synth.RunResult, float]:
    """Run a program of the programs' protocol; its result and its own peak RSS in MB (the VmHWM it
    prints: a forked child's rusage would include this Python process's memory)."""
    r = synth.run_command(cmd, count, lambda: None, name)
    return r, (r.peak_rss_kb or 0) / 1024


def bench_network(name: str, a: argparse.Namespace, cc: str, ort_version: str | None, work: Path,
                  gate: LoadGate) -> dict:
    t0 = time.perf_counter()
    model = networks.load(name, images=a.images)
    onnx = Path(model.extra["onnx"])
    row: dict = {"network": name, "title": model.network.title, "weights": model.weights_source,
                 "onnx": str(onnx), "onnx_bytes": onnx.stat().st_size, "load_seconds": time.perf_counter() - t0,
                 "threads": {}}
    images = work / f"{name}.f32"
    synth.write_images(images, model.x_val)
    count = len(model.x_val)
    assign = {mode: {op.name: mode for op in model.conv_ops} for mode in a.modes if mode != INT8}
    if INT8 in a.modes:
        assign[INT8] = int8_assignment(model, a.calibration_images)
        row["int8_layers"] = sum(m == INT8 for m in assign[INT8].values())
        row["float_layers_in_int8_mode"] = len(assign[INT8]) - row["int8_layers"]
    refs = {mode: forward_reference(model, model.x_val, assign[mode])[0] for mode in a.modes}
    for threads in a.threads:
        row["threads"][str(threads)] = _bench_threads(name, model, a, cc, ort_version, work, gate, images, count,
                                                      threads, refs, onnx, assign)
    return row


def int8_assignment(model, calibration_images: int) -> dict[str, str]:
    """int8 on every layer calibrate_int8 admits (dense, input after a ReLU), precise elsewhere; the
    scales come from seeded inputs other than the timed ones (seed 1000 + the zoo's)."""
    rng = np.random.default_rng(1000)
    calib = rng.standard_normal((max(1, calibration_images),) + model.x_val.shape[1:]).astype(np.float32)
    ok = set(inexact.calibrate_int8(model, ActivationCache(model, calib)))
    return {op.name: (INT8 if op.name in ok else PRECISE) for op in model.conv_ops}


def _bench_threads(name: str, model, a: argparse.Namespace, cc: str, ort_version: str | None, work: Path,
                   gate: LoadGate, images: Path, count: int, threads: int, refs: dict, onnx: Path,
                   assign: dict[str, dict[str, str]]) -> dict:
    row: dict = {}
    cmds: dict[str, list[str]] = {}
    for mode in a.modes:
        modes = assign[mode]
        t1 = time.perf_counter()
        prog = synth.synthesise_program(model, modes, a.vector_width, threads, precise_fma=not a.precise_no_fma)
        synth_s = time.perf_counter() - t1
        stem = f"{name}_{mode}_t{threads}"
        src, wts, exe = work / f"{stem}.c", work / f"{stem}.bin", work / stem
        src.write_text(prog.source)
        wts.write_bytes(prog.weights)
        build = synth.compile_c(cc, src, exe, True, lambda: None)
        blocks = sorted({f"{op.rq}x{op.rp}{' flat' if op.flat else ''}" for op in prog.plan.ops if op.kind == "conv"})
        row[mode] = {"synthesis_seconds": synth_s, "build_seconds": build, "source_lines": prog.source_lines,
                     "source_bytes": len(prog.source.encode()), "weight_file_bytes": len(prog.weights),
                     "conv_blocks": blocks}
        cmds[mode] = [str(exe), str(wts), str(images), str(count), str(a.min_seconds), str(threads)]
    if ort_version:
        cmds[ORT] = ort_peer.command(onnx, images, count, a.min_seconds, threads)
    runs: dict[str, list[tuple[synth.RunResult, float]]] = {k: [] for k in cmds}
    ours = list(a.modes)
    for rep in range(a.repeats):
        gate.before_round(f"{name}, {threads} threads, round {rep + 1}")
        order = ([ORT] if ort_version else []) + ours if rep % 2 == 0 else ours + ([ORT] if ort_version else [])
        for k in order:
            runs[k].append(_run_with_rss(cmds[k], count, f"{name} {k}"))
    ort_out = runs[ORT][0][0].logits if ort_version else None
    for k in cmds:
        per_image = [1e3 * r.seconds_per_pass / count for r, _ in runs[k]]
        cpu = [1e3 * (r.cpu_seconds or float("nan")) / (r.passes * count) for r, _ in runs[k]]
        rec = row.setdefault(k, {})
        rec.update(median_ms=float(np.median(per_image)), min_ms=float(min(per_image)), runs_ms=per_image,
                   median_cpu_ms=float(np.median(cpu)), peak_rss_mb=float(max(rss for _, rss in runs[k])))
        out = runs[k][0][0].logits
        if k != ORT:
            assert out is not None, f"{name} {k} printed no logits"
            ref = refs[k]
            rec["max_abs_error_vs_numpy"] = float(np.abs(out - ref).max())
            rec["max_rel_error_vs_numpy"] = float(np.abs(out - ref).max() / (np.abs(ref).max() or 1.0))
            rec["same_top1_as_numpy"] = bool((out.argmax(1) == ref.argmax(1)).all())
            if ort_out is not None:
                rec["max_abs_error_vs_onnxruntime"] = float(np.abs(out - ort_out).max())
                rec["max_rel_error_vs_onnxruntime"] = float(np.abs(out - ort_out).max() / (np.abs(ort_out).max() or 1.0))
                rec["same_top1_as_onnxruntime"] = bool((out.argmax(1) == ort_out.argmax(1)).all())
    if ort_version:
        for mode in a.modes:
            row[mode]["ratio_to_onnxruntime"] = row[mode]["median_ms"] / row[ORT]["median_ms"]
            row[mode]["cpu_ratio_to_onnxruntime"] = row[mode]["median_cpu_ms"] / row[ORT]["median_cpu_ms"]
    return row


def table(rows: list[dict], a: argparse.Namespace, ort_version: str | None) -> list[str]:
    head = f"{'network':13} {'thr':>3} {'onnxruntime':>11} " + " ".join(f"{m:>17}" for m in a.modes)
    lines = [head + f"  {'rel err vs ort (! top-1 differs)':>22}  {'build s':>7} {'C lines':>7} {'blocks (precise)'}"]
    for r in rows:
        for thr, t in r["threads"].items():
            def cell(mode: str, t: dict = t) -> str:
                ratio = t[mode].get("ratio_to_onnxruntime")
                return f"{t[mode]['median_ms']:8.2f}" + (f" ({ratio:4.2f}x)" if ratio is not None else "        ")
            ort = f"{t[ORT]['median_ms']:8.2f} ms" if ORT in t else "    absent"
            errs = "/".join(f"{t[m].get('max_rel_error_vs_onnxruntime', float('nan')):.1e}"
                            + ("" if t[m].get("same_top1_as_onnxruntime", True) else "!") for m in a.modes)
            first = a.modes[0]
            lines.append(f"{r['network']:13} {thr:>3} {ort:>11} " + " ".join(f"{cell(m):>17}" for m in a.modes)
                         + f"  {errs:>22}  {t[first]['build_seconds']:7.1f} {t[first]['source_lines']:7d} "
                         f"{','.join(t[first]['conv_blocks'])}")
    if not ort_version:
        lines.append("onnxruntime is not installed (pip install 'onnxruntime>=1.17,<2'): only the synthesised programs ran")
    return lines


def verdict(rows: list[dict], modes: tuple[str, ...]) -> dict:
    ratios = {(r["network"], thr): t for r in rows for thr, t in r["threads"].items()}
    precise = {f"{n} {thr} threads": t[PRECISE].get("ratio_to_onnxruntime") for (n, thr), t in ratios.items()
               if PRECISE in t}
    inexact = [m for m in INEXACT_MODES if m in modes]
    faster = sorted({n for (n, _), t in ratios.items()
                     if any(t[m].get("ratio_to_onnxruntime", 99) < 1.0 and t[m].get("same_top1_as_onnxruntime")
                            for m in inexact)})
    return {"precise_ratio": precise,
            "precise_within_1_25x": all(v is not None and v <= 1.25 for v in precise.values()) and bool(precise),
            "inexact_faster_than_onnxruntime": faster, "inexact_target_met": len(faster) >= 3}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default=",".join(networks.BENCHMARK),
                    help="comma-separated zoo names (default: the paper's five and VGG-16)")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated (each side uses the same)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--vector-width", type=int, default=16, choices=synth.VECTOR_WIDTHS)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--images", type=int, default=2, help="sample images per run (seeded random inputs)")
    ap.add_argument("--calibration-images", type=int, default=4,
                    help="seeded inputs (not the timed ones) that calibrate int8's input scales")
    ap.add_argument("--max-load", type=float, default=1.5, help="wait while others' load is above this")
    ap.add_argument("--max-wait", type=float, default=600.0, help="seconds to wait for the load before refusing")
    ap.add_argument("--precise-no-fma", action="store_true",
                    help="precise mode with separately rounded multiply and add (no fused multiply-add)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    a.threads = [int(t) for t in a.threads.split(",")]
    a.modes = tuple(m.strip() for m in a.modes.split(","))
    if any(m not in MODES for m in a.modes) or any(t < 1 for t in a.threads):
        print(f"--modes takes {', '.join(MODES)}; --threads positive integers", file=sys.stderr)
        return REFUSED
    unknown = [n for n in a.networks.split(",") if n.strip() not in networks.zoo.names()]
    if unknown:
        print(f"--networks: unknown {', '.join(unknown)}; the zoo has {', '.join(networks.zoo.names())}", file=sys.stderr)
        return REFUSED
    cc = synth.find_compiler()
    if cc is None:
        print("no C compiler (gcc/cc/clang) found: nothing to benchmark", file=sys.stderr)
        return REFUSED
    ort_version = ort_peer.version()
    gate = LoadGate(a.max_load, a.max_wait, a.json)
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    try:
        gate.first()
        meter = LoadMeter()         # other work while the two sides were timed, kept beside the figures
        with tempfile.TemporaryDirectory(prefix="capp-vs-ort-") as tmp:
            for name in a.networks.split(","):
                rows.append(bench_network(name.strip(), a, cc, ort_version, Path(tmp), gate))
                if not a.json:
                    print(f"  {name}: done", file=sys.stderr, flush=True)
    except TooBusy as exc:
        print(f"refused: the machine is busy ({exc}); rerun when it is idle", file=sys.stderr)
        return REFUSED
    load = meter.stop()
    res = {"date": started.isoformat(timespec="seconds"),
           "machine": {"cpu": cpu_model(), "cpus": os.cpu_count(), "caches": cache_sizes(),
                       "vector_registers": synth_program.vector_registers()},
           "compiler": {"path": cc, "version": compiler_version(cc),
                        "flags": [*synth.CFLAGS, "-fopenmp", "-ffp-contract=off"]},
           "onnxruntime": {"version": ort_version, "session": {t: ort_peer.settings(t) for t in a.threads}},
           "threads": a.threads, "modes": list(a.modes), "vector_width": a.vector_width,
           "precise_fma": not a.precise_no_fma, "repeats": a.repeats, "min_seconds": a.min_seconds,
           "images": a.images, "load": {"max_load": a.max_load, "checks": gate.checks,
                                        "load_average_after": os.getloadavg()[0]},
           "networks": rows, "targets": verdict(rows, a.modes), **load_json(load)}
    warn_if_busy(load)
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"Cappuccino vs onnxruntime {ort_version or '(absent)'} on {res['machine']['cpu']} "
          f"({res['machine']['cpus']} CPUs), {res['date']}; {res['compiler']['version']} "
          f"{' '.join(res['compiler']['flags'])}; V={a.vector_width}; median of {a.repeats} alternating rounds "
          f"of >= {a.min_seconds} s, {a.images} images (seeded random weights and inputs)"
          + ("; precise without FMA" if a.precise_no_fma else ""))
    print("\n".join(table(rows, a, ort_version)))
    if ort_version and PRECISE in a.modes:
        print("precise / onnxruntime (median latency, same thread count):")
        for key, ratio in res["targets"]["precise_ratio"].items():
            print(f"  {key:28} {ratio:.2f}")
        t = res["targets"]
        print(f"precise within 1.25x everywhere: {'met' if t['precise_within_1_25x'] else 'NOT met'}; "
              f"inexact faster than onnxruntime on: {', '.join(t['inexact_faster_than_onnxruntime']) or 'none'} "
              f"({'met' if t['inexact_target_met'] else 'NOT met'}: 3 needed)")
    worst = max((c["load"] for c in gate.checks), default=0.0)
    print(f"load: at most {worst:.2f} runnable tasks of others before a round (limit {a.max_load}); "
          f"1-minute load average {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
