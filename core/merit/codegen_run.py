"""Compile, run and check the code generated from a transform (codegen_c, codegen_cuda).

The C program is built with the system compiler (`$CC`, else gcc, cc, clang) and the flags of
codegen_c.FLAGS, run on the transform's inputs rounded to float32, and every kernel's output is
compared with numpy evaluating the same transform in float64 on those same float32 inputs.

Error measure (stated with every result): max_rel_error = max_i |c_i - r_i| / max_i |r_i|, the
largest deviation relative to the output's largest magnitude (the infinity-norm relative error). A
per-element ratio would be meaningless where a sum of many signed terms cancels to near zero.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core import faults
from core.ccompiler import find_compiler
from core.machine_load import LoadMeter
from core.merit import codegen_c as CG
from core.merit.evaluate import evaluate, evaluate_rows
from core.merit.result import Banks, Codegen, CodegenC, CodegenCuda, CodegenKernel, CudaKernel, EmulatedCheck
from core.merit.sample import OutputSample, border_tiles, choose_sample, needs_sampling, tile_rows
from core.merit_transform.transform import MeritTransform

ERROR_MEASURE = "max |C - numpy_float64| / max |numpy_float64| (float32 code, float64 reference on the same inputs)"
TOLERANCE = 1e-5
COMPILE_TIMEOUT_S = 120
RUN_TIMEOUT_S = 300


def max_rel_error(got: np.ndarray, ref: np.ndarray) -> float:
    """The error measure of the module docstring; infinity when the code produced NaN or infinity."""
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    if not ref.size:
        return 0.0
    if not np.isfinite(got).all() or got.shape != ref.shape:
        return float("inf")
    scale = float(np.max(np.abs(ref)))
    diff = float(np.max(np.abs(got - ref)))
    return diff / scale if scale > 0 else diff


@dataclass
class Build:
    ok: bool
    compiler: str | None
    command: list[str]
    seconds: float
    message: str


def compile_c(source: str, work: Path, stem: str, flags: list[str] | None = None, cxx: bool = False) -> Build:
    cc = find_compiler(("g++", "clang++") if cxx else ("gcc", "cc", "clang"))
    if cc is None:
        return Build(False, None, [], 0.0, f"not run: no C compiler (gcc, cc, clang) found; {faults.compiler_hint()}")
    src = work / (stem + (".cpp" if cxx else ".c"))
    src.write_text(source)
    exe = work / stem
    cmd = [cc, *(flags if flags is not None else CG.FLAGS), "-o", str(exe), str(src), "-lm"]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Build(False, cc, cmd, COMPILE_TIMEOUT_S, f"compiler timed out after {COMPILE_TIMEOUT_S} s")
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        return Build(False, cc, cmd, dt, "compile failed: " + (p.stderr or p.stdout)[-2000:])
    return Build(True, cc, cmd, dt, "")


def run_program(exe: Path, inputs: list[np.ndarray], work: Path, rounds: int, threads: int | None,
                variants: list[str], out_size: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Write the inputs, run the driver, read back the outputs and its timing JSON."""
    for i, arr in enumerate(inputs):
        np.ascontiguousarray(arr, dtype=np.float32).tofile(work / f"in{i}.f32")
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    p = subprocess.run([str(exe), str(work), str(rounds)], capture_output=True, text=True, env=env,
                       timeout=RUN_TIMEOUT_S)
    if p.returncode != 0:
        raise RuntimeError(f"the generated program exited with {p.returncode}: {(p.stderr or p.stdout)[-1000:]}")
    timing = json.loads(p.stdout.strip().splitlines()[-1])
    outs = {v: np.fromfile(work / f"out_{v}.f32", dtype=np.float32, count=out_size) for v in variants}
    return timing, outs


