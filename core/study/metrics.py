"""The metrics a study collects from each point: headline keys or dotted paths into the result.

A metric named like one the engine's result declares (core.metrics, e.g. cain's `length`) reads
the headline; any other name is a path into the result (`totals.optimal`,
`simulated.gops[0]`), checked against the engine's typed result when the study is read.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import types
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin, get_type_hints

from core.engine import EngineSpec
from core.errors import InputError
from core.metrics import declared
from core.results import EngineResult, to_plain

_PART = re.compile(r"([A-Za-z_][\w-]*)((?:\[-?\d+\])*)")     # [-1]: the last item


@dataclass(frozen=True)
class StudyMetric:
    """One column of a study's results: a headline metric the engine's result declares, or a path."""

    name: str                   # the column's name
    path: str | None = None     # a path into the result; None: the headline key `name`


def split_path(path: str) -> list[str | int]:
    """"a.b[2].c" -> ["a", "b", 2, "c"]; ValueError when the text is not such a path."""
    steps: list[str | int] = []
    for part in path.split("."):
        m = _PART.fullmatch(part)
        if m is None or not m.group(1):
            raise ValueError(path)
        steps.append(m.group(1))
        steps += [int(i) for i in re.findall(r"\[(-?\d+)\]", m.group(2))]
    return steps


def headline_keys(rtype: type[EngineResult] | None) -> tuple[str, ...]:
    """The headline keys of an engine's result: the names of the metrics its type declares."""
    return tuple(m.name for m in declared(rtype))


def default_direction(rtype: type[EngineResult] | None, name: str) -> str:
    """A search objective's direction when the study names none: the declared metric's better way
    ("higher" -> maximize), else minimize."""
    better = next((m.better for m in declared(rtype) if m.name == name), None)
    return "maximize" if better == "higher" else "minimize"


def _unwrap(tp: Any) -> Any:
    if get_origin(tp) in (Union, types.UnionType):
        arms = [a for a in get_args(tp) if a is not type(None)]
        return arms[0] if len(arms) == 1 else Any
    return tp


def _check_path(rtype: type, steps: list[str | int], where: str, engine: str) -> None:
    """Walk the result type's hints along the path; stop where the type says "any JSON"."""
    tp: Any = rtype
    done = ""
    for step in steps:
        tp = _unwrap(tp)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            hints = get_type_hints(tp)
            fields = [f.name for f in dataclasses.fields(tp) if f.init]
            extras = any(f.metadata.get("core.results.extras") for f in dataclasses.fields(tp))
            if isinstance(step, int):
                raise InputError(f"{done or 'the result'} is an object, not a list", where)
            if step in hints and step in fields:
                tp = hints[step]
            elif extras:
                return
            else:
                close = difflib.get_close_matches(step, fields, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; fields: {', '.join(fields)}"
                raise InputError(f"{engine}'s result has no {(done + '.' if done else '') + step!r}{hint}", where)
        elif get_origin(tp) in (list, tuple) or tp in (list, tuple):
            if not isinstance(step, int):
                raise InputError(f"{done} is a list: index it with [n]", where)
            items = [a for a in get_args(tp) if a is not Ellipsis]
            tp = items[0] if len(items) == 1 else Any
        elif get_origin(tp) is dict or tp is dict:
            args = get_args(tp)
            tp = args[1] if args else Any
        else:
            return              # Any, or a plain value: nothing further to check here
        done += f"[{step}]" if isinstance(step, int) else (f".{step}" if done else step)


def read_metrics(raw: Any, spec: EngineSpec, where: str) -> list[StudyMetric]:
    """A study's "metrics": names and {"name", "path"} objects, checked against the engine's result."""
    if raw is None:
        return [StudyMetric(k) for k in headline_keys(spec.result_type)]
    if not isinstance(raw, list):
        raise InputError(f"expected a list of metric names, got {type(raw).__name__}", where)
    out: list[StudyMetric] = []
    heads = headline_keys(spec.result_type) or None
    for i, item in enumerate(raw):
        w = f"{where}[{i}]"
        path: str | None = None
        if isinstance(item, str):
            name = item
        elif isinstance(item, dict):
            unknown = [k for k in item if k not in ("name", "path")]
            if unknown:
                raise InputError("unknown field; a metric has a name and a path", f"{w}.{unknown[0]}")
            raw_name, raw_path = item.get("name"), item.get("path")
            if not isinstance(raw_name, str) or not raw_name:
                raise InputError("missing field" if raw_name is None else f"expected a name, got {raw_name!r}",
                                 f"{w}.name")
            if raw_path is not None and not isinstance(raw_path, str):
                raise InputError(f"expected a path like totals.optimal, got {raw_path!r}", f"{w}.path")
            name, path = raw_name, raw_path
        else:
            raise InputError(f"expected a metric name or {{\"name\", \"path\"}}, got {item!r}"[:200], w)
        if path is None and heads is not None and name in heads:
            out.append(StudyMetric(name))
            continue
        text = path or name
        try:
            steps = split_path(text)
        except ValueError:
            raise InputError(f"not a metric name or a path like totals.optimal: {text!r}", w) from None
        if spec.result_type is not None:
            try:
                _check_path(spec.result_type, steps, w, spec.name)
            except InputError as exc:
                if path is None and heads is not None and len(steps) == 1:
                    close = difflib.get_close_matches(name, list(heads), n=1)
                    hint = f"did you mean {close[0]!r}? " if close else ""
                    raise InputError(f"{name!r} is neither a headline key of {spec.name} ({', '.join(heads)}) "
                                     f"nor a field of its result; {hint}".rstrip("; "), w) from None
                raise exc
        out.append(StudyMetric(name, text))
    names = [m.name for m in out]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise InputError(f"a second metric is named {n!r}", f"{where}[{i}]")
    return out


def extract(result: EngineResult | None, metrics: list[StudyMetric]) -> dict[str, Any]:
    """Each metric's value from a finished point's typed result, as plain JSON (None where the result
    has nothing there): a headline key, or a path walked through the result's fields (the same path
    read_metrics checked against the result's type)."""
    out: dict[str, Any] = {}
    headline = {} if result is None else dict(result.headline())
    for m in metrics:
        if m.path is None:
            out[m.name] = headline.get(m.name)
            continue
        value: Any = result
        for step in split_path(m.path):
            value = _step(value, step)
            if value is None:
                break
        out[m.name] = to_plain(value)
    return out


def _step(value: Any, step: str | int) -> Any:
    """One step of a metric's path: a field of a result object (or one of its extra keys), an item
    of a list, a key of a free-form part."""
    if isinstance(step, int):
        return value[step] if isinstance(value, (list, tuple)) and -len(value) <= step < len(value) else None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name == step and not f.metadata.get("core.results.extras"):
                return getattr(value, step)
        extras = [getattr(value, f.name) for f in dataclasses.fields(value) if f.metadata.get("core.results.extras")]
        return extras[0].get(step) if extras else None
    return value.get(step) if isinstance(value, dict) else None
