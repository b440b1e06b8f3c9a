"""Numbers with their units as people read them: digits, SI prefixes, percent once, no Qt.

The one formatting path of every number the window, the command line and the exports show
(core.display re-exports it beside the names of settings and metrics): a sensible number of digits,
a unit, SI prefixes where the unit takes them (MB/s, GOps), milli- to nanoseconds below a second and
words for big counts (203.5 million words), never `2.03453e+08`, `8.881784197001252e-16` or `-0`.
It imports nothing of the project, so the results' metric declarations (core.metrics) can use it.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

DIGITS = 4                  # significant digits of a measured or computed number

# Units that take SI prefixes: the value is given in the bare unit (bytes per second, operations).
SI_UNITS = frozenset({"B", "B/s", "b/s", "Ops", "Op/s", "FLOPs", "FLOP/s", "Hz", "W", "J"})
# Already prefixed units (GB/s, KB, MHz) and plain counts keep their unit and just get digits.
_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
_BIG = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))
_SMALL = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n"))          # times below a second: 1.2 ms, 850 µs
# energies and powers below one: 6.5 µJ, 3.7 pJ, 250 mW (a MAC's energy is picojoules)
_SMALL_SI = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))
_SMALL_UNITS = frozenset({"J", "W"})
_PLAIN_UNITS = frozenset({"fraction", "%", "×", "s"})      # units format_number writes its own way

def humanise(key: str) -> str:
    """`max_nodes` -> "Max nodes": the fallback name of a key nobody titled."""
    words = key.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else key


def _digits(x: float, digits: int = DIGITS) -> str:
    """`x` to `digits` significant digits, trailing zeros dropped, never in exponent form between
    1e-3 and 1e6, never "-0"."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else ("∞" if x > 0 else "-∞") if math.isinf(x) else "NaN"
    mag = abs(x)
    if mag < 1e-3 or mag >= 1e15:
        text = f"{x:.{max(1, digits - 2)}e}"             # 8.9e-16: two digits say it is rounding noise
        mant, _, exp = text.partition("e")
        mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
        return f"{mant}e{int(exp)}"
    decimals = max(0, digits - 1 - math.floor(math.log10(mag)))
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if float(text) == 0:
        return "0"
    if mag >= 1e3 and "." not in text:
        text = f"{round(x):,}"
    return text


def format_number(value: Any, unit: str = "", digits: int = DIGITS) -> str:
    """A value with its unit, as the window shows it.

    Integers stay exact (grouped: 18,855 nodes) below a million, then read in words (203.5 million
    words); floats get `digits` significant digits; SI units get a prefix (3.2e9 B/s -> 3.2 GB/s);
    "fraction" shows as a percentage and "%" is one already (so a percentage is never scaled twice),
    "×" as a factor, times below a second in ms, µs or ns; a list of numbers (one per CNN, say) as
    its items with the unit once; energies and powers below one get m, µ, n or p (6.5 µJ). None is
    "—", booleans are yes/no."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float)) for v in value):
        if unit in SI_UNITS or unit in _PLAIN_UNITS:        # each item its own prefix
            return ", ".join(format_number(v, unit, digits) for v in value)
        return format_number(", ".join(format_number(v, "", digits) for v in value), unit, digits)
    if not isinstance(value, (int, float)):
        text = str(value)
        return f"{text} {unit}".rstrip() if unit and unit not in ("fraction", "×") else text
    if unit == "fraction":
        return f"{_digits(100.0 * value, max(3, digits - 1))} %"
    if unit == "%":                                     # already a percentage: never scaled again
        return f"{_digits(float(value), max(3, digits - 1))} %"
    if unit == "s" and math.isfinite(value) and 0 < abs(value) < 1:
        scale, prefix = next((sc, p) for sc, p in _SMALL if abs(value) >= sc or sc == _SMALL[-1][0])
        return f"{_digits(value / scale, digits)} {prefix}s"
    if unit == "×":
        return f"{_digits(float(value), digits)}×"
    if unit in _SMALL_UNITS and math.isfinite(value) and 0 < abs(value) < 1:
        scale, prefix = next((sc, p) for sc, p in _SMALL_SI if abs(value) >= sc or sc == _SMALL_SI[-1][0])
        return f"{_digits(value / scale, digits)} {prefix}{unit}"
    if unit in SI_UNITS and math.isfinite(value):
        for scale, prefix in _SI:
            if abs(value) >= scale:
                return f"{_digits(value / scale, digits)} {prefix}{unit}"
        return f"{_digits(float(value), digits)} {unit}"
    if isinstance(value, int):
        text = f"{value:,}"
        if abs(value) >= 1e6:
            text = next(f"{_digits(value / s, digits)} {w}" for s, w in _BIG if abs(value) >= s) \
                if abs(value) < 1e15 else _digits(float(value), digits)
    else:
        text = _digits(value, digits)
        if math.isfinite(value) and 1e6 <= abs(value) < 1e15:
            text = next(f"{_digits(value / s, digits)} {w}" for s, w in _BIG if abs(value) >= s)
    return f"{text} {unit}" if unit else text


def editable_text(value: Any) -> str:
    """Text for a field a person edits: it reads back as exactly `value` (float() of it is the same
    number) and reads as a person writes it: 25 not 25.0, 0.1, 1e9 not 1000000000.0, 1234567 in full.
    The plain decimal below a million (down to 0.001); beyond, the shorter of plain and 1e9-style."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) and (abs(value) < 1e6 or abs(value) > 2 ** 53):
        return str(value)                   # exact as it is (past 2**53 a float would not be)
    if not math.isfinite(value):
        return repr(float(value))
    d = Decimal(repr(float(value))).normalize()     # repr: the shortest text that reads back exactly
    if d == 0:
        return "0"
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    plain = format(d, "f")
    mant = "".join(map(str, digits))
    sci = f"{'-' if sign else ''}{mant[0]}{'.' + mant[1:] if len(mant) > 1 else ''}e{exp + len(mant) - 1}"
    if 1e-3 <= abs(value) < 1e6:
        return plain
    return sci if len(sci) < len(plain) else plain


_SHORT = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def compact_number(value: float, digits: int = 3) -> str:
    """A number for a narrow column: `digits` significant digits and a one-letter multiplier
    (12.3M for 12,300,000, -1.2k, 4.6G), the plain number below a thousand; "1e15"-style beyond
    the T. Where a column shows this, its tooltip or copy should give the whole value."""
    x = float(value)
    if not math.isfinite(x) or abs(x) < 1e3:
        return _digits(x, digits)
    if abs(x) >= 1e15:
        return _digits(x, max(2, digits))
    for k, (scale, letter) in enumerate(_SHORT):
        if abs(x) >= scale:
            text = _digits(x / scale, digits).replace(",", "")
            if abs(float(text)) >= 1000 and k > 0:                  # 999,999.9 rounds to 1000k: 1M
                scale, letter = _SHORT[k - 1]
                text = _digits(x / scale, digits)
            return text + letter
    return _digits(x, digits)
