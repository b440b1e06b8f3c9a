"""C code generated from a MERIT transform: the paper's point that a transform *is* a kernel.

Every operand read is affine in the indices (eq. 5): with the operand's zero padding stored, element
(k) of M(op) sits at  base + sum_j k_j * stride_j  of the padded buffer. From that one fact come
three kernels, all for float32, each a function `void NAME(const float *in0, ..., float *out)`:

* naive: the plain loop nest, every output's ranged inner product (PreLoop / Loop / PostLoop of
  Listings 1 and 2) walked index by index; no pragmas.
* tiled: the engine's tile. OpenMP over the p-tiles (from PARALLEL_MIN_WORK steps); one parallel
  index of the tile is the vector of lanes (`lane_index`), each lane running the ranged inner product
  of its output over the a-tile, vectorised across lanes by `#pragma omp simd` (lane = element of the
  p-tile, step = element of the a-tile, as in the bank analysis and as the threads of the CUDA
  kernel); or, where the innermost accumulated index is a unit-stride run, the inner product itself is
  the vector (`vector_mode`). A short whole a-tile is written out step by step, with several outputs
  per lane (unroll-and-jam) so that overlapping reads are loaded once; with several a-tiles the
  partial sums stay in the tile's array (output stationary) while the a-tiles pass.
* packed (GEMM-like transforms only: a bilinear strategy whose parallel indices split into those
  only A moves with (M), only B moves with (N) and both move with (batch)): the tile of M(A) and of
  M(B) expanded on the fly into packed panels (for a convolution, im2col of one cache block) and a
  register-blocked MR x NR micro-kernel in GCC vector extensions, OpenMP over batch x N blocks (x M parts);
  narrow maps, strided inputs and short N sides get the shape paths of gemm_view and the C setup.
  The bilateral weight's e^x is `merit_expf` (EXPF), a polynomial the compiler can vectorise.
* rows (short-window transforms only, core.merit.codegen_rows): whole output rows along a unit-stride
  index as the vector, every a-step written out, OpenMP static over the rows, streaming stores for
  large outputs: for memory-bound transforms (depthwise, separable passes, pixel shuffle).

A driver `main` loads (or draws) the inputs, times every kernel alternately, writes the outputs and
prints the times as JSON; codegen_run compiles and runs it and compares with numpy.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from core.merit_transform.strategies import COMBINES, REDUCES, get_strategy
from core.merit.tiling import tile_sizes
from core.merit_transform.transform import MeritTransform, Operand

FLAGS = ["-O3", "-march=native", "-fopenmp"]
PACKED_MIN_M = 4                   # below this the MR-row micro-kernel wastes most of its rows
PANEL_MIN_N = 16                   # the output's unit-stride side is N from a vector's worth of outputs
PITCH_MAX_WASTE = 1.5              # N runs over B's row pitch where at most 1.5x the row's outputs
# Threads only where there is work for them: starting a team costs microseconds, and on a loaded
# machine a barrier waits for a descheduled thread's next time slice (measured here at a load of 14
# on 2 cores: some 4 ms per parallel region, against 0.3 ms for a 64-channel 112x112 depthwise layer).
PARALLEL_MIN_WORK = 1 << 24        # steps (p x a): several milliseconds of one core


# ---------------------------------------------------------------- addressing (eq. 5 as strides)
@dataclass
class OperandAddress:
    """Where M(op)_k lives in the padded operand buffer: base + sum_j k_j * strides[j]."""

    name: str
    padded_shape: tuple[int, ...]
    base: int
    strides: dict[str, int]

    @property
    def size(self) -> int:
        return int(np.prod(self.padded_shape, dtype=np.int64))


def operand_address(t: MeritTransform, op: Operand) -> OperandAddress:
    pad = op.padding()
    shape = tuple(int(s) + 2 * int(p) for s, p in zip(op.shape, pad))
    row = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
    base = sum(int(p) * r for p, r in zip(pad, row))
    strides = {n: 0 for n, _ in t.indices}
    for idx, m in op.maps.items():
        strides[idx] += m.stride * row[m.axis]
        base += m.offset * row[m.axis]
    return OperandAddress(op.name, shape, base, strides)


def output_strides(t: MeritTransform) -> dict[str, int]:
    """Vec(C) is row-major over the parallel indices."""
    out, acc = {}, 1
    for n, s in reversed(t.parallel):
        out[n] = acc
        acc *= s
    return out


def padded_inputs(t: MeritTransform, data: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Each operand's data as the kernels read it: float32, zero padding stored, C order."""
    out = []
    for op in t.operands:
        arr = np.asarray(data[op.name], dtype=np.float32)
        pad = op.padding()
        if any(pad):
            arr = np.pad(arr, [(p, p) for p in pad])
        out.append(np.ascontiguousarray(arr))
    return out


# ---------------------------------------------------------------- the strategy in C (Listings 1, 2)
@dataclass
class CStrategy:
    """PreLoop / Loop / PostLoop as C: `loop` reads the loop operands as x0, x1, ... and `post` the
    per-output operands as o0, o1, ... (numbered by operand position)."""

    accs: list[tuple[str, str, str]]      # (accumulator, initial value, OpenMP reduction operator)
    loop: str
    post: str


def _cfloat(v: float) -> str:
    return f"{float(v)!r}f" if np.isfinite(v) else ("INFINITY" if v > 0 else "-INFINITY")


def c_strategy(t: MeritTransform, fast_exp: bool = False) -> CStrategy:
    """`fast_exp`: the bilateral weight through merit_expf (EXPF below), which vectorises; else libm's."""
    name = t.strategy
    s = get_strategy(name)
    plus = [("acc", "0.0f", "+")]
    if name in ("dot", "relu", "residual"):
        post = "acc"
        if name == "relu":
            post = "fmaxf(acc, 0.0f)"
        if name == "residual":
            post = "fmaxf(acc + o2, 0.0f)" if t.params.get("relu", False) else "(acc + o2)"
        return CStrategy(plus, "acc += x0 * x1;", post)
    if name == "l1":
        return CStrategy(plus, "acc += fabsf(x0 - x1);", "acc")
    if name == "copy":
        return CStrategy(plus, "acc += x0;", "acc")
    if name == "bilateral":
        norm = _cfloat(float(t.params["norm"]))
        return CStrategy([("wsum", "0.0f", "+"), ("wxsum", "0.0f", "+")],
                         f"{{ const float d = o0 - x1; const float w = {'merit_expf' if fast_exp else 'expf'}"
                         f"(d * d * {norm}) * x2 * x3; "
                         "wsum += w; wxsum += w * x1; }", "(wxsum / wsum)")
    combine, _, reduce = s.name.partition("/")
    arity, _, cexpr = COMBINES[combine]
    _, identity, update, redop = REDUCES[reduce]
    value = cexpr.format(*[f"x{i}" for i in range(arity)])
    return CStrategy([("acc", _cfloat(identity), redop)], update.format(v=value), "acc")


# e^x without a libm call, so that a loop calling it vectorises (Cephes expf: x = n ln2 + r, |r| <= ln2/2,
# a degree-6 polynomial for e^r, 2^n put into the exponent bits; relative error below 1e-7 over the
# clamped range, e^-87.3 ~ 1e-38 standing in for anything smaller). Written with selects, the 1.5*2^23
# rounding trick and memcpy rather than fminf/floorf/unions, which GCC does not vectorise without
# -ffast-math.
EXPF = r"""
#include <string.h>
static inline float merit_expf(float x)
{
    x = x < -87.3f ? -87.3f : (x > 88.7f ? 88.7f : x);
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    const int e = ((int)n + 127) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    return p * s;
}
"""


# ---------------------------------------------------------------- helpers for emitting C
def _sum(terms: list[tuple[str, int]], base: int = 0) -> str:
    """'base + i*s + ...' with zero strides left out."""
    parts = [str(base)] if base else []
    parts += [f"{v}*{s}L" if s != 1 else v for v, s in terms if s]
    return " + ".join(parts) or "0"


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


@dataclass
class Kernel:
    """One generated function and what it is."""

    name: str
    variant: str                      # naive | tiled | packed
    text: str
    note: str = ""


@dataclass
class CProgram:
    """The C file for one transform: kernels plus a timing driver."""

    stage: str
    kernels: list[Kernel]
    source: str
    inputs: list[OperandAddress]
    out_size: int
    tile: dict[str, int] = field(default_factory=dict)
    packed: PackedPlan | None = None
    tile_note: str = ""                # how the tile was fitted to this CPU (core.merit.device)


