"""Micro-benchmarks of this machine for Cappuccino's time model on a mobile SoC (issue 50, item 4):
the rates the model's per-step terms use that no published table gives for this machine, each
measured here by a small C program built with the synthesised programs' own compiler and flags.

Run: python benchmarks/cappuccino_machine_rates.py [--vector-width 16] [--repeats 7] [--json]

Printed (medians of `--repeats` runs, the machine's other work beside them, core.machine_load):
* `fma_per_ns`: (in the thread's CPU time, as are sqrt, div and expf) vector FMAs of V lanes a core completes per ns with 16 independent accumulators
  (the issue rate: divided by the clock it checks the target's FMA issue per cycle);
* `phase_ns_1`, `phase_ns_2`: one phase of the programs' work sharing (claim a chunk with a CAS,
  count it done, wait until every chunk is done: synth_kernels.c's run_phase protocol) with empty
  work, on 1 and 2 worker threads, plus the profile's two clock reads (wall and thread CPU time,
  the latter a system call): a step's fixed cost, in wall time (`phase_ns_*`: with other work on
  the machine a deschedule is in it) and in worker 0's CPU time (`phase_cpu_ns_*`);
* `sqrt_ns`, `div_ns`: one vector square root / division of V lanes, independent (throughput);
* `expf_ns`: one scalar expf (the softmax kernel's);
* `read_gbps_1`, `read_gbps_2`: DRAM read bandwidth, a 256 MiB array summed in V-lane vectors on 1
  and 2 workers (each half of it), over the slowest worker's CPU time: the stream an fc layer's
  weights are (the targets' bandwidth default is a copy, read and write, benchmarks/host_bandwidth.py).
core/cappuccino/cost.py records the figures measured here (MACHINE_RATES) and docs/cappuccino.md
names this benchmark as their source. Nothing here runs a network.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cappuccino import synth  # noqa: E402
from core.host_machine import host_cpu  # noqa: E402
from core.machine_load import LoadMeter  # noqa: E402

SOURCE = r"""
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <omp.h>
#include <immintrin.h>
typedef float vf __attribute__((vector_size(4 * V)));
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
/* the single-thread loops are timed in the thread's CPU time: a deschedule by other work is not counted */
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static inline vf fma_v(vf a, vf b, vf c) {
#if V == 16
  return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif V == 8
  return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
  return (vf)_mm_fmadd_ps((__m128)a, (__m128)b, (__m128)c);
#endif
}
static inline vf sqrt_v(vf a) {
#if V == 16
  return (vf)_mm512_sqrt_ps((__m512)a);
#elif V == 8
  return (vf)_mm256_sqrt_ps((__m256)a);
#else
  return (vf)_mm_sqrt_ps((__m128)a);
#endif
}
static long claim_, done_;
static void phase(long gen, int chunks) {
  const long base = gen * chunks, end = base + chunks;
  long c = __atomic_load_n(&claim_, __ATOMIC_ACQUIRE);
  while (c < end) {
    if (c < base) { c = __atomic_load_n(&claim_, __ATOMIC_ACQUIRE); continue; }
    if (!__atomic_compare_exchange_n(&claim_, &c, c + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
    __atomic_add_fetch(&done_, 1, __ATOMIC_ACQ_REL);
    c = __atomic_load_n(&claim_, __ATOMIC_ACQUIRE);
  }
  int spins = 0;
  while (__atomic_load_n(&done_, __ATOMIC_ACQUIRE) < end) { if (++spins < 4096) __builtin_ia32_pause(); else sched_yield(); }
}
static double phases(int threads, long n, double *cpu_ns) {
  claim_ = done_ = 0;
  double t0 = now(), sink = 0;
  #pragma omp parallel num_threads(threads) reduction(+:sink)
  {
    const double c0 = cpu();
    for (long g = 0; g < n; ++g) {
      phase(g, 2 * threads);
      if (omp_get_thread_num() == 0) sink += now() + cpu();   /* the profile's two clock reads per op */
    }
    if (omp_get_thread_num() == 0) *cpu_ns = (cpu() - c0) / n * 1e9;
  }
  return (now() - t0) / n * 1e9 + 0 * sink;
}
/* GB/s of reading `nf` floats (V-lane loads into 8 sums) on `threads` workers, each taking its half,
   over the slowest worker's CPU time (a deschedule not counted); best of 3 passes */
static double read_stream(int threads, const float *x, long nf) {
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double slowest = 0, sink = 0;
    #pragma omp parallel num_threads(threads) reduction(max:slowest) reduction(+:sink)
    {
      const int w = omp_get_thread_num(), nt = omp_get_num_threads();
      const long v0 = nf / V * w / nt, v1 = nf / V * (w + 1) / nt;
      const vf *xv = (const vf *)x;
      vf acc[8] = {0};
      const double c0 = cpu();
      for (long i = v0; i + 8 <= v1; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += xv[i + k];
      slowest = cpu() - c0;
      for (int k = 0; k < 8; ++k) sink += acc[k][0];
    }
    const double gbps = 4.0 * nf / slowest / 1e9 + 0 * sink;
    if (gbps > best) best = gbps;
  }
  return best;
}
int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 20000000;
  vf a[16], b, s[8];
  for (int i = 0; i < 16; ++i) a[i] = (vf){0} + 1.0f / (float)(i + 1);
  b = (vf){0} + 0.999999f;
  double t0 = cpu();
  for (long i = 0; i < n; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) a[k] = fma_v(a[k], b, b);
  }
  const double fma = 16.0 * n / ((cpu() - t0) * 1e9);
  for (int i = 0; i < 8; ++i) s[i] = (vf){0} + (2.0f + (float)i);
  const long m = n / 8;
  t0 = cpu();
  for (long i = 0; i < m; ++i) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) s[k] = sqrt_v(s[k]) + b;
  }
  const double sq = (cpu() - t0) * 1e9 / (8.0 * m);
  vf d[8];
  for (int i = 0; i < 8; ++i) d[i] = (vf){0} + (3.0f + (float)i);
  t0 = cpu();
  for (long i = 0; i < m; ++i) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) d[k] = b / d[k] + b;
  }
  const double dv = (cpu() - t0) * 1e9 / (8.0 * m);
  volatile float e = 0.0f;
  t0 = cpu();
  for (long i = 0; i < m; ++i) e = e + expf(-(float)(i & 1023) * 1e-3f);
  const double ex = (cpu() - t0) * 1e9 / m;
  float chk = e;
  for (int k = 0; k < 16; ++k) chk += a[k][0];
  for (int k = 0; k < 8; ++k) chk += s[k][0] + d[k][0];
  printf("fma_per_ns %.6f\nsqrt_ns %.6f\ndiv_ns %.6f\nexpf_ns %.6f\n", fma, sq, dv, ex);
  double c1, c2;
  const double w1 = phases(1, n / 1000, &c1), w2 = phases(2, n / 1000, &c2);
  printf("phase_ns_1 %.3f\nphase_cpu_ns_1 %.3f\nphase_ns_2 %.3f\nphase_cpu_ns_2 %.3f\n", w1, c1, w2, c2);
  const long nf = 64L << 20;                               /* 256 MiB: 8 x this machine's L3 */
  float *x = aligned_alloc(64, 4 * nf);
  for (long i = 0; i < nf; ++i) x[i] = (float)(i & 255);
  printf("read_gbps_1 %.3f\nread_gbps_2 %.3f\n", read_stream(1, x, nf), read_stream(2, x, nf));
  free(x);
  printf("check %g\n", (double)chk);
  return 0;
}
"""


def measure(vector_width: int, n: int) -> dict[str, float]:
    cc = synth.find_compiler()
    if cc is None:
        raise SystemExit("no C compiler found")
    with tempfile.TemporaryDirectory(prefix="capp-rates-") as tmp:
        src, exe = Path(tmp) / "rates.c", Path(tmp) / "rates"
        src.write_text(f"#define V {vector_width}\n" + SOURCE)
        subprocess.run([cc, *synth.CFLAGS, "-fopenmp", "-ffp-contract=off", str(src), "-o", str(exe), "-lm"],
                       check=True)
        out = subprocess.run([str(exe), str(n)], check=True, capture_output=True, text=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines()) if k != "check"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vector-width", type=int, default=min(16, host_cpu().vector_floats))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--n", type=int, default=20_000_000, help="FMA loop trips (the other loops scale from it)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    runs, loads = [], []
    for _ in range(a.repeats):
        meter = LoadMeter()
        runs.append(measure(a.vector_width, a.n))
        loads.append(meter.stop().other_cores)
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    best = {k: (max if k == "fma_per_ns" or k.startswith("read") else min)(r[k] for r in runs) for k in runs[0]}
    clock_ghz = host_cpu().clock_mhz / 1e3
    out = {"vector_width": a.vector_width, "clock_mhz": host_cpu().clock_mhz, "median": med, "best": best,
           "fma_per_cycle_at_stated_clock": med["fma_per_ns"] / clock_ghz,
           "other_cores": {"median": statistics.median(loads), "min": min(loads), "max": max(loads)}}
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"V = {a.vector_width}, {a.repeats} runs, other work {out['other_cores']['min']:.1f}-"
          f"{out['other_cores']['max']:.1f} cores (median {out['other_cores']['median']:.1f})")
    for k in med:
        print(f"  {k:12} median {med[k]:10.4f}  best {best[k]:10.4f}")
    print(f"  FMA per cycle at the stated {host_cpu().clock_mhz:g} MHz: {out['fma_per_cycle_at_stated_clock']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
