"""Engine "cost": one network costed on one target by the engine that costs that target's kind (the
comparison's costings, core.comparison: the bound's optimal dataflow on the dataflow accelerator,
Cappuccino's program on a mobile SoC, f-CNNx on an FPGA board, MERIT on a CPU or GPU, Cain on
SCAMP-5), checked by the comparison's own check (a sound record, MACs that add up, every layer under
its roofline).

Two things run it:
* a comparison's parts (core.comparison_run submits one run per target through the run controller),
  so each part is a run of the project: shown running in the Runs table, kept with its cost record,
  re-used when its setup is unchanged, opened in this engine's tab ("Target cost");
* a study over target parameters: each point a run of this engine on the target the point's values
  make (modelled, never timed, so a sweep is quick).
A target that cannot run the network is a finished run whose result says why; a costing that crashed
or failed its check is a failed run.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from core.comparison import Budgets
from core.cost import CostRecord
from core.engine import EngineSpec, JobRequest
from core.errors import InputError
from core.files import file_problem
from core.jobs import CancelToken, Event, FinalResult, LogLine, Progress
from core.results import EngineResult
from core.settings import defaults_of, parse, schema_of, setting
from core.target_cost.fields import read_target_fields, read_target_value
from core.target_cost.result import TargetCostResult
from core.workload import CnnNetwork, ConvLayers, Target, target_from_json

NAME = "cost"
COSTED_KINDS = ("dataflow", "fpga", "cpu", "gpu", "mobile_soc", "scamp5")
_BUDGETS = Budgets()


@dataclass(frozen=True)
class CostSettings:
    """The budgets a costing may spend, declared once (SETTINGS_SCHEMA is made from them); the
    defaults are the comparison's (core.comparison.Budgets), so a study point costs as a part does."""

    measure: bool = setting(_BUDGETS.measure, "Time this machine",
                            "On a CPU or mobile SoC target that is this machine: time the generated code here (the "
                            "part then runs alone) instead of modelling it")
    scamp5_max_nodes: int = setting(_BUDGETS.scamp5_max_nodes, "Cain node budget",
                                    "SCAMP-5: Cain's search nodes per pass of the first layer",
                                    minimum=1, maximum=100_000_000)
    scamp5_time_s: float = setting(_BUDGETS.scamp5_time_s, "Cain time budget",
                                   "SCAMP-5: Cain's seconds per pass of the first layer",
                                   unit="s", exclusive_minimum=0, maximum=3600)
    fcnnx_max_joint: int = setting(_BUDGETS.fcnnx_max_joint, "f-CNNx design points",
                                   "FPGA: the design points f-CNNx weighs (more: a better design, slower)",
                                   minimum=1, maximum=100_000)


SETTINGS_SCHEMA: dict[str, Any] = schema_of(CostSettings)


def default_settings() -> dict[str, Any]:
    return defaults_of(CostSettings)


def checked_settings(request: JobRequest) -> CostSettings:
    """The request's settings over the defaults, typed (InputError names the setting)."""
    return parse(CostSettings, request.settings)


def budgets_of_settings(s: CostSettings) -> Budgets:
    return Budgets(measure=s.measure, scamp5_max_nodes=s.scamp5_max_nodes, scamp5_time_s=s.scamp5_time_s,
                   fcnnx_max_joint=s.fcnnx_max_joint)


def workload_problem(workload: Any) -> str | None:
    from core.workload import BUILTIN_DIGITS

    if isinstance(workload, CnnNetwork):
        if not workload.onnx_path and workload.network == BUILTIN_DIGITS:
            return "the built-in digits CNN has no layer table here: cost a zoo network or an ONNX file"
        if workload.onnx_path and file_problem(workload.onnx_path):
            return f"ONNX file {file_problem(workload.onnx_path)}: {workload.onnx_path}"
    return None


