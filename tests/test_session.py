"""Session files: round trip, atomic writes with .bak, and refusal of every kind of bad file."""

import json
import re

import pytest

from core import session as sessions
from core.errors import SessionError
from core.workload import CnnSet, DataflowTarget, Kernel, KernelSet, Scamp5Target


def _sample(demo: bool = True) -> sessions.Session:
    ks = KernelSet("mine", 16, [Kernel("g", [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]),
                                Kernel("z", [[[0.0, 1.0], [1.0, 0.0]], [[2.0, 0.5], [0.0, -1.0]]])])
    engines = {"demo": sessions.EngineState({"steps": 7}, {"steps": 7, "sum": 21, "nested": {"a": [1, 2.5]}},
                                            "2026-11-22T00:00:00+00:00")} if demo else {}
    return sessions.Session(ks, Scamp5Target(registers=8, array_size=128), engines, "demo" if demo else None)


def test_round_trip_preserves_everything(tmp_path, demo_engine):
    s = _sample()
    path = tmp_path / "a.dfx"
    sessions.save(s, path)
    back = sessions.load(path)
    assert back == s
    doc = json.loads(path.read_text())
    assert doc["format"] == sessions.FORMAT and doc["version"] == sessions.VERSION


def test_cnn_set_and_dataflow_round_trip(tmp_path):
    from core.nets import zoo

    names = zoo.names()[:2]
    if not names:
        pytest.skip("model zoo is empty")
    s = sessions.Session(CnnSet(names, 2), DataflowTarget(131072, 8, 12, 14), {}, None)
    sessions.save(s, tmp_path / "b.dfx")
    assert sessions.load(tmp_path / "b.dfx") == s


def test_save_is_atomic_and_keeps_backup(tmp_path, demo_engine):
    path = tmp_path / "s.dfx"
    first = _sample()
    sessions.save(first, path)
    old = path.read_text()
    second = _sample()
    second.engines["demo"].settings["steps"] = 9
    sessions.save(second, path)
    assert (tmp_path / "s.dfx.bak").read_text() == old
    assert sessions.load(path).engines["demo"].settings["steps"] == 9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.dfx", "s.dfx.bak"]   # no temp files left


def test_failed_write_leaves_old_file(tmp_path, demo_engine):
    path = tmp_path / "s.dfx"
    sessions.save(_sample(), path)
    before = path.read_bytes()
    broken = _sample()
    broken.engines["demo"].result = {"x": float("nan")}     # not valid JSON: the write must fail
    with pytest.raises(ValueError):
        sessions.save(broken, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.dfx"]


def _write(tmp_path, doc) -> str:
    p = tmp_path / "bad.dfx"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def _good_doc(demo_engine_present: bool = True) -> dict:
    return sessions.to_json(_sample(demo_engine_present))


@pytest.mark.parametrize("mutate, where, words", [
    (lambda d: d.update(version=99), "session.version", "newer"),
    (lambda d: d.update(version="1"), "session.version", "integer"),
    (lambda d: d.update(format="something-else"), "session.format", "not a Dataflow Explorer session"),
    (lambda d: d.pop("target"), "session", "target"),
    (lambda d: d["target"].update(registers="six"), "session.target.registers", "expected int"),
    (lambda d: d["target"].update(registers=1), "session.target.registers", "at least 2"),
    (lambda d: d["workload"]["kernels"][0]["values"][1].append(5), "session.workload.kernels[0].values", "ragged"),
    (lambda d: d["workload"]["kernels"][0]["values"][0].__setitem__(0, "x"), "session.workload.kernels[0].values",
     "not a number"),
    (lambda d: d["workload"].update(kind="teapot"), "session.workload.kind", "unknown workload kind"),
    (lambda d: d["engines"].update(nosuch={"settings": {}}), "session.engines.nosuch", "unknown engine"),
    (lambda d: d["engines"]["demo"]["settings"].update(steps="many"), "session.engines.demo.settings.steps",
     "not of type"),
    (lambda d: d["engines"]["demo"].update(result=[1, 2]), "session.engines.demo.result", "not of type"),
    (lambda d: d.update(extra=1), "session", "extra"),
])
def test_bad_files_are_refused_with_field_path(tmp_path, demo_engine, mutate, where, words):
    doc = _good_doc()
    mutate(doc)
    with pytest.raises(SessionError) as info:
        sessions.load(_write(tmp_path, doc))
    assert info.value.where == where
    assert words in info.value.message


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
    """A version-1 file read by a (pretend) version-2 program goes through MIGRATIONS[1]."""
    doc = _good_doc()
    calls = []

    def up(d):
        calls.append(d["version"])
        return {**d, "version": 2}

    monkeypatch.setattr(sessions, "VERSION", 2)
    monkeypatch.setitem(sessions.MIGRATIONS, 1, up)
    s = sessions.load(_write(tmp_path, doc))
    assert calls == [1] and s.engines["demo"].settings == {"steps": 7}


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
