/* Cappuccino kernel library: the fixed part of every synthesised program (core/cappuccino/synth.py).
   The synthesiser prepends the #defines (V, op kinds, counts), appends the model's tables
   (buffers, tensors, ops, expected weight sections) after the @TABLES@ marker and its convolution
   micro-kernels after the @CONV_KERNELS@ marker; the weights come from
   the binary weight file at start-up (core/cappuccino/weights_file.py).

   Data are map-major (the paper's eq. 2): a tensor of C maps is S = ceil(C/V) stacks, each stored
   (H + 2 halo) x (W + 2 halo) x V, the V maps of one pixel adjacent.  Every op writes straight into
   its consumers' frame (halo = the largest pad a consumer needs), so no reordering pass exists; a
   concatenation is free: its inputs write into channel slices of one buffer.

   Threads: OLP.  Each op's output is cut into units (a block of RQ output stacks x RP output pixels
   for a convolution, a row of one stack for pooling, ...); contiguous chunks of units are
   claimed by the OpenMP workers (run_phase) and an op starts when the one before it is done.  Inside
   a unit the V SIMD lanes are V output maps: one input value (broadcast) times a vector of V
   filter-bank weights, so the OLP threads t..t+V-1 of eqs. 3-5 are the lanes of one vector.

   Modes (per op): precise = IEEE float32: no reassociation (every output is a sequential sum in one
   fixed order), IEEE denormals, each step a fused multiply-add (PRECISE_FMA 1) or a separately
   rounded multiply and add (PRECISE_FMA 0) -- each lane is such a sum, so vectorising over output
   maps changes nothing numerically; relaxed = FMA with flush-to-zero and denormals-are-zero for the
   op; imprecise = relaxed arithmetic with binary16 weights and binary16 stored outputs. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
#include <time.h>
#include <sched.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

typedef float vf __attribute__((vector_size(4 * V)));
typedef int vi __attribute__((vector_size(4 * V)));
typedef uint16_t h16;              /* binary16 storage */

#define PRECISE 0
#define RELAXED 1
#define IMPRECISE 2
#define AI __attribute__((always_inline)) static inline

AI vf ldf(const float *p) { vf r; memcpy(&r, p, sizeof r); return r; }
AI void stf(float *p, vf x) { memcpy(p, &x, sizeof x); }
AI vf bcast(float x) {
#if defined(__AVX512F__) && V == 16
  return (vf)_mm512_set1_ps(x);
#elif defined(__AVX__) && V == 8
  return (vf)_mm256_set1_ps(x);
#elif defined(__SSE__) && V == 4
  return (vf)_mm_set1_ps(x);
#else
  vf r; for (int k = 0; k < V; ++k) r[k] = x; return r;
#endif
}
AI vf vmax(vf a, vf b) { vi m = a > b; return (vf)((m & (vi)a) | (~m & (vi)b)); }
AI vf relu(vf a) { vi m = a > (vf){0}; return (vf)(m & (vi)a); }

/* binary16 <-> float32, round to nearest even (F16C where present) */
#if defined(__F16C__)
AI float h2f(h16 h) { return _cvtsh_ss(h); }
AI h16 f2h(float f) { return (h16)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
#elif defined(__FLT16_MAX__)
AI float h2f(h16 h) { _Float16 x; memcpy(&x, &h, 2); return (float)x; }
AI h16 f2h(float f) { _Float16 x = (_Float16)f; h16 h; memcpy(&h, &x, 2); return h; }
#else
#error "imprecise layers need F16C or _Float16"
#endif
AI vf ldh(const h16 *p) {
#if defined(__AVX512F__) && V == 16
  return (vf)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
#elif defined(__F16C__) && V == 8
  return (vf)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
#elif defined(__F16C__) && V == 4
  return (vf)_mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)p));
#else
  vf r; for (int k = 0; k < V; ++k) r[k] = h2f(p[k]); return r;
#endif
}
AI void sth(h16 *p, vf x) {
#if defined(__AVX512F__) && V == 16
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph((__m512)x, _MM_FROUND_TO_NEAREST_INT));
#elif defined(__F16C__) && V == 8
  _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph((__m256)x, _MM_FROUND_TO_NEAREST_INT));
#elif defined(__F16C__) && V == 4
  _mm_storel_epi64((__m128i *)p, _mm_cvtps_ph((__m128)x, _MM_FROUND_TO_NEAREST_INT));
#else
  for (int k = 0; k < V; ++k) p[k] = f2h(x[k]);
#endif
}
AI vf round_h(vf x) { h16 t[V]; sth(t, x); return ldh(t); }

/* acc + a*b.  Relaxed/imprecise: one fused multiply-add.  Precise: also one fused multiply-add (an
   IEEE 754-2008 operation, correctly rounded once) unless PRECISE_FMA is 0, then a multiply and an
   add rounded separately (the program is built with -ffp-contract=off, so nothing else is fused). */
AI vf mla(vf acc, vf a, vf b, const int fast) {
  if (!fast && !PRECISE_FMA) return acc + a * b;
#if defined(__AVX512F__) && V == 16
  return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)acc);
#elif defined(__FMA__) && V == 8
  return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)acc);
#elif defined(__FMA__) && V == 4
  return (vf)_mm_fmadd_ps((__m128)a, (__m128)b, (__m128)acc);
#else
  return acc + a * b;
#endif
}

/* flush-to-zero + denormals-are-zero while a relaxed op runs */
#if defined(__SSE__)
#define FTZ_ON(on) unsigned int csr_saved_ = _mm_getcsr(); if (on) _mm_setcsr(csr_saved_ | 0x8040u)
#define FTZ_OFF() _mm_setcsr(csr_saved_)
#elif defined(__aarch64__)
#define FTZ_ON(on) unsigned long fpcr_saved_; __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr_saved_)); \
  if (on) __asm__ volatile("msr fpcr, %0" :: "r"(fpcr_saved_ | (1ul << 24)))
#define FTZ_OFF() __asm__ volatile("msr fpcr, %0" :: "r"(fpcr_saved_))
#else
#define FTZ_ON(on) (void)(on)
#define FTZ_OFF() do {} while (0)
#endif

