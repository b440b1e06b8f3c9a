"""One network on many targets (issue 51, item 2): each target costed by the engine that costs its
kind, side by side, each figure against its limit on that target. The "network" may also be
conv-layer specs (core.layer_source): each spec is then costed as its own one-layer network and the
records joined (`_cost`).

A *costing* turns (network, target) into a cost record (core.cost) and a note of how it was made; one
is registered per target kind (`register_costing`), so a new engine's costing is one registration.
A kind with none gives a row that says so in words.

This module holds what one part does (`cost_part`: a network on one target, checked) and what the
rows, the best marks and the roofline are. A part is a run of the project: the cost engine
(core.target_cost) runs `cost_part`, and core.comparison_run submits one such run per target through
the one run controller (modelled parts in parallel, a measured part alone), re-using a finished run of
an unchanged setup. A part that fails is a row with the reason, never the end of the comparison.
Every record is checked by the comparison itself: it is sound (`CostRecord.problems`), its layers'
MACs, the layers a target cannot run included, add up to the network's, and every layer lies on or
under its target's roofline (its cost at or above its limit).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from core.cost import REL_TOL, CostRecord, Figure, not_applicable
from core.errors import InputError


@dataclass(frozen=True)
class Budgets:
    """What a comparison lets its parts spend (the defaults keep ResNet-18's modelled parts in seconds)."""

    measure: bool = False           # time MERIT's generated C on this machine (else the CPU is modelled)
    scamp5_max_nodes: int = 20_000  # Cain's node budget per pass of SCAMP-5's first layer
    scamp5_time_s: float = 5.0      # and its time budget per pass
    fcnnx_max_joint: int = 60       # f-CNNx's joint design points (one CNN: its front points)


@dataclass(frozen=True)
class Costed:
    record: CostRecord
    note: str                       # how it was costed, in words (what is measured, what modelled)


@dataclass(frozen=True)
class Costing:
    """How one target kind is costed."""

    kind: str                                                   # the target kind (core.kinds)
    engine: str                                                 # in words: the engine's tab title (`engine_words`)
    cost: Callable[[str, Any, Budgets], Costed]                 # (network source, target, budgets)
    measured: Callable[[Any, Budgets], bool] = lambda _t, _b: False     # does it time code here (runs alone)?
    budget_keys: tuple[str, ...] = ()                            # the Budgets fields it reads (its part's settings)
    engine_key: str = ""                                         # the engine's name (core.engine), for JSON


def engine_words(name: str, detail: str = "") -> str:
    """An engine as the window names it: its tab's title, with what of it costs the target
    ("Communication bounds (optimal dataflow)", "FPSP code search (Cain, first layer)"); the name
    itself when no such engine loaded."""
    from core.engine import engines

    spec = engines().get(name)
    title = spec.title if spec is not None else name
    if not detail:
        return title
    return f"{title[:-1]}, {detail})" if title.endswith(")") else f"{title} ({detail})"


# the words a costing's engine had before they were its tab's title (runs kept in older sessions)
_OLD_WORDS = {"bound (optimal dataflow)": ("bound", "optimal dataflow"), "f-CNNx": ("fcnnx", "f-CNNx"),
              "MERIT": ("merit", ""), "Cappuccino": ("cappuccino", "Cappuccino"), "Cain (first layer)": ("cain", "first layer")}


def current_words(engine: str) -> str:
    """A kept part's engine in today's words (an older session kept the engine's code name)."""
    old = _OLD_WORDS.get(engine)
    return engine_words(*old) if old is not None else engine


_COSTINGS: dict[str, Costing] = {}


def register_costing(c: Costing) -> Costing:
    """Make `c` the costing of its target kind (a later registration replaces an earlier one: the
    built-in ones are registered only where none is)."""
    _COSTINGS[c.kind] = c
    return c


def costings() -> dict[str, Costing]:
    _builtin()
    return dict(_COSTINGS)


# ---------------------------------------------------------------- the rows
@dataclass(kw_only=True)
class Metric:
    """One total of a row as the table shows it: the value, its limit on the target, the percentage
    of the limit reached (100 at the limit), measured or modelled."""

    value: float | None
    limit: float | None
    pct_of_limit: float | None
    how: str


@dataclass(kw_only=True)
class ComparisonRow:
    target: str                         # the target's name (a library item's, or the file's)
    kind: str
    engine: str                         # the costing's engine in words ("" when none)
    record: CostRecord | None = None
    reason: str | None = None           # why nothing of the network runs there, in words
    failed: bool = False                # the costing crashed (reason says how): a fault, not the target's limit
    note: str = ""
    measured: bool = False              # the part timed code on this machine
    seconds: float = 0.0                # how long the part took
    covered_macs: int = 0               # MACs of the layers the target runs
    best: list[str] = field(default_factory=list)     # the metrics this row is best on
    run_id: str | None = None           # the part's run in the project (core.comparison_run)
    reused: bool = False                # a finished run of the same setup, not run again
    deleted: bool = False               # its part's run was deleted since (reason says so; no figure)

    @property
    def whole(self) -> bool:
        """The target runs every layer (only such rows are compared for the best)."""
        return self.record is not None and all(l.reason is None for l in self.record.layers)

    def metrics(self) -> dict[str, Metric]:
        """latency_s, throughput_per_s (1 / latency at batch 1), energy_j, offchip_bytes of the totals."""
        if self.record is None or self.reason is not None:
            return {}
        t = self.record.total
        out = {"latency_s": _metric(t.time_s), "energy_j": _metric(t.energy_j),
               "offchip_bytes": _metric(t.offchip_bytes)}
        lat = t.time_s
        thr_value = 1 / lat.value if lat.value else None
        thr_limit = 1 / lat.limit if lat.limit else None
        out["throughput_per_s"] = Metric(value=thr_value, limit=thr_limit, how=lat.how,
                                         pct_of_limit=100 * thr_value / thr_limit if thr_value and thr_limit else None)
        return {k: out[k] for k in METRICS}

    def to_json(self) -> dict[str, Any]:
        c = costings().get(self.kind)
        return {"target": self.target, "kind": self.kind, "engine": c.engine_key if c is not None else "",
                "engine_title": self.engine, "reason": self.reason,
                "failed": self.failed, "note": self.note, "measured": self.measured, "seconds": self.seconds,
                "covered_macs": self.covered_macs, "whole_network": self.whole, "best": list(self.best),
                "run": self.run_id, "reused": self.reused,
                "metrics": {k: dataclasses.asdict(m) for k, m in self.metrics().items()},
                "record": self.record.to_json() if self.record is not None else None}


METRICS = ("latency_s", "throughput_per_s", "energy_j", "offchip_bytes")
HIGHER_IS_BETTER = {"throughput_per_s"}


def _metric(f: Figure) -> Metric:
    if f.value == 0 and f.limit == 0:   # nothing to move and nothing moved (SCAMP-5 off chip): at its limit
        return Metric(value=f.value, limit=f.limit, pct_of_limit=100.0, how=f.how)
    pct = 100 * f.limit / f.value if f.value and f.limit is not None else None
    return Metric(value=f.value, limit=f.limit, pct_of_limit=pct, how=f.how)


@dataclass(kw_only=True)
class Comparison:
    network: str
    source: str                         # as given: a zoo name or an ONNX file
    macs: int                           # the network's (every convolution and fully connected layer)
    layers: int
    budgets: Budgets
    rows: list[ComparisonRow]
    cancelled: bool = False             # stopped: the rows are the parts that ended
    id: str = ""                        # the comparison's id, its parts' runs' parent (core.comparison_run)
    reused: int = 0                     # parts whose finished run of the same setup was re-used

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "network": self.network, "source": self.source, "macs": self.macs,
                "layers": self.layers, "measure": self.budgets.measure, "cancelled": self.cancelled,
                "reused": self.reused,
                "rows": [r.to_json() for r in self.rows]}


