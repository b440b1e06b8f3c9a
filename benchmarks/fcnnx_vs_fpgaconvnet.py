"""f-CNNx's resource and performance model against fpgaConvNet's (issue 19, item 2).

fpgaConvNet's model (PyPI `fpgaconvnet-model`, with samo's rule-based optimiser) is a peer, never
a project dependency: it runs in its own Python (a scratch venv, `--fpgaconvnet-python` or
$FPGACONVNET_PYTHON) through a small driver this script writes to a temporary folder. Without it
the script says so and prints our side only.

For LeNet-5, CIFAR-10 quick, SceneLabelCNN and ZFNet on the ZC706 (feature extractors, Q8.16-bit
words, 150 MHz, no ReLU layers: fpgaConvNet's cost a few dozen LUTs each):
* matched folding: one engine holding the whole feature extractor, each conv stage with
  N_PE = coarse_out and N_op = fine (coarse_in = 1, which our engine does not have), each pool
  stage with N_PE = coarse; per layer and per network LUT, FF, DSP, BRAM18 and fps (clock over
  the slowest layer's cycles), and whether ours is within 25 % of fpgaConvNet's per network;
* time per block (a conv and its pooling; issue 50 item 4): each block of the matched designs as a
  design of its own, its row of our cost record (core.fcnnx.cost) beside samo's Partition.eval_latency
  of the same fpgaConvNet layers at the same folding (and that plus fpgaConvNet's pipeline_depth()), the
  difference split into named terms (fill, traffic, padded walk) and a residual; a block is explained
  when it is within 25 % or the residual is within 2 % (docs/targets.md, "FPGA board");
* each tool's optimum: ours the fastest point of the f-CNNx DSE (any partition, weights on chip
  or streamed), fpgaConvNet samo's rule-based optimiser on one partition (all weights on chip;
  fpgaconvnet-model 0.1.4 cannot stream weights, so a CNN whose weights exceed the BRAM has no
  fpgaConvNet design).

Run: .venv/bin/python benchmarks/fcnnx_vs_fpgaconvnet.py [--json]
         [--fpgaconvnet-python /work/scratch/fpgaconvnet/venv/bin/python] [--bandwidth 4.2]
(the peer: fpgaconvnet-model 0.1.4.2 and samo 0.2.4, installed --no-deps; docs/fcnnx.md)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.boards import BOARDS, Board, board_resources  # noqa: E402
from core.fcnnx.cost import design_cost  # noqa: E402
from core.fcnnx.dse import DesignPoint, explore_cnn, pareto  # noqa: E402
from core.fcnnx.model import (LUT_ENGINE, EngineDesign, alone_time, build_subgraphs,  # noqa: E402
                              engine_resources, feature_blocks, stage_resources, subgraph_cycles, subgraph_loads)
from core.nets import zoo  # noqa: E402
from sims.fcnnx_des import planning_efficiency  # noqa: E402

NETS = ["lenet5", "cifar10_quick", "scenelabel", "zfnet"]
TOLERANCE = 0.25
RESIDUAL = 0.02         # a time difference is explained when what the named terms leave is within 2 %
PEERS = ("/work/scratch/fpgaconvnet/venv/bin/python", "/tmp/scratch/fpgaconvnet-venv/bin/python")
DEFAULT_PEER = next((p for p in PEERS if Path(p).exists()), PEERS[0])
KEYS = (("luts", "LUT"), ("ffs", "FF"), ("dsps", "DSP"), ("bram18k", "BRAM"))

DRIVER = r'''"""Runs fpgaConvNet's layer models (and samo's rule-based optimiser) on layer specs from JSON."""
import importlib.util, json, sys, types

if importlib.util.find_spec("torch") is None:          # torch is used only by the functional models
    sys.modules["torch"] = types.ModuleType("torch")

from fpgaconvnet.models.layers.hls.ConvolutionLayer import ConvolutionLayer
from fpgaconvnet.models.layers import PoolingLayer


def make(spec):
    f = spec.get("folding", {})
    if spec["type"] == "conv":
        layer = ConvolutionLayer(spec["filters"], spec["rows"], spec["cols"], spec["channels"],
                                 coarse_in=f.get("coarse_in", 1), coarse_out=f.get("coarse_out", 1),
                                 kernel_size=spec["k"], stride=spec["stride"], groups=spec["groups"],
                                 pad=list(spec["pad"]), fine=f.get("fine", 1))
    else:
        layer = PoolingLayer(spec["rows"], spec["cols"], spec["channels"], coarse=f.get("coarse", 1),
                             kernel_size=spec["k"], stride=spec["stride"], pad=list(spec["pad"]))
    return layer


def conv_breakdown(layer):
    m = layer.modules
    ci, co, cg = layer.coarse_in, layer.coarse_out, layer.coarse_group
    out = {"sliding_window": m["sliding_window"].rsc(), "conv": m["conv"].rsc(), "accum": m["accum"].rsc(),
           "bias": m["bias"].rsc(), "fork": m["fork"].rsc()}
    return {k: {r: int(v) for r, v in d.items()} for k, d in out.items()} | {"multiplicity": [ci, co, cg]}


def report(name, layer, spec):
    r = {k: int(v) for k, v in layer.resource().items()}
    d = {"name": name, "type": spec["type"], "resources": r, "latency_cycles": float(layer.latency()),
         "pipeline_depth_cycles": float(layer.pipeline_depth()),
         "rows_out": int(layer.rows_out()), "cols_out": int(layer.cols_out())}
    if spec["type"] == "conv":
        d["folding"] = {"coarse_in": layer.coarse_in, "coarse_out": layer.coarse_out, "fine": layer.fine}
        d["modules"] = conv_breakdown(layer)
    else:
        d["folding"] = {"coarse": layer.coarse_in}
    return d


def block_latencies(net, clock_mhz):
    """samo's latency (Partition.eval_latency) of each block's layers, folded as given, as one partition."""
    from samo.model import Partition
    from samo.backend.fpgaconvnet.node import FPGAConvNetWrapper
    specs = {s["name"]: s for s in net["layers"]}
    out = []
    for names in net["blocks"]:
        part = Partition()
        part.freq = clock_mhz
        for i, n in enumerate(names):
            part.add_node(n, hw=FPGAConvNetWrapper(make(specs[n]), batch_size=1))
            if i:
                part.add_edge(names[i - 1], n)
        out.append({"layers": names, "latency_cycles": float(part.eval_latency())})
    return out


def samo_optimum(net, platform, clock_mhz):
    from samo.model import Network, Partition
    from samo.backend.fpgaconvnet.node import FPGAConvNetWrapper
    from samo.optimiser.rule import RuleBased
    ref = Partition()
    ref.platform = platform
    ref.freq = clock_mhz
    prev = None
    for spec in net["layers"]:
        ref.add_node(spec["name"], hw=FPGAConvNetWrapper(make(dict(spec, folding={})), batch_size=1))
        if prev is not None:
            ref.add_edge(prev, spec["name"])
        prev = spec["name"]
    network = Network(ref)
    network.batch_size = 1
    network.enable_reconf = False
    network.objective = "throughput"
    for p in network.partitions:
        p.reset()
    if not network.check_constraints():
        return {"feasible": False, "why": "the design with every folding factor 1 does not fit the device"}
    opt = RuleBased(network)
    opt.optimise()
    part = opt.network.partitions[0]
    layers = [report(n, part.nodes[n]["hw"].layer, s) for n, s in zip(part.nodes, net["layers"])]
    tot = part.eval_resource()
    lat = part.eval_latency()
    return {"feasible": True, "layers": layers, "resources": {k: int(v) for k, v in tot.items()},
            "latency_cycles": float(lat), "fps": clock_mhz * 1e6 / lat}


def main():
    req = json.load(open(sys.argv[1]))
    out = []
    for net in req["nets"]:
        res = {"name": net["name"], "matched": None, "optimum": None}
        if net.get("matched"):
            layers = [report(s["name"], make(s), s) for s in net["layers"]]
            tot = {k: sum(l["resources"][k] for l in layers) for k in ("LUT", "FF", "DSP", "BRAM")}
            lat = max(l["latency_cycles"] for l in layers)
            res["matched"] = {"layers": layers, "resources": tot, "latency_cycles": lat,
                              "fps": req["clock_mhz"] * 1e6 / lat}
            if net.get("blocks"):
                res["matched"]["blocks"] = block_latencies(net, req["clock_mhz"])
        if net.get("optimise"):
            res["optimum"] = samo_optimum(net, req["platform"], req["clock_mhz"])
        out.append(res)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
'''


def _fine(k2: int, k: int, n_op: int) -> int:
    """fpgaConvNet's fine is 1, K or K^2: the largest of them that is at most n_op."""
    return max(f for f in (1, k, k2) if f <= n_op)


