"""What the runs table shows of a run, and how two or more runs compare, without Qt.

The Runs view and the Compare view only lay these out: which settings differ between runs, which
metrics they share and which plots can be overlaid live here, so that a table, a CSV export and a
test all read one answer.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any

from core.display import format_number, format_setting, lead, metric_of, setting_label
from core.engine import engines
from core.errors import InputError
from core.kinds import Lib, generated_name, kind_of
from core.metrics import DURATION, Metric
from core.project import Run, Snapshot, summary
from core.workload import ConvLayers

SETTINGS_TEXT_MAX = 60

# The runs table's columns: run_row key and header, in display order.
RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "Run"),
    ("engine_title", "Engine"),
    ("workload", "Workload"),
    ("target", "Target"),
    ("settings", "Key settings"),
    ("status", "Status"),
    ("metric", "Headline"),
    ("value", "Value"),
    ("duration_s", "Duration"),
    ("started", "Started"),
    ("note", "Note"),
)


def engine_title(name: str) -> str:
    spec = engines().get(name)
    return spec.title if spec else name


def format_value(value: Any) -> str:
    """A value with no unit as a short text: numbers as core.display writes them, JSON for the rest."""
    if value is None:
        return "none"
    if isinstance(value, (bool, int, float)):
        return format_number(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def local_time(iso: str) -> str:
    """A stored UTC time stamp as local time, "YYYY-MM-DD HH:MM:SS" (sorts as text)."""
    try:
        return _dt.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return iso


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values: 1 == 1.0, but True is not 1."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def changed_settings(run: Run) -> dict[str, Any]:
    """The run's settings that differ from its engine's defaults (all of them for an unknown engine)."""
    spec = engines().get(run.engine)
    defaults = spec.default_settings() if spec else {}
    return {k: v for k, v in run.settings.items() if k not in defaults or not same(v, defaults[k])}


def settings_text(run: Run, limit: int = SETTINGS_TEXT_MAX) -> str:
    """`Title: value` for each changed setting (the widget's label and the value with its unit, as
    the window shows them), shortest first, cut to about `limit` characters."""
    parts = sorted((f"{setting_label(run.engine, k)}: {format_setting(run.engine, k, v)}"
                    for k, v in changed_settings(run).items()), key=lambda s: (len(s), s))
    text = "; ".join(parts)
    return text if len(text) <= limit else text[:limit - 1].rstrip("; ") + "…"


def status_text(run: Run) -> str:
    """The status, marked partial when a run that ended without its result still made something."""
    if run.status in ("failed", "cancelled") and run.is_partial:
        return f"{run.status}, partial"
    return run.status


def layers_words(value: ConvLayers) -> str | None:
    """Conv-layer specs in words: how many, and each layer's name, or its spec where it has none
    ("2 conv layers: conv1, Ci=3,Hi=8,Wi=8,Co=4,kernel=3"); None for specs that do not read."""
    from core.bound.shapes import parse_layer_spec

    try:
        shapes = [parse_layer_spec(text, where="layers") for text in value.layers]
    except InputError:
        return None
    if not shapes:
        return None
    default = parse_layer_spec("Ci=1,Hi=1,Wi=1,Co=1,kernel=1", where="layers").name
    names = [s.name if s.name != default else " ".join(t.split()) for s, t in zip(shapes, value.layers)]
    n = len(names)
    return f"{n} conv layer{'s' if n != 1 else ''}: " + ", ".join(names[:3]) + (", …" if n > 3 else "")


def item_words(lib: Lib, value: Any) -> str | None:
    """What a workload or target holds, in words: the name its kind makes from its values (a CNN's
    network, "LeNet-5", or its ONNX file's name; "Accelerator, 64 KiB"), conv-layer specs by their
    layers; None where the kind makes no such name."""
    if isinstance(value, ConvLayers):
        return layers_words(value)
    return generated_name(lib, value)


def item_text(lib: Lib, snap: Snapshot | None) -> str:
    """A run's workload or target as the runs table names it: the library item's name when the run
    used it, unless that name only says the kind ("CNN", "Convolution layers", or a new item's
    default name, "Layers"): then what the item holds (item_words), so a run names its network."""
    if snap is None:
        return ""
    kind = kind_of(lib, snap.kind)
    generic = {"", kind.title, kind.new(None)[0]} if kind is not None else {""}
    words = item_words(lib, snap.value) if snap.name in generic else None
    return words or snap.name or (kind.title if kind is not None else snap.kind)


def item_tooltip(lib: Lib, snap: Snapshot | None) -> str:
    """The kind of a run's workload or target and what it holds ("CNN: LeNet-5")."""
    if snap is None:
        return ""
    kind = kind_of(lib, snap.kind)
    title = kind.title if kind is not None else snap.kind
    return f"{title}: {item_words(lib, snap.value) or summary(snap.value)}"


def run_row(run: Run) -> dict[str, Any]:
    """One runs-table row: the RUN_COLUMNS keys (raw values, numbers stay numbers) plus `engine`,
    `state` (the bare status), `error`, `settings_full`, `workload_tip` and `target_tip` for filters
    and tooltips, and the texts
    people read: `metric_label` (the headline's name), `value_text` (its value with its unit) and
    `headline_text` (every headline metric, one a line, for the tooltip). The headline is the first
    metric the engine's result declares (core.metrics)."""
    first = lead(run.engine, run.headline)
    metric, value = (first[0], first[1]) if first else (None, None)
    return {
        "id": run.id,
        "engine": run.engine,
        "engine_title": engine_title(run.engine),
        "workload": item_text("workloads", run.workload),
        "target": item_text("targets", run.target),
        "workload_tip": item_tooltip("workloads", run.workload),
        "target_tip": item_tooltip("targets", run.target),
        "settings": settings_text(run),
        "settings_full": settings_text(run, limit=10 ** 9),
        "status": status_text(run),
        "state": run.status,
        "metric": metric.name if metric else "",
        "metric_label": metric.title if metric else "",
        "value": value,
        "value_text": metric.text(value, run.result) if metric and value is not None
        else NOT_APPLICABLE if metric and run.status == "finished" else "",
        "headline_text": headline_text(run),
        "duration_s": run.duration_s,
        "started": local_time(run.started_at),
        "note": run.note,
        "error": run.error or "",
    }


NOT_APPLICABLE = "not applicable"


def headline_text(run: Run) -> str:
    """Every headline metric of a run as people read it, one a line ("Time per image: 1.2 ms"); a
    finished run's metric without a value is "not applicable", followed by the result's reason where
    it gives one (a comparison's part whose target runs none of the network)."""
    def text(m: Metric) -> str:
        value = run.headline.get(m.name)
        if value is None and run.status == "finished":
            return NOT_APPLICABLE
        return m.text(value, run.result)
    lines = [f"{m.title}: {text(m)}" for m in (metric_of(run.engine, k) for k in run.headline)]
    reason = getattr(run.result, "reason", None)
    if isinstance(reason, str) and reason and any(run.headline.get(k) is None for k in run.headline):
        lines.append(f"Not applicable: {reason}")
    return "\n".join(lines)


@dataclass
class DiffRow:
    """One compared quantity: its values per run (None where a run lacks it) and whether they differ."""

    key: str
    values: list[Any]
    differs: bool
    absent: list[bool] = field(default_factory=list)     # per run: the run has no such key
    label: str = ""                 # the key as people call it (a setting's title, a metric's name)
    texts: list[str] = field(default_factory=list)       # each value as the window shows it (unit, digits)
    best: list[bool] = field(default_factory=list)       # per run: the best value of a metric that has a better way
    tooltip: str = ""               # what the row is (a metric's description and which way is better)
    notes: list[str] = field(default_factory=list)       # per run: why its cell reads "not applicable" ("" if not)


def _row(key: str, present: list[tuple[bool, Any]]) -> DiffRow:
    values = [v if has else None for has, v in present]
    first = present[0]
    differs = any(has != first[0] or (has and not same(v, first[1])) for has, v in present[1:])
    return DiffRow(key, values, differs, [not has for has, _ in present])


def _union(dicts: list[dict[str, Any]]) -> list[str]:
    keys: dict[str, None] = {}
    for d in dicts:
        keys.update(dict.fromkeys(d))
    return list(keys)


def _item_row(key: str, snaps: list[Snapshot | None]) -> DiffRow:
    """A workload or target row: its name per run (as the runs table names it), differing when the
    snapshot values differ (an item edited between two runs keeps its name, so then its summary is
    shown too)."""
    row = _row(key, [(s is not None, None if s is None else s.value) for s in snaps])
    lib: Lib = "workloads" if key == "workload" else "targets"
    names = [None if s is None else item_text(lib, s) for s in snaps]
    if row.differs and len({n for n in names if n is not None}) < sum(n is not None for n in names):
        names = [None if s is None else f"{item_text(lib, s)}: {summary(s.value)}" for s in snaps]
    row.values = names
    return row


def settings_diff(runs: list[Run]) -> list[DiffRow]:
    """Engine (when the runs differ in it), workload, target, then every setting any run has; each
    row labelled with the setting's title and its values written with their units."""
    rows: list[DiffRow] = []
    if len({r.engine for r in runs}) > 1:
        rows.append(_labelled(_row("engine", [(True, engine_title(r.engine)) for r in runs]), "Engine"))
    rows.append(_labelled(_item_row("workload", [r.workload for r in runs]), "Workload"))
    rows.append(_labelled(_item_row("target", [r.target for r in runs]), "Target"))
    for key in _union([r.settings for r in runs]):
        row = _row(key, [(key in r.settings, r.settings.get(key)) for r in runs])
        owner = next(r.engine for r in runs if key in r.settings)
        row.label = setting_label(owner, key)
        row.texts = [format_setting(r.engine, key, v) for r, v in zip(runs, row.values)]
        rows.append(row)
    return rows


def _labelled(row: DiffRow, label: str) -> DiffRow:
    row.label = label
    row.texts = [format_value(v) for v in row.values]
    return row


def headline_rows(runs: list[Run]) -> list[DiffRow]:
    """Every headline metric any run has (first-seen order), then the duration; named and written
    with units as people read them."""
    rows = []
    for k in _union([r.headline for r in runs]):
        owner = next(r.engine for r in runs if k in r.headline)
        rows.append(_metric_row(metric_of(owner, k), [(k in r.headline, r.headline.get(k)) for r in runs], runs))
    rows.append(_metric_row(DURATION, [(r.duration_s is not None, r.duration_s) for r in runs], runs))
    return rows


def _metric_row(metric: Metric, present: list[tuple[bool, Any]], runs: list[Run]) -> DiffRow:
    """A metric's row: its title, each value written with its unit (items named), the best marked."""
    row = _row(metric.name, present)
    row.label, row.tooltip = metric.title, metric.tooltip()
    missing = [v is None and not absent and r.status == "finished" for v, absent, r in zip(row.values, row.absent, runs)]
    row.texts = [NOT_APPLICABLE if na else metric.text(v, r.result) for v, na, r in zip(row.values, missing, runs)]
    row.notes = [not_applicable_why(r) if na else "" for na, r in zip(missing, runs)]
    row.best = metric.best(row.values)
    return row


def not_applicable_why(run: Run) -> str:
    """Why a finished run's metric has no value, for its cell's tooltip: the result's reason where it
    gives one (a target that runs none of the network), else that the run did not produce it."""
    reason = getattr(run.result, "reason", None)
    if isinstance(reason, str) and reason:
        return f"not applicable: {reason}"
    return "not applicable: this run's result has no value for it"


def plots_reason(runs: list[Run]) -> str | None:
    """Why common_plots has nothing to overlay; None when it has."""
    if not runs:
        return "no runs to compare"
    names = sorted({r.engine for r in runs})
    if len(names) > 1:
        return (f"runs of different engines ({', '.join(engine_title(n) for n in names)}) plot different "
                "quantities: their settings and metrics are compared, their plots are not overlaid")
    bare = [r.id for r in runs if not r.series]
    if bare:
        return f"{', '.join(bare)} plotted nothing (no live series kept), so there is nothing to overlay"
    if not _common_names(runs):
        return "these runs have no plot in common"
    return None


def _common_names(runs: list[Run]) -> list[str]:
    return [p for p in runs[0].series if all(p in r.series for r in runs[1:])]


def common_plots(runs: list[Run]) -> dict[str, dict[str, list[list[float]]]]:
    """The plots every run has (same engine only, so their axes agree), each series labelled
    "<run id> · <series>", in run order. Empty otherwise: plots_reason says why."""
    if plots_reason(runs) is not None:
        return {}
    return {plot: {series_label(r.id, s): [list(p) for p in pts] for r in runs for s, pts in r.series[plot].items()}
            for plot in _common_names(runs)}


def series_label(run_id: str, series: str) -> str:
    return f"{run_id} · {series}"

