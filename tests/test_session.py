"""Session files: round trip, atomic writes with .bak, refusal of every kind of bad file
with the field's path, typed results checked on load, and migration of kept format-1 files."""

import json
import re
from pathlib import Path

import pytest

from core import session as sessions
from core.session import migrations
from core.errors import SessionError
from core.engine import get_engine
from core.jobs import MetricPoint, PartialResult
from core.lifecycle import RunOutcome
from core.project import Project
from core.workload import CnnSet, DataflowTarget, Kernel, KernelSet, Scamp5Target
from tests.demo_engine import DemoBest

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
        p.record(run.id, [MetricPoint("sum", 1, 1), PartialResult("best", DemoBest(sum=1, step=1))])
        result = {"steps": 7, "sum": 21, "nested": {"a": [1, 2.5]}}
        p.finish_run(run.id, RunOutcome.from_json({"status": "finished", "result": result}, get_engine("demo")))
        failed = p.start_run("demo")
        p.record(failed.id, [MetricPoint("sum", 0, 0)])
        p.finish_run(failed.id, RunOutcome.failed(RuntimeError("boom")))
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
    doc = sessions.read_document(path)
    assert doc["format"] == sessions.FORMAT and doc["version"] == sessions.VERSION == 5


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
    old = path.read_bytes()
    second = _sample()
    second.set_setting("demo", "steps", 9)
    sessions.save(second, path)
    assert (tmp_path / "s.dfx.bak").read_bytes() == old
    assert sessions.load(path).choice("demo").settings["steps"] == 9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.dfx", "s.dfx.bak"]   # no temp files left