@dataclass
class CheckValues:
    """What a stage's code is compared with: numpy's float64 values at `rows` (None: every output)."""

    d32: dict[str, np.ndarray]
    rows: np.ndarray | None
    ref: np.ndarray
    sample: str

    def pick(self, got: np.ndarray) -> np.ndarray:
        return got if self.rows is None else np.asarray(got).reshape(-1)[self.rows]


def check_values(t: MeritTransform, data: dict[str, np.ndarray], sample: OutputSample | None = None,
                 code_ext: dict[str, int] | None = None, seed: int = 0) -> CheckValues:
    """The reference of a stage's code: every output below FULL_MAX_WORK steps; above, the sample (the
    engine's, or one drawn here) together with the whole border tiles of the code's own tile `code_ext`,
    computed exactly in float64 on the same float32 inputs (core.merit.sample)."""
    d32 = {op.name: np.asarray(data[op.name], dtype=np.float32) for op in t.operands}
    d64 = {k: v.astype(np.float64) for k, v in d32.items()}
    if not needs_sampling(t):
        ref = np.asarray(evaluate(t, d64), dtype=np.float64).reshape(-1)
        return CheckValues(d32, None, ref, f"all {t.p_count} outputs")
    from core.merit.device import fit_cuda_tile

    smp = sample or choose_sample(t, fit_cuda_tile(t, {}).ext, seed)
    rows = smp.rows
    text = smp.describe()
    if code_ext:
        own = choose_sample(t, code_ext, seed, n_random=0)
        extra = np.setdiff1d(own.rows, rows)
        if len(extra):
            rows = np.union1d(rows, own.rows)
            text += f"; with the code's own border tiles ({'x'.join(str(v) for v in own.tile.values())}), {len(rows)} outputs"
    return CheckValues(d32, rows, evaluate_rows(t, d64, rows), text)


