"""A study's axes and their expansion into points.

An axis varies one parameter: `settings.KEY` (or a path inside a setting), `workload` or `target`
(whole library items or JSON values), or one of their fields (`workload.network`,
`target.bandwidth_gbps`). Its values are listed (`values`), counted (`range`), taken from a
built-in list (`from`: every zoo network, filter preset, board or MERIT workload) or drawn at random
(`random`, with the study's seed). Several axes in a `zip` move together. The study's `combine` says
how the entries meet: `grid` (every combination), `zip` (the i-th value of each) or `random`
(`samples` points drawn with the seed).

Every point is built and checked (workload, target and settings readers, the engine's kinds and
settings schema) before anything runs, so a bad value is refused with its place in the file.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import jsonschema

from core.errors import InputError
from core.study import generate
from core.study.metrics import split_path
from core.workload import target_from_json, workload_from_json

if TYPE_CHECKING:
    from core.study.spec import Study

ROOTS = ("settings", "workload", "target")
COMBINES = ("grid", "zip", "random")
MAX_POINTS = 100_000
DISTRIBUTIONS = ("integers", "uniform", "log_uniform", "choice")


def _zoo() -> list[str]:
    from core.nets import zoo

    return zoo.names()


def _presets() -> list[str]:
    from core.filters import PRESETS

    return list(PRESETS)


def _boards() -> list[str]:
    from core.boards import BOARDS

    return list(BOARDS)


def _merit() -> list[str]:
    from core.merit_transform import workloads

    return workloads.names()


# `"from": NAME` lists: the project's own catalogues, so a study over "every zoo network" follows the zoo.
SOURCES: dict[str, Callable[[], list[str]]] = {"zoo": _zoo, "filter_presets": _presets, "boards": _boards,
                                               "merit_workloads": _merit}


@dataclass
class Axis:
    param: str                      # e.g. "settings.time_s", "workload", "target.memory_bytes"
    steps: list[str | int]          # the param split: ["settings", "time_s"]
    label: str                      # column name in tables and results
    values: list[Any]               # listed, counted, looked up or drawn (empty: drawn per sample)
    names: list[str | None]         # library names of whole workload/target values (else None)
    where: str                      # "study.axes[1]" or "study.axes[1].zip[0]"
    source: str                     # values | range | from | random: where the values came from
    random: dict[str, Any] | None = None    # the distribution, for combine "random" without a count

    def value_where(self, j: int) -> str:
        return f"{self.where}.values[{j}]" if self.source == "values" else f"{self.where}.{self.source}"


@dataclass
class AxisGroup:
    """One entry of "axes": one axis, or several zipped (moving together)."""

    axes: list[Axis]
    where: str

    def __len__(self) -> int:
        return len(self.axes[0].values)


@dataclass
class Point:
    """One engine run of a study: its setup, and the axis values that made it."""

    index: int
    key: str                        # stable across runs of the study: its content, hashed
    params: dict[str, Any]          # axis label -> value (a library item's name for whole items)
    repeat: int
    workload: dict[str, Any] | None
    target: dict[str, Any] | None
    settings: dict[str, Any]
    workload_name: str
    target_name: str

    def request_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "target": self.target, "settings": self.settings}

    def describe(self) -> str:
        bits = [f"{k}={_short(v)}" for k, v in self.params.items()]
        if self.repeat:
            bits.append(f"repeat {self.repeat + 1}")
        return ", ".join(bits) or "base point"


def _short(v: Any) -> str:
    text = v if isinstance(v, str) else json.dumps(v)
    return text if len(text) <= 40 else text[:37] + "..."


# ================================================================ reading
def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _draw(rng: random.Random, dist: dict[str, Any]) -> Any:
    kind, arg = next(iter(dist.items()))
    if kind == "integers":
        return rng.randint(arg[0], arg[1])
    if kind == "uniform":
        return rng.uniform(arg[0], arg[1])
    if kind == "log_uniform":
        return math.exp(rng.uniform(math.log(arg[0]), math.log(arg[1])))
    return copy.deepcopy(rng.choice(arg))


def _read_distribution(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict) or len(raw) != 1:
        raise InputError(f"expected one of {{{', '.join(f'{d!r}: ...' for d in DISTRIBUTIONS)}}}", where)
    kind, arg = next(iter(raw.items()))
    if kind not in DISTRIBUTIONS:
        raise InputError(f"unknown distribution {kind!r}; known: {', '.join(DISTRIBUTIONS)}", f"{where}.{kind}")
    if kind == "choice":
        if not isinstance(arg, list) or not arg:
            raise InputError("expected a non-empty list of values to choose from", f"{where}.choice")
        return {kind: arg}
    if not (isinstance(arg, list) and len(arg) == 2 and all(_number(x) for x in arg) and arg[0] <= arg[1]):
        raise InputError(f"expected [low, high] with low <= high, got {arg!r}"[:200], f"{where}.{kind}")
    if kind == "integers" and not all(isinstance(x, int) for x in arg):
        raise InputError(f"expected two integers, got {arg!r}", f"{where}.{kind}")
    if kind == "log_uniform" and arg[0] <= 0:
        raise InputError(f"log_uniform needs low > 0, got {arg[0]}", f"{where}.{kind}")
    return {kind: arg}


# How an axis reads the values the file writes for its parameter: (value, where, in_range) -> value,
# e.g. "64 KiB" -> 65536 for target.memory_bytes (in_range False: a range's step, a difference)
ValueReader = Callable[..., Any]


def _read_range(raw: Any, where: str, read: ValueReader | None = None) -> list[Any]:
    if not isinstance(raw, dict):
        raise InputError('expected {"from": A, "to": B, "step": S} or {"from": A, "to": B, "times": F} '
                         '(both ends included)', where)
    for k in raw:
        if k not in ("from", "to", "step", "times"):
            raise InputError('unknown field; a range has "from", "to" and "step" or "times"', f"{where}.{k}")
    if "step" in raw and "times" in raw:
        raise InputError("give step (equal differences) or times (equal ratios), not both", f"{where}.times")
    lo, hi, step, times = raw.get("from"), raw.get("to"), raw.get("step", 1), raw.get("times")
    if read is not None:            # quantities with their units ("64 KiB"), read in the field's unit
        lo, hi = read(lo, f"{where}.from"), read(hi, f"{where}.to")
        step = read(step, f"{where}.step", False)
    for k, v in (("from", lo), ("to", hi), ("step", step)) + ((("times", times),) if times is not None else ()):
        if not _number(v):
            raise InputError("missing field" if v is None else f"expected a number, got {v!r}", f"{where}.{k}")
    assert lo is not None and hi is not None
    if step <= 0:
        raise InputError(f"must be positive, got {step}", f"{where}.step")
    if hi < lo:
        raise InputError(f"must not be below from ({lo}), got {hi}", f"{where}.to")
    if times is not None:
        return _geometric(lo, hi, times, where)
    n = int(math.floor((hi - lo) / step + 1e-9)) + 1
    if n > MAX_POINTS:
        raise InputError(f"{n} values; at most {MAX_POINTS}", where)
    if all(isinstance(v, int) for v in (lo, hi, step)):
        return [lo + i * step for i in range(n)]
    return [round(lo + i * step, 12) for i in range(n)]


def _geometric(lo: float, hi: float, times: float, where: str) -> list[Any]:
    """lo, lo x times, lo x times^2, ... up to hi (integers stay integers)."""
    if times <= 1:
        raise InputError(f"must be above 1 (each value that many times the last), got {times}", f"{where}.times")
    if lo <= 0:
        raise InputError(f"a range by times starts above 0, got {lo}", f"{where}.from")
    n = int(math.floor(math.log(hi / lo) / math.log(times) + 1e-9)) + 1
    if n > MAX_POINTS:
        raise InputError(f"{n} values; at most {MAX_POINTS}", where)
    if all(isinstance(v, int) for v in (lo, hi, times)):
        return [int(lo) * int(times) ** i for i in range(n)]
    return [round(lo * times ** i, 12) for i in range(n)]


def _label(steps: list[str | int], param: str) -> str:
    if len(steps) == 1:
        return param
    tail = param.split(".", 1)[1]
    return tail


def read_axis(raw: Any, where: str, combine: str, rng: random.Random,
              resolve_item: Callable[[str, Any, str], tuple[dict[str, Any], str | None]],
              setting_keys: set[str], fields: Callable[[list[str | int], str], ValueReader | None] | None = None
              ) -> Axis:
    """One axis object; `resolve_item(root, value, where)` turns a library reference or a JSON value
    of a whole workload/target into (JSON value, library name or None); `fields(steps, where)`, where
    given, checks the parameter's name and says how its values are read (None: as they are)."""
    if not isinstance(raw, dict):
        raise InputError(f"expected an axis object like {{\"param\": \"settings.time_s\", \"values\": [1, 5]}}, "
                         f"got {type(raw).__name__}", where)
    known = ("param", "label", "values", "range", "from", "random", "count")
    for k in raw:
        if k not in known:
            raise InputError(f"unknown field; an axis has {', '.join(known)}", f"{where}.{k}")
    param = raw.get("param")
    if not isinstance(param, str):
        raise InputError("missing field" if param is None else f"expected a parameter path, got {param!r}",
                         f"{where}.param")
    try:
        steps = split_path(param)
    except ValueError:
        raise InputError(f"not a parameter path like settings.time_s or target.memory_bytes: {param!r}",
                         f"{where}.param") from None
    if steps[0] not in ROOTS:
        raise InputError(f"a parameter starts with {', '.join(ROOTS)}; got {param!r}", f"{where}.param")
    if steps[0] == "settings":
        if len(steps) == 1:
            raise InputError("name a setting, e.g. settings.time_s", f"{where}.param")
        if steps[1] not in setting_keys:
            raise InputError(f"the engine has no setting {steps[1]!r}; known: {', '.join(sorted(setting_keys))}",
                             f"{where}.param")
    read = fields(steps, f"{where}.param") if fields is not None else None
    label = raw.get("label", _label(steps, param))
    if not isinstance(label, str) or not label:
        raise InputError(f"expected a column name, got {label!r}", f"{where}.label")
    sources = [k for k in ("values", "range", "from", "random") if k in raw]
    if len(sources) != 1:
        raise InputError("give exactly one of values, range, from, random"
                         + (f" (got {', '.join(sources)})" if sources else ""), where)
    source = sources[0]
    count = raw.get("count")
    if count is not None and source != "random":
        raise InputError("count goes with random values only", f"{where}.count")
    dist: dict[str, Any] | None = None
    if source == "values":
        values = raw["values"]
        if not isinstance(values, list) or not values:
            raise InputError("expected a non-empty list", f"{where}.values")
        values = copy.deepcopy(values)
        if read is not None:
            values = [read(v, f"{where}.values[{j}]") for j, v in enumerate(values)]
    elif source == "range":
        values = _read_range(raw["range"], f"{where}.range", read)
    elif source == "from":
        name = raw["from"]
        if name not in SOURCES:
            raise InputError(f"unknown list {name!r}; known: {', '.join(SOURCES)}", f"{where}.from")
        values = SOURCES[name]()
    else:
        dist = _read_distribution(raw["random"], f"{where}.random")
        if combine == "random":
            if count is not None:
                raise InputError("with combine: random every sample draws its own value; leave count out",
                                 f"{where}.count")
            values = []
        else:
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_POINTS:
                raise InputError("missing field: how many values to draw" if count is None
                                 else f"must be 1..{MAX_POINTS}, got {count!r}", f"{where}.count")
            values = [_draw(rng, dist) for _ in range(count)]
    names: list[str | None] = [None] * len(values)
    if len(steps) == 1:             # whole workloads or targets
        resolved = [resolve_item(steps[0], v, f"{where}.{source}" if source != "values" else f"{where}.values[{j}]")
                    for j, v in enumerate(values)]
        values = [r[0] for r in resolved]
        names = [r[1] for r in resolved]
    return Axis(param, steps, label, values, names, where, source, dist if not values else None)


