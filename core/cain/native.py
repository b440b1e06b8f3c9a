"""The published Cain tool's search as a compiled portfolio member (core/cain/csrc/pubsearch.c).

The C source is built with the system compiler into build/cain/ (by `make`, or here on first use),
loaded with ctypes, and driven in slices like `search.Searcher`: `NativeSearcher.run` returns the
engine's own `Plan`s (steps and Goal-Bags), so allocation and verification are the engine's. What
the C search reproduces, and where it departs from the tool, is in its header and docs/cain.md.

    python -m core.cain.native --build      # build (what `make` runs); prints the library's path
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.ccompiler import find_compiler
from core.cain import goals as gl
from core.cain.goals import Bag, Goal
from core.cain.pairgen import MOVE1, MOVE2, SAME_OPERANDS_OK, Step
from core.cain.search import Plan
from core.scamp5.isa import InstructionSet

SOURCE = Path(__file__).with_name("csrc") / "pubsearch.c"
BUILD_DIR = Path(__file__).resolve().parents[2] / "build" / "cain"
CFLAGS = ("-O2", "-std=gnu11", "-shared", "-fPIC")
COMPILE_TIMEOUT_S = 120

THRESHOLD = 10          # the recommended config's Threshold generator: exhaustive up to 10 Atoms
VIRTUAL_WORKERS = 4     # its worker threads, emulated in turn (a run is repeatable)
INITIAL_MAX_DEPTH = 200
MAX_REGISTERS = 12      # MAXB in the C source: Goals a bag holds

# op codes of pubsearch.c, as the engine's macro names
_OPS = ("mov", "movx", "mov2x", "add", "add", "addx", "add2x", "sub", "subx", "sub2x", "neg", "div", "div", "div")
_OP_DIV_CLOBBER = 11    # OP_DIVC: its input register is overwritten, so its lower is always a copy of its own

_FLAG_OF = {"mov/2": 1, "movx/3": 2, "mov2x/4": 4, "add/3": 8, "add/4": 16, "addx/4": 32, "add2x/5": 64,
            "sub/3": 128, "subx/4": 256, "sub2x/5": 512, "neg/2": 1024, "div/3": 2048, "diva/3": 2048,
            "div/4": 4096, "divq/2": 8192}
F_POW2 = 16384


class NativeUnavailable(RuntimeError):
    """The C search could not be built or loaded here (no compiler, or it failed)."""


def isa_flags(isa: InstructionSet) -> int:
    """The published generator's switches for an instruction set (it splits 7 = 8 - 1 whenever
    subtraction is there, in its "all" and "basic" sets alike)."""
    flags = 0
    for key in isa.ops:
        flags |= _FLAG_OF.get(key, 0)
    if "sub/3" in isa.ops:
        flags |= F_POW2
    return flags


def library_path() -> Path:
    """Where the library for this source, these flags and this machine lives (a new name when any
    of them changes, so a stale build is never loaded)."""
    try:
        source = SOURCE.read_bytes()
    except OSError as exc:
        raise NativeUnavailable(f"the published search's source {SOURCE} cannot be read: {exc}") from exc
    key = hashlib.sha256(source + " ".join(CFLAGS).encode() + platform.machine().encode())
    return BUILD_DIR / f"libpubsearch-{key.hexdigest()[:16]}.so"


def build(quiet: bool = True) -> Path:
    """Compile the C search unless this version is built already; the file appears atomically."""
    out = library_path()
    if out.exists():
        return out
    cc = find_compiler()
    if cc is None:
        raise NativeUnavailable("no C compiler (gcc, cc, clang) found to build the published-search worker")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=out.parent)
    os.close(fd)
    try:
        proc = subprocess.run([cc, *CFLAGS, "-o", tmp, str(SOURCE), "-lm"], capture_output=True, text=True,
                              timeout=COMPILE_TIMEOUT_S)
        if proc.returncode != 0:
            raise NativeUnavailable(f"building {SOURCE.name} failed: {proc.stderr.strip()[:2000]}")
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    if not quiet:
        print(out)
    return out


_LIB: ctypes.CDLL | None = None
_FAILED: NativeUnavailable | None = None     # a build or load that failed once is not tried again


def load() -> ctypes.CDLL:
    global _LIB, _FAILED
    if _LIB is not None:
        return _LIB
    if _FAILED is not None:
        raise _FAILED
    try:
        lib = ctypes.CDLL(str(build()))
    except NativeUnavailable as exc:
        _FAILED = exc
        raise
    except OSError as exc:
        _FAILED = NativeUnavailable(f"loading the published-search library failed: {exc}")
        raise _FAILED from exc
    c_int, c_long, c_double, vp = ctypes.c_int, ctypes.c_long, ctypes.c_double, ctypes.c_void_p
    ip = ctypes.POINTER(c_int)
    lib.cp_new.restype = vp
    lib.cp_new.argtypes = [c_int, ip, ip, c_int, c_int, c_int, c_int, c_int, c_int, c_long]
    lib.cp_run.restype = c_int
    lib.cp_run.argtypes = [vp, c_long, c_double]
    lib.cp_nodes.restype = c_long
    lib.cp_nodes.argtypes = [vp]
    lib.cp_plan_count.restype = c_int
    lib.cp_plan_count.argtypes = [vp]
    lib.cp_plan_words.restype = c_int
    lib.cp_plan_words.argtypes = [vp, c_int]
    lib.cp_plan.restype = c_int
    lib.cp_plan.argtypes = [vp, c_int, ip, c_int, ctypes.POINTER(c_double), ctypes.POINTER(c_long)]
    lib.cp_goal.restype = c_int
    lib.cp_goal.argtypes = [vp, c_int, ip, c_int]
    lib.cp_trim.restype = None
    lib.cp_trim.argtypes = [vp]
    lib.cp_free.restype = None
    lib.cp_free.argtypes = [vp]
    _LIB = lib
    return lib


def available() -> bool:
    try:
        load()
        return True
    except NativeUnavailable:
        return False


class NativeSearcher:
    """The published search on one problem, with `search.Searcher`'s slice interface."""

    def __init__(self, final: list[Goal], d: int, registers: int, isa: InstructionSet, best: int = 1 << 30,
                 workers: int = VIRTUAL_WORKERS, threshold: int = THRESHOLD, mem_limit_mb: float = 0.0) -> None:
        if any(z for g in final for _x, _y, z, _c in gl.atoms(g)):
            raise ValueError("the published search takes single-channel kernels")
        if registers > MAX_REGISTERS:
            raise ValueError(f"the published search takes at most {MAX_REGISTERS} registers")
        self._lib = load()
        self.final = list(final)
        self.final_bag: Bag = gl.make_bag(final)
        self.initial = gl.make_goal({(0, 0, 0): 2 ** d})
        lens = [len(g) for g in final]
        flat = [v for g in final for x, y, _z, c in gl.atoms(g) for v in (x, y, c)]
        arr_l = (ctypes.c_int * len(lens))(*lens)
        arr_f = (ctypes.c_int * max(1, len(flat)))(*flat)
        max_depth = min(INITIAL_MAX_DEPTH, best - 1)
        h = self._lib.cp_new(len(final), arr_l, arr_f, d, registers, isa_flags(isa), threshold, workers,
                             max_depth, int(mem_limit_mb * 2 ** 20))
        if not h:
            raise MemoryError("the published search could not start")
        self._h: int | None = h
        self._goals: dict[int, Goal] = {}
        self._taken = 0
        self.exhausted = False
        self.dropped = 0        # plans the C search reported that did not read back (a defect; tests check 0)

    @property
    def nodes(self) -> int:
        return int(self._lib.cp_nodes(self._h)) if self._h else 0

    def run(self, max_nodes: int, max_seconds: float = 0.1) -> list[Plan]:
        """Expand up to `max_nodes` Goal-Bags (and about `max_seconds`); return the plans found."""
        if self._h is None or self.exhausted:
            return []
        rc = self._lib.cp_run(self._h, max_nodes, time.monotonic() + max_seconds)
        if rc < 0:
            raise MemoryError("the published search ran out of memory")
        self.exhausted = rc == 1
        return self._new_plans()

    def trim(self) -> None:
        if self._h is not None:
            self._lib.cp_trim(self._h)

    def close(self) -> None:
        if self._h is not None:
            self._lib.cp_free(self._h)
            self._h = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ plans
    def _goal(self, gid: int) -> Goal:
        g = self._goals.get(gid)
        if g is None:
            buf = (ctypes.c_int * 3 * 256)()
            n = self._lib.cp_goal(self._h, gid, ctypes.cast(buf, ctypes.POINTER(ctypes.c_int)), 3 * 256)
            vals = list(ctypes.cast(buf, ctypes.POINTER(ctypes.c_int))[:3 * n])
            g = self._goals[gid] = gl.make_goal({(vals[i], vals[i + 1], 0): vals[i + 2] for i in range(0, 3 * n, 3)})
        return g

    def _new_plans(self) -> list[Plan]:
        out = []
        count = self._lib.cp_plan_count(self._h)
        while self._taken < count:
            i = self._taken
            self._taken += 1
            words = self._lib.cp_plan_words(self._h, i)
            buf = (ctypes.c_int * max(1, words))()
            found_at = ctypes.c_double()
            nodes = ctypes.c_long()
            self._lib.cp_plan(self._h, i, buf, words, ctypes.byref(found_at), ctypes.byref(nodes))
            plan = self.plan_from_words(list(buf[:words]), int(nodes.value), float(found_at.value))
            if plan is None:
                self.dropped += 1
            else:
                out.append(plan)
        return out

    def plan_from_words(self, words: list[int], nodes: int, found_at: float) -> Plan | None:
        """The engine's Plan (forward steps, the Goal-Bag before and after each) from the C search's
        reverse steps; None when they do not lead from the Final-Goals to the input (a defect the
        engine would also catch when verifying)."""
        rev: list[Step] = []
        clobbers: list[bool] = []
        k = 0
        while k < len(words):
            op, tx, ty, upper_id, nlow = words[k:k + 5]
            lows = tuple(self._goal(g) for g in words[k + 5:k + 5 + nlow])
            k += 5 + nlow
            name = _OPS[op]
            if name in ("movx", "addx", "subx"):
                dirs = MOVE1.get((tx, ty))
            elif name in ("mov2x", "add2x", "sub2x"):
                dirs = MOVE2.get((tx, ty))
            else:
                dirs = ()
            if dirs is None:
                return None
            rev.append((name, self._goal(upper_id), lows, dirs))
            clobbers.append(op == _OP_DIV_CLOBBER)
        # the Goal-Bags as the C search made them: a lower equal to a Goal that stays is shared, but
        # a halving that overwrites its input takes a copy of its own (the tool's clobbersInput)
        bags = [self.final_bag]
        bag = self.final_bag
        for (name, upper, lows, _dirs), clobber in zip(rev, clobbers):
            if upper not in bag:
                return None
            rest = gl.bag_remove_one(bag, upper)
            same = name in SAME_OPERANDS_OK and len(lows) == 2 and lows[0] == lows[1]
            bag = gl.make_bag(rest + lows) if clobber else gl.bag_union(rest, lows[:1] if same else lows)
            bags.append(bag)
        if bag != (self.initial,):
            return None
        return Plan(list(reversed(rev)), list(reversed(bags)), nodes, found_at, searcher="published")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args != ["--build"]:
        print("usage: python -m core.cain.native --build", file=sys.stderr)
        return 2
    try:
        build(quiet=False)
    except NativeUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
