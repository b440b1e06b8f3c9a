"""Ranged inner-product strategies (paper, section III-B, Listings 1 and 2).

A strategy is the PreLoop / Loop / PostLoop triple applied to one row of the transformed tensors.
Here each strategy is evaluated on a block of rows at once: loop operands arrive as arrays of
shape (rows, A) (A = number of accumulated elements), per-output operands (read in PreLoop or
PostLoop, like the bilateral filter's centre pixel or a residual) as arrays of shape (rows, 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from core.errors import InputError


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
    Strategy("dot", ("A", "B"), (False, False), 1, 0, _dot, True, "acc += a*b (eq. 3)"),
    Strategy("relu", ("A", "B"), (False, False), 1, 1, _relu, True, "max(acc, 0) after a*b (Listing 1)"),
    Strategy("l1", ("A", "B"), (False, False), 1, 0, _l1, False, "acc += |a-b| (eq. 4, motion estimation)"),
    Strategy("residual", ("A", "B", "R"), (False, False, True), 1, 1, _residual, True,
             "acc += a*b, PostLoop adds another tensor (residual layer)"),
    Strategy("bilateral", ("center", "neighbor", "wy", "wx"), (True, False, False, False), 6, 1, _bilateral,
             False, "Listing 2: range weight from a lookup, two spatial weights, normalised sum"),
    Strategy("copy", ("A",), (False,), 1, 0, _copy, False, "pure data movement (pixel shuffle)"),
]}


def get_strategy(name: str, where: str = "strategy") -> Strategy:
    if name not in STRATEGIES:
        raise InputError(f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}", where)
    return STRATEGIES[name]
