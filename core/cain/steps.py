"""Reverse steps and plans of the Goal-Bag search (Cain section 3.2), shared by the compiled search
(core/cain/csearch.py), register allocation (codegen.py) and the solver.

A Step says "the upper Goal = op(lowers)": the search applies it backwards (eq. 7: the child bag is
(F \\ {upper}) U lowers), a program runs it forwards. A Plan is the path from the input's bag to the
Final-Goals, forwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.cain.goals import Bag, Goal

# Step = (op, upper Goal, lower Goals in operand order, directions)
Step = tuple[str, Goal, tuple[Goal, ...], tuple[str, ...]]

# macros whose two operands may be one register (x0 - x1 with x0 = x1 shifted: edge filters)
SAME_OPERANDS_OK = ("sub", "subx", "sub2x")


@dataclass
class Plan:
    """A forward program as search steps, with the Goal-Bag before step 1 and after every step."""

    steps: list[Step]
    bags: list[Bag]
    nodes_at_find: int
    # time.monotonic() when the search reached it (the clock is system-wide, so a worker process's
    # stamp compares with the parent's deadline): a plan found after its budget is never reported
    found_at: float = 0.0
    strategy: str = ""          # the portfolio member that found it (core.cain.portfolio)

    @property
    def length(self) -> int:
        return len(self.steps)
