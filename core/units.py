"""Quantities written by people: sizes, rates, frequencies, times, energies ("256 KiB", "1.5 GB/s",
"800 MHz", "2 ns", "3.7 pJ"), on the command line and in the window's fields.

Numbers are read exactly (Decimal), so a size of 10^30 GiB or a 400-digit rate is refused with its
range instead of turning into an infinite float on the way, and "256 KiB" is 262144 bytes, not 256.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, localcontext
from typing import Any

from core.errors import InputError

# Sizes are C longs downstream; rates above this many GB/s are no memory system (and lose meaning
# as floats long before the float range ends).
MAX_BYTES = 2 ** 63 - 1
MAX_GBPS = 1e9
_SHORT_SIZE = re.compile(r"(.*[0-9.])\s*([kKmMgG])\s*")          # "64k": the command line's shorthand for KiB


def parse_bytes(text: str, what: str = "size", maximum: int = MAX_BYTES) -> int:
    """'64KiB' -> 65536, '64KB' -> 64000, '64k' -> 65536, '1024' -> 1024 (bytes); at most `maximum` bytes."""
    m = _SHORT_SIZE.fullmatch(str(text))
    typed = f"{m.group(1)} {m.group(2).upper()}iB" if m else str(text)
    try:
        return int(read_field(typed, {"type": "integer", "unit": "B", "minimum": 1, "maximum": maximum}))
    except InputError as exc:
        raise InputError(exc.message, what) from None


def parse_bandwidth(text: str, what: str = "bandwidth", maximum: float = MAX_GBPS) -> float:
    """'1.0GB/s' -> 1.0 (GB/s); '500MB/s' -> 0.5; a bare number is GB/s; at most `maximum` GB/s."""
    try:
        if parse_quantity(str(text), "GB/s") <= 0:
            raise InputError(f"cannot be {str(text).strip()[:60]}: a bandwidth must be positive")
        return float(read_field(str(text), {"type": "number", "unit": "GB/s", "exclusiveMinimum": 0,
                                            "maximum": maximum}))
    except InputError as exc:
        raise InputError(exc.message, what) from None


# ================================================================ quantities of schema fields
# A field of a JSON schema (a target's or an engine setting's) whose "unit" is one of the units
# below holds a physical quantity in that unit: the window reads what people type in any unit of
# the same kind ("256 KiB" into a field in B, "1.2 GHz" into one in MHz) and shows the stored value
# with its unit. Sizes are read exactly (whole bytes); other kinds are read as decimals and stored
# as floats (as the field's "type" says).
@dataclass(frozen=True)
class Quantity:
    """One kind of physical quantity: its name for people, its units (symbol -> size in the base
    unit), an example for messages, and whether the base unit counts whole things (bytes)."""

    name: str
    units: dict[str, Decimal]
    example: str
    whole: bool = False
    any_case: bool = False          # no milli- of it makes sense, so "mhz" and "kb/s" read as meant

    def scale(self, unit: str) -> Decimal | None:
        """The size of `unit` in the base unit (None: not a unit of this quantity)."""
        if unit in self.units:
            return self.units[unit]
        if not self.any_case:
            return None
        return next((v for k, v in self.units.items() if k.lower() == unit.lower()), None)


_SI = (("p", -12), ("n", -9), ("u", -6), ("µ", -6), ("μ", -6), ("m", -3), ("", 0), ("k", 3), ("K", 3), ("M", 6),
       ("G", 9), ("T", 12))


def _si_units(symbols: tuple[str, ...], lowest: int, highest: int) -> dict[str, Decimal]:
    return {p + s: Decimal(10) ** e for s in symbols for p, e in _SI if lowest <= e <= highest}


def _size_units() -> dict[str, Decimal]:
    units = _si_units(("B",), 0, 12)
    units.update({p + "B": Decimal(1024) ** n for n, p in enumerate(("Ki", "Mi", "Gi", "Ti"), 1)})
    units.update({"byte": Decimal(1), "bytes": Decimal(1)})
    return units


QUANTITIES: dict[str, Quantity] = {q.name: q for q in (
    Quantity("size", _size_units(), "65536 B, 64 KiB, 1.5 MB", whole=True, any_case=True),
    Quantity("bandwidth", {**{f"{u}/s": v for u, v in _size_units().items() if not u.startswith("byte")},
                           **{f"{u[:-1]}Bps": v for u, v in _size_units().items() if u.endswith("B")}},
             "1.5 GB/s, 500 MB/s", any_case=True),
    Quantity("frequency", _si_units(("Hz",), 0, 12), "800 MHz, 1.2 GHz", any_case=True),
    Quantity("time", {**_si_units(("s",), -12, 0), "sec": Decimal(1), "min": Decimal(60), "h": Decimal(3600)},
             "2 ns, 10 s, 5 min"),
    Quantity("energy", _si_units(("J",), -12, 3), "3.7 pJ, 1.2 nJ"),
    Quantity("power", _si_units(("W",), -12, 3), "150 mW, 2.5 W"),
)}
_WIDE = Context(prec=80, Emax=MAX_EMAX, Emin=MIN_EMIN)      # no typed exponent overflows or rounds to 0
# a number (digits grouped by commas in threes, as the window writes large ones, read too), then its unit
_QUANTITY_TEXT = re.compile(r"\s*([+-]?(?:[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?|[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
                            r"(?:[eE][+-]?[0-9]+)?)\s*(\S*?)\s*")


def quantity_of(unit: str | None) -> Quantity | None:
    """The quantity a field's unit measures (by its exact symbol: "B", "GB/s", "MHz", "ns", "pJ"),
    or None for units that are counts ("px", "lanes", "bit")."""
    if not unit:
        return None
    return next((q for q in QUANTITIES.values() if unit in q.units), None)


def parse_quantity(text: str, unit: str) -> Decimal:
    """What `text` says in the field's `unit`, exactly: parse_quantity("256 KiB", "B") == 262144,
    parse_quantity("500 MB/s", "GB/s") == 0.5; a bare number is in `unit`. The sign is kept (the
    field's range says whether it may be negative). InputError for text that does not read."""
    q = quantity_of(unit)
    if q is None:
        raise ValueError(f"{unit!r} is not a unit of a known quantity")
    shown = str(text).strip()[:60]
    if not shown:
        raise InputError(f"is empty: type a {q.name} (e.g. {q.example})")
    m = _QUANTITY_TEXT.fullmatch(str(text))
    if not m:
        raise InputError(f"cannot read {shown!r} as a {q.name} (e.g. {q.example})")
    typed = q.scale(m.group(2)) if m.group(2) else q.units[unit]
    if typed is None:
        raise InputError(f"cannot read {shown!r}: {m.group(2)!r} is not a unit of {q.name} (e.g. {q.example})")
    with localcontext(_WIDE):
        return Decimal(m.group(1).replace(",", "")) * typed / q.units[unit]


def _plain(value: Decimal) -> str:
    """A decimal without exponent or trailing zeros: 1.50 -> '1.5', 1E+3 -> '1000'."""
    return f"{value.normalize():f}"


def format_quantity(value: float | int | None, unit: str) -> str:
    """A stored value as a field shows it, reading back to the same value: sizes in the largest
    binary unit that holds them whole ("256 KiB"), other quantities in the field's unit with the
    shortest exact digits ("1.5 GB/s", "800 MHz")."""
    if value is None:
        return ""
    q = quantity_of(unit)
    exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if q is not None and q.whole:
        size = exact * q.units[unit]
        for big in ("TiB", "GiB", "MiB", "KiB"):
            if abs(size) >= q.units[big] and size % q.units[big] == 0:
                return f"{_plain(size / q.units[big])} {big}"
    return f"{_plain(exact)} {unit}"


def read_field(text: str, prop: dict[str, Any]) -> int | float:
    """The value of a schema field typed as text with a unit (see parse_quantity), checked against
    the field's type and range with a message in the field's unit, as the window words it:
    "cannot be -5 GB/s: must be more than 0 GB/s". InputError (without a place: the caller names
    the field) otherwise."""
    unit = str(prop["unit"])
    value = parse_quantity(text, unit)
    m = _QUANTITY_TEXT.fullmatch(str(text))
    assert m is not None                        # parse_quantity read it
    number = m.group(1) if len(m.group(1)) <= 24 else f"{m.group(1)[:12]}…{m.group(1)[-6:]}"
    typed = f"{number} {m.group(2) or unit}"
    kinds = prop.get("type", [])
    integer = "integer" in ([kinds] if isinstance(kinds, str) else kinds)
    if integer and value != value.to_integral_value():
        raise InputError(f"cannot be {typed}: must be a whole number of {'bytes' if unit == 'B' else unit}")
    if "exclusiveMinimum" in prop and value <= Decimal(repr(prop["exclusiveMinimum"])):
        raise InputError(f"cannot be {typed}: must be more than {format_quantity(prop['exclusiveMinimum'], unit)}")
    lo, hi = prop.get("minimum"), prop.get("maximum")
    if lo is not None and value < Decimal(repr(lo)):
        raise InputError(f"cannot be {typed}: must be at least {format_quantity(lo, unit)}")
    if hi is not None and value > Decimal(repr(hi)):
        raise InputError(f"cannot be {typed}: must be at most {format_quantity(hi, unit)}")
    if integer:
        return int(value)
    result = float(value)
    if value != 0 and (result == 0 or not math.isfinite(result)):
        raise InputError(f"cannot be {typed}: too small to hold")
    return result
