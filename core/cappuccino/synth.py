"""C code synthesis: the Cappuccino program for a configuration and a naive baseline.

The synthesised program (one standalone C file, weights embedded):
* OLP over OpenMP threads: each layer's V-thread groups (one pixel of one output stack, i.e. the
  V consecutive OLP thread ids t..t+V-1 of equations 3-5) are split statically over the hardware
  threads (layout.worker_ranges); a barrier separates layers.
* map-major data: weights statically reordered (layout.weights_map_major), feature maps stored
  as stacks of V maps; every layer writes straight into its consumer's padded map-major frame.
* per-layer modes: precise = float32 with strictly sequential IEEE summation (no reassociation,
  no fused multiply-add: vector lanes are processed one after the other, as RenderScript's
  precise mode does); relaxed = float32 SIMD over the V map-major lanes (GCC vector extensions,
  FMA allowed) with flush-to-zero and denormals-are-zero set for the layer; imprecise = the same
  SIMD code with binary16 (_Float16 / __fp16) weights and outputs, float32 accumulation.
The baseline is the textbook six-loop convolution over row-major data with runtime layer sizes
and bounds checks for padding, single threaded, float32.

Both programs read `count` images (float32, NCHW row-major) from a file, classify them once
(printing `pred ...` and one `logit ...` line per image), then repeat the whole set until `min_seconds` of compute have elapsed and
print `passes N seconds S`; only the classification passes are timed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from core.cappuccino import layout
from core.cappuccino.model import CnnModel, ConvOp, PoolOp
from core.cappuccino.numerics import IMPRECISE, PRECISE, RELAXED, mode_weights

VECTOR_WIDTHS = (1, 2, 4, 8, 16)


# ------------------------------------------------------------------ helpers
def c_floats(values: np.ndarray, per_line: int = 6) -> str:
    """Exact hexadecimal float literals (every float32 and binary16 value round-trips)."""
    flat = np.asarray(values, np.float32).reshape(-1)
    items = [float(v).hex() + "f" if v != 0 else "0.0f" for v in flat.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "{\n  " + ",\n  ".join(lines) + "\n}" if lines else "{0}"


@dataclass
class Buffer:
    name: str
    shape: tuple[int, int, int, int]     # (S, Hp, Wp, V)
    halo: int
    half: bool

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def ctype(self) -> str:
        return "hf" if self.half else "float"


def plan_buffers(model: CnnModel, modes: dict[str, str], V: int) -> list[Buffer]:
    """buffers[0] is the input frame; buffers[i+1] is written by ops[i] in its consumer's frame."""
    c, h, w = model.input_shape
    halo = layout.frame_halo(model.ops, -1)
    bufs = [Buffer("x0", (layout.stacks(c, V), h + 2 * halo, w + 2 * halo, V), halo, False)]
    half = False
    for i, op in enumerate(model.ops):
        if isinstance(op, ConvOp):
            half = modes.get(op.name, PRECISE) == IMPRECISE
        m, oh, ow = op.out_shape
        halo = layout.frame_halo(model.ops, i)
        bufs.append(Buffer(f"x{i + 1}", (layout.stacks(m, V), oh + 2 * halo, ow + 2 * halo, V), halo, half))
    return bufs


# ------------------------------------------------------------------ synthesised program
_PRELUDE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__SSE__)
#include <immintrin.h>
#endif

#define V {V}
typedef float vf __attribute__((vector_size({VB})));
typedef int vi __attribute__((vector_size({VB})));

/* binary16 storage for imprecise layers */
#if defined(__FLT16_MAX__)
typedef _Float16 hf;
#elif defined(__ARM_FP16_FORMAT_IEEE)
typedef __fp16 hf;
#else
#error "imprecise layers need _Float16 or __fp16 (use a compiler/target with half-precision support)"
#endif

static inline vf ld_f(const float *p) {{ return *(const vf *)p; }}
static inline void st_f(float *p, vf x) {{ *(vf *)p = x; }}
static inline vf ld_h(const hf *p) {{
#if defined(__F16C__) && V == 4
  return (vf)_mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)p));
#elif defined(__F16C__) && V == 8
  return (vf)_mm256_cvtph_ps(_mm_load_si128((const __m128i *)p));