def test_failed_write_leaves_old_file(tmp_path, demo_engine):
    path = tmp_path / "s.dfx"
    sessions.save(_sample(), path)
    before = path.read_bytes()
    broken = _sample()
    broken.runs[0].result.nested = {"x": float("nan")}      # not valid JSON: the write must fail
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
    (lambda d: _tg(d, "big SCAMP")["value"].update(registers="six"), "session.library.targets[6].value.registers",
     "expected an integer"),
    (lambda d: _tg(d, "big SCAMP")["value"].update(registers=1), "session.library.targets[6].value.registers",
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
    """A current-version file read by a (pretend) next-version program goes through its migration."""
    doc = _good_doc()
    calls = []

    def up(d):
        calls.append(d["version"])
        return {**d, "version": sessions.VERSION + 1}

    monkeypatch.setitem(sessions.MIGRATIONS, sessions.VERSION, up)
    monkeypatch.setattr(migrations, "VERSION", sessions.VERSION + 1)
    p = sessions.load(_write(tmp_path, doc))
    assert calls == [migrations.VERSION - 1] and p.choice("demo").settings == {"steps": 7}


@pytest.mark.parametrize("path", V1_FILES, ids=lambda p: p.name)
def test_kept_v1_files_open(path):
    """Every kept format-1 file opens: its workload and target are in the library, its results are
    finished runs, and each engine with a workload or target kind has a fitting choice."""
    doc = json.loads(path.read_text())
    p = sessions.load(path)
    assert any(e.value.to_json() == doc["workload"] for e in p.workloads)
    # the target keeps every field it had; fields added since (format 5) are at their defaults
    assert any(doc["target"].items() <= e.value.to_json().items() for e in p.targets)
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
    assert cain.workload.name == "AnalogNet2" and cain.result.length == len(cain.result.program)
    assert cain.headline and next(iter(cain.headline))      # computed from the typed result
    again = sessions.from_json(json.loads(json.dumps(sessions.to_json(p))))
    assert _state(again) == _state(p)


def test_v1_migration_builds_library_from_engine_settings(demo_engine):
    doc = {"format": sessions.FORMAT, "version": 1, "workload": {"kind": "fpsp_filter", "preset": "sobel"},
           "target": {"kind": "scamp5", "registers": 6, "array_size": 256}, "current_engine": "demo",
           "engines": {"demo": {"settings": {"steps": 3}, "result": {"steps": 3, "sum": 3}, "finished_at": "2026-01-01T00:00:00"}}}
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
    # its memory override went to a target of its own (format 3 keeps the memory only in the target)
    assert value("bound", "targets").memory_bytes == 131072
    assert "memory_bytes" not in p.settings("bound") and "source" not in p.settings("bound")
    assert p.problem("cappuccino", "workloads")          # the ONNX file is not here: the tab says so

    q = sessions.load(Path(__file__).parent / "data" / "sessions_v1" / "kernels_on_mobile.dfx")
    assert q.chosen("simulate", "workloads").value == FpspFilter("sobel")
    assert q.chosen("bound", "workloads").value == ConvLayers(["name=c1,Ci=16,Hi=28,Wi=28,Co=32,kernel=3,pad=1"])
    assert q.chosen("merit", "workloads").value.kind == "kernels"        # the session's own kernel set
    assert q.chosen("cappuccino", "targets").value == MobileSocTarget(4, 8)


# ---------------------------------------------------------------- saves that never lose a version
WRITER = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
from core import session
from core.engine import engines
engines()                                       # loaded before the rounds: they race on the save alone
folder, name, rounds = sys.argv[2], sys.argv[3], int(sys.argv[4])
path = os.path.join(folder, "s.dfx")

def wait(f):
    while not os.path.exists(os.path.join(folder, f)):
        time.sleep(0.0005)

for r in range(rounds):
    wait(f"ready{r}")
    project, stamp = session.load_stamped(path)
    project.view["writer"] = name
    project.view["round"] = r
    open(os.path.join(folder, f"loaded{r}{name}"), "w").close()
    wait(f"go{r}")
    try:
        session.save(project, path, stamp)
        outcome = "saved"
    except session.SessionChanged:
        outcome = "changed"
    with open(os.path.join(folder, f"done{r}{name}.part"), "w") as fh:
        fh.write(outcome)
    os.replace(os.path.join(folder, f"done{r}{name}.part"), os.path.join(folder, f"done{r}{name}"))
"""


def _wait_for(*paths: Path, timeout: float = 60.0) -> None:
    import time

    end = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        assert time.monotonic() < end, f"no {[p.name for p in paths if not p.exists()]}"
        time.sleep(0.001)


@pytest.mark.slow
def test_two_processes_saving_at_once_never_lose_the_version_on_disk(tmp_path):
    """Two writers read the same version, then save at the same moment, 12 rounds: one saves, the
    other is told the file changed (nothing replaced); the .bak holds the version both read, never
    the other writer's; no temporary file is left."""
    import subprocess
    import sys

    rounds = 12
    path = tmp_path / "s.dfx"
    root = str(Path(__file__).resolve().parents[1])
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, root, str(tmp_path), name, str(rounds)])
               for name in ("A", "B")]
    try:
        winners = []
        for r in range(rounds):
            base = Project.starter()
            base.view["round"], base.view["writer"] = r, "base"
            sessions.save(base, path)
            before = path.read_bytes()
            (tmp_path / f"ready{r}").touch()
            _wait_for(tmp_path / f"loaded{r}A", tmp_path / f"loaded{r}B")
            (tmp_path / f"go{r}").touch()
            _wait_for(tmp_path / f"done{r}A", tmp_path / f"done{r}B")
            outcomes = {n: (tmp_path / f"done{r}{n}").read_text() for n in "AB"}
            assert sorted(outcomes.values()) == ["changed", "saved"], (r, outcomes)
            winner = next(n for n, o in outcomes.items() if o == "saved")
            winners.append(winner)
            on_disk = sessions.read_document(path)["view"]
            assert (on_disk["writer"], on_disk["round"]) == (winner, r)
            assert (tmp_path / "s.dfx.bak").read_bytes() == before, f"round {r}: the .bak is not the version read"
            assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]     # ours end .tmp
    finally:
        for w in writers:
            w.wait(timeout=60)
    assert all(w.returncode == 0 for w in writers)
    print(f"winners over {rounds} rounds: {''.join(winners)}")


def test_a_save_over_a_changed_file_is_refused_and_changes_nothing(tmp_path):
    path = tmp_path / "s.dfx"
    sessions.save(Project.starter(), path)
    mine, stamp = sessions.load_stamped(path)
    theirs = Project.starter()
    theirs.view["by"] = "another window"
    sessions.save(theirs, path)
    on_disk, bak = path.read_bytes(), (tmp_path / "s.dfx.bak").read_bytes()
    mine.view["by"] = "me"
    with pytest.raises(sessions.SessionChanged, match="changed on disk"):
        sessions.save(mine, path, stamp)
    assert path.read_bytes() == on_disk and (tmp_path / "s.dfx.bak").read_bytes() == bak
    with pytest.raises(sessions.SessionChanged, match="was created"):       # expected no file at all
        sessions.save(mine, path, None)
    new_stamp = sessions.save(mine, path, sessions.file_stamp(path))      # knowingly over theirs
    assert new_stamp == sessions.file_stamp(path) and (tmp_path / "s.dfx.bak").read_bytes() == on_disk


