import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import dataclasses
import json

import pytest

from core.bound.result import BoundResult
from core.bound.engine import ENGINE
from core.bound.geometry import interior_block, tile_block
from core.jobs import CancelToken, FinalResult
from core.workload import CnnNetwork, CnnSet, DataflowTarget
from gui.plotting import table_to_csv
from panel_context import FakeContext


@pytest.fixture
def panel(qtbot):
    from gui.panels.bound import PANEL

    ctx = FakeContext()
    ctx.use("bound", "workloads", "AlexNet", CnnNetwork("alexnet"))
    ctx.use("bound", "targets", "64 KiB", DataflowTarget(memory_bytes=64 * 1024))
    p = PANEL(ENGINE, ctx)
    qtbot.addWidget(p)
    return p


@pytest.fixture(scope="module")
def result():
    settings = {"sweep": True, "dataflows": ["ws", "rs"]}
    events = list(ENGINE.run(_request(CnnNetwork("alexnet"), settings), CancelToken()))
    assert isinstance(events[-1], FinalResult) and isinstance(events[-1].data, BoundResult)
    stored = json.loads(json.dumps(events[-1].data.to_json()))             # as a session stores it
    return BoundResult.from_json(stored), events[:-1]


def _request(workload, settings):
    from core.engine import JobRequest

    return JobRequest(workload, DataflowTarget(memory_bytes=64 * 1024), settings)



def test_every_setting_survives_project_widgets_project_and_undo(panel):
    project = panel.project
    s = {"batch": 1_000_000, "dataflows": ["rs", "ws"], "sweep": False, "fusion": False, "objective": "edp"}
    assert set(s) == set(ENGINE.default_settings())    # memory S and word size are the target's, not settings
    project.replace_settings("bound", s)
    assert project.settings("bound") == s              # shown, never written back
    shown = panel.binding.shown()
    assert shown["batch"] == 1_000_000
    assert sorted(shown["dataflows"]) == ["rs", "ws"] and shown["sweep"] is False and shown["fusion"] is False
    assert shown["objective"] == "edp" and panel.objective.currentText() == "least energy x latency"
    assert panel.batch.value() == 1_000_000            # the schema's range: not clamped
    panel.flow_boxes["is"].setChecked(True)
    assert project.settings("bound")["dataflows"] == ["ws", "is", "rs"]
    project.undo()
    assert project.settings("bound") == s and not panel.flow_boxes["is"].isChecked()
    project.redo()
    assert "is" in project.settings("bound")["dataflows"] and panel.flow_boxes["is"].isChecked()
    project.replace_settings("bound", ENGINE.default_settings())
    assert panel.batch.text() == "from workload"


def test_the_tab_runs_exactly_its_chosen_network(panel):
    """Defect: with three networks ticked in the window and 'VGG-16' in the tab's own picker, only
    SceneLabelCNN was analysed (the log said so). Now the tab's workload is one CNN chosen from the
    library, and that is what the request carries and the result names."""
    project = panel.project
    assert any(e.kind == "cnn_set" for e in project.workloads)          # the starter's three-CNN set is there
    assert all(e.kind in ("cnn", "conv_layers") for e in project.fitting("bound", "workloads"))
    vgg = next(e for e in project.workloads if e.value == CnnNetwork("vgg16"))
    project.choose("bound", "workloads", vgg.id)
    req = project.request("bound")
    assert req.workload == CnnNetwork("vgg16")
    quick = dataclasses.replace(req, settings={**req.settings, "sweep": False, "dataflows": []})
    r = list(ENGINE.run(quick, CancelToken()))[-1].data
    assert isinstance(r, BoundResult)
    assert (r.source.kind, r.source.name, r.source.path) == ("network", "vgg16", None) and r.source.title
    assert len(r.layers) == 16
    # a CNN set cannot be chosen silently: the tab says it does not fit
    cnn_set = next(e for e in project.workloads if e.kind == "cnn_set")
    project.choose("bound", "workloads", cnn_set.id)
    assert "runs CNN or Convolution layers" in project.problem("bound", "workloads")


def test_the_panel_never_rewrites_its_settings(panel, result):
    """Defect: the panel turned source 'workload' into 'network' when the window had no CNN set.
    The source is now the workload, and showing settings or results writes nothing to the project."""
    r, _ = result
    before = panel.project.settings("bound")
    panel.project.mark_saved()
    panel.show_result(r)
    panel.select_layer(2)
    panel.tile_block.setCurrentIndex(1)
    assert panel.project.settings("bound") == before and not panel.project.modified


