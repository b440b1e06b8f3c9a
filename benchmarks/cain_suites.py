"""Kernel suites for comparing the `cain` search with the published Cain tool (issue 15).

Suites, not single filters: random sets drawn with fixed seeds as in Cain's eq. 15 (1-4 kernels of
u/8, u uniform in 0..8), random 5x5 sets, and classic filter pairs and banks (edge, blur, sharpen,
Laplacian/LoG, Gabor-like). Every kernel is exact in binary (denominator a power of two), so both
tools search for the very same kernels and no approximation choice differs between them.

About a third of the sets of every suite is held aside, picked by a fixed draw (HOLDOUT_SEED): they
are never used for tuning and are reported separately. The draw does not depend on anything the
search does, so the split cannot be moved after seeing results.

A second, fresh suite (`draw == "issue 28"`) was drawn on 2026-11-27, after the engine's own search
replaced the translated one, from one seed (FRESH_SEED) through seeded families: eq. 15 and random
5x5 sets, and structured filters (difference of Gaussians, Laplacian of Gaussian, compass banks,
sharpen, unsharp masking, diagonal edges, blur + Laplacian pairs) whose parameters the draw picks.
Every fresh set is held aside: none was run by anyone before the final comparison.

    from benchmarks.cain_suites import suites, tuning_sets, held_aside_sets
    .venv/bin/python benchmarks/cain_suites.py [--write DIR] [--json]   # list, or write kernel files

Each set's `kernel_set.to_json()` is the format `python main.py cain --kernels FILE` reads.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.study.generate import random_kernels  # noqa: E402
from core.workload import Kernel, KernelSet  # noqa: E402

HOLDOUT_SEED = 20261123     # the draw that picks the held-aside sets of each suite
FRESH_SEED = 20261127       # the draw of the fresh suite (issue 28)
SUITES = ("eq15", "random5x5", "edge", "blur", "sharpen", "laplacian", "gabor")


@dataclass(frozen=True)
class SuiteSet:
    """One kernel set of a suite: what both tools compile, and whether it is held aside."""

    name: str                   # unique, used by --sets and as the cache key's readable part
    suite: str                  # one of SUITES
    kernel_set: KernelSet
    held_aside: bool
    seed: int | None = None     # the draw's seed for random sets
    note: str = ""
    draw: str = "issue 15"      # when the set was drawn: "issue 15" (tuning and held aside) or "issue 28" (fresh)

    @property
    def kernels(self) -> list[Kernel]:
        return self.kernel_set.kernels

    def kernels_json(self) -> dict[str, Any]:
        """The kernel file `main.py cain --kernels` reads."""
        return self.kernel_set.to_json()

    def fractions(self) -> list[list[list[float]]]:
        """Each kernel's coefficients as numbers (rows north to south)."""
        den = self.kernel_set.denominator
        return [[[v / den for v in row] for row in k.values] for k in self.kernels]


# ---- random sets ------------------------------------------------------------------------------

# (count, seeds): eq. 15 filters of 1-4 kernels; seeds are distinct so no two sets share kernels.
_EQ15 = {1: (101, 102, 103), 2: (201, 202, 203, 204), 3: (301, 302, 303), 4: (401, 402, 403)}
_RAND5 = {1: (501, 502), 2: (511,)}


def _random(count: int, seed: int, size: int) -> KernelSet:
    tag = "eq15" if size == 3 else "rand5x5"
    d = random_kernels({"count": count, "seed": seed, "size": size, "max": 8, "denominator": 8,
                        "name": f"{tag} x{count} seed {seed}"}, "suite")
    return KernelSet.from_json(d)


# ---- classic filters --------------------------------------------------------------------------


def _ks(name: str, denominator: int, *kernels: tuple[str, list[list[int]]]) -> KernelSet:
    return KernelSet(name=name, denominator=denominator, kernels=[Kernel(n, [list(r) for r in m]) for n, m in kernels])


