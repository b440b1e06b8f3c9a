"""Engine "fcnnx": map several CNNs onto one FPGA (f-CNNx, Venieris & Bouganis): per-CNN Pareto fronts,
joint design points, memory-aware scheduling with slow-downs, and a simulated check against the
contention-unaware baseline."""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator


from core.boards import BOARDS, board_resources
from core.results import EngineResult
from core.settings import declarations, defaults_of, parse, schema_of, setting
from core.engine import EngineSpec, JobRequest
from core.errors import InputError
from core.files import file_problem
from core.fcnnx.cost import design_cost
from core.fcnnx.dse import DesignPoint, explore_cnn, joint_fronts, joint_points, joint_resources, pareto
from core.fcnnx.explore import (ILP_MAX_TASKS, SCHEDULERS, PointResult, async_estimate, chosen_schedule, lower_bound,
                                schedule_compact, schedule_point)
from core.fcnnx.hwtable import build_table, table_summary, write_table
from core.fcnnx.model import RESOURCE_KEYS, average_utilisation
from core.fcnnx.result import (Baseline, Comparison, DesignSummary, FcnnxResult, Figures, HardwareTable, JointDesign,
                               JointPoint, Resources, Search, Simulated, SimulatedBaseline, Timing, Utilisation, Verified)
from core.fcnnx.schedule import OBJECTIVES, Objective
from core.jobs import CancelToken, Event, FinalResult, LogLine, MetricPoint, Progress
from core.work_units import Stage, WorkPlan
from core.nets.layers import Network
from core.units import parse_bandwidth
from core.workload import CnnSet, FpgaTarget, Target, Workload
from sims.fcnnx_des import SimTask, planning_efficiency, replay_matches, replay_table, simulate_async, simulate_slots

DEFAULT_TARGET_FPS = 25.0


@dataclass(frozen=True)
class FcnnxSettings:
    """The engine's own choices, declared once (SETTINGS_SCHEMA is made from them); the CNNs (with
    their batch) come from the CNN-set workload and the board and bandwidth from the FPGA target."""

    targets: list[float] = setting(
        [], "Target fps", "Target frame rate per CNN, in the workload's order, comma-separated (empty: 25 fps each). "
        "FPSobj measures the distance to these targets",
        items={"type": "number", "exclusiveMinimum": 0}, placeholder="25 each")
    objective: str = setting(
        "fps", "Objective", "FPSobj: reach each CNN's target frame rate (eq. 5); MaxThrpt: the highest throughput "
        "relative to each CNN alone (eq. 6)",
        enum=list(OBJECTIVES), labels={"fps": "FPSobj (eq. 5)", "throughput": "MaxThrpt (eq. 6)"})
    scheduler: str = setting(
        "rcls", "Scheduler", "How each joint point's bandwidth is scheduled: the RCLS heuristic with pattern search, "
        f"or the exact CP-SAT model (up to {ILP_MAX_TASKS} subgraphs per cycle)",
        enum=list(SCHEDULERS), labels={"rcls": "RCLS + pattern search", "ilp": "exact (CP-SAT)"})
    strict_targets: bool | None = setting(
        None, "Unreachable targets", "What happens to a target no design reaches: refused, or lowered to the best "
        "attainable frame rate as eq. 5 does (default: typed targets are refused, the implicit 25 fps lowered)",
        enum=[None, True, False], null_text="refuse typed targets",
        labels={"True": "refuse", "False": "lower to the attainable fps (eq. 5)"})
    front_size: int = setting(
        6, "Front points", "Pareto points per CNN that enter the joint enumeration (of those a joint design can "
        "hold: the two around the target, the ends, the rest evenly in resource use; evenly in frame time for the "
        "throughput objective)", minimum=1, maximum=30)
    max_joint: int = setting(60, "Max joint points", "The most joint design points the memory-aware search schedules",
                             minimum=1, maximum=100_000)
    ps_budget: int = setting(200, "Pattern-search budget",
                             "Schedule evaluations of the pattern search per repetition vector",
                             minimum=1, maximum=1_000_000)
    ilp_time_limit: float = setting(30.0, "CP-SAT time limit", "Time limit of the exact scheduler per joint point",
                                    exclusive_minimum=0, maximum=86_400, unit="s", decimals=1, step=5.0)
    simulate: bool = setting(True, "simulate", "Check the best predicted designs and the contention-unaware baseline "
                             "in the discrete-event simulation of the MCNN-HS")
    verify_top: int = setting(3, "Designs simulated", "How many of the best predicted designs are simulated; the best "
                              "measured one is kept", minimum=1, maximum=20)
    export_table: str = setting(
        "", "Export table to", "Folder to write the MCNN-HS configuration table of the chosen design to, as "
        "mcnn_hs_table.json and the C header mcnn_hs_table.h (empty: not written; the panel's Export button writes "
        "it too)", placeholder="folder (none)")
    prune: bool = setting(True, "Stop at the bound", "Stop the search when no unscheduled joint point can beat the "
                          "best one (off: schedule every joint point up to the limit, the full memory-aware cloud of "
                          "Fig. 4, slower)")


