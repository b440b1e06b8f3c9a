"""Random f-CNNx cycle scheduling problems for property tests (one chain of subgraphs per engine)."""

from __future__ import annotations

import random

from core.fcnnx.schedule import Problem, Task


def random_problem(rng: random.Random, engines: tuple[int, int], subgraphs: tuple[int, int],
                   ticks: tuple[int, int], units: tuple[int, int]) -> Problem:
    """Engine count, subgraphs per engine, full-speed ticks and bandwidth units, each drawn
    uniformly from its inclusive range."""
    tasks, chains = [], []
    for c in range(rng.randint(*engines)):
        chains.append([])
        for k in range(rng.randint(*subgraphs)):
            chains[-1].append(len(tasks))
            tasks.append(Task(c, k, 0, f"{c}:{k}", rng.randint(*ticks), rng.randint(*units)))
    return Problem(tasks, chains, [1] * len(chains), 1e-3, 1e9)
