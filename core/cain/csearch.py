"""The compiled Goal-Bag search (core/cain/csrc/bagsearch.c) and the strategies of its portfolio.

The C source is built with the system compiler into build/cain/ (by `make`, or here on first use),
loaded with ctypes, and driven in slices: `CompiledSearcher.run` returns `Plan`s (steps and
Goal-Bags), so register allocation and verification stay in Python (codegen.py, verify.py).

A portfolio member is a `Strategy`: a traversal (the paper's CGDS, an anytime beam search that
restarts wider, weighted best-first, DFS, or CGDS in random order for Fig. 3) with the pair and cost
options it searches with. Members differ by strategy, not by seed; each is deterministic for a node
budget.

    python -m core.cain.csearch --build      # build (what `make` runs); prints the library's path
"""

from __future__ import annotations

import ctypes
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from core.cain import goals as gl
from core.cain.goals import Bag, Goal
from core.cain.steps import Plan, Step
from core.ccompiler import CompiledLibrary
from core.paths import BUILD
from core.scamp5.isa import InstructionSet

SOURCE = Path(__file__).with_name("csrc") / "bagsearch.c"
BUILD_DIR = BUILD / "cain"
CFLAGS = ("-O2", "-std=gnu11", "-shared", "-fPIC")
COMPILE_TIMEOUT_S = 120
MAX_REGISTERS = 26            # MAXR in the C source
MAX_RADIUS = 13               # positions -16..15, and a two-step shift of a Lower must fit

TRAVERSAL_CODES = {"cgds": 0, "dfs": 1, "best-first": 2, "random": 3, "beam": 4}
_OPS = ("mov", "movx", "mov2x", "add", "addx", "add2x", "sub", "subx", "sub2x", "neg", "div")
_DIRS = ("north", "east", "south", "west")
_FLAG_OF = {"mov/2": 1, "movx/3": 2, "mov2x/4": 4, "add/3": 8, "add/4": 16, "addx/4": 32, "add2x/5": 64,
            "sub/3": 128, "subx/4": 256, "sub2x/5": 512, "neg/2": 1024, "divq/2": 2048, "div/3": 4096,
            "div/4": 8192, "diva/3": 16384}
F_POW2 = 32768


class CompiledUnavailable(RuntimeError):
    """The compiled search could not be built or loaded here (no C compiler, or it failed)."""


@dataclass(frozen=True)
class Strategy:
    """One portfolio member: how it traverses and what it tries at each node."""

    name: str
    traversal: str = "cgds"
    scaled: bool = True          # a Goal's Atoms count divided by their common power of two in the cost
    focus: bool = True           # split only the largest Goal of a bag (moves, copies and sharing for all)
    exhaustive: int = 6          # every split of every Goal once no Goal has more Atoms
    triples: int = 0             # below that, G = H + A + B for H in the bag (when G - H has <= this many splits)
    scaled_share: bool = False   # a scaled copy 2^k H of a bag Goal inside G
    three_copies: bool = True    # G = S + S.t + S.2t (+ R) in one 3-operand add
    jitter: float = 0.0          # relative noise on the cost, drawn from the bag and the seed
    chunk: int = 12              # children a waiting parent keeps (the rest are made again when needed)
    beam_width: int = 1          # the beam's first width (doubled every round)


# The portfolio, in the order workers take them (worker i runs PORTFOLIO[i % len]; from the second
# round on with seeded noise on the cost).
PORTFOLIO: tuple[Strategy, ...] = (
    Strategy("cgds"),
    Strategy("beam", traversal="beam", beam_width=4),
    Strategy("cgds-wide", focus=False, exhaustive=8, triples=2000, scaled_share=True),
    Strategy("best-first", traversal="best-first"),
)


def strategy_for(worker: int, workers: int, traversal: str, seed: int) -> Strategy:
    """The member worker `worker` of `workers` runs: the portfolio, or one traversal for every worker
    (then told apart by noise drawn from the seed)."""
    if traversal == "portfolio":
        base = PORTFOLIO[worker % len(PORTFOLIO)]
        rounds = worker // len(PORTFOLIO)
        return replace(base, jitter=0.2) if rounds else base
    base = next((s for s in PORTFOLIO if s.traversal == traversal), Strategy(traversal, traversal=traversal))
    return replace(base, name=traversal, jitter=0.2 if worker else 0.0)


