"""Workload and target model, filter presets, kernel text parsing, units."""

import pytest

from core.errors import InputError
from core.filters import PRESETS, preset
from core.units import parse_bandwidth, parse_bytes
from core.workload import Kernel, KernelSet, kernels_of, target_from_json, workload_from_json


def test_presets_are_valid_and_round_trip():
    assert {"gauss3", "gauss5", "gauss5+gauss3", "analognet2", "analognet2-tool", "sobel", "laplacian",
            "box3"} <= set(PRESETS)
    for name, ks in PRESETS.items():
        ks.validate()
        assert workload_from_json(ks.to_json()) == ks
    an2 = preset("analognet2")
    assert an2.denominator == 4 and len(an2.kernels) == 3
    assert an2.kernels[1].values[0][2] == -1 and preset("analognet2-tool").kernels[1].values[0][2] == 1
    assert sum(map(sum, preset("gauss5").kernels[0].values)) == 66      # as published


def test_kernel_validation_messages():
    with pytest.raises(InputError, match="ragged"):
        KernelSet("x", 1, [Kernel("a", [[1.0, 2.0], [3.0]])]).validate()
    with pytest.raises(InputError, match="limit is 7x7"):
        KernelSet("x", 1, [Kernel("a", [[1.0] * 8] * 8)]).validate()
    with pytest.raises(InputError, match="no kernels"):
        KernelSet("x", 1, []).validate()
    with pytest.raises(InputError) as info:
        KernelSet("x", 1, [Kernel("a", [[1.0, float("nan")]])]).validate()
    assert info.value.where == "workload.kernels[0].values"
    with pytest.raises(InputError, match="needs convolution kernels"):
        kernels_of(None)


def test_targets_from_json():
    t = target_from_json({"kind": "mobile_soc", "cores": 4, "vector_width": 8})
    assert (t.cores, t.vector_width) == (4, 8)
    with pytest.raises(InputError, match="one of 1, 2, 4, 8"):
        target_from_json({"kind": "mobile_soc", "vector_width": 3})
    with pytest.raises(InputError, match="board: must be one of zc706"):
        target_from_json({"kind": "fpga", "board": "nope"})
    assert target_from_json({"kind": "dataflow", "memory_bytes": 65536, "word_bits": 16}).memory_words == 32768


def test_units():
    assert parse_bytes("64KiB") == 65536 and parse_bytes("64KB") == 64000 and parse_bytes("512") == 512
    assert parse_bandwidth("1.0GB/s") == 1.0 and parse_bandwidth("500MB/s") == 0.5
    for bad in ("-1", "abc", "1.5 bytes", "0"):
        with pytest.raises(InputError):
            parse_bytes(bad)
    with pytest.raises(InputError):
        parse_bandwidth("fast")
