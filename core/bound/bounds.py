"""Lower bounds of off-chip traffic: one proven for the machine model, and the paper's formula.

The machine: DRAM and one on-chip memory of S words; every word loaded or stored costs one; a MAC
out[o] += in[i] * w[k] needs its input, its weight and the running partial sum of o on chip; each
MAC is done once (no recomputation, no Winograd/FFT rewriting of the sums) and each output is
accumulated in one running sum; zero padding is made on chip. `segment_bound` is a red-blue pebble
(Hong-Kung segment) argument for this machine, exact for finite layers (no x' ~ D*x, no dropped
terms); docs/bound.md gives the proof. In short: cut any schedule into segments of M reads, where
creating a partial sum counts as reading a zero (that adds O reads, and the O final stores pay for
them). A segment can only use what was on chip at its start (<= S words) or read in it, so its
MACs V have |inputs| + |weights| + |outputs| <= S + M, and by the Loomis-Whitney inequality with
the exact window reuse R, |V| <= sqrt(R |inputs| |weights| |outputs|), also at most the MACs one
output, weight or input takes part in times their number. With F(S + M) the most MACs such a
segment can hold, Q >= (ceil(MACs / F(S + M)) - 1) * M for every M; leading term 2 MACs / sqrt(R S).

The paper's 2 MACs / sqrt(R S) + outputs (Chen, Han, Wang, HPCA 2020) assumes x' ~ D*x and
HkWkCi >> sqrt(RS); it is kept as `paper`, labelled asymptotic: real dataflows can move less.
Compulsory traffic (every input some window reads, every weight, every output moved once) is the
other proven bound. `cut_bound` adds to it the words that must come back: cut the schedule into runs of
equal MAC counts; a word used in several runs is on chip at the cuts between them (S words at most at
each cut) or is moved again.
`reference` is the largest of the three (never their sum).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from core.bound.geometry import Axis, axis_counts, max_reuse, phase_classes, rows_used
from core.bound.shapes import ConvShape
from core.results import optional_key

# Segment lengths M tried, as S * 2^(k/8): every M gives a valid bound, so the search only decides how
# good it is: a coarse pass over k = -40..48, then the neighbours of the best.
_COARSE = range(-40, 49, 4)
# The cut bound's geometric pass over the number of runs stops at 32 * 2^(_CUT_STEPS / 8) (about 34
# million runs): a memory of a few words would otherwise walk it for ever; any number gives a valid bound.
_CUT_STEPS = 160


def matmul_bound(A: int, B: int, C: int, S: int) -> float:
    """The paper's reads to multiply an A x C by a C x B matrix with S words on chip (asymptotic)."""
    return 2.0 * A * B * C / math.sqrt(S)


def axes(shape: ConvShape) -> tuple[Axis, Axis]:
    return (Axis(shape.Ho, shape.Hi, shape.Hk, shape.stride, shape.pad, shape.dilation),
            Axis(shape.Wo, shape.Wi, shape.Wk, shape.stride, shape.pad, shape.dilation))


def window_reuse(shape: ConvShape) -> int:
    """R: the most (output position, kernel tap) pairs that read one input element (1 for 1x1 kernels)."""
    ay, ax = axes(shape)
    return max(1, max_reuse(ay) * max_reuse(ax))


def paper_reuse(shape: ConvShape) -> float:
    """The paper's approximation R ~ Hk*Wk/D^2 (at least 1)."""
    return max(1.0, shape.Hk * shape.Wk / shape.stride ** 2)


@dataclass(frozen=True)
class MacCounts:
    """What the segment argument needs about a layer's MACs (padding MACs excluded: they multiply
    zeros made on chip and are never needed)."""

    macs: int             # MACs whose input is a real element
    R: float              # most MACs of one output channel reading one input element (or R_phase, below)
    per_output: float     # most MACs of one output (math.inf: no cap)
    per_weight: float     # most MACs of one weight
    per_input: float      # most MACs of one input element (R times the output channels of its group)