def _declare(lib: ctypes.CDLL) -> None:
    i32p = ctypes.POINTER(ctypes.c_int32)
    vp, ll = ctypes.c_void_p, ctypes.c_longlong
    lib.bs_new.argtypes, lib.bs_new.restype = [i32p, i32p], vp
    lib.bs_run.argtypes, lib.bs_run.restype = [vp, ll, ctypes.c_double], ctypes.c_int
    for name, res in (("bs_nodes", ll), ("bs_exhausted", ctypes.c_int), ("bs_best", ctypes.c_int),
                      ("bs_memory", ll), ("bs_trims", ctypes.c_int), ("bs_plan_count", ctypes.c_int),
                      ("bs_plans_size", ll)):
        getattr(lib, name).argtypes, getattr(lib, name).restype = [vp], res
    lib.bs_plan_nodes.argtypes, lib.bs_plan_nodes.restype = [vp, ctypes.c_int], ll
    lib.bs_set_best.argtypes, lib.bs_set_best.restype = [vp, ctypes.c_int], None
    lib.bs_take_plans.argtypes, lib.bs_take_plans.restype = [vp, i32p], None
    lib.bs_trim.argtypes, lib.bs_trim.restype = [vp], None
    lib.bs_root_children.argtypes, lib.bs_root_children.restype = [vp], ctypes.c_int
    lib.bs_root_bound.argtypes, lib.bs_root_bound.restype = [vp], ctypes.c_int
    lib.bs_free.argtypes, lib.bs_free.restype = [vp], None


LIBRARY = CompiledLibrary(SOURCE, BUILD_DIR, "bagsearch", CFLAGS, _declare, CompiledUnavailable, libs=("-lm",),
                          timeout_s=COMPILE_TIMEOUT_S)


def library_path() -> Path:
    """Where the library for this source, these flags and this machine lives."""
    return LIBRARY.path()


def build(quiet: bool = True) -> Path:
    """Compile the search unless this version is built already."""
    out = LIBRARY.build()
    if not quiet:
        print(out)
    return out


def load() -> ctypes.CDLL:
    return LIBRARY.load()


def available() -> bool:
    try:
        load()
        return True
    except CompiledUnavailable:
        return False


def isa_flags(isa: InstructionSet) -> int:
    flags = 0
    for key in isa.ops:
        flags |= _FLAG_OF.get(key, 0)
    if isa.pow2_split:
        flags |= F_POW2
    return flags


def _goal_ints(g: Goal) -> list[int]:
    out = [len(g)]
    for x, y, z, c in gl.atoms(g):
        out += [x, y, z, c]
    return out


