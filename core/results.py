"""Typed, versioned engine results.

Each engine builds its result as one of these dataclasses and yields it; panels, text output,
Compare and study metrics read its attributes, which mypy checks. JSON appears only at the
boundaries: `to_json` when a run crosses a process (the window's worker, a study's Dask worker, the
command line's `--json`) or is saved in a session, and `from_json` when it is read back there. Reading
checks every field, so

* a misspelt, missing or mistyped field in a stored or received result is refused naming the field,
  not found later in a panel;
* a result stored by an older version is brought forward by kept upgrade functions before it is
  read, and one from a newer version is refused with a message instead of half-working.

A domain class can be a result's part itself: a dataclass whose JSON form also holds values it
derives (a layer's output size, a traffic total) lists those properties in `JSON_DERIVED`; they are
written after its fields and recomputed, not read, when the JSON is read back. So no mirror class
is needed just to carry them. A domain class that already has a JSON form of its own (a file format
users write, e.g. a MERIT transform) keeps it in results too: it defines `json_form(self)` and the
class method `from_json_form(value, where)`, which raises InputError naming the field.

Everything here is plain Python: no Qt, usable from the command line.

    @dataclass(kw_only=True)
    class MyResult(EngineResult):
        VERSION = 2
        UPGRADES = {1: lambda d: {**d, "total": d.pop("sum")}}
        total: int
        note: str | None = optional_key()

    data = MyResult.check(engine_dict)            # raises InputError("missing field", "result.total")
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import math
import types
from typing import Any, Callable, ClassVar, Hashable, Literal, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from core.checks import deepcopy_json, paused_gc
from core.errors import InputError
from core.metrics import Metric, MetricValue

__all__ = ["EngineResult", "optional_key", "extra_keys", "read_value", "to_plain"]

_OMIT = "core.results.omit_if_none"
_EXTRAS = "core.results.extras"
_NONE = type(None)

R = TypeVar("R", bound="EngineResult")


def optional_key() -> Any:
    """A field whose key the engine leaves out when it has nothing to say (e.g. "comparison" only
    when two programs ran): a missing key reads as None and None writes no key. An explicit null is
    refused, because writing it back would drop it and the stored dict would change."""
    return dataclasses.field(default=None, metadata={_OMIT: True})


def extra_keys() -> Any:
    """A `dict[str, T]` field collecting the keys the type does not name (e.g. one total per
    dataflow, chosen at run time). They are checked against T and written back at the same level,
    where this field stands in the class. Without such a field unknown keys are refused."""
    return dataclasses.field(default_factory=dict, metadata={_EXTRAS: True})


class EngineResult:
    """Base of the `@dataclass(kw_only=True)` result types, one per engine.

    VERSION is the version `to_json` writes. UPGRADES[n] turns version-n data into version n+1;
    they are kept forever, so a session saved years ago still opens.
    """

    VERSION: ClassVar[int] = 1
    UPGRADES: ClassVar[dict[int, Callable[[dict[str, Any]], dict[str, Any]]]] = {}
    # what sums a run up (core.metrics): names, units, which way is better, how each is read
    METRICS: ClassVar[tuple[Metric, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        """The plain JSON dict the engine yields (tuples become lists, as in a saved session)."""
        out = to_plain(self)
        assert isinstance(out, dict)
        return out

    @classmethod
    def upgrade(cls, data: Any, version: int | None = None, path: str = "result", owned: bool = False) -> Any:
        """`data` of `version` (None: the current one) brought forward to VERSION; the caller's
        dict is never changed, unless `owned` says the caller hands it over (a session just decoded:
        a deep copy of each older run is a tenth of reading a large session)."""
        if version is None:
            return data
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InputError(f"expected a result version >= 1, got {version!r}", path)
        if version > cls.VERSION:
            raise InputError(f"this result is version {version}, written by a newer Dataflow Explorer; "
                             f"{cls.__name__} reads versions up to {cls.VERSION}", path)
        if version < cls.VERSION and not owned:
            data = deepcopy_json(data)
        for v in range(version, cls.VERSION):
            step = cls.UPGRADES.get(v)
            if step is None:
                raise InputError(f"cannot read version {version}: {cls.__name__} keeps no upgrade from "
                                 f"version {v} to {v + 1}", path)
            try:
                data = step(data)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
                raise InputError(f"cannot bring version {v} forward ({type(exc).__name__}: {exc})", path) from None
            if not isinstance(data, dict):
                raise InputError(f"the upgrade from version {v} gave {_describe(data)}, not an object", path)
        return data

    @classmethod
    def from_json(cls: type[R], data: Any, version: int | None = None, path: str = "result",
                  owned: bool = False) -> R:
        """Bring `data` forward to VERSION, check it against the type hints and build the result.
        Raises InputError(message, where) with `where` the field path, e.g. result.layers[3].name.
        `owned`: the caller hands over `data` as decoded from JSON text and passed by
        core.checks.check_numbers (a session's run): it may be changed, and its untyped parts are
        kept as they are instead of checked and copied again."""
        with paused_gc():           # many objects, no cycles: no collection started by them
            data = cls.upgrade(data, version, path, owned)
            try:        # the compiled reader of the whole type first: no field paths, no per-field dispatch
                result: R = _fast(cast(Hashable, cls), owned)(data)
            except _NotPlain:           # something is wrong: read again field by field to say what and where
                result = _read_dataclass(cls, data, path)
        result.validate(path)
        return result

    @classmethod
    def check(cls, data: Any, version: int | None = None, path: str = "result") -> dict[str, Any]:
        """from_json, then to_json: the checked dict, in the current version (what sessions store)."""
        return cls.from_json(data, version, path).to_json()

    def validate(self, path: str = "result") -> None:
        """Checks the type hints cannot state, run by from_json: a free-form part (`dict[str, Any]`)
        that still has numbers where numbers are needed, e.g. the engine settings a result keeps,
        checked against the engine's settings schema. Raises InputError naming the field."""

    def headline(self) -> dict[str, MetricValue]:
        """The few numbers that sum up a run for a runs table, a comparison of runs or a study: the
        type's declared METRICS read from this result, in order; the first is the headline metric."""
        return {m.name: m.read(self) for m in self.METRICS}


# ------------------------------------------------------------------ reading
def read_value(tp: Any, value: Any, where: str) -> Any:
    """`value` checked against the type `tp` (and converted: tuples read from JSON lists, nested
    dataclasses built); raises InputError naming `where` and what was expected.

    A reader compiled once per type reads the value first, with no field paths (a session of
    hundreds of runs holds millions of values, and nothing is wrong in nearly all of them); only when
    it finds something wrong is the value read again, step by step, to say what and where."""
    try:
        return _fast(tp)(value)
    except _NotPlain:
        return _read_slow(tp, value, where)


def _read_slow(tp: Any, value: Any, where: str) -> Any:
    if tp is Any or tp is object:
        return _read_json(value, where)
    if tp is None or tp is _NONE:
        if value is None:
            return None
        raise _expected("null", value, where)
    if tp is bool:
        if isinstance(value, bool):
            return bool(value)
        raise _expected("bool", value, where)
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return int(value)
        raise _expected("int", value, where)
    if tp is float:
        return _read_float(value, where)
    if tp is str:
        if isinstance(value, str):
            return str(value)
        raise _expected("str", value, where)
    if isinstance(tp, type) and hasattr(tp, "from_json_form"):
        return tp.from_json_form(value, where)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _read_dataclass(tp, value, where)
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Union or origin is types.UnionType:
        return _read_union(tp, args, value, where)
    if origin is Literal:
        for a in args:
            if type(a) is type(value) and a == value:
                return value
        raise _expected(_type_name(tp), value, where)
    if tp is list or origin is list:
        if not isinstance(value, (list, tuple)):
            raise _expected("list", value, where)
        item = args[0] if args else Any
        fast = _scalar_list(item, value)
        if fast is not None:
            return fast
        return [read_value(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if tp is tuple or origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise _expected("list", value, where)
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            item = args[0] if args else Any
            return tuple(read_value(item, v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise InputError(f"expected {len(args)} items, got {len(value)}", where)
        return tuple(read_value(t, v, f"{where}[{i}]") for i, (t, v) in enumerate(zip(args, value)))
    if tp is dict or origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"core.results: dict keys must be str (JSON object keys), not {args[0]!r}")
        if not isinstance(value, dict):
            raise _expected("object", value, where)
        item = args[1] if args else Any
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise InputError(f"expected a string key, got {_describe(k)}", where)
            out[k] = read_value(item, v, _key(where, k))
        return out
    raise TypeError(f"core.results: cannot check values of type {tp!r} (at {where})")


_FLOATS = frozenset((int, float))


def _scalar_list(item: Any, value: list[Any] | tuple[Any, ...]) -> list[Any] | None:
    """A list of plain numbers or texts read at once (results hold long columns of them: one check
    per list, not a call and a field path per element); None: read it element by element, which also
    finds what is wrong and where (also a sum of finite numbers too large to add up)."""
    if item is float:
        if _FLOATS.issuperset(map(type, value)) and _finite_sum(value):
            return list(value)
    elif item is int:
        if _INT.issuperset(map(type, value)):
            return list(value)
    elif item is str:
        if _STR.issuperset(map(type, value)):
            return list(value)
    return None


_INT, _STR = frozenset((int,)), frozenset((str,))


def _finite_sum(value: list[Any] | tuple[Any, ...]) -> bool:
    """Whether the numbers add up to a finite sum: none is NaN or infinite, found at once. False also
    when the sum overflows (two numbers near 1.8e308): the caller then checks them one by one."""
    try:
        return math.isfinite(math.fsum(value))
    except OverflowError:
        return False


def _read_float(value: Any, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _expected("float", value, where)
    if not math.isfinite(value):
        raise InputError(f"expected a finite number, got {value}", where)
    # an int stays an int: the stored JSON must not change from 20 to 20.0
    return value if type(value) in (int, float) else float(value)


def _read_union(tp: Any, args: tuple[Any, ...], value: Any, where: str) -> Any:
    if value is None and _NONE in args:
        return None
    errors = []
    for arm in args:
        if arm is _NONE:
            continue
        try:
            return read_value(arm, value, where)
        except InputError as exc:
            plain = exc.where == where and exc.message == _expected(_type_name(arm), value, where).message
            errors.append((plain, exc))
    # an arm that got into the value, or refused it for a reason other than its kind (a NaN),
    # says best what is wrong; the one that got furthest wins (e.g. a 3-D matrix's cell)
    telling = [exc for plain, exc in errors if not plain]
    if telling:
        raise max(telling, key=lambda e: len(e.where))
    raise _expected(_type_name(tp), value, where)


class _NotPlain(Exception):
    """_copy_json met something _read_json refuses: read again slowly, to say what and where."""


def _copy_json(value: Any) -> Any:
    """_read_json without field paths (the common case: nothing wrong, so no path is ever needed)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is float:
        if value - value == 0.0:
            return value
        raise _NotPlain
    if kind is int:
        return value
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlain
            out[k] = _copy_json(v)
        return out
    if kind is list or kind is tuple:
        if _FLOAT.issuperset(map(type, value)) and _finite_sum(value):
            return list(value)
        return [_copy_json(v) for v in value]
    raise _NotPlain


_FLOAT = frozenset((float,))


def _read_json(value: Any, where: str) -> Any:
    """An untyped part: any JSON value (string keys, finite numbers), copied, tuples as lists."""
    try:
        return _copy_json(value)
    except _NotPlain:
        return _read_json_checked(value, where)


def _read_json_checked(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _read_float(value, where)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise InputError(f"expected a string key, got {_describe(k)}", where)
            out[k] = _read_json_checked(v, _key(where, k))
        return out
    if isinstance(value, (list, tuple)):
        return [_read_json_checked(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise InputError(f"expected a JSON value, got {_describe(value)}", where)


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


@functools.lru_cache(maxsize=None)
def _plan(cls: type) -> tuple[tuple[tuple[str, Any, bool, str], ...], frozenset[str], str | None]:
    """How a dataclass is read, worked out once per class: per field (name, type to read, required,
    the suffix of its field path), the known names, and the field taking unknown keys (if any)."""
    hints = _hints(cls)
    fields: list[tuple[str, Any, bool, str]] = []
    extras = None
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.metadata.get(_EXTRAS):
            extras = f.name
            continue
        tp = _without_none(hints[f.name]) if f.metadata.get(_OMIT) else hints[f.name]
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        fields.append((f.name, tp, required, _key("", f.name)))
    derived = tuple(getattr(cls, "JSON_DERIVED", ()))
    return tuple(fields), frozenset([*(name for name, *_ in fields), *derived]), extras


def _read_dataclass(cls: type, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise _expected("object", value, where)
    fields, known_set, extras_name = _plan(cls)
    kwargs: dict[str, Any] = {}
    for name, tp, required, suffix in fields:
        if name in value:
            kwargs[name] = read_value(tp, value[name], where + suffix)
        elif required:
            raise InputError("missing field", where + suffix)
    unknown = [k for k in value if k not in known_set] if len(value) > len(kwargs) else []
    # keys the class derives (JSON_DERIVED: written for readers of the JSON) are recomputed, not read
    if unknown and extras_name is None:
        k = unknown[0]
        close = difflib.get_close_matches(str(k), [name for name, *_ in fields], n=1)
        raise InputError("unknown field" + (f"; did you mean {close[0]!r}?" if close else ""),
                         _key(where, k) if isinstance(k, str) else where)
    if extras_name is not None:
        kwargs[extras_name] = read_value(_hints(cls)[extras_name], {k: value[k] for k in unknown}, where)
    return cls(**kwargs)


Reader = Callable[[Any], Any]


@functools.lru_cache(maxsize=None)
def _fast(tp: Any, owned: bool = False) -> Reader:
    """The reader of `tp` without field paths: the same checks and conversions as _read_slow, raising
    _NotPlain at the first problem (read_value then reads slowly to name it). `owned`: the value is
    decoded JSON whose numbers check_numbers passed, so an untyped part is taken as it is."""
    if tp is Any or tp is object:
        return _as_is if owned else _copy_json
    if tp is None or tp is _NONE:
        def read_none(v: Any) -> Any:
            if v is None:
                return None
            raise _NotPlain
        return read_none
    if tp is bool or tp is int or tp is str:           # exactly that type (a bool is no int here)
        return _exact(tp)
    if tp is float:
        def read_float(v: Any) -> Any:
            kind = type(v)
            if (kind is float and v - v == 0.0) or kind is int:
                return v
            raise _NotPlain
        return read_float
    if isinstance(tp, type) and hasattr(tp, "from_json_form"):
        own = tp.from_json_form

        def read_own_form(v: Any) -> Any:
            try:
                return own(v, "")
            except InputError:
                raise _NotPlain from None
        return read_own_form
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _fast_dataclass(tp, owned)
    origin, args = get_origin(tp), get_args(tp)
    if origin is Union or origin is types.UnionType:
        arms = [(_fast(a, owned), a is _NONE) for a in args]

        def read_union(v: Any) -> Any:
            if v is None and any(none for _r, none in arms):
                return None
            for r, none in arms:
                if none:
                    continue
                try:
                    return r(v)
                except _NotPlain:
                    continue
            raise _NotPlain
        return read_union
    if origin is Literal:
        allowed = [(type(a), a) for a in args]

        def read_literal(v: Any) -> Any:
            if any(type(v) is k and v == a for k, a in allowed):
                return v
            raise _NotPlain
        return read_literal
    if tp is list or origin is list:
        item = args[0] if args else Any
        each = _fast(item, owned)

        if item is float or item is int or item is str:        # columns of numbers or texts
            def read_scalars(v: Any) -> Any:
                if type(v) is not list and type(v) is not tuple:
                    raise _NotPlain
                quick = _scalar_list(item, v)
                return quick if quick is not None else [each(x) for x in v]
            return read_scalars

        def read_list(v: Any) -> Any:
            if type(v) is not list and type(v) is not tuple:
                raise _NotPlain
            return [each(x) for x in v]
        return read_list
    if tp is tuple or origin is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            each = _fast(args[0] if args else Any, owned)

            def read_tuple(v: Any) -> Any:
                if type(v) is not list and type(v) is not tuple:
                    raise _NotPlain
                return tuple([each(x) for x in v])      # a list first: faster than a generator
            return read_tuple
        readers = [_fast(a, owned) for a in args]
        n = len(readers)

        def read_fixed_tuple(v: Any) -> Any:
            if (type(v) is not list and type(v) is not tuple) or len(v) != n:
                raise _NotPlain
            return tuple([r(x) for r, x in zip(readers, v)])
        if n == 2:              # pairs are the common fixed tuple (points, ranges): no loop at all
            first, second = readers

            def read_pair(v: Any) -> Any:
                if (type(v) is not list and type(v) is not tuple) or len(v) != 2:
                    raise _NotPlain
                return (first(v[0]), second(v[1]))
            return read_pair
        return read_fixed_tuple
    if tp is dict or origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"core.results: dict keys must be str (JSON object keys), not {args[0]!r}")
        each = _fast(args[1] if args else Any, owned)

        def read_dict(v: Any) -> Any:
            if type(v) is not dict:
                raise _NotPlain
            out = {}
            for k, x in v.items():
                if type(k) is not str:
                    raise _NotPlain
                out[k] = each(x)
            return out
        return read_dict
    raise TypeError(f"core.results: cannot check values of type {tp!r}")


def _exact(kind: type) -> Reader:
    def read_exact(v: Any) -> Any:
        if type(v) is kind:
            return v
        raise _NotPlain
    return read_exact


def _as_is(v: Any) -> Any:
    return v


_ABSENT: Any = object()          # a key the value does not have (JSON holds no such value)


def _fast_dataclass(cls: type, owned: bool) -> Reader:
    """The reader of a dataclass: its fields of an exact scalar type (str, int, bool) and its float
    fields are checked in place, in one loop each, without a reader call per field; the rest by
    their compiled readers."""
    fields, known_set, extras_name = _plan(cls)
    plan: tuple[tuple[tuple[str, type, bool], ...], tuple[tuple[str, bool], ...],
                tuple[tuple[str, Reader, bool], ...]] | None = None

    def compile_plan() -> Any:
        exact, floats, other = [], [], []
        for name, tp, required, _suffix in fields:
            if tp is str or tp is int or tp is bool:        # exactly that type (a bool is no int here)
                exact.append((name, tp, required))
            elif tp is float:
                floats.append((name, required))
            else:
                other.append((name, _fast(tp, owned), required))
        return tuple(exact), tuple(floats), tuple(other)

    def read_dataclass(v: Any) -> Any:
        nonlocal plan
        if plan is None:            # compiled on first use: a dataclass may refer to itself
            plan = compile_plan()
        if type(v) is not dict:
            raise _NotPlain
        exact, floats, other = plan
        kwargs: dict[str, Any] = {}
        get = v.get
        for name, kind, required in exact:
            x = get(name, _ABSENT)
            if type(x) is kind:
                kwargs[name] = x
            elif x is not _ABSENT or required:
                raise _NotPlain
        for name, required in floats:
            x = get(name, _ABSENT)
            kind = type(x)
            if (kind is float and x - x == 0.0) or kind is int:     # finite, or an int kept an int
                kwargs[name] = x
            elif x is not _ABSENT or required:
                raise _NotPlain
        for name, reader, required in other:
            x = get(name, _ABSENT)
            if x is not _ABSENT:
                kwargs[name] = reader(x)
            elif required:
                raise _NotPlain
        if len(v) > len(kwargs):
            unknown = [k for k in v if k not in known_set]
            if unknown:
                if extras_name is None:
                    raise _NotPlain
                kwargs[extras_name] = _fast(_hints(cls)[extras_name], owned)({k: v[k] for k in unknown})
            elif extras_name is not None:
                kwargs[extras_name] = {}
        elif extras_name is not None:
            kwargs[extras_name] = {}
        return cls(**kwargs)
    return read_dataclass


def _without_none(tp: Any) -> Any:
    if get_origin(tp) is Union or get_origin(tp) is types.UnionType:
        arms = tuple(a for a in get_args(tp) if a is not _NONE)
        return arms[0] if len(arms) == 1 else Union[arms]
    return tp


# ------------------------------------------------------------------ writing
def to_plain(value: Any) -> Any:
    """A result (or part of one) as plain JSON values: dataclasses as dicts in field order, without
    absent optional keys and with extra keys in place; tuples as lists."""
    kind = type(value)
    if kind in _SCALARS:                                    # the common cases first, by exact type
        return value
    if kind is dict:
        return {k: to_plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        if all(type(v) in _SCALARS for v in value):        # a column of numbers: copied at once
            return list(value)
        return [to_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        own = getattr(kind, "json_form", None)
        if own is not None:                     # a domain class with a JSON form of its own
            return to_plain(own(value))
        out: dict[str, Any] = {}
        for name, extras, omit in _plain_fields(kind):
            v = getattr(value, name)
            if extras:
                out.update((k, to_plain(x)) for k, x in v.items())
            elif not (v is None and omit):
                out[name] = to_plain(v)
        for name in getattr(kind, "JSON_DERIVED", ()):
            out[name] = to_plain(getattr(value, name))
        return out
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def plain_parts(value: Any) -> Any:
    """One level of `value`'s plain form, its parts left as they are: a dataclass as a dict of its
    fields named as to_plain names them (absent optional keys left out, extra keys in place), a
    domain class with a JSON form of its own as that form; anything else as it is. For a view that
    unfolds a large result a level at a time (the panels' Result tree) without converting all of it."""
    kind = type(value)
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    own = getattr(kind, "json_form", None)
    if own is not None:
        return own(value)
    out: dict[str, Any] = {}
    for name, extras, omit in _plain_fields(kind):
        v = getattr(value, name)
        if extras:
            out.update(v)
        elif not (v is None and omit):
            out[name] = v
    for name in getattr(kind, "JSON_DERIVED", ()):
        out[name] = getattr(value, name)
    return out


_PLAIN_FIELDS: dict[type, tuple[tuple[str, bool, bool], ...]] = {}


def _plain_fields(cls: type) -> tuple[tuple[str, bool, bool], ...]:
    """(name, holds the extra keys, left out when None) of each field, once per class."""
    found = _PLAIN_FIELDS.get(cls)
    if found is None:
        found = _PLAIN_FIELDS[cls] = tuple((f.name, bool(f.metadata.get(_EXTRAS)), bool(f.metadata.get(_OMIT)))
                                           for f in dataclasses.fields(cls))
    return found


_SCALARS = frozenset((int, float, str, bool, type(None)))


# ------------------------------------------------------------------ messages
def _key(where: str, key: Any) -> str:
    if isinstance(key, str) and key.isidentifier():
        return f"{where}.{key}"
    return f"{where}[{json.dumps(key) if isinstance(key, str) else repr(key)}]"


def _type_name(tp: Any) -> str:
    if tp is Any or tp is object:
        return "any JSON value"
    if tp is None or tp is _NONE:
        return "null"
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return "object"
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return " or ".join(_type_name(a) for a in get_args(tp))
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(tp))
    if tp in (list, tuple) or origin in (list, tuple):
        return "list"
    if tp is dict or origin is dict:
        return "object"
    return getattr(tp, "__name__", repr(tp))


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return f"list of {len(value)}"
    if isinstance(value, (bool, int, float, str)):
        text = repr(value)
        return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"
    return type(value).__name__


def _expected(what: str, value: Any, where: str) -> InputError:
    return InputError(f"expected {what}, got {_describe(value)}", where)
