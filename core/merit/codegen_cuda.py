"""CUDA code generated from a MERIT transform (paper, section IV: tiled execution, bank layouts).

One thread block per p-tile (the engine's tile); one thread per output of the tile (a thread takes
several outputs when the tile has more than 1024). For every a-tile the block loads each loop
operand's footprint (eq. 9) into shared memory, cooperatively and once, then every thread runs its
ranged inner product over the a-tile reading M(op) on the fly from shared memory (section IV-A).
The bank operand's footprint is stored with the bank layout the engine's analysis picked
(`pick_layout`: padding or XOR hash, Fig. 6), so the warp reads it was checked for are the reads
this kernel makes.

The same source runs without a GPU: `emulation_source` compiles it as C++ with a shim in which a
block is an OpenMP team (threadIdx = thread number, __syncthreads = a barrier, __shared__ = one
static array shared by the team) and blocks run one after another. That executes the generated
indexing, shared-memory layout and barriers on the CPU, so its numbers check the kernel; it says
nothing about GPU speed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.merit.codegen_c import (CStrategy, _ident, _roles, _sum, c_strategy, operand_address,
                                  output_strides)
from core.merit.result import BankLayout, Banks
from core.merit.device import CudaDevice, cuda_device, fit_cuda_tile
from core.merit_transform.transform import MeritTransform

MAX_THREADS = 1024
STATIC_SMEM_LIMIT = 48 * 1024          # bytes of static __shared__ memory a CUDA kernel may declare


# ---------------------------------------------------------------- bank layouts (from the engine's report)
@dataclass
class SmemLayout:
    """Word address of footprint element (row, col) in shared memory."""

    name: str
    width: int
    pitch: int
    kind: str = "naive"        # naive | pad | xor_row | xor_col
    g: int = 0                 # pad: p words after every g columns
    p: int = 0
    shift: int = 0             # xor: (src >> shift) & mask, shifted left by m
    mask: int = 0
    m: int = 0
    detail: str = ""

    def address(self, r: Any, c: Any) -> Any:
        if self.kind == "pad":
            return r * self.pitch + c + (c // self.g) * self.p
        if self.kind == "xor_row":
            return r * self.pitch + (c ^ (((r >> self.shift) & self.mask) << self.m))
        if self.kind == "xor_col":
            return r * self.pitch + (c ^ (((c >> self.shift) & self.mask) << self.m))
        return r * self.pitch + c

    def c_expr(self, r: str, c: str) -> str:
        if self.kind == "pad":
            return f"({r}) * {self.pitch} + ({c}) + (({c}) / {self.g}) * {self.p}"
        if self.kind == "xor_row":
            return f"({r}) * {self.pitch} + (({c}) ^ (((({r}) >> {self.shift}) & {self.mask}) << {self.m}))"
        if self.kind == "xor_col":
            return f"({r}) * {self.pitch} + (({c}) ^ (((({c}) >> {self.shift}) & {self.mask}) << {self.m}))"
        return f"({r}) * {self.pitch} + ({c})"


_PAD_ROW = re.compile(r"(\d+) padding word\(s\) after every (\d+) words \(pitch (\d+)\)$")
_PAD_IN = re.compile(r"(\d+) padding word\(s\) after every (\d+) words of a row(?:, (\d+) more at its end)? "
                     r"\(pitch (\d+)\)$")
_XOR = re.compile(r"pitch (\d+), column XOR \(\(\((row|column) >> (\d+)\) & (\d+)\) << (\d+)\)$")


def parse_layout(L: BankLayout, width: int) -> SmemLayout | None:
    """A layout of the engine's bank report as an address map; None for a re-tiling (a different
    assignment of lanes to warps, not a layout) or a detail this reader does not know."""
    name, detail, pitch = L.layout, L.detail, L.pitch
    if name == "naive":
        return SmemLayout(name, width, pitch, detail=detail)
    if name == "padding":
        m = _PAD_ROW.match(detail)
        if m:
            return SmemLayout(name, width, int(m.group(3)), detail=detail)
        m = _PAD_IN.match(detail)
        if m:
            return SmemLayout(name, width, int(m.group(4)), "pad", g=int(m.group(2)), p=int(m.group(1)),
                              detail=detail)
    if name == "xor":
        m = _XOR.match(detail)
        if m:
            kind = "xor_row" if m.group(2) == "row" else "xor_col"
            return SmemLayout(name, width, int(m.group(1)), kind, shift=int(m.group(3)), mask=int(m.group(4)),
                              m=int(m.group(5)), detail=detail)
    return None


def layout_matches(lay: SmemLayout, L: BankLayout, rows: int, banks: int) -> bool:
    """The parsed map puts every footprint word in the bank the report's bank grid shows."""
    grid = np.asarray(L.bank_grid)
    if grid.shape != (rows, lay.pitch):
        return False
    R, C = np.meshgrid(np.arange(rows), np.arange(lay.width), indexing="ij")
    addr = np.asarray(lay.address(R, C)).reshape(-1)
    if addr.min() < 0 or addr.max() >= rows * lay.pitch or len(np.unique(addr)) != addr.size:
        return False
    flat = grid.reshape(-1)
    return bool(np.all(flat[addr] == addr % banks))


