"""Table III reuse rates recomputed from the architecture models."""

import pytest

from core.merit import reuse


def _rates():
    return {(r.architecture, r.level): r.rate for r in reuse.table_iii()}


def test_table_iii_matches_paper():
    rates = _rates()
    for key, paper in reuse.PAPER_TABLE_III.items():
        # the paper truncates 8.129 to 8.12; everything else is rounded
        assert rates[key] == pytest.approx(paper, abs=0.01), key


def test_meritz_printed_shape_gives_lower_rate():
    r = reuse.meritz(8, 16)
    assert r.inputs.once == 18 * 10 * 8 and r.kernels.once == 3 * 3 * 8 * 16
    assert r.rate == pytest.approx(147456 / (1440 + 1152))


def test_overall_rate_is_limit_of_many_passes():
    sys_overall = reuse.systolic()[1]
    n = 10 ** 6
    words = sys_overall.inputs.per_pass * n + sys_overall.kernels.once + sys_overall.outputs.per_pass * n
    assert sys_overall.rate == pytest.approx(sys_overall.macs.per_pass * n / words, rel=1e-4)