/* Work sharing between ops: each op's units are cut into chunks that the workers claim (CAS on a
   per-op counter that grows by one per chunk and image, so a late worker can never claim a chunk of
   a later image) and count as done; an op starts when every chunk of the op before it is done.  A
   worker descheduled by other jobs (a shared 2-core machine) thus delays an op only if it holds a
   chunk: the running worker claims its share instead of waiting at a barrier for it. */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}
static inline void wait_at_least(const long *counter, long target) {
  int spins = 0;
  while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < target) {
    if (++spins < 4096) cpu_relax(); else sched_yield();
  }
}

typedef struct { size_t off; int S, Hp, Wp, halo, half, lanes; } buffer_t;  /* a frame in the arena */
typedef struct { int buf, c0, C, H, W; } tensor_t;                        /* channels c0.. of a buffer */
typedef struct {
  const char *name;
  int kind, mode, relu;
  int in[8], nin, out, res;          /* res: residual tensor added before the ReLU (fused Add), -1 none */
  int kh, kw, stride, pt, pl, pb, pr;
  int gin, gout;                     /* grouped conv: input / output stacks per group (0: dense) */
  int klast;                         /* real input maps in the last input stack (skip padding lanes) */
  int count_pad;                     /* average pooling divides by the padded window */
  int size; float alpha, beta, kbias; /* LRN */
  int chunks;                        /* pieces the workers claim (1: too little work to share) */
  int rnd;                           /* its result is binary16 (stored as such in a float32 frame) */
  int rq, rp, flat;                  /* conv: block of rq output stacks x rp pixels; flat: 1x1 over the whole map */
  int pool, fused;                   /* conv: the max pooling fused into it (-1 none); maxpool: computed by its conv */
} op_t;

/*@TABLES@*/

static char *ARENA;
static const char *WSEC[N_OPS];     /* each op's weight section inside the loaded file */

AI const buffer_t *B_(const tensor_t *t) { return &BUFS[t->buf]; }
/* element index (in lanes) of stack s, row r, column c of tensor t (r, c may reach into the halo) */
AI size_t tidx(const tensor_t *t, int s, int r, int c) {
  const buffer_t *b = B_(t);
  return (((size_t)(t->c0 / V + s) * b->Hp + r + b->halo) * b->Wp + c + b->halo) * b->lanes;
}
AI float *tf(const tensor_t *t) { return (float *)(ARENA + B_(t)->off); }
AI h16 *th(const tensor_t *t) { return (h16 *)(ARENA + B_(t)->off); }
/* HALF_FRAMES 0: every frame is float32 (imprecise ops store binary16 values in them) */
#define IS_HALF(t) (HALF_FRAMES && B_(t)->half)
AI vf ldt(const tensor_t *t, size_t i) { return IS_HALF(t) ? ldh(th(t) + i) : ldf(tf(t) + i); }
AI float ld1(const tensor_t *t, size_t i) { return IS_HALF(t) ? h2f(th(t)[i]) : tf(t)[i]; }
/* store a result: binary16 frames hold binary16; a binary16 result (rnd: an imprecise convolution,
   or an op whose inputs are all binary16, as forward.py defines) written to a float32 frame is
   stored as its binary16 value */
AI void stt(const tensor_t *t, size_t i, vf x, int rnd) {
  if (IS_HALF(t)) sth(th(t) + i, x);
  else stf(tf(t) + i, rnd ? round_h(x) : x);
}
static int stacks(int c) { return (c + V - 1) / V; }

/* ------------------------------------------------------------------ convolution (dense, grouped, fc, 1x1) */
/* Register-blocked micro-kernels.  The synthesiser generates one (synth_program.conv_kernel_source)
   per combination of mode, input storage, block shape and pixel stride that the model's
   convolutions use, and CONV_FN names each op's.  A block is RQ output stacks x RP output pixels:
   its RQ*RP accumulators (vectors of V output maps: the OLP threads t..t+V-1 of eqs. 3-5 are the
   lanes of one vector) stay in vector registers for the whole sum.  Each step loads RQ weight
   vectors and broadcasts one input value per pixel (with AVX-512 an FMA with an embedded broadcast
   operand), so a step is RQ*RP fused multiply-adds against RQ + RP loads, all addresses constant
   offsets from two pointers.  The block's pixels are RP consecutive outputs of one row (row mode:
   pixel p reads from x + p*stride*lanes) or, for a 1x1 stride-1 convolution over a frame without
   halo, RP consecutive pixels of the whole map (flat mode: the map is one long row; the pointwise
   kernel).  A block that would run past the end of its row (map) or past the last stack starts
   earlier instead and overlaps its neighbour: every block is full, overlapped outputs are computed
   twice in the same order (the same values).  Blocks are numbered stack group first, so one
   worker's chunk of consecutive blocks reuses one group's weights from its L2 cache. */

/* block u of conv op: its first output stack (so) and the row and column of each of its RP pixels;
   returns the input offset of its first pixel's top-left tap in the first input stack of its group */
AI size_t conv_block(const op_t *op, long u, const int RQ, const int RP, int *so, int *rr, int *cc) {
  const tensor_t *ti = &TENS[op->in[0]], *to = &TENS[op->out];
  const int So = stacks(to->C), OW = to->W;
  const long P = (long)to->H * OW, nb = (OW + RP - 1) / RP;
  const long per = op->flat ? (P + RP - 1) / RP : to->H * nb;
  int s0 = (int)(u / per) * RQ;
  const long b = u % per;
  if (s0 + RQ > So) s0 = So - RQ;
  *so = s0;
  const int s_lo = op->gin ? (s0 / op->gout) * op->gin : 0;
  if (op->flat) {
    long q0 = b * RP;
    if (q0 + RP > P) q0 = P - RP;
    int r = (int)(q0 / OW), c = (int)(q0 % OW);
    for (int p = 0; p < RP; ++p) { rr[p] = r; cc[p] = c; if (++c == OW) { c = 0; ++r; } }
    return tidx(ti, s_lo, 0, 0) + (size_t)q0 * B_(ti)->lanes;
  }
  const int r = (int)(b / nb);
  int c0 = (int)(b % nb) * RP;
  if (c0 + RP > OW) c0 = OW - RP;
  for (int p = 0; p < RP; ++p) { rr[p] = r; cc[p] = c0 + p; }
  return tidx(ti, s_lo, r * op->stride - op->pt, c0 * op->stride - op->pl);
}

