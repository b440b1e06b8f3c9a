"""C generated from the MERIT transforms against the naive loop nest, the direct numpy computation and
onnxruntime (the CPU peer a user would pick: its MLAS convolution and GEMM, issue 31).

For every built-in transform kind at a working size (a VGG-like layer rather than the 16x16 toy the
engine verifies on): generate the C (core.merit.codegen_c), compile it once (gcc -O3 -march=native
-fopenmp), check every kernel against numpy in float64 on the same float32 inputs, then time in
alternating rounds, all in this process (the C built as a shared library and called with ctypes): each
round takes one sample of naive, tiled, packed, rows, of the direct numpy reference on float32 data
and of onnxruntime (Conv, Conv+Add, Conv+Relu or MatMul on the same data, CPU provider, --threads
intra-op threads, no spinning), in turn (in a fresh random order every round), a sample being at least 1 ms of repeated calls. Medians over the rounds; OMP_NUM_THREADS and
numpy's BLAS threads both set to --threads (default 2), OMP_WAIT_POLICY=PASSIVE so that neither
thread pool spins while the other works (see main).

    python benchmarks/merit_codegen.py [--rounds 7] [--threads 2] [--only gemm,conv3x3] [--json]
    python benchmarks/merit_codegen.py --layers vgg16,resnet50 [--rounds 5]

--layers times the conv layers of zoo networks (one case per distinct shape, no tile given: the
generator chooses it from this CPU's caches), checks them on a sample of outputs, and prints per
network the total time against onnxruntime's (C/ort: our time over its; target at most 1.5x) and the
slowest generate + compile + sampled check (target under 30 s a layer).

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

from core.machine_load import LoadMeter, load_json, warn_if_busy  # noqa: E402
from core.merit import codegen_c as CG  # noqa: E402
from core.merit_transform import workloads as W  # noqa: E402
from core.merit.codegen_run import (NAIVE_MAX_WORK, TOLERANCE, CheckValues, check_values, compile_c,  # noqa: E402
                                    max_rel_error)
from core.merit.evaluate import evaluate  # noqa: E402
from core.merit_transform.transform import MeritTransform  # noqa: E402


@dataclass
class Case:
    name: str
    size: str
    stages: list[MeritTransform]
    tile: dict[str, int]
    make: Callable[[np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[[dict[str, np.ndarray]], Any] | None
    conv: bool = False              # a convolution transform: the target is to beat numpy
    gemm: bool = False
    # the CPU peer a user would pick instead: an ONNX model (bytes) and its feeds, from the float32 data
    ort: Callable[[dict[str, np.ndarray]], tuple[bytes, dict[str, np.ndarray]]] | None = None
    layer: bool = False             # a network's layer (--layers): checked on a sample, no numpy timing


# ---------------------------------------------------------------- onnxruntime, the CPU peer
def ort_conv(x: str, w: str, stride: int = 1, dilation: int = 1, pads: tuple[int, int, int, int] = (0, 0, 0, 0),
             group: int = 1, relu: bool = False, residual: str | None = None, w_shape: tuple[int, ...] | None = None
             ) -> Callable[[dict[str, np.ndarray]], tuple[bytes, dict[str, np.ndarray]]]:
    """An ONNX Conv (+ Add of a residual, + Relu) on the case's operands: input `x` (C, H, W) fed as
    (1, C, H, W), the weights `w` as an initializer (onnxruntime may prepack them, as a user gets)."""
    def build(d: dict[str, np.ndarray]) -> tuple[bytes, dict[str, np.ndarray]]:
        from onnx import TensorProto, helper, numpy_helper

        X = d[x][None].astype(np.float32)
        Wt = np.ascontiguousarray(d[w].reshape(w_shape) if w_shape else d[w], dtype=np.float32)
        # pads: top, left, bottom, right -> ONNX's (x1_begin, x2_begin, x1_end, x2_end)
        nodes = [helper.make_node("Conv", ["X", "W"], ["Y0"], strides=[stride, stride],
                                  dilations=[dilation, dilation], pads=list(pads), group=group)]
        inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(X.shape))]
        feeds = {"X": X}
        out = "Y0"
        if residual:
            nodes.append(helper.make_node("Add", ["Y0", "R"], ["Y1"]))
            R = d[residual][None].astype(np.float32)
            inputs.append(helper.make_tensor_value_info("R", TensorProto.FLOAT, list(R.shape)))
            feeds["R"] = R
            out = "Y1"
        if relu:
            nodes.append(helper.make_node("Relu", [out], ["Y2"]))
            out = "Y2"
        graph = helper.make_graph(nodes, "merit_peer", inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
                                  initializer=[numpy_helper.from_array(Wt, "W")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = min(model.ir_version, 8)
        return model.SerializeToString(), feeds
    return build


def ort_matmul(a: str, b: str) -> Callable[[dict[str, np.ndarray]], tuple[bytes, dict[str, np.ndarray]]]:
    """C = A B as an ONNX MatMul, both operands fed (as the GEMM transform takes both)."""
    def build(d: dict[str, np.ndarray]) -> tuple[bytes, dict[str, np.ndarray]]:
        from onnx import TensorProto, helper

        A, B = d[a].astype(np.float32), d[b].astype(np.float32)
        graph = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["C"])], "merit_peer",
                                  [helper.make_tensor_value_info("A", TensorProto.FLOAT, list(A.shape)),
                                   helper.make_tensor_value_info("B", TensorProto.FLOAT, list(B.shape))],
                                  [helper.make_tensor_value_info("C", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = min(model.ir_version, 8)
        return model.SerializeToString(), {"A": A, "B": B}
    return build


ORT_SETTINGS = {"provider": "CPUExecutionProvider", "intra_op_num_threads": "--threads", "inter_op_num_threads": 1,
                "execution_mode": "ORT_SEQUENTIAL", "graph_optimization_level": "ORT_ENABLE_ALL",
                "session.intra_op.allow_spinning": "0 (its threads sleep between runs, as libgomp's under PASSIVE "
                                                   "and OpenBLAS's with OPENBLAS_THREAD_TIMEOUT=4)"}


def ort_session(model: bytes, threads: int) -> Any:
    """onnxruntime's CPU session with `threads` intra-op threads; None when it is not installed."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # spinning threads would take the cores from the generated kernels' sleeping OpenMP threads between
    # the alternating samples (as OpenBLAS's did, see the GEMM note in docs/merit.md)
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


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
    peer = ort_conv(t.operands[0].name, t.operands[1].name, stride, dilation, (pad, pad, pad, pad),
                    relu=t.strategy == "relu", residual="R" if residual else None)
    return Case(name, size, [t], tile, make, ref, conv=True, ort=peer)


