"""Engine settings declared once, as a dataclass: its fields are the settings, typed, and each field's
`setting(...)` says what a person sees of it (title, unit, range, choices and their words).

The JSON schema that session files, the command line and the worker check settings against, and the
GUI's binding builds its widgets from, is generated from that declaration (`schema_of`); `parse`
turns the settings dict a request carries (the process and session edge keeps dicts) into the typed
instance an engine reads, once, naming a wrong field in the user's words. `Setting` is one field's
declaration, typed: the binding reads it (`Setting.from_schema` for the schemas that are still
written as dicts, the targets').
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TypeVar

from core.checks import check_settings, check_types, field_path
from core.errors import InputError

T = TypeVar("T")

# The JSON type of each Python type a setting may have.
_JSON_OF: dict[Any, str] = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
                            tuple: "array", dict: "object"}

# Schema keys that Setting holds as attributes: schema name -> attribute name.
_KEYS = {"title": "title", "description": "description", "unit": "unit", "minimum": "minimum",
         "maximum": "maximum", "exclusiveMinimum": "exclusive_minimum", "multipleOf": "multiple_of",
         "enum": "enum", "x-labels": "labels", "x-null-text": "null_text", "x-decimals": "decimals",
         "x-step": "step", "x-placeholder": "placeholder", "default": "default"}
_NO_DEFAULT = object()


@dataclass(frozen=True)
class Setting:
    """One setting as declared: its JSON types ("null" among them when it may be left unset) and
    what a widget needs to show it. Keys the schema has beyond these (uniqueItems, nested objects'
    additionalProperties) stay in `extra`, written out as they are."""

    types: tuple[str, ...] = ()
    title: str | None = None
    description: str | None = None
    unit: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    multiple_of: float | None = None
    enum: tuple[Any, ...] | None = None
    labels: Mapping[str, str] | None = None     # value (as text) -> its words ("0" -> "from workload")
    null_text: str | None = None                # what no value is called ("auto", "no limit")
    decimals: int | None = None
    step: float | None = None
    placeholder: str | None = None
    items: "Setting | None" = None              # an array's entries
    default: Any = _NO_DEFAULT
    extra: Mapping[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------ what widgets ask
    @property
    def nullable(self) -> bool:
        return "null" in self.types or (self.enum is not None and None in self.enum)

    @property
    def main_type(self) -> str:
        """The JSON type a widget edits: the first non-null type, else the enum's values' type."""
        ts = [t for t in self.types if t != "null"]
        if ts:
            return ts[0]
        values = [v for v in self.enum or () if v is not None]
        if values and all(isinstance(v, bool) for v in values):
            return "boolean"
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return "integer"
        if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return "number"
        return "string"

    def label_of(self, value: Any) -> str:
        """A value in the window's words (its x-labels entry, else the value)."""
        return str((self.labels or {}).get(str(value), value))

    def title_or(self, key: str) -> str:
        return self.title if self.title is not None else key

    # ------------------------------------------------------------ schema
    def to_schema(self) -> dict[str, Any]:
        """The JSON schema property this declares."""
        out: dict[str, Any] = {}
        if self.types:
            out["type"] = self.types[0] if len(self.types) == 1 else list(self.types)
        for key, attr in _KEYS.items():
            value = getattr(self, attr)
            if value is _NO_DEFAULT or (value is None and attr != "default"):
                continue
            if attr == "enum":
                value = list(value)
            elif attr == "labels":
                value = dict(value)
            elif attr == "default":
                value = copy.deepcopy(value)
            out[key] = value
        if self.items is not None:
            out["items"] = self.items.to_schema()
        out.update(copy.deepcopy(dict(self.extra)))
        return out

    @classmethod
    def from_schema(cls, prop: Mapping[str, Any]) -> "Setting":
        """The typed view of a schema property written as a dict."""
        t = prop.get("type", ())
        kw: dict[str, Any] = {"types": (t,) if isinstance(t, str) else tuple(t)}
        for key, attr in _KEYS.items():
            if key in prop:
                kw[attr] = tuple(prop[key]) if attr == "enum" else prop[key]
        if isinstance(prop.get("items"), Mapping):
            kw["items"] = cls.from_schema(prop["items"])
        kw["extra"] = {k: v for k, v in prop.items() if k not in _KEYS and k not in ("type", "items")}
        return cls(**kw)