def _signature(t: MeritTransform, name: str) -> str:
    ins = ", ".join(f"const float *restrict in{i}" for i in range(len(t.operands)))
    return f"void {name}({ins}, float *restrict out)"


def _roles(t: MeritTransform) -> tuple[list[int], list[int]]:
    s = get_strategy(t.strategy)
    loop = [i for i, po in enumerate(s.per_output) if not po]
    once = [i for i, po in enumerate(s.per_output) if po]
    return loop, once


# ---------------------------------------------------------------- naive loop nest
def naive_kernel(t: MeritTransform, name: str) -> Kernel:
    cs = c_strategy(t)
    addr = [operand_address(t, op) for op in t.operands]
    loop_ops, once_ops = _roles(t)
    ostr = output_strides(t)
    L = [_signature(t, name), "{"]
    ind = "    "
    for n, size in t.parallel:
        L.append(f"{ind}for (long {_ident(n)} = 0; {_ident(n)} < {size}L; ++{_ident(n)})")
    L.append(f"{ind}{{")
    ind2 = ind + "    "
    p_terms = [(_ident(n), 0) for n, _ in t.parallel]
    for i in once_ops:
        terms = [(v, addr[i].strides[n]) for (v, _), (n, _) in zip(p_terms, t.parallel)]
        L.append(f"{ind2}const float o{i} = in{i}[{_sum(terms, addr[i].base)}];")
    for a, init, _ in cs.accs:
        L.append(f"{ind2}float {a} = {init};")
    inner = ind2
    for n, size in t.accumulate:
        L.append(f"{inner}for (long {_ident(n)} = 0; {_ident(n)} < {size}L; ++{_ident(n)})")
    L.append(f"{inner}{{")
    for i in loop_ops:
        terms = [(_ident(n), addr[i].strides[n]) for n, _ in t.indices]
        L.append(f"{inner}    const float x{i} = in{i}[{_sum(terms, addr[i].base)}];")
    L.append(f"{inner}    {cs.loop}")
    L.append(f"{inner}}}")
    oterms = [(_ident(n), ostr[n]) for n, _ in t.parallel]
    L.append(f"{ind2}out[{_sum(oterms)}] = {cs.post};")
    L.append(f"{ind}}}")
    L.append("}")
    return Kernel(name, "naive", "\n".join(L), "the plain loop nest, one output at a time, no pragmas")


# ---------------------------------------------------------------- tiled (the engine's tile)
def code_tile(t: MeritTransform, tile: dict[str, int]) -> dict[str, int]:
    """The engine's tile fitted to this CPU (core.merit.device.fit_c_tile): the p-tile shrunk (largest
    parallel extent halved) until its partial sums fit L1; without a tile, the accumulation also tiled
    until one a-tile's footprints fit half of L2."""
    from core.merit.device import fit_c_tile

    tile_sizes(t, tile)                 # names and sizes checked
    return fit_c_tile(t, tile)[0]


REDUCTION_MIN_RUN = 8               # a unit-stride accumulated run at least this long is the vector
UNROLL_MAX_STEPS = 64               # a whole a-tile this short is written out step by step (x jam);
                                    # GCC stops vectorising a much longer loop body


def vector_mode(t: MeritTransform, ext: dict[str, int], lane: str | None) -> str:
    """'reduction' when the innermost accumulated index reads every loop operand with stride 0 or 1
    over a run of at least REDUCTION_MIN_RUN (and at least as long as the lanes), else 'lanes'."""
    if not t.accumulate:
        return "lanes"
    inner = t.accumulate[-1][0]
    loop_ops, _ = _roles(t)
    strides = [operand_address(t, t.operands[i]).strides[inner] for i in loop_ops]
    run = ext[inner]
    if all(s in (0, 1) for s in strides) and any(s == 1 for s in strides) and run >= REDUCTION_MIN_RUN \
            and (lane is None or run >= ext[lane]):
        return "reduction"
    return "lanes"


def lane_index(t: MeritTransform, ext: dict[str, int]) -> str | None:
    """The parallel index whose tile extent is the vector of lanes: the longest one that every loop
    operand reads with stride 0 or 1 (at least one with 1), else the innermost parallel index."""
    if not t.parallel:
        return None
    loop_ops, _ = _roles(t)
    strides = [operand_address(t, t.operands[i]).strides for i in loop_ops]
    good = [n for n, _ in t.parallel
            if all(st[n] in (0, 1) for st in strides) and any(st[n] == 1 for st in strides)]
    if not good:
        return t.parallel[-1][0]
    return max(reversed(good), key=lambda n: ext[n])


