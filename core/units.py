"""Parsing of sizes and rates written by users ("64KiB", "1.0GB/s")."""

from __future__ import annotations

import re

from core.errors import InputError

_SIZE = {"": 1, "b": 1, "kb": 1000, "kib": 1024, "k": 1024, "mb": 1000**2, "mib": 1024**2, "m": 1024**2,
         "gb": 1000**3, "gib": 1024**3}
_RATE = {"b/s": 1e-9, "kb/s": 1e-6, "mb/s": 1e-3, "gb/s": 1.0, "gib/s": 1024**3 / 1e9, "": 1.0}


def parse_bytes(text: str, what: str = "size") -> int:
    """'64KiB' -> 65536, '64KB' -> 64000, '1024' -> 1024 (bytes)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _SIZE:
        raise InputError(f"cannot read {text!r} as a size (e.g. 65536, 64KiB, 1MiB)", what)
    value = float(m.group(1)) * _SIZE[m.group(2).lower()]
    if value <= 0 or value != int(value):
        raise InputError(f"{text!r} is not a positive whole number of bytes", what)
    return int(value)


def parse_bandwidth(text: str, what: str = "bandwidth") -> float:
    """'1.0GB/s' -> 1.0 (GB/s); '500MB/s' -> 0.5; a bare number is GB/s."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z/]*)\s*", str(text))
    if not m or m.group(2).lower() not in _RATE:
        raise InputError(f"cannot read {text!r} as a bandwidth (e.g. 1.0GB/s, 500MB/s)", what)
    value = float(m.group(1)) * _RATE[m.group(2).lower()]
    if value <= 0:
        raise InputError(f"bandwidth must be positive, got {text!r}", what)
    return value
