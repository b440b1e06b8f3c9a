"""The paper's five networks at full size: the engine's numpy reference against onnxruntime.

For AlexNet, SqueezeNet 1.1, GoogLeNet, ResNet-18 and MobileNet v1 (zoo layer tables exported to
ONNX with seeded random weights, core.cappuccino.networks): op counts and kinds, the largest
difference between the numpy reference forward (core.cappuccino.forward) and onnxruntime on the
same ONNX file and the same sample images, both for the logits (the tensor before the final
softmax) and the probabilities, whether the top-1 classes agree, and whether the map-major
computation matches the reference (check_layouts, V = 4). Times of both, alternating, medians,
are printed for orientation only (numpy is a reference, not a contender; the synthesised
program's timings are benchmarks/cappuccino_vs_onnxruntime.py).

onnxruntime is the peer: pass its Python with --ort-python if it is not importable here; when it
is absent the benchmark says so and still runs the numpy side.

Run: .venv/bin/python benchmarks/cappuccino_networks.py [--images 4] [--networks alexnet,resnet18] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.machine_load import LoadMeter, load_json, warn_if_busy  # noqa: E402
from core.cappuccino import networks  # noqa: E402
from core.cappuccino.forward import check_layouts, forward_reference  # noqa: E402


def ort_session(path: str, threads: int):
    try:
        import onnx
        import onnxruntime as ort
    except ImportError:
        return None, None
    m = onnx.load(path)
    softmax_in = m.graph.node[-1].input[0]
    m.graph.output.append(onnx.helper.make_empty_tensor_value_info(softmax_in))     # logits as a second output
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"]), ort.__version__


def measure(name: str, images: int, threads: int, repeats: int) -> dict:
    t0 = time.perf_counter()
    model = networks.load(name, images)
    load_s = time.perf_counter() - t0
    x = model.x_val
    row: dict = {"network": name, "ops": len(model.ops), "kinds": sorted({op.kind for op in model.ops}),
                 "gmacs": sum(op.macs for op in model.conv_ops) / 1e9,
                 "mparams": sum(op.weight.size + op.bias.size for op in model.conv_ops) / 1e6,
                 "weights": model.weights_source, "images": images, "load_s": load_s,
                 "onnx_mb": Path(model.extra["onnx"]).stat().st_size / 2 ** 20}
    sess, version = ort_session(model.extra["onnx"], threads)
    np_times, ort_times = [], []
    probs, logits_all = None, None
    ref_probs, ref_logits = [], []
    for rep in range(repeats):              # alternate numpy and onnxruntime
        t = time.perf_counter()
        probs, outs = forward_reference(model, x, keep=True)
        np_times.append((time.perf_counter() - t) / images)
        logits_all = outs[-2].reshape(images, -1)
        if sess is not None:
            t = time.perf_counter()
            got = [sess.run(None, {"input": xi[None]}) for xi in x]
            ort_times.append((time.perf_counter() - t) / images)
            if rep == 0:
                ref_probs = [g[0].reshape(-1) for g in got]
                ref_logits = [g[1].reshape(-1) for g in got]
    row["numpy_ms_per_image"] = 1e3 * statistics.median(np_times)
    if sess is None:
        row["onnxruntime"] = "absent (pip install onnxruntime into this Python)"
    else:
        rp, rl = np.stack(ref_probs), np.stack(ref_logits)
        scale = float(np.abs(rl).max())
        row.update(onnxruntime=version, ort_ms_per_image=1e3 * statistics.median(ort_times),
                   max_abs_logit_diff=float(np.abs(logits_all - rl).max()), logit_scale=scale,
                   max_rel_logit_diff=float(np.abs(logits_all - rl).max()) / max(scale, 1e-30),
                   max_abs_prob_diff=float(np.abs(probs - rp).max()),
                   same_top1=bool((probs.argmax(1) == rp.argmax(1)).all()))
    t = time.perf_counter()
    lc = check_layouts(model, x[:2], 4)
    row.update(layout_ok=lc.ok, layout_max_rel_diff=max(lc.max_abs_diff.values()), layout_s=time.perf_counter() - t)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--networks", default=",".join(networks.PAPER))
    ap.add_argument("--images", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads (default 2)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    meter = LoadMeter()         # numpy and onnxruntime are timed: what else ran is kept beside
    rows = [measure(n, a.images, a.threads, a.repeats) for n in a.networks.split(",")]
    load = meter.stop()
    warn_if_busy(load)
    if a.json:
        print(json.dumps({"networks": rows, **load_json(load)}, indent=1))
        return 0
    print(f"cache: {networks.cache_dir()}; {a.images} seeded random images; onnxruntime {rows[0].get('onnxruntime')}")
    print(f"{'network':14} {'ops':>4} {'GMACs':>6} {'Mparam':>7} {'ONNX MB':>8} {'max |dlogit|':>12} {'rel':>8} "
          f"{'max |dprob|':>11} {'top1':>5} {'layout':>6} {'numpy ms':>9} {'ORT ms':>7}")
    for r in rows:
        ort_ok = "max_abs_logit_diff" in r
        print(f"{r['network']:14} {r['ops']:4d} {r['gmacs']:6.3f} {r['mparams']:7.3f} {r['onnx_mb']:8.1f} "
              + (f"{r['max_abs_logit_diff']:12.2e} {r['max_rel_logit_diff']:8.1e} {r['max_abs_prob_diff']:11.2e} "
                 f"{str(r['same_top1']):>5} " if ort_ok else f"{'(onnxruntime absent)':>45} ")
              + f"{str(r['layout_ok']):>6} {r['numpy_ms_per_image']:9.1f} "
              + (f"{r['ort_ms_per_image']:7.1f}" if ort_ok else ""))
        print(f"{'':14} kinds: {', '.join(r['kinds'])}; weights {r['weights']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
