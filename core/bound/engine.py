"""Engine "bound": the off-chip communication lower bound of CNN layers and the dataflow that meets it."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
import re
import time
from typing import Any, Iterator

from core import faults
from core.bound.cost import check_dram, cost_layer, cost_text, costing_of
from core.bound.objective import OBJECTIVES
from core.bound.analysis import Machine, analyse_layer, check_fits, network_totals, sweep_machines, sweep_point
from core.bound.fusion import fusable_links, plan_fusion, plan_text
from core.bound.loopnest import BASELINES, Tiling
from core.bound.onchip import size_architecture
from core.bound.result import BoundResult, Source, SweepRow, Timing
from core.bound.shapes import ConvShape, from_conv, parse_layer_spec
from core.results import EngineResult
from core.settings import declarations, defaults_of, parse, schema_of, setting
from core.engine import EngineSpec, JobRequest
from core.errors import InputError
from core.files import file_problem
from core.jobs import CancelToken, Event, FinalResult, LogLine, MetricPoint, Progress
from core.nets.layers import Conv
from core.units import parse_bandwidth, parse_bytes
from core.workload import CnnNetwork, ConvLayers, DataflowTarget, Target, Workload, target_from_json


@dataclass(frozen=True)
class BoundSettings:
    """The settings, declared once: their types, defaults and widgets' words (SETTINGS_SCHEMA is made
    from them). The memory S and the word size are the dataflow target's (their one home); the layers
    themselves are the workload."""

    batch: int = setting(0, "Batch", "Batch size (0: the CNN workload's, or each layer spec's batch=, default 1)",
                         minimum=0, maximum=1_000_000, labels={"0": "from workload"})
    dataflows: list[str] = setting(
        list(BASELINES), "Baselines",
        "Baseline dataflows searched under the same memory and compared with the communication-optimal one: "
        + "; ".join(f"{k.upper()}: {b.title}" for k, b in BASELINES.items()),
        items={"enum": list(BASELINES)}, schema={"uniqueItems": True})
    objective: str = setting(
        "traffic", "Cost objective",
        "What the costed dataflow minimises on the accelerator, layer by layer, over the optimal dataflow's "
        "space: off-chip traffic (its ties to the least latency), energy, latency, or energy x latency",
        enum=list(OBJECTIVES), labels=dict(OBJECTIVES))
    sweep: bool = setting(True, "memory sweep",
                          "Also analyse the whole network at other on-chip memory sizes (traffic against memory)")
    fusion: bool = setting(True, "fusion plan",
                           "Also find the fusion plan: which chains of two or three consecutive layers to run fused "
                           "(intermediate maps kept on chip) for the least total traffic, with each chain's proven "
                           "lower bound")


# The settings' types and ranges, checked before a run and read by the GUI's binding for its widgets
# (labels, tooltips, ranges): made from BoundSettings.
SETTINGS_SCHEMA: dict[str, Any] = schema_of(BoundSettings)


def default_settings() -> dict[str, Any]:
    """Batch 0 means the CNN workload's (or each layer spec's batch=)."""
    return defaults_of(BoundSettings)


def _settings(request: JobRequest) -> BoundSettings:
    """The request's settings over the defaults, typed (InputError names the setting)."""
    return parse(BoundSettings, request.settings)


def workload_problem(workload: Any) -> str | None:
    """Why a CNN or layer list the kinds allow still cannot be analysed; None when it can."""
    if isinstance(workload, CnnNetwork):
        if workload.source == "builtin":
            return ("the built-in digits CNN has no layer table here: Communication bounds analyses zoo networks, "
                    "ONNX files and layer specs")
        if workload.source == "onnx" and file_problem(workload.onnx_path):
            return f"ONNX file {file_problem(workload.onnx_path)}: {workload.onnx_path}"
    if isinstance(workload, ConvLayers):
        for i, text in enumerate(workload.layers):
            try:
                parse_layer_spec(text, None, f"layer {i + 1}")
            except InputError as exc:
                return f"{exc.where}: {exc.message}"
    return None