def _t(m: list[list[int]]) -> list[list[int]]:
    return [list(r) for r in zip(*m)]


def _rot90(m: list[list[int]]) -> list[list[int]]:
    """Clockwise quarter turn (a compass bank's next direction)."""
    return [list(r) for r in zip(*m[::-1])]


def _pad5(m: list[list[int]]) -> list[list[int]]:
    z = [0] * 5
    return [z, *[[0, *r, 0] for r in m], z]


def _outer(a: list[int], b: list[int]) -> list[list[int]]:
    return [[x * y for y in b] for x in a]


def _gabor(size: int, theta_deg: float, wavelength: float, sigma: float, phase: float, scale: int) -> list[list[int]]:
    """A Gabor-like kernel rounded to integers over `scale` (so it is exact in binary)."""
    r, th = size // 2, math.radians(theta_deg)
    out = []
    for y in range(r, -r - 1, -1):           # rows north to south
        row = []
        for x in range(-r, r + 1):
            xp = x * math.cos(th) + y * math.sin(th)
            g = math.exp(-(x * x + y * y) / (2 * sigma * sigma)) * math.cos(2 * math.pi * xp / wavelength + phase)
            row.append(math.floor(g * scale + 0.5))
        out.append(row)
    return out


SOBEL_X = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
PREWITT_X = [[-1, 0, 1], [-1, 0, 1], [-1, 0, 1]]
SCHARR_X = [[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]]
SOBEL5_X = _outer([1, 4, 6, 4, 1], [-1, -2, 0, 2, 1])
ROBERTS = ([[0, 0, 0], [0, 1, 0], [0, 0, -1]], [[0, 0, 0], [0, 0, 1], [0, -1, 0]])
KIRSCH_N = [[5, 5, 5], [-3, 0, -3], [-3, -3, -3]]
G3 = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
BINOM5 = _outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1])
LAP4 = [[0, 1, 0], [1, -4, 1], [0, 1, 0]]
LAP8 = [[1, 1, 1], [1, -8, 1], [1, 1, 1]]
LOG5 = [[0, 0, -1, 0, 0], [0, -1, -2, -1, 0], [-1, -2, 16, -2, -1], [0, -1, -2, -1, 0], [0, 0, -1, 0, 0]]


