"""Workloads a study draws instead of naming: random kernel sets as in Cain's experiments.

A study's workload may be `{"generate": "random_kernels", "count": 3, "seed": 1}`; its fields are
ordinary fields, so axes sweep them (`workload.count`, `workload.seed`). Each point turns it into
a plain kernel-set workload before it runs, so runs and results files hold the kernels themselves.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from core.errors import InputError
from core.workload import Kernel, KernelSet


def random_kernels(d: dict[str, Any], where: str) -> dict[str, Any]:
    """Cain's eq. 15: `count` kernels of size x size, coefficients u/denominator with u uniform in
    0..max, none all zero. Kernel i is the same for every count at one seed (the filters of a
    kernel-count sweep are nested), so a sweep compares like with like."""
    fields = {"count": (1, 64), "seed": (0, 2 ** 31 - 1), "size": (1, 7), "max": (1, 1000), "denominator": (1, 1 << 20)}
    defaults = {"size": 3, "max": 8, "denominator": 8, "seed": 0}
    known = {"generate", "name", *fields}
    for key in d:
        if key not in known:
            raise InputError(f"unknown field; random_kernels takes {', '.join(sorted(known - {'generate'}))}",
                             f"{where}.{key}")
    v: dict[str, int] = {}
    for key, (lo, hi) in fields.items():
        if key not in d and key not in defaults:
            raise InputError("missing field", f"{where}.{key}")
        x = d.get(key, defaults.get(key))
        if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
            raise InputError(f"must be an integer {lo}..{hi}, got {x!r}"[:200], f"{where}.{key}")
        v[key] = x
    rng = random.Random(v["seed"])
    kernels = []
    for i in range(v["count"]):
        while True:
            m = [[rng.randint(0, v["max"]) for _ in range(v["size"])] for _ in range(v["size"])]
            if any(any(r) for r in m):
                break
        kernels.append(Kernel(f"r{i + 1}", m))
    given = d.get("name")
    name = given if isinstance(given, str) else f"random x{v['count']} seed {v['seed']}"
    return KernelSet(name, v["denominator"], kernels).to_json()


GENERATORS: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {"random_kernels": random_kernels}


def resolve(workload: dict[str, Any] | None, where: str) -> dict[str, Any] | None:
    """A workload's JSON with a generator replaced by what it generates (others unchanged)."""
    if not isinstance(workload, dict) or "generate" not in workload:
        return workload
    name = workload["generate"]
    if name not in GENERATORS:
        raise InputError(f"unknown generator {name!r}; known: {', '.join(GENERATORS)}", f"{where}.generate")
    return GENERATORS[name](workload, where)