/* the epilogue of one output vector: + bias, + the fused residual (after rounding the conv's own
   output to binary16 when imprecise, as the reference does), ReLU, the store */
AI void conv_out(const op_t *op, int so, int r, int c, vf acc, const int MODE) {
  const tensor_t *to = &TENS[op->out];
  const float *bias = (const float *)(WSEC[op - OPS] + BIAS_OFF[op - OPS]);
  vf y = acc + ldf(bias + (size_t)so * V);
  if (op->res >= 0) {
    if (MODE == IMPRECISE) y = round_h(y);
    y = y + ldt(&TENS[op->res], tidx(&TENS[op->res], so, r, c));
  }
  if (op->relu) y = relu(y);
  stt(to, tidx(to, so, r, c), y, op->rnd);
}

/* what every generated kernel starts with: the input frame's geometry and the weight section */
#define CONV_GEOMETRY \
  const tensor_t *ti = &TENS[op->in[0]]; const buffer_t *bi = B_(ti); \
  const int KH = op->kh, KW = op->kw, L = bi->lanes, Si = op->gin ? op->gin : stacks(ti->C); \
  const size_t xss = (size_t)bi->Hp * bi->Wp * L, xrs = (size_t)bi->Wp * L, wss = (size_t)Si * KH * KW * V * V; \
  (void)L

/* ------------------------------------------------------------------ int8 mode (issue 35) */
/* u8 activations (per-tensor scale, quantised on the fly from the float32 frame: clamp(rint(x * inv),
   0, 255)) x s8 weights (per output map scale), summed exactly in s32; the float32 epilogue is
   float(acc) * mult[m] + bias[m] (two roundings: the build has -ffp-contract=off), + residual, ReLU.
   The numpy reference is numerics.conv2d_int8_nchw.  Weight section: s8 (S_out, S_in, KH, KW,
   V/4 groups, V output maps, 4 input maps), then float32 bias[S_out*V], mult[S_out*V], inv. */
#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && V == 16 && !defined(CAPP_NO_VNNI)
#define INT8_VNNI 1
#else
#define INT8_VNNI 0
#endif
AI float int8_inv(const op_t *op) {
  const float *bias = (const float *)(WSEC[op - OPS] + BIAS_OFF[op - OPS]);
  return bias[2 * (size_t)stacks(TENS[op->out].C) * V];
}
AI int quant1(float x, float inv) {
  float y = x * inv;
  if (!(y < 255.0f)) y = 255.0f;                 /* also NaN, as the vector path's min */
  const long q = lrintf(y);                      /* round half to even (default rounding mode) */
  return q < 0 ? 0 : (int)q;
}
#if INT8_VNNI
AI __m128i quant_u8(const float *x, __m512 inv) {
  const __m512 y = _mm512_min_ps(_mm512_mul_ps(_mm512_loadu_ps(x), inv), _mm512_set1_ps(255.0f));
  return _mm512_cvtusepi32_epi8(_mm512_max_epi32(_mm512_cvtps_epi32(y), _mm512_setzero_si512()));
}
#endif
AI void conv_out_i8(const op_t *op, int so, int r, int c, vi acc) {
  const tensor_t *to = &TENS[op->out];
  const float *bias = (const float *)(WSEC[op - OPS] + BIAS_OFF[op - OPS]);
  const float *mult = bias + (size_t)stacks(to->C) * V;
  vf y = __builtin_convertvector(acc, vf) * ldf(mult + (size_t)so * V);
  y = y + ldf(bias + (size_t)so * V);
  if (op->res >= 0) y = y + ldt(&TENS[op->res], tidx(&TENS[op->res], so, r, c));
  if (op->relu) y = relu(y);
  stt(to, tidx(to, so, r, c), y, 0);
}
/* the fallback without AVX-512 VNNI: the same exact sums in plain C (correct, slow) */
static __attribute__((unused, noinline)) void conv_i8_plain(const op_t *op, long u0, long u1) {
  CONV_GEOMETRY;
  const int RQ = op->rq, RP = op->rp;
  const float *XB = (const float *)(ARENA + bi->off); const int8_t *WB = (const int8_t *)WSEC[op - OPS];
  const float inv = int8_inv(op);
  const size_t ps = (size_t)L * (op->flat ? 1 : op->stride);
  for (long u = u0; u < u1; ++u) {
    int so, rr[64], cc[64];
    const float *X = XB + conv_block(op, u, RQ, RP, &so, rr, cc); const int8_t *W = WB + (size_t)so * wss;
    int32_t acc[8][64][V];
    memset(acc, 0, sizeof acc);
    for (int s = 0; s < Si; ++s)
      for (int i = 0; i < KH; ++i)
        for (int j = 0; j < KW; ++j) {
          const float *x = X + s * xss + i * xrs + (size_t)j * L;
          const int8_t *w = W + ((size_t)(s * KH + i) * KW + j) * V * V;
          for (int p = 0; p < RP; ++p)
            for (int k = 0; k < V; ++k) {
              const int xq = quant1(x[p * ps + k], inv);
              if (!xq) continue;
              for (int q = 0; q < RQ; ++q)
                for (int m = 0; m < V; ++m) acc[q][p][m] += xq * w[q * wss + (size_t)(k / 4) * 4 * V + m * 4 + k % 4];
            }
        }
    for (int q = 0; q < RQ; ++q)
      for (int p = 0; p < RP; ++p) { vi a; memcpy(&a, acc[q][p], sizeof a); conv_out_i8(op, so + q, rr[p], cc[p], a); }
  }
}

/*@CONV_KERNELS@*/

/* ------------------------------------------------------------------ depthwise convolution */
/* unit: one stack x NBD consecutive output pixels of a row; weights (S, KH, KW, V) */
/* a full block of NBD outputs of a 3-wide kernel: each input row segment is loaded once into
   registers and serves all three taps (the sum order per output stays kernel row, then column) */