# The settings' types and ranges, checked before a run and read by the GUI's binding for its widgets
# (labels, tooltips, ranges): made from FcnnxSettings.
SETTINGS_SCHEMA: dict[str, Any] = schema_of(FcnnxSettings)


def default_settings() -> dict[str, Any]:
    return defaults_of(FcnnxSettings)


# ---------------------------------------------------------------- inputs
def _settings(request: JobRequest) -> FcnnxSettings:
    """The request's settings over the defaults, typed (InputError names the setting)."""
    return parse(FcnnxSettings, request.settings)


def workload_problem(workload: Any) -> str | None:
    """A CNN set whose ONNX files are gone cannot run (zoo names are checked when the set is made)."""
    if isinstance(workload, CnnSet):
        for p in workload.onnx:
            why = file_problem(p)
            if why:
                return f"ONNX file {why}: {p}"
    return None


def migrate_v1_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], Workload | None, Target | None]:
    """Format 1 kept the CNNs, ONNX files and batch (empty/0: the window's CNN set) and the board and
    bandwidth (''/0: the window's target) in the settings; they become a CNN set and an FPGA target."""
    s = dict(settings)
    cnns, onnx, batch = s.pop("cnns", []) or [], s.pop("onnx", []) or [], s.pop("batch", 0) or 0
    board, bw = s.pop("board", "") or "", s.pop("bandwidth_gbps", 0.0) or 0.0
    workload = CnnSet(list(cnns), batch=int(batch) or 1, onnx=list(onnx)) if cnns or onnx else None
    target = None
    if board or bw:
        default = FpgaTarget()
        target = FpgaTarget.from_json({"kind": "fpga", "board": board or default.board,
                                       "bandwidth_gbps": float(bw) or default.bandwidth_gbps}, "settings")
    return {**default_settings(), **s}, workload, target


def load_networks(workload: Any) -> list[Network]:
    """The CNN set's networks, zoo ones first then ONNX files; a CNN twice gets distinct names."""
    from core.nets import zoo

    if not isinstance(workload, CnnSet):
        raise InputError("f-CNNx maps a CNN set: choose one as the workload", "workload")   # no flag: the window shows it too
    nets = []
    for i, n in enumerate(workload.cnns):
        try:
            nets.append(zoo.get(n))
        except KeyError:
            raise InputError(f"unknown CNN {n!r}; known: {', '.join(zoo.names())} (or give an ONNX file)",
                             f"workload.cnns[{i}]") from None
    for i, path in enumerate(workload.onnx):
        from core.nets.onnx_import import load_onnx

        try:
            nets.append(load_onnx(path))
        except InputError:
            raise
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read ONNX file {path}: {exc}", f"workload.onnx[{i}]") from None
    if not nets:
        raise InputError("the CNN set is empty: pick at least one CNN", "workload.cnns")
    seen: dict[str, int] = {}
    for net in nets:   # the same CNN twice (Table II: 2 x CIFAR-10) gets distinct names
        seen[net.name] = seen.get(net.name, 0) + 1
    count: dict[str, int] = {}
    for net in nets:
        if seen[net.name] > 1:
            count[net.name] = count.get(net.name, 0) + 1
            net.name = f"{net.name}#{count[net.name]}"
    return nets


def _platform(target: Any) -> tuple[str, float]:
    if not isinstance(target, FpgaTarget):
        raise InputError("f-CNNx maps onto an FPGA board: choose an FPGA target", "target")
    board, bw = target.board, float(target.bandwidth_gbps)
    if board not in BOARDS:
        raise InputError(f"unknown board {board!r}; known: {', '.join(BOARDS)}", "target.board")
    if not bw > 0 or not math.isfinite(bw):
        raise InputError(f"bandwidth must be a positive number of GB/s, got {bw!r}", "target.bandwidth_gbps")
    top = BOARDS[board].max_bandwidth_gbps
    if bw > top:
        raise InputError(f"{bw:g} GB/s is more than {BOARDS[board].name}'s memory can deliver (at most {top:g} GB/s)",
                         "target.bandwidth_gbps")
    return board, bw


def _choice_words(key: str, value: Any) -> str:
    """A setting and one of its choices in the words the window shows (the schema's title and label),
    never a command-line flag: the same message reaches the window and the command line (issue 49);
    `--help` names the flag beside the same words."""
    decl = declarations(FcnnxSettings)[key]
    return f"“{decl.title}” to “{decl.label_of(value)}”"


