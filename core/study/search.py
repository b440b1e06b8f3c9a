"""Studies that search instead of sweeping: a sampler proposes which point of the study's grid to run
next, from the metrics of the points that ended, so a budget of points is spent where the optimum
or the Pareto front is.

    "search": {"sampler": "tpe", "budget": 60, "seed": 1,
               "objectives": [{"metric": "fps", "direction": "maximize"}, "resources"]}

The space is the study's own grid (its axes, each point checked when the study is read): a sampler
picks one value index per axis group, so every proposal is a point the sweep would have run, with
its stable key. Optuna (a dependency, core only: workers never import it) does the proposing: TPE and
NSGA-II learn from the results, "random" does not, "grid" runs the grid in order (the sweep, with
a budget and resume by content). The runner asks
for as many proposals as there are worker slots and tells each result as its point ends.

A single-objective search (TPE, NSGA-II or random) ends by polishing its best point: the last part
of the budget, as many points as one point has neighbours (the grid's points that differ from it on
one axis group), goes to untried neighbours of the points that ended: adjacent values before longer
steps, and for each step the best point first, moving on from each better point found, then the next
best point's, until the budget is spent or no neighbour is left untried; then the sampler has the
rest. A model of the whole space (TPE's densities) finds the region of
the best point; one-axis steps find the best point of that region, which the model, sampling,
reaches only by chance when many points there are nearly as good. `"polish": false` turns it off.

Nothing is computed twice: a proposal whose point already ended (in this run, or in the results
file a resumed study reads) is told its recorded metrics without running, and the budget counts
distinct points run. A resumed search first tells the sampler every finished point, so it goes on
from what it knew.
"""

from __future__ import annotations

import difflib
import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.checks import field_path
from core.errors import InputError
from core.study.analysis import number

if TYPE_CHECKING:
    from core.study.axes import Point
    from core.study.spec import Study

SAMPLERS = ("tpe", "nsga2", "random", "grid")
DIRECTIONS = ("minimize", "maximize")
# a sampler that keeps proposing points already run stops after this many proposals per budget point
MAX_PROPOSALS_PER_POINT = 20


@dataclass(frozen=True)
class Objective:
    metric: str                         # a metric of the study (its name)
    direction: str = "minimize"

    @property
    def minimise(self) -> bool:
        return self.direction == "minimize"


@dataclass
class SearchSpec:
    sampler: str
    budget: int                         # distinct points run at most
    objectives: list[Objective]
    seed: int = 0
    polish: bool = True                 # single objective: end with one-axis steps around the best point

    @property
    def polishes(self) -> bool:
        return self.polish and self.sampler != "grid" and len(self.objectives) == 1


def read_search(raw: Any, metric_names: list[str], grid_size: int, where: str = "study.search",
                directions: dict[str, str] | None = None) -> SearchSpec:
    """The study's "search" field, checked; InputError names the field. An objective without a
    direction takes its metric's from `directions` (the declared better way), else minimize."""
    if not isinstance(raw, dict):
        raise InputError('expected {"sampler": ..., "budget": N, "objectives": [...]}', where)
    known = ("sampler", "budget", "objectives", "seed", "polish")
    for k in raw:
        if k not in known:
            near = difflib.get_close_matches(str(k), known, n=1)
            raise InputError("unknown field" + (f"; did you mean {near[0]!r}?" if near else f"; known: {', '.join(known)}"),
                             field_path(where, k))
    sampler = raw.get("sampler", "tpe")
    if sampler not in SAMPLERS:
        raise InputError(f"must be one of {', '.join(SAMPLERS)}, got {str(sampler)[:40]!r}", f"{where}.sampler")
    budget = raw.get("budget", grid_size if sampler == "grid" else None)
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= grid_size:
        raise InputError(f"the number of points to run: an integer 1..{grid_size} (the grid's size), got "
                         f"{budget!r}"[:200], f"{where}.budget")
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 31:
        raise InputError(f"must be an integer 0..{2 ** 31 - 1}, got {seed!r}"[:200], f"{where}.seed")
    objectives = read_objectives(raw.get("objectives"), metric_names, f"{where}.objectives", directions)
    polish = raw.get("polish", True)
    if not isinstance(polish, bool):
        raise InputError(f"must be true or false, got {str(polish)[:40]!r}", f"{where}.polish")
    return SearchSpec(sampler, budget, objectives, seed, polish)