AI void dw_block3(const op_t *op, const tensor_t *ti, int s, int r, int c0, vf *acc, const int ST, const int MODE,
                  const int NBW) {
  const float *wf = (const float *)WSEC[op - OPS]; const h16 *wh = (const h16 *)WSEC[op - OPS];
  for (int i = 0; i < op->kh; ++i) {
    const size_t wb = (((size_t)s * op->kh + i) * 3) * V;
    const vf w0 = MODE == IMPRECISE ? ldh(wh + wb) : ldf(wf + wb);
    const vf w1 = MODE == IMPRECISE ? ldh(wh + wb + V) : ldf(wf + wb + V);
    const vf w2 = MODE == IMPRECISE ? ldh(wh + wb + 2 * V) : ldf(wf + wb + 2 * V);
    const size_t xb = tidx(ti, s, r * ST - op->pt + i, c0 * ST - op->pl);
    vf x[(NBD - 1) * 2 + 3];
#pragma GCC unroll 32
    for (int q = 0; q < (NBW - 1) * ST + 3; ++q) x[q] = ldt(ti, xb + (size_t)q * V);
#pragma GCC unroll 16
    for (int p = 0; p < NBW; ++p) {
      acc[p] = mla(acc[p], x[p * ST], w0, MODE != PRECISE);
      acc[p] = mla(acc[p], x[p * ST + 1], w1, MODE != PRECISE);
      acc[p] = mla(acc[p], x[p * ST + 2], w2, MODE != PRECISE);
    }
  }
}

AI void dw_units(const op_t *op, long u0, long u1, const int MODE) {
  const tensor_t *ti = &TENS[op->in[0]], *to = &TENS[op->out];
  const int OW = to->W, OH = to->H, st = op->stride, KH = op->kh, KW = op->kw;
  const long blocks = (OW + NBD - 1) / NBD;
  const float *wf = (const float *)WSEC[op - OPS]; const h16 *wh = (const h16 *)WSEC[op - OPS];
  const float *bias = (const float *)(WSEC[op - OPS] + BIAS_OFF[op - OPS]);
  for (long u = u0; u < u1; ++u) {
    const int s = (int)(u / (OH * blocks)), r = (int)(u / blocks % OH);
    int c0 = (int)(u % blocks) * NBD;
    if (c0 + NBD > OW && OW >= NBD) c0 = OW - NBD;      /* the last block overlaps its neighbour: full */
    const int n = OW - c0 < NBD ? OW - c0 : NBD;
    vf acc[NBD];
#pragma GCC unroll 16
    for (int p = 0; p < NBD; ++p) acc[p] = (vf){0};
    if (n == NBD && KW == 3 && st == 1) dw_block3(op, ti, s, r, c0, acc, 1, MODE, NBD);
    else if (n == NBD && KW == 3 && st == 2) dw_block3(op, ti, s, r, c0, acc, 2, MODE, NBD);
    else if (n == 7 && KW == 3 && st == 1) dw_block3(op, ti, s, r, c0, acc, 1, MODE, 7);     /* 7x7 maps */
    else if (n == 7 && KW == 3 && st == 2) dw_block3(op, ti, s, r, c0, acc, 2, MODE, 7);
    else for (int i = 0; i < KH; ++i)
      for (int j = 0; j < KW; ++j) {
        const size_t wb = (((size_t)s * KH + i) * KW + j) * V;
        const vf w = MODE == IMPRECISE ? ldh(wh + wb) : ldf(wf + wb);
        const size_t xb = tidx(ti, s, r * st - op->pt + i, c0 * st - op->pl + j);
        if (n == NBD) {
#pragma GCC unroll 16
          for (int p = 0; p < NBD; ++p) acc[p] = mla(acc[p], ldt(ti, xb + (size_t)p * st * V), w, MODE != PRECISE);
        } else {
          for (int p = 0; p < n; ++p) acc[p] = mla(acc[p], ldt(ti, xb + (size_t)p * st * V), w, MODE != PRECISE);
        }
      }
    const vf b = ldf(bias + (size_t)s * V);
    for (int p = 0; p < n; ++p) {
      vf y = acc[p] + b;
      if (op->res >= 0) {
        if (MODE == IMPRECISE) y = round_h(y);
        y = y + ldt(&TENS[op->res], tidx(&TENS[op->res], s, r, c0 + p));
      }
      if (op->relu) y = relu(y);
      stt(to, tidx(to, s, r, c0 + p), y, op->rnd);
    }
  }
}
static __attribute__((noinline)) void dw_p(const op_t *op, long u0, long u1) { if (USE_DW_P) dw_units(op, u0, u1, PRECISE); else abort(); }
static __attribute__((noinline)) void dw_r(const op_t *op, long u0, long u1) { if (USE_DW_R) dw_units(op, u0, u1, RELAXED); else abort(); }
static __attribute__((noinline)) void dw_i(const op_t *op, long u0, long u1) { if (USE_DW_I) dw_units(op, u0, u1, IMPRECISE); else abort(); }

/* ------------------------------------------------------------------ pooling, add, LRN, softmax, copy */
/* unit: one row of one stack.  Max ignores the padding; average divides by the in-bounds count, or
   with count_pad by the window clipped to the padded map (ONNX count_include_pad). */
/* output row r of stack s, columns cb .. ce - 1 */
static void pool_span(const op_t *op, int s, int r, int cb, int ce, int is_max) {
  const tensor_t *ti = &TENS[op->in[0]], *to = &TENS[op->out];
  const int H = ti->H, W = ti->W, k = op->kh, st = op->stride;
  {
    int r0 = r * st - op->pt, r1 = r0 + k;
    const int pr0 = r0, pr1 = r1 < H + op->pb ? r1 : H + op->pb;
    if (r0 < 0) r0 = 0;
    if (r1 > H) r1 = H;
    for (int c = cb; c < ce; ++c) {
      int c0 = c * st - op->pl, c1 = c0 + k;
      const int pc0 = c0, pc1 = c1 < W + op->pr ? c1 : W + op->pr;
      if (c0 < 0) c0 = 0;
      if (c1 > W) c1 = W;
      const size_t b0 = tidx(ti, s, r0, c0), rs = (size_t)B_(ti)->Wp * B_(ti)->lanes, cs = B_(ti)->lanes;
      vf acc = is_max ? ldt(ti, b0) : (vf){0};
      for (int i = 0; i < r1 - r0; ++i)
        for (int j = 0; j < c1 - c0; ++j) {
          const vf x = ldt(ti, b0 + i * rs + j * cs);
          acc = is_max ? vmax(acc, x) : acc + x;
        }
      if (!is_max) acc = acc / (float)(op->count_pad ? (pr1 - pr0) * (pc1 - pc0) : (r1 - r0) * (c1 - c0));
      stt(to, tidx(to, s, r, c), acc, op->rnd);
    }
  }
}

