"""f-CNNx's cost record (issue 50): one CNN's chosen engine design alone on the FPGA, subgraph by
subgraph (the layers a subgraph pipelines run at once, so its time is theirs together), against the
board's limits. It covers what f-CNNx maps: the feature extractor, up to the first fully connected layer
(core.fcnnx.model.feature_blocks).

* time of a subgraph: the model's (eqs. 1-2 and the streamed weights) at the planning bandwidth, or its
  traffic at that bandwidth where that is longer (core.fcnnx.model.alone_time's term): modelled;
* off-chip bytes: its maps, partial sums and streamed weights of one batch;
* MACs: its convolutions' (tiles of a folded layer each in its own subgraph);
* limits: peak MAC rate = the board's DSPs x its clock (every multiplier is a DSP48, one MAC a cycle);
  off-chip lower bound = the extractor's input (charged to the first subgraph) and output (to the last):
  every other word could stay on chip, weights included, across frames; the bandwidth is the target's.
No energy model on an FPGA board: energy and its limit are None.
"""

from __future__ import annotations

from core.boards import Board
from core.cost import Ceilings, CostRecord, layer_cost
from core.fcnnx.dse import DesignPoint
from core.fcnnx.model import WORD_BYTES


def design_cost(p: DesignPoint, board: Board, planning_bps: float, bandwidth_bps: float) -> CostRecord:
    """The cost record of one design point alone (the whole bandwidth) on `board`."""
    c = Ceilings(peak_macs_per_s=board.dsps * board.clock_mhz * 1e6, bandwidth_bytes_per_s=bandwidth_bps)
    subs = p.design.subgraphs
    rows = []
    for j, (sub, load) in enumerate(zip(subs, p.loads)):
        lower = WORD_BYTES * p.batch * ((subs[0].in_words if j == 0 else 0) + (subs[-1].out_words if j == len(subs) - 1 else 0))
        macs = p.batch * sum(conv.macs for conv, _ in sub.blocks)
        rows.append(layer_cost(sub.name, macs, c, float(lower),
                               time_s=max(load.latency_s, load.traffic_bytes / planning_bps),
                               offchip_bytes=float(load.traffic_bytes), energy_j=None))
    record = CostRecord.of(f"{board.name} ({board.device}): {board.dsps} DSPs at {board.clock_mhz:g} MHz, "
                           f"{bandwidth_bps / 1e9:g} GB/s", c, rows)
    wrong = record.problems()
    if wrong:               # the model broke a limit it must meet: a fault here, not the user's input
        raise RuntimeError(f"{p.cnn}: the cost record fails its own check: {wrong[0][0]}: {wrong[0][1]}")
    return record
