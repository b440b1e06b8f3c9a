"""The row-streaming C kernel ("rows") for short-window transforms, generated from eq. 5's strides.

Depthwise convolution, a separable filter's passes and pixel shuffle read a few elements per output
(9, 5, 1) and move megabytes: they are limited by memory, not arithmetic. For them the engine's tile
(a 4x4 or 8x112 GPU tile with unroll-and-jam) gains nothing over the naive loop nest, which GCC
already vectorises, and its extra streams and short segments cost bandwidth. This kernel walks memory
the way such a transform wants it:

* the vector is a whole output row: the lane index is the innermost parallel index that every loop
  operand reads with stride 0 or 1 (one at least with 1); the parallel indices after it in Vec(C)
  (pixel shuffle's j) are written out per lane, so one call of the lane loop writes one contiguous
  run of the output, read from contiguous input rows;
* every a-step is written out with constant offsets (no a-loop, no partial-sum array: the sums stay
  in registers) inside a `static inline` row function with restrict pointers, so the lane loop is
  one straight vectorised loop even inside an OpenMP region;
* threads over the remaining parallel indices (rows) with `schedule(static)`: one contiguous block
  of rows per thread, from ROWS_PARALLEL_MIN_WORK steps (a second core adds memory bandwidth);
* an output larger than STREAM_MIN_BYTES is written with non-temporal stores (row computed into an
  L1 buffer, then streamed), which saves reading every output line before writing it.

Nothing here is keyed on a workload: a user transform with the same shape of access gets the same
kernel; one without a unit-stride lane, a long window or a short row gets none (`rows_plan` is None).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from core.merit import codegen_c as CG
from core.merit_transform.transform import MeritTransform

ROWS_MIN_RUN = 16            # contiguous outputs per lane loop: below this a vector is mostly empty
ROWS_MAX_INNER = 8           # outputs per lane written out (the parallel indices after the lane)
ROWS_MAX_RUN = 2048          # lanes per call; longer rows are cut into chunks (the L1 row buffer)
# Threads from this many steps (p x a). Measured on the shared 2-core machine this was written on
# (depthwise 3x3, 112x112, c channels, 2 threads against 1; docs/merit.md): with threads that sleep
# at the end of a region (OMP_WAIT_POLICY=PASSIVE, as the benchmark runs) two threads lost up to
# 2^21.8 steps (0.11-0.85x) and won from 2^22.8 (1.08x; 1.32x at 2^23.8) at load 3; with libgomp's
# default spinning they won from 2^17.8 (1.36-1.78x) but spinning threads starve numpy's BLAS in the
# same process. 2^22 (~0.2 ms of one core) loses nothing under either policy.
ROWS_PARALLEL_MIN_WORK = 1 << 22
# Non-temporal stores from this many output bytes: below it the output lines are likely still in the
# caches from the last call (a write is a hit and a streamed store would evict them); above it every
# output line would be read from memory before being overwritten.
STREAM_MIN_BYTES = 8 << 20

STREAM_PRELUDE = r"""
#include <stdint.h>
#if defined(__SSE__)
#include <immintrin.h>
#endif
/* lanes per vector of the row loops: the widest registers there are (GCC's -march=native on an
   AVX-512 machine otherwise prefers 256-bit vectors; twice the lanes halve the loads per output) */
#if defined(__AVX512F__)
#define MERIT_SIMDLEN 16
#elif defined(__AVX__)
#define MERIT_SIMDLEN 8
#else
#define MERIT_SIMDLEN 4
#endif
/* n floats from a row buffer (just written, in L1) to o with non-temporal (streaming) stores: the
   output is not read before it is written and does not displace the inputs from the caches. */
static inline void merit_stream(float *restrict o, const float *restrict buf, long n)
{
    long k = 0;
#if defined(__AVX512F__)
    for (; k < n && ((uintptr_t)(o + k) & 63); ++k) o[k] = buf[k];
    for (; k + 16 <= n; k += 16) _mm512_stream_ps(o + k, _mm512_loadu_ps(buf + k));
#elif defined(__AVX__)
    for (; k < n && ((uintptr_t)(o + k) & 31); ++k) o[k] = buf[k];
    for (; k + 8 <= n; k += 8) _mm256_stream_ps(o + k, _mm256_loadu_ps(buf + k));
#elif defined(__SSE__)
    for (; k < n && ((uintptr_t)(o + k) & 15); ++k) o[k] = buf[k];
    for (; k + 4 <= n; k += 4) _mm_stream_ps(o + k, _mm_loadu_ps(buf + k));
#endif
    for (; k < n; ++k) o[k] = buf[k];
}