def cases() -> list[Case]:
    out = []
    g = W.gemm(512, 512, 512)
    out.append(Case("gemm", "512x512x512", [g], {"m": 16, "n": 64, "k": 64},
                    lambda r: {"A": r.standard_normal((512, 512)), "B": r.standard_normal((512, 512))},
                    lambda d: d["A"] @ d["B"], gemm=True, ort=ort_matmul("A", "B")))
    out.append(_conv_case("conv3x3", "64->64, 56x56, pad 1", W.conv(64, 56, 56, 64, 3, pad=1, name="conv3x3"),
                          {"oc": 8, "y": 4, "x": 56}, pad=1))
    out.append(_conv_case("conv5x5", "32->32, 64x64, pad 2", W.conv(32, 64, 64, 32, 5, pad=2, name="conv5x5"),
                          {"oc": 8, "y": 4, "x": 64}, pad=2))
    a1 = W.alexnet_conv1()
    c = _conv_case("alexnet-conv1", "eq. 6: 48 maps, 55x55, 11x11 stride 4", a1, {"p1": 4, "p2": 8, "p3": 55})
    c.reference = lambda d: np.maximum(W.conv_ref(d["I"], d["k"], stride=4, pad=5)[:, :55, :55], 0)
    c.ort = ort_conv("I", "k", stride=4, pads=(5, 5, 0, 0), relu=True)     # (224 + 5 - 11) / 4 + 1 = 55
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
                    lambda d: W.depthwise_ref(d["I"], d["W"], 1, 1), conv=True,
                    ort=ort_conv("I", "W", pads=(1, 1, 1, 1), group=64, w_shape=(64, 1, 3, 3))))
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


def _load(source: str, work: Path, stem: str, extra: list[str] | None = None) -> tuple[Any, float, str]:
    """The generated C built as a shared library (same flags + -shared -fPIC), loaded with ctypes, so
    its kernels and numpy are timed in one process, sample by sample in turn (a separate process
    would be scheduled differently on a loaded machine)."""
    import ctypes

    b = compile_c(source, work, stem, CG.FLAGS + ["-shared", "-fPIC"] + (extra or []))
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


