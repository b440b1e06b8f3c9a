"""Proven-optimal SCAMP-5 programs: an exact search that decides whether a program of length L
exists, over every program of an instruction set (every macro form, register and direction).

`Prover` runs iterative-deepening depth-first search (IDA*) forwards from the input, in C
(core/cain/csrc/exact.c, built on first use into build/cain/ and loaded with ctypes). Each
iteration refutes one length: when the search below threshold T finishes without a program, no
program of length <= T exists and `bound` becomes T + 1. A program found at threshold T is optimal
(every shorter length was refuted) and is checked with `run_symbolic` before it is reported.

The model is `core/scamp5/interp.py`'s: a register read before it is written is an error; div and
diva clobber their scratch registers; mov2x shifts by one of the 8 offsets of length 2; sub's
operands may be one register, add's may not. Values are kept exactly: integer coefficients in units
of 2^-(d + X), where X spare bits admit every halving a program below the length limit can make (a
value of valuation -(d + e) needs d + e halvings, and `nonhalving` more instructions are needed in
any case, so e <= limit - d - nonhalving).

Two phases. The relaxed phase (when the goals need H >= 1 halvings) searches the problem with free
halvings (an operand may be taken divided by 2^e), free copies (operands may repeat) and no
register limit. A program with n other instructions and h >= H halvings gives a relaxed derivation
of at most n steps (keep every non-halving result; a value the program holds is always one of them
divided by 2^j), so refuting relaxed length T refutes every program of H + T instructions; the
relaxed depth is H less than the real one. The exact phase then deepens from the best bound over
the real instruction set and registers, and finds a program at the first length it cannot refute.

What the search may skip, each with its proof (docs/cain.md, "Proven optimality (exact method)").
Let Π be the programs of minimal length L*, and π the one whose sequence (number of values held
after step 1, after step 2, ...) is lexicographically largest. π satisfies every rule below, so
the search, which explores every program that does, finds one of length L*:

  * No dead instruction: each result is read before it is overwritten or clobbered, or is an
    output. (Delete all dead instructions of a program: the rest computes the same live values,
    so a program of L* has none.) Hence a register's "fresh" bit (written, not yet read): a fresh
    value is destroyed only by an instruction that reads it, and a final state has no fresh value
    that is not an output.
  * No zero value (sets where every form that reads a zero has a zero-free equivalent, e.g.
    add(y, a, 0) = mov(y, a), sub(y, 0, b) = neg(y, b), addx(y, a, 0, d) = movx(y, a, d): replace
    each use, then the zero's writer is dead), so res is never needed either.
  * Empty registers first: an instruction destroys (writes or clobbers without reading) a register
    holding a value only when no empty register could take its place. (Otherwise rename the two
    registers from there on: same length, one more value held: lexicographically larger than π.)
    div(y0, y1, y2, x) into three empty registers dominates diva/div(y0, y1, y2) likewise.
  * Reading a value held by several registers, read a fresh copy: the same program with fewer fresh
    bits is allowed by every rule that a program with more is.
  * States equal up to register names, or up to a dihedral symmetry that maps the multiset of goals
    and every macro's set of shifts to themselves, are one state (the transposition table keeps,
    per canonical state, the largest remaining budget already refuted from it).
  * h(state), the heuristic, is a lower bound on the instructions any completion needs:
    max(outputs, halvings + non-halvings, fresh values / 3) where outputs counts goal copies not
    held; halvings = the smallest 2-adic valuation held minus the goals' (only halvings lower it);
    non-halvings is the largest of (a) the adds the goals' classes (equal up to sign, shift, 2^k)
    not held need: the i-th heaviest after ceil(log_k(w_i / w_held)) + i - 1 adds, (b) the adds and
    shifts together: a4 three-operand adds and b others reach weight w_held 3^a4 2^b, and the box
    of everything held must grow to the goals' box, which takes a number of shifting instructions
    only the shifting adds among the b can share, and (c) the register-weight potential: a new
    value weighs at most the sum W held (distinct registers) or twice the largest (x shifted minus
    x), so W at most doubles-plus per step until the goals' weights are held at once. Halvings that
    keep their operand (div(y0, y1, y2, x), divq) write a copy and add weight too: in sets with
    them, (c) bounds all instructions, not the non-halvings (an earlier version added it to the
    halvings; the exhaustive test found the counterexample).
  * With one instruction left, its result must be a goal; with two left, a goal or an operand of a
    last instruction that makes one (its result must be read). Both are tested on fingerprints
    first: phi(v) = v(X, Y) mod 2^61 - 1 at fixed X, Y (and Z per channel) is a homomorphism for
    every macro (a shift multiplies by X^dx Y^dy, a halving by 1/2), so a candidate's fingerprint
    costs O(1) from its operands'; equal values have equal fingerprints, so the filter never drops
    a needed value, and every match is confirmed on the terms.

The relaxed phase uses the same rules with its own reading: a value stands for a goal when the goal
is it divided by 2^j; a result equal to a held value divided by 2^j adds nothing; scalings (and j)
are at most the halvings a program of the refuted length can have, and every value taken is one
of that program's, so at most that many halvings deep. When the value store grows past
`gc_values` it keeps only the values on the search stack and clears the transposition table
(which only saves work).
"""

