"""This machine's CPU, read from the system (Linux sysfs and /proc/cpuinfo, os.cpu_count): the
default of the CPU and mobile-SoC targets, and what the C code generators fit their tiles to.

Only what the system states is read here; what it does not state (the DRAM bandwidth) is a figure
measured once and written down in docs/targets.md, or measured on request (`measure_copy_bandwidth`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
CPUINFO = Path("/proc/cpuinfo")
MAX_FREQ = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")

# What is used where the system says nothing (another OS, a container hiding sysfs): a 32 KiB L1
# data cache, 1 MiB L2 and 8 MiB L3 per the common x86 server core, SSE's 16-byte vectors and a
# 2 GHz clock; each is marked in `HostCpu.read_from` so the docs and the editor can say so.
FALLBACK = {"l1d_bytes": 32 * 1024, "l2_bytes": 1024 * 1024, "l3_bytes": 8 * 1024 * 1024,
            "vector_bytes": 16, "clock_mhz": 2000.0}


@dataclass(frozen=True)
class HostCpu:
    name: str
    cores: int
    vector_bytes: int             # the widest SIMD register its flags allow
    clock_mhz: float
    l1d_bytes: int
    l2_bytes: int
    l3_bytes: int
    read_from: tuple[str, ...]    # which fields came from the system (the rest are FALLBACK)

    @property
    def vector_floats(self) -> int:
        return self.vector_bytes // 4


def size_of(text: str) -> int:
    """Bytes of a sysfs cache size ("32K", "1024K", "32768K", "8M"); 0 when it cannot be read."""
    m = re.match(r"\s*(\d+)\s*([KMG]?)", text)
    if not m:
        return 0
    return int(m.group(1)) * {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}[m.group(2)]


def read_caches(base: Path = CACHE_DIR) -> dict[str, int]:
    """cpu0's cache sizes by level (L1 data or unified, L2, L3); levels it does not list are absent."""
    sizes: dict[str, int] = {}
    try:
        for d in sorted(base.glob("index*")):
            level = (d / "level").read_text().strip()
            kind = (d / "type").read_text().strip()
            size = size_of((d / "size").read_text())
            if not size:
                continue
            if level == "1" and kind in ("Data", "Unified"):
                sizes["l1d_bytes"] = size
            elif level == "2":
                sizes["l2_bytes"] = size
            elif level == "3":
                sizes["l3_bytes"] = size
    except OSError:
        pass
    return sizes


def parse_cpuinfo(text: str) -> dict[str, object]:
    """Model name, SIMD width (bytes: AVX-512 64, AVX/AVX2 32, else 16) and clock (MHz) of /proc/cpuinfo's
    first processor; keys it does not state are absent."""
    out: dict[str, object] = {}
    m = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    if m:
        out["name"] = m.group(1).strip()
    fm = re.search(r"^flags\s*:\s*(.+)$", text, re.M)
    if fm:
        flags = set(fm.group(1).split())
        out["vector_bytes"] = 64 if "avx512f" in flags else 32 if ("avx2" in flags or "avx" in flags) else 16
    cm = re.search(r"^cpu MHz\s*:\s*([0-9.]+)$", text, re.M)
    if cm and float(cm.group(1)) > 0:
        out["clock_mhz"] = float(cm.group(1))
    return out


