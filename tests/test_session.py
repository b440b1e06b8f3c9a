"""Session files (format 2): round trip, atomic writes with .bak, refusal of every kind of bad file
with the field's path, typed results checked on load, and migration of kept format-1 files."""

import json
import re
from pathlib import Path

import pytest

from core import session as sessions
from core.errors import SessionError
from core.jobs import JobOutcome, MetricPoint, PartialResult
from core.project import Project
from core.workload import CnnSet, DataflowTarget, Kernel, KernelSet, Scamp5Target

V1_FILES = sorted((Path(__file__).parent / "data" / "sessions_v1").glob("*.dfx"))


def _sample(demo: bool = True) -> Project:
    p = Project.starter()
    ks = KernelSet("mine", 16, [Kernel("g", [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]),
                                Kernel("z", [[[0.0, 1.0], [1.0, 0.0]], [[2.0, 0.5], [0.0, -1.0]]])])
    p.add("workloads", "mine", ks)
    p.add("targets", "big SCAMP", Scamp5Target(registers=8, array_size=128))
    if demo:
        p.set_setting("demo", "steps", 7)
        run = p.start_run("demo")
        p.record(run.id, [MetricPoint("sum", 1, 1), PartialResult("plan", {"a": [1, 2.5]})])
        p.finish_run(run.id, JobOutcome(result={"steps": 7, "sum": 21, "nested": {"a": [1, 2.5]}}))
        failed = p.start_run("demo")
        p.record(failed.id, [MetricPoint("sum", 0, 0)])
        p.finish_run(failed.id, JobOutcome(error=RuntimeError("boom")))
    p.view["current_engine"] = "demo" if demo else None
    return p


def _state(p: Project) -> dict:
    doc = sessions.to_json(p)
    doc.pop("saved_at")
    return doc


def test_round_trip_preserves_everything(tmp_path, demo_engine):
    p = _sample()
    path = tmp_path / "a.dfx"
    sessions.save(p, path)
    back = sessions.load(path)
    assert _state(back) == _state(p)
    assert [r.status for r in back.runs] == ["finished", "failed"]
    assert back.runs[1].series == {"main": {"sum": [[0.0, 0.0]]}} and back.runs[1].error == "RuntimeError: boom"
    doc = json.loads(path.read_text())
    assert doc["format"] == sessions.FORMAT and doc["version"] == sessions.VERSION == 2


def test_cnn_set_and_dataflow_round_trip(tmp_path):
    p = Project()
    p.add("workloads", "two", CnnSet(["lenet5", "vgg16"], 2, ["net.onnx"]))
    p.add("targets", "acc", DataflowTarget(131072, 8, 12, 14))
    sessions.save(p, tmp_path / "b.dfx")
    back = sessions.load(tmp_path / "b.dfx")
    assert back.workloads[0].value == CnnSet(["lenet5", "vgg16"], 2, ["net.onnx"])
    assert back.targets[0].value == DataflowTarget(131072, 8, 12, 14)


def test_save_is_atomic_and_keeps_backup(tmp_path, demo_engine):
    path = tmp_path / "s.dfx"
    first = _sample()
    sessions.save(first, path)
    old = path.read_text()
    second = _sample()
    second.set_setting("demo", "steps", 9)
    sessions.save(second, path)
    assert (tmp_path / "s.dfx.bak").read_text() == old
    assert sessions.load(path).choice("demo").settings["steps"] == 9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.dfx", "s.dfx.bak"]   # no temp files left


