"""The GPU and CPU target kinds (core.kinds discovers this module). A fresh project's library starts with
one of each, this machine's CPU and the default GPU preset, so the Targets tab compares every kind of
target out of the box (issue 51); the library's Add menu offers both (a GPU by its preset, the CPU as
this machine)."""

from __future__ import annotations

from core.host_machine import host_cpu
from core.hardware.targets import DEFAULT_GPU, GPU_PRESETS, CpuTarget, GpuTarget, gpu_preset, this_machine
from core.kinds import ItemKind, register


def _gpu_variants() -> dict[str, str]:
    return {k: str(p["title"]) for k, p in GPU_PRESETS.items()}


def _gpu_summary(v: GpuTarget) -> str:
    return f"{v.sms} SMs at {v.clock_mhz:g} MHz, {v.fp32_tflops:g} TFLOPS fp32, {v.bandwidth_gbps:g} GB/s"


def _cpu_summary(v: CpuTarget) -> str:
    return f"{v.cores} cores x {v.vector_width} lanes at {v.clock_mhz:g} MHz, {v.bandwidth_gbps:g} GB/s"


def _this_machine_name() -> str:
    return f"This machine ({host_cpu().name})"


for _kind in (
    ItemKind("targets", "gpu", "GPU", GpuTarget, GpuTarget.from_json, _gpu_summary,
             lambda v: (_gpu_variants()[v or DEFAULT_GPU], gpu_preset(v or DEFAULT_GPU)), _gpu_variants, order=50,
             starters=lambda: [(60, _gpu_variants()[DEFAULT_GPU], gpu_preset(DEFAULT_GPU))]),
    ItemKind("targets", "cpu", "CPU", CpuTarget, CpuTarget.from_json, _cpu_summary,
             lambda _v: (_this_machine_name(), this_machine()), order=45,
             starters=lambda: [(50, _this_machine_name(), this_machine())]),
):
    register(_kind)
