"""The session document and the project model, each made from the other: to_json writes a Project as a
document of the current format; from_json checks a decoded document (any version) and builds the
whole Project, or raises SessionError naming the first wrong field.

Reading checks in phases, each finding the first error in document order: format and version
(_check_start), numbers (check_numbers_phase), the migration of older versions, the structure
(check_schema_phase: the JSON schema), the meaning (read_meaning: workload and target readers, each
engine's settings schema, each stored result against its engine's result type). A document's runs,
nearly all of a large file, are checked by a RunChecks: in this process (LoadedRuns), or by
`session validate` in forked workers (core.session.validate). The phases are the same functions
either way, so both say the same first error, word for word.
"""

from __future__ import annotations

import copy
import datetime as _dt
from typing import Any, Protocol

from core import __version__
from core.checks import check_name, check_numbers, check_settings, deepcopy_json, schema_errors
from core.comparison_record import forget_missing
from core.errors import InputError, SessionError
from core.metrics import is_metric_value
from core.lifecycle import partials_json, read_partials
from core.project import EngineChoice, Entry, Project, Run, Snapshot, is_generated_name
from core.session.migrations import VERSION, _check_version, _migrate
from core.session.schema import _SCHEMA, FORMAT, _json_path
from core.workload import target_from_json, workload_from_json


# ================================================================ writing
def to_json(project: Project) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "app_version": __version__,
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "library": {lib: [{**e.to_json(), "auto_name": e.auto_name} for e in project.entries(lib)]
                    for lib in ("workloads", "targets")},
        "engines": {name: {"settings": c.settings, "workload": c.workload, "target": c.target}
                    for name, c in project.engines.items()},
        "runs": [_run_json(r) for r in project.runs if r.status != "running"],
        "view": dict(project.view),
    }


def _run_json(r: Run) -> dict[str, Any]:
    return {"id": r.id, "engine": r.engine, "status": r.status, "settings": r.settings,
            "workload": None if r.workload is None else r.workload.to_json(),
            "target": None if r.target is None else r.target.to_json(), "started_at": r.started_at,
            "finished_at": r.finished_at, "duration_s": r.duration_s,
            "result": None if r.result is None else r.result.to_json(),
            "result_version": None if r.result is None else type(r.result).VERSION,
            "partial": partials_json(r.partial), "series": r.series, "error": r.error, "headline": r.headline,
            "note": r.note, **({"parent": r.parent} if r.parent else {})}


# ================================================================ reading
def from_json(doc: Any, owned: bool = False, checked: bool = False, plain: bool = False) -> Project:
    """Check a decoded document and build the whole Project; raises SessionError naming the field.
    `owned`: the caller hands the document over (it was just decoded), so it is migrated in place
    instead of copied first (a copy of a large session is a third of its reading time).
    `checked`: these very bytes passed the number and schema phases before in this process (the
    loader's memo, storage.load_stamped): both are pure functions of the document, so only its
    meaning is read again. `plain`: check_numbers is known to have nothing to say of the document
    (core.checks.plain_loads found it so, storage.decode_plain), so the number phase is skipped."""
    from core.engine import engines

    _check_start(doc)
    # every number finite and a machine integer, nesting bounded (also makes deepcopy safe)
    if not (checked or plain):
        check_numbers_phase(*_split(doc))
    head, runs = _split(_migrate(doc if owned else deepcopy_json(doc)))
    if not checked:
        check_schema_phase(head, runs)
    return read_meaning(head, runs, engines())


# The first error of a phase in some runs: (run index, message, field) ...
RunError = tuple[int, str, str]
# ... and of the schema phase: (the field's path as schema_errors orders it, message, field)
SchemaError = tuple[list[str], str, str]


class RunChecks(Protocol):
    """A document's runs, checked by the loader's phases wherever they lie."""

    def numbers(self) -> RunError | None:
        """The first number check_numbers refuses in the runs, in document order."""

    def schema(self) -> SchemaError | None:
        """The runs' first schema error, in schema_errors' order."""

    def meaning(self, known: dict[str, Any]) -> tuple[list[str], list[Run], RunError | None]:
        """Every run's id, the runs read (up to the first error), and that first error."""