def layer_cases(nets: list[str]) -> list[Case]:
    """The convolution layers of zoo networks (batch 1), one case per distinct shape (the count in its
    size), no tile given: the generator chooses it from this CPU's caches. Checked on a sample of
    outputs (core.merit.sample) against numpy in float64; timed against onnxruntime, not numpy (whose
    direct convolution takes seconds a layer)."""
    from core.nets import zoo
    from sims import meritz as Z

    out: list[Case] = []
    seen: dict[tuple[Any, ...], Case] = {}
    for net in nets:
        for layer in zoo.get(net).convs:
            if layer.fc:
                continue
            key = (net, layer.in_ch, layer.in_h, layer.in_w, layer.out_ch, layer.k_h, layer.k_w, layer.stride,
                   layer.pad, layer.groups, layer.dilation)
            if key in seen:
                count = int(seen[key].size.rsplit("(x", 1)[1].rstrip(")")) + 1
                seen[key].size = seen[key].size.rsplit(" (x", 1)[0] + f" (x{count})"
                continue
            t = dict(Z.network_transforms(zoo.get(net)))[layer.name]
            size = (f"{layer.in_ch}->{layer.out_ch}, {layer.in_h}x{layer.in_w}, {layer.k_h}x{layer.k_w}"
                    + (f" s{layer.stride}" if layer.stride > 1 else "") + " (x1)")

            def make(r: np.random.Generator, t: MeritTransform = t) -> dict[str, np.ndarray]:
                return {op.name: r.standard_normal(op.shape) for op in t.operands}
            c = Case(f"{net}/{layer.name}", size, [t], {}, make, None, conv=True, layer=True,
                     ort=ort_conv("I", "W", layer.stride, layer.dilation, (layer.pad,) * 4, layer.groups))
            seen[key] = c
            out.append(c)
    return out