def test_stale_temporary_files_are_removed_by_the_next_save(tmp_path):
    path = tmp_path / "s.dfx"
    for stale in (".s.dfx.k3j4h5g6.tmp", ".s.dfx.bak.a1b2c3d4.tmp"):
        (tmp_path / stale).write_bytes(b"half a session" * 1000)
    (tmp_path / ".other.dfx.zzzzzzzz.tmp").write_text("another file's")        # not ours to remove
    sessions.save(Project.starter(), path)
    sessions.save(Project.starter(), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.dfx.zzzzzzzz.tmp", "s.dfx", "s.dfx.bak"]


KILLED_WRITER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from core import session
from core.project import Project
p = Project.starter()
p.view["padding"] = "x" * 8_000_000           # a big session: each save takes a while
print("ready", flush=True)
while True:
    session.save(p, sys.argv[2])
"""


@pytest.mark.slow
def test_a_save_killed_at_any_moment_leaves_a_whole_file_and_the_next_save_no_temporary(tmp_path):
    import random
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "s.dfx"
    sessions.save(Project.starter(), path)
    root = str(Path(__file__).resolve().parents[1])
    rng = random.Random(7)
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, root, str(path)], stdout=subprocess.PIPE,
                                text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        sessions.load(path)                     # never a half-written session
    sessions.save(Project.starter(), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.dfx", "s.dfx.bak"]


# ---------------------------------------------------------------- the window: changed on disk, non-interactive
@pytest.fixture
def window(qtbot):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    yield w
    w.project.mark_saved()
    w.shutdown_jobs()


def _changed_behind(path: Path) -> bytes:
    other = Project.starter()
    other.view["by"] = "another window"
    sessions.save(other, path)
    return path.read_bytes()


@pytest.mark.parametrize("answer,kept", [("Cancel", "theirs"), ("Yes", "mine"), ("No", "save as")])
def test_the_window_asks_before_saving_over_a_file_changed_on_disk(tmp_path, window, monkeypatch, answer, kept):
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    path = tmp_path / "s.dfx"
    sessions.save(Project.starter(), path)
    assert window.open_path(path, ask=False)
    window.project.view["by"] = "me"
    theirs = _changed_behind(path)
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda _w, _t, text, *a: asked.append(text)
                        or getattr(QMessageBox.StandardButton, answer))
    elsewhere = tmp_path / "mine.dfx"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(elsewhere), ""))
    saved = window.save()
    assert asked and "changed on disk" in asked[0]
    if kept == "theirs":
        assert not saved and path.read_bytes() == theirs
    elif kept == "mine":
        assert saved and sessions.read_document(path)["view"]["by"] == "me"
        assert (tmp_path / "s.dfx.bak").read_bytes() == theirs              # their version is kept
    else:
        assert saved and path.read_bytes() == theirs and sessions.read_document(elsewhere)["view"]["by"] == "me"
    if saved:                                   # saved again: no question, the window knows this version
        asked.clear()
        assert window.save() and not asked


def test_without_a_user_the_window_never_opens_a_dialog(tmp_path, window, monkeypatch, capsys):
    """--screenshot and other non-interactive modes: errors are one line on stderr, nothing is
    overwritten or discarded without asking."""
    from PySide6.QtWidgets import QMessageBox

    def no_dialog(*a, **k):
        raise AssertionError("a modal dialog in a non-interactive mode")

    for name in ("question", "warning", "critical", "information"):
        monkeypatch.setattr(QMessageBox, name, no_dialog)
    window.interactive = False
    (tmp_path / "deep.dfx").write_text("[" * 100_000 + "]" * 100_000)
    assert not window.open_path(tmp_path / "deep.dfx", ask=False)
    path = tmp_path / "s.dfx"
    sessions.save(Project.starter(), path)
    assert window.open_path(path, ask=False)
    window.project.view["by"] = "me"
    theirs = _changed_behind(path)
    assert not window.save() and path.read_bytes() == theirs
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 2 and "nested too deeply" in errors[0] and "changed on disk" in errors[1]
