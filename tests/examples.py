"""How many random examples the property tests draw: their full counts in `make test` (and CI), a
quarter in `make test-fast`, the developer's quick loop (DFE_TEST_EXAMPLES=0.25 in the Makefile).
The same properties are checked either way; the fast loop draws fewer inputs for each."""

from __future__ import annotations

import os

SCALE = float(os.environ.get("DFE_TEST_EXAMPLES", "1") or 1)


def examples(n: int) -> int:
    """`n` examples scaled for this run, never fewer than 10."""
    return max(10, round(n * SCALE))
