"""One network on many targets (core.comparison) and `main.py targets`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import comparison
from core.comparison import Budgets, Costed, Costing, network_macs, targets_of_kinds
from core.comparison_run import compare
from core.cost import Ceilings, CostRecord, layer_cost

MODELLED_KINDS = ["dataflow", "mobile_soc", "fpga", "cpu", "gpu"]


@pytest.fixture(scope="module")
def lenet() -> comparison.Comparison:
    return compare("lenet5", targets_of_kinds(MODELLED_KINDS))


def test_every_part_costs_the_whole_networks_macs(lenet: comparison.Comparison) -> None:
    _, macs, layers = network_macs("lenet5")
    assert lenet.macs == macs == 2_293_000 and lenet.layers == layers == 4
    assert [r.kind for r in lenet.rows] == MODELLED_KINDS
    for r in lenet.rows:
        assert r.reason is None and not r.failed, r.reason
        assert r.record is not None and r.record.problems() == []
        assert sum(l.macs for l in r.record.layers) == macs, r.target
        assert not r.measured and {m.how for m in r.metrics().values()} == {"modelled"}
    fpga = next(r for r in lenet.rows if r.kind == "fpga")
    # f-CNNx maps the feature extractor: the two fully connected layers are rows with their reason
    skipped = [l for l in fpga.record.layers if l.reason is not None] if fpga.record else []
    assert [l.name for l in skipped] == ["ip1", "ip2"] and "feature extractor" in (skipped[0].reason or "")
    assert fpga.covered_macs == macs - sum(l.macs for l in skipped) and not fpga.whole


def test_metrics_are_against_the_limits_and_the_best_is_marked(lenet: comparison.Comparison) -> None:
    for r in lenet.rows:
        m = r.metrics()
        lat = m["latency_s"]
        assert lat.value is not None and lat.limit is not None and lat.value >= lat.limit * (1 - 1e-9)
        assert lat.pct_of_limit == pytest.approx(100 * lat.limit / lat.value)
        thr = m["throughput_per_s"]
        assert thr.value == pytest.approx(1 / lat.value) and thr.pct_of_limit == pytest.approx(lat.pct_of_limit)
    whole = [r for r in lenet.rows if r.whole]
    fastest = min(whole, key=lambda r: r.metrics()["latency_s"].value or 0)
    assert "latency_s" in fastest.best and "throughput_per_s" in fastest.best
    # only the dataflow accelerator has an energy model here, so it is the best on energy
    assert [r.kind for r in lenet.rows if "energy_j" in r.best] == ["dataflow"]
    assert not any(r.best for r in lenet.rows if not r.whole)


def test_a_target_that_cannot_run_the_network_says_why() -> None:
    c = compare("resnet18", targets_of_kinds(["scamp5"]))
    (r,) = c.rows
    assert r.reason is not None and "3 input channels" in r.reason and not r.failed
    assert r.record is not None and sum(l.macs for l in r.record.layers) == c.macs
    assert r.metrics() == {} and r.best == []


def test_a_kind_without_a_costing_is_not_costed_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    regs = comparison.costings()
    del regs["mobile_soc"]
    monkeypatch.setattr(comparison, "costings", lambda: regs)
    (r,) = compare("lenet5", targets_of_kinds(["mobile_soc"])).rows
    assert r.record is None and r.reason is not None and r.reason.startswith("not costed yet")


def _fake(macs_delta: int = 0, crash: bool = False) -> Any:
    def cost(source: str, target: Any, budgets: Budgets) -> Costed:
        if crash:
            raise ZeroDivisionError("boom")
        c = Ceilings(peak_macs_per_s=1e9, bandwidth_bytes_per_s=1e9)
        rows = [layer_cost("all", network_macs(source)[1] + macs_delta, c, 0.0, time_s=1.0, offchip_bytes=0.0,
                           energy_j=None)]
        return Costed(CostRecord.of("fake", c, rows), "fake")
    return cost


@pytest.mark.parametrize("fake, words", [(_fake(macs_delta=1), "MACs"), (_fake(crash=True), "ZeroDivisionError")])
def test_a_part_that_fails_its_check_or_crashes_is_a_failed_row(monkeypatch: pytest.MonkeyPatch, fake: Any,
                                                                 words: str) -> None:
    regs = comparison.costings()
    regs["cpu"] = Costing("cpu", "fake", fake)
    monkeypatch.setattr(comparison, "costings", lambda: regs)
    (r,) = compare("lenet5", targets_of_kinds(["cpu"])).rows
    assert r.failed and r.record is None and words in (r.reason or "")


def test_measured_parts_run_after_the_modelled_ones_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    regs = comparison.costings()

    def logged(kind: str) -> Any:
        def cost(source: str, target: Any, budgets: Budgets) -> Costed:
            order.append(kind)
            return _fake()(source, target, budgets)
        return cost
    regs["cpu"] = Costing("cpu", "timed", logged("cpu"), lambda _t, b: b.measure)
    regs["gpu"] = Costing("gpu", "modelled", logged("gpu"))
    monkeypatch.setattr(comparison, "costings", lambda: regs)
    c = compare("lenet5", targets_of_kinds(["cpu", "gpu"]), Budgets(measure=True))
    assert order == ["gpu", "cpu"] and [r.kind for r in c.rows] == ["cpu", "gpu"]
    assert c.rows[0].measured and not c.rows[1].measured


# ---------------------------------------------------------------- the command line
def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from core.cli import build_parser, dispatch

    try:
        rc = dispatch(build_parser().parse_args(["targets", *argv]))
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return int(rc or 0), out, err


@pytest.mark.parametrize("argv, words", [
    (["--network", "nosuch"], "--network: unknown network 'nosuch'"),
    (["--network", "missing.onnx"], "--network:"),
    (["--network", "lenet5", "--targets", "dataflow,warp_drive"], "unknown target kind 'warp_drive'"),
    (["--network", "lenet5", "--target-file", "nowhere.json"], "no such file"),
    (["--network", "lenet5", "--target-file", "{bad}"], "not JSON"),
    (["--network", "lenet5", "--target-file", "{dataflow,-3}"], "target.clock_mhz"),
    (["--targets", "cpu"], "--network"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "{bad}").write_text("{not json", encoding="utf-8")
    (tmp_path / "{dataflow,-3}").write_text(json.dumps({"kind": "dataflow", "clock_mhz": -3}), encoding="utf-8")
    rc, out, err = _cli(argv, capsys)
    assert rc == 2 and out == "" and words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "fast_accelerator.json"
    f.write_text(json.dumps({"kind": "dataflow", "clock_mhz": 400}), encoding="utf-8")
    rc, out, _ = _cli(["--network", "lenet5", "--targets", "cpu,gpu", "--target-file", str(f), "--json", "--quiet"],
                      capsys)
    assert rc == 0
    d = json.loads(out)
    assert set(d) == {"id", "network", "source", "macs", "layers", "measure", "cancelled", "reused", "rows"}
    assert d["source"] == "lenet5" and d["macs"] == 2_293_000 and d["measure"] is False
    assert [(r["target"], r["kind"]) for r in d["rows"]][2] == ("fast_accelerator", "dataflow")
    for r in d["rows"]:
        assert set(r["metrics"]) == {"latency_s", "throughput_per_s", "energy_j", "offchip_bytes"}
        assert set(r["metrics"]["latency_s"]) == {"value", "limit", "pct_of_limit", "how"}
        record = CostRecord.from_json(r["record"])          # the record reads back, checked
        assert sum(l.macs for l in record.layers) == d["macs"]
    assert d["rows"][2]["metrics"]["energy_j"]["value"] is not None and "energy_j" in d["rows"][2]["best"]


def test_table_rows_marks_and_mode(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli(["--network", "lenet5", "--targets", "cpu,dataflow"], capsys)
    assert rc == 0 and "costed: Dataflow accelerator" in err
    lines = out.splitlines()
    assert "every CPU modelled by its roofline" in lines[0]
    head = next(i for i, l in enumerate(lines) if l.startswith("target"))
    cpu, acc = lines[head + 1], lines[head + 2]
    assert cpu.startswith("This machine") and "modelled" in cpu and "no model" in cpu and "%" in cpu
    assert acc.startswith("Dataflow accelerator") and "J (" in acc and "*" in acc
