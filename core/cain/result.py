"""The typed result of the "cain" engine (core.cain.engine): what a code search found.

The engine yields a CainResult (core.cain.engine._final builds it); the cain panel, its text form,
core.cain.plans and the simulator's "use code-search result" button read its fields. Its JSON form
(to_json / from_json) is what sessions store and `--json` prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from core.cain.lower_bound import LowerBound
from core.metrics import Metric
from core.results import EngineResult, optional_key
from core.scamp5.analogue import AnalogueWarning

IntMatrix = list[list[int]]                     # rows north to south
FloatMatrix = list[list[float]]
# a kernel is one matrix, or one matrix per input channel
IntKernel = Union[IntMatrix, list[IntMatrix]]
FloatKernel = Union[FloatMatrix, list[FloatMatrix]]


def _drop_searcher(d: dict) -> dict:
    """Version 3 -> 4: the member names of version 3 ("engine", "published") are gone."""
    for imp in d.get("improvements") or []:
        if isinstance(imp, dict):
            imp.pop("searcher", None)
    return d


@dataclass(kw_only=True)
class Improvement:
    """A shorter verified program, when it was found (the live plots' points), and the program
    itself (core.cain.plans turns it into a plan; results stored before programs were kept lack it)."""

    length: int
    nodes: int
    time_s: float
    method: str                                 # "simultaneous" | "one-by-one"
    strategy: str | None = optional_key()       # version 4: the portfolio member that found it (cgds, beam, ...)
    program: list[str] | None = optional_key()
    outputs: dict[str, str] | None = optional_key()          # kernel name -> register
    input_registers: dict[str, str] | None = optional_key()  # channel ("0", ...) -> register


@dataclass(kw_only=True)
class GoalMatrix:
    """One Goal of a Goal-Bag as the panel draws it: its Atom count and coefficient matrix over 2^d.

    A picture of a Goal, not a second Goal class: the search's Goal (core.cain.goals.Goal) is a
    sorted tuple of packed ints, made for hashing millions of them, with no fields to store; this is
    the one class for what the user sees of it (core.cain.codegen.goal_bag_json builds it)."""

    atoms: int
    matrix: IntKernel


@dataclass(kw_only=True)
class CainResult(EngineResult):
    """A Cain (or AUKE-mode) search: settings, the approximated kernels and the best program.
    When nothing was found `found` is false, `length` null and the program lists empty."""

    # Version 2 added the proven lower bound, the gap to it and the optimality verdict; version 3 said
    # which portfolio member found each program, naming a compiled copy of another tool's search that
    # the engine no longer has; version 4 names the strategy instead (optional keys, so older data
    # reads unchanged: the panel says such a run has no bound, and does not say who found its programs).
    VERSION = 4
    UPGRADES = {1: lambda d: d, 2: lambda d: d, 3: _drop_searcher}

    filter: str
    kernel_names: list[str]
    isa: str
    mode: str
    registers: int
    traversal: str
    workers: int
    time_budget_s: float
    max_nodes: int | None
    d: int
    denominator: int
    approximated_kernels: dict[str, IntKernel]
    coefficient_errors: dict[str, FloatKernel]
    max_abs_error: float
    nodes_explored: int
    elapsed_s: float
    nodes_per_s: float | None
    improvements: list[Improvement]
    found: bool
    length: int | None
    program: list[str]
    method: str | None = optional_key()          # only when a program was found
    output_registers: list[str]                 # in kernel order
    outputs: dict[str, str]                     # kernel name -> register
    input_register: str
    input_registers: dict[str, str]             # channel ("0", ...) -> register
    time_to_first_s: float | None
    time_to_best_s: float | None
    verified: bool
    verification: str
    cpp: str
    bus_steps: int | None
    goal_bags: list[list[GoalMatrix]]             # before each step, the Goals still to make
    register_goals: list[dict[str, IntMatrix | None]]   # before/after each step: register -> Goal
    lower_bound: LowerBound | None = optional_key()  # version 2: no program is shorter
    gap: int | None = optional_key()                     # length - lower_bound.value, when a program was found
    optimal: bool | None = optional_key()                # length == lower_bound.value (proven optimal)
    # kernels and registers of the program that can leave the ±2 analogue range (core.scamp5.analogue);
    # absent in results stored before the check, empty when everything stays inside
    warnings: list[AnalogueWarning] | None = optional_key()

    @property
    def bound(self) -> int | None:
        """The proven lower bound on the length; None in a result stored before there was one (version 1)."""
        return None if self.lower_bound is None else self.lower_bound.value

    METRICS = (
        Metric("length", "Program length", "instructions", "lower", "instructions of the shortest program found",
               read=lambda r: r.length),
        Metric("nodes_explored", "Nodes explored", "nodes", None, "search nodes expanded",
               read=lambda r: r.nodes_explored),
        Metric("elapsed_s", "Search time", "s", "lower", read=lambda r: r.elapsed_s),
        Metric("lower_bound", "Lower bound", "instructions", None, "no program for these kernels is shorter",
               read=lambda r: r.bound),
    )