def test_panel_runs_a_real_result_and_redraws_from_json(panel, result):
    r, live = result
    panel.job_started()
    panel.handle_events(live)
    assert panel._live_sweep and "optimal" in panel._live_sweep
    panel.show_result(r)
    n = len(r.layers)
    assert panel.table.rowCount() == n + 1
    csv = table_to_csv(panel.table)
    assert csv.splitlines()[0].startswith("layer,R,proven,paper (asymptotic)") and "conv1" in csv
    names = {item.name() for item in panel.sweep_plot.getPlotItem().listDataItems()}
    assert {"proven", "paper (asymptotic)"} <= names                  # the two bounds, labelled apart
    assert panel.tile_layer.count() == n
    t = r.layers[0].optimal.tiling
    sh = r.layers[0].shape
    g = panel.tile_view.geometry_of()
    assert g == tile_block(sh, t, (0, 0)) and g["out"] == (0, t.y, 0, t.x)
    assert g["in"][1] - g["in"][0] == (t.y - 1) * sh.stride + sh.Hk     # block plus halo
    panel.tile_block.setCurrentIndex(1)
    assert panel.tile_view.block == interior_block(sh, t) and panel.tile_view.geometry_of()["out"][0] > 0
    panel.tile_view.grab()            # paints without error
    assert len(panel.sweep_plot.getPlotItem().listDataItems()) >= 3
    panel.show_result(None)
    assert panel.table.rowCount() == 0


def test_a_layer_row_or_bar_selects_its_tiling(panel, result):
    r, _ = result
    panel.show_result(r)
    layers = r.layers
    # a click on a table row: that layer's tile, shown
    panel.table.cellClicked.emit(3, 5)
    assert panel.tile_layer.currentIndex() == 3 and panel.tabs.currentWidget() is panel.tile_page
    assert panel.tile_view.layer is layers[3] and layers[3].name in panel.tile_info.text()
    assert panel.bar_mark.getRegion() == pytest.approx((2.55, 3.45))
    # moving through the rows with the keyboard follows in the Tile tab without switching to it
    panel.tabs.setCurrentIndex(0)
    panel.table.setCurrentCell(1, 0)
    assert panel.tile_layer.currentIndex() == 1 and panel.tabs.currentIndex() == 0
    # the total row is no layer
    panel.table.cellClicked.emit(len(layers), 0)
    assert panel.tile_layer.currentIndex() == 1
    # a click on the per-layer bars: the layer at that x (bars of layer i are centred on i)
    assert panel.layer_at(4.3) == 4 and panel.layer_at(4.5) is None and panel.layer_at(-1) is None
    panel.bar_clicked_at(4.2)
    assert panel.tile_layer.currentIndex() == 4 and panel.table.currentRow() == 4
    assert panel.tabs.currentWidget() is panel.tile_page
    # choosing a layer in the Tile tab selects its row
    panel.tile_layer.setCurrentIndex(2)
    assert panel.table.currentRow() == 2
    # a stored run opened on a layer (the runs view's focus)
    run = panel.context.add_finished_run("bound", r.to_json())
    panel.show_run(run, layer=5)
    assert panel.tile_layer.currentIndex() == 5


def test_a_streaming_tiling_is_named_and_drawn_as_one(panel, result):
    """AlexNet conv2 at 64 KiB streams its input tile by rows (core.bound.loopnest): the table's loop
    order, the Tile tab's words and its outline of the rows on chip say so; a plain tiling has none."""
    from gui.panels.bound import TABLE_COLUMNS

    r, _ = result
    panel.show_result(r)
    i = next(k for k, l in enumerate(r.layers) if l.name == "conv2")
    assert r.layers[i].optimal.tiling.stream == "P"
    assert panel.table.item(i, TABLE_COLUMNS.index("loop order")).text() == "NPQMC streaming rows"
    panel.table.cellClicked.emit(i, 0)
    assert "input tiles stream through by output rows" in panel.tile_info.text()
    outline, live = panel.tile_view.streaming_lines()
    assert live == 5 and outline == (0, 3, -2, 29)          # output row 0 of a 5x5 pad-2 window reads rows 0-2
    plain = next(k for k, l in enumerate(r.layers) if not l.optimal.tiling.stream)
    panel.table.cellClicked.emit(plain, 0)
    assert panel.tile_view.streaming_lines() is None and "stream" not in panel.tile_info.text()