def _no_fit_message(net: Network, board: str, avail: dict[str, int]) -> str:
    from core.fcnnx.dse import TILE_CAPS, build_subgraphs, partitions
    from core.fcnnx.model import EngineDesign, engine_resources, feature_blocks, stream_all

    blocks = feature_blocks(net)
    best = None
    for cap in TILE_CAPS:
        for groups in partitions(blocks, cap):
            d = EngineDesign(net.name, groups, cap, build_subgraphs(blocks, groups, cap))
            d.init_stages()
            stream_all(d)                      # the least BRAM: weights streamed wherever that saves
            r = engine_resources(d)
            score = max(r[k] / avail[k] for k in RESOURCE_KEYS)
            if best is None or score < best[0]:
                best = (score, r)
    assert best is not None
    r = best[1]
    over = ", ".join(f"{k} {r[k]} > {avail[k]}" for k in RESOURCE_KEYS if r[k] > avail[k])
    return (f"{net.name} does not fit {BOARDS[board].name} ({BOARDS[board].device}) even with one PE per stage "
            f"and the finest input folding: smallest design needs {over}")


# ---------------------------------------------------------------- progress in work units
# Seconds per unit on the build machine (2 shared cores), from benchmarks/eta_error.py's traces of the
# starter run (ZFNet + SceneLabel + VGG-16 on the ZC706): a CNN's design space takes about 0.2 s, a
# joint point's pattern search about 6.5 ms per evaluation of its budget, a simulated design 0.45 s,
# the baseline's simulation 0.5 s and the hardware table's replay 0.8 s.
DSE_S = 0.2
PS_EVAL_S = 0.0065
SIM_S = 0.45
BASELINE_S = 0.5
TABLE_S = 0.8
EXPECTED_VISITS = 4     # joint points scheduled before the bound prunes the rest (the starter run: 4)


def work_plan(s: FcnnxSettings, cnns: int) -> WorkPlan:
    """The run's stages in the fraction bands its code reports in, with their estimated work; the
    scheduling stage's is revised as the pruning bound tells how many joint points are left."""
    return WorkPlan([Stage("dse", 0.0, 0.3, cnns * DSE_S),
                     Stage("scheduling", 0.3, 0.8, min(EXPECTED_VISITS, s.max_joint) * point_cost(s)),
                     Stage("simulation", 0.8, 0.93, (s.verify_top * SIM_S + BASELINE_S) if s.simulate else 0),
                     Stage("table", 0.93, 1.0, TABLE_S)])


def point_cost(s: FcnnxSettings) -> float:
    """Seconds to schedule one joint point: its pattern search's budget, or the exact solver's limit."""
    return s.ps_budget * PS_EVAL_S if s.scheduler == "rcls" else float(s.ilp_time_limit)


# ---------------------------------------------------------------- run
def run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    """The run, its progress reported as the share of its work done (core.work_units)."""
    s = _settings(request)
    cnns = len(request.workload.cnns) + len(request.workload.onnx) if isinstance(request.workload, CnnSet) else 1
    plan = work_plan(s, cnns)
    yield from plan.remap(_run(request, s, cancel, plan))