def matched_design(name: str, level: str) -> EngineDesign:
    """The whole feature extractor in one subgraph; `unit`: every stage <1, 1>; `parallel`: conv
    stages <largest divisor of N_out up to 8, K^2>, pool stages with the conv's N_PE."""
    blocks = feature_blocks(zoo.get(name))
    d = EngineDesign(name, [list(range(len(blocks)))], None, build_subgraphs(blocks, [list(range(len(blocks)))], None))
    d.init_stages()
    for k, b in enumerate(blocks):
        c = b.conv
        pe = 1 if level == "unit" else max(p for p in range(1, 9) if c.out_ch % p == 0)
        op = 1 if level == "unit" else c.k_h * c.k_w
        d.stages[2 * k].n_pe, d.stages[2 * k].n_op = pe, op
        d.stages[2 * k + 1].n_pe, d.stages[2 * k + 1].n_op = pe, (b.pools[0].k ** 2 if b.pools else 1)
    return d


def layer_specs(d: EngineDesign, with_folding: bool) -> list[dict[str, Any]]:
    """The layers of a one-subgraph design as fpgaConvNet layer specs (same shapes and folding)."""
    blocks = feature_blocks(zoo.get(d.cnn))
    specs: list[dict[str, Any]] = []
    for k, b in enumerate(blocks):
        c, sc = b.conv, d.stages[2 * k]
        spec = {"type": "conv", "name": c.name, "rows": c.in_h, "cols": c.in_w, "channels": c.in_ch,
                "filters": c.out_ch, "k": c.k_h, "stride": c.stride, "pad": [c.pad] * 4, "groups": c.groups}
        if with_folding:
            spec["folding"] = {"coarse_in": 1, "coarse_out": sc.n_pe, "fine": _fine(c.k_h * c.k_w, c.k_h, sc.n_op)}
        specs.append(spec)
        for p in b.pools:
            extra = (p.out_h - 1) * p.stride + p.k - p.in_h - p.pad       # bottom/right padding that gives our size
            spec = {"type": "pool", "name": p.name, "rows": p.in_h, "cols": p.in_w, "channels": p.ch, "k": p.k,
                    "stride": p.stride, "pad": [p.pad, max(extra, 0), max(extra, 0), p.pad]}
            if with_folding:
                spec["folding"] = {"coarse": d.stages[2 * k + 1].n_pe}
            specs.append(spec)
    return specs