class LoadedRuns:
    """The runs of a document in this process's memory (the loader's own)."""

    def __init__(self, value: Any) -> None:
        self.value = value                                      # as the document holds it
        self.runs: list[Any] = value if isinstance(value, list) else []

    def numbers(self) -> RunError | None:
        try:
            check_numbers({"runs": self.value}, "session")
        except InputError as exc:
            return 0, exc.message, exc.where
        return None

    def schema(self) -> SchemaError | None:
        return runs_schema_error(self.runs, 0)

    def meaning(self, known: dict[str, Any]) -> tuple[list[str], list[Run], RunError | None]:
        ids = [r["id"] for r in self.runs]
        repeat = _first_repeat(ids)         # the runs after it are never read: that is the error
        return ids, *read_runs(self.runs[:repeat], 0, known)


def _split(doc: dict[str, Any]) -> tuple[dict[str, Any], LoadedRuns]:
    """The document with an empty list where its runs were (the head), and its runs. A "runs"
    that is not a list stays in the head, for the schema check to name."""
    runs = doc.get("runs")
    return ({**doc, "runs": []} if isinstance(runs, list) else doc), LoadedRuns(runs)


def check_numbers_phase(head: dict[str, Any], runs: RunChecks) -> None:
    """Every number finite and a machine integer, nesting bounded: the first error in document
    order, the runs in their place."""
    for key, value in head.items():
        if key == "runs":
            found = runs.numbers()
            if found is not None:
                raise SessionError(found[1], found[2])
            continue
        try:
            check_numbers({key: value}, "session")
        except InputError as exc:
            raise SessionError(exc.message, exc.where) from None


def check_schema_phase(head: dict[str, Any], runs: RunChecks) -> None:
    """The document against the format's JSON schema: its first error in schema_errors' order."""
    found: list[SchemaError] = [([str(x) for x in e.absolute_path], e.message[:300],
                                 _json_path(e.absolute_path, "session")) for e in schema_errors(_SCHEMA, head)[:1]]
    in_runs = runs.schema()
    if in_runs is not None:
        found.append(in_runs)
    if found:
        first = min(found, key=lambda f: f[0])
        raise SessionError(first[1], first[2])


def runs_schema_error(runs: list[Any], lo: int) -> SchemaError | None:
    """The first schema error of runs lo, lo+1, ... of a document (each checked on its own)."""
    item_schema = _SCHEMA["properties"]["runs"]["items"]
    worst: SchemaError | None = None
    for i, r in enumerate(runs, lo):
        errors = schema_errors(item_schema, r)
        if errors:
            parts = ["runs", i, *errors[0].absolute_path]
            found = ([str(x) for x in parts], errors[0].message[:300], _json_path(parts, "session"))
            if worst is None or found[0] < worst[0]:
                worst = found
    return worst


def read_runs(runs: list[dict[str, Any]], lo: int, known: dict[str, Any]) -> tuple[list[Run], RunError | None]:
    """Runs lo, lo+1, ... of a schema-checked document, read up to the first that is wrong."""
    out: list[Run] = []
    for i, r in enumerate(runs, lo):
        try:
            out.append(_run_from_json(r, f"session.runs[{i}]", known))
        except InputError as exc:
            return out, (i, exc.message, exc.where)
    return out, None


def _first_repeat(ids: list[str]) -> int | None:
    """The index of the first id that an earlier one already is."""
    seen: set[str] = set()
    for i, x in enumerate(ids):
        if x in seen:
            return i
        seen.add(x)
    return None


def read_meaning(head: dict[str, Any], runs: RunChecks, known: dict[str, Any]) -> Project:
    """The Project a schema-checked document describes: library and engines, runs, view, in that
    order; a run's id used twice is refused at its second use, before that run is read."""
    p = Project()
    try:
        _read_library_engines(head, p, known)
    except SessionError:
        raise
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    ids, built, wrong = runs.meaning(known)
    dup = _first_repeat(ids)
    if dup is not None and (wrong is None or dup <= wrong[0]):
        raise SessionError(f"a second run has id {ids[dup]!r}", f"session.runs[{dup}].id")
    if wrong is not None:
        raise SessionError(wrong[1], wrong[2])
    p.runs.extend(built)
    _read_view(head, p, known)
    return p