def tiled_kernel(t: MeritTransform, tile: dict[str, int], name: str) -> Kernel:
    cs = c_strategy(t, fast_exp=True)
    ext = code_tile(t, tile)
    addr = [operand_address(t, op) for op in t.operands]
    loop_ops, once_ops = _roles(t)
    ostr = output_strides(t)
    acc_idx = list(t.accumulate)
    par_names = [n for n, _ in t.parallel]
    sizes = dict(t.indices)
    tp = int(np.prod([ext[n] for n in par_names] or [1]))
    lane = lane_index(t, ext)
    outer = [n for n in par_names if n != lane]
    tl = ext[lane] if lane else 1
    mode = vector_mode(t, ext, lane)
    # lanes: the lanes (one parallel index of the tile) are the vector, each lane running the ranged
    # inner product of its output (as the threads of a warp in the CUDA kernel); with a short, whole
    # a-tile the steps are written out (straight-line code). reduction: lane by lane, the innermost
    # accumulated index is the vector (a unit-stride run). With one a-tile (direct) the sums stay in
    # registers and PostLoop writes the output at once; otherwise the a-tiles pass while the sums wait
    # in the tile's partial-sum array (output stationary), and with many steps per lane (outer_a) the
    # a-loops run outside the lane loop.
    whole_a = all(ext[n] == size for n, size in acc_idx)
    steps = int(np.prod([ext[n] for n, _ in acc_idx] or [1]))
    unroll = mode == "lanes" and whole_a and steps <= UNROLL_MAX_STEPS
    outer_a = mode == "lanes" and not unroll
    direct = whole_a and not outer_a
    # unroll-and-jam: with the steps written out, R outputs along another parallel index share one
    # lane loop, so that reads the R outputs have in common (a convolution's overlapping rows) are
    # one load (the compiler merges identical addresses)
    jam, R = None, 1
    if unroll and direct:
        for n in reversed(outer):
            r = next((r for r in (4, 3, 2) if ext[n] % r == 0 and r * steps <= UNROLL_MAX_STEPS), 1)
            if r > 1 and sizes[n] % ext[n] == 0:
                jam, R = n, r
                break
    L = [_signature(t, name), "{"]
    ind = "    "
    if par_names:
        if t.p_count * t.a_count >= PARALLEL_MIN_WORK:
            L.append(f"{ind}#pragma omp parallel for collapse({len(par_names)}) schedule(dynamic)")
        else:
            L.append(f"{ind}/* {t.p_count * t.a_count} steps: one thread (threads from {PARALLEL_MIN_WORK}) */")
        for n in par_names:
            L.append(f"{ind}for (long T_{_ident(n)} = 0; T_{_ident(n)} < {sizes[n]}L; T_{_ident(n)} += {ext[n]}L)")
    L.append(f"{ind}{{")
    b = ind + "    "
    # where the tile divides the range the bounds are constants, which the compiler unrolls and vectorises
    for n in par_names:
        v = _ident(n)
        L.append(f"{b}const long E_{v} = T_{v} + {ext[n]}L;" if sizes[n] % ext[n] == 0 else
                 f"{b}const long E_{v} = T_{v} + {ext[n]}L < {sizes[n]}L ? T_{v} + {ext[n]}L : {sizes[n]}L;")
    if not direct:
        for a, init, _ in cs.accs:
            L.append(f"{b}float P_{a}[{tp}] __attribute__((aligned(64)));")
            L.append(f"{b}for (long l = 0; l < {tp}; ++l) P_{a}[l] = {init};")
    lanes_n = ((f"{ext[lane]}L" if sizes[lane] % ext[lane] == 0 else f"(E_{_ident(lane)} - T_{_ident(lane)})")
               if lane else "1")

    def row_offset() -> str:
        # position of the first lane of this row of the tile in the partial-sum arrays
        terms, mul = [], tl
        for n in reversed(outer):
            terms.append((f"({_ident(n)} - T_{_ident(n)})", mul))
            mul *= ext[n]
        return _sum(terms)

    def p_terms(i: int) -> list[tuple[str, int]]:
        terms = [(_ident(n), addr[i].strides[n]) for n in outer]
        if lane:
            terms.append((f"T_{_ident(lane)}", addr[i].strides[lane]))
        return terms

    def lane_stride(i: int) -> int:
        return addr[i].strides[lane] if lane else 0

    def out_row() -> str:
        oterms = [(_ident(n), ostr[n]) for n in outer] + ([(f"T_{_ident(lane)}", ostr[lane])] if lane else [])
        return f"float *restrict wout = out + {_sum(oterms)};"

    def a_loop(n: str, size: int, indent: str) -> str:
        v = _ident(n)
        if ext[n] == size:                  # one a-tile: constant bounds the compiler can unroll
            return f"{indent}for (long {v} = 0; {v} < {size}L; ++{v})"
        return f"{indent}for (long {v} = U_{v}; {v} < F_{v}; ++{v})"

    c = b
    if not direct:                          # a-tiles pass while the partial sums stay
        for n, size in acc_idx:
            v = _ident(n)
            L.append(f"{b}for (long U_{v} = 0; U_{v} < {size}L; U_{v} += {ext[n]}L)")
        L.append(f"{b}{{")
        c = b + "    "
        for n, size in acc_idx:
            v = _ident(n)
            L.append(f"{c}const long F_{v} = U_{v} + {ext[n]}L;" if size % ext[n] == 0 else
                     f"{c}const long F_{v} = U_{v} + {ext[n]}L < {size}L ? U_{v} + {ext[n]}L : {size}L;")
    for n in outer:
        v = _ident(n)
        L.append(f"{c}for (long {v} = T_{v}; {v} < E_{v}; {v} += {R if n == jam else 1})")
    L.append(f"{c}{{")
    d = c + "    "
    if not direct:
        L.append(f"{d}const long row = {row_offset()};")
    else:
        L.append(f"{d}{out_row()}")
    L.append(f"{d}const long nl = {lanes_n};")
    for i in loop_ops:
        L.append(f"{d}const float *restrict q{i} = in{i} + {_sum(p_terms(i), addr[i].base)};")
    for i in once_ops:
        L.append(f"{d}const float *restrict r{i} = in{i} + {_sum(p_terms(i), addr[i].base)};")
    if outer_a:
        for n, size in acc_idx:
            L.append(a_loop(n, size, d))
        L.append(f"{d}{{")
        d += "    "
    L.append(f"{d}#pragma omp simd" if mode == "lanes" else f"{d}/* lane by lane; the inner product is the vector */")
    L.append(f"{d}for (long l = 0; l < nl; ++l)")
    L.append(f"{d}{{")
    e = d + "    "

    def jam_off(i: int | None, r: int) -> int:
        # offset of the r-th jammed output in operand i (None: in the output)
        if jam is None:
            return 0
        return r * (ostr[jam] if i is None else addr[i].strides[jam])

    for r in range(R):
        sfx = f"_{r}" if jam else ""
        for i in once_ops:
            L.append(f"{e}const float o{i}{sfx} = r{i}[{_sum([('l', lane_stride(i))], jam_off(i, r))}];")
        for a, init, _ in cs.accs:
            L.append(f"{e}float {a}{sfx} = {init};" if direct else f"{e}float {a} = P_{a}[row + l];")

    def reads(indent: str, a_vals: dict[str, Any], r: int = 0) -> None:
        for i in loop_ops:
            terms = [("l", lane_stride(i))] + [(str(a_vals[n]), addr[i].strides[n]) for n, _ in acc_idx
                                                if not isinstance(a_vals[n], int)]
            const = sum(a_vals[n] * addr[i].strides[n] for n, _ in acc_idx if isinstance(a_vals[n], int))
            L.append(f"{indent}const float x{i} = q{i}[{_sum(terms, const + jam_off(i, r))}];")

    if unroll:
        for combo in itertools.product(*[range(size) for _, size in acc_idx]):
            for r in range(R):
                L.append(f"{e}{{")
                reads(e + "    ", dict(zip([n for n, _ in acc_idx], combo)), r)
                if jam:
                    for i in once_ops:
                        L.append(f"{e}    const float o{i} = o{i}_{r};")
                    for a, _, _ in cs.accs:
                        L.append(f"{e}    float {a} = {a}_{r};")
                L.append(f"{e}    {cs.loop}")
                if jam:
                    for a, _, _ in cs.accs:
                        L.append(f"{e}    {a}_{r} = {a};")
                L.append(f"{e}}}")
    elif outer_a:
        reads(e, {n: _ident(n) for n, _ in acc_idx})
        L.append(f"{e}{cs.loop}")
    else:
        for k, (n, size) in enumerate(acc_idx):
            if k == len(acc_idx) - 1:
                red = ", ".join(f"reduction({op}:{a})" for a, _, op in cs.accs)
                L.append(f"{e}#pragma omp simd {red}")
            L.append(a_loop(n, size, e))
        L.append(f"{e}{{")
        reads(e + "    ", {n: _ident(n) for n, _ in acc_idx})
        L.append(f"{e}    {cs.loop}")
        L.append(f"{e}}}")
    if direct and jam:                      # PostLoop at once, per jammed output
        for r in range(R):
            binds = [f"const float o{i} = o{i}_{r};" for i in once_ops] + \
                    [f"const float {a} = {a}_{r};" for a, _, _ in cs.accs]
            L.append(f"{e}{{ {' '.join(binds)} wout[{_sum([('l', ostr[lane] if lane else 0)], jam_off(None, r))}] = "
                     f"{cs.post}; }}")
    elif direct:                            # PostLoop at once
        L.append(f"{e}wout[{_sum([('l', ostr[lane] if lane else 0)])}] = {cs.post};")
    else:
        for a, _, _ in cs.accs:
            L.append(f"{e}P_{a}[row + l] = {a};")
    L.append(f"{d}}}")
    if outer_a:
        d = d[:-4]
        L.append(f"{d}}}")
    L.append(f"{c}}}")
    if not direct:
        L.append(f"{b}}}")
        # PostLoop and store
        for n in outer:
            v = _ident(n)
            L.append(f"{b}for (long {v} = T_{v}; {v} < E_{v}; ++{v})")
        L.append(f"{b}{{")
        c = b + "    "
        d = c + "    "
        L.append(f"{c}const long row = {row_offset()};")
        L.append(f"{c}const long nl = {lanes_n};")
        for i in once_ops:
            L.append(f"{c}const float *restrict r{i} = in{i} + {_sum(p_terms(i), addr[i].base)};")
        L.append(f"{c}{out_row()}")
        L.append(f"{c}#pragma omp simd")
        L.append(f"{c}for (long l = 0; l < nl; ++l)")
        L.append(f"{c}{{")
        for i in once_ops:
            L.append(f"{d}const float o{i} = r{i}[{_sum([('l', lane_stride(i))])}];")
        for a, _, _ in cs.accs:
            L.append(f"{d}const float {a} = P_{a}[row + l];")
        L.append(f"{d}wout[{_sum([('l', ostr[lane] if lane else 0)])}] = {cs.post};")
        L.append(f"{c}}}")
        L.append(f"{b}}}")
    L.append(f"{ind}}}")
    L.append("}")
    tile_text = ", ".join(f"{n}={ext[n]}" for n, _ in t.indices)
    vec = (f"lanes along {lane or '-'} ({tl}) as omp simd" + (", steps written out" if unroll else "")
           if mode == "lanes" else
           f"the inner product along {acc_idx[-1][0]} ({ext[acc_idx[-1][0]]}) as omp simd reduction")
    sums = "sums in registers, PostLoop at once" if direct else "partial sums stationary in the tile"
    if jam:
        sums += f", {R} outputs along {jam} per lane (unroll-and-jam)"
    return Kernel(name, "tiled", "\n".join(L),
                  f"tile {tile_text}; OpenMP over p-tiles, {sums}, {vec}")


# ---------------------------------------------------------------- packed GEMM-like micro-kernel
@dataclass(frozen=True)
class StridePhases:
    """B split once per call into its stride phases (_split): phase (h % sy, w % sx) of the padded
    extents hp x wp, each hq x wq, `lead` planes; the strides of N's and the batch's indices in the
    copy, its size in floats and B's base offset."""

    sy: int
    sx: int
    hp: int
    wp: int
    hq: int
    wq: int
    lead: int
    strides: dict[str, int]
    size: int
    base: int


class RowPitch(NamedTuple):
    """N's innermost index over B's whole row pitch (_pitch): `pitch` columns a row, `width` stored."""

    name: str                       # N's innermost index
    pitch: int
    width: int