def ours_per_layer(d: EngineDesign, clock_hz: float) -> dict[str, Any]:
    layers = []
    for sc, tasks in zip(d.stages, d.stage_tasks()):
        for t in tasks:
            r = stage_resources(sc.kind, [t], sc.n_pe, sc.n_op, sc.weights)
            layers.append({"name": t.name, "type": sc.kind, "n_pe": sc.n_pe, "n_op": sc.n_op,
                           "resources": r, "ii_cycles": t.ii(sc.n_pe, sc.n_op)})
    ii, _ = subgraph_cycles(d, 0)
    total = engine_resources(d)
    stages = {k: sum(layer["resources"][k] for layer in layers) for k, _ in KEYS}
    return {"layers": layers, "resources": total, "stage_resources": stages, "ii_cycles": ii, "fps": clock_hz / ii}


def block_costs(d: EngineDesign, board: Board, bandwidth_bps: float) -> list[dict[str, Any]]:
    """Our cost record per block (a conv and the pooling after it): each block of the matched design
    as a design of its own with the same folding (one subgraph, so one row of core.fcnnx.cost's record,
    its time as the f-CNNx engine reports it), with the terms of that time in cycles."""
    blocks = feature_blocks(zoo.get(d.cnn))
    clock = board.clock_mhz * 1e6
    planning = bandwidth_bps * planning_efficiency()
    out = []
    for k in range(len(blocks)):
        one = EngineDesign(d.cnn, [[k]], None, build_subgraphs(blocks, [[k]], None),
                           [replace(d.stages[2 * k], position=0), replace(d.stages[2 * k + 1], position=0)])
        loads = subgraph_loads(one, clock, planning)
        point = DesignPoint(d.cnn, one, engine_resources(one), 0.0, loads, alone_time(loads, planning), 1,
                            one.subgraphs[0].ops)
        (row,) = design_cost(point, board, planning, bandwidth_bps).layers
        ii_max, depth = subgraph_cycles(one, 0)
        layers = [{"name": t.name, "ii_cycles": t.ii(sc.n_pe, sc.n_op)}
                  for sc, tasks in zip(one.stages, one.stage_tasks()) for t in tasks]
        out.append({"block": row.name, "layers": layers, "time_s": row.time_s.value, "ii_max_cycles": ii_max,
                    "depth_cycles": depth, "traffic_s": loads[0].traffic_bytes / planning})
    return out


