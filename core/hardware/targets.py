"""The GPU and CPU targets (issue 50): what a CUDA GPU and a host CPU offer a convolution, as library
items. core/merit/device.py's CUDA device descriptions are GPU targets' presets here (`GPU_PRESETS`),
and a GPU target gives the code generator its `CudaDevice`; "this machine" is the CPU target's default.
docs/targets.md names the source of every default."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.target_fields import bytes_field, cpu_memory_fields, int_field, num_field
from core.host_machine import host_cpu
from core.workload import _SchemaTarget

# GPU presets from the vendor's data sheets (docs/targets.md): SMs, boost clock, fp32 peak, memory
# bandwidth, and per block the shared memory (opt-in maximum) and registers (CUDA C++ Programming Guide,
# compute capability table). Keys are core.merit.device.CUDA_DEVICES's.
GPU_PRESETS: dict[str, dict[str, Any]] = {
    # NVIDIA H100 SXM5 80 GB (H100 data sheet; Hopper whitepaper): 132 SMs, 1980 MHz boost, 67 TFLOPS fp32,
    # 3.35 TB/s HBM3; compute capability 9.0: 227 KB shared memory and 64 K registers per block
    "hopper": {"title": "NVIDIA H100 SXM5", "sms": 132, "clock_mhz": 1980.0, "fp32_tflops": 66.9,
               "bandwidth_gbps": 3350.0, "smem_per_block_bytes": 227 * 1024, "regs_per_block": 65536},
    # NVIDIA A100 SXM4 80 GB (A100 data sheet; Ampere whitepaper): 108 SMs, 1410 MHz boost, 19.5 TFLOPS fp32,
    # 2039 GB/s HBM2e; compute capability 8.0: 163 KB shared memory and 64 K registers per block
    "ampere": {"title": "NVIDIA A100 SXM4", "sms": 108, "clock_mhz": 1410.0, "fp32_tflops": 19.5,
               "bandwidth_gbps": 2039.0, "smem_per_block_bytes": 163 * 1024, "regs_per_block": 65536},
}
DEFAULT_GPU = "hopper"
_H = GPU_PRESETS[DEFAULT_GPU]


@dataclass
class GpuTarget(_SchemaTarget):
    """A CUDA GPU: streaming multiprocessors at a clock, its fp32 peak and memory bandwidth, and what one
    thread block may hold (shared memory, registers)."""

    device: str = DEFAULT_GPU
    sms: int = _H["sms"]
    clock_mhz: float = _H["clock_mhz"]
    fp32_tflops: float = _H["fp32_tflops"]
    bandwidth_gbps: float = _H["bandwidth_gbps"]
    smem_per_block_bytes: int = _H["smem_per_block_bytes"]
    regs_per_block: int = _H["regs_per_block"]
    kind: str = field(default="gpu", init=False)

    SCHEMA = {"properties": {
        "device": {"type": "string", "title": "Architecture", "default": DEFAULT_GPU, "enum": list(GPU_PRESETS),
                   "description": "CUDA architecture the code generator compiles for (sm_90: hopper, sm_80: ampere)"},
        "sms": int_field("SMs", _H["sms"], 1, 10_000, "Streaming multiprocessors"),
        "clock_mhz": num_field("Clock", _H["clock_mhz"], "MHz", "Boost clock", hi=1e5),
        "fp32_tflops": num_field("fp32 peak", _H["fp32_tflops"], "TFLOPS",
                                 "Peak fp32 rate (2 flops per fused multiply-add)", hi=1e6),
        "bandwidth_gbps": num_field("Memory bandwidth", _H["bandwidth_gbps"], "GB/s", "Device memory bandwidth",
                                    hi=1e6),
        "smem_per_block_bytes": bytes_field("Shared memory per block", _H["smem_per_block_bytes"],
                                            "Shared memory one thread block may use (with the opt-in above 48 KB)"),
        "regs_per_block": int_field("Registers per block", _H["regs_per_block"], 1, 1 << 24,
                                    "32-bit registers one thread block may use"),
    }}

    @property
    def peak_macs_per_s(self) -> float:
        return self.fp32_tflops * 1e12 / 2


def gpu_preset(key: str) -> GpuTarget:
    p = GPU_PRESETS[key]
    return GpuTarget(device=key, **{k: v for k, v in p.items() if k != "title"})


_CPU = cpu_memory_fields("CPU")
# x86-64 cores since Haswell (Intel) and Zen 2 (AMD) issue two FMA per cycle (Intel 64 and IA-32
# Optimization Reference Manual; AMD Software Optimization Guide for Family 17h model 30h)
FMA_PER_CYCLE = 2


@dataclass
class CpuTarget(_SchemaTarget):
    """A CPU: cores with SIMD lanes and FMA units at a clock, its caches and DRAM bandwidth; this
    machine's by default (read from the system)."""

    cores: int = field(default_factory=lambda: host_cpu().cores)
    vector_width: int = field(default_factory=lambda: host_cpu().vector_floats)
    fma_per_cycle: int = FMA_PER_CYCLE
    clock_mhz: float = _CPU["clock_mhz"]["default"]
    bandwidth_gbps: float = _CPU["bandwidth_gbps"]["default"]
    l1d_bytes: int = _CPU["l1d_bytes"]["default"]
    l2_bytes: int = _CPU["l2_bytes"]["default"]
    l3_bytes: int = _CPU["l3_bytes"]["default"]
    kind: str = field(default="cpu", init=False)

    SCHEMA = {"properties": {
        "cores": int_field("Cores", host_cpu().cores, 1, 4096, "CPU cores (default: this machine's, os.cpu_count)"),
        "vector_width": {"type": "integer", "title": "Vector width", "default": host_cpu().vector_floats,
                         "enum": [1, 2, 4, 8, 16, 32, 64], "unit": "lanes",
                         "description": "SIMD width in float32 lanes (default: this machine's widest, from its "
                                        "/proc/cpuinfo flags)"},
        "fma_per_cycle": int_field("FMA units", FMA_PER_CYCLE, 1, 16, "Vector fused multiply-adds a core issues per "
                                   "cycle"),
        **_CPU,
    }}

    @property
    def peak_macs_per_s(self) -> float:
        return self.cores * self.vector_width * self.fma_per_cycle * self.clock_mhz * 1e6


def this_machine() -> CpuTarget:
    """The CPU target of this machine, every field read from the system (or measured here)."""
    return CpuTarget()
