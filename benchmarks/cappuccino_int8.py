"""int8 mode against precise on single convolution layers of AlexNet, ResNet-18 and VGG-16 size
(issue 35, bullet 2): the per-op wall time of the convolution (--profile) in the synthesised
program, precise and int8 runs alternating, medians and their ratio.

Each network is [max pooling 1x1 (makes the input a computed, non-negative tensor, as after a
ReLU), the convolution]; only the convolution's time is compared. Load is reported, not gated:
ratios taken under load are what the helpers measure; the lead reruns idle.

    python benchmarks/cappuccino_int8.py [--threads 2] [--rounds 5] [--min-seconds 0.3] [--layers NAME ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.cappuccino import inexact, synth  # noqa: E402
from core.cappuccino.forward import ActivationCache, forward_reference  # noqa: E402
from core.cappuccino.graph_import import layer_table  # noqa: E402
from core.cappuccino.model import CnnModel, ConvOp, Op, PoolOp  # noqa: E402
from core.cappuccino.numerics import INT8, PRECISE  # noqa: E402

# name: (input maps, height = width, output maps, kernel, stride, pad)
LAYERS: dict[str, tuple[int, int, int, int, int, int]] = {
    "alexnet_conv2": (96, 27, 256, 5, 1, 2),
    "alexnet_conv3": (256, 13, 384, 3, 1, 1),
    "resnet18_layer1": (64, 56, 64, 3, 1, 1),
    "resnet18_layer2_down": (64, 56, 128, 3, 2, 1),
    "resnet18_layer4": (512, 7, 512, 3, 1, 1),
    "vgg16_conv3_2": (256, 56, 256, 3, 1, 1),
    "vgg16_conv5_1": (512, 14, 512, 3, 1, 1),
}


def layer_model(name: str) -> CnnModel:
    c, hw, m, k, stride, pad = LAYERS[name]
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((m, c, k, k)) * np.sqrt(2.0 / (c * k * k))).astype(np.float32)
    b = (0.1 * rng.standard_normal(m)).astype(np.float32)
    ops: list[Op] = [PoolOp("feed", 1, 1, 0, "max", False, (c, hw, hw), inputs=["input"]),
                     ConvOp("conv", w, b, stride, pad, True, (c, hw, hw), inputs=["feed"])]
    x = np.maximum(rng.standard_normal((1, c, hw, hw)), 0).astype(np.float32)
    net = layer_table(name, (c, hw, hw), ops, "seeded random weights")
    return CnnModel(name, net, ops, x, np.zeros(1, np.int64), extra={"weights": "random (seed 0)"})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5, help="alternating precise / int8 runs per layer")
    p.add_argument("--min-seconds", type=float, default=0.3)
    p.add_argument("--vector-width", type=int, default=16)
    p.add_argument("--layers", nargs="*", default=list(LAYERS), choices=list(LAYERS))
    a = p.parse_args(argv)
    cc = synth.find_compiler()
    if cc is None:
        print("no C compiler")
        return 2
    print(f"# {platform.processor() or platform.machine()}, {cc} {' '.join(synth.CFLAGS)}, V={a.vector_width}, "
          f"{a.threads} threads, load average {os.getloadavg()[0]:.2f} at start")
    print("| layer | GMAC | precise conv ms (median) | int8 conv ms (median) | int8 / precise | max rel. diff to precise |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in a.layers:
            model = layer_model(name)
            inexact.calibrate_int8(model, ActivationCache(model, model.x_val))
            synth.write_images(tmp / "x.f32", model.x_val)
            exes = {}
            for mode in (PRECISE, INT8):
                prog = synth.synthesise_program(model, {"conv": mode}, a.vector_width, a.threads)
                src, exe, w = tmp / f"{name}_{mode}.c", tmp / f"{name}_{mode}", tmp / f"{name}_{mode}.bin"
                src.write_text(prog.source)
                w.write_bytes(prog.weights)
                synth.compile_c(cc, src, exe, True, lambda: None)
                exes[mode] = (exe, w)
            times: dict[str, list[float]] = {PRECISE: [], INT8: []}
            logits: dict[str, np.ndarray] = {}
            for _ in range(a.rounds):
                for mode in (PRECISE, INT8):
                    exe, w = exes[mode]
                    rr = synth.run_program(exe, tmp / "x.f32", 1, a.min_seconds, lambda: None, weights=w,
                                           threads=a.threads, profile=True)
                    assert rr.op_microseconds is not None
                    times[mode].append(rr.op_microseconds["conv"] / 1e3)
                    assert rr.logits is not None
                    logits[mode] = rr.logits
            ref = forward_reference(model, model.x_val, {"conv": INT8})[0]
            got = np.asarray(logits[INT8], np.float32)         # printed with 9 digits: float32 round trip
            assert np.array_equal(got, ref.reshape(got.shape)), f"{name}: the int8 program differs from its emulation"
            rel = float(np.abs(logits[INT8] - logits[PRECISE]).max() / np.abs(logits[PRECISE]).max())
            op = model.conv_ops[0]
            tp, ti = statistics.median(times[PRECISE]), statistics.median(times[INT8])
            print(f"| {name} | {op.macs / 1e9:.3f} | {tp:.2f} | {ti:.2f} | {ti / tp:.2f} | {rel:.2e} |", flush=True)
    print(f"# load average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
