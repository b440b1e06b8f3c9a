"""FPGA boards as data (device resources from the vendors' data sheets)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Board:
    name: str
    device: str
    luts: int
    ffs: int
    dsps: int
    bram18k: int      # 18 Kb block RAMs
    clock_mhz: float
    max_bandwidth_gbps: float


BOARDS: dict[str, Board] = {
    "zc706": Board("ZC706", "Zynq XC7Z045", 218_600, 437_200, 900, 1090, 150.0, 4.2),
    "zedboard": Board("ZedBoard", "Zynq XC7Z020", 53_200, 106_400, 220, 280, 100.0, 3.2),
    "zcu102": Board("ZCU102", "Zynq UltraScale+ XCZU9EG", 274_080, 548_160, 2_520, 1_824, 200.0, 19.2),
    "zcu104": Board("ZCU104", "Zynq UltraScale+ XCZU7EV", 230_400, 460_800, 1_728, 624, 200.0, 19.2),
    "vc709": Board("VC709", "Virtex-7 XC7VX690T", 433_200, 866_400, 3_600, 2_940, 200.0, 12.8),
}


def board_resources(key: str) -> dict[str, int]:
    """The four resource counts the f-CNNx fit check compares (LUTs, FFs, DSPs, 18 Kb BRAMs)."""
    b = BOARDS[key]
    return {"luts": b.luts, "ffs": b.ffs, "dsps": b.dsps, "bram18k": b.bram18k}