#elif defined(__AVX512F__) && V == 16
  return (vf)_mm512_cvtph_ps(_mm256_load_si256((const __m256i *)p));
#else
  vf r; for (int k = 0; k < V; ++k) r[k] = (float)p[k]; return r;
#endif
}}
static inline void st_h(hf *p, vf x) {{
#if defined(__F16C__) && V == 4
  _mm_storel_epi64((__m128i *)p, _mm_cvtps_ph((__m128)x, _MM_FROUND_TO_NEAREST_INT));
#elif defined(__F16C__) && V == 8
  _mm_store_si128((__m128i *)p, _mm256_cvtps_ph((__m256)x, _MM_FROUND_TO_NEAREST_INT));
#elif defined(__AVX512F__) && V == 16
  _mm256_store_si256((__m256i *)p, _mm512_cvtps_ph((__m512)x, _MM_FROUND_TO_NEAREST_INT));
#else
  for (int k = 0; k < V; ++k) p[k] = (hf)x[k];
#endif
}}
static inline vf bcast(float x) {{ vf r; for (int k = 0; k < V; ++k) r[k] = x; return r; }}
static inline vf vmax(vf a, vf b) {{ vi m = a > b; return (vf)((m & (vi)a) | (~m & (vi)b)); }}
static inline vf relu(vf a) {{ vf z = {{0}}; vi m = a > z; return (vf)(m & (vi)a); }}

/* flush-to-zero + denormals-are-zero for relaxed layers */
#if defined(__SSE__)
#define FTZ_ON() unsigned int csr_saved_ = _mm_getcsr(); _mm_setcsr(csr_saved_ | 0x8040u)
#define FTZ_OFF() _mm_setcsr(csr_saved_)
#elif defined(__aarch64__)
#define FTZ_ON() unsigned long fpcr_saved_; __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr_saved_)); \
  __asm__ volatile("msr fpcr, %0" :: "r"(fpcr_saved_ | (1ul << 24)))
#define FTZ_OFF() __asm__ volatile("msr fpcr, %0" :: "r"(fpcr_saved_))
#else
#define FTZ_ON() do {{}} while (0)
#define FTZ_OFF() do {{}} while (0)
#endif

/* Layer barrier: sense-reversing, spins briefly then yields the core, so that a thread whose
   partner has been descheduled (a busy 2-core machine) hands the core over at once. */
#include <sched.h>
static int bar_count_ = 0, bar_sense_ = 0;
static inline void cpu_relax(void) {{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}}
static inline void layer_barrier(int nt, int *sense) {{
  *sense = !*sense;
  if (nt == 1) return;
  if (__atomic_add_fetch(&bar_count_, 1, __ATOMIC_ACQ_REL) == nt) {{
    __atomic_store_n(&bar_count_, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&bar_sense_, *sense, __ATOMIC_RELEASE);
  }} else {{
    int spins = 0;
    while (__atomic_load_n(&bar_sense_, __ATOMIC_ACQUIRE) != *sense) {{
      if (++spins < 256) cpu_relax(); else sched_yield();
    }}
  }}
}}

