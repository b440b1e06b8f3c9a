"""Numbers, units and names as people read them, without Qt.

One place decides how a value looks wherever the window shows it (headlines, the runs table,
Compare, undo texts, the stepper): a sensible number of digits, a unit, SI prefixes where the unit
takes them (MB/s, GOps) and words for big counts (203.5 million words), never `2.03453e+08`,
`8.881784197001252e-16` or `-0`. Setting names come from the engines' settings schemas ("title" and
"unit"), headline names from the table below, so no internal key shows through.
"""

from __future__ import annotations

import math
from typing import Any

DIGITS = 4                  # significant digits of a measured or computed number

# Units that take SI prefixes: the value is given in the bare unit (bytes per second, operations).
SI_UNITS = frozenset({"B", "B/s", "b/s", "Ops", "Op/s", "FLOPs", "FLOP/s", "Hz", "W", "J"})
# Already prefixed units (GB/s, KB, MHz) and plain counts keep their unit and just get digits.
_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
_BIG = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))

# Headline metrics: key -> (what people call it, unit). Keys not listed read as their words.
HEADLINES: dict[str, tuple[str, str]] = {
    # Cain
    "length": ("Program length", "instructions"),
    "nodes_explored": ("Nodes explored", "nodes"),
    "elapsed_s": ("Search time", "s"),
    "lower_bound": ("Lower bound", "instructions"),
    # simulator
    "max_error": ("Max error", ""),
    "max_rms_error": ("Max RMS error", ""),
    "program_length": ("Program length", "instructions"),
    "bus_steps": ("Bus steps", "steps"),
    # f-CNNx
    "objective_predicted": ("Objective, predicted", ""),
    "objective_simulated": ("Objective, simulated", ""),
    "makespan_s": ("Cycle time", "s"),
    # Cappuccino
    "speedup": ("Speed-up", "×"),
    "speedup_parallel": ("Speed-up, precise", "×"),
    "accuracy": ("Accuracy", "fraction"),
    "accuracy_drop_pp": ("Accuracy drop", "pp"),
    # bound
    "optimal_traffic": ("Optimal traffic", "words"),
    "ratio_reference": ("Traffic / bound", "×"),
    "worst_ratio_reference": ("Worst traffic / bound", "×"),
    "ratio_paper": ("Traffic / paper's bound", "×"),
    # MERIT
    "verification_ok": ("Verified", ""),
    "max_abs_diff": ("Max |R - direct|", ""),
    "meritz_utilisation": ("MERIT-z utilisation", "fraction"),
    # every run
    "duration_s": ("Duration", "s"),
}


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
    "fraction" shows as a percentage, "×" as a factor. None is "—", booleans are yes/no."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float)):
        text = str(value)
        return f"{text} {unit}".rstrip() if unit and unit not in ("fraction", "×") else text
    if unit == "fraction":
        return f"{_digits(100.0 * value, max(3, digits - 1))} %"
    if unit == "×":
        return f"{_digits(float(value), digits)}×"
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
    if not unit:
        return text
    return f"{text}{unit}" if unit in ("%",) else f"{text} {unit}"


def headline_label(key: str) -> str:
    return HEADLINES.get(key, (humanise(key), ""))[0]


def headline_unit(key: str) -> str:
    return HEADLINES.get(key, ("", ""))[1]


def format_headline(key: str, value: Any) -> str:
    """A headline metric's value with its unit: `optimal_traffic` 203453132 -> "203.5 million words"."""
    return format_number(value, headline_unit(key))


def _setting_prop(engine: str, key: str) -> dict[str, Any]:
    from core.engine import engines

    spec = engines().get(engine)
    props = (spec.settings_schema.get("properties") or {}) if spec else {}
    prop = props.get(key)
    return prop if isinstance(prop, dict) else {}


def setting_label(engine: str, key: str) -> str:
    """The setting's name in the window (its schema "title", the widget's label), else its words."""
    title = _setting_prop(engine, key).get("title")
    return str(title).rstrip(":") if title else humanise(key)


def setting_unit(engine: str, key: str) -> str:
    return str(_setting_prop(engine, key).get("unit") or "")


def format_setting(engine: str, key: str, value: Any) -> str:
    """A setting's value as the window shows it: the schema's item labels ("x-labels"), its unit,
    'auto' (or the schema's "x-null-text") for null; lists as comma-separated items."""
    prop = _setting_prop(engine, key)
    labels = prop.get("x-labels") or {}
    if value is None:
        return str(prop.get("x-null-text") or "none")
    if isinstance(value, str):
        return str(labels.get(value, value)) if value != "" else "none"
    if isinstance(value, list):
        return ", ".join(format_setting(engine, key, v) if not isinstance(v, (list, dict)) else str(v)
                         for v in value) or "none"
    if isinstance(value, dict):
        import json

        return json.dumps(value, separators=(", ", ": ")) if value else "none"
    if str(value) in labels:
        return str(labels[str(value)])
    return format_number(value, setting_unit(engine, key))
