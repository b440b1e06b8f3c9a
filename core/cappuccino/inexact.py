"""Per-layer inexact computing (section IV-C): pick a mode for every layer under an accuracy budget.

Modes are measured, never assumed: each configuration is run on the whole validation set with
the numpy reference (numerics.py emulates each mode exactly as the C program stores values).

Search: (1) all precise; (2) layer by layer, each layer alone in each inexact mode (the paper's
per-layer analysis); (3) combinations: all 3^L mode assignments when L <= 5 arithmetic layers,
otherwise a greedy pass that makes layers inexact in order of their single-layer accuracy loss
and keeps each change only while the budget holds. The chosen configuration has the most inexact
layers among those within the budget, then the most layers in the preferred mode, then the best
accuracy. When no configuration with an inexact layer is within the budget every layer stays
precise and the result says so.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import numpy as np

from core.cappuccino.forward import apply_node, last_reads
from core.cappuccino.model import INPUT, CnnModel, ConvOp
from core.cappuccino.numerics import IMPRECISE, INEXACT, MODES, PRECISE, RELAXED

EXHAUSTIVE_MAX_LAYERS = 5
Live = dict[str, tuple[np.ndarray, bool]]        # tensors still to be read -> (values, stored in binary16)


@dataclass
class Configuration:
    index: int
    stage: str                  # "all precise" | "single layer" | "combination" | "greedy"
    modes: dict[str, str]
    accuracy: float             # percent of validation images classified correctly
    drop: float                 # percentage points below all-precise
    inexact_layers: int
    within_budget: bool

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class ModeChoice:
    """The modes chosen under the budget and every configuration tried (the result's `inexact`)."""

    modes: dict[str, str]                       # layer -> precise | relaxed | imprecise
    accuracy: float                             # percent, with the chosen modes
    precise_accuracy: float
    budget_pp: float
    per_layer: dict[str, dict[str, float]]      # layer -> mode -> accuracy with only that layer inexact
    message: str
    all_precise_fallback: bool                  # True when the budget forced all-precise
    configurations: list[Configuration]

    def to_json(self) -> dict:
        return asdict(self)


class Evaluator:
    """Validation accuracy of a mode assignment, sharing the computed prefix of earlier runs.

    The state after a prefix of the (topologically ordered) ops is the set of tensors later ops
    still read; prefixes are cached up to PREFIX_CACHE_BYTES so big networks do not exhaust memory.
    """

    PREFIX_CACHE_BYTES = 512 * 2 ** 20

    def __init__(self, model: CnnModel, check: Callable[[], None] = lambda: None) -> None:
        self.model = model
        self.check = check
        self.names = [op.name for op in model.ops]
        self.last = last_reads(model)
        self._start: Live = {INPUT: (model.x_val, False)}
        self._prefix: dict[tuple, Live] = {(): self._start}
        self._bytes = 0
        self._acc: dict[tuple, float] = {}

    def key(self, modes: dict[str, str]) -> tuple:
        return tuple(modes.get(n, PRECISE) if isinstance(op, ConvOp) else "-"
                     for n, op in zip(self.names, self.model.ops))

    def accuracy(self, modes: dict[str, str]) -> float:
        key = self.key(modes)
        if key in self._acc:
            return self._acc[key]
        depth = max(i for i in range(len(key) + 1) if key[:i] in self._prefix)
        live = dict(self._prefix[key[:depth]])
        x = self.model.x_val
        for i in range(depth, len(key)):
            self.check()
            op = self.model.ops[i]
            x, half = apply_node(op, [live[t][0] for t in op.inputs], [live[t][1] for t in op.inputs],
                                 key[i] if key[i] != "-" else PRECISE)
            for t in set(op.inputs):
                if self.last[t] == i:
                    del live[t]
            live[op.name] = (x, half)
            if i < len(key) - 1:
                size = sum(a.nbytes for a, _ in live.values())
                if self._bytes + size > self.PREFIX_CACHE_BYTES:
                    self._prefix, self._bytes = {(): self._start}, 0
                if size <= self.PREFIX_CACHE_BYTES:
                    self._prefix[key[:i + 1]] = dict(live)
                    self._bytes += size
        pred = x.reshape(len(x), -1).argmax(1)
        acc = float(100.0 * (pred == self.model.y_val).mean())
        self._acc[key] = acc
        return acc


def search_modes(model: CnnModel, budget: float, prefer: str = IMPRECISE,
                 check: Callable[[], None] = lambda: None) -> Iterator[Configuration | ModeChoice]:
    """Yield every configuration as it is measured, then the ModeChoice."""
    if prefer not in INEXACT:
        raise ValueError(prefer)
    ev = Evaluator(model, check)
    layers = [op.name for op in model.conv_ops]
    configs: list[Configuration] = []
    seen: set[tuple] = set()

    def measure(modes: dict[str, str], stage: str) -> Configuration | None:
        full = {n: modes.get(n, PRECISE) for n in layers}
        key = ev.key(full)
        if key in seen:
            return None
        seen.add(key)
        acc = ev.accuracy(full)
        base = configs[0].accuracy if configs else acc
        drop = round(base - acc, 6)
        cfg = Configuration(len(configs), stage, full, acc, drop,
                            sum(m != PRECISE for m in full.values()), drop <= budget + 1e-9)
        configs.append(cfg)
        return cfg

    first = measure({}, "all precise")
    assert first is not None        # nothing was measured yet
    yield first
    per_layer: dict[str, dict[str, float]] = {n: {PRECISE: first.accuracy} for n in layers}
    for name in layers:
        for mode in INEXACT:
            cfg = measure({name: mode}, "single layer")
            if cfg is not None:
                per_layer[name][mode] = cfg.accuracy
                yield cfg
    if len(layers) <= EXHAUSTIVE_MAX_LAYERS:
        for combo in itertools.product(MODES, repeat=len(layers)):
            cfg = measure(dict(zip(layers, combo)), "combination")
            if cfg is not None:
                yield cfg
    else:
        other = RELAXED if prefer == IMPRECISE else IMPRECISE
        order = sorted(layers, key=lambda n: -max(per_layer[n][prefer], per_layer[n][other]))
        current: dict[str, str] = {}
        for name in order:
            for mode in (prefer, other):
                trial = dict(current, **{name: mode})
                cfg = measure(trial, "greedy")
                if cfg is None:
                    cfg = next(c for c in configs if c.modes == {n: trial.get(n, PRECISE) for n in layers})
                else:
                    yield cfg
                if cfg.within_budget:
                    current = trial
                    break
    ok = [c for c in configs if c.within_budget and c.inexact_layers > 0]
    if ok:
        best = max(ok, key=lambda c: (c.inexact_layers, sum(m == prefer for m in c.modes.values()), c.accuracy,
                                      -c.index))
        msg = (f"{best.inexact_layers} of {len(layers)} arithmetic layers inexact, accuracy {best.accuracy:.2f} % "
               f"({best.drop:+.2f} pp drop, budget {budget} pp)")
        yield ModeChoice(modes=best.modes, accuracy=best.accuracy, precise_accuracy=first.accuracy, budget_pp=budget,
                         per_layer=per_layer, message=msg, all_precise_fallback=False, configurations=configs)
    else:
        msg = (f"no configuration with an inexact layer stays within the {budget} pp budget "
               f"({len(configs)} tried); every layer stays precise")
        yield ModeChoice(modes=dict(first.modes), accuracy=first.accuracy, precise_accuracy=first.accuracy,
                         budget_pp=budget, per_layer=per_layer, message=msg, all_precise_fallback=True,
                         configurations=configs)