def run_case(case: Case, rounds: int, threads: int, work: Path, ab_fast: bool = False) -> dict[str, Any]:
    """One case; with `ab_fast` the packed kernel also built with -DMERIT_FAST=0 (M(B) always packed,
    scalar stores: before issue 31) and timed in the same alternation as "packed0"."""
    import ctypes

    t_start = time.perf_counter()
    data = case.make(np.random.default_rng(0))
    for st in case.stages[:-1]:                       # a chain's intermediate results feed the next stage
        data[st.name] = evaluate(st, data)
    d32 = {k: np.asarray(v, dtype=np.float32) for k, v in data.items()}
    calls: dict[str, list[Callable[[], Any]]] = {}
    outs: dict[str, list[np.ndarray]] = {}
    checks: list[CheckValues] = []
    compile_s = 0.0
    variants: list[str] = []
    notes = []
    for st in case.stages:
        prog = CG.c_program(st, {k: v for k, v in case.tile.items() if k in dict(st.indices)},
                            naive=st.p_count * st.a_count <= NAIVE_MAX_WORK)
        if prog.tile_note:
            notes.append(prog.tile_note)
        lib, secs, msg = _load(prog.source, work, f"lib{CG._ident(case.name)}_{CG._ident(st.name)}.so")
        compile_s += secs
        if lib is None:
            return {"workload": case.name, "error": msg}
        cv = check_values(st, data, None, prog.tile, seed=0)      # every output, or a sample of a large one
        checks.append(cv)
        ins = CG.padded_inputs(st, cv.d32)
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
            outs.setdefault(k.variant, []).append(cv.pick(out))
            if k.variant not in variants:
                variants.append(k.variant)
        if ab_fast and any(k.variant == "packed" for k in prog.kernels):
            lib0, secs0, msg0 = _load(prog.source, work, f"lib{CG._ident(case.name)}_{CG._ident(st.name)}_0.so",
                                      ["-DMERIT_FAST=0"])
            if lib0 is None:
                return {"workload": case.name, "error": msg0}
            k = next(k for k in prog.kernels if k.variant == "packed")
            fn0 = getattr(lib0, k.name)
            fn0.restype = None
            out0 = np.zeros(prog.out_size, dtype=np.float32)
            fn0(*ptrs, out0.ctypes.data_as(ctypes.c_void_p))
            args0 = ptrs + [timing_out.ctypes.data_as(ctypes.c_void_p)]
            calls.setdefault("packed0", []).append(lambda fn=fn0, args=args0, keep=(ins, timing_out): fn(*args))
            outs.setdefault("packed0", []).append(cv.pick(out0))
            if "packed0" not in variants:
                variants.append("packed0")
    prep_s = time.perf_counter() - t_start        # generate, compile, one call of each kernel, checked
    variants = [v for v in variants if len(calls[v]) == len(case.stages)]     # every stage has it
    errors = {v: max(max_rel_error(o, cv.ref) for o, cv in zip(outs[v], checks)) for v in variants}
    samplers = {v: _timer(lambda v=v: [c() for c in calls[v]]) for v in variants}
    if case.reference is not None and not case.layer:
        samplers["numpy"] = _timer(lambda: case.reference(d32))
    ort_error = None
    if case.ort is not None:
        model, feeds = case.ort(d32)
        sess = ort_session(model, threads)
        if sess is not None:
            got = np.asarray(sess.run(None, feeds)[0]).reshape(-1)
            ort_error = max_rel_error(checks[-1].pick(got), checks[-1].ref)
            samplers["onnxruntime"] = _timer(lambda: sess.run(None, feeds))
    samples: dict[str, list[float]] = {k: [] for k in samplers}
    keys = list(samplers)
    order = np.random.default_rng(1)
    for _ in range(rounds):
        # C kernels, numpy and onnxruntime, one sample each in turn, in a fresh order every round: a
        # kernel's time depends on what ran just before it (numpy's temporaries evict its inputs)
        for i in order.permutation(len(keys)):
            samples[keys[i]].append(samplers[keys[i]]())
    med = {k: float(np.median(v)) for k, v in samples.items()}
    fast = [v for v in variants if v not in ("naive", "packed0")]
    best = min(fast, key=lambda v: med[v])
    macs = sum(st.p_count * st.a_count for st in case.stages)
    row: dict[str, Any] = {
        "workload": case.name, "size": case.size, "tile": case.tile, "macs": macs, "variants": variants,
        "median_s": med, "min_s": {k: float(np.min(v)) for k, v in samples.items()}, "best": best,
        "c_s": med[best],
        "speedup_vs_naive": med["naive"] / med[best] if "naive" in med else None,
        "speedup_vs_numpy": med["numpy"] / med[best] if "numpy" in med else None,
        "time_vs_onnxruntime": med[best] / med["onnxruntime"] if "onnxruntime" in med else None,
        "max_rel_error": max(errors.values()), "errors": errors, "onnxruntime_rel_error": ort_error,
        "checked": "; ".join(cv.sample for cv in checks), "tile_note": "; ".join(notes),
        "verified": all(e < TOLERANCE for e in errors.values()), "compile_s": round(compile_s, 2),
        "prepare_and_verify_s": round(prep_s, 2), "convolution": case.conv, "gemm": case.gemm,
        "gflops": {k: 2 * macs / v / 1e9 for k, v in med.items()},
    }
    if case.gemm:
        row["fraction_of_blas"] = med["numpy"] / med[best]
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--layers", default="", help="instead of the built-ins, the conv layers of zoo networks, "
                                                 "e.g. vgg16,resnet50 (one case per distinct shape)")
    ap.add_argument("--ab-fast", action="store_true",
                    help="also time the packed kernel built with -DMERIT_FAST=0 (no run-time fast paths; the "
                         "generator's orientation, row pitch and stride phases kept) as packed0")
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
    pool = layer_cases([n for n in args.layers.split(",") if n]) if args.layers else cases()
    chosen = [c for c in pool if not args.only or c.name in args.only.split(",")]
    load_before = os.getloadavg()[0]
    limit, blas = blas_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="merit-codegen-bench-"))
    rows = []
    if not args.json:
        print(HEADER)
    meter = LoadMeter()         # the C, numpy and onnxruntime are timed: what else ran is kept beside
    try:
        for case in chosen:
            rows.append(run_case(case, args.rounds, args.threads, work, args.ab_fast))
            if not args.json:
                print(_line(rows[-1]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if limit is not None:
            limit.restore_original_limits()

    load = meter.stop()
    try:
        import onnxruntime
        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = None
    meta = {"threads": args.threads, "rounds": args.rounds, "blas": blas, "flags": CG.FLAGS,
            "omp_wait": {k: os.environ[k] for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_THREAD_TIMEOUT")
                         if k in os.environ},
            "onnxruntime": ort_version, "onnxruntime_settings": ORT_SETTINGS,
            "load_average": list(os.getloadavg()), "load_average_at_start": load_before, "cpus": os.cpu_count(),
            "error_measure": "max |C - numpy_float64| / max |numpy_float64| on the same float32 inputs "
                             "(large transforms: on a sample of outputs, see 'checked')", **load_json(load)}
    warn_if_busy(load)
    summary = network_summary(rows) if args.layers else {}
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows, "networks": summary}, indent=1))
    else:
        for net, s in summary.items():
            print(f"{net}: {s['layers']} conv layers ({s['shapes']} shapes), generated C {s['c_ms']:.1f} ms against "
                  f"onnxruntime {s['ort_ms']:.1f} ms in all: {s['ratio']:.2f}x its time (target <= 1.5x); "
                  f"layers within 1.5x: {s['within_1_5']}/{s['shapes']}; slowest generate+compile+verify "
                  f"{s['max_prepare_s']:.1f} s (target < 30 s)")
        print(f"threads {args.threads} (OpenMP, BLAS: {blas}; onnxruntime {ort_version} intra-op, no spinning); "
              f"medians of {args.rounds} alternating rounds; load average {load_before:.1f} at the start, "
              f"{meta['load_average'][0]:.1f} at the end, on {meta['cpus']} CPUs")
    return 0 if all(r.get("verified") for r in rows) else 1


