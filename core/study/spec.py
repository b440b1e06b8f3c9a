"""A study file: reading (JSON or YAML), checking, and the Study it describes.

    {"format": "dataflow-explorer-study", "version": 1, "name": "Bounds at four memory sizes",
     "engine": "bound", "workload": {"library": "VGG-16"}, "target": {"kind": "dataflow"},
     "settings": {"sweep": false},
     "axes": [{"param": "workload.network", "from": "zoo"},
              {"param": "target.memory_bytes", "values": [65536, 131072, 262144, 524288]}],
     "metrics": ["optimal_traffic", "ratio_reference", "totals.bound"]}

Everything is checked before a point runs; a problem is an InputError whose `where` is the field,
e.g. `study.axes[1].values[2]`. docs/studies.md describes every field.
"""

from __future__ import annotations

import copy
import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.engine import EngineSpec, engines
from core.checks import check_name, check_numbers, field_path
from core.errors import InputError
from core.workload import TARGET_KINDS, WORKLOAD_KINDS
from core.study.axes import COMBINES, MAX_POINTS, AxisGroup, Point, expand, item_name, network_title, read_axes
from core.study.metrics import StudyMetric, default_direction, read_metrics
from core.study.search import Front, Objective, SearchSpec, read_objectives, read_search
from core.target_cost.fields import check_field_name, read_target_fields, read_target_value, target_properties
from core.numbers import format_number
from core.units import format_quantity, quantity_of

if TYPE_CHECKING:
    from core.project import Project

FORMAT = "dataflow-explorer-study"
VERSION = 1
SUFFIXES = (".json", ".yaml", ".yml")
MAX_STUDY_BYTES = 16 * 2 ** 20
FIELDS = ("format", "version", "name", "description", "engine", "workload", "target", "settings", "axes",
          "combine", "samples", "seed", "repeats", "metrics", "keep_results", "search", "cluster", "objectives")
# The "cluster" section: one batch job of workers for `--cluster slurm[:JOBS]` / `pbs[:JOBS]`
# (core.study.runner.batch_cluster); key -> (type, what it is)
CLUSTER_FIELDS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "queue": (str, "partition or queue"), "account": (str, "account to charge"),
    "cores": (int, "cores per job"), "processes": (int, "worker processes per job (one thread each)"),
    "memory": (str, "memory per job, e.g. 64GB"), "walltime": (str, "e.g. 04:00:00"),
    "python": (str, "the python of the environment the project is installed in, on the nodes"),
    "prologue": (list, "shell lines run before the worker starts"),
    "extra": (list, "extra #SBATCH / #PBS directives"), "interface": (str, "network interface, e.g. ib0"),
    "host": (str, "address the scheduler listens on"), "wait_s": ((int, float), "seconds to wait for the first worker"),
}


@dataclass
class Study:
    name: str
    engine: str
    spec: EngineSpec
    workload: dict[str, Any] | None         # base workload JSON (a generator stays one until each point)
    workload_name: str
    target: dict[str, Any] | None
    target_name: str
    settings: dict[str, Any]                # the engine's defaults with the study's overrides
    axes: list[AxisGroup]
    combine: str = "grid"
    samples: int = 0
    seed: int = 0
    repeats: int = 1
    metrics: list[StudyMetric] = field(default_factory=list)
    keep_results: bool = True
    description: str = ""
    path: Path | None = None
    points: list[Point] = field(default_factory=list)
    search: SearchSpec | None = None        # a search runs the points a sampler picks, not all of them
    cluster: dict[str, Any] = field(default_factory=dict)     # one batch job, for --cluster slurm / pbs
    objectives: list[Objective] = field(default_factory=list)  # a sweep's front (a search has its own)
    units: dict[str, str] = field(default_factory=dict)         # axis label -> its target field's unit

    def param_text(self, label: str, value: Any) -> str | None:
        """An axis value as people read it, with its field's unit ("8 KiB", "25.6 GB/s"); None
        when the axis has no unit."""
        unit = self.units.get(label)
        if unit is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return format_quantity(value, unit)

    def param_words(self, label: str, value: Any) -> str:
        """An axis value as a run's name or note reads it: with its field's unit ("25.6 GB/s"),
        text as written, a number as the window writes numbers, a whole workload or target by its
        name (a CNN by its network's), anything else as JSON."""
        text = self.param_text(label, value)
        if text is not None:
            return text
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return format_number(value)
        return item_name(value, json.dumps(value, separators=(",", ":")))

    @property
    def front_spec(self) -> SearchSpec | Front | None:
        """What the study's Pareto front is over: the search's objectives, or the sweep's."""
        if self.search is not None:
            return self.search
        return Front(self.objectives) if self.objectives else None

    @property
    def axis_labels(self) -> list[str]:
        return [a.label for g in self.axes for a in g.axes]

    def results_path(self) -> Path:
        """Where results go by default: beside the study file, NAME.results.jsonl."""
        if self.path is None:
            raise InputError("a study that is not in a file needs a results file: give one", "--out")
        return self.path.with_name(self.path.stem + ".results.jsonl")