def pick_layout(bank_report: Banks | None, footprint: tuple[int, ...]) -> tuple[SmemLayout | None, str]:
    """The engine's choice for the bank operand: the naive layout when it has no conflicts, else the
    conflict-free padding or XOR layout with the fewest padding words (else the fewest extra cycles).
    Each candidate is checked against the report's bank grid before it is used."""
    if bank_report is None:
        return None, "no bank analysis: row-major layout"
    width = int(footprint[-1])
    rows = int(np.prod(footprint[:-1], dtype=np.int64)) if len(footprint) > 1 else 1
    if list(bank_report.footprint) != list(footprint):
        return None, (f"the bank analysis' footprint {tuple(bank_report.footprint)} is not this kernel's "
                      f"{tuple(footprint)}: row-major layout")
    cands = [L for L in bank_report.layouts if L.layout in ("naive", "padding", "xor")]
    naive = next((L for L in cands if L.layout == "naive"), None)
    if naive is not None and naive.extra_cycles == 0:
        order = [naive]
    else:
        order = sorted(cands, key=lambda L: (L.extra_cycles, L.padding_words))
    for L in order:
        lay = parse_layout(L, width)
        if lay is not None and layout_matches(lay, L, rows, bank_report.banks):
            return lay, (f"{L.layout}: {L.detail} ({L.extra_cycles} extra cycles, "
                         f"{L.padding_words} padding words, from the engine's bank analysis)")
    return None, "no layout of the bank analysis could be read back: row-major layout"


# ---------------------------------------------------------------- the kernel
@dataclass
class CudaProgram:
    stage: str
    kernel_name: str
    source: str                        # the .cu file: kernel + host driver (#ifndef MERIT_EMULATE)
    threads: int
    blocks: int
    outputs_per_thread: int
    smem_bytes: int
    layout: str
    out_size: int
    in_sizes: list[int]
    ext: dict[str, int] = field(default_factory=dict)     # the tile run (fitted to the device)
    tile_note: str = ""
    device: str = ""
    smem_limit: int = STATIC_SMEM_LIMIT
    dynamic: bool = False              # dynamic shared memory (over the static 48 KB, opt-in)
    regs_estimate: int = 0


def _footprint_geometry(t: MeritTransform, i: int, ext: dict[str, int]) -> tuple[list[int], list[str]]:
    """Per axis: the footprint extent (eq. 9) and the C expression of its first padded coordinate,
    given tile starts T_<p index> and U_<a index>."""
    op = t.operands[i]
    pad = op.padding()
    fp = [1] * len(op.shape)
    lo: list[list[str]] = [[] for _ in op.shape]
    base = [int(p) for p in pad]
    p_names = {n for n, _ in t.parallel}
    for idx, m in op.maps.items():
        fp[m.axis] += (ext[idx] - 1) * abs(m.stride)
        start = f"T_{_ident(idx)}" if idx in p_names else f"U_{_ident(idx)}"
        lo[m.axis].append(f"{start} * {m.stride}" if m.stride != 1 else start)
        base[m.axis] += m.offset + min(0, (ext[idx] - 1) * m.stride)
    exprs = [" + ".join(terms + [str(b)]) if terms else str(b) for terms, b in zip(lo, base)]
    return fp, exprs


