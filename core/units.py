"""Parsing of sizes and rates written by users ("64KiB", "1.0GB/s").

Numbers are read exactly (Decimal), so a size of 10^30 GiB or a 400-digit rate is refused with its
range instead of turning into an infinite float on the way.
"""

from __future__ import annotations

import re
from decimal import Decimal

from core.errors import InputError

_SIZE = {"": 1, "b": 1, "kb": 1000, "kib": 1024, "k": 1024, "mb": 1000**2, "mib": 1024**2, "m": 1024**2,
         "gb": 1000**3, "gib": 1024**3}
_RATE = {"b/s": Decimal("1e-9"), "kb/s": Decimal("1e-6"), "mb/s": Decimal("1e-3"), "gb/s": Decimal(1),
         "gib/s": Decimal(1024**3) / Decimal(10**9), "": Decimal(1)}
_NUMBER = r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*"
# Sizes are C longs downstream; rates above this many GB/s are no memory system (and lose meaning
# as floats long before the float range ends).
MAX_BYTES = 2 ** 63 - 1
MAX_GBPS = 1e9


def _size_text(n: int) -> str:
    for unit, mult in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= mult and n % mult == 0:
            return f"{n // mult} {unit}"
    return f"{n} bytes"


def parse_bytes(text: str, what: str = "size", maximum: int = MAX_BYTES) -> int:
    """'64KiB' -> 65536, '64KB' -> 64000, '1024' -> 1024 (bytes); at most `maximum` bytes."""
    m = re.fullmatch(_NUMBER + r"([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _SIZE:
        raise InputError(f"cannot read {str(text)[:60]!r} as a size (e.g. 65536, 64KiB, 1MiB)", what)
    value = Decimal(m.group(1)) * _SIZE[m.group(2).lower()]
    if value <= 0 or value != value.to_integral_value():
        raise InputError(f"{str(text)[:60]!r} is not a positive whole number of bytes", what)
    if value > maximum:
        raise InputError(f"{str(text)[:60]!r} is too large: at most {_size_text(maximum)}", what)
    return int(value)


def parse_bandwidth(text: str, what: str = "bandwidth", maximum: float = MAX_GBPS) -> float:
    """'1.0GB/s' -> 1.0 (GB/s); '500MB/s' -> 0.5; a bare number is GB/s; at most `maximum` GB/s."""
    m = re.fullmatch(_NUMBER + r"([a-zA-Z/]*)\s*", str(text))
    if not m or m.group(2).lower() not in _RATE:
        raise InputError(f"cannot read {str(text)[:60]!r} as a bandwidth (e.g. 1.0GB/s, 500MB/s)", what)
    value = Decimal(m.group(1)) * _RATE[m.group(2).lower()]
    if value <= 0:
        raise InputError(f"bandwidth must be positive, got {str(text)[:60]!r}", what)
    if value > Decimal(maximum):
        raise InputError(f"{str(text)[:60]!r} is too large: at most {maximum:g} GB/s", what)
    result = float(value)
    if result <= 0:
        raise InputError(f"{str(text)[:60]!r} is too small to use", what)
    return result