def read_objectives(objs: Any, metric_names: list[str], where: str,
                    directions: dict[str, str] | None = None) -> list[Objective]:
    """A list of objectives (a search's, or a sweep's front): metric names or {"metric", "direction"};
    a metric without a direction goes its declared better way (`directions`), else minimize."""
    if not isinstance(objs, list) or not objs:
        raise InputError("list the metrics to optimise, e.g. [{\"metric\": \"fps\", \"direction\": \"maximize\"}]",
                         where)
    objectives = []
    for i, o in enumerate(objs):
        w = f"{where}[{i}]"
        if isinstance(o, str):
            o = {"metric": o}
        if not isinstance(o, dict) or set(o) - {"metric", "direction"} or not isinstance(o.get("metric"), str):
            raise InputError('expected a metric name or {"metric": NAME, "direction": "minimize"|"maximize"}', w)
        if o["metric"] not in metric_names:
            near = difflib.get_close_matches(o["metric"], metric_names, n=1)
            raise InputError(f"not a metric of this study ({', '.join(metric_names) or 'it has none'})"
                             + (f"; did you mean {near[0]!r}?" if near else ""), f"{w}.metric")
        direction = o.get("direction", (directions or {}).get(o["metric"], "minimize"))
        if direction not in DIRECTIONS:
            raise InputError(f"must be minimize or maximize, got {str(direction)[:40]!r}", f"{w}.direction")
        objectives.append(Objective(o["metric"], direction))
    if len({o.metric for o in objectives}) != len(objectives):
        raise InputError("an objective is listed twice", where)
    return objectives


@dataclass(frozen=True)
class Front:
    """What a sweep's Pareto front is drawn over: its "objectives" (a search's are its SearchSpec's)."""

    objectives: list[Objective]


def objective_values(spec: SearchSpec | Front, rec: dict[str, Any]) -> list[float] | None:
    """The objectives of a point's record, or None when it failed or lacks one."""
    if rec.get("status") != "finished":
        return None
    values = [number((rec.get("metrics") or {}).get(o.metric)) for o in spec.objectives]
    return None if any(v is None for v in values) else [float(v) for v in values if v is not None]


