"""C code synthesis: the Cappuccino program for a configuration, a naive baseline, and building and
running both.

The synthesised program (synth_program.py: plan and tables; synth_kernels.c: the kernel library;
weights_file.py: the weight file it loads at start-up) computes the DAG with OLP threads over
map-major frames and per-op precise / relaxed / imprecise arithmetic. The baseline is the textbook
six-loop convolution over row-major data with runtime layer sizes and bounds checks for padding,
single threaded, float32, for chains of convolutions and pooling (weights as C literals, so it is
only built for small models).

Programs read `count` images (float32, NCHW row-major) from a file, compute them once (printing
`pred ...` and one `logit ...` line per image: the network output), then repeat the whole set until
`min_seconds` of compute have elapsed and print `passes N seconds S`; only the passes are timed.
With `--profile` the synthesised program also prints `op NAME KIND T us` per op (mean per image).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.ccompiler import find_compiler
from core.cappuccino import synth_program
from core.cappuccino.model import CnnModel, ConvOp, PoolOp
from core.cappuccino.synth_program import VECTOR_WIDTHS, Program

__all__ = ["VECTOR_WIDTHS", "Program"]

BASELINE_MAX_WEIGHTS = 2_000_000     # the baseline embeds weights as C literals (~24 bytes of C each)
CFLAGS = ["-O3", "-march=native", "-std=gnu11"]


# ------------------------------------------------------------------ helpers
def c_floats(values: np.ndarray, per_line: int = 6) -> str:
    """Exact hexadecimal float literals (every float32 and binary16 value round-trips)."""
    flat = np.asarray(values, np.float32).reshape(-1)
    items = [float(v).hex() + "f" if v != 0 else "0.0f" for v in flat.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "{\n  " + ",\n  ".join(lines) + "\n}" if lines else "{0}"


# ------------------------------------------------------------------ synthesised program
def synthesise_program(model: CnnModel, modes: dict[str, str], V: int, threads: int,
                       precise_fma: bool = True, half_frames: bool = False,
                       shared: Sequence[bool] | None = None) -> Program:
    """The Cappuccino program for one configuration: C source (kernel library + the model's tables)
    and the binary weight file it reads at start-up (see synth_program.py and weights_file.py)."""
    if V not in VECTOR_WIDTHS:
        raise ValueError(f"vector width {V} not in {VECTOR_WIDTHS}")
    return synth_program.synthesise(model, modes, V, threads, precise_fma, half_frames, shared)


# ------------------------------------------------------------------ naive baseline
def baseline_problem(model: CnnModel) -> str | None:
    """Why the naive baseline is not built for this model (None: it is)."""
    if not model.is_chain or not all(isinstance(op, (ConvOp, PoolOp)) and getattr(op, "groups", 1) == 1
                                     and getattr(op, "pads", None) is None and not getattr(op, "count_include_pad", False)
                                     for op in model.ops):
        return "the naive baseline covers chains of dense convolutions, fc and pooling only"
    n = sum(op.weight.size for op in model.conv_ops)
    if n > BASELINE_MAX_WEIGHTS:
        return f"the naive baseline embeds weights as C literals; {n:,} weights are more than {BASELINE_MAX_WEIGHTS:,}"
    return None


def synthesise_baseline(model: CnnModel) -> str:
    """Single-threaded, row-major, runtime-sized loops with bounds checks: the reference C code."""
    decls, table = [], []
    max_size = int(np.prod(model.input_shape))
    for i, op in enumerate(model.ops):
        c, h, w = op.in_shape
        m, oh, ow = op.out_shape
        max_size = max(max_size, m * oh * ow)
        if isinstance(op, ConvOp):
            _, n, kh, kw = op.weight.shape
            decls.append(f"static const float W{i}[{op.weight.size}] = {c_floats(op.weight)};\n"
                         f"static const float B{i}[{op.bias.size}] = {c_floats(op.bias)};\n")
            table.append(f"  {{0, {n}, {h}, {w}, {m}, {oh}, {ow}, {kh}, {kw}, {op.stride}, {op.pad}, {int(op.relu)}, 0, W{i}, B{i}}},")
        else:
            assert isinstance(op, PoolOp)       # baseline_problem admits only convolutions and pooling
            table.append(f"  {{1, {c}, {h}, {w}, {m}, {oh}, {ow}, {op.k}, {op.k}, {op.stride}, {op.pad}, 0, "
                         f"{int(op.mode == 'avg')}, 0, 0}},")
    c_in, h_in, w_in = model.input_shape
    return (f"/* Naive single-threaded baseline for {model.name}: row-major float32, six nested loops.\n"
            "   build: gcc -O3 -march=native -std=gnu11 baseline.c -o baseline -lm */\n"
            "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n\n"
            "typedef struct { int kind, N, H, W, M, OH, OW, KH, KW, stride, pad, relu, avg; const float *w, *b; } layer_t;\n"
            + "".join(decls)
            + f"static const layer_t layers[{len(model.ops)}] = {{\n" + "\n".join(table) + "\n};\n"
            f"#define NOUT {int(np.prod(model.ops[-1].out_shape))}\n"
            f"static float bufA[{max_size}], bufB[{max_size}];\n" + _BASELINE_BODY.replace("{NL}", str(len(model.ops)))
            .replace("{IMG}", str(c_in * h_in * w_in)).replace("{MAIN}", _MAIN.replace("{IMG}", str(c_in * h_in * w_in))))


_BASELINE_BODY = r"""
static void conv(const layer_t *L, const float *in, float *out) {
  for (int m = 0; m < L->M; ++m)
    for (int r = 0; r < L->OH; ++r)
      for (int c = 0; c < L->OW; ++c) {
        float acc = 0.0f;
        for (int n = 0; n < L->N; ++n)
          for (int i = 0; i < L->KH; ++i)
            for (int j = 0; j < L->KW; ++j) {
              int y = r * L->stride - L->pad + i, x = c * L->stride - L->pad + j;
              if (y >= 0 && y < L->H && x >= 0 && x < L->W)
                acc += in[(n * L->H + y) * L->W + x] * L->w[((m * L->N + n) * L->KH + i) * L->KW + j];
            }
        acc += L->b[m];
        if (L->relu && acc < 0.0f) acc = 0.0f;
        out[(m * L->OH + r) * L->OW + c] = acc;
      }
}

static void pool(const layer_t *L, const float *in, float *out) {
  for (int m = 0; m < L->M; ++m)
    for (int r = 0; r < L->OH; ++r)
      for (int c = 0; c < L->OW; ++c) {
        float acc = L->avg ? 0.0f : -3.4e38f; int cnt = 0;
        for (int i = 0; i < L->KH; ++i)
          for (int j = 0; j < L->KW; ++j) {
            int y = r * L->stride - L->pad + i, x = c * L->stride - L->pad + j;
            if (y >= 0 && y < L->H && x >= 0 && x < L->W) {
              float v = in[(m * L->H + y) * L->W + x];
              if (L->avg) acc += v; else if (v > acc) acc = v;
              ++cnt;
            }
          }
        out[(m * L->OH + r) * L->OW + c] = L->avg ? acc / (float)cnt : acc;
      }
}

static float *record_logits;   /* set during the first pass only, to check the values */
static void run_pass(const float *images, int count, int *pred) {
  for (int b = 0; b < count; ++b) {
    const float *in = images + (size_t)b * {IMG};
    float *out = bufA;
    for (int k = 0; k < {NL}; ++k) {
      const layer_t *L = &layers[k];
      if (L->kind == 0) conv(L, in, out); else pool(L, in, out);
      in = out; out = (out == bufA) ? bufB : bufA;
    }
    const layer_t *last = &layers[{NL} - 1];
    int best = 0, total = last->M * last->OH * last->OW;
    if (record_logits) memcpy(record_logits + (size_t)b * NOUT, in, sizeof(float) * total);
    for (int k = 1; k < total; ++k) if (in[k] > in[best]) best = k;
    pred[b] = best;
  }
}
{MAIN}
"""


_MAIN = r"""
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s images.f32 count min_seconds\n", argv[0]); return 2; }
  const int count = atoi(argv[2]);
  const double min_seconds = atof(argv[3]);
  float *images = malloc(sizeof(float) * (size_t)count * {IMG});
  int *pred = malloc(sizeof(int) * (size_t)count);
  FILE *f = fopen(argv[1], "rb");
  if (!f || fread(images, sizeof(float), (size_t)count * {IMG}, f) != (size_t)count * {IMG}) {
    fprintf(stderr, "cannot read %d images from %s\n", count, argv[1]); return 2;
  }
  fclose(f);
  record_logits = malloc(sizeof(float) * (size_t)count * NOUT);
  run_pass(images, count, pred);
  printf("pred");
  for (int b = 0; b < count; ++b) printf(" %d", pred[b]);
  printf("\n");
  for (int b = 0; b < count; ++b) {
    printf("logit");
    for (int k = 0; k < NOUT; ++k) printf(" %.9g", record_logits[(size_t)b * NOUT + k]);
    printf("\n");
  }
  free(record_logits);
  record_logits = 0;
  int passes = 0;
  double t0 = now(), t = t0;
  do { run_pass(images, count, pred); ++passes; t = now(); } while (t - t0 < min_seconds);
  printf("passes %d seconds %.9f\n", passes, t - t0);
  free(images); free(pred);
  return 0;
}
"""


# ------------------------------------------------------------------ build and run
@dataclass
class RunResult:
    predictions: list[int]
    passes: int
    seconds: float
    logits: np.ndarray | None = None    # (count, outputs) from the first pass
    op_microseconds: dict[str, float] | None = None     # with profile: mean per image, per op
    peak_rss_kb: int | None = None      # the program's own peak resident memory (VmHWM), when it says
    cpu_seconds: float | None = None    # CPU time of all its threads during the timed passes
    op_list: list[float] | None = None  # with profile: wall µs per image of every op, in the program's order
    op_cpu_list: list[float] | None = None  # with profile: worker 0's CPU µs per image of every op, the same order

    @property
    def seconds_per_pass(self) -> float:
        return self.seconds / self.passes


def find_compiler_noting() -> tuple[str | None, str]:
    """The compiler and, when $CC names one that is not found, a note saying what is used instead
    (so a misspelt CC does not silently time programs built by another compiler)."""
    cc = find_compiler()
    wanted = os.environ.get("CC")
    if wanted and not shutil.which(wanted):
        return cc, f"CC={wanted!r} is not an executable on PATH; using {cc or 'no compiler'} instead"
    return cc, ""


def compile_c(cc: str, source: Path, exe: Path, openmp: bool, check: Callable[[], None]) -> float:
    """Build with the flags of every program here; returns the build time in seconds. The synthesised
    programs (openmp) are built with -ffp-contract=off: only relaxed/imprecise kernels use FMA, explicitly."""
    flags = CFLAGS + (["-fopenmp", "-ffp-contract=off"] if openmp else [])
    t0 = time.perf_counter()
    run_checked([cc, *flags, str(source), "-o", str(exe), "-lm"], check, f"compiling {source.name}")
    return time.perf_counter() - t0


def run_program(exe: Path, images: Path, count: int, min_seconds: float, check: Callable[[], None],
                weights: Path | None = None, threads: int | None = None, profile: bool = False,
                alone: Sequence[int] = ()) -> RunResult:
    """Run a program (the synthesised ones take their weight file first) and parse what it prints.
    `alone`: op indices worker 0 runs in one chunk whatever the program's table says (sharing.py)."""
    args = [str(exe)] + ([str(weights)] if weights is not None else []) + [str(images), str(count), str(min_seconds)]
    if weights is not None and threads is not None:
        args.append(str(threads))
    if profile:
        args.append("--profile")
    if alone:
        args += ["--alone", ",".join(str(i) for i in alone)]
    return run_command(args, count, check, exe.name)