/* unit: one output row of one stack */
static void pool_units(const op_t *op, long u0, long u1, int is_max) {
  const int OH = TENS[op->out].H, OW = TENS[op->out].W;
  for (long u = u0; u < u1; ++u) pool_span(op, (int)(u / OH), (int)(u % OH), 0, OW, is_max);
}

/* unit: one stack; the mean of each whole map, summed row by row */
static void gap_units(const op_t *op, long u0, long u1) {
  const tensor_t *ti = &TENS[op->in[0]], *to = &TENS[op->out];
  for (long s = u0; s < u1; ++s) {
    vf acc = (vf){0};
    for (int i = 0; i < ti->H; ++i)
      for (int j = 0; j < ti->W; ++j) acc = acc + ldt(ti, tidx(ti, (int)s, i, j));
    stt(to, tidx(to, (int)s, 0, 0), acc / (float)(ti->H * ti->W), op->rnd);
  }
}

/* unit: one row of one stack; inputs summed left to right, then the ReLU */
static void add_units(const op_t *op, long u0, long u1) {
  const tensor_t *to = &TENS[op->out];
  for (long u = u0; u < u1; ++u) {
    const int s = (int)(u / to->H), r = (int)(u % to->H);
    for (int c = 0; c < to->W; ++c) {
      vf y = ldt(&TENS[op->in[0]], tidx(&TENS[op->in[0]], s, r, c));
      for (int k = 1; k < op->nin; ++k) y = y + ldt(&TENS[op->in[k]], tidx(&TENS[op->in[k]], s, r, c));
      if (op->relu) y = relu(y);
      stt(to, tidx(to, s, r, c), y, op->rnd);
    }
  }
}

/* unit: one row; ONNX LRN across maps.  Per pixel the squares of all maps go to a zero-padded line,
   then each stack's window sums are `size` vector loads at shifted offsets (the same order as the
   reference: window position 0, 1, ...); base^beta is sqrt(base) * sqrt(sqrt(base)) for the usual
   beta = 0.75 (three correctly rounded operations, a few ulp), powf lane by lane otherwise. */
AI vf vsqrt(vf x) {
#if defined(__AVX512F__) && V == 16
  return (vf)_mm512_sqrt_ps((__m512)x);
#elif defined(__AVX__) && V == 8
  return (vf)_mm256_sqrt_ps((__m256)x);
#elif defined(__SSE__) && V == 4
  return (vf)_mm_sqrt_ps((__m128)x);
#else
  vf r; for (int k = 0; k < V; ++k) r[k] = sqrtf(x[k]); return r;
#endif
}
static void lrn_units(const op_t *op, long u0, long u1) {
  const tensor_t *ti = &TENS[op->in[0]], *to = &TENS[op->out];
  const int C = ti->C, S = stacks(C), lo = (op->size - 1) / 2, n = op->size;
  const vf kb = bcast(op->kbias), al = bcast(op->alpha / op->size);
  const int b075 = op->beta == 0.75f;
  float sq[(S + 1) * V + 2 * n];
  memset(sq, 0, sizeof sq);
  for (long r = u0; r < u1; ++r)
    for (int c = 0; c < ti->W; ++c) {
      for (int s = 0; s < S; ++s) { const vf x = ldt(ti, tidx(ti, s, (int)r, c)); stf(sq + lo + s * V, x * x); }
      for (int m = C; m < S * V; ++m) sq[lo + m] = 0.0f;           /* lanes past the last map */
      for (int s = 0; s < S; ++s) {
        vf sum = ldf(sq + s * V);
        for (int d = 1; d < n; ++d) sum = sum + ldf(sq + s * V + d);
        const vf base = kb + al * sum;
        vf p;
        if (b075) { const vf q = vsqrt(base); p = q * vsqrt(q); }
        else for (int l = 0; l < V; ++l) p[l] = powf(base[l], op->beta);
        vf y = ldt(ti, tidx(ti, s, (int)r, c)) / p;
        if (s == S - 1) for (int l = C - s * V; l < V; ++l) y[l] = 0.0f;
        stt(to, tidx(to, s, (int)r, c), y, op->rnd);
      }
    }
}

/* single unit: softmax over all C*H*W values of the sample (max subtracted first) */
static void softmax_units(const op_t *op, long u0, long u1) {
  if (u0 >= u1) return;
  const tensor_t *ti = &TENS[op->in[0]], *to = &TENS[op->out];
  float mx = -INFINITY, sum = 0.0f;
  for (int m = 0; m < ti->C; ++m) for (int r = 0; r < ti->H; ++r) for (int c = 0; c < ti->W; ++c) {
    const float x = ld1(ti, tidx(ti, m / V, r, c) + m % V); if (x > mx) mx = x;
  }
  for (int m = 0; m < ti->C; ++m) for (int r = 0; r < ti->H; ++r) for (int c = 0; c < ti->W; ++c)
    sum += expf(ld1(ti, tidx(ti, m / V, r, c) + m % V) - mx);
  for (int s = 0; s < stacks(ti->C); ++s) for (int r = 0; r < ti->H; ++r) for (int c = 0; c < ti->W; ++c) {
    float y[V];
    for (int l = 0; l < V; ++l) {
      const int m = s * V + l;
      y[l] = m < ti->C ? expf(ld1(ti, tidx(ti, s, r, c) + l) - mx) / sum : 0.0f;
    }
    stt(to, tidx(to, s, r, c), ldf(y), op->rnd);
  }
}

/* unit: one row; copies every map into the output tensor, which may start at any channel of its
   buffer (a concatenation whose slice is not stack-aligned, or whose input is also read elsewhere) */