def front(spec: SearchSpec | Front, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records no other finished record beats in every objective (the best one for a single
    objective), in the order of the first objective."""
    scored = [(r, v) for r in records if (v := objective_values(spec, r)) is not None]
    signs = [1.0 if o.minimise else -1.0 for o in spec.objectives]
    keyed = [(r, [s * x for s, x in zip(signs, v)]) for r, v in scored]
    out = [r for r, a in keyed
           if not any(all(x <= y for x, y in zip(b, a)) and any(x < y for x, y in zip(b, a)) for _, b in keyed)]
    seen, unique = set(), []
    for r in sorted(out, key=lambda r: signs[0] * float(objective_values(spec, r)[0])):  # type: ignore[index]
        if r["key"] not in seen:
            seen.add(r["key"])
            unique.append(r)
    return unique


def hypervolume(spec: SearchSpec, records: list[dict[str, Any]], reference: list[float]) -> float:
    """The volume the front dominates up to `reference` (in the objectives' own directions), for two
    objectives exactly (the benchmark's measure of how much of a front a search recovered)."""
    pts = [v for r in front(spec, records) if (v := objective_values(spec, r)) is not None]
    if len(spec.objectives) != 2:
        raise ValueError("hypervolume here is for two objectives")
    signs = [1.0 if o.minimise else -1.0 for o in spec.objectives]
    ref = [s * x for s, x in zip(signs, reference)]
    pts = sorted(([s * x for s, x in zip(signs, p)] for p in pts), key=lambda p: p[0])
    volume, last_y = 0.0, ref[1]
    for x, y in pts:
        if x < ref[0] and y < last_y:
            volume += (ref[0] - x) * (last_y - y)
            last_y = y
    return volume


@dataclass
class Searcher:
    """Proposes the study's points one at a time (Optuna ask/tell) and learns from their records."""

    study: "Study"
    spec: SearchSpec
    _optuna: Any = None
    _trials: dict[str, list[Any]] = field(default_factory=dict)     # point key -> trials waiting for it
    _sizes: list[int] = field(default_factory=list)
    proposals: int = 0
    ran: set[str] = field(default_factory=set)          # keys of points run (or running) in this search
    known: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> finished/failed record

    def __post_init__(self) -> None:
        import warnings

        import optuna

        optuna.logging.set_verbosity(logging.WARNING)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        self._sizes = [len(g) for g in self.study.axes]
        samplers = {"tpe": lambda: optuna.samplers.TPESampler(seed=self.spec.seed, multivariate=True),
                    "nsga2": lambda: optuna.samplers.NSGAIISampler(seed=self.spec.seed),
                    # "grid" proposes the points in the study's order (below), so a budget below the grid's
                    # size runs its first points; the sampler object only records what was told
                    "random": lambda: optuna.samplers.RandomSampler(seed=self.spec.seed),
                    "grid": lambda: optuna.samplers.RandomSampler(seed=self.spec.seed)}
        directions: list[Any] = [o.direction for o in self.spec.objectives]
        self._optuna = optuna.create_study(directions=directions,
                                           sampler=samplers[self.spec.sampler]())

    @staticmethod
    def _name(i: int) -> str:
        return f"axis{i}"

    def _distributions(self) -> dict[str, Any]:
        import optuna

        out: dict[str, Any] = {}
        for i, g in enumerate(self.study.axes):
            ordered = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in g.axes[0].values)
            out[self._name(i)] = (optuna.distributions.IntDistribution(0, len(g) - 1) if ordered and len(g) > 1
                                  else optuna.distributions.CategoricalDistribution(list(range(len(g)))))
        return out

    def _point(self, indices: list[int]) -> "Point":
        pos = 0
        for j, n in zip(indices, self._sizes):
            pos = pos * n + j
        return self.study.points[pos]

    def _indices(self, p: "Point") -> list[int]:
        pos, out = p.index, []
        for n in reversed(self._sizes):
            out.append(pos % n)
            pos //= n
        return list(reversed(out))

    def seed_with(self, records: list[dict[str, Any]]) -> None:
        """Tell the sampler what a resumed study already knows (each point once)."""
        import optuna

        by_key = {p.key: p for p in self.study.points}
        dists = self._distributions()
        for rec in records:
            p = by_key.get(rec.get("key", ""))
            if p is None or p.key in self.known:
                continue
            self.known[p.key] = rec
            values = objective_values(self.spec, rec)
            params = {self._name(i): j for i, j in enumerate(self._indices(p))}
            state = optuna.trial.TrialState.COMPLETE if values is not None else optuna.trial.TrialState.FAIL
            self._optuna.add_trial(optuna.trial.create_trial(params=params, distributions=dists, values=values,
                                                             state=state))

    @property
    def exhausted(self) -> bool:
        """The budget is spent, every point of the grid has a record or is running, or the sampler
        keeps proposing points already known (it has converged)."""
        return (len(self.ran) >= self.spec.budget
                or len(self.ran | set(self.known)) >= len(self.study.points)
                or self.proposals >= MAX_PROPOSALS_PER_POINT * self.spec.budget)

    def next_point(self) -> tuple["Point", dict[str, Any] | None] | None:
        """The next proposal: (point, None) to run it, (point, record) when it already ended (told at
        once, run never again), or None when the budget is spent or nothing new can come."""
        if self.exhausted:
            return None
        self.proposals += 1
        fixed = None
        if self.spec.sampler == "grid":         # the next point in order that has no record and is not running
            fixed = next((p for p in self.study.points if p.key not in self.known and p.key not in self.ran), None)
            if fixed is None:
                return None
        elif self.spec.polishes and self.spec.budget - len(self.ran) <= self._polish_share():
            fixed = self._next_neighbour()
        if fixed is not None:
            self._optuna.enqueue_trial({self._name(i): j for i, j in enumerate(self._indices(fixed))})
        trial = self._optuna.ask(self._distributions())
        p = self._point([int(trial.params[self._name(i)]) for i in range(len(self._sizes))])
        if p.key in self.known:
            self._tell(trial, self.known[p.key])
            return p, self.known[p.key]
        self._trials.setdefault(p.key, []).append(trial)
        if p.key in self.ran:          # running now: this trial gets its record when it ends
            return p, {}
        self.ran.add(p.key)
        return p, None

    def _polish_share(self) -> int:
        """Points kept for polishing: one point's neighbours (one axis group changed), at most half
        the budget, so the sampler always has the first half."""
        return min(sum(n - 1 for n in self._sizes), self.spec.budget // 2)

    def _next_neighbour(self) -> "Point | None":
        """The next point of the polish: an untried neighbour (one axis group changed) of a finished
        point, the nearest values first (one index step before two), and for each distance the points
        in order of their objective, best first (ties: the study's order); None when nothing is left
        untried or no point has ended. So the best point's adjacent values come first, and a better
        point found takes its place at once (a walk downhill); once the best point's adjacent values
        are all tried, those of the next best come before any longer step: a point nearly as good
        often lies in another basin, one step from one better than every point tried."""
        objective = self.spec.objectives[0]
        scored = [(v[0], key) for key, rec in self.known.items()
                  if (v := objective_values(self.spec, rec)) is not None and math.isfinite(v[0])]
        if not scored:
            return None
        by_key = {p.key: p for p in self.study.points}
        order = {p.key: p.index for p in self.study.points}
        sign = 1.0 if objective.minimise else -1.0
        bases = [self._indices(by_key[key]) for _v, key in sorted(scored, key=lambda t: (sign * t[0],
                                                                                         order[t[1]]))]
        for dist in range(1, max(self._sizes)):
            for base in bases:
                for i, n in enumerate(self._sizes):
                    for j in (base[i] - dist, base[i] + dist):
                        if 0 <= j < n:
                            p = self._point(base[:i] + [j] + base[i + 1:])
                            if p.key not in self.known and p.key not in self.ran:
                                return p
        return None

    def told(self, p: "Point", rec: dict[str, Any]) -> None:
        """A point ended: every trial that proposed it learns its objectives (or that it failed)."""
        self.known[p.key] = rec
        for trial in self._trials.pop(p.key, []):
            self._tell(trial, rec)

    def _tell(self, trial: Any, rec: dict[str, Any]) -> None:
        import optuna

        values = objective_values(self.spec, rec)
        if values is None or any(not math.isfinite(v) for v in values):
            self._optuna.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            self._optuna.tell(trial, values if len(values) > 1 else values[0])
