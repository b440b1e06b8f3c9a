"""Conv-layer specs as a comparison's workload (core.layer_source, issue 51): each spec costed on
every target as its own one-layer network, the records joined; a target that cannot run a spec says
why; the parts are re-used and the comparison reopens from a saved session; `targets --layer` and
`cost --layer` on the command line; a conv-layers workload of the library picked in the Targets tab.
The engines are the real ones at small budgets on layers of a few million MACs; the layer files go
to a cache folder of the test's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import comparison, session
from core.bound.shapes import parse_layer_spec
from core.comparison import Budgets, Costed, Costing, cost_part, targets_of_kinds
from core.comparison_run import compare, recorded
from core.cost import Ceilings, CostRecord, layer_cost
from core.errors import InputError
from core.layer_source import layer_onnx, layers_source, spec_shapes, validation_of
from core.project import Project
from core.workload import ConvLayers

SPECS = ["name=wide,Ci=16,Hi=28,Wi=28,Co=32,kernel=3,pad=1", "name=fc,Ci=256,Co=10"]
SMALL = Budgets(scamp5_max_nodes=2000, scamp5_time_s=1.0, fcnnx_max_joint=5)
HANG_MS = 60_000        # only stops a test that hangs


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("DATAFLOW_EXPLORER_CACHE", str(folder))
    return folder


def _macs(specs: list[str]) -> list[int]:
    return [parse_layer_spec(s).macs for s in specs]


def test_two_specs_on_the_default_targets_give_a_row_each_whose_macs_add_up() -> None:
    source = layers_source(SPECS)
    c = compare(source, budgets=SMALL)
    kinds = [t.value.kind for t in comparison.default_targets()]
    assert [r.kind for r in c.rows] == kinds and not c.cancelled
    assert c.macs == sum(_macs(SPECS)) and c.layers == 2 and c.source == source
    for r in c.rows:
        assert not r.failed, r.reason
        if r.kind == "scamp5":          # neither spec reads one grey-level image: refused, in words
            assert r.reason is not None and "reads 16 input channels" in r.reason
            continue
        assert r.reason is None and r.record is not None and r.record.problems() == []
        assert [(l.name, l.macs) for l in r.record.layers] == list(zip(["wide", "fc"], _macs(SPECS)))
        assert r.covered_macs == c.macs and "each spec costed on its own" in r.note
        assert comparison.above_ceiling(r) == []
        for l in r.record.layers:       # every figure at or above its limit
            assert l.time_s.value is not None and l.time_s.limit is not None
            assert l.time_s.value >= l.time_s.limit * (1 - 1e-9)


def test_scamp5_says_why_it_cannot_run_each_spec() -> None:
    specs = ["name=big,Ci=1,Hi=300,Wi=300,Co=2,kernel=3,pad=1", SPECS[0]]
    row = cost_part(layers_source(specs), targets_of_kinds(["scamp5"])[0], SMALL)
    assert row.reason == "no layer runs there (big: its 300x300 input is larger than the 256x256 array)"
    assert [l.reason for l in row.record.layers] == ["its 300x300 input is larger than the 256x256 array",
                                                     "reads 16 input channels; the array senses one grey-level image"]
    assert [l.macs for l in row.record.layers] == _macs(specs)


def test_a_refusal_names_the_spec_not_the_file_it_was_written_to(cache: Path) -> None:
    dilated = "name=dil,Ci=8,Hi=20,Wi=20,Co=8,kernel=3,pad=2,dilation=2"
    row = cost_part(layers_source([dilated]), targets_of_kinds(["mobile_soc"])[0], Budgets())
    assert row.reason == "node 'dil' (Conv): dilated convolution (dilations [2, 2]) is not supported"
    # the dilation is in the file: the bound engine costs the dilated layer's MACs
    row = cost_part(layers_source([dilated]), targets_of_kinds(["dataflow"])[0], Budgets())
    assert row.reason is None and row.record.total.macs == parse_layer_spec(dilated).macs == 8 * 8 * 9 * 20 * 20


class _PerLayer:
    """A costing that refuses the spec named `refuse` and gives each layer ceilings of its own
    where `own_ceilings` (as SCAMP-5's peak is its kernels' own)."""

    def __init__(self, refuse: str = "", own_ceilings: bool = False) -> None:
        self.refuse, self.own = refuse, own_ceilings

    def cost(self, source: str, target: Any, budgets: Budgets) -> Costed:
        from core.nets.source import network_layers

        (conv,) = network_layers(source)[1]
        if conv.name == self.refuse:
            raise InputError(f"{conv.name} is too wide", "target.width")
        c = Ceilings(peak_macs_per_s=1e9 * (conv.out_ch if self.own else 1), bandwidth_bytes_per_s=1e9)
        return Costed(CostRecord.of("fake", c, [layer_cost(conv.name, conv.macs, c, 0.0, time_s=1.0,
                                                           offchip_bytes=1e3, energy_j=None)]), "fake")


@pytest.mark.parametrize("fake, reasons, row_reason", [
    (_PerLayer(refuse="wide"), ["target.width: wide is too wide", None], None),
    (_PerLayer(own_ceilings=True), [None, "costed alone it runs, but its limits come from ceilings of its own"],
     None),
    (_PerLayer(refuse="wide"), None, "target.width: wide is too wide"),
])
def test_a_refused_spec_or_one_with_ceilings_of_its_own_is_a_layer_not_run(
        fake: _PerLayer, reasons: list[str | None] | None, row_reason: str | None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comparison, "costings", lambda: {"dataflow": Costing("dataflow", "fake", fake.cost)})
    specs = SPECS if reasons is not None else SPECS[:1]
    row = cost_part(layers_source(specs), targets_of_kinds(["dataflow"])[0], Budgets())
    assert row.reason == row_reason and not row.failed
    if reasons is not None:
        got = [l.reason for l in row.record.layers]
        assert [g if g is None else g[:len(w or "")] for g, w in zip(got, reasons)] == reasons
        assert row.record.problems() == [] and sum(l.macs for l in row.record.layers) == sum(_macs(SPECS))


def test_layer_files_are_content_addressed_and_written_again_when_missing(cache: Path) -> None:
    a, b = spec_shapes(layers_source([SPECS[0], SPECS[0].replace("Co=32", "Co=8").replace("wide", "thin")]))
    path = Path(layer_onnx(a))
    assert path.parent == cache / "layers" and layer_onnx(a) == str(path) and layer_onnx(b) != str(path)
    assert Path(validation_of(str(path))).is_file() and validation_of("elsewhere/conv-x.onnx") == ""
    path.unlink()
    Path(validation_of(str(path))).unlink()
    row = cost_part(layers_source([SPECS[0]]), targets_of_kinds(["dataflow"])[0], Budgets())
    assert row.reason is None and path.is_file()


@pytest.mark.parametrize("specs, words", [
    ([], "no layer given"),
    (["Ci=3,Co=4;Ci=5"], "cannot hold ';'"),
])
def test_a_source_needs_specs_without_the_separator(specs: list[str], words: str) -> None:
    with pytest.raises(InputError, match=words):
        layers_source(specs)


def test_parts_are_reused_and_the_comparison_reopens_from_a_session() -> None:
    source = layers_source(SPECS)
    items = targets_of_kinds(["dataflow", "cpu"])
    project = Project()
    first = compare(source, items, project=project)
    assert first.reused == 0 and all(r.reason is None for r in first.rows)
    run = project.run(first.rows[0].run_id)
    assert run.workload is not None and run.workload.value == ConvLayers(SPECS)     # the specs, not a file
    back = session.from_json(json.loads(json.dumps(session.to_json(project))))
    again = recorded(back, first.id)
    assert again is not None and again.source == source and again.macs == first.macs
    assert [(r.target, r.record.to_json()) for r in again.rows] == [(r.target, r.record.to_json()) for r in first.rows]
    assert compare(source, items, project=back).reused == 2
    # a part's setup comes back in its tab (the Runs table's "Edit setup") and is its own answer
    from core.run_controller import RunController, thread_launcher

    back.restore_setup(first.rows[0].run_id)
    assert back.request("cost").workload == ConvLayers(SPECS)
    controller = RunController(back, thread_launcher)
    job = controller.start("cost", reuse=True)
    assert job.reused and job.run_id == first.rows[0].run_id and not controller.busy()


# ---------------------------------------------------------------- the command line
def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from core.cli import build_parser, dispatch

    try:
        rc = dispatch(build_parser().parse_args(argv))
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return int(rc or 0), out, err


@pytest.mark.parametrize("argv, words", [
    (["targets", "--layer", "Ci=16,Hi=28,Wi=28,Co=32,kernel=3,foo=1"], "error: --layer: unknown key 'foo'"),
    (["targets", "--layer", SPECS[0], "--layer", "Ci=x,Co=3"], "error: --layer #2: Ci must be an integer"),
    (["targets", "--layer", "Ci=16,Hi=2,Wi=2,Co=32,kernel=5"], "error: --layer layer: kernel height 5"),
    (["targets", "--layer", "Ci=16,Co=32,batch=4"], "error: --layer: batch must be 1"),
    (["cost", "--layer", "Ci=16,Co=32,stride=0"], "--layer"),
])
def test_a_bad_spec_is_one_line_naming_layer_and_exit_2(argv: list[str], words: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli(argv, capsys)
    assert rc == 2 and out == "" and words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_network_and_layer_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli(["targets", "--network", "lenet5", "--layer", SPECS[0]], capsys)
    assert rc == 2 and out == "" and "--layer: not allowed with argument --network" in err


def test_targets_and_cost_take_layers(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _cli(["targets", *sum((["--layer", s] for s in SPECS), []), "--targets", "dataflow,cpu", "--json",
                       "--quiet"], capsys)
    assert rc == 0
    d = json.loads(out)
    assert d["source"] == layers_source(SPECS) and d["macs"] == sum(_macs(SPECS)) and d["layers"] == 2
    for r in d["rows"]:
        record = CostRecord.from_json(r["record"])
        assert [l.name for l in record.layers] == ["wide", "fc"] and record.total.macs == d["macs"]
    rc, out, _ = _cli(["cost", "--layer", SPECS[0], "--target", "cpu"], capsys)
    assert rc == 0 and "wide" in out and "total" in out


# ---------------------------------------------------------------- the Targets tab
@pytest.fixture
def window(qtbot):
    """A main window on the starter project with two cheap targets only."""
    from tests.window_helpers import comparison_window

    with comparison_window(qtbot, lambda e: e.kind in ("dataflow", "cpu")) as w:
        yield w


def test_the_targets_tab_compares_a_conv_layers_workload(window, qtbot) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    window.project.add("workloads", "Two layers", ConvLayers(list(SPECS)))
    panel = window.targets_panel
    window.tabs.setCurrentWidget(panel)
    panel.network.setFocus()
    QTest.keyClicks(panel.network, "Two layers")
    assert panel.network.currentText() == "Two layers (conv layers)"
    assert panel.network.currentData() == layers_source(SPECS)
    QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=HANG_MS)
    c = panel.comparison
    names = [e.name for e in window.project.entries("targets")]
    assert [r.target for r in c.rows] == names and panel.table.rowCount() == len(names)
    for r in c.rows:
        assert r.reason is None and [l.name for l in r.record.layers] == ["wide", "fc"]
        assert sum(l.macs for l in r.record.layers) == sum(_macs(SPECS))
    assert "2 conv layers" in panel.status.text()
    # each part a run of the project whose workload is the conv-layers one
    assert all(window.project.run(r.run_id).workload.value == ConvLayers(SPECS) for r in c.rows)
    # a double-click on a target's row opens its part's run in the Target cost tab, one row per spec
    rect = panel.table.visualItemRect(panel.table.item(0, 0))
    QTest.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    QTest.mouseDClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    target_cost = window.panels["cost"]
    assert window.tabs.currentWidget().panel is target_cost and window.project.shown("cost").id == c.rows[0].run_id
    assert target_cost.layers.rowCount() == len(SPECS) + 1        # and the total


def test_a_session_opened_shows_its_layers_comparison_with_its_workload_picked(qtbot) -> None:
    from gui.targets_panel import TargetsPanel

    project = Project()
    project.add("workloads", "Two layers", ConvLayers(list(SPECS)))
    c = compare(layers_source(SPECS), targets_of_kinds(["cpu"]), project=project)
    opened = Project()
    panel = TargetsPanel(opened)
    qtbot.addWidget(panel)
    opened.replace_with(session.from_json(session.to_json(project)))     # what opening the session does
    assert panel.comparison is not None and panel.comparison.id == c.id and panel.table.rowCount() == 1
    assert panel.network.currentData() == layers_source(SPECS) and panel.export_table_button.isEnabled()
    panel.shutdown()