def counted(n: int, thing: str) -> str:
    """"1 target", "6 targets": a count in words, never "target(s)"."""
    return f"{n:,} {thing}{'' if n == 1 else 's'}"


def workload_words(c: Comparison) -> str:
    """What a comparison costed, in a sentence's words: a network's title, its layers and MACs
    ("ResNet-18 (ImageNet, 224x224): 21 layers, 1.814 billion MACs"), or conv-layer specs said
    as such ("2 conv layers (layer1, layer2), each costed on its own: 231.8 million MACs in all")."""
    from core.layer_source import is_layers_source
    from core.numbers import format_number

    macs = format_number(c.macs, "MACs")
    if is_layers_source(c.source):
        each = "costed on its own" if c.layers == 1 else "each costed on its own"
        return f"{c.network}, {each}: {macs}{' in all' if c.layers > 1 else ''}"
    return f"{c.network}: {counted(c.layers, 'layer')}, {macs}"


# ---------------------------------------------------------------- the roofline
@dataclass(frozen=True)
class RooflinePoint:
    """One layer on its target's roofline: MACs per off-chip byte against MACs per second attained."""

    layer: str
    intensity: float                    # MACs / off-chip bytes
    rate: float                         # MACs / time (MAC/s)
    how: str                            # the time's: measured or modelled