def read_axes(raw: Any, where: str, combine: str, seed: int,
              resolve_item: Callable[[str, Any, str], tuple[dict[str, Any], str | None]],
              setting_keys: set[str], fields: Callable[[list[str | int], str], ValueReader | None] | None = None
              ) -> list[AxisGroup]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError(f"expected a list of axes, got {type(raw).__name__}", where)
    groups: list[AxisGroup] = []
    for i, item in enumerate(raw):
        w = f"{where}[{i}]"
        rng = random.Random(f"{seed}/{i}")          # each axis its own stream: adding one changes no other
        if isinstance(item, dict) and "zip" in item:
            if len(item) != 1:
                raise InputError("a zip entry holds only its list of axes", f"{w}.{next(k for k in item if k != 'zip')}")
            members = item["zip"]
            if not isinstance(members, list) or len(members) < 2:
                raise InputError("expected a list of two or more axes", f"{w}.zip")
            axes = [read_axis(a, f"{w}.zip[{j}]", combine, rng, resolve_item, setting_keys, fields)
                    for j, a in enumerate(members)]
            n = len(axes[0].values)
            for j, a in enumerate(axes):
                if len(a.values) != n or (a.random is not None) != (axes[0].random is not None):
                    raise InputError(f"zipped axes move together: this one has {len(a.values)} values, the first "
                                     f"{n}", f"{w}.zip[{j}]")
            groups.append(AxisGroup(axes, w))
        else:
            groups.append(AxisGroup([read_axis(item, w, combine, rng, resolve_item, setting_keys, fields)], w))
    seen: dict[str, str] = {}
    for g in groups:
        for a in g.axes:
            if a.param in seen:
                raise InputError(f"{a.param} is varied twice (also at {seen[a.param]})", f"{a.where}.param")
            seen[a.param] = a.where
            if a.label in {x.label for gg in groups for x in gg.axes if x is not a}:
                raise InputError(f"a second axis has the label {a.label!r}: give one a label", f"{a.where}.label")
    return groups