def test_failed_write_leaves_old_file(tmp_path, demo_engine):
    path = tmp_path / "s.dfx"
    sessions.save(_sample(), path)
    before = path.read_bytes()
    broken = _sample()
    broken.runs[0].result = {"x": float("nan")}     # not valid JSON: the write must fail
    with pytest.raises(ValueError):
        sessions.save(broken, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.dfx"]


def _write(tmp_path, doc) -> str:
    p = tmp_path / "bad.dfx"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def _good_doc() -> dict:
    return sessions.to_json(_sample())


def _wl(d, name):
    return next(i for i in d["library"]["workloads"] if i["name"] == name)


def _tg(d, name):
    return next(i for i in d["library"]["targets"] if i["name"] == name)


@pytest.mark.parametrize("mutate, where, words", [
    (lambda d: d.update(version=99), "session.version", "newer"),
    (lambda d: d.update(version="1"), "session.version", "integer"),
    (lambda d: d.update(format="something-else"), "session.format", "not a Dataflow Explorer session"),
    (lambda d: d.pop("library"), "session", "library"),
    (lambda d: _tg(d, "big SCAMP")["value"].update(registers="six"), "session.library.targets[4].value.registers",
     "expected an integer"),
    (lambda d: _tg(d, "big SCAMP")["value"].update(registers=1), "session.library.targets[4].value.registers",
     "2..26"),
    (lambda d: _wl(d, "mine")["value"]["kernels"][0]["values"][1].append(5),
     "session.library.workloads[6].value.kernels[0].values", "ragged"),
    (lambda d: _wl(d, "mine")["value"]["kernels"][0]["values"][0].__setitem__(0, "x"),
     "session.library.workloads[6].value.kernels[0].values", "not a number"),
    (lambda d: _wl(d, "mine")["value"].update(kind="teapot"), "session.library.workloads[6].value.kind",
     "unknown workload kind"),
    (lambda d: d["library"]["workloads"][1].update(id="w1"), "session.library.workloads[1].id", "second item"),
    (lambda d: d["engines"].update(nosuch={"settings": {}}), "session.engines.nosuch", "unknown engine"),
    (lambda d: d["engines"]["demo"]["settings"].update(steps="many"), "session.engines.demo.settings.steps",
     "not of type"),
    (lambda d: d["engines"]["cain"].update(workload="w99"), "session.engines.cain.workload", "no workload"),
    (lambda d: d["runs"][0].update(result=[1, 2]), "session.runs[0].result", "not of type"),
    (lambda d: d["runs"][0].update(status="done"), "session.runs[0].status", "is not one of"),
    (lambda d: d["runs"][0].update(result=None), "session.runs[0].result", "no result"),
    (lambda d: d["runs"][1].update(id="r1"), "session.runs[1].id", "second run"),
    (lambda d: d["runs"][0].update(workload={"id": "w1", "name": "x", "value": {"kind": "teapot"}}), "session.runs[0].workload.value.kind",
     "unknown workload kind"),
    (lambda d: d.update(extra=1), "session", "extra"),
])
def test_bad_files_are_refused_with_field_path(tmp_path, demo_engine, mutate, where, words):
    doc = _good_doc()
    mutate(doc)
    with pytest.raises(SessionError) as info:
        sessions.load(_write(tmp_path, doc))
    assert info.value.where == where
    assert words in info.value.message


def test_stored_result_is_checked_against_its_engine_type(tmp_path):
    """A stored result missing a field is refused on load (and by `session validate`), not at drawing."""
    doc = json.loads((Path(__file__).parent / "data" / "sessions_v1" / "example_session.dfx").read_text())
    del doc["engines"]["cain"]["result"]["program"]
    with pytest.raises(SessionError) as info:
        sessions.load(_write(tmp_path, doc))
    assert info.value.where.startswith("session.runs[0].result") and "program" in str(info.value)


def test_truncated_and_malformed_files(tmp_path, demo_engine):
    text = json.dumps(_good_doc(), indent=1)
    with pytest.raises(SessionError) as info:
        sessions.load(_write(tmp_path, text[: len(text) // 2]))
    assert "truncated" in info.value.message
    assert re.fullmatch(r".*bad\.dfx:\d+:\d+", info.value.where)
    with pytest.raises(SessionError) as info:
        sessions.load(_write(tmp_path, "{ not json"))
    assert "not valid JSON" in info.value.message and ":1:" in info.value.where
    with pytest.raises(SessionError, match="JSON object"):
        sessions.load(_write(tmp_path, "[1, 2]"))
    with pytest.raises(SessionError, match="cannot read"):
        sessions.load(tmp_path / "missing.dfx")
    p = tmp_path / "bin.dfx"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SessionError, match="UTF-8"):
        sessions.load(p)


def test_migration_path(tmp_path, demo_engine, monkeypatch):
    """A version-2 file read by a (pretend) version-3 program goes through MIGRATIONS[2]."""
    doc = _good_doc()
    calls = []

    def up(d):
        calls.append(d["version"])
        return {**d, "version": 3}

    monkeypatch.setattr(sessions, "VERSION", 3)
    monkeypatch.setitem(sessions.MIGRATIONS, 2, up)
    p = sessions.load(_write(tmp_path, doc))
    assert calls == [2] and p.choice("demo").settings == {"steps": 7}


@pytest.mark.parametrize("path", V1_FILES, ids=lambda p: p.name)
def test_kept_v1_files_open(path):
    """Every kept format-1 file opens: its workload and target are in the library, its results are
    finished runs, and each engine with a workload or target kind has a fitting choice."""
    doc = json.loads(path.read_text())
    p = sessions.load(path)
    assert any(e.value.to_json() == doc["workload"] for e in p.workloads)
    assert any(e.value.to_json() == doc["target"] for e in p.targets)
    stored = [n for n, st in doc["engines"].items() if st.get("result") is not None]
    assert [r.engine for r in p.runs] == stored and all(r.status == "finished" for r in p.runs)
    for name in p.engines:
        for lib in ("workloads", "targets"):
            if p.fitting(name, lib):
                assert p.chosen(name, lib) is not None, (name, lib)
    assert p.view["current_engine"] == doc.get("current_engine")


def test_example_session_migrates_to_its_runs():
    p = sessions.load(Path(__file__).parent / "data" / "sessions_v1" / "example_session.dfx")
    cain = p.runs_of("cain")[0]
    assert cain.workload["name"] == "AnalogNet2" and cain.result["length"] == len(cain.result["program"])
    assert cain.headline and next(iter(cain.headline))      # computed from the typed result
    again = sessions.from_json(json.loads(json.dumps(sessions.to_json(p))))
    assert _state(again) == _state(p)


def test_v1_migration_builds_library_from_engine_settings(demo_engine):
    doc = {"format": sessions.FORMAT, "version": 1, "workload": {"kind": "fpsp_filter", "preset": "sobel"},
           "target": {"kind": "scamp5", "registers": 6, "array_size": 256}, "current_engine": "demo",
           "engines": {"demo": {"settings": {"steps": 3}, "result": {"sum": 3}, "finished_at": "2026-01-01T00:00:00"}}}
    p = sessions.from_json(doc)
    assert [e.value.kind for e in p.workloads][0] == "fpsp_filter"
    assert p.runs[0].engine == "demo" and p.runs[0].finished_at == "2026-01-01T00:00:00"
    assert p.choice("demo").settings == {"steps": 3}
    # engines whose kinds the session had nothing for got a starter item they can run
    assert p.problem("fcnnx", "workloads") is None and p.problem("fcnnx", "targets") is None


def test_atomic_write_keeps_usual_permissions(tmp_path):
    import os
    import stat

    from core.atomic import atomic_write_text

    fresh = tmp_path / "new.dfx"
    atomic_write_text(fresh, "{}")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
    fresh.chmod(0o640)
    atomic_write_text(fresh, "{}", keep_backup=True)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640


def test_kept_v1_engine_settings_become_library_choices():
    from core.workload import (CnnNetwork, ConvLayers, FpgaTarget, FpspFilter, MeritTransformWorkload,
                               MobileSocTarget)

    p = sessions.load(Path(__file__).parent / "data" / "sessions_v1" / "cnn_workbench.dfx")

    def value(engine, lib):
        return p.chosen(engine, lib).value

    assert value("bound", "workloads") == CnnNetwork("alexnet")
    assert value("merit", "workloads") == MeritTransformWorkload("gemm")
    assert value("fcnnx", "workloads").cnns == ["zfnet", "vgg16"]
    assert value("fcnnx", "targets") == FpgaTarget("zcu102", 2.5)
    assert value("cappuccino", "workloads") == CnnNetwork(onnx_path="models/small.onnx", validation_path="val.npz")
    assert value("cain", "targets").registers == 8 and p.settings("cain")["seed_share"] == 0.4
    assert p.settings("bound")["memory_bytes"] == 131072 and "source" not in p.settings("bound")
    assert p.problem("cappuccino", "workloads")          # the ONNX file is not here: the tab says so

    q = sessions.load(Path(__file__).parent / "data" / "sessions_v1" / "kernels_on_mobile.dfx")
    assert q.chosen("simulate", "workloads").value == FpspFilter("sobel")
    assert q.chosen("bound", "workloads").value == ConvLayers(["name=c1,Ci=16,Hi=28,Wi=28,Co=32,kernel=3,pad=1"])
    assert q.chosen("merit", "workloads").value.kind == "kernels"        # the session's own kernel set
    assert q.chosen("cappuccino", "targets").value == MobileSocTarget(4, 8)
