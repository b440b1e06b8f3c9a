"""The ZigZag energy comparison's accelerator description (benchmarks/energy_vs_zigzag.py): the same
energy per 16-bit word at every level as the bound engine's target, whatever a port's width."""

import importlib.util
from pathlib import Path

import yaml

from core.workload import DataflowTarget

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("energy_vs_zigzag", ROOT / "benchmarks" / "energy_vs_zigzag.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_per_word_energies_and_sizes_are_the_targets():
    t = DataflowTarget(gbuf_read_pj=7.0, dram_write_pj=250.0, rf_bytes=256, pe_rows=8, pe_cols=12)
    a = {k: v for k, v in t.to_json().items() if k != "kind"}
    hw = yaml.safe_load(_bench().accelerator_yaml(a))
    per_word = {}
    for name, m in hw["memories"].items():
        widths = {p["bandwidth_max"] for p in m["ports"]}
        assert len(widths) == 1 and all(p["bandwidth_min"] == 16 for p in m["ports"])
        scale = widths.pop() / 16
        per_word[name] = (m["r_cost"] / scale, m["w_cost"] / scale)
    assert per_word["dram"] == (t.dram_read_pj, t.dram_write_pj)
    assert per_word["gbuf"] == (t.gbuf_read_pj, t.gbuf_write_pj)
    assert per_word["rf_O"] == per_word["reg_I"] == per_word["reg_W"] == (t.rf_read_pj, t.rf_write_pj)
    assert hw["memories"]["gbuf"]["size"] == t.memory_bytes * 8 and hw["memories"]["rf_O"]["size"] == 256 * 8
    assert hw["operational_array"]["sizes"] == [8, 12] and hw["operational_array"]["unit_energy"] == t.mac_pj
    # DRAM's port moves the target's bandwidth each cycle of its clock
    dram_bits = hw["memories"]["dram"]["ports"][0]["bandwidth_max"]
    assert dram_bits == int(t.bandwidth_gbps * 1e9 * 8 / (t.clock_mhz * 1e6))