# ================================================================ reading text
def parse_text(text: str, where: str = "study", yaml_first: bool = False) -> Any:
    """A study document from JSON or YAML text (YAML is a superset: JSON that fails is tried as YAML
    only when it does not look like JSON)."""
    stripped = text.lstrip()
    if not yaml_first or stripped.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if stripped.startswith("{") or not yaml_first and stripped.startswith("["):
                hint = " (the file looks truncated)" if exc.pos >= len(text.rstrip()) else ""
                raise InputError(f"not valid JSON: {exc.msg}{hint}", f"{where}:{exc.lineno}:{exc.colno}") from None
    import yaml

    try:
        # An alias (*name) repeats a node; nested ones grow a document exponentially (a "billion
        # laughs" file hangs the reader), and a study never needs one: refused before building.
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                pos = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
                raise InputError(f"YAML aliases (*{event.anchor}) are not allowed in a study file; write the value "
                                 f"out", f"{where}{pos}")
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        pos = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"not valid YAML or JSON: {problem}", f"{where}{pos}") from None


def load(path: str | Path, project: "Project | None" = None) -> Study:
    """Read and check a study file; library names refer to `project` (default: the starter library)."""
    path = Path(path)
    try:
        if path.exists() and not path.is_file():        # a folder, a FIFO or a device: never read
            raise InputError("not a regular file", str(path))
        if path.stat().st_size > MAX_STUDY_BYTES:
            raise InputError(f"{path.stat().st_size} bytes; a study file holds at most {MAX_STUDY_BYTES}", str(path))
        text = path.read_text(encoding="utf-8-sig")         # a BOM (Notepad) is fine
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", str(path)) from None
    except UnicodeDecodeError:
        raise InputError("not a text (UTF-8) file", str(path)) from None
    doc = parse_text(text, str(path), yaml_first=path.suffix.lower() in (".yaml", ".yml"))
    return from_json(doc, project, path)


# ================================================================ checking
def _axis_units(study: Study) -> dict[str, str]:
    """The unit of each axis over a field of the base target that has one (core.units knows it)."""
    kind = study.target.get("kind") if isinstance(study.target, dict) else None
    props = target_properties(kind) if isinstance(kind, str) else None
    out: dict[str, str] = {}
    for g in study.axes:
        for a in g.axes:
            if props and len(a.steps) == 2 and a.steps[0] == "target" and a.steps[1] in props:
                unit = props[str(a.steps[1])].get("unit")
                if quantity_of(unit) is not None:
                    out[a.label] = str(unit)
    return out


def _target_fields(base: dict[str, Any] | None, raw_axes: Any) -> Any:
    """How an axis over a field of the base target reads its values: text with a unit ("64 KiB",
    "25.6 GB/s") in the field's unit and range, the field's name checked where the axis names it.
    None when the targets of the points may be of other kinds (an axis over whole targets)."""
    kind = base.get("kind") if isinstance(base, dict) else None
    whole = isinstance(raw_axes, list) and any(
        isinstance(a, dict) and (a.get("param") == "target" or any(
            isinstance(z, dict) and z.get("param") == "target" for z in a.get("zip", []) or []))
        for a in raw_axes)
    if not isinstance(kind, str) or whole:
        return None

    def reader(steps: list[str | int], where: str) -> Any:
        if len(steps) != 2 or steps[0] != "target" or not isinstance(steps[1], str):
            return None
        name = steps[1]
        check_field_name(kind, name, where)
        return lambda value, w, in_range=True: read_target_value(kind, name, value, w, in_range)
    return reader