def _run(request: JobRequest, s: FcnnxSettings, cancel: CancelToken, plan: WorkPlan) -> Iterator[Event]:
    t0 = time.perf_counter()
    nets = load_networks(request.workload)
    plan.set_units("dse", len(nets) * DSE_S)
    names = [n.name for n in nets]
    board_key, bw_gbps = _platform(request.target)
    board = BOARDS[board_key]
    avail = board_resources(board_key)
    batch = request.workload.batch if isinstance(request.workload, CnnSet) else 1
    clock = board.clock_mhz * 1e6
    bw_raw = bw_gbps * 1e9
    bw_eff = bw_raw * planning_efficiency()
    user_targets = list(s.targets) or [DEFAULT_TARGET_FPS] * len(nets)
    if len(user_targets) != len(nets):
        raise InputError(f"{len(user_targets)} targets for {len(nets)} CNNs ({', '.join(names)})", "settings.targets")
    yield LogLine(f"{len(nets)} CNNs on {board.name} ({board.device}, {board.clock_mhz:g} MHz) at {bw_gbps:g} GB/s "
                  f"({bw_eff / 1e9:.3f} GB/s effective with {planning_efficiency():.1%} burst efficiency)")

    # 1. per-CNN design space exploration
    fronts_all: list[list[DesignPoint]] = []
    explored = 0
    for ci, net in enumerate(nets):
        front: list[DesignPoint] = []
        pts: list[DesignPoint] = []
        last_emit = time.perf_counter()
        try:
            for p in explore_cnn(net, avail, clock, bw_eff, batch, cancel.check):
                pts.append(p)
                if not any(q.avg_util <= p.avg_util and q.frame_time_s <= p.frame_time_s for q in front):
                    yield MetricPoint(net.name, 100 * p.avg_util, p.fps, "pareto")
                    front = pareto(pts)
                if time.perf_counter() - last_emit > 0.15:
                    cancel.check()
                    last_emit = time.perf_counter()
                    yield Progress(0.3 * (ci + len(pts) / (len(pts) + 200)) / len(nets), f"DSE {net.name}: {len(pts)} points")
        except ValueError as exc:
            raise InputError(str(exc), "workload") from None
        if not pts:
            raise InputError(_no_fit_message(net, board_key, avail), "workload")
        explored += len(pts)
        fronts_all.append(pareto(pts))
        yield LogLine(f"{net.name}: {len(pts)} design points, {len(fronts_all[-1])} on the Pareto front, "
                      f"up to {fronts_all[-1][-1].fps:.2f} fps alone")
    fps_max = [max(p.fps for p in f) for f in fronts_all]
    gops_max = [max(p.gops for p in f) for f in fronts_all]
    ops = [f[0].ops for f in fronts_all]

    # 2. targets (eq. 5: min(user, max attainable))
    unreachable = [(n, u, m) for n, u, m in zip(names, user_targets, fps_max) if u > m]
    # targets the user typed are a requirement: refuse those no design reaches; the implicit
    # 25 fps defaults are lowered as eq. 5 does (unless told otherwise either way)
    strict = bool(s.targets) if s.strict_targets is None else s.strict_targets
    if unreachable and strict:
        raise InputError("targets no design can reach: " + "; ".join(
            f"{n} asks {u:g} fps, at most {m:.2f} fps on this device at {bw_gbps:g} GB/s" for n, u, m in unreachable)
            + f" (lower them, or let eq. 5 lower them: set {_choice_words('strict_targets', False)})",
            "settings.targets")
    for n, u, m in unreachable:
        yield LogLine(f"{n}: target {u:g} fps is above the attainable {m:.2f} fps; using {m:.2f} (eq. 5)", "warning")
    targets = [min(u, m) for u, m in zip(user_targets, fps_max)]
    objective = Objective(s.objective, tuple(targets if s.objective == "fps" else gops_max), tuple(ops))
    limit = targets if s.objective == "fps" else [None] * len(nets)
    limit_batches = [l / batch if l else None for l in limit]     # the simulator counts batches

    # 3. joint design points
    fronts = joint_fronts(fronts_all, avail, s.front_size, limit)
    joints = joint_points(fronts, avail)
    # each joint point names its designs by their index on the CNN's full front (result "pareto_fronts")
    front_index = [[next(j for j, q in enumerate(full) if q is p) for p, full in zip(combo, fronts_all)]
                   for combo in joints]
    if not joints:
        smallest = joint_resources(tuple(f[0] for f in fronts))
        over = ", ".join(f"{k} {smallest[k]} > {avail[k]}" for k in RESOURCE_KEYS if smallest[k] > avail[k])
        raise InputError(f"the CNNs do not fit {board.name} together: the smallest designs need {over}; "
                         f"individually they fit, so map fewer CNNs or pick a larger board", "workload")
    yield LogLine(f"{len(joints)} joint design points fit the device (of {math.prod(len(f) for f in fronts)})")
    joint_rows: list[JointPoint] = []
    for combo, fi in zip(joints, front_index):
        util = 100 * average_utilisation(joint_resources(combo), avail)
        peak = lower_bound(combo, objective) / 0.999
        red = objective.value_of_fps(async_estimate(combo, objective, bw_raw, _async_eff(), limit))
        joint_rows.append(JointPoint(util=util, peak=peak, contention_unaware_est=red, memory_aware=None,
                                     designs=[p.avg_util for p in combo], front_index=fi))
        yield MetricPoint("peak", util, peak, "joint")
        yield MetricPoint("contention-unaware (est.)", util, red, "joint")

    if s.scheduler == "ilp":
        fewest = min(sum(len(p.loads) for p in c) for c in joints)
        if fewest > ILP_MAX_TASKS:
            raise InputError(f"the exact scheduler handles up to {ILP_MAX_TASKS} subgraphs per cycle; the smallest joint "
                             f"design of these CNNs has {fewest}: use the rcls scheduler", "scheduler")

    # 4. memory-aware DSE (Algorithm 1) with bound pruning
    order = sorted(range(len(joints)), key=lambda k: lower_bound(joints[k], objective))
    best: PointResult | None = None
    scheduled: list[PointResult] = []
    joint_of: dict[int, int] = {}          # id(PointResult) -> its joint point
    visited = 0
    candidates = order[:s.max_joint]
    bounds = [lower_bound(joints[k], objective) for k in candidates]      # ascending, as `order`
    for rank, k in enumerate(candidates):
        cancel.check()
        if s.prune and best is not None and bounds[rank] >= best.value:
            yield LogLine(f"stopped after {visited} joint points: no other point can beat {best.value:.4f}")
            break
        # work left: the points the bound cannot prune yet (all of them before a first schedule)
        if not s.prune:
            left = len(candidates) - rank
        elif best is None:
            left = max(1, min(EXPECTED_VISITS, len(candidates)) - rank)
        else:
            left = sum(1 for b in bounds[rank:] if b < best.value)
        plan.set_units("scheduling", (visited + left) * point_cost(s))
        yield Progress(plan.within("scheduling", visited, visited + left), f"scheduling joint point {rank + 1}")
        res = schedule_point(joints[k], objective, bw_eff, s.scheduler, s.ps_budget, s.ilp_time_limit,
                             check=cancel.check, cancelled=lambda: cancel.cancelled)
        visited += 1
        if res is None:
            continue
        if res.errors:
            raise RuntimeError("scheduler produced an invalid schedule: " + "; ".join(res.errors[:3]))
        joint_rows[k].memory_aware = res.value
        joint_rows[k].schedule = schedule_compact(res)
        scheduled.append(res)
        joint_of[id(res)] = k
        yield MetricPoint("memory-aware", joint_rows[k].util, res.value, "joint")
        if best is None or res.value < best.value:
            best = res
            yield MetricPoint("best objective", visited, res.value, "search")
    if best is None:
        raise InputError("no joint design point could be scheduled (the exact solver found nothing in its time limit?)",
                         "scheduler")

    # 5. contention-unaware baseline: best peak objective, then highest peak throughput
    base_k = min(range(len(joints)), key=lambda k: (joint_rows[k].peak,
                                                    -sum(p.gops for p in joints[k])))
    base = joints[base_k]

    # 6. simulation: the best predicted designs are simulated on the MCNN-HS and the best measured one
    # is kept (the prediction's cyclic frame is pessimistic about data-driven engines)
    sim_ma = sim_base = None
    verification: list[Verified] = []
    if s.simulate:
        top = sorted(scheduled, key=lambda r: r.value)[:s.verify_top]
        measured = []
        for j, cand in enumerate(top):
            yield Progress(0.82 + 0.1 * j / len(top), f"simulating memory-aware design {j + 1}/{len(top)}")
            cancel.check()
            sim = _simulate_memory_aware(cand, bw_raw, limit_batches, cancel.check, batch)
            measured.append((objective.value_of_fps(sim.fps), j, cand, sim))
            verification.append(Verified(predicted=cand.value, simulated=measured[-1][0],
                                         fps_predicted=cand.fps, fps_simulated=sim.fps))
        _, _, best, sim_ma = min(measured, key=lambda m: (m[0], m[1]))
        yield Progress(0.93, "simulating the contention-unaware baseline")
        cancel.check()
        sim_base = simulate_async([[SimTask(i, l.name, l.traffic_bytes, l.latency_s) for l in p.loads]
                                   for i, p in enumerate(base)], bw_raw, limit_fps=limit_batches, check=cancel.check)
        sim_base.fps = [f * batch for f in sim_base.fps]
    yield Progress(0.97, "replaying the MCNN-HS table in the simulator")
    hardware = _hardware_table(best, names, bw_raw, batch, cancel.check)
    if s.export_table.strip():
        hardware.exported = export_table(hardware.table, s.export_table.strip(), "settings.export_table")
    yield Progress(1.0, "done")

    def figures(fps: list[float], value: float | None = None) -> Figures:
        """Frame rates, GOp/s and the objective they give (`value`: the objective as scheduled instead)."""
        return Figures(fps=fps, gops=[f * o / 1e9 for f, o in zip(fps, ops)],
                       objective=objective.value_of_fps(fps) if value is None else value)

    joint_res = joint_resources(best.combo)
    chosen = joint_of[id(best)]
    joint_rows[chosen].schedule = None          # the chosen point's full schedule is the result's `schedule`
    baseline = Baseline(design=[DesignSummary.of(p) for p in base], resources=Resources.of(joint_resources(base)),
                        peak=figures([p.fps for p in base]),
                        estimated=figures(async_estimate(base, objective, bw_raw, _async_eff(), limit)))
    simulated = comparison = None
    if sim_ma is not None and sim_base is not None:
        ma = figures(sim_ma.fps)
        simulated = Simulated(fps=ma.fps, gops=ma.gops, objective=ma.objective, period_s=sim_ma.period_s,
                              efficiency=sim_ma.efficiency)
        bs = figures(sim_base.fps)
        baseline.simulated = SimulatedBaseline(fps=bs.fps, gops=bs.gops, objective=bs.objective,
                                               efficiency=sim_base.efficiency)
        comparison = Comparison(
            throughput_speedup_geomean=math.prod(a / b for a, b in zip(ma.gops, bs.gops)) ** (1 / len(names)),
            objective_memory_aware=ma.objective, objective_baseline=bs.objective)
    yield FinalResult(FcnnxResult(
        engine="fcnnx", cnns=names, board=board_key, board_name=board.name, device=board.device,
        clock_mhz=board.clock_mhz, bandwidth_gbps=bw_gbps, effective_bandwidth_gbps=bw_eff / 1e9,
        batch=batch, objective=s.objective, scheduler=s.scheduler,
        user_targets_fps=user_targets, targets_fps=targets, fps_max=fps_max, gops_max=gops_max,
        ops_per_inference=ops, available=Resources.of(avail),
        pareto_fronts={n: [DesignSummary.of(p) for p in f] for n, f in zip(names, fronts_all)},
        design=JointDesign(per_cnn=[DesignSummary.of(p) for p in best.combo], resources=Resources.of(joint_res),
                           utilisation=Utilisation.of(joint_res, avail),
                           avg_util=average_utilisation(joint_res, avail)),
        schedule=chosen_schedule(best, names),
        predicted=figures(best.fps, best.value),
        peak=figures([p.fps for p in best.combo]),
        baseline=baseline, joint_points=joint_rows, chosen_joint=chosen, baseline_joint=base_k,
        search=Search(explored_designs=explored, joint_points=len(joints), scheduled=visited,
                      evaluations=best.evaluations, verified_by_simulation=verification),
        timing_s=Timing(total=time.perf_counter() - t0),
        simulated=simulated, comparison=comparison, hardware_table=hardware,
        costs=[design_cost(p, board, bw_eff, bw_raw) for p in best.combo]))