# ================================================================ expansion
Assignment = tuple[Axis, Any, "str | None"]


def combinations(study: "Study") -> list[list[Assignment]]:
    """The axis values of every point (before repeats), in the order the study lists them."""
    groups = study.axes
    if not groups:
        return [[]]

    def pick(g: AxisGroup, j: int) -> list[Assignment]:
        return [(a, a.values[j], a.names[j]) for a in g.axes]

    # every way of combining is capped before anything is built: repeats multiply them all
    total = {"grid": math.prod(len(g) for g in groups), "zip": len(groups[0])}.get(study.combine, study.samples)
    if total * study.repeats > MAX_POINTS:
        raise InputError(f"{total} x {study.repeats} repeat(s) = {total * study.repeats} points; a study holds at most "
                         f"{MAX_POINTS}", "study.repeats" if total <= MAX_POINTS else
                         "study.samples" if study.combine == "random" else "study.axes")
    if study.combine == "grid":
        return [[x for g, j in zip(groups, js) for x in pick(g, j)]
                for js in itertools.product(*(range(len(g)) for g in groups))]
    if study.combine == "zip":
        n = len(groups[0])
        for g in groups:
            if len(g) != n:
                raise InputError(f"combine: zip takes the i-th value of every axis: this one has {len(g)} "
                                 f"values, the first {n}", g.where)
        return [[x for g in groups for x in pick(g, j)] for j in range(n)]
    rng = random.Random(f"{study.seed}/samples")
    out = []
    for _ in range(study.samples):
        row: list[Assignment] = []
        for g in groups:
            if g.axes[0].random is not None:
                row += [(a, _draw(rng, a.random or {}), None) for a in g.axes]
            else:
                row += pick(g, rng.randrange(len(g)))
        out.append(row)
    return out


