"""The target_cost engine: one network (a CNN of the library) costed on one target by the engine
that costs the target's kind (core.comparison's registered costings: the bound on the dataflow
accelerator, f-CNNx on an FPGA board, MERIT on a CPU or GPU, Cappuccino on a mobile SoC, Cain on
SCAMP-5), checked by the comparison's own check (sound record, MACs that add up, every layer under
its roofline).

It is what a comparison's part runs (core.comparison_run submits one run of it per target through
the run controller), so each part is a run of the project: shown as running in the Runs table, kept
with its cost record, re-used when its setup is unchanged, opened in this engine's tab. Its tab also
costs one network on one target by hand. A target that cannot run the network is a finished run
whose result says why; a costing that crashed or failed its check is a failed run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any, Iterator

from core.engine import EngineSpec, JobRequest
from core.errors import InputError
from core.jobs import CancelToken, Event, FinalResult, LogLine, Progress
from core.results import EngineResult
from core.target_cost.result import TargetCostResult
from core.workload import CnnNetwork, target_from_json

NAME = "target_cost"
TARGET_KINDS = ("dataflow", "fpga", "cpu", "gpu", "mobile_soc", "scamp5")
MAX_NODES = 10_000_000
MAX_TIME_S = 3600.0
MAX_JOINT = 100_000

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "measure": {"type": "boolean", "title": "Time this machine",
                    "description": "On a CPU or mobile SoC target that is this machine: time the generated code "
                                   "here (the part then runs alone) instead of modelling it"},
        "scamp5_max_nodes": {"type": "integer", "minimum": 1, "maximum": MAX_NODES, "title": "Cain node budget",
                             "description": "SCAMP-5: Cain's search nodes per pass of the first layer"},
        "scamp5_time_s": {"type": "number", "minimum": 0.1, "maximum": MAX_TIME_S, "title": "Cain time budget",
                          "x-decimals": 1, "description": "SCAMP-5: Cain's seconds per pass of the first layer (s)"},
        "fcnnx_max_joint": {"type": "integer", "minimum": 1, "maximum": MAX_JOINT, "title": "f-CNNx design points",
                            "description": "FPGA: f-CNNx's joint design points explored"},
    },
}


def default_settings() -> dict[str, Any]:
    from core.comparison import Budgets

    return dataclasses.asdict(Budgets())


def check_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings checked against the schema (InputError naming the field), defaults filled in."""
    from core.checks import check_settings as check

    check(SETTINGS_SCHEMA, settings)
    return {**default_settings(), **settings}


def network_source(workload: Any) -> str:
    """The network a CNN workload names (its ONNX file, else its zoo name); InputError otherwise."""
    if not isinstance(workload, CnnNetwork):
        raise InputError("choose a CNN (a zoo network or an ONNX file)", "workload")
    return workload.onnx_path or workload.network


def run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    from core.comparison import TargetItem, budgets_of, cost_part, network_macs

    budgets = budgets_of(check_settings(request.settings))
    source = network_source(request.workload)
    if request.target is None or request.target.kind not in TARGET_KINDS:
        raise InputError(f"choose a target of kind {', '.join(TARGET_KINDS)}", "target")
    name = _kind_title(request.target.kind)     # the comparison names the row by the target's library name
    title, macs, _ = network_macs(source)
    yield Progress(0.0, f"costing {title} on {name}")
    cancel.check()
    row = cost_part(source, TargetItem(name, request.target), budgets)
    cancel.check()
    if row.failed:                      # a fault of the costing, not the target's limit: a failed run
        raise RuntimeError(row.reason)
    if row.reason is not None:
        yield LogLine(f"{name} cannot run {title}: {row.reason}")
    yield FinalResult(TargetCostResult(network=title, source=source, macs=macs, target=name, kind=row.kind,
                                       engine=row.engine, note=row.note, measured=row.measured,
                                       seconds=round(row.seconds, 4), covered_macs=row.covered_macs,
                                       reason=row.reason, record=row.record))


def add_cli_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--network", required=True, metavar="NAME|FILE.onnx", help="a zoo network or an ONNX file")
    p.add_argument("--target-file", required=True, metavar="F.json",
                   help="the target as JSON (its \"kind\" and any of its fields, docs/targets.md)")
    p.add_argument("--measure", action="store_true", help="time this machine's CPU or SoC instead of modelling it")


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    path = Path(args.target_file)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "--target-file") from None
    target = target_from_json(data, "--target-file")
    net = str(args.network)
    work = CnnNetwork(onnx_path=net) if net.lower().endswith(".onnx") else CnnNetwork(net)
    return JobRequest(work, target, {**default_settings(), "measure": bool(args.measure)})


def format_text(r: EngineResult) -> str:
    assert isinstance(r, TargetCostResult)
    head = f"{r.network} on {r.target} ({r.engine or 'no engine'}):"
    if r.reason is not None or r.record is None:
        return f"{head} not run: {r.reason}"
    from core.display import format_number

    t = r.record.total

    def fig(f: Any, unit: str) -> str:
        if f.value is None:
            return "no model"
        limit = f" (limit {format_number(f.limit, unit)})" if f.limit is not None else ""
        return format_number(f.value, unit) + limit
    return "\n".join([head, f"latency {fig(t.time_s, 's')}, energy {fig(t.energy_j, 'J')}, off-chip "
                            f"{fig(t.offchip_bytes, 'B')}; {100 * r.covered_macs / max(1, r.macs):.4g}% of the MACs run",
                      r.note])


def workload_problem(workload: Any) -> str | None:
    from core.workload import BUILTIN_DIGITS

    if isinstance(workload, CnnNetwork) and not workload.onnx_path and workload.network == BUILTIN_DIGITS:
        return "the built-in digits CNN has no cost model here: choose a zoo network or an ONNX file"
    return None


def _kind_title(kind: str) -> str:
    from core.kinds import kind_of

    k = kind_of("targets", kind)
    return k.title if k is not None else kind


ENGINE = EngineSpec(
    name=NAME,
    title="Target cost",
    summary="One network costed on one target by the engine that costs the target's kind (the bound on the "
            "dataflow accelerator, f-CNNx on an FPGA, MERIT on a CPU or GPU, Cappuccino on a mobile SoC, Cain on "
            "SCAMP-5): each layer's time, energy and off-chip traffic against its limit. Each part of the Targets "
            "tab's comparison is a run of it.",
    run=run,
    default_settings=default_settings,
    add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli,
    format_text=format_text,
    result_type=TargetCostResult,
    workload_kinds=("cnn",),
    target_kinds=TARGET_KINDS,
    settings_schema=SETTINGS_SCHEMA,
    order=95,
    workload_problem=workload_problem,
)