def migrate_v1_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], Workload | None, Target | None]:
    """Format 1 picked the layers in the settings (source network / layer / onnx, or "workload": the
    window's CNN set's first network); they become a CNN or layer-list workload. "workload" implies
    none: the tab gets the fitting item the session has."""
    s = dict(settings)
    source, network = s.pop("source", "workload"), s.pop("network", "vgg16")
    layers, onnx = s.pop("layers", []), s.pop("onnx", "")
    workload: Workload | None = None
    if source == "network":
        workload = CnnNetwork(network)
        workload.validate("settings.network")
    elif source == "layer":
        workload = ConvLayers(list(layers))
        workload.validate("settings.layers")
    elif source == "onnx":
        workload = CnnNetwork(onnx_path=onnx)
    return {**default_settings(), **s}, workload, None


def migrate_v2_setup(settings: dict[str, Any], target: dict[str, Any] | None
                     ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Format 2 let the settings override the target's memory and word size (memory_bytes, word_bits;
    0 = the target's). They live only in the target now: a non-zero override becomes the target's
    value (of the default dataflow target when the setup had none)."""
    s = dict(settings)
    mem, bits = s.pop("memory_bytes", 0), s.pop("word_bits", 0)
    for key, v, unit in (("memory_bytes", mem, "bytes"), ("word_bits", bits, "bits")):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:      # was a typed setting: not dropped silently
            raise InputError(f"expected a whole number of {unit} (0: the target's), got {v!r}"[:200], f"settings.{key}")
    overrides = {k: v for k, v in (("memory_bytes", mem), ("word_bits", bits))
                 if isinstance(v, int) and not isinstance(v, bool) and v > 0}
    if not overrides:
        return s, target
    base = target if isinstance(target, dict) and target.get("kind") == "dataflow" else DataflowTarget().to_json()
    return s, {**base, **overrides}


def _machine(target: Any) -> Machine:
    t = target if isinstance(target, DataflowTarget) else DataflowTarget()
    if not 1 <= t.word_bits <= 64:
        raise InputError(f"word size must be 1..64 bits, got {t.word_bits}", "target.word_bits")
    m = Machine(t.memory_bytes, t.word_bits, t.pe_rows, t.pe_cols)
    if m.words < 1:
        raise InputError(f"{t.memory_bytes} bytes hold no {t.word_bits}-bit word", "target.memory_bytes")
    return m


def load_shapes(s: BoundSettings, workload: Any) -> tuple[dict[str, Any], list[ConvShape], list[str]]:
    """The workload's layers to analyse: (source description, conv shapes, pass-through layer names)."""
    batch = s.batch or (workload.batch if isinstance(workload, CnnNetwork) else 1)
    if isinstance(workload, ConvLayers):
        if not workload.layers:
            raise InputError("no layer given: add a spec like Ci=64,Hi=56,Wi=56,Co=128,Hk=3,Wk=3,stride=1,pad=1",
                             "workload.layers")
        shapes = [parse_layer_spec(t, batch if s.batch else None, f"workload.layers[{i}]")
                  for i, t in enumerate(workload.layers)]
        names = [sh.name for sh in shapes]
        if len(set(names)) != len(names):
            shapes = [ConvShape(**{**sh.__dict__, "name": f"{sh.name}{i + 1}"}) for i, sh in enumerate(shapes)]
        return {"kind": "layer", "name": "layer" if len(shapes) == 1 else f"{len(shapes)} layers"}, shapes, []
    if not isinstance(workload, CnnNetwork):
        kind = getattr(workload, "kind", None)
        raise InputError(f"Communication bounds analyses one CNN or a list of layer specs, got "
                         f"{'no workload' if kind is None else repr(kind)}", "workload")
    why = workload_problem(workload)
    if why:
        raise InputError(why, "workload")
    if workload.source == "onnx":
        net = _load_onnx(workload.onnx_path)
        desc = {"kind": "onnx", "name": net.name, "path": workload.onnx_path}
    else:
        from core.nets import zoo

        try:
            net = zoo.get(workload.network)
        except KeyError:
            raise InputError(f"unknown network {workload.network!r}; known: {', '.join(zoo.names())}",
                             "workload.network") from None
        desc = {"kind": "network", "name": net.name, "title": net.title}
    shapes, passthrough = [], []
    for i, layer in enumerate(net.layers):
        if isinstance(layer, Conv):
            shapes.append(from_conv(layer, batch).validate(f"{desc['name']} layer {i + 1}"))
        else:
            passthrough.append(layer.name)
    if not shapes:
        raise InputError(f"{desc['name']} has no convolution or fully connected layer", "settings")
    return desc, shapes, passthrough


def load_graph(workload: Any) -> dict[str, list[str]] | None:
    """Which layers each layer reads, for the fusion plan: the network's graph ({} when it has none:
    then nothing is fused), or None for a list of layer specs (consecutive layers whose shapes chain
    are taken as a chain)."""
    if isinstance(workload, ConvLayers):
        return None
    if workload.source == "onnx":
        return dict(_load_onnx(workload.onnx_path).inputs)
    from core.nets import zoo

    return dict(zoo.get(workload.network).inputs)


def _load_onnx(path: str) -> Any:
    try:
        from core.nets.onnx_import import load_onnx
    except ImportError:
        raise InputError("ONNX import is not available in this build (core.nets.onnx_import missing)",
                         "workload.onnx_path") from None
    try:
        return load_onnx(path)
    except (InputError, faults.MachineFault):   # includes UnsupportedOperators; no memory is the machine's
        raise
    except FileNotFoundError:
        raise InputError(f"no such file: {path}", "workload.onnx_path") from None
    except Exception as exc:   # a malformed protobuf or graph: report, never a traceback
        raise InputError(f"cannot read ONNX file {path}: {type(exc).__name__}: {exc}", "workload.onnx_path") from None


def run(request: JobRequest, cancel: CancelToken) -> Iterator[Event]:
    t0 = time.perf_counter()
    s = _settings(request)
    m = _machine(request.target)
    target = request.target if isinstance(request.target, DataflowTarget) else DataflowTarget()
    desc, shapes, passthrough = load_shapes(s, request.workload)
    dataflows = tuple(s.dataflows)
    check_fits(shapes, m.words, "target.memory_bytes")
    check_dram(shapes, target)
    yield LogLine(f"{desc['name']}: {len(shapes)} conv/fc layers, S = {m.words} words "
                  f"({m.memory_bytes} bytes of {m.word_bits}-bit words)")
    layers = []
    costed = []
    for i, shape in enumerate(shapes):
        cancel.check()
        yield Progress(i / len(shapes) * (0.5 if s.sweep else 1.0), f"layer {shape.name}")
        res = analyse_layer(shape, m, dataflows)
        layers.append(res)
        costed.append(cost_layer(res, target, s.objective))
        if res.optimal.ratio_reference is not None:         # None: a bound of 0 gives no ratio
            yield MetricPoint("optimal / reference", i, res.optimal.ratio_reference, "layers")
        for key in dataflows:
            b = res.baselines[key]
            if b is not None and b.ratio_reference is not None:
                yield MetricPoint(f"{key} / reference", i, b.ratio_reference, "layers")
    fusion = None
    if s.fusion:
        cancel.check()
        yield Progress(0.5 if s.sweep else 0.95, "fusion plan")
        fusion = plan_fusion(shapes, fusable_links(shapes, load_graph(request.workload)), m.words,
                             [l.optimal.traffic.total for l in layers])
    analysis_s = time.perf_counter() - t0
    sweep: list[SweepRow] = []
    if s.sweep:
        machines = sweep_machines(m, shapes)
        for j, mm in enumerate(machines):
            cancel.check()
            yield Progress(0.5 + 0.5 * j / len(machines), f"memory sweep {mm.memory_bytes // 1024} KiB")
            row = sweep_point(shapes, mm, dataflows, cancel.check)
            sweep.append(row)
            values: dict[str, float | None] = {"segment": row.segment, "paper": row.paper,
                                                "compulsory": row.compulsory, "reference": row.reference,
                                                "optimal": row.optimal, **row.per_dataflow}
            for key, value in values.items():
                if value is not None:
                    yield MetricPoint(key, mm.memory_bytes / 1024, value, "sweep")
    totals = network_totals(layers, dataflows)
    costing = costing_of(costed, target, s.objective)
    rec = costing.record.total
    yield LogLine(f"On the accelerator ({target.clock_mhz:g} MHz, {target.bandwidth_gbps:g} GB/s): "
                  f"{(rec.time_s.value or 0) * 1e3:.4g} ms (limit {(rec.time_s.limit or 0) * 1e3:.4g} ms), "
                  f"{(rec.energy_j.value or 0) * 1e3:.4g} mJ (limit {(rec.energy_j.limit or 0) * 1e3:.4g} mJ)")
    arch = size_architecture(m.memory_bytes, m.word_bits, m.pe_rows, m.pe_cols,
                             r_max=max(l.bound.R for l in layers))
    yield Progress(1.0, "done")
    yield FinalResult(BoundResult(
        engine="bound", source=Source(**desc), memory_bytes=m.memory_bytes, word_bits=m.word_bits,
        memory_words=m.words, pe_rows=m.pe_rows, pe_cols=m.pe_cols, batch=shapes[0].B,
        dataflows=list(dataflows),
        dataflow_titles={"optimal": "Communication-optimal", **{k: BASELINES[k].title for k in dataflows}},
        layers=layers, passthrough=passthrough, totals=totals, sweep=sweep,
        architecture=arch, paper_architecture=size_architecture(),
        timing_s=Timing(analysis=analysis_s, total=time.perf_counter() - t0), fusion=fusion, costing=costing))


# ---------------------------------------------------------------- command line
def add_cli_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--network", metavar="NAME", help="a zoo network (vgg16, alexnet, resnet18, ...)")
    src.add_argument("--onnx", metavar="FILE", help="an ONNX model (shapes inferred)")
    src.add_argument("--layer", metavar="SPEC", action="append",
                     help="one layer, e.g. Ci=64,Hi=56,Wi=56,Co=128,Hk=3,Wk=3,stride=1,pad=1,groups=1,batch=1 "
                          "(repeat for several)")
    p.add_argument("--memory", default=None, help="on-chip memory S (default 64KiB)")
    p.add_argument("--word-bits", type=int, default=None, help="bits per word (default 16)")
    p.add_argument("--dataflows", default="all",
                   help=f"baselines to compare: all, none, or a comma list of {','.join(BASELINES)}")
    p.add_argument("--batch", type=int, default=None,
                   help="batch size (default: the network's, 1, or batch= in a --layer spec)")
    p.add_argument("--pe", default=None, help="PE array rows x columns for on-chip traffic (default 16x16)")
    p.add_argument("--clock", default=None, metavar="MHZ",
                   help=f"PE array clock in MHz (default {DataflowTarget.clock_mhz:g}, docs/targets.md)")
    p.add_argument("--bandwidth", default=None, metavar="RATE",
                   help=f"off-chip bandwidth, e.g. 12.8GB/s (default {DataflowTarget.bandwidth_gbps:g} GB/s)")
    p.add_argument("--target-file", default=None, metavar="FILE",
                   help="a dataflow target as JSON (every field of docs/targets.md: energies, sizes, ...); "
                        "--memory, --word-bits, --pe, --clock and --bandwidth, where given, override it")
    p.add_argument("--objective", default="traffic", choices=list(OBJECTIVES),
                   help="what the costed dataflow minimises: " + ", ".join(f"{k} ({v})" for k, v in OBJECTIVES.items()))
    p.add_argument("--no-sweep", action="store_true", help="skip the traffic-vs-memory sweep")
    p.add_argument("--no-fusion", action="store_true", help="skip the fusion plan (fused chains of 2-3 layers)")


def request_from_cli(args: argparse.Namespace) -> JobRequest:
    base = _target_file(args.target_file) if getattr(args, "target_file", None) else DataflowTarget()
    given = {f"--{k}" for k in ("memory", "word-bits", "pe") if getattr(args, k.replace("-", "_")) is not None}
    mem = parse_bytes(args.memory or "64KiB", "--memory",
                      DataflowTarget.SCHEMA["properties"]["memory_bytes"]["maximum"])
    args.word_bits = 16 if args.word_bits is None else args.word_bits
    if not 1 <= args.word_bits <= 64:
        raise InputError(f"must be 1..64, got {args.word_bits}", "--word-bits")
    hardware = _clock_bandwidth(args)
    max_batch = int(declarations(BoundSettings)["batch"].maximum or 0)
    if args.batch is not None and not 1 <= args.batch <= max_batch:     # 0 is the settings' "from workload"
        raise InputError(f"must be 1..{max_batch}, got {args.batch}", "--batch")
    text = args.dataflows.strip().lower()
    if text == "all":
        flows = list(BASELINES)
    elif text in ("none", ""):
        flows = []
    else:
        flows = [f.strip() for f in text.split(",") if f.strip()]
        bad = [f for f in flows if f not in BASELINES]
        if bad:
            raise InputError(f"unknown dataflow(s) {', '.join(bad)}; known: all, none, {', '.join(BASELINES)}",
                             "--dataflows")
    args.pe = args.pe or "16x16"
    m = re.fullmatch(r"\s*(\d{1,9})\s*[xX]\s*(\d{1,9})\s*", args.pe)
    if not m:
        raise InputError(f"expected ROWSxCOLS like 16x16, got {args.pe[:40]!r}", "--pe")
    rows, cols = int(m.group(1)), int(m.group(2))
    pe_max = DataflowTarget.SCHEMA["properties"]["pe_rows"]["maximum"]
    if not (1 <= rows <= pe_max and 1 <= cols <= pe_max):
        raise InputError(f"PE array sides must be 1..{pe_max}, got {args.pe!r}", "--pe")
    settings = default_settings()
    settings.update(batch=args.batch or 0, dataflows=flows, sweep=not args.no_sweep,
                    objective=getattr(args, "objective", "traffic"),
                    fusion=not getattr(args, "no_fusion", False))
    workload: CnnNetwork | ConvLayers
    if args.network:
        workload = CnnNetwork(args.network)
    elif args.onnx:
        workload = CnnNetwork(onnx_path=args.onnx)
    else:
        workload = ConvLayers(list(args.layer))
    sizes: dict[str, dict[str, Any]] = {"--memory": {"memory_bytes": mem}, "--word-bits": {"word_bits": args.word_bits},
                                        "--pe": {"pe_rows": rows, "pe_cols": cols}}
    chosen: dict[str, Any] = {k: v for flag, kv in sizes.items() if flag in given or not args.target_file
                              for k, v in kv.items()}
    chosen.update(hardware)
    target = dataclasses.replace(base, **chosen)
    request = JobRequest(workload=workload, target=target, settings=settings)
    # Read the layers now so bad specs (and a memory too small for them) fail before the run starts
    # (exit 2 with a clear message naming the flag).
    s = _settings(request)
    shapes: list[ConvShape] = []
    if isinstance(workload, ConvLayers):
        for text in workload.layers:
            shapes.append(parse_layer_spec(text, args.batch, f"--layer {text if len(text) <= 60 else text[:57] + '...'!r}"))
    elif workload.source == "zoo":
        shapes = load_shapes(s, workload)[1]
    flags = {"target.memory_bytes": "--memory", "target.word_bits": "--word-bits"}
    try:
        check_fits(shapes, _machine(target).words, "target.memory_bytes")
    except InputError as exc:
        raise InputError(exc.message, flags.get(exc.where, exc.where)) from None
    return request


def _target_file(path: str) -> DataflowTarget:
    """A dataflow target read from a JSON file (InputError names the flag, and the field)."""
    import json

    from core.files import read_bytes

    try:
        doc = json.loads(read_bytes(path, "--target-file"))
    except InputError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not JSON: {exc}"[:200], "--target-file") from None
    if isinstance(doc, dict) and "kind" not in doc:
        doc = {"kind": "dataflow", **doc}
    target = target_from_json(doc, "--target-file")
    if not isinstance(target, DataflowTarget):
        raise InputError(f"expected a dataflow target, got kind {target.kind!r}", "--target-file.kind")
    return target


def _clock_bandwidth(args: argparse.Namespace) -> dict[str, float]:
    """--clock (MHz) and --bandwidth (a rate), where given, checked against the target's schema."""
    out: dict[str, float] = {}
    props = DataflowTarget.SCHEMA["properties"]
    if getattr(args, "clock", None) is not None:
        text = str(args.clock).strip()
        try:
            mhz = float(text.removesuffix("MHz").removesuffix("mhz").strip())
        except ValueError:
            raise InputError(f"cannot read {text[:40]!r} as a clock in MHz (e.g. 200)", "--clock") from None
        if not 0 < mhz <= props["clock_mhz"]["maximum"]:
            raise InputError(f"must be above 0 and at most {props['clock_mhz']['maximum']:g} MHz, got {text[:40]}",
                             "--clock")
        out["clock_mhz"] = mhz
    if getattr(args, "bandwidth", None) is not None:
        out["bandwidth_gbps"] = parse_bandwidth(args.bandwidth, "--bandwidth", props["bandwidth_gbps"]["maximum"])
    return out


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v / 1e6:.3f}M" if abs(v) >= 1e5 else f"{v:.0f}"


