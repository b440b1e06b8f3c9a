"""The typed result of the "fcnnx" engine (core.fcnnx.engine): several CNNs mapped onto one FPGA,
the memory-aware schedule of the best joint design and, when simulated, its check against the
contention-unaware baseline.

The engine yields it; the fcnnx panel (through core.fcnnx.joint_view) draws Pareto fronts, joint
points, the schedule's Gantt chart, the bandwidth profile and resource bars from its fields. The
objective is a distance to the targets: lower is better. Each engine's hardware description
(`design` of a design point) is kept as JSON; a subgraph's load is the model's SubgraphLoad.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from core.fcnnx.model import SubgraphLoad, design_to_json
from core.cost import CostRecord
from core.metrics import Metric
from core.results import EngineResult, optional_key

if TYPE_CHECKING:                               # the engine's domain class; the result never needs it at run time
    from core.fcnnx.dse import DesignPoint


def cnn_titles(result: Any) -> list[str]:
    """Each CNN of a result as people name it, for its per-CNN metrics: a zoo network by its title's
    name ("ZFNet", "VGG-16"), an ONNX model by its own name."""
    from core.nets import zoo

    titles = zoo.titles()
    return [titles[n].split(" (")[0] if n in titles else n for n in result.cnns]


@dataclass(kw_only=True)
class Resources:
    luts: int
    ffs: int
    dsps: int
    bram18k: int

    @classmethod
    def of(cls, counts: Mapping[str, int]) -> "Resources":
        """From the model's resource dict (core.fcnnx.model.RESOURCE_KEYS)."""
        return cls(luts=counts["luts"], ffs=counts["ffs"], dsps=counts["dsps"], bram18k=counts["bram18k"])


@dataclass(kw_only=True)
class Utilisation:
    """Share of each device resource used, 0..1."""

    luts: float
    ffs: float
    dsps: float
    bram18k: float

    @classmethod
    def of(cls, used: Mapping[str, int], available: Mapping[str, int]) -> "Utilisation":
        return cls(luts=used["luts"] / available["luts"], ffs=used["ffs"] / available["ffs"],
                   dsps=used["dsps"] / available["dsps"], bram18k=used["bram18k"] / available["bram18k"])


@dataclass(kw_only=True)
class DesignSummary:
    """What a result keeps of one CNN's engine design: a summary (built from a
    core.fcnnx.dse.DesignPoint by `of`), not a copy of the DesignPoint.

    A DesignPoint holds the CNN's graph and the search's working state, and cannot be rebuilt from
    this: the engine design as design_to_json writes it (subgraph names only), with fps and gops
    stored where a DesignPoint computes them from its batch and operation count."""

    cnn: str
    resources: Resources
    avg_util: float
    frame_time_s: float
    fps: float
    gops: float
    design: dict[str, Any]                      # partition, stages, tile cap: the hardware description
    subgraphs: list[SubgraphLoad]

    @classmethod
    def of(cls, p: DesignPoint) -> "DesignSummary":
        """The stored summary of a design point (attributes copied, no JSON on the way)."""
        return cls(cnn=p.cnn, resources=Resources.of(p.resources), avg_util=p.avg_util,
                   frame_time_s=p.frame_time_s, fps=p.fps, gops=p.gops, design=design_to_json(p.design),
                   subgraphs=[SubgraphLoad(l.name, l.latency_s, l.traffic_bytes) for l in p.loads])


@dataclass(kw_only=True)
class JointDesign:
    per_cnn: list[DesignSummary]
    resources: Resources
    utilisation: Utilisation
    avg_util: float


@dataclass(kw_only=True)
class ConfigurationEntry:
    """A row of the version-2 MCNN-HS table: first repetition only, addresses laid end to end (kept
    so old results read unchanged; version 3 writes `hardware_table` instead)."""

    engine: int
    subgraph: str
    elements: int
    slots: int
    address: int
    rounds: int
    fraction: float
    cnn: str


@dataclass(kw_only=True)
class ScheduledRun:
    """One run of a subgraph in a schedule cycle: what a Gantt chart draws (core.fcnnx.joint_view)."""

    cnn: str
    subgraph: str
    inference: int
    start_s: float
    duration_s: float
    slowdown: float                             # 1 = full speed
    bandwidth_gbps: float


@dataclass(kw_only=True)
class ScheduledSubgraph(ScheduledRun):
    """A run of the chosen schedule, with its MCNN-HS slots (keys written after ScheduledRun's)."""

    slots: int
    elements: int
    rounds_alone: int
    burst: int
    elements_per_beat: int


@dataclass(kw_only=True)
class Schedule:
    method: str
    optimal: bool
    repetitions: list[int]
    frames_per_cycle: list[int]
    makespan_s: float
    period_s: float
    tick_s: float
    subgraphs: list[ScheduledSubgraph]
    constraint_violations: list[str]
    bandwidth_profile: list[tuple[float, float]]   # (time s, GB/s) steps
    configuration_table: list[ConfigurationEntry] | None = optional_key()   # results of version 2 only


@dataclass(kw_only=True)
class Figures:
    """Frame rates and GOp/s per CNN and the objective they give."""

    fps: list[float]
    gops: list[float]
    objective: float


@dataclass(kw_only=True)
class SimulatedBaseline(Figures):
    efficiency: float


@dataclass(kw_only=True)
class Simulated(Figures):
    period_s: float | None
    efficiency: float


@dataclass(kw_only=True)
class Baseline:
    """The contention-unaware design the paper compares with."""

    design: list[DesignSummary]
    resources: Resources
    peak: Figures
    estimated: Figures
    simulated: SimulatedBaseline | None = optional_key()


