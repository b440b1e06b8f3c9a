"""onnxruntime as the peer of the synthesised program: the same ONNX file on the same images with
the same thread count (CPU execution provider, intra_op_num_threads = threads, inter-op 1).

It runs as its own process (`python core/cappuccino/ort_peer.py MODEL.onnx images.f32 COUNT
MIN_SECONDS THREADS`; it imports nothing from the project) and prints what a synthesised program prints (`pred`, one `logit` line per
image, `passes N seconds S`), so the engine and the benchmark time, check and measure the peak
memory (RSS) of both alike. onnxruntime is optional (a test/benchmark dependency): `version()` says
whether it is installed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np


def version() -> str | None:
    """The installed onnxruntime version, or None."""
    try:
        import onnxruntime
    except ImportError:
        return None
    return str(onnxruntime.__version__)


def command(onnx_path: Path, images: Path, count: int, min_seconds: float, threads: int) -> list[str]:
    """The command line that runs the peer (for synth.run_checked / the benchmark)."""
    return [sys.executable, str(Path(__file__).resolve()), str(onnx_path), str(images), str(count),
            str(min_seconds), str(threads)]


def settings(threads: int) -> dict[str, object]:
    """The session options the peer runs with (what a benchmark records next to its timings): the CPU
    provider, `threads` intra-op threads, sequential execution, onnxruntime's default graph
    optimisation (all) and its default intra-op spinning (worker threads spin while waiting: fastest
    on an idle machine, and they starve a loaded one)."""
    return {"provider": "CPUExecutionProvider", "intra_op_num_threads": threads, "inter_op_num_threads": 1,
            "execution_mode": "ORT_SEQUENTIAL", "graph_optimization_level": "ORT_ENABLE_ALL (default)",
            "session.intra_op.allow_spinning": "1 (default)", "one image per run": True}


def session(onnx_path: Path, threads: int):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print("usage: python ort_peer.py MODEL.onnx images.f32 COUNT MIN_SECONDS THREADS",
              file=sys.stderr)
        return 2
    path, images, count, min_seconds, threads = Path(argv[0]), Path(argv[1]), int(argv[2]), float(argv[3]), int(argv[4])
    s = session(path, threads)
    inp = s.get_inputs()[0]
    shape = tuple(int(d) for d in inp.shape[1:])
    x = np.fromfile(images, np.float32)
    if x.size != count * int(np.prod(shape)):
        print(f"{images}: {x.size} floats, expected {count} images of {shape}", file=sys.stderr)
        return 2
    x = x.reshape((count, 1) + shape)
    outs = [np.asarray(s.run(None, {inp.name: x[b]})[0], np.float32).reshape(-1) for b in range(count)]
    print("pred " + " ".join(str(int(o.argmax())) for o in outs))
    for o in outs:
        print("logit " + " ".join(f"{v:.9g}" for v in o.tolist()))
    passes, t0, c0 = 0, time.perf_counter(), time.process_time()
    t = t0
    while True:                     # whole passes over the images until min_seconds, as the C programs do
        for b in range(count):
            s.run(None, {inp.name: x[b]})
        passes += 1
        t = time.perf_counter()
        if t - t0 >= min_seconds:
            break
    print(f"passes {passes} seconds {t - t0:.9f}")
    print(f"cpu_seconds {time.process_time() - c0:.9f}")
    print(f"peak_rss_kb {peak_rss_kb()}")
    return 0


def peak_rss_kb() -> int:
    """VmHWM of this process (Linux; 0 elsewhere): what the C programs print too."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
