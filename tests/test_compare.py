"""core.compare: what the runs table shows of a run, and how runs compare (on hand-made runs)."""

from __future__ import annotations

from core.compare import RUN_COLUMNS, common_plots, headline_rows, plots_reason, run_row, settings_diff, settings_text
from core.project import Run, Snapshot
from core.workload import FpspFilter, Scamp5Target


def snap(entry_id: str, name: str, value) -> Snapshot:
    return Snapshot(entry_id, name, value)


def make_run(run_id: str, engine: str = "demo", settings: dict | None = None, **kw) -> Run:
    return Run(id=run_id, engine=engine, settings={"steps": 10} if settings is None else settings,
               workload=kw.pop("workload", None), target=kw.pop("target", None), **kw)


def by_key(rows):
    return {r.key: r for r in rows}


# ---------------------------------------------------------------- run_row
def test_run_row_shows_changed_settings_status_and_headline(demo_engine):
    run = make_run("r3", settings={"steps": 10, "delay": 0.25, "fail_at": 7, "label": "x" * 80},
                   status="cancelled", series={"main": {"sum": [[0, 0]]}}, duration_s=1.25,
                   headline={"sum": 45, "steps": 10}, note="first try",
                   workload=snap("w1", "AnalogNet2", FpspFilter("analognet2")))
    row = run_row(run)
    assert set(k for k, _ in RUN_COLUMNS) <= set(row)
    assert row["id"] == "r3" and row["engine_title"] == "Demo" and row["engine"] == "demo"
    assert row["workload"] == "AnalogNet2" and row["target"] == ""
    # steps is the demo's default: not a key setting; the rest shortest first, cut to ~60 characters,
    # named in words (a schema title where there is one), never by key (issue 30)
    assert row["settings"].startswith("Fail at: 7; Delay: 0.25; Label: xxx")
    assert "steps" not in row["settings"].lower()
    assert len(row["settings"]) <= 60 and row["settings"].endswith("…")
    assert row["settings_full"].endswith("x" * 80)
    assert row["status"] == "cancelled, partial" and row["state"] == "cancelled"
    assert (row["metric"], row["value"]) == ("sum", 45)
    assert row["duration_s"] == 1.25 and row["note"] == "first try"


def test_run_row_of_an_unknown_engine_and_a_plain_failure():
    run = make_run("r1", engine="gone", settings={"a": 1}, status="failed", error="boom")
    row = run_row(run)
    assert row["engine_title"] == "gone"
    assert row["settings"] == "A: 1"           # no defaults known: every setting is a key setting
    assert row["status"] == "failed" and row["error"] == "boom"
    assert row["metric"] == "" and row["value"] is None


def test_settings_text_is_empty_on_defaults(demo_engine):
    assert settings_text(make_run("r1")) == ""


# ---------------------------------------------------------------- settings_diff
def test_settings_diff_finds_differing_and_absent_keys(demo_engine):
    a = make_run("r1", settings={"steps": 10, "delay": 0.0, "flag": True})
    b = make_run("r2", settings={"steps": 12, "delay": 0, "flag": 1, "fail_at": 3})
    rows = by_key(settings_diff([a, b]))
    assert list(rows)[:2] == ["workload", "target"]
    assert "engine" not in rows                       # one engine: no engine row
    assert rows["steps"].values == [10, 12] and rows["steps"].differs
    assert rows["delay"].values == [0.0, 0] and not rows["delay"].differs     # 0 and 0.0 are the same number
    assert rows["flag"].differs                       # True is not 1 in JSON
    assert rows["fail_at"].values == [None, 3] and rows["fail_at"].absent == [True, False]
    assert rows["fail_at"].differs


def test_settings_diff_absent_differs_from_null(demo_engine):
    rows = by_key(settings_diff([make_run("r1", settings={"x": None}), make_run("r2", settings={})]))
    assert rows["x"].values == [None, None] and rows["x"].differs