@dataclass(frozen=True)
class GemmView:
    """A bilinear transform as a batch of GEMMs (gemm_view): which operand is A (`left`, moving with
    M) and B (`right`, moving with N), the index names of M, N, batch and K and their sizes."""

    left: int
    right: int
    M: list[str]
    N: list[str]
    batch: list[str]
    K: list[str]
    sizes: dict[str, int]
    split: StridePhases | None = None
    pitch: RowPitch | None = None


def gemm_view(t: MeritTransform) -> GemmView | None:
    """How a bilinear transform is a batch of GEMMs C[b, m, n] = sum_k A[b, m, k] B[b, k, n]:
    M = parallel indices only operand A moves with, N = only B, batch = both; None if it is not
    one (another strategy, a parallel index neither moves with, or M too small for the kernel)."""
    if t.strategy not in ("dot", "relu", "residual", "mul/sum") or len(t.operands) < 2:
        return None
    a0, a1 = (operand_address(t, op) for op in t.operands[:2])
    groups: dict[str, list[str]] = {"0": [], "1": [], "batch": []}
    for n, _ in t.parallel:
        m0, m1 = a0.strides[n] != 0, a1.strides[n] != 0
        if m0 and m1:
            groups["batch"].append(n)
        elif m0:
            groups["0"].append(n)
        elif m1:
            groups["1"].append(n)
        else:
            return None
    sizes = dict(t.indices)

    def count(names: list[str]) -> int:
        return int(np.prod([sizes[n] for n in names] or [1]))
    # N (the vector direction of the micro-kernel) is the side that owns the output's unit-stride
    # index, where it has a panel's worth of outputs: the micro-kernel's rows are then stored as vector
    # runs and a convolution's input rows are its panels (on a 7x7 or 14x14 map with 512 channels the
    # other way round stored every output with a lookup and gathered M(input) element by element:
    # 2x the time); otherwise the larger side
    inner = t.parallel[-1][0] if t.parallel else None
    own = next((g for g in ("0", "1") if inner in groups[g]), None)
    if own is not None and count(groups[own]) >= PANEL_MIN_N:
        left, right = ("1", "0") if own == "0" else ("0", "1")
    else:
        left, right = ("0", "1") if count(groups["0"]) <= count(groups["1"]) else ("1", "0")
    view = GemmView(int(left), int(right), groups[left], groups[right], groups["batch"], [n for n, _ in t.accumulate],
                    {"M": count(groups[left]), "N": count(groups[right]), "batch": count(groups["batch"]),
                     "K": count([n for n, _ in t.accumulate])})
    if view.sizes["M"] < PACKED_MIN_M:
        return None
    view = replace(view, split=_split(t, view))
    return replace(view, pitch=_pitch(t, view))