def _classic() -> list[tuple[str, str, KernelSet, str]]:
    """(suite, name, kernels, note) of the classic filter pairs and banks."""
    kirsch = [KIRSCH_N]
    for _ in range(3):
        kirsch.append(_rot90(kirsch[-1]))
    return [
        ("edge", "sobel-xy", _ks("Sobel x, y", 1, ("sx", SOBEL_X), ("sy", _t(SOBEL_X))), "edge pair"),
        ("edge", "prewitt-xy", _ks("Prewitt x, y", 1, ("px", PREWITT_X), ("py", _t(PREWITT_X))), "edge pair"),
        ("edge", "scharr-xy", _ks("Scharr x, y", 1, ("sx", SCHARR_X), ("sy", _t(SCHARR_X))),
         "edge pair, large coefficients"),
        ("edge", "sobel5-xy", _ks("5x5 Sobel x, y", 1, ("sx", SOBEL5_X), ("sy", _t(SOBEL5_X))), "5x5 edge pair"),
        ("edge", "kirsch-4", _ks("Kirsch compass N, E, S, W", 1, *[(f"k{i}", m) for i, m in enumerate(kirsch)]),
         "compass bank of 4"),
        ("blur", "box3", _ks("3x3 box over 8", 8, ("box", [[1] * 3] * 3)), "box blur (sum 9/8)"),
        ("blur", "binomial5", _ks("5x5 binomial", 256, ("b5", BINOM5)), "blur, d = 8"),
        ("blur", "gauss3+box3", _ks("3x3 Gaussian and box", 16, ("g3", G3), ("box", [[2] * 3] * 3)), "blur bank"),
        ("sharpen", "sharpen4", _ks("sharpen (4-neighbour)", 1, ("sh", [[0, -1, 0], [-1, 5, -1], [0, -1, 0]])), ""),
        ("sharpen", "sharpen8", _ks("sharpen (8-neighbour)", 1, ("sh", [[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]])),
         ""),
        ("sharpen", "sharpen+blur", _ks("sharpen and blur", 16, ("sh", [[0, -16, 0], [-16, 80, -16], [0, -16, 0]]),
                                        ("g3", G3)), "pair"),
        ("laplacian", "log5", _ks("5x5 Laplacian of Gaussian", 1, ("log", LOG5)), "large integer centre"),
        ("laplacian", "lap4+lap8", _ks("Laplacians 4 and 8", 1, ("l4", LAP4), ("l8", LAP8)), "pair"),
        ("laplacian", "log5+gauss3", _ks("LoG and 3x3 Gaussian", 16, ("log", [[16 * v for v in r] for r in LOG5]),
                                         ("g3", _pad5(G3))), "pair, 5x5 + 3x3"),
        ("gabor", "gabor3-0-90", _ks("Gabor-like 3x3, 0 and 90 deg", 8, ("g0", _gabor(3, 0, 4, 1.0, 0, 8)),
                                     ("g90", _gabor(3, 90, 4, 1.0, 0, 8))), "even phase, over 8"),
        ("gabor", "gabor3-odd", _ks("Gabor-like 3x3, odd phase, 0/45/90", 8,
                                    *[(f"g{a}", _gabor(3, a, 4, 1.0, -math.pi / 2, 8)) for a in (0, 45, 90)]),
         "odd phase bank of 3"),
        ("gabor", "gabor5-45-135", _ks("Gabor-like 5x5, 45 and 135 deg", 4, ("g45", _gabor(5, 45, 4, 1.2, 0, 4)),
                                       ("g135", _gabor(5, 135, 4, 1.2, 0, 4))), "5x5 pair, over 4"),
    ]


def _gauss(size: int, sigma: float) -> list[list[float]]:
    r = size // 2
    g = [[math.exp(-(x * x + y * y) / (2 * sigma * sigma)) for x in range(-r, r + 1)] for y in range(-r, r + 1)]
    total = sum(map(sum, g))
    return [[v / total for v in row] for row in g]