def _tiling(t: Tiling) -> str:
    """b,z,y,x,k, with +W or +I when the weights or the inputs are held for the whole layer, the loop
    order when it is not the paper's N P Q M C, ~ when input tiles slide, and =P or =Q when they
    stream through by output rows or columns."""
    return (f"{t.b},{t.z},{t.y},{t.x},{t.k}" + (f"+{t.hold}" if t.hold else "")
            + (f" {t.order}" if t.order != "NPQMC" else "") + ("~" if t.slide else "")
            + (f"={t.stream}" if t.stream else ""))


# How a layer's gap to the bound shows in the table (core.bound.result.Gap)
_GAP = {"attained": "-", "output writes": "w", "open": "?"}


def _num(v: float | None) -> str:
    return "     -" if v is None else f"{v:6.3f}"


def format_text(result: EngineResult) -> str:
    assert isinstance(result, BoundResult)
    r = result
    flows = r.dataflows
    lines = [f"Communication bounds: {r.source.name}, S = {r.memory_words} words "
             f"({r.memory_bytes} B, {r.word_bits}-bit), batch {r.batch}", ""]
    head = (f"{'layer':10s} {'R':>3s} {'proven':>10s} {'paper':>9s} {'optimal':>9s} {'ratio':>6s} {'/paper':>6s}  "
            f"{'gap':>3s}  {'tiling b,z,y,x,k':24s}")
    head += "".join(f" {k:>9s}" for k in flows)
    lines += [head, "-" * len(head)]
    for l in r.layers:
        t, b = l.optimal.tiling, l.bound
        which = {"cut": "x", "compulsory": "c", "phase": "p", "segment": "s"}[b.binding()]
        row = (f"{l.name[:10]:10s} {b.R:3d} {_fmt(b.reference):>9s}{which} {_fmt(b.paper.total):>9s} "
               f"{_fmt(l.optimal.traffic.total):>9s} {_num(l.optimal.ratio_reference)} "
               f"{_num(l.optimal.ratio_paper)} {_GAP.get(l.gap.source if l.gap else '', ' ')!s:>3s}  "
               + _tiling(t).ljust(24))
        for k in flows:
            bl = l.baselines[k]
            row += f" {_fmt(None if bl is None else bl.traffic.total):>9s}"
        lines.append(row)
    tot = r.totals
    lines.append("-" * len(head))
    row = (f"{'total':10s} {'':3s} {_fmt(tot.reference):>9s}  {_fmt(tot.paper):>9s} {_fmt(tot.optimal):>9s} "
           f"{_num(tot.ratio_reference)} {_num(tot.ratio_paper)}").ljust(len(head) - 10 * len(flows))
    lines.append(row + "".join(f" {_fmt(tot.per_dataflow[k]):>9s}" for k in flows))
    lines += ["", "Traffic in words (M = 10^6). proven = the lower bound no schedule can beat: the largest of the "
              "segment bound (s; p: from the stride phases), the compulsory traffic (c) and the cut bound (x: "
              "compulsory plus the words used again after a cut of the MACs into equal runs, beyond S at each cut), see "
              "docs/bound.md; paper = 2*MACs/sqrt(R*S) + "
              "output writes (asymptotic, not a bound); ratio = optimal / proven, /paper = optimal / paper; +W / +I: the "
              "weights / inputs held on chip for the whole layer; ORDER: the loop order (outermost first) when "
              "not N P Q M C; ~: input tiles slide (keep the rows or columns the previous tile shares); =P / =Q: "
              "input tiles stream through by output rows / columns (only the live ones on chip); gap: - "
              "none (bound attained), w no larger than the output writes (which the proof cannot add), ? open.",
              f"Worst layer ratio to the proven bound: {_num(tot.worst_ratio_reference).strip()}; gap: "
              + ", ".join(f"{sum(1 for l in r.layers if l.gap and l.gap.source == k)} {k}" for k in _GAP),
              f"Optimal dataflow GBuf reads (on chip, {r.pe_rows}x{r.pe_cols} PEs): {_fmt(tot.gbuf_reads)}"]
    a = r.paper_architecture
    lines.append(f"Paper's sizing example: {a.pe_rows}x{a.pe_cols} PEs, {a.psum_entries} psum entries "
                 f"({a.psums_per_pe}/PE), WGBuf {a.wgbuf}, IGBuf {a.igbuf}, GReg {a.greg_input_entries}")
    if r.passthrough:
        lines.append(f"Pass-through (no off-chip model): {', '.join(r.passthrough)}")
    if r.fusion is not None:
        lines += ["", "Fused chains (intermediates on chip; traffic, then layer by layer, the chain's proven "
                      "bound and its schedule: p rows x q columns of the last output per step, weights H held "
                      "or s streamed):"] + plan_text(r.fusion)
    if r.costing is not None:
        lines += ["", *cost_text(r.costing)]
    sweep = f", {r.timing_s.total:.2f} s with the memory sweep" if r.sweep else ""
    lines.append(f"Time: {r.timing_s.analysis:.2f} s analysis{sweep}")
    return "\n".join(lines)


