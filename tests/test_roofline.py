"""The roofline of a comparison (core.comparison.roofline_points, ceiling, above_ceiling): each layer
at MACs / off-chip bytes against MACs / time, under min(peak MAC rate, intensity x bandwidth)."""

from __future__ import annotations

import pytest

from core import comparison
from core.comparison import ComparisonRow, above_ceiling, ceiling, roofline_points, targets_of_kinds
from core.comparison_run import compare
from core.cost import Ceilings, CostRecord, layer_cost, not_applicable


@pytest.fixture(scope="module")
def lenet() -> comparison.Comparison:
    return compare("lenet5", targets_of_kinds(["dataflow", "mobile_soc", "fpga", "cpu", "gpu"]))


def test_points_are_the_records_macs_over_bytes_and_time(lenet: comparison.Comparison) -> None:
    for row in lenet.rows:
        assert row.record is not None
        pts = {p.layer: p for p in roofline_points(row)}
        for l in row.record.layers:
            if l.reason is not None or l.macs == 0:     # not run, or no MAC (a softmax): no point
                assert l.name not in pts
                continue
            p = pts[l.name]
            assert p.intensity == l.macs / l.offchip_bytes.value
            assert p.rate == l.macs / l.time_s.value and p.how == l.time_s.how
        assert pts, row.target
    fpga = next(r for r in lenet.rows if r.kind == "fpga")       # its fully connected layers do not run
    assert {p.layer for p in roofline_points(fpga)} == {"conv1", "conv2"}


def test_every_point_lies_at_or_below_its_targets_ceiling(lenet: comparison.Comparison) -> None:
    for row in lenet.rows:
        assert above_ceiling(row) == [], row.target
        for p in roofline_points(row):
            assert p.rate <= ceiling(row, p.intensity) * (1 + 1e-9)


def _row(time_s: float, offchip: float = 1000.0) -> ComparisonRow:
    ce = Ceilings(peak_macs_per_s=1e9, bandwidth_bytes_per_s=1e8)
    rec = CostRecord.of("t", ce, [layer_cost("a", 10_000, ce, 1000.0, time_s=time_s, offchip_bytes=offchip,
                                             energy_j=None),
                                  not_applicable("b", 500, "too big")])
    return ComparisonRow(target="T", kind="cpu", engine="e", record=rec)


def test_the_ceiling_is_the_least_of_peak_and_bandwidth() -> None:
    row = _row(1e-5)
    assert ceiling(row, 1.0) == pytest.approx(1e8)            # memory-bound: 1 MAC/B x 1e8 B/s
    assert ceiling(row, 10.0) == pytest.approx(1e9)           # the ridge
    assert ceiling(row, 1000.0) == pytest.approx(1e9)         # compute-bound: the peak
    (p,) = roofline_points(row)                              # "b" has no time: left out
    assert (p.layer, p.intensity, p.rate) == ("a", 10.0, pytest.approx(1e9))
    assert above_ceiling(row) == []


def test_a_layer_faster_than_its_ceiling_is_found() -> None:
    row = _row(1e-5, offchip=10_000.0)       # 10 000 B at 1e8 B/s take 1e-4 s, not 1e-5 s
    (p,) = above_ceiling(row)
    assert p.layer == "a" and p.rate > ceiling(row, p.intensity)


def test_a_row_with_a_reason_has_no_point() -> None:
    row = _row(1e-5)
    row.reason = "cannot run it"
    assert roofline_points(row) == [] and above_ceiling(row) == []