def network_source(workload: Any) -> str:
    """The network a CNN workload names (its ONNX file, else its zoo name), or a conv-layers
    workload's specs as a layers source (core.layer_source); InputError otherwise."""
    if isinstance(workload, ConvLayers):
        from core.layer_source import layers_source, spec_shapes

        source = layers_source(workload.layers, "workload.layers")
        spec_shapes(source, "workload.layers")          # a bad spec, named, before anything runs
        return source
    if isinstance(workload, CnnNetwork) and not workload_problem(workload):
        return workload.onnx_path or workload.network
    why = workload_problem(workload) or (f"a target is costed for a CNN (a zoo network or an ONNX file) or "
                                         f"conv-layer specs, not {getattr(workload, 'kind', None) or 'nothing'}")
    raise InputError(why, "workload")


def run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    from core.comparison import TargetItem, cost_part, network_macs

    budgets = budgets_of_settings(checked_settings(request))
    source = network_source(request.workload)
    if request.target is None or request.target.kind not in COSTED_KINDS:
        raise InputError(f"choose a target of kind {', '.join(COSTED_KINDS)}", "target")
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
    elif row.covered_macs < macs:
        yield LogLine(f"{macs - row.covered_macs} of {macs} MACs are in layers the target cannot run; the totals "
                      "leave them out", "warning")
    yield Progress(1.0, "costed")
    yield FinalResult(TargetCostResult(network=title, source=source, macs=macs, target=name, kind=row.kind,
                                       engine=row.engine, note=row.note, measured=row.measured,
                                       seconds=round(row.seconds, 4), covered_macs=row.covered_macs,
                                       reason=row.reason, record=row.record))


def _kind_title(kind: str) -> str:
    from core.kinds import kind_of

    k = kind_of("targets", kind)
    return k.title if k is not None else kind


def format_text(result: EngineResult) -> str:
    from core.numbers import format_number

    assert isinstance(result, TargetCostResult)
    r = result
    if r.reason is not None or r.record is None:
        return f"{r.network} on {r.target}, costed by {r.engine or 'no engine'}: not run: {r.reason}"
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
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--network", metavar="NAME|FILE.onnx", help="a zoo network or an ONNX file")
    what.add_argument("--layer", action="append", metavar="SPEC",
                      help="a convolution layer instead of a network, e.g. Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1 "
                           "(repeat for several: each costed on its own, the records joined)")
    p.add_argument("--target", default="dataflow", choices=COSTED_KINDS,
                   help="the target's kind, at its defaults (default: dataflow)")
    p.add_argument("--target-file", default=None, metavar="F.json",
                   help="a target as JSON (its \"kind\" and any of its fields), instead of --target")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="a field of the target, with its unit where it has one: memory_bytes=\"256 KiB\", "
                        "bandwidth_gbps=\"25.6 GB/s\", clock_mhz=\"1.2 GHz\" (repeat for several)")
    p.add_argument("--measure", action="store_true",
                   help="time this machine's CPU or mobile SoC (the part then runs alone) instead of modelling it")


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    workload: CnnNetwork | ConvLayers
    if args.layer:
        from core.layer_source import layers_source, spec_shapes

        spec_shapes(layers_source(args.layer, "--layer"), "--layer")
        workload = ConvLayers(list(args.layer))
    else:
        network: str = args.network
        workload = CnnNetwork(onnx_path=network) if network.lower().endswith(".onnx") else CnnNetwork(network)
    if isinstance(workload, CnnNetwork) and not workload.onnx_path:
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
    return JobRequest(workload=workload, target=target, settings={**default_settings(), "measure": bool(args.measure)})


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
    name=NAME,
    title="Target cost",
    summary="One network costed on one target by the engine that costs the target's kind (the bound's optimal "
            "dataflow on the dataflow accelerator, Cappuccino's program on a mobile SoC, f-CNNx on an FPGA board, "
            "MERIT on a CPU or GPU, Cain on SCAMP-5): latency, energy and off-chip traffic per layer and in total, "
            "each against its limit on the target. Each part of the Targets tab's comparison is a run of it, and "
            "studies sweep a target's fields with it.",
    run=run,
    default_settings=default_settings,
    add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli,
    format_text=format_text,
    result_type=TargetCostResult,
    workload_kinds=("cnn", "conv_layers"),
    target_kinds=COSTED_KINDS,
    settings_schema=SETTINGS_SCHEMA,
    order=90,
    workload_problem=workload_problem,
)