class CompiledSearcher:
    """One portfolio member's search on one problem, run in slices (`run`)."""

    def __init__(self, final_goals: list[Goal], d: int, channels: int, registers: int, isa: InstructionSet,
                 strategy: Strategy, *, max_coef: int, max_radius: int, best: int = 1 << 30, seed: int = 0,
                 memory_mb: float = 300.0) -> None:
        if registers > MAX_REGISTERS:
            raise ValueError(f"the code search takes at most {MAX_REGISTERS} registers")
        if max_radius > MAX_RADIUS:
            raise ValueError(f"the code search takes kernels up to radius {MAX_RADIUS - 2}")
        self.lib = load()
        self.strategy = strategy
        cfg = [d, registers, isa_flags(isa), max_coef, max_radius, TRAVERSAL_CODES[strategy.traversal],
               int(strategy.scaled), int(strategy.focus), strategy.exhaustive, strategy.chunk,
               int(round(strategy.jitter * 1000)), seed & 0x7FFFFFFF, max(16, int(memory_mb)),
               min(best, 1 << 30), strategy.triples, int(strategy.scaled_share), int(strategy.three_copies),
               strategy.beam_width]
        goals = [len(final_goals)]
        for g in final_goals:
            goals += _goal_ints(g)
        goals.append(channels)
        self._cfg = (ctypes.c_int32 * len(cfg))(*cfg)
        self._goals = (ctypes.c_int32 * len(goals))(*goals)
        self._h = self.lib.bs_new(self._cfg, self._goals)
        if not self._h:
            raise CompiledUnavailable("the code search could not start (out of memory, or a problem it does not take)")

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        h, self._h = getattr(self, "_h", None), None
        if h:
            self.lib.bs_free(h)

    @property
    def nodes(self) -> int:
        return int(self.lib.bs_nodes(self._h))

    @property
    def exhausted(self) -> bool:
        return bool(self.lib.bs_exhausted(self._h))

    @property
    def best(self) -> int:
        return int(self.lib.bs_best(self._h))

    @property
    def memory_bytes(self) -> int:
        return int(self.lib.bs_memory(self._h))

    @property
    def trims(self) -> int:
        return int(self.lib.bs_trims(self._h))

    def set_best(self, length: int) -> None:
        """A length found elsewhere: prune with it from now on."""
        self.lib.bs_set_best(self._h, length)

    def trim(self) -> None:
        self.lib.bs_trim(self._h)

    def run(self, max_nodes: int, max_seconds: float = 0.1) -> list[Plan]:
        """Explore up to `max_nodes` more nodes (and about `max_seconds`); return the plans found."""
        n = self.lib.bs_run(self._h, max_nodes, time.monotonic() + max_seconds)
        if not n:
            return []
        found_at = time.monotonic()
        counts = [int(self.lib.bs_plan_nodes(self._h, i)) for i in range(n)]
        size = int(self.lib.bs_plans_size(self._h))
        buf = (ctypes.c_int32 * size)()
        self.lib.bs_take_plans(self._h, buf)
        return [replace(p, nodes_at_find=c, found_at=found_at, strategy=self.strategy.name)
                for p, c in zip(parse_plans(list(buf), n), counts)]


    def root_bound(self) -> int:
        """The lower bound the search prunes with, for the Final-Goals (core/cain/lower_bound.py's)."""
        return int(self.lib.bs_root_bound(self._h))

    def root_children(self) -> list[tuple[Bag, Step]]:
        """Every child of the Final-Goals' bag with its step, best first (what the search tries first)."""
        n = self.lib.bs_root_children(self._h)
        size = int(self.lib.bs_plans_size(self._h))
        buf = (ctypes.c_int32 * size)()
        self.lib.bs_take_plans(self._h, buf)
        r = _Reader(list(buf))
        out = []
        for _ in range(n):
            step = r.step()
            out.append((gl.make_bag(r.goal() for _ in range(r.take())), step))
        return out


class _Reader:
    """Reads the C search's serialised Goals and steps."""

    def __init__(self, ints: list[int]) -> None:
        self.ints = ints
        self.pos = 0

    def take(self) -> int:
        self.pos += 1
        return self.ints[self.pos - 1]

    def goal(self) -> Goal:
        coefs = {}
        for _ in range(self.take()):
            x, y, z, c = self.take(), self.take(), self.take(), self.take()
            coefs[(x, y, z)] = c
        return gl.make_goal(coefs)

    def step(self) -> Step:
        op, nd, d0, d1 = self.take(), self.take(), self.take(), self.take()
        upper = self.goal()
        lowers = tuple(self.goal() for _ in range(self.take()))
        return (_OPS[op], upper, lowers, tuple(_DIRS[d] for d in (d0, d1)[:nd]))


def parse_plans(ints: list[int], n: int) -> list[Plan]:
    """The C search's serialised plans (see record_plan in bagsearch.c) as Plans."""
    r = _Reader(ints)
    plans = []
    for _ in range(n):
        length = r.take()
        bags: list[Bag] = [gl.make_bag(r.goal() for _ in range(r.take())) for _ in range(length + 1)]
        steps: list[Step] = [r.step() for _ in range(length)]
        plans.append(Plan(steps, bags, 0))
    return plans


if __name__ == "__main__":
    if "--build" in sys.argv:
        try:
            build(quiet=False)
        except CompiledUnavailable as exc:
            print(f"warning: {exc}", file=sys.stderr)
            raise SystemExit(1) from None
