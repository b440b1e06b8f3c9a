"""Engine "cost": one network costed on one target by the engine that costs that target's kind (the
comparison's costings, core.comparison: the bound's optimal dataflow on the dataflow accelerator,
Cappuccino's modelled program on a mobile SoC, f-CNNx on an FPGA board, MERIT's roofline on a CPU or
GPU, Cain on SCAMP-5), modelled, never timed, so a study can sweep a target's fields quickly.

Its result is the cost record with the metrics a study optimises (latency, energy, off-chip traffic),
declared by core.target_cost.result. The record is checked here: sound (every figure at or above its
limit, totals the sums of the layers) and its layers' MACs the network's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Iterator

from core.cost import CostRecord
from core.engine import EngineSpec, JobRequest
from core.errors import InputError
from core.files import file_problem
from core.jobs import CancelToken, Event, FinalResult, LogLine, Progress
from core.results import EngineResult
from core.settings import defaults_of, parse, schema_of, setting
from core.comparison import Budgets
from core.target_cost.fields import read_target_fields, read_target_value
from core.target_cost.result import TargetCostResult
from core.workload import CnnNetwork, Target, Workload, target_from_json

COSTED_KINDS = ("dataflow", "mobile_soc", "fpga", "cpu", "gpu", "scamp5")
_BUDGETS = Budgets()

@dataclass(frozen=True)
class CostSettings:
    """The budgets a costing may spend, declared once (SETTINGS_SCHEMA is made from them); their
    defaults are the comparison's (core.comparison.Budgets), so a study point costs as a comparison's part."""

    fcnnx_max_joint: int = setting(_BUDGETS.fcnnx_max_joint, "f-CNNx design points",
                                   "Design points f-CNNx weighs on an FPGA board (more: a better design, slower)",
                                   minimum=1, maximum=100_000)
    scamp5_max_nodes: int = setting(_BUDGETS.scamp5_max_nodes, "Cain node budget",
                                    "Search nodes per pass of Cain on SCAMP-5's first layer",
                                    minimum=1, maximum=100_000_000)
    scamp5_time_s: float = setting(_BUDGETS.scamp5_time_s, "Cain time budget", "Seconds per pass of Cain on SCAMP-5",
                                   unit="s", exclusive_minimum=0, maximum=3600)


SETTINGS_SCHEMA: dict[str, Any] = schema_of(CostSettings)


def default_settings() -> dict[str, Any]:
    return defaults_of(CostSettings)


def checked_settings(request: JobRequest) -> CostSettings:
    """The request's settings over the defaults, typed (InputError names the setting)."""
    return parse(CostSettings, request.settings)


def workload_problem(workload: Any) -> str | None:
    if isinstance(workload, CnnNetwork):
        if workload.source == "builtin":
            return "the built-in digits CNN has no layer table here: cost a zoo network or an ONNX file"
        if workload.source == "onnx" and file_problem(workload.onnx_path):
            return f"ONNX file {file_problem(workload.onnx_path)}: {workload.onnx_path}"
    return None


def _source(workload: Workload | None) -> str:
    if not isinstance(workload, CnnNetwork):
        kind = getattr(workload, "kind", None)
        raise InputError(f"a target is costed for a CNN (a zoo network or an ONNX file), not {kind or 'nothing'}",
                         "workload")
    problem = workload_problem(workload)
    if problem:
        raise InputError(problem, "workload")
    return workload.onnx_path or workload.network


def run(request: JobRequest, token: CancelToken) -> Iterator[Event]:
    from core.comparison import costings, network_macs
    from core.kinds import kind_of

    s = checked_settings(request)
    source = _source(request.workload)
    target = request.target
    if target is None:
        raise InputError("no target to cost the network on", "target")
    costing = costings().get(target.kind)
    if costing is None:
        k = kind_of("targets", target.kind)
        raise InputError(f"no engine costs a {k.title if k else target.kind} yet", "target.kind")
    name, macs, _n = network_macs(source)
    token.check()
    yield Progress(0.0, f"costing {name} with {costing.engine}")
    budgets = Budgets(measure=False, scamp5_max_nodes=s.scamp5_max_nodes, scamp5_time_s=s.scamp5_time_s,
                      fcnnx_max_joint=s.fcnnx_max_joint)
    got = costing.cost(source, target, budgets)
    record = got.record.check("result.record")
    total = sum(l.macs for l in record.layers)
    if total != macs:
        raise RuntimeError(f"the cost record's layers hold {total} MACs, the network {macs}")
    covered = sum(l.macs for l in record.layers if l.reason is None)
    if covered < macs:
        yield LogLine(f"{macs - covered} of {macs} MACs are in layers the target cannot run; the totals leave "
                      "them out", "warning")
    yield Progress(1.0, "costed")
    yield FinalResult(TargetCostResult(network=name, source=source, macs=macs, kind=target.kind,
                                       engine=costing.engine, note=got.note, record=record))