def test_tile_blocks_read_what_the_traffic_model_counts():
    """tile_block (what the Tile tab draws) and Axis.spans (what the traffic model sums) agree: the
    rows and columns read lie in "in_clipped" and number what the model counts (fewer than its
    extent when a stride larger than the kernel skips some)."""
    import random

    from core.bound.geometry import layer_axes
    from core.bound.loopnest import Tiling
    from core.bound.shapes import ConvShape

    rnd = random.Random(3)
    for _ in range(200):
        k, D, P, d = rnd.randint(1, 5), rnd.randint(1, 4), rnd.randint(0, 2), rnd.choice([1, 2, 3])
        try:
            sh = ConvShape("t", 1, 2, rnd.randint(3, 20), rnd.randint(3, 20), 2, k, k, D, P, 1, d).validate()
        except Exception:
            continue
        ty, tx = rnd.randint(1, sh.Ho), rnd.randint(1, sh.Wo)
        ay, ax = layer_axes(sh)
        spans_y, spans_x = ay.spans(ty), ax.spans(tx)
        for by in range(len(spans_y)):
            bx = rnd.randrange(len(spans_x))
            g = tile_block(sh, Tiling(n=1, m=1, c=1, p=ty, q=tx), (by, bx))
            y0, y1, x0, x1 = g["in_clipped"]
            rows, cols = g["rows_read"], g["cols_read"]
            assert (len(rows), len(cols)) == (spans_y[by], spans_x[bx])
            assert all(y0 <= v < y1 for v in rows) and all(x0 <= v < x1 for v in cols)
            if rows:
                assert (rows[0], rows[-1] + 1) == (y0, y1)
            # every row read is touched by a window of the block, and every touched real row is read
            o0, o1 = g["out"][0], g["out"][1]
            touched = {o * D - P + r * d for o in range(o0, o1) for r in range(k)}
            assert set(rows) == {v for v in touched if 0 <= v < sh.Hi}
            assert g["out"][1] - g["out"][0] == min(ty, sh.Ho - by * ty)


def test_cnn_set_is_not_a_bound_workload():
    out = list(ENGINE.run(_request(CnnNetwork("lenet5"), {"sweep": False}), CancelToken()))[-1]
    assert isinstance(out, FinalResult)
    from core.errors import InputError
    from core.jobs import run_foreground

    res = run_foreground(ENGINE.run(_request(CnnSet(["lenet5"]), {"sweep": False}), CancelToken()), quiet=True)
    assert isinstance(res.error, InputError) and res.error.where == "workload"


def test_curves_per_layer_and_network_are_drawn_and_exported(panel, result, tmp_path, monkeypatch):
    """Bound against buffer size (issue 33): the sweep runs from 1 KiB to the largest layer's whole
    working set, each size with every layer's proven bound and optimal traffic; the tab draws the
    network's or one layer's curve and exports all of them as CSV."""
    from core.bound.analysis import curves_csv, working_set_bytes

    r, _ = result
    kib = [row.memory_bytes // 1024 for row in r.sweep]
    assert kib[0] == 1 and kib[-1] * 1024 >= working_set_bytes([l.shape for l in r.layers], r.word_bits)
    assert all(len(row.layers) == len(r.layers) for row in r.sweep)
    for i, l in enumerate(r.layers):
        pts = [row.layers[i] for row in r.sweep]
        assert all(p.optimal is None or p.optimal >= p.reference for p in pts)
        opt = [p.optimal for p in pts if p.optimal is not None]
        assert all(a >= b for a, b in zip(opt, opt[1:]))              # more memory never costs traffic
        assert opt[-1] == pts[-1].reference                            # the whole working set: compulsory
    panel.show_result(r)
    assert panel.curve_of.count() == len(r.layers) + 1
    panel.curve_of.setCurrentIndex(1)
    names = {item.name() for item in panel.sweep_plot.getPlotItem().listDataItems()}
    assert names == {"proven", "optimal"}
    text = curves_csv(r)
    lines = text.splitlines()
    assert lines[0].startswith("curve,memory (bytes),memory (words),proven bound")
    assert len(lines) == 1 + len(r.sweep) * (1 + len(r.layers))
    assert any(line.startswith(f"{r.layers[0].name},1024,") for line in lines)
    out = tmp_path / "curves.csv"
    monkeypatch.setattr("gui.panels.bound.QFileDialog.getSaveFileName", lambda *a, **k: (str(out), ""))
    panel.export_curves.click()
    assert out.read_text() == text


def test_the_table_tab_shows_the_fusion_plan(panel, qtbot):
    """Issue 33, bullet 4: the fused chains and their saving appear under the table; without a plan
    (fusion plan off) nothing is said."""
    from core.jobs import CancelToken
    from core.workload import ConvLayers

    layers = ConvLayers(["name=a,Ci=4,Hi=12,Wi=12,Co=8,kernel=3,pad=1", "name=b,Ci=8,Hi=12,Wi=12,Co=8,kernel=3,pad=1"])
    r = list(ENGINE.run(_request(layers, {"sweep": False}), CancelToken()))[-1].data
    assert isinstance(r, BoundResult) and r.fusion is not None and r.fusion.fused_chains == 1
    assert BoundResult.from_json(r.to_json()).fusion == r.fusion          # stored and read back
    panel.show_result(r)
    text = panel.fusion_info.text()
    assert "a + b" in text and "saved" in text and "proven bound" in text
    off = list(ENGINE.run(_request(layers, {"sweep": False, "fusion": False}), CancelToken()))[-1].data
    assert off.fusion is None and "fusion" not in off.to_json()
    panel.show_result(off)
    assert panel.fusion_info.text() == ""
