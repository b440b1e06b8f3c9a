"""Kernel approximation (Cain section 3.1): coefficients to the nearest multiple of 1/2^d.

`d` is given, or the smallest d whose largest coefficient error is within the tolerance.
Inputs are checked here so every bad kernel gets a clear InputError naming it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from core.cain.goals import MAX_COEF, Goal, make_goal
from core.errors import InputError
from core.workload import KernelSet, kernel_shape

MAX_D = 10          # beyond this the Atom counts (and the search space) explode
MAX_ATOMS = 2048    # Atoms in one Goal


@dataclass(frozen=True)
class Approximation:
    """The Goals to search for, the approximated kernels, and the error per coefficient."""

    names: list[str]
    d: int
    channels: int
    goals: list[Goal]                       # one per kernel, integer coefficients scaled by 2^d
    approximated: list[list]                # per kernel: numerators over 2^d (2-D, or 3-D when z > 1)
    errors: list[list]                      # per kernel: |approximated - given| per coefficient
    max_abs_error: float

    def to_json(self) -> dict[str, Any]:
        return {"d": self.d, "denominator": 2 ** self.d, "names": self.names,
                "approximated_kernels": {n: a for n, a in zip(self.names, self.approximated)},
                "coefficient_errors": {n: e for n, e in zip(self.names, self.errors)},
                "max_abs_error": self.max_abs_error}


def _channels(values: Any, where: str) -> list[list[list[Any]]]:
    if not isinstance(values, list) or not values:
        raise InputError("empty kernel", where)
    if isinstance(values[0], list) and values[0] and isinstance(values[0][0], list):
        return values
    return [values]


def check_kernels(ks: KernelSet, max_kernels: int | None) -> list[list[list[list[Fraction]]]]:
    """The kernels as exact fractions per channel; InputError for what the search cannot take
    (also what the engine reports as a workload problem before any run)."""
    if not ks.kernels:
        raise InputError("no kernels: add at least one", "kernels")
    if max_kernels is not None and len(ks.kernels) > max_kernels:
        raise InputError(f"{len(ks.kernels)} kernels but only {max_kernels} registers: each output "
                         f"needs its own register", "kernels")
    if isinstance(ks.denominator, bool) or not isinstance(ks.denominator, int) or ks.denominator <= 0:
        raise InputError(f"denominator must be a positive integer, got {ks.denominator!r}", "denominator")
    out = []
    shape = None
    for i, k in enumerate(ks.kernels):
        where = f"kernels[{i}] ({k.name})"
        _, h, w = kernel_shape(k.values, where)        # the one structural check (core.workload)
        fr = [[[Fraction(v) / ks.denominator for v in row] for row in chan] for chan in _channels(k.values, where)]
        if h % 2 == 0 or w % 2 == 0:
            raise InputError(f"kernel is {h}x{w}; sizes must be odd so the kernel has a centre", where)
        if shape is not None and len(fr) != shape:
            raise InputError("kernels have different numbers of input channels", where)
        shape = len(fr)
        out.append(fr)
    return out


def _approx_at(kernels: list, d: int) -> tuple[list, list, float]:
    scale = 2 ** d
    approx, errors, worst = [], [], 0.0
    for fr in kernels:
        a_k, e_k = [], []
        for chan in fr:
            a_c, e_c = [], []
            for row in chan:
                a_r, e_r = [], []
                for v in row:
                    n = math.floor(v * scale + Fraction(1, 2))   # round half up, exact
                    err = abs(Fraction(n, scale) - v)
                    a_r.append(int(n))
                    e_r.append(float(err))
                    worst = max(worst, float(err))
                a_c.append(a_r)
                e_c.append(e_r)
            a_k.append(a_c)
            e_k.append(e_c)
        approx.append(a_k)
        errors.append(e_k)
    return approx, errors, worst


def _zeroes_a_kernel(kernels: list, d: int) -> bool:
    """A loose tolerance must not pick a d so coarse that some kernel rounds to nothing."""
    approx = _approx_at(kernels, d)[0]
    return any(all(n == 0 for chan in a for row in chan for n in row)
               and any(v for chan in given for row in chan for v in row)
               for a, given in zip(approx, kernels))


def _short(n: int) -> str:
    return str(n) if abs(n) < 10 ** 6 else f"{n:.3e}"


def approximate(ks: KernelSet, d: int | None = None, tolerance: float = 1e-9,
                max_kernels: int | None = None) -> Approximation:
    """Approximate every kernel to multiples of 1/2^d and build its Goal."""
    kernels = check_kernels(ks, max_kernels)
    chosen: int | None
    if d is not None:
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise InputError(f"d must be a non-negative integer, got {d!r}", "d")
        if d > MAX_D:
            raise InputError(f"d = {d} makes the search space unreasonable (up to 2^{d} Atoms per pixel); "
                             f"the limit is {MAX_D}", "d")
        chosen = d
    else:
        if not (tolerance >= 0 and math.isfinite(tolerance)):
            raise InputError(f"tolerance must be a non-negative number, got {tolerance!r}", "tolerance")
        chosen = next((dd for dd in range(MAX_D + 1)
                       if _approx_at(kernels, dd)[2] <= tolerance and not _zeroes_a_kernel(kernels, dd)),
                      None)
        if chosen is None:
            raise InputError(f"no d up to {MAX_D} approximates the kernels within {tolerance:g}; "
                             f"give d explicitly or raise the tolerance", "d")
    approx, errors, worst = _approx_at(kernels, chosen)
    goals = []
    for i, (k, a) in enumerate(zip(ks.kernels, approx)):
        where = f"kernels[{i}] ({k.name})"
        coefs: dict[tuple[int, int, int], int] = {}
        total = 0
        for z, chan in enumerate(a):
            h, w = len(chan), len(chan[0])
            for r, row in enumerate(chan):
                for c, n in enumerate(row):
                    if n:
                        if abs(n) > MAX_COEF:
                            raise InputError(f"coefficient {_short(n)}/2^{chosen} is too large for the search "
                                             f"(limit {MAX_COEF} Atoms); use a smaller d", where)
                        coefs[(c - w // 2, h // 2 - r, z)] = n
                        total += abs(n)
        if not coefs:
            raise InputError(f"kernel is all zeros (after approximation to 1/2^{chosen})", where)
        if total > MAX_ATOMS:
            raise InputError(f"kernel needs {total} Atoms at d = {chosen}; the limit is {MAX_ATOMS}: "
                             f"use a smaller d", where)
        goals.append(make_goal(coefs))
    flat = [a if len(a) > 1 else a[0] for a in approx]
    flat_e = [e if len(e) > 1 else e[0] for e in errors]
    return Approximation([k.name for k in ks.kernels], chosen, len(kernels[0]), goals, flat, flat_e, worst)