def padded_area_ratio(spec: dict[str, Any]) -> float:
    """The positions fpgaConvNet's sliding window walks (the padded input) over those of the input."""
    top, right, bottom, left = spec["pad"]
    return (spec["rows"] + top + bottom) * (spec["cols"] + left + right) / (spec["rows"] * spec["cols"])


def time_terms(ours: dict[str, Any], theirs: dict[str, Any], specs: dict[str, dict[str, Any]],
               clock_hz: float) -> dict[str, Any]:
    """Our block time against fpgaConvNet's (samo's partition latency of the block's layers), and the
    difference as a product of named terms: (1 + diff) = (1 + fill)(1 + traffic)(1 + padded walk)(1 + residual).
    * fill: our pipeline depth D over II_max (line-buffer fill of each stage, core.fcnnx.model.subgraph_cycles;
      samo's latency at batch 1 is the slowest layer's interval alone);
    * traffic: where the block's off-chip traffic at the planning bandwidth is longer than D (our record's
      time is then the traffic's; fpgaConvNet's layer latency has no off-chip term);
    * padded walk: our II_max over the slowest of our layers' intervals scaled by fpgaConvNet's padded
      input positions (its sliding window walks the padded input; ours counts output positions);
    * residual: what is left, our padded-walk interval against fpgaConvNet's latency."""
    ours_s = ours["time_s"]
    theirs_s = theirs["latency_cycles"] / clock_hz
    ii, depth = ours["ii_max_cycles"], ours["depth_cycles"]
    padded = max(layer["ii_cycles"] * padded_area_ratio(specs[layer["name"]]) for layer in ours["layers"])
    terms = {"fill": depth / ii - 1, "traffic": ours_s / (depth / clock_hz) - 1, "padded walk": ii / padded - 1,
             "residual": padded / theirs["latency_cycles"] - 1}
    d = diff(ours_s, theirs_s)
    explained = abs(d) <= TOLERANCE or abs(terms["residual"]) <= RESIDUAL
    named = [f"{k} {100 * v:+.1f}%" for k, v in terms.items() if abs(v) >= 0.005 and k != "residual"]
    return {"block": ours["block"], "ours_s": ours_s, "fpgaconvnet_s": theirs_s, "diff": d, "terms": terms,
            "within": abs(d) <= TOLERANCE, "explained": explained,
            "why": "; ".join(named) or "-", "residual": terms["residual"]}


