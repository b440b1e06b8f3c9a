"""What the Study panel draws from finished points: numbers for plots and the Pareto front.

Kept apart from Qt so the command line, scripts and tests read the same front as the window.
"""

from __future__ import annotations

import math
from typing import Any


def number(v: Any) -> float | None:
    """A plottable number, or None (text, lists, missing values, NaN)."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(v):
        return float(v)
    if v in ("yes", "no"):
        return 1.0 if v == "yes" else 0.0
    return None


def pareto_front(points: list[tuple[float, float]], minimise: tuple[bool, bool] = (True, True)) -> list[int]:
    """Indices of the points no other point beats in both metrics (ties kept), sorted by the first.
    `minimise` says per metric whether lower is better."""
    sx, sy = (1.0 if minimise[0] else -1.0), (1.0 if minimise[1] else -1.0)
    order = sorted(range(len(points)), key=lambda i: (sx * points[i][0], sy * points[i][1]))
    front: list[int] = []
    best = math.inf
    for i in order:
        y = sy * points[i][1]
        if y < best or (front and y == best and sx * points[i][0] == sx * points[front[-1]][0]):
            front.append(i)
            best = min(best, y)
    return front