def roofline_points(row: ComparisonRow) -> list[RooflinePoint]:
    """The row's layers as roofline points; a layer with no time (the target cannot run it), no MACs
    or no off-chip byte (no finite intensity on a log axis) has no point."""
    if row.record is None or row.reason is not None:
        return []
    return [RooflinePoint(layer=l.name, intensity=l.macs / l.offchip_bytes.value, rate=l.macs / l.time_s.value,
                          how=l.time_s.how)
            for l in row.record.layers
            if l.reason is None and l.macs > 0 and l.time_s.value and l.offchip_bytes.value]


def ceiling(row: ComparisonRow, intensity: float) -> float:
    """The target's attainable MAC rate at this intensity: min(peak MAC rate, intensity x bandwidth)."""
    if row.record is None:
        raise ValueError(f"{row.target} has no cost record, so no ceilings")
    c = row.record.ceilings
    return min(c.peak_macs_per_s, intensity * c.bandwidth_bytes_per_s)


def above_ceiling(row: ComparisonRow) -> list[RooflinePoint]:
    """The points above their target's ceiling (none in a sound record: a point above it would be a
    layer faster than the target's peak or its off-chip bandwidth allow)."""
    return [p for p in roofline_points(row) if p.rate > ceiling(row, p.intensity) * (1 + REL_TOL)]


# ---------------------------------------------------------------- running
@dataclass(frozen=True)
class TargetItem:
    name: str
    value: Any                          # a target (core.workload / core.hardware)


def default_targets() -> list[TargetItem]:
    """One target of each registered kind, at its defaults (the library's "Add" of each kind)."""
    from core.kinds import kinds

    return [TargetItem(*k.new(None)) for k in kinds("targets").values()]


def targets_of_kinds(names: list[str]) -> list[TargetItem]:
    """The default target of each named kind; InputError names an unknown one."""
    from core.kinds import kinds

    known = kinds("targets")
    out = []
    for n in names:
        if n not in known:
            raise InputError(f"unknown target kind {n!r}; known: {', '.join(known)}", "targets")
        out.append(TargetItem(*known[n].new(None)))
    return out


def network_macs(source: str, where: str = "network") -> tuple[str, int, int]:
    """(name, MACs, layers) of a network or of conv-layer specs (core.layer_source); InputError for
    an unknown network, an unreadable file or a bad spec."""
    from core.layer_source import is_layers_source, spec_shapes, title_of
    from core.nets.source import network_layers

    from core.nets import zoo

    if is_layers_source(source):
        shapes = spec_shapes(source, where)
        return title_of(shapes), sum(s.macs for s in shapes), len(shapes)
    name, convs = network_layers(source, "network")
    title = zoo.get(source).title if source in zoo.names() else name
    return title, sum(c.macs for c in convs), len(convs)


def part_settings(target: Any, budgets: Budgets) -> dict[str, Any]:
    """A part's run settings: every budget, those its target's costing does not read at their
    defaults. So only what it reads makes two parts' setups differ (changing SCAMP-5's node budget
    re-runs the SCAMP-5 part alone; `measure` counts only where the part would time code here), and
    the settings are whole (a part's setup restored in its tab holds every field)."""
    c = costings().get(target.kind)
    keys = set(c.budget_keys) - {"measure"} if c is not None else set()
    if c is not None and c.measured(target, budgets):
        keys.add("measure")
    return {**dataclasses.asdict(Budgets()), **{k: getattr(budgets, k) for k in keys}}