def _set_path(doc: dict[str, Any], steps: list[str | int], value: Any, where: str) -> None:
    cur: Any = doc
    for k, step in enumerate(steps[:-1]):
        nxt = cur[step] if isinstance(cur, list) and isinstance(step, int) and step < len(cur) else \
            cur.get(step) if isinstance(cur, dict) and isinstance(step, str) else None
        if nxt is None and isinstance(cur, dict) and isinstance(step, str):
            nxt = cur[step] = {}
        if not isinstance(nxt, (dict, list)):
            path = ".".join(str(s) for s in steps[:k + 1])
            raise InputError(f"{path} is not an object or list here, so it has no {steps[k + 1]!r}", where)
        cur = nxt
    last = steps[-1]
    if isinstance(cur, list) and isinstance(last, int) and last < len(cur):
        cur[last] = copy.deepcopy(value)
    elif isinstance(cur, dict) and isinstance(last, str):
        cur[last] = copy.deepcopy(value)
    else:
        raise InputError(f"cannot set {'.'.join(map(str, steps))} here", where)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def build_point(study: "Study", assignments: list[Assignment], index: int, repeat: int, where: str) -> Point:
    """The point an assignment of axis values makes (not yet checked)."""
    docs: dict[str, Any] = {"workload": copy.deepcopy(study.workload), "target": copy.deepcopy(study.target),
                            "settings": copy.deepcopy(study.settings)}
    names = {"workload": study.workload_name, "target": study.target_name}
    varied: dict[str, list[tuple[str, str]]] = {"workload": [], "target": []}      # (field, words)
    params: dict[str, Any] = {}
    for axis, value, name in sorted(assignments, key=lambda a: len(a[0].steps)):
        root = str(axis.steps[0])
        if len(axis.steps) == 1:
            docs[root] = copy.deepcopy(value)
            names[root] = name or item_name(value, names[root])
            params[axis.label] = name or value
        else:
            if docs[root] is None:
                raise InputError(f"the study has no base {root} whose {axis.steps[1]} could vary", f"{axis.where}.param")
            _set_path(docs[root], axis.steps[1:], value, f"{axis.where}.param")
            params[axis.label] = value
            if root in varied:
                varied[root].append((str(axis.steps[1]), f"{axis.label}={_short(study.param_words(axis.label, value))}"))
    # keep the axis order of the file for the params
    params = {a.label: params[a.label] for a, _v, _n in assignments}
    base_title = network_title(study.workload) if isinstance(study.workload, dict) else None
    if varied["workload"] and base_title is not None and study.workload_name == base_title:
        # the base's name was its network's: the point is named by its own network, not the base's
        names["workload"] = network_title(docs["workload"]) or names["workload"]
        varied["workload"] = [(f, text) for f, text in varied["workload"] if f not in NETWORK_FIELDS]
    for root in ("workload", "target"):
        if varied[root]:
            names[root] = f"{names[root]} ({', '.join(text for _f, text in varied[root])})"
    workload = generate.resolve(docs["workload"], f"{where}.workload")
    if workload is not docs["workload"] and isinstance(workload, dict) and "name" not in (docs["workload"] or {}):
        names["workload"] = str(workload.get("name", names["workload"]))
    key_doc = {"engine": study.engine, "workload": workload, "target": docs["target"], "settings": docs["settings"],
               "repeat": repeat}
    key = hashlib.sha1(canonical(key_doc).encode()).hexdigest()[:16]
    return Point(index, key, params, repeat, workload, docs["target"], docs["settings"], names["workload"],
                 names["target"])