def phase_reuse(shape: ConvShape, counts: MacCounts | None = None) -> float:
    """R_phase = (MACs / sum over stride phases c of MACs_c / sqrt(R_c))^2: the window reuse that the
    phase argument (docs/bound.md, Lemma 4) charges, at most R and equal to it for stride 1. A phase is
    a pair of per-axis residue classes of taps (geometry.phase_classes): its MACs read only its own
    inputs and use only its own weights, and R_c is its own most reuse. Lowered by a relative 1e-9 so
    that rounding never raises the bound."""
    ay, ax = axes(shape)
    spread = 1.0
    for a in (ay, ax):
        spread *= sum(pairs / math.sqrt(reuse) for pairs, reuse in phase_classes(a))
    c = counts or mac_counts(shape)
    if spread <= 0 or c.macs == 0:
        return float(c.R)
    per_channel = c.macs / (shape.B * shape.Co * shape.Cig)      # real (output position, tap) pairs
    return min(float(c.R), (per_channel / spread) ** 2) * (1 - 1e-9)


def phase_counts(shape: ConvShape, counts: MacCounts | None = None) -> MacCounts:
    """The counts the phase argument runs the segment bound with: R_phase, no per-word caps."""
    c = counts or mac_counts(shape)
    return MacCounts(macs=c.macs, R=phase_reuse(shape, c), per_output=math.inf, per_weight=math.inf,
                     per_input=math.inf)


def mac_counts(shape: ConvShape) -> MacCounts:
    cy, cx = (axis_counts(a) for a in axes(shape))
    R = max(1, cy.reuse * cx.reuse)
    return MacCounts(macs=shape.B * shape.Co * shape.Cig * cy.pairs * cx.pairs, R=R,
                     per_output=shape.Cig * cy.taps_per_output * cx.taps_per_output,
                     per_weight=shape.B * cy.outputs_per_tap * cx.outputs_per_tap,
                     per_input=shape.Cog * R)


def segment_macs(X: float, c: MacCounts) -> float:
    """F(X): an upper bound on the MACs of a set whose inputs, weights and outputs number X in all.

    The largest v with some a + b + c <= X (inputs a, weights b, outputs c) such that
    v <= sqrt(R a b c) (Loomis-Whitney), v <= a * per_input, v <= b * per_weight, v <= c * per_output,
    and v <= MACs. Read backwards: the fewest items v MACs need, X_min(v) = min a + b + c subject to
    a, b, c >= v / K (K the caps) and a b c >= v^2 / R, rises with v; its minimiser lifts the smallest
    lower bounds to a common level (water filling), which gives X_min in closed form on four ranges
    of v. F inverts it; raised by a relative 1e-9 against rounding, so never below the true maximum."""
    if X <= 0 or c.macs == 0:
        return 0.0
    R = float(c.R)
    K1, K2, K3 = sorted((float(c.per_input), float(c.per_weight), float(c.per_output)), reverse=True)
    if math.isinf(K3):                            # no caps (the phase argument)
        return min(math.sqrt(R) * (X / 3) ** 1.5, float(c.macs)) * (1 + 1e-9)
    # X_min(v) where the ranges of v meet: K3^3/R (X = 3 K3^2 / R), K2^2 K3/R and K1 K2 K3/R
    v2, v3 = K2 ** 2 * K3 / R, K1 * K2 * K3 / R
    x1 = 3 * K3 ** 2 / R
    x2 = 2 * math.sqrt(v2 * K3 / R) + v2 / K3
    x3 = K2 * K3 / R + v3 / K2 + v3 / K3
    if X <= x1:                                   # no cap binds: a = b = c = X / 3
        v = math.sqrt(R) * (X / 3) ** 1.5
    elif X <= x2:                                 # the smallest cap binds: two at level s, 2s + R s^2 / K3^2 = X
        e = R * X / K3 ** 2
        s = K3 ** 2 / R * e / (math.sqrt(1 + e) + 1)
        v = R * s * s / K3
    elif X <= x3:                                 # two caps bind, the third at K2 K3 / R
        v = (X - K2 * K3 / R) / (1 / K2 + 1 / K3)
    else:                                         # all three caps bind
        v = X / (1 / K1 + 1 / K2 + 1 / K3)
    return min(v, float(c.macs)) * (1 + 1e-9)


