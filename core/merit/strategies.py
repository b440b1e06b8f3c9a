"""Ranged inner-product strategies (paper, section III-B, Listings 1 and 2).

A strategy is the PreLoop / Loop / PostLoop triple applied to one row of the transformed tensors.
Here each strategy is evaluated on a block of rows at once: loop operands arrive as arrays of
shape (rows, A) (A = number of accumulated elements), per-output operands (read in PreLoop or
PostLoop, like the bilateral filter's centre pixel or a residual) as arrays of shape (rows, 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from core.errors import InputError


class ScalarStrategy:
    """Listing 1/2 form: PreLoop once per output, Loop once per accumulated element, PostLoop once.

    `pre` and `post` receive the per-output operands, `loop` the loop operands, as plain floats;
    `naive_rows` runs these one element at a time to cross-check the vectorised `rows`."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.c = params

    def pre(self, i: list[float]) -> None:
        self.acc = 0.0

    def loop(self, i: list[float]) -> None:
        self.acc += i[0] * i[1]

    def post(self, i: list[float]) -> float:
        return self.acc


class _ReLU(ScalarStrategy):
    def post(self, i: list[float]) -> float:
        return max(self.acc, 0.0)


class _L1(ScalarStrategy):
    def loop(self, i: list[float]) -> None:
        self.acc += abs(i[0] - i[1])


class _Residual(ScalarStrategy):
    def post(self, i: list[float]) -> float:
        out = self.acc + i[0]
        return max(out, 0.0) if self.c.get("relu", False) else out


class _Copy(ScalarStrategy):
    def loop(self, i: list[float]) -> None:
        self.acc += i[0]


class _Bilateral(ScalarStrategy):
    """Listing 2."""

    def pre(self, i: list[float]) -> None:
        self.wsum = self.wxsum = 0.0
        self.center = i[0]

    def loop(self, i: list[float]) -> None:
        d = self.center - i[0]
        w = math.exp(d * d * float(self.c["norm"])) * i[1] * i[2]
        self.wsum += w
        self.wxsum += w * i[0]

    def post(self, i: list[float]) -> float:
        return self.wxsum / self.wsum


@dataclass(frozen=True)
class Strategy:
    name: str
    roles: tuple[str, ...]                 # operand roles, in operand order
    per_output: tuple[bool, ...]           # True: read once per output (Pre/PostLoop), not per a
    ops_per_iter: int                      # ALU instructions per Loop() call (Table I ISA)
    post_ops: int                          # ALU instructions in PostLoop
    rows: Callable[[list[np.ndarray], dict[str, Any]], np.ndarray]
    bilinear: bool = False                 # Loop is a*b accumulation: R can use a tensor contraction
    summary: str = ""
    scalar: type[ScalarStrategy] = ScalarStrategy


def _dot(x: list[np.ndarray], c: dict[str, Any]) -> np.ndarray:
    return np.einsum("ra,ra->r", x[0], x[1])


def _relu(x: list[np.ndarray], c: dict[str, Any]) -> np.ndarray:
    return np.maximum(_dot(x, c), 0)


def _l1(x: list[np.ndarray], c: dict[str, Any]) -> np.ndarray:
    return np.abs(x[0] - x[1]).sum(axis=1)


def _residual(x: list[np.ndarray], c: dict[str, Any]) -> np.ndarray:
    out = _dot(x, c) + x[2][:, 0]
    return np.maximum(out, 0) if c.get("relu", False) else out


def _copy(x: list[np.ndarray], c: dict[str, Any]) -> np.ndarray:
    return x[0].sum(axis=1)


def _bilateral(x: list[np.ndarray], c: dict[str, Any]) -> np.ndarray:
    """Listing 2: w = exp(d^2 * norm) * spatial_y * spatial_x; out = sum(w * i) / sum(w)."""
    center, neigh, wy, wx = x
    d = center - neigh                      # (rows, 1) - (rows, A)
    w = np.exp(d * d * float(c["norm"])) * wy * wx
    return (w * neigh).sum(axis=1) / w.sum(axis=1)


STRATEGIES: dict[str, Strategy] = {s.name: s for s in [
    Strategy("dot", ("A", "B"), (False, False), 1, 0, _dot, True, "acc += a*b (eq. 3)", ScalarStrategy),
    Strategy("relu", ("A", "B"), (False, False), 1, 1, _relu, True, "max(acc, 0) after a*b (Listing 1)", _ReLU),
    Strategy("l1", ("A", "B"), (False, False), 1, 0, _l1, False, "acc += |a-b| (eq. 4, motion estimation)", _L1),
    Strategy("residual", ("A", "B", "R"), (False, False, True), 1, 1, _residual, True,
             "acc += a*b, PostLoop adds another tensor (residual layer)", _Residual),
    Strategy("bilateral", ("center", "neighbor", "wy", "wx"), (True, False, False, False), 6, 1, _bilateral,
             False, "Listing 2: range weight from a lookup, two spatial weights, normalised sum", _Bilateral),
    Strategy("copy", ("A",), (False,), 1, 0, _copy, False, "pure data movement (pixel shuffle)", _Copy),
]}


def get_strategy(name: str, where: str = "strategy") -> Strategy:
    if name not in STRATEGIES:
        raise InputError(f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}", where)
    return STRATEGIES[name]