NETWORK_FIELDS = ("network", "onnx_path")     # what a CNN's network_title is made of


def network_title(value: dict[str, Any]) -> str | None:
    """A CNN workload's network as people name it ("LeNet-5", an ONNX file's stem), else None."""
    from core.kinds import kind_of
    onnx, network = value.get("onnx_path"), value.get("network")
    if isinstance(onnx, str) and onnx:
        return Path(onnx).stem
    found = kind_of("workloads", str(value.get("kind")))
    if not isinstance(network, str) or found is None:
        return None
    title = found.variants().get(network)
    return title.split(" (")[0] if title else network


def item_name(value: Any, fallback: str) -> str:
    if isinstance(value, dict):
        if isinstance(value.get("name"), str) and value["name"]:
            return str(value["name"])
        title = network_title(value)
        if title:
            return title
        for k in ("preset", "builtin", "board"):
            if isinstance(value.get(k), str) and value[k]:
                return str(value[k])
        if isinstance(value.get("cnns"), list):
            return "+".join(map(str, value["cnns"]))
    return fallback


@dataclass
class Checker:
    """Checks points against the engine: workload and target readers, kinds, the engine's own
    objections and its settings schema; each distinct value is checked once."""

    study: "Study"
    _seen: dict[str, str | None] = field(default_factory=dict)

    def check(self, p: Point, parts: tuple[str, ...] = ROOTS) -> None:
        spec = self.study.spec
        for root, value, reader, kinds in (("workload", p.workload, workload_from_json, spec.workload_kinds),
                                           ("target", p.target, target_from_json, spec.target_kinds)):
            if root not in parts:
                continue
            if value is None:
                if kinds:
                    raise InputError(f"{spec.title} needs a {root}", root)
                continue
            memo = f"{root}:{canonical(value)}"
            if memo not in self._seen:
                self._seen[memo] = None
                try:
                    obj = reader(value, root)
                    if kinds and obj.kind not in kinds:
                        raise InputError(f"{spec.title} runs {' or '.join(kinds)}, not {obj.kind!r}", f"{root}.kind")
                    if root == "workload" and spec.workload_problem is not None:
                        why = spec.workload_problem(obj)  # type: ignore[arg-type]
                        if why:
                            raise InputError(why, root)
                except InputError as exc:
                    self._seen[memo] = f"{exc.where}\0{exc.message}"
            problem = self._seen[memo]
            if problem is not None:
                w, m = problem.split("\0", 1)
                raise InputError(m, w)
        if "settings" not in parts:
            return
        memo = "settings:" + canonical(p.settings)
        if memo not in self._seen:
            self._seen[memo] = None
            errors = sorted(jsonschema.Draft202012Validator(spec.settings_schema).iter_errors(p.settings),
                            key=lambda e: list(e.absolute_path))
            if errors:
                w = "settings" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in errors[0].absolute_path)
                self._seen[memo] = f"{w}\0{errors[0].message[:200]}"
        problem = self._seen[memo]
        if problem is not None:
            w, m = problem.split("\0", 1)
            raise InputError(m, w)