def _split(t: MeritTransform, view: GemmView) -> StridePhases | None:
    """Where N moves B's last two axes (a map's rows and columns) with a stride s > 1, B is split once
    per call into its stride phases: element (.., h, w) of the padded operand goes to phase
    (h % sy, w % sx), position (h // sy, w // sx). N's strided rows are then unit-stride runs of the
    split copy (a stride-2 convolution's input read as a stride-1 one, every phase gathered once
    instead of once per K step and M block). Returns the phases, the padded and split extents, and
    the strides of N's and the batch's indices in the copy; None where nothing is strided or where a
    stride is not a multiple of the phase count."""
    op = t.operands[view.right]
    ad = operand_address(t, op)
    nd = len(ad.padded_shape)
    if nd < 2:
        return None
    ah, aw = nd - 2, nd - 1
    hp, wp = ad.padded_shape[ah], ad.padded_shape[aw]
    st = {ah: 1, aw: 1}
    for n in view.N:
        m = op.maps.get(n)
        if m is not None and m.axis in st and m.stride > 1:
            st[m.axis] = max(st[m.axis], m.stride)
    sy, sx = st[ah], st[aw]
    if sx == 1:                     # the rows stay unit-stride: nothing to gain
        return None
    for n in view.N + view.batch:
        m = op.maps.get(n)
        if m is not None and m.axis in st and (n in view.batch or m.stride <= 0 or m.stride % st[m.axis]):
            return None
    hq, wq = -(-hp // sy), -(-wp // sx)
    plane, new_plane = hp * wp, sy * sx * hq * wq
    eff: dict[str, int] = {}
    for n in view.N + view.batch:
        m = op.maps.get(n)
        eff[n] = (0 if m is None else m.stride // sx if m.axis == aw else m.stride // sy * wq if m.axis == ah
                  else ad.strides[n] // plane * new_plane)
    lead = ad.size // plane
    return StridePhases(sy, sx, hp, wp, hq, wq, lead, eff, lead * new_plane, ad.base)


def _pitch(t: MeritTransform, view: GemmView) -> RowPitch | None:
    """(x, P, W) where N's innermost index x (W outputs a row, unit stride in the output and in M(B))
    can run over the whole row pitch P of B instead (W < P <= PITCH_MAX_WASTE x W: a padded map,
    P = W + 2 for a 3x3 window): then every NR-wide panel of N is one unit-stride run of B, read in
    place or copied as vectors however narrow the map, at the price of P - W columns a row computed
    and dropped (the "row-aligned panel" of the transform: eq. 5's x and y strides fuse into one)."""
    names = view.N
    if len(names) < 2:
        return None
    x, y = names[-1], names[-2]
    b = view.split.strides if view.split else operand_address(t, t.operands[view.right]).strides
    o = output_strides(t)
    w = dict(t.indices)[x]
    if b[x] != 1 or o[x] != 1 or o[y] != w or not (w < b[y] <= PITCH_MAX_WASTE * w):
        return None
    return RowPitch(x, b[y], w)


PACKED_PRELUDE = r"""
#include <string.h>
#if defined(__AVX512F__)
#define MERIT_VW 16
#define MERIT_MR 12
#elif defined(__AVX__)
#define MERIT_VW 8
#define MERIT_MR 6
#else
#define MERIT_VW 4
#define MERIT_MR 6
#endif
#define MERIT_NR (2 * MERIT_VW)
#define MERIT_KC 256
#define MERIT_MC (MERIT_MR * 8)
typedef float merit_vf __attribute__((vector_size(MERIT_VW * 4)));

/* Packing buffers per thread, kept between calls (fresh megabytes each call would be page faults). */
static __thread float *merit_ap_buf = 0, *merit_bp_buf = 0;
static __thread long merit_bp_cap = 0;

/* Offsets of every combination of a group of indices (row-major), sum of index * stride. */
static long *merit_offsets(int n, const long *size, const long *stride, long *count)
{
    long total = 1;
    for (int i = 0; i < n; ++i) total *= size[i];
    long *o = (long *)malloc(sizeof(long) * (size_t)total);
    for (long f = 0; f < total; ++f) {
        long r = f, v = 0;
        for (int i = n - 1; i >= 0; --i) { v += (r % size[i]) * stride[i]; r /= size[i]; }
        o[f] = v;
    }
    *count = total;
    return o;
}

/* MR x NR block of C = packed A panel (kc x MR) times packed B panel (kc x NR), in registers. */
static inline void merit_micro(long kc, const float *restrict a, const float *restrict b, float *restrict c)
{
    merit_vf acc[MERIT_MR][2];
#pragma GCC unroll 16
    for (int i = 0; i < MERIT_MR; ++i) { acc[i][0] = (merit_vf){0}; acc[i][1] = (merit_vf){0}; }
    for (long k = 0; k < kc; ++k) {
        const merit_vf b0 = *(const merit_vf *)(b + k * MERIT_NR);
        const merit_vf b1 = *(const merit_vf *)(b + k * MERIT_NR + MERIT_VW);
#pragma GCC unroll 16
        for (int i = 0; i < MERIT_MR; ++i) {
            const float ai = a[k * MERIT_MR + i];
            acc[i][0] += ai * b0;
            acc[i][1] += ai * b1;
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MERIT_MR; ++i) {
        *(merit_vf *)(c + i * MERIT_NR) = acc[i][0];
        *(merit_vf *)(c + i * MERIT_NR + MERIT_VW) = acc[i][1];
    }
}

#ifndef MERIT_FAST
#define MERIT_FAST 1
#endif
/* A K chunk whose steps mostly start their run within NR floats of the previous step's (a window
   sliding along a row: a convolution's kx) re-reads the lines the last step loaded: there reading
   M(B) in place beats packing it. GEMM's and 1x1 convolutions' steps each jump a whole row: packed. */
static inline int merit_sliding(const long *bk, long kc)
{
    long near = 0;
    for (long k = 1; k < kc; ++k) {
        const long d = bk[k] - bk[k - 1];
        near += d >= 0 && d < MERIT_NR;
    }
    return 2 * near >= kc;
}
/* Offsets of a K chunk that run with unit stride (a row of A or of B along K: GEMM's A, a weight
   tensor's (ic, ky, kx)): packed by reading each row along K, not column by column, so that rows a
   power-of-two stride apart (4 KB: the same L1 set) are not read a word each in turn. */
static inline int merit_unit(const long *o, long n)
{
    for (long k = 1; k < n; ++k)
        if (o[k] - o[k - 1] != 1) return 0;
    return 1;
}
/* The same block with M(B) read in place instead of packed: where a panel's NR columns are a
   unit-stride run of the operand (eq. 5: the output's x moves the input's x with stride 1), step k's
   run starts at b + bk[k] (a convolution's input row at ic, y + ky, x + kx), so the on-the-fly
   expansion is the load itself and no copy of M(B) is written (MERIT_FAST=0: packed as before). */
/* The block with M(A) read in place too: MR rows of A, lda apart, each a unit-stride run along K (a
   weight tensor's rows), broadcast straight from the operand instead of packed; M(B) read in place
   (bk) or from its packed panel (bk == 0). For a short N side (a 7x7 map: two panels), where a packed
   A panel would be used by at most MERIT_AIN_PANELS panels, packing A cost as much as the FMAs. */
static inline __attribute__((always_inline)) void merit_micro_ain(long kc, const float *restrict a, long lda,
                                                                   const float *restrict b, const long *restrict bk,
                                                                   float *restrict c)
{
    merit_vf acc[MERIT_MR][2];
#pragma GCC unroll 16
    for (int i = 0; i < MERIT_MR; ++i) { acc[i][0] = (merit_vf){0}; acc[i][1] = (merit_vf){0}; }
    for (long k = 0; k < kc; ++k) {
        merit_vf b0, b1;
        const float *bq = bk ? b + bk[k] : b + k * MERIT_NR;
        memcpy(&b0, bq, sizeof b0);
        memcpy(&b1, bq + MERIT_VW, sizeof b1);
#pragma GCC unroll 16
        for (int i = 0; i < MERIT_MR; ++i) {
            const float ai = a[i * lda + k];
            acc[i][0] += ai * b0;
            acc[i][1] += ai * b1;
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MERIT_MR; ++i) {
        *(merit_vf *)(c + i * MERIT_NR) = acc[i][0];
        *(merit_vf *)(c + i * MERIT_NR + MERIT_VW) = acc[i][1];
    }
}
#define MERIT_AIN_PANELS 4
static inline void merit_micro_direct(long kc, const float *restrict a, const float *restrict b,
                                      const long *restrict bk, float *restrict c)
{
    merit_vf acc[MERIT_MR][2];
#pragma GCC unroll 16
    for (int i = 0; i < MERIT_MR; ++i) { acc[i][0] = (merit_vf){0}; acc[i][1] = (merit_vf){0}; }
    for (long k = 0; k < kc; ++k) {
        merit_vf b0, b1;
        memcpy(&b0, b + bk[k], sizeof b0);                  /* unaligned vector loads */
        memcpy(&b1, b + bk[k] + MERIT_VW, sizeof b1);
#pragma GCC unroll 16
        for (int i = 0; i < MERIT_MR; ++i) {
            const float ai = a[k * MERIT_MR + i];
            acc[i][0] += ai * b0;
            acc[i][1] += ai * b1;
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MERIT_MR; ++i) {
        *(merit_vf *)(c + i * MERIT_NR) = acc[i][0];
        *(merit_vf *)(c + i * MERIT_NR + MERIT_VW) = acc[i][1];
    }
}
"""


@dataclass(frozen=True)
class OffsetTable:
    """One table of offsets the packed kernel builds at run time (merit_offsets): the offset of each
    combination of some indices (sizes, strides; the first index outermost)."""

    var: str
    sizes: list[int]
    strides: list[int]


@dataclass(frozen=True)
class PackedPlan:
    """Everything the packed kernel's C is written from, worked out before any C is: the GEMM view,
    the offset tables, the operands PostLoop reads once per output (`once`: operand -> base), the
    strategy's PostLoop expression, A's and B's bases, the floats of B from its base, the columns
    of the last row dropped unread (a row pitch), and the work (p x a steps) that decides threads."""

    view: GemmView
    left_name: str
    right_name: str
    tables: list[OffsetTable]
    once: dict[int, int]
    post: str
    a_base: int
    b_base: int
    b_extent: int
    drop: int
    work: int


def packed_plan(t: MeritTransform) -> PackedPlan | None:
    """The packed kernel's plan for a GEMM-like transform; None where gemm_view finds none."""
    view = gemm_view(t)
    if view is None:
        return None
    addr = [operand_address(t, op) for op in t.operands]
    _, once_ops = _roles(t)
    ostr = output_strides(t)
    vsizes = dict(t.indices)
    if view.pitch:                          # N's innermost index over B's whole row pitch
        vsizes[view.pitch.name] = view.pitch.pitch
    li, ri = view.left, view.right
    bstr = view.split.strides if view.split else addr[ri].strides
    tabs = [("am", view.M, addr[li].strides), ("ak", view.K, addr[li].strides),
            ("ab", view.batch, addr[li].strides), ("bn", view.N, bstr),
            ("bk", view.K, addr[ri].strides), ("bb", view.batch, bstr),
            ("cm", view.M, ostr), ("cn", view.N, ostr), ("cb", view.batch, ostr)]
    for i in once_ops:
        tabs += [(f"o{i}m", view.M, addr[i].strides), (f"o{i}n", view.N, addr[i].strides),
                 (f"o{i}b", view.batch, addr[i].strides)]
    tables = [OffsetTable(var, [vsizes[n] for n in names], [strides[n] for n in names]) for var, names, strides in tabs]
    return PackedPlan(view, t.operands[li].name, t.operands[ri].name, tables, {i: addr[i].base for i in once_ops},
                      c_strategy(t).post, addr[li].base, addr[ri].base,
                      view.split.size if view.split else addr[ri].size - addr[ri].base,
                      view.pitch.pitch - view.pitch.width if view.pitch else 0, t.p_count * t.a_count)


def packed_kernel(t: MeritTransform, name: str) -> tuple[Kernel, PackedPlan] | None:
    """The packed GEMM-like micro-kernel (packed_plan, then packed_c), with its plan."""
    plan = packed_plan(t)
    return None if plan is None else (packed_c(plan, _signature(t, name), name), plan)


def packed_c(plan: PackedPlan, signature: str, name: str) -> Kernel:
    """The packed kernel's C, written from its plan."""
    view, split, pitch = plan.view, plan.view.split, plan.view.pitch
    li, ri = view.left, view.right

    def table(tab: OffsetTable) -> list[str]:
        var = tab.var
        sz = ", ".join(f"{n}L" for n in tab.sizes) or "1L"
        st = ", ".join(f"{n}L" for n in tab.strides) or "0L"
        k = max(1, len(tab.sizes))
        return [f"    const long {var}_size[] = {{{sz}}}, {var}_stride[] = {{{st}}};",
                f"    long {var}_n; long *{var} = merit_offsets({k}, {var}_size, {var}_stride, &{var}_n);"]

    # the block's rows added and stored run by run (orun: the panel's output columns as unit-stride runs
    # of Vec(C), dropped and overlapped columns left out) as vectors, with PostLoop inline, where it
    # reads no other operand (the scalar path below looks every element's offset up)
    vec_store = "" if plan.once else "\n".join([
        "                            if (MERIT_FAST) {",
        "                                const long nr = onrun[pp];",
        "                                const long *rp = orun + 4 * pp * MERIT_NR;",
        "                                for (long i = 0; i < mi; ++i) {",
        "                                    const float *restrict crow = ct + i * MERIT_NR;",
        "                                    float *restrict obase = out + cb[bt] + cm[ic + ir + i];",
        "                                    for (long r = 0; r < nr; ++r) {",
        "                                        const long *e = rp + 4 * r, len = e[1];",
        "                                        float *restrict orow = obase + e[2];",
        "                                        const float *restrict cr = crow + e[0];",
        "                                        #pragma omp simd",
        "                                        for (long j = 0; j < len; ++j) {",
        "                                            float acc = cr[j] + (first ? 0.0f : orow[j]);",
        f"                                            if (last) acc = {plan.post};",
        "                                            orow[j] = acc;",
        "                                        }",
        "                                    }",
        "                                }",
        "                                continue;",
        "                            }"])
    L = [signature, "{"]
    for tab in plan.tables:
        L += table(tab)
    if split:
        sp = split
        work = plan.work
        L += ["    /* B split once per call into its stride phases (sy, sx) = "
              f"({sp.sy}, {sp.sx}): element (.., h, w) of the padded operand to phase",
              "       (h % sy, w % sx), position (h / sy, w / sx); N's strided rows become unit-stride runs.",
              "       Only the phases some K step reads are copied. The copy is kept between calls (one caller at a time). */",
              f"    const long SY = {sp.sy}L, SX = {sp.sx}L, HP = {sp.hp}L, WP = {sp.wp}L, "
              f"HQ = {sp.hq}L, WQ = {sp.wq}L, LEAD = {sp.lead}L;",
              "    const long PLANE = SY * SX * HQ * WQ;",
              f"    char used[{sp.sy * sp.sx}] = {{0}};",
              "    for (long k = 0; k < bk_n; ++k) {",
              f"        const long a = {sp.base}L + bk[k], l = a / (HP * WP), h = a / WP % HP, w = a % WP;",
              "        used[(h % SY) * SX + w % SX] = 1;",
              "        bk[k] = l * PLANE + ((h % SY) * SX + w % SX) * HQ * WQ + (h / SY) * WQ + w / SX;",
              "    }",
              "    static float *bsplit = 0;",
              "    static long bsplit_cap = 0;",
              f"    if (bsplit_cap < {sp.size}L) {{",
              "        free(bsplit);",
              f"        bsplit = (float *)aligned_alloc(64, sizeof(float) * (size_t)(({sp.size}L + 15) / 16 * 16));",
              f"        bsplit_cap = {sp.size}L;",
              "    }",
              f"    #pragma omp parallel for collapse(2) schedule(static) if({work}L >= {PARALLEL_MIN_WORK}L)",
              "    for (long l = 0; l < LEAD; ++l)",
              "        for (long h = 0; h < HP; ++h)",
              "            for (long px = 0; px < SX; ++px) {",
              "                if (!used[(h % SY) * SX + px]) continue;",
              f"                const float *restrict src = in{ri} + l * HP * WP + h * WP + px;",
              "                float *restrict dst = bsplit + l * PLANE + ((h % SY) * SX + px) * HQ * WQ + (h / SY) * WQ;",
              "                const long nq = (WP - px + SX - 1) / SX;",
              "                for (long q = 0; q < nq; ++q) dst[q] = src[q * SX];",
              "                for (long q = nq; q < WQ; ++q) dst[q] = 0.0f;",
              "            }"]
    if pitch:
        L += [f"    /* N over the row pitch: columns {pitch.width}..{pitch.pitch - 1} of a row are computed and dropped */",
              f"    for (long n = 0; n < cn_n; ++n) if (n % {pitch.pitch}L >= {pitch.width}L) cn[n] = -1;"]
    L += [f"    const long bext = {plan.b_extent}L;   /* floats of B from its base */",
          "    long bkmax = 0, bbmax = 0;",
          "    for (long k = 0; k < bk_n; ++k) if (bk[k] > bkmax) bkmax = bk[k];",
          "    for (long k = 0; k < bb_n; ++k) if (bb[k] > bbmax) bbmax = bb[k];"]
    L += [f"    const long M = am_n, N = bn_n - {plan.drop}L, K = ak_n, NB = ab_n;",
          "    /* A's rows a constant lda apart (one weight row per M index): read in place on a short N side */",
          "    long alda = M > 1 ? am[1] - am[0] : 0;",
          "    for (long m = 2; alda > 0 && m < M; ++m) if (am[m] - am[m - 1] != alda) alda = 0;",
          f"    const float *A = in{li} + {plan.a_base}L, *B = "
          + ("bsplit;" if split else f"in{ri} + {plan.b_base}L;"),
          f"    const int threads = M * N * K * NB >= {PARALLEL_MIN_WORK}L ? omp_get_max_threads() : 1;",
          "    /* N blocks per batch element: several per thread, so that a thread the OS holds back leaves",
          "       its share to the others (dynamic schedule) instead of keeping everyone waiting",
          "       (one thread: one block, as every N block packs the A panels again) */",
          "    long per = threads > 1 ? (8 * threads + NB - 1) / NB : 1;",
          "    long NC = (N + per - 1) / per;",
          "    if (NC < 8 * MERIT_NR && threads > 1) NC = 8 * MERIT_NR;",
          "    NC = ((NC + MERIT_NR - 1) / MERIT_NR) * MERIT_NR;",
          "    if (NC > 4096) NC = 4096;",
          "    const long nblocks = (N + NC - 1) / NC;",
          "    /* NR-wide panels of N: panel p starts at pst[p] = p NR, except that the last, partial one is",
          "       moved back to end at N (MERIT_FAST), so that it is full too: its first pskip columns belong to",
          "       the panel before and are computed again but not stored */",
          "    long *pst = (long *)malloc(sizeof(long) * (size_t)(N / MERIT_NR + 1));",
          "    long *pskip = (long *)malloc(sizeof(long) * (size_t)(N / MERIT_NR + 1));",
          "    for (long p = 0; p * MERIT_NR < N; ++p) {",
          "        pst[p] = MERIT_FAST && (p + 1) * MERIT_NR > N && N >= MERIT_NR ? N - MERIT_NR : p * MERIT_NR;",
          "        pskip[p] = p * MERIT_NR - pst[p];",
          "    }",
          "    /* panels whose B offsets run with unit stride (a convolution row) and whose whole NR-wide read",
          "       stays within B (a pitch panel reads its dropped columns too) */",
          "    char *bcont = (char *)malloc((size_t)(N / MERIT_NR + 1));",
          "    for (long p = 0; p * MERIT_NR < N; ++p) {",
          "        const long *q = bn + pst[p];",
          "        int ok = pst[p] + MERIT_NR <= N && q[0] + MERIT_NR + bkmax + bbmax <= bext;",
          "        for (long j = 1; ok && j < MERIT_NR; ++j) ok = q[j] == q[0] + j;",
          "        bcont[p] = (char)ok;",
          "    }",
          "    /* every other panel as runs (j0, len, offset, step) of its columns: a panel across the rows of",
          "       a narrow map (two to five unit-stride runs), a strided row (step 2): packed run by run with",
          "       vector copies instead of an offset looked up per element */",
          "    long *brun = (long *)malloc(sizeof(long) * 4 * (size_t)(N + MERIT_NR));",
          "    long *bnrun = (long *)malloc(sizeof(long) * (size_t)(N / MERIT_NR + 1));",
          "    for (long p = 0; p * MERIT_NR < N; ++p) {",
          "        const long *q = bn + pst[p], valid = N - pst[p] < MERIT_NR ? N - pst[p] : MERIT_NR;",
          "        long r = 0;",
          "        const long *c = cn + pst[p];",
          "        for (long j = 0; j < valid; ) {",
          "            long len = 1, st = j + 1 < valid ? q[j + 1] - q[j] : 1;",
          "            if (c[j] < 0) { st = 0; while (j + len < valid && c[j + len] < 0) ++len; }   /* dropped: zeros */",
          "            else while (j + len < valid && c[j + len] >= 0 && q[j + len] - q[j + len - 1] == st) ++len;",
          "            if (len == 1 && st) st = 1;",
          "            long *e = brun + 4 * (p * MERIT_NR + r);",
          "            e[0] = j; e[1] = len; e[2] = q[j]; e[3] = st;",
          "            ++r; j += len;",
          "        }",
          "        bnrun[p] = r;",
          "    }",
          "    /* the output columns of every panel as unit-stride runs (j0, len, offset): the block's rows are",
          "       added and stored run by run as vectors; dropped columns are skipped */",
          "    long *orun = (long *)malloc(sizeof(long) * 4 * (size_t)(N + MERIT_NR));",
          "    long *onrun = (long *)malloc(sizeof(long) * (size_t)(N / MERIT_NR + 1));",
          "    for (long p = 0; p * MERIT_NR < N; ++p) {",
          "        const long *c = cn + pst[p], valid = N - pst[p] < MERIT_NR ? N - pst[p] : MERIT_NR;",
          "        long r = 0;",
          "        for (long j = pskip[p]; j < valid; ) {",
          "            if (c[j] < 0) { ++j; continue; }",
          "            long len = 1;",
          "            while (j + len < valid && c[j + len] == c[j] + len) ++len;",
          "            long *e = orun + 4 * (p * MERIT_NR + r);",
          "            e[0] = j; e[1] = len; e[2] = c[j]; e[3] = 1;",
          "            ++r; j += len;",
          "        }",
          "        onrun[p] = r;",
          "    }",
          "    /* split M too where batch x N blocks are fewer than 4 a thread (a 14x14 or 7x7 map is one N",
          "       block): every task packs its own A rows and B panels (or reads B in place) */",
          "    long mparts = 1;",
          "    if (threads > 1 && NB * nblocks < 4 * threads) {",
          "        mparts = (4 * threads + NB * nblocks - 1) / (NB * nblocks);",
          "        const long mrows = (M + MERIT_MR - 1) / MERIT_MR;",
          "        if (mparts > mrows) mparts = mrows;",
          "    }",
          "    const long MS = ((M + MERIT_MR - 1) / MERIT_MR + mparts - 1) / mparts * MERIT_MR;",
          "    mparts = (M + MS - 1) / MS;",
          f"    #pragma omp parallel if(M * N * K * NB >= {PARALLEL_MIN_WORK}L)",
          "    {",
          "        if (!merit_ap_buf) merit_ap_buf = (float *)aligned_alloc(64, sizeof(float) * MERIT_MC * MERIT_KC);",
          "        if (merit_bp_cap < NC * MERIT_KC) {",
          "            free(merit_bp_buf);",
          "            merit_bp_buf = (float *)aligned_alloc(64, sizeof(float) * (size_t)(NC * MERIT_KC));",
          "            merit_bp_cap = NC * MERIT_KC;",
          "        }",
          "        float *ap = merit_ap_buf, *bp = merit_bp_buf;",
          "        float ct[MERIT_MR * MERIT_NR] __attribute__((aligned(64)));",
          "        #pragma omp for collapse(3) schedule(dynamic)",
          "        for (long bt = 0; bt < NB; ++bt)",
          "        for (long jb = 0; jb < nblocks; ++jb)",
          "        for (long mp = 0; mp < mparts; ++mp)",
          "        {",
          "            const long jc = jb * NC, nc = N - jc < NC ? N - jc : NC;",
          "            const long m0 = mp * MS, m1 = M < m0 + MS ? M : m0 + MS;",
          "            for (long pc = 0; pc < K; pc += MERIT_KC)",
          "            {",
          "                const long kc = K - pc < MERIT_KC ? K - pc : MERIT_KC;",
          "                const int first = pc == 0, last = pc + kc == K;",
          "                const int slide = MERIT_FAST && merit_sliding(bk + pc, kc);   /* M(B) read in place */",
          "                const int aunit = MERIT_FAST && merit_unit(ak + pc, kc), bunit = MERIT_FAST && merit_unit(bk + pc, kc);",
          "                /* on-the-fly expansion of the M(B) tile into NR-wide panels */",
          "                for (long jr = 0; jr < nc; jr += MERIT_NR) {",
          "                    const long pp = (jc + jr) / MERIT_NR, n0 = bn[pst[pp]];",
          "                    if (bcont[pp]) {                                   /* a unit-stride run */",
          "                        if (slide) continue;                            /* read in place (merit_micro_direct) */",
          "                        for (long k = 0; k < kc; ++k) {",
          "                            float *dst = bp + jr * kc + k * MERIT_NR;",
          "                            const float *src = B + bb[bt] + bk[pc + k] + n0;",
          "                            for (long j = 0; j < MERIT_NR; ++j) dst[j] = src[j];",
          "                        }",
          "                    } else if (bunit)                                  /* rows along K: read each row on */",
          "                        for (long j = 0; j < MERIT_NR; ++j) {",
          "                            float *dst = bp + jr * kc + j;",
          "                            if (pst[pp] + j < N) {",
          "                                const float *src = B + bb[bt] + bk[pc] + bn[pst[pp] + j];",
          "                                for (long k = 0; k < kc; ++k) dst[k * MERIT_NR] = src[k];",
          "                            } else",
          "                                for (long k = 0; k < kc; ++k) dst[k * MERIT_NR] = 0.0f;",
          "                        }",
          "                    else if (MERIT_FAST) {                              /* run by run */",
          "                        const long nr = bnrun[pp];",
          "                        const long *rp = brun + 4 * pp * MERIT_NR;",
          "                        const long valid = N - pst[pp] < MERIT_NR ? N - pst[pp] : MERIT_NR;",
          "                        for (long k = 0; k < kc; ++k) {",
          "                            float *restrict dst = bp + jr * kc + k * MERIT_NR;",
          "                            const float *restrict src = B + bb[bt] + bk[pc + k];",
          "                            for (long r = 0; r < nr; ++r) {",
          "                                const long *e = rp + 4 * r, len = e[1], st = e[3];",
          "                                const float *restrict s = src + e[2];",
          "                                float *restrict d = dst + e[0];",
          "                                if (st == 1) for (long j = 0; j < len; ++j) d[j] = s[j];",
          "                                else if (st == 2) for (long j = 0; j < len; ++j) d[j] = s[2 * j];",
          "                                else if (st == 0) for (long j = 0; j < len; ++j) d[j] = 0.0f;",
          "                                else for (long j = 0; j < len; ++j) d[j] = s[j * st];",
          "                            }",
          "                            for (long j = valid; j < MERIT_NR; ++j) dst[j] = 0.0f;",
          "                        }",
          "                    } else",
          "                        for (long k = 0; k < kc; ++k) {",
          "                            float *dst = bp + jr * kc + k * MERIT_NR;",
          "                            const float *src = B + bb[bt] + bk[pc + k];",
          "                            for (long j = 0; j < MERIT_NR; ++j)",
          "                                dst[j] = jr + j < nc ? src[bn[jc + jr + j]] : 0.0f;",
          "                        }",
          "                }",
          "                for (long ic = m0; ic < m1; ic += MERIT_MC)",
          "                {",
          "                    const long mc = m1 - ic < MERIT_MC ? m1 - ic : MERIT_MC;",
          "                    const int ain = MERIT_FAST && aunit && alda > 0 && nc <= MERIT_AIN_PANELS * MERIT_NR;",
          "                    for (long ir = 0; ir < mc; ir += MERIT_MR)",
          "                        if (ain && ir + MERIT_MR <= mc)",
          "                            continue;                                    /* read in place */",
          "                        else if (aunit)                                  /* rows along K: read each row on */",
          "                            for (long i = 0; i < MERIT_MR; ++i) {",
          "                                float *dst = ap + ir * kc + i;",
          "                                if (ir + i < mc) {",
          "                                    const float *src = A + ab[bt] + ak[pc] + am[ic + ir + i];",
          "                                    for (long k = 0; k < kc; ++k) dst[k * MERIT_MR] = src[k];",
          "                                } else",
          "                                    for (long k = 0; k < kc; ++k) dst[k * MERIT_MR] = 0.0f;",
          "                            }",
          "                        else",
          "                        for (long k = 0; k < kc; ++k) {",
          "                            float *dst = ap + ir * kc + k * MERIT_MR;",
          "                            const float *src = A + ab[bt] + ak[pc + k];",
          "                            for (long i = 0; i < MERIT_MR; ++i)",
          "                                dst[i] = ir + i < mc ? src[am[ic + ir + i]] : 0.0f;",
          "                        }",
          "                    for (long jr = 0; jr < nc; jr += MERIT_NR)",
          "                        for (long ir = 0; ir < mc; ir += MERIT_MR)",
          "                        {",
          "                            const long pp = (jc + jr) / MERIT_NR;",
          "                            const float *ar = A + ab[bt] + ak[pc] + am[ic + ir];",
          "                            if (ain && ir + MERIT_MR <= mc)",
          "                                merit_micro_ain(kc, ar, alda, slide && bcont[pp] ? B + bb[bt] + bn[pst[pp]] : bp + jr * kc,",
          "                                                slide && bcont[pp] ? bk + pc : 0, ct);",
          "                            else if (slide && bcont[pp])",
          "                                merit_micro_direct(kc, ap + ir * kc, B + bb[bt] + bn[pst[pp]], bk + pc, ct);",
          "                            else",
          "                                merit_micro(kc, ap + ir * kc, bp + jr * kc, ct);",
          "                            const long mi = mc - ir < MERIT_MR ? mc - ir : MERIT_MR;",
          "                            const long nj = N - pst[pp] < MERIT_NR ? N - pst[pp] : MERIT_NR;",
          vec_store,
          "                            for (long i = 0; i < mi; ++i)",
          "                                for (long j = pskip[pp]; j < nj; ++j) {",
          "                                    const long mm = ic + ir + i, nn = pst[pp] + j;",
          "                                    if (cn[nn] < 0) continue;                      /* a dropped column */",
          "                                    const long o = cb[bt] + cm[mm] + cn[nn];",
          "                                    float acc = ct[i * MERIT_NR + j] + (first ? 0.0f : out[o]);",
          "                                    if (last) {"]
    for i, base in plan.once.items():
        L.append(f"                                        const float o{i} = in{i}[{base}L + o{i}b[bt] "
                 f"+ o{i}m[mm] + o{i}n[nn]];")
    L += [f"                                        acc = {plan.post};",
          "                                    }",
          "                                    out[o] = acc;",
          "                                }",
          "                        }",
          "                }",
          "            }",
          "        }",
          "    }"]
    L += [f"    free({tab.var});" for tab in plan.tables] + ["    free(bcont);", "    free(brun);", "    free(bnrun);", "    free(orun);", "    free(onrun);", "    free(pst);", "    free(pskip);"]
    L.append("}")
    note = (f"GEMM view: M = ({', '.join(view.M)}) of {plan.left_name}, N = ({', '.join(view.N)}) "
            f"of {plan.right_name}, batch = ({', '.join(view.batch) or '-'}), K = "
            f"({', '.join(view.K) or '-'}); packed panels, MR x NR register micro-kernel")
    return Kernel(name, "packed", "\n".join(L), note)


# ---------------------------------------------------------------- the program
DRIVER = r"""
static double merit_now(void) { return omp_get_wtime(); }

static int merit_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* usage: PROG [DIR [ROUNDS]]: inputs DIR/in<i>.f32 (padded, float32) or random ones; every kernel is
   run once, then ROUNDS rounds time the kernels one after the other (alternating); outputs go to
   DIR/out_<variant>.f32 and the median seconds per call to stdout as JSON. */
int main(int argc, char **argv)
{
    const char *dir = argc > 1 && argv[1][0] ? argv[1] : NULL;
    const int rounds = argc > 2 ? atoi(argv[2]) : 5;
    float *in[MERIT_NIN];
    unsigned long long seed = 88172645463325252ULL;
    for (int i = 0; i < MERIT_NIN; ++i) {
        in[i] = (float *)aligned_alloc(64, sizeof(float) * (size_t)((merit_in_size[i] + 15) / 16 * 16));
        int loaded = 0;
        if (dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/in%d.f32", dir, i);
            FILE *f = fopen(path, "rb");
            if (f) {
                loaded = fread(in[i], sizeof(float), (size_t)merit_in_size[i], f) == (size_t)merit_in_size[i];
                fclose(f);
            }
            if (!loaded) { fprintf(stderr, "cannot read %s\n", path); return 2; }
        }
        if (!loaded)
            for (long j = 0; j < merit_in_size[i]; ++j) {
                seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
                in[i][j] = (float)((double)(seed >> 11) / 9007199254740992.0 - 0.5);
            }
    }
    float *out[MERIT_NK];
    double *times[MERIT_NK];
    long reps[MERIT_NK];
    for (int v = 0; v < MERIT_NK; ++v) {
        out[v] = (float *)aligned_alloc(64, sizeof(float) * (size_t)((MERIT_OUT + 15) / 16 * 16));
        times[v] = (double *)malloc(sizeof(double) * (size_t)(rounds > 0 ? rounds : 1));
        double t0 = merit_now();
        MERIT_CALL(v, in, out[v]);
        double dt = merit_now() - t0;
        reps[v] = dt > 2e-3 ? 1 : (long)(2e-3 / (dt > 1e-7 ? dt : 1e-7)) + 1;     /* >= 2 ms per sample */
    }
    for (int r = 0; r < rounds; ++r)
        for (int v = 0; v < MERIT_NK; ++v) {
            double t0 = merit_now();
            for (long k = 0; k < reps[v]; ++k) MERIT_CALL(v, in, out[v]);
            times[v][r] = (merit_now() - t0) / (double)reps[v];
        }
    printf("{\"threads\": %d, \"rounds\": %d, \"median_s\": {", omp_get_max_threads(), rounds);
    for (int v = 0; v < MERIT_NK; ++v) {
        double med = 0.0;
        if (rounds > 0) {
            qsort(times[v], (size_t)rounds, sizeof(double), merit_cmp);
            med = rounds % 2 ? times[v][rounds / 2] : 0.5 * (times[v][rounds / 2 - 1] + times[v][rounds / 2]);
        }
        printf("%s\"%s\": %.9g", v ? ", " : "", merit_variant[v], med);
    }
    printf("}, \"samples_s\": {");
    for (int v = 0; v < MERIT_NK; ++v) {
        printf("%s\"%s\": [", v ? ", " : "", merit_variant[v]);
        for (int r = 0; r < rounds; ++r) printf("%s%.9g", r ? ", " : "", times[v][r]);
        printf("]");
    }
    printf("}}\n");
    if (dir)
        for (int v = 0; v < MERIT_NK; ++v) {
            char path[4096];
            snprintf(path, sizeof path, "%s/out_%s.f32", dir, merit_variant[v]);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(out[v], sizeof(float), (size_t)MERIT_OUT, f) != (size_t)MERIT_OUT) {
                fprintf(stderr, "cannot write %s\n", path);
                return 2;
            }
            fclose(f);
        }
    return 0;
}
"""


def c_program(t: MeritTransform, tile: dict[str, int], naive: bool = True) -> CProgram:
    """The C file of one transform: naive (unless `naive` is False: a real layer's naive nest runs for
    minutes), tiled and (GEMM-like transforms) packed kernels + driver."""
    stem = _ident(t.name)
    kernels = ([naive_kernel(t, f"merit_{stem}_naive")] if naive else []) + [tiled_kernel(t, tile, f"merit_{stem}_tiled")]
    packed = packed_kernel(t, f"merit_{stem}_packed")
    info = None
    if packed is not None:
        kernels.append(packed[0])
        info = packed[1]
    from core.merit.codegen_rows import STREAM_PRELUDE, rows_kernel     # it builds on this module
    from core.merit.device import fit_c_tile
    rows = rows_kernel(t, f"merit_{stem}_rows")
    if rows is not None:
        kernels.append(rows)
    addr = [operand_address(t, op) for op in t.operands]
    cs = get_strategy(t.strategy)
    head = [f"/* Generated by Dataflow Explorer from the MERIT transform {t.name!r} ({t.description or t.name}).",
            f"   p = ({', '.join(f'{n}={s}' for n, s in t.parallel)}), a = ("
            f"{', '.join(f'{n}={s}' for n, s in t.accumulate)}), strategy {t.strategy}: {cs.summary}.",
            "   Operands are float32, row-major, with their zero padding stored:"]
    for i, (op, ad) in enumerate(zip(t.operands, addr)):
        maps = ", ".join(f"{n}->(d{m.axis},s{m.stride},o{m.offset})" for n, m in op.maps.items())
        head.append(f"     in{i} = {op.name}{list(ad.padded_shape)} (tensor {list(op.shape)}, pad "
                    f"{list(op.padding())}): {maps}")
    head.append(f"   out = Vec(C), {t.p_count} floats row-major over p.")
    head.append(f"   Build: gcc {' '.join(FLAGS)} -o merit_{stem} merit_{stem}.c -lm;  run: ./merit_{stem} [DIR [ROUNDS]] */")
    body = ["#include <math.h>", "#include <omp.h>", "#include <stdio.h>", "#include <stdlib.h>", ""]
    if packed is not None:
        body.append(PACKED_PRELUDE)
    if t.strategy == "bilateral":
        body.append(EXPF)
    if rows is not None:
        body.append(STREAM_PRELUDE)
    for k in kernels:
        body += [f"/* {k.variant}: {k.note} */", k.text, ""]
    n_in = len(t.operands)
    body.append(f"#define MERIT_NIN {n_in}")
    body.append(f"#define MERIT_NK {len(kernels)}")
    body.append(f"#define MERIT_OUT {t.p_count}L")
    body.append(f"static const long merit_in_size[MERIT_NIN] = {{{', '.join(f'{a.size}L' for a in addr)}}};")
    body.append(f"static const char *merit_variant[MERIT_NK] = {{{', '.join(chr(34) + k.variant + chr(34) for k in kernels)}}};")
    args = ", ".join(f"in[{i}]" for i in range(n_in))
    body.append("static void MERIT_CALL(int v, float **in, float *o)")
    body.append("{")
    body.append("    switch (v) {")
    for v, k in enumerate(kernels):
        body.append(f"    case {v}: {k.name}({args}, o); break;")
    body.append("    }")
    body.append("}")
    body.append(DRIVER)
    return CProgram(t.name, kernels, "\n".join(head) + "\n" + "\n".join(body), addr, t.p_count,
                    code_tile(t, tile), info, fit_c_tile(t, tile)[1])