from __future__ import annotations

import ctypes
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from core.cain import goals as gl
from core.cain import lower_bound as lb
from core.cain.goals import Goal
from core.ccompiler import CompiledLibrary
from core.paths import BUILD
from core.scamp5.interp import SymKernel, run_symbolic
from core.scamp5.isa import CLOCKWISE, DIRECTIONS, InstructionSet, register_names
from core.scamp5.program import Instr

SOURCE = Path(__file__).with_name("csrc") / "exact.c"
BUILD_DIR = BUILD / "cain"
CFLAGS = ("-O2", "-std=gnu11", "-shared", "-fPIC")
COMPILE_TIMEOUT_S = 120
MAX_REGISTERS = 8           # RMAX in exact.c
MAX_GOAL_VALUES = 16        # GMAX in exact.c
MAX_LENGTH = 40             # positions stay within +-100 and coefficients within 2^60 below this
TT_BITS = 22                # transposition table: 2^22 entries of 36 bytes
GC_VALUES = 3_000_000       # values kept before the store is collected (about 1 GB at most)


class ExactUnavailable(RuntimeError):
    """The exact search's C library could not be built or loaded here."""


# ------------------------------------------------------------------ the C library
def _declare(lib: ctypes.CDLL) -> None:
    c_int, c_long, vp, ip = ctypes.c_int, ctypes.c_long, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)
    lib.ex_new.restype = vp
    lib.ex_new.argtypes = [c_int, c_int, c_int, c_int, c_int, c_int, ip, ip, ip, c_int, c_int, c_int, c_int]
    lib.ex_set_input.argtypes = [vp, c_int]
    lib.ex_set_relaxed.argtypes = [vp, c_int]
    lib.ex_heur_root.argtypes = [vp]
    lib.ex_run.argtypes = [vp, c_long]
    lib.ex_bound.argtypes = [vp]
    lib.ex_nodes.argtypes = [vp]
    lib.ex_nodes.restype = c_long
    lib.ex_values.argtypes = [vp]
    lib.ex_program.argtypes = [vp, ip, c_int]
    lib.ex_free.argtypes = [vp]
    lib.ex_free.restype = None
    lib.ex_stats.argtypes = [vp, ctypes.POINTER(c_long)]
    lib.ex_stats.restype = None
    lib.ex_hist.argtypes = [vp, ctypes.POINTER(c_long)]
    lib.ex_hist.restype = None
    lib.ex_progress.argtypes = [vp]
    lib.ex_set_gc.argtypes = [vp, c_int]
    lib.ex_set_gc.restype = None
    lib.ex_set_split.argtypes = [vp, c_int, c_int, c_int]
    lib.ex_set_split.restype = None
    lib.ex_root_children.argtypes = [vp]
    lib.ex_root_children.restype = c_int
    lib.ex_gcs.argtypes = [vp]
    lib.ex_gcs.restype = c_long
    lib.ex_progress.restype = ctypes.c_double


LIBRARY = CompiledLibrary(SOURCE, BUILD_DIR, "exact", CFLAGS, _declare, ExactUnavailable, timeout_s=COMPILE_TIMEOUT_S)


def library_path() -> Path:
    """The library for this source, these flags and this machine (a new name when any changes)."""
    return LIBRARY.path()


def build() -> Path:
    """Compile exact.c unless this version is built already."""
    return LIBRARY.build()


def load() -> ctypes.CDLL:
    return LIBRARY.load()


