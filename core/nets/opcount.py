"""Operation and parameter counts of a layer table under the conventions papers use.

`Network.gops` counts 2 operations per multiply-accumulate over conv and FC layers.  The f-CNNx
paper (Table I) counts differently: its figures are reproduced by 2 ops per MAC over the
*convolutional* layers only plus one op per pooling-window element (k*k per pooled output), with
FC layers left out — the part of the network its FPGA engines stream (see docs/nets.md).
"""

from __future__ import annotations

from core.nets.layers import Conv, Network, Pool

CONVENTIONS = ("macs2", "fcnnx")


def pool_ops(p: Pool) -> int:
    """One comparison/addition per window element for every pooled output."""
    return p.ch * p.out_h * p.out_w * p.k * p.k


def workload_ops(net: Network, convention: str = "macs2") -> int:
    """Operations of one inference (batch 1) under `convention` (see module docstring)."""
    if convention == "macs2":
        return 2 * net.macs
    if convention == "fcnnx":
        conv = sum(2 * c.macs for c in net.convs if not c.fc)
        return conv + sum(pool_ops(p) for p in net.layers if isinstance(p, Pool))
    raise ValueError(f"unknown op-count convention {convention!r}; known: {', '.join(CONVENTIONS)}")


def workload_gops(net: Network, convention: str = "macs2") -> float:
    return workload_ops(net, convention) / 1e9


def params(net: Network, bias: bool = True) -> int:
    """Learned parameters: conv/FC weights, plus one bias per output channel when `bias`."""
    return sum(c.weights + (c.out_ch if bias else 0) for c in net.convs)


def layer_counts(net: Network) -> dict[str, int]:
    """How many conv, fc, pool and eltwise/concat entries the table has."""
    counts = {"conv": 0, "fc": 0, "pool": 0, "eltwise": 0}
    for l in net.layers:
        if isinstance(l, Conv):
            counts["fc" if l.fc else "conv"] += 1
        elif isinstance(l, Pool):
            counts["pool"] += 1
        else:
            counts["eltwise"] += 1
    return counts