def budgets_of(settings: dict[str, Any]) -> Budgets:
    """A part's settings back as Budgets (the keys it does not hold at their defaults)."""
    names = {f.name for f in dataclasses.fields(Budgets)}
    return Budgets(**{k: v for k, v in settings.items() if k in names})


def is_measured(target: Any, budgets: Budgets) -> bool:
    """Does the part on this target time code on this machine (so it runs alone)?"""
    c = costings().get(target.kind)
    return c is not None and c.measured(target, budgets)


def cost_part(source: str, item: TargetItem, budgets: Budgets) -> ComparisonRow:
    """One part of a comparison: the network on one target by the costing of its kind, checked
    (see the module docstring). Never raises for what the costing does: a refusal or a fault is the
    row's reason. The cost engine runs this as a run of the project."""
    _, macs, _ = network_macs(source)
    kind = item.value.kind
    return _run_part(source, item, costings().get(kind), budgets, macs)


def _run_part(source: str, item: TargetItem, costing: Costing | None, budgets: Budgets, macs: int) -> ComparisonRow:
    from core.kinds import kind_of

    kind = item.value.kind
    if costing is None:
        k = kind_of("targets", kind)
        title = k.title if k is not None else kind
        return ComparisonRow(target=item.name, kind=kind, engine="",
                             reason=f"not costed yet: no engine produces a cost record on a {title} yet")
    t0 = time.perf_counter()
    row = ComparisonRow(target=item.name, kind=kind, engine=costing.engine,
                        measured=costing.measured(item.value, budgets))
    try:
        got = _cost(costing, source, item.value, budgets)
    except InputError as exc:           # the target's fields or the network refused, in words
        row.reason = _words(exc)
    except Exception as exc:            # a fault of the part: recorded, the comparison goes on
        row.reason, row.failed = f"the costing failed: {type(exc).__name__}: {exc}"[:400], True
    else:
        problem = _problem(got.record, macs)
        if problem is not None:
            row.reason, row.failed = f"the costing failed its check: {problem}", True
        else:
            row.record, row.note = got.record, got.note
            runs = [l for l in got.record.layers if l.reason is None]
            row.covered_macs = sum(l.macs for l in runs)
            if not runs:
                first = got.record.layers[0]
                row.reason = f"no layer runs there ({first.name}: {first.reason})"
    row.seconds = time.perf_counter() - t0
    return row


def _cost(costing: Costing, source: str, target: Any, budgets: Budgets) -> Costed:
    """The costing's record of a network, or of conv-layer specs: each spec costed as a network of
    its one layer (core.layer_source), the records joined (the target's, its ceilings). A spec the
    target refuses is a layer it cannot run, with the reason; one whose limits come from ceilings
    of its own (SCAMP-5's peak is its kernels' own) cannot share the record's and says so."""
    from core.layer_source import is_layers_source, layer_onnx, spec_shapes

    if not is_layers_source(source):
        return costing.cost(source, target, budgets)
    layers: list[Any] = []
    got_any: list[Costed] = []          # every record costed, in order
    ceilings_of: Costed | None = None   # the first record with a layer that runs: the joined one's ceilings
    refused: InputError | None = None
    notes: list[str] = []
    for shape in spec_shapes(source):
        path = layer_onnx(shape)
        try:
            got = costing.cost(path, target, budgets)
        except InputError as exc:       # said of the spec, not of the cache file it was written to
            exc = _of_spec(exc, path)
            refused = refused or exc
            layers.append(not_applicable(shape.name, shape.macs, _words(exc)))
            continue
        got_any.append(got)
        # the export's own steps past the convolution (Cappuccino's softmax) hold no MAC of the spec
        own = [l for l in got.record.layers if l.macs > 0] or got.record.layers
        own = [dataclasses.replace(l, name=shape.name if len(own) == 1 else f"{shape.name}/{l.name}") for l in own]
        if all(l.reason is not None for l in own):      # it runs nothing there: its ceilings do not matter
            layers += own
            continue
        if ceilings_of is None:
            ceilings_of = got
        elif got.record.ceilings != ceilings_of.record.ceilings:
            c = got.record.ceilings
            layers.append(not_applicable(shape.name, shape.macs,
                                         f"costed alone it runs, but its limits come from ceilings of its own (peak "
                                         f"{c.peak_macs_per_s:.4g} MAC/s) and one record holds one target's: "
                                         "compare it alone"))
            continue
        layers += own
        if got.note not in notes:
            notes.append(got.note)
    base = ceilings_of or (got_any[0] if got_any else None)
    if base is None:
        assert refused is not None
        raise refused                   # no spec runs there: the first refusal is the row's reason
    note = "; ".join(notes or [base.note]) + " (each spec costed on its own, as a network of its one layer with seeded random weights)"
    return Costed(CostRecord.of(base.record.target, base.record.ceilings, layers), note)