ENGINE = EngineSpec(
    name="bound",
    title="Communication bounds",
    summary="Proven lower bound of off-chip traffic for each CNN layer with S words on chip (a red-blue pebble "
            "segment bound with the exact window reuse R or, for strided layers, its stride phases, the "
            "compulsory traffic, and a cut bound: the compulsory traffic plus the words that must come back when the "
            "MACs are cut into equal runs; the paper's asymptotic "
            "2*MACs/sqrt(R*S) beside it, Chen et al. HPCA 2020), the dataflow with the least traffic over a "
            "stated space (the paper's output-stationary tiling and every loop order, input tiles sliding with "
            "their halo or streaming through by rows, tensors held) with its exact "
            "integer tiling, and weight-, input-, output- and row-stationary baselines searched under the "
            "same memory, plus the PE-array GBuf/register traffic.",
    run=run,
    default_settings=default_settings,
    add_cli_arguments=add_cli_arguments,
    request_from_cli=request_from_cli,
    format_text=format_text,
    workload_kinds=("cnn", "conv_layers"),
    target_kinds=("dataflow",),
    settings_schema=SETTINGS_SCHEMA,
    order=60,
    result_type=BoundResult,
    workload_problem=workload_problem,
    migrate_v1_settings=migrate_v1_settings, migrate_v2_setup=migrate_v2_setup,
)