def _hardware_table(r: PointResult, names: list[str], bw_raw: float, batch: int, check: Any) -> HardwareTable:
    """The chosen schedule's MCNN-HS table (core.fcnnx.hwtable) and its replay, which reads the table
    back from its JSON text, as a hardware designer's file would be read."""
    table = build_table(r.problem, r.schedule, r.period_s, [p.design for p in r.combo], [p.loads for p in r.combo],
                        names, bw_raw, batch)
    text = json.dumps(table.to_json())
    replay = replay_table(json.loads(text), check=check)
    doc = json.loads(text)
    counts = table_summary(doc)
    return HardwareTable(
        replay_matches=replay_matches(r.fps, replay), schedule_fps=r.fps, replay_fps=replay.fps,
        schedule_period_s=r.period_s, table_period_s=replay.table_period_s,
        replay_period_s=[p if math.isfinite(p) else None for p in replay.period_s], late_runs=replay.late,
        entries=counts["entries"], transfers=counts["transfers"], regions=counts["regions"],
        memory_bytes=counts["memory_bytes"], period_beats=counts["period_beats"], table=doc,
        replay_error=replay.error)


def export_table(doc: dict[str, Any], folder: str, where: str = "--export-table") -> list[str]:
    """Writes the table as mcnn_hs_table.json and mcnn_hs_table.h into `folder` (made if missing);
    InputError naming `where` when it cannot."""
    try:
        return [str(p) for p in write_table(doc, Path(folder))]
    except OSError as exc:
        raise InputError(f"cannot write the MCNN-HS table to {folder}: {exc.strerror or exc}", where) from None