static void copy_units(const op_t *op, long u0, long u1) {
  const tensor_t *ti = &TENS[op->in[0]], *to = &TENS[op->out];
  const buffer_t *bo = B_(to);
  for (long r = u0; r < u1; ++r)
    for (int c = 0; c < ti->W; ++c)
      for (int m = 0; m < ti->C; ++m) {
        const float x = ld1(ti, tidx(ti, m / V, (int)r, c) + m % V);
        const int mo = to->c0 + m;
        const size_t i = (((size_t)(mo / V) * bo->Hp + r + bo->halo) * bo->Wp + c + bo->halo) * V + mo % V;
        if (IS_HALF(to)) th(to)[i] = f2h(x); else tf(to)[i] = x;
      }
}

/* ------------------------------------------------------------------ driver */
static long op_units(const op_t *op) {
  const tensor_t *to = &TENS[op->out];
  const long P = (long)to->H * to->W, So = stacks(to->C);
  switch (op->kind) {
    case K_CONV: {       /* blocks: stack groups x (rows x blocks per row, or blocks of the flat map) */
      const long G = (So + op->rq - 1) / op->rq;
      const long rows = op->pool >= 0 ? to->H / OPS[op->pool].kh : to->H;     /* fused: bands of k rows */
      return op->flat ? G * ((P + op->rp - 1) / op->rp) : G * rows * ((to->W + op->rp - 1) / op->rp);
    }
    case K_DW: return So * to->H * ((to->W + NBD - 1) / NBD);
    case K_MAXPOOL: case K_AVGPOOL: case K_ADD: return So * to->H;
    case K_GAP: return So;
    case K_LRN: case K_COPY: return to->H;
    default: return 1;
  }
}

/* a convolution with its max pooling fused (synth_program.fuse_pools): a unit is one stack group x
   one band of k output rows x one block; the band's k rows of the block, then the pooling of the
   block's windows while they are in L1 (no pass of its own over the map, no wait between the two) */
static void conv_pool_units(const op_t *op, long u0, long u1) {
  const op_t *po = &OPS[op->pool];
  const tensor_t *to = &TENS[op->out];
  const int k = po->kh, OW = to->W, RP = op->rp, RQ = op->rq, So = stacks(to->C);
  const long nb = (OW + RP - 1) / RP, per = (long)to->H * nb, band = (long)(to->H / k) * nb;
  for (long v = u0; v < u1; ++v) {
    const long g = v / band, pr = v % band / nb, b = v % nb;
    for (int t = 0; t < k; ++t) {
      const long cu = g * per + (pr * k + t) * nb + b;
      CONV_FN[op - OPS](op, cu, cu + 1);
    }
    int s0 = (int)g * RQ, c0 = (int)b * RP;
    if (s0 + RQ > So) s0 = So - RQ;
    if (c0 + RP > OW) c0 = OW - RP;
    for (int s = s0; s < s0 + RQ; ++s) pool_span(po, s, (int)pr, (c0 + k - 1) / k, (c0 + RP) / k, 1);
  }
}

static void run_op(const op_t *op, long u0, long u1) {
  FTZ_ON(op->mode == RELAXED);
  switch (op->kind) {
    case K_CONV:
      if (op->pool >= 0) conv_pool_units(op, u0, u1);
      else CONV_FN[op - OPS](op, u0, u1);     /* the generated micro-kernel of its block shape and mode */
      break;
    case K_DW: (op->mode == PRECISE ? dw_p : op->mode == RELAXED ? dw_r : dw_i)(op, u0, u1); break;
    case K_MAXPOOL: pool_units(op, u0, u1, 1); break;
    case K_AVGPOOL: pool_units(op, u0, u1, 0); break;
    case K_GAP: gap_units(op, u0, u1); break;
    case K_ADD: add_units(op, u0, u1); break;
    case K_LRN: lrn_units(op, u0, u1); break;
    case K_SOFTMAX: softmax_units(op, u0, u1); break;
    case K_COPY: copy_units(op, u0, u1); break;
  }
  FTZ_OFF();
}

static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }
static double cpu_now(void) { struct timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }
static double op_seconds[N_OPS], op_cpu_seconds[N_OPS];     /* wall and worker-0 CPU time per op */
static unsigned char ALONE[N_OPS];    /* --alone: ops worker 0 runs in one chunk, whatever the table says */
static int profile = 0;

/* row-major image -> the input tensor's map-major frame; unit: one row of one stack */
static void pack_input(const float *img, long u0, long u1) {
  const tensor_t *t = &TENS[0];
  for (long u = u0; u < u1; ++u) {
    const int s = (int)(u / t->H), r = (int)(u % t->H);
    for (int c = 0; c < t->W; ++c) {
      const int L = B_(t)->lanes;
      float y[V];
      for (int l = 0; l < V; ++l) { const int m = s * V + l; y[l] = m < t->C ? img[((size_t)m * t->H + r) * t->W + c] : 0.0f; }
      if (L == V) stt(t, tidx(t, s, r, c), ldf(y), PRECISE);
      else for (int l = 0; l < L; ++l) tf(t)[tidx(t, s, r, c) + l] = y[l];     /* a narrow input frame */
    }
  }
}

/* the output tensor in NCHW order */
static void read_output(float *dst) {
  const tensor_t *t = &TENS[OUT_TENSOR];
  for (int m = 0; m < t->C; ++m) for (int r = 0; r < t->H; ++r) for (int c = 0; c < t->W; ++c)
    dst[((size_t)m * t->H + r) * t->W + c] = ld1(t, tidx(t, m / V, r, c) + m % V);
}

/* phase k (0: packing the input, 1 + i: op i) of image `gen`: claim chunks of its units until none is
   left, then wait until all are done (so the next phase may read what this one wrote) */
static long claim_[N_OPS + 2], done_[N_OPS + 2], gen0_;     /* phase N_OPS + 1: reading the output */
static float *outputs_;