def setting(default: Any, title: str, description: str, *, items: Mapping[str, Any] | None = None,
            schema: Mapping[str, Any] | None = None, types: tuple[str, ...] = (), **shown: Any) -> Any:
    """A settings dataclass field: its default, title (the widget's label), description (the
    tooltip) and, by keyword, Setting's other attributes (unit, minimum, labels, null_text...).
    `items`: an array's entry schema; `schema`: further JSON schema keys, as they are. The JSON type
    comes from the field's annotation unless `types` names it."""
    if "enum" in shown and shown["enum"] is not None:
        shown["enum"] = tuple(shown["enum"])
    decl = Setting(types=types, title=title, description=description,
                   items=None if items is None else Setting.from_schema(items), extra=dict(schema or {}), **shown)
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata={"setting": decl})
    return field(default=default, metadata={"setting": decl})


def _json_types(annotation: Any) -> tuple[str, ...]:
    """JSON types of a field's annotation: int -> ("integer",), float | None -> ("number", "null")."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        out: list[str] = []
        for arg in typing.get_args(annotation):
            out += ["null"] if arg is type(None) else list(_json_types(arg))
        return tuple(out)
    if origin is typing.Literal:
        return ()
    base = origin or annotation
    if base in _JSON_OF:
        return (_JSON_OF[base],)
    raise TypeError(f"no JSON type for a setting annotated {annotation!r}")


@functools.cache
def declarations(cls: type) -> dict[str, Setting]:
    """Each setting of a settings dataclass, its JSON types and default filled in."""
    hints = typing.get_type_hints(cls)
    out: dict[str, Setting] = {}
    for f in dataclasses.fields(cls):
        decl = f.metadata.get("setting")
        if not isinstance(decl, Setting):
            raise TypeError(f"{cls.__name__}.{f.name} is not declared with setting(...)")
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default   # type: ignore[misc]
        out[f.name] = dataclasses.replace(decl, types=decl.types or _json_types(hints[f.name]), default=default)
    return out


@functools.cache
def schema_of(cls: type) -> dict[str, Any]:
    """The JSON schema of a settings dataclass (the same object each time, as the checks' caches
    want). Unknown keys are refused by core.checks.check_settings, whatever the schema says."""
    return {"type": "object", "properties": {k: d.to_schema() for k, d in declarations(cls).items()}}


def defaults_of(cls: type) -> dict[str, Any]:
    """The default settings as a dict (what a new project and the worker's JSON hold)."""
    return dataclasses.asdict(cls())


def as_dict(settings: Any) -> dict[str, Any]:
    """Typed settings back as the dict a session or a run's record keeps."""
    return dataclasses.asdict(settings)


def parse(cls: type[T], raw: Mapping[str, Any] | None, where: str = "settings",
          check: Callable[[T], T | None] | None = None, retired: Mapping[str, str] | None = None) -> T:
    """The request's settings over the defaults, as `cls`: unknown keys first (`retired`: why a key
    that once was a setting is none now), then the JSON types (so `check` may rely on them), then the
    engine's own checks (`check`, which may return a normalised instance), then the schema's ranges
    and choices; InputError names the first wrong field."""
    if raw is not None and not isinstance(raw, Mapping):
        raise InputError(f"settings are an object, got {type(raw).__name__}", where)
    plain: type = cls                         # the caches key on the class
    names = declarations(plain)
    for key in raw or {}:
        if key not in names:
            hint = f" ({retired[key]})" if retired and key in retired else ""
            raise InputError(f"unknown setting {str(key)[:40]!r}{hint}; known: {', '.join(names)}",
                             field_path(where, key))
    merged = {**defaults_of(plain), **(raw or {})}
    schema = schema_of(plain)
    check_types(schema, merged, where)
    typed = cls(**merged)
    if check is not None:
        typed = check(typed) or typed
    check_settings(schema, merged, where)
    return typed


def declared(schema: Mapping[str, Any]) -> dict[str, Setting]:
    """Each property of a JSON schema (an engine's, made from its dataclass, or a target's, written
    as a dict) as its typed view, in order; none for a schema without properties."""
    props = schema.get("properties") or {}
    return {key: Setting.from_schema(prop) for key, prop in props.items()}


def held(cls: type[T], raw: Mapping[str, Any]) -> T:
    """Settings as a project holds them, typed over the defaults but not checked (keys the class does
    not declare left out): what a panel reads to grey out widgets that do nothing; a run parses them."""
    plain: type = cls
    return cls(**{**defaults_of(plain), **{k: v for k, v in raw.items() if k in declarations(plain)}})
