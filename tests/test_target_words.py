"""Words meant for people in what `main.py cost` and `main.py targets` print and the Targets tab
shows: a target's sizes in binary units ("32 KiB", not "32 KB" for 32768 bytes or "32768 KB"), a
throughput cell without a bare "/s" (its heading names images/s), and the throughput metric
declared in named units wherever a metric is titled (runs table, studies, Compare)."""

from __future__ import annotations

import dataclasses

from core.comparison import Metric
from core.comparison_cli import HEADS, cell
from core.display import metric_of
from core.hardware.targets import CpuTarget
from core.workload import DataflowTarget, MobileSocTarget


def test_target_sizes_read_in_binary_units() -> None:
    from core.bound.cost import target_words as dataflow_words
    from core.cappuccino.cost import target_words as soc_words
    from core.merit.cost import target_words as cpu_words

    soc = dataclasses.replace(MobileSocTarget(), l1d_bytes=32 * 1024, l2_bytes=1024 * 1024, l3_bytes=32 * 1024 ** 2)
    words = soc_words(soc)
    assert "L1d 32 KiB, L2 1 MiB, L3 32 MiB" in words and "KB" not in words
    assert "64 KiB buffer" in dataflow_words(dataclasses.replace(DataflowTarget(), memory_bytes=64 * 1024))
    cpu = dataclasses.replace(CpuTarget(), l3_bytes=32 * 1024 ** 2)
    assert cpu_words(cpu).endswith("32 MiB L3")


def test_a_throughput_cell_holds_numbers_its_heading_names_the_unit() -> None:
    m = Metric(value=3.2094, limit=8.797, pct_of_limit=36.48, how="modelled")
    assert cell(m, "throughput_per_s", False) == "3.209 (8.797, 36%)"
    assert HEADS["throughput_per_s"] == "throughput (images/s)"
    assert cell(dataclasses.replace(m, value=1645.2, limit=None), "throughput_per_s", True) == "1,645 *"
    assert cell(Metric(value=0.3116, limit=0.1137, pct_of_limit=36.5, how="modelled"), "latency_s", False) \
        == "311.6 ms (113.7 ms, 36%)"


def test_the_throughput_metric_has_a_named_unit() -> None:
    m = metric_of("cost", "throughput_per_s")
    assert (m.title, m.unit) == ("Throughput", "inferences/s")
    assert m.text(22.21) == "22.21 inferences/s" and "higher is better" in m.tooltip()
