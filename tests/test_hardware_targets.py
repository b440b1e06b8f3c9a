"""Targets that describe hardware (issue 50): every new field has a unit and a default that reads back,
old (format-4) sessions open with the new fields at their defaults written out, this machine is read
from the system, and a GPU target gives the code generator its CUDA device."""

import copy

import pytest

from core import session as sessions
from core.errors import InputError
from core import target_fields as fields
from core.host_machine import parse_cpuinfo, read_caches, size_of
from core.hardware.targets import GPU_PRESETS, CpuTarget, GpuTarget, gpu_preset
from core.kinds import kinds
from core.merit.device import gpu_target_device
from core.project import Project
from core.workload import DataflowTarget, MobileSocTarget, Scamp5Target, target_from_json

OLD_DATAFLOW = {"kind": "dataflow", "memory_bytes": 131072, "word_bits": 8, "pe_rows": 12, "pe_cols": 14}
OLD_SCAMP = {"kind": "scamp5", "registers": 7, "array_size": 128}
OLD_SOC = {"kind": "mobile_soc", "cores": 4, "vector_width": 8}


def test_every_target_kind_reads_its_own_defaults_back():
    for name, kind in kinds("targets").items():
        _, item = kind.new(None)
        assert target_from_json(item.to_json()).to_json() == item.to_json(), name
        for key, prop in kind.cls.SCHEMA["properties"].items():
            assert "title" in prop and "description" in prop, (name, key)
            if prop.get("type") == "number":
                assert prop.get("unit"), (name, key)        # every physical quantity says its unit


def test_dataflow_defaults_are_the_cited_figures():
    t = DataflowTarget()
    assert (t.clock_mhz, t.bandwidth_gbps, t.rf_bytes) == (200.0, 12.8, 512)
    assert t.mac_pj == pytest.approx(1.1 + 0.4)                       # Horowitz 45 nm fp16 mult + add
    assert (t.dram_read_pj / t.mac_pj, t.gbuf_read_pj / t.mac_pj, t.rf_read_pj / t.mac_pj) == \
        pytest.approx((200, 6, 1))                                     # Eyeriss's normalised energies
    assert Scamp5Target().instruction_ns * 21 == pytest.approx(9000, rel=0.01)  # Cain: 21 instructions in 9 us


def test_a_negative_energy_is_refused_with_its_field():
    with pytest.raises(InputError) as info:
        target_from_json({**OLD_DATAFLOW, "dram_read_pj": -1.0})
    assert info.value.where == "target.dram_read_pj"
    with pytest.raises(InputError) as info:
        target_from_json({**OLD_DATAFLOW, "clock_mhz": 0})
    assert info.value.where == "target.clock_mhz"


def _format4(tmp_path):
    """A session as format 4 wrote it: targets without the hardware fields, one in a run's snapshot."""
    p = Project.starter()
    doc = sessions.to_json(p)
    doc["version"] = 4
    doc["library"]["targets"] = [{"id": "t1", "name": "old accelerator", "value": dict(OLD_DATAFLOW)},
                                 {"id": "t2", "name": "old SCAMP", "value": dict(OLD_SCAMP)},
                                 {"id": "t3", "name": "old phone", "value": dict(OLD_SOC)}]
    for st in doc["engines"].values():
        st["target"] = None
    doc["engines"]["bound"]["target"] = "t1"
    return doc


def test_format4_session_opens_with_the_new_defaults(tmp_path):
    doc = _format4(tmp_path)
    p = sessions.from_json(copy.deepcopy(doc))
    acc, scamp, soc = (e.value for e in p.targets)
    assert acc == DataflowTarget(131072, 8, 12, 14)          # old fields kept, new ones at their defaults
    assert acc.clock_mhz == 200.0 and acc.dram_read_pj == fields.DRAM_PJ
    assert scamp == Scamp5Target(7, 128)
    assert soc == MobileSocTarget(4, 8)
    migrated = sessions.MIGRATIONS[4](copy.deepcopy(doc))
    assert migrated["version"] == 5
    written = migrated["library"]["targets"][0]["value"]
    assert OLD_DATAFLOW.items() <= written.items() and written["mac_pj"] == fields.MAC_PJ
    assert set(written) == {"kind", *DataflowTarget.SCHEMA["properties"]}


def test_format4_run_snapshots_get_the_new_fields():
    doc = {"version": 4, "library": {"targets": []},
           "runs": [{"target": {"id": "t1", "name": "a", "value": dict(OLD_SCAMP)}}, {"target": None},
                    {"target": {"id": "t9", "name": "odd", "value": {"kind": "no such kind"}}}]}
    out = sessions.migrate_v4(doc)
    assert out["runs"][0]["target"]["value"] == {**OLD_SCAMP, "instruction_ns": Scamp5Target().instruction_ns}
    assert out["runs"][1]["target"] is None
    assert out["runs"][2]["target"]["value"] == {"kind": "no such kind"}      # refused later, by its reader


def test_a_format5_file_is_refused_by_name_before_its_fields(tmp_path):
    doc = _format4(tmp_path)
    doc["version"] = sessions.VERSION + 1
    with pytest.raises(Exception) as info:
        sessions.from_json(doc)
    assert "newer version" in str(info.value)


def test_host_reading(tmp_path):
    assert size_of("32K") == 32768 and size_of("8M") == 8 << 20 and size_of("?") == 0
    for i, (level, kind, size) in enumerate([("1", "Data", "48K"), ("1", "Instruction", "32K"),
                                             ("2", "Unified", "2048K"), ("3", "Unified", "64M")]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        (d / "level").write_text(level)
        (d / "type").write_text(kind)
        (d / "size").write_text(size)
    assert read_caches(tmp_path) == {"l1d_bytes": 48 << 10, "l2_bytes": 2 << 20, "l3_bytes": 64 << 20}
    assert read_caches(tmp_path / "none") == {}
    info = "processor\t: 0\nmodel name\t: Test CPU\ncpu MHz\t\t: 3100.5\nflags\t\t: fpu sse2 avx avx2 fma\n"
    assert parse_cpuinfo(info) == {"name": "Test CPU", "vector_bytes": 32, "clock_mhz": 3100.5}
    assert parse_cpuinfo("flags : avx512f") == {"vector_bytes": 64}


def test_cpu_target_is_this_machine():
    import os

    t = CpuTarget()
    assert t.cores == (os.cpu_count() or 1)
    assert t.peak_macs_per_s == t.cores * t.vector_width * t.fma_per_cycle * t.clock_mhz * 1e6
    assert target_from_json({"kind": "cpu"}).to_json() == t.to_json()


def test_gpu_presets_give_the_code_generator_its_device():
    for key, preset in GPU_PRESETS.items():
        g = gpu_preset(key)
        assert g.to_json()["sms"] == preset["sms"]
        dev = gpu_target_device(g)
        assert (dev.sms, dev.dynamic_smem_bytes, dev.regs_per_block) == \
            (g.sms, g.smem_per_block_bytes, g.regs_per_block)
    h = GpuTarget()
    # 132 SMs x 128 fp32 lanes x 2 flops x 1.98 GHz = 66.9 TFLOPS: the data sheet's peak is the SMs' product
    assert h.sms * 128 * 2 * h.clock_mhz * 1e6 / 1e12 == pytest.approx(h.fp32_tflops, rel=1e-3)