def _fresh() -> list[tuple[str, str, KernelSet, int | None, str]]:
    """The suite drawn for issue 28: (suite, name, kernels, seed, note), every parameter from FRESH_SEED."""
    rng = random.Random(FRESH_SEED)
    rows: list[tuple[str, str, KernelSet, int | None, str]] = []
    for count in (2, 3, 4):
        seed = rng.randrange(1000, 10 ** 6)
        rows.append(("eq15", f"f-eq15-k{count}-s{seed}", _random(count, seed, 3), seed, f"eq. 15, {count} kernels"))
    for count in (1, 2):
        seed = rng.randrange(1000, 10 ** 6)
        rows.append(("random5x5", f"f-rand5-k{count}-s{seed}", _random(count, seed, 5), seed,
                     f"5x5 u/8, {count} kernel(s)"))
    s1, s2 = rng.uniform(0.6, 1.0), rng.uniform(1.2, 2.0)
    g1, g2 = _gauss(5, s1), _gauss(5, s2)
    dog = [[math.floor(64 * (a - b) + 0.5) for a, b in zip(r1, r2)] for r1, r2 in zip(g1, g2)]
    rows.append(("laplacian", "f-dog5", _ks(f"DoG 5x5 sigma {s1:.2f}/{s2:.2f}", 64, ("dog", dog)), None, "DoG over 64"))
    sig = rng.uniform(0.8, 1.4)
    log = [[(x * x + y * y - 2 * sig * sig) * math.exp(-(x * x + y * y) / (2 * sig * sig))
            for x in range(-2, 3)] for y in range(-2, 3)]
    scale = 16 / max(abs(v) for r in log for v in r)
    log_i = [[math.floor(-v * scale + 0.5) for v in r] for r in log]
    rows.append(("laplacian", "f-log5", _ks(f"LoG 5x5 sigma {sig:.2f}", 16, ("log", log_i)), None, "LoG over 16"))
    robinson = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
    prewitt_c = [[-1, 1, 1], [-1, -2, 1], [-1, 1, 1]]
    base = robinson if rng.random() < 0.5 else prewitt_c
    bank = [base]
    for _ in range(3):                       # 45-degree steps of the outer ring
        m = bank[-1]
        ring = [m[0][0], m[0][1], m[0][2], m[1][2], m[2][2], m[2][1], m[2][0], m[1][0]]
        ring = ring[-1:] + ring[:-1]
        bank.append([[ring[0], ring[1], ring[2]], [ring[7], m[1][1], ring[3]], [ring[6], ring[5], ring[4]]])
    rows.append(("edge", "f-compass4", _ks("compass bank N, NE, E, SE", 1, *[(f"c{i}", m) for i, m in enumerate(bank)]),
                 None, "compass bank of 4 (45-degree steps)"))
    k = rng.randint(5, 13)
    sharp = [[-1, -1, -1], [-1, k, -1], [-1, -1, -1]] if k > 8 else [[0, -1, 0], [-1, k, -1], [0, -1, 0]]
    rows.append(("sharpen", "f-sharpen", _ks(f"sharpen centre {k}", 1, ("sh", sharp)), None, "sharpen"))
    amount = rng.randint(1, 3)
    unsharp = [[-amount * v for v in row] for row in BINOM5]
    unsharp[2][2] += 256 * (1 + amount)
    rows.append(("sharpen", "f-unsharp5", _ks(f"unsharp mask amount {amount}", 256, ("us", unsharp)), None,
                 "5x5 unsharp mask over 256"))
    diag = [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]]
    rows.append(("edge", "f-sobel-diag", _ks("Sobel 45 and 135", 1, ("d45", diag), ("d135", [r[::-1] for r in diag])),
                 None, "diagonal edge pair"))
    a = rng.choice((1, 2, 4))
    rows.append(("blur", "f-gauss3+lap8", _ks(f"3x3 Gaussian and Laplacian x{a}", 16, ("g3", G3),
                                               ("l8", [[16 * a * v for v in r] for r in LAP8])), None, "blur + Laplacian"))
    return rows


def _hold_aside(entries: list[tuple[str, str]]) -> set[str]:
    """Names held aside: per suite, round(n/3) of its sets by a fixed draw."""
    rng = random.Random(HOLDOUT_SEED)
    held: set[str] = set()
    for suite in SUITES:
        names = sorted(n for s, n in entries if s == suite)
        held.update(rng.sample(names, round(len(names) / 3)))
    return held


@lru_cache(maxsize=1)
def _build() -> tuple[SuiteSet, ...]:
    rows: list[tuple[str, str, KernelSet, int | None, str]] = []
    for count, seeds in _EQ15.items():
        for seed in seeds:
            rows.append(("eq15", f"eq15-k{count}-s{seed}", _random(count, seed, 3), seed,
                         f"eq. 15, {count} kernel(s)"))
    for count, seeds in _RAND5.items():
        for seed in seeds:
            rows.append(("random5x5", f"rand5-k{count}-s{seed}", _random(count, seed, 5), seed,
                         f"5x5 u/8, {count} kernel(s)"))
    for suite, name, ks, note in _classic():
        rows.append((suite, name, ks, None, note))
    held = _hold_aside([(s, n) for s, n, *_ in rows])
    out = []
    for suite, name, ks, seed, note in rows:
        ks.validate(name)
        out.append(SuiteSet(name, suite, ks, name in held, seed, note))
    for suite, name, ks, seed, note in _fresh():
        ks.validate(name)
        out.append(SuiteSet(name, suite, ks, True, seed, note, draw="issue 28"))
    return tuple(out)