def cuda_program(t: MeritTransform, tile: dict[str, int], bank_report: Banks | None = None,
                 bank_operand: str | None = None, device: CudaDevice | None = None) -> CudaProgram:
    """The .cu of one transform for `device` (default: core.merit.device.DEFAULT_CUDA_DEVICE): the tile
    is `tile` where it fits the device, else adjusted, and chosen where `tile` is empty (fit_cuda_tile)."""
    dev = device or cuda_device()
    fit = fit_cuda_tile(t, tile, dev)
    cs: CStrategy = c_strategy(t)
    ext = fit.ext
    shrunk = bool(fit.adjusted)
    addr = [operand_address(t, op) for op in t.operands]
    loop_ops, once_ops = _roles(t)
    ostr = output_strides(t)
    sizes = dict(t.indices)
    par = [n for n, _ in t.parallel]
    acc = [n for n, _ in t.accumulate]
    tp = int(np.prod([ext[n] for n in par] or [1]))
    threads, per_thread = fit.threads, fit.outputs_per_thread
    n_tiles = {n: -(-sizes[n] // ext[n]) for n in par}
    blocks = int(np.prod([n_tiles[n] for n in par] or [1]))
    stem = _ident(t.name)
    kname = f"merit_{stem}_cuda"

    geo = {i: _footprint_geometry(t, i, ext) for i in loop_ops}
    layouts: dict[int, SmemLayout] = {}
    layout_note = "row-major shared memory (no bank operand)"
    for i in loop_ops:
        fp = geo[i][0]
        width = fp[-1]
        layouts[i] = SmemLayout("naive", width, width, detail=f"row-major, pitch {width}")
        if t.operands[i].name == bank_operand and bank_operand is not None:
            if shrunk:
                layout_note = "the tile was adjusted to the device: row-major layout"
                continue
            lay, layout_note = pick_layout(bank_report, tuple(fp))
            if lay is not None:
                layouts[i] = lay

    def words_of() -> dict[int, int]:
        return {i: (int(np.prod(geo[i][0][:-1])) if len(geo[i][0]) > 1 else 1) * layouts[i].pitch for i in loop_ops}

    smem_words = words_of()
    if 4 * sum(smem_words.values()) > fit.smem_limit:       # the layout's padding would not fit: row-major
        for i in loop_ops:
            w = geo[i][0][-1]
            layouts[i] = SmemLayout("naive", w, w, detail=f"row-major, pitch {w}")
        layout_note = f"the bank layout's padding would exceed {fit.smem_limit} B: row-major layout"
        smem_words = words_of()
    smem_bytes = 4 * sum(smem_words.values())
    dynamic = smem_bytes > dev.static_smem_bytes

    ins = ", ".join(f"const float *__restrict__ in{i}" for i in range(len(t.operands)))
    L = [f"__global__ void __launch_bounds__({threads}) {kname}({ins}, float *__restrict__ out)", "{"]
    if dynamic:
        L.append(f"    MERIT_DYNAMIC_SMEM(merit_smem, {sum(smem_words.values())});   /* {smem_bytes} B: over the "
                 f"static {dev.static_smem_bytes} B, opt-in (cudaFuncSetAttribute) */")
    off = 0
    for i in loop_ops:
        what = f"footprint {tuple(geo[i][0])} of {t.operands[i].name}: {layouts[i].detail}"
        if dynamic:
            L.append(f"    float *const s{i} = merit_smem + {off};   /* {what} */")
            off += smem_words[i]
        else:
            L.append(f"    __shared__ float s{i}[{smem_words[i]}];   /* {what} */")
    L.append("    long bid = blockIdx.x;")
    for n in reversed(par):
        v = _ident(n)
        L.append(f"    const long T_{v} = (bid % {n_tiles[n]}L) * {ext[n]}L; bid /= {n_tiles[n]}L;")
    # this thread's outputs
    L.append(f"    long pk[{per_thread}][{max(1, len(par))}];")
    L.append(f"    int valid[{per_thread}];")
    for a, init, _ in cs.accs:
        L.append(f"    float P_{a}[{per_thread}];")
    L.append(f"    for (int r = 0; r < {per_thread}; ++r) {{")
    L.append(f"        long e = threadIdx.x + (long)r * {threads};")
    L.append(f"        valid[r] = e < {tp};")
    for j, n in reversed(list(enumerate(par))):
        L.append(f"        pk[r][{j}] = T_{_ident(n)} + e % {ext[n]}; e /= {ext[n]};")
        L.append(f"        valid[r] = valid[r] && pk[r][{j}] < {sizes[n]}L;")
    for a, init, _ in cs.accs:
        L.append(f"        P_{a}[r] = {init};")
    L.append("    }")
    for n in acc:
        v = _ident(n)
        L.append(f"    for (long U_{v} = 0; U_{v} < {sizes[n]}L; U_{v} += {ext[n]}L)")
    L.append("    {")
    # cooperative footprint loads
    for i in loop_ops:
        fp, lo = geo[i]
        shape = addr[i].padded_shape
        total = int(np.prod(fp))
        L.append(f"        for (long w = threadIdx.x; w < {total}L; w += {threads}) {{")
        L.append("            long q = w;")
        for ax in reversed(range(len(fp))):
            L.append(f"            const long c{ax} = q % {fp[ax]}; q /= {fp[ax]};")
            L.append(f"            const long g{ax} = {lo[ax]} + c{ax};")
        inside = " && ".join(f"g{ax} >= 0 && g{ax} < {shape[ax]}L" for ax in range(len(fp)))
        gaddr = _sum([(f"g{ax}", int(np.prod(shape[ax + 1:], dtype=np.int64))) for ax in range(len(fp))])
        row = _sum([(f"c{ax}", int(np.prod(fp[ax + 1:-1], dtype=np.int64))) for ax in range(len(fp) - 1)])
        L.append(f"            s{i}[{layouts[i].c_expr(row, f'c{len(fp) - 1}')}] = ({inside}) ? in{i}[{gaddr}] : 0.0f;")
        L.append("        }")
    L.append("        __syncthreads();")
    L.append(f"        for (int r = 0; r < {per_thread}; ++r) {{")
    L.append("            if (!valid[r]) continue;")
    for j, n in enumerate(par):
        L.append(f"            const long {_ident(n)} = pk[r][{j}];")
    for i in once_ops:
        if f"o{i}" not in cs.loop:              # read where the strategy uses it (PreLoop or PostLoop)
            continue
        terms = [(_ident(n), addr[i].strides[n]) for n in par]
        L.append(f"            const float o{i} = in{i}[{_sum(terms, addr[i].base)}];")
    for a, _, _ in cs.accs:
        L.append(f"            float {a} = P_{a}[r];")
    ind = "            "
    for n in acc:
        v = _ident(n)
        L.append(f"{ind}for (long {v} = U_{v}; {v} < U_{v} + {ext[n]}L && {v} < {sizes[n]}L; ++{v})")
    L.append(f"{ind}{{")
    for i in loop_ops:
        op = t.operands[i]
        fp = geo[i][0]
        local = []
        for ax in range(len(fp)):
            parts: list[str] = []
            shift = 0
            for idx, m in op.maps.items():
                if m.axis != ax:
                    continue
                start = f"T_{_ident(idx)}" if idx in par else f"U_{_ident(idx)}"
                parts.append(f"({_ident(idx)} - {start}) * {m.stride}")
                shift -= min(0, (ext[idx] - 1) * m.stride)
            local.append(" + ".join(parts + [str(shift)]) if parts else str(shift))
        row = " + ".join(f"({local[ax]}) * {int(np.prod(fp[ax + 1:-1], dtype=np.int64))}"
                         for ax in range(len(fp) - 1)) or "0"
        L.append(f"{ind}    const float x{i} = s{i}[{layouts[i].c_expr(row, local[-1])}];")
    L.append(f"{ind}    {cs.loop}")
    L.append(f"{ind}}}")
    for a, _, _ in cs.accs:
        L.append(f"            P_{a}[r] = {a};")
    L.append("        }")
    L.append("        __syncthreads();")
    L.append("    }")
    L.append(f"    for (int r = 0; r < {per_thread}; ++r) {{")
    L.append("        if (!valid[r]) continue;")
    for j, n in enumerate(par):
        L.append(f"        const long {_ident(n)} = pk[r][{j}];")
    for i in once_ops:
        if f"o{i}" not in cs.post:
            continue
        terms = [(_ident(n), addr[i].strides[n]) for n in par]
        L.append(f"        const float o{i} = in{i}[{_sum(terms, addr[i].base)}];")
    for a, _, _ in cs.accs:
        L.append(f"        const float {a} = P_{a}[r];")
    L.append(f"        out[{_sum([(_ident(n), ostr[n]) for n in par])}] = {cs.post};")
    L.append("    }")
    L.append("}")
    in_sizes = [a.size for a in addr]
    head = [f"/* Generated by Dataflow Explorer from the MERIT transform {t.name!r}: one thread block per p-tile",
            f"   ({', '.join(f'{n}={ext[n]}' for n in par)}), {threads} threads x {per_thread} output(s), "
            f"{blocks} blocks; a-tile ({', '.join(f'{n}={ext[n]}' for n in acc) or '-'}).",
            f"   Device: {dev.name}; {fit.note}.",
            f"   Shared memory {smem_bytes} bytes ({'dynamic' if dynamic else 'static'}, limit {fit.smem_limit}); "
            f"about {fit.regs_estimate} registers a thread; bank operand layout: {layout_note}.",
            f"   Build: nvcc -O3 -o merit_{stem}_cuda merit_{stem}.cu   (inputs/outputs as the C program's) */",
            "#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>",
            "#ifdef MERIT_EMULATE",
            "#define MERIT_DYNAMIC_SMEM(name, words) static float name[words]",
            "#else",
            "#define MERIT_DYNAMIC_SMEM(name, words) extern __shared__ float name[]",
            "#endif", ""]
    host = _host_driver(t, kname, blocks, threads, in_sizes, smem_bytes if dynamic else 0)
    source = "\n".join(head + L) + "\n\n#ifndef MERIT_EMULATE\n" + host + "#endif\n"
    return CudaProgram(t.name, kname, source, threads, blocks, per_thread, smem_bytes, layout_note, t.p_count,
                       in_sizes, dict(ext), fit.note, dev.name, fit.smem_limit, dynamic, fit.regs_estimate)


def _host_driver(t: MeritTransform, kname: str, blocks: int, threads: int, in_sizes: list[int],
                 dynamic_bytes: int = 0) -> str:
    n = len(in_sizes)
    sizes = ", ".join(f"{s}L" for s in in_sizes)
    args = ", ".join(f"d_in[{i}]" for i in range(n))
    launch = f"<<<{blocks}, {threads}, {dynamic_bytes}>>>" if dynamic_bytes else f"<<<{blocks}, {threads}>>>"
    optin = (f"MERIT_CHECK(cudaFuncSetAttribute({kname}, cudaFuncAttributeMaxDynamicSharedMemorySize, "
             f"{dynamic_bytes}));" if dynamic_bytes else "/* static shared memory only */")
    return f"""
/* usage: PROG [DIR [ROUNDS]]: reads DIR/in<i>.f32, runs the kernel, writes DIR/out_cuda.f32 and prints
   the median kernel time (CUDA events) as JSON. */
#define MERIT_CHECK(x) do {{ cudaError_t e_ = (x); if (e_ != cudaSuccess) {{ \\
    fprintf(stderr, "%s: %s\\n", #x, cudaGetErrorString(e_)); return 3; }} }} while (0)
static int merit_cmp(const void *a, const void *b) {{ float x = *(const float *)a, y = *(const float *)b; return (x > y) - (x < y); }}
int main(int argc, char **argv)
{{
    const char *dir = argc > 1 && argv[1][0] ? argv[1] : NULL;
    const int rounds = argc > 2 ? atoi(argv[2]) : 5;
    const long in_size[{n}] = {{{sizes}}};
    float *h_in[{n}], *d_in[{n}], *d_out;
    for (int i = 0; i < {n}; ++i) {{
        h_in[i] = (float *)malloc(sizeof(float) * in_size[i]);
        if (dir) {{
            char path[4096]; snprintf(path, sizeof path, "%s/in%d.f32", dir, i);
            FILE *f = fopen(path, "rb");
            if (!f || fread(h_in[i], sizeof(float), in_size[i], f) != (size_t)in_size[i]) {{
                fprintf(stderr, "cannot read %s\\n", path); return 2; }}
            fclose(f);
        }} else
            for (long j = 0; j < in_size[i]; ++j) h_in[i][j] = (float)rand() / RAND_MAX - 0.5f;
        MERIT_CHECK(cudaMalloc(&d_in[i], sizeof(float) * in_size[i]));
        MERIT_CHECK(cudaMemcpy(d_in[i], h_in[i], sizeof(float) * in_size[i], cudaMemcpyHostToDevice));
    }}
    MERIT_CHECK(cudaMalloc(&d_out, sizeof(float) * {t.p_count}L));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0); cudaEventCreate(&e1);
    {optin}
    {kname}{launch}({args}, d_out);
    MERIT_CHECK(cudaGetLastError());
    MERIT_CHECK(cudaDeviceSynchronize());
    float ms[64]; const int nr = rounds < 1 ? 1 : (rounds > 64 ? 64 : rounds);
    for (int r = 0; r < nr; ++r) {{
        cudaEventRecord(e0);
        {kname}{launch}({args}, d_out);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms[r], e0, e1);
    }}
    qsort(ms, nr, sizeof(float), merit_cmp);
    float *h_out = (float *)malloc(sizeof(float) * {t.p_count}L);
    MERIT_CHECK(cudaMemcpy(h_out, d_out, sizeof(float) * {t.p_count}L, cudaMemcpyDeviceToHost));
    if (dir) {{
        char path[4096]; snprintf(path, sizeof path, "%s/out_cuda.f32", dir);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(h_out, sizeof(float), {t.p_count}L, f) != (size_t){t.p_count}L) {{
            fprintf(stderr, "cannot write %s\\n", path); return 2; }}
        fclose(f);
    }}
    printf("{{\\"median_s\\": {{\\"cuda\\": %.9g}}}}\\n", ms[nr / 2] * 1e-3);
    return 0;
}}
"""


SHIM = r"""/* CPU emulation of the CUDA subset the generated kernels use: a block is an OpenMP team. */
#include <omp.h>
#include <math.h>
struct merit_dim3 { long x, y, z; };
static merit_dim3 blockIdx, blockDim, gridDim;
static merit_dim3 threadIdx;
#pragma omp threadprivate(threadIdx)
#define __global__
#define __launch_bounds__(...)
#define __shared__ static
#define __syncthreads() _Pragma("omp barrier")
#define MERIT_EMULATE 1
"""


def emulation_source(prog: CudaProgram, n_inputs: int, include: str | None = None) -> str:
    """C++ that runs the .cu kernel block by block on the CPU (see the module docstring); with
    `include`, the .cu file is #included by that name instead of copied in."""
    args = ", ".join(f"in[{i}]" for i in range(n_inputs))
    sizes = ", ".join(f"{s}L" for s in prog.in_sizes)
    body = f'#include "{include}"' if include else prog.source
    return SHIM + "\n" + body + f"""
#include <cstdio>
#include <vector>
int main(int argc, char **argv)
{{
    if (argc < 2) {{ std::fprintf(stderr, "usage: emulate DIR\\n"); return 2; }}
    const long in_size[{n_inputs}] = {{{sizes}}};
    std::vector<std::vector<float>> data({n_inputs});
    const float *in[{n_inputs}];
    for (int i = 0; i < {n_inputs}; ++i) {{
        char path[4096]; std::snprintf(path, sizeof path, "%s/in%d.f32", argv[1], i);
        data[i].resize(in_size[i]);
        FILE *f = std::fopen(path, "rb");
        if (!f || std::fread(data[i].data(), sizeof(float), in_size[i], f) != (size_t)in_size[i]) return 2;
        std::fclose(f);
        in[i] = data[i].data();
    }}
    std::vector<float> out({prog.out_size}L, NAN);
    omp_set_dynamic(0);
    blockDim.x = {prog.threads}; blockDim.y = blockDim.z = 1;
    gridDim.x = {prog.blocks}; gridDim.y = gridDim.z = 1;
    int short_team = 0;
    /* DIR/blocks.i64, when present, lists the blocks to run (a sample of a large transform's blocks) */
    std::vector<long> blist;
    {{
        char path[4096]; std::snprintf(path, sizeof path, "%s/blocks.i64", argv[1]);
        FILE *f = std::fopen(path, "rb");
        if (f) {{ long b; while (std::fread(&b, sizeof b, 1, f) == 1) blist.push_back(b); std::fclose(f); }}
    }}
    if (blist.empty())
        for (long b = 0; b < {prog.blocks}; ++b) blist.push_back(b);
    for (long b : blist) {{
        blockIdx.x = b; blockIdx.y = blockIdx.z = 0;
        #pragma omp parallel num_threads({prog.threads})
        {{
            if (omp_get_num_threads() != {prog.threads}) {{
                #pragma omp atomic write
                short_team = 1;
            }}
            threadIdx.x = omp_get_thread_num(); threadIdx.y = threadIdx.z = 0;
            {prog.kernel_name}({args}, out.data());
        }}
        if (short_team) {{ std::fprintf(stderr, "could not start a team of {prog.threads} threads\\n"); return 4; }}
    }}
    char path[4096]; std::snprintf(path, sizeof path, "%s/out_cuda_emulated.f32", argv[1]);
    FILE *f = std::fopen(path, "wb");
    if (!f || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size()) return 2;
    std::fclose(f);
    return 0;
}}
"""
