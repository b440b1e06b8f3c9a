"""Print the zoo as a table (MACs, parameters, workloads under both conventions): `python -m core.nets.summary`."""

from __future__ import annotations

import sys

from core.nets import zoo
from core.nets.check import check_chain
from core.nets.opcount import layer_counts, params, workload_gops

# f-CNNx Table I (GOps) for the networks it lists.
FCNNX_TABLE_I = {"lenet5": 0.0038, "cifar10_quick": 0.0247, "pilotnet": 0.0620,
                 "zfnet": 2.2219, "scenelabel": 7.6528, "vgg16": 30.7200}


def rows() -> list[dict]:
    out = []
    for name in zoo.names():
        net = zoo.get(name)
        check_chain(net)
        c = layer_counts(net)
        out.append({"name": name, "input": "x".join(map(str, net.input_shape)), "conv": c["conv"], "fc": c["fc"],
                    "pool": c["pool"], "merge": c["eltwise"], "gmacs": net.macs / 1e9,
                    "mparams": params(net) / 1e6, "gops": net.gops, "fcnnx": workload_gops(net, "fcnnx"),
                    "table_i": FCNNX_TABLE_I.get(name)})
    return out


def main() -> int:
    head = f"{'network':14} {'input':10} {'conv':>4} {'fc':>3} {'pool':>4} {'merge':>5} {'GMACs':>8} " \
           f"{'Mparams':>8} {'GOps':>9} {'fcnnx GOps':>10} {'Table I':>8}"
    print(head)
    for r in rows():
        t = f"{r['table_i']:.4f}" if r["table_i"] is not None else "-"
        print(f"{r['name']:14} {r['input']:10} {r['conv']:4d} {r['fc']:3d} {r['pool']:4d} {r['merge']:5d} "
              f"{r['gmacs']:8.4f} {r['mparams']:8.3f} {r['gops']:9.4f} {r['fcnnx']:10.4f} {t:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
