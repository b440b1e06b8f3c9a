"""Faults of the machine in words (issue 53): no C compiler, a build folder that cannot hold files,
no display, no memory (ulimit -v), no room, a worker killed mid-run; and the checks at the edge
(ONNX opsets and input types, control characters in names, output places, a format-1 setting of the
wrong type). Each fault is injected without root: a PATH without a compiler, a file where a folder
should be, an address-space limit the child sets itself, a SIGKILL. Each asserts the one line a user
reads, the exit code (1 the machine, 2 the input) and that nothing the user had is lost."""

from __future__ import annotations

import errno
import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from core import faults
from core.errors import InputError
from core.lifecycle import RunError
from core.machine_load import LoadRecord

ROOT = Path(__file__).resolve().parents[1]
HANG_S = 120            # only against a hang: every wait below ends when what it waits for happens


def _main(args: list[str], env: dict[str, str], timeout: float = HANG_S) -> subprocess.CompletedProcess[str]:
    """`python main.py ARGS` with this environment (what a user types), from the repository root."""
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _env(**changes: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CC",)}
    env["PYTHONPATH"] = str(ROOT)
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def _one_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# ================================================================ no C compiler
@pytest.mark.slow
def test_cain_without_a_compiler_says_so_in_one_line_and_exits_1(tmp_path):
    """Main 6105d8f: a traceback ending in `RuntimeError: search worker 0 failed: CompiledUnavailable`."""
    empty = tmp_path / "bin"
    empty.mkdir()
    kernels = tmp_path / "blur.json"        # the user's file: still there, unchanged, after the failure
    kernels.write_text(json.dumps({"name": "blur", "denominator": 16,
                                   "kernels": [{"name": "k1", "values": [[1, 2, 1], [2, 4, 2], [1, 2, 1]]}]}))
    before = kernels.read_bytes()
    for workers in ("1", "2"):      # in this process, and in the search's worker processes
        p = _main(["cain", "--kernels", str(kernels), "--workers", workers, "--quiet"],
                  _env(PATH=str(empty), DATAFLOW_EXPLORER_BUILD=str(tmp_path / "build")))
        line = _one_line(p.stderr)
        assert p.returncode == 1, p.stderr
        assert line.startswith("error: cain: no C compiler on PATH to build bagsearch.c")
        assert "gcc" in line and "install" in line and "set CC" in line and "Cain needs one" in line
    assert kernels.read_bytes() == before


def test_merit_and_cappuccino_without_a_compiler_say_how_to_get_one():
    """MERIT and Cappuccino still deliver everything but the compiled timings: the note they print
    says how to get a compiler (install, or CC), the same words as Cain's."""
    from core.merit.codegen_run import compile_c

    old = os.environ.get("PATH", "")
    try:
        os.environ["PATH"] = ""
        build = compile_c("int main(void){return 0;}", Path("/nonexistent"), "x")
    finally:
        os.environ["PATH"] = old
    assert not build.ok and "no C compiler" in build.message and faults.compiler_hint() in build.message
    assert "set CC" in faults.compiler_hint()


@pytest.mark.slow
def test_cappuccino_cli_without_a_compiler_finishes_with_the_note(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    p = _main(["cappuccino", "--limit", "20", "--quiet"], _env(PATH=str(empty)))
    assert p.returncode == 0 and "Traceback" not in p.stderr
    assert "no C compiler found" in p.stdout and "set CC" in p.stdout


# ================================================================ the build folder
@pytest.mark.slow
def test_a_build_folder_that_is_a_file_is_named_with_what_moves_it(tmp_path):
    """Main 6105d8f: the same traceback as without a compiler."""
    blocker = tmp_path / "build"
    blocker.write_text("my notes")      # the user's file where the build folder should be
    p = _main(["cain", "--preset", "gauss3", "--quiet"], _env(DATAFLOW_EXPLORER_BUILD=str(blocker)))
    line = _one_line(p.stderr)
    assert p.returncode == 1
    assert f"{blocker} is a file, not a folder" in line and "set DATAFLOW_EXPLORER_BUILD" in line
    assert blocker.read_text() == "my notes"


def test_a_compiled_library_that_cannot_be_written_is_a_machine_fault(tmp_path):
    from core.ccompiler import CompiledLibrary

    (tmp_path / "lib.c").write_text("int f(void) { return 1; }\n")
    (tmp_path / "file").write_text("")

    class Unavailable(RuntimeError):
        pass

    lib = CompiledLibrary(tmp_path / "lib.c", tmp_path / "file" / "sub", "f", ("-shared", "-fPIC"), lambda _l: None,
                          Unavailable)
    with pytest.raises(Unavailable) as info:
        lib.load()
    err = RunError.of(info.value)
    assert err.kind == "machine" and "cannot hold files" in err.text and err.text == str(info.value)
    assert "Traceback" in err.detail            # kept for the log, never shown as the message


# ================================================================ memory
_ALLOCATES = textwrap.dedent("""
    import json, sys
    from core.engine import EngineSpec, JobRequest
    from core.jobs import CancelToken, FinalResult, LogLine
    from core.lifecycle import record_run
    from core.results import EngineResult

    def run(request, cancel):
        yield LogLine("building the table")
        table = bytearray(int(sys.argv[1]) << 20)      # more than the limit allows
        yield FinalResult({"n": len(table)})

    spec = EngineSpec(name="greedy", title="Greedy", summary="", run=run, default_settings=dict,
                      add_cli_arguments=lambda p: None, request_from_cli=lambda a: None, format_text=str,
                      result_type=EngineResult)
    out = record_run(spec, JobRequest(None, None, {}), CancelToken())
    print(json.dumps(out.to_json()))
""")


def _limited(limit_mb: int, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `script` under an address-space limit (ulimit -v) of `limit_mb` set before it starts."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, resource.RLIM_INFINITY))

    return subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, env=_env(OPENBLAS_NUM_THREADS="1",
                          OMP_NUM_THREADS="1"), capture_output=True, text=True, timeout=HANG_S, preexec_fn=limit)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux applies it")
def test_a_worker_out_of_memory_fails_its_run_with_the_limit_in_words():
    p = _limited(1024, _ALLOCATES, "4096")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.splitlines()[-1])
    err = RunError.from_json(out["error"])
    assert out["status"] == "failed" and err.kind == "machine"
    assert err.text.startswith("ran out of memory") and "1.0 GB in all (ulimit -v)" in err.text
    assert out["log"] == ["info: building the table"]          # what the run said before is kept


_READS_ONNX = textwrap.dedent("""
    import resource, sys
    import onnx, onnx.checker, onnx.shape_inference
    from core.cli import build_parser
    from gui.launch import main
    build_parser()          # every engine imported: what is left to allocate is the model's
    # the limit leaves room for this process as it is, and 40 MB more: reading the model needs more
    vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + (40 << 20), resource.RLIM_INFINITY))
    sys.exit(main(["bound", "--onnx", sys.argv[1], "--quiet"]))
""")


def _onnx(path: Path, channels: int = 4, opset: int = 13, input_type: int = 1) -> Path:
    """A one-Conv model with `channels` 1x1 filters (4 bytes each), of this opset and input type."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((channels, 1, 1, 1), np.float32), "w")
    x = helper.make_tensor_value_info("x", input_type, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 4, 4])
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"])], "g", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path.write_bytes(model.SerializeToString())
    return path


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmSize from /proc")
def test_an_onnx_model_too_large_for_the_memory_left_is_not_called_unreadable(tmp_path):
    """Main 6105d8f: under ulimit -v, `cappuccino --model vgg16` said the cached file "is not a
    readable ONNX model"; the file was fine, the memory was short."""
    model = _onnx(tmp_path / "wide.onnx", channels=10_000_000)        # 40 MB of weights
    before = model.stat().st_size
    p = subprocess.run([sys.executable, "-c", _READS_ONNX, str(model)], cwd=ROOT,
                       env=_env(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1"), capture_output=True, text=True,
                       timeout=HANG_S)
    line = _one_line(p.stderr)
    assert p.returncode == 1, p.stderr
    assert "ran out of memory while reading the ONNX model" in line and "(ulimit -v)" in line
    assert "not a readable" not in line and "smaller model" in line
    assert model.stat().st_size == before


def test_describe_finds_memory_and_disk_faults_under_wrappers(tmp_path):
    try:
        try:
            raise MemoryError()
        except MemoryError as inner:
            raise RuntimeError("worker failed") from inner
    except RuntimeError as exc:
        text = faults.describe(exc, "building the tables")
    assert text is not None and text.startswith("ran out of memory while building the tables")
    full = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out.jsonl"))
    err = RunError.of(full)
    assert err.kind == "machine" and err.text.startswith(f"no room left on the disk holding {tmp_path}")
    assert faults.describe(ValueError("a bug")) is None
    assert faults.describe(PermissionError(errno.EACCES, "denied", "/home/me/input.json")) is None   # the user's


# ================================================================ a worker killed mid-run
def test_a_worker_killed_mid_run_is_recorded_failed_with_the_likely_cause(demo_engine, tmp_path):
    """The window's worker process is killed (as the kernel's out-of-memory killer does) while its
    engine waits for the test's go-ahead: the run is failed with a sentence naming SIGKILL and its
    usual cause, and what it streamed before is kept in the project."""
    from core.project import Project
    from core.worker import ProcessJob

    started, gate = tmp_path / "started", tmp_path / "go"
    started.mkdir()
    project = Project.starter()
    project.replace_settings("demo", {"steps": 3, "started": str(started), "wait_for": str(gate)})
    run = project.start_run("demo")
    job = ProcessJob("demo", project.request_of(run))
    job.start()
    try:
        deadline = time.monotonic() + HANG_S       # the window has what the engine streamed so far
        # the worker streams its "process" partial before the engine starts: wait for the engine too
        while ("process" not in run.partial or not any(started.iterdir())) and time.monotonic() < deadline:
            try:
                project.record(run.id, job.batches.get(timeout=0.05))
            except queue.Empty:
                pass
        assert any(started.iterdir())               # the engine is waiting for the go-ahead: mid-run
        os.kill(job.pid or 0, signal.SIGKILL)
        assert job.wait(HANG_S)
    finally:
        job.kill()
    while not job.batches.empty():
        project.record(run.id, job.batches.get())
    assert job.outcome is not None
    done = project.finish_run(run.id, job.outcome)
    assert done.status == "failed" and job.outcome.error is not None and job.outcome.error.kind == "crash"
    assert done.error.startswith("the engine's process ended with signal SIGKILL")
    assert "out-of-memory killer" in done.error and "kept" in done.error
    assert done.partial["process"].pid == job.pid                # streamed before the kill: kept


# ================================================================ no display
@pytest.mark.slow
def test_the_window_without_a_display_says_what_to_do_and_exits_1():
    """Main 6105d8f: Qt aborted (exit 134, "could not connect to display") without a word from the app."""
    if not sys.platform.startswith("linux"):
        pytest.skip("X11 and Wayland are Linux's here")
    p = _main([], _env(DISPLAY=None, WAYLAND_DISPLAY=None, QT_QPA_PLATFORM=None), timeout=60)
    line = _one_line(p.stderr)
    assert p.returncode == 1
    assert line.startswith("error: no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set)")
    assert "--screenshot" in line and "subcommand" in line


def test_an_x_server_is_found_by_its_socket(tmp_path):
    table = tmp_path / "unix"
    table.write_text("Num RefCount Protocol Flags Type St Inode Path\n0: 00000002 0 10000 0001 01 1 @/tmp/.X11-unix/X1\n")
    sockets = tmp_path / "x11"
    sockets.mkdir()
    (sockets / "X2").write_text("")
    assert faults.x_server_listens(":1", str(table), "/tmp/.X11-unix")            # abstract socket
    assert faults.x_server_listens(":2.0", str(table), str(sockets))              # socket file
    assert not faults.x_server_listens(":3", str(table), str(sockets))
    assert faults.x_server_listens("remote.example:0", str(table), str(sockets))  # cannot be told: no refusal


def test_display_problems_by_platform(monkeypatch):
    assert faults.display_problem({}, "darwin") is None
    assert faults.display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert faults.display_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    said = faults.display_problem({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert said is not None and "DISPLAY is not set" in said
    monkeypatch.setattr(faults, "x_server_listens", lambda display: display == ":0")
    said = faults.display_problem({"DISPLAY": ":7"}, "linux")
    assert said is not None and said.startswith("no X server listens at DISPLAY=:7")
    monkeypatch.setattr(faults, "missing_x11_libraries", lambda: ["libxcb-cursor.so.0"])
    said = faults.display_problem({"DISPLAY": ":0"}, "linux")
    assert said is not None and "libxcb-cursor.so.0" in said and "apt-get install libxcb-cursor0" in said
    monkeypatch.setattr(faults, "missing_x11_libraries", lambda: [])
    assert faults.display_problem({"DISPLAY": ":0"}, "linux") is None


# ================================================================ checks at the edge
def test_an_onnx_opset_newer_than_the_importer_is_refused_by_name(tmp_path):
    from core.nets.onnx_graph import MAX_OPSET, read_model

    path = _onnx(tmp_path / "new.onnx", opset=MAX_OPSET + 1)
    with pytest.raises(InputError) as info:
        read_model(path)
    assert f"opset {MAX_OPSET + 1}" in info.value.message and f"up to {MAX_OPSET}" in info.value.message
    assert read_model(_onnx(tmp_path / "ok.onnx", opset=MAX_OPSET)) is not None


@pytest.mark.parametrize("reader", ["core.nets.onnx_import:load_onnx", "core.cappuccino.graph_import:import_onnx"])
def test_a_non_float_input_is_refused_naming_it(tmp_path, reader):
    import importlib

    from onnx import TensorProto

    module, _, name = reader.partition(":")
    load = getattr(importlib.import_module(module), name)
    with pytest.raises(InputError) as info:
        load(str(_onnx(tmp_path / "ints.onnx", input_type=TensorProto.INT64)))
    assert "input 'x' holds int64 values" in info.value.message and "input 'x'" in info.value.where


@pytest.mark.slow
def test_a_kernel_name_with_a_control_character_never_reaches_the_code(tmp_path):
    kernels = tmp_path / "k.json"
    kernels.write_text(json.dumps({"name": "blur", "denominator": 16,
                                   "kernels": [{"name": "k1\n#include </etc/passwd>", "values": [[1]]}]}))
    p = _main(["cain", "--kernels", str(kernels), "--quiet"], _env())
    line = _one_line(p.stderr)
    assert p.returncode == 2 and "kernels[0].name: contains a control character (U+000A line feed" in line


def test_library_and_study_names_refuse_control_characters():
    from core.project import Project
    from core.study import spec

    p = Project.starter()
    entry = p.entries("workloads")[0]
    with pytest.raises(InputError) as info:
        p.rename("workloads", entry.id, "blur\x1b[2J")
    assert info.value.where == f"workloads.{entry.id}.name" and "U+001B" in info.value.message
    with pytest.raises(InputError):
        p.add("targets", "chip\u202e", p.entries("targets")[0].value)
    assert p.entries("workloads")[0].name == entry.name            # nothing changed
    with pytest.raises(InputError) as info:
        spec.from_json({"name": "sweep\r", "engine": "bound", "axes": []}, None, None)
    assert info.value.where == "study.name"


def test_a_session_with_a_control_character_in_a_name_is_refused(tmp_path):
    from core import session
    from core.project import Project

    doc = session.to_json(Project.starter())
    doc["library"]["targets"][0]["name"] = "SCAMP\x00"
    with pytest.raises(InputError) as info:
        session.from_json(doc)
    assert info.value.where == "session.library.targets[0].name"


@pytest.mark.slow
def test_a_format_1_cain_register_count_that_is_text_is_refused_naming_it(tmp_path):
    """Main 6105d8f: "registers": "six" validated and opened without a word (the setting was dropped)."""
    path = tmp_path / "old.dfx"
    path.write_text(json.dumps({"format": "dataflow-explorer-session", "version": 1,
                                "workload": {"kind": "fpsp_filter", "preset": "gauss3"}, "target": {"kind": "scamp5"},
                                "engines": {"cain": {"settings": {"registers": "six"}}}}))
    p = _main(["session", "validate", str(path)], _env())
    line = _one_line(p.stderr)
    assert p.returncode == 2
    assert line == "error: session.engines.cain.settings.registers: expected a whole number of registers, got 'six'"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs a folder that cannot hold files (/proc)")
def test_a_results_file_under_a_folder_that_cannot_hold_files_is_refused_before_any_point(tmp_path):
    """Main 6105d8f: the study ran its first point, then stopped with `FileNotFoundError`."""
    from core.study import results_file

    with pytest.raises(InputError) as info:
        results_file.check_out_path(Path("/proc/study.results.jsonl"), "--out")
    assert info.value.where == "--out" and "cannot create files in /proc" in info.value.message


def test_an_output_folder_is_proven_to_hold_files(tmp_path, monkeypatch):
    """A read-only mount passes the permission bits (and root passes everything): a probe file decides."""
    import tempfile

    from core.files import output_folder

    def read_only(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(InputError) as info:
        output_folder(tmp_path / "emit", ["gemm.c"], "--emit")
    assert info.value.where == "--emit" and "read-only file system" in info.value.message
    assert not (tmp_path / "emit").exists()


# ================================================================ timings that say when they are unreliable
@pytest.mark.slow
@pytest.mark.skipif(__import__("core.ccompiler").ccompiler.find_compiler() is None, reason="no C compiler here")
def test_a_busy_machine_marks_merits_measured_c(monkeypatch):
    """MERIT times its generated C against numpy: the load is kept beside the figures, with a warning
    when other work ran (a fake meter: the test never depends on this machine's load)."""
    from core.merit import codegen_run
    from core.merit.engine import timing_warning
    from core.merit.evaluate import evaluate
    from core.merit_transform import workloads as W

    class Meter:
        record = LoadRecord(1.2, 3.0, 2, 2.5, 2.7, "cpu-accounts")

        def stop(self) -> LoadRecord:
            return self.record

    monkeypatch.setattr(codegen_run, "LoadMeter", Meter)
    wl = W.WORKLOADS["gemm"]
    data = wl.make_data(np.random.default_rng(0))
    for st in wl.stages:
        data[st.name] = evaluate(st, data)
    c = codegen_run.check_c(wl.stages, data, wl.tile, lambda: wl.reference(data), rounds=1)
    assert c.timings_s and "numpy" in c.timings_s and c.machine_load == Meter.record.to_json()
    said = timing_warning(c)
    assert said is not None and "1.2 of 2 cores busy" in said and "unreliable" in said
    Meter.record = LoadRecord(0.1, 3.0, 2, 0.2, 0.2, "cpu-accounts")
    c = codegen_run.check_c(wl.stages, data, wl.tile, lambda: wl.reference(data), rounds=1)
    assert timing_warning(c) is None and c.machine_load is not None


def test_an_imported_file_whose_name_holds_a_newline_still_imports_under_a_printable_name(tmp_path):
    from core.library_items import import_file

    path = tmp_path / "blur\nfilter.json"
    path.write_text(json.dumps({"name": "blur", "denominator": 16,
                                "kernels": [{"name": "k1", "values": [[1, 2, 1], [2, 4, 2], [1, 2, 1]]}]}))
    name, _value = import_file(str(path))
    assert name == "blur\ufffdfilter"


# ================================================================ the window shows the same sentence
def _fills_the_disk(request, cancel):
    from core.jobs import LogLine

    yield LogLine("writing the tables")
    raise OSError(errno.ENOSPC, "No space left on device", "/var/tmp/tables.bin")


def _no_room_spec():
    from core.engine import EngineSpec, JobRequest
    from tests.demo_engine import DemoResult

    return EngineSpec(name="noroom", title="No room", summary="Fills the disk.", run=_fills_the_disk,
                      default_settings=dict, add_cli_arguments=lambda p: None,
                      request_from_cli=lambda a: JobRequest(None, None, {}), format_text=str,
                      result_type=DemoResult, settings_schema={"type": "object", "properties": {}}, order=0)


NO_ROOM = _no_room_spec()       # the worker process imports it from here (core.worker.engine_ref)


def test_the_window_shows_a_machine_fault_as_the_failed_runs_sentence(qtbot, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from core import engine as engine_module
    from gui.main_window import MainWindow

    monkeypatch.setattr(engine_module, "_REGISTRY", {"noroom": NO_ROOM, **engine_module.engines()})
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    w = MainWindow()
    qtbot.addWidget(w)
    try:
        w.set_current_engine("noroom")
        w.run_current()
        run = w.project.runs[-1]
        qtbot.waitUntil(lambda: run.status != "running", timeout=HANG_S * 1000)
        assert run.status == "failed"
        assert run.error == "no room left on the disk holding /var/tmp/tables.bin (disk full or over quota): " \
                            "free some space, or choose a folder that can"
        assert shown and shown[-1].endswith(run.error)                 # the same sentence, once
        assert "Traceback" in w.log_view.toPlainText()                  # the detail is for the log
    finally:
        w.shutdown_jobs()


_WRITES = textwrap.dedent("""
    import sys
    from core import faults
    from core.atomic import atomic_write_bytes
    try:
        atomic_write_bytes(__import__("pathlib").Path(sys.argv[1]), b"x" * 200_000)
    except OSError as exc:
        print(faults.describe(exc))
""")


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="RLIMIT_FSIZE as POSIX systems apply it")
def test_a_write_past_the_file_size_limit_is_said_and_keeps_the_old_file(tmp_path):
    """No room to write (as a full disk, injected with ulimit -f): the sentence, and the file the
    user had is still whole (writes go to a temporary file that replaces it only when complete)."""
    import resource

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, resource.RLIM_INFINITY))

    target = tmp_path / "results.json"
    target.write_text('{"kept": true}')
    p = subprocess.run([sys.executable, "-c", _WRITES, str(target)], cwd=ROOT, env=_env(), capture_output=True,
                       text=True, timeout=HANG_S, preexec_fn=limit)
    assert p.returncode == 0, p.stderr
    assert "reached the largest file this process may write (ulimit -f)" in p.stdout
    assert target.read_text() == '{"kept": true}'
    assert [f.name for f in tmp_path.iterdir()] == ["results.json"]        # no temporary file left behind


def test_a_study_point_that_meets_a_machine_fault_records_its_sentence(monkeypatch):
    """In a Dask worker a point runs through the same lifecycle: the point's line of the results
    file carries the sentence (core.study.point.run_point, read back by the runner)."""
    from core import engine as engine_module
    from core.engine import JobRequest
    from core.study.point import run_point

    monkeypatch.setattr(engine_module, "_REGISTRY", {"noroom": NO_ROOM, **engine_module.engines()})
    out = run_point("noroom", JobRequest(None, None, {}).to_json(), [])
    err = RunError.from_json(out["error"])
    assert out["status"] == "failed" and err.kind == "machine"
    assert err.text.startswith("no room left on the disk holding /var/tmp/tables.bin")


def test_a_benchmark_against_a_peer_marks_its_json_when_other_work_ran(monkeypatch, capsys):
    """bound_vs_zigzag.py (ours against ZigZag): the load beside the figures in --json, and the
    warning on stderr (a fake meter: never this machine's real load)."""
    import importlib.util

    from core import machine_load

    class Busy:
        def stop(self) -> LoadRecord:
            return LoadRecord(1.4, 9.0, 2, 3.0, 3.1, "cpu-accounts")

    monkeypatch.setattr(machine_load, "LoadMeter", Busy)
    spec = importlib.util.spec_from_file_location("bound_vs_zigzag", ROOT / "benchmarks" / "bound_vs_zigzag.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setattr(sys, "argv", ["bound_vs_zigzag.py", "--only", "none:none", "--memories", "64", "--json"])
    assert bench.main() == 0
    out = capsys.readouterr()
    summary = json.loads(out.out)["summary"]
    assert summary["timings_unreliable"] is True and summary["machine_load"]["other_cores"] == 1.4
    assert "warning: other work kept 1.4 of 2 cores busy" in out.err
