"""Device descriptions the code generators fit their tiles to (issue 31), and the tile fit itself.

A tile is only as good as the device it runs on: the CUDA kernel keeps each loop operand's eq. 9
footprint of one (p-tile, a-tile) in shared memory, one thread per output (several outputs per thread
past the block's thread limit), so the tile is bounded by the shared memory a block may have, by the
threads and registers of a block, and it should leave enough blocks to fill the device. The C tiled
kernel keeps the p-tile's partial sums in L1 and streams footprints through L2.

`fit_cuda_tile` chooses, from a `CudaDevice`:

* every extent the workload does not give (a transform without a tile), by an estimate of the whole
  run's time over candidate extents (powers of two and the whole range): the larger of the compute
  (the tile's steps, edge tiles included, over the share of the device the blocks fill) and the global
  loads (each (p-tile, a-tile) pair loads its footprints once, `LOAD_COST` steps a word), plus two
  barriers per a-tile, among the tiles whose footprints fit the static 48 KB (portable, several blocks
  per SM) with registers for their outputs. The accumulation is tiled (GEMM k-tiling, channel tiling of
  a convolution) wherever the whole a-range's footprint would not fit or would cost more;
* a tile the user (or the workload) gives is kept when it fits; one that does not fit (shared memory
  over the device's per-block limit, or more outputs per thread than MAX_OUTPUTS_PER_THREAD) is
  shrunk, each extent halved as few times as possible, and the result says which extents changed and
  which limit forced it. A footprint over the static 48 KB but within the device's opt-in limit is
  kept and served from dynamic shared memory.

The estimate is a model, not a measurement: its constants are stated here and in docs/merit.md.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from core.merit_transform.strategies import get_strategy
from core.merit_transform.transform import MeritTransform


# ---------------------------------------------------------------- CUDA devices
@dataclass(frozen=True)
class CudaDevice:
    """What a CUDA code generator must respect (CUDA C++ Programming Guide, compute capability table)."""

    name: str
    static_smem_bytes: int = 48 * 1024        # __shared__ a kernel may declare statically
    dynamic_smem_bytes: int = 48 * 1024       # per block, with cudaFuncSetAttribute opt-in above 48 KB
    smem_per_sm_bytes: int = 64 * 1024
    regs_per_block: int = 65536
    regs_per_thread: int = 255
    max_threads: int = 1024                   # per block
    threads_per_sm: int = 2048
    warp: int = 32
    banks: int = 32
    sms: int = 16
    max_grid_x: int = 2 ** 31 - 1              # blocks of a one-dimensional grid


CUDA_DEVICES: dict[str, CudaDevice] = {
    # H100 / H200 (compute capability 9.0): 227 KB per block by opt-in, 228 KB per SM, 132 SMs (SXM)
    "hopper": CudaDevice("NVIDIA Hopper (H100/H200, sm_90)", dynamic_smem_bytes=227 * 1024,
                         smem_per_sm_bytes=228 * 1024, sms=132),
    # A100 (8.0): 163 KB per block by opt-in, 164 KB per SM, 108 SMs
    "ampere": CudaDevice("NVIDIA Ampere (A100, sm_80)", dynamic_smem_bytes=163 * 1024,
                         smem_per_sm_bytes=164 * 1024, sms=108),
    # any CUDA GPU: the static 48 KB only, no opt-in
    "generic": CudaDevice("any CUDA GPU (static shared memory only)"),
}
DEFAULT_CUDA_DEVICE = "hopper"

MAX_OUTPUTS_PER_THREAD = 16     # each thread keeps its outputs' partial sums and indices in registers
REGS_BASE = 32                  # registers of a thread besides its outputs (addresses, loop counters)
LOAD_COST = 8.0                 # steps one global word costs (fp32 FMA rate over L2 bandwidth, H100: ~8-16)
BARRIER_COST = 64.0             # steps one warp's __syncthreads costs
MAX_CANDIDATES = 400_000        # tiles scored at once (a vectorised search)


def cuda_device(name: str | None = None) -> CudaDevice:
    return CUDA_DEVICES[name or DEFAULT_CUDA_DEVICE]


def gpu_target_device(target: Any) -> CudaDevice:
    """The code generator's description of a GPU target (core.hardware.targets.GpuTarget): its preset's
    device with the target's SMs, shared memory and registers per block (here, not on the target, so
    the target kinds stay below the engines)."""
    base = CUDA_DEVICES[target.device]
    return dataclasses.replace(base, dynamic_smem_bytes=target.smem_per_block_bytes,
                               smem_per_sm_bytes=max(base.smem_per_sm_bytes, target.smem_per_block_bytes),
                               regs_per_block=target.regs_per_block, sms=target.sms)


# ---------------------------------------------------------------- CPU (the C code's target)
@dataclass(frozen=True)
class CpuDevice:
    """The host CPU as the C generator sees it: caches per core and the widest vector -march=native
    allows (read from Linux's sysfs and /proc/cpuinfo; conservative defaults elsewhere)."""

    name: str
    l1d_bytes: int = 32 * 1024
    l2_bytes: int = 1024 * 1024
    l3_bytes: int = 8 * 1024 * 1024
    vector_bytes: int = 32
    cores: int = 1

    @property
    def vector_floats(self) -> int:
        return self.vector_bytes // 4


@lru_cache(maxsize=1)
def host_cpu() -> CpuDevice:
    """This machine's CPU (core.host_machine reads it): cache sizes of cpu0 and the vector width of its flags."""
    from core.host_machine import host_cpu as read_host

    h = read_host()
    return CpuDevice(h.name, l1d_bytes=h.l1d_bytes, l2_bytes=h.l2_bytes, l3_bytes=h.l3_bytes,
                     vector_bytes=h.vector_bytes, cores=h.cores)


# ---------------------------------------------------------------- footprints in closed form
def loop_operands(t: MeritTransform) -> list[int]:
    """The operands read once per accumulation step (the ones staged in shared memory)."""
    s = get_strategy(t.strategy)
    return [i for i, po in enumerate(s.per_output) if not po]


def footprint_words(t: MeritTransform, i: int, ext: dict[str, int]) -> int:
    """Eq. 9 of operand i for tile extents `ext`, as the CUDA kernel allocates it (not clipped)."""
    op = t.operands[i]
    fp = [1] * len(op.shape)
    for idx, m in op.maps.items():
        fp[m.axis] += (ext[idx] - 1) * abs(m.stride)
    return int(np.prod(fp, dtype=np.int64))


def smem_bytes(t: MeritTransform, ext: dict[str, int]) -> int:
    """Shared memory of one block: every loop operand's footprint, float32, row-major."""
    return 4 * sum(footprint_words(t, i, ext) for i in loop_operands(t))


def threads_of(tp: int, dev: CudaDevice) -> tuple[int, int]:
    """(threads, outputs per thread) for a p-tile of tp outputs."""
    threads = min(tp, dev.max_threads)
    return threads, -(-tp // threads)


def regs_estimate(t: MeritTransform, per_thread: int) -> int:
    """Registers of a thread: a base plus, per output, its partial sums, its indices (64-bit) and a flag."""
    from core.merit.codegen_c import c_strategy

    per_output = len(c_strategy(t).accs) + 2 * len(t.parallel) + 1
    return REGS_BASE + per_thread * per_output


# ---------------------------------------------------------------- the fit
@dataclass
class TileFit:
    """The tile a kernel runs with, and why."""

    ext: dict[str, int]                        # extent per index
    device: str
    threads: int
    outputs_per_thread: int
    blocks: int
    smem_bytes: int                            # row-major footprints (a bank layout may add padding)
    smem_limit: int                            # the device's per-block limit the fit respected
    dynamic: bool                              # over the static limit: dynamic shared memory (opt-in)
    regs_estimate: int
    chosen: list[str] = field(default_factory=list)                  # extents chosen by the fit
    adjusted: dict[str, tuple[int, int]] = field(default_factory=dict)   # given extent -> (asked, used)
    note: str = ""


def _candidates(size: int) -> list[int]:
    c = {min(size, 1 << b) for b in range(0, 13)}
    if size <= 4096:
        c.add(size)
    return sorted(c)


def _halvings(v: int) -> list[int]:
    out = [v]
    while out[-1] > 1:
        out.append((out[-1] + 1) // 2)
    return out


def fit_cuda_tile(t: MeritTransform, tile: dict[str, int] | None, dev: CudaDevice | None = None) -> TileFit:
    """The CUDA tile of transform `t` on device `dev` (see the module docstring). `tile`: the extents
    given (missing: the whole range) or empty/None: all chosen."""
    dev = dev or cuda_device()
    sizes = dict(t.indices)
    names = [n for n, _ in t.indices]
    par = [n for n, _ in t.parallel]
    acc = [n for n, _ in t.accumulate]
    given = {n: min(int(v), sizes[n]) for n, v in (tile or {}).items() if n in sizes}
    choose_all = not given
    fixed = {} if choose_all else {n: given.get(n, sizes[n]) for n in names}
    # per index: candidate extents; a given extent and its halvings (fewest halvings preferred)
    cands: list[list[int]] = []
    for n in names:
        cands.append(_halvings(fixed[n]) if n in fixed else _candidates(sizes[n]))
    total = math.prod(len(c) for c in cands)
    while total > MAX_CANDIDATES:             # thin the chosen indices' candidates (every other one)
        j = max((k for k, n in enumerate(names) if n not in fixed and len(cands[k]) > 2),
                key=lambda k: len(cands[k]), default=None)
        if j is None:
            j = max(range(len(names)), key=lambda k: len(cands[k]))
        keep = cands[j][::2]
        if cands[j][-1] not in keep:
            keep.append(cands[j][-1])
        cands[j] = keep
        total = math.prod(len(c) for c in cands)
    grid = np.array(list(itertools.product(*cands)), dtype=np.int64).reshape(-1, len(names))
    col = {n: grid[:, k] for k, n in enumerate(names)}
    one = np.ones(len(grid), dtype=np.int64)
    tp = np.prod([col[n] for n in par], axis=0) if par else one
    ta = np.prod([col[n] for n in acc], axis=0) if acc else one
    words = np.zeros(len(grid), dtype=np.int64)
    for i in loop_operands(t):
        op = t.operands[i]
        fp = [one.copy() for _ in op.shape]
        for idx, m in op.maps.items():
            fp[m.axis] = fp[m.axis] + (col[idx] - 1) * abs(m.stride)
        words += np.prod(fp, axis=0)
    smem = 4 * words
    threads = np.minimum(tp, dev.max_threads)
    per_thread = -(-tp // threads)
    from core.merit.codegen_c import c_strategy

    regs = REGS_BASE + per_thread * (len(c_strategy(t).accs) + 2 * len(par) + 1)
    n_p = np.prod([-(-sizes[n] // col[n]) for n in par], axis=0) if par else one
    n_a = np.prod([-(-sizes[n] // col[n]) for n in acc], axis=0) if acc else one
    # chosen tiles stay within the static limit (every CUDA GPU, and several blocks per SM); a given
    # tile may use the device's opt-in dynamic shared memory
    limit = dev.static_smem_bytes if choose_all else dev.dynamic_smem_bytes
    ok = (smem <= limit) & (per_thread <= MAX_OUTPUTS_PER_THREAD) & (n_p <= dev.max_grid_x)
    if not choose_all:
        # a given tile is the user's: only the hard limits shrink it
        shrink = np.zeros(len(grid))
        for k, n in enumerate(names):
            shrink += np.log2(fixed[n] / col[n])
    else:
        shrink = np.zeros(len(grid))
        ok &= (regs <= dev.regs_per_thread) & (threads * regs <= dev.regs_per_block)
    # the run's time in steps: compute over the filled share of the device, or the loads, plus barriers
    warps = -(-threads // dev.warp)
    lanes = warps * dev.warp * per_thread                  # thread slots a block's step costs
    steps = n_p * n_a * lanes * ta
    per_sm = np.minimum(dev.smem_per_sm_bytes // np.maximum(smem, 1), dev.threads_per_sm // (warps * dev.warp))
    per_sm = np.maximum(per_sm, 1)
    resident = np.minimum(n_p, per_sm * dev.sms) * warps * dev.warp
    fill = np.minimum(1.0, resident / (dev.sms * dev.threads_per_sm * 0.5))   # half the slots hide latency
    compute = steps / fill / (dev.sms * dev.threads_per_sm)
    loads = n_p * n_a * words * LOAD_COST / (dev.sms * dev.threads_per_sm)
    barriers = n_p * n_a * 2 * warps * BARRIER_COST / (dev.sms * dev.threads_per_sm)
    cost = np.maximum(compute, loads) + barriers
    if not ok.any():                          # cannot happen (all-ones fits), but never index an empty set
        ok = smem == smem.min()
    order = np.lexsort((smem, cost, shrink, ~ok))
    b = int(order[0])
    ext = {n: int(col[n][b]) for n in names}
    th, pt = int(threads[b]), int(per_thread[b])
    fit = TileFit(ext=ext, device=dev.name, threads=th, outputs_per_thread=pt, blocks=int(n_p[b]),
                  smem_bytes=int(smem[b]), smem_limit=limit, dynamic=int(smem[b]) > dev.static_smem_bytes,
                  regs_estimate=int(regs[b]))
    if choose_all:
        fit.chosen = list(names)
        cut = [n for n in acc if ext[n] < sizes[n]]
        fit.note = (f"tile chosen for {dev.name}: " + ", ".join(f"{n}={ext[n]}" for n in names)
                    + f"; {fit.smem_bytes} B shared memory (a chosen tile stays within the static {limit} B)"
                    + (f"; accumulation tiled along {', '.join(cut)}" if cut else ""))
    else:
        fit.adjusted = {n: (fixed[n], ext[n]) for n in names if ext[n] != fixed[n]}
        if fit.adjusted:
            asked = {n: fixed[n] for n in names}
            why = []
            if smem_bytes(t, asked) > limit:
                why.append(f"its footprints take {smem_bytes(t, asked)} B of shared memory, over the "
                           f"{limit} B a block may have on {dev.name}")
            _, pt_asked = threads_of(math.prod(asked[n] for n in par) if par else 1, dev)
            if pt_asked > MAX_OUTPUTS_PER_THREAD:
                why.append(f"it gives each of {dev.max_threads} threads {pt_asked} outputs, over "
                           f"{MAX_OUTPUTS_PER_THREAD}")
            fit.note = ("tile adjusted: " + ", ".join(f"{n} {a} -> {u}" for n, (a, u) in fit.adjusted.items())
                        + f" ({'; '.join(why) or 'over a limit of the device'}); now {fit.smem_bytes} B")
        else:
            fit.note = f"the given tile fits {dev.name}: {fit.smem_bytes} B shared memory"
    if fit.dynamic:
        fit.note += (f"; over the static {dev.static_smem_bytes} B, so the kernel uses dynamic shared memory "
                     f"(cudaFuncSetAttribute opt-in, up to {dev.dynamic_smem_bytes} B)")
    return fit


# ---------------------------------------------------------------- the C tile (CPU caches)
def fit_c_tile(t: MeritTransform, tile: dict[str, int] | None, cpu: CpuDevice | None = None) -> tuple[dict[str, int], str]:
    """The C tiled kernel's tile: the given extents (missing: the whole range), the p-tile shrunk (its
    largest extent halved) until its partial sums (float32 per accumulator) fit L1; without a given
    tile also the accumulation tiled (largest a-extent halved) until one a-tile's footprints fit half
    of L2."""
    cpu = cpu or host_cpu()
    sizes = dict(t.indices)
    par = [n for n, _ in t.parallel]
    acc = [n for n, _ in t.accumulate]
    from core.merit.codegen_c import c_strategy

    max_outputs = max(cpu.vector_floats, cpu.l1d_bytes // (4 * len(c_strategy(t).accs)))
    given = {n: min(int(v), sizes[n]) for n, v in (tile or {}).items() if n in sizes}
    ext = {n: given.get(n, s) for n, s in t.indices}
    notes = []
    while math.prod(ext[n] for n in par) > max_outputs:
        n = max(par, key=lambda k: ext[k])
        ext[n] = (ext[n] + 1) // 2
    if any(ext[n] != given.get(n, sizes[n]) for n in par):
        notes.append(f"p-tile cut to at most {max_outputs} outputs, so that its partial sums stay in L1 "
                     f"({cpu.l1d_bytes // 1024} KB)")
    if not given:
        budget = cpu.l2_bytes // 2
        while acc and 4 * sum(footprint_words(t, i, ext) for i in loop_operands(t)) > budget:
            n = max(acc, key=lambda m: ext[m])
            if ext[n] == 1:
                break
            ext[n] = (ext[n] + 1) // 2
        cut = [n for n in acc if ext[n] < sizes[n]]
        if cut:
            notes.append(f"accumulation tiled along {', '.join(cut)} so that one a-tile's footprints fit half "
                         f"of L2 ({cpu.l2_bytes // 1024} KB)")
    return ext, "; ".join(notes)
