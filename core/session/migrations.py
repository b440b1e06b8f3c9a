"""Older session formats brought forward: MIGRATIONS[n] turns a version-n document into a version-(n+1)
one, a function per step, applied in turn by _migrate before any other check of the document's shape.
"""

from __future__ import annotations

from typing import Any, Callable

from core.checks import INT_LIMIT
from core.errors import InputError, SessionError
from core.project import starter_targets, starter_workloads
from core.session.schema import FORMAT, _schema_check
from core.workload import Target, Workload, target_from_json

VERSION = 5         # the format version this program writes and reads up to


def _check_version(doc: dict[str, Any]) -> None:
    """The format version first of all: a newer version's file may hold anything (fields, kinds,
    values) this one cannot read, and saying so is the only useful message."""
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        shown = repr(version) if len(repr(version)) <= 40 else type(version).__name__
        raise SessionError(f"expected an integer version, got {shown}", "session.version")
    if not -INT_LIMIT <= version < INT_LIMIT or version > VERSION:
        shown = str(version) if len(str(version)) <= 24 else "a larger number"
        raise SessionError(f"written by a newer version of Dataflow Explorer (format version {shown}; this one "
                           f"reads up to {VERSION}): open it there, or update", "session.version")
    if version < 1:
        raise SessionError(f"unknown format version {version}", "session.version")


def _migrate(doc: dict[str, Any]) -> dict[str, Any]:
    _check_version(doc)
    while doc["version"] < VERSION:
        doc = MIGRATIONS[doc["version"]](doc)
    return doc


_V1_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version", "workload", "target", "engines"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT}, "version": {"const": 1}, "app_version": {"type": "string"},
        "saved_at": {"type": "string"},
        "workload": {"type": "object", "required": ["kind"]},
        "target": {"type": "object", "required": ["kind"]},
        "current_engine": {"type": ["string", "null"]},
        "engines": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["settings"], "additionalProperties": False,
            "properties": {"settings": {"type": "object"}, "result": {"type": ["object", "null"]},
                           "finished_at": {"type": ["string", "null"]}}}},
    },
}


def _v1_item_name(value: dict[str, Any]) -> str:
    starters: list[tuple[str, Workload | Target]] = [*starter_workloads(), *starter_targets()]
    for name, item in starters:                 # a starter's own name when it is one
        if item.to_json() in (value, _with_target_defaults(value)):
            return name
    kind = value.get("kind")
    if kind == "fpsp_filter":
        return str(value.get("preset", "filter"))
    if kind == "kernels":
        return str(value.get("name", "kernels"))
    if kind == "cnn_set":
        return " + ".join(map(str, value.get("cnns", []))) or "CNN set"
    if kind == "cnn":
        return str(value.get("onnx_path") or value.get("network", "CNN"))
    if kind == "merit_transform":
        return f"MERIT {(value.get('transform') or {}).get('name') or value.get('builtin', '')}".strip()
    try:
        from core.project import summary

        return summary(target_from_json(value))
    except InputError:                              # checked (and refused) after the migration
        return str(kind)