static inline void merit_sfence(void)
{
#if defined(__SSE__)
    _mm_sfence();
#endif
}
"""


@dataclass
class RowsPlan:
    """How the rows kernel walks a transform (None from rows_plan: it does not apply)."""

    lane: str                     # the vector: a unit-stride parallel index, whole rows of it
    inner: list[str]              # parallel indices after the lane in Vec(C), written out per lane
    outer: list[str]              # parallel indices before it: the rows, split among threads
    chunk: int                    # lanes per call of the row function
    steps: int                    # a-steps per output, all written out
    threads: bool                 # OpenMP over the rows (work >= ROWS_PARALLEL_MIN_WORK)
    stream: bool                  # non-temporal stores (output >= STREAM_MIN_BYTES)

    def inner_combos(self, sizes: dict[str, int]) -> list[tuple[int, ...]]:
        """The values of the inner indices, in Vec(C) order (the k-th is output l * count + k)."""
        return list(itertools.product(*[range(sizes[n]) for n in self.inner]))


def rows_plan(t: MeritTransform) -> RowsPlan | None:
    """The rows kernel's plan for a short-window transform with a unit-stride output row, else None:
    the whole a-space has at most UNROLL_MAX_STEPS steps (x the outputs per lane), the lane index is
    read with stride 0 or 1 by every loop operand, and a lane loop writes at least ROWS_MIN_RUN
    contiguous outputs."""
    loop_ops, _ = CG._roles(t)
    if not t.parallel or not loop_ops:
        return None
    steps = t.a_count
    if steps > CG.UNROLL_MAX_STEPS:
        return None
    strides = [CG.operand_address(t, t.operands[i]).strides for i in loop_ops]
    sizes = dict(t.indices)
    names = [n for n, _ in t.parallel]
    for pos in reversed(range(len(names))):
        n = names[pos]
        inner = names[pos + 1:]
        count = int(np.prod([sizes[m] for m in inner] or [1]))
        if count > ROWS_MAX_INNER or count * steps > CG.UNROLL_MAX_STEPS:
            return None                     # further out the written-out part only grows
        unit = all(st[n] in (0, 1) for st in strides) and any(st[n] == 1 for st in strides)
        if unit and sizes[n] * count >= ROWS_MIN_RUN:
            # equal chunks of at most ROWS_MAX_RUN lanes
            parts = -(-sizes[n] // ROWS_MAX_RUN)
            chunk = -(-sizes[n] // parts)
            return RowsPlan(n, inner, names[:pos], chunk, steps,
                            t.p_count * steps >= ROWS_PARALLEL_MIN_WORK,
                            4 * t.p_count >= STREAM_MIN_BYTES)
    return None


def rows_kernel(t: MeritTransform, name: str) -> CG.Kernel | None:
    """The rows kernel of `t` (module docstring), or None where rows_plan does not apply."""
    plan = rows_plan(t)
    if plan is None:
        return None
    cs = CG.c_strategy(t, fast_exp=True)
    addr = [CG.operand_address(t, op) for op in t.operands]
    loop_ops, once_ops = CG._roles(t)
    ostr = CG.output_strides(t)
    sizes = dict(t.indices)
    acc_idx = [n for n, _ in t.accumulate]
    lane = plan.lane
    inner_combos = plan.inner_combos(sizes)
    ic = len(inner_combos)
    fn = f"{name}_row"

    # ---- the row function: one lane loop, every output of a lane and every a-step written out
    params = ([f"const float *restrict q{i}" for i in loop_ops] + [f"const float *restrict r{i}" for i in once_ops]
              + ["float *restrict w", "const long nl"])
    L = [f"static inline void {fn}({', '.join(params)})", "{", "    #pragma omp simd simdlen(MERIT_SIMDLEN)", "    for (long l = 0; l < nl; ++l)",
         "    {"]
    e = "        "

    def inner_off(i: int, combo: tuple[int, ...]) -> int:
        return sum(v * addr[i].strides[n] for n, v in zip(plan.inner, combo))

    for k, combo in enumerate(inner_combos):
        for i in once_ops:
            L.append(f"{e}const float o{i}_{k} = r{i}[{CG._sum([('l', addr[i].strides[lane])], inner_off(i, combo))}];")
        for a, init, _ in cs.accs:
            L.append(f"{e}float {a}_{k} = {init};")
    for k, combo in enumerate(inner_combos):
        for step in itertools.product(*[range(s) for _, s in t.accumulate]):
            L.append(f"{e}{{")
            for i in loop_ops:
                const = inner_off(i, combo) + sum(v * addr[i].strides[n] for n, v in zip(acc_idx, step))
                L.append(f"{e}    const float x{i} = q{i}[{CG._sum([('l', addr[i].strides[lane])], const)}];")
            for i in once_ops:
                L.append(f"{e}    const float o{i} = o{i}_{k};")
            for a, _, _ in cs.accs:
                L.append(f"{e}    float {a} = {a}_{k};")
            L.append(f"{e}    {cs.loop}")
            for a, _, _ in cs.accs:
                L.append(f"{e}    {a}_{k} = {a};")
            L.append(f"{e}}}")
    for k, _ in enumerate(inner_combos):
        binds = [f"const float o{i} = o{i}_{k};" for i in once_ops] + [f"const float {a} = {a}_{k};" for a, _, _ in cs.accs]
        L.append(f"{e}{{ {' '.join(binds)} w[{CG._sum([('l', ic)], k)}] = {cs.post}; }}")
    L += ["    }", "}", ""]

    # ---- the kernel: rows (outer indices, chunks of the lane) in order, split among threads
    chunked = plan.chunk < sizes[lane]
    loops = [(CG._ident(n), f"for (long {CG._ident(n)} = 0; {CG._ident(n)} < {sizes[n]}L; ++{CG._ident(n)})")
             for n in plan.outer]
    if chunked:
        loops.append(("C", f"for (long C = 0; C < {sizes[lane]}L; C += {plan.chunk}L)"))
    threads = plan.threads and bool(loops)
    L.append(CG._signature(t, name))
    L.append("{")
    b = "    "
    if threads:
        L.append(f"{b}#pragma omp parallel")
        L.append(f"{b}{{")
        b += "    "
    else:
        L.append(f"{b}/* {t.p_count * plan.steps} steps: one thread (threads from {ROWS_PARALLEL_MIN_WORK}) */")
    if plan.stream:
        L.append(f"{b}float buf[{plan.chunk * ic}] __attribute__((aligned(64)));")
    if threads:
        L.append(f"{b}#pragma omp for collapse({len(loops)}) schedule(static)")
    L += [f"{b}{text}" for _, text in loops]
    L.append(f"{b}{{")
    c = b + "    "
    lane_pos = [("C", 1)] if chunked else []
    L.append(f"{c}const long nl = " + (f"{sizes[lane]}L - C < {plan.chunk}L ? {sizes[lane]}L - C : {plan.chunk}L;"
                                      if chunked else f"{sizes[lane]}L;"))
    oterms = [(CG._ident(n), ostr[n]) for n in plan.outer] + [(v, s * ostr[lane]) for v, s in lane_pos]
    L.append(f"{c}float *restrict o = out + {CG._sum(oterms)};")
    args = []
    for i in loop_ops + once_ops:
        terms = [(CG._ident(n), addr[i].strides[n]) for n in plan.outer] + \
                [(v, s * addr[i].strides[lane]) for v, s in lane_pos]
        args.append(f"in{i} + {CG._sum(terms, addr[i].base)}")
    L.append(f"{c}{fn}({', '.join(args)}, {'buf' if plan.stream else 'o'}, nl);")
    if plan.stream:
        L.append(f"{c}merit_stream(o, buf, nl * {ic}L);")
    L.append(f"{b}}}")
    if plan.stream:
        L.append(f"{b}merit_sfence();")
    if threads:
        L.append("    }")
    L.append("}")
    note = (f"whole rows along {lane} ({sizes[lane]}"
            + (f", in chunks of {plan.chunk}" if chunked else "") + ") as the vector"
            + (f", {ic} outputs along {', '.join(plan.inner)} per lane" if plan.inner else "")
            + f", {plan.steps} a-steps written out, sums in registers; "
            + ("OpenMP static over the rows" if threads else "one thread")
            + ("; non-temporal stores" if plan.stream else ""))
    return CG.Kernel(name, "rows", "\n".join(L), note)