def run_peer(python: str, request: dict[str, Any]) -> tuple[list[dict[str, Any]] | None, str]:
    if not python or not Path(python).exists():
        return None, f"fpgaConvNet's model is absent (no Python at {python or '(none given)'})"
    with tempfile.TemporaryDirectory() as tmp:
        drv, req = Path(tmp) / "fpgaconvnet_driver.py", Path(tmp) / "request.json"
        drv.write_text(DRIVER)
        req.write_text(json.dumps(request))
        env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python")
        try:
            out = subprocess.run([python, str(drv), str(req)], capture_output=True, text=True, env=env,
                                 timeout=600, cwd=tmp)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"fpgaConvNet's model did not run: {exc}"
        if out.returncode != 0:
            tail = out.stderr.strip().splitlines()[-1:] or ["(no message)"]
            return None, f"fpgaConvNet's model failed (exit {out.returncode}): {tail[0]}"
        return json.loads(out.stdout), "fpgaConvNet's model ran (" + python + ")"


def peer_versions(python: str) -> dict[str, str]:
    """The peer's package versions, read through its own pip metadata (importlib.metadata)."""
    code = ("import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in "
            "('fpgaconvnet-model', 'samo')}))")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
        return dict(json.loads(out.stdout)) if out.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {}


def diff(ours: float, theirs: float) -> float:
    return (ours - theirs) / theirs if theirs else (0.0 if ours == 0 else math.inf)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--fpgaconvnet-python", default=os.environ.get("FPGACONVNET_PYTHON", DEFAULT_PEER))
    ap.add_argument("--bandwidth", type=float, default=None, help="GB/s (default: the board's maximum)")
    ap.add_argument("--nets", default=",".join(NETS))
    args = ap.parse_args(argv)
    board = BOARDS["zc706"]
    avail = board_resources("zc706")
    clock = board.clock_mhz * 1e6
    bw_gbps = args.bandwidth or board.max_bandwidth_gbps
    nets = args.nets.split(",")

    matched = {(n, lvl): matched_design(n, lvl) for n in nets for lvl in ("unit", "parallel")}
    request = {"clock_mhz": board.clock_mhz,
               "platform": {"resources": {"LUT": avail["luts"], "FF": avail["ffs"], "DSP": avail["dsps"],
                                          "BRAM": avail["bram18k"]}, "bandwidth": 8 * bw_gbps, "reconf_time": 0.0},
               "nets": [{"name": f"{n}/{lvl}", "matched": True, "optimise": False, "layers": layer_specs(d, True),
                         "blocks": [[b.conv.name, *(p.name for p in b.pools)] for b in feature_blocks(zoo.get(n))]}
                        for (n, lvl), d in matched.items()]
               + [{"name": n, "matched": False, "optimise": True, "layers": layer_specs(matched[(n, "unit")], False)}
                  for n in nets]}
    peer, peer_note = run_peer(args.fpgaconvnet_python, request)
    by_name = {r["name"]: r for r in peer} if peer else {}

    report: dict[str, Any] = {"board": board.name, "clock_mhz": board.clock_mhz, "bandwidth_gbps": bw_gbps,
                              "peer": peer_note, "peer_present": peer is not None, "tolerance": TOLERANCE,
                              "matched": [], "optimum": []}
    report["versions"] = peer_versions(args.fpgaconvnet_python) if peer is not None else None
    report["times"] = []
    for (n, lvl), d in matched.items():
        ours = ours_per_layer(d, clock)
        row: dict[str, Any] = {"cnn": n, "folding": lvl, "ours": ours}
        theirs = by_name.get(f"{n}/{lvl}", {}).get("matched")
        blocks = block_costs(d, board, bw_gbps * 1e9)
        trow: dict[str, Any] = {"cnn": n, "folding": lvl, "ours": blocks}
        if theirs and "blocks" in theirs:
            specs = {s["name"]: s for s in layer_specs(d, True)}
            depth = {layer["name"]: layer["pipeline_depth_cycles"] for layer in theirs["layers"]}
            trow["rows"] = []
            for o, t in zip(blocks, theirs["blocks"]):
                r = time_terms(o, t, specs, clock)
                r["fpgaconvnet_with_depth_s"] = (t["latency_cycles"] + sum(depth[x] for x in t["layers"])) / clock
                trow["rows"].append(r)
            trow["ours_total_s"] = sum(o["time_s"] for o in blocks)
            trow["fpgaconvnet_total_s"] = sum(t["latency_cycles"] for t in theirs["blocks"]) / clock
            trow["diff"] = diff(trow["ours_total_s"], trow["fpgaconvnet_total_s"])
        report["times"].append(trow)
        if theirs:
            row["fpgaconvnet"] = theirs
            row["diff"] = {k: diff(ours["resources"][k], theirs["resources"][f]) for k, f in KEYS}
            row["diff"]["fps"] = diff(ours["fps"], theirs["fps"])
            row["within"] = {k: abs(row["diff"][k]) <= TOLERANCE for k, _ in KEYS}
        report["matched"].append(row)
    bw_eff = bw_gbps * 1e9 * planning_efficiency()
    for n in nets:
        best = pareto(list(explore_cnn(zoo.get(n), avail, clock, bw_eff)))[-1]
        d = best.design
        row = {"cnn": n, "ours": {"fps": best.fps, "resources": best.resources, "partition": d.groups,
                                  "tile_cap_words": d.cap_words,
                                  "conv_stages": [{"n_pe": s.n_pe, "n_op": s.n_op, "weights": s.weights}
                                                  for s in d.stages if s.kind == "conv"]}}
        if n in by_name:
            row["fpgaconvnet"] = by_name[n]["optimum"]
        report["optimum"].append(row)

    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    print(f"f-CNNx model vs fpgaConvNet's on {board.name} at {board.clock_mhz:g} MHz, {bw_gbps:g} GB/s")
    print(peer_note)
    print("\nMatched folding (one engine, whole feature extractor; ours includes its engine I/O, "
          f"{LUT_ENGINE} LUTs):")
    print(f"{'CNN':14} {'folding':9} {'LUT ours/fcn':>17} {'FF ours/fcn':>17} {'DSP ours/fcn':>13} "
          f"{'BRAM ours/fcn':>13} {'fps ours/fcn':>19}  within 25%")
    for row in report["matched"]:
        o, t = row["ours"], row.get("fpgaconvnet")
        cells = []
        for k, f in KEYS:
            cells.append(f"{o['resources'][k]}/{t['resources'][f] if t else '-'}")
        fps = f"{o['fps']:.0f}/{t['fps']:.0f}" if t else f"{o['fps']:.0f}/-"
        within = ", ".join(f"{k} {'yes' if v else 'NO'} ({100 * row['diff'][k]:+.0f}%)" for k, v in row["within"].items()) \
            if t else "-"
        print(f"{row['cnn']:14} {row['folding']:9} {cells[0]:>17} {cells[1]:>17} {cells[2]:>13} {cells[3]:>13} "
              f"{fps:>19}  {within}")
    print("\nPer layer at the parallel folding (ours / fpgaConvNet's: LUT, FF, DSP, BRAM18, cycles):")
    for row in report["matched"]:
        if row["folding"] != "parallel":
            continue
        t = row.get("fpgaconvnet")
        for i, layer in enumerate(row["ours"]["layers"]):
            r = layer["resources"]
            line = (f"  {row['cnn']:14} {layer['name']:11} <{layer['n_pe']},{layer['n_op']}>  "
                    f"{r['luts']:6d} {r['ffs']:6d} {r['dsps']:4d} {r['bram18k']:5d} {layer['ii_cycles']:9d}")
            if t:
                p = t["layers"][i]
                pr = p["resources"]
                line += f"   |  {pr['LUT']:6d} {pr['FF']:6d} {pr['DSP']:4d} {pr['BRAM']:5d} {p['latency_cycles']:9.0f}"
            print(line)
    print("\nTime per block (a conv and its pooling) at matched folding: our cost record's row (core.fcnnx.cost; "
          "the block as a design of its own) against fpgaConvNet's latency of the block's layers (samo's "
          "Partition.eval_latency), in microseconds; fcn+D adds fpgaConvNet's own pipeline depths. The difference "
          "is the product of the named terms (fill: our pipeline depth; traffic: off-chip time longer than D; "
          "padded walk: fpgaConvNet's sliding window walks the padded input) and a residual:")
    for trow in report["times"]:
        if "rows" not in trow:              # no peer: our side only
            for o in trow["ours"]:
                print(f"  {trow['cnn']:14} {trow['folding']:9} {o['block']:11} {1e6 * o['time_s']:12.2f} {'-':>12}")
            continue
        for r in trow["rows"]:
            flag = "yes" if r["within"] else ("explained" if r["explained"] else "NO")
            print(f"  {trow['cnn']:14} {trow['folding']:9} {r['block']:11} {1e6 * r['ours_s']:12.2f} "
                  f"{1e6 * r['fpgaconvnet_s']:12.2f} {1e6 * r['fpgaconvnet_with_depth_s']:12.2f} "
                  f"{100 * r['diff']:+6.1f}%  {flag:9}  {r['why']}; residual {100 * r['residual']:+.1f}%")
        print(f"  {trow['cnn']:14} {trow['folding']:9} {'sum':11} {1e6 * trow['ours_total_s']:12.2f} "
              f"{1e6 * trow['fpgaconvnet_total_s']:12.2f} {'':12} {100 * trow['diff']:+6.1f}%")
    print("\nEach tool's optimum (ours: fastest f-CNNx DSE point; fpgaConvNet: samo rule-based, one partition):")
    for row in report["optimum"]:
        o = row["ours"]
        r = o["resources"]
        stages = " ".join(f"<{s['n_pe']},{s['n_op']},{'chip' if s['weights'] == 'on_chip' else 'stream'}>"
                          for s in o["conv_stages"])
        print(f"  {row['cnn']:14} ours {o['fps']:9.2f} fps  LUT {r['luts']:6d} FF {r['ffs']:6d} DSP {r['dsps']:4d} "
              f"BRAM {r['bram18k']:5d}  partition {o['partition']} cap {o['tile_cap_words']} {stages}")
        t = row.get("fpgaconvnet")
        if t is None:
            print(f"  {'':14} fpgaConvNet: -")
        elif not t.get("feasible"):
            print(f"  {'':14} fpgaConvNet: no design ({t.get('why')})")
        else:
            tr = t["resources"]
            print(f"  {'':14} fcn  {t['fps']:9.2f} fps  LUT {tr['LUT']:6d} FF {tr['FF']:6d} DSP {tr['DSP']:4d} "
                  f"BRAM {tr['BRAM']:5d}  folding " + " ".join(
                      f"{layer['name']}:{layer['folding']}" for layer in t["layers"] if layer["type"] == "conv"))
    if peer is not None:
        ok = all(all(row["within"].values()) for row in report["matched"] if "within" in row)
        print(f"\nresources within {TOLERANCE:.0%} of fpgaConvNet's model on every network and folding: "
              f"{'PASS' if ok else 'FAIL'}")
        rows = [r for trow in report["times"] for r in trow.get("rows", [])]
        ok = all(r["explained"] for r in rows)
        print(f"time per block within {TOLERANCE:.0%} of fpgaConvNet's, or explained by the named terms to within "
              f"{RESIDUAL:.0%}: {'PASS' if ok else 'FAIL'} ({sum(r['within'] for r in rows)} of {len(rows)} within; "
              f"fpgaconvnet-model {(report['versions'] or {}).get('fpgaconvnet-model', '?')}, samo "
              f"{(report['versions'] or {}).get('samo', '?')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