def _check_start(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise SessionError(f"a session is a JSON object, got {type(doc).__name__}", "session")
    if doc.get("format") != FORMAT:
        raise SessionError(f"not a Dataflow Explorer session (format is {doc.get('format')!r}, "
                           f"expected {FORMAT!r})", "session.format")
    _check_version(doc)


def _read_library_engines(doc: dict[str, Any], p: Project, known: dict[str, Any]) -> None:
    for lib, reader in (("workloads", workload_from_json), ("targets", target_from_json)):
        seen: set[str] = set()
        for i, item in enumerate(doc["library"][lib]):
            where = f"session.library.{lib}[{i}]"
            if item["id"] in seen:
                raise SessionError(f"a second item has id {item['id']!r}", f"{where}.id")
            seen.add(item["id"])
            check_name(item["id"], f"{where}.id")
            check_name(item["name"], f"{where}.name")
            value = reader(item["value"], f"{where}.value")
            auto = item.get("auto_name", is_generated_name(lib, item["name"], value))   # older files: by the name
            p.entries(lib).append(Entry(item["id"], item["name"], value, auto))
    for name, st in doc["engines"].items():
        where = f"session.engines.{name}"
        if name not in known:
            raise SessionError(f"unknown engine {name!r}; known: {', '.join(known)}", where)
        _settings_check(known[name].settings_schema, st["settings"], f"{where}.settings")
        for lib, key in (("workloads", "workload"), ("targets", "target")):
            ref = st.get(key)
            if ref is not None and p.entry(lib, ref) is None:
                raise SessionError(f"no {key} with id {ref!r} in the library", f"{where}.{key}")
        p.engines[name] = EngineChoice(dict(st["settings"]), st.get("workload"), st.get("target"))


def _read_view(doc: dict[str, Any], p: Project, known: dict[str, Any]) -> None:
    current = (doc.get("view") or {}).get("current_engine")
    if current is not None and current not in known:
        raise SessionError(f"unknown engine {current!r}", "session.view.current_engine")
    p.view = {**copy.deepcopy(doc.get("view", {})), "current_engine": current}     # the project's own
    if "compare" in p.view:         # the compared runs the file still holds (a deleted one drops out)
        held = {r.id for r in p.runs}
        p.view["compare"] = {**p.view["compare"], "runs": [i for i in p.view["compare"]["runs"] if i in held]}
    forget_missing(p.view, {r.id for r in p.runs})     # a comparison's part deleted: marked so
    for name in known:
        p.choice(name)              # engines the file does not mention start on their defaults


def _settings_check(schema: dict[str, Any], settings: Any, where: str) -> None:
    try:        # the engine's own settings check (core.checks): what the GUI and command line run
        check_settings(schema, settings, where)
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None


def _run_from_json(r: dict[str, Any], where: str, known: dict[str, Any]) -> Run:
    """One run of a migrated document (always the reader's own: decoded, or copied by from_json)."""
    if r["engine"] not in known:
        raise SessionError(f"unknown engine {r['engine']!r}; known: {', '.join(known)}", f"{where}.engine")
    spec = known[r["engine"]]
    check_name(r["id"], f"{where}.id")
    for key in ("workload", "target"):
        if isinstance(r.get(key), dict):
            check_name(r[key]["name"], f"{where}.{key}.name")
    _settings_check(spec.settings_schema, r["settings"], f"{where}.settings")
    snaps: dict[str, Snapshot | None] = {"workload": None, "target": None}
    for key, lib, kinds in (("workload", "workloads", spec.workload_kinds), ("target", "targets", spec.target_kinds)):
        if r.get(key) is not None:
            snap = snaps[key] = Snapshot.from_json(lib, r[key], f"{where}.{key}")
            value = snap.value
            if value.kind not in kinds:         # a snapshot the engine could never have run on
                raise SessionError(f"a {spec.name} run's {key} is of kind {value.kind!r}; the engine reads "
                                   f"{' or '.join(repr(k) for k in kinds) or f'no {key}'}",
                                   f"{where}.{key}.value.kind")
    data, headline = r.get("result"), r.get("headline") or {}
    if r["status"] == "finished" and data is None:
        raise SessionError("a finished run has no result", f"{where}.result")
    result = None if data is None else spec.result_type.from_json(data, r.get("result_version"), f"{where}.result",
                                                                   owned=True)
    if result is not None:
        headline = dict(result.headline())
    for key, value in headline.items():      # kept from the file when there is no result to recompute it
        if not is_metric_value(value):
            raise SessionError(f"expected a number, yes/no, a text, a list of numbers or null, got {type(value).__name__}",
                               f"{where}.headline.{key}")
    # read (and so checked) whatever the status; a finished run's are in its result (Project.finish_run)
    partial = read_partials(spec, r.get("partial"), f"{where}.partial")
    return Run(id=r["id"], engine=r["engine"], settings=dict(r["settings"]), workload=snaps["workload"],
               target=snaps["target"], status=r["status"], started_at=r["started_at"],
               finished_at=r.get("finished_at"), duration_s=r.get("duration_s"), result=result,
               partial={} if result is not None else partial, series=dict(r.get("series") or {}),
               error=r.get("error"), headline=headline, note=r.get("note", ""),
               parent=r.get("parent"))
