"""Per-layer inexact computing (section IV-C): pick a mode for every layer under an accuracy budget.

Modes are measured, never assumed: each configuration is run on the validation images (all of
them, or a seeded sample for big networks: sample_rows) with the numpy reference (numerics.py
emulates each mode exactly as the C program stores values), computed incrementally from the cached
precise activations (forward.ActivationCache: only from the first layer whose output differs on),
which gives the same bits as a whole forward pass.

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
from typing import Any, Callable, Iterator

import numpy as np

from core.cappuccino.forward import ActivationCache, int8_problem, op_work
from core.cappuccino.model import INPUT, CnnModel, ConvOp
from core.cappuccino.numerics import IMPRECISE, INEXACT, INT8, PRECISE, RELAXED, int8_input_scale

EXHAUSTIVE_MAX_LAYERS = 5
SAMPLE_SEED = 0                 # the seed of the search's validation sample
SEARCH_GMAC_IMAGES = 40.0       # automatic sample: as many images as keep images x GMACs within this


def sample_rows(images: int, gmacs: float, requested: int = 0) -> np.ndarray | None:
    """The validation images the search measures: None (all) or a sorted seeded sample.

    `requested` > 0 asks for that many (all when there are fewer); 0 is automatic: every image
    while images x GMACs per image <= SEARCH_GMAC_IMAGES (the digits CNN's 360, the paper's
    networks' 8), else as many as fit, at least 1 (VGG-16: 2 of 8)."""
    n = requested if requested > 0 else max(1, int(SEARCH_GMAC_IMAGES // max(gmacs, 1e-12)))
    if n >= images:
        return None
    return np.sort(np.random.default_rng(SAMPLE_SEED).choice(images, n, replace=False))


def search_work(model: CnnModel, int8: bool = False, prefer: str = RELAXED) -> float:
    """The MACs per image the search is expected to compute (forward.op_work; the incremental cache
    recomputes from a changed layer to the end): a relaxed layer usually only itself (it meets no
    denormal, so the network stays precise after it), an imprecise or int8 one its suffix; every
    layer alone in each mode, then every combination (small networks) or a greedy trial per layer
    in the mode tried first (int8 where allowed, else the preferred one)."""
    cost = [op_work(op) for op in model.ops]
    suffix = [sum(cost[i:]) for i in range(len(cost))]
    at = [i for i, op in enumerate(model.ops) if isinstance(op, ConvOp)]
    if not at:
        return 0.0
    single = sum(cost[i] + suffix[i] * (2 if int8 else 1) for i in at)
    if len(at) <= EXHAUSTIVE_MAX_LAYERS:
        return single + (4 if int8 else 3) ** len(at) * sum(suffix[i] for i in at) / len(at)
    return single + sum(suffix[i] if int8 or prefer != RELAXED else cost[i] for i in at)


def _sample_note(sample: int, images: int) -> str:
    return "" if sample == images else f"; measured on a seeded sample of {sample} of the {images} validation images"


def calibrate_int8(model: CnnModel, cache: ActivationCache) -> list[str]:
    """Set every dense convolution's int8 input scale from the precise activations of the cache's
    images (max / 255) and return the layers that may run in int8 mode: groups 1, input not the
    network input, and an input never negative on those images (after a ReLU: u8 needs no zero
    point; a layer whose input can be negative, like the first, stays float)."""
    index = {op.name: i for i, op in enumerate(model.ops)}
    ok = []
    for op in model.conv_ops:
        src = op.inputs[0]
        if op.groups != 1 or src == INPUT:
            continue
        x = cache.outs[index[src]]
        if x.size == 0 or float(x.min()) < 0 or not np.isfinite(x).all():
            continue
        op.int8_scale = float(int8_input_scale(float(x.max())))
        if int8_problem(op) is None:
            ok.append(op.name)
    return ok


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
    search_images: int = 0                      # validation images every configuration was measured on
    validation_images: int = 0                  # of how many (more: a seeded sample, `search_sample`)
    sample_seed: int | None = None              # the sample's seed (None: every image)
    ops_computed: int = 0                       # ops evaluated by the incremental search (the work done)

    def to_json(self) -> dict:
        return asdict(self)


class Evaluator:
    """Validation accuracy of a mode assignment on the search's images (all of them, or a seeded
    sample), computed incrementally from the cached precise activations (forward.ActivationCache):
    only from the first layer whose output differs onwards, reusing the computed prefix of earlier
    assignments up to PREFIX_CACHE_BYTES so that big networks do not exhaust memory."""

    PREFIX_CACHE_BYTES = 512 * 2 ** 20

    def __init__(self, model: CnnModel, check: Callable[[], None] = lambda: None,
                 cache: ActivationCache | None = None, rows: np.ndarray | None = None) -> None:
        self.model = model
        self.names = [op.name for op in model.ops]
        full = cache if cache is not None else ActivationCache(model, model.x_val, check=check)
        # the cache holds every validation image, or only the sample's (too big for all: the engine)
        sampled = rows is None or len(full.x) != len(model.y_val)
        self.cache = full.subset(None if sampled else np.asarray(rows), self.PREFIX_CACHE_BYTES)
        self.cache.check = check
        self.labels = np.asarray(model.y_val) if rows is None else np.asarray(model.y_val)[np.asarray(rows)]
        self._acc: dict[tuple, float] = {}

    def key(self, modes: dict[str, str]) -> tuple:
        return tuple(modes.get(n, PRECISE) if isinstance(op, ConvOp) else "-"
                     for n, op in zip(self.names, self.model.ops))

    def accuracy(self, modes: dict[str, str]) -> float:
        key = self.key(modes)
        if key not in self._acc:
            pred = self.cache.logits(modes).argmax(1)
            self._acc[key] = float(100.0 * (pred == self.labels).mean())
        return self._acc[key]


def search_modes(model: CnnModel, budget: float, prefer: str = IMPRECISE,
                 check: Callable[[], None] = lambda: None, cache: ActivationCache | None = None,
                 rows: np.ndarray | None = None, int8: bool = False) -> Iterator[Configuration | ModeChoice]:
    """Yield every configuration as it is measured, then the ModeChoice.

    `int8`: also try the int8 mode (issue 35) on the layers calibrate_int8 admits; it is then
    preferred over `prefer` (it is the mode that runs faster on x86 CPUs with VNNI). Off, the search
    is exactly the three-mode one.

    `cache`: the precise activations of model.x_val, or of its `rows` only (built here when not
    given); `rows`: the validation images the search measures (a seeded sample, `search_sample`),
    all when None."""
    if prefer not in INEXACT:
        raise ValueError(prefer)
    ev = Evaluator(model, check, cache, rows)
    sample = len(ev.labels)
    layers = [op.name for op in model.conv_ops]
    int8_ok = set(calibrate_int8(model, ev.cache)) if int8 else set()
    inexact_of = {n: INEXACT + ((INT8,) if n in int8_ok else ()) for n in layers}
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
        for mode in inexact_of[name]:
            cfg = measure({name: mode}, "single layer")
            if cfg is not None:
                per_layer[name][mode] = cfg.accuracy
                yield cfg
    if len(layers) <= EXHAUSTIVE_MAX_LAYERS and 4 ** len(int8_ok) * 3 ** (len(layers) - len(int8_ok)) <= 3 ** 5:
        for combo in itertools.product(*((PRECISE,) + inexact_of[n] for n in layers)):
            cfg = measure(dict(zip(layers, combo)), "combination")
            if cfg is not None:
                yield cfg
    else:
        other = RELAXED if prefer == IMPRECISE else IMPRECISE
        order = sorted(layers, key=lambda n: -max(per_layer[n][m] for m in inexact_of[n]))
        current: dict[str, str] = {}
        for name in order:
            for mode in ((INT8,) if name in int8_ok else ()) + (prefer, other):
                trial = dict(current, **{name: mode})
                cfg = measure(trial, "greedy")
                if cfg is None:
                    cfg = next(c for c in configs if c.modes == {n: trial.get(n, PRECISE) for n in layers})
                else:
                    yield cfg
                if cfg.within_budget:
                    current = trial
                    break
    on = _sample_note(sample, len(model.y_val))
    extra: dict[str, Any] = dict(search_images=sample, validation_images=len(model.y_val),
                                 sample_seed=None if rows is None else SAMPLE_SEED, ops_computed=ev.cache.computed)
    ok = [c for c in configs if c.within_budget and c.inexact_layers > 0]
    if ok:
        best = max(ok, key=lambda c: (c.inexact_layers, sum(m == INT8 for m in c.modes.values()),
                                      sum(m == prefer for m in c.modes.values()), c.accuracy, -c.index))
        msg = (f"{best.inexact_layers} of {len(layers)} arithmetic layers inexact, accuracy {best.accuracy:.2f} % "
               f"({best.drop:+.2f} pp drop, budget {budget} pp){on}")
        yield ModeChoice(modes=best.modes, accuracy=best.accuracy, precise_accuracy=first.accuracy, budget_pp=budget,
                         per_layer=per_layer, message=msg, all_precise_fallback=False, configurations=configs,
                         **extra)
    else:
        msg = (f"no configuration with an inexact layer stays within the {budget} pp budget "
               f"({len(configs)} tried{on}); every layer stays precise")
        yield ModeChoice(modes=dict(first.modes), accuracy=first.accuracy, precise_accuracy=first.accuracy,
                         budget_pp=budget, per_layer=per_layer, message=msg, all_precise_fallback=True,
                         configurations=configs, **extra)