def suites() -> list[SuiteSet]:
    """Every set of every suite, in a fixed order."""
    return list(_build())


def tuning_sets() -> list[SuiteSet]:
    """The sets one may tune on."""
    return [s for s in _build() if not s.held_aside]


def held_aside_sets() -> list[SuiteSet]:
    """The sets never used for tuning (reported separately), the fresh suite included."""
    return [s for s in _build() if s.held_aside]


def fresh_sets() -> list[SuiteSet]:
    """The suite drawn for issue 28 (all held aside)."""
    return [s for s in _build() if s.draw == "issue 28"]


LOG_FAMILY_SEED = 2811      # the LoG family (tuning only), drawn 2026-11-28


@lru_cache(maxsize=1)
def log_family() -> tuple[SuiteSet, ...]:
    """A tuning family drawn after the held-aside 5x5 LoG loss was reported: integer 5x5 kernels of the
    LoG shape (a centre balancing rings of small negative integers at distance 1, the diagonals, distance
    2 and the knight positions), never the held-aside log5 itself. Not part of suites(): the comparison
    suites stay as they were drawn; `--sets logfam-0,...` runs them."""
    rng = random.Random(LOG_FAMILY_SEED)
    out: list[SuiteSet] = []
    while len(out) < 6:
        a, b, d = rng.randint(-3, -1), rng.randint(-2, 0), rng.randint(-2, 0)
        e = rng.choice([0, 0, -1])
        ring = {1: a, 2: b, 3: d, 4: e}             # by (|dy|, |dx|): N4, diagonal, distance 2, knight
        m = [[0] * 5 for _ in range(5)]
        for y in range(5):
            for x in range(5):
                dy, dx = abs(y - 2), abs(x - 2)
                kind = {(0, 1): 1, (1, 0): 1, (1, 1): 2, (0, 2): 3, (2, 0): 3, (1, 2): 4, (2, 1): 4}.get((dy, dx))
                if kind:
                    m[y][x] = ring[kind]
        m[2][2] = -sum(map(sum, m)) + rng.choice([0, 0, 1, 2])
        if m == LOG5 or any(s.kernels[0].values == m for s in out):
            continue
        ks = _ks(f"LoG-like 5x5 #{len(out)}", 1, ("k", m))
        ks.validate(f"logfam-{len(out)}")
        out.append(SuiteSet(f"logfam-{len(out)}", "laplacian", ks, False, LOG_FAMILY_SEED,
                            "LoG family (tuning)", draw="LoG family"))
    return tuple(out)


def by_name(names: list[str]) -> list[SuiteSet]:
    """The named sets, in the given order; ValueError naming an unknown one."""
    known = {s.name: s for s in (*_build(), *log_family())}
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"unknown set(s) {', '.join(bad)}; known: {', '.join(known)}")
    return [known[n] for n in names]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", type=Path, help="write one kernel file NAME.json per set into this folder")
    ap.add_argument("--json", action="store_true", help="print the suites as JSON")
    args = ap.parse_args(argv)
    sets = suites()
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        for s in sets:
            (args.write / f"{s.name}.json").write_text(json.dumps(s.kernels_json()) + "\n")
        print(f"wrote {len(sets)} kernel files to {args.write}")
    if args.json:
        print(json.dumps([{"name": s.name, "suite": s.suite, "held_aside": s.held_aside, "draw": s.draw, "seed": s.seed,
                           "note": s.note, "kernels": s.kernels_json()} for s in sets], indent=1))
    elif not args.write:
        for s in sets:
            sizes = ", ".join(f"{len(k.values)}x{len(k.values[0])}" for k in s.kernels)
            print(f"{s.name:22} {s.suite:10} {'held aside' if s.held_aside else 'tuning':10} {s.draw:8} "
                  f"{len(s.kernels)} kernel(s) {sizes} /{s.kernel_set.denominator}  {s.note}")
        print(f"{len(sets)} sets: {len(tuning_sets())} tuning, {len(held_aside_sets())} held aside")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