# ------------------------------------------------------------------ the instruction set as switches
_ISA_BITS = {"mov/2": 1, "movx/3": 2, "mov2x/4": 4, "neg/2": 8, "add/3": 16, "add/4": 32, "addx/4": 64,
             "add2x/5": 128, "sub/3": 256, "subx/4": 512, "sub2x/5": 1024, "div/4": 2048, "diva/3": 4096,
             "div/3": 8192, "divq/2": 16384, "res/1": 32768, "res/2": 65536}
_ST_RUNNING, _ST_FOUND, _ST_LIMIT, _ST_ERROR = 0, 1, 2, 3
_F_MOV, _F_NEG, _F_ADD2, _F_ADD3, _F_SUB, _F_DIV4, _F_DIVA, _F_DIV3, _F_DIVQ, _F_RES1, _F_RES2 = range(11)

# offsets as in exact.c: index -> (dx, dy) and the directions that spell it
OFFSETS: tuple[tuple[int, int], ...] = ((0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (2, 0), (0, 2), (-2, 0), (0, -2),
                                        (1, 1), (-1, 1), (-1, -1), (1, -1))
_UNIT = {v: k for k, v in DIRECTIONS.items()}
_DOUBLE = {(DIRECTIONS[a][0] + DIRECTIONS[b][0], DIRECTIONS[a][1] + DIRECTIONS[b][1]): (a, b)
           for a in DIRECTIONS for b in (a, CLOCKWISE[a])}


def _sym_xy(k: int, x: int, y: int) -> tuple[int, int]:
    """The 8 dihedral maps of exact.c's sym_xy (k = 0 is the identity)."""
    return ((x, y), (-y, x), (-x, -y), (y, -x), (-x, y), (x, -y), (y, x), (-y, -x))[k]


def _offset_sets(flags: int) -> list[frozenset[tuple[int, int]]]:
    units = {o for o in OFFSETS if abs(o[0]) + abs(o[1]) == 1}
    doubles = {o for o in OFFSETS if abs(o[0]) + abs(o[1]) == 2}
    out = []
    for zero_bits, unit_bit, double_bit in ((1, 2, 4), (16 | 128, 64, 128), (256 | 1024, 512, 1024)):
        s: set[tuple[int, int]] = set()
        if flags & zero_bits:
            s.add((0, 0))
        if flags & unit_bit:
            s |= units
        if flags & double_bit:
            s |= doubles
        out.append(frozenset(s))
    return out


def symmetry_mask(goals: Sequence[Goal], flags: int) -> int:
    """Bit k set when dihedral map k takes the multiset of goals and every macro family's set of
    shifts to themselves: then it maps programs for these goals to programs for these goals."""
    want = Counter(goals)
    offs = _offset_sets(flags)
    mask = 0
    for k in range(8):
        if any(frozenset(_sym_xy(k, *o) for o in s) != s for s in offs):
            continue
        moved = Counter(gl.make_goal({(*_sym_xy(k, x, y), z): c for x, y, z, c in gl.atoms(g)}) for g in goals)
        if moved == want:
            mask |= 1 << k
    return mask


def zero_free(flags: int) -> bool:
    """True when every macro that reads a zero has a zero-free equivalent in the set, so an
    optimal program never makes a zero (see the module doc)."""
    need = []
    if flags & (16 | 256):                  # add(y, a, 0), sub(y, a, 0) -> mov
        need.append(1)
    if flags & (256 | 512 | 1024):          # sub(y, 0, b) and its shifted forms -> neg
        need.append(8)
    if flags & 32:                          # add(y, a, b, 0) -> add(y, a, b)
        need.append(16)
    if flags & (64 | 512):                  # addx(y, a, 0, d), subx(y, a, d, 0) -> movx
        need.append(2)
    if flags & (128 | 1024):                # add2x / sub2x -> mov2x, or mov for no shift
        need += [4, 1]
    return all(flags & b for b in need)


def isa_flags(isa: InstructionSet) -> int:
    return sum(b for k, b in _ISA_BITS.items() if isa.allows(k))


# ------------------------------------------------------------------ results
@dataclass
class ProofResult:
    """What `prove` established: every length below `bound` is refuted; `program` (if any) has
    length `bound` and is optimal; `optimal` when bound reached `upper` or a program was found."""

    bound: int
    program: list[Instr] | None
    outputs: list[str] | None
    optimal: bool
    nodes: int
    upper: int | None

    def as_json(self) -> dict:
        return {"bound": self.bound, "optimal": self.optimal, "nodes": self.nodes, "upper": self.upper,
                "program": None if self.program is None else [str(i) for i in self.program],
                "outputs": self.outputs}


@dataclass
class _Handle:
    ptr: int
    limit: int
    relaxed: bool


@dataclass
class Prover:
    """Incremental exact search: `run(max_nodes)` advances it; `bound` never decreases.

    goals: Goals (numerators over 2^d); channels: input channels (channel z starts in register z);
    registers: R (names A..); upper: length of a known program (only shorter ones are searched).

    It runs in two phases. The relaxed phase searches the problem with free halvings, free copies
    and no register limit: each relaxed length T it refutes refutes every program of H + T
    instructions (H: the halvings every program needs). The exact phase then deepens from there
    over the real instruction set and registers, and finds a program at the first length it
    cannot refute.
    """

    goals: list[Goal]
    d: int
    channels: int
    isa: InstructionSet
    registers: int
    upper: int | None = None
    tt_bits: int = TT_BITS
    gc_values: int = GC_VALUES
    relax: bool = True
    relax_nodes: int = 20_000_000     # the relaxed phase's share: then the exact phase goes on
    # (k, n): search only the programs whose first instruction is the input state's child i with
    # i % n == k; `bound` then holds for those programs only, and the n shares' smallest bound holds for
    # all (benchmarks/cain_exact.py --parts runs them in parallel). None: every program.
    split: tuple[int, int] | None = None
    # 2: split by the first two instructions instead (share (i * 2654435761 + j) % n, j the second
    # instruction's index among the children of the first one's state), so that one first instruction
    # with a large subtree is shared out too
    split_depth: int = 1
    bound: int = field(init=False, default=0)
    relaxed_bound: int = field(init=False, default=0)
    program: list[Instr] | None = field(init=False, default=None)
    outputs: list[str] | None = field(init=False, default=None)
    done: bool = field(init=False, default=False)
    nodes: int = field(init=False, default=0)
    _h: _Handle | None = field(init=False, default=None, repr=False)
    _nodes_before: int = field(init=False, default=0, repr=False)

    def __post_init__(self) -> None:
        self.goals = list(self.goals)
        if not self.goals:
            raise ValueError("no goals")
        if any(not g for g in self.goals):
            raise ValueError("a goal is zero")
        if self.split_depth not in (1, 2):
            raise ValueError(f"split_depth must be 1 or 2, got {self.split_depth}")
        if not 1 <= self.channels <= self.registers:
            raise ValueError(f"{self.channels} input channels need at least as many registers, got {self.registers}")
        if self.registers > MAX_REGISTERS:
            raise ValueError(f"the exact search takes at most {MAX_REGISTERS} registers, got {self.registers}")
        if len(set(self.goals)) > MAX_GOAL_VALUES:
            raise ValueError(f"the exact search takes at most {MAX_GOAL_VALUES} distinct goals")
        self._flags = isa_flags(self.isa)
        self._lib = load()
        self._problem = lb.problem_bound(self.goals, self.d, self.channels, self.isa)
        self._hmin = self._problem.halvings
        self.bound = self._problem.value
        self._start_exact()
        if self.relax and self._hmin >= 1 and not self.done and self.channels < MAX_REGISTERS:
            self._close()
            self._open(self._limit_for(self.bound), relaxed=True)
            assert self._h is not None
            self.relaxed_bound = self._lib.ex_heur_root(self._h.ptr)
            self._raise(self._hmin + self.relaxed_bound)
            self._close()
            if not self.done:
                self._open(self._relaxed_limit(), relaxed=True, start=self.relaxed_bound)

    # -------------------------------------------------------------- the C handles
    def _limit_for(self, bound: int) -> int:
        """The length below which an exact handle searches (the known program, or a few past the
        bound: a later handle with more spare halving bits goes on from there)."""
        if self.upper is not None:
            return min(self.upper, MAX_LENGTH + 1)
        return min(bound + 4, MAX_LENGTH + 1)

    def _relaxed_limit(self) -> int:
        """Relaxed lengths searched: while H + T is below the known program and a register is
        left for every step (the relaxed search never overwrites)."""
        cap = MAX_REGISTERS - self.channels
        if self.upper is not None:
            cap = min(cap, self.upper - self._hmin)
        return max(0, min(cap + 1, MAX_LENGTH - self._hmin))

    def _raise(self, bound: int) -> None:
        if bound > self.bound:
            self.bound = min(bound, MAX_LENGTH + 1)
        self._check_done()

    def _start_exact(self) -> None:
        self._open(self._limit_for(self.bound))
        assert self._h is not None
        root = self._lib.ex_heur_root(self._h.ptr)
        if root > self.bound:               # h(input) is proven too: start the deepening there
            self.bound = root
            self._close()
            self._open(self._limit_for(self.bound))
        self._check_done()

    def _open(self, limit: int, relaxed: bool = False, start: int | None = None) -> None:
        nonhalving = self._problem.adds + self._problem.moves     # instructions that are not halvings
        # the longest real program this handle refutes: its spare bits must admit every halving of it
        longest = (self._hmin + limit - 1) if relaxed else limit - 1
        spare = max(0, longest - self.d - nonhalving)
        distinct = list(dict.fromkeys(self.goals))
        need = Counter(self.goals)
        lens, terms = [], []
        for g in distinct:
            ats = gl.atoms(g)
            lens.append(len(ats))
            for x, y, z, c in ats:
                terms += [x, y, z, c]
        arr = lambda xs: (ctypes.c_int * max(1, len(xs)))(*xs)
        regs = MAX_REGISTERS if relaxed else self.registers
        ptr = self._lib.ex_new(regs, self.channels, self._flags, symmetry_mask(self.goals, self._flags),
                               0 if zero_free(self._flags) else 1, len(distinct), arr(lens), arr(terms),
                               arr([need[g] for g in distinct]), spare, self.tt_bits,
                               self.bound if start is None else start, limit)
        if not ptr:
            raise ExactUnavailable("the exact search could not allocate its tables")
        self._lib.ex_set_gc(ptr, self.gc_values)
        if self.split is not None:
            self._lib.ex_set_split(ptr, *self.split, self.split_depth)
        if relaxed:
            self._lib.ex_set_relaxed(ptr, self._hmin)
        self._lib.ex_set_input(ptr, self.d + spare)
        self._h = _Handle(ptr, limit, relaxed)
        self._nodes_before = self.nodes

    def _close(self) -> None:
        if self._h is not None:
            self._lib.ex_free(self._h.ptr)
            self._h = None

    def __del__(self) -> None:
        try:
            self._close()
        except Exception:
            pass

    def _check_done(self) -> None:
        self.bound = min(self.bound, MAX_LENGTH + 1)
        if (self.upper is not None and self.bound >= self.upper) or self.bound > MAX_LENGTH:
            self.done = True
            self._close()

    # -------------------------------------------------------------- driving
    def run(self, max_nodes: int) -> None:
        """Advance by about `max_nodes` search nodes (deterministic for a given budget)."""
        while not self.done and max_nodes > 0 and self._h is not None:
            h = self._h
            before = self._lib.ex_nodes(h.ptr)
            status = self._lib.ex_run(h.ptr, max_nodes)
            used = self._lib.ex_nodes(h.ptr) - before
            max_nodes -= max(used, 1)
            self.nodes = self._nodes_before + self._lib.ex_nodes(h.ptr)
            if h.relaxed:
                self.relaxed_bound = max(self.relaxed_bound, self._lib.ex_bound(h.ptr))
                self._raise(self._hmin + self.relaxed_bound)
                if self.done:
                    continue
                if status == _ST_RUNNING and self.nodes < self.relax_nodes:
                    continue
                if status == _ST_ERROR:
                    self._close()
                    raise ExactUnavailable("coefficient overflow in the exact search")
                # a relaxed derivation was found, or the relaxed lengths ran out: go exact
                self._close()
                self._start_exact()
                continue
            self.bound = max(self.bound, self._lib.ex_bound(h.ptr))
            if status == _ST_FOUND:
                self._take_program()
                self.done = True
                self._close()
            elif status == _ST_LIMIT:
                if self.upper is not None and self.bound >= self.upper:
                    self.done = True
                    self._close()
                elif self.bound > MAX_LENGTH:
                    # every length up to the cap is refuted (or the heuristic found the goals out
                    # of reach): report exactly that, and stop
                    self.bound = MAX_LENGTH + 1
                    self.done = True
                    self._close()
                else:
                    self._close()
                    self._open(self._limit_for(self.bound))
            elif status == _ST_ERROR:
                self._close()
                raise ExactUnavailable("coefficient overflow in the exact search")
            else:
                break

    def _take_program(self) -> None:
        assert self._h is not None
        buf = (ctypes.c_int * (6 * 64))()
        n = self._lib.ex_program(self._h.ptr, buf, 6 * 64)
        raw = [list(buf[6 * i:6 * i + 6]) for i in range(n)]
        regs = register_names(self.registers)
        prog = [decode(r, regs, self.isa) for r in raw]
        outputs = check_program(prog, self.goals, self.d, self.channels, self.registers)
        self.program, self.outputs = prog, outputs
        self.bound = len(prog)


def decode(raw: Sequence[int], regs: tuple[str, ...], isa: InstructionSet) -> Instr:
    """One instruction of exact.c (family, offset, registers) as a macro."""
    fam, off, r = raw[0], OFFSETS[raw[1]], [regs[i] if i >= 0 else "" for i in raw[2:]]

    def dirs() -> tuple[str, ...]:
        if off == (0, 0):
            return ("north", "south")
        return (_UNIT[off],) if off in _UNIT else _DOUBLE[off]

    if fam == _F_MOV:
        if off == (0, 0):
            return Instr("mov", (r[0], r[1]))
        ds = dirs()
        return Instr("movx" if len(ds) == 1 else "mov2x", (r[0], r[1], *ds))
    if fam == _F_NEG:
        return Instr("neg", (r[0], r[1]))
    if fam == _F_ADD2:
        if off == (0, 0) and isa.allows("add/3"):
            return Instr("add", (r[0], r[1], r[2]))
        ds = dirs()
        return Instr("addx" if len(ds) == 1 else "add2x", (r[0], r[1], r[2], *ds))
    if fam == _F_ADD3:
        return Instr("add", (r[0], r[1], r[2], r[3]))
    if fam == _F_SUB:
        if off == (0, 0) and isa.allows("sub/3"):
            return Instr("sub", (r[0], r[1], r[2]))
        ds = dirs()
        return Instr("subx" if len(ds) == 1 else "sub2x", (r[0], r[1], *ds, r[2]))
    if fam == _F_DIV4:
        return Instr("div", (r[0], r[1], r[2], r[3]))
    if fam == _F_DIVA:
        return Instr("diva", (r[0], r[1], r[2]))
    if fam == _F_DIV3:
        return Instr("div", (r[0], r[1], r[2]))
    if fam == _F_DIVQ:
        return Instr("divq", (r[0], r[1]))
    if fam == _F_RES1:
        return Instr("res", (r[0],))
    if fam == _F_RES2:
        return Instr("res", (r[0], r[1]))
    raise ValueError(f"unknown instruction family {fam}")


def goal_kernel(g: Goal, d: int) -> SymKernel:
    from fractions import Fraction

    return SymKernel.from_dict({(x, y, z): Fraction(c, 2 ** d) for x, y, z, c in gl.atoms(g)})


def check_program(program: list[Instr], goals: Sequence[Goal], d: int, channels: int, registers: int) -> list[str]:
    """Run `program` symbolically; return one output register per goal (distinct), or raise."""
    regs = register_names(registers)
    final = run_symbolic(program, {regs[z]: z for z in range(channels)}, regs)[-1]
    taken: set[str] = set()
    outputs = []
    for g in goals:
        want = goal_kernel(g, d)
        reg = next((r for r in regs if r not in taken and final[r] == want), None)
        if reg is None:
            raise AssertionError(f"the exact search's program does not compute {gl.to_matrix(g)}: "
                                 f"{[str(i) for i in program]}")
        taken.add(reg)
        outputs.append(reg)
    return outputs


def prove(goals: Sequence[Goal], d: int, channels: int, isa: InstructionSet, registers: int,
          upper: int | None = None, max_nodes: int = 1_000_000) -> ProofResult:
    """Run a `Prover` for at most `max_nodes` nodes and report what it established."""
    p = Prover(list(goals), d, channels, isa, registers, upper)
    p.run(max_nodes)
    optimal = p.program is not None or (upper is not None and p.bound >= upper)
    return ProofResult(p.bound, p.program, p.outputs, optimal, p.nodes, upper)


__all__ = ["ExactUnavailable", "Prover", "ProofResult", "prove", "check_program", "decode", "symmetry_mask",
           "zero_free", "isa_flags"]