def _of_spec(exc: InputError, path: str) -> InputError:
    """A refusal of a spec's layer file in the spec's words: the file's path left out."""
    def clean(text: str) -> str:
        return " ".join(text.replace(f"{path}: ", "").replace(path, "the layer").split())
    return InputError(clean(exc.message), "" if exc.where == path else clean(exc.where))


def _words(exc: InputError) -> str:
    return f"{exc.where}: {exc.message}" if exc.where else exc.message


def _problem(record: CostRecord, macs: int) -> str | None:
    """Why a part's record cannot be shown (None when sound and its MACs add up to the network's)."""
    wrong = record.problems()
    if wrong:
        return f"{wrong[0][0]}: {wrong[0][1]}"
    got = sum(l.macs for l in record.layers)
    if got != macs:
        return f"its layers hold {got} MACs, the network {macs}"
    above = above_ceiling(ComparisonRow(target="", kind="", engine="", record=record))
    if above:
        p = above[0]
        return (f"{counted(len(above), 'layer')} above the target's roofline, {p.layer} first: {p.rate:.4g} MAC/s at "
                f"{p.intensity:.4g} MACs per off-chip byte, the ceiling there "
                f"{min(record.ceilings.peak_macs_per_s, p.intensity * record.ceilings.bandwidth_bytes_per_s):.4g}")
    return None


def mark_best(rows: list[ComparisonRow]) -> None:
    """Mark, per metric, the best row among those that run the whole network."""
    for key in METRICS:
        vals = [(m.value, r) for r in rows if r.whole and r.reason is None
                for m in [r.metrics().get(key)] if m is not None and m.value is not None]
        if not vals:
            continue
        pick = max if key in HIGHER_IS_BETTER else min
        best = pick(v for v, _ in vals)
        for v, r in vals:
            if v == best:
                r.best.append(key)


# ---------------------------------------------------------------- the engines' costings
def _bound(source: str, target: Any, budgets: Budgets) -> Costed:
    """The bound engine on the dataflow accelerator: the optimal dataflow's time and energy."""
    from core.bound.result import BoundResult

    r = _engine_result("bound", _cnn(source), target,
                       {"sweep": False, "fusion": False, "dataflows": [], "objective": "traffic"})
    assert isinstance(r, BoundResult) and r.costing is not None
    return Costed(r.costing.record, "modelled: the least-traffic dataflow of every layer, mapped on the PE array "
                                    "by its fastest split (compute + transfers; energy per level)")


def _fcnnx(source: str, target: Any, budgets: Budgets) -> Costed:
    """f-CNNx on the FPGA board: one CNN alone, its chosen design subgraph by subgraph; the layers
    past the feature extractor (from the first fully connected one) are not mapped by f-CNNx."""
    from core.fcnnx.result import FcnnxResult
    from core.nets.source import network_layers
    from core.workload import CnnSet

    onnx = source.lower().endswith(".onnx")
    work = CnnSet(cnns=[] if onnx else [source], onnx=[source] if onnx else [])
    r = _engine_result("fcnnx", work, target, {"simulate": False, "max_joint": budgets.fcnnx_max_joint})
    assert isinstance(r, FcnnxResult) and r.costs
    rec = r.costs[0]
    _, convs = network_layers(source, "network")
    first_fc = next((i for i, c in enumerate(convs) if c.fc), len(convs))
    rest = [not_applicable(c.name, c.macs, "past the feature extractor: f-CNNx maps the layers up to the first "
                                           "fully connected one") for c in convs[first_fc:]]
    if rest:
        rec = CostRecord.of(rec.target, rec.ceilings, [*rec.layers, *rest])
    return Costed(rec, "modelled: f-CNNx's chosen design alone on the board, one row per subgraph "
                       "(its layers pipelined together)")


