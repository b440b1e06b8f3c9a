"""C generated from the MERIT transforms against the naive loop nest and the direct numpy computation.

For every built-in transform kind at a working size (a VGG-like layer rather than the 16x16 toy the
engine verifies on): generate the C (core.merit.codegen_c), compile it once (gcc -O3 -march=native
-fopenmp), check every kernel against numpy in float64 on the same float32 inputs, then time in
alternating rounds, all in this process (the C built as a shared library and called with ctypes): each
round takes one sample of naive, tiled, packed, rows and of the direct numpy reference on float32 data,
in turn (in a fresh random order every round), a sample being at least 1 ms of repeated calls. Medians over the rounds; OMP_NUM_THREADS and
numpy's BLAS threads both set to --threads (default 2), OMP_WAIT_POLICY=PASSIVE so that neither
thread pool spins while the other works (see main).

    python benchmarks/merit_codegen.py [--rounds 7] [--threads 2] [--only gemm,conv3x3] [--json]

The machine this was written on has 2 cores shared with other users: medians and ratios, not
absolute times, are the figures to read, and even they move with the load.
"""

from __future__ import annotations

import os

# Before numpy loads OpenBLAS: its threads spin for up to 2^28 cycles after each call (its default
# timeout) and took the second core from the kernels' woken OpenMP thread, which then started only
# after the first had done all the work (2-thread GEMM 2.29 ms, as with 1 thread; with OpenBLAS's
# threads sleeping after 2^4 cycles, like libgomp's under PASSIVE, 1.27-1.39 ms, BLAS's own time
# unchanged: measured here at load 1.2). An OPENBLAS_THREAD_TIMEOUT already set is kept.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import argparse  # noqa: E402
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.merit import codegen_c as CG  # noqa: E402
from core.merit_transform import workloads as W  # noqa: E402
from core.merit.codegen_run import TOLERANCE, compile_c, max_rel_error, stage_inputs  # noqa: E402
from core.merit.evaluate import evaluate  # noqa: E402
from core.merit_transform.transform import MeritTransform  # noqa: E402


