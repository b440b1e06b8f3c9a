"""Numbers, units and names as people read them, without Qt.

One place decides how a value looks wherever the window shows it (headlines, the runs table,
Compare, undo texts, the stepper): a sensible number of digits, a unit, SI prefixes where the unit
takes them (MB/s, GOps) and words for big counts (203.5 million words), never `2.03453e+08`,
`8.881784197001252e-16` or `-0`. Setting names come from the engines' settings schemas ("title" and
"unit"), metric names from each result's declared metrics (core.metrics), so no internal key shows through.
"""

from __future__ import annotations

from typing import Any, Mapping

from core.metrics import DURATION, Metric, declared
from core.numbers import DIGITS, format_number, humanise

__all__ = ["DIGITS", "format_number", "humanise", "setting_label", "setting_unit", "format_setting",
           "engine_metrics", "metric_of", "readings", "lead"]


def _setting_prop(engine: str, key: str) -> dict[str, Any]:
    from core.engine import engines

    spec = engines().get(engine)
    props = (spec.settings_schema.get("properties") or {}) if spec else {}
    prop = props.get(key)
    return prop if isinstance(prop, dict) else {}


def setting_label(engine: str, key: str) -> str:
    """The setting's name in the window (its schema "title", the widget's label), else its words."""
    title = _setting_prop(engine, key).get("title")
    return str(title).rstrip(":") if title else humanise(key)


def setting_unit(engine: str, key: str) -> str:
    return str(_setting_prop(engine, key).get("unit") or "")


def format_setting(engine: str, key: str, value: Any) -> str:
    """A setting's value as the window shows it: the schema's item labels ("x-labels"), its unit,
    'auto' (or the schema's "x-null-text") for null; lists as comma-separated items."""
    prop = _setting_prop(engine, key)
    labels = prop.get("x-labels") or {}
    if value is None:
        return str(prop.get("x-null-text") or "none")
    if isinstance(value, str):
        return str(labels.get(value, value)) if value != "" else "none"
    if isinstance(value, list):
        return ", ".join(format_setting(engine, key, v) if not isinstance(v, (list, dict)) else str(v)
                         for v in value) or "none"
    if isinstance(value, dict):
        import json

        return json.dumps(value, separators=(", ", ": ")) if value else "none"
    if str(value) in labels:
        return str(labels[str(value)])
    return format_number(value, setting_unit(engine, key))


# ---------------------------------------------------------------- metrics, by engine
def engine_metrics(engine: str) -> tuple[Metric, ...]:
    """The metrics an engine's result declares; none for an engine this version does not know."""
    from core.engine import engines

    spec = engines().get(engine)
    return declared(spec.result_type) if spec else ()


def metric_of(engine: str, name: str) -> Metric:
    """The engine's declared metric `name`, or one named by its words (a key kept from an older version)."""
    found = next((m for m in engine_metrics(engine) if m.name == name), None)
    if found is None and name == DURATION.name:
        return DURATION
    return found or Metric(name, humanise(name))


def readings(engine: str, headline: Mapping[str, Any]) -> list[tuple[Metric, Any]]:
    """A stored headline as (metric, value) pairs: the engine's declared metrics in their order,
    then any key it no longer declares."""
    known = engine_metrics(engine)
    out = [(m, headline[m.name]) for m in known if m.name in headline]
    names = {m.name for m in known}
    return out + [(metric_of(engine, k), v) for k, v in headline.items() if k not in names]


def lead(engine: str, headline: Mapping[str, Any]) -> tuple[Metric, Any] | None:
    """The headline metric a person compares runs by: the first declared one the run has."""
    pairs = readings(engine, headline)
    return pairs[0] if pairs else None