def _async_eff() -> float:
    from sims.fcnnx_des import BURST_OVERHEAD, DMA_BURST, SWITCH_PENALTY

    return DMA_BURST / (DMA_BURST + BURST_OVERHEAD + SWITCH_PENALTY)


def _simulate_memory_aware(r: PointResult, bw_raw: float, limit: list[float | None], check: Any, batch: int = 1) -> Any:
    """The chosen design on the simulated MCNN-HS: each subgraph gets the slots its scheduled
    bandwidth needs (eq. 7, first inference of the cycle), engines run data-driven."""
    from core.fcnnx.hwsched import slots_for
    from core.fcnnx.schedule import CAPACITY

    p, s = r.problem, r.schedule
    chains: list[list[SimTask]] = []
    for chain_i, chain in enumerate(p.chains):
        tasks = []
        for i in chain:
            t = p.tasks[i]
            if t.rep:
                continue
            load = r.combo[t.cnn].loads[t.sub]
            tasks.append(SimTask(t.cnn, load.name, load.traffic_bytes, load.latency_s, 0.0,
                                 slots_for(p.demand(i, s.level[i]) / CAPACITY)))
        chains.append(tasks)
    sim = simulate_slots(chains, bw_raw, limit_fps=limit, check=check)
    sim.fps = [f * batch for f in sim.fps]      # batches per second -> frames per second
    return sim


