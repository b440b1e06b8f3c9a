"""One joint design point of an f-CNNx result, as the views show it: its per-CNN designs, its
schedule (the full one of the chosen point, or the compact one of another point the search
scheduled) and, for a point the search did not schedule, why not.

Read from the typed result alone (a stored run included), so the panel, a runs view or a test ask
the same questions here instead of digging through the result themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from core.fcnnx.result import DesignSummary, FcnnxResult, JointPoint, Resources, ScheduledRun


@dataclass(kw_only=True)
class ScheduleView:
    """One schedule cycle as the views draw it: the chosen point's full schedule (FcnnxResult.schedule
    with the predicted figures) or the compact cycle of another scheduled point, rows by CNN name."""

    method: str
    optimal: bool
    repetitions: list[int]
    makespan_s: float
    period_s: float
    fps: list[float]
    objective: float
    bandwidth_profile: list[tuple[float, float]]     # (time s, GB/s) steps
    subgraphs: Sequence[ScheduledRun]                # the chosen point's rows are ScheduledSubgraphs
    constraint_violations: list[str] = field(default_factory=list)


@dataclass
class JointView:
    index: int | None                                # in result.joint_points; None: not recorded
    chosen: bool                                     # the design the run picked (result.design)
    designs: list[DesignSummary] | None            # per CNN; None: not recorded
    schedule: ScheduleView | None
    note: str = ""                                   # why something is missing

    @property
    def resources(self) -> list[Resources] | None:
        return None if self.designs is None else [d.resources for d in self.designs]


def chosen_view(result: FcnnxResult) -> JointView:
    """The design the run picked, with its full schedule (known in every result version)."""
    sch = result.schedule
    view = ScheduleView(method=sch.method, optimal=sch.optimal, repetitions=sch.repetitions,
                        makespan_s=sch.makespan_s, period_s=sch.period_s, fps=result.predicted.fps,
                        objective=result.predicted.objective, bandwidth_profile=sch.bandwidth_profile,
                        subgraphs=sch.subgraphs, constraint_violations=sch.constraint_violations)
    return JointView(result.chosen_joint, True, list(result.design.per_cnn), view)


def joint_view(result: FcnnxResult, k: int) -> JointView:
    rows = result.joint_points
    if not 0 <= k < len(rows):
        raise IndexError(f"no joint point {k}: the result has {len(rows)}")
    if result.chosen_joint == k:
        return chosen_view(result)
    row = rows[k]
    names = result.cnns
    fi = row.front_index
    if fi is None:
        return JointView(k, False, None, None,
                         "this result was made before runs kept every joint design: run the engine again to "
                         "select its joint designs")
    designs = [result.pareto_fronts[n][j] for n, j in zip(names, fi)]
    compact = row.schedule
    if compact is None:
        return JointView(k, False, designs, None, _why_unscheduled(result, row))
    subgraphs = [ScheduledRun(cnn=names[c], subgraph=designs[c].subgraphs[s].name, inference=inf, start_s=t0,
                              duration_s=d, slowdown=sl, bandwidth_gbps=bw)
                 for c, s, inf, t0, d, sl, bw in zip(compact.cnn, compact.sub, compact.inference, compact.start_s,
                                                     compact.duration_s, compact.slowdown, compact.bandwidth_gbps)]
    view = ScheduleView(method=compact.method, optimal=compact.optimal, repetitions=compact.repetitions,
                        makespan_s=compact.makespan_s, period_s=compact.period_s, fps=compact.fps,
                        objective=compact.objective, bandwidth_profile=compact.bandwidth_profile,
                        subgraphs=subgraphs)
    return JointView(k, False, designs, view)


def _why_unscheduled(result: FcnnxResult, row: JointPoint) -> str:
    best = result.predicted.objective
    if row.peak >= best:
        return (f"not scheduled: even with the whole bandwidth its objective is {row.peak:.4f}, no better than "
                f"the chosen {best:.4f}, so the search stopped before it (tick 'all joint points' to schedule "
                f"every point)")
    return ("not scheduled: beyond the most joint points the search schedules ('max joint points'), or the "
            "scheduler found no schedule in its time limit")


def joints_using(result: FcnnxResult, cnn: str, front_index: int) -> list[int]:
    """Joint points whose design for `cnn` is point `front_index` of its Pareto front."""
    i = result.cnns.index(cnn)
    return [k for k, row in enumerate(result.joint_points)
            if row.front_index is not None and row.front_index[i] == front_index]