@dataclass
class Case:
    name: str
    size: str
    stages: list[MeritTransform]
    tile: dict[str, int]
    make: Callable[[np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[[dict[str, np.ndarray]], Any]
    conv: bool = False              # a convolution transform: the target is to beat numpy
    gemm: bool = False


def _conv_case(name: str, size: str, t: MeritTransform, tile: dict[str, int], stride: int = 1,
               dilation: int = 1, pad: int = 0, residual: bool = False) -> Case:
    def make(r: np.random.Generator) -> dict[str, np.ndarray]:
        d = {op.name: r.standard_normal(op.shape) for op in t.operands}
        return d

    def ref(d: dict[str, np.ndarray]) -> Any:
        wname = t.operands[1].name
        out = W.conv_ref(d[t.operands[0].name], d[wname], stride, dilation, pad)
        if residual:
            out = out + d["R"]
        if t.strategy == "relu":
            out = np.maximum(out, 0)
        return out
    return Case(name, size, [t], tile, make, ref, conv=True)


def cases() -> list[Case]:
    out = []
    g = W.gemm(512, 512, 512)
    out.append(Case("gemm", "512x512x512", [g], {"m": 16, "n": 64, "k": 64},
                    lambda r: {"A": r.standard_normal((512, 512)), "B": r.standard_normal((512, 512))},
                    lambda d: d["A"] @ d["B"], gemm=True))
    out.append(_conv_case("conv3x3", "64->64, 56x56, pad 1", W.conv(64, 56, 56, 64, 3, pad=1, name="conv3x3"),
                          {"oc": 8, "y": 4, "x": 56}, pad=1))
    out.append(_conv_case("conv5x5", "32->32, 64x64, pad 2", W.conv(32, 64, 64, 32, 5, pad=2, name="conv5x5"),
                          {"oc": 8, "y": 4, "x": 64}, pad=2))
    a1 = W.alexnet_conv1()
    c = _conv_case("alexnet-conv1", "eq. 6: 48 maps, 55x55, 11x11 stride 4", a1, {"p1": 4, "p2": 8, "p3": 55})
    c.reference = lambda d: np.maximum(W.conv_ref(d["I"], d["k"], stride=4, pad=5)[:, :55, :55], 0)
    out.append(c)
    out.append(_conv_case("dilated", "32->32, 64x64, dilation 2",
                          W.conv(32, 64, 64, 32, 3, dilation=2, pad=2, name="dilated"),
                          {"oc": 8, "y": 4, "x": 64}, dilation=2, pad=2))
    out.append(_conv_case("strided", "64->64, 56x56, stride 2", W.conv(64, 56, 56, 64, 3, stride=2, pad=1,
                                                                       name="strided"),
                          {"oc": 8, "y": 4, "x": 28}, stride=2, pad=1))
    out.append(_conv_case("residual", "64->64, 28x28 + R", W.conv(64, 28, 28, 64, 3, pad=1, strategy="residual",
                                                                   name="residual"),
                          {"oc": 8, "y": 4, "x": 28}, pad=1, residual=True))
    dw = W.depthwise(64, 112, 112)
    out.append(Case("depthwise", "64 channels, 112x112, 3x3", [dw], {"c": 1, "y": 8, "x": 112},
                    lambda r: {"I": r.standard_normal((64, 112, 112)), "W": r.standard_normal((64, 3, 3))},
                    lambda d: W.depthwise_ref(d["I"], d["W"], 1, 1), conv=True))
    cr = W.correlation(64, 48, 48, 4)
    out.append(Case("correlation", "64 channels, 48x48, +-4", [cr], {"p1": 1, "p2": 48, "p3": 1, "p4": 9},
                    lambda r: {"I1": r.standard_normal((64, 48, 48)), "I2": r.standard_normal((64, 48, 48))},
                    lambda d: W.correlation_ref(d["I1"], d["I2"], 4), conv=True))
    me = W.motion_estimation(256, 256, 8, 4)

    def me_data(r: np.random.Generator) -> dict[str, np.ndarray]:
        ref = r.integers(0, 256, (256, 256)).astype(float)
        return {"cur": np.roll(ref, (2, -3), axis=(0, 1)), "ref": ref}
    out.append(Case("motion", "256x256, 8x8 blocks, +-4", [me], {"by": 1, "bx": 1, "dy": 9, "dx": 9}, me_data,
                    lambda d: W.motion_ref(d["cur"], d["ref"], 8, 4)))
    bl = W.bilateral(512, 512, 5)
    out.append(Case("bilateral", "512x512, 5x5", [bl], {"y": 4, "x": 64},
                    lambda r: {"img": r.random((512, 512)), "gs": W._gauss(5, 2.0)},
                    lambda d: W.bilateral_ref(d["img"], d["gs"], 0.1)))
    sep = W.separable_stages(1024, 1024, 5)
    out.append(Case("separable", "1024x1024, 5 taps (2 passes)", sep, {"y": 4, "x": 128},
                    lambda r: {"img": r.standard_normal((1024, 1024)), "kh": W._gauss(5, 1.0),
                               "kv": np.array([1., 4, 6, 4, 1]) / 16},
                    lambda d: W.separable_ref(d["img"], d["kh"], d["kv"])))
    ps = W.pixel_shuffle(64, 128, 128, 2)
    out.append(Case("pixel-shuffle", "256 -> 64 channels, 128x128 x2", [ps],
                    {"c": 1, "y": 4, "i": 2, "x": 128, "j": 2},
                    lambda r: {"I": r.standard_normal((256, 128, 128))}, lambda d: W.pixel_shuffle_ref(d["I"], 2)))
    return out


def blas_threads(n: int) -> tuple[Any, str]:
    """Limit numpy's BLAS to n threads (threadpoolctl, installed with scikit-learn); returns the
    context and a description of the BLAS."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return None, "threadpoolctl missing: BLAS threads not set"
    info = [f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads by default)"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    return threadpool_limits(n, user_api="blas"), ", ".join(info) or "no BLAS found"


def _load(source: str, work: Path, stem: str) -> tuple[Any, float, str]:
    """The generated C built as a shared library (same flags + -shared -fPIC), loaded with ctypes, so
    its kernels and numpy are timed in one process, sample by sample in turn (a separate process
    would be scheduled differently on a loaded machine)."""
    import ctypes

    b = compile_c(source, work, stem, CG.FLAGS + ["-shared", "-fPIC"])
    if not b.ok:
        return None, b.seconds, b.message
    return ctypes.CDLL(str(work / stem)), b.seconds, ""


def _timer(fn: Callable[[], Any]) -> Callable[[], float]:
    """A sampler: seconds per call, each sample at least 1 ms of repeated calls after one untimed call
    (for calls under 5 ms), the count fixed from
    the fastest of three calls, so that a cold first call does not give one kernel fewer repetitions,
    and so a larger share of cold starts, than another)."""
    dt = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        dt = min(dt, time.perf_counter() - t0)
    reps = 1 if dt > 1e-3 else int(1e-3 / max(dt, 1e-7)) + 1
    warm = dt < 5e-3

    def sample() -> float:
        if warm:        # one call untimed: the sample measures the kernel, not what ran before it
            fn()
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t) / reps
    return sample


def run_case(case: Case, rounds: int, threads: int, work: Path) -> dict[str, Any]:
    import ctypes

    data = case.make(np.random.default_rng(0))
    for st in case.stages:
        data[st.name] = evaluate(st, data)
    d32 = {k: np.asarray(v, dtype=np.float32) for k, v in data.items()}
    calls: dict[str, list[Callable[[], Any]]] = {}
    outs: dict[str, list[np.ndarray]] = {}
    refs = []
    compile_s = 0.0
    variants: list[str] = []
    for st in case.stages:
        prog = CG.c_program(st, {k: v for k, v in case.tile.items() if k in dict(st.indices)})
        lib, secs, msg = _load(prog.source, work, f"lib{CG._ident(case.name)}_{CG._ident(st.name)}.so")
        compile_s += secs
        if lib is None:
            return {"workload": case.name, "error": msg}
        s32, ref = stage_inputs(st, data)
        refs.append(ref)
        ins = CG.padded_inputs(st, s32)
        ptrs = [a.ctypes.data_as(ctypes.c_void_p) for a in ins]
        # every kernel of a stage writes into one timing buffer: where an array lies (on huge pages or
        # not, numpy asks for them) changes a memory-bound kernel's time by 30 %, which would be
        # charged to whichever kernel got the unlucky array; each kernel's own output is checked once
        timing_out = np.zeros(prog.out_size, dtype=np.float32)
        for k in prog.kernels:
            out = np.zeros(prog.out_size, dtype=np.float32)
            fn = getattr(lib, k.name)
            fn.restype = None
            fn(*ptrs, out.ctypes.data_as(ctypes.c_void_p))
            args = ptrs + [timing_out.ctypes.data_as(ctypes.c_void_p)]
            calls.setdefault(k.variant, []).append(lambda fn=fn, args=args, keep=(ins, timing_out): fn(*args))
            outs.setdefault(k.variant, []).append(out)
            if k.variant not in variants:
                variants.append(k.variant)
    variants = [v for v in variants if len(calls[v]) == len(case.stages)]     # every stage has it
    errors = {v: max(max_rel_error(o, r) for o, r in zip(outs[v], refs)) for v in variants}
    samplers = {v: _timer(lambda v=v: [c() for c in calls[v]]) for v in variants}
    samplers["numpy"] = _timer(lambda: case.reference(d32))
    samples: dict[str, list[float]] = {k: [] for k in samplers}
    keys = list(samplers)
    order = np.random.default_rng(1)
    for _ in range(rounds):
        # C kernels and numpy, one sample each in turn, in a fresh order every round: a kernel's time
        # depends on what ran just before it (numpy's megabytes of temporaries evict its inputs)
        for i in order.permutation(len(keys)):
            samples[keys[i]].append(samplers[keys[i]]())
    med = {k: float(np.median(v)) for k, v in samples.items()}
    fast = [v for v in variants if v != "naive"]
    best = min(fast, key=lambda v: med[v])
    macs = sum(st.p_count * st.a_count for st in case.stages)
    row: dict[str, Any] = {
        "workload": case.name, "size": case.size, "tile": case.tile, "macs": macs, "variants": variants,
        "median_s": med, "min_s": {k: float(np.min(v)) for k, v in samples.items()}, "best": best,
        "c_s": med[best], "speedup_vs_naive": med["naive"] / med[best], "speedup_vs_numpy": med["numpy"] / med[best],
        "max_rel_error": max(errors.values()), "errors": errors,
        "verified": all(e < TOLERANCE for e in errors.values()), "compile_s": round(compile_s, 2),
        "convolution": case.conv, "gemm": case.gemm,
    }
    if case.gemm:
        row["gflops"] = {k: 2 * macs / v / 1e9 for k, v in med.items()}
        row["fraction_of_blas"] = med["numpy"] / med[best]
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    # before libgomp loads. The kernels' threads and numpy's BLAS share the process and take turns,
    # so neither pool may spin on the cores while the other works (OMP_WAIT_POLICY=PASSIVE: libgomp's
    # threads sleep at the end of a region). Measured on this 2-core machine at load 3: with libgomp
    # spinning 100000 iterations instead, the threaded rows kernels of depthwise, separable and pixel
    # shuffle took 1.6-4.8 ms instead of 0.24-1.3 (OpenBLAS's threads spin between its calls too);
    # PASSIVE costs a woken thread per region (rows kernels below 2^22 steps gain nothing from it).
    # An OMP_WAIT_POLICY already set is kept.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    chosen = [c for c in cases() if not args.only or c.name in args.only.split(",")]
    load_before = os.getloadavg()[0]
    limit, blas = blas_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="merit-codegen-bench-"))
    rows = []
    try:
        for case in chosen:
            rows.append(run_case(case, args.rounds, args.threads, work))
            if not args.json:
                print(_line(rows[-1]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if limit is not None:
            limit.restore_original_limits()

    meta = {"threads": args.threads, "rounds": args.rounds, "blas": blas, "flags": CG.FLAGS,
            "omp_wait": {k: os.environ[k] for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_THREAD_TIMEOUT")
                         if k in os.environ},
            "load_average": list(os.getloadavg()), "load_average_at_start": load_before, "cpus": os.cpu_count(),
            "error_measure": "max |C - numpy_float64| / max |numpy_float64| on the same float32 inputs"}
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, indent=1))
    else:
        print(f"threads {args.threads} (OpenMP and BLAS: {blas}); medians of {args.rounds} alternating rounds; "
              f"load average {load_before:.1f} at the start, {meta['load_average'][0]:.1f} at the end, on {meta['cpus']} CPUs")
    return 0 if all(r.get("verified") for r in rows) else 1


HEADER = (f"{'workload':14s} {'size':34s} {'naive ms':>9s} {'tiled ms':>9s} {'packed ms':>9s} {'rows ms':>9s} {'numpy ms':>9s} "
          f"{'best':>6s} {'x naive':>8s} {'x numpy':>8s} {'max rel err':>11s}")


def _line(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{r['workload']:14s} error: {r['error']}"
    m = r["median_s"]

    def ms(k: str) -> str:
        return f"{m[k] * 1e3:9.3f}" if k in m else f"{'-':>9s}"
    extra = f"  ({r['gflops'][r['best']]:.0f} GFLOP/s, BLAS {r['gflops']['numpy']:.0f})" if r.get("gemm") else ""
    return (f"{r['workload']:14s} {r['size'][:34]:34s} {ms('naive')} {ms('tiled')} {ms('packed')} {ms('rows')} {ms('numpy')} "
            f"{r['best']:>6s} {r['speedup_vs_naive']:8.2f} {r['speedup_vs_numpy']:8.2f} {r['max_rel_error']:11.2e}"
            + extra)


if __name__ == "__main__":
    if "--json" not in sys.argv:
        print(HEADER)
    sys.exit(main())