def test_settings_diff_compares_workload_snapshots_not_names(demo_engine):
    w = snap("w1", "AnalogNet2", FpspFilter("analognet2"))
    edited = snap("w1", "AnalogNet2", FpspFilter("gauss3"))
    t = snap("t1", "SCAMP-5", Scamp5Target())
    rows = by_key(settings_diff([make_run("r1", workload=w, target=t), make_run("r2", workload=w, target=t),
                                 make_run("r3", workload=edited, target=t)]))
    assert rows["workload"].differs and not rows["target"].differs
    assert rows["target"].values == ["SCAMP-5"] * 3
    # same name, different value: the summaries tell them apart
    assert rows["workload"].values[0] != rows["workload"].values[2]
    assert all(v.startswith("AnalogNet2: ") for v in rows["workload"].values)
    same_rows = by_key(settings_diff([make_run("r1", workload=w), make_run("r2", workload=w)]))
    assert same_rows["workload"].values == ["AnalogNet2", "AnalogNet2"] and not same_rows["workload"].differs


def test_settings_diff_of_different_engines_adds_an_engine_row(demo_engine):
    rows = by_key(settings_diff([make_run("r1"), make_run("r2", engine="cain", settings={"time_s": 5.0})]))
    assert rows["engine"].values == ["Demo", "FPSP code search (Cain)"] and rows["engine"].differs
    assert rows["steps"].absent == [False, True] and rows["time_s"].absent == [True, False]


# ---------------------------------------------------------------- headline_rows
def test_headline_rows_are_the_union_of_metrics(demo_engine):
    a = make_run("r1", headline={"length": 21, "nodes": 900}, duration_s=10.0)
    b = make_run("r2", headline={"length": 19, "elapsed_s": 3.5})
    rows = headline_rows([a, b])
    assert [r.key for r in rows] == ["length", "nodes", "elapsed_s", "duration_s"]
    m = by_key(rows)
    assert m["length"].values == [21, 19] and m["length"].differs
    assert m["nodes"].values == [900, None] and m["nodes"].absent == [False, True]
    assert m["duration_s"].values == [10.0, None]
    assert not by_key(headline_rows([a, make_run("r3", headline={"length": 21, "nodes": 900},
                                                  duration_s=10.0)]))["length"].differs


# ---------------------------------------------------------------- common_plots
def test_common_plots_only_where_every_run_has_them(demo_engine):
    a = make_run("r1", series={"main": {"sum": [[0, 0], [1, 1]]}, "extra": {"e": [[0, 5]]}})
    b = make_run("r2", series={"main": {"sum": [[0, 0], [1, 2]], "mean": [[1, 1]]}})
    plots = common_plots([a, b])
    assert list(plots) == ["main"]
    assert plots["main"] == {"r1 · sum": [[0, 0], [1, 1]], "r2 · sum": [[0, 0], [1, 2]], "r2 · mean": [[1, 1]]}
    assert plots_reason([a, b]) is None
    c = make_run("r3", series={"extra": {"e": [[0, 1]]}})
    assert common_plots([a, b, c]) == {}
    assert "no plot in common" in plots_reason([a, b, c])


def test_a_run_without_series_leaves_nothing_to_overlay(demo_engine):
    a = make_run("r1", series={"main": {"sum": [[0, 0]]}})
    empty = make_run("r2", status="failed")
    assert common_plots([a, empty]) == {}
    assert "r2" in plots_reason([a, empty])


def test_different_engines_compare_no_plots(demo_engine):
    a = make_run("r1", series={"main": {"sum": [[0, 0]]}})
    b = make_run("r2", engine="cain", settings={}, series={"main": {"sum": [[0, 0]]}})
    assert common_plots([a, b]) == {}
    assert "different engines" in plots_reason([a, b])
    assert by_key(settings_diff([a, b]))["engine"].differs