def format_text(result: EngineResult) -> str:
    from core.numbers import format_number

    assert isinstance(result, TargetCostResult)
    r = result
    lines = [f"{r.network} on {r.record.target}", f"costed by {r.engine}: {r.note}", ""]
    head = f"{'layer':14s} {'MACs':>12s} {'time':>12s} {'/limit':>7s} {'energy':>12s} {'off-chip':>12s}"
    lines += [head, "-" * len(head)]
    rec: CostRecord = r.record
    for l in [*rec.layers, rec.total]:
        if l.reason is not None:
            lines.append(f"{l.name[:14]:14s} {format_number(l.macs, ''):>12s}  not run: {l.reason}")
            continue
        ratio = l.time_s.of_limit
        lines.append(f"{l.name[:14]:14s} {format_number(l.macs, ''):>12s} {format_number(l.time_s.value, 's'):>12s} "
                     f"{'' if ratio is None else f'{ratio:.2f}x':>7s} {format_number(l.energy_j.value, 'J'):>12s} "
                     f"{format_number(l.offchip_bytes.value, 'B'):>12s}")
    return "\n".join(lines)


def add_cli_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--network", required=True, metavar="NAME|FILE.onnx", help="a zoo network or an ONNX file")
    p.add_argument("--target", default="dataflow", choices=COSTED_KINDS,
                   help="the target's kind, at its defaults (default: dataflow)")
    p.add_argument("--target-file", default=None, metavar="F.json",
                   help="a target as JSON (its \"kind\" and any of its fields), instead of --target")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="a field of the target, with its unit where it has one: memory_bytes=\"256 KiB\", "
                        "bandwidth_gbps=\"25.6 GB/s\", clock_mhz=\"1.2 GHz\" (repeat for several)")


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    network: str = args.network
    workload = CnnNetwork(onnx_path=network) if network.lower().endswith(".onnx") else CnnNetwork(network)
    if not workload.onnx_path:
        try:
            workload.validate("--network")
        except InputError as exc:
            raise InputError(exc.message, "--network") from None
    doc: dict[str, Any]
    if args.target_file:
        doc = read_target_fields(_read_json(args.target_file), "--target-file")
    else:
        doc = {"kind": args.target}
    kind = str(doc.get("kind"))
    for item in args.set:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise InputError(f"expected FIELD=VALUE, got {item!r}"[:200], "--set")
        key = key.strip()
        doc[key] = read_target_value(kind, key, _number_or_text(value.strip()), f"--set {key}")
    target: Target = target_from_json(doc, "--target-file" if args.target_file else "--target")
    return JobRequest(workload=workload, target=target, settings=default_settings())


def _number_or_text(text: str) -> Any:
    """A --set value: JSON where it reads as JSON (numbers, true/false, names in quotes), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _read_json(path: str) -> dict[str, Any]:
    problem = file_problem(path)
    if problem:
        raise InputError(f"{problem}: {path}", "--target-file")
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}"[:200], "--target-file") from None
    if not isinstance(doc, dict):
        raise InputError("expected a target object with its \"kind\"", "--target-file")
    return doc


ENGINE = EngineSpec(
    name="cost",
    title="Target cost",
    summary="One network costed on one target by the engine that costs the target's kind (the bound's optimal "
            "dataflow on the dataflow accelerator, Cappuccino's program on a mobile SoC, f-CNNx on an FPGA board, "
            "MERIT's roofline on a CPU or GPU, Cain on SCAMP-5), modelled: latency, energy and off-chip traffic per "
            "layer and in total, each against its limit on the target. Studies sweep a target's fields with it.",
    run=run,
    default_settings=default_settings,
    add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli,
    format_text=format_text,
    result_type=TargetCostResult,
    workload_kinds=("cnn",),
    target_kinds=COSTED_KINDS,
    settings_schema=SETTINGS_SCHEMA,
    order=90,
    workload_problem=workload_problem,
)