@dataclass(kw_only=True)
class CompactSchedule:
    """One cycle of a joint point that was scheduled but not chosen (built by core.fcnnx.explore.schedule_compact):
    a column per quantity, one entry per subgraph run; CNNs and subgraphs by index."""

    method: str
    optimal: bool
    repetitions: list[int]
    makespan_s: float
    period_s: float
    objective: float
    fps: list[float]
    cnn: list[int]
    sub: list[int]
    inference: list[int]
    start_s: list[float]
    duration_s: list[float]
    slowdown: list[float]
    bandwidth_gbps: list[float]
    bandwidth_profile: list[tuple[float, float]]


@dataclass(kw_only=True)
class JointPoint:
    util: float                                 # percent
    peak: float
    contention_unaware_est: float
    memory_aware: float | None                  # None: not scheduled (pruned)
    designs: list[float]
    # since version 2: each CNN's design as its index in pareto_fronts[cnn], and the cycle of a
    # scheduled point other than the chosen one (whose full schedule is FcnnxResult.schedule)
    front_index: list[int] | None = optional_key()
    schedule: CompactSchedule | None = optional_key()


@dataclass(kw_only=True)
class HardwareTable:
    """The MCNN-HS configuration of the chosen schedule's whole cycle (core.fcnnx.hwtable) and its
    replay in the discrete-event simulation (sims.fcnnx_des.replay_table), read back from the JSON."""

    replay_matches: bool                        # every CNN's replayed fps equals the schedule's (REPLAY_RTOL)
    schedule_fps: list[float]
    replay_fps: list[float]
    schedule_period_s: float
    table_period_s: float                       # the schedule's period rounded up to a whole beat
    replay_period_s: list[float | None]         # measured per CNN (None: it never completed a cycle)
    late_runs: int                              # runs that ended after their scheduled end (informational)
    entries: int
    transfers: int
    regions: int
    memory_bytes: int
    period_beats: int
    table: dict[str, Any]                       # the exported document (mcnn_hs_table.json)
    replay_error: str | None = optional_key()   # why the table could not be replayed
    exported: list[str] | None = optional_key()  # files written by --export-table


@dataclass(kw_only=True)
class Verified:
    predicted: float
    simulated: float
    fps_predicted: list[float]
    fps_simulated: list[float]


@dataclass(kw_only=True)
class Search:
    explored_designs: int
    joint_points: int
    scheduled: int
    evaluations: int
    verified_by_simulation: list[Verified]


@dataclass(kw_only=True)
class Timing:
    total: float


@dataclass(kw_only=True)
class Comparison:
    throughput_speedup_geomean: float
    objective_memory_aware: float
    objective_baseline: float


@dataclass(kw_only=True)
class FcnnxResult(EngineResult):
    # Version 2 added the joint points' front indices and schedules, and chosen_joint/baseline_joint
    # (all optional, so version-1 data reads unchanged; the panel says what an old result lacks).
    # Version 3 writes hardware_table (the whole cycle, the memory map, the replay check) instead of the
    # schedule's configuration_table (first repetition only), which stays readable in version-2 data;
    # both optional, so version-2 data reads unchanged and the panel asks for a re-run.
    # Version 4 (issue 50) adds the optional `costs`: each CNN's cost record, its design alone on the board.
    VERSION = 4
    UPGRADES = {1: lambda d: d, 2: lambda d: d, 3: lambda d: d}

    engine: str
    cnns: list[str]
    board: str
    board_name: str
    device: str
    clock_mhz: float
    bandwidth_gbps: float
    effective_bandwidth_gbps: float
    batch: int
    objective: str
    scheduler: str
    user_targets_fps: list[float]
    targets_fps: list[float]
    fps_max: list[float]
    gops_max: list[float]
    ops_per_inference: list[int]
    available: Resources
    pareto_fronts: dict[str, list[DesignSummary]]
    design: JointDesign
    schedule: Schedule
    predicted: Figures
    peak: Figures
    baseline: Baseline
    joint_points: list[JointPoint]
    search: Search
    timing_s: Timing
    simulated: Simulated | None = optional_key()       # only with simulation on
    comparison: Comparison | None = optional_key()
    chosen_joint: int | None = optional_key()          # index in joint_points of `design` (version 2)
    baseline_joint: int | None = optional_key()        # index in joint_points of the baseline (version 2)
    hardware_table: HardwareTable | None = optional_key()  # since version 3
    costs: list[CostRecord] | None = optional_key()    # per CNN, its design alone (version 4; core.fcnnx.cost)

    def validate(self, path: str = "result") -> None:
        super().validate(path)
        for i, record in enumerate(self.costs or ()):     # a stored record verifies itself
            record.check(f"{path}.costs[{i}]")

    METRICS = (
        Metric("fps", "Frames per second per CNN", "frames/s", "higher",
               "each CNN's frame rate under the chosen schedule, in the workload's order",
               read=lambda r: list(r.predicted.fps), items=cnn_titles),
        Metric("fps_simulated", "Frames per second per CNN, simulated", "frames/s", "higher",
               "the same schedule replayed in the discrete-event simulation (when simulation is on)",
               read=lambda r: None if r.simulated is None else list(r.simulated.fps), items=cnn_titles),
        Metric("objective_predicted", "Objective, predicted", "", "lower",
               "distance of the frame rates from their targets (the search's objective)",
               read=lambda r: r.predicted.objective),
        Metric("objective_simulated", "Objective, simulated", "", "lower",
               read=lambda r: None if r.simulated is None else r.simulated.objective),
        Metric("makespan_s", "Cycle time", "s", "lower", "one cycle of the schedule",
               read=lambda r: r.schedule.makespan_s),
    )
