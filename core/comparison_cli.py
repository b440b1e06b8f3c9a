"""`main.py targets --network NAME|FILE.onnx | --layer SPEC [--layer SPEC ...] [--targets KIND,...]
[--target-file F ...] [--measure] [--json]`: one network (or conv-layer specs, core.layer_source) on
many targets (core.comparison), one row per target.

Each target is a part: a "cost" run through a run controller of the command's own
(core.comparison_run.compare), each on a thread of this process (a timing is taken at the command's
priority, not a worker process's lower one), modelled parts side by side and a measured one alone. Same conventions as the engine subcommands: progress on stderr, the table (or with `--json` one JSON
object) on stdout, a bad input one line and exit 2; a part whose costing failed is a row saying so,
and the exit is then 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.comparison import METRICS, Budgets, Comparison, ComparisonRow, Metric, TargetItem, counted, workload_words
from core.errors import InputError
from core.layer_source import is_layers_source
from core.numbers import format_number

EXIT_BAD_INPUT = 2


def add_parser(sub: Any) -> None:
    p = sub.add_parser("targets", help="one network on many targets, each against its limits",
                       description="Cost one network (a zoo name or an ONNX file) or conv-layer specs on a set of targets, each by the "
                                   "engine that costs its kind, and print one row per target: latency, throughput, "
                                   "energy and off-chip traffic, each with its limit on that target and the "
                                   "percentage of the limit reached (docs/targets.md, \"Comparing targets\").")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--network", metavar="NAME|FILE.onnx", help="a zoo network or an ONNX file")
    what.add_argument("--layer", action="append", metavar="SPEC",
                      help="a convolution layer instead of a network, e.g. Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1 "
                           "(keys: Ci Hi Wi Co Hk Wk kernel stride pad groups dilation name); repeat for several: "
                           "each is costed on its own (their shapes need not chain)")
    p.add_argument("--targets", metavar="KIND,...",
                   help="target kinds, each at its defaults (default: one of every kind): "
                        "dataflow, mobile_soc, fpga, cpu, gpu, scamp5")
    p.add_argument("--target-file", action="append", default=[], metavar="F.json",
                   help="a target as JSON (its \"kind\" and any of its fields); may be repeated")
    p.add_argument("--measure", action="store_true",
                   help="time MERIT's generated C on this machine for the CPU target that is this machine "
                        "(about 3 s a layer, run alone); default: modelled by its roofline")
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return code


def read_target_file(path: str) -> TargetItem:
    """A target from a JSON file, named by the file; InputError in words for anything unreadable."""
    from core.workload import target_from_json

    where = f"--target-file {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no such file: {path}", where) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", where) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", where) from None
    try:
        return TargetItem(Path(path).stem, target_from_json(data, "target"))
    except InputError as exc:
        raise InputError(f"{exc.where}: {exc.message}" if exc.where else exc.message, where) from None


def targets_from_args(args: argparse.Namespace) -> list[TargetItem] | None:
    """The targets the arguments name (None: the default, one of every kind)."""
    from core.comparison import targets_of_kinds

    items: list[TargetItem] = []
    if args.targets is not None:
        names = [n.strip() for n in args.targets.split(",") if n.strip()]
        if not names:
            raise InputError("no target kind given", "--targets")
        try:
            items += targets_of_kinds(names)
        except InputError as exc:
            raise InputError(exc.message, "--targets") from None
    items += [read_target_file(f) for f in args.target_file]
    return items if (args.targets is not None or args.target_file) else None


def run_command(args: argparse.Namespace) -> int:
    from core.comparison import network_macs
    from core.comparison_run import compare
    from core.run_controller import thread_launcher

    try:
        targets = targets_from_args(args)
    except InputError as exc:
        return _fail(f"{exc.where}: {exc.message}" if exc.where else exc.message)
    try:
        if args.layer:
            from core.layer_source import layers_source

            source = layers_source(args.layer, "--layer")
            network_macs(source, "--layer")
        else:
            source = args.network
            network_macs(source)
    except InputError as exc:
        return _fail(f"{exc.where}: {exc.message}" if args.layer else f"--network: {exc.message}")

    def progress(row: ComparisonRow) -> None:
        if not args.quiet:
            what = "failed" if row.failed else "refused" if row.reason else "costed"
            print(f"{what}: {row.target}, by {row.engine or 'no engine'}, in {row.seconds:.1f} s", file=sys.stderr)

    try:
        # each part a run of a controller of its own, on a thread of this process: at the command's
        # priority (a worker process runs lower, and a timing would be taken there) and without a
        # process start per part (ResNet-18's six parts: 11 s on threads, 22 s in worker processes,
        # on this 2-core machine under other work)
        c = compare(source, targets, Budgets(measure=args.measure), on_row=progress, launcher=thread_launcher)
    except InputError as exc:
        return _fail(f"{exc.where}: {exc.message}" if exc.where else exc.message)
    print(json.dumps(c.to_json()) if args.json else format_table(c))
    return 1 if any(r.failed for r in c.rows) else 0


# ---------------------------------------------------------------- the table
UNITS = {"latency_s": "s", "throughput_per_s": "/s", "energy_j": "J", "offchip_bytes": "B"}
HEADS = {"latency_s": "latency", "throughput_per_s": "throughput (images/s)", "energy_j": "energy",
         "offchip_bytes": "off-chip"}
# a cell's unit: the throughput's (inferences of one image a second) is in its heading, so its cells
# hold the numbers alone ("23.1 (28.17, 82%)"), never a bare "/s"
CELL_UNITS = {**UNITS, "throughput_per_s": ""}
SHORT = {"latency_s": "latency", "throughput_per_s": "throughput", "energy_j": "energy", "offchip_bytes": "off-chip"}


def _pct(p: float | None) -> str:
    if p is None:
        return "-"
    return f"{p:.0f}%" if p >= 9.5 else f"{p:.2g}%"


def cell(m: Metric | None, key: str, best: bool) -> str:
    if m is None or m.value is None:
        return "-" if m is None else "no model"
    text = format_number(m.value, CELL_UNITS[key])
    if m.limit is not None:
        text += f" ({format_number(m.limit, CELL_UNITS[key])}, {_pct(m.pct_of_limit)})"
    return text + (" *" if best else "")


def how_words(r: ComparisonRow) -> str:
    if r.reason is not None:
        return "failed" if r.failed else "-"
    by: dict[str, list[str]] = {}
    for key, m in r.metrics().items():
        if m.value is not None:
            by.setdefault(m.how, []).append(SHORT[key])
    if len(by) <= 1:
        return next(iter(by), "-")
    return "; ".join(f"{how}: {', '.join(keys)}" for how, keys in sorted(by.items()))


def format_table(c: Comparison) -> str:
    mode = ("the CPU that is this machine measured here (--measure)" if c.budgets.measure
            else "every CPU modelled by its roofline (--measure times this machine's)")
    # conv-layer specs: their count and names said in words (the specs themselves are the command's)
    what = workload_words(c) if is_layers_source(c.source) else \
        f"{c.network} ({c.source}): {c.layers} conv/fc layers, {format_number(c.macs, 'MACs')}"
    lines = [f"{what}; {mode}",
             "each figure: value (limit on that target, % of the limit reached: limit / value; "
             "throughput: value / limit); * best among the targets that run every layer; off-chip bytes at "
             "each target's word size", ""]
    head = ["target", "engine", *[HEADS[k] for k in METRICS], "how", "MACs run"]
    table = [head]
    for r in c.rows:
        ms = r.metrics()
        if r.reason is not None:
            # a failed part's share is not known; a target that cannot run the network runs 0% of it
            table.append([r.target, r.engine or "-", *["-"] * len(METRICS), how_words(r),
                          "-" if r.failed or r.deleted else "0%"])
            continue
        table.append([r.target, r.engine, *[cell(ms.get(k), k, k in r.best) for k in METRICS], how_words(r),
                      f"{100 * r.covered_macs / c.macs:.4g}%" if c.macs else "-"])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        lines.append("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    notes = []
    for r in c.rows:
        if r.reason is not None:
            notes.append(f"{r.target}: {r.reason}")
            continue
        skipped = [l for l in (r.record.layers if r.record else []) if l.reason is not None]
        if skipped:
            notes.append(f"{r.target}: {counted(len(skipped), 'layer')} not run ({skipped[0].name}: "
                         f"{skipped[0].reason})")
        notes.append(f"{r.target}: {r.note}")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)