# ---------------------------------------------------------------- command line
def add_cli_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cnns", default="", help="comma list of zoo CNNs, e.g. zfnet,scenelabel,vgg16")
    p.add_argument("--onnx", action="append", default=[], metavar="FILE", help="add a CNN from an ONNX file (repeatable)")
    p.add_argument("--platform", default="zc706", help=f"FPGA board: {', '.join(BOARDS)} (default zc706)")
    p.add_argument("--bandwidth", default="1.0GB/s", help="off-chip bandwidth, e.g. 1.0GB/s or 500MB/s")
    p.add_argument("--objective", choices=OBJECTIVES, default="fps", help="fps: FPSobj (eq. 5); throughput: MaxThrpt (eq. 6)")
    p.add_argument("--targets", default="", help="target fps per CNN, comma list (default 25 each)")
    p.add_argument("--scheduler", choices=SCHEDULERS, default="rcls", help="rcls heuristic or exact CP-SAT (small problems)")
    p.add_argument("--front-size", type=int, default=6, help="Pareto points per CNN entering the joint enumeration")
    p.add_argument("--max-joint", type=int, default=60, help="most joint design points to schedule")
    tg = p.add_mutually_exclusive_group()
    tg.add_argument("--strict-targets", dest="strict_targets", action="store_true", default=None,
                    help="refuse targets above the attainable fps (the default when --targets is given)")
    tg.add_argument("--clamp-targets", dest="strict_targets", action="store_false",
                    help="lower targets above the attainable fps to it (eq. 5; the default for the implicit 25 fps); "
                         f"in the window: set {_choice_words('strict_targets', False)}")
    p.add_argument("--no-simulate", action="store_true", help="skip the discrete-event simulation")
    p.add_argument("--export-table", default="", metavar="DIR",
                   help="write the MCNN-HS configuration table of the chosen design to DIR/mcnn_hs_table.json and "
                        "DIR/mcnn_hs_table.h (a C header)")
    p.add_argument("--all-joint", action="store_true",
                   help="schedule every joint point (up to --max-joint) instead of stopping at the bound: "
                        "the full memory-aware cloud of Fig. 4, slower")


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    from core.nets import zoo

    cnns = [c.strip() for c in args.cnns.split(",") if c.strip()]
    for c in cnns:
        if c not in zoo.names():
            raise InputError(f"unknown CNN {c!r}; known: {', '.join(zoo.names())}", "--cnns")
    if not cnns and not args.onnx:
        raise InputError("give --cnns NAME,NAME,... and/or --onnx FILE", "--cnns")
    if args.platform not in BOARDS:
        raise InputError(f"unknown board {args.platform!r}; known: {', '.join(BOARDS)}", "--platform")
    bw = parse_bandwidth(args.bandwidth, "--bandwidth")
    targets: list[float] = []
    if args.targets.strip():
        try:
            targets = [float(t) for t in args.targets.split(",")]
        except ValueError:
            raise InputError(f"expected numbers like 25,25,4, got {args.targets!r}", "--targets") from None
        if any(not math.isfinite(t) or t <= 0 for t in targets):
            raise InputError(f"target frame rates must be positive, got {args.targets!r}", "--targets")
        if len(targets) != len(cnns) + len(args.onnx):
            raise InputError(f"{len(targets)} targets for {len(cnns) + len(args.onnx)} CNNs", "--targets")
    for key, name, v in (("--front-size", "front_size", args.front_size), ("--max-joint", "max_joint", args.max_joint)):
        decl = declarations(FcnnxSettings)[name]
        lo, hi = int(decl.minimum or 0), int(decl.maximum or 0)
        if not lo <= v <= hi:
            raise InputError(f"must be {lo}..{hi}, got {v}", key)
    settings = default_settings()
    settings.update(targets=targets, objective=args.objective, scheduler=args.scheduler,
                    front_size=args.front_size, max_joint=args.max_joint, strict_targets=args.strict_targets,
                    simulate=not args.no_simulate, prune=not args.all_joint, export_table=args.export_table)
    return JobRequest(CnnSet(cnns, onnx=list(args.onnx)), FpgaTarget(args.platform, bw), settings)