#define PRECISE_FN __attribute__((optimize("fp-contract=off"), noinline))
#define FAST_FN __attribute__((noinline))
"""


def _buf_access(buf: Buffer, ptr: str) -> tuple[str, str]:
    """(load, store) helper names for a buffer."""
    return ("ld_h", "st_h") if buf.half else ("ld_f", "st_f")


def _conv_fn(idx: int, op: ConvOp, mode: str, bin_: Buffer, bout: Buffer, V: int) -> tuple[str, str]:
    """Declarations (weights) and the layer function."""
    m, oh, ow = op.out_shape
    _, n, kh, kw = op.weight.shape
    so, si = layout.stacks(m, V), layout.stacks(n, V)
    out_lanes = mode != PRECISE and n < V     # see _out_lane_body
    wmm = layout.weights_map_major(mode_weights(op.weight, mode), V)
    if out_lanes:
        wmm = np.ascontiguousarray(wmm.swapaxes(4, 5))     # (S_out, S_in, KH, KW, V_in, V_out)
    bias = layout.pad_maps(mode_weights(op.bias, mode), V)
    wtype = "hf" if mode == IMPRECISE else "float"
    wld = "ld_h" if mode == IMPRECISE else "ld_f"
    name = f"L{idx}_{_ident(op.name)}"
    lanes = "V_in, V_out: SIMD lanes over output maps" if out_lanes else "V_out, V_in: SIMD lanes over input maps"
    decl = (f"/* layer {idx} {op.name}: {mode}, weights map-major (S_out={so}, S_in={si}, {kh}x{kw}, {lanes}) */\n"
            f"static const {wtype} W_{name}[{wmm.size}] __attribute__((aligned(64))) = {c_floats(wmm)};\n"
            f"static const {wtype} B_{name}[{bias.size}] __attribute__((aligned(64))) = {c_floats(bias)};\n")
    _, hpi, wpi, _ = bin_.shape
    _, hpo, wpo, _ = bout.shape
    ho = bout.halo
    xld, _ = _buf_access(bin_, "in")
    _, yst = _buf_access(bout, "out")
    head = (f"static {'PRECISE_FN' if mode == PRECISE else 'FAST_FN'} void {name}(const {bin_.ctype} *restrict in, "
            f"{bout.ctype} *restrict out, int g0, int g1) {{\n"
            + ("  FTZ_ON();\n" if mode == RELAXED else "")
            + f"  for (unsigned g = (unsigned)g0; g < (unsigned)g1; ++g) {{\n"
            f"    const int c = (int)(g % {ow}u), r = (int)(g / {ow}u % {oh}u), so = (int)(g / {ow * oh}u);   /* eqs (3)-(5) per V-group */\n"
            f"    const {bin_.ctype} *x0 = in + (r * {op.stride} * {wpi} + c * {op.stride}) * V;\n"
            f"    const {wtype} *w0 = W_{name} + so * {si * kh * kw * V * V};\n")
    if mode == PRECISE:
        body = (f"    float acc[V];\n"
                f"    for (int l = 0; l < V; ++l) acc[l] = 0.0f;\n"
                f"    for (int s = 0; s < {si}; ++s)\n"
                f"      for (int i = 0; i < {kh}; ++i)\n"
                f"        for (int j = 0; j < {kw}; ++j) {{\n"
                f"          const {bin_.ctype} *x = x0 + ((s * {hpi} + i) * {wpi} + j) * V;\n"
                f"          const {wtype} *w = w0 + ((s * {kh} + i) * {kw} + j) * V * V;\n"
                f"          for (int l = 0; l < V; ++l)\n"
                f"            for (int k = 0; k < V; ++k) acc[l] += (float)x[k] * (float)w[l * V + k];\n"
                f"        }}\n"
                f"    vf res;\n"
                f"    for (int l = 0; l < V; ++l) res[l] = acc[l] + (float)B_{name}[so * V + l];\n")
    elif out_lanes:
        body = _out_lane_body(name, bin_, wtype, wld, n, kh, kw, hpi, wpi)
    else:
        body = _vector_body(name, bin_, wtype, wld, xld, si, kh, kw, hpi, wpi)
    tail = (("    res = relu(res);\n" if op.relu else "")
            + f"    {yst}(out + ((so * {hpo} + r + {ho}) * {wpo} + c + {ho}) * V, res);\n"
            f"  }}\n"
            + ("  FTZ_OFF();\n" if mode == RELAXED else "")
            + "}\n")
    return decl, head + body + tail


def _vector_body(name: str, bin_: Buffer, wtype: str, wld: str, xld: str, si: int, kh: int, kw: int,
                 hpi: int, wpi: int) -> str:
    """SIMD body: taps unrolled at synthesis time and two accumulator sets (even/odd tap) to hide
    the multiply-add latency, then one horizontal reduction per output lane."""
    def taps(rows: list, s_expr: str, fixed_set: int | None) -> str:
        out, k = [], 0
        for i in rows:
            for j in range(kw):
                a = fixed_set if fixed_set is not None else k % 2
                out.append(f"      {{ const vf x = {xld}(x0 + ((({s_expr}) * {hpi} + {i}) * {wpi} + {j}) * V);\n"
                           f"        const {wtype} *w = w0 + ((({s_expr}) * {kh} + {i}) * {kw} + {j}) * V * V;\n"
                           f"        for (int l = 0; l < V; ++l) acc{a}[l] += x * {wld}(w + l * V); }}\n")
                k += 1
        return "".join(out)

    body = ("    vf acc0[V], acc1[V];\n"
            "    for (int l = 0; l < V; ++l) { acc0[l] = (vf){0}; acc1[l] = (vf){0}; }\n")
    if 2 <= kh * kw <= 64:
        body += f"    for (int s = 0; s < {si}; ++s) {{\n" + taps(list(range(kh)), "s", None) + "    }\n"
    elif kh * kw > 64:
        body += (f"    for (int s = 0; s < {si}; ++s)\n      for (int i = 0; i < {kh}; ++i) {{\n"
                 + taps(["i"], "s", None) + "    }\n")
    else:   # 1x1 kernels: alternate the accumulator sets over input stacks
        body += (f"    int s = 0;\n    for (; s + 1 < {si}; s += 2) {{\n" + taps([0], "s", 0) + taps([0], "s + 1", 1)
                 + f"    }}\n    if (s < {si}) {{\n" + taps([0], "s", 0) + "    }\n")
    body += ("    vf res;\n"
             "    for (int l = 0; l < V; ++l) { const vf a = acc0[l] + acc1[l]; float t = 0.0f; "
             "for (int k = 0; k < V; ++k) t += a[k]; res[l] = t; }\n"
             f"    res += {wld}(B_{name} + so * V);\n")
    return body


def _out_lane_body(name: str, bin_: Buffer, wtype: str, wld: str, n: int, kh: int, kw: int,
                   hpi: int, wpi: int) -> str:
    """SIMD body for a layer with fewer input maps than lanes (e.g. a grey-scale first layer),
    where lanes over input maps would mostly multiply padding zeros: the V lanes are the V output
    maps of the group instead (the V consecutive OLP threads t..t+V-1), each real input value is
    broadcast, and the result vector is already the map-major output: no horizontal sum."""
    lines, k = [], 0
    for i in range(kh):
        for j in range(kw):
            for v in range(n):
                lines.append(f"    acc{k % 2} += bcast((float)x0[({i} * {wpi} + {j}) * V + {v}]) * "
                             f"{wld}(w0 + (({i} * {kw} + {j}) * V + {v}) * V);\n")
                k += 1
    return ("    vf acc0 = (vf){0}, acc1 = (vf){0};\n" + "".join(lines)
            + f"    vf res = acc0 + acc1 + {wld}(B_{name} + so * V);\n")


def _pool_fn(idx: int, op: PoolOp, bin_: Buffer, bout: Buffer) -> str:
    c, oh, ow = op.out_shape
    _, ih, iw = op.in_shape
    _, hpi, wpi, _ = bin_.shape
    _, hpo, wpo, _ = bout.shape
    hi, ho = bin_.halo, bout.halo
    xld, _ = _buf_access(bin_, "in")
    _, yst = _buf_access(bout, "out")
    name = f"L{idx}_{_ident(op.name)}"
    if op.mode == "max":
        init, step, fin = "vf acc = " + xld + f"(in + ((s * {hpi} + r0 + {hi}) * {wpi} + c0 + {hi}) * V);", \
            "acc = vmax(acc, v);", ""
    else:
        init, step, fin = "vf acc = (vf){0};", "acc += v;", "acc /= (float)((r1 - r0) * (c1 - c0));"
    return (f"static FAST_FN void {name}(const {bin_.ctype} *restrict in, {bout.ctype} *restrict out, int g0, int g1) {{\n"
            f"  for (unsigned g = (unsigned)g0; g < (unsigned)g1; ++g) {{\n"
            f"    const int c = (int)(g % {ow}u), r = (int)(g / {ow}u % {oh}u), s = (int)(g / {ow * oh}u);\n"
            f"    int r0 = r * {op.stride} - {op.pad}, c0 = c * {op.stride} - {op.pad};\n"
            f"    int r1 = r0 + {op.k}, c1 = c0 + {op.k};\n"
            f"    if (r0 < 0) r0 = 0; if (c0 < 0) c0 = 0; if (r1 > {ih}) r1 = {ih}; if (c1 > {iw}) c1 = {iw};\n"
            f"    {init}\n"
            f"    for (int i = r0; i < r1; ++i)\n"
            f"      for (int j = c0; j < c1; ++j) {{\n"
            f"        const vf v = {xld}(in + ((s * {hpi} + i + {hi}) * {wpi} + j + {hi}) * V);\n"
            f"        {step}\n"
            f"      }}\n"
            f"    {fin}\n"
            f"    {yst}(out + ((s * {hpo} + r + {ho}) * {wpo} + c + {ho}) * V, acc);\n"
            f"  }}\n}}\n")


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def synthesise_program(model: CnnModel, modes: dict[str, str], V: int, threads: int) -> str:
    """The standalone C source of the Cappuccino program for one configuration."""
    if V not in VECTOR_WIDTHS:
        raise ValueError(f"vector width {V} not in {VECTOR_WIDTHS}")
    bufs = plan_buffers(model, modes, V)
    c_in, h_in, w_in = model.input_shape
    parts = [f"/* Cappuccino-synthesised inference program for {model.name}.\n"
             f"   vector width V={V}, {threads} OLP worker threads, modes: "
             + ", ".join(f"{op.name}={modes.get(op.name, PRECISE)}" for op in model.conv_ops) + "\n"
             "   build: gcc -O3 -march=native -std=gnu11 -fopenmp prog.c -o prog -lm\n"
             "   run:   ./prog images.f32 COUNT MIN_SECONDS   (images float32 NCHW row-major) */",
             _PRELUDE.format(V=V, VB=4 * V)]
    fns = []
    for i, op in enumerate(model.ops):
        if isinstance(op, ConvOp):
            decl, fn = _conv_fn(i + 1, op, modes.get(op.name, PRECISE), bufs[i], bufs[i + 1], V)
            parts.append(decl)
            fns.append(fn)
        else:
            fns.append(_pool_fn(i + 1, op, bufs[i], bufs[i + 1]))
    for k, b in enumerate(bufs):
        # the input frame is private to each worker: every worker packs the whole (small) image,
        # which saves a barrier per image; all other frames are shared between the workers
        dims = f"[{threads}][{b.size}]" if k == 0 else f"[{b.size}]"
        parts.append(f"static {b.ctype} {b.name}{dims} __attribute__((aligned(64)));   "
                     f"/* {b.shape[0]} stacks x {b.shape[1]}x{b.shape[2]} x V, halo {b.halo} */")
    parts.extend(fns)
    # input packing: row-major image -> map-major frame (part of the timed work)
    b0 = bufs[0]
    _, hp0, wp0, _ = b0.shape
    pack = (f"static void pack_input(const float *img, float *frame) {{   /* row-major image -> map-major frame */\n"
            f"  for (int g = 0; g < {layout.stacks(c_in, V) * h_in * w_in}; ++g) {{\n"
            f"    const int c = g % {w_in}, r = (g / {w_in}) % {h_in}, s = g / {w_in * h_in};\n"
            f"    {b0.ctype} *dst = frame + ((s * {hp0} + r + {b0.halo}) * {wp0} + c + {b0.halo}) * V;\n"
            f"    for (int l = 0; l < V; ++l) {{ int m = s * V + l; dst[l] = m < {c_in} ? img[(m * {h_in} + r) * {w_in} + c] : 0.0f; }}\n"
            f"  }}\n}}\n")
    parts.append(pack)
    m_out, oh_out, ow_out = model.ops[-1].out_shape
    bl = bufs[-1]
    _, hpl, wpl, _ = bl.shape
    argmax = (f"#define NOUT {m_out * oh_out * ow_out}\n"
              f"static float *record_logits;   /* set during the first pass only, to check the values */\n"
              f"static int classify(int b) {{   /* argmax in NCHW order, read from the map-major output */\n"
              f"  int best = 0; float bv = -3.4e38f;\n"
              f"  for (int m = 0; m < {m_out}; ++m) for (int r = 0; r < {oh_out}; ++r) for (int c = 0; c < {ow_out}; ++c) {{\n"
              f"    float v = (float){bl.name}[(((m / V) * {hpl} + r + {bl.halo}) * {wpl} + c + {bl.halo}) * V + m % V];\n"
              f"    if (record_logits) record_logits[(size_t)b * NOUT + (m * {oh_out} + r) * {ow_out} + c] = v;\n"
              f"    if (v > bv) {{ bv = v; best = (m * {oh_out} + r) * {ow_out} + c; }}\n"
              f"  }}\n  return best;\n}}\n")
    parts.append(argmax)
    steps = [f"      pack_input(images + (size_t)b * {c_in * h_in * w_in}, x0[w]);\n"]
    for i, op in enumerate(model.ops):
        m, oh, ow = op.out_shape
        groups = layout.stacks(m, V) * oh * ow
        src = "x0[w]" if i == 0 else bufs[i].name
        steps.append(f"      L{i + 1}_{_ident(op.name)}({src}, {bufs[i + 1].name}, w * {groups} / nt, "
                     f"(w + 1) * {groups} / nt);\n      layer_barrier(nt, &sense);\n")
    parts.append(
        "static void run_pass(const float *images, int count, int *pred) {\n"
        f"  #pragma omp parallel num_threads({threads})\n"
        "  {\n"
        "#ifdef _OPENMP\n    const int w = omp_get_thread_num(), nt = omp_get_num_threads();\n"
        "#else\n    const int w = 0, nt = 1;\n#endif\n"
        "    int sense = __atomic_load_n(&bar_sense_, __ATOMIC_ACQUIRE);\n"
        "    for (int b = 0; b < count; ++b) {\n" + "".join(steps) +
        "      if (w == 0) pred[b] = classify(b);\n"
        "    }\n  }\n}\n")
    parts.append(_MAIN.replace("{IMG}", str(c_in * h_in * w_in)))
    return "\n".join(parts)


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


# ------------------------------------------------------------------ naive baseline
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


# ------------------------------------------------------------------ build and run
@dataclass
class RunResult:
    predictions: list[int]
    passes: int
    seconds: float
    logits: np.ndarray | None = None    # (count, outputs) from the first pass

    @property
    def seconds_per_pass(self) -> float:
        return self.seconds / self.passes


def find_compiler() -> str | None:
    for cc in (os.environ.get("CC"), "gcc", "cc", "clang"):
        if cc and shutil.which(cc):
            return shutil.which(cc)
    return None


def find_compiler_noting() -> tuple[str | None, str]:
    """The compiler and, when $CC names one that is not found, a note saying what is used instead
    (so a misspelt CC does not silently time programs built by another compiler)."""
    cc = find_compiler()
    wanted = os.environ.get("CC")
    if wanted and not shutil.which(wanted):
        return cc, f"CC={wanted!r} is not an executable on PATH; using {cc or 'no compiler'} instead"
    return cc, ""


def compile_c(cc: str, source: Path, exe: Path, openmp: bool, check: Callable[[], None]) -> None:
    flags = ["-O3", "-march=native", "-std=gnu11"] + (["-fopenmp"] if openmp else [])
    _run_checked([cc, *flags, str(source), "-o", str(exe), "-lm"], check, f"compiling {source.name}")


def run_program(exe: Path, images: Path, count: int, min_seconds: float, check: Callable[[], None]) -> RunResult:
    out = _run_checked([str(exe), str(images), str(count), str(min_seconds)], check, f"running {exe.name}")
    pred, passes, seconds = None, None, None
    logits = []
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "pred":
            pred = [int(p) for p in parts[1:]]
        elif parts and parts[0] == "logit":
            logits.append([float(p) for p in parts[1:]])
        elif parts and parts[0] == "passes":
            passes, seconds = int(parts[1]), float(parts[3])
    if pred is None or passes is None or len(pred) != count:
        raise RuntimeError(f"{exe.name} printed unexpected output: {out[:300]!r}")
    assert seconds is not None      # read on the "passes" line with `passes`
    return RunResult(pred, passes, seconds, np.asarray(logits, np.float64) if len(logits) == count else None)


def _run_checked(cmd: list[str], check: Callable[[], None], what: str) -> str:
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
