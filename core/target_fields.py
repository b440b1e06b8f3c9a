"""Schema fields the hardware targets share (core.workload's targets and core.hardware.targets), each
with its unit for the editor, and the published figures their defaults come from (docs/targets.md
names each source)."""

from __future__ import annotations

from typing import Any

from core.host_machine import host_cpu

BYTES_MAX = 2 ** 31 - 1          # the editor's integer fields hold 32 bits (2 GiB - 1)

# ---- energy per access (docs/targets.md, "Energy"): the Eyeriss paper's normalised energies (Chen, Emer,
# Sze, ISCA 2016, "normalized energy cost relative to a MAC": DRAM 200x, global buffer 6x, register file 1x the energy of one MAC, 16-bit,
# 65 nm) anchored at Horowitz's 45 nm 16-bit floating-point MAC (ISSCC 2014: FMult 1.1 pJ + FAdd 0.4 pJ).
HOROWITZ_FP16_MULT_PJ = 1.1
HOROWITZ_FP16_ADD_PJ = 0.4
MAC_PJ = HOROWITZ_FP16_MULT_PJ + HOROWITZ_FP16_ADD_PJ          # 1.5 pJ
EYERISS_DRAM, EYERISS_GBUF, EYERISS_RF = 200, 6, 1
DRAM_PJ = EYERISS_DRAM * MAC_PJ                                 # 300 pJ per 16-bit word
GBUF_PJ = EYERISS_GBUF * MAC_PJ                                 # 9 pJ
RF_PJ = EYERISS_RF * MAC_PJ                                     # 1.5 pJ

# ---- this machine's DRAM bandwidth: a 256 MiB copy measured here (benchmarks/host_bandwidth.py, AMD EPYC, 2 cores)
HOST_BANDWIDTH_GBPS = 14.0         # the median of seven runs here (10.2-17.2 GB/s beside other work)


def int_field(title: str, default: int, lo: int, hi: int, tip: str, unit: str = "") -> dict[str, Any]:
    f: dict[str, Any] = {"type": "integer", "title": title, "default": default, "minimum": lo, "maximum": hi,
                         "description": tip}
    if unit:
        f["unit"] = unit
    return f


def num_field(title: str, default: float, unit: str, tip: str, hi: float = 1e12, positive: bool = True
              ) -> dict[str, Any]:
    """A real-valued field: above 0 (`positive`) or at least 0."""
    f: dict[str, Any] = {"type": "number", "title": title, "default": float(default), "maximum": hi,
                         "unit": unit, "description": tip}
    if positive:
        f["exclusiveMinimum"] = 0
    else:
        f["minimum"] = 0.0
    return f


def bytes_field(title: str, default: int, tip: str, lo: int = 1) -> dict[str, Any]:
    return int_field(title, default, lo, BYTES_MAX, tip, "B")


def energy_field(title: str, default: float, tip: str) -> dict[str, Any]:
    return num_field(title, default, "pJ", tip, hi=1e9, positive=False)


def cpu_memory_fields(what: str) -> dict[str, Any]:
    """Clock, DRAM bandwidth and caches of a CPU (`what`: "CPU", "SoC's CPU"), this machine's by default."""
    h = host_cpu()
    return {
        "clock_mhz": num_field("Clock", h.clock_mhz, "MHz", f"Core clock of the {what} (default: this machine's, "
                               "from /proc/cpuinfo or cpufreq)", hi=1e5),
        "bandwidth_gbps": num_field("DRAM bandwidth", HOST_BANDWIDTH_GBPS, "GB/s",
                                    f"Sustained DRAM bandwidth of the {what} (default: a copy measured on this "
                                    "machine, docs/targets.md)", hi=1e5),
        "l1d_bytes": bytes_field("L1 data cache", h.l1d_bytes, "L1 data cache per core (default: this machine's, "
                                 "from /sys/devices/system/cpu/cpu0/cache)"),
        "l2_bytes": bytes_field("L2 cache", h.l2_bytes, "L2 cache per core (default: this machine's)"),
        "l3_bytes": bytes_field("L3 cache", h.l3_bytes, "Last-level cache, shared (default: this machine's; 0: "
                                "none)", lo=0),
    }