def stage_inputs(t: MeritTransform, data: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The stage's operands rounded to float32 and numpy's float64 result on exactly those values."""
    d32 = {op.name: np.asarray(data[op.name], dtype=np.float32) for op in t.operands}
    ref = evaluate(t, {k: v.astype(np.float64) for k, v in d32.items()})
    return d32, np.asarray(ref, dtype=np.float64)


NAIVE_MAX_WORK = 1 << 28      # steps; above, no naive loop nest (a 4096^3 GEMM's would run for minutes)
BIG_WORK = 1 << 28            # steps; above, one timing round per kernel (after its checked first call)


def check_c(stages: list[MeritTransform], data: dict[str, np.ndarray], tile: dict[str, int],
            numpy_direct: Callable[[], Any] | None, rounds: int = 5, threads: int | None = None,
            cancel: Callable[[], None] | None = None, samples: dict[str, OutputSample] | None = None,
            seed: int = 0) -> CodegenC:
    """Generate, compile, run and check the C of every stage; times summed over stages."""
    cancel = cancel or (lambda: None)
    samples = samples or {}
    programs = [CG.c_program(st, stage_tile(st, tile), naive=st.p_count * st.a_count <= NAIVE_MAX_WORK)
                for st in stages]
    big = any(st.p_count * st.a_count > BIG_WORK for st in stages)
    if big:
        rounds = min(rounds, 1)
    notes = [p.tile_note for p in programs if p.tile_note]
    out = CodegenC(
        language="C", flags=list(CG.FLAGS), error_measure=ERROR_MEASURE, tolerance=TOLERANCE,
        sources={f"{_stem(p.stage)}.c": p.source for p in programs},
        kernels=[CodegenKernel(stage=p.stage, variant=k.variant, function=k.name, note=k.note)
                 for p in programs for k in p.kernels],
        compiled=False, run=False, verified=False, max_rel_error=None, message="",
        compiler=None, compile_s=None, threads=None, timings_s={}, speedup={},
        tile_note="; ".join(notes) or None)
    skipped = [p.stage for p, st in zip(programs, stages) if st.p_count * st.a_count > NAIVE_MAX_WORK]
    tmp = Path(tempfile.mkdtemp(prefix="merit-c-"))
    meter = LoadMeter()         # the C is timed against numpy: what else ran meanwhile is kept beside
    try:
        errors: dict[str, float] = {}
        totals: dict[str, float] = {}
        compile_s = 0.0
        texts: list[str] = []
        for p, st in zip(programs, stages):
            cancel()
            stem = _stem(p.stage)
            b = compile_c(p.source, tmp, stem)
            out.compiler = b.compiler
            compile_s += b.seconds
            if not b.ok:
                out.message = b.message
                return out
            out.compiled = True
            cv = check_values(st, data, samples.get(st.name), p.tile, seed)
            texts.append(cv.sample)
            variants = [k.variant for k in p.kernels]
            cancel()
            timing, outs = run_program(tmp / stem, CG.padded_inputs(st, cv.d32), tmp, rounds, threads, variants,
                                       p.out_size)
            out.run = True
            out.threads = int(timing["threads"])
            for v in variants:
                errors[v] = max(errors.get(v, 0.0), max_rel_error(cv.pick(outs[v]), cv.ref))
                totals[v] = totals.get(v, 0.0) + float(timing["median_s"][v])
        out.compile_s = round(compile_s, 3)
        out.sample = "; ".join(texts)
        # a chain's time is the sum over its stages: only kernels every stage has (a packed kernel
        # exists for GEMM-like stages only) are timed as a whole
        common = [v for v in totals if all(v in [k.variant for k in p.kernels] for p in programs)]
        totals = {v: totals[v] for v in common}
        out.timings_s = {v: totals[v] for v in totals}
        fast = [v for v in totals if v != "naive"]
        best = min(fast, key=lambda v: totals[v]) if fast else "naive"
        out.best = best
        worst = max(errors.values()) if errors else None
        out.max_rel_error = worst if worst is not None and np.isfinite(worst) else None
        out.verified = bool(errors) and all(e < TOLERANCE for e in errors.values())
        out.errors = {v: e for v, e in errors.items() if np.isfinite(e)}
        if numpy_direct is not None:
            cancel()
            out.timings_s["numpy"] = time_numpy(numpy_direct, rounds)
        out.machine_load = meter.stop().to_json()
        base = out.timings_s
        out.time_s = base.get(best)
        if best in base:
            out.speedup = {"vs_naive": base["naive"] / base[best] if "naive" in base and base[best] > 0 else None}
            if "numpy" in base:
                out.speedup["vs_numpy"] = base["numpy"] / base[best] if base[best] > 0 else None
        msgs = []
        if skipped:
            msgs.append(f"no naive loop nest for {', '.join(skipped)} (over {NAIVE_MAX_WORK} steps)")
        if not out.verified:
            bad = ", ".join(f"{v} {e:.3g}" for v, e in errors.items() if not e < TOLERANCE)
            msgs.append(f"output differs from numpy beyond {TOLERANCE:g}: {bad}")
        out.message = "; ".join(msgs)
    except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as exc:
        out.message = f"not verified: {exc}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def time_numpy(fn: Callable[[], Any], rounds: int) -> float:
    """Median seconds of one call, each sample at least 2 ms of repeated calls."""
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    reps = 1 if dt > 2e-3 else int(2e-3 / max(dt, 1e-7)) + 1
    samples = []
    for _ in range(max(1, rounds)):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        samples.append((time.perf_counter() - t0) / reps)
    return float(np.median(samples))


def stage_tile(t: MeritTransform, tile: dict[str, int]) -> dict[str, int]:
    """The part of a workload's tile that names this stage's indices."""
    names = dict(t.indices)
    return {k: v for k, v in tile.items() if k in names}


def _stem(name: str) -> str:
    return "merit_" + CG._ident(name)


# ---------------------------------------------------------------- CUDA
EMULATION_MAX_WORK = 1 << 27          # p x a steps; larger transforms are not emulated (minutes on a CPU)


def gpu_present() -> bool:
    """An NVIDIA GPU this process could use: nvidia-smi lists one, or a device node exists."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            p = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
            return p.returncode == 0 and "GPU" in p.stdout
        except (subprocess.TimeoutExpired, OSError):
            return False
    return Path("/dev/nvidia0").exists()


def check_cuda(stages: list[MeritTransform], data: dict[str, np.ndarray], tile: dict[str, int],
               bank_report: Banks | None, bank_operand: str | None, rounds: int = 5,
               emulate: bool = True, nvcc_compile: bool = True,
               cancel: Callable[[], None] | None = None, progs: list[Any] | None = None,
               samples: dict[str, OutputSample] | None = None, seed: int = 0) -> CodegenCuda:
    """Generate the CUDA of every stage; compile/run/check it where nvcc and a GPU are present, and
    run the CPU emulation of its blocks (`emulated_check`) in any case where g++ is present."""
    from core.merit import codegen_cuda as CU

    cancel = cancel or (lambda: None)
    if progs is None:
        progs = [CU.cuda_program(st, stage_tile(st, tile), bank_report, bank_operand) for st in stages]
    nvcc = shutil.which("nvcc")
    gpu = gpu_present()
    out = CodegenCuda(
        language="CUDA", error_measure=ERROR_MEASURE, tolerance=TOLERANCE,
        sources={f"{_stem(p.stage)}.cu": p.source for p in progs},
        kernels=[CudaKernel(stage=p.stage, function=p.kernel_name, blocks=p.blocks, threads=p.threads,
                            outputs_per_thread=p.outputs_per_thread, smem_bytes=p.smem_bytes, layout=p.layout,
                            tile=dict(p.ext), tile_note=p.tile_note, device=p.device, smem_limit=p.smem_limit,
                            dynamic_smem=p.dynamic, launch_bounds=p.threads, regs_estimate=p.regs_estimate)
                 for p in progs],
        nvcc=nvcc, gpu=gpu, compiled=False, run=False, verified=False, max_rel_error=None,
        timings_s={}, message="", emulated_check=None)
    samples = samples or {}
    too_big = [p for p in progs if p.smem_bytes > p.smem_limit]       # the fit keeps this empty
    notes = [f"{p.kernel_name}: {p.tile_note}" for p in progs if "adjusted" in p.tile_note]
    if too_big:
        notes.append(f"{too_big[0].kernel_name} needs {too_big[0].smem_bytes} bytes of shared memory, over the "
                     f"{too_big[0].smem_limit} a block may have on {too_big[0].device}: not compiled")
    tmp = Path(tempfile.mkdtemp(prefix="merit-cuda-"))
    try:
        if nvcc is None or not gpu:
            notes.insert(0, "not run: no " + ("nvcc/GPU" if nvcc is None and not gpu else
                                              "nvcc" if nvcc is None else "GPU"))
        if nvcc is not None and nvcc_compile and not too_big:
            errors, total = [], 0.0
            texts: list[str] = []
            for p, st in zip(progs, stages):
                cancel()
                src = tmp / f"{_stem(p.stage)}.cu"
                src.write_text(p.source)
                cmd = [nvcc, "-O3", "-o", str(tmp / _stem(p.stage)), str(src)]
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    notes.append("nvcc timed out")
                    break
                if r.returncode != 0:
                    notes.append("nvcc failed: " + (r.stderr or r.stdout)[-1500:])
                    break
                out.compiled = True
                if gpu:
                    cv = check_values(st, data, samples.get(st.name), p.ext, seed)
                    texts.append(cv.sample)
                    for i, arr in enumerate(CG.padded_inputs(st, cv.d32)):
                        arr.tofile(tmp / f"in{i}.f32")
                    r = subprocess.run([str(tmp / _stem(p.stage)), str(tmp), str(rounds)], capture_output=True,
                                       text=True, timeout=RUN_TIMEOUT_S)
                    if r.returncode != 0:
                        notes.append(f"the CUDA program exited with {r.returncode}: {(r.stderr or r.stdout)[-800:]}")
                        break
                    out.run = True
                    total += float(json.loads(r.stdout.strip().splitlines()[-1])["median_s"]["cuda"])
                    got = np.fromfile(tmp / "out_cuda.f32", dtype=np.float32, count=p.out_size)
                    errors.append(max_rel_error(cv.pick(got), cv.ref))
            if out.run and len(errors) == len(progs):
                out.verified = max(errors) < TOLERANCE
                out.max_rel_error = max(errors) if np.isfinite(max(errors)) else None
                out.timings_s = {"cuda": total}
                out.sample = "; ".join(texts)
            elif out.compiled and not gpu:
                notes.append("nvcc compiled it")
        if emulate:
            cancel()
            out.emulated_check = _emulate(progs, stages, data, tmp, cancel, samples, seed)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        notes.append(f"not checked: {type(exc).__name__}: {exc}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out.message = "; ".join(notes)
    return out


EMULATION_MAX_BLOCKS = 8              # blocks of a large stage emulated (its border tiles first)


def emulation_blocks(t: MeritTransform, prog: Any, sample: OutputSample | None) -> tuple[list[int], np.ndarray]:
    """The blocks of a large stage the emulation runs, and the outputs they write: the kernel's border
    tiles (first, last, last along each parallel index), then blocks of sampled outputs, at most
    EMULATION_MAX_BLOCKS and EMULATION_MAX_WORK steps."""
    par = [n for n, _ in t.parallel]
    sizes = dict(t.parallel)
    ext = {n: prog.ext[n] for n in par}
    n_tiles = {n: -(-sizes[n] // ext[n]) for n in par}

    def bid_of(start: dict[str, int]) -> int:
        b = 0
        for n in par:
            b = b * n_tiles[n] + start[n] // ext[n]
        return b

    def start_of(b: int) -> dict[str, int]:
        start = {}
        for n in reversed(par):
            start[n] = (b % n_tiles[n]) * ext[n]
            b //= n_tiles[n]
        return start

    cands = [bid_of(s) for s in border_tiles(t, ext)]
    if sample is not None and par:
        idx = np.unravel_index(sample.rows[:: max(1, len(sample.rows) // 32)], t.p_sizes)
        cands += [bid_of({n: int(idx[j][r]) for j, n in enumerate(par)}) for r in range(len(idx[0]))]
    per_block = int(np.prod(list(ext.values()) or [1])) * t.a_count
    cap = max(1, min(EMULATION_MAX_BLOCKS, EMULATION_MAX_WORK // max(per_block, 1)))
    blocks: list[int] = []
    for b in cands:
        if b not in blocks and len(blocks) < cap:
            blocks.append(b)
    rows = np.unique(np.concatenate([tile_rows(t, start_of(b), ext, limit=1 << 62) for b in blocks]))
    return blocks, rows


def _emulate(progs: list[Any], stages: list[MeritTransform], data: dict[str, np.ndarray], tmp: Path,
             cancel: Callable[[], None], samples: dict[str, OutputSample] | None = None,
             seed: int = 0) -> EmulatedCheck:
    from core.merit import codegen_cuda as CU

    res = EmulatedCheck(what="the CUDA kernels compiled as C++ (g++) with a shim that runs each block as an "
                             "OpenMP team (threadIdx = thread, __syncthreads = barrier, __shared__ = "
                             "static), blocks one after another; checks indexing, layouts and barriers, "
                             "not GPU speed",
                        ran=False, ok=False, max_rel_error=None, seconds=None, message="")
    samples = samples or {}
    cxx = find_compiler(("g++", "clang++"))
    if cxx is None:
        res.message = "not emulated: no C++ compiler (g++, clang++)"
        return res
    errors = []
    partial = []
    t0 = time.perf_counter()
    for p, st in zip(progs, stages):
        cancel()
        stem = _stem(p.stage) + "_emulated"
        b = compile_c(CU.emulation_source(p, len(st.operands)), tmp, stem, ["-O2", "-fopenmp", "-x", "c++"],
                      cxx=True)
        if not b.ok:
            res.message = b.message
            return res
        d32 = {op.name: np.asarray(data[op.name], dtype=np.float32) for op in st.operands}
        blist = tmp / "blocks.i64"
        if st.p_count * st.a_count <= EMULATION_MAX_WORK:
            blist.unlink(missing_ok=True)
            rows = None
            ref = np.asarray(evaluate(st, {k: v.astype(np.float64) for k, v in d32.items()})).reshape(-1)
        else:
            # a large stage: only some blocks, each checked whole (a sample of what the GPU would run)
            blocks, rows = emulation_blocks(st, p, samples.get(st.name))
            np.asarray(blocks, dtype=np.int64).tofile(blist)
            ref = evaluate_rows(st, {k: v.astype(np.float64) for k, v in d32.items()}, rows)
            partial.append(f"{st.name}: {len(blocks)} of {p.blocks} blocks ({len(rows)} outputs: the border "
                           f"tiles and blocks of sampled outputs)")
        for i, arr in enumerate(CG.padded_inputs(st, d32)):
            arr.tofile(tmp / f"in{i}.f32")
        env = dict(os.environ, OMP_WAIT_POLICY="passive")
        try:
            r = subprocess.run([str(tmp / stem), str(tmp)], capture_output=True, text=True, env=env,
                               timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            res.message = f"the emulation timed out after {RUN_TIMEOUT_S} s"
            return res
        if r.returncode != 0:
            res.message = f"the emulation exited with {r.returncode}: {(r.stderr or r.stdout)[-800:]}"
            return res
        got = np.fromfile(tmp / "out_cuda_emulated.f32", dtype=np.float32, count=p.out_size)
        errors.append(max_rel_error(got if rows is None else got[rows], ref))
    res.ran = True
    res.max_rel_error = max(errors) if np.isfinite(max(errors)) else None
    res.ok = max(errors) < TOLERANCE
    res.seconds = round(time.perf_counter() - t0, 3)
    msgs = [f"ran {'; '.join(partial)}"] if partial else []
    if not res.ok:
        msgs.append(f"emulated output differs from numpy: {max(errors):.3g}")
    res.message = "; ".join(msgs)
    return res


# ---------------------------------------------------------------- the engine's step and --emit
def generate(stages: list[MeritTransform], data: dict[str, np.ndarray], tile: dict[str, int],
             reference: Callable[[dict[str, np.ndarray]], Any] | None, bank_report: Banks | None,
             bank_operand: str | None, emit_dir: str = "", rounds: int = 3,
             cancel: Callable[[], None] | None = None, samples: dict[str, OutputSample] | None = None,
             seed: int = 0) -> Codegen:
    """C and CUDA from the workload's transforms, checked (a large stage on `samples`, the engine's, or
    on one drawn with `seed`); the sources written to `emit_dir` if given."""
    t0 = time.perf_counter()
    numpy_direct = None
    if reference is not None:
        d32 = {k: (np.asarray(v, dtype=np.float32) if isinstance(v, np.ndarray) else v) for k, v in data.items()}
        numpy_direct = lambda: reference(d32)     # noqa: E731 (the direct numpy computation, on float32 data)
    from core.merit import codegen_cuda as CU

    c = check_c(stages, data, tile, numpy_direct, rounds=rounds, cancel=cancel, samples=samples, seed=seed)
    progs = [CU.cuda_program(st, stage_tile(st, tile), bank_report, bank_operand) for st in stages]
    # nvcc takes seconds: it compiles where it can run the result, or where the files are asked for
    cuda = check_cuda(stages, data, tile, bank_report, bank_operand, rounds=rounds, cancel=cancel, progs=progs,
                      nvcc_compile=bool(emit_dir) or gpu_present(), samples=samples, seed=seed)
    emitted = emit(Path(emit_dir), stages, data, c, cuda, progs, samples, seed) if emit_dir else []
    return Codegen(c=c, cuda=cuda, emitted=emitted, seconds=round(time.perf_counter() - t0, 3))


def emit(folder: Path, stages: list[MeritTransform], data: dict[str, np.ndarray], c: CodegenC,
         cuda: CodegenCuda, progs: list[Any], samples: dict[str, OutputSample] | None = None,
         seed: int = 0) -> list[str]:
    """The sources, a Makefile, the CPU emulation of the CUDA, and the check's inputs with numpy's result."""
    from core.errors import InputError
    from core.files import output_folder
    from core.merit import codegen_cuda as CU

    files: dict[str, str] = dict(c.sources)
    files.update(cuda.sources)
    stems = [_stem(st.name) for st in stages]
    for st, stem, prog in zip(stages, stems, progs):
        # the emulation includes the very .cu file that was checked
        files[f"{stem}_emulated.cpp"] = CU.emulation_source(prog, len(st.operands), include=f"{stem}.cu")
    make = ["# Generated by Dataflow Explorer (merit engine). `make` builds the C programs, `make run` times",
            "# them on random inputs, `make check` runs them on the engine's inputs (data/<stem>/in<i>.f32),",
            "# `make cuda` needs nvcc, `make emulate` runs the CUDA kernels on the CPU (g++ -fopenmp).",
            "CC ?= gcc", f"CFLAGS ?= {' '.join(CG.FLAGS)}", "NVCC ?= nvcc", "CXX ?= g++", "",
            f"all: {' '.join(stems)}", ""]
    for stem in stems:
        make += [f"{stem}: {stem}.c", "\t$(CC) $(CFLAGS) -o $@ $< -lm", "",
                 f"{stem}_cuda: {stem}.cu", "\t$(NVCC) -O3 -o $@ $<", "",
                 f"{stem}_emulated: {stem}_emulated.cpp {stem}.cu", "\t$(CXX) -O2 -fopenmp -o $@ $<", ""]
    make += ["run: all"] + [f"\t./{s}" for s in stems] + [""]
    make += ["check: all"] + [f"\t./{s} data/{s} 5" for s in stems] + [""]
    make += [f"cuda: {' '.join(s + '_cuda' for s in stems)}"] + [f"\t./{s}_cuda data/{s} 5" for s in stems] + [""]
    make += [f"emulate: {' '.join(s + '_emulated' for s in stems)}"] + [f"\t./{s}_emulated data/{s}" for s in stems]
    make += ["", ".PHONY: all run check cuda emulate", ""]
    files["Makefile"] = "\n".join(make)
    arrays: dict[str, np.ndarray] = {}
    for st, stem in zip(stages, stems):
        cv = check_values(st, data, (samples or {}).get(st.name), seed=seed)
        for i, arr in enumerate(CG.padded_inputs(st, cv.d32)):
            arrays[f"data/{stem}/in{i}.f32"] = arr
        if cv.rows is None:
            arrays[f"data/{stem}/numpy_reference.f32"] = cv.ref.astype(np.float32)
        else:                   # a large stage: numpy's values at the sampled outputs and their numbers
            arrays[f"data/{stem}/numpy_sample_reference.f32"] = cv.ref.astype(np.float32)
            arrays[f"data/{stem}/numpy_sample_index.i64"] = cv.rows.astype(np.int64)
    # every name checked before the first file is written: a folder in the way fails the run whole
    output_folder(folder, [*files, *arrays], "emit")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {folder}: {exc.strerror or exc}", "emit") from None
    written = []
    for name, text in files.items():
        (folder / name).write_text(text)
        written.append(str((folder / name).resolve()))
    for name, arr in arrays.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        arr.tofile(folder / name)
        written.append(str((folder / name).resolve()))
    return written