def segment_words(v: float, c: MacCounts) -> float:
    """X_min(v): the fewest inputs, weights and outputs (in all) among which v MACs can lie, the
    inverse of `segment_macs` (the same four ranges, read forwards); lowered by a relative 1e-9 so that
    rounding never puts it above the true minimum. Infinite past the layer's MACs."""
    if v <= 0:
        return 0.0
    if v > c.macs * (1 + 1e-9):
        return math.inf
    R = float(c.R)
    K1, K2, K3 = sorted((float(c.per_input), float(c.per_weight), float(c.per_output)), reverse=True)
    if math.isinf(K3) or v <= K3 ** 3 / R:        # no cap binds: a = b = c
        x = 3 * (v * v / R) ** (1 / 3)
    elif v <= K2 ** 2 * K3 / R:                   # the smallest cap binds
        x = 2 * math.sqrt(v * K3 / R) + v / K3
    elif v <= K1 * K2 * K3 / R:                   # two caps bind
        x = K2 * K3 / R + v / K2 + v / K3
    else:                                         # all three
        x = v * (1 / K1 + 1 / K2 + 1 / K3)
    return x * (1 - 1e-9)


@dataclass(frozen=True)
class SegmentBound:
    """Q >= n*M + y: n full segments of M reads (n = ceil((MACs - F(M)) / F(S + M))) and the y reads
    the last, partial segment needs for the MACs the full ones cannot hold; the best over M."""

    total: float
    reads_per_segment: int      # M that gave the bound
    macs_per_segment: float     # F(S + M): most MACs one segment can do
    last_segment: float = 0.0   # y: reads the last segment needs (part of total)
    # set when the phase argument gave the bound (a strided layer, docs/bound.md Lemma 4): its R_phase;
    # macs_per_segment then counts MACs weighted by sqrt(R_phase / R_c) of their phase c
    phase_reuse: float | None = optional_key()


def segment_bound(shape: ConvShape, S: int, counts: MacCounts | None = None) -> SegmentBound:
    """The segment bound for S words (docs/bound.md, "The proven bound"). The first segment starts
    with nothing on chip, so it holds at most F(M) MACs, every later full one F(S + M), and a last
    segment of y < M reads F(S + y)."""
    c = counts or mac_counts(shape)

    def at(k: int) -> SegmentBound:
        M = max(1, round(S * 2.0 ** (k / 8)))
        f = segment_macs(S + M, c)
        if f <= 0:
            return SegmentBound(0.0, M, f)
        first = segment_macs(M, c)
        if first >= c.macs:                       # one segment, nothing on chip at its start: F(y) >= MACs
            y = math.floor(segment_words(c.macs, c))
            return SegmentBound(float(y), M, f, float(y))
        # n full segments of M reads then y < M: MACs <= F(M) + (n - 1) F(S + M) + F(S + y)
        n = max(1, math.ceil((c.macs - first) / f))
        rest = c.macs - first - (n - 1) * f
        y = max(0, math.floor(segment_words(rest, c) - S)) if rest > segment_macs(S, c) else 0
        y = min(y, M)
        return SegmentBound(float(n * M + y), M, f, float(y))

    k0 = max(_COARSE, key=lambda k: at(k).total)
    return max((at(k) for k in range(k0 - 3, k0 + 4)), key=lambda b: b.total)


@dataclass(frozen=True)
class PaperFormula:
    """The paper's 2*MACs/sqrt(R*S) + output writes: asymptotic, not a bound (dataflows can move less)."""

    reads: float               # 2 * MACs / sqrt(R * S) ...
    writes: int                # ... plus every output written once
    total: float               # reads + writes

    @classmethod
    def of(cls, reads: float, writes: int) -> "PaperFormula":
        return cls(reads=reads, writes=writes, total=reads + writes)


