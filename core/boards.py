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
}