def _merit(source: str, target: Any, budgets: Budgets) -> Costed:
    """MERIT on a CPU or GPU: measured generated C on this machine with `measure`, else the roofline."""
    from core.merit.cost import measure_c, network_cost

    here = _timed_here(target, budgets)
    c = network_cost(source, target, measure=measure_c if here else None)
    how = ("measured here: each layer's generated C timed on this machine (larger layers on a scaled-down copy, "
           "extrapolated)" if here else
           "modelled: the roofline of MERIT's tiled code, max(MACs / peak, off-chip bytes / bandwidth)")
    return Costed(c.record, how + (f"; {c.gpu_note}" if c.gpu_note else ""))


def _timed_here(target: Any, budgets: Budgets) -> bool:
    from core.merit.cost import is_this_machine

    return budgets.measure and is_this_machine(target)


def _mobile_soc(source: str, target: Any, budgets: Budgets) -> Costed:
    """Cappuccino on a mobile SoC: its precise program's layers timed here with `measure` on this
    machine's SoC, modelled from the SoC's cores, lanes, FMA units, clock and bandwidth otherwise."""
    from core.cappuccino.cost import network_cost

    here = _soc_timed_here(target, budgets)
    c = network_cost(_cnn(source), target, measure=here)
    how = ("measured here: each step of Cappuccino's synthesised program profiled on this machine" if here else
           "modelled: Cappuccino's program steps, max(MACs / (cores x lanes x FMA x clock), compulsory bytes / "
           "bandwidth)")
    return Costed(c.record, how)


def _soc_timed_here(target: Any, budgets: Budgets) -> bool:
    from core.cappuccino.cost import is_this_machine

    return budgets.measure and is_this_machine(target)


def _scamp5(source: str, target: Any, budgets: Budgets) -> Costed:
    """SCAMP-5: the first layer's kernels through Cain where they fit, every other layer not applicable."""
    from core.cain.cost import scamp5_cost

    c = scamp5_cost(source, target, max_nodes=budgets.scamp5_max_nodes, time_s=budgets.scamp5_time_s)
    return Costed(c.record, f"modelled: Cain's programs x the instruction time; {c.note}")


def _cnn(source: str) -> Any:
    """The CNN workload of a network source (a spec layer's file with its sample images)."""
    from core.layer_source import validation_of
    from core.workload import CnnNetwork

    if source.lower().endswith(".onnx"):
        return CnnNetwork(onnx_path=source, validation_path=validation_of(source))
    return CnnNetwork(source)


def _engine_result(engine: str, workload: Any, target: Any, settings: dict[str, Any]) -> Any:
    """Run an engine to its end and return its typed result (an InputError it raises passes on)."""
    from core.engine import JobRequest, get_engine
    from core.jobs import CancelToken, FinalResult

    spec = get_engine(engine)
    result = None
    for ev in spec.run(JobRequest(workload=workload, target=target, settings=settings), CancelToken()):
        if isinstance(ev, FinalResult):
            result = ev.data
    if isinstance(result, dict):
        result = spec.result_type.from_json(result)
    if result is None:
        raise RuntimeError(f"{engine} ended without a result")
    return result


_BUILTIN_DONE = False


def _builtin() -> None:
    global _BUILTIN_DONE
    if _BUILTIN_DONE:
        return
    _BUILTIN_DONE = True
    for c in (Costing("dataflow", engine_words("bound", "optimal dataflow"), _bound, engine_key="bound"),
              Costing("fpga", engine_words("fcnnx", "f-CNNx"), _fcnnx, budget_keys=("fcnnx_max_joint",),
                      engine_key="fcnnx"),
              Costing("cpu", engine_words("merit"), _merit, _timed_here, engine_key="merit"),
              Costing("gpu", engine_words("merit"), _merit, engine_key="merit"),
              Costing("mobile_soc", engine_words("cappuccino", "Cappuccino"), _mobile_soc, _soc_timed_here,
                      engine_key="cappuccino"),
              Costing("scamp5", engine_words("cain", "first layer"), _scamp5,
                      budget_keys=("scamp5_max_nodes", "scamp5_time_s"), engine_key="cain")):
        _COSTINGS.setdefault(c.kind, c)         # one registered before (e.g. Cappuccino's) stays