@dataclass(frozen=True)
class FmaDatapath:
    """A core's vector FMA pipes: how many, how wide, and the published source that says so."""

    pipes: int
    pipe_bytes: int
    source: str

    def issue_per_cycle(self, vector_width: int) -> int:
        """Vector FMAs of `vector_width` float32 lanes a core starts per cycle: every pipe one, a
        vector wider than a pipe taking several pipes (Zen 4 runs a 512-bit FMA on two 256-bit
        pipes); at least 1."""
        per = max(1, -(-4 * vector_width // self.pipe_bytes))          # pipes one vector FMA occupies
        return max(1, self.pipes // per)


# Published FMA throughput per microarchitecture (docs/targets.md, "Mobile SoC"):
# AMD: Software Optimization Guide for family 17h (Zen, Zen+: two 128-bit FMA pipes; Zen 2, family
# 17h model 30h and later: two 256-bit), family 19h (Zen 3 and Zen 4: two 256-bit FMA pipes, Zen 4
# executing an AVX-512 instruction as two 256-bit halves) and family 1Ah (Zen 5: two 512-bit);
# Intel 64 and IA-32 Optimization Reference Manual (two FMA ports since Haswell, 512-bit on the
# AVX-512 server cores); Arm Cortex-A76 / Neoverse N1 Software Optimization Guides (two 128-bit
# FP/ASIMD pipes, both FMA). A CPU with no FMA flag: one multiply-add a cycle (separate mul and add).
def fma_datapath(cpuinfo: str, machine: str = "") -> FmaDatapath:
    """This CPU's FMA pipes from /proc/cpuinfo's vendor, family, model and flags (`machine`:
    platform.machine(), for Arm whose cpuinfo names no vendor this way)."""
    if machine.lower() in ("aarch64", "arm64"):
        return FmaDatapath(2, 16, "Arm Cortex-A76 / Neoverse N1: two 128-bit FMA pipes")

    def field(key: str) -> str:
        m = re.search(rf"^{key}\s*:\s*(.+)$", cpuinfo, re.M)
        return m.group(1).strip() if m else ""

    flags = set(field("flags").split())
    if "fma" not in flags:
        return FmaDatapath(1, 16, "no FMA flag: one multiply-add a cycle assumed")
    vendor, family = field("vendor_id"), int(field("cpu family") or 0)
    model = int(field("model") or 0)
    if vendor == "AuthenticAMD" or (not vendor and family in (0x17, 0x19, 0x1A)):
        if family == 0x17 and model < 0x30:
            return FmaDatapath(2, 16, "AMD Zen / Zen+ (family 17h): two 128-bit FMA pipes")
        if family in (0x17, 0x19):
            zen4 = "avx512f" in flags
            return FmaDatapath(2, 32, f"AMD {'Zen 4' if zen4 else 'Zen 2 / Zen 3'} (family {family:x}h model "
                                      f"{model:x}h): two 256-bit FMA pipes" + (", AVX-512 in two halves" if zen4 else ""))
        return FmaDatapath(2, 64, f"AMD Zen 5 or later (family {family:x}h): two 512-bit FMA pipes")
    width = 64 if "avx512f" in flags else 32
    return FmaDatapath(2, width, f"Intel (FMA3{', AVX-512' if width == 64 else ''}): two {8 * width}-bit FMA ports")


@lru_cache(maxsize=1)
def host_fma() -> FmaDatapath:
    """This machine's FMA pipes (read once per process)."""
    import platform

    try:
        text = CPUINFO.read_text(errors="replace")
    except OSError:
        text = ""
    return fma_datapath(text, platform.machine())


@lru_cache(maxsize=1)
def host_cpu() -> HostCpu:
    """This machine's CPU (read once per process)."""
    found: dict[str, object] = dict(read_caches())
    try:
        found.update(parse_cpuinfo(CPUINFO.read_text(errors="replace")))
    except OSError:
        pass
    try:        # the highest clock the kernel's cpufreq states (kHz) beats /proc/cpuinfo's momentary one
        found["clock_mhz"] = int(MAX_FREQ.read_text().strip()) / 1000.0
    except (OSError, ValueError):
        pass
    values: dict[str, Any] = {**FALLBACK, **{k: v for k, v in found.items() if k in FALLBACK}}
    return HostCpu(name=str(found.get("name", "CPU")), cores=os.cpu_count() or 1,
                   vector_bytes=int(values["vector_bytes"]), clock_mhz=round(float(values["clock_mhz"]), 1),
                   l1d_bytes=int(values["l1d_bytes"]), l2_bytes=int(values["l2_bytes"]),
                   l3_bytes=int(values["l3_bytes"]),
                   read_from=tuple(k for k in ("cores", *FALLBACK) if k == "cores" or k in found))


def measure_copy_bandwidth(mib: int = 256, repeats: int = 5) -> float:
    """This machine's DRAM bandwidth in GB/s as a copy of `mib` MiB (read plus write, counted
    both ways), best of `repeats`: how the CPU targets' bandwidth default was measured here
    (benchmarks/host_bandwidth.py prints it)."""
    import time

    import numpy as np

    a = np.ones(mib * 1024 * 1024 // 8)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t0)
    return 2 * a.nbytes / best / 1e9
