"""Engine settings declared once as dataclasses (core.settings): the schema is made from the
declaration, a request's dict is parsed into the typed settings, and the GUI's typed view of a schema
property reads back what was declared."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from core.engine import engines
from core.errors import InputError
from core.settings import Setting, declarations, declared, defaults_of, parse, schema_of, setting


@dataclass(frozen=True)
class Demo:
    count: int = setting(3, "Count", "How many", minimum=1, maximum=10, labels={"1": "one"})
    rate: float | None = setting(None, "Rate", "Per second", exclusive_minimum=0, unit="GB/s", null_text="auto")
    kind: str = setting("a", "Kind", "Which", enum=["a", "b"], labels={"a": "first", "b": "second"})
    names: list[str] = setting([], "Names", "Some names", items={"type": "string"}, schema={"uniqueItems": True})


def test_the_schema_is_made_from_the_declaration():
    schema = schema_of(Demo)
    assert schema is schema_of(Demo)                 # one object: the checks' caches key on it
    props = schema["properties"]
    assert list(props) == ["count", "rate", "kind", "names"]
    assert props["count"] == {"type": "integer", "title": "Count", "description": "How many", "minimum": 1,
                              "maximum": 10, "x-labels": {"1": "one"}, "default": 3}
    assert props["rate"]["type"] == ["number", "null"] and props["rate"]["x-null-text"] == "auto"
    assert props["rate"]["exclusiveMinimum"] == 0 and props["rate"]["unit"] == "GB/s"
    assert props["kind"]["enum"] == ["a", "b"] and props["kind"]["type"] == "string"
    assert props["names"]["items"] == {"type": "string"} and props["names"]["uniqueItems"] is True
    assert defaults_of(Demo) == {"count": 3, "rate": None, "kind": "a", "names": []}


def test_parse_gives_typed_settings_and_names_the_wrong_field():
    s = parse(Demo, {"count": 5, "names": ["x"]})
    assert isinstance(s, Demo) and s.count == 5 and s.names == ["x"] and s.rate is None
    for raw, where in (({"count": 0}, "settings.count"), ({"count": "5"}, "settings.count"),
                       ({"kind": "c"}, "settings.kind"), ({"rate": 0}, "settings.rate"),
                       ({"colour": 1}, "settings.colour"), ({"count": True}, "settings.count")):
        with pytest.raises(InputError) as exc:
            parse(Demo, raw)
        assert exc.value.where == where, raw
    with pytest.raises(InputError):
        parse(Demo, [])                                      # type: ignore[arg-type]


def test_the_engines_check_runs_on_typed_settings_after_the_types():
    seen = []

    def check(s: Demo) -> Demo:
        seen.append(type(s.count))
        if s.count == 7:
            raise InputError("seven is unlucky", "settings.count")
        return s

    with pytest.raises(InputError, match="unlucky"):
        parse(Demo, {"count": 7}, check=check)
    with pytest.raises(InputError) as exc:          # a wrong type never reaches the check
        parse(Demo, {"count": "x"}, check=check)
    assert exc.value.where == "settings.count" and seen == [int]


def test_the_typed_view_reads_back_the_declaration():
    view = declared(schema_of(Demo))
    assert view["count"].minimum == 1 and view["count"].label_of(1) == "one" and view["count"].main_type == "integer"
    assert view["rate"].nullable and view["rate"].main_type == "number" and view["rate"].null_text == "auto"
    assert view["kind"].label_of("b") == "second" and view["kind"].enum == ("a", "b")
    assert view["names"].items is not None and view["names"].items.main_type == "string"
    for key, decl in declarations(Demo).items():
        assert view[key] == decl
        assert Setting.from_schema(decl.to_schema()).to_schema() == decl.to_schema()
    assert declared({"type": "object"}) == {}


def test_every_engines_schema_is_made_from_its_declaration():
    """Each engine's schema describes every default setting, with its title, and reads back as the
    same schema through the typed view (nothing the GUI needs is lost on the way)."""
    for spec in engines().values():
        props = spec.settings_schema["properties"]
        assert set(props) == set(spec.default_settings()), spec.name
        for key, decl in declared(spec.settings_schema).items():
            assert decl.title and decl.description, (spec.name, key)
            assert decl.to_schema() == props[key], (spec.name, key)
            assert decl.default == spec.default_settings()[key], (spec.name, key)