def format_text(result: EngineResult) -> str:
    assert isinstance(result, FcnnxResult)
    r = result
    lines = [f"f-CNNx: {', '.join(r.cnns)} on {r.board_name} ({r.device}) at {r.bandwidth_gbps:g} GB/s, "
             f"objective {'FPSobj' if r.objective == 'fps' else 'MaxThrpt'}, scheduler {r.scheduler}"]
    lines.append(f"targets (fps): {', '.join(f'{t:.2f}' for t in r.targets_fps)}   "
                 f"max alone: {', '.join(f'{t:.2f}' for t in r.fps_max)}")
    lines.append("")
    lines.append(f"{'CNN':<16}{'LUT':>8}{'FF':>8}{'DSP':>6}{'BRAM':>6}{'subg':>6}{'peak fps':>10}{'pred fps':>10}"
                 f"{'sim fps':>10}{'sim GOp/s':>11}{'base fps':>10}{'base GOp/s':>11}")
    sim = r.simulated
    bsim = r.baseline.simulated
    for i, (n, d) in enumerate(zip(r.cnns, r.design.per_cnn)):
        res = d.resources
        lines.append(f"{n:<16}{res.luts:>8}{res.ffs:>8}{res.dsps:>6}{res.bram18k:>6}{len(d.subgraphs):>6}"
                     f"{r.peak.fps[i]:>10.2f}{r.predicted.fps[i]:>10.2f}"
                     + (f"{sim.fps[i]:>10.2f}{sim.gops[i]:>11.2f}" if sim else f"{'-':>10}{'-':>11}")
                     + (f"{bsim.fps[i]:>10.2f}{bsim.gops[i]:>11.2f}" if bsim else f"{'-':>10}{'-':>11}"))
    for name, rec in zip(r.cnns, r.costs or ()):
        t = rec.total
        lines.append(f"{name:<16}alone, modelled: "
                     f"{1e3 * (t.time_s.value or 0):.3f} ms per batch (limit {1e3 * (t.time_s.limit or 0):.3f} ms), "
                     f"{(t.offchip_bytes.value or 0) / 1e6:.3f} MB off chip (limit {(t.offchip_bytes.limit or 0) / 1e6:.3f}"
                     f" MB), {len(rec.layers)} subgraphs")
    u = r.design.utilisation
    lines.append("device use: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in asdict(u).items()))
    sch = r.schedule
    lines.append(f"schedule: {len(sch.subgraphs)} subgraphs per cycle, repetitions {sch.repetitions}, "
                 f"makespan {1e3 * sch.makespan_s:.2f} ms, period {1e3 * sch.period_s:.2f} ms, "
                 f"{'optimal' if sch.optimal else sch.method}, constraints checked: "
                 f"{'ok' if not sch.constraint_violations else sch.constraint_violations}")
    for row in sch.subgraphs[:12]:
        lines.append(f"  {row.cnn:<14}{row.subgraph:<22}#{row.inference}  start {1e3 * row.start_s:9.3f} ms  "
                     f"dur {1e3 * row.duration_s:8.3f} ms  sl {row.slowdown:.3f}  {row.bandwidth_gbps:.3f} GB/s  "
                     f"slots {row.slots}")
    if len(sch.subgraphs) > 12:
        lines.append(f"  ... {len(sch.subgraphs) - 12} more")
    lines.append(f"objective: predicted {r.predicted.objective:.4f}"
                 + (f", simulated {sim.objective:.4f}" if sim else "")
                 + (f"; baseline simulated {bsim.objective:.4f}" if bsim else "")
                 + f"; baseline estimated {r.baseline.estimated.objective:.4f}")
    if r.comparison is not None:
        lines.append(f"throughput speed-up over the contention-unaware baseline (geo. mean): "
                     f"{r.comparison.throughput_speedup_geomean:.2f}x")
    hw = r.hardware_table
    if hw:
        lines.append(f"MCNN-HS table: {hw.entries} runs (per repetition, per subgraph), {hw.transfers} transfers, "
                     f"{hw.regions} memory regions ({hw.memory_bytes / 2**20:.2f} MiB), period "
                     f"{hw.period_beats} beats; replay "
                     + ("matches the schedule" if hw.replay_matches else "DIFFERS from the schedule")
                     + ": fps " + ", ".join(f"{a:.3f}/{b:.3f}" for a, b in zip(hw.replay_fps, hw.schedule_fps))
                     + " (replay/schedule)" + (f"; {hw.replay_error}" if hw.replay_error else ""))
        for f in hw.exported or []:
            lines.append(f"  written: {f}")
    return "\n".join(lines)


ENGINE = EngineSpec(
    name="fcnnx", title="Multi-CNN FPGA",
    summary="f-CNNx: maps several CNNs onto one FPGA. Explores each CNN's streaming engine (partitioning, "
            "input folding, PEs per stage) for its latency-resource Pareto front, enumerates joint designs that "
            "fit the device, and schedules the shared off-chip bandwidth with slow-downs (RCLS + pattern search, "
            "or exact CP-SAT) for FPSobj or MaxThrpt; the design is checked in a discrete-event simulation "
            "against a contention-unaware baseline.",
    run=run, default_settings=default_settings, add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli, format_text=format_text,
    workload_kinds=("cnn_set",), target_kinds=("fpga",), settings_schema=SETTINGS_SCHEMA, order=50,
    result_type=FcnnxResult, workload_problem=workload_problem, migrate_v1_settings=migrate_v1_settings,
)