def network_summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per network: the conv layers' total time (each shape times its count), ours against onnxruntime."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        if "error" in r or "onnxruntime" not in r["median_s"]:
            continue
        net = r["workload"].split("/")[0]
        count = int(r["size"].rsplit("(x", 1)[1].rstrip(")"))
        s = out.setdefault(net, {"layers": 0, "shapes": 0, "c_ms": 0.0, "ort_ms": 0.0, "within_1_5": 0,
                                 "max_prepare_s": 0.0})
        s["layers"] += count
        s["shapes"] += 1
        s["c_ms"] += count * r["c_s"] * 1e3
        s["ort_ms"] += count * r["median_s"]["onnxruntime"] * 1e3
        s["within_1_5"] += int(r["time_vs_onnxruntime"] <= 1.5)
        s["max_prepare_s"] = max(s["max_prepare_s"], r["prepare_and_verify_s"])
    for s in out.values():
        s["ratio"] = s["c_ms"] / s["ort_ms"] if s["ort_ms"] else float("nan")
    return out


HEADER = (f"{'workload':22s} {'size':30s} {'naive ms':>9s} {'tiled ms':>9s} {'packed ms':>9s} {'rows ms':>9s} "
          f"{'numpy ms':>9s} {'ort ms':>9s} {'best':>6s} {'x naive':>8s} {'x numpy':>8s} {'C/ort':>6s} "
          f"{'max rel err':>11s} {'prep s':>6s}")


def _line(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{r['workload']:22s} error: {r['error']}"
    m = r["median_s"]

    def ms(k: str) -> str:
        return f"{m[k] * 1e3:9.3f}" if k in m else f"{'-':>9s}"

    def x(v: float | None, w: int = 8) -> str:
        return f"{v:{w}.2f}" if v is not None else f"{'-':>{w}s}"
    g = r["gflops"]
    extra = f"  ({g[r['best']]:.0f} GFLOP/s" + "".join(f", {k} {g[k]:.0f}" for k in ("numpy", "onnxruntime") if k in g) + ")"
    if "packed0" in m:
        extra += f"  packed / packed0 (MERIT_FAST=0) {m['packed'] / m['packed0']:.2f}"
    return (f"{r['workload'][:22]:22s} {r['size'][:30]:30s} {ms('naive')} {ms('tiled')} {ms('packed')} {ms('rows')} "
            f"{ms('numpy')} {ms('onnxruntime')} {r['best']:>6s} {x(r['speedup_vs_naive'])} {x(r['speedup_vs_numpy'])} "
            f"{x(r['time_vs_onnxruntime'], 6)} {r['max_rel_error']:11.2e} {r['prepare_and_verify_s']:6.1f}" + extra)


if __name__ == "__main__":
    sys.exit(main())