static void run_phase(int k, long gen, long U, int w, int nt, int chunks, const float *img) {
  const long nc = nt == 1 || chunks < 1 ? 1 : chunks < U ? chunks : U, base = gen * nc, end = base + nc;
  /* a one-chunk phase is worker 0's: consecutive small ops stay on one core, and a worker the
     system has descheduled never holds one */
  long c = nc == 1 && w != 0 ? end : __atomic_load_n(&claim_[k], __ATOMIC_ACQUIRE);
  while (c < end) {
    if (c < base) { c = __atomic_load_n(&claim_[k], __ATOMIC_ACQUIRE); cpu_relax(); continue; }   /* cannot happen */
    if (!__atomic_compare_exchange_n(&claim_[k], &c, c + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
    const long j = c - base, u0 = U * j / nc, u1 = U * (j + 1) / nc;
    if (k == 0) pack_input(img, u0, u1);
    else if (k <= N_OPS) run_op(&OPS[k - 1], u0, u1);
    else if (outputs_) read_output(outputs_ + (size_t)(gen - gen0_) * NOUT);
    __atomic_add_fetch(&done_[k], 1, __ATOMIC_ACQ_REL);
    c = __atomic_load_n(&claim_[k], __ATOMIC_ACQUIRE);
  }
  wait_at_least(&done_[k], end);
}

static void run_pass(const float *images, int count, float *outputs, int threads) {
  outputs_ = outputs;
  #pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    const int w = omp_get_thread_num(), nt = omp_get_num_threads();
#else
    const int w = 0, nt = 1;
#endif
    for (int b = 0; b < count; ++b) {
      const long gen = gen0_ + b;
      run_phase(0, gen, (long)stacks(TENS[0].C) * TENS[0].H, w, nt, PACK_CHUNKS, images + (size_t)b * IMG);
      double t0 = profile && w == 0 ? now() : 0.0, c0 = profile && w == 0 ? cpu_now() : 0.0;
      for (int i = 0; i < N_OPS; ++i) {
        if (OPS[i].kind == K_NONE || OPS[i].fused) continue;   /* a concatenation its inputs wrote, a fused pooling */
        run_phase(i + 1, gen, op_units(&OPS[i]), w, nt, ALONE[i] ? 1 : OPS[i].chunks, NULL);
        if (profile && w == 0) {
          const double t1 = now(), c1 = cpu_now();
          op_seconds[i] += t1 - t0; op_cpu_seconds[i] += c1 - c0; t0 = t1; c0 = c1;
        }
      }
      /* reading the output is a phase too: the next image's last op must not overwrite it first */
      run_phase(N_OPS + 1, gen, 1, w, nt, 1, NULL);
    }
  }
  gen0_ += count;
}

/* ------------------------------------------------------------------ weight file */
static int fail(const char *path, const char *what) {
  fprintf(stderr, "weight file %s: %s\n", path, what);
  return 3;
}
static uint64_t rd64(const unsigned char *p) { uint64_t v = 0; for (int k = 7; k >= 0; --k) v = v << 8 | p[k]; return v; }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static int load_weights(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail(path, "cannot open");
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = NULL;
  if (size < 32 || posix_memalign((void **)&data, 64, (size_t)size) || fread(data, 1, (size_t)size, f) != (size_t)size) {
    fclose(f); return fail(path, size < 32 ? "shorter than its header" : "cannot read");
  }
  fclose(f);
  const unsigned char *h = (const unsigned char *)data;
  char msg[200];
  if (memcmp(h, WF_MAGIC, 8)) return fail(path, "not a Cappuccino weight file (bad magic)");
  if (rd32(h + 8) != WF_VERSION) { snprintf(msg, sizeof msg, "format version %u, this program reads %d", rd32(h + 8), WF_VERSION); return fail(path, msg); }
  if (rd32(h + 12) != V) { snprintf(msg, sizeof msg, "written for vector width %u, this program has V=%d", rd32(h + 12), V); return fail(path, msg); }
  if (rd32(h + 16) != N_OPS) { snprintf(msg, sizeof msg, "%u ops, this program has %d", rd32(h + 16), N_OPS); return fail(path, msg); }
  if (rd64(h + 24) != WF_FINGERPRINT) return fail(path, "written for another network or other modes (fingerprint differs)");
  if ((size_t)size < 32 + 16 * (size_t)N_OPS) return fail(path, "truncated op table");
  for (int i = 0; i < N_OPS; ++i) {
    const uint64_t off = rd64(h + 32 + 16 * i), n = rd64(h + 40 + 16 * i);
    if (n != SEC_BYTES[i]) { snprintf(msg, sizeof msg, "op %d (%s): %llu bytes of weights, expected %llu", i, OPS[i].name,
                                      (unsigned long long)n, (unsigned long long)SEC_BYTES[i]); return fail(path, msg); }
    if (off % 64 || off + n > (uint64_t)size) { snprintf(msg, sizeof msg, "op %d (%s): section at %llu+%llu outside the file (%ld bytes)",
                                                        i, OPS[i].name, (unsigned long long)off, (unsigned long long)n, size); return fail(path, msg); }
    WSEC[i] = data + off;
  }
  return 0;
}

/* "I,J,K" (op indices; "-" for none) -> mask; 1 and a message on a bad index */
static int parse_ops(const char *text, unsigned char *mask) {
  memset(mask, 0, N_OPS);
  if (!strcmp(text, "-")) return 0;
  for (const char *p = text; *p; ) {
    char *end;
    const long i = strtol(p, &end, 10);
    if (end == p || i < 0 || i >= N_OPS) { fprintf(stderr, "bad op index in %s\n", text); return 1; }
    mask[i] = 1;
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

/* --splits A/B/...: time the program with each split (A: the op indices worker 0 runs alone) in
   `rounds` rounds, the splits in turn (reversed in odd rounds), each for at least min_seconds, and
   print per split and round its passes, seconds and per-op wall time (core/cappuccino/sharing.py):
   one process, so the weights load once, and alternation inside it */
#define MAX_SPLITS 8
static int run_splits(const char *arg, int rounds, const float *images, float *out, int count, int threads,
                      double min_seconds) {
  static unsigned char masks[MAX_SPLITS][N_OPS];
  char buf[65536];
  int ns = 0;
  if (strlen(arg) >= sizeof buf || rounds < 1) { fprintf(stderr, "--splits too long or --rounds < 1\n"); return 2; }
  strcpy(buf, arg);
  for (char *tok = strtok(buf, "/"); tok; tok = strtok(NULL, "/")) {
    if (ns == MAX_SPLITS) { fprintf(stderr, "--splits: at most %d\n", MAX_SPLITS); return 2; }
    if (parse_ops(tok, masks[ns++])) return 2;
  }
  profile = 1;
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < ns; ++k) {
      const int sp = r % 2 == 0 ? k : ns - 1 - k;
      memcpy(ALONE, masks[sp], N_OPS);
      /* a phase's claim and done counters count chunks of every image so far (gen x chunks): with the
         chunk counts changed they start again from zero (no worker runs between passes) */
      memset(claim_, 0, sizeof claim_);
      memset(done_, 0, sizeof done_);
      gen0_ = 0;
      memset(op_seconds, 0, sizeof op_seconds);
      memset(op_cpu_seconds, 0, sizeof op_cpu_seconds);
      int passes = 0;
      double t0 = now(), t = t0;
      do { run_pass(images, count, NULL, threads); ++passes; t = now(); } while (t - t0 < min_seconds);
      printf("split %d round %d passes %d seconds %.9f\n", sp, r, passes, t - t0);
      for (int i = 0; i < N_OPS; ++i) printf("sop %d %d %.3f\n", sp, i, 1e6 * op_seconds[i] / ((double)passes * count));
      /* the split's own output, from a cleared arena (an op the split skipped would leave zeros) */
      memset(ARENA, 0, ARENA_BYTES);
      run_pass(images, count, out, threads);
      printf("sout %d %d", sp, r);
      for (int k = 0; k < NOUT; ++k) printf(" %.9g", out[k]);
      printf("\n");
    }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: %s weights.bin images.f32 count min_seconds [threads] [--profile] [--dump FILE] [--alone I,J,...] [--splits A/B/... [--rounds R]]\n", argv[0]); return 2; }
  const int count = atoi(argv[3]);
  const double min_seconds = atof(argv[4]);
  int threads = THREADS, rounds = 3;
  const char *dump = NULL, *splits = NULL;
  for (int a = 5; a < argc; ++a) {
    if (!strcmp(argv[a], "--profile")) profile = 1;
    else if (!strcmp(argv[a], "--dump") && a + 1 < argc) dump = argv[++a];
    else if (!strcmp(argv[a], "--alone") && a + 1 < argc) {   /* ops run by worker 0 alone */
      if (parse_ops(argv[++a], ALONE)) return 2;
    }
    else if (!strcmp(argv[a], "--splits") && a + 1 < argc) splits = argv[++a];
    else if (!strcmp(argv[a], "--rounds") && a + 1 < argc) rounds = atoi(argv[++a]);
    else threads = atoi(argv[a]);
  }
  if (count < 1 || threads < 1) { fprintf(stderr, "count and threads must be >= 1\n"); return 2; }
  if (!ANY_SHARED) threads = 1;      /* no op has enough work to share: a second worker would only wait */
  const int rc = load_weights(argv[1]);
  if (rc) return rc;
  if (posix_memalign((void **)&ARENA, 64, ARENA_BYTES)) { fprintf(stderr, "out of memory\n"); return 2; }
  memset(ARENA, 0, ARENA_BYTES);                       /* halos and padding lanes stay zero */
  float *images = malloc(sizeof(float) * (size_t)count * IMG);
  float *outputs = malloc(sizeof(float) * (size_t)count * NOUT);
  FILE *f = fopen(argv[2], "rb");
  if (!f || fread(images, sizeof(float), (size_t)count * IMG, f) != (size_t)count * IMG) {
    fprintf(stderr, "cannot read %d images from %s\n", count, argv[2]); return 2;
  }
  fclose(f);
  run_pass(images, count, outputs, threads);
  if (dump) {                 /* every tensor of the last image, NCHW float32, in tensor order */
    FILE *d = fopen(dump, "wb");
    if (!d) { fprintf(stderr, "cannot write %s\n", dump); return 2; }
    for (int i = 0; i < N_TENS; ++i) {
      const tensor_t *t = &TENS[i];
      for (int m = 0; m < t->C; ++m) for (int r = 0; r < t->H; ++r) for (int c = 0; c < t->W; ++c) {
        const float x = ld1(t, tidx(t, m / V, r, c) + m % V); fwrite(&x, 4, 1, d);
      }
    }
    fclose(d);
  }
  printf("pred");
  for (int b = 0; b < count; ++b) {
    int best = 0;
    for (int k = 1; k < NOUT; ++k) if (outputs[(size_t)b * NOUT + k] > outputs[(size_t)b * NOUT + best]) best = k;
    printf(" %d", best);
  }
  printf("\n");
  for (int b = 0; b < count; ++b) {
    printf("logit");
    for (int k = 0; k < NOUT; ++k) printf(" %.9g", outputs[(size_t)b * NOUT + k]);
    printf("\n");
  }
  if (splits) {
    const int rc2 = run_splits(splits, rounds, images, outputs, count, threads, min_seconds);
    free(images); free(outputs);
    return rc2;
  }
  memset(op_seconds, 0, sizeof op_seconds);
  memset(op_cpu_seconds, 0, sizeof op_cpu_seconds);
  int passes = 0;
  struct timespec c0, c1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  double t0 = now(), t = t0;
  do { run_pass(images, count, NULL, threads); ++passes; t = now(); } while (t - t0 < min_seconds);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  printf("passes %d seconds %.9f\n", passes, t - t0);
  printf("cpu_seconds %.9f\n", (c1.tv_sec - c0.tv_sec) + 1e-9 * (c1.tv_nsec - c0.tv_nsec));   /* all threads */
  {                           /* peak resident memory of this process (VmHWM; Linux) */
    FILE *st = fopen("/proc/self/status", "r");
    char line[256];
    while (st && fgets(line, sizeof line, st))
      if (!strncmp(line, "VmHWM:", 6)) printf("peak_rss_kb %ld\n", atol(line + 6));
    if (st) fclose(st);
  }
  if (profile)
    for (int i = 0; i < N_OPS; ++i)
      printf("op %s %s %.3f us wall %.3f us cpu\n", OPS[i].name, KIND_NAMES[OPS[i].kind],
             1e6 * op_seconds[i] / ((double)passes * count), 1e6 * op_cpu_seconds[i] / ((double)passes * count));
  free(images); free(outputs);
  return 0;
}