def migrate_v1(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 1 held one workload, one target and the last result of each engine. Version 2 gets a
    library holding those (plus what engine settings implied, plus starter items for engines that
    would otherwise have nothing to run), a choice per engine, and each stored result as a run."""
    from core.engine import engines

    _schema_check(_V1_SCHEMA, doc, "session")
    known = engines()
    library: dict[str, list[dict[str, Any]]] = {"workloads": [], "targets": []}

    def add(lib: str, value: dict[str, Any], name: str | None = None) -> str:
        for item in library[lib]:
            if item["value"] == value:
                return str(item["id"])
        entry_id = f"{lib[0]}{len(library[lib]) + 1}"
        base = name or _v1_item_name(value)
        names = {i["name"] for i in library[lib]}
        label, n = base, 2
        while label in names:
            label, n = f"{base} ({n})", n + 1
        library[lib].append({"id": entry_id, "name": label, "value": value})
        return entry_id

    def kind_of(lib: str, entry_id: str | None) -> str | None:
        return next((i["value"]["kind"] for i in library[lib] if i["id"] == entry_id), None)

    w1 = add("workloads", doc["workload"])
    t1 = add("targets", doc["target"])
    out_engines: dict[str, Any] = {}
    runs: list[dict[str, Any]] = []
    for name, st in doc["engines"].items():
        spec = known.get(name)
        settings = dict(st["settings"])
        choice: dict[str, str | None] = {"workload": None, "target": None}
        implied: tuple[Any, Any] = (None, None)
        if spec is not None and spec.migrate_v1_settings is not None:
            try:
                settings, *implied_list = spec.migrate_v1_settings(settings)
                implied = (implied_list[0], implied_list[1])
            except InputError as exc:
                field = exc.where.removeprefix("settings.") if exc.where != "settings" else ""
                raise SessionError(exc.message, f"session.engines.{name}.settings"
                                                 + (f".{field}" if field else "")) from None
        for lib, key, first, extra, kinds in (
                ("workloads", "workload", w1, implied[0], spec.workload_kinds if spec else ()),
                ("targets", "target", t1, implied[1], spec.target_kinds if spec else ())):
            if extra is not None:
                choice[key] = add(lib, extra.to_json())
            elif kind_of(lib, first) in kinds:
                choice[key] = first
        out_engines[name] = {"settings": settings, **choice}
        if st.get("result") is not None:
            snap = {key: next(({"id": i["id"], "name": i["name"], "value": i["value"]} for i in library[lib]
                               if i["id"] == choice[key]), None)
                    for lib, key in (("workloads", "workload"), ("targets", "target"))}
            stamp = st.get("finished_at") or doc.get("saved_at") or ""
            runs.append({"id": f"r{len(runs) + 1}", "engine": name, "status": "finished", "settings": settings,
                         "workload": snap["workload"], "target": snap["target"], "started_at": stamp,
                         "finished_at": stamp, "duration_s": None, "result": st["result"], "result_version": 1,
                         "partial": {}, "series": {}, "error": None, "headline": {}, "note": "from a version-1 session"})
    for name, spec in known.items():           # engines the file did not know start on their defaults
        out_engines.setdefault(name, {"settings": spec.default_settings(), "workload": None, "target": None})
    # Engines left with no fitting workload or target get the starter item of their kind.
    for lib, key, starters in (("workloads", "workload", starter_workloads()), ("targets", "target", starter_targets())):
        for name, choice_doc in out_engines.items():
            spec = known.get(name)
            kinds = (spec.workload_kinds if key == "workload" else spec.target_kinds) if spec else ()
            if choice_doc[key] is None and kinds:
                found = next(((n, v) for n, v in starters if v.kind in kinds), None)
                if found is not None:
                    choice_doc[key] = add(lib, found[1].to_json(), found[0])
    return {"format": FORMAT, "version": 2, "app_version": doc.get("app_version", ""),
            "saved_at": doc.get("saved_at", ""), "library": library, "engines": out_engines, "runs": runs,
            "view": {"current_engine": doc.get("current_engine")}}


def migrate_v2(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 2 let engine settings override target quantities (the bound's memory S and word size);
    version 3 keeps them only in the target. An engine choice whose override changes its target gets
    a new library target holding the values it ran with (the shared item is left as it was), and
    each run's target snapshot takes its own override. Shapes the schema check refuses later are
    left alone here."""
    from core.engine import engines

    known = engines()
    doc = dict(doc)
    library = doc.get("library") if isinstance(doc.get("library"), dict) else None
    targets = library.get("targets") if library is not None else None

    def add_target(value: dict[str, Any], name: str) -> str | None:
        if not isinstance(targets, list):
            return None
        for item in targets:
            if isinstance(item, dict) and item.get("value") == value:
                return str(item.get("id"))
        ids = {str(i.get("id")) for i in targets if isinstance(i, dict)}
        n = len(targets) + 1
        while f"t{n}" in ids:
            n += 1
        targets.append({"id": f"t{n}", "name": name, "value": value})
        return f"t{n}"

    for name, st in (doc.get("engines") or {}).items() if isinstance(doc.get("engines"), dict) else ():
        spec = known.get(name)
        if spec is None or spec.migrate_v2_setup is None or not isinstance(st, dict) \
                or not isinstance(st.get("settings"), dict):
            continue
        entry = next((i for i in targets or () if isinstance(i, dict) and i.get("id") == st.get("target")), None)
        old = entry.get("value") if entry is not None else None
        new = _v2_settings_moved(spec.migrate_v2_setup, st, old, f"session.engines.{name}")
        if new is not None:
            label = f"{entry.get('name')} ({spec.title} settings)" if entry is not None else \
                f"{spec.title} target"
            st["target"] = add_target(new, label)
    for i, r in enumerate(doc.get("runs") or () if isinstance(doc.get("runs"), list) else ()):
        spec = known.get(str(r.get("engine"))) if isinstance(r, dict) else None
        if spec is None or spec.migrate_v2_setup is None or not isinstance(r.get("settings"), dict):
            continue
        snap = r.get("target")
        value = snap.get("value") if isinstance(snap, dict) else None
        new = _v2_settings_moved(spec.migrate_v2_setup, r, value, f"session.runs[{i}]")
        if new is not None:
            r["target"] = {**snap, "value": new} if isinstance(snap, dict) else \
                {"id": "", "name": f"{spec.title} target", "value": new}
    doc["version"] = 3
    return doc


def _v2_settings_moved(migrate: Callable[[dict[str, Any], dict[str, Any] | None],
                                        tuple[dict[str, Any], dict[str, Any] | None]],
                       holder: dict[str, Any], target: Any, where: str) -> dict[str, Any] | None:
    """One engine setup's or run's `holder["settings"]` brought to format 3 by the engine's `migrate`
    (its target's value beside them, when it is a JSON object); returns the target value the settings'
    overrides imply where it differs from `target`, else None. An InputError is the session's error at `where`."""
    try:
        settings, new = migrate(holder["settings"], target if isinstance(target, dict) else None)
    except InputError as exc:
        raise SessionError(exc.message, f"{where}.{exc.where}") from None
    holder["settings"] = settings
    return new if new is not None and new != target else None


def migrate_v3(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 4 added the optional run index (encode_text) and nothing else: format-3 readers refuse
    the unknown key, so the version says it instead ("written by a newer version")."""
    return {**doc, "version": 4}


def _with_target_defaults(value: Any) -> Any:
    """A target's JSON with every field its kind's schema has and the JSON lacks set to its default
    (the kind's own reader checks the rest later; anything not a known schema target is left alone)."""
    if not isinstance(value, dict):
        return value
    from core.kinds import kind_of

    found = kind_of("targets", str(value.get("kind")))
    schema = getattr(found.cls, "SCHEMA", None) if found is not None else None
    if not isinstance(schema, dict):
        return value
    missing = {k: p["default"] for k, p in schema["properties"].items() if k not in value and "default" in p}
    return {**value, **missing}


def migrate_v4(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 5 targets describe hardware (issue 50): the dataflow accelerator's clock, bandwidth and
    energies, SCAMP-5's instruction time, the mobile SoC's clock, bandwidth and caches. Every target
    of the library and every run's target snapshot gets the new fields at their defaults, written
    out, so the file says what the model of each old run's target assumes."""
    doc = dict(doc)
    library = doc.get("library")
    for item in (library.get("targets") if isinstance(library, dict) else None) or ():
        if isinstance(item, dict) and "value" in item:
            item["value"] = _with_target_defaults(item["value"])
    for r in doc.get("runs") or () if isinstance(doc.get("runs"), list) else ():
        snap = r.get("target") if isinstance(r, dict) else None
        if isinstance(snap, dict) and "value" in snap:
            snap["value"] = _with_target_defaults(snap["value"])
    doc["version"] = 5
    return doc


# MIGRATIONS[n] turns a version-n document into a version-(n+1) document.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: migrate_v1, 2: migrate_v2, 3: migrate_v3,
                                                                     4: migrate_v4}