@dataclass(frozen=True)
class Compulsory:
    """Traffic every schedule moves: each input some window reads, each weight used, each output once."""

    inputs: int
    weights: int
    outputs: int
    total: int                 # inputs + weights + outputs

    @classmethod
    def of(cls, inputs: int, weights: int, outputs: int) -> "Compulsory":
        return cls(inputs=inputs, weights=weights, outputs=outputs, total=inputs + weights + outputs)


@dataclass(frozen=True)
class CutBound:
    """Compulsory traffic plus the words that must leave the chip and come back: cut the schedule into
    `parts` runs of equal MAC counts; a word used in several runs is on chip at the cuts between them
    (at most S words at each of the parts - 1 cuts) or moves again (docs/bound.md, "The cut bound")."""

    crossing: float            # a lower bound on the uses beyond each word's first, summed over the words
    #                            (2 parts: the words used both before and after the middle MAC)
    total: float               # compulsory + max(0, crossing - (parts - 1) * S)
    parts: int | None = optional_key()   # the runs the MACs are cut into; None (results of version 6): 2


def repeat_uses(c: MacCounts, sizes: tuple[int, int, int], parts: int) -> float:
    """A lower bound on sum over words w of (|U_w| - 1), where U_w is the set of runs that use w when the
    MACs, in any order, are cut into `parts` runs of at least v = floor(MACs / parts) MACs each.

    Run i touches fractions t_Ti = |T(V_i)| / |T| of the inputs, weights and outputs the layer needs
    (`sizes`, so t <= 1) with prod_T t_Ti >= v^2 / (R |X||W||O|) (Lemma 1) and t_Ti >= v / (K_T |T|)
    (the caps), and every needed word is used by some run: sum_i t_Ti >= 1. The sum is
    sum_T |T| (sum_i t_Ti - 1). Minimising it is a convex program (linear cost; Lemma 1's constraint is
    a superlevel set of a geometric mean) that is symmetric in the runs, so a minimiser has all runs
    alike: t_T = clamp(lam / (parts |T|), max(1 / parts, lo_T), 1), the KKT conditions, for the lam at
    which the product meets Lemma 1's bound. The product is nondecreasing in lam and piecewise of the
    form lam^k times a constant between the six points where a t_T starts or stops moving, so lam is
    solved in closed form on the piece where the bound is met. Lowered by a relative 1e-9 against
    rounding, so never above the true minimum."""
    m = parts
    if m < 2 or c.macs < m or min(sizes) <= 0:
        return 0.0
    v = float(c.macs // m)
    caps = (float(c.per_input), float(c.per_weight), float(c.per_output))
    C = [float(n) for n in sizes]
    lo = [min(1.0, max(1.0 / m, v / (k * n))) for k, n in zip(caps, C)]
    need = 2 * math.log(v) - math.log(c.R) - sum(math.log(n) for n in C)

    def ts(lam: float) -> list[float]:
        return [min(1.0, max(l, lam / (m * n))) for l, n in zip(lo, C)]

    def logprod(lam: float) -> float:
        return sum(math.log(x) for x in ts(lam))

    lam = 0.0
    if logprod(0.0) < need:
        points = sorted({m * n * l for n, l in zip(C, lo)} | {m * n for n in C})
        prev = 0.0
        for b in points:                 # the last point has every t_T = 1, which meets any bound Lemma 1 allows
            if logprod(b) >= need:
                break
            prev = b
        mid = (prev + b) / 2
        free = [i for i, (n, l) in enumerate(zip(C, lo)) if m * n * l < mid < m * n]
        fixed = sum(math.log(x) for i, x in enumerate(ts(mid)) if i not in free)
        lam = b
        if free:
            lam = min(b, max(prev, math.exp((need - fixed + sum(math.log(m * C[i]) for i in free)) / len(free))))
    return sum(n * max(0.0, m * x - 1) for n, x in zip(C, ts(lam))) * (1 - 1e-9)


def cut_bound(c: MacCounts, compulsory: "Compulsory", S: int) -> CutBound:
    """Q >= compulsory + (crossing - (parts - 1) S) for every number of parts (see `CutBound`); the
    largest over parts 2..32, then 32 * 2^(k/8) while a run still touches more than 2 S words (beyond
    that each further cut removes more than its run adds; at most _CUT_STEPS of them), then up to eight
    whole steps each way from the best."""
    sizes = (compulsory.inputs, compulsory.weights, compulsory.outputs)

    def at(m: int) -> CutBound:
        uses = repeat_uses(c, sizes, m)
        return CutBound(crossing=uses, total=compulsory.total + max(0.0, math.floor(uses - (m - 1) * S)),
                        parts=m)

    tried = {m: at(m) for m in range(2, min(32, c.macs) + 1)}
    for k in range(1, _CUT_STEPS + 1):
        m = math.ceil(32 * 2 ** (k / 8))
        if m > c.macs:
            break
        tried[m] = b = at(m)
        if (compulsory.total + b.crossing) / m < 2 * S:
            break
    best = max(tried.values(), key=lambda b: (b.total, -(b.parts or 2)))
    for step in (-1, 1):                 # a few whole steps from the best while they gain
        m = (best.parts or 2) + step
        for _ in range(8):
            if not 2 <= m <= c.macs or m in tried:
                break
            tried[m] = b = at(m)
            if b.total <= best.total:
                break
            best, m = b, m + step
    return best


@dataclass(frozen=True)
class LayerBound:
    """A layer's bounds at S words, also as the bound engine's result stores them (core.bound.result):
    built by `conv_bound`, which fills the totals and `reference` from the parts."""

    R: int                     # most windows reading one input element
    R_paper: float
    macs_real: int             # MACs with a real (not padding) input
    segment: SegmentBound      # proven
    paper: PaperFormula        # asymptotic
    compulsory: Compulsory     # proven
    # The proven lower bound: the largest of the segment bound, the compulsory traffic and the cut bound
    # (each holds for every schedule of the machine model, so their maximum does; their sum would not).
    # No schedule moves less.
    reference: float
    cut: CutBound | None = optional_key()    # proven; None in results stored before version 6

    def binding(self) -> str:
        """Which proven bound gives `reference`: "cut", "compulsory", "phase" (the segment bound from the
        stride phases) or "segment"."""
        if self.cut is not None and self.cut.total > max(self.segment.total, self.compulsory.total):
            return "cut"
        if self.segment.total <= self.compulsory.total:
            return "compulsory"
        return "phase" if self.segment.phase_reuse is not None else "segment"


def compulsory_inputs(shape: ConvShape) -> int:
    """Input elements some window reads (padding and rows a stride skips are never needed)."""
    ay, ax = axes(shape)
    return shape.B * shape.Ci * rows_used(ay) * rows_used(ax)


def compulsory_weights(shape: ConvShape) -> int:
    """Weights some MAC with a real input uses: all of them, unless a kernel tap only ever meets
    padding (a kernel wider than a padded, tiny or dilated map)."""
    cy, cx = (axis_counts(a) for a in axes(shape))
    return shape.Co * shape.Cig * cy.taps_used * cx.taps_used


def conv_bound(shape: ConvShape, S: int) -> LayerBound:
    """The proven bound, the paper's asymptotic formula and the compulsory traffic for S words."""
    c = mac_counts(shape)
    segment = segment_bound(shape, S, c)
    phased = phase_counts(shape, c)
    if phased.R < c.R * (1 - 1e-6):     # strided: the phases charge less reuse than R (and no caps)
        by_phase = segment_bound(shape, S, phased)
        if by_phase.total > segment.total:
            segment = dataclasses.replace(by_phase, phase_reuse=phased.R)
    compulsory = Compulsory.of(compulsory_inputs(shape), compulsory_weights(shape), shape.outputs)
    cut = cut_bound(c, compulsory, S)
    return LayerBound(R=int(c.R), R_paper=paper_reuse(shape), macs_real=c.macs, segment=segment,
                      paper=PaperFormula.of(2.0 * shape.macs / math.sqrt(c.R * S), shape.outputs),
                      compulsory=compulsory, cut=cut,
                      reference=max(segment.total, float(compulsory.total), cut.total))