def read_cluster_section(raw: Any, where: str = "study.cluster") -> dict[str, Any]:
    """The study's batch-job description, checked (types, no unknown keys, positive counts)."""
    if not isinstance(raw, dict):
        raise InputError("expected an object like {\"queue\": \"compute\", \"cores\": 16, \"memory\": \"64GB\"}", where)
    for key, value in raw.items():
        if key not in CLUSTER_FIELDS:
            near = difflib.get_close_matches(str(key), list(CLUSTER_FIELDS), n=1)
            raise InputError("unknown field" + (f"; did you mean {near[0]!r}?" if near else
                                                f"; known: {', '.join(CLUSTER_FIELDS)}"), field_path(where, key))
        kind, what = CLUSTER_FIELDS[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise InputError(f"expected {what}, got {value!r}"[:200], f"{where}.{key}")
        if key in ("cores", "processes", "wait_s") and value <= 0:
            raise InputError(f"must be positive, got {value!r}", f"{where}.{key}")
        if key in ("prologue", "extra") and not all(isinstance(x, str) for x in value):
            raise InputError("expected a list of text lines", f"{where}.{key}")
    return dict(raw)


def _int(doc: dict[str, Any], key: str, lo: int, hi: int, default: int) -> int:
    v = doc.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise InputError(f"must be an integer {lo}..{hi}, got {v!r}"[:200], f"study.{key}")
    return v


def _library(project: "Project | None") -> "Project":
    if project is not None:
        return project
    from core.project import Project

    return Project.starter()


def from_json(doc: Any, project: "Project | None" = None, path: Path | None = None) -> Study:
    """Check a decoded study document and expand its points; InputError names the field."""
    if not isinstance(doc, dict):
        raise InputError(f"a study is an object, got {type(doc).__name__}", "study")
    check_numbers(doc, "study")         # finite numbers in range, nesting bounded, as sessions and kernel files
    for k in doc:
        if k not in FIELDS:
            close = difflib.get_close_matches(str(k), FIELDS, n=1)
            raise InputError("unknown field" + (f"; did you mean {close[0]!r}?" if close else ""), field_path("study", k))
    if doc.get("format", FORMAT) != FORMAT:
        raise InputError(f"not a study (format is {doc.get('format')!r}, expected {FORMAT!r})", "study.format")
    version = doc.get("version", VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= VERSION:
        raise InputError(f"this Dataflow Explorer reads study version {VERSION}, got {version!r}", "study.version")
    engine = doc.get("engine")
    known = engines()
    if not isinstance(engine, str):
        raise InputError("missing field" if engine is None else f"expected an engine name, got {engine!r}",
                         "study.engine")
    if engine not in known:
        raise InputError(f"unknown engine {engine!r}; known: {', '.join(known)}", "study.engine")
    spec = known[engine]
    name = doc.get("name", path.stem if path else engine)
    if not isinstance(name, str):
        raise InputError(f"expected a name, got {name!r}", "study.name")
    check_name(name, "study.name")
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise InputError(f"expected text, got {description!r}"[:200], "study.description")

    lib: list[Project] = []             # the library, built only when a study refers to it

    def library() -> "Project":
        if not lib:
            lib.append(_library(project))
        return lib[0]

    def resolve_item(root: str, value: Any, where: str) -> tuple[dict[str, Any], str | None]:
        """A whole workload or target: a JSON value, a generator, or {"library": NAME}."""
        if isinstance(value, str):
            value = {"library": value}
        if not isinstance(value, dict):
            raise InputError(f"expected a {root} object or {{\"library\": NAME}}, got {value!r}"[:200], where)
        if "library" in value:
            if len(value) != 1 or not isinstance(value["library"], str):
                raise InputError("a library reference is {\"library\": NAME}", where)
            entries = library().entries(root + "s")
            e = next((x for x in entries if x.name == value["library"]), None)
            if e is None:
                names = ", ".join(repr(x.name) for x in entries)
                raise InputError(f"no {root} named {value['library']!r} in the library; it has {names}",
                                 f"{where}.library")
            return e.value.to_json(), e.name
        if "kind" not in value and "generate" not in value:
            raise InputError(f"a {root} has a kind (or is {{\"library\": NAME}})", f"{where}.kind")
        if root == "target":        # fields written with their units ("64 KiB"), read in each field's unit
            value = read_target_fields(value, where)
        return copy.deepcopy(value), None

    base: dict[str, tuple[dict[str, Any] | None, str]] = {}
    for root, kinds in (("workload", spec.workload_kinds), ("target", spec.target_kinds)):
        if root in doc and doc[root] is not None:
            value, item_name = resolve_item(root, doc[root], f"study.{root}")
            kinds_titles = WORKLOAD_KINDS if root == "workload" else TARGET_KINDS
            title = value.get("name") if isinstance(value.get("name"), str) else network_title(value) or \
                kinds_titles.get(str(value.get("kind")), "random kernels" if "generate" in value else root)
            base[root] = (value, item_name or str(title))
        elif kinds:             # the item the engine's tab would pick in that library
            entry = library().chosen(engine, root + "s")
            base[root] = (entry.value.to_json(), entry.name) if entry else (None, "")
        else:
            base[root] = (None, "")

    defaults = spec.default_settings()
    setting_keys = set(defaults) | set(spec.settings_schema.get("properties", {}))
    raw_settings = doc.get("settings", {})
    if not isinstance(raw_settings, dict):
        raise InputError(f"expected an object of settings, got {type(raw_settings).__name__}", "study.settings")
    for k in raw_settings:
        if k not in setting_keys:
            close = difflib.get_close_matches(str(k), sorted(setting_keys), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(sorted(setting_keys))}"
            raise InputError(f"{engine} has no such setting; {hint}", field_path("study.settings", k))
    settings = {**defaults, **copy.deepcopy(raw_settings)}

    combine = doc.get("combine", "grid")
    if combine not in COMBINES:
        raise InputError(f"must be one of {', '.join(COMBINES)}, got {combine!r}"[:200], "study.combine")
    samples = 0
    if combine == "random":
        if "samples" not in doc:
            raise InputError("missing field: how many random points to draw", "study.samples")
        samples = _int(doc, "samples", 1, MAX_POINTS, 1)
    elif "samples" in doc:
        raise InputError("samples goes with combine: random", "study.samples")
    seed = _int(doc, "seed", 0, 2 ** 31 - 1, 0)
    repeats = _int(doc, "repeats", 1, 1000, 1)
    keep = doc.get("keep_results", True)
    if not isinstance(keep, bool):
        raise InputError(f"expected true or false, got {keep!r}", "study.keep_results")
    axes = read_axes(doc.get("axes"), "study.axes", combine, seed, resolve_item, setting_keys,
                     _target_fields(base["target"][0], doc.get("axes")))
    metrics = read_metrics(doc.get("metrics"), spec, "study.metrics")
    study = Study(name=name, engine=engine, spec=spec, workload=base["workload"][0], workload_name=base["workload"][1],
                  target=base["target"][0], target_name=base["target"][1], settings=settings, axes=axes,
                  combine=combine, samples=samples, seed=seed, repeats=repeats, metrics=metrics, keep_results=keep,
                  description=description, path=path)
    if "search" in doc:
        if combine != "grid" or repeats != 1:
            raise InputError("a search picks points of the study's grid, each once: it goes with combine: grid "
                             "and repeats: 1", "study.search")
    study.cluster = read_cluster_section(doc.get("cluster", {}))
    study.units = _axis_units(study)
    study.points = expand(study)
    directions = {m.name: default_direction(spec.result_type, m.name) for m in metrics if m.path is None}
    if "objectives" in doc:
        if "search" in doc:
            raise InputError("a search's objectives go in search.objectives", "study.objectives")
        study.objectives = read_objectives(doc["objectives"], [m.name for m in metrics], "study.objectives",
                                           directions)
    if "search" in doc:
        study.search = read_search(doc["search"], [m.name for m in metrics], len(study.points),
                                   directions=directions)
    return study
