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


# ---------------------------------------------------------------- user-defined ⊙: combine and reduce
# Any ⊙ of the form  acc = reduce(acc, combine(a, b))  is a strategy named "<combine>/<reduce>", e.g.
# "absdiff/sum" (SAD, motion estimation) or "mul/max". A name (not an expression) keeps the transform a
# plain value: numpy, the eq. 5 walk and the C/CUDA generators all read the same two tables below.
COMBINES: dict[str, tuple[int, Callable[..., np.ndarray], str]] = {
    # name: (operands, numpy element-wise function, C expression of x0 [, x1])
    "mul": (2, lambda a, b: a * b, "({0} * {1})"),
    "add": (2, lambda a, b: a + b, "({0} + {1})"),
    "sub": (2, lambda a, b: a - b, "({0} - {1})"),
    "absdiff": (2, lambda a, b: np.abs(a - b), "fabsf({0} - {1})"),
    "sqdiff": (2, lambda a, b: (a - b) * (a - b), "(({0} - {1}) * ({0} - {1}))"),
    "max": (2, np.maximum, "fmaxf({0}, {1})"),
    "min": (2, np.minimum, "fminf({0}, {1})"),
    "value": (1, lambda a: a, "({0})"),
    "abs": (1, np.abs, "fabsf({0})"),
    "square": (1, lambda a: a * a, "({0} * {0})"),
}
REDUCES: dict[str, tuple[np.ufunc, float, str, str]] = {
    # name: (numpy ufunc reduced along the a axis, identity, C update of acc by v, OpenMP reduction op)
    "sum": (np.add, 0.0, "acc += {v};", "+"),
    "max": (np.maximum, -math.inf, "acc = fmaxf(acc, {v});", "max"),
    "min": (np.minimum, math.inf, "acc = fminf(acc, {v});", "min"),
    "prod": (np.multiply, 1.0, "acc *= {v};", "*"),
}
# Strategy names that stand for a combine/reduce pair: "max" and "min" take the combine by operand
# count (one operand: its value, as in max pooling; two: their product).
SHORTCUTS: dict[str, tuple[str | None, str]] = {
    "max": (None, "max"), "min": (None, "min"), "sum": (None, "sum"), "sad": ("absdiff", "sum"),
    "ssd": ("sqdiff", "sum"),
}


def combine_reduce_name(combine: Any, reduce: Any, operands: int, where: str = "transform") -> str:
    """The strategy name of a user ⊙ given as a combine and a reduce; every problem names its field."""
    if reduce is None:
        reduce = "sum"
    if not isinstance(reduce, str) or reduce not in REDUCES:
        raise InputError(f"unknown reduce {reduce!r}; known: {', '.join(REDUCES)}", f"{where}.reduce")
    if combine is None:
        combine = "value" if operands == 1 else "mul"
    if not isinstance(combine, str) or combine not in COMBINES:
        raise InputError(f"unknown combine {combine!r}; known: {', '.join(COMBINES)}", f"{where}.combine")
    arity = COMBINES[combine][0]
    if arity != operands:
        one = [n for n, c in COMBINES.items() if c[0] == operands]
        raise InputError(f"combine {combine!r} takes {arity} operand(s), the transform has {operands}"
                         + (f"; for {operands}: {', '.join(one)}" if one else "; a combine takes one or two"),
                         f"{where}.combine")
    return f"{combine}/{reduce}"


def _combine_reduce(name: str, where: str) -> Strategy:
    combine, _, reduce = name.partition("/")
    if combine not in COMBINES or reduce not in REDUCES:
        raise InputError(f"unknown strategy {name!r}: a user ⊙ is \"<combine>/<reduce>\" with combine one of "
                         f"{', '.join(COMBINES)} and reduce one of {', '.join(REDUCES)}", where)
    arity, comb, _ = COMBINES[combine]
    ufunc, identity, _, _ = REDUCES[reduce]

    def rows(x: list[np.ndarray], c: dict[str, Any]) -> np.ndarray:
        return np.asarray(ufunc.reduce(comb(*x), axis=1))

    class Scalar(ScalarStrategy):
        def pre(self, i: list[float]) -> None:
            self.acc = identity

        def loop(self, i: list[float]) -> None:
            v = float(comb(*[np.float64(a) for a in i]))
            self.acc = float(ufunc(self.acc, v))

    roles = ("A", "B")[:arity]
    return Strategy(name, roles, (False,) * arity, 1 if combine in ("mul", "value") else 2, 0, rows,
                    combine == "mul" and reduce == "sum",
                    f"acc = {reduce}(acc, {combine}(...)) (user-defined ⊙)", Scalar)


def canonical_strategy(name: Any, operands: int, where: str = "strategy") -> str:
    """A strategy name as stored: built-ins unchanged, shortcuts ("max", "sad") as "<combine>/<reduce>"."""
    if not isinstance(name, str):
        raise InputError("strategy must be a name", where)
    if name in STRATEGIES:
        return name
    if name in SHORTCUTS:
        combine, reduce = SHORTCUTS[name]
        return combine_reduce_name(combine, reduce, operands, where.rsplit(".", 1)[0] if "." in where else where)
    get_strategy(name, where)
    return name


def get_strategy(name: str, where: str = "strategy") -> Strategy:
    if name in STRATEGIES:
        return STRATEGIES[name]
    if isinstance(name, str) and "/" in name:
        return _combine_reduce(name, where)
    if isinstance(name, str) and name in SHORTCUTS:
        combine, reduce = SHORTCUTS[name]
        return _combine_reduce(f"{combine or 'value'}/{reduce}", where)
    raise InputError(f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}, or a user ⊙ "
                     f"\"<combine>/<reduce>\" (combine: {', '.join(COMBINES)}; reduce: {', '.join(REDUCES)}), "
                     f"or {', '.join(SHORTCUTS)}", where)