def _nested(exc: InputError) -> str:
    return f"{exc.where}: {exc.message}" if exc.where else exc.message


def check_axes(study: "Study", checker: Checker) -> None:
    """Each axis value alone over the base point, so that a bad one is named where it is written."""
    for g in study.axes:
        for a in g.axes:
            for j, value in enumerate(a.values):
                try:
                    checker.check(build_point(study, [(a, value, a.names[j])], 0, 0, a.value_where(j)),
                                  (str(a.steps[0]),))
                except InputError as exc:
                    shown = "" if a.source == "values" else f"value {_short(value)}: "
                    raise InputError(shown + _nested(exc), a.value_where(j)) from None


def expand(study: "Study") -> list[Point]:
    """Every point of the study, checked, with repeats; InputError names the file's field."""
    checker = Checker(study)
    whole = {str(a.steps[0]) for g in study.axes for a in g.axes if len(a.steps) == 1}
    try:
        checker.check(build_point(study, [], 0, 0, "study"), tuple(r for r in ROOTS if r not in whole))
    except InputError as exc:
        w = exc.where.split(".", 1)[0].split("[", 1)[0]
        raise InputError(_nested(exc), f"study.{w}" if w in ROOTS else "study") from None
    check_axes(study, checker)
    points: list[Point] = []
    seen: dict[str, int] = {}
    for combo in combinations(study):
        for r in range(study.repeats):
            where = f"study.points[{len(points)}]"
            p = build_point(study, combo, len(points), r, where)
            try:
                checker.check(p)
            except InputError as exc:
                raise InputError(f"{p.describe()}: {_nested(exc)}", where) from None
            n = seen.get(p.key, 0)
            seen[p.key] = n + 1
            if n:                   # the same point listed twice: both run, each keeps its own key
                p.key = f"{p.key}-{n + 1}"
            points.append(p)
    return points