def run_command(args: list[str], count: int, check: Callable[[], None], name: str) -> RunResult:
    """Run any program that prints the programs' protocol (also the onnxruntime peer) and parse it."""
    return parse_output(run_checked(args, check, f"running {name}"), count, name)


def parse_output(out: str, count: int, name: str) -> RunResult:
    """`pred ...`, `logit ...` per image, `passes N seconds S` and, with --profile, `op ...` lines."""
    pred, passes, seconds, rss, cpu = None, None, None, None, None
    logits = []
    ops: dict[str, float] = {}
    op_list: list[float] = []
    op_cpu: list[float] = []
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "pred":
            pred = [int(p) for p in parts[1:]]
        elif parts and parts[0] == "logit":
            logits.append([float(p) for p in parts[1:]])
        elif parts and parts[0] == "passes":
            passes, seconds = int(parts[1]), float(parts[3])
        elif parts and parts[0] == "op" and len(parts) >= 5:
            ops[parts[1]] = float(parts[3])
            op_list.append(float(parts[3]))
            if len(parts) >= 9 and parts[8] == "cpu":
                op_cpu.append(float(parts[6]))
        elif parts and parts[0] == "peak_rss_kb" and len(parts) == 2:
            rss = int(parts[1])
        elif parts and parts[0] == "cpu_seconds" and len(parts) == 2:
            cpu = float(parts[1])
    if pred is None or passes is None or len(pred) != count:
        raise RuntimeError(f"{name} printed unexpected output: {out[:300]!r}")
    assert seconds is not None      # read on the "passes" line with `passes`
    return RunResult(pred, passes, seconds, np.asarray(logits, np.float64) if len(logits) == count else None,
                     ops or None, rss, cpu, op_list or None,
                     op_cpu if op_list and len(op_cpu) == len(op_list) else None)


def run_checked(cmd: list[str], check: Callable[[], None], what: str) -> str:
    """Run a subprocess, polling the cancel check; the process is killed if the job is cancelled."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while True:
            try:
                out, err = proc.communicate(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                check()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {proc.returncode}): {err.strip()[:800]}")
    return out


def write_images(path: Path, x: np.ndarray) -> None:
    from core.atomic import atomic_write_bytes

    atomic_write_bytes(path, np.ascontiguousarray(x, np.float32).tobytes())
