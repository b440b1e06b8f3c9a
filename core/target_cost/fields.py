"""A target's fields as people write them: "64 KiB", "25.6 GB/s", "1.2 GHz" read into the field's
unit and range (core.units), for the cost engine's `--set` and a study's axes over target fields."""

from __future__ import annotations

import difflib
from typing import Any

from core.errors import InputError
from core.kinds import kind_of
from core.units import parse_quantity, quantity_of, read_field


def target_properties(kind: str) -> dict[str, dict[str, Any]] | None:
    """The schema properties of a target kind's fields (None: an unknown kind or one without a schema)."""
    k = kind_of("targets", kind)
    schema = getattr(k.cls, "SCHEMA", None) if k is not None else None
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else None


def check_field_name(kind: str, name: str, where: str) -> dict[str, Any] | None:
    """The property of field `name` of a target kind; InputError naming it, with the nearest field,
    when the kind has no such field (None when the kind has no schema to check against)."""
    props = target_properties(kind)
    if props is None:
        return None
    if name not in props:
        k = kind_of("targets", kind)
        near = difflib.get_close_matches(name, list(props), n=1)
        hint = f"did you mean {near[0]!r}?" if near else f"its fields: {', '.join(props)}"
        raise InputError(f"{k.title if k else kind} has no field {name!r}; {hint}", where)
    return props[name]


def read_target_value(kind: str, name: str, value: Any, where: str, in_range: bool = True) -> Any:
    """`value` for field `name` of a target of `kind`: text with a unit ("64 KiB", "1.5 GB/s") read in
    the field's unit and checked against its range (`in_range`; a range's step is a difference, read
    in the unit only), with the field's title in the message; anything else as it is (the target's
    reader checks it)."""
    prop = check_field_name(kind, name, where)
    unit = prop.get("unit") if prop is not None else None
    if prop is None or not isinstance(value, str) or quantity_of(unit) is None:
        return value
    try:
        if not in_range:
            amount = parse_quantity(value, str(unit))
            return int(amount) if prop.get("type") == "integer" and amount == amount.to_integral_value() \
                else float(amount)
        return read_field(value, prop)
    except InputError as exc:
        raise InputError(f"{prop.get('title', name)} ({name}) {exc.message}", where) from None


def read_target_fields(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """A target's JSON with its fields' values written with units ("64 KiB") read in each field's
    unit (a copy); keys the kind does not have are left for the target's reader to refuse."""
    kind = doc.get("kind")
    props = target_properties(kind) if isinstance(kind, str) else None
    if not props:
        return doc
    return {k: read_target_value(str(kind), k, v, f"{where}.{k}") if k in props else v for k, v in doc.items()}
