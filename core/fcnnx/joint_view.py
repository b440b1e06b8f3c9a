"""One joint design point of an f-CNNx result, as the views show it: its per-CNN designs, its
schedule (the full one of the chosen point, or the compact one of another point the search
scheduled) and, for a point the search did not schedule, why not.

Read from the result dict alone (a stored run included), so the panel, a runs view or a test ask
the same questions here instead of digging through the result themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class JointView:
    index: int | None                                # in result["joint_points"]; None: not recorded
    chosen: bool                                     # the design the run picked (result["design"])
    designs: list[dict[str, Any]] | None             # per CNN, design-point JSON; None: not recorded
    schedule: dict[str, Any] | None                  # schedule_json form (subgraph rows by CNN name)
    note: str = ""                                   # why something is missing

    @property
    def resources(self) -> list[dict[str, int]] | None:
        return None if self.designs is None else [d["resources"] for d in self.designs]


def chosen_joint(result: dict[str, Any]) -> int | None:
    """The joint point whose design and schedule the run reports (None in results made before the
    engine recorded it)."""
    k = result.get("chosen_joint")
    return k if isinstance(k, int) else None


def chosen_view(result: dict[str, Any]) -> JointView:
    """The design the run picked, with its full schedule (known in every result version)."""
    sch = dict(result["schedule"])
    sch["fps"], sch["objective"] = result["predicted"]["fps"], result["predicted"]["objective"]
    return JointView(chosen_joint(result), True, list(result["design"]["per_cnn"]), sch)


def joint_view(result: dict[str, Any], k: int) -> JointView:
    rows = result["joint_points"]
    if not 0 <= k < len(rows):
        raise IndexError(f"no joint point {k}: the result has {len(rows)}")
    if chosen_joint(result) == k:
        return chosen_view(result)
    row = rows[k]
    names = result["cnns"]
    fi = row.get("front_index")
    if fi is None:
        return JointView(k, False, None, None,
                         "this result was made before runs kept every joint design: run the engine again to "
                         "select its joint designs")
    designs = [result["pareto_fronts"][n][j] for n, j in zip(names, fi)]
    compact = row.get("schedule")
    if compact is None:
        return JointView(k, False, designs, None, _why_unscheduled(result, row))
    subgraphs = [{"cnn": names[c], "subgraph": designs[c]["subgraphs"][s]["name"], "inference": inf,
                  "start_s": t0, "duration_s": d, "slowdown": sl, "bandwidth_gbps": bw}
                 for c, s, inf, t0, d, sl, bw in zip(compact["cnn"], compact["sub"], compact["inference"],
                                                     compact["start_s"], compact["duration_s"], compact["slowdown"],
                                                     compact["bandwidth_gbps"])]
    sch = {k2: compact[k2] for k2 in ("method", "optimal", "repetitions", "makespan_s", "period_s", "fps",
                                      "objective", "bandwidth_profile")}
    sch.update(subgraphs=subgraphs, constraint_violations=[])
    return JointView(k, False, designs, sch)


def _why_unscheduled(result: dict[str, Any], row: dict[str, Any]) -> str:
    best = result["predicted"]["objective"]
    if row["peak"] >= best:
        return (f"not scheduled: even with the whole bandwidth its objective is {row['peak']:.4f}, no better than "
                f"the chosen {best:.4f}, so the search stopped before it (tick 'all joint points' to schedule "
                f"every point)")
    return ("not scheduled: beyond the most joint points the search schedules ('max joint points'), or the "
            "scheduler found no schedule in its time limit")


def joints_using(result: dict[str, Any], cnn: str, front_index: int) -> list[int]:
    """Joint points whose design for `cnn` is point `front_index` of its Pareto front."""
    i = result["cnns"].index(cnn)
    return [k for k, row in enumerate(result["joint_points"])
            if row.get("front_index") is not None and row["front_index"][i] == front_index]
